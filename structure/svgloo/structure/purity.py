"""When a unit's low purity is worth a reviewer's attention: the concepts it really mixes.

Purity (eq. 5) is the share of a unit's attribution that goes to its main concept. Read
raw it flags noise: a one-colour icon drawn as one path, segmented into five black
regions, has purity 0.2 and "mixes" five concepts that are one paint in five places; a
unit whose edge bleeds into a neighbouring region gets a "(0%)" concept. The rule here:

1. A concept takes part in a unit's mix only with at least ``MIN_SHARE`` (10%) of the
   unit's positive attribution. Smaller shares are anti-aliased edges and soft heatmap
   borders, not something the element draws; they are neither counted nor listed.
2. Colour-region concepts (source ``regions``) differ only by their colour and place:
   two regions of one paint are the same concept drawn in two places. Such concepts count
   as one when their colours are within ``SAME_PAINT`` of each other (the regions
   quantiser's own tolerance for one fill). Named concepts (author, labels, vlm) always
   count separately.
3. A unit's purity is meaningfully low when what is left names at least two distinct
   concepts (and its purity is below the caller's threshold, e.g. the editor's 0.6).

Every function takes the plain ``svgloo.structure/1`` data, so the language server and
any other front end apply the same rule.
"""

from __future__ import annotations

MIN_SHARE = 0.10
SAME_PAINT = 40.0   # RGB distance: the regions source's tolerance for one flat fill


def concept_shares(weights: list) -> list[tuple[int, float]]:
    """(concept index, share of the unit's positive attribution) for the concepts holding at
    least ``MIN_SHARE`` of it, largest first."""
    positive = [max(0.0, float(w)) for w in weights]
    total = sum(positive)
    if total <= 0:
        return []
    shares = [(k, w / total) for k, w in enumerate(positive) if w / total >= MIN_SHARE]
    return sorted(shares, key=lambda t: -t[1])


def _hex_rgb(color) -> tuple[int, int, int] | None:
    if not isinstance(color, str) or len(color) != 7 or not color.startswith("#"):
        return None
    try:
        return tuple(int(color[i:i + 2], 16) for i in (1, 3, 5))   # type: ignore[return-value]
    except ValueError:
        return None


def same_paint(a: dict, b: dict) -> bool:
    """Two concepts are one paint: both colour regions, colours within ``SAME_PAINT``."""
    if a.get("source") != "regions" or b.get("source") != "regions":
        return False
    ca, cb = _hex_rgb(a.get("color")), _hex_rgb(b.get("color"))
    if ca is None or cb is None:
        return False
    return sum((x - y) ** 2 for x, y in zip(ca, cb)) ** 0.5 <= SAME_PAINT


def distinct_concepts(indices: list[int], concepts: list[dict]) -> int:
    """How many different concepts ``indices`` name once same-paint regions count as one."""
    kept: list[dict] = []
    for k in indices:
        c = concepts[k] if 0 <= k < len(concepts) else {}
        if not any(same_paint(c, other) for other in kept):
            kept.append(c)
    return len(kept)


def mixed_concepts(weights: list, concepts: list[dict]) -> list[tuple[str, float]]:
    """The (name, share) pairs a unit mixes, largest first, or [] when it draws one thing
    (one concept, or several regions of one paint) once negligible shares are dropped."""
    shares = concept_shares(weights)
    if distinct_concepts([k for k, _ in shares], concepts) < 2:
        return []
    return [(concepts[k].get("name", f"concept {k}") if k < len(concepts) else f"concept {k}",
             share) for k, share in shares]


__all__ = ["MIN_SHARE", "SAME_PAINT", "concept_shares", "distinct_concepts",
           "mixed_concepts", "same_paint"]
