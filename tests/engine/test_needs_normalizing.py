"""The cheap test for modern values (normalize.needs_normalizing: literal checks on the
lowered text, then one alternative at a time) answers as the one regex it stands for
(normalize._NEEDS, case-insensitive, over the whole text), on texts generated to break
it: pieces near each alternative, in any case, glued with noise, ASCII or not."""

from __future__ import annotations

import random

import pytest

from svgloo.engine.rendering.normalize import _NEEDS, needs_normalizing

from conftest import corpus_files

PIECES = [
    'opacity="50%"', "opacity = '5.5%'", "opacity:1e2%", "opacity: 7 %", 'opacity="50"',
    "fill-opacity:30%", "OPACITY : 3%", "opacity", "%", 'offset="50%"', 'width="100%"',
    "calc(", "CaLc (", "calc", "hsl(", "HSLA(", "hsl (", "hsl", "rgb(0 0 255)", "RGB( 1 2",
    "rgba(1,2,3,50%)", "rgb(1%,2%,3%)", "rgb(1,2,3)", "rgb 1 2", "rgba(1, 2, 3, .5)",
    'fill="#abcd"', "FILL='#ABCDEF12'", "stroke:#1234", "stroke : #12345678", "color:#abc",
    'stop-color="#abcd"', 'fill="#abcde"', 'fill="#abcd-x"', 'href="#abcd"', "url(#abcd)",
    "#abcd", "#12345678", "fill=", "stroke=", "color:", "fill= '", "  \t\n", '"', "'",
    "<rect/>", "ſtroke:#abcd", "opacıty:5%", "K", "İ", "ß", "é",
]
NOISE = "abcdefxyz#%:=()'\" \n-_.0123456789"


def _generated(rng: random.Random, ascii_only: bool) -> str:
    parts = []
    for _ in range(rng.randint(1, 8)):
        piece = rng.choice(PIECES) if rng.random() < 0.6 else \
            "".join(rng.choice(NOISE) for _ in range(rng.randint(0, 6)))
        if rng.random() < 0.3:
            piece = "".join(c.upper() if rng.random() < 0.5 else c for c in piece)
        if ascii_only and not piece.isascii():
            continue
        parts.append(piece)
    return "".join(parts)


@pytest.mark.parametrize("ascii_only", [True, False], ids=["ascii", "any"])
def test_cheap_test_answers_as_the_regex_on_generated_texts(ascii_only):
    rng = random.Random(37 + ascii_only)
    texts = [_generated(rng, ascii_only) for _ in range(20000)]
    wrong = [t for t in texts if needs_normalizing(t) != (_NEEDS.search(t) is not None)]
    assert not wrong, wrong[:5]
    # the generator reaches both answers, and each alternative
    assert 0.1 < sum(_NEEDS.search(t) is not None for t in texts) / len(texts) < 0.9
    for piece in ['opacity="50%"', "calc(", "hsl(", "rgb(0 0 255)", "rgba(1,2,3,50%)",
                  'fill="#abcd"', "stroke:#12345678"]:
        assert needs_normalizing(f"<svg {piece.upper()}/>"), piece


def test_cheap_test_answers_as_the_regex_on_the_corpus_and_as_bytes():
    files = corpus_files()
    if not files:
        pytest.skip("the shared corpus (../shared/corpus) is not present")
    for path in files:
        data = path.read_bytes()
        text = data.decode("utf-8", "replace")
        assert needs_normalizing(data) == needs_normalizing(text) == \
            (_NEEDS.search(text) is not None), path.name
