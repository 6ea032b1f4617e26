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


def _skip_separators(d: str, pos: int) -> int:
    """The offset after the whitespace and commas at ``pos`` (the pattern matches the empty string too)."""
    match = _SEP.match(d, pos)
    assert match is not None
    return match.end()
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


def _number(d: str, p: int) -> tuple[float, int]:
    m = _NUMBER.match(d, p)
    if not m:
        raise PathSyntaxError(f"expected a number at offset {p} of path data")
    return float(m.group(0)), m.end()


def _flag(d: str, p: int) -> tuple[float, int]:
    if p < len(d) and d[p] in "01":
        return float(d[p]), p + 1
    raise PathSyntaxError(f"expected an arc flag (0 or 1) at offset {p} of path data")


def _args_one_by_one(d: str, pos: int, up: str) -> tuple[list[float], int, int]:
    """The arguments of a command ``up`` starting at ``pos``: (them, offset past the last,
    offset after the separators that follow). Number by number, as the grammar reads them
    (an arc's flags are one character each: "a1 1 0 00 10 10" has flags 0 and 0)."""
    args = []
    content_end = pos
    for k in range(_PARAMS[up]):
        v, pos = _flag(d, pos) if (up == "A" and k in (3, 4)) else _number(d, pos)
        args.append(v)
        content_end = pos
        pos = _skip_separators(d, pos)
    return args, content_end, pos


def _args_pattern(count: int) -> re.Pattern:
    """``count`` numbers, each followed by its separators, in one match. Each number is
    the one ``_NUMBER.match`` takes alone at its offset: captured in a lookahead (which
    the engine never re-enters) and consumed by a backreference, so a failing match
    cannot back into a number and split it ("12" into 1 and 2)."""
    one = _NUMBER.pattern
    return re.compile("".join(rf"(?=({one}))\{i + 1}[\s,]*" for i in range(count)))


_ARGS = {up: _args_pattern(count) for up, count in _PARAMS.items() if up not in "AZ"}


def _args(d: str, pos: int, up: str) -> tuple[list[float], int, int]:
    """``_args_one_by_one``, in one regular-expression match for every command but arcs:
    the same arguments and offsets (tests/engine/test_pathdata.py, on generated path data),
    1.7x faster over the corpus's 5,618 paths. Where the pattern does not match (the data is
    malformed there) the one-by-one reading raises its error, worded as always."""
    pattern = _ARGS.get(up)
    m = pattern.match(d, pos) if pattern is not None else None
    if m is None:
        return _args_one_by_one(d, pos, up)
    return [float(v) for v in m.groups()], m.end(m.lastindex or 0), m.end()


def _commands(d: str, read_args=_args):
    """The commands of path data ``d``, one per drawing step: (upper-case letter, relative?,
    arguments, offset of the command's letter, offset past its last character, offset of
    what follows). Coordinate pairs after a moveto come as linetos, as the grammar reads them.
    ``read_args``: how a command's arguments are read (``_args_one_by_one`` in tests).

    Raises PathSyntaxError on data a renderer would reject."""
    n = len(d)
    started = False
    pos = _skip_separators(d, 0)
    cmd = None
    cmd_pos = 0
    while pos < n:
        if d[pos].isalpha():
            cmd, cmd_pos = d[pos], pos
            if cmd.upper() not in _PARAMS:
                raise PathSyntaxError(f"unknown path command {cmd!r} at offset {pos}")
            if not started and cmd not in "Mm":
                raise PathSyntaxError("path data must start with a moveto")
            started = True
            pos = _skip_separators(d, pos + 1)
            if cmd in "Zz":
                yield "Z", cmd == "z", [], cmd_pos, cmd_pos + 1, pos
                continue
        elif cmd is None or cmd in "Zz":
            raise PathSyntaxError(f"number without a command at offset {pos} of path data")
        elif cmd in "Mm":   # further pairs of a moveto are linetos
            cmd = "L" if cmd == "M" else "l"
        up, rel = cmd.upper(), cmd.islower()
        args, content_end, pos = read_args(d, pos, up)
        yield up, rel, args, cmd_pos, content_end, pos


