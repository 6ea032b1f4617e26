"""docs/renderers.md's feature table is what the renderers do: each fixture in
tests/fixtures/renderers/ is drawn by CairoSVG, resvg and Chromium, and the table's
"CairoSVG = Chromium" and "resvg = Chromium" columns must match (tests/renderers.py)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import renderers
from renderers import (FIXTURES, agree, draw_cairosvg, draw_chromium, draw_resvg,
                       fixtures, resvg_available)

pytestmark = pytest.mark.slow

DOC = Path(__file__).resolve().parents[1] / "docs" / "renderers.md"


def documented() -> dict[str, dict[str, str]]:
    """Fixture file name -> the table's cells, by column heading."""
    section = DOC.read_text().split("## The table", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    heads = [c.strip() for c in rows[0].strip("|").split("|")]
    out = {}
    for line in rows[2:]:
        cells = dict(zip(heads, (c.strip() for c in line.strip("|").split("|"))))
        name = re.fullmatch(r"`([\w.-]+\.svg)`", cells["Fixture"])
        assert name, f"table row without a fixture: {line}"
        out[name.group(1)] = cells
    return out


TABLE = documented()


def test_every_fixture_has_a_row_and_every_row_a_fixture():
    assert sorted(TABLE) == sorted(p.name for p in fixtures())
    for cells in TABLE.values():
        assert cells["CairoSVG = Chromium"] in ("same", "differs")
        assert cells["resvg = Chromium"] in ("same", "differs")
        assert cells["What svgloo does"]


def test_the_comparison_tells_same_from_differs(chromium):
    """The 'same' rule must see a feature drawn differently and must not see antialiasing."""
    control = draw_chromium(chromium, FIXTURES / "control_shapes.svg")
    cairo = draw_cairosvg(FIXTURES / "control_shapes.svg")
    assert agree(cairo, control) == "same"
    assert not np.array_equal(cairo.rgba, control.rgba)  # edges do differ a little
    moved = renderers.Drawing("moved", np.roll(control.rgba, 6, axis=1))
    assert agree(moved, control) == "differs"


@pytest.mark.parametrize("name", sorted(TABLE))
def test_table_row_matches_the_renderers(chromium, name):
    path = FIXTURES / name
    browser = draw_chromium(chromium, path)
    assert browser.rgba[..., 3].max() > 0, "the fixture draws nothing in Chromium"
    assert agree(draw_cairosvg(path), browser) == TABLE[name]["CairoSVG = Chromium"]
    if resvg_available():
        assert agree(draw_resvg(path), browser) == TABLE[name]["resvg = Chromium"]


@pytest.mark.parametrize("name", sorted(n for n, cells in TABLE.items()
                                         if cells["What svgloo does"].startswith("normalised")))
def test_normalised_rows_draw_in_cairosvg_as_in_chromium(chromium, name):
    """Where the table says svgloo normalises a value CairoSVG misreads, CairoSVG's drawing
    of the normalised copy (what svgloo's analysis renderer draws) agrees with Chromium."""
    import cairosvg

    from svgloo.engine.rendering.normalize import normalize_modern

    path = FIXTURES / name
    assert agree(draw_cairosvg(path), draw_chromium(chromium, path)) == "differs"
    png = cairosvg.svg2png(bytestring=normalize_modern(path.read_bytes()),
                           output_width=renderers.SIZE, output_height=renderers.SIZE)
    ours = renderers.Drawing("cairosvg, normalised", renderers._png_to_rgba(png))
    assert agree(ours, draw_chromium(chromium, path)) == "same"


def test_an_img_draws_every_fixture_as_the_document_except_external_files(chromium):
    """The CI referee draws through <img> (batched); the table opens each file as the
    document. They agree on everything but what lies outside the file."""
    paths = fixtures()
    as_img = chromium.render([p.read_bytes() for p in paths], renderers.SIZE)
    for path, img in zip(paths, as_img):
        doc = renderers.Drawing("document", draw_chromium(chromium, path).rgba)
        verdict = agree(renderers.Drawing("img", img), doc)
        assert verdict == ("differs" if path.name == "image_external_href.svg" else "same"), \
            path.name
