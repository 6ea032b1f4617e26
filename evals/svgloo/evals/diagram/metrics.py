"""Scores of one generated diagram against its ground truth: nine per-shape metrics, seven
per-arrow metrics, their composites with the extra-detection penalty, and
``overall = 0.5·shapes + 0.5·arrows``.

Each function reproduces RAIVNLab/VFig@4874af7 ``rule-based-eval/lib/eval_shapes.py`` or
``eval_arrows.py`` (cited by line); the deliberate quirks that change numbers are listed in
docs/eval-diagram.md.
"""

from __future__ import annotations

import math

from .colors import color_score
from .generated import (GenArrow, GenShape, drop_strokes_of_shapes, generated_arrows,
                        generated_shapes, normalise_label)
from .geometry import centre, distance_to_box
from .ground_truth import (GtArrow, GtHead, GtShape, fallback_colours, ground_truth_arrows,
                           ground_truth_heads, ground_truth_shapes, require_shape)

SHAPE_METRICS = ("label", "type", "fill_color", "fill_style", "stroke_color",
                 "border_style", "position", "font", "aspect_ratio")
ARROW_METRICS = ("source", "dest", "head", "head_size", "curve", "color", "overlap")
MATCH_THRESHOLD = 0.5
ARROW_END_REACH = 100        # an arrow end joins a generated shape within this distance
FONT_CLASSES = (("serif", ("times", "georgia", "palatino", "garamond")),
                ("sans", ("arial", "helvetica", "verdana", "tahoma", "trebuchet")),
                ("mono", ("courier", "consolas", "monaco")))
# The type table (eval_shapes.py:439-448): the generated tags each ground-truth type
# accepts. A circle passes for an ellipse, not the reverse; a <g> passes for any 3D type.
ACCEPTABLE_TAGS = {
    "circle": {"circle"}, "ellipse": {"ellipse", "circle"},
    "rectangle": {"rect"}, "square": {"rect"},
    "polygon": {"polygon", "path"},
    "cloud": {"path"},
    "3d-cylinder": {"g", "ellipse", "path"},
    "3d-prism": {"g", "rect", "path", "polygon"},
    "3d-cube": {"g", "rect", "polygon"},
    "3d-diamond": {"g", "polygon"}, "3d-hexagon": {"g", "polygon"},
    "3d-trapezoid": {"g", "polygon"},
}
ZERO_SHAPES = {**{m: 0.0 for m in SHAPE_METRICS}, "extra_penalty": 0.0, "composite": 0.0}
ZERO_ARROWS = {**{m: 0.0 for m in ARROW_METRICS}, "extra_penalty": 0.0, "composite": 0.0}


# ---------------------------------------------------------------- small scores

def label_match(gt: str, gen: str) -> float:
    """How well a generated label names a ground-truth shape, for matching
    (eval_shapes.py:873-888): equal 1; one word set inside the other: |small|/|large|; else
    one string inside or a prefix of the other: the length ratio; else 0."""
    a, b = normalise_label(gt), normalise_label(gen)
    if a == b:
        return 1.0
    wa, wb = set(a.split()), set(b.split())
    if wb and wb <= wa:
        return len(wb) / len(wa)
    if wa and wa <= wb:
        return len(wa) / len(wb)
    if b in a or a in b or b.startswith(a) or a.startswith(b):
        return min(len(a), len(b)) / max(len(a), len(b))
    return 0.0


def label_score(gt: str, gen: str) -> float:
    """The label metric (eval_shapes.py:1136-1143): equal 1; one inside the other:
    shorter/longer length; else shared words over the larger word count."""
    a, b = normalise_label(gt), normalise_label(gen)
    if a == b:
        return 1.0
    if b in a or a in b:
        return min(len(a), len(b)) / max(len(a), len(b))
    wa, wb = set(a.split()), set(b.split())
    shared = wa & wb
    return len(shared) / max(len(wa), len(wb)) if shared else 0.0


def type_score(gt_type: str, gen_tag: str, gen_children=()) -> float:
    """eval_shapes.py:450-465: an accepted tag 1 (a <g> for a cylinder without an ellipse
    child 0.4); a <g> holding an accepted tag for a flat type 1; any other tag for a 3D type
    0.4; a rect for a polygon or a polygon/path for a rectangle or square 0.3; else 0."""
    children = set(gen_children or ())
    accepted = ACCEPTABLE_TAGS.get(gt_type, set())
    if gen_tag in accepted:
        if gt_type == "3d-cylinder" and gen_tag == "g" and "ellipse" not in children:
            return 0.4
        return 1.0
    if gen_tag == "g" and not gt_type.startswith("3d-") and children & accepted:
        return 1.0
    if gt_type.startswith("3d-"):
        return 0.4
    if gt_type == "polygon" and gen_tag == "rect":
        return 0.3
    if gt_type in ("rectangle", "square") and gen_tag in ("polygon", "path"):
        return 0.3
    return 0.0


