"""Weight-free findings (engine/svgloo/engine/scoring/findings.py): specks and mostly hidden units, checked on
hand-built files with hand-derived numbers and on corpus files against naive renders."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from svgloo.engine.leave_one_out.blocks import unaffected_units
from svgloo.engine.reading.document import load_document
from svgloo.engine.errors import ConfigError
from svgloo.engine.scoring.findings import FindingThresholds, find_all
from svgloo.engine.leave_one_out.layers import LayerTexts
from svgloo.engine.limits import DEFAULT_LIMITS
from svgloo.engine.leave_one_out.loo import CHANGED_THRESHOLD, loo_fast
from svgloo.engine.rendering.render import render_rgba
from svgloo.engine.scoring.score import ScoreSettings, score_text
from svgloo.engine.reading.units import extract_units

# One user unit = one pixel at the default 384 px, so every edge sits on a pixel edge.
SVG_OPEN = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 384 384">'

# "under" is 100 x 100 = 10000 px; "cover", drawn later, covers all of it but the three
# columns x < 3: 9700 px, a hidden share of 0.97. "stray" is one pixel: 1/147456 of the
# canvas, far under the 0.02% default.
HAND_BUILT = SVG_OPEN + """
  <rect id="under" x="0" y="0" width="100" height="100" fill="#c00"/>
  <rect id="cover" x="3" y="0" width="200" height="100" fill="#00c"/>
  <rect id="stray" x="300" y="300" width="1" height="1" fill="#000"/>
