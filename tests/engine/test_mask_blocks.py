"""Masked groups and shared patterns in fast leave-one-out, against naive renders.

CairoSVG rewrites a mask or pattern element as it paints with it (blocks.py,
``resources_keep_their_place``). Where every mask and pattern stays a resource, a
masked group is one block and a pattern's users are one block; otherwise the whole
document is one block (naive). Both are checked on documents generated to break them:
masks before, after and inside ``<defs>``, shared, nested, on units, through ``style``,
under ``<use>``; patterns shared by translucent users inside and outside masked
groups, before and after their users, and inherited from a group. Each condition of
``resources_keep_their_place`` and the pattern coupling, left out, fails
``test_fast_equals_naive_on_generated_masks`` (checked by hand on 2026-12-07: 1 to 10 of
its 160 documents off by 27-255/255).
"""

from __future__ import annotations

import random

import pytest

from svgloo.engine.leave_one_out.blocks import compute_blocks
from svgloo.engine.leave_one_out.loo import loo_fast, loo_naive
from svgloo.engine.reading.document import load_document, parse_document
from svgloo.engine.reading.units import extract_units

from conftest import CORPUS
from test_loo import TOLERANCE, _max_diff

SIZE = 96
COLORS = ["red", "blue", "green", "#f80", "#0af", "black", "#808", "white"]


class _Generator:
    """One random document of masked groups, masks and patterns (by seed)."""

    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.patterns: list[str] = []

    def shape(self, extra: str = "", inherit: bool = False) -> str:
        r = self.r
        fill = r.choice(COLORS)
        if self.patterns and r.random() < 0.3:
            fill = f"url(#{r.choice(self.patterns)})"
        opacity = f' fill-opacity="{r.choice([1, 0.5, 0.8])}"' if r.random() < 0.3 else ""
        paint = "" if inherit else f' fill="{fill}"'
        k = r.random()
        if k < 0.4:
            return (f'<rect x="{r.randint(0, 30)}" y="{r.randint(0, 30)}" '
                    f'width="{r.randint(3, 25)}" height="{r.randint(3, 25)}"'
                    f'{paint}{opacity}{extra}/>')
        if k < 0.7:
            return (f'<circle cx="{r.randint(5, 35)}" cy="{r.randint(5, 35)}" '
                    f'r="{r.randint(2, 12)}"{paint}{opacity}{extra}/>')
        return (f'<path d="M{r.randint(0, 20)} {r.randint(0, 20)}l{r.randint(5, 20)} '
                f'{r.randint(0, 15)}l{-r.randint(0, 15)} {r.randint(5, 20)}z"'
                f'{paint}{opacity}{extra}/>')

    def painted_group(self) -> str:
        """Shapes that inherit a pattern fill from their group."""
        r = self.r
        opacity = f' fill-opacity="{r.choice([0.5, 0.8])}"' if r.random() < 0.5 else ""
        return (f'<g fill="url(#{r.choice(self.patterns)})"{opacity}>'
                + "".join(self.shape(inherit=True) for _ in range(r.randint(2, 3))) + "</g>")

    def mask(self, ident: str) -> str:
        r = self.r
        units = ' maskUnits="userSpaceOnUse"' if r.random() < 0.3 else ""
        body = [f'<rect x="{r.randint(0, 25)}" y="{r.randint(0, 25)}" '
                f'width="{r.randint(5, 30)}" height="{r.randint(5, 30)}" '
                f'fill="{r.choice(["white", "white", "#888", "black"])}"/>'
                for _ in range(r.randint(1, 3))]
        if r.random() < 0.3:
            body.append('<use xlink:href="#dshape" fill="white"/>')
        return f'<mask id="{ident}"{units}>' + "".join(body) + "</mask>"

    def pattern(self, ident: str) -> str:
        # userSpaceOnUse only: CairoSVG sizes an objectBoundingBox pattern from the size
        # the previous user left on it, which compounds over three users into renders
        # too big to draw (the limits refuse them); that coupling is the opacity's.
        r = self.r
        w = r.choice([5, 7, 9])
        opacity = f' opacity="{r.choice([0.5, 0.8])}"' if r.random() < 0.3 else ""
        return (f'<pattern id="{ident}" width="{w}" height="{w}" '
                f'patternUnits="userSpaceOnUse"{opacity}>'
                f'<rect width="3" height="3" fill="{r.choice(COLORS)}"/>'
                f'<circle cx="4" cy="4" r="2" fill="{r.choice(COLORS)}"/></pattern>')

    def document(self) -> str:
        r = self.r
        parts: list[str] = []
        defs = ['<circle id="dshape" cx="20" cy="20" r="9"/>']
        late: list[str] = []
        if r.random() < 0.5:
            for p in range(r.randint(1, 2)):
                self.patterns.append(f"p{p}")
                where = r.choice([defs, defs, parts, late])
                where.append(self.pattern(f"p{p}"))
        masks: list[str] = []
        parts.append(self.shape())
        for g in range(r.randint(1, 3)):
            ident = f"m{g}"
            where = r.choice(["defs", "before", "after", "shared"] if g else
                             ["defs", "before", "after"])
            if where == "shared":
                ident = r.choice(masks)
            else:
                masks.append(ident)
                if where == "defs" and r.random() < 0.4:  # drawn again through <use>
                    defs.append(f'<g id="d{g}">{self.mask(ident)}{self.shape()}</g>')
                    late.append(f'<use xlink:href="#d{g}" x="1" y="1"/>')
                elif where == "defs":
                    defs.append(self.mask(ident))
                elif where == "before":
                    parts.append(self.mask(ident))
            attrs = (f' style="mask: url(#{ident})"' if r.random() < 0.3
                     else f' mask="url(#{ident})"') + f' id="g{g}"'
            if r.random() < 0.3:
                attrs += f' opacity="{r.choice([0.5, 0.7])}"'
            if r.random() < 0.3:
                attrs += f' transform="translate({r.randint(-5, 5)} {r.randint(-5, 5)})"'
            inner = [self.shape() for _ in range(r.randint(0, 4))]
            if r.random() < 0.25:
                inner.append(f'<g mask="url(#{ident}n)">{self.shape()}{self.shape()}</g>')
                defs.append(self.mask(ident + "n"))
            if r.random() < 0.2:
                inner.append(self.shape(f' mask="url(#{ident})"'))
            if self.patterns and r.random() < 0.2:
                inner.append(self.painted_group())
            group = f"<g{attrs}>" + "".join(inner) + "</g>"
            if where != "shared" and r.random() < 0.15:  # drawn only through <use>
                defs.append(group)
                parts.extend(f'<use xlink:href="#g{g}" x="{r.randint(0, 9)}" '
                             f'y="{r.randint(0, 9)}"/>' for _ in range(r.randint(1, 2)))
            elif where == "before" and r.random() < 0.3:
                mask = parts.pop()
                parts.append(f'<g id="w{g}">{mask}{group}</g>'
                             f'<use xlink:href="#w{g}" x="2" y="3"/>')
            else:
                parts.append(group)
            if where == "after":
                parts.append(self.mask(ident))
            if r.random() < 0.15:
                parts.append(f'<use xlink:href="#g{g}" x="3" y="2"/>')
            parts.extend(self.shape() for _ in range(r.randint(0, 2)))
            if self.patterns and r.random() < 0.3:
                parts.append(self.painted_group())
        parts.extend(late)
        if r.random() < 0.3:
            parts.append(self.shape(f' mask="url(#{r.choice(masks)})"'))
        return ('<svg xmlns="http://www.w3.org/2000/svg" '
                'xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 40 40"><defs>'
                + "".join(defs) + "</defs>" + "".join(parts) + "</svg>")


