"""``svgloo fix --rewrite``: the rewrite stage (engine cleanup/) spells a file shorter and
keeps its picture. Checked against computations of their own: path data re-read by
svgelements (not svgloo's parser), pictures drawn by CairoSVG called directly (not
through the engine's workers or its proof), elements looked up with lxml."""

from __future__ import annotations

import io

import numpy as np
import pytest
from lxml import etree

from conftest import CORPUS, corpus_files
from svgloo.engine.fixing.cleanup.path_short import shortest
from svgloo.engine.fixing.cleanup.rewrite import rewrite_text
from svgloo.engine.fixing.fix import FixResult, fix_text, never_grow
from svgloo.engine.limits import DEFAULT_LIMITS

SVG = "{http://www.w3.org/2000/svg}"
SIZES = (384, 1024)


def _points(d: str) -> list[tuple[float, float]]:
    """Every point of a path (ends and control points, absolute), read by svgelements."""
    import svgelements as se

    out = []
    for segment in se.Path(d):
        for name in ("start", "control1", "control2", "control", "end"):
            point = getattr(segment, name, None)
            if point is not None:
                out.append((float(point.x), float(point.y)))
    return out


def _corpus_paths(limit: int = 400) -> list[str]:
    found = []
    for path in corpus_files():
        root = etree.parse(str(path)).getroot()
        found += [el.get("d") for el in root.iter(f"{SVG}path") if el.get("d")]
    return found[:: max(1, len(found) // limit)]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not present")
def test_shortest_path_data_is_the_same_outline_and_never_longer():
    for d in _corpus_paths() + ["M0 0zm5 5h1v1z", "m2 3 4 5 6 7", "M1.5.5.5 1.5z"]:
        for spelling in ("short", "keep"):
            new = shortest(d, spelling=spelling)
            if spelling == "keep":  # only separators, zeros and letters go
                assert len(new) <= len(d), (d, new)
            old_points, new_points = _points(d), _points(new)
            assert len(old_points) == len(new_points), (d, new)
            assert np.allclose(old_points, new_points, rtol=0, atol=1e-9), (d, new)


def test_already_minified_subpaths_stay_zm():
    assert shortest("M0 0h2v2H0zm4 0h2v2H4z") == "M0 0h2v2H0zm4 0h2v2H4z"


def test_keep_spelling_writes_each_step_as_the_input_did():
    """CairoSVG adds relative steps in cairo's fixed point: the "keep" spelling must not
    turn one kind of step into the other (H/V for an axis-aligned lineto aside)."""
    assert shortest("M10 10L20 10l5 5L40 40", spelling="keep") == "M10 10H20l5 5L40 40"


def _cairo(text: str, size: int) -> np.ndarray:
    import cairosvg
    from PIL import Image

    png = cairosvg.svg2png(bytestring=text.encode(), output_width=size, output_height=size)
    with Image.open(io.BytesIO(png)) as im:
        rgba = np.asarray(im.convert("RGBA")).astype(np.float64)
    # premultiplied, as a page composites it: a PNG's straight colour of a nearly
    # transparent pixel moves a lot for a change no one can see
    rgba[..., :3] *= rgba[..., 3:] / 255.0
    return np.rint(rgba).astype(np.int16)


def _largest_change(a: str, b: str, size: int) -> int:
    return int(np.abs(_cairo(a, size) - _cairo(b, size)).max())


INKSCAPE = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!-- Created with Inkscape (http://www.inkscape.org/) -->
<svg xmlns="http://www.w3.org/2000/svg" xmlns:inkscape="http://www.inkscape.org/namespaces/inkscape"
     xmlns:sodipodi="http://sodipodi.sourceforge.net/DTD/sodipodi-0.dtd"
     xmlns:xlink="http://www.w3.org/1999/xlink"
     width="100" height="100" viewBox="0 0 100 100" version="1.1" inkscape:version="1.2">
  <title>A red disc</title>
  <sodipodi:namedview id="namedview7" pagecolor="#ffffff" inkscape:zoom="2.8"/>
  <metadata id="metadata5"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/></metadata>
  <defs id="defs2">
    <linearGradient id="used"><stop offset="0" stop-color="#FF0000"/>
      <stop offset="1" stop-color="#0000FF"/></linearGradient>
    <linearGradient id="unused"><stop offset="0" stop-color="#00FF00"/></linearGradient>
  </defs>
  <g id="layer1" inkscape:label="Layer 1" inkscape:groupmode="layer">
    <g>
      <circle id="disc" cx="50.000" cy="50.000" r="30.0" style="fill:#FF0000;fill-opacity:1;stroke:none" />
      <rect id="bar" x="10" y="80" width="80.50" height="10" fill="url(#used)" opacity="1"/>
    </g>
  </g>
</svg>
"""


def test_rewrite_drops_editor_state_and_keeps_the_picture_and_what_is_named(render_pool):
    done = rewrite_text(INKSCAPE, INKSCAPE, "inkscape.svg", SIZES, DEFAULT_LIMITS,
                        render_pool)
    assert len(done.text) < len(INKSCAPE) * 0.75, done.text
    root = etree.fromstring(done.text.encode())
    names = {etree.QName(el).localname for el in root.iter() if isinstance(el.tag, str)}
    assert "namedview" not in names and "metadata" not in names
    assert root.find(f"{SVG}title").text == "A red disc"          # read by screen readers
    assert not any("inkscape" in k for el in root.iter() for k in el.attrib)
    ids = {el.get("id") for el in root.iter() if el.get("id")}
    assert "used" in ids and "unused" not in ids and "disc" not in ids
    assert "<!--" not in done.text
    for size in SIZES:
        assert _largest_change(INKSCAPE, done.text, size) <= 2


def test_a_script_keeps_every_id_and_definition(render_pool):
    scripted = INKSCAPE.replace("</svg>", "<script>document.getElementById('disc')</script></svg>")
    done = rewrite_text(scripted, scripted, "scripted.svg", SIZES, DEFAULT_LIMITS, render_pool)
    root = etree.fromstring(done.text.encode())
    ids = {el.get("id") for el in root.iter() if el.get("id")}
    assert {"disc", "bar", "used", "unused"} <= ids


def test_a_class_or_id_named_by_a_stylesheet_stays(render_pool):
    styled = INKSCAPE.replace("<title>", "<style>#bar:hover{cursor:pointer}</style><title>")
    done = rewrite_text(styled, styled, "styled.svg", SIZES, DEFAULT_LIMITS, render_pool)
    root = etree.fromstring(done.text.encode())
    assert root.find(f".//{SVG}rect").get("id") == "bar"


def test_a_rewrite_that_changes_the_picture_is_left_out(render_pool):
    """The rewrite is proven against the baseline it is given: against a baseline whose
    disc is elsewhere, every text the stage can make changes the picture, so it keeps the
    text as it was."""
    moved = INKSCAPE.replace('cx="50.000"', 'cx="40"')
    done = rewrite_text(INKSCAPE, moved, "moved.svg", SIZES, DEFAULT_LIMITS, render_pool)
    assert done.text == INKSCAPE and not done.kept


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not present")
@pytest.mark.parametrize("name, job", [("noto/emoji_u1f4b6.svg", "style"),
                                       ("logos/polymer.svg", "numbers"),
                                       ("logos/github-octocat.svg", "paths"),
                                       ("feather/mic-off.svg", "shapes")])
def test_fix_rewrite_saves_bytes_and_keeps_the_corpus_picture(name, job, render_pool):
    data = (CORPUS / name).read_bytes()
    plain = fix_text(data, name, pool=render_pool)
    fixed = fix_text(data, name, pool=render_pool, rewrite=True)
    assert fixed.rewritten.get(job), fixed.rewritten
    assert len(fixed.text.encode()) < len(plain.text.encode()) <= len(data)
    for size in SIZES:
        assert _largest_change(data.decode(), fixed.text, size) <= 2


def test_a_fix_never_returns_a_longer_text():
    grown = FixResult("a.svg", "<svg>zm</svg>", "<svg>z m</svg>")
    kept = never_grow(grown)
    assert kept.text == kept.original and not kept.changed and "larger" in kept.fell_back
    shorter = FixResult("a.svg", "<svg> z m </svg>", "<svg>zm</svg>")
    assert never_grow(shorter) is shorter


def test_sibling_paths_alike_stay_apart(render_pool):
    """Merging them is a picture change in Chromium that the proof renderers cannot see
    (shapes.py): the rewrite stage never offers it."""
    text = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" '
            'stroke="#000" stroke-width="2" stroke-linecap="round">'
            '<path d="M21 10H3"/><path d="M21 6H3"/></svg>')
    done = rewrite_text(text, text, "two.svg", SIZES, DEFAULT_LIMITS, render_pool)
    root = etree.fromstring(done.text.encode())
    assert len(root.findall(f"{SVG}path")) == 2, done.text


def test_rounding_keeps_the_picture_and_every_point_close(render_pool):
    """Long decimals are rounded only when asked for, and only where the proof lets them
    (device_rounding.py); the picture, drawn by CairoSVG directly at the proof sizes, stays
    within 2/255, and no point moves by more than 0.01 of a unit."""
    d = ("M10.1234567 20.7654321l31.1111111 2.2222222 3.3333333 24.4444444"
         "c-1.234567 2.345678-13.456789 4.567891-25.678912 -6.789123z")
    text = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">'
            f'<path fill="#06c" d="{d}"/></svg>')
    assert "precision" not in rewrite_text(text, text, "round.svg", SIZES, DEFAULT_LIMITS,
                                           render_pool).kept  # off unless asked for
    done = rewrite_text(text, text, "round.svg", SIZES, DEFAULT_LIMITS, render_pool,
                        rounding=True)
    assert "precision" in done.kept or "precision" in done.refused, done
    new_d = etree.fromstring(done.text.encode()).find(f"{SVG}path").get("d")
    assert np.allclose(_points(new_d), _points(d), atol=0.01)
    for size in SIZES:
        assert _largest_change(text, done.text, size) <= 2
