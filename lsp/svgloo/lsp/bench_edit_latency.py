"""Edit -> diagnostics through ``svgloo lsp``, as an editor sees it.

    python -m svgloo.lsp.bench_edit_latency FILE [FILE ...] [--edits 3] [--no-daemon]
        [--python PYTHON] [--json OUT]

For each file: a fresh ``svgloo lsp`` process (``--python`` picks the interpreter, so
another checkout's server can be timed the same way) with its default settings (self
mode, the daemon on: a fresh daemon on a temporary socket with an empty cache), the file
opened and left to settle, then ``--edits`` colour edits one after the other (one fill
colour in the middle of the file, a new value each time, so nothing comes from a cache).
Per edit, from the ``didChange`` to:

* first: the first ``publishDiagnostics`` for the new version (what the editor shows);
* settled: the last publication for that version before the server stays quiet for
  ``--quiet`` seconds after one without the "removal check is running" hint (the removal
  proof's publication, where the server proves later). The next edit is sent only then:
  each edit is timed alone, not behind the previous one's proof.

The client speaks JSON-RPC over the server's stdin/stdout itself (no editor, no pygls
client): its own cost is a few milliseconds. Prints one line per file and the machine's
load (``uptime``) before and after; ``--json`` writes the raw times.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

CHECKING = "removal-check-running"  # convert.DiagnosticCode.CHECKING


class LspClient:
    """A minimal LSP client over a child process's stdio; server requests are answered
    (configuration: the settings given; the rest: null)."""

    def __init__(self, command: list[str], cwd: str, env: dict, settings: dict):
        self.proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.settings = settings
        self.messages: queue.Queue = queue.Queue()
        self._ids = iter(range(1, 1 << 30))
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None  # started with stdout=PIPE
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            if length is None:  # a frame without its length: the stream cannot be followed
                self.messages.put(None)
                return
            message = json.loads(out.read(length))
            if "method" in message and "id" in message:  # a request from the server
                answer = None
                if message["method"] == "workspace/configuration":
                    answer = [self.settings for _ in message["params"]["items"]]
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": answer})
                continue
            self.messages.put((time.perf_counter(), message))

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None  # started with stdin=PIPE
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method: str, params) -> dict:
        ident = next(self._ids)
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        while True:
            got = self.messages.get(timeout=120)
            if got is None:
                raise RuntimeError("the server exited")
            if got[1].get("id") == ident:
                return got[1]

    def notify(self, method: str, params) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def publications(self, uri: str, version: int, quiet_s: float, limit_s: float = 120):
        """(seconds, diagnostics) of each publication for ``version``, measured from now,
        until the server is quiet for ``quiet_s`` after one that no longer says the
        removal check is running (the proof's, where the server proves later: an edit
        sent earlier would cancel it and wait for it to stop)."""
        t0 = time.perf_counter()
        found: list = []
        while True:
            settled = found and not any(d.get("code") == CHECKING for d in found[-1][1])
            wait = quiet_s if settled else max(0.01, limit_s - (time.perf_counter() - t0))
            try:
                got = self.messages.get(timeout=wait)
            except queue.Empty:
                return found
            if got is None:
                raise RuntimeError("the server exited")
            at, message = got
            params = message.get("params") or {}
            if (message.get("method") == "textDocument/publishDiagnostics"
                    and params.get("uri") == uri and params.get("version") == version):
                found.append((at - t0, params.get("diagnostics", [])))
            if time.perf_counter() - t0 > limit_s:
                return found

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=20)
        except Exception:  # noqa: BLE001 - the process goes either way
            self.proc.kill()
            self.proc.wait()


def colour_edit(text: str, i: int) -> str:
    """``text`` with one fill colour in the middle of the file set to a new value."""
    found = list(re.finditer(r"fill[=:]\s*\"?#([0-9A-Fa-f]{6})\b", text)) or \
        list(re.finditer(r"#([0-9A-Fa-f]{6})\b", text))
    if not found:
        raise ValueError("no #rrggbb colour to edit")
    m = found[len(found) // 2]
    return text[:m.start(1)] + f"{(i + 1) * 2654435761 % 0xFFFFFF:06x}" + text[m.end(1):]


def time_file(path: Path, python: str, edits: int, use_daemon: bool, quiet_s: float) -> dict:
    home = Path(tempfile.mkdtemp(prefix="svgloo-lat-"))
    env = {**os.environ, "SVGLOO_SOCKET": str(home / "d.sock"),
           "SVGLOO_CACHE_DIR": str(home / "cache")}
    settings = {"useDaemon": use_daemon}
    doc = home / path.name
    text = path.read_text(encoding="utf-8")
    doc.write_text(text, encoding="utf-8")
    uri = doc.as_uri()
    client = LspClient([python, "-m", "svgloo", "lsp"], str(home), env, settings)
    try:
        client.request("initialize", {"processId": os.getpid(), "rootUri": home.as_uri(),
                                      "capabilities": {"workspace": {"configuration": True}},
                                      "initializationOptions": settings})
        client.notify("initialized", {})
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "svg", "version": 1, "text": text}})
        opened = client.publications(uri, 1, quiet_s * 2, limit_s=300)
        rows = []
        for i in range(edits):
            text = colour_edit(text, i)
            version = i + 2
            client.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": text}]})
            found = client.publications(uri, version, quiet_s)
            if not found:
                raise RuntimeError(f"no diagnostics for version {version} of {path.name}")
            rows.append({"first_s": round(found[0][0], 4), "settled_s": round(found[-1][0], 4),
                         "publications": len(found),
                         "first_checking": any(d.get("code") == CHECKING
                                               for d in found[0][1])})
        return {"file": str(path), "open_s": round(opened[0][0], 3) if opened else None,
                "edits": rows}
    finally:
        client.close()
        if use_daemon:
            subprocess.run([python, "-m", "svgloo", "daemon", "stop", "--socket",
                            str(home / "d.sock")], env=env, timeout=60, capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "?"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m svgloo.lsp.bench_edit_latency")
    ap.add_argument("files", nargs="+")
    ap.add_argument("--edits", type=int, default=3)
    ap.add_argument("--python", default=sys.executable,
                    help="the interpreter that runs `svgloo lsp` (another checkout's venv)")
    ap.add_argument("--no-daemon", action="store_true")
    ap.add_argument("--quiet", type=float, default=2.0,
                    help="seconds without a publication that end an edit's wait")
    ap.add_argument("--json", help="write the raw times here")
    args = ap.parse_args(argv)
    load = [_uptime()]
    out = []
    for name in args.files:
        row = time_file(Path(name), args.python, args.edits, not args.no_daemon, args.quiet)
        first = [e["first_s"] for e in row["edits"]]
        settled = [e["settled_s"] for e in row["edits"]]
        row["first_median_s"] = statistics.median(first)
        row["settled_median_s"] = statistics.median(settled)
        out.append(row)
        print(f"{Path(name).name}: first diagnostics median {row['first_median_s']:.3f} s "
              f"({', '.join(f'{t:.3f}' for t in first)}), settled median "
              f"{row['settled_median_s']:.3f} s ({', '.join(f'{t:.3f}' for t in settled)})",
              flush=True)
    load.append(_uptime())
    print("load before:", load[0])
    print("load after: ", load[1])
    if args.json:
        Path(args.json).write_text(json.dumps({"load": load, "files": out}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
