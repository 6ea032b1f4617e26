"""engine/proof.py: nothing is offered for deletion unless removing it keeps CairoSVG's and
resvg's pictures, compared with alpha, at the analysis size and the document's size; units
svgloo cannot vouch for are "unverified" with the reason; modern values do not fail files.

Each case is a small hand-written SVG; where a test says what a browser draws, it checks
that independently with resvg (or, for what resvg also lacks, states the SVG spec)."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from svgloo.engine.reading.document import parse_document
from svgloo.engine.limits import DEFAULT_LIMITS
from svgloo.engine.leave_one_out.loo import CHANGED_THRESHOLD
from svgloo.engine.proving.proof import (PROOF_TOLERANCE, check_removal, disagreement,
                                         picture_change, proof_sizes)
from svgloo.engine.rendering.render import render_rgba, render_rgba_resvg
from svgloo.engine.scoring.score import ScoreSettings, score_text
from svgloo.engine.reading.units import extract_units, text_without

SVG = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'
SETTINGS = ScoreSettings(backbone="pixel", size=96)
# Something visible, so that every document has a picture.
MARK = '<rect x="10" y="10" width="30" height="30" fill="#2a6"/>'


def doc(body: str, box: str = "0 0 100 100", extra: str = "") -> str:
    return f'<svg {SVG} viewBox="{box}" {extra}>{MARK}{body}</svg>'


def score(text: str, name: str = "case.svg", settings: ScoreSettings = SETTINGS):
    return score_text(text, name, settings, pool=None).result


def row_of(result: dict, tag: str, nth: int = 0) -> dict:
    return [r for r in result["units"] if r["tag"] == tag][nth]


def removal_changes(text: str, unit: int, size: int = 256) -> int:
    """Independently: the most any channel moves in resvg's picture without the unit."""
    us = extract_units(parse_document(text, "x.svg"))
    full = render_rgba_resvg(text, size)
    without = render_rgba_resvg(text_without(us, {unit}), size)
    return int(picture_change(full, without).max())


def test_tolerance_sees_a_four_percent_tint():
    assert isinstance(PROOF_TOLERANCE, int) and 0 < PROOF_TOLERANCE < 10
    assert CHANGED_THRESHOLD == 12  # the scoring footprint keeps its threshold


# --- features CairoSVG does not draw as browsers do: unverified, never removable ---------

def _assert_unverified(result: dict, row: dict, words: str) -> None:
    assert not row["visible"], "the case needs a unit CairoSVG sees no footprint of"
    assert row["removal"]["status"] == "unverified", row["removal"]
    assert words in row["removal"]["reason"]
    assert row["index"] not in ((result.get("bulk_removal") or {}).get("units") or [])
    assert result["summary"]["unverified"] >= 1


def test_blurred_glow_under_a_filter_is_unverified():
    # The glow: a blurred shape under a larger one. CairoSVG skips the blur and draws it
    # inside the upper shape (no footprint); browsers draw a halo around it.
    text = doc('<defs><filter id="glow" x="-1" y="-1" width="3" height="3">'
               '<feGaussianBlur stdDeviation="4"/></filter></defs>'
               '<circle cx="70" cy="70" r="9" fill="#f80" filter="url(#glow)"/>'
               '<circle cx="70" cy="70" r="12" fill="#f80"/>')
    result = score(text)
    glow = row_of(result, "circle", 0)
    _assert_unverified(result, glow, "filter")
    assert removal_changes(text, glow["index"]) > 40  # resvg draws the halo


@pytest.mark.parametrize("mime,payload", [
    ("image/gif", base64.b64encode(b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff"
                                   b"\xff!\xf9\x04\x00\x00\x00\x00\x00,\x00\x00\x00\x00\x01"
                                   b"\x00\x01\x00\x00\x02\x02D\x01\x00;").decode()),
    ("image/svg+xml", base64.b64encode(f'<svg {SVG} width="4" height="4"><rect width="4" '
                                       'height="4"/></svg>'.encode()).decode()),
])
def test_non_png_jpeg_data_images_are_unverified(mime, payload):
    text = doc(f'<image x="50" y="50" width="40" height="40" '
               f'href="data:{mime};base64,{payload}"/>')
    result = score(text)
    _assert_unverified(result, row_of(result, "image"), mime)


