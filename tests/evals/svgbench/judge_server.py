"""A real HTTP judge on 127.0.0.1 for the tests: answers are scripted per request, every
request body is kept byte for byte."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ScriptedJudge:
    """``answers``: a list of (status, content) or a callable(body_dict) -> (status, content),
    consumed in request order. content None → no ``content`` key in the message."""

    def __init__(self, answers):
        self.answers = answers
        self.bodies: list[bytes] = []
        self.headers: list[dict] = []
        self.in_flight = self.max_in_flight = 0
        self._lock = threading.Lock()
        judge = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with judge._lock:
                    judge.bodies.append(body)
                    judge.headers.append(dict(self.headers))
                    judge.in_flight += 1
                    judge.max_in_flight = max(judge.max_in_flight, judge.in_flight)
                    if callable(judge.answers):
                        status, content = judge.answers(json.loads(body))
                    else:
                        status, content = judge.answers.pop(0)
                if self.path != "/v1/chat/completions":
                    status, content = 404, None
                message = {"role": "assistant"}
                if content is not None:
                    message["content"] = content
                reply = json.dumps({"choices": [{"message": message}]}).encode() \
                    if status == 200 else b'{"error": "scripted"}'
                # answered from here on: the client may send its next request as soon as
                # it reads this reply, so count it out before writing
                with judge._lock:
                    judge.in_flight -= 1
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(5)
