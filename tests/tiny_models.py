"""Builders for tiny, randomly initialised models of the real classes the torch plugins load.

No network: every model here is built from a config, saved to a temporary directory and
loaded back through the plugin's ordinary loading path.
"""

from __future__ import annotations

import json
from pathlib import Path

TINY_CLIP_CFG = {
    "embed_dim": 32,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "head_width": 16,
                   "patch_size": 16},
    "text_cfg": {"context_length": 16, "vocab_size": 49408, "width": 32, "heads": 2,
                 "layers": 1},
}


def tiny_clip_config(tmp_dir: Path, name: str = "svgloo-tiny-clip") -> Path:
    """Write a tiny open_clip CLIP config JSON; returns its path (stem = model name)."""
    path = Path(tmp_dir) / f"{name}.json"
    path.write_text(json.dumps(TINY_CLIP_CFG), encoding="utf-8")
    return path


def tiny_clip_checkpoint(tmp_dir: Path, seed: int = 0):
    """(config path, checkpoint path, in-memory model, preprocess) for a tiny open_clip CLIP."""
    import open_clip
    import torch

    cfg = tiny_clip_config(tmp_dir)
    open_clip.add_model_config(cfg)
    torch.manual_seed(seed)
    model, _, preprocess = open_clip.create_model_and_transforms(cfg.stem, pretrained=None)
    model.eval()
    ckpt = Path(tmp_dir) / "tiny_clip.pt"
    torch.save(model.state_dict(), ckpt)
    return cfg, ckpt, model, preprocess
