"""Digits no browser reads: numbers of path data and point lists spelled with the fewest
digits that every reader still turns into the very same float.

Browsers and resvg keep path coordinates in single precision (float32): a number written
with 15 digits (``12.345678901234567``, as Inkscape and many exporters write them) is read
as a float32 that a spelling of 8 or 9 digits gives just as well. Where each reader gets
the same float32 from the shorter spelling, it draws the same picture, bit for bit, at
every size and in every embedding: this is not a rounding that a proof has to catch at
the right size (device_rounding.py), it is the same input to the renderer.

Which float a reader gets is the reader's own business, so each is followed exactly:

- **Chromium** (Blink's ``GenericParseNumber`` in ``svg_parser_utilities.cc``, the parser
  of path data and point lists) does not round correctly: it builds the number in float32
  arithmetic, digit by digit (the integer part from the right, the fraction with a
  running ``frac *= 0.1f``), then multiplies by ``(float) pow(10, exponent)``. ``blink``
  below repeats that in float32, operation by operation, once with every multiply-add
  rounded twice (x86-64 builds) and once fused (a compiler may contract ``a += b * c`` to
  an FMA, as arm64 builds can); a spelling must give the same float both ways.
  tests/test_browser_digits.py holds the emulation against a real Chromium on thousands
  of generated numbers.
- **resvg** and Firefox read a double (correctly rounded) and keep a float32 of it
  (``correct`` below); a spelling must give the same float32 that way too.
- **CairoSVG** reads a double and draws in cairo's 24.8 fixed point: the spelling moves
  its points by at most half a float32 step (6e-8 of the value), which the proof checks
  like any rewrite (rewrite.py): it is the one reader for which this is not exact.

Only path data (``d``) and ``points`` are respelled, number by number, command letters and
arc flags as they are: Blink parses exactly those with the parser above. Lengths and
transforms go through other parsers (CSS, double arithmetic) and are left alone.
"""

from __future__ import annotations

import math
import re
import struct
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from functools import lru_cache

from svgloo.engine.fixing.cleanup.edits import Context, Edit, in_svg, local
from svgloo.engine.fixing.cleanup.numbers import short
from svgloo.engine.fixing.cleanup.path_short import PathDataError

_F32 = struct.Struct("<f")
_U32 = struct.Struct("<I")
_NUMBER = re.compile(r"([+-]?)(\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?")
# A number in a point list (path data is read by its grammar: _path_number_spans).
_TOKEN = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_SEPARATED_NUMBER = re.compile(r"\s*,?\s*(" + _TOKEN.pattern + ")")
_FLAG = re.compile(r"\s*,?\s*[01]")
_BLANKS = re.compile(r"[\s,]*")
_LETTERS = frozenset("MLTHVCSQAZmlthvcsqaz")
_PARAMS = {"M": 2, "L": 2, "T": 2, "H": 1, "V": 1, "C": 6, "S": 4, "Q": 4, "A": 7, "Z": 0}
# A number of 7 significant digits or fewer has no digit to drop: a decimal with one digit
# fewer lies at least 1e-7 of the value away, more than half a float32 step (6e-8).
_MIN_DIGITS = 8
_FLOAT32_MAX = 3.4028234663852886e38


def f32(x: float) -> float:
    """``x`` rounded to the nearest float32 (ties to even), as a Python float; +-inf when
    it is out of float32's range (as a C cast gives)."""
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _next_f32(x: float, toward: float) -> float:
    """The float32 next to float32 ``x`` in the direction of ``toward``."""
    if x == 0.0:
        tiny = _F32.unpack(_U32.pack(1))[0]
        return math.copysign(tiny, toward)
    bits = _U32.unpack(_F32.pack(x))[0]
    away = (toward > x) == (x > 0)
    return _F32.unpack(_U32.pack(bits + 1 if away else bits - 1))[0]


