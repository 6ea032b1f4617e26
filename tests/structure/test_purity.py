"""The low-purity rule (svgloo.structure.purity) on hand-made rows and on corpus icons."""

from __future__ import annotations

import pytest

from svgloo.structure.purity import MIN_SHARE, concept_shares, mixed_concepts

BLACK_TOP = {"name": "black region, top", "source": "regions", "color": "#000000"}
BLACK_BOTTOM = {"name": "black region, bottom", "source": "regions", "color": "#0a0a0a"}
RED = {"name": "red region, centre", "source": "regions", "color": "#dc141e"}


def test_negligible_shares_are_neither_counted_nor_listed():
    # 0.2% of the unit's attribution in "frame": anti-aliased bleed, not a concept it draws
    shares = concept_shares([0.998, 0.002])
    assert [k for k, _ in shares] == [0]
    assert all(share >= MIN_SHARE for _, share in concept_shares([0.5, 0.45, 0.05]))
    named = [{"name": "wheel", "source": "author"}, {"name": "frame", "source": "author"}]
    assert mixed_concepts([0.5, 0.45, 0.05], named + [{"name": "bell"}]) == [
        ("wheel", pytest.approx(0.5)), ("frame", pytest.approx(0.45))]
    assert mixed_concepts([0.95, 0.05], named) == []


def test_regions_of_one_paint_are_one_concept():
    # a one-colour icon drawn as one path across two black regions mixes nothing
    assert mixed_concepts([0.5, 0.5], [BLACK_TOP, BLACK_BOTTOM]) == []
    # black and red are two paints: that is a mix, listed with both shares
    assert [n for n, _ in mixed_concepts([0.6, 0.4], [BLACK_TOP, RED])] == [
        "black region, top", "red region, centre"]
    # named concepts never merge, whatever their colour
    named = [dict(BLACK_TOP, source="author"), dict(BLACK_BOTTOM, source="author")]
    assert len(mixed_concepts([0.5, 0.5], named)) == 2


ONE_COLOUR_ICONS = ["arrows-to-dot", "bars-staggered", "expand", "code", "user-gear"]


@pytest.mark.parametrize("name", ONE_COLOUR_ICONS)
def test_one_colour_icons_get_no_low_purity(corpus_dir, name):
    """These fontawesome icons are one black path each; before the rule each got a
    low-purity diagnostic mixing 3-5 'black region' concepts (purity 0.19-0.42)."""
    from svgloo.lsp.convert import DiagnosticOptions, LineIndex, purity_diagnostics, structure_rows
    from svgloo.structure.analysis import StructureSettings, structure_file

    run = structure_file(str(corpus_dir / "fontawesome" / f"{name}.svg"),
                         StructureSettings(size=192))
    assert len(run.result["concepts"]) >= 2
    assert run.result["units"][0]["purity"] < 0.6      # the raw number is still low
    spans = [(u.start, u.end) for u in run.units.units]
    rows = structure_rows(run.result, spans)
    assert purity_diagnostics(rows, LineIndex(run.doc.text, "utf-16"), DiagnosticOptions()) == []
