"""Safe file reads and writes.

* ``atomic_write_bytes``: readers see the old file or the new one, never half of one. A
  symlink is written through (the link stays a link), a file with several hard links is
  rewritten in place (its inode, and so its other names, are kept) after a backup copy,
  ownership and permission bits are kept where the platform allows, and the folder is
  fsynced after the rename so the new name survives a crash.
* ``read_regular_file``: a bounded read that refuses devices, FIFOs and sockets before
  reading a byte (``/dev/zero`` named ``a.svg`` must cost nothing) and never blocks (a
  FIFO is opened non-blocking and refused). Every file svgloo reads goes through it:
  files the user names are followed through links; files svgloo finds by itself (a
  ``svgloo.toml``, a sidecar reference, a mask, a watched drawing) are read only when
  they resolve inside the folder they were found in (``within``, the one rule of
  ``resolve_within``); the daemon's own files (its cache) are never read through a link.
* ``encode_like``: encode edited text the way the original file was encoded, or refuse.
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat
import tempfile
from pathlib import Path

from svgloo.engine.errors import InputError, LimitError


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return  # not on this platform (Windows): the rename is still atomic
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _write_in_place(path: Path, data: bytes) -> None:
    """Rewrite a hard-linked file keeping its inode; a backup copy of the old bytes sits
    beside it until the new bytes are on disk, so a crash loses nothing."""
    old = path.read_bytes()
    backup = _temp_copy(path.parent, path.name, old, None)
    try:
        fd = os.open(path, os.O_WRONLY)
        try:
            _write_all(fd, data)
            os.ftruncate(fd, len(data))
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        try:  # put the old bytes back; the backup stays if even that fails
            fd = os.open(path, os.O_WRONLY)
            try:
                _write_all(fd, old)
                os.ftruncate(fd, len(old))
            finally:
                os.close(fd)
            os.unlink(backup)
        except OSError:
            pass
        raise
    os.unlink(backup)
    _fsync_folder(path.parent)


def _temp_copy(folder: Path, name: str, data: bytes, st: os.stat_result | None) -> str:
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if st is not None:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
            try:
                os.chown(tmp, st.st_uid, st.st_gid)
            except (OSError, AttributeError):  # not ours to give away: keep ours
                pass
    except BaseException:
        _discard(tmp)
        raise
    return tmp


def _discard(tmp: str) -> None:
    """Remove a temporary file a failed write leaves behind (gone already is fine)."""
    try:
        os.unlink(tmp)
    except OSError:
        pass


def atomic_write_bytes(path: str | Path, data: bytes, mode: int | None = None,
                       follow_symlinks: bool = True) -> None:
    """Write ``data`` to ``path`` atomically (see the module docstring).

    ``mode``: permission bits for the file; by default an existing file keeps its own
    (a user's drawing stays as readable as it was) and a new one gets the umask's.
    ``follow_symlinks=False`` replaces a link at ``path`` instead of writing through it
    (for the daemon's own files, where a planted link must not redirect the write)."""
    path = Path(path)
    if follow_symlinks and path.is_symlink():
        path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        st = os.lstat(path)
    except OSError:
        st = None
    if st is not None and stat.S_ISREG(st.st_mode) and st.st_nlink > 1 and mode is None:
        _write_in_place(path, data)
        return
    if st is not None and not stat.S_ISREG(st.st_mode):
        st = None  # a link we replace, or something odd: nothing to copy from it
    tmp = _temp_copy(path.parent, path.name, data, st)
    try:
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        _discard(tmp)
        raise
    _fsync_folder(path.parent)


def atomic_write_text(path: str | Path, text: str, mode: int | None = None,
                      follow_symlinks: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode, follow_symlinks)


def resolve_within(path: str | Path, folder: str | Path,
                   folder_name: str | None = None) -> str:
    """``path`` with every symbolic link resolved, when that lies inside ``folder`` (also
    resolved); an InputError naming where it leads otherwise. The rule for files svgloo
    finds by itself: a link may point to another file of the same folder, never out of
    it (``ln -s /proc/self/environ a.svg``, ``ln -s ../../secret a.ref.png``)."""
    root = os.path.realpath(folder)
    target = os.path.realpath(path)
    if target != root and os.path.commonpath([root, target]) != root:
        where = folder_name or f"its folder {folder}"
        raise InputError(str(path), f"a symlink that leads out of {where} (to {target}); "
                                    "not followed")
    return target


def read_regular_file(path: str | Path, max_bytes: int, name: str | None = None, *,
                      follow_symlinks: bool = True, within: str | Path | None = None,
                      folder_name: str | None = None) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; InputError for anything else
    (a device, FIFO, socket or folder; a link when ``follow_symlinks`` is false; a path
    that resolves out of ``within``), LimitError when it is larger. The type and size are
    checked on the open descriptor, before reading; the open never blocks."""
    name = name or str(path)
    if within is not None:
        path = resolve_within(path, within, folder_name)
        follow_symlinks = False  # resolved: a link appearing now is a swap, refused
    flags = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
             | getattr(os, "O_CLOEXEC", 0))
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow_symlinks and exc.errno in (errno.ELOOP, errno.EMLINK):
            raise InputError(name, "is a symbolic link; not followed") from None
        raise InputError(name, f"cannot read file: {exc.strerror or exc}") from None
    try:
        return read_open_file(fd, name, max_bytes)[1]
    except OSError as exc:
        raise InputError(name, f"cannot read file: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def read_open_file(fd: int, name: str, max_bytes: int) -> tuple[os.stat_result, bytes]:
    """(the stat, the bytes) of an open descriptor, which must be a regular file of at most
    ``max_bytes`` (InputError, LimitError); checked before reading, and again after, for a
    file that grew meanwhile. The descriptor stays open; OSError is the caller's to word."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise InputError(name, "not a regular file (a device, pipe, socket or folder); "
                               "nothing was read")
    if st.st_size > max_bytes:
        raise LimitError(name, f"file is {st.st_size} bytes; the limit is {max_bytes}")
    with os.fdopen(fd, "rb", closefd=False) as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:  # grew while we read it
        raise LimitError(name, f"file is larger than {max_bytes} bytes")
    return st, data


_DECL_ENCODING = re.compile(r"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
         (codecs.BOM_UTF16_BE, "utf-16-be"))


def detect_encoding(original: bytes) -> tuple[str, bytes]:
    """(codec, byte-order mark) of a file's bytes: a UTF-16/32 BOM wins, then the XML
    declaration's encoding (after a UTF-8 BOM, which is kept as it was), else UTF-8."""
    bom = b""
    for mark, enc in _BOMS:
        if original.startswith(mark):
            if mark != codecs.BOM_UTF8:
                return enc, mark
            bom, original = mark, original[len(mark):]  # the declaration still decides
            break
    if original.startswith(b"<\x00"):
        return "utf-16-le", b""
    if original.startswith(b"\x00<"):
        return "utf-16-be", b""
    head = original[:200].decode("latin-1")
    m = _DECL_ENCODING.match(head)
    enc = m.group(1) if m else "utf-8"
    try:
        codecs.lookup(enc)
    except LookupError:
        enc = "utf-8"
    return enc, bom


def encode_like(text: str, original: bytes, name: str = "<input>") -> bytes:
    """Encode edited text the way ``original`` was encoded (byte-order mark kept); an
    InputError when the text cannot be written in that encoding (nothing is written)."""
    enc, bom = detect_encoding(original)
    text = text[1:] if text.startswith("\ufeff") else text
    try:
        return bom + text.encode(enc)
    except UnicodeEncodeError as exc:
        raise InputError(name, f"the edited text cannot be written as {enc} (the file's "
                               f"encoding): {exc.reason} at character {exc.start}") from None
