"""Scores of one generated diagram against its ground truth (spec §4.3): nine per-shape
metrics, seven per-arrow metrics, their composites with the extra-detection penalty, and
``overall = 0.5·shapes + 0.5·arrows``.

Deliberate quirks kept from the original because they change numbers (each is named in
docs/eval-diagram.md): paint servers compare at 0.5/0.3 whatever they are; no ground-truth
arrows gives arrows 1.0 with no ``extra_penalty``; the ground-truth head index advances
twice per matched arrow; the marker's y-extent stands for its width; an unparsable colour
scores 0.
"""

from __future__ import annotations

import math

from . import geometry as geo
from .colors import color_score
from .extract import (Arrow, Shape, filter_arrows_inside_shapes, generated_arrows,
                      generated_shapes, ground_truth_arrows, ground_truth_heads,
                      ground_truth_shapes, normalise_label)

SHAPE_METRICS = ("label", "type", "fill_color", "fill_style", "stroke_color",
                 "border_style", "position", "font", "aspect_ratio")
ARROW_METRICS = ("source", "dest", "head", "head_size", "curve", "color", "overlap")
MATCH_THRESHOLD = 0.5
FONT_CLASSES = {"serif": ("times", "georgia", "palatino", "garamond"),
                "sans": ("arial", "helvetica", "verdana", "tahoma", "trebuchet"),
                "mono": ("courier", "consolas", "monaco")}
ACCEPTABLE_TAGS = {
    "rectangle": {"rect"},
    "circle": {"circle"}, "ellipse": {"ellipse"}, "polygon": {"polygon", "path"},
    "path": {"path"},
    "3d-cylinder": {"g", "path"}, "3d-cube": {"g", "rect", "polygon"},
}
ZERO_SHAPES = {**{m: 0.0 for m in SHAPE_METRICS}, "extra_penalty": 0.0, "composite": 0.0}
ZERO_ARROWS = {**{m: 0.0 for m in ARROW_METRICS}, "extra_penalty": 0.0, "composite": 0.0}


# ---------------------------------------------------------------- small scores

def label_match(gt: str, gen: str) -> float:
    """How well a generated label names a ground-truth shape: exact 1; word subset
    |small|/|large|; substring or prefix: the length ratio; else 0."""
    a, b = normalise_label(gt), normalise_label(gen)
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    wa, wb = set(a.split()), set(b.split())
    if wa <= wb or wb <= wa:
        return min(len(wa), len(wb)) / max(len(wa), len(wb))
    if a in b or b in a or a.startswith(b) or b.startswith(a):
        return min(len(a), len(b)) / max(len(a), len(b))
    return 0.0


def label_score(gt: str, gen: str) -> float:
    """Equal 1; one inside the other: shorter/longer length; else shared words over the
    larger word count (the code's order: substring before words)."""
    a, b = normalise_label(gt), normalise_label(gen)
    if a == b:
        return 1.0
    if a and b and (a in b or b in a):
        return min(len(a), len(b)) / max(len(a), len(b))
    wa, wb = set(a.split()), set(b.split())
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / max(len(wa), len(wb))


def type_score(gt_type: str, gen_tag: str, gen_children: tuple = ()) -> float:
    accepted = ACCEPTABLE_TAGS.get(gt_type, {gt_type})
    three_d = gt_type.startswith("3d-")
    if gen_tag in accepted:
        if gt_type == "3d-cylinder" and gen_tag == "g" and "ellipse" not in gen_children:
            return 0.4
        return 1.0
    if gen_tag == "g" and not three_d and any(c in accepted for c in gen_children):
        return 1.0
    if three_d:
        return 0.4
    if gt_type == "polygon" and gen_tag == "rect":
        return 0.3
    if gt_type == "rectangle" and gen_tag in ("polygon", "path"):
        return 0.3
    return 0.0


def fill_style_score(gt: str, gen: str) -> float:
    gt, gen = gt or "solid", gen or "solid"
    if gt == gen:
        return 1.0
    return 0.5 if gt != "solid" and gen != "solid" else 0.0


def border_style_score(gt: str, gen: str) -> float:
    if gt == gen:
        return 1.0
    return 0.0 if "solid" in (gt, gen) else 0.5


def _first_family(font: str | None) -> str:
    return (font or "").split(",")[0].strip().strip("'\"").lower()


def font_score(gt: str | None, gen: str | None) -> float:
    a, b = _first_family(gt), _first_family(gen)
    if not a:
        return 0.5
    if a == b:
        return 1.0
    for names in FONT_CLASSES.values():
        if any(n in a for n in names) and any(n in b for n in names):
            return 0.5
    return 0.0


def aspect_ratio_score(gt_box, gen_box) -> float:
    gw, gh, pw, ph = geo.width(gt_box), geo.height(gt_box), geo.width(gen_box), geo.height(gen_box)
    if min(gw, gh, pw, ph) < 1:
        return 0.0
    r = max((gw / gh) / (pw / ph), (pw / ph) / (gw / gh))
    if r <= 1.2:
        return 1.0
    if r >= 3.0:
        return 0.0
    return 1.0 - (r - 1.2) / 1.8


