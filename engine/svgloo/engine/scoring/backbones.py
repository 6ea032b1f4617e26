"""Choosing and keeping similarity backbones (plugins found through entry points).

Instances are cached per (name, weights, device, precision, preprocess): loading CLIP takes seconds, and the
daemon keeps one warm engine per backbone.
"""

from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass

from svgloo.engine.protocols import discover, load_plugin

from svgloo.engine.errors import ConfigError
from svgloo.engine.settings import ScoreSettings, field_default

GROUP = "svgloo.backbones"
_cache: dict[tuple, object] = {}
_OPTION_DEFAULTS = {k: field_default(ScoreSettings, k) for k in ("precision", "preprocess")}
_lock = threading.Lock()


@dataclass(frozen=True)
class BackboneChoice:
    name: str
    reason: str  # why this one, for the output ("clip weights not found locally: pixel")


def available_backbones() -> list[str]:
    return sorted(discover(GROUP))


def choose_backbone(name: str = "auto", weights: str | None = None) -> BackboneChoice:
    """Resolve ``auto``: clip when its weights are present locally, else pixel."""
    if name != "auto":
        return BackboneChoice(name, "requested")
    if importlib.util.find_spec("open_clip") is None:
        return BackboneChoice("pixel", "auto: CLIP needs the [clip] extra (torch, "
                                       "open_clip); using the embedded pixel backbone")
    try:
        clip_cls = load_plugin(GROUP, "clip")
        if clip_cls.weights_available(weights):
            return BackboneChoice("clip", "auto: CLIP weights found locally")
        return BackboneChoice("pixel", "auto: no CLIP weights found locally, using the "
                                       "embedded pixel backbone")
    except (KeyError, ImportError, AttributeError) as exc:
        return BackboneChoice("pixel", f"auto: CLIP backbone unavailable ({exc}); using the "
                                       "embedded pixel backbone")


def loaded_backbones() -> list[dict]:
    """The backbones this process holds warm (for a status report)."""
    with _lock:
        return [{"name": name, "weights": weights, "precision": precision,
                 "device": str(getattr(inst, "device", None) or device or "cpu")}
                for (name, weights, device, precision, _), inst in _cache.items()]


def get_backbone(name: str, weights: str | None = None, device: str | None = None,
                 precision: str = "fp32", preprocess: str = "auto"):
    """``precision`` other than fp32 and ``preprocess`` other than auto are passed to the
    plugin (CLIP takes bf16 and int8, host and device); plugins that do not take them are
    refused them with a clear error."""
    key = (name, weights, device, precision, preprocess)
    with _lock:
        if key in _cache:
            return _cache[key]
    try:
        cls = load_plugin(GROUP, name)
    except KeyError as exc:
        raise ConfigError(None, str(exc.args[0])) from None
    except ImportError as exc:
        raise ConfigError(None, f"backbone {name!r} needs packages that are not installed "
                                f"({exc.name}); install svgloo[clip]") from None
    # a setting at its default is not passed: plugins without it load as before
    options = {k: v for k, v in {"precision": precision, "preprocess": preprocess}.items()
               if v != _OPTION_DEFAULTS[k]}
    try:
        instance = cls(device=device, weights=weights, **options)
    except TypeError:
        if not options:
            raise
        flags = " ".join(f"--{k} {v}" for k, v in options.items())
        raise ConfigError(None, f"the {name} backbone has no {' or '.join(options)} "
                                f"setting ({flags})") from None
    with _lock:
        _cache.setdefault(key, instance)
        return _cache[key]
