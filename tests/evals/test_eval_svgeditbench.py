"""SVGEditBench: the "No Edit" baseline on the corpus's 60 Twemoji, bad predictions, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from eval_testlib import FIXTURES, TWEMOJI, build_svgeditbench, cairosvg_rgb, write_jsonl

from svgloo.cli import main
from svgloo.evals.base import ERROR, INVALID, MISSING, NO_SVG, OK
from svgloo.evals.runner import RunOptions, run_eval
from svgloo.evals.svgeditbench import SvgEditBenchSuite, extract_answer

pytestmark = pytest.mark.skipif(not TWEMOJI.is_dir(), reason="shared corpus not present")


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return build_svgeditbench(tmp_path_factory.mktemp("seb"), sorted(TWEMOJI.glob("*.svg")))


def _independent_no_edit_mse(bench, folder: str) -> float:
    """The paper's protocol in a few lines: CairoSVG 72 px on white, RGB / 255, mean over
    pixels and channels, then over cases."""
    values = []
    for answer in sorted((bench / folder / "answer").glob("*.svg")):
        original = (TWEMOJI / answer.name).read_text(encoding="utf-8")
        a = cairosvg_rgb(original, background_color="white", output_width=72,
                         output_height=72) / 255.0
        b = cairosvg_rgb(answer.read_text(encoding="utf-8"), background_color="white",
                         output_width=72, output_height=72) / 255.0
        values.append(np.mean((a - b) ** 2))
    return float(np.mean(values))


@pytest.mark.slow
@pytest.mark.parametrize("task,folder", [("upsidedown", "4_UpSideDown"),
                                         ("transparency", "5_Transparency"),
                                         ("croptohalf", "6_CropToHalf"),
                                         ("compression", "3_Compression")])
def test_no_edit_baseline_on_the_60_twemoji(bench, task, folder):
    result = run_eval(SvgEditBenchSuite(), task, bench, None,
                      RunOptions(no_edit=True, workers=2, progress=False))
    s = result["summary"]
    assert s["n_scored"] == 60 and s["n_excluded"] == 0
    assert s["mse"] == pytest.approx(_independent_no_edit_mse(bench, folder), abs=1e-12)
    assert s["compression_ratio"] == 1.0
    if task == "compression":
        assert s["mse"] == 0.0
    else:  # an unedited original is far from the answer: the baseline is not trivial
        assert s["mse"] > 0.01


def test_shipped_cases_of_tasks_1_and_2():
    """Change Color / Set Contour answers cannot be regenerated (random choices), so three
    real cases of each are shipped; their originals are the corpus files."""
    for task in ("changecolor", "setcontour"):
        samples = SvgEditBenchSuite().load(FIXTURES / "svgeditbench", task)
        assert len(samples) == 3
        for s in samples:
            assert s.inputs["original"] == (TWEMOJI / f"{s.id}.svg").read_text().strip()
        result = run_eval(SvgEditBenchSuite(), task, FIXTURES / "svgeditbench", None,
                          RunOptions(no_edit=True, progress=False))
        assert 0 < result["summary"]["mse"] < 0.2


def test_answer_extraction_rules():
    assert extract_answer("```svg\n<svg/>\n```") == ("<svg/>", OK, None)
    assert extract_answer("Here: <svg></svg>")[1] == NO_SVG
    assert extract_answer("```svg\n<svg/>\n```\nor\n```svg\n<svg></svg>\n```")[1] == INVALID


def test_bad_predictions_get_a_status_not_a_crash(bench, tmp_path):
    ids = sorted(p.stem for p in (bench / "4_UpSideDown" / "answer").glob("*.svg"))
    bomb = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
            '<rect id="a" width="1" height="1"/>'
            + "".join(f'<g id="g{i}"><use xlink:href="#{"a" if i == 0 else f"g{i - 1}"}"/>'
                      f'<use xlink:href="#{"a" if i == 0 else f"g{i - 1}"}"/></g>'
                      for i in range(40)) + "</svg>")
    answer = (bench / "4_UpSideDown" / "answer" / f"{ids[0]}.svg").read_text()
    rows = [
        {"id": ids[0], "response": f"Sure!\n```svg\n{answer}\n```"},
        {"id": ids[1], "response": "I flipped it: <svg></svg>"},
        {"id": ids[2], "response": "```svg\n<svg/>\n```\n```svg\n<svg/>\n```"},
        {"id": ids[3], "response": "```svg\n<svg><path d='M0 0'></svg>\n```"},
        {"id": ids[4], "svg": bomb},
        {"id": ids[5], "response": "```svg\n<html><body/></html>\n```"},
        {"id": "not-a-case", "svg": "<svg/>"},
    ]
    pred = write_jsonl(tmp_path / "pred.jsonl", rows)
    result = run_eval(SvgEditBenchSuite(), "upsidedown", bench, pred,
                      RunOptions(limit=7, progress=False))
    by_id = {r["id"]: r for r in result["samples"]}
    assert by_id[ids[0]]["status"] == OK and by_id[ids[0]]["metrics"]["mse"] == 0.0
    assert by_id[ids[1]]["status"] == NO_SVG
    assert by_id[ids[2]]["status"] == INVALID and "2 ```svg blocks" in by_id[ids[2]]["reason"]
    assert by_id[ids[3]]["status"] == INVALID and "malformed XML" in by_id[ids[3]]["reason"]
    # a limit of svgloo's (the original has none): not scored, not the benchmark's verdict
    assert by_id[ids[4]]["status"] == ERROR and "<use>" in by_id[ids[4]]["reason"]
    assert by_id[ids[5]]["status"] == INVALID and "not an SVG" in by_id[ids[5]]["reason"]
    assert by_id[ids[6]]["status"] == MISSING
    assert result["summary"]["n_scored"] == 1
    assert result["summary"]["n_excluded"] == 5  # the error row is not the suite's to count
    assert result["summary"]["status_counts"] == {"ok": 1, "no_svg": 1, "invalid": 3,
                                                  "render_error": 0, "missing": 1, "error": 1}


def test_cli_json_table_and_out_file(bench, tmp_path, capsys):
    out = tmp_path / "result.json"
    code = main(["eval", "svgeditbench", "transparency", "--data", str(bench), "--no-edit",
                 "--limit", "3", "--json", "--out", str(out)])
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    assert printed["schema"] == "svgloo.eval/1"
    assert printed["upstream"].startswith("mti-lab/SVGEditBench@5744bd4")
    assert printed["config"]["render"]["size"] == 72
    assert {"id", "status", "metrics", "reason"} <= set(printed["samples"][0])
    assert printed["skipped_metrics"] == []
    assert main(["eval", "svgeditbench", "transparency", "--data", str(bench), "--no-edit",
                 "--limit", "2"]) == 0
    table = capsys.readouterr().out
    assert "compression_ratio" in table and "n_scored: 2" in table


def test_workers_give_the_same_rows(bench):
    one = run_eval(SvgEditBenchSuite(), "croptohalf", bench, None,
                   RunOptions(no_edit=True, limit=8, progress=False))
    two = run_eval(SvgEditBenchSuite(), "croptohalf", bench, None,
                   RunOptions(no_edit=True, limit=8, workers=2, progress=False))
    strip = lambda rows: [{k: v for k, v in r.items() if k != "time_s"} for r in rows]  # noqa
    assert strip(one["samples"]) == strip(two["samples"])
