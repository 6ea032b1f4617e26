"""A headless Chromium: SVG bytes -> RGBA pixels, as a browser draws them.

The referee of svgloo's removal proofs (tests/test_browser_proofs.py), of the renderer
feature table (docs/renderers.md), of ``svgloo fix --browser`` and of the rewrite
benchmark (bench_rewrite.py); tests import it as ``browser``. One warm browser serves a
whole test session; it is
driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: fds 3 and 4,
NUL-terminated JSON), so no websocket, port or driver binary is involved.

Pixels are exact: device scale factor 1, the viewport is exactly the grid of images, no
scrollbars, each SVG drawn by an ``<img>`` of ``size`` x ``size`` CSS px (so the document's
own viewBox and preserveAspectRatio place the picture in that square, as svgloo's renderer
does). The page background is transparent, so a screenshot carries alpha; ``over`` then
composites it on any page colour. Each SVG gets a page of its own size and a screenshot of
its own (see _IMAGE_SCRIPT for why not a grid of many per screenshot).

An ``<img>`` is how a web page embeds an SVG, and it is the browser's sandboxed mode: no
scripts and no external files (``data:`` URLs do load). ``render_document`` instead opens a
file as the top-level document, which does follow external ``href``s beside the file.

No Chromium outlives its owner: it runs under a small watchdog, in a process group of its
own; the watchdog kills the whole group when the owning process dies (a pipe only the owner
holds reaches EOF, or the watchdog is re-parented), and ``close`` kills the group too.
"""

from __future__ import annotations

import atexit
import base64
import inspect
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO

import numpy as np

# Colours of the pages a picture is checked on: a white page and a dark one (a white shape
# is not nothing on a dark page). The dark one is not black so that black shapes show too.
WHITE = (255, 255, 255)
DARK = (30, 30, 30)

# Where Chromium is looked for when SVGLOO_CHROMIUM does not name it: Debian's real binary
# first (its /usr/bin/chromium is a shell wrapper that also execs it), then the usual names.
_CANDIDATES = ("/usr/lib/chromium/chromium", "chromium", "chromium-browser",
               "google-chrome", "google-chrome-stable")

# The transparent page comes from Emulation.setDefaultBackgroundColorOverride: the
# --default-background-color=00000000 switch made Chromium 156's renderers die at random
# ("Render process gone") in 6 of 6 starts here.
_FLAGS = [
    "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
    "--hide-scrollbars", "--force-device-scale-factor=1", "--force-color-profile=srgb",
    "--disable-lcd-text",
    "--no-first-run", "--no-default-browser-check", "--disable-extensions",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-dev-shm-usage", "--mute-audio",
    "--allow-file-access-from-files",
    # A sandboxed frame (render_sandboxed) stays in the page's process: as an out-of-process
    # frame it was painted after the page's own frames, and a 1024 px screenshot caught it
    # before (blank: 255/255 off in one of three).
    "--disable-features=IsolateSandboxedIframes",
    "about:blank",
]


def _well_formed(svg: bytes) -> None:
    """BrowserError unless ``svg`` parses as XML (no DTD loaded, no entity resolved, no
    network: only whether the bytes are well formed is asked)."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        etree.fromstring(svg, parser)
    except etree.XMLSyntaxError as exc:
        raise BrowserError(f"the SVG is not well-formed XML ({exc.msg})") from None


class BrowserError(RuntimeError):
    """Chromium could not be started, died, or did not answer."""


def find_chromium() -> str | None:
    """The Chromium executable to use, or None when there is none on this machine."""
    given = os.environ.get("SVGLOO_CHROMIUM")
    if given:
        return given if shutil.which(given) else None
    for name in _CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


def _kill_marked(marker: str, spare: int = -1) -> int:
    """SIGKILL every process whose command line contains ``marker`` (the browser's private
    profile folder), except ``spare``; how many were signalled. Chromium's crash handler
    starts a session of its own, so the process group does not reach it; its database lives
    in the profile (HOME points there), so the marker does."""
    import os
    import signal

    needle = marker.encode()
    hit = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == spare:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if needle in cmdline:
            try:
                os.kill(int(entry), signal.SIGKILL)
                hit += 1
            except (ProcessLookupError, PermissionError):
                pass
    return hit


# The watchdog: the group leader of Chromium's process group. It moves the protocol pipe to
# fds 3 and 4 (where --remote-debugging-pipe expects it), starts Chromium, and kills all of
# it (the group, and the crash handler found by the profile marker) as soon as the owner is
# gone, it is asked to (SIGTERM), or Chromium has exited.
_WATCHDOG = inspect.getsource(_kill_marked) + r"""
import os, select, signal, subprocess, sys
owner, alive_fd, to_chrome, from_chrome = (int(a) for a in sys.argv[1:5])
marker = sys.argv[5]
def die(*_):
    import shutil
    _kill_marked(marker, spare=os.getpid())
    shutil.rmtree(marker, ignore_errors=True)  # the owner is gone: nobody else will
    os.killpg(0, signal.SIGKILL)
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, die)
if os.getppid() != owner:
    die()
