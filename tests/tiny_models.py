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


def tiny_clip_tokenizer(model_max_length: int = 16):
    """A byte-level CLIP tokenizer from a handwritten vocabulary (no merges), built offline."""
    from transformers import CLIPTokenizer
    from tokenizers.pre_tokenizers import ByteLevel

    chars = sorted(ByteLevel.alphabet())
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for ch in chars:
        vocab.setdefault(ch, len(vocab))
    for ch in chars:
        vocab.setdefault(ch + "</w>", len(vocab))
    return CLIPTokenizer(vocab=vocab, merges=[], model_max_length=model_max_length)


def tiny_clipseg_dir(tmp_dir: Path, seed: int = 0) -> Path:
    """Save a tiny random CLIPSegForImageSegmentation + CLIPSegProcessor; returns the dir."""
    import torch
    from transformers import (CLIPSegConfig, CLIPSegForImageSegmentation, CLIPSegProcessor,
                              ViTImageProcessor)

    tok = tiny_clip_tokenizer()
    cfg = CLIPSegConfig(
        text_config=dict(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=2, max_position_embeddings=16,
                         bos_token_id=0, eos_token_id=1, pad_token_id=1),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=2, image_size=64, patch_size=16),
        projection_dim=32, extract_layers=[0, 1], reduce_dim=16,
        decoder_num_attention_heads=2, decoder_intermediate_size=32,
    )
    torch.manual_seed(seed)
    model = CLIPSegForImageSegmentation(cfg).eval()
    image_processor = ViTImageProcessor(size={"height": 64, "width": 64},
                                        image_mean=[0.485, 0.456, 0.406],
                                        image_std=[0.229, 0.224, 0.225])
    processor = CLIPSegProcessor(image_processor=image_processor, tokenizer=tok)
    out = Path(tmp_dir) / "tiny-clipseg"
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out
