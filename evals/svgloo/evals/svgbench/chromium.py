"""Untrusted SVG drawn by headless Chromium as an *image*, never as a page.

A model's prediction is hostile input: pasted inline into a ``file://`` page (the original
protocol), its ``<foreignObject>`` iframes, ``<img>``, ``<object>``, ``<embed>``, ``<video
poster>``, CSS ``url()`` and scripts drew local files into the screenshot that goes to a
judge's API. Four walls; the first alone, and the other three together without it, each
stopped every trick in tests/evals/svgbench (checked by removing one side, then the other):

1. The SVG is the ``data:`` URL of an ``<img>``: Chromium's image mode runs no script and
   loads no subresource of any scheme (the browser's own rule for SVG-as-image).
2. The page around it is a ``data:text/html`` URL, an opaque origin: no ``file://`` origin,
   so nothing under it may read a local file, and a relative path resolves to nothing.
3. Every request the page makes is paused by the DevTools Fetch domain and failed, except
   the page's own URL and the image's own URL (which Chromium does not fetch over the
   network anyway); ``--host-resolver-rules`` also resolves no name.
4. Scripts are off for the page (``Emulation.setScriptExecutionDisabled``).

The layout is the original's page (``body{margin:0;padding:20px}``, the picture
``max-width:100%;height:auto``, a window of (w + 40) x (h + 40), scroll bars kept), so a
prediction that loads nothing looks as it did inline (tests/evals/svgbench compares the two).

Chromium is driven over ``--remote-debugging-pipe`` (fds 3 and 4, NUL-terminated JSON): no
port, no websocket. It runs in a session of its own and is killed with its whole group when
the render ends, fails or times out; if this process dies first, the pipe closes and
Chromium quits by itself (all of it gone within 4 s, measured).
"""

from __future__ import annotations

import base64
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

# The original's page with the picture in an <img> instead of inline: the same rules, on
# the element that now holds the picture.
PAGE = """
        <!DOCTYPE html>
        <html>
        <head>
            <meta charset="utf-8">
            <style>
                body {{ margin: 0; padding: 20px; background: white; }}
                img {{ max-width: 100%; height: auto; }}
            </style>
        </head>
        <body>
            {image}
        </body>
        </html>
        """