def test_image_beside_the_file_is_unverified_and_never_read(tmp_path, monkeypatch):
    from PIL import Image

    Image.new("RGB", (8, 8), (255, 0, 0)).save(tmp_path / "pic.png")
    text = doc('<image x="50" y="50" width="40" height="40" href="pic.png"/>')
    path = tmp_path / "case.svg"
    path.write_text(text)
    monkeypatch.chdir(tmp_path)  # resvg's own loader reads relative paths from here
    result = score(text, str(path))
    _assert_unverified(result, row_of(result, "image"), "external file")
    assert any("external reference refused" in w for w in result["warnings"])
    # Neither renderer fetched the file: nothing red anywhere.
    for picture in (render_rgba(text, 64), render_rgba_resvg(text, 64)):
        red = (picture[..., 0] > 200) & (picture[..., 1] < 50)
        assert not red.any()
    absolute = doc(f'<image x="0" y="0" width="100" height="100" '
                   f'href="{tmp_path / "pic.png"}"/>')
    assert render_rgba_resvg(absolute, 64)[..., 0].max() < 200


def test_use_with_href_and_xlink_href_is_unverified():
    # SVG 2: href wins (the red square, drawn by browsers); CairoSVG follows xlink:href
    # (an empty group).
    text = doc('<defs><rect id="red" width="20" height="20" fill="red"/><g id="none"/></defs>'
               '<use x="60" y="60" href="#red" xlink:href="#none"/>')
    result = score(text)
    _assert_unverified(result, row_of(result, "use"), "xlink:href")
    # resvg, too, follows xlink:href here; what browsers draw (href) is a visible square.
    browsers = text.replace(' xlink:href="#none"', '')
    assert removal_changes(browsers, row_of(result, "use")["index"]) > 200


def test_css_filter_invert_is_unverified():
    # White on white for CairoSVG, which ignores CSS filter functions; black in browsers.
    text = doc('<rect x="50" y="50" width="40" height="40" fill="white" '
               'style="filter: invert(1)"/>', extra='style="background: white"')
    text = text.replace(MARK, '<rect width="100" height="100" fill="white"/>' + MARK)
    result = score(text)
    _assert_unverified(result, row_of(result, "rect", 2), "CSS filter")


def test_css_d_property_is_unverified():
    text = doc('<path style="d: path(\'M50 50 H90 V90 Z\')"/>')
    result = score(text)
    _assert_unverified(result, row_of(result, "path"), "CSS property d")


def test_stylesheet_filter_is_seen_too():
    text = doc('<style>.ghost { filter: invert(1) }</style>'
               '<rect class="ghost" x="50" y="50" width="0" height="40"/>'
               '<g class="ghost"><circle cx="80" cy="80" r="0"/></g>')
    result = score(text)
    assert row_of(result, "rect", 1)["removal"]["status"] == "unverified"
    assert "ancestor" in row_of(result, "circle")["removal"]["reason"]


def test_zero_length_round_cap_subpath_is_unverified():
    # SVG 2 (painting, 'stroke-linecap'): a zero-length subpath with round caps is drawn
    # as a dot. CairoSVG draws nothing for "M x y Z"; resvg draws the dot.
    text = doc('<g stroke-linecap="round"><path d="M70 70 Z" stroke="black" '
               'stroke-width="10"/></g>')
    result = score(text)
    _assert_unverified(result, row_of(result, "path"), "zero-length subpath")
    assert removal_changes(text, row_of(result, "path")["index"]) > 200


def test_non_scaling_stroke_is_unverified():
    # vector-effect: a 1 px line in browsers; CairoSVG scales the stroke to 0.01 px.
    text = doc('<g transform="scale(0.01)"><path d="M0 7000 H10000" stroke="black" '
               'stroke-width="1" vector-effect="non-scaling-stroke"/></g>')
    result = score(text)
    _assert_unverified(result, row_of(result, "path"), "non-scaling-stroke")


def test_coincident_subpaths_are_unverified():
    # One outline written twice in one path (logos/yeoman.svg writes its face three times):
    # CairoSVG and resvg draw one copy like two, Chromium moves the edges by up to 20/255
    # (tests/test_browser_proofs.py). The two-renderer proof alone would accept it.
    outline = "M80 70c0 0-12 11-31 11c-23 0-30-11-30-11L14 14h70L80 70z"
    again = outline.replace("M80 70", "M 80,70 ")  # written differently, the same edges
    text = doc(f'<path fill="#222" d="{outline} {again}"/>'
               '<path fill="#222" d="M20 90h10v5h-10z M40 90h10v5h-10z"/>')
    result = score(text)
    copies = [r for r in result["units"] if r["tag"] == "path"][:2]
    for row in copies:
        _assert_unverified(result, row, "coincide with subpath")
    us = extract_units(parse_document(text, "x.svg"))
    for unit in (1, 2):
        for draw in (render_rgba, render_rgba_resvg):
            assert np.array_equal(draw(text, 256), draw(text_without(us, {unit}), 256))
    # Subpaths that share no edge are not touched by the rule.
    assert all("coincide" not in r["removal"]["reason"] for r in result["units"][3:])


