"""`svgloo batch --html` and `svgloo eval --html`: self-contained reports (nothing fetched),
checked against independent renders and counts, and rendered offline in headless Chromium."""

from __future__ import annotations

import base64
import io
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import EXAMPLES

FIXTURES = Path(__file__).resolve().parents[1] / "evals" / "fixtures"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def assert_self_contained(text: str) -> None:
    assert not re.search(r"https?://", text), "the report names a URL"
    for value in re.findall(r'(?:src|href)="([^"]*)"', text):
        assert value.startswith("data:") or value.startswith("#"), value
    assert "<script>" in text and "<style>" in text


def data_images(text: str) -> list[np.ndarray]:
    return [np.asarray(Image.open(io.BytesIO(base64.b64decode(b))).convert("RGB"))
            for b in re.findall(r'src="data:image/png;base64,([^"]+)"', text)]


def screenshot(html_path: Path, out: Path) -> np.ndarray:
    """Headless Chromium with every host name unresolvable: the page must need none."""
    result = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-extensions",
         '--host-resolver-rules=MAP * ~NOTFOUND', "--window-size=1300,900",
         "--virtual-time-budget=3000", f"--screenshot={out}", html_path.as_uri()],
        capture_output=True, text=True, timeout=180)
    assert out.is_file(), result.stderr[-2000:]
    return np.asarray(Image.open(out).convert("RGB"))


