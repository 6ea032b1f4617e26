"""Numbers and colours written in their shortest exact form.

Numbers are read as ``Decimal`` so that a rewrite is exact: ``0.50`` becomes ``.5`` and
``12.000`` becomes ``12`` with no float rounding in between. Rounding happens only where a
caller asks for it (``quantize``), and the proof then decides whether it stays.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_WHOLE_NUMBER = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*")


def parse(text: str) -> Decimal:
    return Decimal(text)


def short(value: Decimal) -> str:
    """The shortest spelling of ``value``: no trailing zeros, no leading zero before the
    point, no sign on zero (``-0.50`` -> ``-.5``), an exponent only where that is at
    least three characters shorter (``-1.070563e-14``)."""
    if value == 0:
        return "0"
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if text.startswith("0."):
        text = text[1:]
    elif text.startswith("-0."):
        text = "-" + text[2:]
    # -1.070563e-14 written out is 22 characters: the exponent form where it is much
    # shorter (not 1e3 for 1000: a reader that trips on exponents costs a proof)
    mantissa, _, exponent = format(value.normalize(), "e").partition("e")
    scientific = f"{mantissa}e{int(exponent)}"
    return scientific if len(scientific) + 3 <= len(text) else text


def quantize(value: Decimal, decimals: int | None) -> Decimal:
    """``value`` rounded to ``decimals`` places (None: unchanged)."""
    if decimals is None:
        return value
    return value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_EVEN)


def decimals_of(text: str) -> int:
    """Places after the point written in a number (``1.250`` -> 3, ``1e-3`` -> 3)."""
    try:
        exponent = Decimal(text).as_tuple().exponent
    except InvalidOperation:
        return 0
    return max(0, -exponent) if isinstance(exponent, int) else 0


def is_number(text: str) -> bool:
    return bool(_WHOLE_NUMBER.fullmatch(text))


def join(numbers: list[str]) -> str:
    """Numbers written one after another with as few separators as the grammar allows:
    none before a minus sign, none before ``.5`` when the previous number already has a
    point (``1.5.5`` reads as 1.5 and .5)."""
    out: list[str] = []
    previous = ""
    for text in numbers:
        if previous and not (text.startswith("-") or
                             (text.startswith(".") and ("." in previous or "e" in previous))):
            out.append(" ")
        out.append(text)
        previous = text
    return "".join(out)


def shorten_numbers(value: str) -> str:
    """Every number in a value (``translate(10.0, 20.50)``) in its shortest exact form;
    the rest of the text as it was."""
    def one(m: re.Match) -> str:
        try:
            return short(Decimal(m.group(0)))
        except InvalidOperation:
            return m.group(0)
    return NUMBER.sub(one, value)


# --- colours ------------------------------------------------------------------------------

# Names shorter than their hex form, and hex forms with a shorter name.
_NAME_OF_HEX = {"#f00": "red", "#d2b48c": "tan", "#c0c0c0": "silver", "#808080": "gray",
                "#800000": "maroon", "#800080": "purple", "#008000": "green",
                "#808000": "olive", "#000080": "navy", "#008080": "teal", "#ffa500": "orange",
                "#ff7f50": "coral", "#fa8072": "salmon", "#ee82ee": "violet",
                "#f5deb3": "wheat", "#ffc0cb": "pink", "#dda0dd": "plum", "#a52a2a": "brown",
                "#ffd700": "gold", "#4b0082": "indigo", "#fffff0": "ivory", "#f0e68c": "khaki",
                "#faf0e6": "linen", "#da70d6": "orchid", "#cd853f": "peru", "#fffafa": "snow",
                "#f5f5dc": "beige", "#ffe4c4": "bisque", "#f0ffff": "azure", "#00ffff": "aqua"}
_HEX_OF_NAME = {"white": "#fff", "black": "#000", "yellow": "#ff0", "fuchsia": "#f0f",
                "magenta": "#f0f", "cyan": "#0ff", "aqua": "#0ff", "lime": "#0f0",
                "blue": "#00f"}
_RGB = re.compile(r"rgb\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)", re.I)
_HEX = re.compile(r"#([0-9a-fA-F]{6}|[0-9a-fA-F]{3})")


def short_colour(value: str) -> str:
    """A colour in its shortest form with the same meaning (``#FFFFFF`` -> ``#fff``,
    ``rgb(255,0,0)`` -> ``red``); anything else (``url(#a)``, ``currentColor``) unchanged."""
    text = value.strip()
    m = _RGB.fullmatch(text)
    if m:
        channels = [int(c) for c in m.groups()]
        if max(channels) > 255:
            return value
        text = "#" + "".join(f"{c:02x}" for c in channels)
    lowered = text.lower()
    if lowered in _HEX_OF_NAME:
        return _HEX_OF_NAME[lowered]
    if _HEX.fullmatch(text):
        hexes = lowered[1:]
        if len(hexes) == 6 and hexes[0::2] == hexes[1::2]:
            hexes = hexes[0::2]
        lowered = "#" + hexes
        full = "#" + "".join(c * 2 for c in hexes) if len(hexes) == 3 else lowered
        name = _NAME_OF_HEX.get(lowered) or _NAME_OF_HEX.get(full)
        return name if name and len(name) < len(lowered) else lowered
    return value if text == value else text