# --- what a proof compares ------------------------------------------------------------

def test_white_rect_on_a_transparent_page_is_not_removable():
    # Over white it changes nothing (no footprint); on a dark page it is a white square.
    text = doc('<rect x="50" y="50" width="40" height="40" fill="white"/>')
    result = score(text)
    white = row_of(result, "rect", 1)
    assert not white["visible"]  # the footprint threshold is unchanged
    assert white["removal"]["status"] == "visible"
    assert "255/255" in white["removal"]["reason"]
    assert result["summary"]["proven_removable"] == 0 and result["bulk_removal"] is None


def test_a_full_canvas_four_percent_tint_is_not_removable():
    text = doc('<rect width="100" height="100" fill="black" opacity="0.04"/>')
    text = text.replace(MARK, '<rect width="100" height="100" fill="white"/>' + MARK)
    result = score(text)
    tint = row_of(result, "rect", 2)
    assert not tint["visible"]  # 10/255 is under the footprint threshold...
    assert tint["removal"]["status"] == "visible"  # ...and over the proof's
    assert "10/255" in tint["removal"]["reason"]


def test_invisible_units_are_proven_and_the_bulk_set_holds_in_both_renderers():
    ghosts = ('<circle cx="-20" cy="-20" r="5"/>'       # outside the viewBox
              '<rect x="60" y="60" width="20" height="20" opacity="0"/>'
              '<path d="M60 60 H80" stroke="none"/>')
    text = doc(ghosts)
    result = score(text)
    proven = [r["index"] for r in result["units"] if r["removal"]["status"] == "proven"]
    assert proven == [1, 2, 3]
    assert result["summary"]["proven_removable"] == 3
    bulk = result["bulk_removal"]
    assert bulk["units"] == proven
    assert "CairoSVG and resvg at 64, 96 and 1024 px" in bulk["checked"]
    assert f"{PROOF_TOLERANCE}/255" in bulk["checked"]
    # Independently, at the proof size in both renderers: the picture without all three.
    us = extract_units(parse_document(text, "x.svg"))
    for draw in (render_rgba, render_rgba_resvg):
        assert np.array_equal(draw(text, 1024), draw(text_without(us, set(proven)), 1024))


def test_a_unit_proven_together_is_proven_alone_where_another_can_undo_its_removal():
    # One white square written twice in one path, in opposite directions and cut at
    # different points (no edge in common): the windings cancel, nothing is drawn. Removing
    # both changes nothing; removing either alone draws a white square - nothing over white
    # (CairoSVG's leave-one-out sees no change), a square on a dark page.
    square = ("M50 50 h40 v40 h-40 z "
              "M50 50 v20 v20 h20 h20 v-20 v-20 h-20 h-20 z")
    ghost = '<rect x="60" y="10" width="20" height="20" opacity="0"/>'
    text = doc(f'<path fill="white" d="{square}"/>{ghost}')
    us = extract_units(parse_document(text, "x.svg"))
    assert [u.kind for u in us.units] == ["element", "subpath", "subpath", "element"]
    for draw in (render_rgba, render_rgba_resvg):  # together: nothing changes...
        assert np.array_equal(draw(text, 256), draw(text_without(us, {1, 2}), 256))
    assert removal_changes(text, 1) == 255  # ...alone: a white square (on a dark page)
    result = score(text)
    for row in result["units"][1:3]:
        assert not row["visible"]  # over white, the footprint sees nothing
        assert row["removal"]["status"] == "visible", row["removal"]
        assert row["removal"]["reason"].startswith("removing it alone changes")
    rect = result["units"][3]
    assert rect["removal"]["status"] == "proven"
    assert (f"Removed alone: CairoSVG at 96 px over white, within {PROOF_TOLERANCE}/255 "
            "(its leave-one-out)") in rect["removal"]["reason"]
    assert result["bulk_removal"] is None  # one unit left: its own fix


