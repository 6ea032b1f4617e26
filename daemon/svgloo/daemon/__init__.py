"""The daemon: a local server keeping models and render workers warm (``service``), its HTTP
API (``server``, ``openapi``), the client the front ends use, the result cache and the file
watcher. It calls the engine and the structure analysis; it computes nothing itself."""
