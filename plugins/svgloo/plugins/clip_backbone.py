"""CLIP similarity backbone (open_clip): cosine similarity of image embeddings against an
image, text or self reference.

torch and open_clip are imported lazily (inside functions), so listing entry points works
on the base install.
"""

from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from svgloo.engine.errors import ConfigError, SvglooError
from svgloo.engine.reading.files import read_regular_file
from svgloo.engine.protocols import Reference
from svgloo.plugins.clip_preprocess import DeviceSteps, device_steps_of
from svgloo.plugins.torch_util import as_rgb_uint8, pick_device, require

# open_clip's file names and its configuration of the default model (ViT-B-32, "openai"),
# as open_clip 3.x has them (tests/plugins/test_clip_backbone.py checks they still agree).
HF_WEIGHTS_NAME = "open_clip_pytorch_model.bin"
HF_SAFE_WEIGHTS_NAME = "open_clip_model.safetensors"
_DEFAULT_TAG = ("ViT-B-32", "openai")
_DEFAULT_CFG = {
    "hf_hub": "timm/vit_base_patch32_clip_224.openai/",
    "url": "https://openaipublic.azureedge.net/clip/models/40d365715913c9da98579312b702a82c18"
           "be219cc2a73407c4526f58eba950af/ViT-B-32.pt",
}

_SCHEMAS = ("hf-hub:", "local-dir:")
PREPROCESS_THREADS_ENV = "SVGLOO_CLIP_PREPROCESS_THREADS"
MAX_PREPROCESS_THREADS = 8
MAX_CONFIG_BYTES = 1024 * 1024


def _resolve_model_name(model_name: str) -> str:
    """Register a JSON config file with open_clip and return the name to create it by.

    Accepts a built-in name ("ViT-B-32"), a name registered with
    ``open_clip.add_model_config``, an ``hf-hub:``/``local-dir:`` identifier, or a path to
    a JSON model config (its file stem becomes the model name).
    """
    open_clip = require("open_clip", "clip")
    if not model_name:
        raise ConfigError(None, "no open_clip model name given")
    if model_name.startswith(_SCHEMAS):
        return model_name
    looks_like_path = model_name.endswith(".json") or os.path.isfile(model_name)
    if looks_like_path:
        path = Path(model_name).expanduser()
        if not path.is_file():
            raise ConfigError(None, f"open_clip model config file not found: {model_name}")
        try:  # bounded and non-blocking: a FIFO or /dev/zero named here is refused unread
            cfg = json.loads(read_regular_file(path, MAX_CONFIG_BYTES).decode("utf-8"))
        except (SvglooError, ValueError) as e:
            raise ConfigError(None, f"cannot read open_clip model config {model_name}: {e}") from None
        if not isinstance(cfg, dict) or not all(k in cfg for k in ("embed_dim", "vision_cfg", "text_cfg")):
            raise ConfigError(None, f"{model_name} is not an open_clip model config "
                                    "(needs embed_dim, vision_cfg and text_cfg)")
        open_clip.add_model_config(path)
        return path.stem
    model_name = model_name.replace("/", "-")  # open_clip accepts "ViT-B/32" for "ViT-B-32"
    if model_name not in open_clip.list_models():
        raise ConfigError(None, f"unknown open_clip model {model_name!r}; see "
                                "open_clip.list_models(), or pass a JSON model config path")
    return model_name


def default_preprocess_threads() -> int:
    """Threads that preprocess a batch of images: ``$SVGLOO_CLIP_PREPROCESS_THREADS`` when
    set to a positive number, else the usable cores, at most 8 (1 means one image after
    the other, in the calling thread)."""
    configured = os.environ.get(PREPROCESS_THREADS_ENV, "").strip()
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    affinity = getattr(os, "sched_getaffinity", None)  # not on macOS or Windows
    cores = len(affinity(0)) if affinity else (os.cpu_count() or 1)
    return max(1, min(cores, MAX_PREPROCESS_THREADS))


def _hub_cache_has_repo(repo: str) -> bool:
    """Whether the Hugging Face cache holds a folder for model ``repo``: the first thing
    ``try_to_load_from_cache`` checks, asked without importing huggingface_hub itself
    (0.1 s, which ``auto`` paid on every score where the weights were never fetched)."""
    try:
        import huggingface_hub.constants as hub_constants
    except ImportError:
        return False
    folder = "models--" + repo.replace("/", "--")
    return os.path.isdir(os.path.join(hub_constants.HF_HUB_CACHE, folder))


