"""SVGenius: svgloo's numbers against golden outputs of the original code.

tests/evals/svgenius_golden.json holds what ZJU-REAL/SVGenius@528cbff's own metric
functions returned on the fixtures in fixtures/svgenius/ (how: its ``_provenance`` key).
Code metrics must be equal; pixel metrics within 1e-6 (the original computes MSE in float32
torch, svgloo in float64 numpy).
"""

from __future__ import annotations

import json

import pytest
from eval_testlib import FIXTURES, HERE, write_jsonl

from svgloo.cli import main
from svgloo.evals.base import ERROR, INVALID, MISSING, NO_SVG, OK
from svgloo.evals.runner import RunOptions, run_eval
from svgloo.evals.svgenius import SvgeniusSuite, extract_choice, extract_svg, pss_available

GOLDEN = json.loads((HERE / "svgenius_golden.json").read_text())
PIXEL = {"mse", "mse_gen_vs_gt", "mse_ori_vs_gt", "rmse", "ssim"}
# The original rescues this malformed prediction with BeautifulSoup before rendering
# (data_util.clean_svg); svgloo does not (documented departure): it reports `invalid`
# and scores the blank image, as the original does when its rescue fails too.
DEPARTURES = {("codeopt", "sample_4"): "mse"}


def _run(task, **kw):
    return run_eval(SvgeniusSuite(), task, FIXTURES / "svgenius" / f"easy_{task}.json",
                    FIXTURES / "svgenius" / f"easy_{task}.pred.jsonl",
                    RunOptions(progress=False, **kw))


@pytest.mark.parametrize("task", ["bugfix", "codeopt", "styleedit", "i2s", "qa"])
def test_matches_the_original_code(task):
    result = _run(task)
    rows = {r["id"]: r for r in result["samples"]}
    assert set(rows) == set(GOLDEN[task])
    compared = 0
    for sid, gold in GOLDEN[task].items():
        row = rows[sid]
        if gold is None:  # the original found no SVG: excluded from its averages
            assert row["status"] == NO_SVG and row["metrics"] == {}
            continue
        for key, want in gold.items():
            got = row["metrics"][key]
            if DEPARTURES.get((task, sid)) == key:
                assert row["status"] == INVALID and got != pytest.approx(want, abs=1e-6)
                continue
            if key in PIXEL and want is not None:
                assert got == pytest.approx(want, abs=1e-6), (sid, key)
            else:
                assert got == want, (sid, key)
            compared += 1
    assert compared >= len(GOLDEN[task]) - 1


def test_summaries_follow_the_original_aggregation():
    bug = _run("bugfix")["summary"]
    acc = [g["repair_accuracy"] for g in GOLDEN["bugfix"].values() if g]
    assert bug["average_repair_accuracy"] == sum(acc) / len(acc)
    assert bug["samples_evaluated"] == 4 and bug["success_rate"] == 4 / 5
    edit = _run("styleedit")["summary"]
    gold = GOLDEN["styleedit"].values()
    assert edit["custom_metric"] == pytest.approx(sum(g["rmse"] for g in gold) / 5, abs=1e-6)
    better = [g for g in gold if g["mse_gen_vs_gt"] <= g["mse_ori_vs_gt"]]
    assert edit["mse_better_samples_percentage"] == 100 * len(better) / 5
    assert edit["edit_distance_difference"] == sum(g["difference"] for g in gold) / 5
    qa = _run("qa")["summary"]
    assert (qa["overall_accuracy"], qa["correct"], qa["answer_is_null"]) == (4 / 6, 4, 1)


def test_i2s_reports_model_metrics_as_skipped():
    result = _run("i2s")
    skipped = {s["name"]: s["reason"] for s in result["skipped_metrics"]}
    assert set(skipped) == {"lpips", "dino"} | (set() if pss_available() else {"pss"})
    assert all("lpips" not in r["metrics"] for r in result["samples"])


def test_extraction_rules():
    assert extract_svg("x <svg>1</svg> Answer: <svg>2</svg> <svg>3</svg>") == "<svg>2</svg>"
    assert extract_svg("<svg>1</svg> then <svg>2</svg>") == "<svg>2</svg>"
    assert extract_svg("<svg>unclosed") is None
    assert extract_choice("Answer: B\nAnswer: C") == "C"
    assert extract_choice("Reasoning...\nD\nmore text") == "D"
    assert extract_choice("nothing") is None


def test_hostile_and_missing_predictions(tmp_path):
    bomb = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
            '<rect id="a" width="1" height="1"/>'
            + "".join(f'<g id="g{i}"><use xlink:href="#{"a" if i == 0 else f"g{i - 1}"}"/>'
                      f'<use xlink:href="#{"a" if i == 0 else f"g{i - 1}"}"/></g>'
                      for i in range(40)) + "</svg>")
    pred = write_jsonl(tmp_path / "p.jsonl", [
        {"id": "sample_1", "response": f"Answer: {bomb}"},
        {"id": "sample_2", "response": "no svg here"},
        {"id": "sample_3", "svg": "<svg xmlns='http://www.w3.org/2000/svg'><image "
                                  "href='file:///etc/passwd' width='9' height='9'/></svg>"},
    ])
    result = run_eval(SvgeniusSuite(), "codeopt", FIXTURES / "svgenius" / "easy_codeopt.json",
                      pred, RunOptions(progress=False))
    rows = {r["id"]: r for r in result["samples"]}
    # svgloo's <use> limit, not the original's blank image: not scored
    assert rows["sample_1"]["status"] == ERROR and "<use>" in rows["sample_1"]["reason"]
    assert rows["sample_1"]["metrics"] == {}
    assert rows["sample_2"]["status"] == NO_SVG
    assert rows["sample_3"]["status"] == OK  # the reference is refused, never fetched
    assert "external reference refused" in rows["sample_3"]["reason"]
    assert rows["sample_4"]["status"] == MISSING


def test_cli_bad_data_is_one_line_error(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text("{not json")
    assert main(["eval", "svgenius", "bugfix", "--data", str(bad), "--pred", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("svgloo: error:") and "x.json" in err and len(err.splitlines()) == 1
    assert main(["eval", "nosuch", "t", "--data", "x", "--pred", "y"]) == 2
    assert "unknown evaluation suite 'nosuch'" in capsys.readouterr().err
