"""Render-proven findings that need no reference and no model weights.

With no reference image or prompt, leave-one-out can only say "no visible effect": nothing
can be harmful against the file's own render. These findings point a reviewer at units
that are probably unintended, each backed by the engine's renders:

- ``speck``: the unit changes only a tiny part of the picture (a stray point, a sliver):
  its visible footprint (pixels that change by more than CHANGED_THRESHOLD/255 without it)
  is at most ``speck`` (a fraction of the size x size canvas) and not zero (zero is "no
  visible effect", reported already).
- ``mostly_hidden``: of what the unit draws alone, at least ``hidden`` (a share) is covered
  by later units. "Drawn alone" is the unit's own layer render (its ancestors' transforms,
  clips and opacity applied); a pixel is covered when the later units' layers, composited
  in z-order, let at most CHANGED_THRESHOLD/255 of it through, whatever its colour. A
  split path covers as drawn (whole: its holes do not cover), and its own subpaths never
  cover each other: one path is filled in one go. Elements under a group effect do not
  count as cover (see find_all), so a share can be missed, never invented.

These are Information or Hint, never "harmful". The arrays in are the engine's own renders
(score.py passes them); the functions here only count pixels.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass

import numpy as np

from svgloo.engine.leave_one_out.blocks import has_structural_css, unaffected_units
from svgloo.engine.errors import ConfigError
from svgloo.engine.leave_one_out.layers import LayerTexts
# layer_key: alone layers are cached under the keys loo_fast uses, so a single-unit
# block's layer (the unit alone) rendered for leave-one-out is not rendered again.
from svgloo.engine.leave_one_out.layer_render import layer_key
from svgloo.engine.limits import Limits
from svgloo.engine.leave_one_out.loo import CHANGED_THRESHOLD
from svgloo.engine.wording.plain_words import hidden_note, speck_note
from svgloo.engine.progress import Stage, WorkProgress
from svgloo.engine.proving.proof_reuse import hidden_elements
from svgloo.engine.rendering.raster import NO_LAYER, Layer
from svgloo.engine.rendering.render_jobs import job_render_layers
from svgloo.engine.settings import HIDDEN_DEFAULT, SPECK_DEFAULT
from svgloo.engine.result_types import Finding, MostlyHiddenFinding, SpeckFinding, UnitRow
from svgloo.engine.result_types import FindingThresholds as FindingThresholdsJson
from svgloo.engine.reading.units import UnitSet
from svgloo.engine.processes.workers import RenderPool, chunked


@dataclass(frozen=True)
class FindingThresholds:
    speck: float = SPECK_DEFAULT    # visible footprint, as a fraction of the canvas
    hidden: float = HIDDEN_DEFAULT  # covered share of what the unit draws alone

    def to_json(self) -> FindingThresholdsJson:
        return {"speck": self.speck, "hidden": self.hidden}

    def check(self, name: str | None) -> None:
        """Refuse thresholds that are not numbers >= 0 (NaN compares false everywhere)."""
        for what, value in (("speck", self.speck), ("hidden", self.hidden)):
            if not (isinstance(value, (int, float)) and value >= 0):
                raise ConfigError(name, f"the {what} threshold must be a number >= 0, "
                                        f"not {value!r}")


def speck_finding(footprint_pixels: int, canvas_pixels: int, threshold: float) -> SpeckFinding | None:
    """A ``speck`` finding when 0 < footprint <= threshold x canvas, else None."""
    fraction = footprint_pixels / canvas_pixels
    if footprint_pixels <= 0 or fraction > threshold:
        return None
    return {"kind": "speck", "severity": "information",
            # message: the one line a person reads (plain_words); detail: the numbers
            "message": speck_note(footprint_pixels),
            "detail": f"speck: visible on {footprint_pixels} px, {fraction:.4%} of the "
                      f"canvas (threshold {threshold:.4%}); a stray point or sliver?",
            "footprint_pixels": footprint_pixels,
            "footprint_fraction": round(fraction, 8), "threshold": threshold}


def hidden_finding(drawn_pixels: int, hidden_pixels: int, threshold: float) -> MostlyHiddenFinding | None:
    """A ``mostly_hidden`` finding when hidden/drawn >= threshold, else None."""
    if drawn_pixels <= 0:
        return None
    share = hidden_pixels / drawn_pixels
    if share < threshold:
        return None
    return {"kind": "mostly_hidden", "severity": "hint",
            "message": hidden_note(share),
            "detail": f"mostly hidden: {share:.1%} of the {drawn_pixels} px it draws alone "
                      f"is covered by later elements (threshold {threshold:.0%})",
            "hidden_share": round(share, 6), "drawn_pixels": drawn_pixels,
            "hidden_pixels": hidden_pixels, "threshold": threshold}


def coverage(alone: list[Layer], elements: list[tuple[range, Layer | None]],
             size: int) -> list[tuple[int, int]]:
    """(drawn, hidden) pixel counts per unit, from each unit's layer rendered alone.

    ``elements``: in z order, the units of each element (consecutive indices) and the
    layer with which that element covers what lies below it, None when it does not count
    as cover. Units of one element never cover each other: a path is filled in one go,
    and a later subpath can punch a hole rather than paint over. A backward sweep keeps
    the alpha of everything above, so the cost is the sum of the layers' box areas."""
    above = np.zeros((size, size), np.float32)  # alpha in [0, 1] of the later elements
    counts: list[tuple[int, int]] = [(0, 0)] * len(alone)
    let_through = CHANGED_THRESHOLD / 255.0
    for units, cover in reversed(elements):
        for k in units:
            box, crop = alone[k]
            if box is None:
                continue
            y0, y1, x0, x1 = box
            alpha = crop[..., 3].astype(np.float32) / 255.0
            drawn = alpha > let_through
            # Drawn under a cover of alpha A, the unit changes a pixel by at most
            # (1 - A) * its alpha (premultiplied colour never exceeds alpha).
            seen = (1.0 - above[y0:y1, x0:x1]) * alpha > let_through
            counts[k] = (int(drawn.sum()), int((drawn & ~seen).sum()))
        if cover is not None and cover[0] is not None:
            (y0, y1, x0, x1), crop = cover
            view = above[y0:y1, x0:x1]
            view += crop[..., 3].astype(np.float32) / 255.0 * (1.0 - view)  # "over"
    return counts


