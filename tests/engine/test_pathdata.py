"""Subpath splitting: exact ranges and absolute start points, checked against a hand trace."""

from __future__ import annotations

import pytest

from svgloo.engine.reading.pathdata import (PathSyntaxError, remove_subpath, split_subpaths,
                                            standalone_subpath, subpath_edges)


def test_relative_movetos_are_resolved_through_closepath():
    d = "m10 10 5 5 5 0z m5 5h3v3zM1 1a2 2 0 011 1"
    sps = split_subpaths(d)
    assert [d[s.start:s.end] for s in sps] == ["m10 10 5 5 5 0z", "m5 5h3v3z",
                                                "M1 1a2 2 0 011 1"]
    # z returns to (10, 10); "m5 5" is relative to that
    assert [s.start_point for s in sps] == [(10, 10), (15, 15), (1, 1)]
    assert standalone_subpath(d, sps[0]) == "M10 10 l 5 5 5 0z"
    assert standalone_subpath(d, sps[1]) == "M15 15h3v3z"


def test_relative_moveto_after_open_subpath_uses_its_end_point():
    d = "M0 0 l10 0 l0 10 m-5 -5 h1"
    sps = split_subpaths(d)
    assert sps[1].start_point == (5, 5)


def test_curves_arcs_and_smooth_commands_move_the_current_point():
    # c: end (6,6); s: +(2,2) -> (8,8); q abs end (9,9); t +(1,1) -> (10,10)
    # a with packed flags "011": end +(1,1) -> (11,11); H/V
    d = "M0 0c1 1 2 2 6 6s1 1 2 2Q5 5 9 9t1 1a1 1 0 011 1H20V30m1 1"
    sps = split_subpaths(d)
    assert sps[1].start_point == (21, 31)


def test_numbers_without_separators():
    d = "M.5.5l1-1 .5.5m1e1-2E0 1 1"
    sps = split_subpaths(d)
    # after "l1-1 .5.5": (.5+1+.5, .5-1+.5) = (2, 0); then m10 -2 -> (12, -2)
    assert sps[1].start_point == (12, -2)
    assert sps[1].has_implicit_lineto


def test_removing_relative_subpath_keeps_the_next_one_in_place():
    d = "M0 0h4v4h-4z m10 0h4v4h-4z m10 0h4v4h-4z"
    sps = split_subpaths(d)
    out = remove_subpath(d, sps, 1)
    rest = split_subpaths(out)
    assert [s.start_point for s in rest] == [(0, 0), (20, 0)]
    assert remove_subpath(d, sps, 0).startswith("M10 0")


@pytest.mark.parametrize("d", ["L1 1", "M1", "M1 1 Z 3", "M1 1 X2 2", "M1 1a1 1 0 2 1 1 1"])
def test_invalid_path_data_raises(d):
    with pytest.raises(PathSyntaxError):
        split_subpaths(d)


def test_with_absolute_movetos_keeps_every_subpath_and_point():
    from svgloo.engine.reading.pathdata import with_absolute_movetos

    d = "m10 10 20 0 0 20z m5.5 -3 h4 M 1 1 l2 2 m1e1 0 v3"
    subpaths = split_subpaths(d)
    out = with_absolute_movetos(d, subpaths)
    assert out == "M10 10 l 20 0 0 20z M15.5 7 h4 M 1 1 l2 2 M13 3 v3"
    again = split_subpaths(out)
    assert [sp.start_point for sp in again] == [sp.start_point for sp in subpaths]
    assert not any(sp.relative for sp in again)


def test_edges_are_absolute_and_the_same_whichever_way_round():
    # The same triangle: absolute; relative after a closepath; backwards and left open
    # (a fill closes it); then one that shares only its first edge.
    d = ("M10 10 L90 20 L70 85 Z m0 0 l80 10 l-20 65 z M10 10 L70 85 L90 20 "
         "M10 10 L90 20 L60 40 Z")
    a, b, c, e = subpath_edges(d)
    assert len(a) == 3 and a == b == c
    assert a & e == {("L", ((10.0, 10.0), (90.0, 20.0)), ())}