def mul32(a: float, b: float) -> float:
    # The product of two float32s is exact in a double (48 bits), so one rounding to
    # float32 gives the float32 product; the same holds for sums (53 >= 2 * 24 + 2).
    return f32(a * b)


def add32(a: float, b: float) -> float:
    return f32(a + b)


def fma32(a: float, b: float, c: float) -> float:
    """``a * b + c`` rounded once to float32 (a fused multiply-add of float32s)."""
    product = a * b                      # exact: float32 * float32 fits a double
    total = c + product
    # TwoSum: the exact error of that double sum, so that a double that lands exactly
    # half way between two float32s is rounded the way the exact sum would be.
    virtual = total - c
    error = (c - (total - virtual)) + (product - virtual)
    rounded = f32(total)
    if error == 0.0 or rounded == total or math.isinf(rounded):
        return rounded
    other = _next_f32(rounded, total)
    if total == (rounded + other) / 2:   # a tie in the double, decided by the error
        return max(rounded, other) if error > 0 else min(rounded, other)
    return rounded


_TENTH = f32(0.1)


@lru_cache(maxsize=65536)
def blink(text: str, fused: bool = False) -> float | None:
    """The float32 Chromium reads from the number ``text`` (Blink's GenericParseNumber with
    FloatType float), or None where it refuses it (out of range). ``fused``: the
    multiply-adds contracted to FMAs."""
    m = _NUMBER.fullmatch(text)
    if m is None or not (m.group(2) or m.group(3)):
        return None
    sign, whole, fraction, exponent = m.groups()
    integer, multiplier = 0.0, 1.0
    for ch in reversed(whole):
        digit = float(ord(ch) - 48)
        integer = fma32(multiplier, digit, integer) if fused else \
            add32(integer, mul32(multiplier, digit))
        multiplier = mul32(multiplier, 10.0)
    if not abs(integer) <= _FLOAT32_MAX:  # IsValidRange; NaN fails it too
        return None
    decimal, frac = 0.0, 1.0
    for ch in fraction or "":
        frac = mul32(frac, _TENTH)
        digit = float(ord(ch) - 48)
        decimal = fma32(digit, frac, decimal) if fused else add32(decimal, mul32(digit, frac))
    number = add32(integer, decimal)
    if sign == "-":
        number = -number
    if exponent is not None:
        power = int(exponent)
        if power > 38:                  # numeric_limits<float>::max_exponent10
            return None
        if power:
            number = mul32(number, f32(10.0 ** power))
    if not abs(number) <= _FLOAT32_MAX:
        return None
    return number


def correct(text: str) -> float | None:
    """The float32 of the correctly rounded double of ``text`` (resvg, Firefox)."""
    value = f32(float(text))
    return value if abs(value) <= _FLOAT32_MAX else None


def _readings(text: str) -> tuple[float | None, float | None, float | None]:
    return blink(text), blink(text, fused=True), correct(text)


def _significant(value: Decimal) -> int:
    return len(value.normalize().as_tuple().digits)


@lru_cache(maxsize=65536)
def fewest_digits(text: str) -> str:
    """``text`` with the fewest significant digits that every reader (module doc) turns
    into the float32 it turns ``text`` into; ``text`` itself when no shorter spelling
    does, or when a reader refuses it."""
    try:
        value = Decimal(text)
    except InvalidOperation:
        return text
    if not value.is_finite() or value == 0 or _significant(value) < _MIN_DIGITS:
        return text
    wanted = _readings(text)
    if None in wanted:
        return text
    best = text
    digits = _significant(value)
    # Fewer digits than float32's own shortest spelling cannot give the same float32 to
    # the correctly rounding reader: start there.
    start = max(1, _significant(Decimal(_as_numpy_shortest(wanted[2]))))
    for keep in range(start, digits):
        exponent = value.adjusted() - keep + 1
        candidate = value.quantize(Decimal(1).scaleb(exponent), rounding=ROUND_HALF_EVEN)
        spelled = short(candidate)
        if len(spelled) >= len(best):
            break
        if _readings(spelled) == wanted:
            return spelled
    return best


