"""Helpers shared by the evaluation-suite tests (imported by module name; no package)."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
REPO = HERE.parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
TWEMOJI = CORPUS / "twemoji"


def cairosvg_rgb(svg: str, **kwargs) -> np.ndarray:
    """A render exactly as the original code calls CairoSVG: PNG bytes -> PIL -> RGB array."""
    import cairosvg
    from PIL import Image

    png = cairosvg.svg2png(bytestring=svg.encode("utf-8"), **kwargs)
    with Image.open(io.BytesIO(png)) as im:
        return np.asarray(im.convert("RGB"))


# SVGEditBench's CaseGenerator transforms for the four deterministic tasks, written again
# here from the generator's description (so the test does not reuse svgloo code).
ET.register_namespace("", "http://www.w3.org/2000/svg")


def _root_with(original: str, **attrs) -> str:
    root = ET.fromstring(original)
    for k, v in attrs.items():
        root.attrib[k] = v
    return ET.tostring(root, encoding="unicode")


TASK_FOLDERS = {"compression": "3_Compression", "upsidedown": "4_UpSideDown",
                "transparency": "5_Transparency", "croptohalf": "6_CropToHalf"}


def answer_for(task: str, original: str) -> str:
    if task == "compression":
        return original
    if task == "upsidedown":
        return _root_with(original, transform="translate(0,36) scale(1,-1)")
    if task == "transparency":
        return _root_with(original, opacity="0.5")
    return _root_with(original, viewBox="0 0 18 36")


def build_svgeditbench(folder: Path, files: list[Path]) -> Path:
    """An SVGEditBench-shaped checkout for tasks 3-6 from Twemoji originals."""
    for task, name in TASK_FOLDERS.items():
        (folder / name / "query").mkdir(parents=True)
        (folder / name / "answer").mkdir(parents=True)
        for f in files:
            original = f.read_text(encoding="utf-8")
            query = (f"The following code is the SVG code for the emoji 'x'. Task {task}."
                     f"\n\n```svg\n{original}\n```\n\nPlease respond in the following format. "
                     "Only return the SVG code. \n\n```svg\n<svg>...</svg>\n```")
            (folder / name / "query" / f"{f.stem}.txt").write_text(query, encoding="utf-8")
            (folder / name / "answer" / f"{f.stem}.svg").write_text(
                answer_for(task, original), encoding="utf-8")
    return folder


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
