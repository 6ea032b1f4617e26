"""Safety limits applied to every untrusted document before and while it is rendered,
and the per-document budget (wall clock and rendered bytes) that bounds a whole analysis."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import os
import threading
import time
import warnings
from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int = 8 * 1024 * 1024          # raw file size (also the .svgz compressed size)
    max_inflated_bytes: int = 16 * 1024 * 1024     # size of an .svgz after decompression
    max_elements: int = 20_000                     # element count in the parsed tree
    # How deep elements may nest (the root <svg> is level 1). The XML parser refuses
    # anything deeper than 256 on its own, since its XML_PARSE_HUGE option stays off (that
    # option also lifts its guards on text size), so a larger value changes nothing.
    max_nesting_depth: int = 256
    max_use_expansion: int = 50_000                # elements drawn once <use> references are expanded
    max_units: int = 5_000                         # scoring units (each costs at least one render)
    max_render_size: int = 2048                    # output is clamped to this many pixels per side
    max_data_image_bytes: int = 2 * 1024 * 1024    # an embedded data: PNG/JPEG
    max_reference_pixels: int = 40_000_000         # a reference image's width x height (header)
    render_timeout_s: float = 60.0                 # wall clock for one render job in a worker
    render_cpu_s: int = 120                        # RLIMIT_CPU of a render worker
    render_memory_mb: int = 1536                   # RLIMIT_AS of a render worker
    document_timeout_s: float = 300.0              # wall clock for all renders of one document
    document_render_mb: int = 1024                 # renders returned for one document (MB)


# The two limits a real drawing can hit (a large map, a traced photo), and how a user
# raises them: a flag on the commands that score, or a setting in the environment that
# every front end reads when it starts (the daemon and the language server included).
FILE_FLAG, FILE_SETTING = "--max-file-mib", "SVGLOO_MAX_FILE_MIB"
ELEMENTS_FLAG, ELEMENTS_SETTING = "--max-elements", "SVGLOO_MAX_ELEMENTS"
MIB = 1024 * 1024
FILE_HINT = f"raise it with {FILE_FLAG} N or {FILE_SETTING}=N (MiB)"
ELEMENTS_HINT = f"raise it with {ELEMENTS_FLAG} N or {ELEMENTS_SETTING}=N"


def raised(base: Limits, *, max_file_mib: float | None = None,
           max_elements: int | None = None) -> Limits:
    """``base`` with the file-size and element limits raised (or lowered) to the given
    values; an .svgz may then inflate to twice the file limit (never less than before),
    and the <use> expansion and units grow with the element count, so the raised limit is
    the one that bites."""
    changes: dict = {}
    if max_file_mib is not None:
        file_bytes = round(max_file_mib * MIB)
        changes.update(max_file_bytes=file_bytes,
                       max_inflated_bytes=max(base.max_inflated_bytes, 2 * file_bytes))
    if max_elements is not None:
        scale = max_elements / base.max_elements
        changes.update(max_elements=max_elements,
                       max_use_expansion=max(base.max_use_expansion,
                                             int(base.max_use_expansion * scale)),
                       max_units=max(base.max_units, int(base.max_units * scale)))
    return dataclasses.replace(base, **changes) if changes else base


def _positive(name: str, kind: type) -> float | int | None:
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    try:
        number = kind(value)
        if number > 0:
            return number
    except ValueError:
        pass
    warnings.warn(f"{name}={value!r} is not a positive number; the default limit applies",
                  stacklevel=2)
    return None


def environment_limits(base: Limits = Limits()) -> Limits:
    """The limits with the user's settings (SVGLOO_MAX_FILE_MIB, SVGLOO_MAX_ELEMENTS)."""
    elements = _positive(ELEMENTS_SETTING, int)
    return raised(base, max_file_mib=_positive(FILE_SETTING, float),
                  max_elements=None if elements is None else int(elements))


DEFAULT_LIMITS = environment_limits()


class DocumentBudget:
    """What one document may still spend: a wall-clock deadline and a number of rendered
    bytes brought back from the workers (the engine's memory for that document grows with
    them). ``RenderPool.map`` charges and checks it, so the engine needs no change."""

    def __init__(self, name: str, timeout_s: float, max_bytes: int, interrupt=None):
        self.name = name
        # called while renders are under way; raising from it stops them (the daemon
        # uses it to cancel a job at once, or to make a batch job give way to an editor)
        self.interrupt = interrupt
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        self.deadline = time.monotonic() + timeout_s
        self.spent_bytes = 0
        # the turn of its renders in a shared pool (fair_dispatch.py): 0 an editor's, 1 background
        self.priority = 0
        self._lock = threading.Lock()

    @classmethod
    def from_limits(cls, name: str, limits: Limits, interrupt=None) -> "DocumentBudget":
        return cls(name, limits.document_timeout_s, limits.document_render_mb * 1024 * 1024,
                   interrupt)

    def remaining_s(self) -> float:
        return self.deadline - time.monotonic()

    def check(self) -> None:
        from svgloo.engine.errors import LimitError

        if self.remaining_s() <= 0:
            raise LimitError(self.name, f"the analysis took longer than {self.timeout_s:g} s "
                                        "(document time budget); the document is too "
                                        "expensive")
        if self.spent_bytes > self.max_bytes:
            raise LimitError(self.name, f"the analysis needed more than "
                                        f"{self.max_bytes // (1024 * 1024)} MB of renders "
                                        "(document memory budget); the document is too "
                                        "expensive")

    def charge(self, nbytes: int) -> None:
        with self._lock:
            self.spent_bytes += nbytes
        self.check()


# The budget of the document being analysed: a context variable for the calling thread,
# and by document name for helper threads the engine starts (they do not inherit it).
_current: contextvars.ContextVar[DocumentBudget | None] = contextvars.ContextVar(
    "svgloo_document_budget", default=None)
_by_name: dict[str, DocumentBudget] = {}
_by_name_lock = threading.Lock()


@contextlib.contextmanager
def document_budget(budget: DocumentBudget):
    token = _current.set(budget)
    with _by_name_lock:
        previous = _by_name.get(budget.name)
        _by_name[budget.name] = budget
    try:
        yield budget
    finally:
        _current.reset(token)
        with _by_name_lock:
            if previous is None:
                _by_name.pop(budget.name, None)
            else:
                _by_name[budget.name] = previous


def current_budget(name: str | None = None) -> DocumentBudget | None:
    budget = _current.get()
    if budget is None and name is not None:
        with _by_name_lock:
            budget = _by_name.get(name)
    return budget


def budget_check(name: str | None = None):
    """The check of the document's budget, for a stage in the main process to call as it
    goes (it raises the budget's LimitError once the time is spent); None when no budget
    is set."""
    budget = current_budget(name)
    return None if budget is None else budget.check
