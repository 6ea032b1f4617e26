"""Path data in its shortest form: the same outline, fewer characters.

Each command is written absolute or relative, whichever is shorter; a command letter that
repeats is left out (also a lineto right after a moveto, which the grammar implies); a
lineto along an axis becomes ``H``/``V``; numbers are written by ``numbers.short`` and
joined with as few separators as the grammar allows. ``zm`` stays ``zm`` (never ``z m``).

Arithmetic is exact (``Decimal``): with ``decimals=None`` the absolute positions are the
very numbers of the input, so the outline is the same one, only spelled differently. With
``decimals`` the absolute positions are rounded first and relative steps are the
differences of rounded positions, so rounding never accumulates along a path.
"""

from __future__ import annotations

import re
from decimal import Decimal

from svgloo.engine.fixing.cleanup.numbers import join, quantize, short

_PARAMS = {"M": 2, "L": 2, "T": 2, "H": 1, "V": 1, "C": 6, "S": 4, "Q": 4, "A": 7, "Z": 0}
_TOKEN = re.compile(r"\s*,?\s*(?:([MLTHVCSQAZmlthvcsqaz])|"
                    r"([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))")
_FLAG = re.compile(r"\s*,?\s*([01])")
_TRAILING = re.compile(r"[\s,]*")


class PathDataError(ValueError):
    """Path data this module does not rewrite (a renderer may still draw part of it)."""


def _tokens(d: str) -> list[tuple[str, list[str]]]:
    """[(command letter, its numbers as written)], one entry per drawing step; pairs after
    a moveto come as linetos. Raises PathDataError on anything the grammar does not allow."""
    out: list[tuple[str, list[str]]] = []
    pos, n, command = 0, len(d), None
    while True:
        blanks = _TRAILING.match(d, pos)
        assert blanks is not None  # [\s,]* matches, if only the empty string, at any pos
        pos = blanks.end()
        if pos >= n:
            break
        m = _TOKEN.match(d, pos)
        if not m:
            raise PathDataError(f"unreadable path data at offset {pos}")
        if m.group(1):
            command = m.group(1)
            pos = m.end()
            if not out and command not in "Mm":
                raise PathDataError("path data must start with a moveto")
            if command in "Zz":
                out.append((command, []))
                continue
        elif command is None or command in "Zz":
            raise PathDataError(f"a number without a command at offset {pos}")
        elif command in "Mm":
            command = "L" if command == "M" else "l"
        args: list[str] = []
        for k in range(_PARAMS[command.upper()]):
            if command in "Aa" and k in (3, 4):
                f = _FLAG.match(d, pos)
                if not f:
                    raise PathDataError(f"expected an arc flag at offset {pos}")
                args.append(f.group(1))
                pos = f.end()
                continue
            m = _TOKEN.match(d, pos)
            if not m or not m.group(2):
                raise PathDataError(f"expected a number at offset {pos}")
            args.append(m.group(2))
            pos = m.end()
        out.append((command, args))
    return out


def _absolute(tokens: list[tuple[str, list[str]]]) -> list[tuple[str, list[Decimal], bool]]:
    """Every step with absolute coordinates (upper-case letters; H/V stay one number;
    arcs keep radii, angle and flags as they are), and whether it was written relative."""
    out: list[tuple[str, list[Decimal], bool]] = []
    x = y = sx = sy = Decimal(0)
    for letter, args in tokens:
        up, rel = letter.upper(), letter.islower()
        v = [Decimal(a) for a in args]
        if up == "Z":
            out.append(("Z", [], rel))
            x, y = sx, sy
            continue
        if up == "H":
            x = x + v[0] if rel else v[0]
            out.append(("H", [x], rel))
            continue
        if up == "V":
            y = y + v[0] if rel else v[0]
            out.append(("V", [y], rel))
            continue
        if up == "A":
            ex, ey = (x + v[5], y + v[6]) if rel else (v[5], v[6])
            out.append(("A", v[:5] + [ex, ey], rel))
            x, y = ex, ey
            continue
        points = []
        for k in range(0, len(v), 2):
            px, py = (x + v[k], y + v[k + 1]) if rel else (v[k], v[k + 1])
            points += [px, py]
        out.append((up, points, rel))
        x, y = points[-2], points[-1]
        if up == "M":
            sx, sy = x, y
    return out