def fill_style_score(gt: str, gen: str) -> float:
    if gt == gen:
        return 1.0
    return 0.5 if gt != "solid" and gen != "solid" else 0.0


def border_style_score(gt: str, gen: str) -> float:
    if gt == gen:
        return 1.0
    return 0.0 if "solid" in (gt, gen) else 0.5


def font_score(gt: str | None, gen: str | None) -> float:
    """0.5 when the ground truth names no font; else the first family, lower-cased with
    whitespace runs collapsed (quotes and spaces around the comma kept): equal 1; both in
    the same serif/sans/mono class (the first class each hits) 0.5; else 0
    (eval_shapes.py:18, 1155)."""
    if not gt:
        return 0.5
    a, b = normalise_label(gt).split(",")[0], normalise_label(gen).split(",")[0]
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0

    def family(f):
        return next((name for name, keys in FONT_CLASSES if any(k in f for k in keys)), None)
    return 0.5 if family(a) and family(a) == family(b) else 0.0


def aspect_ratio_score(gt_box, gen_box) -> float:
    """eval_shapes.py:1013: ratio of the aspect ratios r ≥ 1: 1 up to 1.2, 0 from 3."""
    gw, gh = gt_box[2] - gt_box[0], gt_box[3] - gt_box[1]
    pw, ph = gen_box[2] - gen_box[0], gen_box[3] - gen_box[1]
    if gh < 1 or ph < 1 or gw < 1 or pw < 1:
        return 0.0
    ga, pa = gw / gh, pw / ph
    r = ga / pa if ga > pa else pa / ga
    if r <= 1.2:
        return 1.0
    if r >= 3.0:
        return 0.0
    return max(0.0, 1.0 - (r - 1.2) / 1.8)


def relative_position_score(gt_anchor, gt_point, gen_anchor, gen_point) -> float:
    """eval_shapes.py:917-959: half direction agreement (1 − angle/π), half unit-vector
    agreement (1 − distance/2) of point − anchor in both layouts."""
    gdx, gdy = gt_point[0] - gt_anchor[0], gt_point[1] - gt_anchor[1]
    pdx, pdy = gen_point[0] - gen_anchor[0], gen_point[1] - gen_anchor[1]
    gd, pd = math.sqrt(gdx ** 2 + gdy ** 2), math.sqrt(pdx ** 2 + pdy ** 2)
    if gd < 1:
        return 1.0
    turn = abs(math.atan2(gdy, gdx) - math.atan2(pdy, pdx))
    if turn > math.pi:
        turn = 2 * math.pi - turn
    direction = max(0.0, 1.0 - turn / math.pi)
    if pd < 1:
        ratio = 0.0
    else:
        diff = math.sqrt((gdx / gd - pdx / pd) ** 2 + (gdy / gd - pdy / pd) ** 2)
        ratio = max(0.0, 1.0 - diff / 2.0)
    return 0.5 * direction + 0.5 * ratio


def head_size_score(has_head: bool, marker: dict | None, gen_sw: float,
                    gt_width: float, gt_sw: float) -> float:
    """eval_arrows.py:452: both sizes in stroke widths (a userSpaceOnUse head divided by
    the shaft's width, the ground truth's y-extent by its shaft's; 5 when that is 0);
    ratio ≤ 1.3 → 1, ≤ 1.8 → 0.6, ≤ 2.5 → 0.3, else 0.1; no head or unknown marker 0."""
    if not has_head or not marker:
        return 0.0
    sw = gen_sw if gen_sw > 0 else 1.0
    model = marker["vw"] if marker["units"] == "strokeWidth" else marker["vw"] / sw
    gt = gt_width / gt_sw if gt_sw > 0 else gt_width
    if gt == 0:
        gt = 5.0
    if model == 0:
        return 0.0
    r = model / gt if model >= gt else gt / model
    return 1.0 if r <= 1.3 else 0.6 if r <= 1.8 else 0.3 if r <= 2.5 else 0.1


def overlap_score(n_wrong_ends: int) -> float:
    """1 with no arrow end inside a shape it should not touch, 0.4 with one, else 0."""
    return 1.0 if n_wrong_ends == 0 else 0.4 if n_wrong_ends == 1 else 0.0


def penalised(raw: float, n_gt: int, n_extra: int) -> tuple[float, float]:
    penalty = n_extra / (n_gt + n_extra) if n_gt + n_extra > 0 else 0.0
    return penalty, raw * (1.0 - penalty)


def _averages(rows: list[dict], metrics) -> dict:
    return {m: (sum(r[m] for r in rows) / len(rows) if rows else 0.0) for m in metrics}


