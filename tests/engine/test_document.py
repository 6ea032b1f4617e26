"""Parsing: exact element spans on every corpus file, and clear errors for bad input."""

from __future__ import annotations

import codecs
import gzip

import pytest
from lxml import etree

from svgloo.engine.reading.document import load_document, parse_document
from svgloo.engine.errors import InputError, LimitError
from svgloo.engine.limits import Limits
from svgloo.engine.scoring.score import score_document

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
    (b"", "empty file"),
    (b"a drawing of a cat\n", "not SVG (looks like text)"),
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


# -- UTF-16 files --------------------------------------------------------------------------

UTF16_SOURCE = "twemoji/1f387.svg"
# characters beyond ASCII and beyond the BMP (two UTF-16 code units), so that offsets are
# seen to count characters of the decoded text, not bytes or code units
MARK = "<!-- caf\u00e9 \U0001F3B1 -->\n"


def _comparable(result: dict, offsets: bool = True) -> dict:
    drop = set() if offsets else {"offsets", "range"}
    return {"full_score": result["full_score"], "summary": result["summary"],
            "units": [{k: v for k, v in u.items() if k not in drop} for u in result["units"]]}


@pytest.mark.parametrize("codec, bom", [("utf-16-le", codecs.BOM_UTF16_LE),
                                        ("utf-16-be", codecs.BOM_UTF16_BE)],
                         ids=["little-endian", "big-endian"])
def test_utf16_file_with_bom_scores_as_its_utf8_original(corpus_dir, render_pool, tmp_path,
                                                         codec, bom):
    text = MARK + (corpus_dir / UTF16_SOURCE).read_text(encoding="utf-8")
    utf8, utf16 = tmp_path / "utf8.svg", tmp_path / "utf16.svg"
    utf8.write_bytes(text.encode("utf-8"))
    utf16.write_bytes(bom + text.encode(codec))
    doc8, doc16 = load_document(utf8), load_document(utf16)
    assert doc16.text == doc8.text == text
    assert doc16.elements == doc8.elements
    want = score_document(doc8, pool=render_pool).result
    got = score_document(doc16, pool=render_pool).result
    assert _comparable(got) == _comparable(want)


def test_utf16_file_named_by_its_declaration_scores_as_utf8(corpus_dir, render_pool, tmp_path):
    """No byte-order mark, big-endian: the declaration and the '<' byte pattern decide; the
    renderer is handed UTF-8 bytes and must not believe the declaration."""
    body = (corpus_dir / UTF16_SOURCE).read_text(encoding="utf-8")
    declared = '<?xml version="1.0" encoding="UTF-16"?>\n' + MARK + body
    path = tmp_path / "declared.svg"
    path.write_bytes(declared.encode("utf-16-be"))
    doc = load_document(path)
    assert doc.text == declared
    want = score_document(parse_document((MARK + body).encode("utf-8"), "plain.svg"),
                          pool=render_pool).result
    got = score_document(doc, pool=render_pool).result
    assert _comparable(got, offsets=False) == _comparable(want, offsets=False)
    shift = len(declared) - len(MARK + body)
    assert [u["offsets"] for u in got["units"]] == [[a + shift, b + shift] for a, b in
                                                   (u["offsets"] for u in want["units"])]


# -- nesting ---------------------------------------------------------------------------------

def _nested(levels: int) -> bytes:
    """An <svg> holding ``levels`` nested groups around one rect: levels + 2 deep."""
    return ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 4 4">' + "<g>" * levels
            + '<rect width="2" height="2"/>' + "</g>" * levels + "</svg>").encode()


def test_deep_nesting_is_refused_with_svgloos_limit_in_its_own_words():
    with pytest.raises(LimitError) as info:
        parse_document(_nested(300), "deep.svg")
    message = str(info.value)
    assert message.startswith("deep.svg: ")
    assert f"more than {Limits().max_nesting_depth} levels deep" in message
    assert "svgloo's nesting limit" in message
    assert "XML_PARSE_HUGE" not in message
    # the limit is the deepest document that still parses (svg + 254 groups + rect)
    assert len(parse_document(_nested(Limits().max_nesting_depth - 2), "ok.svg").elements) \
        == Limits().max_nesting_depth
    with pytest.raises(LimitError, match="more than 256 levels"):
        parse_document(_nested(Limits().max_nesting_depth - 1), "deep.svg")


def test_a_smaller_nesting_limit_is_applied_after_parsing():
    assert len(parse_document(_nested(8), "ok.svg", Limits(max_nesting_depth=10)).elements) == 10
    with pytest.raises(LimitError, match="more than 10 levels deep"):
        parse_document(_nested(9), "deep.svg", Limits(max_nesting_depth=10))


@pytest.mark.timeout(120)
def test_start_tags_end_where_a_character_walk_ends_them():
    """scan_element_spans finds a start tag's end with a regular expression; it agrees with
    a walk of the characters (quotes hold '>', the other quote, or nothing) on random tags,
    and fails on an unterminated one (linear: milliseconds, where a backtracking pattern
    would run past the timeout)."""
    import random

    from svgloo.engine.reading.document import _TAG_REST, _end_of_markup
    from svgloo.engine.errors import InputError

    def walk(text: str):  # the character walk the scanner used for start tags (and
        try:               # still uses for a DOCTYPE's internal subset)
            return _end_of_markup(text, 0, "t.svg", "start tag")
        except InputError:
            return None

    rng = random.Random(5)
    for _ in range(3000):
        body = "".join(rng.choice(" a=\"'>/x") for _ in range(rng.randint(0, 24)))
        m = _TAG_REST.match(body)
        assert (m.end() if m else None) == walk(body), body
    assert _TAG_REST.match('d="' + "1 2 " * 200_000) is None  # never closed, 800 KB
    assert _TAG_REST.match("a " * 400_000) is None  # no quote, no end