def test_entangled_units_proven_alone_say_so():
    # Two overlapping opacity-0 subpaths of one path (a third far from them cannot add to
    # their windings) and a <use>d rect at opacity 0: each entangled unit's removal alone is
    # checked in both renderers at the analysis size, and the reason says so.
    text = doc('<path d="M0 0h5v5z M3 3h5v5z M30 0h5v5z" opacity="0"/>'
               '<rect id="r" x="60" y="60" width="5" height="5" opacity="0"/>'
               '<use href="#r" x="5"/>')
    us = extract_units(parse_document(text, "x.svg"))
    from svgloo.engine.proving.proof import entangled
    assert entangled(us, {1, 2, 3, 4, 5}) == {1, 2, 4}
    assert entangled(us, {1, 3, 5}) == set()
    result = score(text)
    rows = result["units"]
    for row in (rows[1], rows[2], rows[4]):
        assert row["removal"]["status"] == "proven"
        assert row["removal"]["reason"].endswith(
            "Removed alone: CairoSVG and resvg at 96 px, no pixel moving by more than "
            f"{PROOF_TOLERANCE}/255, alpha included")
    for row in (rows[3], rows[5]):
        assert row["removal"]["status"] == "proven"
        assert "(its leave-one-out)" in row["removal"]["reason"]
    assert result["bulk_removal"]["units"] == [1, 2, 3, 4, 5]


def test_bulk_removal_is_proven_at_the_documents_own_size():
    # Two slivers 0.03 px wide at 2048 px: within the tolerance at 384 px, about 7/255 at
    # 2048 px.
    sliver = '<rect x="{x}" y="100" width="0.03" height="1800" fill="black"/>'
    text = (f'<svg {SVG} width="2048" height="2048" viewBox="0 0 2048 2048">'
            f'<rect x="200" y="200" width="600" height="600" fill="#2a6"/>'
            + sliver.format(x=1000) + sliver.format(x=1500) + '</svg>')
    us = extract_units(parse_document(text, "big.svg"))
    assert proof_sizes(us, 384, DEFAULT_LIMITS) == ((384, 64, 2048), "")
    small = picture_change(render_rgba(text, 384), render_rgba(text_without(us, {1, 2}), 384))
    assert small.max() <= PROOF_TOLERANCE  # what a 384 px proof alone would accept
    check = check_removal(us, [1, 2], size=384)
    assert check.removable == () and set(check.dropped) == {1, 2}
    assert all(c.size == 2048 for c in check.why_dropped.values())
    result = score(text, "big.svg", ScoreSettings(backbone="pixel", size=384))
    for r in result["units"][1:]:
        assert not r["visible"] and r["removal"]["status"] == "visible"
        assert "2048 px" in r["removal"]["reason"]
    assert result["bulk_removal"] is None


def test_huge_documents_are_proven_at_the_render_limit_and_say_so():
    text = f'<svg {SVG} width="4096" height="1000">{MARK}</svg>'
    us = extract_units(parse_document(text, "huge.svg"))
    sizes, note = proof_sizes(us, 384, DEFAULT_LIMITS)
    assert sizes == (384, 64, DEFAULT_LIMITS.max_render_size)
    assert "4096" in note and "render limit" in note


# --- modern syntax: scored, never a failed file ---------------------------------------

@pytest.mark.parametrize("fill", [
    'fill="#00f" opacity="100%"', 'fill="#00f" fill-opacity="100%"', 'fill="rgb(0 0 255)"',
    'fill="#00f" style="opacity: 100%"', 'fill="hsl(240 100% 50%)"',
])
def test_modern_values_score_and_draw_as_browsers_do(fill):
    text = doc(f'<rect x="50" y="50" width="calc(20px + 20px)" height="40" {fill}/>')
    result = score(text)  # no RenderError
    assert row_of(result, "rect", 1)["visible"]
    picture = render_rgba(text, 100)
    assert picture[70, 70].tolist() == [0, 0, 255, 255]  # blue, opaque, 40 px wide
    assert picture[70, 89].tolist() == [0, 0, 255, 255] and picture[70, 91, 3] == 0


