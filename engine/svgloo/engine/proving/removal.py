"""Removing several units at once, proven by rendering: a name kept for callers.

The proofs themselves live in ``proof.py``, the one module that decides "this can be
removed" for one unit, a bulk set, a speck group and every front end: without
``allowed``, nothing may change (two renderers, three sizes, alpha compared, a strict
tolerance, units svgloo cannot vouch for left out); with ``allowed`` (specks, meant to
change the picture a little), each unit may change what it changes alone.
"""

from __future__ import annotations

from svgloo.engine.proving.proof import (RemovalCheck, changed_pixels, check_removal,
                                         check_removal_text)

__all__ = ["RemovalCheck", "changed_pixels", "check_removal", "check_removal_text"]
