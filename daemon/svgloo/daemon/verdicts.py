"""What changed between two scorings of one file: the units whose verdict changed, the
harmful units that appeared or went away (``svgloo watch`` names them after each save).

Units are matched between the two results by their identity in document order (tag, id,
whole element or subpath number), aligned with difflib so that a unit added or removed
elsewhere does not shift the others' pairing. Plain functions on ``svgloo.score/1`` dicts.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class VerdictChange:
    """One unit whose verdict is not what it was at the last save."""

    label: str            # rect#stray, path#p subpath 2
    line: int             # 1-based, where the unit starts now (or started, when removed)
    column: int           # 1-based
    before: str | None    # the verdict at the last save; None: the unit is new
    after: str | None     # the verdict now; None: the unit is gone
    delta: float | None   # the delta now (at the last save, for a unit that is gone)

    def to_json(self) -> dict:
        return {"unit": self.label, "line": self.line, "column": self.column,
                "before": self.before, "after": self.after, "delta": self.delta}

    def describe(self) -> str:
        """``rect#stray (12:5) neutral -> harmful, delta -0.0310``."""
        where = f"{self.label} ({self.line}:{self.column})"
        if self.before is None:
            return f"{where} new, {self.after}, delta {self.delta:+.4f}"
        if self.after is None:
            return f"{where} removed (was {self.before}, delta {self.delta:+.4f})"
        return f"{where} {self.before} -> {self.after}, delta {self.delta:+.4f}"


def unit_label(row: dict) -> str:
    """``rect#stray``, ``circle``, ``path#p subpath 2`` (subpaths counted from 1)."""
    label = row["tag"] + (f"#{row['id']}" if row.get("id") else "")
    if row.get("kind") == "subpath" and row.get("subpath") is not None:
        label += f" subpath {int(row['subpath']) + 1}"
    return label


def _key(row: dict) -> tuple:
    return row["tag"], row.get("id"), row.get("kind"), row.get("subpath")


def _change(row: dict, before: str | None, after: str | None) -> VerdictChange:
    start = row["range"]["start"]
    return VerdictChange(unit_label(row), int(start["line"]) + 1, int(start["character"]) + 1,
                         before, after, float(row["delta"]))


def verdict_changes(before: dict | None, after: dict) -> list[VerdictChange]:
    """The changes from the result ``before`` (None: nothing to compare with, so no
    changes) to ``after``, in document order: matched units whose verdict changed, new
    units that are harmful, and harmful units that are gone."""
    if before is None:
        return []
    old, new = before.get("units", []), after.get("units", [])
    matcher = difflib.SequenceMatcher(a=[_key(r) for r in old], b=[_key(r) for r in new],
                                      autojunk=False)
    out: list[tuple[float, VerdictChange]] = []  # by offset (inf: at the end)
    for tag, i0, i1, j0, j1 in matcher.get_opcodes():
        if tag == "equal":
            for a, b in zip(old[i0:i1], new[j0:j1]):
                if a["verdict"] != b["verdict"]:
                    out.append((b["offsets"][0], _change(b, a["verdict"], b["verdict"])))
            continue
        out += [(b["offsets"][0], _change(b, None, b["verdict"])) for b in new[j0:j1]
                if b["verdict"] == "harmful"]
        # a harmful unit that went away sorts where its neighbours now are
        at = new[j0]["offsets"][0] if j0 < len(new) else float("inf")
        out += [(at, _change(a, a["verdict"], None)) for a in old[i0:i1]
                if a["verdict"] == "harmful"]
    return [c for _, c in sorted(out, key=lambda t: t[0])]


__all__ = ["VerdictChange", "unit_label", "verdict_changes"]
