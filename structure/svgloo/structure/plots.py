"""Pictures of a structure analysis (matplotlib, Agg): the attribution matrix, the concept
heatmaps over the render, and each concept's units' footprints."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from svgloo.engine.reporting.plots import heatmap_rgb, pyplot


def _unit_label(row: dict) -> str:
    label = f"#{row['index']} {row['tag']}"
    if row.get("id"):
        label += f"#{row['id']}"
    if row.get("subpath") is not None:
        label += f"[{row['subpath']}]"
    return label[:28]


_REGION_NAME = re.compile(r"^(?P<colour>.+?) region, (?P<where>[a-z ]+?)(?: \((?P<n>\d+)\))?$")


def display_name(name: str) -> str:
    """A concept name as a person reads it: the regions source's "dark gray region, bottom
    right (2)" becomes "dark gray, bottom right #2" (other names are kept)."""
    m = _REGION_NAME.match(name)
    if not m:
        return name
    return f"{m['colour']}, {m['where']}" + (f" #{m['n']}" if m["n"] else "")


def shorten(name: str, n: int = 28) -> str:
    """Cut at a word boundary, never leaving a dangling comma."""
    if len(name) <= n:
        return name
    cut = name[:n - 1]
    if " " in cut[n // 2:]:
        cut = cut[:cut.rindex(" ")]
    return cut.rstrip(" ,;:-") + "\u2026"


def units_text(units: list[int], limit: int = 30) -> str:
    """'units 3, 4, 7' / 'unit 3' / 'no unit mainly draws it' (cut at ``limit`` chars)."""
    if not units:
        return "no unit mainly draws it"
    text = ("unit " if len(units) == 1 else "units ") + ", ".join(str(i) for i in units)
    return shorten(text, limit)


def attribution_plot(run, path: Path, max_units: int = 80) -> None:
    plt = pyplot()
    result = run.result
    A = np.asarray(run.attribution)[:max_units]
    rows = result["units"][:max_units]
    names = [shorten(display_name(c["name"])) for c in result["concepts"]]
    fig_h = max(2.5, 0.22 * len(rows) + 1.5)
    fig_w = max(4.0, 0.45 * len(names) + 3.5)
    fig, ax = plt.subplots(figsize=(fig_w, fig_h))
    im = ax.imshow(A if A.size else np.zeros((len(rows), max(1, len(names)))),
                   aspect="auto", cmap="viridis", interpolation="nearest")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=45, ha="right", fontsize=7)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([_unit_label(r) + ("" if r["active"] else " (no concept)")
                        for r in rows], fontsize=6)
    for i, r in enumerate(rows):
        if r["primary"] is not None:
            ax.add_patch(plt.Rectangle((r["primary"] - 0.5, i - 0.5), 1, 1, fill=False,
                                       edgecolor="red", linewidth=1))
    fig.colorbar(im, ax=ax, fraction=0.04)
    ax.set_title(f"{Path(result['file']).name}: attribution ({result['definitions']} "
                 "definitions)\nred box = the unit's main concept", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _grid(n: int, max_cols: int = 4):
    cols = max(1, min(max_cols, n))
    return cols, max(1, math.ceil(n / cols))


def heatmaps_plot(run, path: Path) -> None:
    plt = pyplot()
    concepts = run.result["concepts"]
    cols, rows = _grid(len(concepts) + 1)
    fig, axes = plt.subplots(rows, cols, figsize=(cols * 2.4, rows * 2.6), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    axes.flat[0].imshow(run.loo.full)
    axes.flat[0].set_title("render", fontsize=7)
    for ax, c, h in zip(list(axes.flat)[1:], concepts, run.heatmaps):
        ax.imshow(heatmap_rgb(run.loo.full, h))
        ax.set_title(shorten(display_name(c["name"]), 30), fontsize=7)
    fig.suptitle(f"{Path(run.result['file']).name}: concept heatmaps "
                 f"({run.result.get('grounder')})", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def concept_footprints_plot(run, path: Path) -> None:
    """Per concept: the summed footprints of its units over the dimmed render."""
    plt = pyplot()
    concepts = run.result["concepts"]
    cols, rows = _grid(len(concepts))
    fig, axes = plt.subplots(rows, cols, figsize=(cols * 2.4, rows * 2.6), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, c in zip(axes.flat, concepts):
        total = np.zeros(run.loo.full.shape[:2], np.float32)
        for i in c["units"]:
            total = np.maximum(total, run.footprint(i))
        ax.imshow(heatmap_rgb(run.loo.full, total))
        ax.set_title(f"{shorten(display_name(c['name']), 30)}\n{units_text(c['units'])}",
                     fontsize=6)
    fig.suptitle(f"{Path(run.result['file']).name}: each concept's units", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_structure_plots(run, out_dir: str | Path) -> list[Path]:
    """``attribution.png``, ``concept-heatmaps.png``, ``concept-units.png`` (the last two
    only when there are concepts)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    if not run.result["concepts"]:
        return written
    for name, fn in (("attribution.png", attribution_plot),
                     ("concept-heatmaps.png", heatmaps_plot),
                     ("concept-units.png", concept_footprints_plot)):
        p = out / name
        fn(run, p)
        written.append(p)
    return written
