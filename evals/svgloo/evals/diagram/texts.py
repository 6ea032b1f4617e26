"""The ``<text>`` elements of a diagram with the positions and fonts the evaluation gives them
(main.py:402 and eval_shapes.py:469 of RAIVNLab/VFig@4874af7 ``rule-based-eval``)."""

from __future__ import annotations

from dataclasses import dataclass

from .geometry import NOT_DRAWN, local, number, translate_of
from .styles import font_of


@dataclass
class Text:
    x: float
    y: float
    text: str
    font: str
    used: bool = False


def _text_and_children(el) -> tuple[str, list]:
    """(leading text, [(child, its tail)]) with comments and processing instructions
    dissolved into the text around them, as xml.etree (which drops them) reads it."""
    lead, children = el.text or "", []
    for k in el:
        if isinstance(k.tag, str):
            children.append([k, k.tail or ""])
        elif children:
            children[-1][1] += k.tail or ""
        else:
            lead += k.tail or ""
    return lead, children


def text_content(el) -> str:
    """Stripped pieces of the element's text, its descendants' and their tails, joined by
    single spaces (eval_shapes.py:32)."""
    lead, children = _text_and_children(el)
    parts = [lead.strip()]
    for child, tail in children:
        parts.append(text_content(child))
        parts.append(tail.strip())
    return " ".join(p for p in parts if p)


def positioned_texts(root) -> list[Text]:
    """Every non-empty ``<text>`` outside defs/markers/patterns/..., at its own x/y plus the
    ``translate()`` of each ``<g>`` above it (no other transform, not the text's own), with
    its font-family read without CSS classes."""
    out: list[Text] = []

    def visit(node, ox: float, oy: float) -> None:
        tag = local(node)
        if tag in NOT_DRAWN:
            return
        if tag == "text":
            content = text_content(node).strip()
            if content:
                out.append(Text(number(node.get("x")) + ox, number(node.get("y")) + oy,
                                content, font_of(node)))
            return
        for child in node:
            if not isinstance(child.tag, str):
                continue
            if local(child) == "g":
                tx, ty = translate_of(child.get("transform", ""))
                visit(child, ox + tx, oy + ty)
            else:
                visit(child, ox, oy)

    visit(root, 0.0, 0.0)
    return out
