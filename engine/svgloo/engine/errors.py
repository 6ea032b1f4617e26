"""One exception type per failure kind, each carrying the file and an actionable message.

Front ends turn these into exit code 2 (CLI), an Error diagnostic (LSP) or a dialog
(viewer); nothing below them prints or exits.
"""

from __future__ import annotations


class SvglooError(Exception):
    """Base class: ``file`` is the document's name, ``message`` says what is wrong."""

    kind = "error"

    def __init__(self, file: str | None, message: str, *, line: int | None = None,
                 column: int | None = None):
        message = one_line(message)
        super().__init__(message)
        self.file = file or "<input>"
        self.message = message
        self.line = line  # 0-based, when the problem has a position
        self.column = column

    def __reduce__(self):
        # Exceptions pickle as ``cls(*args)``; ours take keywords too, so without this a
        # render worker's error cannot cross back to the caller and breaks the pool.
        return (_rebuild, (type(self), self.file, self.message, self.line, self.column))

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line + 1}"
            if self.column is not None:
                where += f":{self.column + 1}"
        return f"{where}: {self.message}"

    def to_json(self) -> dict:
        return {"kind": self.kind, "file": self.file, "message": self.message,
                "line": self.line, "column": self.column}


def _rebuild(cls, file, message, line, column):
    return cls(file, message, line=line, column=column)


def one_line(message: str) -> str:
    """Error texts are one line: a front end prints them after the file name."""
    return " ".join(str(message).split())


class InputError(SvglooError):
    """Unreadable, malformed or non-SVG input."""

    kind = "input"


class LimitError(SvglooError):
    """The document exceeds a safety limit (size, elements, <use> expansion, time, memory)."""

    kind = "limit"


class RenderError(SvglooError):
    """The renderer failed on an otherwise valid document."""

    kind = "render"


class WorkerError(RenderError):
    """A render worker died of something other than a limit (killed from outside, a crash,
    a broken installation): a fault of the machine or the install, not of the document.
    Its ``kind`` stays "render" so that the daemon's clients read it as before."""


class ConfigError(SvglooError):
    """Bad settings: unknown backbone, unusable reference, missing weights."""

    kind = "config"


class Cancelled(Exception):
    """The caller stopped an analysis it no longer needs: raised from its progress callback
    (or a document budget's ``interrupt``), it goes up through the engine to the caller.
    The daemon raises it with the reason (superseded, shutdown), the language server when
    an edit made the work stale. Not an SvglooError: nothing is wrong with the document,
    so no front end reports it as an error."""
