"""Author concepts: a list given on the command line or in ``svgloo.toml``.

``svgloo.toml`` (in the file's folder or a parent)::

    [concepts]
    "flower.svg" = ["red flower head", "stem", "leaves"]
    "icons/*.svg" = ["bell", "clapper"]

A pattern matches the path relative to the config's folder, or the bare file name; the
first matching entry wins. Names given on the command line take precedence.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any

import numpy as np

from svgloo.engine.errors import ConfigError
from svgloo.engine.protocols import Concept


def config_concepts(svg_name: str | None) -> tuple[list[str], str | None]:
    """(names, source description) from the nearest svgloo.toml's [concepts] table."""
    from svgloo.engine.scoring.reference import find_config, load_config

    if not svg_name or svg_name.startswith("<") or "://" in svg_name:
        return [], None
    path = Path(svg_name)
    config = find_config(path.parent if str(path.parent) else Path("."))
    if config is None:
        return [], None
    table = load_config(config).get("concepts", {})
    if not isinstance(table, dict):
        raise ConfigError(str(config), "[concepts] must be a table of glob = [names]")
    try:
        rel = path.resolve().relative_to(config.parent.resolve()).as_posix()
    except ValueError:
        rel = path.name
    for pattern, names in table.items():
        if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(path.name, pattern):
            if isinstance(names, str):
                names = [names]
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise ConfigError(str(config), f"[concepts] {pattern!r} must be a list of "
                                               "strings")
            return clean_names(names), f"{config}: {pattern}"
    return [], None


def clean_names(names) -> list[str]:
    out, seen = [], set()
    for n in names:
        n = " ".join(str(n).split())
        if n and n.lower() not in seen:
            seen.add(n.lower())
            out.append(n)
    return out


class AuthorConceptSource:
    """Options: ``concepts`` (names from the caller), ``file`` (the document's path, for
    the svgloo.toml lookup when no names are given)."""

    name = "author"

    def __init__(self, **_: Any):
        pass

    def concepts(self, doc: Any, render_rgb: np.ndarray, options: dict | None = None) -> list[Concept]:
        options = options or {}
        names = clean_names(options.get("concepts") or ())
        if not names:
            names, _ = config_concepts(options.get("file") or getattr(doc, "name", None))
        return [Concept(n, "author") for n in names]
