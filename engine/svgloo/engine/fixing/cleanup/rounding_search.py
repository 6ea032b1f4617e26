"""Which roundings to keep, found by where the proof saw pixels move.

A logo has hundreds of paths; trying each rounding alone costs a proof per path, and
halving a refused group (rewrite.keep_proven) spends a dozen proofs on a handful of paths.
Rounding a path's data can move pixels only inside that path's device box (its points,
grown by the widest stroke and the anti-aliasing: path_boxes.device_boxes), so the
pixels a failed proof names (``Change.at``, spread over all it saw move) point at the
roundings that may have moved them. Those fall back to their finer rounding (the one that
keeps each point in its device bin), then to none; the rest are proven again, until the
proof passes or the rounds run out. Only the proof (and the judge, when there is one)
decides what stays: this chooses what to try next.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from svgloo.engine.fixing.cleanup.edits import Edit

if TYPE_CHECKING:
    from svgloo.engine.fixing.cleanup.rewrite import Stage

Box = tuple[float, float, float, float]


def _inside(box: Box, y: int, x: int) -> bool:
    cx, cy = x + 0.5, y + 0.5       # the pixel's centre
    return box[0] <= cx <= box[2] and box[1] <= cy <= box[3]


def keep_rounded(stage: "Stage", candidates: list[Edit], boxes: dict[int, list[Box]],
                 rounds: int) -> tuple[list[Edit], list[Edit], list[Edit]]:
    """(edits kept, refused, left untried) of ``candidates`` (one per path node, each with
    its finer rounding as ``fallback``), with at most ``rounds`` proofs. ``boxes``: per
    node, its device box at each of ``stage.sizes``. When a moved pixel lies in no
    candidate's box (something the boxes do not model moved), the search stops and what is
    left is untried: never forced."""
    chosen = {e.node: e for e in candidates if e.node in boxes}
    refused: list[Edit] = []
    spent = 0
    while chosen and spent < rounds:
        text = stage.text(list(chosen.values()))
        before = stage.checks
        changes = stage.proof_changes(text)
        spent += max(1, stage.checks - before)
        if not changes:
            if stage.keeps_picture(text):
                return list(chosen.values()), refused, []
            return [], refused, list(chosen.values())   # the judge refused: caller decides
        blamed: set[int] = set()
        for change in changes:
            at = stage.sizes.index(change.size)
            for y, x in change.at:
                hit = [n for n in chosen if _inside(boxes[n][at], y, x)]
                if not hit:
                    return [], refused, list(chosen.values())
                blamed.update(hit)
        for node in blamed:
            edit = chosen.pop(node)
            refused.append(edit)
            if edit.fallback is not None:
                chosen[node] = edit.fallback
    return [], refused, list(chosen.values())


__all__ = ["keep_rounded"]
