"""Editor metadata: what Inkscape, Sodipodi, Sketch and Illustrator leave in a file for
themselves, and comments. No renderer draws any of it.

Kept: ``<title>`` and ``<desc>`` (read by screen readers), comments starting with ``!``
(licence notes, as SVGO keeps them), and a ``<metadata>`` that names a licence, rights or
an author (user data, not editor state).
"""

from __future__ import annotations

from lxml import etree

from svgloo.engine.fixing.cleanup.edits import Context, Edit, drop_attributes, local

EDITOR_NAMESPACES = frozenset({
    "http://www.inkscape.org/namespaces/inkscape",
    "http://sodipodi.sourceforge.net/DTD/sodipodi-0.dtd",
    "http://www.bohemiancoding.com/sketch/ns",
    "http://ns.adobe.com/AdobeIllustrator/10.0/",
    "http://ns.adobe.com/Graphs/1.0/",
    "http://ns.adobe.com/AdobeSVGViewerExtensions/3.0/",
    "http://ns.adobe.com/Variables/1.0/",
    "http://ns.adobe.com/SaveForWeb/1.0/",
    "http://ns.adobe.com/Extensibility/1.0/",
    "http://ns.adobe.com/Flows/1.0/",
    "http://ns.adobe.com/ImageReplacement/1.0/",
    "http://ns.adobe.com/GenericCustomNamespace/1.0/",
    "http://ns.adobe.com/XPath/1.0/",
    "http://www.serif.com/",
    "http://www.vectornator.io",
    "http://www.figma.com/figma/ns",
})
# Words in a <metadata> block that make it user data: kept.
_USER_DATA = ("license", "rights", "creator", "publisher", "contributor")


def _namespace(name: str) -> str | None:
    return etree.QName(name).namespace if name.startswith("{") else None


def edits(ctx: Context) -> list[Edit]:
    out: list[Edit] = []
    for i, node in enumerate(ctx.nodes):
        if i == 0:
            pass
        elif isinstance(node, etree._Comment):
            if not (node.text or "").startswith("!"):
                out.append(Edit("editor", i, "remove", saves=len(node.text or "") + 7))
            continue
        elif isinstance(node, etree._ProcessingInstruction):
            continue  # <?xml-stylesheet?> draws; others are not ours to judge
        elif not isinstance(node.tag, str):
            continue
        elif _namespace(node.tag) in EDITOR_NAMESPACES:
            out.append(Edit("editor", i, "remove", saves=len(etree.tostring(node))))
            continue
        elif local(node.tag) == "metadata":
            body = etree.tostring(node).decode("utf-8", "replace").lower()
            if not any(word in body for word in _USER_DATA):
                out.append(Edit("editor", i, "remove", saves=len(body)))
            continue
        names = [k for k in node.attrib if _namespace(k) in EDITOR_NAMESPACES]
        if names:
            out.append(Edit("editor", i, "change", drop_attributes(names),
                            saves=sum(len(k) + len(node.get(k)) for k in names)))
    return out


__all__ = ["EDITOR_NAMESPACES", "edits"]