def _weighted(avg: dict, metrics) -> float:
    weight = 1.0 / len(metrics)
    return sum(avg[m] * weight for m in metrics)


# ---------------------------------------------------------------- shapes

def match_shapes(gt: dict[str, GtShape], gen: list[GenShape]) -> dict[str, GenShape | None]:
    """eval_shapes.py:866: each ground-truth shape in order takes the unused generated shape
    with the best ``label_match`` (an exact one at once, else the first best), if ≥ 0.5."""
    out: dict[str, GenShape | None] = {}
    used: set[int] = set()
    for key, s in gt.items():
        best, best_score = None, 0.0
        for i, g in enumerate(gen):
            if i in used:
                continue
            if normalise_label(g.label) == normalise_label(s.label):
                best, best_score = i, 1.0
                break
            score = label_match(s.label, g.label)
            if score > best_score:
                best, best_score = i, score
        if best is not None and best_score >= MATCH_THRESHOLD:
            out[key] = gen[best]
            used.add(best)
        else:
            out[key] = None
    return out


def _position(key, anchor, gt, matches) -> float:
    if matches.get(key) is None:
        return 0.0
    if key == anchor:
        return 1.0
    if matches[anchor] is None:
        return 0.0
    return relative_position_score(centre(gt[anchor].bounds), centre(gt[key].bounds),
                                   matches[anchor].centre, matches[key].centre)


def best_anchor(gt: dict, matches: dict) -> str | None:
    """eval_shapes.py:899: the matched shape whose use as anchor gives the highest mean
    position score (the first on ties)."""
    candidates = [k for k in gt if matches.get(k) is not None]
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    best, best_mean = None, -1.0
    for anchor in candidates:
        mean = sum(_position(k, anchor, gt, matches) for k in candidates) / len(candidates)
        if mean > best_mean:
            best, best_mean = anchor, mean
    return best


def score_shapes(gt: dict[str, GtShape], gen: list[GenShape], colours: dict) -> tuple[dict, dict]:
    """(summary, per-shape rows) (eval_shapes.py:1178-1310): an unmatched ground-truth shape
    scores 0 on every metric; composite = mean · (1 − extra/(n_gt + extra)), extra = the
    generated shapes whose label no matched shape carries."""
    matches = match_shapes(gt, gen)
    anchor = best_anchor(gt, matches)
    rows: dict[str, dict[str, object]] = {}
    for key in sorted(gt):          # the original's order (text order: shape_10 < shape_2)
        s, g = gt[key], matches[key]
        if g is None:
            rows[key] = {m: 0.0 for m in SHAPE_METRICS} | {"matched": None}
            continue
        fallback = colours.get(key, {})
        fill = s.fill or fallback.get("fill", "")
        stroke = s.stroke or fallback.get("stroke", "")
        rows[key] = {
            "label": label_score(s.label, g.label),
            "type": type_score(s.type, g.tag, g.child_tags),
            "fill_color": color_score(fill, g.fill) if fill else 0.5,
            "fill_style": fill_style_score(s.fill_style, g.fill_style),
            "stroke_color": color_score(stroke, g.stroke) if stroke else 0.5,
            "border_style": border_style_score(s.border_style, g.border_style),
            "position": _position(key, anchor, gt, matches) if anchor else 0.0,
            "font": font_score(s.font, g.font),
            "aspect_ratio": aspect_ratio_score(s.bounds, g.bounds),
            "matched": normalise_label(g.label),
        }
    summary = _averages(list(rows.values()), SHAPE_METRICS)
    raw = _weighted(summary, SHAPE_METRICS)
    matched_labels = {normalise_label(g.label) for g in matches.values() if g is not None}
    n_extra = sum(1 for g in gen if normalise_label(g.label) not in matched_labels)
    summary["extra_penalty"], summary["composite"] = penalised(raw, len(gt), n_extra)
    summary.update(raw=raw, n_gt=len(gt), n_gen=len(gen),
                   n_matched=sum(1 for g in matches.values() if g is not None), n_extra=n_extra)
    return summary, rows


# ---------------------------------------------------------------- arrows

def _shape_at(x: float, y: float, boxes: dict) -> str | None:
    """The generated shape label whose box (10 px margin) is nearest, within 100 px, the
    first on ties (eval_arrows.py:428)."""
    best_d: float
    best, best_d = None, ARROW_END_REACH
    for label, b in boxes.items():
        d = distance_to_box(x, y, b, 10)
        if d < best_d:
            best, best_d = label, d
    return best


def _strictly_inside(x: float, y: float, b) -> bool:
    return b[0] + 5 < x < b[2] - 5 and b[1] + 5 < y < b[3] - 5