</svg>"""


def by_id(result: dict) -> dict:
    return {u["id"]: u for u in result["units"]}


def test_hand_built_mostly_hidden_and_speck(render_pool):
    result = score_text(HAND_BUILT, "<hand-built>", ScoreSettings(backbone="pixel"),
                        pool=render_pool).result
    units = by_id(result)
    [hidden] = units["under"]["findings"]
    assert hidden["kind"] == "mostly_hidden" and hidden["severity"] == "hint"
    assert (hidden["drawn_pixels"], hidden["hidden_pixels"]) == (10000, 9700)
    assert hidden["hidden_share"] == pytest.approx(0.97)
    assert hidden["threshold"] == 0.95
    # the numbers in the detail, plain words in the message (<= 120 characters)
    assert "97.0%" in hidden["detail"] and "10000 px" in hidden["detail"]
    assert hidden["message"].startswith("97% hidden") and len(hidden["message"]) <= 120
    [speck] = units["stray"]["findings"]
    assert speck["kind"] == "speck" and speck["severity"] == "information"
    assert speck["footprint_pixels"] == 1
    assert speck["footprint_fraction"] == pytest.approx(1 / 384 ** 2, rel=1e-3)
    assert speck["threshold"] == 0.0002
    assert "visible on only 1 px" in speck["message"] and "0.0007%" in speck["detail"]
    # The cover is neither: 20000 px visible, nothing above it.
    assert units["cover"]["findings"] == []
    assert result["finding_thresholds"] == {"speck": 0.0002, "hidden": 0.95}
    assert result["summary"]["specks"] == 1 and result["summary"]["mostly_hidden"] == 1
    # Nothing here is "harmful": findings never change verdicts.
    assert all(u["verdict"] != "harmful" for u in result["units"])


def test_thresholds_move_the_findings(render_pool):
    # 97% hidden is under a 0.98 threshold; the under rect's 300 visible px (0.2% of the
    # canvas) become a speck at a 0.5% threshold; 0 turns specks off.
    s = ScoreSettings(backbone="pixel", hidden_threshold=0.98, speck_threshold=0.005)
    units = by_id(score_text(HAND_BUILT, "<hand-built>", s, pool=render_pool).result)
    assert [f["kind"] for f in units["under"]["findings"]] == ["speck"]
    assert units["under"]["findings"][0]["footprint_pixels"] == 300
    s = ScoreSettings(backbone="pixel", speck_threshold=0.0, hidden_threshold=1.5)
    result = score_text(HAND_BUILT, "<hand-built>", s, pool=render_pool).result
    assert all(u["findings"] == [] for u in result["units"])
    with pytest.raises(ConfigError, match="hidden threshold"):
        score_text(HAND_BUILT, "<x>", ScoreSettings(backbone="pixel",
                                                    hidden_threshold=float("nan")),
                   pool=render_pool)


def test_a_cover_with_a_hole_or_seen_through_does_not_hide(render_pool):
    # The later compound path is a 100 x 100 square with a 40 x 40 hole (evenodd): its
    # second subpath alone would "cover" the hole, but the path as drawn does not, so
    # 10000 - 1600 = 8400 px of "a" are hidden (0.84). "b" lies under a half-transparent
    # rect: nothing of it is hidden. "d" lies under five rects in a group of opacity 0.5:
    # the group lets half of it through, although its rects' own layers (each alpha 0.5)
    # composited one by one would let 1/32 through. Subpaths of one path never hide
    # each other.
    svg = SVG_OPEN + """
      <rect id="a" x="0" y="0" width="100" height="100" fill="#c00"/>
      <path id="p" fill-rule="evenodd" fill="#00c" d="M0 0H100V100H0Z M30 30H70V70H30Z"/>
      <rect id="b" x="200" y="0" width="50" height="50" fill="#0c0"/>
      <rect id="c" x="200" y="0" width="50" height="50" fill="#000" fill-opacity="0.5"/>
      <rect id="d" x="0" y="200" width="50" height="50" fill="#0c0"/>
      <g opacity="0.5">
        <rect x="0" y="200" width="50" height="50"/>
        <rect x="0" y="200" width="50" height="50"/>
        <rect x="0" y="200" width="50" height="50"/>
        <rect x="0" y="200" width="50" height="50"/>
        <rect x="0" y="200" width="50" height="50"/>
      </g>
    </svg>"""
    s = ScoreSettings(backbone="pixel", hidden_threshold=0.0)  # report every share
    units = score_text(svg, "<hole>", s, pool=render_pool).result["units"]
    share = {(u["id"], u["subpath"]): u["findings"][-1]["hidden_share"] for u in units
             if u["findings"]}
    assert share[("a", None)] == pytest.approx(0.84)
    assert share[("b", None)] == 0.0
    assert share[("d", None)] == 0.0
    assert share[("p", 0)] == 0.0 and share[("p", 1)] == 0.0


def naive_hidden(path: str, size: int) -> list[tuple[int, int]]:
    """(drawn, hidden) per unit from full renders: drawn = the unit's own render; hidden =
    drawn pixels where an exact render of all later elements lets at most
    CHANGED_THRESHOLD/255 of the unit through ((1 - A) * alpha)."""
    us = extract_units(load_document(path, DEFAULT_LIMITS), True)
    texts = LayerTexts(us, prune_resources=False)
    out = []
    for u in us.units:
        alpha = render_rgba(texts.keeping({u.index}), size)[..., 3].astype(np.float64)
        later = {v.index for v in us.units[u.index + 1:] if v.element != u.element}
        cover = render_rgba(texts.keeping(later), size)[..., 3].astype(np.float64)
        drawn = alpha > CHANGED_THRESHOLD
        seen = (255 - cover) * alpha / 255 > CHANGED_THRESHOLD
        out.append((int(drawn.sum()), int((drawn & ~seen).sum())))
    return out


# Picked for what they exercise: many mostly-hidden units (noto 1f487), compound paths
# over other units (oauth), masks, filters and a group opacity (lighthouse, noto 1f9b8).
CORPUS_CASES = ["noto/emoji_u1f487_200d_2640.svg", "logos/oauth.svg", "logos/lighthouse.svg",
                "noto/emoji_u1f9b8_1f3fb.svg"]


@pytest.mark.slow
@pytest.mark.parametrize("alone", ["rendered", "from_loo"])
@pytest.mark.parametrize("name", CORPUS_CASES)
def test_hidden_shares_match_naive_renders_on_corpus_files(corpus_dir, render_pool, name,
                                                            alone):
    size = 128
    path = str(corpus_dir / name)
    us = extract_units(load_document(path, DEFAULT_LIMITS), True)
    known = None
    if alone == "from_loo":  # subpaths drawn alone in their windows by fast, on the way
        known = loo_fast(us, size, DEFAULT_LIMITS, render_pool, alone=True).alone
        assert known or name != "logos/oauth.svg"
    found = find_all(us, [0] * len(us.units), size, DEFAULT_LIMITS, render_pool,
                     FindingThresholds(speck=0.0, hidden=0.0), alone_known=known)
    mine = [(f[0]["drawn_pixels"], f[0]["hidden_pixels"]) if f else (0, 0) for f in found]
    naive = naive_hidden(path, size)
    plain = len(unaffected_units(us)) == len(us.units)
    flagged = flagged_naive = 0
    for (drawn, hidden), (n_drawn, n_hidden) in zip(mine, naive):
        assert drawn == n_drawn
        if drawn == 0:
            continue
        # Compositing the later elements' own layers never claims more than the exact
        # render covers (up to 8-bit rounding on anti-aliased edges) ...
        assert hidden <= n_hidden + 0.02 * drawn
        # ... and, with no group effects to leave out, finds the same pixels.
        if plain:
            assert abs(hidden - n_hidden) <= 0.02 * drawn
        flagged += hidden >= 0.95 * drawn
        flagged_naive += n_hidden >= 0.95 * n_drawn
    if plain:
        assert flagged == flagged_naive
    else:
        assert flagged <= flagged_naive
    if name.startswith("noto/emoji_u1f487"):
        assert flagged >= 10  # a file where the finding matters, not a vacuous check


def test_cli_table_and_json_show_findings(tmp_path):
    svg = tmp_path / "hand.svg"
    svg.write_text(HAND_BUILT)
    cmd = [sys.executable, "-m", "svgloo", "score", str(svg), "--backbone", "pixel"]
    table = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert any("rect#under" in ln and ln.endswith("hidden 97%") for ln in lines)
    assert any("rect#stray" in ln and ln.endswith("speck") for ln in lines)
    assert any(ln.strip().startswith("findings: 1 speck ") and "1 mostly hidden" in ln
               for ln in lines)
    proc = subprocess.run(cmd + ["--json", "--hidden-threshold", "0.99"], capture_output=True,
                          text=True, timeout=300)
    result = json.loads(proc.stdout)
    assert result["finding_thresholds"]["hidden"] == 0.99
    assert by_id(result)["under"]["findings"] == []


class LayerCountingPool:
    """The render pool, counting the layer texts sent to it (rendered or captured)."""

    def __init__(self, pool):
        self.pool, self.limits, self.workers = pool, pool.limits, pool.workers
        self.layer_texts: list[str] = []

    def map(self, fn, jobs, name, timeout_s=None, on_done=None):
        if fn.__name__ == "job_render_layers":
            self.layer_texts += [text for job in jobs for text in job[0]]
        elif fn.__name__ == "job_capture_layers":
            self.layer_texts += [job[0] for job in jobs]
        return self.pool.map(fn, jobs, name, timeout_s, on_done)


# A compound path whose second subpath starts with a relative moveto: the leave-one-out
# draws it from a text with absolute movetos (loo.absolute_subpaths).
RELATIVE_COMPOUND = SVG_OPEN + """
  <rect id="back" x="0" y="0" width="384" height="60" fill="#c00"/>
  <path id="p" d="M10 100h50v50h-50z m100 0h50v50h-50z" fill="#00c"/>
  <rect id="top" x="0" y="300" width="30" height="30" fill="#0c0"/>
