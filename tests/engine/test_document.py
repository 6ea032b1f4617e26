"""Parsing: exact element spans on every corpus file, and clear errors for bad input."""

from __future__ import annotations

import gzip

import pytest
from lxml import etree

from svgloo.engine.document import load_document, parse_document
from svgloo.engine.errors import InputError, LimitError
from svgloo.engine.limits import Limits

from conftest import corpus_files


def _signature(el) -> list:
    """Tag, attributes and element children, recursively (comments/PIs skipped)."""
    return [el.tag, sorted(el.attrib.items()),
            [_signature(c) for c in el if isinstance(c.tag, str)]]


@pytest.mark.slow
def test_cutting_any_span_leaves_the_tree_minus_that_element(corpus_dir):
    for path in corpus_files():
        doc = load_document(path)
        # every element except the root; a sample of elements keeps this fast on big files
        step = max(1, len(doc.elements) // 25)
        for span in doc.elements[1::step]:
            cut = doc.text[:span.start] + doc.text[span.end:]
            after = etree.fromstring(cut.encode())
            expected = etree.fromstring(doc.text.encode())
            node = [e for e in expected.iter() if isinstance(e.tag, str)][span.index]
            node.getparent().remove(node)
            assert _signature(after) == _signature(expected), (path, span)


def test_spans_start_at_the_tag_and_end_after_its_close(corpus_dir):
    for path in corpus_files():
        doc = load_document(path)
        for span, node in zip(doc.elements, doc.nodes):
            text = doc.text[span.start:span.end]
            assert text.startswith("<") and text.endswith(">")
            assert text.endswith("/>") or text.rstrip().endswith(">")
            local = etree.QName(node).localname
            assert text[1:].split()[0].split("/")[0].split(">")[0].split(":")[-1] == local


def test_positions_are_zero_based_code_points():
    text = '<svg xmlns="http://www.w3.org/2000/svg">\n<title>🐱 cat</title>\r\n  <rect width="1"/></svg>'
    doc = parse_document(text, "t.svg")
    rect = doc.elements[2]
    assert doc.position(rect.start) == (2, 2)
    assert doc.offset(2, 2) == rect.start
    assert doc.position(doc.elements[1].start) == (1, 0)


def test_bytes_with_declared_encoding_are_decoded():
    text = '<?xml version="1.0" encoding="ISO-8859-1"?><svg xmlns="http://www.w3.org/2000/svg"><title>caf\u00e9</title><rect/></svg>'
    doc = parse_document(text.encode("latin-1"), "latin.svg")
    assert "café" in doc.text
    assert doc.span_text(2) == "<rect/>"


def test_svgz_is_inflated_and_a_bomb_is_refused(tmp_path):
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>'
    assert len(parse_document(gzip.compress(svg), "a.svgz").elements) == 2
    bomb = gzip.compress(b"<svg>" + b" " * (3 * 1024 * 1024) + b"</svg>")
    with pytest.raises(LimitError, match="inflates"):
        parse_document(bomb, "bomb.svgz", Limits(max_inflated_bytes=1024 * 1024))


@pytest.mark.parametrize("data, message", [
    (b"<svg><rect></svg>", "malformed XML"),
    (b"", "malformed XML"),
    (b"<html><body/></html>", "not an SVG file"),
    (b'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x "boom">]><svg>&x;</svg>', "entity"),
])
def test_bad_input_is_an_input_error_naming_the_file(data, message):
    with pytest.raises(InputError) as info:
        parse_document(data, "bad.svg")
    assert message in str(info.value)
    assert str(info.value).startswith("bad.svg")


def test_billion_laughs_is_not_expanded():
    data = (b'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa">'
            b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><svg>&b;</svg>')
    with pytest.raises(InputError):
        parse_document(data, "laughs.svg")


def test_external_entities_are_never_read(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    data = (f'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY s SYSTEM "file://{secret}">]>'
            '<svg xmlns="http://www.w3.org/2000/svg"><text>&s;</text></svg>').encode()
    with pytest.raises(InputError):
        parse_document(data, "xxe.svg")


def test_element_count_limit():
    data = ("<svg xmlns='http://www.w3.org/2000/svg'>" + "<rect/>" * 50 + "</svg>").encode()
    with pytest.raises(LimitError, match="elements"):
        parse_document(data, "many.svg", Limits(max_elements=20))
