"""The suite-independent parts: entry points, predictions, options, the CLI."""

from __future__ import annotations

import pytest
from eval_testlib import FIXTURES, write_jsonl

from svgloo.cli import main
from svgloo.evals.base import EvalSuite, discover_suites, load_suite
from svgloo.evals.engine import InputError
from svgloo.evals.predictions import load_predictions
from svgloo.evals.runner import RunOptions, run_eval


def test_suites_are_entry_points_implementing_the_protocol():
    assert {"svgeditbench", "svgenius"} <= set(discover_suites())
    for name in ("svgeditbench", "svgenius"):
        suite = load_suite(name)
        assert isinstance(suite, EvalSuite) and suite.name == name and suite.tasks


def test_eval_list(capsys):
    assert main(["eval", "list"]) == 0
    out = capsys.readouterr().out
    assert "svgeditbench:" in out and "ZJU-REAL/SVGenius@528cbff" in out


def test_predictions_from_a_folder_and_jsonl(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.svg").write_text("<svg/>")
    (tmp_path / "d" / "b.txt").write_text("Answer: <svg></svg>")
    (tmp_path / "d" / "notes.md").write_text("ignored")
    preds = load_predictions(tmp_path / "d")
    assert preds["a"].svg == "<svg/>" and preds["b"].response.startswith("Answer")
    assert set(preds) == {"a", "b"}
    jl = write_jsonl(tmp_path / "p.jsonl", [{"id": 1, "svg": "<svg/>"},
                                            {"id": "x", "task": "other", "svg": "<svg/>"}])
    assert set(load_predictions(jl, task="mine")) == {"1"}


@pytest.mark.parametrize("line,message", [
    ("{oops", "line 1 is not JSON"),
    ('{"svg": "<svg/>"}', 'line 1 has no "id"'),
    ('{"id": "a"}', 'neither "response" nor "svg"'),
    ('{"id": "a", "svg": 3}', "must be text"),
])
def test_bad_prediction_files_name_the_line(tmp_path, line, message):
    path = tmp_path / "p.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(InputError, match=message):
        load_predictions(path)


def test_cli_errors_are_one_line(tmp_path, capsys):
    data = FIXTURES / "svgenius" / "easy_bugfix.json"
    assert main(["eval", "svgenius", "bugfix", "--data", str(data), "--pred",
                 str(tmp_path / "none.jsonl")]) == 2
    assert "predictions not found" in capsys.readouterr().err
    assert main(["eval", "svgenius", "nosuchtask", "--data", str(data)]) == 2
    assert "has no task 'nosuchtask'" in capsys.readouterr().err
    assert main(["eval", "svgenius", "bugfix", "--data", str(data), "--pred", str(data),
                 "--weights", "clip"]) == 2
    assert "NAME=PATH" in capsys.readouterr().err


def test_limit_and_plot(tmp_path):
    result = run_eval(load_suite("svgenius"), "styleedit",
                      FIXTURES / "svgenius" / "easy_styleedit.json",
                      FIXTURES / "svgenius" / "easy_styleedit.pred.jsonl",
                      RunOptions(limit=2, progress=False))
    assert [r["id"] for r in result["samples"]] == ["sample_1", "sample_2"]
    from svgloo.evals.report import write_histograms

    png = write_histograms(result, str(tmp_path / "h.png"))
    assert (tmp_path / "h.png").read_bytes().startswith(b"\x89PNG") and png


def test_oversized_predictions_are_refused_before_any_work(tmp_path):
    huge = "Answer: <svg>" + "x" * (9 * 1024 * 1024) + "</svg>"
    pred = write_jsonl(tmp_path / "p.jsonl", [{"id": "sample_1", "response": huge}])
    result = run_eval(load_suite("svgenius"), "bugfix",
                      FIXTURES / "svgenius" / "easy_bugfix.json", pred,
                      RunOptions(limit=1, progress=False))
    row = result["samples"][0]
    # svgloo's limit, not the benchmark's: not scored, and counted apart
    assert row["status"] == "error" and "svgloo's file-size limit is" in row["reason"]
    assert row["metrics"] == {} and result["summary"]["status_counts"]["error"] == 1
