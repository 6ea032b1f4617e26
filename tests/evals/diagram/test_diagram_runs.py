"""Run-level bookkeeping, the commands, and the --impl upstream bridge."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from svgloo.evals.diagram.runs import find_prediction, run
from test_diagram_metrics import GOLDEN, pair

FIX = Path(__file__).parent / "fixtures"


def svgloo(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "svgloo.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.fixture
def eval_set(tmp_path):
    """d1 = gt1, d2 = gt2, d3 = noarrows_gt; models: full, missing_d2 (none for d2),
    broken_d2 (malformed d2), empty (nothing)."""
    gt = tmp_path / "eval-set" / "demo"
    gt.mkdir(parents=True)
    for stem, src in (("d1", "gt1"), ("d2", "gt2"), ("d3", "noarrows_gt")):
        shutil.copy(FIX / f"{src}.svg", gt / f"{stem}.svg")
    models = tmp_path / "input" / "demo"
    for name in ("full", "missing_d2", "broken_d2", "empty"):
        (models / name).mkdir(parents=True)
    for m in ("full", "missing_d2", "broken_d2"):
        shutil.copy(FIX / "gen1.svg", models / m / "d1_run3.svg")      # the stem_ prefix rule
        shutil.copy(FIX / "noarrows_gen.svg", models / m / "d3.svg")
    shutil.copy(FIX / "gen2.svg", models / "full" / "d2-final.svg")
    (models / "broken_d2" / "d2.svg").write_text("<svg><rect></svg>")
    return gt, [models / n for n in ("full", "missing_d2", "broken_d2", "empty")]


def test_stem_matching():
    files = {"a": Path("a.svg"), "ab_1": Path("ab_1.svg"), "b-2": Path("b-2.svg")}
    assert find_prediction("a", files) == Path("a.svg")
    assert find_prediction("ab", files) == Path("ab_1.svg")
    assert find_prediction("b", files) == Path("b-2.svg")
    assert find_prediction("c", files) is None


def test_missing_errored_and_superset(eval_set):
    gt, models = eval_set
    res = run(gt, models, superset=True)["demo"]
    g1, g2, g3 = (GOLDEN[k] for k in ("gen1:gt1", "gen2:gt2", "noarrows_gen:noarrows_gt"))
    full = res["full"]
    assert full["missing_count"] == 0 and full["errored_count"] == 0
    assert full["overall"] == pytest.approx((g1["overall"] + g2["overall"] + g3["overall"]) / 3)
    # d3 has no ground-truth arrows: its arrows carry no extra_penalty, so the mean of that
    # key is over d1 and d2 only; the composite is over all three
    assert full["arrows"]["extra_penalty"] == pytest.approx(
        (g1["arrows"]["extra_penalty"] + g2["arrows"]["extra_penalty"]) / 2)
    assert full["arrows"]["composite"] == pytest.approx(
        (g1["arrows"]["composite"] + g2["arrows"]["composite"] + 1.0) / 3)
    miss, broken = res["missing_d2"], res["broken_d2"]
    assert (miss["missing_count"], miss["errored_count"]) == (1, 0)
    assert miss["missing_samples"] == ["d2"]
    assert (broken["missing_count"], broken["errored_count"]) == (0, 1)
    assert "malformed XML" in broken["errored_samples"]["d2"]
    assert broken["overall"] == pytest.approx((g1["overall"] + g3["overall"]) / 3)
    # superset: 'empty' (3 of 3 missing > 0.51·3) is excluded; the rest share d1 and d3
    assert res["empty"]["superset_high_failure"] and res["empty"]["superset_overall"] == 0.0
    for m in ("full", "missing_d2", "broken_d2"):
        assert res[m]["superset_n"] == 2 and res[m]["superset_samples"] == ["d1", "d3"]
        assert res[m]["superset_overall"] == pytest.approx((g1["overall"] + g3["overall"]) / 2)


def test_run_command_writes_the_result(eval_set, tmp_path):
    gt, models = eval_set
    out = tmp_path / "all.json"
    args = ["eval", "diagram", "run", "--gt", gt, "--superset", "--out", out]
    for m in models:
        args += ["--pred", m]
    proc = svgloo(*args)
    assert proc.returncode == 0, proc.stderr
    assert "broken_d2" in proc.stdout and "excluded" in proc.stdout
    data = json.loads(out.read_text())
    assert data["schema"] == "svgloo.eval/1" and data["suite"] == "diagram"
    assert data["results"]["demo"]["missing_d2"]["missing_samples"] == ["d2"]


def test_pair_command_json():
    proc = svgloo("eval", "diagram", "pair", FIX / "gen1.svg", FIX / "gt1.svg", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["overall"] == pytest.approx(GOLDEN["gen1:gt1"]["overall"], abs=1e-12)


def test_framework_runner_scores_a_prediction_folder(eval_set, tmp_path):
    gt, models = eval_set
    out = tmp_path / "r.json"
    proc = svgloo("eval", "diagram", "samples", "--data", gt, "--pred", models[1], "--out", out)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    status = {r["id"]: r["status"] for r in data["samples"]}
    # the framework pairs by exact id: d1_run3.svg is not d1, so only d3 is scored
    assert status == {"d1": "missing", "d2": "missing", "d3": "ok"}
    assert data["summary"]["missing_count"] == 2
    assert data["summary"]["overall"] == pytest.approx(
        GOLDEN["noarrows_gen:noarrows_gt"]["overall"] / 3)


def test_check_names_each_bad_file(tmp_path):
    shutil.copy(FIX / "gt1.svg", tmp_path / "ok.svg")
    (tmp_path / "bad.svg").write_text("<svg><g></svg>")
    (tmp_path / "html.svg").write_text("<html/>")
    (tmp_path / "entity.svg").write_text(
        '<!DOCTYPE svg [<!ENTITY x "y">]><svg xmlns="http://www.w3.org/2000/svg">&x;</svg>')
    proc = svgloo("eval", "diagram", "check", tmp_path)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert any(line.startswith("bad.svg: ") and "malformed XML" in line for line in lines)
    assert any(line.startswith("html.svg: ") and "not an SVG" in line for line in lines)
    assert any(line.startswith("entity.svg: ") for line in lines)
    assert "1/4 SVG files" in proc.stdout
    shutil.copy(FIX / "gt1.svg", tmp_path / "ok.svg")
    for f in ("bad.svg", "html.svg", "entity.svg"):
        (tmp_path / f).unlink()
    assert svgloo("eval", "diagram", "check", tmp_path).returncode == 0


def test_upstream_bridge_imports_the_users_checkout(tmp_path):
    """A stand-in checkout with the original's entry point: the bridge calls it and
    reshapes its (shape_scores, report, arrow_scores, report)."""
    rbe = tmp_path / "VFig" / "rule-based-eval"
    (rbe / "lib").mkdir(parents=True)
    (rbe / "main.py").write_text(
        "def evaluate_standalone(gen, gt, ann_dir=None, label=None):\n"
        "    print('noise on stdout')\n"
        "    return ({'composite': 0.25, 'label': 1.0}, 'r', {'composite': 0.75}, 'r')\n")
    code = ("import json, sys; from svgloo.evals.diagram.upstream import load_upstream; "
            f"f = load_upstream({str(tmp_path / 'VFig')!r}); "
            f"print(json.dumps(f({str(FIX / 'gen1.svg')!r}, {str(FIX / 'gt1.svg')!r})))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got == {"overall": 0.5, "shapes": {"composite": 0.25, "label": 1.0},
                   "arrows": {"composite": 0.75}}
    bad = svgloo("eval", "diagram", "pair", FIX / "gen1.svg", FIX / "gt1.svg",
                 "--impl", "upstream", "--upstream-dir", tmp_path)
    assert bad.returncode == 2 and "no rule-based-eval checkout" in bad.stderr
    assert "Traceback" not in bad.stderr


@pytest.mark.skipif(not os.environ.get("SVGLOO_VFIG_DIR"),
                    reason="set SVGLOO_VFIG_DIR to a RAIVNLab/VFig checkout to compare live")
def test_live_upstream_equals_svgloo():
    from svgloo.evals.diagram.upstream import load_upstream

    upstream = load_upstream(os.environ["SVGLOO_VFIG_DIR"])
    for name in GOLDEN:
        gen, gt = name.split(":")
        theirs, ours = upstream(FIX / f"{gen}.svg", FIX / f"{gt}.svg"), pair(gen, gt)
        for part in ("shapes", "arrows"):
            for key, value in theirs[part].items():
                assert ours[part][key] == pytest.approx(value, abs=1e-12), (name, part, key)


def test_run_equals_the_originals_all_eval_results(eval_set):
    """Every key and number of the original's all_eval_results.json for this eval set."""
    gt, models = eval_set
    golden = json.loads((FIX / "golden_run.json").read_text())["demo"]
    ours = run(gt, models, superset=True)["demo"]
    compared = 0

    def walk(want, got, where):
        nonlocal compared
        if isinstance(want, dict):
            for key, value in want.items():
                assert key in got, where + key
                walk(value, got[key], where + key + ".")
        elif isinstance(want, float):
            compared += 1
            assert got == pytest.approx(want, abs=1e-12), where
        else:
            assert got == want, where

    walk(golden, ours, "")
    assert compared >= 150