def element_groups(us: UnitSet) -> list[range]:
    """The units of each unit element, in z order (a split path's subpaths are
    consecutive units)."""
    groups: list[range] = []
    first = 0
    for i, u in enumerate(us.units):
        if i + 1 == len(us.units) or us.units[i + 1].element != u.element:
            groups.append(range(first, i + 1))
            first = i + 1
    return groups


def render_layers(us: UnitSet, keeps: list[frozenset[int]], size: int, limits: Limits,
                  pool: RenderPool, layer_cache: MutableMapping | None = None,
                  stage: Stage | None = None,
                  texts: LayerTexts | None = None) -> list[Layer]:
    """Transparent layers keeping only the given units (the engine's layer texts and layer
    renders), taking what ``layer_cache`` already holds; ``stage`` advances one step per
    layer. ``texts``: layer texts already built for these units (leave-one-out's)."""
    cache = layer_cache if layer_cache is not None else {}
    prune = not has_structural_css(us.doc)
    if texts is None or texts.us is not us or texts.prune != prune:
        texts = LayerTexts(us, prune_resources=prune)
    layer_texts = [texts.keeping(set(keep)) for keep in keeps]
    keys = [layer_key(t, size) for t in layer_texts]
    # Read each hit once: a bounded cache (the daemon's LRU) may drop entries meanwhile.
    layers: dict[str, Layer] = {}
    for key in keys:
        if key not in layers:
            try:
                layers[key] = cache[key]
            except KeyError:
                pass
    missing = list({key: i for i, key in enumerate(keys) if key not in layers}.values())
    jobs = [([layer_texts[i] for i in chunk], size, limits, us.doc.name)
            for chunk in chunked(missing, 16)]
    stage = stage or WorkProgress(None).stage(0)
    stage.advance(len(keeps) - len(missing))
    fresh = [layer for out in pool.map(job_render_layers, jobs, us.doc.name,
                                       on_done=lambda j: stage.advance(len(jobs[j][0])))
             for layer in out]
    for i, layer in zip(missing, fresh):
        layers[keys[i]] = cache[keys[i]] = layer
    return [layers[key] for key in keys]


