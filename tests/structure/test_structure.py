"""svgloo structure end to end: real SVGs rendered through the engine, the CLI's JSON
contract, concept sources and grounders. Expected values are worked out by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from svgloo.cli import main
from svgloo.structure.analysis import StructureSettings, structure_file, structure_text

SIZE = 100  # viewBox 0 0 100 100 rendered at 100 px: one pixel per user unit

SVG_HEAD = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100" width="100" height="100">'


def write_mask(folder, name, boxes):
    a = np.zeros((SIZE, SIZE), np.uint8)
    for y0, y1, x0, x1 in boxes:
        a[y0:y1, x0:x1] = 255
    Image.fromarray(a, "L").save(folder / f"{name}.png")


def cli_json(capsys, *argv) -> tuple[int, dict | None]:
    rc = main(["structure", *map(str, argv), "--json"])
    out = capsys.readouterr().out
    return rc, (json.loads(out) if rc == 0 else None)


# --- compound path over two concepts -----------------------------------------------------

TWO_SQUARES = SVG_HEAD + """
  <path d="M10 10 H40 V40 H10 Z M60 10 H90 V40 H60 Z" fill="#c00"/>
  <rect x="10" y="60" width="80" height="30" fill="#00c"/>
</svg>"""


@pytest.fixture()
def two_squares(tmp_path):
    svg = tmp_path / "two.svg"
    svg.write_text(TWO_SQUARES)
    masks = tmp_path / "masks"
    masks.mkdir()
    write_mask(masks, "left-square", [(10, 40, 10, 40)])
    write_mask(masks, "right-square", [(10, 40, 60, 90)])
    write_mask(masks, "bottom-bar", [(60, 90, 10, 90)])
    return svg, masks


def test_compound_path_is_one_impure_unit(two_squares, render_pool):
    svg, masks = two_squares
    s = StructureSettings(concepts=("left square", "right square", "bottom bar"),
                          masks_dir=str(masks), size=SIZE)
    run = structure_file(str(svg), s, pool=render_pool)
    r = run.result
    assert r["concept_source"] == "author" and r["grounder"] == "masks"
    assert r["unit_kind"] == "element" and len(r["units"]) == 2
    # the path's footprint is the two 30x30 squares: half its mass under each mask
    assert r["attribution"][0] == pytest.approx([0.5, 0.5, 0.0], abs=0.01)
    assert r["units"][0]["purity"] == pytest.approx(0.5, abs=0.01)
    assert r["units"][1]["purity"] == pytest.approx(1.0, abs=0.01)
    assert r["metrics"]["purity"] == pytest.approx(0.75, abs=0.01)
    assert r["metrics"]["coverage"] == pytest.approx(2 / 3, abs=1e-6)
    assert run.attribution.shape == (2, 3) and run.heatmaps.shape == (3, SIZE, SIZE)

    sub = structure_file(str(svg), s.with_(subpaths=True), pool=render_pool).result
    assert sub["unit_kind"] == "subpath" and len(sub["units"]) == 3
    assert sub["metrics"]["purity"] == pytest.approx(1.0, abs=0.01)
    assert sub["metrics"]["coverage"] == 1.0
    assert sub["metrics"]["compactness"] == 1.0
    assert [c["units"] for c in sub["concepts"]] == [[0], [1], [2]]


def test_concepts_from_project_config(two_squares, render_pool):
    svg, masks = two_squares
    (svg.parent / "svgloo.toml").write_text(
        '[concepts]\n"two.svg" = ["left square", "right square", "bottom bar"]\n')
    r = structure_file(str(svg), StructureSettings(masks_dir=str(masks), size=SIZE),
                       pool=render_pool).result
    assert r["concept_source"] == "author"
    assert [c["name"] for c in r["concepts"]] == ["left square", "right square", "bottom bar"]
    assert any("svgloo.toml" in n for n in r["notes"])


def test_author_concepts_without_grounding_is_a_clear_error(two_squares, capsys):
    from svgloo.plugins.clipseg_grounder import ClipSegGrounder

    if ClipSegGrounder.weights_available():
        pytest.skip("CLIPSeg weights are cached here")
    svg, _ = two_squares
    rc = main(["structure", str(svg), "--concept", "left square", "--size", str(SIZE)])
    assert rc == 2
    err = capsys.readouterr().err
    assert "two.svg" in err and "--masks" in err


# --- locality ----------------------------------------------------------------------------

def five_bars(order):
    """Five 10-wide bars at x = 5, 25, 45, 65, 85, written in the given z-order."""
    rects = [f'<rect x="{5 + 20 * k}" y="10" width="10" height="80" fill="#333"/>'
             for k in order]
    return SVG_HEAD + "".join(rects) + "</svg>"


@pytest.mark.parametrize("order, packed, literal", [
    # "ends" = bars 0 and 4, at z 0 and N-1: D = D_max = (N-1)/2 = 2 -> 0 both ways
    ((0, 1, 2, 3, 4), 0.0, 0.0),
    # the same bars adjacent in z-order: D = D_min -> packed 1; literal 1 - 0.5 / 2
    ((0, 4, 1, 2, 3), 1.0, 0.75),
])
def test_locality_of_split_concept(tmp_path, render_pool, order, packed, literal):
    masks = tmp_path / "masks"
    masks.mkdir()
    write_mask(masks, "ends", [(10, 90, 5, 15), (10, 90, 85, 95)])
    write_mask(masks, "middle", [(10, 90, 25, 75)])
    s = StructureSettings(concepts=("ends", "middle"), masks_dir=str(masks), size=SIZE)
    r = structure_text(five_bars(order), str(tmp_path / "bars.svg"), s, pool=render_pool).result
    ends, middle = r["per_concept"]
    assert ends["locality"] == pytest.approx(literal, abs=1e-6)
    assert ends["locality_packed"] == pytest.approx(packed, abs=1e-6)
    # middle: three contiguous equal bars, MAD 2/3 -> literal 1 - (2/3) / 2
    assert middle["locality"] == pytest.approx(2 / 3, abs=1e-6)
    assert middle["locality_packed"] == pytest.approx(1.0)
    # two equal bars: Herfindahl 1/2 = 1/n -> compactness 0; three equal bars likewise
    assert ends["compactness"] == pytest.approx(0.0, abs=0.01)
    assert r["metrics"]["purity"] == pytest.approx(1.0, abs=0.01)


# --- labels ------------------------------------------------------------------------------

LABELLED = SVG_HEAD.replace("<svg ",
                            '<svg xmlns:inkscape="http://www.inkscape.org/namespaces/inkscape" ') + """
  <title>a landscape</title>
  <g id="sun"><circle cx="80" cy="20" r="12" fill="#fc0"/></g>
  <g><title>house</title>
    <rect x="10" y="50" width="30" height="40" fill="#a33"/>
    <path id="path12" d="M50 90 V60 H60 V90 Z" fill="#733"/>
  </g>
  <g inkscape:label="Layer 1"><g inkscape:label="tree">
    <rect x="75" y="60" width="6" height="30" fill="#630"/>
  </g></g>
  <defs><g id="unused-shape"><rect width="5" height="5"/></g></defs>
