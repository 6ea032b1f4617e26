"""Result and layer caches for the daemon.

* ``LRUCache``: a thread-safe, bounded ``MutableMapping`` (by entry count and/or by an
  estimated byte size). Used for the in-memory result cache and as the long-lived
  ``layer_cache`` handed to the engine, so a small edit re-renders only the layers whose
  text changed.
* ``ResultCache``: svgloo.score/1 (or svgloo.structure/1) results keyed by content hash +
  settings + backbone + reference, in memory (LRU) and on disk under
  ``platformdirs.user_cache_dir("svgloo")`` (``SVGLOO_CACHE_DIR`` overrides it), written
  atomically (temp file + ``os.replace``) so a restart keeps them and a crash never leaves
  a half-written entry. Entries are read with ``read_regular_file`` and no link followed:
  an entry replaced by a link to ``/dev/zero``, a FIFO or an oversized file is a miss
  (logged, removed), never a blocked thread or a daemon that reads gigabytes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, MutableMapping
from pathlib import Path

from svgloo.engine.errors import SvglooError
from svgloo.engine.reading.files import atomic_write_text, read_regular_file
from svgloo.engine.settings import cache_dir

CACHE_FORMAT = 1
RESULT_SCHEMAS = ("svgloo.score/1", "svgloo.structure/1")
# Larger than any result we write (a 5000-unit score result is ~3 MB of JSON); a bigger
# file in the cache was not written by us and is not read.
MAX_ENTRY_BYTES = 64 * 1024 * 1024

log = logging.getLogger("svgloo.daemon")


def valid_result(value) -> bool:
    """A cache entry is used only if it looks like a result (valid JSON is not enough:
    ``{}`` or a truncated-then-repaired file must be a miss, not a crash later)."""
    return (isinstance(value, dict) and value.get("schema") in RESULT_SCHEMAS
            and isinstance(value.get("file"), str)
            and (value["schema"] != "svgloo.score/1"
                 or isinstance(value.get("units"), list)
                 and isinstance(value.get("summary"), dict)))


def _nbytes(value) -> int:
    """Rough size of a cached value (numpy arrays, tuples of them, strings)."""
    if value is None:
        return 0
    n = getattr(value, "nbytes", None)
    if isinstance(n, int):
        return n
    if isinstance(value, (tuple, list)):
        return sum(_nbytes(v) for v in value) + 16 * len(value)
    if isinstance(value, (str, bytes)):
        return len(value)
    return 64


class LRUCache(MutableMapping):
    """Least-recently-used mapping bounded by ``max_items`` and/or ``max_bytes``."""

    def __init__(self, max_items: int | None = None, max_bytes: int | None = None,
                 sizeof: Callable[[object], int] = _nbytes):
        self.max_items = max_items
        self.max_bytes = max_bytes
        self._sizeof = sizeof
        self._data: OrderedDict = OrderedDict()
        self._sizes: dict = {}
        self.bytes = 0
        self._lock = threading.RLock()

    def __getitem__(self, key):
        with self._lock:
            value = self._data[key]
            self._data.move_to_end(key)
            return value

    def __contains__(self, key) -> bool:
        with self._lock:
            return key in self._data

    def __setitem__(self, key, value) -> None:
        size = self._sizeof(value) if self.max_bytes is not None else 0
        with self._lock:
            if key in self._data:
                self.bytes -= self._sizes.pop(key)
                del self._data[key]
            self._data[key] = value
            self._sizes[key] = size
            self.bytes += size
            self._evict()

    def _evict(self) -> None:
        while self._data and (
                (self.max_items is not None and len(self._data) > self.max_items)
                or (self.max_bytes is not None and self.bytes > self.max_bytes
                    and len(self._data) > 1)):
            key, _ = self._data.popitem(last=False)
            self.bytes -= self._sizes.pop(key)

    def __delitem__(self, key) -> None:
        with self._lock:
            del self._data[key]
            self.bytes -= self._sizes.pop(key)

    def __iter__(self) -> Iterator:
        with self._lock:
            return iter(list(self._data))

    def __len__(self) -> int:
        return len(self._data)


def result_key(kind: str, text: str | bytes, name: str, settings_key: dict, backbone: str,
               reference: dict | None = None) -> str:
    """Cache key of one analysis: what was analysed (content and name), how (settings and
    backbone) and against what (the reference, with the reference file's size and mtime)."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    h = hashlib.sha256()
    h.update(json.dumps({"format": CACHE_FORMAT, "kind": kind, "name": name,
                         "settings": settings_key, "backbone": backbone,
                         "reference": reference}, sort_keys=True, default=str).encode())
    h.update(b"\0")
    h.update(hashlib.sha256(data).digest())
    return h.hexdigest()


class ResultCache:
    """Results in memory (LRU) and on disk. ``get`` returns a fresh copy of the dict."""

    def __init__(self, directory: Path | str | None = None, memory_items: int = 256,
                 disk: bool = True):
        self.directory = Path(directory) if directory is not None else cache_dir()
        self.results_dir = self.directory / "results"
        self.memory = LRUCache(max_items=memory_items)
        self.disk = disk
        self.hits = 0
        self.misses = 0
        self.disk_hits = 0
        self.rejected = 0  # entries that were not valid results
        self.write_error: str | None = None  # set while the disk cache cannot be written
        self._lock = threading.Lock()

    def _path(self, key: str) -> Path:
        return self.results_dir / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        raw = self.memory.get(key)
        from_disk = False
        if raw is None and self.disk:
            raw = self._read_entry(key)
            from_disk = raw is not None
        value = None
        if raw is not None:
            try:
                value = json.loads(raw)
            except ValueError:
                value = None
            if not valid_result(value):
                value = None
                self.rejected += 1
                self.discard(key)  # a damaged entry is a miss, and is not tried again
        with self._lock:
            if value is None:
                self.misses += 1
                return None
            self.hits += 1
            if from_disk:
                self.disk_hits += 1
        if from_disk:
            self.memory[key] = raw
        return value

    def _read_entry(self, key: str) -> str | None:
        """An entry's text; None when there is none, or when it is not a plain file of
        ours (then it is logged and removed, so it is not tried again)."""
        path = self._path(key)
        try:
            return read_regular_file(path, MAX_ENTRY_BYTES, follow_symlinks=False).decode()
        except UnicodeDecodeError:
            why = f"{path}: not UTF-8 text"
        except SvglooError as exc:
            if not os.path.lexists(path):
                return None  # the usual miss
            why = str(exc)
        with self._lock:
            self.rejected += 1
        log.warning("cache entry not used (removed): %s", why)
        self.discard(key)
        return None

    def put(self, key: str, result: dict) -> None:
        raw = json.dumps(result)
        self.memory[key] = raw
        if self.disk and len(raw) > MAX_ENTRY_BYTES:
            return  # it would not be read back: kept in memory only
        if self.disk:
            try:
                atomic_write_text(self._path(key), raw, mode=0o600, follow_symlinks=False)
                self.write_error = None
            except OSError as exc:  # a read-only or full cache dir costs speed, not results
                message = f"cannot write to the result cache {self.directory}: " \
                          f"{exc.strerror or exc}"
                if self.write_error is None:
                    log.warning("%s (results are kept in memory only)", message)
                self.write_error = message

    def discard(self, key: str) -> None:
        self.memory.pop(key, None)
        if self.disk:
            try:
                self._path(key).unlink()
            except OSError:
                pass

    def stats(self) -> dict:
        return {"hits": self.hits, "misses": self.misses, "disk_hits": self.disk_hits,
                "memory_entries": len(self.memory), "directory": str(self.directory),
                "rejected_entries": self.rejected, "write_error": self.write_error}


__all__ = ["LRUCache", "ResultCache", "result_key"]