def _as_numpy_shortest(value: float | None) -> str:
    """float32 ``value``'s shortest round-trip spelling (numpy's, Dragon4)."""
    import numpy as np

    assert value is not None  # checked by the caller
    return np.format_float_positional(np.float32(value), unique=True, trim="-")


def respell(data: str, path: bool = True) -> str:
    """Path data (``path``) or a point list with every number in ``fewest_digits`` and
    every other character as it was (letters, blanks, commas, arc flags). Raises
    PathDataError on path data the grammar does not allow."""
    spans = _path_number_spans(data) if path else \
        [m.span() for m in _TOKEN.finditer(data)]
    out: list[str] = []
    last = 0
    for start, end in spans:
        gap, token = data[last:start], data[start:end]
        new = fewest_digits(token)
        if not gap and out and not (new.startswith("-") or
                                    new.startswith(".") and _keeps_point(out[-1])):
            # Glued to the number before: ``1.5.5`` reads as 1.5 and .5 only while the
            # first keeps its point, ``1+2`` as 1 and 2 only with its sign (short()
            # drops a plus): a blank keeps the two apart.
            gap = " "
        out += [gap, new]
        last = end
    out.append(data[last:])
    return "".join(out)


def _keeps_point(number: str) -> bool:
    return "." in number or "e" in number or "E" in number


def _path_number_spans(d: str) -> list[tuple[int, int]]:
    """Where the numbers of path data are, as the grammar reads it (path_short._tokens'
    reading): arc flags are single characters and may stand glued to the next number
    (``a1 1 0 011.5 2``), so a plain number pattern would read ``011.5`` as one."""
    spans: list[tuple[int, int]] = []
    pos, n, command = 0, len(d), ""
    while True:
        blanks = _BLANKS.match(d, pos)
        assert blanks is not None  # matches the empty string anywhere
        pos = blanks.end()
        if pos >= n:
            return spans
        if d[pos] in _LETTERS:
            command = d[pos]
            pos += 1
            if command in "Zz":
                continue
        elif not command or command in "Zz":
            raise PathDataError(f"a number without a command at offset {pos}")
        for k in range(_PARAMS[command.upper()]):
            if command in "Aa" and k in (3, 4):
                flag = _FLAG.match(d, pos)
                if not flag:
                    raise PathDataError(f"expected an arc flag at offset {pos}")
                pos = flag.end()
                continue
            number = _SEPARATED_NUMBER.match(d, pos)
            if not number:
                raise PathDataError(f"expected a number at offset {pos}")
            spans.append(number.span(1))
            pos = number.end()


def edits(ctx: Context) -> list[Edit]:
    """One ``digits`` edit per path (``d``) and polyline/polygon (``points``) whose numbers
    have digits no reader keeps. Each edit respells the value it finds when it is applied,
    so it composes with the ``paths`` job's respelling of the same data before it."""
    out: list[Edit] = []
    for i, node in enumerate(ctx.nodes):
        if not in_svg(node):
            continue
        name = {"path": "d", "polyline": "points", "polygon": "points"}.get(local(node.tag))
        value = node.get(name) if name is not None else None
        if name is None or not value:
            continue
        try:
            saves = len(value) - len(respell(value, path=name == "d"))
        except PathDataError:
            continue
        if saves > 0:
            out.append(Edit("digits", i, "change", _respelled(name), saves))
    return out


def _respelled(name: str):
    def change(node) -> None:
        value = node.get(name)
        if value:
            try:
                node.set(name, respell(value, path=name == "d"))
            except PathDataError:
                pass  # another job's spelling of it that does not parse: leave it
    return change


__all__ = ["blink", "correct", "fewest_digits", "respell", "edits", "f32", "fma32"]
