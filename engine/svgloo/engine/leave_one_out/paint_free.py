"""Cache keys that do not see an opaque colour, for results that depend on geometry only.

A path filled or stroked with an opaque solid colour covers the same pixels whatever the
colour: cairo composites the colour *in* the coverage mask, so a pixel's alpha is the
coverage and only its colour channels depend on the paint. Each subpath's extents (the
subpath windows' "boxes") are geometry alone, so after a colour edit, the most common edit
in an editor, they need not be measured again: their cache key is built from the text with
every opaque colour spelled one way. (The subpaths drawn alone, read for alpha only by the
findings, were keyed so too for a while: their key then differed between the first
scoring, which draws them with the windows, and the next, and paths nobody edited were
drawn again; tests/engine/test_incremental.py.)

Only colours that are opaque whatever the renderer makes of them are respelled: ``#rgb``,
``#rrggbb`` and ``rgb(r, g, b)`` (not named colours: an unknown name is not a colour;
not ``currentColor``, ``none``, ``url(...)`` or colours with alpha). A text with a mask or
a filter keeps its colours: there a colour can become alpha (luminance masks,
``feColorMatrix``)."""

from __future__ import annotations

import functools
import re

_OPAQUE = r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})(?![0-9a-fA-F])" \
          r"|rgb\(\s*[0-9.]+%?\s*,\s*[0-9.]+%?\s*,\s*[0-9.]+%?\s*\)"
_PAINTS = r"fill|stroke|stop-color|color|flood-color|lighting-color"
# fill="#abc", stroke='rgb(1,2,3)' (attributes) and fill:#abc (style declarations), in one
# pass: the texts are whole documents, and an edit keys a few of them.
_PAINT = re.compile(r"(?<![\w-])(?:" + _PAINTS + r")(?:\s*=\s*[\"']\s*|\s*:\s*)"
                    r"(" + _OPAQUE + r")(?=\s*(?:!important\s*)?[;\"'}])")
_COLOUR_TO_ALPHA = re.compile(r"mask|filter", re.IGNORECASE)
CANONICAL = "#000"


@functools.lru_cache(maxsize=32)  # texts are whole documents: respelled once each
def paint_free(text: str) -> str:
    """``text`` with every opaque fill, stroke and stop colour spelled ``#000``: equal for
    two texts that differ only in opaque colours, so their coverage is equal (see the
    module); ``text`` itself when a colour could turn into alpha there."""
    if _COLOUR_TO_ALPHA.search(text):
        return text
    return _PAINT.sub(lambda m: m.group(0)[:m.start(1) - m.start(0)] + CANONICAL, text)