</svg>"""


def test_findings_draw_a_relative_compound_path_once(render_pool):
    """Findings need the whole path's layer; the leave-one-out drew it already, from the
    text with absolute movetos. Findings take it from the layer cache instead of drawing
    the path a second time from the text as written."""
    pool = LayerCountingPool(render_pool)
    result = score_text(RELATIVE_COMPOUND, "<relative>", ScoreSettings(backbone="pixel",
                        prove=False), pool=pool).result
    both = [t for t in pool.layer_texts if t.count("h50v50h-50z") == 2]  # the whole path
    assert len(both) == 1, both
    assert "M110 100h50" in both[0]  # the text with absolute movetos, as the leave-one-out drew it
    # and the findings are the hand-derived ones: nothing covers anything, nothing tiny
    assert all(u["findings"] == [] for u in result["units"])
    assert [u["footprint_pixels"] for u in result["units"]] == [384 * 60, 2500, 2500, 900]


# An exporter's hidden layer (display none on the group, a child saying inline: CairoSVG
# and resvg draw none of it) of lines and a compound path, above a visible rect that the
# hidden shapes would cover, and a visible circle.
HIDDEN_LAYER = SVG_OPEN + """
  <rect id="shown" x="0" y="0" width="100" height="100" fill="#c00"/>
  <g style="display:none">
    <line id="h1" x1="0" y1="10" x2="100" y2="10" stroke="#000" stroke-width="4"/>
    <g style="display:inline"><rect id="h2" x="0" y="0" width="100" height="100"/></g>
    <path id="h3" d="M0 0h50v50h-50z M60 0h30v30h-30z" fill="#00c"/>
  </g>
  <circle id="dot" cx="300" cy="300" r="20" fill="#0c0"/>
