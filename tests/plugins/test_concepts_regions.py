"""Colour regions: names against known colours, and one fill per region on a real file."""

from __future__ import annotations

import numpy as np
import pytest

from svgloo.plugins.concepts_regions import (NEAR, RegionConceptSource, color_name,
                                             segment_regions)

# CSS/X11 named colours (sRGB, from the CSS Color 4 table) and the name a designer uses.
KNOWN = [
    ((139, 69, 19), "brown"),          # saddlebrown
    ((160, 82, 45), "brown"),          # sienna
    ((101, 67, 33), "dark brown"),
    ((245, 245, 220), "beige"),
    ((210, 180, 140), "tan"),
    ((0, 0, 128), "navy"),
    ((0, 128, 128), "teal"),
    ((128, 128, 0), "olive"),
    ((128, 0, 0), "maroon"),
    ((128, 128, 128), "grey"),
    ((192, 192, 192), "light grey"),   # silver
    ((255, 255, 255), "white"),
    ((0, 0, 0), "black"),
    ((255, 192, 203), "pink"),
    ((255, 105, 180), "hot pink"),
    ((128, 0, 128), "purple"),
    ((255, 165, 0), "orange"),
    ((255, 140, 0), "orange"),         # darkorange
    ((255, 215, 0), "gold"),
    ((255, 255, 0), "yellow"),
    ((255, 0, 0), "red"),
    ((0, 128, 0), "green"),
    ((34, 139, 34), "green"),          # forestgreen
    ((0, 0, 255), "blue"),
    ((65, 105, 225), "blue"),          # royalblue
    ((135, 206, 235), "sky blue"),
    ((70, 130, 180), "steel blue"),
    ((0, 255, 255), "cyan"),
    ((255, 0, 255), "magenta"),
    ((193, 105, 79), "light brown"),   # twemoji's rails (#C1694F)
]


@pytest.mark.parametrize("rgb,name", KNOWN, ids=[n for _, n in KNOWN])
def test_color_name_of_known_colours(rgb, name):
    assert color_name(rgb) == name


def test_brown_is_never_blue_or_orange():
    browns = [(139, 69, 19), (160, 82, 45), (150, 98, 57), (101, 67, 33), (120, 72, 40)]
    for rgb in browns:
        assert "brown" in color_name(rgb), rgb


def test_every_region_of_a_flat_emoji_is_one_fill(corpus_dir):
    """twemoji's railway track has nine flat fills; median cut alone put the brown rails
    and both greys in one colour, so one 'grey' region held three fills and was named by
    their mean. Now each region is one fill (with its anti-aliased edge)."""
    from svgloo.engine.rendering.render import over_white, render_rgba

    rgb = over_white(render_rgba((corpus_dir / "twemoji" / "1f6e4.svg").read_bytes(), 384))
    regions = segment_regions(rgb)
    assert len(regions) >= 4
    for mask, color in regions:
        pixels = rgb[mask].astype(np.float64)
        near = np.sqrt(((pixels - color) ** 2).sum(axis=1)) <= NEAR
        assert near.mean() >= 0.9, (color_name(color), near.mean())


def test_region_concepts_are_named_by_their_fill():
    rgb = np.full((96, 96, 3), 255, np.uint8)
    rgb[8:40, 8:88] = (139, 69, 19)      # brown bar, top
    rgb[40:60, 8:88] = (128, 128, 128)   # grey bar touching it
    rgb[60:88, 8:88] = (0, 0, 128)       # navy bar touching that
    names = sorted(c.name.split(" region")[0]
                   for c in RegionConceptSource().concepts(None, rgb, {}))
    assert names == ["brown", "grey", "navy"]
