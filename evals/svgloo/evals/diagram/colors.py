"""Colours as the diagram evaluation compares them: a distance in integer RGB space."""

from __future__ import annotations

import math
import re

# CSS colour names that diagrams use; a name outside the table does not parse (score 0),
# as in the original, whose table has 66 names. ``transparent`` means none.
NAMED = {
    "black": "#000000", "white": "#ffffff", "red": "#ff0000", "green": "#008000",
    "blue": "#0000ff", "yellow": "#ffff00", "cyan": "#00ffff", "aqua": "#00ffff",
    "magenta": "#ff00ff", "fuchsia": "#ff00ff", "gray": "#808080", "grey": "#808080",
    "silver": "#c0c0c0", "maroon": "#800000", "olive": "#808000", "lime": "#00ff00",
    "teal": "#008080", "navy": "#000080", "purple": "#800080", "orange": "#ffa500",
    "pink": "#ffc0cb", "brown": "#a52a2a", "gold": "#ffd700", "beige": "#f5f5dc",
    "ivory": "#fffff0", "khaki": "#f0e68c", "lavender": "#e6e6fa", "coral": "#ff7f50",
    "salmon": "#fa8072", "tomato": "#ff6347", "crimson": "#dc143c", "indigo": "#4b0082",
    "violet": "#ee82ee", "orchid": "#da70d6", "plum": "#dda0dd", "tan": "#d2b48c",
    "chocolate": "#d2691e", "sienna": "#a0522d", "peru": "#cd853f", "wheat": "#f5deb3",
    "turquoise": "#40e0d0", "skyblue": "#87ceeb", "steelblue": "#4682b4",
    "royalblue": "#4169e1", "dodgerblue": "#1e90ff", "lightblue": "#add8e6",
    "darkblue": "#00008b", "lightgreen": "#90ee90", "darkgreen": "#006400",
    "forestgreen": "#228b22", "seagreen": "#2e8b57", "limegreen": "#32cd32",
    "lightgray": "#d3d3d3", "lightgrey": "#d3d3d3", "darkgray": "#a9a9a9",
    "darkgrey": "#a9a9a9", "dimgray": "#696969", "whitesmoke": "#f5f5f5",
    "gainsboro": "#dcdcdc", "darkred": "#8b0000", "firebrick": "#b22222",
    "darkorange": "#ff8c00", "lightyellow": "#ffffe0", "mintcream": "#f5fffa",
    "aliceblue": "#f0f8ff", "honeydew": "#f0fff0",
}

_RGB = re.compile(r"rgba?\(\s*([\d.]+)%?\s*[, ]\s*([\d.]+)%?\s*[, ]\s*([\d.]+)%?", re.I)


def normalise(color: str | None) -> str:
    """Lower case, names to hex, ``transparent`` to ``none``; '' for no colour."""
    c = (color or "").strip().lower()
    if c == "transparent":
        return "none"
    return NAMED.get(c, c)


def parse_rgb(color: str) -> tuple[int, int, int] | None:
    c = normalise(color)
    if re.fullmatch(r"#[0-9a-f]{6}", c):
        return int(c[1:3], 16), int(c[3:5], 16), int(c[5:7], 16)
    if re.fullmatch(r"#[0-9a-f]{3}", c):
        return tuple(int(ch * 2, 16) for ch in c[1:])  # type: ignore[return-value]
    m = _RGB.match(c)
    if m:
        return tuple(min(255, int(float(v))) for v in m.groups())  # type: ignore[return-value]
    return None


def color_score(gt: str | None, gen: str | None) -> float:
    """1 − RGB distance / (255·√3), floored at 0. Paint servers are not compared: both
    ``url(...)`` → 0.5, one → 0.3 (so a pattern against itself scores 0.5: deliberate,
    the original's numbers). none/empty on both sides → 1, on one → 0; a colour that does
    not parse → 0."""
    g, p = (gt or "").strip(), (gen or "").strip()
    gu, pu = "url(" in g, "url(" in p
    if gu and pu:
        return 0.5
    if gu or pu:
        return 0.3
    g, p = normalise(g), normalise(p)
    g_none, p_none = g in ("", "none"), p in ("", "none")
    if g_none and p_none:
        return 1.0
    if g_none or p_none:
        return 0.0
    a, b = parse_rgb(g), parse_rgb(p)
    if a is None or b is None:
        return 0.0
    return max(0.0, 1.0 - math.dist(a, b) / (255.0 * math.sqrt(3.0)))