FLAGS = ("--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
         "--disable-dev-shm-usage", "--host-resolver-rules=MAP * ~NOTFOUND",
         "--no-first-run", "--no-default-browser-check", "--disable-extensions",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--mute-audio", "--blink-settings=scriptEnabled=false")

SVG_NS = "http://www.w3.org/2000/svg"
_MOVE_FDS_AND_EXEC = ("import os, sys; os.dup2(int(sys.argv[1]), 3); "
                      "os.dup2(int(sys.argv[2]), 4); os.execv(sys.argv[3], sys.argv[3:])")


class ChromiumFailed(RuntimeError):
    """Chromium died, did not answer in time, or refused a DevTools command."""


def image_url(svg_text: str, root_has_namespace: bool) -> str:
    """The SVG as a ``data:`` URL an ``<img>`` can show. Image mode parses XML, where an
    un-namespaced ``<svg>`` is no SVG (the HTML parser of the inline original puts it in
    the SVG namespace itself): such a root gets the SVG namespace declared."""
    if not root_has_namespace:
        at = svg_text.index("<svg") + len("<svg")
        svg_text = f'{svg_text[:at]} xmlns="{SVG_NS}"{svg_text[at:]}'
    return "data:image/svg+xml;charset=utf-8;base64," + \
        base64.b64encode(svg_text.encode("utf-8")).decode("ascii")


def page_url(img_url: str, has_viewbox: bool = True) -> str:
    """The page showing the image. Narrowed by ``max-width`` (when the page's scroll bar
    takes room), an inline ``<svg>`` without a viewBox keeps its drawing's size and cuts it
    off, where an image would be scaled down: such an image is drawn at its own size and
    cut off by its box (``object-fit: none``) as inline."""
    fit = "" if has_viewbox else ' style="object-fit: none; object-position: 0 0"'
    html = PAGE.format(image=f'<img src="{img_url}"{fit}>')
    return "data:text/html;charset=utf-8;base64," + \
        base64.b64encode(html.encode("utf-8")).decode("ascii")


class _Pipe:
    """One Chromium on a DevTools pipe, answered synchronously; every paused request that
    is not one of ``allowed`` is failed while waiting for an answer."""

    def __init__(self, binary: str, width: int, height: int, profile: str, deadline: float):
        self.deadline = deadline
        self.allowed: set[str] = set()
        self.loaded = False
        self.blocked: list[str] = []
        self._next = 0
        self._buf = b""
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        # The pipe must be fds 3 and 4 in Chromium. A bare Python moves it there and execs
        # the browser: a preexec_fn could deadlock the child (suites render from several
        # threads at once), and a POSIX shell cannot name descriptors past 9.
        cmd = [sys.executable, "-I", "-S", "-c", _MOVE_FDS_AND_EXEC, str(to_chrome_r),
               str(from_chrome_w), binary, *FLAGS, f"--window-size={width},{height}",
               f"--user-data-dir={profile}", "about:blank"]
        try:
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True,
                pass_fds=(to_chrome_r, from_chrome_w),
                env={**os.environ, "HOME": profile,
                     "XDG_CONFIG_HOME": os.path.join(profile, "config"),
                     "XDG_CACHE_HOME": os.path.join(profile, "cache")})
        finally:
            os.close(to_chrome_r)
            os.close(from_chrome_w)

    def _write(self, msg: dict) -> None:
        data = json.dumps(msg).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self._to_chrome, data):]
        except OSError as exc:
            raise ChromiumFailed(f"cannot write to Chromium ({exc})") from None

    def _message(self) -> dict:
        while b"\0" not in self._buf:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([self._from_chrome], [], [], left)
            if not ready:
                raise TimeoutError
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                raise ChromiumFailed(f"Chromium exited (status {self.proc.poll()})")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def _event(self, msg: dict) -> None:
        method, params = msg.get("method"), msg.get("params", {})
        if method == "Fetch.requestPaused":
            url = params.get("request", {}).get("url", "")
            if url in self.allowed:
                self._write({"id": self._id(), "method": "Fetch.continueRequest",
                             "sessionId": msg.get("sessionId"),
                             "params": {"requestId": params["requestId"]}})
            else:
                self.blocked.append(url[:80])
                self._write({"id": self._id(), "method": "Fetch.failRequest",
                             "sessionId": msg.get("sessionId"),
                             "params": {"requestId": params["requestId"],
                                        "errorReason": "BlockedByClient"}})
        elif method == "Page.loadEventFired":
            self.loaded = True

    def _id(self) -> int:
        self._next += 1
        return self._next

    def call(self, method: str, session: str | None = None, **params) -> dict:
        mid = self._id()
        msg: dict = {"id": mid, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        self._write(msg)
        while True:
            answer = self._message()
            if answer.get("id") == mid:
                if "error" in answer:
                    raise ChromiumFailed(f"{method}: {answer['error'].get('message')}")
                return answer.get("result", {})
            if "method" in answer:
                self._event(answer)

    def wait_for_load(self) -> None:
        while not self.loaded:
            msg = self._message()
            if "method" in msg:
                self._event(msg)

    def close(self) -> None:
        try:   # the browser's helpers share its session: none outlives the render
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        for fd in (self._to_chrome, self._from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass


def screenshot(binary: str, svg_text: str, root_has_namespace: bool, width: int,
               height: int, timeout: float, has_viewbox: bool = True) -> bytes:
    """PNG bytes of the page (``width`` x ``height`` window) showing ``svg_text`` as an
    image. Raises TimeoutError past ``timeout`` seconds, ChromiumFailed if it dies."""
    img = image_url(svg_text, root_has_namespace)
    page = page_url(img, has_viewbox)
    with tempfile.TemporaryDirectory(prefix="svgloo-svgbench-",
                                     ignore_cleanup_errors=True) as tmp:
        browser = _Pipe(binary, width, height, os.path.join(tmp, "profile"),
                        time.monotonic() + timeout)
        try:
            browser.allowed = {page, img}
            target = browser.call("Target.createTarget", url="about:blank")["targetId"]
            session = browser.call("Target.attachToTarget", targetId=target,
                                   flatten=True)["sessionId"]
            browser.call("Fetch.enable", session, patterns=[{"urlPattern": "*"}])
            browser.call("Emulation.setScriptExecutionDisabled", session, value=True)
            # The viewport is the whole window, as `--screenshot` makes it (a headless window
            # keeps room for browser chrome that is never drawn, and a 500 px minimum width)
            browser.call("Emulation.setDeviceMetricsOverride", session, width=width,
                         height=height, deviceScaleFactor=1, mobile=False)
            browser.call("Page.enable", session)
            browser.call("Page.navigate", session, url=page)
            browser.wait_for_load()
            shot = browser.call("Page.captureScreenshot", session, format="png")
        finally:
            browser.close()
    return base64.b64decode(shot["data"])
