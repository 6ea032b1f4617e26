"""Colours as the diagram evaluation compares them: a distance in RGB space (utils.py:59-117
of RAIVNLab/VFig@4874af7 ``rule-based-eval/lib``, reproduced, not copied)."""

from __future__ import annotations

import math
import re

# The names the original knows (utils.py:35-56): the CSS values of these 66 names, no
# others ("orchid" does not parse and scores 0, as there). ``transparent`` means none.
NAMED = {
    "black": "#000000", "white": "#ffffff", "red": "#ff0000", "lime": "#00ff00",
    "blue": "#0000ff", "yellow": "#ffff00", "cyan": "#00ffff", "aqua": "#00ffff",
    "magenta": "#ff00ff", "fuchsia": "#ff00ff", "silver": "#c0c0c0", "gray": "#808080",
    "grey": "#808080", "maroon": "#800000", "olive": "#808000", "green": "#008000",
    "purple": "#800080", "teal": "#008080", "navy": "#000080", "orange": "#ffa500",
    "coral": "#ff7f50", "salmon": "#fa8072", "tomato": "#ff6347", "gold": "#ffd700",
    "khaki": "#f0e68c", "violet": "#ee82ee", "indigo": "#4b0082", "brown": "#a52a2a",
    "tan": "#d2b48c", "beige": "#f5f5dc", "ivory": "#fffff0", "lavender": "#e6e6fa",
    "turquoise": "#40e0d0", "crimson": "#dc143c", "darkred": "#8b0000",
    "darkgreen": "#006400", "darkblue": "#00008b", "darkorange": "#ff8c00",
    "darkgray": "#a9a9a9", "darkgrey": "#a9a9a9", "lightgray": "#d3d3d3",
    "lightgrey": "#d3d3d3", "lightblue": "#add8e6", "lightyellow": "#ffffe0",
    "lightgreen": "#90ee90", "pink": "#ffc0cb", "hotpink": "#ff69b4",
    "deepskyblue": "#00bfff", "dodgerblue": "#1e90ff", "royalblue": "#4169e1",
    "steelblue": "#4682b4", "slategray": "#708090", "slategrey": "#708090",
    "dimgray": "#696969", "dimgrey": "#696969", "whitesmoke": "#f5f5f5",
    "snow": "#fffafa", "mintcream": "#f5fffa", "honeydew": "#f0fff0",
    "aliceblue": "#f0f8ff", "ghostwhite": "#f8f8ff", "floralwhite": "#fffaf0",
    "linen": "#faf0e6", "seashell": "#fff5ee", "oldlace": "#fdf5e6",
    "transparent": "none",
}
_RGB = re.compile(r"rgba?\(\s*([\d.]+%?)\s*,\s*([\d.]+%?)\s*,\s*([\d.]+%?)")
_MAX_DISTANCE = 255.0 * math.sqrt(3)


def hex_rgb(text: str | None) -> tuple[int, int, int] | None:
    """``#rgb``/``#rrggbb`` (the ``#`` optional, as in the original)."""
    h = (text or "").lstrip("#").lower()
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    if len(h) != 6:
        return None
    try:
        return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)
    except ValueError:
        return None


def parse_rgb(color: str | None) -> tuple[int, int, int] | None:
    """A name, ``rgb()``/``rgba()`` (percentages ×2.55 truncated, numbers rounded, not
    clamped) or hex; None for anything else."""
    c = (color or "").strip().lower()
    if c in ("", "none"):
        return None
    c = NAMED.get(c, c)
    if c == "none":
        return None
    m = _RGB.match(c)
    if m:
        try:
            return tuple(int(float(v[:-1]) * 2.55) if v.endswith("%") else  # type: ignore[return-value]
                         int(round(float(v))) for v in m.groups())
        except ValueError:
            return None
    return hex_rgb(c)


def color_score(gt: str | None, gen: str | None) -> float:
    """1 − RGB distance / (255·√3), floored at 0. Paint servers are not compared: both
    ``url(...)`` → 0.5, one → 0.3 (so a pattern against itself scores 0.5: deliberate,
    the original's numbers). none/empty on both sides → 1, on one → 0; a colour that does
    not parse → 0."""
    a, b = (gt or "").strip().lower(), (gen or "").strip().lower()
    if a.startswith("url(") and b.startswith("url("):
        return 0.5
    if a.startswith("url(") or b.startswith("url("):
        return 0.3
    a, b = NAMED.get(a, a), NAMED.get(b, b)
    if a in ("none", "") and b in ("none", ""):
        return 1.0
    if a in ("none", "") or b in ("none", ""):
        return 0.0
    ra, rb = parse_rgb(a), parse_rgb(b)
    if not ra or not rb:
        return 0.0
    return max(0.0, 1.0 - math.sqrt(sum((p - q) ** 2 for p, q in zip(ra, rb))) / _MAX_DISTANCE)
