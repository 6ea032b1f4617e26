"""``svgloo models list|pull``: which model weights are on disk, what ``auto`` picks, and
downloading them into the libraries' standard caches.

- clip: the CLIP backbone (open_clip ViT-B-32 ``openai``): with it, a file's
  ``<title>``/``<desc>`` or an ``svgloo.toml`` prompt is a reference and units can be harmful;
- clipseg: the CLIPSeg grounder of ``svgloo structure`` (CIDAS/clipseg-rd64-refined);
- vlm: the concept source of ``svgloo structure`` (Qwen/Qwen2-VL-2B-Instruct).

Nothing here imports torch: listing works on the base install.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass

MODELS = ("clip", "clipseg", "vlm")


@dataclass(frozen=True)
class ModelInfo:
    name: str
    role: str
    extra: str
    modules: tuple[str, ...]
    plugin: tuple[str, str]  # entry-point group, name


INFO = {
    "clip": ModelInfo("clip", "similarity backbone of score (text references, harmful units)",
                      "clip", ("torch", "open_clip"), ("svgloo.backbones", "clip")),
    "clipseg": ModelInfo("clipseg", "grounder of structure (concept heatmaps)", "vlm",
                         ("torch", "transformers"), ("svgloo.grounders", "clipseg")),
    "vlm": ModelInfo("vlm", "concept source of structure (names what a picture shows)", "vlm",
                     ("torch", "transformers"), ("svgloo.concepts", "vlm")),
}


def register(sub) -> None:
    p = sub.add_parser("models", help="list or download model weights (clip, clipseg, vlm)",
                       description="Which model weights are present, what `auto` picks, and "
                                   "downloading them into the standard caches (the Hugging "
                                   "Face hub cache: $HF_HOME or ~/.cache/huggingface).")
    msub = p.add_subparsers(dest="models_command", metavar="list|pull")
    ls = msub.add_parser("list", help="show which weights are present and what auto picks")
    ls.add_argument("--json", action="store_true", help="print a JSON object")
    ls.set_defaults(func=run_list)
    pull = msub.add_parser("pull", help="download weights with a progress bar")
    pull.add_argument("model", choices=MODELS, help="clip, clipseg or vlm")
    pull.add_argument("--endpoint", help="hub or mirror URL to download from (default "
                                         "$HF_ENDPOINT, else https://huggingface.co)")
    pull.set_defaults(func=run_pull)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _installed(info: ModelInfo) -> list[str]:
    """The modules of ``info`` that are missing."""
    return [m for m in info.modules if importlib.util.find_spec(m) is None]


def _plugin_class(info: ModelInfo):
    from svgloo.engine.protocols import load_plugin

    return load_plugin(*info.plugin)


def _present(info: ModelInfo) -> bool:
    if _installed(info):
        return False
    try:
        return bool(_plugin_class(info).weights_available())
    except Exception:  # noqa: BLE001 - a broken cache or plugin: not usable, so not present
        return False


def _source(name: str) -> str:
    """The model id or hub repository the plugin loads by default."""
    if name == "clip":
        try:
            repo, file = _clip_hub()
            return f"open_clip ViT-B-32 openai (hub {repo})"
        except Exception:  # noqa: BLE001 - only the description's detail is lost
            return "open_clip ViT-B-32 openai"
    from svgloo.plugins import clipseg_grounder, vlm_concepts

    return (clipseg_grounder if name == "clipseg" else vlm_concepts).DEFAULT_MODEL_ID


def _clip_hub() -> tuple[str, str]:
    """(hub repo, file name) of open_clip's ViT-B-32 ``openai`` weights."""
    import open_clip

    cfg = open_clip.pretrained.get_pretrained_cfg("ViT-B-32", "openai")
    hub = cfg.get("hf_hub", "")
    if not hub:
        from svgloo.engine.errors import ConfigError

        raise ConfigError("ViT-B-32", "this open_clip has no hub source for the openai weights")
    repo, file = hub.rstrip("/"), ""
    if not hub.endswith("/"):
        repo, file = hub.rsplit("/", 1)
    return repo, file


def model_status() -> dict:
    """Every model: installed, present, where from; and what ``auto`` picks."""
    from svgloo.engine.scoring.backbones import choose_backbone
    from svgloo.plugins.torch_util import hf_cache_dir

    models = {}
    for name, info in INFO.items():
        missing = _installed(info)
        models[name] = {"role": info.role, "extra": info.extra, "installed": not missing,
                        "missing_modules": missing, "source": _source(name),
                        "present": _present(info)}
    backbone = choose_backbone("auto")
    concepts = ("author concepts (svgloo.toml), else labels (two or more), else "
                + ("vlm (weights present)" if models["vlm"]["present"] else
                   "regions (no vlm weights)"))
    grounder = ("clipseg (weights present)" if models["clipseg"]["present"] else
                "the concepts' own shapes for labels/regions; else --masks DIR (no clipseg "
                "weights)")
    return {"cache": hf_cache_dir(), "models": models,
            "auto": {"backbone": {"name": backbone.name, "reason": backbone.reason},
                     "concepts": concepts, "grounder": grounder}}


def run_list(args) -> int:
    status = model_status()
    if args.json:
        json.dump(status, sys.stdout)
        sys.stdout.write("\n")
        return 0
    print(f"cache: {status['cache']}")
    for name, m in status["models"].items():
        if not m["installed"]:
            state = f"needs the [{m['extra']}] extra ({', '.join(m['missing_modules'])})"
        else:
            state = "present" if m["present"] else f"not present: svgloo models pull {name}"
        print(f"  {name:<8} {state}\n           {m['source']}; {m['role']}")
    auto = status["auto"]
    print("auto picks:")
    print(f"  score --backbone auto: {auto['backbone']['name']} ({auto['backbone']['reason']})")
    print(f"  structure --concepts auto: {auto['concepts']}")
    print(f"  structure --grounder auto: {auto['grounder']}")
    return 0


def run_pull(args) -> int:
    from svgloo.engine.errors import ConfigError
    from svgloo.plugins.torch_util import hf_pull_file, hf_pull_repo

    info = INFO[args.model]
    missing = _installed(info)
    if missing:
        raise ConfigError(args.model, f"needs the [{info.extra}] extra "
                                      f"({', '.join(missing)} not installed): "
                                      f"pip install \"svgloo[{info.extra}]\"")
    if args.model == "clip":
        from open_clip.constants import HF_SAFE_WEIGHTS_NAME, HF_WEIGHTS_NAME

        repo, file = _clip_hub()
        # open_clip's own order: the safetensors file first, then the PyTorch one.
        names = (HF_SAFE_WEIGHTS_NAME, HF_WEIGHTS_NAME) if not file else (
            (file[:-4] + ".safetensors", file) if file.endswith((".bin", ".pth")) else (file,))
        path = hf_pull_file(repo, names, args.endpoint)
    else:
        path = hf_pull_repo(_source(args.model), args.endpoint)
    ok = _present(info)
    print(f"{args.model}: {path}" + ("" if ok else " (downloaded, but the plugin does not see "
                                                  "complete weights there)"))
    return 0 if ok else 1