</svg>"""


def test_labels_source_and_grounder(tmp_path, capsys):
    svg = tmp_path / "scene.svg"
    svg.write_text(LABELLED)
    rc, r = cli_json(capsys, svg, "--size", SIZE)
    assert rc == 0
    assert r["schema"] == "svgloo.structure/1"
    assert r["concept_source"] == "labels" and r["grounder"] == "labels"
    assert [c["name"] for c in r["concepts"]] == ["sun", "house", "tree"]
    assert [c["units"] for c in r["concepts"]] == [[0], [1, 2], [3]]
    m = r["metrics"]
    assert m["purity"] == pytest.approx(1.0, abs=0.01)
    assert m["coverage"] == 1.0
    # house = units 1, 2 (adjacent, equal weights) of N = 4: 1 - 0.5 / 1.5 literally;
    # sun and tree are single units (1.0); the packed reading gives 1.0 for all three
    assert m["locality"] == pytest.approx((1 + 2 / 3 + 1) / 3, abs=0.01)
    assert r["readings"]["locality_packed"] == pytest.approx(1.0)
    # house: two units, each entirely under the house heatmap, so A = 1 for both (the
    # attribution is footprint-normalised, not an area): shares 1/2 each, H = 1/n -> 0
    house = r["per_concept"][1]
    assert r["attribution"][1][1] == pytest.approx(1.0, abs=0.02)
    assert r["attribution"][2][1] == pytest.approx(1.0, abs=0.02)
    assert house["compactness"] == pytest.approx(0.0, abs=0.02)
    assert m["compactness"] == pytest.approx((1 + 0 + 1) / 3, abs=0.01)


def test_human_output_and_plots(tmp_path, capsys):
    svg = tmp_path / "scene.svg"
    svg.write_text(LABELLED)
    plots = tmp_path / "plots"
    rc = main(["structure", str(svg), "--size", str(SIZE), "--plots", str(plots)])
    out = capsys.readouterr().out
    assert rc == 0
    for word in ("labels source", "purity", "coverage", "compactness", "locality",
                 "crosstalk", "house", "primary concept"):
        assert word in out
    for name in ("attribution.png", "concept-heatmaps.png", "concept-units.png"):
        with Image.open(plots / name) as im:
            assert im.size[0] > 100


# --- regions on the corpus, the CLI contract -------------------------------------------

def test_regions_on_unlabelled_corpus_file(corpus_dir, capsys):
    from svgloo.plugins.vlm_concepts import VlmConceptSource

    f = corpus_dir / "twemoji" / "1f314.svg"
    auto = () if not VlmConceptSource.weights_available() else ("--concepts", "regions")
    rc, r = cli_json(capsys, f, "--size", 192, *auto)
    assert rc == 0
    assert r["concept_source"] == "regions" and r["grounder"] == "regions"
    k, u = len(r["concepts"]), len(r["units"])
    assert 1 <= k <= 8
    assert len(r["attribution"]) == u and all(len(row) == k for row in r["attribution"])
    assert set(r["metrics"]) == {"purity", "coverage", "compactness", "locality", "crosstalk"}
    for v in r["metrics"].values():
        assert v is not None and 0.0 <= v <= 1.0
    assert r["definitions"] == "paper"
    for row in r["units"]:
        assert set(row) >= {"index", "active", "primary", "purity"}
        if row["active"]:
            assert row["primary"] == int(np.argmax(r["attribution"][row["index"]]))
            assert row["index"] in r["concepts"][row["primary"]]["units"]
        else:
            assert row["primary"] is None and sum(r["attribution"][row["index"]]) < 0.01
    assert [p["name"] for p in r["per_concept"]] == [c["name"] for c in r["concepts"]]
    for c in r["concepts"]:
        assert c["source"] == "regions" and "region" in c["name"]


def test_lica_definitions_on_corpus_file(corpus_dir, capsys):
    f = corpus_dir / "twemoji" / "1f314.svg"
    rc, paper = cli_json(capsys, f, "--size", 192, "--concepts", "regions")
    rc2, lica = cli_json(capsys, f, "--size", 192, "--concepts", "regions",
                         "--definitions", "lica")
    assert rc == rc2 == 0
    assert lica["definitions"] == "lica" and "lica_extra" in lica
    # lica attribution is the raw overlap: the paper's row times the footprint mass
    i = next(r["index"] for r in paper["units"] if r["active"])
    ratio = np.array(lica["attribution"][i]) / np.maximum(paper["attribution"][i], 1e-9)
    nz = np.array(paper["attribution"][i]) > 1e-3
    assert np.allclose(ratio[nz], ratio[nz][0], rtol=1e-3) and ratio[nz][0] > 1


def test_no_concepts_exits_zero_with_nulls(tmp_path, capsys):
    svg = tmp_path / "plain.svg"
    svg.write_text(SVG_HEAD + '<rect x="10" y="10" width="50" height="50"/></svg>')
    rc, r = cli_json(capsys, svg, "--concepts", "labels", "--size", SIZE)
    assert rc == 0
    assert r["concepts"] == [] and r["per_concept"] == []
    assert r["metrics"] == {k: None for k in
                            ("purity", "coverage", "compactness", "locality", "crosstalk")}
    assert r["units"][0]["primary"] is None
    blank = tmp_path / "blank.svg"
    blank.write_text(SVG_HEAD + "</svg>")
    rc = main(["structure", str(blank), "--size", str(SIZE)])
    assert rc == 0
    assert "no concepts found" in capsys.readouterr().out


def test_malformed_file_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.svg"
    bad.write_text("<svg xmlns='http://www.w3.org/2000/svg'><rect></svg>")
    assert main(["structure", str(bad), "--json"]) == 2
    assert "bad.svg" in capsys.readouterr().err


def test_labels_heatmaps_account_for_occlusion(tmp_path, render_pool):
    # an eye drawn over a head: the head's own alpha covers the eye, but where the eye is
    # drawn the picture shows the eye, so the eye is the eye element's primary concept
    svg = SVG_HEAD + """
      <g id="head"><circle cx="50" cy="50" r="40" fill="#fc9"/></g>
      <g id="eye"><circle cx="35" cy="40" r="6" fill="#222"/></g>
      <g id="mouth"><rect x="35" y="65" width="30" height="6" fill="#a33"/></g></svg>"""
    r = structure_text(svg, str(tmp_path / "face.svg"), StructureSettings(size=SIZE),
                       pool=render_pool).result
    assert [c["name"] for c in r["concepts"]] == ["head", "eye", "mouth"]
    assert [u["primary"] for u in r["units"]] == [0, 1, 2]
    assert r["metrics"]["coverage"] == 1.0
    assert r["units"][1]["purity"] > 0.9


# --- the paper's grounding rule ------------------------------------------------------------

def test_mask_rule_boundaries():
    from svgloo.plugins.grounders import mask_accepted

    assert mask_accepted(None, 0.99)            # the user's own mask: always used
    assert mask_accepted(0.31, 0.5)
    assert not mask_accepted(0.3, 0.5)          # score must be > 0.3
    assert mask_accepted(0.9, 0.005) and mask_accepted(0.9, 0.95)
    assert not mask_accepted(0.9, 0.004) and not mask_accepted(0.9, 0.951)


def test_masks_grounder_takes_concepts_from_mask_names(two_squares, capsys):
    svg, masks = two_squares
    rc, r = cli_json(capsys, svg, "--grounder", "masks", "--masks", masks, "--size", SIZE)
    assert rc == 0
    assert [c["name"] for c in r["concepts"]] == ["bottom-bar", "left-square", "right-square"]
    # the rect is wholly under bottom-bar; the compound path half under each square
    assert r["attribution"][1] == pytest.approx([1.0, 0.0, 0.0], abs=0.01)
    assert r["attribution"][0] == pytest.approx([0.0, 0.5, 0.5], abs=0.01)


def test_scored_masks_follow_the_rule(two_squares, render_pool, monkeypatch):
    from svgloo.engine.errors import ConfigError
    from svgloo.structure import analysis

    svg, masks = two_squares
    s = StructureSettings(concepts=("left square", "right square", "bottom bar"),
                          masks_dir=str(masks), size=SIZE)
    # all scores pass: the masks are used as they are
    (masks / "scores.json").write_text('{"left-square": 0.9, "right-square": 0.31, '
                                       '"bottom-bar": 0.8}')
    r = structure_file(str(svg), s, pool=render_pool).result
    assert r["attribution"][0] == pytest.approx([0.5, 0.5, 0.0], abs=0.01)
    # right-square's score fails; without CLIPSeg that is a clear error naming it
    (masks / "scores.json").write_text('{"left-square": 0.9, "right-square": 0.2}')
    monkeypatch.setattr(analysis, "_weights_available", lambda group, name: False)
    with pytest.raises(ConfigError, match="right square.*score 0.2"):
        structure_file(str(svg), s, pool=render_pool)

    # with CLIPSeg (a stand-in that grounds every concept on the left half), only the
    # rejected concept is re-grounded
    class HalfGrounder:
        calls = []

        def heatmaps(self, doc, render, concepts, options=None):
            self.calls.append([c.name for c in concepts])
            out = np.zeros((len(concepts),) + render.shape[:2], np.float32)
            out[:, :, :50] = 1.0
            return out

    fake = HalfGrounder()
    real_plugin = analysis._plugin
    monkeypatch.setattr(analysis, "_weights_available", lambda group, name: True)
    monkeypatch.setattr(analysis, "_plugin", lambda group, name, device=None: fake
                        if name == "clipseg" else real_plugin(group, name, device))
    run = structure_file(str(svg), s, pool=render_pool)
    assert fake.calls == [["right square"]]
    assert run.heatmaps[1][:, :50].min() == 1.0 and run.heatmaps[1][:, 50:].max() == 0.0
    assert any("CLIPSeg" in n and "right square" in n for n in run.result["notes"])
    # a mask covering the whole render fails the area rule even with a high score
    write_mask(masks, "bottom-bar", [(0, 100, 0, 100)])
    (masks / "scores.json").write_text('{"bottom-bar": 0.99}')
    fake.calls.clear()
    structure_file(str(svg), s, pool=render_pool)
    assert fake.calls == [["bottom bar"]]


def test_auto_prefers_supplied_masks_over_clipseg(two_squares, render_pool, monkeypatch):
    from svgloo.structure import analysis

    svg, masks = two_squares
    monkeypatch.setattr(analysis, "_weights_available", lambda group, name: True)
    s = StructureSettings(concepts=("left square",), masks_dir=str(masks), size=SIZE)
    r = structure_file(str(svg), s, pool=render_pool).result
    assert r["grounder"] == "masks" and "preferred" in r["grounder_reason"]