</svg>"""


def _findings_of(text: str, pool) -> tuple[list, list[str]]:
    """find_all's findings of ``text`` at every threshold 0 (every count shows), and the
    layer texts it sent to the pool."""
    from svgloo.engine.reading.document import parse_document

    us = extract_units(parse_document(text, "<hidden layer>", DEFAULT_LIMITS), True)
    counting = LayerCountingPool(pool)
    found = find_all(us, [1] * len(us.units), 384, DEFAULT_LIMITS, counting,
                     FindingThresholds(speck=0.0, hidden=0.0))
    return found, counting.layer_texts


def test_findings_do_not_draw_a_hidden_layer(render_pool, monkeypatch):
    """Units under display none are not drawn alone: they draw nothing, which is what
    drawing them gives (the same findings as with every unit drawn)."""
    found, texts = _findings_of(HIDDEN_LAYER, render_pool)
    # drawn: the rect and the circle alone, nothing of the hidden layer
    assert len(texts) == 2
    assert not any(f'id="h{i}"' in t for t in texts for i in (1, 2, 3))
    # the rect is not "mostly hidden" by the shapes over it that nobody sees
    counts = [(f[0]["drawn_pixels"], f[0]["hidden_pixels"]) if f else None for f in found]
    assert counts[:5] == [(10000, 0), None, None, None, None]
    assert counts[5][0] > 1200 and counts[5][1] == 0  # the circle, r 20: about 1257 px
    import svgloo.engine.scoring.findings as findings

    monkeypatch.setattr(findings, "hidden_elements", lambda us, elements: set())
    drawn, all_texts = _findings_of(HIDDEN_LAYER, render_pool)
    assert len(all_texts) == 2 + 4 + 1  # and the four hidden units, the path whole
    assert drawn == found


def test_findings_draw_hidden_shapes_a_stylesheet_could_show(render_pool):
    """A stylesheet can say display inline where the attribute says none: then the
    shapes are drawn to see what they draw, as before."""
    styled = HIDDEN_LAYER.replace("<rect id=\"shown\"", "<style>circle{}</style><rect id=\"shown\"")
    _, texts = _findings_of(styled, render_pool)
    assert any('id="h1"' in t for t in texts)
