"""The extension points: one small Protocol each, found through entry points.

- ``svgloo.backbones``: similarity backbones (``pixel`` built in, ``clip`` with the extra).
- ``svgloo.concepts``: concept sources (author, labels, regions, vlm).
- ``svgloo.grounders``: concept grounders (labels, regions, masks, clipseg).

A third party adds one by declaring an entry point in its own package, e.g.::

    [project.entry-points."svgloo.backbones"]
    mine = "my_pkg.backbone:MyBackbone"
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class Reference:
    """What the picture is compared against.

    kind: "image" (``image`` is RGB uint8 at the render size, letterboxed on white like a
    render), "text" (``text`` is a prompt) or "self" (``image`` is the full render itself).
    ``source`` says where it came from, for the output ("--reference cat.png",
    "svgloo.toml: icons/*.svg", "sidecar cat.ref.png", "<title>", "self").
    """

    kind: str
    source: str
    image: np.ndarray | None = None
    text: str | None = None


@runtime_checkable
class Backbone(Protocol):
    """A similarity S(image, reference) in roughly [-1, 1]; higher is more similar.

    Constructed as ``cls(device=None, weights=None)``; loading happens in the constructor
    (the daemon keeps the instance warm). ``name`` is the registry name ("pixel", "clip");
    ``description`` is what the output reports ("pixel SSIM", "open_clip ViT-B-32 openai
    (cpu)").

    A backbone that can score a leave-one-out image from its patch on the full render more
    cheaply than from the whole image implements ``PatchedBackbone`` as well.
    """

    name: str
    description: str
    takes_text: bool

    def prepare(self, reference: Reference) -> Any:
        """Embed or otherwise pre-process the reference once; the result is passed back."""

    def similarity(self, images: np.ndarray, prepared: Any) -> np.ndarray:
        """``images``: (N, H, W, 3) uint8 RGB. Returns (N,) float64 similarities."""


@dataclass(frozen=True)
class EarlierScoring:
    """What an earlier scoring of the same document (same settings, same backbone) hands the
    next one's backbone, after an edit: its full render, its leave-one-out images as patches
    on that render, and the reference as the backbone prepared it. A backbone may reuse
    what the edit cannot have changed; its answer must equal a scoring without it. (The
    engine's own stages take their parts of the earlier run, typed: leave-one-out its
    ``LooResult``, the proof its ``ProofState``; ``ScoreRun`` carries all of them.)"""

    full: np.ndarray          # (H, W, 3) uint8 RGB
    patches: Sequence[Any]    # objects with ``box`` ((y0, y1, x0, x1) or None) and ``pixels``
    prepared: Any             # what ``prepare`` returned for the earlier scoring


@runtime_checkable
class PatchedBackbone(Backbone, Protocol):
    """A backbone that scores leave-one-out images given as patches on the full render.

    ``similarity_patched`` returns (N,) similarities, one per patch (a patch with ``box`` None
    is the full render itself); it calls ``on_done(k)`` as k more patches are scored
    (progress), and may use ``previous`` (see ``EarlierScoring``)."""

    def similarity_patched(self, full: np.ndarray, patches: Sequence[Any], prepared: Any, *,
                           on_done: Callable[[int], object] | None = None,
                           previous: EarlierScoring | None = None) -> np.ndarray:
        ...


@dataclass(frozen=True)
class Concept:
    name: str
    source: str                     # "author", "labels", "regions", "vlm"
    elements: tuple[int, ...] = ()  # element indices that define it (labels), if any
    mask: np.ndarray | None = field(default=None, compare=False)  # regions: bool (H, W)


class ConceptSource(Protocol):
    name: str

    def concepts(self, doc: Any, render_rgb: np.ndarray, options: dict) -> list[Concept]:
        """List the document's visual concepts (may be empty)."""


class Grounder(Protocol):
    name: str

    def heatmaps(self, doc: Any, render_rgb: np.ndarray, concepts: list[Concept],
                 options: dict) -> np.ndarray:
        """(K, H, W) float32 heatmaps in [0, 1], one per concept, at the render size."""


def discover(group: str) -> dict[str, Any]:
    """Entry points of ``group`` by name, not yet loaded (loading may import torch).
    Read from the installed packages once per process: the scan of every package's
    metadata took 5-8 ms, and ``--backbone auto`` looks for the CLIP plugin for every file
    scored (0.4 s of a 56-file batch). A plugin installed later is seen by processes
    started later (a running daemon: after ``svgloo daemon stop``)."""
    return dict(_entry_points(group))


@functools.lru_cache(maxsize=None)
def _entry_points(group: str) -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=group)}


def load_plugin(group: str, name: str):
    eps = discover(group)
    if name not in eps:
        known = ", ".join(sorted(eps)) or "none installed"
        raise KeyError(f"unknown {group.split('.')[-1][:-1]} {name!r} (known: {known})")
    return eps[name].load()


__all__ = ["Reference", "Backbone", "EarlierScoring", "PatchedBackbone", "Concept",
           "ConceptSource", "Grounder", "discover", "load_plugin"]