def test_hex_colours_with_alpha_draw_as_in_a_browser():
    # CairoSVG draws #rrggbbaa and #rgba opaque; browsers and resvg honour the alpha. The
    # copy CairoSVG draws is normalised; resvg draws the user's text as written.
    body = ('<linearGradient id="c0ffee"><stop offset="0" stop-color="#f008"/>'
            '<stop offset="1" style="stop-color: #0000ff40"/></linearGradient>'
            '<rect x="50" y="10" width="40" height="40" fill="#3366cc80"/>'
            '<rect x="10" y="55" width="80" height="20" fill="url(#c0ffee) #000"/>'
            '<use href="#c0ffee"/>'
            '<rect x="10" y="80" width="80" height="15" style="fill:#0a0c" stroke="#abcd"/>')
    text = doc(body)
    import io

    import cairosvg
    from PIL import Image

    png = cairosvg.svg2png(bytestring=text.encode(), output_width=100, output_height=100)
    raw = np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))
    assert raw[30, 70].tolist() == [51, 102, 204, 255]  # CairoSVG alone: opaque
    ours, browser = render_rgba(text, 100), render_rgba_resvg(text, 100)
    for y, x in [(30, 70), (65, 12), (65, 88), (87, 50), (80, 50)]:
        assert np.abs(ours[y, x].astype(int) - browser[y, x]).max() <= 2, (y, x)
    assert np.abs(ours[30, 70] - np.array([26, 51, 102, 128])).max() <= 1  # premultiplied
    assert picture_change(ours, browser).max() <= 64  # edges only: antialiasing
    from svgloo.engine.rendering.normalize import normalize_modern
    copy = normalize_modern(text)
    assert 'href="#c0ffee"' in copy and "url(#c0ffee)" in copy and 'id="c0ffee"' in copy


def test_the_users_text_is_not_rewritten():
    text = doc('<rect x="50" y="50" width="40" height="40" fill="rgb(0 0 255)" '
               'opacity="100%"/>')
    result = score(text)
    rect = row_of(result, "rect", 1)
    start, end = rect["offsets"]
    assert text[start:end] == ('<rect x="50" y="50" width="40" height="40" '
                               'fill="rgb(0 0 255)" opacity="100%"/>')


# --- the second renderer ----------------------------------------------------------------

def test_resvg_renders_known_pixels_premultiplied_and_placed_like_cairosvg():
    # A 4 x 2 document fitted into 8 x 8: scaled by 2, centred vertically (rows 2-5).
    text = (f'<svg {SVG} width="4" height="2"><rect width="2" height="2" fill="#f00"/>'
            '<rect x="2" width="2" height="2" fill="#00f" opacity="0.5"/></svg>')
    picture = render_rgba_resvg(text, 8)
    assert picture.shape == (8, 8, 4) and picture.dtype == np.uint8
    assert picture[:2].max() == 0 and picture[6:].max() == 0
    assert picture[3, 1].tolist() == [255, 0, 0, 255]
    assert picture[3, 6].tolist() == [0, 0, 128, 128]  # premultiplied, as render_rgba
    assert np.abs(picture.astype(int) - render_rgba(text, 8)).max() <= 1


def test_generic_font_families_resolve_in_resvg_as_in_cairosvg():
    # resvg's font database maps sans-serif to Arial (not installed here) and draws no text;
    # CairoSVG and browsers ask fontconfig. resvg's copy names fontconfig's family first.
    from svgloo.engine.rendering.render import generic_families, resolve_generic_families

    families = generic_families()
    if "sans-serif" not in families:
        pytest.skip("no fontconfig family for sans-serif that resvg has loaded")
    assert resolve_generic_families("Arial, sans-serif", families) == \
        f"Arial, '{families['sans-serif']}', sans-serif"
    for kept in ("'serif'", '"monospace"', "my-sans-serif", "Foo"):  # names, not generics
        assert resolve_generic_families(kept, families) == kept
    text = doc('<style>.c { font-family: serif }</style>'
               '<text x="45" y="30" font-family="sans-serif" font-size="20">Ag</text>'
               '<text x="45" y="60" style="font-size: 20px; font-family: monospace">Ag</text>'
               '<text x="45" y="90" class="c" font-size="20">Ag</text>')
    cairo, resvg = render_rgba(text, 200), render_rgba_resvg(text, 200)
    for y0 in (40, 100, 160):  # each line drawn by resvg...
        assert resvg[y0:y0 + 25, 90:170, 3].max() == 255
    assert disagreement(cairo, resvg).pixels == 0  # ...in the family CairoSVG draws
    result = score(text)
    assert result["renderer_disagreement"] is None and not result["warnings"]