@pytest.mark.slow
def test_eval_on_ray_gives_the_local_rows(eval_set, tmp_path):
    """svgloo eval --ray: one Ray task per sample on a local instance; the rows equal the
    local ones, and nothing Ray started is left running."""
    pytest.importorskip("ray", reason="the [cluster] extra (ray) is not installed")
    import tempfile

    gt, models = eval_set
    outs = {}
    ray_tmp = tempfile.mkdtemp(prefix="svr", dir="/tmp")
    try:
        for mode in ("local", "ray"):
            outs[mode] = tmp_path / f"{mode}.json"
            extra = ["--ray", "--workers", "2"] if mode == "ray" else []
            proc = subprocess.run(
                [sys.executable, "-m", "svgloo.cli", "eval", "diagram", "samples", "--data",
                 str(gt), "--pred", str(models[0]), "--out", str(outs[mode]), *extra],
                capture_output=True, text=True, timeout=300,
                env={**os.environ, "RAY_TMPDIR": ray_tmp})
            assert proc.returncode == 0, proc.stderr[-2000:]
        left = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    if ray_tmp.encode() in fh.read():
                        left.append(pid)
            except OSError:
                pass
        assert not left
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)
    rows = {m: [{k: v for k, v in r.items() if k != "time_s"}
                for r in json.loads(outs[m].read_text())["samples"]] for m in outs}
    assert rows["ray"] == rows["local"]
    assert [r["status"] for r in rows["ray"]] == ["missing", "missing", "ok"]   # exact ids only


def test_a_prediction_with_thousands_of_shapes_is_an_error_row_not_a_hang(tmp_path):
    """Matching is quadratic; a hostile prediction is refused, quickly, with a reason."""
    rects = "".join(f'<rect x="{(i % 100) * 20}" y="{(i // 100) * 20}" width="16" '
                    f'height="16" fill="#000"/>' for i in range(3000))
    gen = tmp_path / "pred"
    gen.mkdir()
    (gen / "d1.svg").write_text(f'<svg xmlns="http://www.w3.org/2000/svg">{rects}</svg>')
    gt = tmp_path / "gt"
    gt.mkdir()
    shutil.copy(FIX / "gt1.svg", gt / "d1.svg")
    res = run(gt, [gen])["gt"]["pred"]
    assert res["errored_count"] == 1 and "3000 shape candidates" in res["errored_samples"]["d1"]