high = [os.dup(to_chrome), os.dup(from_chrome)]
os.dup2(high[0], 3)
os.dup2(high[1], 4)
for fd in {to_chrome, from_chrome, *high} - {3, 4}:
    os.close(fd)
chrome = subprocess.Popen(sys.argv[6:], pass_fds=(3, 4), stdin=subprocess.DEVNULL)
os.close(3)
os.close(4)
while chrome.poll() is None:
    ready, _, _ = select.select([alive_fd], [], [], 1.0)
    if ready or os.getppid() != owner:
        die()
die()
"""


class Chromium:
    """One headless Chromium and one page, driven over the DevTools pipe."""

    def __init__(self, executable: str | None = None, timeout: float = 120.0):
        executable = executable or find_chromium()
        if executable is None:
            raise BrowserError("no Chromium found (install Debian's chromium, or set "
                               "SVGLOO_CHROMIUM to a Chromium executable)")
        self.timeout = timeout
        # each None once close() has released it
        self._profile: str | None = tempfile.mkdtemp(prefix="svgloo-chromium-")
        self._log: IO[bytes] | None = open(os.path.join(self._profile, "chromium.log"), "a+b")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        alive_r, self._alive = os.pipe()  # only this process holds the write end
        cmd = [sys.executable, "-c", _WATCHDOG, str(os.getpid()), str(alive_r),
               str(to_chrome_r), str(from_chrome_w), self._profile, executable, *_FLAGS[:-1],
               f"--user-data-dir={self._profile}", _FLAGS[-1]]
        try:
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                cmd, pass_fds=(alive_r, to_chrome_r, from_chrome_w), start_new_session=True,
                stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
                env={**os.environ, "HOME": self._profile,
                     "XDG_CONFIG_HOME": os.path.join(self._profile, "config"),
                     "XDG_CACHE_HOME": os.path.join(self._profile, "cache")})
        finally:
            for fd in (alive_r, to_chrome_r, from_chrome_w):
                os.close(fd)
        self._lock = threading.Lock()
        self._answers: dict[int, dict] = {}
        self._answered = threading.Condition()
        self._next_id = 0
        self._failed = 0
        self.blocked: list[str] = []  # requests render_sandboxed failed (their URLs)
        self._dead: str | None = None
        self._reader: threading.Thread | None = threading.Thread(
            target=self._read, name="chromium-cdp", daemon=True)
        self._reader.start()
        atexit.register(self.close)
        try:
            target = self.send("Target.createTarget", url="about:blank")["targetId"]
            self._session = self.send("Target.attachToTarget", targetId=target,
                                      flatten=True)["sessionId"]
            self.send("Page.enable", session=True)
            self.send("Runtime.enable", session=True)
            self.send("Emulation.setDefaultBackgroundColorOverride",
                      color={"r": 0, "g": 0, "b": 0, "a": 0}, session=True)
            self._size = (0, 0)
            self.version = self.send("Browser.getVersion")["product"]
        except BaseException:
            self.close()
            raise

    # --- protocol -------------------------------------------------------------------------
    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_chrome, 1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                break
            buf += chunk
            *messages, buf = buf.split(b"\0")
            for raw in messages:
                msg = json.loads(raw)
                if msg.get("method") == "Fetch.requestPaused":
                    self._fail_request(msg)
                elif "id" in msg and msg["id"] >= _UNANSWERED_IDS:
                    pass  # the answer to a failRequest: nobody waits for it
                elif "id" in msg:
                    with self._answered:
                        self._answers[msg["id"]] = msg
                        self._answered.notify_all()
        with self._answered:
            self._dead = "Chromium closed the DevTools pipe (it exited or crashed)"
            self._answered.notify_all()

    def send(self, method: str, session: bool = False, timeout: float | None = None,
             **params) -> dict:
        """One DevTools command; its result, or BrowserError with Chromium's message."""
        with self._lock:
            self._next_id += 1
            mid = self._next_id
            msg = {"id": mid, "method": method, "params": params}
            if session:
                msg["sessionId"] = self._session
            try:
                self._write(msg)
            except OSError as exc:
                raise BrowserError(f"{method}: cannot write to Chromium ({exc})") from None
        with self._answered:
            self._answered.wait_for(lambda: mid in self._answers or self._dead,
                                         timeout or self.timeout)
            answer = self._answers.pop(mid, None)
        if answer is None:
            why = self._dead or f"no answer within {timeout or self.timeout:.0f} s"
            raise BrowserError(f"{method}: {why}{self._log_tail()}")
        if "error" in answer:
            raise BrowserError(f"{method}: {answer['error'].get('message')}")
        return answer.get("result", {})

    def _fail_request(self, paused: dict) -> None:
        """Fail a request the page made while ``render_sandboxed`` intercepts them all
        (from the reader thread: nothing waits for the answer)."""
        self._failed += 1
        url = paused.get("params", {}).get("request", {}).get("url", "")
        self.blocked.append(url[:120])
        msg = {"id": _UNANSWERED_IDS + self._failed, "method": "Fetch.failRequest",
               "params": {"requestId": paused.get("params", {}).get("requestId"),
                          "errorReason": "BlockedByClient"}}
        if paused.get("sessionId"):
            msg["sessionId"] = paused["sessionId"]
        with self._lock:
            try:
                self._write(msg)
            except OSError:
                pass  # Chromium is gone: the waiting command says so

    def _write(self, msg: dict) -> None:
        """One DevTools message down the pipe, whole (callers hold ``_lock``)."""
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self._to_chrome, data):]

    def _log_tail(self) -> str:
        log = self._log
        if log is None:  # closed: the log is gone with the profile
            return ""
        try:
            log.flush()
            log.seek(0)
            tail = log.read().decode(errors="replace").strip().splitlines()[-5:]
        except (OSError, ValueError):
            return ""
        return ("; Chromium said: " + " | ".join(tail)) if tail else ""

    def evaluate(self, expression: str):
        """Evaluate JavaScript in the page (promises awaited); its JSON value."""
        out = self.send("Runtime.evaluate", session=True, expression=expression,
                        awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in out:
            details = out["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise BrowserError(f"page script failed: {text}")
        return out["result"].get("value")

    # --- rendering ------------------------------------------------------------------------
    def _viewport(self, width: int, height: int) -> None:
        if self._size != (width, height):
            self.send("Emulation.setDeviceMetricsOverride", session=True, width=width,
                      height=height, deviceScaleFactor=1, mobile=False)
            self._size = (width, height)

    def _screenshot(self, width: int, height: int) -> np.ndarray:
        from PIL import Image

        shot = self.send("Page.captureScreenshot", session=True, format="png",
                         fromSurface=True,
                         clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1})
        with Image.open(io.BytesIO(base64.b64decode(shot["data"]))) as im:
            rgba = np.asarray(im.convert("RGBA"))
        if rgba.shape[:2] != (height, width):
            raise BrowserError(f"screenshot is {rgba.shape[1]}x{rgba.shape[0]} px, "
                               f"expected {width}x{height}")
        return rgba

    def render(self, svgs: list[bytes], size: int) -> list[np.ndarray]:
        """Each SVG drawn by an ``<img>`` at ``size`` x ``size`` px on a transparent page of
        exactly that size: (size, size, 4) uint8 straight (not premultiplied) RGBA each, as
        PNG carries it. An SVG the browser cannot load raises BrowserError naming it."""
        self._viewport(size, size)
        out = []
        for k, svg in enumerate(svgs):
            url = "data:image/svg+xml;base64," + base64.b64encode(svg).decode()
            if not self.evaluate(_IMAGE_SCRIPT % (json.dumps(url), size)):
                raise BrowserError(f"Chromium could not load SVG number {k} of the batch")
            out.append(self._screenshot(size, size))
        return out

    def render_sandboxed(self, svg: bytes, size: int) -> np.ndarray:
        """``svg`` drawn as a document - the way an ``<object>`` or inline SVG draws it,
        masks and filters live - and as untrusted content: the ``data:`` URL of an
        ``<object>`` (an opaque origin: nothing beside any file can be named) inside a
        sandboxed ``<iframe>`` (no scripts), every request the browser makes meanwhile
        failed through the Fetch domain.
        ``size`` x ``size`` px on a transparent page: straight RGBA. For files svgloo did
        not write (``fix --browser``, the rewrite benchmark); ``render_document`` opens a
        trusted file as the page itself. Raises BrowserError on bytes that are not
        well-formed XML: Chromium would draw its own error page instead."""
        _well_formed(svg)
        self._viewport(size, size)
        url = "data:image/svg+xml;base64," + base64.b64encode(svg).decode()
        self.send("Fetch.enable", patterns=[{"urlPattern": "*"}])
        try:
            if not self.evaluate(_FRAME_SCRIPT % (json.dumps(url), size)):
                raise BrowserError("Chromium could not load the SVG as a document")
            return self._screenshot(size, size)
        finally:
            self.send("Fetch.disable")

    def render_document(self, path: str | os.PathLike, width: int, height: int) -> np.ndarray:
        """The file opened as the top-level document (external ``href``s beside it load),
        in a ``width`` x ``height`` viewport on a transparent page: straight RGBA. The
        file's own width/height decide its size; author it at the viewport's size."""
        self._viewport(width, height)
        url = Path(path).resolve().as_uri()
        self.send("Page.navigate", session=True, url=url)
        self.evaluate(_SETTLED_SCRIPT)
        shot = self._screenshot(width, height)
        self.send("Page.navigate", session=True, url="about:blank")
        self.evaluate(_SETTLED_SCRIPT)
        return shot

    # --- lifetime -------------------------------------------------------------------------
    def close(self) -> None:
        """Kill Chromium's whole process group and remove its profile; idempotent."""
        proc = getattr(self, "_proc", None)
        if proc is not None:
            proc.terminate()  # the watchdog kills Chromium's group and its crash handler
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            self._proc = None
            if self._profile:  # removed only below, after the browser's processes
                _kill_marked(self._profile)
        for name in ("_alive", "_to_chrome"):
            fd = getattr(self, name, None)
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
                setattr(self, name, None)
        reader = getattr(self, "_reader", None)
        if reader is not None:
            reader.join(timeout=10)
            self._reader = None
            try:
                os.close(self._from_chrome)
            except OSError:
                pass
        log = getattr(self, "_log", None)
        if log is not None:
            keep = os.environ.get("SVGLOO_CHROMIUM_LOG")  # where to keep the log, to debug
            if keep:
                shutil.copyfile(log.name, keep)
            log.close()
            self._log = None
        profile = getattr(self, "_profile", None)
        if profile:
            shutil.rmtree(profile, ignore_errors=True)
            self._profile = None
        atexit.unregister(self.close)

    @property
    def pid(self) -> int | None:
        """The process group id (the watchdog's pid) while the browser runs."""
        proc = getattr(self, "_proc", None)
        return proc.pid if proc is not None else None

    def __enter__(self) -> "Chromium":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# One image on a margin-free page, replacing the last; resolves (true) once it is decoded
# and two frames later, so the screenshot shows it, or false when it cannot be loaded.
# One picture per screenshot, in a viewport of its own size: drawn several to a page (a grid
# of tiles in a larger viewport), the same SVG came out antialiased differently from tile to
# tile and from a page of its own size (edges moved by up to 100/255; a corpus icon), so
# renders were only comparable with renders from the same place on a page of the same size.
_IMAGE_SCRIPT = r"""
(async () => {
  const url = %s, size = %d;
  document.documentElement.style.cssText = 'margin:0;padding:0;background:transparent';
  document.body.style.cssText = 'margin:0;padding:0;background:transparent;overflow:hidden';
  const img = new Image(size, size);
  img.style.cssText = `display:block;width:${size}px;height:${size}px;margin:0;border:0`;
  img.src = url;
  document.body.replaceChildren(img);
  let ok = true;
  try { await img.decode(); } catch (e) { ok = false; img.style.visibility = 'hidden'; }
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return ok;
})()
"""

# The SVG as a document, as an <object> draws it (its own width and height give way to the
# object's box, masks live), inside a sandboxed frame: no allow-scripts, and the sandbox
# holds for the object nested in it, so the SVG's scripts and handlers never run. The
# frame's load event waits for the object's document and what it loads.
_FRAME_SCRIPT = r"""
(async () => {
  const url = %s, size = %d;
  document.documentElement.style.cssText = 'margin:0;padding:0;background:transparent';
  document.body.style.cssText = 'margin:0;padding:0;background:transparent;overflow:hidden';
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', '');
  frame.style.cssText = `display:block;width:${size}px;height:${size}px;margin:0;border:0`;
  frame.srcdoc = '<!doctype html><style>html,body{margin:0;background:transparent;' +
    'overflow:hidden}object{display:block}</style><object type="image/svg+xml" ' +
    `data="${url}" width="${size}" height="${size}"></object>`;
  const loaded = new Promise(r => frame.addEventListener('load', () => r(true), {once: true}));
  document.body.replaceChildren(frame);
  const ok = await Promise.race([loaded, new Promise(r => setTimeout(() => r(false), 20000))]);
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return ok;
})()
"""

_SETTLED_SCRIPT = r"""
(async () => {
  if (document.readyState !== 'complete')
    await new Promise(r => addEventListener('load', r, {once: true}));
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return true;
})()
"""


_UNANSWERED_IDS = 1 << 30  # ids of commands sent from the reader thread (failRequest; int32)


# --- pixels --------------------------------------------------------------------------------
def premultiplied(rgba: np.ndarray) -> np.ndarray:
    """Straight RGBA -> premultiplied RGBA (uint8, rounded): what cairo and svgloo's proof
    compare, and where a transparent pixel's colour no longer matters."""
    a = rgba[..., 3:4].astype(np.float64)
    rgb = np.rint(rgba[..., :3].astype(np.float64) * a / 255.0)
    return np.concatenate([rgb, a], axis=-1).astype(np.uint8)


def over(rgba: np.ndarray, page: tuple[int, int, int]) -> np.ndarray:
    """Straight RGBA composited on a page of colour ``page``: (h, w, 3) uint8 RGB."""
    a = rgba[..., 3:4].astype(np.float64) / 255.0
    rgb = rgba[..., :3].astype(np.float64) * a + np.asarray(page, np.float64) * (1.0 - a)
    return np.rint(rgb).astype(np.uint8)


def view_differences(a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """Per pixel, the largest channel difference (/255) between two straight-RGBA pictures
    in each way people can see them: "rgba" (premultiplied, alpha included), on the "white"
    page and on the "dark" page."""
    out = {}
    for name, convert in (("rgba", premultiplied), ("white", lambda p: over(p, WHITE)),
                          ("dark", lambda p: over(p, DARK))):
        x, y = convert(a).astype(np.int16), convert(b).astype(np.int16)
        out[name] = np.abs(x - y).max(axis=-1)
    return out


def largest_difference(a: np.ndarray, b: np.ndarray) -> tuple[int, int, str]:
    """(largest channel difference /255 in any view, pixels that differ at all in the view
    with the most of them, the view of the largest difference)."""
    views = view_differences(a, b)
    where = max(views, key=lambda name: int(views[name].max()))
    pixels = max(int((d > 0).sum()) for d in views.values())
    return int(views[where].max()), pixels, where


def pixels_over(a: np.ndarray, b: np.ndarray, tolerance: int) -> int:
    """Pixels where any view differs by more than ``tolerance``/255 in some channel."""
    worst = np.maximum.reduce(list(view_differences(a, b).values()))
    return int((worst > tolerance).sum())


def embedded_change(chromium: "Chromium", before: bytes, after: bytes, size: int
                    ) -> dict[str, int]:
    """The largest change /255 (``largest_difference``) of Chromium's picture from
    ``before`` to ``after``, drawn as an ``<img>`` and as a document (the way an
    ``<object>`` or inline SVG draws it, masks and filters live; sandboxed:
    ``render_sandboxed``), ``size`` px square."""
    img = chromium.render([before, after], size)
    pictures = [chromium.render_sandboxed(data, size) for data in (before, after)]
    return {"img": largest_difference(*img)[0], "object": largest_difference(*pictures)[0]}