def test_renderers_that_disagree_are_reported_with_the_element():
    text = doc('<defs><filter id="soft"><feGaussianBlur stdDeviation="6"/></filter></defs>'
               '<circle id="shadow" cx="60" cy="60" r="25" filter="url(#soft)"/>')
    result = score(text)
    differ = result["renderer_disagreement"]
    assert differ and differ["pixels"] > 100
    assert [n["id"] for n in differ["named"]] == ["shadow"]
    warning = [w for w in result["warnings"] if w.startswith("CairoSVG draws")]
    assert len(warning) == 1 and "shadow" in warning[0] and "\n" not in warning[0]
    plain = score(doc('<circle cx="60" cy="60" r="25"/>'))
    assert plain["renderer_disagreement"] is None
    assert not [w for w in plain["warnings"] if w.startswith("CairoSVG draws")]


def test_a_proof_that_runs_out_of_checks_proves_nothing_it_did_not_reach():
    from svgloo.engine.proving.proof import Prover, prove_set

    # edges on the pixel grid at 64 px: one square alone draws what the two do
    twins = doc('<rect x="50" y="50" width="25" height="25" fill="#c00"/>' * 2
                + '<circle cx="-20" cy="-20" r="5"/>')
    us = extract_units(parse_document(twins, "twins.svg"))
    prover = Prover(us, (64,))
    check = prove_set(prover, [1, 2, 3], max_checks=1)  # the whole set fails; no more
    assert check.removable == () and check.undecided == (1, 2, 3)
    assert not check.complete
    full = prove_set(Prover(us, (64,)), [1, 2, 3])
    assert full.undecided == () and 3 in full.removable and len(full.removable) == 2


@pytest.mark.parametrize("seed", range(3))
def test_disagreement_mask_is_the_dense_computation(seed):
    """disagreement works only where the pictures differ and opens inside the box of what
    passes the threshold; the mask is the one of the whole-picture formula, on random
    pictures (changes of every size, some of them in 3x3 patches and at the borders)."""
    from svgloo.engine.rendering.masks import open_square3
    from svgloo.engine.proving.proof import DISAGREE_THRESHOLD, picture_change

    rng = np.random.default_rng(seed)
    a = rng.integers(0, 256, (64, 80, 4), dtype=np.uint8)
    b = a.copy()
    for _ in range(40):
        y, x = rng.integers(0, 64), rng.integers(0, 80)
        h, w = rng.integers(1, 6, 2)
        b[y:y + h, x:x + w] = rng.integers(0, 256, (min(h, 64 - y), min(w, 80 - x), 4))
    want = open_square3(picture_change(a, b) > DISAGREE_THRESHOLD)
    got = disagreement(a, b)
    assert want.sum() >= 9  # patches survive the opening: the comparison is not empty
    assert np.array_equal(got.mask, want) and got.pixels == int(want.sum())
    assert np.array_equal(disagreement(a, a).mask, np.zeros((64, 80), bool))


def test_a_check_uses_the_picture_the_scoring_sends_instead_of_drawing_it(monkeypatch):
    """The proof sends the scoring's full pictures (analysis size) with its checks: the
    worker compares with them, and draws the document only when none is sent."""
    import svgloo.engine.proving.pictures as proof  # the check's worker job lives there

    svg = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 20 20">'
           '<rect width="20" height="20" fill="#fff"/><circle cx="9" cy="9" r="5"/></svg>')
    without = svg.replace('<circle cx="9" cy="9" r="5"/>', "")
    drawn = []
    real = proof.kept_picture
    monkeypatch.setattr(proof, "kept_picture", lambda *a: drawn.append(a) or real(*a))
    for renderer, draw in (("cairosvg", render_rgba), ("resvg", render_rgba_resvg)):
        picture = draw(svg, 48)
        sent = proof.job_picture_changes(svg, [without], 48, DEFAULT_LIMITS, "t.svg",
                                         renderer, picture)
        assert drawn == []
        assert sent == proof.job_picture_changes(svg, [without], 48, DEFAULT_LIMITS,
                                                 "t.svg", renderer)
        assert len(drawn) == 1 and sent[0][0] > 0
        drawn.clear()
        # what it compares with is what was sent: against the picture without the circle,
        # removing the circle moves nothing
        assert proof.job_picture_changes(svg, [without], 48, DEFAULT_LIMITS, "t.svg",
                                         renderer, draw(without, 48))[0][0] == 0
