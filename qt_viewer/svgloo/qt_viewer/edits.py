"""Safe file edits for the viewer (no Qt here): atomic writes, an undo stack, and a
refusal to overwrite a file that changed on disk since it was loaded or is read-only."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from svgloo.engine.errors import InputError, SvglooError
from svgloo.engine.files import atomic_write_bytes, encode_like


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


@dataclass
class FileSession:
    """The bytes the viewer loaded for one file, and the session's undo stack.

    ``loaded`` must be the exact bytes the current analysis was made from; every write
    first checks that the file still holds them."""

    path: Path
    loaded: bytes
    undo_stack: list[bytes] = field(default_factory=list)

    def current_bytes(self) -> bytes:
        try:
            return self.path.read_bytes()
        except OSError as exc:
            raise InputError(str(self.path), f"cannot read file: {exc.strerror or exc}") from None

    def changed_on_disk(self) -> bool:
        return self.current_bytes() != self.loaded

    def _check_writable(self) -> None:
        if is_read_only(self.path):
            raise ReadOnlyError(str(self.path), "the file is read-only; nothing was written "
                                "(make it writable, e.g. chmod u+w, to edit it here)")

    def _check_unchanged(self) -> None:
        if self.changed_on_disk():
            raise FileChangedError(str(self.path), "the file changed on disk since it was "
                                   "loaded; nothing was written (wait for the re-score and "
                                   "try again)")

    def write_text(self, new_text: str) -> bytes:
        """Replace the file with ``new_text`` (checked, atomic, undoable); returns the
        bytes written."""
        if self.loaded.startswith(b"\x1f\x8b"):
            raise InputError(str(self.path), "compressed .svgz files are read-only in the "
                                              "viewer")
        self._check_writable()
        self._check_unchanged()
        data = encode_like(new_text, self.loaded, str(self.path))
        atomic_write_bytes(self.path, data)
        self.undo_stack.append(self.loaded)
        self.loaded = data
        return data

    def remove_unit(self, run, unit_index: int) -> bytes:
        """Remove one scoring unit of ``run`` (whose document was parsed from
        ``self.loaded``) with the engine's removal edit."""
        from svgloo.engine.units import apply_edits, removal_edit

        edit = removal_edit(run.units, unit_index)
        return self.write_text(apply_edits(run.doc.text, [edit]))

    def can_undo(self) -> bool:
        return bool(self.undo_stack)

    def undo(self) -> bytes:
        """Restore the bytes from before the last edit, exactly."""
        if not self.undo_stack:
            raise InputError(str(self.path), "nothing to undo")
        self._check_writable()
        self._check_unchanged()
        previous = self.undo_stack[-1]
        atomic_write_bytes(self.path, previous)
        self.undo_stack.pop()
        self.loaded = previous
        return previous