class ClipBackbone:
    """open_clip CLIP: S = cos(embed(image), embed(reference)).

    ``weights`` is a local checkpoint (state_dict saved with torch.save, .pt/.bin/.safetensors);
    without it the ``pretrained`` tag is used (downloaded by open_clip on first use, like any
    open_clip user would).
    """

    name = "clip"
    takes_text = True

    PRECISIONS = ("fp32", "bf16", "int8")
    # Where the images are resized and normalised: open_clip's PIL transform on host
    # threads, or the same steps on the model's device (clip_preprocess.py); auto is the
    # device on CUDA and the host on the CPU, whose numbers stay the host path's.
    PREPROCESS_MODES = ("auto", "host", "device")

    def __init__(self, device: str | None = None, weights: str | None = None,
                 model_name: str = "ViT-B-32", pretrained: str | None = "openai",
                 batch_size: int | None = None, precision: str = "fp32",
                 preprocess_threads: int | None = None, preprocess: str = "auto"):
        torch = require("torch", "clip")
        open_clip = require("open_clip", "clip")
        if precision not in self.PRECISIONS:
            raise ConfigError(None, f"unknown CLIP precision {precision!r} "
                                    f"({', '.join(self.PRECISIONS)})")
        if preprocess not in self.PREPROCESS_MODES:
            raise ConfigError(None, f"unknown CLIP preprocessing {preprocess!r} "
                                    f"({', '.join(self.PREPROCESS_MODES)})")
        self.device = pick_device(device)
        if precision == "int8" and self.device != "cpu":
            raise ConfigError(None, "--precision int8 (dynamic quantisation) runs on the CPU "
                                    "only; use bf16 on a GPU")
        self.precision = precision
        # A GPU takes large batches; on a CPU, batches beyond a few dozen images only
        # cost memory (the encoder is compute-bound per image).
        batch_size = batch_size or (128 if self.device != "cpu" else 32)
        self.batch_size = max(1, int(batch_size))
        # Each image is preprocessed on its own by open_clip's PIL/torchvision transform, so
        # threads (PIL's resize and torch's kernels release the GIL) give the same tensors.
        self.preprocess_threads = max(1, int(preprocess_threads or default_preprocess_threads()))
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self.model_name = _resolve_model_name(model_name)
        kwargs: dict[str, Any] = {}
        if weights:
            weights = os.fspath(weights)
            if not os.path.isfile(weights):
                raise ConfigError(None, f"CLIP weights file not found: {weights}")
            source: str | None = weights
            label = os.path.basename(weights)
        else:
            source = pretrained or None
            label = pretrained or "random-init"
            # The openai ViT-B-32 tag was trained with QuickGELU; the plain config uses GELU.
            # Match the tag so the weights mean what they were trained to mean.
            tag_cfg = open_clip.pretrained.get_pretrained_cfg(self.model_name, pretrained or "")
            if tag_cfg.get("quick_gelu") and not self.model_name.endswith("quickgelu"):
                kwargs["force_quick_gelu"] = True
        try:
            model, _, transform = open_clip.create_model_and_transforms(
                self.model_name, pretrained=source, device=self.device, **kwargs)
            tokenizer = open_clip.get_tokenizer(self.model_name)
        except ConfigError:
            raise
        except Exception as e:  # noqa: BLE001 - RuntimeError/FileNotFoundError/OSError from open_clip/hub
            what = weights or f"pretrained={pretrained!r}"
            hint = "" if weights else (" (offline? run once with internet access to fill the "
                                       "cache, or pass weights=<local checkpoint>)")
            raise ConfigError(None, f"cannot load open_clip {model_name} ({what}): {e}{hint}") from None
        model.eval()
        # The precision is the image tower's, which runs once per leave-one-out image; the
        # text tower runs once per file and stays fp32 (its reference embedding is then
        # the same at every precision, and open_clip's text path reads its weights' dtype,
        # which a quantised Linear does not have).
        self._dtype = torch.float32
        if precision == "bf16":
            model.visual = model.visual.to(torch.bfloat16)
            self._dtype = torch.bfloat16
        elif precision == "int8":
            # Dynamic quantisation: Linear weights in int8, activations quantised per
            # batch; attention and convolutions stay in fp32.
            model.visual = torch.ao.quantization.quantize_dynamic(
                model.visual, {torch.nn.Linear}, dtype=torch.qint8)
        self.model = model
        self.preprocess = transform  # open_clip's PIL transform: the host path
        self.tokenizer = tokenizer
        self._device_steps, preprocess_note = self._choose_preprocess(preprocess)
        self.preprocess_on = "device" if self._device_steps else "host"
        suffix = "" if precision == "fp32" else f", {precision}"
        self.description = (f"open_clip {self.model_name} {label} "
                            f"({self.device}{suffix}{preprocess_note})")
        self._torch = torch

    def _choose_preprocess(self, mode: str) -> tuple[DeviceSteps | None, str]:
        """The device steps when ``mode`` asks for them and open_clip's transform can be
        reproduced there, and what the description adds ("" for the host path taken by
        choice, so that today's descriptions stay as they are)."""
        if mode == "host" or (mode == "auto" and not self.device.startswith("cuda")):
            return None, ""
        steps, why_not = device_steps_of(self.preprocess)
        if steps is None:
            return None, f", preprocessing on the host: {why_not}"
        return steps, ", preprocessing on the device"

    # -- weights -------------------------------------------------------------------------

    @classmethod
    def weights_available(cls, weights: str | None = None, model_name: str = "ViT-B-32",
                          pretrained: str | None = "openai") -> bool:
        """True if ``weights`` is an existing file, or the ``pretrained`` tag's weights are
        already in the local cache (HF hub cache, or open_clip's ~/.cache/clip for URL
        downloads). Never downloads."""
        if weights:
            return os.path.isfile(os.fspath(weights))
        if not pretrained:
            return False
        if os.path.isfile(pretrained):
            return True
        name = model_name.replace("/", "-")
        if (name, pretrained) == _DEFAULT_TAG:
            # `auto` asks this on every score (and every editor open): importing open_clip
            # costs seconds (torch), so the default tag's locations are known here.
            cfg = _DEFAULT_CFG
        else:
            try:
                import open_clip
            except ImportError:
                return False
            cfg = open_clip.pretrained.get_pretrained_cfg(name, pretrained)
        if not cfg:
            return False
        if cfg.get("file"):
            return os.path.isfile(cfg["file"])
        hub = cfg.get("hf_hub", "")
        if hub and _hub_cache_has_repo(os.path.split(hub)[0]):
            try:
                from huggingface_hub import try_to_load_from_cache
            except ImportError:  # no huggingface_hub: nothing of it is cached
                try_to_load_from_cache = None  # type: ignore[assignment]
            if try_to_load_from_cache is not None:
                repo, filename = os.path.split(hub)
                filename = filename or HF_WEIGHTS_NAME
                names = [filename]
                if filename == HF_WEIGHTS_NAME:
                    names.insert(0, HF_SAFE_WEIGHTS_NAME)
                elif filename.endswith((".bin", ".pth")):
                    names.insert(0, filename[:-4] + ".safetensors")
                for fn in names:
                    try:
                        hit = try_to_load_from_cache(repo_id=repo, filename=fn)
                    except Exception:  # noqa: BLE001 - a broken cache or repo id: not cached
                        hit = None
                    if isinstance(hit, str) and os.path.isfile(hit):
                        return True
        url = cfg.get("url", "")
        if url:
            return os.path.isfile(os.path.join(os.path.expanduser("~/.cache/clip"),
                                               os.path.basename(url)))
        return False

    # -- embedding -----------------------------------------------------------------------

    def _preprocess_one(self, image: np.ndarray):
        from PIL import Image

        return self.preprocess(Image.fromarray(as_rgb_uint8(image), "RGB"))

    def _preprocess_pool(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.preprocess_threads,
                                                thread_name_prefix="svgloo-clip-preprocess")
            return self._pool

    def _pixels(self, images: list[np.ndarray]):
        """The model's input batch: one image after the other with one thread; with more,
        the images are preprocessed on a thread pool, each written into its own row of
        the batch (pinned memory on CUDA, so the copy to the device is asynchronous and the
        dtype conversion runs there). Either way the same transform makes each row, so the
        tensors are the same (tests/plugins/test_clip_backbone.py compares them bit for
        bit)."""
        if self._device_steps is not None:
            return self._device_pixels(images)
        torch = self._torch
        if self.preprocess_threads <= 1 or len(images) <= 1:
            batch = [self._preprocess_one(im) for im in images]
            return torch.stack(batch).to(self.device, self._dtype)
        first = self._preprocess_one(images[0])
        cuda = self.device.startswith("cuda")
        out = torch.empty((len(images), *first.shape), dtype=first.dtype, pin_memory=cuda)
        out[0] = first

        def fill(i: int) -> None:
            with torch.inference_mode():  # thread-local: as the caller's thread has it
                out[i] = self._preprocess_one(images[i])

        for _ in self._preprocess_pool().map(fill, range(1, len(images))):
            pass  # map re-raises a worker's exception here
        if cuda:
            return out.to(self.device, self._dtype, non_blocking=True)
        return out.to(self.device, self._dtype)

    def _device_pixels(self, images: list[np.ndarray]):
        """The model's input batch made on the device (clip_preprocess.py): images of one
        size (a batch of leave-one-out images) go as one uint8 batch; images of several
        sizes (a reference image), one at a time."""
        assert self._device_steps is not None
        rows = [as_rgb_uint8(im) for im in images]
        if len({r.shape for r in rows}) == 1:
            return self._device_steps(self._upload(rows), self._dtype)
        return self._torch.cat([self._device_steps(self._upload([r]), self._dtype)
                                for r in rows])

    def _upload(self, rows: list[np.ndarray]):
        """(N, H, W, 3) uint8 on the device. On CUDA the rows are stacked straight into
        pinned memory, so the copy is asynchronous (torch's pinned allocator keeps the
        buffer alive until the copy is done)."""
        torch = self._torch
        if not self.device.startswith("cuda"):
            return torch.from_numpy(np.stack(rows)).to(self.device)
        host = torch.empty((len(rows), *rows[0].shape), dtype=torch.uint8, pin_memory=True)
        np.stack(rows, out=host.numpy())
        return host.to(self.device, non_blocking=True)

    def embed_images(self, images: np.ndarray | list[np.ndarray],
                     batch_size: int | None = None) -> np.ndarray:
        """(N, D) float64 L2-normalised image embeddings."""
        torch = self._torch
        bs = max(1, int(batch_size or self.batch_size))
        out = []
        with torch.inference_mode():
            for i in range(0, len(images), bs):
                feats = self.model.encode_image(self._pixels(list(images[i:i + bs])))
                out.append(feats.float().cpu().numpy().astype(np.float64))
        if not out:
            dim = int(getattr(self.model, "embed_dim", 0) or 0)
            return np.zeros((0, dim), np.float64)
        return _l2(np.concatenate(out, axis=0))

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        """(N, D) float64 L2-normalised text embeddings."""
        torch = self._torch
        with torch.inference_mode():
            tokens = self.tokenizer(list(texts)).to(self.device)
            feats = self.model.encode_text(tokens)
        return _l2(feats.float().cpu().numpy().astype(np.float64))

    # -- Backbone protocol ---------------------------------------------------------------

    def prepare(self, reference: Reference) -> np.ndarray:
        kind = reference.kind
        if kind in ("image", "self"):
            if reference.image is None:
                raise ConfigError(None, f"{kind} reference from {reference.source} has no image")
            return self.embed_images([as_rgb_uint8(reference.image, "reference image")])[0]
        if kind == "text":
            if not reference.text or not reference.text.strip():
                raise ConfigError(None, f"text reference from {reference.source} is empty")
            return self.embed_texts([reference.text])[0]
        raise ConfigError(None, f"unknown reference kind {kind!r} (image, text or self)")

    def similarity(self, images: np.ndarray, prepared: Any, batch_size: int | None = None) -> np.ndarray:
        images = np.asarray(images)
        if images.ndim == 3:
            images = images[None]
        if images.ndim != 4:
            raise ConfigError(None, f"images must be (N, H, W, 3), got shape {images.shape}")
        ref = np.asarray(prepared, dtype=np.float64).reshape(-1)
        if len(images) == 0:
            return np.zeros((0,), np.float64)
        emb = self.embed_images(images, batch_size=batch_size)
        return np.clip(emb @ ref, -1.0, 1.0).astype(np.float64)


def _l2(x: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.maximum(n, 1e-12)
