"""Scoring units: which elements count, subpath units, and removal edits."""

from __future__ import annotations

import json

from lxml import etree

from svgloo.engine.reading.document import parse_document, load_document
from svgloo.engine.reading.units import (apply_edits, extract_units, removal_edit, text_keeping,
                                         text_without)

from conftest import CORPUS, corpus_files

SVG = """<svg xmlns="http://www.w3.org/2000/svg" \
xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 100 100">
  <defs><path id="p" d="M0 0h1v1z"/><linearGradient id="g"><stop offset="0"/></linearGradient></defs>
  <clipPath id="c"><rect width="50" height="50"/></clipPath>
  <g transform="translate(5 5)" opacity="0.5"><g><rect id="r" width="10" height="10"/></g>
    <text x="1" y="20">a<tspan>b</tspan></text></g>
  <use xlink:href="#p" x="30"/>
  <path id="two" d="M0 0h10v10z m20 0h10v10z"/>
  <symbol id="s"><circle r="3"/></symbol>
  <image width="1" height="1" href="data:image/png;base64,AAAA"/>
</svg>"""


def test_units_are_rendered_leaves_outside_resources():
    us = extract_units(parse_document(SVG, "u.svg"))
    assert [(u.tag, u.kind, u.id) for u in us.units] == [
        ("rect", "element", "r"), ("text", "element", None), ("use", "element", None),
        ("path", "subpath", "two"), ("path", "subpath", "two"), ("image", "element", None)]
    assert [u.index for u in us.units] == list(range(6))


def test_subpath_offsets_are_their_part_of_d():
    doc = parse_document(SVG, "u.svg")
    us = extract_units(doc)
    assert [doc.text[u.start:u.end] for u in us.units if u.kind == "subpath"] == [
        "M0 0h10v10z", "m20 0h10v10z"]


def test_no_subpaths_switch_keeps_paths_whole():
    us = extract_units(parse_document(SVG, "u.svg"), split_subpaths_on=False)
    assert [u.kind for u in us.units].count("subpath") == 0
    assert len(us.units) == 5


def test_removing_an_element_keeps_ancestors_and_defs():
    doc = parse_document(SVG, "u.svg")
    us = extract_units(doc)
    out = text_without(us, {0})
    root = etree.fromstring(out.encode())
    ns = {"s": "http://www.w3.org/2000/svg"}
    assert root.find(".//s:rect[@id='r']", ns) is None
    group = root.find("s:g", ns)
    assert group.get("opacity") == "0.5" and group.get("transform") == "translate(5 5)"
    assert root.find(".//s:linearGradient", ns) is not None
    assert root.find(".//s:clipPath/s:rect", ns) is not None


def test_removing_a_relative_subpath_rewrites_the_next_moveto():
    doc = parse_document(SVG, "u.svg")
    us = extract_units(doc)
    edit = removal_edit(us, 3)
    out = apply_edits(doc.text, [edit])
    assert 'd="M20 0h10v10z"' in out


def test_keeping_one_subpath_makes_it_absolute():
    us = extract_units(parse_document(SVG, "u.svg"))
    assert 'd="M20 0h10v10z"' in text_keeping(us, {4})
    assert "<rect id=\"r\"" not in text_keeping(us, {4})


def test_unit_counts_match_the_corpus_manifest_where_nothing_hides_in_defs(corpus_dir):
    manifest = {m["file"]: m for m in json.loads((CORPUS / "manifest.json").read_text())}
    checked = 0
    for path in corpus_files():
        doc = load_document(path)
        if any(e.tag in ("defs", "clipPath", "mask", "symbol") for e in doc.elements):
            continue  # the manifest counts shapes inside resources too; we do not
        rel = path.relative_to(CORPUS).as_posix()
        us = extract_units(doc)
        assert len(us.units) == manifest[rel]["units_with_subpaths"], rel
        assert len(extract_units(doc, False).units) == manifest[rel]["elements"], rel
        checked += 1
    assert checked > 150
