"""The file under review (no Qt here): the text being edited in memory, the bytes on disk,
and a checked, atomic Save.

Edits (Remove, the proven bulk removal, Undo, Redo) change only the text in memory; the
viewer re-scores that text. ``save`` writes it, with the original's encoding and byte
order mark, by the engine's atomic write, and refuses when the file is read-only or changed
on disk since it was read or last saved."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from svgloo.engine.errors import InputError, SvglooError
from svgloo.engine.reading.files import atomic_write_bytes, encode_like

__all__ = ["FileChangedError", "FileSession", "ReadOnlyError", "encode_like", "is_read_only"]


class FileChangedError(SvglooError):
    """The file on disk is not the one the viewer loaded; nothing was written."""


class ReadOnlyError(SvglooError):
    """The file is read-only; nothing was written."""


def is_read_only(path: Path) -> bool:
    """Whether the user may not, or did not mean to, write the file: no write permission
    for us, or no write bit for anyone (root may write a 0444 file, and an atomic rename
    would replace it even without permission; both would ignore what its owner said)."""
    try:
        st = os.stat(path)
    except OSError:
        return False  # gone or unreadable: the write itself reports it
    no_write_bits = not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    return no_write_bits or not os.access(path, os.W_OK)


class FileSession:
    """One file under review.

    ``saved``: the exact bytes last read from or written to disk, and ``saved_text`` the
    document text the engine read from them; ``text``: that text as edited since."""

    def __init__(self, path: Path, saved: bytes, text: str):
        self.path = Path(path)
        self.saved = saved
        self.saved_text = text
        self.text = text

    @property
    def modified(self) -> bool:
        """True when the text in memory is not the text of the file's bytes."""
        return self.text != self.saved_text

    def current_bytes(self) -> bytes:
        """The text in memory as the file would hold it (its encoding and byte order
        mark); the saved bytes themselves while unedited."""
        if not self.modified:
            return self.saved
        return encode_like(self.text, self.saved, str(self.path))

    def disk_bytes(self) -> bytes:
        try:
            return self.path.read_bytes()
        except OSError as exc:
            raise InputError(str(self.path), f"cannot read file: {exc.strerror or exc}") from None

    def changed_on_disk(self) -> bool:
        return self.disk_bytes() != self.saved

    def check_editable(self) -> None:
        """Refuse edits that could never be saved: .svgz files and read-only files."""
        if self.saved.startswith(b"\x1f\x8b"):
            raise InputError(str(self.path), "compressed .svgz files are read-only in the "
                                              "viewer")
        if is_read_only(self.path):
            raise ReadOnlyError(str(self.path), "the file is read-only; nothing was written "
                                "(make it writable, e.g. chmod u+w, to edit it here)")

    def save(self) -> bytes:
        """Write the text in memory (checked, atomic); returns the bytes written."""
        self.check_editable()
        if self.changed_on_disk():
            raise FileChangedError(str(self.path), "the file changed on disk since it was "
                                   "loaded; nothing was written (close without saving and "
                                   "open it again to see the other change)")
        data = self.current_bytes()
        atomic_write_bytes(self.path, data)
        self.saved, self.saved_text = data, self.text
        return data