@pytest.fixture(scope="module")
def batch_report(tmp_path_factory):
    from svgloo.cli import main

    folder = tmp_path_factory.mktemp("files")
    shutil.copy(EXAMPLES / "billiards-with-stray.svg", folder)
    # the sidecar reference makes the stray rectangle harmful
    shutil.copy(EXAMPLES / "billiards.svg", folder / "billiards-with-stray.ref.svg")
    (folder / "broken.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"><rect')
    out = tmp_path_factory.mktemp("out")
    report = out / "report.html"
    code = main(["batch", str(folder), "--out", str(out / "run"), "--workers", "1",
                 "--backbone", "pixel", "--size", "96", "--html", str(report)])
    assert code == 1                         # one file is an error row
    return folder, report, report.read_text(encoding="utf-8")


def test_batch_report_rows_counts_and_worst_units(batch_report):
    folder, _, text = batch_report
    assert_self_contained(text)
    # the sidecar is an SVG too, so the batch scored it as a file of its own
    assert text.count("<tr>") == 1 + 3
    assert "malformed XML" in text and 'class="error">1 error<' in text
    assert 'class="harmful">1 harmful<' in text
    # rect#stray is the worst unit of its file, shown first among its footprints
    row = text[text.index(f"{folder / 'billiards-with-stray.svg'}"):]
    row = row[:row.index("</tr>")]
    captions = re.findall(r'<figcaption class="(\w+)">([^<]+)<br>', row)
    assert captions[0] == ("harmful", "rect#stray")


def test_batch_thumbnail_is_the_engines_render(batch_report):
    from svgloo.engine.rendering.render import over_white, render_rgba

    folder, _, text = batch_report
    expected = over_white(render_rgba((folder / "billiards-with-stray.svg").read_bytes(), 96))
    assert any(img.shape == expected.shape and np.array_equal(img, expected)
               for img in data_images(text))


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed")
def test_batch_report_renders_offline_in_chromium(batch_report, tmp_path):
    _, report, _ = batch_report
    shot = screenshot(report, tmp_path / "batch.png")
    ink = (shot < 200).any(axis=2).mean()
    colours = len(np.unique(shot.reshape(-1, 3)[::7], axis=0))
    assert ink > 0.02 and colours > 50, (ink, colours)   # text, thumbnails, heatmaps


def test_eval_report_histograms_match_the_metrics(tmp_path, capsys):
    from svgloo.cli import main

    data = FIXTURES / "svgenius" / "easy_styleedit.json"
    pred = FIXTURES / "svgenius" / "easy_styleedit.pred.jsonl"
    out, report = tmp_path / "r.json", tmp_path / "eval.html"
    assert main(["eval", "svgenius", "styleedit", "--data", str(data), "--pred", str(pred),
                 "--out", str(out), "--html", str(report)]) == 0
    import json

    result = json.loads(out.read_text())
    text = report.read_text(encoding="utf-8")
    assert_self_contained(text)
    ok = [r for r in result["samples"] if r["status"] == "ok"]
    names = sorted({k for r in result["samples"] for k, v in r["metrics"].items()
                    if isinstance(v, (int, float)) and not isinstance(v, bool)})
    svgs = re.findall(r'<svg class="hist".*?</svg>', text)
    assert len(svgs) == len(names) >= 1
    for name, svg in zip(names, svgs):
        values = [float(r["metrics"][name]) for r in ok if r["metrics"].get(name) is not None]
        assert f"{name} (n={len(values)})" in svg
        bars = [int(n) for n in re.findall(r"<title>(\d+)</title>", svg)]
        if values and max(values) > min(values):
            expected, _ = np.histogram(values, bins=20, range=(min(values), max(values)))
            assert bars == expected.tolist()
    # the samples table (the headline table above it has rows of its own)
    samples_table = text[text.index("<h2>Samples</h2>"):]
    assert samples_table.count("<tr>") == 1 + len(result["samples"])
    if CHROMIUM:
        shot = screenshot(report, tmp_path / "eval.png")
        assert (shot < 200).any(axis=2).mean() > 0.01


@pytest.fixture(scope="module")
def self_report(tmp_path_factory, corpus_dir):
    """No reference: twemoji 1f5c2 (two subpaths proven removable, nothing flagged) and
    logos/oauth (proven-removable paths and two mostly hidden ones)."""
    from svgloo.cli import main

    folder = tmp_path_factory.mktemp("self")
    for name in ("twemoji/1f5c2.svg", "logos/oauth.svg"):
        shutil.copy(corpus_dir / name, folder)
    out = tmp_path_factory.mktemp("self-out")
    report = out / "report.html"
    assert main(["batch", str(folder), "--out", str(out / "run"), "--workers", "1",
                 "--backbone", "pixel", "--proof", "--html", str(report)]) == 0
    import json

    results = [json.loads(line) for line in (out / "run" / "results.jsonl").open()]
    return folder, results, report.read_text(encoding="utf-8")


def _row_of(text: str, path) -> str:
    start = text.rindex("<tr>", 0, text.index(f"{path}"))
    return text[start:text.index("</tr>", start)]


def test_batch_report_counts_what_to_act_on(batch_report, self_report):
    from svgloo.validation.html_report import ACTIONABLE

    _, results, text = self_report
    head = text[text.index("<thead>"):text.index("</thead>")]
    assert all(f"<th>{label}</th>" in head for _, label in ACTIONABLE)
    for result in results:
        row = _row_of(text, result["file"])
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        # thumbnail, name, status, units, 4 verdict counts, then removable, specks, hidden
        numbers = [int(c) for c in cells[8:11]]
        units = result["score"]["units"]
        # counted here from the unit rows, not from the summary the report reads
        removable = sum((u.get("removal") or {}).get("status") == "proven" for u in units)
        specks = sum(any(f["kind"] == "speck" for f in u["findings"]) for u in units)
        hidden = sum(any(f["kind"] == "mostly_hidden" for f in u["findings"]) for u in units)
        assert numbers == [removable, specks, hidden], (result["file"], numbers)
    # 5 since the proof also checks 64 px (6 before): a unit of these two is not counted
    assert sum(r["score"]["summary"]["proven_removable"] for r in results) >= 5


def test_without_a_reference_the_report_shows_units_to_act_on_not_the_most_helpful(
        self_report):
    _, results, text = self_report
    for result in results:
        units = result["score"]["units"]
        to_act_on = {f"{u['tag']}" + (f"#{u['id']}" if u["id"] else "") +
                     (f" subpath {u['subpath'] + 1}" if u["subpath"] is not None else "")
                     for u in units
                     if u["findings"] or (u.get("removal") or {}).get("status") == "proven"}
        captions = re.findall(r'<figcaption class="(\w+)">([^<]+)<br>([^<]+)</figcaption>',
                              _row_of(text, result["file"]))
        assert captions, result["file"]
        assert all(name in to_act_on for _, name, _ in captions), (captions, to_act_on)
        assert all(why in ("removable",) or why.endswith("hidden") or why.startswith("speck")
                   for _, _, why in captions), captions
    oauth = _row_of(text, next(r["file"] for r in results if r["file"].endswith("oauth.svg")))
    # the most hidden first: oauth's two mostly hidden paths come before its removable ones
    whys = [why for _, _, why in re.findall(
        r'<figcaption class="(\w+)">([^<]+)<br>([^<]+)</figcaption>', oauth)]
    assert whys[0].endswith("hidden") and whys[-1] == "removable", whys


def test_eval_reports_lead_with_the_headline_and_the_loo_findings(tmp_path, capsys):
    import json

    from svgloo.cli import main

    data = FIXTURES / "svgenius" / "easy_styleedit.json"
    pred = FIXTURES / "svgenius" / "easy_styleedit.pred.jsonl"
    out, report = tmp_path / "r.json", tmp_path / "eval.html"
    assert main(["eval", "svgenius", "styleedit", "--data", str(data), "--pred", str(pred),
                 "--loo", "--out", str(out), "--html", str(report)]) == 0
    result = json.loads(out.read_text())
    text = report.read_text(encoding="utf-8")
    terminal = capsys.readouterr().out
    # every number of the suite's summary, in a table above the per-sample one
    headline = text[text.index('<table class="headline">'):]
    headline = headline[:headline.index("</table>")]
    for key, value in result["summary"].items():
        if key != "status_counts":
            assert f"<th>{key}</th>" in headline
            assert (f"{value:.4f}" if isinstance(value, float) else str(value)) in headline
    assert text.index('class="headline"') < text.index("<h2>Samples</h2>")
    assert terminal.index("headline") < terminal.index("  id ")
    # what --loo found, counted here from the samples' units
    units = [(r["id"], u) for r in result["samples"] for u in r["loo"]["units"]]
    costly = sorted([(u["delta"], sid, u["line"]) for sid, u in units if u["delta"] < 0])
    assert costly, "the fixture has an element that costs the score"
    delta, sample, line = costly[0]
    assert (f"{len(costly)} of {len(units)} elements cost the score") in text
    section = text[text.index("Elements that cost the score"):]
    first = re.search(r"<tbody>\s*<tr><td>([^<]+)</td><td>([^<]+)</td><td[^>]*>([^<]+)</td>",
                      section)
    assert first.groups()[0] == sample and f"line {line}" in first.groups()[1]
    assert float(first.groups()[2]) == pytest.approx(delta, abs=1e-5)
    assert f"--loo: {len(costly)} of {len(units)} elements cost the score" in terminal
    assert f"{sample}: " in terminal and f"delta {delta:+.5f}" in terminal
