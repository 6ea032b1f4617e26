"""CLIPSeg grounder: one text-prompted segmentation heatmap per concept.

transformers' ``CLIPSegProcessor`` + ``CLIPSegForImageSegmentation``; the default model is
``CIDAS/clipseg-rd64-refined`` (352 px). A local directory written with ``save_pretrained``
loads the same way. torch/transformers are imported lazily.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from svgloo.engine.errors import ConfigError
from svgloo.engine.protocols import Concept
from svgloo.plugins.torch_util import (as_rgb_uint8, hf_weight_files_cached, model_source,
                                       pick_device, require)

DEFAULT_MODEL_ID = "CIDAS/clipseg-rd64-refined"


class ClipSegGrounder:
    """heatmaps(): sigmoid(CLIPSeg logits) at the model's resolution, bilinearly resized to
    the render size; (K, H, W) float32 in [0, 1].

    Options read by ``heatmaps`` (all optional):
      - ``clipseg_batch_size``: concepts per forward pass (default: constructor's, 8)
      - ``clipseg_prompt``: prompt template with ``{}`` for the concept name (default ``"{}"``)
    """

    name = "clipseg"

    def __init__(self, device: str | None = None, weights: str | None = None,
                 model_id: str = DEFAULT_MODEL_ID, batch_size: int = 8, prompt: str = "{}"):
        self._torch = require("torch", "vlm")
        transformers = require("transformers", "vlm")
        self.device = pick_device(device, "vlm")
        self.model_id = source = model_source(weights, model_id, "CLIPSeg")
        self.batch_size = max(1, int(batch_size))
        self.prompt = prompt
        try:
            self.processor = transformers.CLIPSegProcessor.from_pretrained(source)
            model = transformers.CLIPSegForImageSegmentation.from_pretrained(source)
        except Exception as e:  # noqa: BLE001 - OSError (missing/unreachable), ValueError (bad config)
            raise ConfigError(None, f"cannot load CLIPSeg model {source!r}: {e}") from None
        self.model = model.to(self.device).eval()
        self.description = f"CLIPSeg {source} ({self.device})"

    @classmethod
    def weights_available(cls, model_id: str = DEFAULT_MODEL_ID) -> bool:
        """True if ``model_id`` is a local model directory or is in the HF cache (config,
        weights and (pre)processor config). Never downloads."""
        from svgloo.plugins.torch_util import hf_weights_available

        return hf_weight_files_cached(model_id) and any(
            hf_weights_available(model_id, (f,))
            for f in ("preprocessor_config.json", "processor_config.json"))

    def heatmaps(self, doc: Any, render_rgb: np.ndarray, concepts: list[Concept],
                 options: dict | None = None) -> np.ndarray:
        torch = self._torch
        from PIL import Image

        options = options or {}
        rgb = as_rgb_uint8(render_rgb, "render")
        h, w = rgb.shape[:2]
        if not concepts:
            return np.zeros((0, h, w), np.float32)
        template = str(options.get("clipseg_prompt", self.prompt) or "{}")
        prompts = [template.format(c.name if isinstance(c, Concept) else str(c)) for c in concepts]
        bs = max(1, int(options.get("clipseg_batch_size", self.batch_size)))
        image = Image.fromarray(rgb, "RGB")
        pixel_values = self.processor(images=[image], return_tensors="pt")["pixel_values"].to(self.device)
        out = []
        with torch.inference_mode():
            for i in range(0, len(prompts), bs):
                chunk = prompts[i:i + bs]
                enc = self.processor.tokenizer(chunk, padding=True, truncation=True, return_tensors="pt")
                logits = self.model(
                    input_ids=enc["input_ids"].to(self.device),
                    attention_mask=enc["attention_mask"].to(self.device),
                    pixel_values=pixel_values.expand(len(chunk), -1, -1, -1),
                ).logits
                if logits.ndim == 2:  # (H, W) from older versions' squeeze() when K == 1
                    logits = logits[None]
                probs = torch.sigmoid(logits.float())[:, None]
                probs = torch.nn.functional.interpolate(probs, size=(h, w), mode="bilinear",
                                                        align_corners=False)
                out.append(probs[:, 0].clamp_(0.0, 1.0).cpu().numpy())
        return np.ascontiguousarray(np.concatenate(out, axis=0), dtype=np.float32)