def split_subpaths(d: str) -> list[Subpath]:
    """Return the subpaths of path data ``d`` in drawing order.

    Raises PathSyntaxError on data a renderer would reject."""
    n = len(d)
    cx = cy = 0.0      # current point
    sx = sy = 0.0      # start of the current subpath
    subpaths: list[Subpath] = []
    pending: tuple | None = None   # moveto facts of the subpath being read
    content_end = 0                # offset past the last character that belongs to a command
    for up, rel, args, cmd_pos, content_end, pos in _commands(d):
        if up == "Z":
            cx, cy = sx, sy
            pending_end = content_end
            continue
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


def _edge_key(kind: str, points: list[tuple[float, float]], extra: tuple = ()) -> tuple | None:
    """A segment as a set member that is the same whichever way it is drawn; None for a
    segment that goes nowhere. Coordinates rounded to 1e-6: written twice, an edge reads
    the same; computed from relative commands, it may differ in the last bits."""
    pts = tuple((round(x, 6) + 0.0, round(y, 6) + 0.0) for x, y in points)
    if all(p == pts[0] for p in pts):
        return None
    if kind == "A":   # drawn backwards, an arc sweeps the other way
        rx, ry, rot, large, sweep = extra
        forward = ("A", pts, (rx, ry, rot, large, sweep))
        backward = ("A", pts[::-1], (rx, ry, rot, large, 1 - sweep))
        return min(forward, backward)
    return (kind, min(pts, pts[::-1]), ())


def subpath_edges(d: str) -> list[frozenset]:
    """Per subpath of ``d``, its edges (lines, curves and arcs in absolute coordinates,
    direction-free), the closing edge a fill adds included. Two subpaths that share an edge
    draw it twice, on top of itself. Raises PathSyntaxError as split_subpaths does."""
    out: list[frozenset] = []
    edges: set | None = None
    cx = cy = sx = sy = 0.0
    last_ctrl: tuple[str, tuple[float, float]] | None = None   # for S and T

    def add(key):
        if key is not None and edges is not None:
            edges.add(key)

    def close():
        add(_edge_key("L", [(cx, cy), (sx, sy)]))

    for up, rel, args, _pos, _end, _next in _commands(d):
        ox, oy = (cx, cy) if rel else (0.0, 0.0)
        if up == "M":
            if edges is None:   # a leading "m" is absolute (SVG spec)
                ox = oy = 0.0
            else:
                close()
                out.append(frozenset(edges))
            edges = set()
            cx, cy = sx, sy = args[0] + ox, args[1] + oy
            last_ctrl = None
            continue
        if up == "Z":
            close()
            cx, cy = sx, sy
            last_ctrl = None
            continue
        if up == "H":
            end = (args[0] + ox, cy)
        elif up == "V":
            end = (cx, args[0] + (cy if rel else 0.0))
        else:
            end = (args[-2] + ox, args[-1] + oy)
        pts = [(args[k] + ox, args[k + 1] + oy) for k in range(0, len(args) - 2, 2)]
        ctrl = None
        if up in ("H", "V", "L"):
            add(_edge_key("L", [(cx, cy), end]))
        elif up in ("C", "S"):
            if up == "S":
                first = (2 * cx - last_ctrl[1][0], 2 * cy - last_ctrl[1][1]) \
                    if last_ctrl and last_ctrl[0] == "C" else (cx, cy)
                pts = [first] + pts
            add(_edge_key("C", [(cx, cy), *pts, end]))
            ctrl = ("C", pts[-1])
        elif up in ("Q", "T"):
            if up == "T":
                pts = [(2 * cx - last_ctrl[1][0], 2 * cy - last_ctrl[1][1])
                       if last_ctrl and last_ctrl[0] == "Q" else (cx, cy)]
            add(_edge_key("Q", [(cx, cy), *pts, end]))
            ctrl = ("Q", pts[-1])
        elif up == "A":
            add(_edge_key("A", [(cx, cy), end], (abs(args[0]), abs(args[1]), args[2] % 360,
                                                 args[3], args[4])))
        cx, cy = end
        last_ctrl = ctrl
    if edges is not None:
        close()
        out.append(frozenset(edges))
    return out


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
