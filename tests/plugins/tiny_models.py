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


QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>",
                 "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]

# Qwen-style chat template (the real checkpoints ship their own with the processor).
QWEN_CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for c in message['content'] %}{% if c['type'] == 'image' %}"
    "<|vision_start|><|image_pad|><|vision_end|>{% elif c['type'] == 'text' %}{{ c['text'] }}"
    "{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def tiny_qwen2vl_dir(tmp_dir: Path, seed: int = 0) -> Path:
    """Save a tiny random Qwen2-VL (Qwen2VLForConditionalGeneration) and a Qwen2VLProcessor
    with a byte-level tokenizer built from a handwritten vocabulary; returns the dir."""
    import torch
    from tokenizers import AddedToken
    from tokenizers.pre_tokenizers import ByteLevel
    from transformers import (Qwen2Tokenizer, Qwen2VLConfig, Qwen2VLForConditionalGeneration,
                              Qwen2VLImageProcessor, Qwen2VLProcessor, Qwen2VLVideoProcessor)

    vocab = {}
    for ch in sorted(ByteLevel.alphabet()):
        vocab[ch] = len(vocab)
    for tok in QWEN_SPECIALS:
        vocab[tok] = len(vocab)
    tokenizer = Qwen2Tokenizer(vocab=vocab, merges=[], eos_token="<|im_end|>",
                               pad_token="<|endoftext|>", unk_token=None,
                               model_max_length=512)
    tokenizer.add_tokens([AddedToken(t, special=True) for t in QWEN_SPECIALS],
                         special_tokens=True)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in QWEN_SPECIALS}
    image_processor = Qwen2VLImageProcessor(size={"shortest_edge": 28 * 28,
                                                  "longest_edge": 56 * 56})
    video_processor = Qwen2VLVideoProcessor(size={"shortest_edge": 28 * 28,
                                                  "longest_edge": 56 * 56})
    processor = Qwen2VLProcessor(image_processor=image_processor, tokenizer=tokenizer,
                                 video_processor=video_processor,
                                 chat_template=QWEN_CHAT_TEMPLATE)
    cfg = Qwen2VLConfig(
        text_config=dict(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                         max_position_embeddings=1024,
                         rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                          "mrope_section": [2, 3, 3]},
                         bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"],
                         pad_token_id=ids["<|endoftext|>"]),
        vision_config=dict(depth=1, embed_dim=32, hidden_size=32, num_heads=2, mlp_ratio=2,
                           patch_size=14, temporal_patch_size=2, spatial_merge_size=2),
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
    )
    torch.manual_seed(seed)
    model = Qwen2VLForConditionalGeneration(cfg).eval()
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    out = Path(tmp_dir) / "tiny-qwen2-vl"
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out
