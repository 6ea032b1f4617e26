"""The checks about a file that need no render worker: limits, units, method.

They run before anything is started, so a file that cannot be scored (over a limit, too
many units, an unknown method) is reported at once instead of after the render workers'
start (most of a small file's wall time). Only light modules are imported here: the CLI
calls this before importing the rest of the engine.
"""

from __future__ import annotations

from svgloo.engine.reading.document import Document
from svgloo.engine.errors import ConfigError, LimitError
from svgloo.engine.reading.unit_count import check_unit_count
from svgloo.engine.limits import Limits
from svgloo.engine.reading.safety import check_document
from svgloo.engine.reading.units import UnitSet, extract_units

METHODS = ("fast", "naive")


def check_scorable(doc: Document, limits: Limits, subpaths: bool = True,
                   method: str = "fast") -> tuple[list[str], UnitSet]:
    """(warnings, units) of a document that can be scored; raises LimitError or
    ConfigError naming the file otherwise."""
    warnings = check_document(doc, limits)
    check_unit_count(doc, limits, subpaths)  # before path data is parsed (unit_count.py)
    units = extract_units(doc, subpaths)
    if len(units) > limits.max_units:
        raise LimitError(doc.name, f"{len(units)} scoring units; the limit is "
                                   f"{limits.max_units} (try --no-subpaths)")
    if method not in METHODS:
        raise ConfigError(doc.name, f"unknown method {method!r} (fast or naive)")
    return warnings, units
