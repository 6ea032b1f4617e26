"""cairocffi's C declarations, parsed once per installation instead of once per process.

Importing cairocffi parses its cairo headers with pycparser (``cairocffi/ffi.py``): 0.2-0.3 s
of every svgloo command's start (``svgloo score`` of an example: 0.69 -> 0.51 s). cffi can write
what that parse produces as a Python module ("out-of-line ABI mode": the same type table
that the parse builds, as bytes, no C compiler involved); loading it takes milliseconds.

``install()`` loads that module from svgloo's cache folder, writing it first if it is
missing, and registers it as ``cairocffi.ffi`` before cairocffi is imported, so cairocffi
binds the same libcairo through the same declarations. The file's name carries a hash of
everything it is made from (the headers' text, the cffi and Python versions): another
cairocffi or cffi makes another file. It is run as Python, so it is loaded only when it
and its folder are the user's own and writable by nobody else. Anything unexpected
(cairocffi imported already, xcffib installed, the folder not writable, a file that does
not load) leaves cairocffi to parse its headers as it always does.
``SVGLOO_CAIRO_BINDING=0`` turns it off.

Only svgloo's own renderer processes call it (worker_preload). They never use
``cairocffi.pixbuf``, whose declarations include cairo's from a second in-line parse; that
module is not served (importing it raises ImportError, saying why).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import os
import sys
import types
from pathlib import Path

from svgloo.engine.settings import cache_dir

MODULE_PREFIX = "_svgloo_cairocffi_"


def cache_folder() -> Path:
    return cache_dir() / "cffi"


def _headers() -> str | None:
    """cairocffi's cairo declarations (``constants._CAIRO_HEADERS``), read without
    importing cairocffi (whose ``__init__`` would parse them)."""
    spec = importlib.util.find_spec("cairocffi")
    if spec is None or not spec.submodule_search_locations:
        return None
    source = Path(next(iter(spec.submodule_search_locations))) / "constants.py"
    namespace: dict = {}
    exec(compile(source.read_text(encoding="utf-8"), str(source), "exec"), namespace)
    headers = namespace.get("_CAIRO_HEADERS")
    return headers if isinstance(headers, str) else None


def _module_name(headers: str) -> str:
    import _cffi_backend  # type: ignore[import-untyped]

    made_from = "\0".join((headers, _cffi_backend.__version__, sys.implementation.cache_tag,
                           sys.platform))
    return MODULE_PREFIX + hashlib.sha256(made_from.encode()).hexdigest()[:20]


def _write(path: Path, name: str, headers: str) -> None:
    """Parse the headers (what cairocffi would do) and write cffi's module for them,
    atomically: another process may be loading or writing the same file."""
    import tempfile

    from cffi import FFI  # type: ignore[import-untyped]

    builder = FFI()
    builder.cdef(headers)
    builder.set_source(name, None)  # None: ABI mode, a pure Python module
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".py")
    os.close(fd)
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # cffi says "generating <file>"
            builder.emit_python_code(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _yours(path: Path) -> bool:
    """Whether the file and its folder are this user's and writable by nobody else: the
    file is run as Python, so one that another user could have written is not loaded."""
    if not hasattr(os, "getuid"):
        return True  # Windows: a user's cache folder is private by its ACL
    for p in (path, path.parent):
        st = os.stat(p)
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            return False
    return True


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ffi


def _ffi_module(ffi) -> types.ModuleType:
    """What ``cairocffi.ffi`` is to cairocffi: its ``ffi``."""
    module = types.ModuleType("cairocffi.ffi", "cairocffi's declarations, loaded by svgloo "
                                               "(svgloo.engine.rendering.cairo_binding)")
    module.ffi = ffi  # type: ignore[attr-defined]

    def __getattr__(attr: str):
        if attr != "ffi_pixbuf":  # e.g. __path__, which the import system asks for
            raise AttributeError(attr)
        raise ImportError("cairocffi.ffi.ffi_pixbuf is not available in this process: "
                          "svgloo loaded cairocffi's cairo declarations only (set "
                          "SVGLOO_CAIRO_BINDING=0 to load cairocffi as usual)")

    module.__dict__["__getattr__"] = __getattr__  # PEP 562: asked for missing names
    return module


def install() -> bool:
    """Register the cached declarations as ``cairocffi.ffi`` before cairocffi is imported;
    whether it did (False: cairocffi will parse its headers itself)."""
    if os.environ.get("SVGLOO_CAIRO_BINDING", "1") == "0" or "cairocffi" in sys.modules:
        return False
    try:
        if importlib.util.find_spec("xcffib") is not None:
            return False  # cairocffi then includes xcb's declarations too: not reproduced
        headers = _headers()
        if headers is None:
            return False
        name = _module_name(headers)
        path = cache_folder() / f"{name}.py"
        if not path.exists():
            _write(path, name, headers)
        if not _yours(path):
            return False
        try:
            ffi = _load(path, name)
        except Exception:  # noqa: BLE001 - a damaged file (a full disk): write it again
            _write(path, name, headers)
            ffi = _load(path, name)
    except Exception:  # noqa: BLE001 - whatever fails, cairocffi's own parse still works
        return False
    sys.modules["cairocffi.ffi"] = _ffi_module(ffi)
    return True
