"""How many scoring units a document can have, counted before any path data is parsed:
a file far over the unit limit is refused in a fraction of a second, not after splitting
a million subpaths (preflight.py checks it first)."""

from __future__ import annotations

from svgloo.engine.errors import LimitError
from svgloo.engine.limits import Limits
from svgloo.engine.reading.document import Document
from svgloo.engine.reading.units import unit_elements


def units_at_most(doc: Document, subpaths: bool = True) -> int:
    """How many scoring units ``units.extract_units`` can find, counted without parsing
    any path data: the leaf elements it would take, a compound path counted as its
    movetos (each moveto command starts a subpath; a path whose data does not parse is
    one unit in the end, so this is an upper bound). Splitting a path of a million
    subpaths took 48 s and 695 MB before the unit limit was checked; this takes a
    fraction of a second, so the limit is checked first."""
    count = 0
    for i in unit_elements(doc):
        movetos = 0
        if doc.elements[i].tag == "path" and subpaths:
            d = doc.nodes[i].get("d") or ""
            movetos = d.count("M") + d.count("m")
        count += movetos if movetos >= 2 else 1
    return count


def check_unit_count(doc: Document, limits: Limits, subpaths: bool = True) -> None:
    """Raise the unit limit's LimitError before the units are extracted, when even the
    cheap count says the file is far over it (ten times: the count is an upper bound,
    and a file near the limit is left to the exact count)."""
    bound = units_at_most(doc, subpaths)
    if bound > 10 * limits.max_units:
        hint = " (try --no-subpaths)" if subpaths and units_at_most(doc, False) <= \
            limits.max_units else ""
        raise LimitError(doc.name, f"about {bound} scoring units; the limit is "
                                   f"{limits.max_units}{hint}")


__all__ = ["units_at_most", "check_unit_count"]