def unit_findings(footprint_pixels: list[int], counts: list[tuple[int, int]], size: int,
                  thresholds: FindingThresholds) -> list[list[Finding]]:
    """The findings of every unit, from its visible footprint and (drawn, hidden) pixels."""
    canvas = size * size
    out = []
    for fp, (drawn, hidden) in zip(footprint_pixels, counts):
        found = [speck_finding(fp, canvas, thresholds.speck),
                 hidden_finding(drawn, hidden, thresholds.hidden)]
        out.append([f for f in found if f is not None])
    return out


def findings_steps(us: UnitSet, thresholds: FindingThresholds) -> int:
    """The layers find_all renders (or finds cached): its progress steps."""
    if thresholds.hidden > 1:
        return 0
    return len(us.units) + sum(len(units) > 1 for units in element_groups(us))


def find_all(us: UnitSet, footprint_pixels: list[int], size: int, limits: Limits,
             pool: RenderPool, thresholds: FindingThresholds,
             layer_cache: MutableMapping | None = None,
             stage: Stage | None = None,
             alone_known: Mapping[int, Layer] | None = None,
             texts: LayerTexts | None = None) -> list[list[Finding]]:
    """Per unit, its findings: render each unit alone and each split path whole, then
    count pixels. ``alone_known``: units already drawn alone (``LooResult.alone``);
    ``texts``: the layer texts leave-one-out built (``LooResult.texts``), if any."""
    thresholds.check(us.doc.name)
    if thresholds.hidden > 1:  # no share can reach it: skip the renders
        return unit_findings(footprint_pixels, [(0, 0)] * len(us.units), size, thresholds)
    groups = element_groups(us)
    # Units in a layer an exporter left hidden (display none on them or an ancestor, as
    # both renderers read it) draw nothing alone and cover nothing: not drawn to see that
    # (a hidden layer of a hundred shapes cost a hundred renders, half a file's time).
    hidden = hidden_elements(us, {u.element for u in us.units})
    known = dict(alone_known or {})
    known.update((u.index, NO_LAYER) for u in us.units if u.element in hidden)
    split = [frozenset(units) for units in groups
             if len(units) > 1 and us.units[units[0]].element not in hidden]
    todo = [u.index for u in us.units if u.index not in known]
    stage = stage or WorkProgress(None).stage(0)
    hidden_wholes = sum(len(units) > 1 for units in groups) - len(split)
    stage.advance(len(us.units) - len(todo) + hidden_wholes)  # steps: findings_steps
    layers = render_layers(us, [frozenset({k}) for k in todo] + split, size,
                           limits, pool, layer_cache, stage, texts)
    drawn = dict(zip(todo, layers))
    alone = [known[k] if k in known else drawn[k] for k in range(len(us.units))]
    whole = iter(layers[len(todo):])
    # Under a group effect (opacity, mask, filter) units are composited as one group,
    # which their separate layers do not show: they do not count as cover (this can only
    # miss hidden pixels, never invent them).
    plain = unaffected_units(us)
    elements = []
    for units in groups:
        if us.units[units[0]].element in hidden:
            layer = NO_LAYER
        else:
            layer = next(whole) if len(units) > 1 else alone[units[0]]
        elements.append((units, layer if all(k in plain for k in units) else None))
    return unit_findings(footprint_pixels, coverage(alone, elements, size), size, thresholds)


def count_findings(rows: list[UnitRow]) -> dict[str, int]:
    """Units with each kind of finding, for the result's summary."""
    return {"specks": sum(any(f["kind"] == "speck" for f in r["findings"]) for r in rows),
            "mostly_hidden": sum(any(f["kind"] == "mostly_hidden" for f in r["findings"])
                                 for r in rows)}
