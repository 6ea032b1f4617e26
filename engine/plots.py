"""Pictures of results: footprint heatmaps and a contact sheet (matplotlib, no display)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

VERDICT_COLORS = {"helpful": "#1a9850", "harmful": "#d73027", "neutral": "#777777"}


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def heatmap_rgb(full: np.ndarray, footprint: np.ndarray) -> np.ndarray:
    """The render dimmed, with the footprint as an 'inferno' heatmap on top (RGB uint8)."""
    from matplotlib import colormaps

    peak = float(footprint.max())
    norm = footprint / peak if peak > 0 else footprint
    heat = (colormaps["inferno"](norm)[..., :3] * 255).astype(np.float32)
    base = full.astype(np.float32) * 0.35 + 255 * 0.65
    alpha = np.clip(norm * 1.5, 0, 1)[..., None]
    return (base * (1 - alpha) + heat * alpha).astype(np.uint8)


def write_footprints(run, out_dir: str | Path) -> list[Path]:
    """One PNG per unit (``unit-0007.png``) plus ``contact-sheet.png``."""
    from PIL import Image

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for row in run.result["units"]:
        i = row["index"]
        path = out / f"unit-{i:04d}.png"
        Image.fromarray(heatmap_rgb(run.loo.full, run.footprint(i))).save(path)
        written.append(path)
    sheet = out / "contact-sheet.png"
    contact_sheet(run, sheet)
    written.append(sheet)
    return written


def contact_sheet(run, path: str | Path, max_units: int = 120) -> None:
    plt = pyplot()
    rows_data = run.result["units"][:max_units]
    n = len(rows_data) + 1
    cols = min(8, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(cols * 1.8, rows * 2.0), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    axes.flat[0].imshow(run.loo.full)
    axes.flat[0].set_title("full render", fontsize=7)
    for ax, row in zip(list(axes.flat)[1:], rows_data):
        ax.imshow(heatmap_rgb(run.loo.full, run.footprint(row["index"])))
        label = f"#{row['index']} {row['tag']}"
        if row["subpath"] is not None:
            label += f"[{row['subpath']}]"
        ax.set_title(f"{label}\n{row['delta']:+.4f} {row['verdict']}", fontsize=6,
                     color=VERDICT_COLORS[row["verdict"]])
    title = f"{Path(run.result['file']).name}: footprints ({run.result['backbone']} backbone)"
    if len(run.result["units"]) > max_units:
        title += f", first {max_units} of {len(run.result['units'])} units"
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
