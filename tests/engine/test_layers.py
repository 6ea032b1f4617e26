"""Layer texts (pruned documents keeping a few units) draw what the whole document draws
for those units: compared with units.text_keeping, which cuts only the other units."""

from __future__ import annotations

import numpy as np
import pytest

from svgloo.engine.document import load_document, parse_document
from svgloo.engine.layers import LayerTexts
from svgloo.engine.render import render_rgba
from svgloo.engine.units import extract_units, text_keeping

from conftest import CORPUS

# Flat exports (hundreds of siblings), nested groups with clips and gradients, masks,
# compound paths, <use>, and text.
FILES = ["logos/memgraph.svg", "logos/sugarss.svg", "logos/pypi.svg", "logos/safari.svg",
         "noto/emoji_u1f9af.svg", "logos/tastejs.svg", "logos/ember-tomster.svg"]


@pytest.mark.parametrize("name", FILES)
def test_single_unit_layers_render_as_the_unpruned_text(name):
    us = extract_units(load_document(CORPUS / name))
    texts = LayerTexts(us)
    n = len(us.units)
    picks = sorted({0, n - 1, *range(0, n, max(1, n // 12))})
    for k in picks:
        pruned = texts.keeping({k})
        assert len(pruned) <= len(us.doc.text)
        np.testing.assert_array_equal(render_rgba(pruned, 96),
                                      render_rgba(text_keeping(us, {k}), 96),
                                      err_msg=f"{name} unit {k}")


def test_a_run_of_cut_siblings_is_one_cut():
    body = "\n".join(f'<rect x="{i}" width="1" height="1"/>' for i in range(50))
    text = f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 50 1">\n{body}\n</svg>'
    us = extract_units(parse_document(text, "flat.svg"))
    kept = LayerTexts(us).keeping({20})
    assert kept.count("<rect") == 1 and 'x="20"' in kept
    np.testing.assert_array_equal(render_rgba(kept, 50), render_rgba(text_keeping(us, {20}), 50))