def relative_position_score(gt_anchor, gt_shape, gen_anchor, gen_shape) -> float:
    """Direction and unit-vector agreement of shape − anchor in both layouts."""
    vg = (gt_shape[0] - gt_anchor[0], gt_shape[1] - gt_anchor[1])
    vp = (gen_shape[0] - gen_anchor[0], gen_shape[1] - gen_anchor[1])
    dg, dp = math.hypot(*vg), math.hypot(*vp)
    if dg < 1:
        return 1.0
    dtheta = abs(math.atan2(vg[1], vg[0]) - math.atan2(vp[1], vp[0]))
    dtheta = min(dtheta, 2 * math.pi - dtheta)
    direction = max(0.0, 1.0 - dtheta / math.pi)
    if dp < 1:
        ratio = 0.0
    else:
        ug, up = (vg[0] / dg, vg[1] / dg), (vp[0] / dp, vp[1] / dp)
        ratio = max(0.0, 1.0 - math.dist(ug, up) / 2.0)
    return 0.5 * direction + 0.5 * ratio


def head_size_score(has_head: bool, marker: dict | None, gen_sw: float,
                    gt_width: float, gt_sw: float) -> float:
    if not has_head or marker is None:
        return 0.0
    model = marker["vw"] if marker["units"] == "strokeWidth" else marker["vw"] / (gen_sw or 1.0)
    gt = gt_width / gt_sw if gt_width and gt_sw else 5.0
    if model <= 0 or gt <= 0:
        return 0.1
    r = max(model, gt) / min(model, gt)
    return 1.0 if r <= 1.3 else 0.6 if r <= 1.8 else 0.3 if r <= 2.5 else 0.1


def overlap_score(n_inside: int) -> float:
    return 1.0 if n_inside == 0 else 0.4 if n_inside == 1 else 0.0


def penalised(raw: float, n_gt: int, n_extra: int) -> tuple[float, float]:
    penalty = n_extra / (n_gt + n_extra) if n_gt + n_extra else 0.0
    return penalty, raw * (1.0 - penalty)


# ---------------------------------------------------------------- shapes

def match_shapes(gt: dict[str, Shape], gen: dict[str, Shape]) -> dict[str, str]:
    """GT key -> gen key: each GT shape in order takes the best unused generated shape by
    label (first on ties), if it matches at ≥ 0.5."""
    used: set[str] = set()
    out = {}
    for key, s in gt.items():
        best, best_score = None, 0.0
        for gkey, g in gen.items():
            if gkey in used:
                continue
            score = label_match(s.label, g.label)
            if score > best_score:
                best, best_score = gkey, score
        if best is not None and best_score >= MATCH_THRESHOLD:
            used.add(best)
            out[key] = best
    return out


def position_scores(gt: dict, gen: dict, matches: dict) -> dict[str, float]:
    keys = [k for k in gt if k in matches]
    if not keys:
        return {k: 0.0 for k in gt}
    gc = {k: geo.centre(gt[k].box) for k in keys}
    pc = {k: geo.centre(gen[matches[k]].box) for k in keys}

    def scores_for(anchor):
        return {k: 1.0 if k == anchor else relative_position_score(gc[anchor], gc[k],
                                                                    pc[anchor], pc[k])
                for k in keys}

    best_anchor, best_mean = keys[0], -1.0
    for a in keys:
        s = scores_for(a)
        others = [v for k, v in s.items() if k != a]
        mean = sum(others) / len(others) if others else 1.0
        if mean > best_mean:
            best_anchor, best_mean = a, mean
    chosen = scores_for(best_anchor)
    return {k: chosen.get(k, 0.0) for k in gt}


def score_shapes(gt: dict[str, Shape], gen: dict[str, Shape]) -> tuple[dict, dict]:
    """(summary, per-shape rows)."""
    matches = match_shapes(gt, gen)
    positions = position_scores(gt, gen, matches)
    rows = {}
    for key, s in gt.items():
        if key not in matches:
            rows[key] = {m: 0.0 for m in SHAPE_METRICS} | {"matched": None}
            continue
        g = gen[matches[key]]
        rows[key] = {
            "label": label_score(s.label, g.label),
            "type": type_score(s.type, g.type, g.child_tags),
            "fill_color": color_score(s.fill, g.fill) if s.fill else 0.5,
            "fill_style": fill_style_score(s.fill_style, g.fill_style),
            "stroke_color": color_score(s.stroke, g.stroke) if s.stroke else 0.5,
            "border_style": border_style_score(s.border_style, g.border_style),
            "position": positions[key],
            "font": font_score(s.font, g.font),
            "aspect_ratio": aspect_ratio_score(s.box, g.box),
            "matched": matches[key],
        }
    n = len(gt)
    summary = {m: (sum(r[m] for r in rows.values()) / n if n else 0.0) for m in SHAPE_METRICS}
    raw = sum(summary.values()) / len(SHAPE_METRICS)
    matched_labels = {gen[v].label for v in matches.values()}
    n_extra = sum(1 for g in gen.values() if g.label not in matched_labels)
    summary["extra_penalty"], summary["composite"] = penalised(raw, n, n_extra)
    summary.update(raw=raw, n_gt=n, n_gen=len(gen), n_matched=len(matches), n_extra=n_extra)
    return summary, rows


