"""Model metrics, computed only from weights the user points at (``--weights NAME=PATH``).

Nothing here downloads or substitutes a model: without the named weights a metric is listed
under ``skipped_metrics`` with the reason. Models load once per run (the first sample that
needs one) and are shared by the worker threads.

``clip``: an OpenAI CLIP ViT-L/14 checkpoint (the original's ``clip.load("ViT-L/14")``),
loaded through svgloo's open_clip backbone as ``ViT-L-14``; ``clip-config`` may name an
open_clip model config JSON for another architecture (the output then says so).
"""

from __future__ import annotations

import threading

import numpy as np

from .engine import ConfigError, Reference, load_plugin

CLIP_ARCH = "ViT-L-14"
_lock = threading.Lock()


def clip_scorer(ctx):
    """A loaded CLIP backbone for ``ctx`` (cached on it), or None without ``clip`` weights."""
    path = ctx.weights.get("clip")
    if not path:
        return None
    with _lock:
        cached = ctx.options.get("_clip")
        if cached is None:
            cls = load_plugin("svgloo.backbones", "clip")
            try:
                cached = cls(weights=path, model_name=ctx.weights.get("clip-config", CLIP_ARCH),
                             pretrained=None)
            except ImportError as exc:
                raise ConfigError(path, f"CLIP metrics need the [clip] extra ({exc.name})") \
                    from None
            ctx.options["_clip"] = cached
        return cached


def clip_score(scorer, rgb: np.ndarray, caption: str) -> float:
    """SVGenius's CLIPScore: 100 * cos(text embedding, image embedding)."""
    prepared = scorer.prepare(Reference("text", "caption", text=caption))
    return float(scorer.similarity(rgb[None], prepared)[0]) * 100.0


def clip_label(ctx) -> str:
    config = ctx.weights.get("clip-config")
    return (f"open_clip {CLIP_ARCH} from {ctx.weights['clip']}" if not config else
            f"open_clip model {config} from {ctx.weights['clip']} (NOT the original's ViT-L/14)")
