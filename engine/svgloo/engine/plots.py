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


class FootprintImages(list):
    """The paths write_footprints wrote, and a sentence saying what the sheet shows."""

    sheet_note: str = ""


def write_footprints(run, out_dir: str | Path, progress=None) -> FootprintImages:
    """One PNG per unit (``unit-0007.png``) plus ``contact-sheet.png``; ``progress(done,
    total)`` is called after each image (the sheet counts as one)."""
    from PIL import Image

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = FootprintImages()
    rows = run.result["units"]
    total = len(rows) + 1
    for row in rows:
        i = row["index"]
        path = out / f"unit-{i:04d}.png"
        # fastest zlib level: these are previews, size matters less than time
        Image.fromarray(heatmap_rgb(run.loo.full, run.footprint(i))).save(path,
                                                                          compress_level=1)
        written.append(path)
        if progress:
            progress(len(written), total)
    sheet = out / "contact-sheet.png"
    written.sheet_note = contact_sheet(run, sheet)
    written.append(sheet)
    if progress:
        progress(total, total)
    return written


def sheet_order(rows: list[dict]) -> list[dict]:
    """What a reviewer looks at first: harmful units (worst first), then units with
    findings (specks, mostly hidden), then the rest by how much they matter (|delta|,
    then footprint size)."""
    def key(row):
        if row["verdict"] == "harmful":
            return (0, row["delta"], 0)
        if row.get("findings"):
            return (1, -abs(row["delta"]), 0)
        return (2, -abs(row["delta"]), -row["footprint_pixels"])

    return sorted(rows, key=key)


def _cell_title(row: dict) -> str:
    label = f"#{row['index']} {row['tag']}"
    if row["subpath"] is not None:
        label += f"[{row['subpath']}]"
    flags = ", ".join(f.get("kind", "?").replace("_", " ") for f in row.get("findings") or [])
    return f"{label}\n{row['delta']:+.4f} {row['verdict']}" + (f"\n{flags}" if flags else "")


def contact_sheet(run, path: str | Path, max_units: int = 120) -> str:
    """The full render and up to ``max_units`` footprints in sheet_order; returns a note
    saying what the sheet shows (and what it leaves out)."""
    plt = pyplot()
    units = run.result["units"]
    rows_data = sheet_order(units)[:max_units]
    n = len(rows_data) + 1
    cols = min(8, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(cols * 1.8, rows * 2.1), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    axes.flat[0].imshow(run.loo.full)
    axes.flat[0].set_title("full render", fontsize=7)
    for ax, row in zip(list(axes.flat)[1:], rows_data):
        ax.imshow(heatmap_rgb(run.loo.full, run.footprint(row["index"])))
        ax.set_title(_cell_title(row), fontsize=6, color=VERDICT_COLORS[row["verdict"]])
    name = Path(run.result["file"]).name
    title = f"{name}: footprints ({run.result['backbone']} backbone), harmful and flagged first"
    if len(units) > max_units:
        note = (f"the contact sheet shows {max_units} of {len(units)} units (harmful and "
                f"flagged first, then by |delta|); every unit has its own unit-NNNN.png")
        title += f"\nshowing {max_units} of {len(units)} units; every unit has its own PNG"
    else:
        note = f"the contact sheet shows all {len(units)} units, harmful and flagged first"
    fig.suptitle(title, fontsize=9)
    # fixed margins: tight_layout measures every one of up to 121 axes' titles, which
    # took a third of the sheet's time on a 122-unit file
    top = 1 - 0.6 / (rows * 2.1)
    fig.subplots_adjust(left=0.01, right=0.99, bottom=0.01, top=top, wspace=0.05,
                        hspace=0.55)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return note
