"""Settings declared once and parsed by one converter.

The defaults live on the settings dataclasses (``score.ScoreSettings``, the language
server's ``Settings``...); front ends read them from there (the CLI's argparse defaults,
``field_default``) instead of writing the numbers again. Values that arrive as JSON (the
daemon's API, an editor's configuration) are checked field by field with a cattrs
converter (cattrs, a dependency of pygls and of ours) whose scalars are strict: JSON ``"5"`` is not an int
and ``"false"`` is not a bool, which cattrs' default converter would accept.

It imports only ``limits`` of the engine (no numpy), so the CLI builds its parser from
these defaults without loading the engine.
"""

from __future__ import annotations

import dataclasses
import os
import types
import typing
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from svgloo.engine.limits import DEFAULT_LIMITS, Limits

DEFAULT_RENDER_SIZE = 384  # px, the side of the square analysis raster (the paper's)
SPECK_DEFAULT = 0.0002   # findings.py: 0.02% of the canvas, 29 pixels at the default 384 px
HIDDEN_DEFAULT = 0.95    # findings.py: covered share of what a unit draws alone
# What ``svgloo fix --only`` removes (fix.py); here so the CLI builds its parser without
# importing fix.py, which loads the renderer's side of the engine (numpy, the workers).
FIX_KINDS = ("invisible", "specks", "hidden", "harmful")


def cache_dir() -> Path:
    """svgloo's cache folder: ``SVGLOO_CACHE_DIR``, else the user's cache folder for svgloo
    (Linux: ``~/.cache/svgloo``). The daemon keeps results there, the renderer cairocffi's
    parsed declarations (rendering/cairo_binding.py)."""
    env = os.environ.get("SVGLOO_CACHE_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("svgloo"))


@dataclass(frozen=True)
class ScoreSettings:
    backbone: str = "auto"
    method: str = "fast"
    size: int = DEFAULT_RENDER_SIZE
    subpaths: bool = True
    reference: str | None = None
    prompt: str | None = None
    # None: the backbone's own thresholds (CLIP: the paper's +/-0.005; pixel: calibrated).
    helpful_threshold: float | None = None
    harmful_threshold: float | None = None
    weights: str | None = None
    device: str | None = None
    speck_threshold: float = SPECK_DEFAULT    # findings.py: fraction of the canvas
    hidden_threshold: float = HIDDEN_DEFAULT  # findings.py: covered share
    precision: str = "fp32"   # model backbones: fp32, or opt-in bf16 / int8 (CLIP)
    # model backbones (CLIP): where images are resized and normalised; auto = on the
    # device on CUDA, on the host (open_clip's PIL transform) on the CPU
    preprocess: str = "auto"
    # The removal proof (proof.py): which units may be deleted. Off, scoring gives the
    # leave-one-out answer alone (every unit's removal "unchecked", no bulk removal) and
    # ``deferred_proof.prove_run`` adds the proof later, equal to a scoring with it on.
    # Front ends that offer removals prove; data sets that never remove need not.
    prove: bool = True
    limits: Limits = field(default=DEFAULT_LIMITS)

    def key(self) -> dict:
        """The settings that change a result (for caches)."""
        d = asdict(self)
        d.pop("limits")
        if d["preprocess"] == "auto":  # the default: the keys of results before the setting
            d.pop("preprocess")
        return d

    def with_(self, **changes) -> "ScoreSettings":
        return replace(self, **changes)


def field_default(cls, name: str) -> Any:
    """A dataclass field's default (for argparse and docs, so a default is written once)."""
    for f in dataclasses.fields(cls):
        if f.name == name:
            if f.default is not dataclasses.MISSING:
                return f.default
            if f.default_factory is not dataclasses.MISSING:
                return f.default_factory()
            raise KeyError(f"{cls.__name__}.{name} has no default")
    raise KeyError(f"{cls.__name__} has no field {name}")


def _strict(kinds: tuple[type, ...], name: str):
    def structure(value, _type):
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            raise TypeError(f"expected {name}, not {type(value).__name__}")
        return float(value) if name == "float" else value
    return structure


@cache
def converter():
    """The converter (a cattrs ``Converter``, built on first use: the CLI's start does not
    pay for importing cattrs) whose JSON scalars are not coerced (an int is taken as a
    float)."""
    import cattrs

    converter = cattrs.Converter(forbid_extra_keys=True)
    converter.register_structure_hook(bool, _strict((bool,), "bool"))
    converter.register_structure_hook(int, _strict((int,), "int"))
    converter.register_structure_hook(float, _strict((int, float), "float"))
    converter.register_structure_hook(str, _strict((str,), "str"))
    return converter


def type_name(tp) -> str:
    """``int``, ``float or None``: a field's type as a message shows it."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return " or ".join(type_name(a) for a in typing.get_args(tp))
    if tp is type(None):
        return "None"
    return getattr(tp, "__name__", str(tp))


def field_types(cls) -> dict[str, Any]:
    """The resolved type of each field of a settings dataclass."""
    return typing.get_type_hints(cls)


def parse_field(cls, name: str, value: Any) -> Any:
    """``value`` (JSON) structured as field ``name`` of ``cls``; raises ``ValueError``
    naming the field and the expected type when it does not fit."""
    tp = field_types(cls)[name]
    try:
        return converter().structure(value, tp)
    except Exception as exc:  # cattrs wraps a hook's TypeError in its own groups
        raise ValueError(f"{name} must be {type_name(tp)}, not "
                         f"{type(value).__name__}") from exc


def parse_fields(cls, raw: Mapping[str, Any], names: Mapping[str, str] | None = None,
                 skip: frozenset[str] = frozenset()) -> tuple[dict[str, Any], list[str]]:
    """(changes, problems): the fields of ``cls`` found in ``raw`` that parse, by field
    name, and one line per key that does not (a wrong type). ``names`` maps a key of
    ``raw`` to its field (camelCase from editors); a key not in ``names`` is its own field
    name. Keys that are not fields, and ``skip``, are left alone; ``None`` means unset."""
    names = names or {}
    fields = field_types(cls)
    changes: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in raw.items():
        attr = names.get(key, key)
        if attr not in fields or attr in skip or value is None:
            continue
        try:
            changes[attr] = parse_field(cls, attr, value)
        except ValueError as exc:
            problems.append(f"{key}: {exc}".replace(f"{key}: {attr} must", f"{key} must"))
    return changes, problems


__all__ = ["DEFAULT_RENDER_SIZE", "SPECK_DEFAULT", "HIDDEN_DEFAULT", "ScoreSettings",
           "converter", "field_default", "parse_field", "parse_fields", "type_name", "field_types"]