def shortest(d: str, decimals: int | None = None, spelling: str = "short") -> str:
    """``d`` in its shortest spelling (see the module's doc); PathDataError when it does
    not parse. With ``decimals``, positions and arc radii are rounded to that many places.

    ``spelling``: "short" writes each step absolute or relative, whichever is shorter (as
    the input did on a tie); "keep" writes each step as the input did, which CairoSVG then
    draws exactly as before: CairoSVG draws a relative step with cairo's rel_line_to /
    rel_curve_to, which adds the step rounded to 1/256 device px to the current point, so
    respelling a step moves its end by a rounding error, enough to change antialiased
    pixels (logos/blueprint.svg: ``L128 223.296 v74.450286`` for ``V297.746286`` moved
    CairoSVG's pixels by 6/255). The rewrite stage tries "short" first, then "keep"."""
    steps = _absolute(_tokens(d))
    q = (lambda v: quantize(v, decimals)) if decimals is not None else (lambda v: v)
    parts: list[str] = []
    last_letter = ""
    numbers: list[str]  # the step's numbers as written
    x = y = sx = sy = Decimal(0)
    first = True
    for up, values, was_relative in steps:
        px, py = x, y   # the current point before this step
        if up == "Z":
            letter, numbers = "z", []
            x, y = sx, sy
        else:
            if up == "A":
                values = [q(values[0]), q(values[1])] + values[2:5] + [q(values[5]),
                                                                         q(values[6])]
            else:
                values = [q(v) for v in values]
            if up == "L" and values[1] == y and not first:
                up, values = "H", [values[0]]
            elif up == "L" and values[0] == x and not first:
                up, values = "V", [values[1]]
            if up == "H":
                absolute, relative = values, [values[0] - x]
                x = values[0]
            elif up == "V":
                absolute, relative = values, [values[0] - y]
                y = values[0]
            elif up == "A":
                absolute = values
                relative = values[:5] + [values[5] - x, values[6] - y]
                x, y = values[5], values[6]
            else:
                absolute = values
                relative = [v - (x if k % 2 == 0 else y) for k, v in enumerate(values)]
                x, y = values[-2], values[-1]
            if up == "M":
                sx, sy = x, y
            abs_text = [_arg(up, k, v) for k, v in enumerate(absolute)]
            rel_text = [_arg(up, k, v) for k, v in enumerate(relative)]
            abs_cost = len(join(abs_text)) + _letter_cost(up, last_letter)
            rel_cost = len(join(rel_text)) + _letter_cost(up.lower(), last_letter)
            if spelling == "keep" or abs_cost == rel_cost:
                use_abs = first or not was_relative
            else:
                use_abs = first or abs_cost < rel_cost or \
                    not _same_in_floats(up, absolute, relative, px, py)
            letter, numbers = (up, abs_text) if use_abs else (up.lower(), rel_text)
            first = False
        implied = (letter == last_letter and letter not in "Mm") or \
            (letter == "L" and last_letter == "M") or (letter == "l" and last_letter == "m")
        if implied and numbers:
            previous_tail = parts[-1] if parts else ""
            text = join([_last_number(previous_tail)] + numbers)[len(_last_number(previous_tail)):]
            parts.append(text)
        else:
            parts.append(letter + join(numbers))
        last_letter = letter if letter not in "Mm" else letter
        if letter == "M":
            last_letter = "M"
        elif letter == "m":
            last_letter = "m"
    return "".join(parts)


def _same_in_floats(up: str, absolute: list[Decimal], relative: list[Decimal],
                    x: Decimal, y: Decimal) -> bool:
    """Whether adding the relative step in double precision (as resvg does) lands exactly
    on the absolute position; where it does not, the absolute spelling is written."""
    if up == "H":
        pairs = [(x, absolute[0], relative[0])]
    elif up == "V":
        pairs = [(y, absolute[0], relative[0])]
    elif up == "A":
        pairs = [(x, absolute[5], relative[5]), (y, absolute[6], relative[6])]
    else:
        pairs = [((x if k % 2 == 0 else y), a, r)
                 for k, (a, r) in enumerate(zip(absolute, relative))]
    return all(float(start) + float(step) == float(end) for start, end, step in pairs)


def _arg(up: str, k: int, v: Decimal) -> str:
    if up == "A" and k in (3, 4):
        return "1" if v else "0"
    return short(v)


def _letter_cost(letter: str, last_letter: str) -> int:
    implied = (letter == last_letter and letter not in "Mm") or \
        (letter == "L" and last_letter == "M") or (letter == "l" and last_letter == "m")
    return 0 if implied else 1


_LAST_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")


def _last_number(text: str) -> str:
    m = _LAST_NUMBER.search(text)
    return m.group(0) if m else ""


__all__ = ["PathDataError", "shortest"]