# ---------------------------------------------------------------- arrows

def _shape_at(point, gen: dict) -> str | None:
    """The generated shape whose box (10 px margin) is nearest to ``point``, within 100 px."""
    best, best_d = None, 100.0
    for key, s in gen.items():
        d = geo.distance_to_box(point, (s.box[0] - 10, s.box[1] - 10, s.box[2] + 10, s.box[3] + 10))
        if d <= best_d and (best is None or d < best_d):
            best, best_d = key, d
    return best


def score_arrows(gt_arrows: list[Arrow], heads: list[dict], gen_arrows: list[Arrow],
                 gen: dict[str, Shape], matches: dict) -> tuple[dict, dict]:
    if not gt_arrows:
        return {m: 1.0 for m in ARROW_METRICS} | {"composite": 1.0, "n_gt": 0,
                                                   "n_gen": len(gen_arrows)}, {}
    ends = [(_shape_at(a.start, gen), _shape_at(a.end, gen)) for a in gen_arrows]
    used: set[int] = set()
    rows = {}
    gt_idx = 0
    mean_width = sum(h["width"] for h in heads) / len(heads) if heads else 0.0
    for a in gt_arrows:
        want_src, want_dst = matches.get(a.source), matches.get(a.dest)
        best, best_score, best_reversed = None, 0, False
        for i, (s, d) in enumerate(ends):
            if i in used:
                continue
            fwd = (s is not None and s == want_src) + (d is not None and d == want_dst)
            rev = (d is not None and d == want_src) + (s is not None and s == want_dst)
            score, reversed_ = (fwd, False) if fwd >= rev else (rev, True)
            if score > best_score:
                best, best_score, best_reversed = i, score, reversed_
        if best is None:
            rows[a.key] = {m: 0.0 for m in ARROW_METRICS} | {"matched": None}
            gt_idx += 1
            continue
        used.add(best)
        g = gen_arrows[best]
        src, dst = ends[best][::-1] if best_reversed else ends[best]
        # Deliberate quirk: the original reads the head at gt_idx, then advances it twice
        # for a matched arrow, so later arrows read another arrow's head or the mean.
        head = heads[gt_idx] if gt_idx < len(heads) else {"width": mean_width,
                                                          "visible": True}
        gt_idx += 2
        inside = 0
        for p in (g.start, g.end):
            for key, s in gen.items():
                if key in (want_src, want_dst):
                    continue
                if geo.inside(p, s.box, inset=5.0, strict=True):
                    inside += 1
        rows[a.key] = {
            "source": float(src is not None and src == want_src),
            "dest": float(dst is not None and dst == want_dst),
            "head": 1.0 if not head["visible"] else float(g.has_head),
            "head_size": 1.0 if not head["visible"] else head_size_score(
                g.has_head, g.marker, g.stroke_width, head["width"], a.stroke_width),
            "curve": float(a.curved == g.curved),
            "color": color_score(a.color or "#000", g.color),
            "overlap": overlap_score(inside),
            "matched": g.key, "reversed": best_reversed,
        }
    n = len(gt_arrows)
    summary = {m: sum(r[m] for r in rows.values()) / n for m in ARROW_METRICS}
    raw = sum(summary.values()) / len(ARROW_METRICS)
    n_matched = len(used)
    n_extra = len(gen_arrows) - n_matched
    summary["extra_penalty"], summary["composite"] = penalised(raw, n, n_extra)
    summary.update(raw=raw, n_gt=n, n_gen=len(gen_arrows), n_matched=n_matched,
                   n_extra=n_extra)
    return summary, rows


# ---------------------------------------------------------------- one pair

def evaluate_pair(gen_root, gt_root) -> dict:
    """Everything for one generated/ground-truth pair (lxml roots)."""
    gt_servers, gen_servers = geo.paint_servers(gt_root), geo.paint_servers(gen_root)
    gt_shapes = ground_truth_shapes(gt_root, gt_servers)
    gen_shapes = generated_shapes(gen_root, gen_servers)
    shapes, shape_rows = score_shapes(gt_shapes, gen_shapes)
    gt_arrows = ground_truth_arrows(gt_root, gt_shapes)
    heads = ground_truth_heads(gt_root, gt_shapes)
    gen_arrows = filter_arrows_inside_shapes(generated_arrows(gen_root), gen_shapes)
    arrows, arrow_rows = score_arrows(gt_arrows, heads, gen_arrows, gen_shapes,
                                      match_shapes(gt_shapes, gen_shapes))
    return {"overall": 0.5 * shapes["composite"] + 0.5 * arrows["composite"],
            "shapes": shapes, "arrows": arrows,
            "per_shape": shape_rows, "per_arrow": arrow_rows}
