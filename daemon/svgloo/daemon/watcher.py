"""Re-score SVG files when they are saved (watchdog observer + debounce).

Editors save in different ways: in place (modified events), through a temporary file that
is renamed over the original (a moved event whose destination is the ``.svg``), or by
deleting and re-creating. All of them become "this path changed"; each path then waits
for a quiet period (``debounce_s``, ~300 ms) so a burst of events is handled once, with
the file's final content. A path that no longer exists when its turn comes is reported
as deleted.

Files are untrusted: ``read_watched`` is the one rule for every file the watcher reads,
whether found by the first pass over the folder (``existing_svgs``) or by an event: a
path is read only when it resolves inside the watched folder (a link to ``/dev/zero``,
``/proc/self/environ`` or ``../secret.svg`` is refused, absolute or relative) and is a
regular file of at most ``max_bytes``, checked on the open descriptor before reading a
byte (``engine.files.read_regular_file``).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from typing import Any
from collections.abc import Callable

from svgloo.engine.errors import SvglooError
from svgloo.engine.reading.files import read_regular_file, resolve_within
from svgloo.engine.limits import DEFAULT_LIMITS

log = logging.getLogger("svgloo.watcher")

SUFFIXES = (".svg", ".svgz")
DEBOUNCE_S = 0.3


def is_svg(path: str) -> bool:
    name = os.path.basename(path)
    lower = name.lower()
    # <stem>.ref.svg is another drawing's reference (engine/svgloo/engine/scoring/reference.py), not a drawing
    return (lower.endswith(SUFFIXES) and not lower.endswith((".ref.svg", ".ref.svgz"))
            and not name.startswith((".#", "~")))


def read_watched(folder: str, path: str, max_bytes: int) -> bytes:
    """The bytes of a watched file, with the checks above; FileNotFoundError when it is
    gone, InputError/LimitError when it must not be read (the path is resolved once and
    the result opened without following links, so a link swapped in meanwhile is caught
    too)."""
    target = resolve_within(path, folder, "the watched folder")
    if not os.path.lexists(target):
        raise FileNotFoundError(path)
    return read_regular_file(target, max_bytes, path, follow_symlinks=False)


def existing_svgs(folder: str, recursive: bool = True) -> list[str]:
    """The drawings already in ``folder`` (what the first pass scores), sorted; hidden
    folders are skipped and linked folders are not entered. Each is still read through
    ``read_watched``: being listed here is not being trusted."""
    out = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if recursive else []
        out += [os.path.join(root, n) for n in sorted(names)
                if is_svg(os.path.join(root, n))]
    return out


class Watcher:
    """Watch ``folder`` recursively; call ``rescore(path)`` once per settled change and
    ``deleted(path)`` when a watched SVG is gone. Callbacks run on the watcher's thread."""

    def __init__(self, folder: str, rescore: Callable[[str], object],
                 deleted: Callable[[str], object] | None = None,
                 debounce_s: float = DEBOUNCE_S, recursive: bool = True,
                 rejected: Callable[[str, SvglooError], object] | None = None,
                 max_bytes: int = DEFAULT_LIMITS.max_file_bytes):
        self.folder = os.path.abspath(folder)
        self.rejected = rejected or (lambda p, e: log.info("%s", e))
        self.max_bytes = max_bytes
        self.rescore = rescore
        self.deleted = deleted or (lambda p: None)
        self.debounce_s = debounce_s
        self.recursive = recursive
        self._pending: dict[str, float] = {}
        self._digests: dict[str, str] = {}
        self._cond = threading.Condition()
        self._settle_lock = threading.Lock()  # the first pass and events, one at a time
        self._stop = False
        self._observer: Any = None  # a watchdog Observer, once started
        self._thread = threading.Thread(target=self._loop, name=f"svgloo-watch {folder}",
                                        daemon=True)

    # -- events ------------------------------------------------------------------------
    def touch(self, path: str) -> None:
        """Note that ``path`` changed (or disappeared); it is handled after a quiet spell."""
        if not is_svg(path):
            return
        path = os.path.abspath(path)
        with self._cond:
            self._pending[path] = time.monotonic() + self.debounce_s
            self._cond.notify()

    def _on_any_event(self, event) -> None:
        if event.is_directory:
            return
        kind = event.event_type
        if kind in ("created", "modified", "deleted", "closed"):
            self.touch(os.fsdecode(event.src_path))
        elif kind == "moved":
            self.touch(os.fsdecode(event.src_path))   # gone from here (if it was an .svg)
            self.touch(os.fsdecode(event.dest_path))  # atomic save lands here

    # -- the debounce loop -------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._stop:
                    now = time.monotonic()
                    due = [p for p, t in self._pending.items() if t <= now]
                    if due:
                        for p in due:
                            del self._pending[p]
                        break
                    wait = min(self._pending.values()) - now if self._pending else None
                    self._cond.wait(wait)
                if self._stop:
                    return
            for path in sorted(due):
                try:
                    self._settle(path)
                except Exception:  # a callback bug must not stop the watcher
                    log.exception("watcher callback failed for %s", path)

    def _settle(self, path: str) -> None:
        with self._settle_lock:
            self._settle_unlocked(path)

    def _settle_unlocked(self, path: str) -> None:
        try:
            digest = hashlib.sha256(read_watched(self.folder, path, self.max_bytes)).hexdigest()
        except FileNotFoundError:
            self._digests.pop(path, None)
            self.deleted(path)
            return
        except SvglooError as exc:
            if self._digests.get(path) != repr(exc):  # say it once per problem
                self._digests[path] = repr(exc)
                self.rejected(path, exc)
            return
        except OSError:
            return  # unreadable for now (permissions); a later event retries
        if self._digests.get(path) == digest:
            return  # same content as last time (a touch, a second close event)
        self._digests[path] = digest
        self.rescore(path)

    def settle_existing(self) -> None:
        """The first pass: every drawing already in the folder, handled exactly as a save
        of it would be (same checks, same callbacks), one after the other on the caller's
        thread."""
        for path in existing_svgs(self.folder, self.recursive):
            if self._stop:
                return
            try:
                self._settle(path)
            except Exception:  # a callback bug must not stop the pass
                log.exception("watcher callback failed for %s", path)

    # -- lifecycle ---------------------------------------------------------------------
    def start(self) -> "Watcher":
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event):
                watcher._on_any_event(event)

        self._observer = observer = Observer()
        observer.schedule(Handler(), self.folder, recursive=self.recursive)
        observer.daemon = True
        observer.start()
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)


__all__ = ["Watcher", "is_svg", "read_watched", "existing_svgs", "DEBOUNCE_S"]
