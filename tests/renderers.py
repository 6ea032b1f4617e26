"""One SVG file drawn by CairoSVG, resvg and Chromium, and whether two drawings agree:
what docs/renderers.md's feature table is made of (tests/test_renderers_table.py checks it;
``python tests/renderers.py`` prints the measured table).

Each renderer draws the file as it stands, at ``SIZE`` px, on a transparent canvas; each
result is straight RGBA, or a one-line reason the renderer failed. CairoSVG is the library
itself (``cairosvg.svg2png``, its own safe defaults), not svgloo's analysis renderer, so
the table says what CairoSVG does; what svgloo adds is the table's last column. resvg is
the ``resvg`` binding svgloo's proofs use, called directly (absent: its column is not
measured). Chromium opens the file as
the top-level document, as a person opening the SVG does (browser.py).
"""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browser import view_differences

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "renderers"
SIZE = 200  # the fixtures' own width and height

# Two drawings "agree" when, in every view (premultiplied RGBA, on white, on the dark page),
# at most SAME_PIXELS_SHARE of the pixels differ by more than SAME_LEVEL/255. Antialiasing
# differs between cairo and Skia along every edge (control_shapes.svg: 0.3% of the
# pixels beyond 24/255); a feature drawn differently moves far more (3% to 100%).
SAME_LEVEL = 24
SAME_PIXELS_SHARE = 0.02


@dataclass(frozen=True)
class Drawing:
    renderer: str
    rgba: np.ndarray | None
    error: str | None = None


def _png_to_rgba(data: bytes) -> np.ndarray:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        return np.asarray(im.convert("RGBA"))


def draw_cairosvg(path: Path) -> Drawing:
    import cairosvg

    try:
        png = cairosvg.svg2png(url=str(path), output_width=SIZE, output_height=SIZE)
    except Exception as exc:  # noqa: BLE001 - any failure is the renderer's verdict
        return Drawing("cairosvg", None, f"{type(exc).__name__}: {exc}"[:160])
    return Drawing("cairosvg", _png_to_rgba(png))


def resvg_available() -> bool:
    try:
        import resvg  # noqa: F401
    except ImportError:
        return False
    return True


def _resvg_options(folder: Path):
    """The binding's options as a plain resvg user would set them: system fonts, hrefs
    resolved beside the file, and the default family fontconfig's sans-serif (resvg's own
    default, Times New Roman, is not installed here; CairoSVG and Chromium ask fontconfig)."""
    import shutil
    import subprocess

    from resvg import usvg

    options = usvg.Options.default()
    options.load_system_fonts()
    options.resources_dir = str(folder)
    if shutil.which("fc-match"):
        family = subprocess.run(["fc-match", "-f", "%{family[0]}", "sans-serif"],
                                capture_output=True, text=True).stdout.strip()
        if family:
            options.font_family = family
    return options


def draw_resvg(path: Path) -> Drawing:
    from resvg import render, usvg

    try:
        tree = usvg.Tree.from_str(path.read_text(), _resvg_options(path.parent))
        png = render(tree, (1.0, 0.0, 0.0, 0.0, 1.0, 0.0), bg_size=(SIZE, SIZE))
    except Exception as exc:  # noqa: BLE001
        return Drawing("resvg", None, f"{type(exc).__name__}: {exc}"[:160])
    return Drawing("resvg", _png_to_rgba(bytes(png)))


def draw_chromium(chromium, path: Path) -> Drawing:
    return Drawing("chromium", chromium.render_document(path, SIZE, SIZE))


def disagreement(a: Drawing, b: Drawing) -> float:
    """Share of pixels beyond SAME_LEVEL in the worst view; 1.0 when either failed."""
    if a.rgba is None or b.rgba is None:
        return 1.0
    return max(float((d > SAME_LEVEL).mean())
               for d in view_differences(a.rgba, b.rgba).values())


def agree(a: Drawing, b: Drawing) -> str:
    """ "same" or "differs" (a failure differs from everything)."""
    return "same" if disagreement(a, b) <= SAME_PIXELS_SHARE else "differs"


def fixtures() -> list[Path]:
    return sorted(FIXTURES.glob("*.svg"))


def main() -> int:
    from browser import Chromium

    with Chromium() as chromium:
        for path in fixtures():
            c, r, k = draw_cairosvg(path), None, draw_chromium(chromium, path)
            line = f"{path.stem:28} cairo-vs-chromium {agree(c, k):8}"
            line += f" ({disagreement(c, k):.3f})"
            if resvg_available():
                r = draw_resvg(path)
                line += f"  resvg-vs-chromium {agree(r, k):8} ({disagreement(r, k):.3f})"
            for d in (c, r):
                if d is not None and d.error:
                    line += f"  [{d.renderer}: {d.error}]"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