def score_arrows(gt_arrows: list[GtArrow], heads: list[GtHead], gen_arrows: list[GenArrow],
                 gt_shapes: dict[str, GtShape], gen: list[GenShape]) -> tuple[dict, dict]:
    """eval_arrows.py:655-819. Each ground-truth arrow, in order, takes the unused generated
    arrow whose ends land on the most of its two shapes, forwards or reversed; an end
    counts only when the generated shape nearest to it carries *exactly* the ground-truth
    shape's normalised label (an abbreviated label gives 0). One that lands on neither is
    unmatched: 0 on every metric, and the stroke stays an extra."""
    if not gt_arrows:
        return {m: 1.0 for m in ARROW_METRICS} | {"composite": 1.0, "n_gt": 0,
                                                   "n_gen": len(gen_arrows)}, {}
    boxes = {}                       # by normalised label: a later same label moves the box
    for s in gen:
        boxes[normalise_label(s.label)] = s.bounds
    mean_width = sum(h.width for h in heads) / len(heads) if heads else 10
    used: set[int] = set()
    rows: dict[str, dict] = {}
    head_index = 0
    for a in gt_arrows:
        want_from = normalise_label(require_shape(gt_shapes, a.source, a.key).label)
        want_to = normalise_label(require_shape(gt_shapes, a.dest, a.key).label)
        best, best_score, best_ends, best_reversed = None, -1, None, False
        for i, ga in enumerate(gen_arrows):
            if i in used:
                continue
            at_start = _shape_at(ga.start[0], ga.start[1], boxes)
            at_end = _shape_at(ga.end[0], ga.end[1], boxes)
            fwd = (at_start == want_from) + (at_end == want_to)
            rev = (at_end == want_from) + (at_start == want_to)
            score, ends, reversed_ = (fwd, (at_start, at_end), False) if fwd >= rev else \
                (rev, (at_end, at_start), True)
            if score > best_score:
                best, best_score, best_ends, best_reversed = i, score, ends, reversed_
        if best is None or best_score == 0:
            rows[a.key] = {m: 0.0 for m in ARROW_METRICS} | {"matched": None}
            head_index += 1
            continue
        used.add(best)
        assert best_ends is not None  # found with best
        g = gen_arrows[best]
        # Deliberate quirk: the head index advances twice per matched arrow (once per
        # unmatched one), so later arrows read another arrow's head, or the mean width.
        head = heads[head_index] if head_index < len(heads) else GtHead(mean_width, 2.0, True)
        head_index += 2
        wrong_ends = sum(1 for label, b in boxes.items()
                         for point, allowed in ((g.start, want_from), (g.end, want_to))
                         if _strictly_inside(point[0], point[1], b) and label != allowed)
        rows[a.key] = {
            "source": float(best_ends[0] == want_from),
            "dest": float(best_ends[1] == want_to),
            "head": 1.0 if not head.visible else float(g.has_head),
            "head_size": 1.0 if not head.visible else head_size_score(
                g.has_head, g.marker, g.stroke_width, head.width, head.stroke_width),
            "curve": float(a.curved == g.curved),
            "color": color_score(a.color, g.color),
            "overlap": overlap_score(wrong_ends),
            "matched": f"gen_arrow_{best}", "reversed": best_reversed,
        }
    summary = _averages(list(rows.values()), ARROW_METRICS)
    raw = _weighted(summary, ARROW_METRICS)
    n_extra = len(gen_arrows) - len(used)
    summary["extra_penalty"], summary["composite"] = penalised(raw, len(gt_arrows), n_extra)
    summary.update(raw=raw, n_gt=len(gt_arrows), n_gen=len(gen_arrows), n_matched=len(used),
                   n_extra=n_extra)
    return summary, rows


# ---------------------------------------------------------------- one pair

def evaluate_pair(gen_root, gt_root) -> dict:
    """Everything for one generated/ground-truth pair (lxml roots)."""
    gt_shapes = ground_truth_shapes(gt_root)
    gt_arrows = ground_truth_arrows(gt_root, gt_shapes)
    gen = generated_shapes(gen_root)
    shapes, shape_rows = score_shapes(gt_shapes, gen, fallback_colours(gt_root))
    if gt_arrows:
        heads = ground_truth_heads(gt_root, gt_shapes)
        gen_arrows = drop_strokes_of_shapes(generated_arrows(gen_root), [s.bounds for s in gen])
    else:
        heads, gen_arrows = [], []
    arrows, arrow_rows = score_arrows(gt_arrows, heads, gen_arrows, gt_shapes, gen)
    return {"overall": 0.5 * shapes["composite"] + 0.5 * arrows["composite"],
            "shapes": shapes, "arrows": arrows,
            "per_shape": shape_rows, "per_arrow": arrow_rows}
