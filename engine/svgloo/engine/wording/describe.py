"""How a unit is named wherever a person reads it: the CLI table, footprint tiles, reports,
the editor's diagnostics and quick fixes, the viewer's table. One function, so a unit has
one name everywhere."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def describe_element(row: Mapping[str, Any]) -> str:
    """``rect#stray`` or ``path``: the element of a unit row (tag, id)."""
    return row["tag"] + (f"#{row['id']}" if row.get("id") else "")


def describe_unit(row: Mapping[str, Any]) -> str:
    """``rect#stray``, ``path`` or ``path#outline subpath 2`` for a ``svgloo.score/1`` unit
    row (``result_types.UnitRow``: tag, id, subpath). Subpaths are counted from 1, as
    people count them; the row's ``subpath`` is 0-based."""
    label = describe_element(row)
    if row.get("subpath") is not None:
        label += f" subpath {int(row['subpath']) + 1}"
    return label


def unit_row_names(unit) -> dict[str, Any]:
    """The naming fields of an engine ``units.Unit`` as a unit row has them, for front ends
    that hold units of the current text rather than result rows (quick fixes)."""
    return {"tag": unit.tag, "id": unit.id,
            "subpath": unit.subpath if unit.kind == "subpath" else None}


__all__ = ["describe_element", "describe_unit", "unit_row_names"]
