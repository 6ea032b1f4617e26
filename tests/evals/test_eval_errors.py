"""svgloo's own failures during an eval run are never scored (issue 23, item 2).

A render worker that dies mid-run used to turn into the benchmark's own verdict with a
score: SVGEditBench's ``invalid``, SVGenius's blank white image and PSS 0.0, "as the
original does" - a silently wrong table. Here a real worker really dies (it sends itself
SIGTERM, as a process killed from outside would) while one sample renders; that sample
must get the ``error`` status with no metrics, the summary must leave it out and count it,
and ``svgloo eval`` must exit non-zero. The other samples are scored as usual."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

import svgloo.evals.render as eval_render
from eval_testlib import FIXTURES, write_jsonl
from svgloo.cli import main
from svgloo.evals.render import job_render_rgb as _engine_job  # before any patching
from svgloo.evals.svgeditbench import SvgEditBenchSuite

DIE = "svgloo-test-die"


def _render_or_die(text, protocol, limits, name):
    """The suites' render job, run in a render worker; a document holding ``DIE`` kills
    the worker instead (module level, so the worker imports it by name)."""
    if DIE in text:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(60)
    return _engine_job(text, protocol, limits, name)


@pytest.fixture
def dying_worker(monkeypatch):
    monkeypatch.setattr(eval_render, "job_render_rgb", _render_or_die)
    monkeypatch.setenv("SVGLOO_RENDER_WORKERS", "1")


def _with_marker(svg: str) -> str:
    head, sep, tail = svg.rpartition("</svg>")
    return f"{head}<desc>{DIE}</desc>{sep}{tail}"


def _run(capsys, args: list[str]) -> tuple[int, dict, str]:
    code = main(["eval", *args, "--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def test_svgeditbench_sample_whose_worker_died_is_an_error_not_invalid(dying_worker, tmp_path,
                                                                      capsys):
    data = FIXTURES / "svgeditbench"
    samples = SvgEditBenchSuite().load(data, "changecolor")[:2]
    assert len(samples) == 2
    answers = [s.inputs["answer"] for s in samples]
    pred = write_jsonl(tmp_path / "pred.jsonl", [
        {"id": samples[0].id, "svg": answers[0]},
        {"id": samples[1].id, "svg": _with_marker(answers[1])}])
    code, result, err = _run(capsys, ["svgeditbench", "changecolor", "--data", str(data),
                                      "--pred", str(pred), "--limit", "2"])
    rows = {r["id"]: r for r in result["samples"]}
    assert rows[samples[0].id]["status"] == "ok"  # the pool was replaced; the run went on
    died = rows[samples[1].id]
    assert died["status"] == "error" and died["metrics"] == {}
    assert "the render worker died (killed by SIGTERM)" in died["reason"]
    assert "memory" not in died["reason"]
    summary = result["summary"]
    assert summary["n_scored"] == 1 and summary["n_excluded"] == 0
    assert summary["status_counts"]["error"] == 1 and summary["status_counts"]["invalid"] == 0
    assert any("1 of 2 samples not scored" in w for w in result["warnings"])
    assert code == 1
    assert err.startswith("svgloo: error: 1 of 2 samples were not scored")


def test_svgenius_pss_sample_whose_worker_died_is_not_scored_as_the_blank_image(
        dying_worker, tmp_path, capsys):
    from svgloo.evals.svgenius import pss_available

    if not pss_available():
        pytest.skip("PSS needs the [eval] extra (svgelements, svgpathtools)")
    data = FIXTURES / "svgenius" / "easy_i2s.json"
    rows = [json.loads(line) for line in
            (FIXTURES / "svgenius" / "easy_i2s.pred.jsonl").read_text().splitlines()][:2]
    rows[0]["response"] = _with_marker(rows[0]["response"])  # sample_2 is PSS-valid
    pred = write_jsonl(tmp_path / "pred.jsonl", rows)
    code, result, err = _run(capsys, ["svgenius", "i2s", "--data", str(data), "--pred",
                                      str(pred), "--limit", "2"])
    by_id = {r["id"]: r for r in result["samples"]}
    died, ok = by_id[rows[0]["id"]], by_id[rows[1]["id"]]
    assert ok["status"] == "ok" and ok["metrics"]["pss_valid"] is True
    assert died["status"] == "error" and died["metrics"] == {}  # no PSS 0.0, no blank image
    assert "the render worker died (killed by SIGTERM)" in died["reason"]
    summary = result["summary"]
    assert summary["samples_evaluated"] == 1 and summary["total_samples"] == 1
    assert summary["pss"] == ok["metrics"]["pss"]  # the mean of what was scored, only
    assert summary["status_counts"]["error"] == 1
    assert code == 1 and "not scored" in err


def test_an_internal_error_in_a_suite_is_an_error_row(tmp_path, capsys, monkeypatch):
    """A bug (any exception that is not a document error) is not a verdict either."""
    data = FIXTURES / "svgeditbench"
    samples = SvgEditBenchSuite().load(data, "changecolor")[:1]

    def broken(*args, **kwargs):
        raise KeyError("a suite bug")

    monkeypatch.setattr(SvgEditBenchSuite, "score", broken)
    code, result, err = _run(capsys, ["svgeditbench", "changecolor", "--data", str(data),
                                      "--no-edit", "--limit", "1"])
    [row] = result["samples"]
    assert row["id"] == samples[0].id and row["status"] == "error" and row["metrics"] == {}
    assert "internal error: KeyError" in row["reason"]
    assert code == 1
