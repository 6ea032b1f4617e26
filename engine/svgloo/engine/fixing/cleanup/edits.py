"""What a rewrite proposes: small edits of one parsed tree, each on one node.

Every rewrite module (editor.py, attributes.py, structure.py, shapes.py, device_rounding.py) reads the tree
of the text to rewrite and returns ``Edit``s; none of them changes that tree. ``apply``
makes a copy and carries out any subset of the edits on it, so the proof can try a subset,
keep it or drop it, and try again (rewrite.py).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from lxml import etree

from svgloo.engine.reading.document import SVG_NS, XLINK_NS

# Element names in the SVG namespace whose text is drawn or read: whitespace in them counts.
TEXT_ELEMENTS = frozenset({"text", "tspan", "textPath", "title", "desc", "style", "script",
                           "a", "switch", "foreignObject"})
_ID_IN_CSS = re.compile(r"#(-?[_a-zA-Z][\w-]*)")
_REFERENCE = re.compile(r"""url\(\s*['"]?\s*#([^\s'")]+)|^\s*#(\S+)\s*$""")
_SCRIPTED = re.compile(r"^(?:script|animate\w*|set|foreignObject|handler|listener)$")


@dataclass(frozen=True)
class Edit:
    """One rewrite of one node (``node``: its index in ``list(root.iter())``): ``change``
    edits attributes or text in place; ``remove`` and ``unwrap`` edits take the node out
    (``unwrap`` keeps its children in its place). ``saves``: characters it saves, roughly,
    for the summary; ``fallback``: what to try instead when the proof refuses it."""

    job: str
    node: int
    action: str                                   # "change" | "remove" | "unwrap"
    change: Callable[[etree._Element], None] | None = field(default=None, compare=False)
    saves: int = 0
    # a safer edit of the same node to try when the proof refuses this one (path data
    # spelled with the input's own absolute/relative steps: attributes.py)
    fallback: "Edit | None" = field(default=None, compare=False)


def local(tag) -> str:
    return etree.QName(tag).localname if isinstance(tag, str) else ""


def in_svg(node) -> bool:
    return isinstance(node.tag, str) and etree.QName(node).namespace in (SVG_NS, None)


@dataclass
class Context:
    """What every rewrite needs to know of the document, worked out once."""

    root: etree._Element
    nodes: list                                   # list(root.iter()): what Edit.node indexes
    scripted: bool                                # a script or animation may address anything
    stylesheet: str                               # all <style> text together
    referenced: set[str]                          # ids named anywhere (url(#), href, CSS #id)

    @classmethod
    def of(cls, root: etree._Element) -> "Context":
        nodes = list(root.iter())
        sheets = " ".join(n.text or "" for n in nodes if local(n.tag) == "style")
        scripted = any(_SCRIPTED.match(local(n.tag)) for n in nodes) or any(
            key.startswith("on") for n in nodes if isinstance(n.tag, str) for key in n.attrib)
        referenced: set[str] = set(_ID_IN_CSS.findall(sheets))
        for n in nodes:
            if not isinstance(n.tag, str):
                continue
            for key, value in n.attrib.items():
                if key in ("href", f"{{{XLINK_NS}}}href"):
                    value = value.strip()
                    if "#" in value:
                        referenced.add(value.split("#", 1)[1])
                    continue
                for m in re.finditer(r"url\(\s*['\"]?\s*#([^\s'\")]+)", value):
                    referenced.add(m.group(1))
                # begin="a.click", values="#a;#b" and the like in animations
                if scripted:
                    referenced.update(re.findall(r"[\w-]+", value))
        return cls(root, nodes, scripted, sheets, referenced)


def detach(node) -> None:
    """Take ``node`` out of its parent, keeping the text that follows it (its tail)."""
    parent = node.getparent()
    if parent is None:
        return
    tail = node.tail
    if tail:
        previous = node.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(node)


def unwrap(node) -> None:
    """Replace ``node`` by its children (its text and tail kept around them)."""
    parent = node.getparent()
    if parent is None:
        return
    at = parent.index(node)
    children = list(node)
    if node.text:
        previous = node.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + node.text
        else:
            parent.text = (parent.text or "") + node.text
    tail = node.tail
    for k, child in enumerate(children):
        parent.insert(at + k, child)
    if children:
        children[-1].tail = (children[-1].tail or "") + (tail or "")
        node.tail = None
    detach(node)


def drop_attributes(names: list[str]) -> Callable[[etree._Element], None]:
    """An Edit's change that removes these attributes (where the node still has them)."""
    def change(node) -> None:
        for name in names:
            node.attrib.pop(name, None)
    return change


def apply(root: etree._Element, edits: Iterable[Edit]) -> etree._Element:
    """A copy of ``root`` with ``edits`` carried out: changes first, then removals and
    unwraps from the last node to the first (so a child goes before its parent)."""
    out = copy.deepcopy(root)
    nodes = list(out.iter())
    chosen = sorted(edits, key=lambda e: e.node)
    for e in chosen:
        if e.action == "change" and e.change is not None:
            e.change(nodes[e.node])
    for e in reversed(chosen):
        if e.action == "remove":
            detach(nodes[e.node])
        elif e.action == "unwrap":
            unwrap(nodes[e.node])
    return out


__all__ = ["Edit", "Context", "TEXT_ELEMENTS", "local", "in_svg", "detach", "unwrap",
           "drop_attributes", "apply"]
