"""Watch one file for changes with watchdog (its folder, so atomic saves — write a temp
file, rename it over the original — are seen) and report through a Qt signal."""

from __future__ import annotations

import os
from pathlib import Path

from PyQt6.QtCore import QObject, pyqtSignal


CHANGE_EVENTS = {"created", "modified", "moved", "deleted", "closed"}


def _norm(p) -> str:
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    return os.path.normcase(os.path.abspath(p))


class FileWatcher(QObject):
    """Emits ``changed`` (on the GUI thread, queued) whenever an event in the file's folder
    names the file as its source or destination."""

    changed = pyqtSignal()

    def __init__(self, path, parent=None):
        super().__init__(parent)
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        self.path = Path(path)
        target = _norm(self.path)
        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event):
                # reads (opened / closed_no_write, which scoring itself causes) are not
                # changes; a rename over the file (atomic save) is
                if event.is_directory or event.event_type not in CHANGE_EVENTS:
                    return
                names = [event.src_path, getattr(event, "dest_path", None)]
                if any(n and _norm(n) == target for n in names):
                    watcher.changed.emit()

        self._observer = Observer()
        self._observer.schedule(Handler(), str(self.path.parent), recursive=False)
        self._observer.daemon = True
        self._observer.start()

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None
