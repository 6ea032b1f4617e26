"""VLM concept source: ask a local vision-language model what the picture's parts are.

transformers ``AutoProcessor`` + ``AutoModelForImageTextToText`` (default
``Qwen/Qwen2-VL-2B-Instruct``; any image-text-to-text model with a chat template works, as
does a local directory written with ``save_pretrained``). torch/transformers are imported
lazily. The answer is parsed robustly by :func:`parse_concepts`.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from svgloo.engine.errors import ConfigError
from svgloo.engine.protocols import Concept
from svgloo.plugins.torch_util import (as_rgb_uint8, hf_weight_files_cached, model_source,
                                       pick_device, require)

DEFAULT_MODEL_ID = "Qwen/Qwen2-VL-2B-Instruct"
MAX_CONCEPTS = 8
MAX_NAME_CHARS = 60
PROMPT = (
    "List the distinct visual parts of this image. Answer with only a JSON array of at most "
    "{n} short noun phrases, for example [\"red roof\", \"window\", \"tree\"]."
)

_BULLET = re.compile(r"^\s*(?:[-*\u2022>]+|\d+[.)]|[a-zA-Z][.)](?=\s))\s*")
_FENCE = re.compile(r"```[a-zA-Z]*")
_CTRL = re.compile(r"[\x00-\x1f\x7f-\x9f\ufffd]")


def _clean(item: Any) -> str | None:
    if isinstance(item, dict):
        for key in ("name", "part", "label", "object"):
            if isinstance(item.get(key), str):
                item = item[key]
                break
        else:
            return None
    if not isinstance(item, str):
        return None
    s = _CTRL.sub(" ", item)
    s = _BULLET.sub("", s)
    s = s.strip(" \t\"'`“”‘’[]{}")
    s = s.rstrip(" .;:!").strip(" \t\"'`“”‘’[]{}")
    s = re.sub(r"\s+", " ", s)
    if not s or not any(ch.isalnum() for ch in s) or len(s) > MAX_NAME_CHARS:
        return None
    return s


def _first_json_array(text: str) -> list | None:
    for start in [m.start() for m in re.finditer(r"\[", text)]:
        for end in [m.end() for m in re.finditer(r"\]", text[start:])]:
            try:
                value = json.loads(text[start:start + end])
            except ValueError:
                continue
            if isinstance(value, list):
                return value
    return None


def parse_concepts(text: str, max_concepts: int = MAX_CONCEPTS) -> list[str]:
    """Concept names from a model's answer: the first JSON array if there is one, else the
    comma/line-separated items. Stripped, de-duplicated (case-insensitively, first spelling
    kept), at most ``max_concepts``; an empty list when nothing usable is found."""
    if not isinstance(text, str):
        return []
    limit = max(0, min(int(max_concepts), MAX_CONCEPTS))
    body = _FENCE.sub(" ", text[:8000])  # answers are short; bound the bracket search
    items = _first_json_array(body)
    if items is None:
        items = []
        for line in body.splitlines():
            line = line.strip()
            if not line or line.endswith(":"):  # "Here are the parts:"
                continue
            items.extend(line.split(","))
    out: list[str] = []
    seen: set[str] = set()
    for item in items:
        name = _clean(item)
        if name is None or name.lower() in seen:
            continue
        seen.add(name.lower())
        out.append(name)
        if len(out) >= limit:
            break
    return out


class VlmConceptSource:
    """concepts(): ask the VLM for the image's parts; ``Concept(name, source="vlm")`` each.

    Options read by ``concepts`` (all optional):
      - ``vlm_prompt``: the question (``{n}`` is replaced by the cap)
      - ``vlm_max_concepts``: cap on the number of concepts (at most 8)
      - ``vlm_max_new_tokens``: generation budget (default 96)
      - ``vlm_max_side``: the render is downscaled so its longer side is at most this (448)
    """

    name = "vlm"

    def __init__(self, device: str | None = None, weights: str | None = None,
                 model_id: str = DEFAULT_MODEL_ID, max_new_tokens: int = 96,
                 max_side: int = 448):
        torch = self._torch = require("torch", "vlm")
        transformers = require("transformers", "vlm")
        self.device = pick_device(device, "vlm")
        self.model_id = source = model_source(weights, model_id, "VLM")
        self.max_new_tokens = max(1, int(max_new_tokens))
        self.max_side = max(28, int(max_side))
        dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
        try:
            self.processor = transformers.AutoProcessor.from_pretrained(source)
            model = transformers.AutoModelForImageTextToText.from_pretrained(source, dtype=dtype)
        except Exception as e:  # noqa: BLE001 - OSError (missing/unreachable), ValueError (unsupported)
            raise ConfigError(None, f"cannot load vision-language model {source!r}: {e}") from None
        self.model = model.to(self.device).eval()
        self.description = f"VLM {source} ({self.device})"

    @classmethod
    def weights_available(cls, model_id: str = DEFAULT_MODEL_ID) -> bool:
        """True if ``model_id`` is a local model directory or is in the HF cache (config and
        weights). Never downloads."""
        return hf_weight_files_cached(model_id)

    def _image(self, render_rgb: np.ndarray, max_side: int):
        from PIL import Image

        img = Image.fromarray(as_rgb_uint8(render_rgb, "render"), "RGB")
        scale = max_side / max(img.size)
        if scale < 1.0:
            img = img.resize((max(1, round(img.width * scale)), max(1, round(img.height * scale))),
                             Image.Resampling.BICUBIC)
        return img

    def ask(self, render_rgb: np.ndarray, options: dict | None = None) -> str:
        """The model's raw answer to the parts question."""
        torch = self._torch
        options = options or {}
        n = max(1, min(int(options.get("vlm_max_concepts", MAX_CONCEPTS)), MAX_CONCEPTS))
        prompt = str(options.get("vlm_prompt") or PROMPT).replace("{n}", str(n))
        image = self._image(render_rgb, int(options.get("vlm_max_side", self.max_side)))
        messages = [{"role": "user", "content": [{"type": "image"},
                                                 {"type": "text", "text": prompt}]}]
        text = self.processor.apply_chat_template(messages, add_generation_prompt=True,
                                                  tokenize=False)
        inputs = self.processor(text=[text], images=[image], return_tensors="pt").to(self.device)
        with torch.inference_mode():
            out = self.model.generate(
                **inputs, do_sample=False,
                max_new_tokens=max(1, int(options.get("vlm_max_new_tokens", self.max_new_tokens))))
        new_tokens = out[:, inputs["input_ids"].shape[1]:]
        return self.processor.batch_decode(new_tokens, skip_special_tokens=True)[0]

    def concepts(self, doc: Any, render_rgb: np.ndarray, options: dict | None = None) -> list[Concept]:
        options = options or {}
        n = max(0, min(int(options.get("vlm_max_concepts", MAX_CONCEPTS)), MAX_CONCEPTS))
        if n == 0:
            return []
        return [Concept(name, source="vlm") for name in parse_concepts(self.ask(render_rgb, options), n)]
