"""SVG path data: split a ``d`` attribute into subpaths at moveto commands.

Each subpath keeps its exact character range inside the raw attribute text, and the
absolute point where it starts, so that a subpath that begins with a relative ``m``
can be drawn on its own (or survive its predecessor's removal) in the right place.
A full tokenizer is needed for that: the current point after a subpath depends on
every command in it, arcs (whose flags may be written without separators) included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_SEP = re.compile(r"[\s,]*")
_PARAMS = {"M": 2, "L": 2, "T": 2, "H": 1, "V": 1, "C": 6, "S": 4, "Q": 4, "A": 7, "Z": 0}


class PathSyntaxError(ValueError):
    pass


@dataclass(frozen=True)
class Subpath:
    index: int
    start: int            # offset of the moveto letter in the raw ``d`` text
    end: int              # offset just past the subpath's last character (trailing space trimmed)
    start_point: tuple[float, float]   # absolute position of the moveto
    relative: bool        # the moveto is a relative ``m``
    first_pair_end: int   # offset just past the moveto's first coordinate pair
    has_implicit_lineto: bool  # more coordinate pairs follow inside the moveto command


def _fmt(v: float) -> str:
    text = f"{v:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def split_subpaths(d: str) -> list[Subpath]:
    """Return the subpaths of path data ``d`` in drawing order.

    Raises PathSyntaxError on data a renderer would reject."""
    n = len(d)
    cx = cy = 0.0      # current point
    sx = sy = 0.0      # start of the current subpath
    subpaths: list[Subpath] = []
    pending: tuple | None = None   # moveto facts of the subpath being read
    content_end = 0                # offset past the last character that belongs to a command

    def number(p: int) -> tuple[float, int]:
        m = _NUMBER.match(d, p)
        if not m:
            raise PathSyntaxError(f"expected a number at offset {p} of path data")
        return float(m.group(0)), m.end()

    def flag(p: int) -> tuple[float, int]:
        if p < n and d[p] in "01":
            return float(d[p]), p + 1
        raise PathSyntaxError(f"expected an arc flag (0 or 1) at offset {p} of path data")

    pos = _SEP.match(d, 0).end()
    cmd = None
    while pos < n:
        if d[pos].isalpha():
            cmd, cmd_pos = d[pos], pos
            if cmd.upper() not in _PARAMS:
                raise PathSyntaxError(f"unknown path command {cmd!r} at offset {pos}")
            if pending is None and cmd not in "Mm":
                raise PathSyntaxError("path data must start with a moveto")
            pos = _SEP.match(d, pos + 1).end()
            if cmd in "Zz":
                cx, cy = sx, sy
                content_end = pending_end = cmd_pos + 1
                continue
        elif cmd is None or cmd in "Zz":
            raise PathSyntaxError(f"number without a command at offset {pos} of path data")
        elif cmd in "Mm":   # further pairs of a moveto are linetos
            cmd = "L" if cmd == "M" else "l"
        up, rel = cmd.upper(), cmd.islower()
        args = []
        for k in range(_PARAMS[up]):
            v, pos = flag(pos) if (up == "A" and k in (3, 4)) else number(pos)
            args.append(v)
            content_end = pos
            pos = _SEP.match(d, pos).end()
        if up == "M":
            x, y = args
            if rel and pending is not None:   # a leading "m" is absolute (SVG spec)
                x, y = cx + x, cy + y
            if pending is not None:
                subpaths.append(_close(pending, pending_end))
            cx, cy = sx, sy = x, y
            implicit = pos < n and not d[pos].isalpha()
            pending = (len(subpaths), cmd_pos, (x, y), rel, content_end, implicit)
            pending_end = content_end
            continue
        if up == "H":
            cx = cx + args[0] if rel else args[0]
        elif up == "V":
            cy = cy + args[0] if rel else args[0]
        elif rel:
            cx, cy = cx + args[-2], cy + args[-1]
        else:
            cx, cy = args[-2], args[-1]
        pending_end = content_end
    if pending is not None:
        subpaths.append(_close(pending, content_end))
    return subpaths


def _close(pending: tuple, end: int) -> Subpath:
    index, start, point, rel, first_pair_end, implicit = pending
    return Subpath(index, start, end, point, rel, first_pair_end, implicit)


def standalone_subpath(d: str, sp: Subpath) -> str:
    """The subpath's text, drawable on its own at its real position."""
    return absolute_moveto(d, sp) + d[sp.first_pair_end:sp.end]


def absolute_moveto(d: str, sp: Subpath) -> str:
    """The subpath's moveto rewritten as an absolute ``M x y`` (plus an explicit ``l`` when
    the original relative moveto carried implicit relative linetos)."""
    if not sp.relative:
        return d[sp.start:sp.first_pair_end]
    x, y = sp.start_point
    head = f"M{_fmt(x)} {_fmt(y)}"
    return head + (" l" if sp.has_implicit_lineto else "")


def remove_subpath(d: str, subpaths: list[Subpath], index: int) -> str:
    """Path data with one subpath removed; the next subpath, if its moveto is relative,
    is rewritten to absolute so that nothing else moves."""
    sp = subpaths[index]
    tail_start = subpaths[index + 1].start if index + 1 < len(subpaths) else len(d)
    rest = d[tail_start:]
    if index + 1 < len(subpaths):
        nxt = subpaths[index + 1]
        if nxt.relative:
            rest = absolute_moveto(d, nxt) + d[nxt.first_pair_end:]
    return d[:sp.start] + rest


def with_absolute_movetos(d: str, subpaths: list[Subpath]) -> str:
    """The same path data with every subpath's moveto absolute (same points, same lengths
    of everything else). Cairo keeps the current point in 24.8 fixed point and adds each
    relative move in device space, so a relative ``m`` lands within 1/256 px of where the
    absolute ``M`` lands, not always on it; the edge coverage of such a nudged subpath can
    step by 1/15 (cairo samples 15 rows per pixel). Drawn with absolute movetos, each
    subpath's pixels depend on its own text only, whatever is removed before it."""
    head = d[:subpaths[0].start] if subpaths else d
    parts = [head]
    for i, sp in enumerate(subpaths):
        tail_end = subpaths[i + 1].start if i + 1 < len(subpaths) else len(d)
        if sp.relative:
            x, y = sp.start_point
            parts.append(f"M{_fmt(x)} {_fmt(y)}" + (" l" if sp.has_implicit_lineto else ""))
            parts.append(d[sp.first_pair_end:tail_end])
        else:
            parts.append(d[sp.start:tail_end])
    return "".join(parts)
