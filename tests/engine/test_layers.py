"""Layer texts (pruned documents keeping a few units) draw what the whole document draws
for those units: compared with units.text_keeping, which cuts only the other units."""

from __future__ import annotations

import numpy as np
import pytest

from svgloo.engine.reading.document import load_document, parse_document
from svgloo.engine.leave_one_out.layers import LayerTexts
from svgloo.engine.rendering.render import render_rgba
from svgloo.engine.reading.units import extract_units, text_keeping

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


def _marked_document_texts(us, prune: bool) -> LayerTexts:
    """The layer texts of the document with every unit element's start tag marked, as
    the fast method once parsed it for its capture passes."""
    from svgloo.engine.rendering.render import CAPTURE_ATTR
    from svgloo.engine.reading.units import TextEdit, apply_edits

    doc = us.doc
    edits = []
    for element in {u.element for u in us.units}:
        name_end = doc.elements[element].start + 1
        while doc.text[name_end] not in " \t\r\n/>":
            name_end += 1
        edits.append(TextEdit(name_end, name_end, f' {CAPTURE_ATTR}="{element}"'))
    marked = parse_document(apply_edits(doc.text, edits), doc.name)
    return LayerTexts(extract_units(marked, bool(us.splits)), prune)


@pytest.mark.parametrize("name", FILES + ["twemoji/1f46f.svg", "logos/wmr.svg"])
@pytest.mark.parametrize("prune", [True, False])
def test_capture_texts_are_the_marked_documents_layer_texts(name, prune):
    import random

    from svgloo.engine.leave_one_out.layer_render import Captures
    from svgloo.engine.leave_one_out.loo import absolute_subpaths

    us = absolute_subpaths(extract_units(load_document(CORPUS / name)))
    captures = Captures(us, LayerTexts(us, prune))
    expected = _marked_document_texts(us, prune)
    n = len(us.units)
    rng = random.Random(n)
    keeps = [{k} for k in range(0, n, max(1, n // 20))]
    keeps += [set(rng.sample(range(n), min(n, rng.randint(2, 12)))) for _ in range(15)]
    for keep in keeps:
        assert captures.keeping(keep) == expected.keeping(keep), sorted(keep)
