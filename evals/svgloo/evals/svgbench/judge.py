"""An OpenAI-compatible chat-completions judge client (any vLLM, llama.cpp server, Ollama
or hosted endpoint), on ``httpx``.

One request per call: the judge text plus the PNG as a ``data:`` URL, ``temperature``, and
``response_format`` = the original's JSON schema. A server that refuses ``response_format``
(HTTP 400/404/422/501 while it was sent) is asked again without it, and from then on the
JSON object is read out of the reply text. Connection errors, timeouts, 429 and 5xx are
retried with exponential backoff; a semaphore caps the requests in flight.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time

from ..engine import ConfigError

FALLBACK_STATUSES = (400, 404, 422, 501)
RETRY_STATUSES = (408, 409, 429, 500, 502, 503, 504)


class JudgeError(Exception):
    """The judge gave no usable answer (after retries)."""


def request_body(model: str, text: str, png: bytes, temperature: float,
                 response_format: dict | None) -> dict:
    body = {"model": model,
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": text},
                {"type": "image_url",
                 "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()}},
            ]}],
            "temperature": temperature}
    if response_format is not None:
        body["response_format"] = response_format
    return body


def first_json_object(text: str) -> str:
    """The first balanced ``{...}`` in a free-text reply (fallback mode only)."""
    start = text.find("{")
    while start >= 0:
        depth, in_str, esc = 0, False, False
        for i in range(start, len(text)):
            ch = text[i]
            if in_str:
                esc = (ch == "\\") and not esc
                if ch == '"' and not esc:
                    in_str = False
                continue
            if ch == '"':
                in_str = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return text[start:i + 1]
        start = text.find("{", start + 1)
    return text


class JudgeClient:
    def __init__(self, url: str, model: str, api_key: str | None = None,
                 temperature: float = 0.0, timeout: float = 120.0, retries: int = 3,
                 concurrency: int = 4, backoff: float = 1.0):
        import httpx

        if not re.match(r"https?://", url or ""):
            raise ConfigError(None, f"--judge-url must be an http(s) URL, got {url!r}")
        self.url = url.rstrip("/") + "/chat/completions"
        self.model, self.temperature = model, temperature
        self.retries, self.backoff = max(0, retries), backoff
        self.schema_supported = True
        self._slots = threading.BoundedSemaphore(max(1, concurrency))
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        # trust_env=False: no proxy or netrc from the environment sees the judge's traffic
        self._http = httpx.Client(timeout=timeout, headers=headers, trust_env=False)
        self.requests = 0

    def close(self) -> None:
        self._http.close()

    def ask(self, text: str, png: bytes, schema_name: str, schema: dict) -> str:
        """The reply's message content (a JSON text). Raises JudgeError."""
        fmt = {"type": "json_schema", "json_schema": {"name": schema_name, "schema": schema}}
        with self._slots:
            if self.schema_supported:
                status, content, detail = self._post(request_body(
                    self.model, text, png, self.temperature, fmt))
                if status not in FALLBACK_STATUSES:
                    return self._content(status, content, detail)
                self.schema_supported = False
            status, content, detail = self._post(request_body(
                self.model, text, png, self.temperature, None))
            content = self._content(status, content, detail)
            return first_json_object(content) if content.strip() else content

    def _content(self, status: int, content: str | None, detail: str) -> str:
        if status != 200:
            raise JudgeError(f"judge answered HTTP {status}: {detail[:200]}")
        return content or ""

    def _post(self, body: dict) -> tuple[int, str | None, str]:
        import httpx

        data = json.dumps(body).encode("utf-8")
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                self.requests += 1
                r = self._http.post(self.url, content=data)
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}"
                continue
            if r.status_code in RETRY_STATUSES:
                last = f"HTTP {r.status_code}"
                continue
            if r.status_code != 200:
                return r.status_code, None, r.text
            try:
                reply = r.json()
                return 200, reply["choices"][0]["message"].get("content"), ""
            except (ValueError, KeyError, IndexError, TypeError, AttributeError):
                raise JudgeError("judge reply is not a chat completion") from None
        raise JudgeError(f"judge unreachable after {self.retries + 1} tries ({last})")
