"""Read a file, work on it for a while, write it back only if it is still what was read.

``svgloo fix`` reads a drawing, proves its removals (seconds to minutes), then writes. In
that time the user may save the file from an editor, or someone may swap the file for a
symbolic link to a file elsewhere. The protocol (docs/security.md):

* Read: the path is resolved once (a link the user *named* is followed: the drawing it
  leads to is fixed and the link stays a link). Its folder is opened and held as a
  descriptor; the file is opened in it with ``O_NOFOLLOW``; its device, inode and SHA-256
  are kept.
* Write: the named path must still lead to the same place; the name in the held folder
  must still be a regular file (not a link: ``lstat``) with the same device and inode, and
  its bytes must hash the same. Otherwise ``FileChanged`` and nothing is written. The new
  bytes go to a temporary file created in the held folder (``O_EXCL | O_NOFOLLOW``) and
  renamed over the name there, so a folder swapped for a link after the read is not
  followed either. A file with several hard links is rewritten in place instead (its
  other names keep seeing it), after the same checks, on a descriptor opened
  ``O_NOFOLLOW`` whose inode is checked once more.

What is left: a save landing in the microseconds between the last check and the rename
is replaced (editors' own atomic saves have the same window). Write errors (a full disk,
a read-only folder) leave the file as it was and raise ``OSError`` for the caller to
report.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass

from svgloo.engine.errors import InputError, LimitError
from svgloo.engine.reading.files import read_open_file

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class FileChanged(InputError):
    """The file is no longer what was read: nothing was written."""

    def __init__(self, file: str, why: str = ""):
        super().__init__(file, "changed while svgloo worked on it" + (f" ({why})" if why
                                                                        else "")
                         + "; nothing written")


@dataclass
class ReadFile:
    """What ``read_for_update`` saw; hand it to ``write_if_unchanged``."""

    name: str          # the path as the user gave it
    real: str          # where it led when read (links resolved)
    folder_fd: int     # the folder of ``real``, held open from the read to the write
    base: str          # the file's name in that folder
    dev: int
    ino: int
    nlink: int
    mode: int
    uid: int
    gid: int
    digest: bytes
    data: bytes

    def close(self) -> None:
        if self.folder_fd >= 0:
            os.close(self.folder_fd)
            self.folder_fd = -1

    def __enter__(self) -> "ReadFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _read_at(folder_fd: int, base: str, name: str, max_bytes: int) -> tuple[os.stat_result,
                                                                              bytes]:
    try:
        fd = os.open(base, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0),
                     dir_fd=folder_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise FileChanged(name, "it is now a symbolic link") from None
        raise
    try:
        return read_open_file(fd, name, max_bytes)
    finally:
        os.close(fd)


def _open_folder(folder: str) -> int:
    """A descriptor of the folder, to open, stat and rename names in. A folder the user may
    enter but not list (mode --x) cannot be opened for reading; O_PATH (Linux) still gives
    a descriptor for that, one that cannot be fsynced after the rename."""
    flags = getattr(os, "O_DIRECTORY", 0) | _CLOEXEC
    try:
        return os.open(folder, os.O_RDONLY | flags)
    except PermissionError:
        if not hasattr(os, "O_PATH"):
            raise
        return os.open(folder, os.O_PATH | flags)


def read_for_update(path: str, max_bytes: int) -> ReadFile:
    """Read ``path`` for a later ``write_if_unchanged``. InputError for what cannot be
    read (one line naming the file); the caller closes the result."""
    real = os.path.realpath(path)
    folder, base = os.path.split(real)
    try:
        folder_fd = _open_folder(folder or ".")
    except OSError as exc:
        raise InputError(path, f"cannot read file: {exc.strerror or exc}") from None
    try:
        st, data = _read_at(folder_fd, base, path, max_bytes)
    except FileChanged:
        os.close(folder_fd)   # a link appeared between resolving and opening
        raise
    except OSError as exc:
        os.close(folder_fd)
        raise InputError(path, f"cannot read file: {exc.strerror or exc}") from None
    except BaseException:
        os.close(folder_fd)
        raise
    return ReadFile(path, real, folder_fd, base, st.st_dev, st.st_ino, st.st_nlink,
                    st.st_mode, st.st_uid, st.st_gid, hashlib.sha256(data).digest(), data)


def check_unchanged(read: ReadFile) -> None:
    """FileChanged unless the file is still the one read, byte for byte."""
    if os.path.realpath(read.name) != read.real:
        raise FileChanged(read.name, "it now leads somewhere else")
    try:
        st = os.stat(read.base, dir_fd=read.folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise FileChanged(read.name, "it was removed") from None
    if stat.S_ISLNK(st.st_mode):
        raise FileChanged(read.name, "it is now a symbolic link")
    if (st.st_dev, st.st_ino) != (read.dev, read.ino):
        raise FileChanged(read.name, "it was replaced by another file")
    try:   # a file that grew past any sensible size, or became a FIFO, has changed too
        now, data = _read_at(read.folder_fd, read.base, read.name, len(read.data) + 1)
    except FileChanged:
        raise
    except (InputError, LimitError):
        raise FileChanged(read.name) from None
    if (now.st_dev, now.st_ino) != (read.dev, read.ino) or \
            hashlib.sha256(data).digest() != read.digest:
        raise FileChanged(read.name)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _rewrite_in_place(read: ReadFile, data: bytes) -> None:
    """A hard-linked file keeps its inode; the old bytes go back if the write fails."""
    fd = os.open(read.base, os.O_WRONLY | _NOFOLLOW | _CLOEXEC, dir_fd=read.folder_fd)
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != (read.dev, read.ino):
            raise FileChanged(read.name, "it was replaced by another file")
        try:
            _write_all(fd, data)
            os.ftruncate(fd, len(data))
            os.fsync(fd)
        except BaseException:
            try:
                os.lseek(fd, 0, os.SEEK_SET)
                _write_all(fd, read.data)
                os.ftruncate(fd, len(read.data))
            except OSError:
                pass
            raise
    finally:
        os.close(fd)


def _replace(read: ReadFile, data: bytes) -> None:
    tmp = f".{read.base}.{os.getpid()}.svgloo.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
                 stat.S_IMODE(read.mode), dir_fd=read.folder_fd)
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
            os.fchmod(fd, stat.S_IMODE(read.mode))
            try:
                os.fchown(fd, read.uid, read.gid)
            except OSError:   # not ours to give away: keep ours
                pass
        finally:
            os.close(fd)
        check_unchanged(read)   # once more, as close to the rename as it can be
        os.replace(tmp, read.base, src_dir_fd=read.folder_fd, dst_dir_fd=read.folder_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=read.folder_fd)
        except OSError:
            pass
        raise
    try:
        os.fsync(read.folder_fd)
    except OSError:
        pass


def write_if_unchanged(read: ReadFile, data: bytes) -> None:
    """Write ``data`` where ``read`` was read, if the file is still what was read
    (FileChanged otherwise, nothing written). OSError when the write itself fails; the
    file is then as it was."""
    check_unchanged(read)
    if read.nlink > 1:
        _rewrite_in_place(read, data)
    else:
        _replace(read, data)
