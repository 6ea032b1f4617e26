"""Which units can be composited as independent layers, and which must render together.

The fast leave-one-out method treats the picture as a stack of layers composited with
"over" in z-order. That is exact for units that are drawn independently. It is wrong when
something couples units:
- an ancestor with a group effect (opacity < 1, filter, mask, blend mode,
  isolation, a nested ``<svg>`` viewport, ``<switch>``) - the effect applies to the group's
  composite, not to each member;
- a reference between units (``<use href="#a">``, ``<textPath>``, ``url(#a)``): removing
  the target changes the unit that references it;
- subpaths of one compound path (fill rules: a hole is only a hole together with its outer
  subpath);
- structural CSS selectors (``:nth-child``, ``+``, ``~``): removing any unit can restyle
  others.
Each coupling becomes a z-range of units; overlapping ranges merge into blocks. A block is
rendered as a whole and once without each of its units, which is exact for any coupling.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from svgloo.engine.reading.document import Document
from svgloo.engine.reading.safety import href_of
from svgloo.engine.reading.units import UnitSet

_STRUCTURAL_CSS = re.compile(r":(nth-|first-|last-|only-|not\(|empty|has\()|[+~]")
_EFFECT_CSS = re.compile(r"(?<![-\w])(opacity|filter|mask|mix-blend-mode|isolation)\s*:")
_URL_ID = re.compile(r"url\(\s*['\"]?#([^'\")\s]+)")
# clip-path is not among them: CairoSVG applies a group's clip as a cairo clip to each
# drawing operation inside it, so the clip distributes over the layers (each layer render
# keeps its ancestors and thus the clip).


@dataclass(frozen=True)
class Block:
    lo: int   # first unit index
    hi: int   # last unit index (inclusive)
    # Local: removing a member changes pixels only where that member has pixels when drawn
    # alone, and only members overlapping it matter there (group opacity, nested
    # viewports, compound paths taken whole). Not local: filters, references, switch,
    # sibling-dependent CSS, text flow.
    local: bool = False

    @property
    def units(self) -> range:
        return range(self.lo, self.hi + 1)

    def __len__(self) -> int:
        return self.hi - self.lo + 1


def _style_props(node) -> dict[str, str]:
    props = {}
    for decl in (node.get("style") or "").split(";"):
        key, sep, value = decl.partition(":")
        if sep:
            props[key.strip().lower()] = value.strip()
    return props


def _has_effect(node, tag: str, is_root: bool, css_effects: bool) -> str | None:
    """None, "local" (opacity, a nested viewport), "mask", or "global" (filters, switch,
    blend modes, or effects a stylesheet may set)."""
    if tag == "switch":
        return "global"
    if tag == "svg" and not is_root:
        return "local"
    props = _style_props(node)
    for key in ("filter", "mix-blend-mode", "isolation"):
        value = props.get(key, node.get(key))
        if value is not None and value.strip().lower() not in ("none", "normal", "auto", ""):
            return "global"
    value = props.get("mask", node.get("mask"))
    if value is not None and value.strip().lower() not in ("none", ""):
        return "mask"
    value = props.get("opacity", node.get("opacity"))
    if value is not None:
        text = value.strip()
        try:
            if float(text.rstrip("%")) < (100 if text.endswith("%") else 1):
                return "local"
        except ValueError:
            return "global"
    # A stylesheet that sets effects could match any group (by class, id or tag); the
    # root is left out: a stylesheet effect on the whole picture is vanishingly rare.
    if css_effects and tag in ("g", "a") and not is_root:
        return "global"
    return None


def stylesheet_text(doc: Document) -> str:
    return "\n".join(n.text or "" for n, e in zip(doc.nodes, doc.elements)
                     if e.tag == "style")


def _css_without_comments(doc: Document) -> str:
    return re.sub(r"/\*.*?\*/", "", stylesheet_text(doc), flags=re.S)


def has_structural_css(doc: Document) -> bool:
    """Selectors whose match depends on siblings (``:nth-child``, ``+``, ``~``...)."""
    # "+" and "~" only matter in selectors: look at the text outside declaration blocks.
    selectors = re.sub(r"\{[^}]*\}", "{}", _css_without_comments(doc))
    return bool(_STRUCTURAL_CSS.search(selectors))


def compute_blocks(us: UnitSet) -> list[Block]:
    doc = us.doc
    n = len(us.units)
    if n == 0:
        return []
    if has_structural_css(doc):
        return [Block(0, n - 1, local=False)]
    css_effects = bool(_EFFECT_CSS.search(_css_without_comments(doc)))

    unit_of_element: dict[int, list[int]] = {}
    for u in us.units:
        unit_of_element.setdefault(u.element, []).append(u.index)

    # Unit index ranges under each element (units are leaves, so a subtree's units are
    # contiguous in document order).
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    node_index = doc.index_of
    for u in us.units:
        node = doc.nodes[u.element]
        while node is not None:
            i = node_index(node)
            first.setdefault(i, u.index)
            last[i] = u.index
            node = node.getparent()

    ranges: list[tuple[int, int, bool]] = []
    for members in unit_of_element.values():
        if len(members) > 1:
            # Subpaths of one compound path. Cairo rasterises a path as a whole: its
            # anti-aliasing of one subpath's edges depends on the other subpaths (by up to
            # 25/255 at edge pixels, anywhere in the path). The block stays local, but
            # the fast method treats the path as one piece: a subpath's region is the
            # whole path's box, and the path is drawn whole or whole-but-one.
            ranges.append((members[0], members[-1], True))

    ids: dict[str, int] = {}
    for i, node in enumerate(doc.nodes):
        ident = node.get("id")
        if ident is not None:
            ids.setdefault(ident, i)
    painters = _painters(doc, ids)
    if painters is None or not resources_keep_their_place(doc, painters):
        # A mask or pattern CairoSVG may draw as content (see resources_keep_their_place):
        # only whole-document renders reproduce that.
        ranges.append((0, n - 1, False))
    else:
        for resource, users in painters.items():
            drawing = [u for u in users if u in first]
            if doc.elements[resource].tag == "pattern" and drawing:
                # Each shape painted with a pattern sees the ones painted before it: the
                # units under its users (a group's children inherit its fill) are one
                # block.
                lo = min(first[u] for u in drawing)
                hi = max(last[u] for u in drawing)
                if hi > lo:
                    ranges.append((lo, hi, False))

    # Group effects: the outermost effect ancestor's whole range is one block.
    root_index = 0
    for i, node in enumerate(doc.nodes):
        if i not in first:
            continue
        tag = doc.elements[i].tag
        effect = _has_effect(node, tag, i == root_index, css_effects)
        if effect and i not in unit_of_element:  # a unit's own effects are in its layer
            # A mask (kept in its place, above) multiplies the group's picture by its
            # own pixel by pixel: removing a member changes the group only where that
            # member draws, so the block is local, as for opacity.
            ranges.append((first[i], last[i], effect in ("local", "mask")))

    # References into drawn content.
    owner = _unit_owner(us)
    for i, node in enumerate(doc.nodes):
        targets = []
        href = href_of(node)
        if href and href.startswith("#"):
            targets.append(href[1:])
        for value in node.attrib.values():
            targets.extend(_URL_ID.findall(value))
        for target_id in targets:
            t = ids.get(target_id)
            if t is None:
                continue
            affected = _units_touching(doc, t, first, last, owner)
            if affected is None:
                continue
            src = owner.get(i)
            if src is None:
                ranges.append((0, n - 1, False))  # referenced from defs/clip/mask
            else:
                ranges.append((min(affected[0], src[0]), max(affected[1], src[1]), False))

    # Text layout state can carry over between <text> elements without explicit x/y.
    texts = [u.index for u in us.units if u.tag == "text"]
    floating = [i for i in texts
                if doc.nodes[us.units[i].element].get("x") is None
                or doc.nodes[us.units[i].element].get("y") is None]
    if len(texts) > 1 and floating:
        ranges.append((texts[0], texts[-1], False))

    return _merge(ranges, n)


_REWRITTEN = ("mask", "pattern")  # resources CairoSVG changes as it paints with them
_NOT_DRAWN = frozenset({"defs", "symbol", "clipPath", "mask", "pattern", "marker"})


def _painters(doc: Document, ids: dict[str, int]) -> dict[int, list[int]] | None:
    """Each mask and pattern element -> the elements that paint with it (``mask``,
    ``fill``, ``stroke``, in attributes or ``style``), in document order; None when
    the drawing may use them in ways not seen here (see resources_keep_their_place)."""
    rewritten = {i for i, e in enumerate(doc.elements) if e.tag in _REWRITTEN}
    if not rewritten:
        return {}
    css = _css_without_comments(doc)
    css_targets = set(_URL_ID.findall(css))
    if re.search(r"(?<![-\w])mask\s*:", css) or any(
            doc.nodes[i].get("id") in css_targets for i in rewritten):
        return None  # elements a stylesheet picks are not seen here
    painters: dict[int, list[int]] = {i: [] for i in rewritten}
    for i, node in enumerate(doc.nodes):
        href = href_of(node)
        if i in rewritten and href and ids.get(href.lstrip("#")) in rewritten:
            return None  # a mask or pattern that inherits from another
        for value in node.attrib.values():
            for target_id in _URL_ID.findall(value):
                t = ids.get(target_id)
                if t in rewritten:
                    painters[t].append(i)
    return painters


def _drawn_directly(doc: Document, i: int) -> bool:
    return not any(isinstance(a.tag, str) and doc.elements[doc.index_of(a)].tag in _NOT_DRAWN
                   for a in doc.nodes[i].iterancestors())


def resources_keep_their_place(doc: Document, painters: dict[int, list[int]]) -> bool:
    """Whether every mask and pattern of the document stays a resource in CairoSVG's
    drawing, so that layers can be drawn apart.

    CairoSVG paints with a mask or a pattern by turning its element into a group
    (``paint_mask``, ``draw_pattern`` set its tag to ``g``) and rewriting it: a mask's
    position set from the first element it masks, a pattern's opacity multiplied by its
    user's, its size fixed from the first user's box. A ``<mask>`` or ``<pattern>`` that
    follows its first user in the document outside ``<defs>`` is then drawn as content
    when the drawing reaches it, in every render that keeps that user, even an empty
    masked group (layer texts keep every masked group: layers.LayerTexts); a second
    user of a mask gets the first one's position. So each mask must be used once, each
    mask or pattern come before its users or lie in ``<defs>``, its users be drawn
    where they are written (not only through ``<use>``), and no stylesheet may pick
    them. Then a masked group is a local group effect like opacity, and a pattern's users
    are coupled (compute_blocks); otherwise the document is one block.
    tests/engine/test_mask_blocks.py checks both against naive renders of generated
    documents. ``painters``: what _painters found (not None)."""
    for resource, users in painters.items():
        if not users:
            continue
        if doc.elements[resource].tag == "mask" and len(users) > 1:
            return False
        if any(not _drawn_directly(doc, u) for u in users):
            return False
        if resource > users[0] and _drawn_directly(doc, resource):
            return False
    return True


def _unit_owner(us: UnitSet) -> dict[int, tuple[int, int]]:
    """element index -> unit range of the unit containing it (the unit itself or a child
    of a unit, such as a <tspan> or <textPath>)."""
    doc = us.doc
    owner: dict[int, tuple[int, int]] = {}
    by_element: dict[int, list[int]] = {}
    for u in us.units:
        by_element.setdefault(u.element, []).append(u.index)
    for element, members in by_element.items():
        span = (members[0], members[-1])
        owner[element] = span
        for child in doc.nodes[element].iter():
            if isinstance(child.tag, str):
                owner[doc.index_of(child)] = span
    return owner


def _units_touching(doc: Document, t: int, first: dict, last: dict,
                    owner: dict) -> tuple[int, int] | None:
    if t in owner:
        return owner[t]
    if t in first:  # a container of drawn units
        return first[t], last[t]
    return None


def _merge(ranges: list[tuple[int, int, bool]], n: int) -> list[Block]:
    ranges = sorted(ranges)
    merged: list[list] = []
    for lo, hi, local in ranges:
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
            merged[-1][2] = merged[-1][2] and local
        else:
            merged.append([lo, hi, local])
    blocks: list[Block] = []
    pos = 0
    for lo, hi, local in merged:
        blocks.extend(Block(i, i, True) for i in range(pos, lo))
        blocks.append(Block(lo, hi, local))
        pos = hi + 1
    blocks.extend(Block(i, i, True) for i in range(pos, n))
    return blocks


def unaffected_units(us: UnitSet) -> set[int]:
    """Units with no group effect on any ancestor. Their layer can be captured during a
    shared render pass (render.render_captured_layers) with exact pixels, because nothing
    between them and the canvas is drawn through a group of its own."""
    doc = us.doc
    css_effects = bool(_EFFECT_CSS.search(_css_without_comments(doc)))
    effect_of: dict[int, bool] = {}

    def effected(i: int) -> bool:
        if i not in effect_of:
            node = doc.nodes[i]
            parent = node.getparent()
            own = _has_effect(node, doc.elements[i].tag, parent is None, css_effects)
            effect_of[i] = bool(own) or (parent is not None and effected(doc.index_of(parent)))
        return effect_of[i]

    out = set()
    for unit in us.units:
        parent = doc.nodes[unit.element].getparent()
        if parent is None or not effected(doc.index_of(parent)):
            out.add(unit.index)
    return out


def global_effect_above(doc: Document, e: int) -> bool:
    """Whether an ancestor of element ``e`` draws its content through a group effect that
    moves pixels (a filter, a blend mode, ``switch``, one a stylesheet may set). Opacity,
    a mask and a nested viewport composite the group pixel by pixel: an edit of ``e``
    still changes only pixels where ``e`` inks (proof_reuse)."""
    css_effects = bool(_EFFECT_CSS.search(_css_without_comments(doc)))
    node = doc.nodes[e].getparent()
    while node is not None:
        i = doc.index_of(node)
        parent = node.getparent()
        if _has_effect(node, doc.elements[i].tag, parent is None, css_effects) == "global":
            return True
        node = parent
    return False
