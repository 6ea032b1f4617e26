"""Short messages in plain words: what is wrong with a unit and what to do about it.

Every front end shows these where a person reads one line (an editor's squiggle, a table
cell): at most MAX_MESSAGE characters, no renderer names, no /255 tolerances. The proof's
and the finding's exact wording stays in the result (``removal.reason``, a finding's
``detail``) for hover, related information and ``--json``: a designer reads "safe to
remove", a reviewer who doubts it can still see what was rendered and compared.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# An editor shows a diagnostic's message inline or in a one-line popup; past ~120
# characters it wraps or is cut mid-word (VS Code's problems panel, Neovim's virtual text).
MAX_MESSAGE = 120


def fit(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` cut to ``limit`` characters at a word, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    if text[limit - 1] != " ":      # mid-word: drop the partial word
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:(") + "…"


def named(name: str, note: str, limit: int = MAX_MESSAGE) -> str:
    """``name: note`` within ``limit``: a long element name (ids can be anything) is cut
    before the note is, since the note says what to do."""
    room = limit - len(note) - 2
    if len(name) > room:
        name = fit(name, max(room, 12))
    return fit(f"{name}: {note}", limit)


# The unverified reasons of engine features.py and proof.py, by a phrase each contains,
# said the way a person checks it. Order matters: the first phrase found wins.
_UNVERIFIED_WHY = (
    ("filter", "it uses a filter"),
    ("draws where CairoSVG's and resvg's", "renderers disagree around it"),
    ("proof stopped", "too many elements to check them all"),
    ("proven only together", "it is only invisible together with others"),
    ("does not fetch", "it shows an external file"),
    ("image", "it shows an image svgloo does not draw"),
    ("non-scaling-stroke", "it uses non-scaling strokes"),
    ("zero-length subpath", "browsers may draw a dot for it"),
    ("CSS property", "it uses CSS svgloo does not draw"),
    ("href", "its link is ambiguous (href and xlink:href)"),
    ("coincide", "its edges coincide with another subpath's"),
)


def unverified_why(reason: str) -> str:
    """Why svgloo cannot vouch for a removal, in a few words, from the proof's reason."""
    for phrase, words in _UNVERIFIED_WHY:
        if phrase in reason:
            return words
    return "svgloo cannot prove it"


def removal_note(removal: Mapping[str, Any] | None) -> str | None:
    """What to do about a unit with no footprint, from its removal proof (``proven``,
    ``unverified`` or ``visible``); None when there is no proof to speak of."""
    removal = removal or {}
    status = removal.get("status")
    if status == "proven":
        return "no visible effect: safe to remove"
    if status == "unverified":
        return (f"looks invisible, but {unverified_why(str(removal.get('reason', '')))}: "
                "check before removing")
    if status == "visible":
        return "changes the picture only faintly: keep it unless that is a mistake"
    return None


def harmful_note() -> str:
    return "harmful: the picture is closer to its reference without it, so remove it"


def speck_note(footprint_pixels: int) -> str:
    return (f"a speck, visible on only {footprint_pixels} px: a stray point? "
            "remove it if unintended")


def hidden_note(hidden_share: float) -> str:
    return (f"{hidden_share:.0%} hidden behind later shapes: remove it if nothing of it "
            "should show")


def finding_note(finding: Mapping[str, Any], row: Mapping[str, Any] | None = None) -> str:
    """The short note for an engine finding (findings.py), from its numbers (a speck's
    pixels from its unit ``row`` when the finding does not carry them)."""
    if finding.get("kind") == "speck":
        pixels = finding.get("footprint_pixels", (row or {}).get("footprint_pixels", 0))
        return speck_note(int(pixels))
    if finding.get("kind") == "mostly_hidden":
        return hidden_note(float(finding.get("hidden_share", 0.0)))
    return str(finding.get("message") or finding.get("kind", ""))


__all__ = ["MAX_MESSAGE", "finding_note", "fit", "harmful_note", "hidden_note", "named",
           "removal_note", "speck_note", "unverified_why"]
