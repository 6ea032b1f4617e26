"""`svgloo score`: the svgloo.score/1 contract, verdicts, references and errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from svgloo.engine.scoring.reference import resolve_reference
from svgloo.engine.reading.document import load_document
from svgloo.engine.scoring.score import ScoreSettings, score_file
from svgloo.engine.settings import DEFAULT_RENDER_SIZE
from svgloo.engine.protocols import Reference
from svgloo.plugins.pixel_backbone import PixelBackbone

from conftest import CORPUS, EXAMPLES

UNIT_KEYS = {"index", "tag", "id", "kind", "subpath", "offsets", "range", "delta", "verdict",
             "footprint_pixels", "visible", "findings", "removal"}


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "svgloo", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_json_contract_and_the_injected_stray_is_harmful():
    proc = run_cli("score", str(EXAMPLES / "billiards-with-stray.svg"), "--reference",
                   str(EXAMPLES / "billiards.svg"), "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert {"schema", "file", "backbone", "reference", "method", "render_size", "full_score",
            "units", "timings", "bulk_removal"} <= set(result)
    assert result["schema"] == "svgloo.score/1"
    assert result["backbone"] == "pixel"
    assert result["reference"]["kind"] == "image"
    text = (EXAMPLES / "billiards-with-stray.svg").read_text()
    for unit in result["units"]:
        assert set(unit) == UNIT_KEYS
        start, end = unit["offsets"]
        lines = text.splitlines(keepends=True)
        line_start = sum(len(line) for line in lines[:unit["range"]["start"]["line"]])
        assert line_start + unit["range"]["start"]["character"] == start
    stray = [u for u in result["units"] if u["id"] == "stray"]
    assert len(stray) == 1 and stray[0]["verdict"] == "harmful"
    assert text[slice(*stray[0]["offsets"])].startswith('<rect id="stray"')
    others = [u for u in result["units"] if u["id"] != "stray"]
    assert all(u["verdict"] != "harmful" for u in others)


def test_self_analysis_has_no_harmful_units_and_says_so():
    run = score_file(str(EXAMPLES / "billiards.svg"), ScoreSettings(backbone="pixel"))
    assert run.result["reference"]["kind"] == "self"
    assert run.result["full_score"] == pytest.approx(1.0)
    assert all(u["delta"] >= -1e-9 for u in run.result["units"])
    assert run.result["notes"] and "self-analysis" in run.result["notes"][0]


def test_human_table_and_footprints(tmp_path):
    proc = run_cli("score", str(EXAMPLES / "billiards-with-stray.svg"), "--reference",
                   str(EXAMPLES / "billiards.svg"), "--footprints", str(tmp_path / "fp"))
    assert proc.returncode == 0, proc.stderr
    assert "rect#stray" in proc.stdout and "harmful" in proc.stdout
    pngs = sorted((tmp_path / "fp").glob("*.png"))
    assert len(pngs) == 7 and (tmp_path / "fp" / "contact-sheet.png").exists()
    assert Image.open(tmp_path / "fp" / "unit-0005.png").size == (DEFAULT_RENDER_SIZE,) * 2


def test_naive_and_fast_give_the_same_scores():
    settings = ScoreSettings(reference=str(EXAMPLES / "billiards.svg"))
    fast = score_file(str(EXAMPLES / "billiards-with-stray.svg"), settings)
    naive = score_file(str(EXAMPLES / "billiards-with-stray.svg"), settings.with_(method="naive"))
    for a, b in zip(fast.result["units"], naive.result["units"]):
        assert a["delta"] == pytest.approx(b["delta"], abs=2e-4)
        assert a["verdict"] == b["verdict"]
        assert abs(a["footprint_pixels"] - b["footprint_pixels"]) <= 2


@pytest.mark.parametrize("content, message", [
    ("<svg><rect></svg>", "malformed XML"),
    ("<html/>", "not an SVG file"),
])
def test_bad_files_exit_2_with_one_line(tmp_path, content, message):
    bad = tmp_path / "bad.svg"
    bad.write_text(content)
    proc = run_cli("score", str(bad))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(f"svgloo: error: {bad}") and message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_file_and_prompt_without_text_backbone_exit_2(tmp_path):
    proc = run_cli("score", str(tmp_path / "nope.svg"))
    assert proc.returncode == 2 and "cannot read file" in proc.stderr
    proc = run_cli("score", str(EXAMPLES / "billiards.svg"), "--backbone", "pixel",
                   "--prompt", "a ball")
    assert proc.returncode == 2 and "cannot compare against text" in proc.stderr


def test_reference_resolution_order(tmp_path):
    svg = tmp_path / "icons" / "ball.svg"
    svg.parent.mkdir()
    shutil.copy(EXAMPLES / "billiards.svg", svg)
    doc = load_document(svg)
    assert resolve_reference(str(svg), doc, takes_text=False).kind == "self"
    (tmp_path / "icons" / "ball.ref.svg").write_text(svg.read_text())
    spec = resolve_reference(str(svg), doc, takes_text=False)
    assert spec.kind == "image" and "sidecar" in spec.source
    (tmp_path / "svgloo.toml").write_text('[references]\n"icons/*.svg" = { prompt = "a ball" }\n')
    spec = resolve_reference(str(svg), doc, takes_text=True)
    assert spec.kind == "text" and spec.text == "a ball" and "svgloo.toml" in spec.source
    spec = resolve_reference(str(svg), doc, takes_text=True, reference="x.png")
    assert spec.source == "--reference x.png"
    titled = tmp_path / "t.svg"
    titled.write_text('<svg xmlns="http://www.w3.org/2000/svg"><title>A red ball</title>'
                      '<circle r="3"/></svg>')
    spec = resolve_reference(str(titled), load_document(titled), takes_text=True)
    assert spec.kind == "text" and spec.text == "A red ball"
    assert resolve_reference(str(titled), load_document(titled), takes_text=False).kind == "self"


def test_pixel_backbone_patched_scores_equal_whole_image_scores():
    run = score_file(str(EXAMPLES / "billiards-with-stray.svg"),
                     ScoreSettings(reference=str(EXAMPLES / "billiards.svg")))
    backbone = PixelBackbone()
    rng = np.random.default_rng(0)
    ref = rng.integers(0, 256, run.loo.full.shape, dtype=np.uint8)
    prepared = backbone.prepare(Reference("image", "random", image=ref))
    patched = backbone.similarity_patched(run.loo.full, run.loo.patches, prepared)
    whole = backbone.similarity(np.stack([run.loo.image_without(k)
                                          for k in range(len(run.loo.patches))]), prepared)
    np.testing.assert_allclose(patched, whole, atol=1e-6)


def test_pixel_backbone_is_one_for_identical_images_and_lower_for_changes():
    backbone = PixelBackbone()
    img = np.zeros((64, 64, 3), np.uint8)
    img[16:48, 16:48] = 200
    prepared = backbone.prepare(Reference("image", "x", image=img))
    other = img.copy()
    other[0:8, 0:8] = 90
    s = backbone.similarity(np.stack([img, other]), prepared)
    assert s[0] == pytest.approx(1.0) and s[1] < 0.999


@pytest.mark.slow
@pytest.mark.timeout(1800)  # a hang detector: ~30 corpus files in one test, on a loaded machine
def test_every_corpus_file_scores(corpus_dir, render_pool):
    for path in sorted(CORPUS.glob("*/*.svg"))[::7]:
        result = score_file(str(path), pool=render_pool).result
        assert result["units"] and all(u["verdict"] in ("helpful", "neutral")
                                       for u in result["units"])


def test_auto_backbone_says_why_it_falls_back_to_pixel(monkeypatch):
    import importlib.util

    from svgloo.engine.scoring.backbones import choose_backbone

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "open_clip" else real(name, *a))
    choice = choose_backbone("auto")
    assert choice.name == "pixel" and "[clip] extra" in choice.reason
    assert choose_backbone("clip").name == "clip"


class _CountingBackbone:
    """Mean brightness as similarity; counts the images it is asked to embed."""

    name = "counting"
    description = "test backbone"
    takes_text = False

    def __init__(self):
        self.seen = 0

    def prepare(self, reference):
        return float(reference.image.mean())

    def similarity(self, images, prepared):
        self.seen += len(images)
        return 1.0 - np.abs(images.reshape(len(images), -1).mean(axis=1) - prepared) / 255


def test_units_that_change_nothing_need_no_model_pass(render_pool):
    from svgloo.engine.reading.document import parse_document
    from svgloo.engine.scoring.score import score_document

    svg = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 40">
      <rect width="20" height="20" fill="red"/><rect width="20" height="20" fill="red"/>
      <circle cx="30" cy="30" r="5" fill="none"/><circle cx="30" cy="30" r="6"/></svg>"""
    backbone = _CountingBackbone()
    run = score_document(parse_document(svg, "c.svg"), ScoreSettings(), pool=render_pool,
                         backbone=backbone)
    deltas = [u["delta"] for u in run.result["units"]]
    # either red square alone draws the same picture; the empty circle draws nothing
    assert deltas[0] == deltas[1] == deltas[2] == 0
    assert backbone.seen == 1 + 1   # the full render, then the one unit that changes it
    # the same numbers as scoring every leave-one-out image
    full = backbone.similarity(run.loo.full[None], backbone.prepare(
        type("R", (), {"image": run.loo.full})()))[0]
    for k in (3,):
        s = backbone.similarity(run.loo.image_without(k)[None],
                                float(run.loo.full.mean()))[0]
        assert deltas[k] == pytest.approx(full - s, abs=1e-6)