SEEDS_PER_CHUNK = 40


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(4))
def test_fast_equals_naive_on_generated_masks(render_pool, chunk):
    split = 0  # documents whose masks or patterns left more than one block
    for seed in range(chunk * SEEDS_PER_CHUNK, (chunk + 1) * SEEDS_PER_CHUNK):
        svg = _Generator(seed).document()
        us = extract_units(parse_document(svg, f"generated-{seed}.svg"))
        fast = loo_fast(us, SIZE, pool=render_pool)
        naive = loo_naive(us, SIZE, pool=render_pool)
        assert _max_diff(fast, naive, len(us.units)) <= TOLERANCE, svg
        split += len(fast.blocks) > 1 and ("mask=" in svg or "mask:" in svg)
    # The split path is taken, not only the whole-document one (about 1 in 5).
    assert split >= 3


def _blocks(svg: str) -> list[tuple[int, int, bool]]:
    return [(b.lo, b.hi, b.local)
            for b in compute_blocks(extract_units(parse_document(svg, "m.svg")))]


_HEAD = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 40">'
         '<rect width="40" height="40" fill="#eee"/>')
_MASK = '<mask id="m"><rect width="14" height="40" fill="white"/></mask>'
_GROUP = ('<g mask="url(#m)"><rect x="2" y="4" width="30" height="10" fill="red"/>'
          '<circle cx="20" cy="20" r="9"/></g>')
_TAIL = '<rect x="20" y="25" width="10" height="10" fill="green"/></svg>'


def test_a_mask_before_its_group_makes_the_group_one_block():
    assert _blocks(_HEAD + _MASK + _GROUP + _TAIL) == [
        (0, 0, True), (1, 2, True), (3, 3, True)]
    in_defs = _HEAD + "<defs>" + _MASK + "</defs>" + _GROUP + _TAIL
    assert _blocks(in_defs) == [(0, 0, True), (1, 2, True), (3, 3, True)]


