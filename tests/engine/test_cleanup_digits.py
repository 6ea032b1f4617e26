"""Digits no reader keeps (engine cleanup/browser_digits.py), without a browser: the
float32 arithmetic against exact rational arithmetic, the respelling against the path
grammar, and every new spelling read back by each reader. Chromium's own reading is held
against the emulation in tests/test_browser_digits.py."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from svgloo.engine.fixing.cleanup.browser_digits import (blink, correct, edits, f32, fma32,
                                                         fewest_digits, respell)
from svgloo.engine.fixing.cleanup.edits import Context, apply
from svgloo.engine.fixing.cleanup.path_short import PathDataError, _tokens
from svgloo.engine.reading.document import parse_document


def _exact_f32(value: Fraction) -> float:
    """The float32 nearest to an exact rational, ties to even: searched among the float32
    neighbours of its double, compared exactly (the oracle fma32 is held against)."""
    guess = np.float32(float(value))
    candidates = [np.nextafter(guess, np.float32(-np.inf)), guess,
                  np.nextafter(guess, np.float32(np.inf))]
    best = min(candidates, key=lambda c: (abs(Fraction(float(c)) - value),
                                          int(np.float32(c).view(np.uint32)) & 1))
    return float(best)


def _random_f32(rng: random.Random) -> float:
    return float(np.float32(rng.uniform(-1, 1) * 10.0 ** rng.randint(-8, 8)))


def test_fma32_rounds_once_like_the_exact_sum():
    rng = random.Random(1)
    cases = [(_random_f32(rng), float(rng.randint(0, 9)), _random_f32(rng))
             for _ in range(3000)]
    # products that land half way between two float32s once added (the double's own
    # rounding must not decide them)
    for _ in range(500):
        c = float(np.float32(rng.uniform(1, 2)))
        ulp = float(np.spacing(np.float32(c)))
        cases.append((ulp / 2, 1.0 + 2.0 ** -40, c))
        cases.append((ulp / 2, 1.0 - 2.0 ** -40, c))
    for a, b, c in cases:
        a, b = float(np.float32(a)), float(np.float32(b))
        assert fma32(a, b, c) == _exact_f32(Fraction(a) * Fraction(b) + Fraction(c)), (a, b, c)


def test_plain_float32_arithmetic_is_numpys():
    rng = random.Random(2)
    for _ in range(2000):
        a, b = np.float32(_random_f32(rng)), np.float32(_random_f32(rng))
        assert f32(float(a) * float(b)) == float(a * b)
        assert f32(float(a) + float(b)) == float(a + b)


def _numbers(rng: random.Random, count: int) -> list[str]:
    out = []
    for _ in range(count):
        whole = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 9)))
        fraction = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 18)))
        text = (whole or "0") + ("." + fraction if fraction else "")
        if rng.random() < 0.3:
            text = "-" + text
        out.append(text)
    return out


def test_every_new_spelling_reads_as_the_same_float_in_every_reader():
    rng = random.Random(3)
    changed = 0
    for text in _numbers(rng, 3000):
        new = fewest_digits(text)
        assert len(new) <= len(text)
        assert blink(new) == blink(text) and blink(new, True) == blink(text, True)
        assert correct(new) == correct(text)
        # correct(), independently: numpy's own reading of both
        assert np.float32(float(new)) == np.float32(float(text))
        changed += new != text
    assert changed > 500  # most numbers of 9 and more digits lose some


def test_float32s_own_digits_stay():
    # a number float32 needs every digit of is left as it is
    for text in ["12.345679", "0.1", "3.1415927", "-7.25", "100", "1e-7"]:
        assert fewest_digits(text) == text
    assert fewest_digits("12.345678901234567") == "12.345679"
    assert fewest_digits("0.30000001192092896") == ".3"
    assert fewest_digits("100.00000001") == "100"


def _numbers_of(d: str) -> list[str]:
    return [a for _, args in _tokens(d) for a in args]


@pytest.mark.parametrize("d", [
    # arc flags glued to the next number: "0112.3456789012" is flag 0, flag 1, 12.34...
    "M10 10a25 25 0 0112.3456789012 5.00000000001z",
    # ``1.0000000001.5`` is 1.0000000001 and .5: once the first is ``1``, a blank
    "M1.0000000001.5L3.12345678912-4.98765432198",
    # a plus sign short() drops would glue two numbers
    "M1.5+2.1234567890h-0.000012345678901V7.000000000000001",
    "m0 0 1.23456789012 2.34567890123 3.45678901234 4.56789012345",
])
def test_respelled_path_data_reads_as_the_same_steps(d):
    new = respell(d)
    before, after = _tokens(d), _tokens(new)
    assert [letter for letter, _ in before] == [letter for letter, _ in after]
    for (letter, old_args), (_, new_args) in zip(before, after):
        for k, (a, b) in enumerate(zip(old_args, new_args)):
            if letter in "Aa" and k in (3, 4):
                assert a == b  # arc flags as written
            else:
                assert blink(a) == blink(b) and correct(a) == correct(b), (a, b)
    assert len(new) < len(d)


def test_points_are_respelled_number_by_number():
    assert respell("1.23456789012,2.34567890123 3.45678901234", path=False) == \
        "1.2345679,2.3456789 3.456789"


def test_path_data_that_does_not_parse_is_refused():
    with pytest.raises(PathDataError):
        respell("M1 2 3")


SVG = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">'
       '<path d="M10.1234567891 20.7654321098L41.2345678901 22.9876543210z"/>'
       '<polygon points="1.12345678901,2 3,4.98765432101 5,6"/>'
       '<path d="M1 2L3 4z"/><rect x="1.12345678901" width="2" height="2"/></svg>')


def test_edits_respell_paths_and_points_only():
    root = parse_document(SVG, "t.svg").root
    ctx = Context.of(root)
    found = edits(ctx)
    assert [(e.job, ctx.nodes[e.node].tag.split("}")[1]) for e in found] == \
        [("digits", "path"), ("digits", "polygon")]
    out = apply(root, found)
    path, polygon, _, rect = list(out)
    assert path.get("d") == "M10.123457 20.765432L41.23457 22.987654z"
    assert polygon.get("points") == "1.1234568,2 3,4.987654 5,6"
    assert rect.get("x") == "1.12345678901"  # lengths go through CSS: left alone


def test_an_edit_respells_what_it_finds_when_applied():
    """It composes with another job's spelling of the same path data applied before it."""
    root = parse_document(SVG, "t.svg").root
    ctx = Context.of(root)
    [digits, _] = edits(ctx)
    from svgloo.engine.fixing.cleanup.edits import Edit

    other = Edit("paths", digits.node, "change",
                 lambda node: node.set("d", "M10.1234567891 20.7654321098 41.23456789 1z"))
    out = apply(root, [other, digits])
    assert list(out)[0].get("d") == "M10.123457 20.765432 41.23457 1z"


def test_respelling_never_joins_numbers_differently():
    rng = random.Random(4)
    for _ in range(300):
        values = _numbers(rng, 6)
        d = "M" + "".join(v if i == 0 or v.startswith("-") or v.startswith(".")
                          else " " + v for i, v in enumerate(values))
        if len(values) % 2:
            continue
        new = respell(d)
        assert len(_numbers_of(new)) == len(_numbers_of(d)), (d, new)
        assert [blink(a) for a in _numbers_of(d)] == [blink(b) for b in _numbers_of(new)]


def test_exponents_are_read_as_blink_reads_them():
    # the mantissa in float32, then times (float) pow(10, exponent)
    assert blink("-2.5E-2") == f32(-2.5 * f32(0.01))
    assert blink("1e3") == 1000.0
    assert blink("1e39") is None  # past max_exponent10: Blink refuses the number
    assert fewest_digits("1.00000000001e-7") == "1e-7"
