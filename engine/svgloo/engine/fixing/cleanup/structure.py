"""Structure that draws nothing: blanks between elements, groups that only group, ids
nothing names, and definitions nothing uses.

What scripts or CSS might address stays: with a ``<script>``, an animation or an ``on*``
handler in the file, no id or definition is touched (``Context.scripted``); an id named
anywhere in the file (``url(#)``, ``href``, a ``#id`` in a stylesheet) stays; so do the
ids of ``<symbol>``/``<view>`` and of anything in ``<defs>``, which other files reach
(``<use href="sprite.svg#icon">``) where no render of this file can show it.
"""

from __future__ import annotations

from lxml import etree

from svgloo.engine.fixing.cleanup.edits import TEXT_ELEMENTS, Context, Edit, in_svg, local

DEFINITIONS = frozenset({"clipPath", "mask", "linearGradient", "radialGradient", "pattern",
                         "filter", "marker"})
_KEEP_IN_DEFS = frozenset({"style", "script", "symbol"})


def _in_text(node) -> bool:
    """Whether blanks in or after ``node`` may be drawn or read: inside text content,
    a style sheet, a title, or anything not SVG."""
    while node is not None:
        if not in_svg(node) or local(node.tag) in TEXT_ELEMENTS:
            return True
        node = node.getparent()
    return False


def _in_defs(node) -> bool:
    node = node.getparent()
    while node is not None:
        if local(node.tag) in ("defs", "symbol"):
            return True
        node = node.getparent()
    return False


def whitespace_edits(ctx: Context) -> list[Edit]:
    out = []
    for i, node in enumerate(ctx.nodes):
        if not isinstance(node.tag, str) or _in_text(node):
            continue
        text_blank = node.text is not None and not node.text.strip()
        if text_blank or len(node) and any(c.tail is not None and not c.tail.strip()
                                           for c in node):
            out.append(Edit("whitespace", i, "change", _strip_blanks,
                            saves=len(node.text or "") if text_blank else 1))
    return out


def _strip_blanks(node) -> None:
    if node.text is not None and not node.text.strip():
        node.text = None
    for child in node:
        if child.tail is not None and not child.tail.strip():
            child.tail = None


def id_edits(ctx: Context) -> list[Edit]:
    if ctx.scripted:
        return []
    out = []
    for i, node in enumerate(ctx.nodes):
        if i == 0 or not in_svg(node):
            continue
        ident = node.get("id")
        if ident is None or ident in ctx.referenced or local(node.tag) in ("symbol", "view") \
                or _in_defs(node) or local(node.tag) in DEFINITIONS:
            continue
        out.append(Edit("ids", i, "change", _drop_id, saves=len(ident) + 6))
    return out


def _drop_id(node) -> None:
    node.attrib.pop("id", None)


def group_edits(ctx: Context) -> list[Edit]:
    """Groups with no attributes but an id nothing names (or none): unwrapped; with
    nothing inside: removed."""
    out = []
    for i, node in enumerate(ctx.nodes):
        if i == 0 or not in_svg(node) or local(node.tag) != "g":
            continue
        names = set(node.attrib)
        if names - {"id"} or ("id" in names and (ctx.scripted or
                                                 node.get("id") in ctx.referenced)):
            continue
        parent = node.getparent()
        if parent is None or not in_svg(parent) or local(parent.tag) in ("switch",):
            continue
        empty = len(node) == 0 and not (node.text or "").strip()
        out.append(Edit("groups", i, "remove" if empty else "unwrap",
                        saves=7 + sum(len(k) + len(v) + 4 for k, v in node.attrib.items())))
    return out


def definition_edits(ctx: Context) -> list[Edit]:
    """Definitions no reference reaches: in ``<defs>``, an element without an id (nothing
    can name it) or a clip path, mask, gradient, pattern, filter or marker whose id is
    named nowhere. Not ``<symbol>`` (sprites), ``<style>`` or ``<script>``."""
    if ctx.scripted:
        return []
    out = []
    for i, node in enumerate(ctx.nodes):
        if not in_svg(node) or i == 0:
            continue
        parent = node.getparent()
        tag = local(node.tag)
        if tag in _KEEP_IN_DEFS or parent is None or local(parent.tag) != "defs":
            continue
        ident = node.get("id")
        if ident is None and not any(isinstance(d.tag, str) and d.get("id") in ctx.referenced
                                     for d in node.iter()):
            unused = True
        else:
            unused = tag in DEFINITIONS and ident not in ctx.referenced
        if unused:
            out.append(Edit("definitions", i, "remove", saves=len(etree.tostring(node))))
    return out


def edits(ctx: Context) -> list[Edit]:
    return whitespace_edits(ctx) + id_edits(ctx) + group_edits(ctx) + definition_edits(ctx)


__all__ = ["edits", "whitespace_edits", "id_edits", "group_edits", "definition_edits"]
