"""How a unit is named wherever a person reads it: the CLI table, footprint tiles, reports."""

from __future__ import annotations


def describe_unit(row: dict) -> str:
    """``rect#stray``, ``path`` or ``path#outline subpath 2`` for a ``svgloo.score/1`` unit
    row (tag, id, subpath). Subpaths are counted from 1, as in the editor's messages."""
    label = row["tag"] + (f"#{row['id']}" if row.get("id") else "")
    if row.get("subpath") is not None:
        label += f" subpath {int(row['subpath']) + 1}"
    return label


__all__ = ["describe_unit"]
