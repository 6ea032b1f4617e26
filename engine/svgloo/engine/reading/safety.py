"""Checks made on a parsed document before anything renders it.

CairoSVG's safe mode still lets small hostile files run long (a 1.4 KB ``<use>`` bomb) or
reference resources. We estimate the drawn element count with ``<use>`` expanded (and
detect reference cycles), and list every external reference, which the renderer's
fetcher refuses; the caller reports them as warnings.
"""

from __future__ import annotations

import re

from svgloo.engine.reading.document import XLINK_NS, Document
from svgloo.engine.errors import LimitError
from svgloo.engine.limits import DEFAULT_LIMITS, Limits

_HREF_KEYS = ("href", f"{{{XLINK_NS}}}href")
_URL_REF = re.compile(r"url\(\s*['\"]?([^'\")\s]+)")
_IMPORT = re.compile(r"@import\s+(?:url\()?\s*['\"]?([^'\")\s;]+)")


def href_of(node) -> str | None:
    for key in _HREF_KEYS:
        value = node.get(key)
        if value is not None:
            return value.strip()
    return None


def external_references(doc: Document) -> list[str]:
    """Every reference that would leave the document (file, network, or an inline SVG)."""
    found: list[str] = []
    for node in doc.nodes:
        href = href_of(node)
        if href and not href.startswith("#") and not _allowed_data(href):
            found.append(f"<{_local(node)}> href {_short(href)}")
        for key, value in node.attrib.items():
            for url in _URL_REF.findall(value):
                if not url.startswith("#") and not _allowed_data(url):
                    found.append(f"<{_local(node)}> {_local_key(key)}: url({_short(url)})")
        if _local(node) == "style" and node.text:
            for url in _IMPORT.findall(node.text):
                found.append(f"<style> @import {_short(url)}")
            for url in _URL_REF.findall(node.text):
                if not url.startswith("#") and not _allowed_data(url):
                    found.append(f"<style> url({_short(url)})")
    return found


def _allowed_data(url: str) -> bool:
    head = url[:40].lower().replace(" ", "")
    return head.startswith(("data:image/png", "data:image/jpeg", "data:image/jpg"))


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def _local(node) -> str:
    tag = node.tag
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else str(tag)


def _local_key(key: str) -> str:
    return key.rsplit("}", 1)[-1]


def use_expansion(doc: Document) -> int:
    """How many elements the renderer draws with every ``<use>`` expanded.

    Raises LimitError on a reference cycle or when the estimate passes the limit during
    the walk (so a bomb is refused without being expanded in full)."""
    ids = {}
    for node in doc.nodes:
        ident = node.get("id")
        if ident is not None and ident not in ids:
            ids[ident] = node
    cost: dict = {}
    visiting: set = set()
    cap = DEFAULT_LIMITS.max_use_expansion * 1000

    def walk(node) -> int:
        if node in cost:
            return cost[node]
        if node in visiting:
            raise LimitError(doc.name, f"<use> reference cycle through id "
                                       f"{node.get('id')!r}")
        visiting.add(node)
        total = 1
        for child in node:
            if isinstance(child.tag, str):
                total += walk(child)
        if _local(node) == "use":
            href = href_of(node) or ""
            target = ids.get(href[1:]) if href.startswith("#") else None
            if target is not None:
                total += walk(target)
        visiting.discard(node)
        cost[node] = min(total, cap)
        return cost[node]

    import sys
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 4 * len(doc.nodes) + 100))
    try:
        return walk(doc.root)
    except RecursionError:
        raise LimitError(doc.name, "elements nest too deeply") from None
    finally:
        sys.setrecursionlimit(old)


def check_document(doc: Document, limits: Limits = DEFAULT_LIMITS) -> list[str]:
    """Raise LimitError for a document that must not be rendered; return warnings."""
    drawn = use_expansion(doc)
    if drawn > limits.max_use_expansion:
        raise LimitError(doc.name, f"<use> references expand to about {drawn} drawn elements; "
                                   f"the limit is {limits.max_use_expansion}")
    return [f"external reference refused (not fetched): {ref}"
            for ref in external_references(doc)]