@pytest.mark.parametrize("svg", [
    _HEAD + _GROUP + _MASK + _TAIL,                                  # after its user
    _HEAD + _MASK + _GROUP + _GROUP + _TAIL,                          # two users
    _HEAD.replace("<rect", "<style>g{mask:url(#m)}</style><rect", 1)  # a stylesheet
    + _MASK + _GROUP.replace(' mask="url(#m)"', "") + _TAIL,
], ids=["after", "shared", "stylesheet"])
def test_a_mask_cairosvg_may_draw_as_content_makes_the_document_one_block(
        render_pool, svg):
    us = extract_units(parse_document(svg, "m.svg"))
    assert [(b.lo, b.hi) for b in compute_blocks(us)] == [(0, len(us.units) - 1)]
    fast = loo_fast(us, SIZE, pool=render_pool)
    assert fast.method == "naive"


def test_an_empty_masked_group_before_a_late_mask_is_scored_as_drawn(render_pool):
    """CairoSVG draws a mask that follows its (empty) user as content: the one unit's
    leave-one-out image still holds it (fast once gave a blank canvas here)."""
    svg = (_HEAD.replace('<rect width="40" height="40" fill="#eee"/>', "")
           + '<path d="M7 12l20 3l-7 11z" fill="#808"/><g mask="url(#m)"></g>'
           '<mask id="m"><rect y="20" width="11" height="20" fill="black"/></mask></svg>')
    us = extract_units(parse_document(svg, "m.svg"))
    fast = loo_fast(us, SIZE, pool=render_pool)
    without = fast.image_without(0)
    assert (without[-10:, :5] == 0).all()  # the mask's black rect, at the bottom left
    assert _max_diff(fast, loo_naive(us, SIZE, pool=render_pool), 1) <= TOLERANCE


def test_the_users_of_a_pattern_are_one_block():
    pattern = ('<defs><pattern id="p" width="6" height="6" patternUnits="userSpaceOnUse">'
               '<rect width="3" height="3" fill="blue"/></pattern></defs>')
    svg = (_HEAD + pattern + '<rect x="2" y="2" width="9" height="9" fill="url(#p)" '
           'fill-opacity="0.5"/><circle cx="20" cy="20" r="4"/>'
           '<rect x="25" y="25" width="9" height="9" fill="url(#p)"/>' + _TAIL)
    assert _blocks(svg) == [(0, 0, True), (1, 3, False), (4, 4, True)]
    # Shapes that inherit the pattern from one group paint with it one after another.
    inherited = (_HEAD + pattern + '<g fill="url(#p)" fill-opacity="0.5">'
                 '<rect x="2" y="2" width="9" height="9"/><circle cx="20" cy="20" r="4"/>'
                 '</g>' + _TAIL)
    assert _blocks(inherited) == [(0, 0, True), (1, 2, False), (3, 3, True)]


def test_a_pattern_painted_through_use_makes_the_document_one_block(render_pool):
    """Each ``<use>`` of the rect multiplies the pattern's opacity again as CairoSVG
    paints it, which layers drawn apart do not see (45/255 off when this is not
    checked)."""
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" '
           'xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 40 40"><defs>'
           '<pattern id="p" width="5" height="5" patternUnits="userSpaceOnUse" '
           'opacity="0.5"><rect width="3" height="3" fill="blue"/></pattern>'
           '<rect id="r" x="5" y="5" width="20" height="20" fill="url(#p)" opacity="0.5"/>'
           '</defs><rect width="40" height="40" fill="#eee"/><use xlink:href="#r"/>'
           '<use xlink:href="#r" x="8" y="3"/>'
           '<rect x="20" y="20" width="15" height="15" fill="url(#p)"/></svg>')
    us = extract_units(parse_document(svg, "p.svg"))
    fast = loo_fast(us, SIZE, pool=render_pool)
    assert _max_diff(fast, loo_naive(us, SIZE, pool=render_pool), len(us.units)) <= TOLERANCE
    assert fast.method == "naive"


def test_a_masked_logo_is_scored_in_blocks_with_fewer_renders(render_pool):
    """logos/react-styleguidist.svg (Sketch export, seven masks before their groups)."""
    us = extract_units(load_document(CORPUS / "logos" / "react-styleguidist.svg"))
    fast = loo_fast(us, pool=render_pool)
    naive = loo_naive(us, pool=render_pool)
    assert fast.method == "fast" and len(fast.blocks) > 20
    assert fast.renders < naive.renders / 3
    assert _max_diff(fast, naive, len(us.units)) <= TOLERANCE