def test_smooth_curves_and_arcs_resolve_their_implicit_points():
    # S reflects the previous C's second control point; T the previous Q's; an arc drawn
    # backwards sweeps the other way; zero-length segments are no edges.
    forward, backward, smooth, arcs, arcs_back = subpath_edges(
        "M0 0 C1 1 2 2 3 0 S5 -2 6 0 "
        "M6 0 C5 -2 4 -2 3 0 C2 2 1 1 0 0 "
        "M0 0 Q1 1 2 0 T4 0 L4 0 "
        "M0 0 A5 5 0 0 1 10 0 "
        "M10 0 A5 5 0 0 0 0 0")
    assert forward == backward and len(forward) == 3  # two curves and the closing line
    assert ("Q", ((2.0, 0.0), (3.0, -1.0), (4.0, 0.0)), ()) in smooth
    assert len(smooth) == 3  # Q, T and the closing line; "L4 0" goes nowhere
    assert arcs == arcs_back


def _generated_path_data(rng) -> str:
    """Path data written as exporters and hands write it, and as no one should: numbers
    in every spelling (signs, leading and trailing dots, exponents, "1.5.5", "10-20"
    run together), separators of any kind or none, commands repeated implicitly, and now
    and then a character, number or command out of place."""
    def number() -> str:
        sign = rng.choice(["", "", "-", "+"])
        body = rng.choice([str(rng.randrange(0, 1000)), f"{rng.random() * 100:.{rng.randrange(0, 5)}f}",
                           "." + str(rng.randrange(0, 100)), str(rng.randrange(0, 10)) + ".",
                           f"{rng.randrange(1, 9)}e{rng.choice(['', '-', '+'])}{rng.randrange(0, 3)}",
                           f"{rng.randrange(1, 9)}.{rng.randrange(0, 9)}E1"])
        return sign + body

    def sep() -> str:
        return rng.choice(["", " ", ",", " , ", "\n\t", "  ", ", ", ",,"])

    counts = {"M": 2, "L": 2, "T": 2, "H": 1, "V": 1, "C": 6, "S": 4, "Q": 4, "Z": 0}
    out = [rng.choice(["", " "]), rng.choice("Mm"), sep(), number(), sep(), number(), sep()]
    for _ in range(rng.randrange(1, 12)):
        letter = rng.choice("MLTHVCSQZA")
        count = counts.get(letter, 7)
        repeats = 1 if count == 0 else rng.choice([1, 1, 2, 3])
        out.append(sep() + (letter.lower() if rng.random() < 0.5 else letter) + sep())
        for k in range(repeats * count):  # an arc's flags: one character, maybe packed
            out.append((rng.choice("01") if letter == "A" and k % 7 in (3, 4) else number())
                       + sep())
        if rng.random() < 0.08:  # something out of place
            out.append(rng.choice(["x", "#", number(), "1e", "-", ".", "M", "L1", ",", "2..3"]))
    return "".join(out)


def test_arguments_in_one_match_read_as_number_by_number_on_generated_data():
    """The commands (letters, arguments, every offset) and the errors (kind and words) are
    those of reading the arguments one number at a time, on 20,000 generated paths."""
    import random

    from svgloo.engine.reading.pathdata import _args_one_by_one, _commands

    def read(d, **kw):
        try:
            return list(_commands(d, **kw))
        except PathSyntaxError as exc:
            return f"error: {exc}"

    rng = random.Random(37)
    errors = 0
    for _ in range(20_000):
        d = _generated_path_data(rng)
        want = read(d, read_args=_args_one_by_one)
        assert read(d) == want, d
        errors += isinstance(want, str)
    assert 2_000 < errors < 18_000  # both kinds of data are there, in numbers
