"""SVG transform lists as 3x3 matrices: what the artifact injection (artifacts.py) and the
edit benchmark (edits.py) both need to place a shape in an element's user space."""

from __future__ import annotations

import math
import re

import numpy as np

_NUM = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_TRANSFORM = re.compile(r"(matrix|translate|scale|rotate|skewX|skewY)\s*\(([^)]*)\)")


def parse_transform(value: str | None) -> np.ndarray:
    """3x3 matrix of an SVG transform list (unknown functions are ignored)."""
    m = np.eye(3)
    if not value:
        return m
    for fn, args in _TRANSFORM.findall(value):
        a = [float(x) for x in _NUM.findall(args)]
        t = np.eye(3)
        if fn == "matrix" and len(a) == 6:
            t = np.array([[a[0], a[2], a[4]], [a[1], a[3], a[5]], [0, 0, 1]])
        elif fn == "translate" and a:
            t[0, 2], t[1, 2] = a[0], (a[1] if len(a) > 1 else 0.0)
        elif fn == "scale" and a:
            t[0, 0], t[1, 1] = a[0], (a[1] if len(a) > 1 else a[0])
        elif fn == "rotate" and a:
            r = math.radians(a[0])
            rot = np.array([[math.cos(r), -math.sin(r), 0], [math.sin(r), math.cos(r), 0],
                            [0, 0, 1]])
            if len(a) >= 3:
                tr, back = np.eye(3), np.eye(3)
                tr[:2, 2], back[:2, 2] = (a[1], a[2]), (-a[1], -a[2])
                rot = tr @ rot @ back
            t = rot
        elif fn == "skewX" and a:
            t[0, 1] = math.tan(math.radians(a[0]))
        elif fn == "skewY" and a:
            t[1, 0] = math.tan(math.radians(a[0]))
        m = m @ t
    return m
