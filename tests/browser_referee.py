"""Chromium as the referee of svgloo's removal proofs: plain functions shared by the corpus
test (tests/test_browser_proofs.py) and the measuring script (tests/measure_browser_referee.py).

What is refereed is exactly what an editor applies: one unit's own quick fix
(``units.removal_edit``), and the bulk fix's edit set (``units.text_without`` of the whole
set). Chromium draws the file before and after at the analysis size, on a transparent page;
the two pictures are compared as premultiplied RGBA and composited on a white and on a dark
page (browser.py), and every pixel that moves by more than the tolerance counts.

Two definitions of "svgloo says this can go" are known:
- ``proven_removals``: the proof contract (each unit row's ``removal.status == "proven"``,
  and the result's ``bulk_removal.units``);
- ``invisible_removals``: the definition before that contract (``visible == False`` units,
  and the editor's bulk fix: those units proven together by ``engine.removal.check_removal``
  in CairoSVG at the analysis size, offered when two or more remain).
"""

from __future__ import annotations

from dataclasses import dataclass

from browser import Chromium, largest_difference, pixels_over, view_differences


@dataclass(frozen=True)
class Candidates:
    """What svgloo offers to remove from one file."""

    singles: tuple[int, ...]        # units offered one at a time
    bulk: tuple[int, ...] | None    # the set offered at once (None: no bulk fix)


def sampled(candidates: Candidates, cap: int) -> Candidates:
    """At most ``cap`` of the single removals, spread evenly over document order (a file can
    offer hundreds: logos/sugarss.svg offers 556, one Chromium render each). Not the rest
    removed at once instead: units proven one at a time need not be removable together
    (two copies of one shape), which is why the bulk set has a proof of its own."""
    singles = candidates.singles
    if len(singles) <= cap:
        return candidates
    step = len(singles) / cap
    picked = tuple(singles[int(k * step)] for k in range(cap))
    return Candidates(picked, candidates.bulk)


@dataclass(frozen=True)
class Verdict:
    """Chromium's picture with one removal applied, against the file as it was."""

    file: str
    what: str                # "unit 12 (path #logo)" or "bulk fix (7 units)"
    units: tuple[int, ...]
    changed: int             # pixels beyond the tolerance (any view)
    worst: int               # largest channel difference /255, in any view
    view: str                # where the worst difference is: "rgba", "white" or "dark"
    worst_on_white: int      # largest difference on the white page alone (what scoring sees)

    def line(self) -> str:
        return (f"{self.file}: {self.what}: {self.changed} px beyond tolerance, "
                f"max {self.worst}/255 ({self.view})")


def proven_removals(result: dict) -> Candidates:
    """The contract: units whose ``removal.status`` is "proven", and ``bulk_removal``."""
    singles = tuple(r["index"] for r in result["units"]
                    if r["removal"]["status"] == "proven")
    bulk = result.get("bulk_removal")
    return Candidates(singles, tuple(bulk["units"]) if bulk and bulk["units"] else None)


def invisible_removals(run, size: int) -> Candidates:
    """Before the contract: ``visible == False`` units, and the editor's bulk fix (the LSP's
    rule: the candidates proven together in CairoSVG, offered when two or more remain)."""
    from svgloo.engine.proving.removal import check_removal

    singles = tuple(r["index"] for r in run.result["units"] if not r["visible"])
    bulk = None
    if len(singles) >= 2:
        check = check_removal(run.units, singles, size=size)
        if len(check.removable) >= 2:
            bulk = tuple(check.removable)
    return Candidates(singles, bulk)


def _describe(us, index: int) -> str:
    u = us.units[index]
    name = f"<{u.tag}{' #' + u.id if u.id else ''}>"
    if u.kind == "subpath":
        name += f" subpath {u.subpath}"
    return f"unit {index} {name}"


def variants(us, candidates: Candidates) -> list[tuple[str, tuple[int, ...], str]]:
    """(what, units, text) for each removal to referee, the editor's own edits applied."""
    from svgloo.engine.reading.units import apply_edits, removal_edit, text_without

    out = [(_describe(us, i), (i,), apply_edits(us.doc.text, [removal_edit(us, i)]))
           for i in candidates.singles]
    if candidates.bulk:
        out.append((f"bulk fix ({len(candidates.bulk)} units)", candidates.bulk,
                    text_without(us, set(candidates.bulk))))
    return out


def referee(chromium: Chromium, name: str, us, candidates: Candidates, size: int,
            tolerance: int) -> list[Verdict]:
    """Chromium's verdict on every removal ``candidates`` offers for the document of ``us``:
    one batch of renders (the file as it is, then each variant)."""
    todo = variants(us, candidates)
    if not todo:
        return []
    texts = [us.doc.text] + [text for _, _, text in todo]
    full, *pictures = chromium.render([t.encode("utf-8") for t in texts], size)
    out = []
    for (what, units, _), picture in zip(todo, pictures):
        worst, _, view = largest_difference(full, picture)
        on_white = int(view_differences(full, picture)["white"].max())
        out.append(Verdict(name, what, units, pixels_over(full, picture, tolerance),
                           worst, view, on_white))
    return out


__all__ = ["Candidates", "Verdict", "proven_removals", "invisible_removals", "sampled",
           "variants", "referee"]
