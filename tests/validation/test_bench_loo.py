"""The leave-one-out benchmark runs end to end on real files (small ones: a smoke test of
its plumbing; its numbers come from running it on the corpus, see the README)."""

from __future__ import annotations

import json
import shutil

import pytest

from svgloo.validation import bench_loo


@pytest.fixture
def two_files(tmp_path, corpus_dir):
    folder = tmp_path / "files"
    folder.mkdir()
    for rel in ("feather/alert-octagon.svg", "feather/bold.svg"):
        shutil.copy(corpus_dir / rel, folder / rel.split("/")[1])
    return folder


def test_cli_mode_times_whole_processes_and_compares_their_results(two_files, tmp_path,
                                                                   capsys):
    out = tmp_path / "cli.json"
    assert bench_loo.main([str(two_files), "--cli", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    rows = {r["file"].rsplit("/", 1)[1]: r for r in data["rows"]}
    assert set(rows) == {"alert-octagon.svg", "bold.svg"}
    assert rows["alert-octagon.svg"]["units"] == 3
    for row in rows.values():
        assert row["fast_s"] > 0 and row["naive_s"] > 0
        # the two methods' JSON results, compared unit by unit
        assert row["max_delta_diff"] <= 1e-3 and row["verdicts_differ"] == 0
    assert data["floor_s"] > 0
    printed = capsys.readouterr().out
    assert "1-19" in printed and "floor:" in printed and "verdicts differ" in printed
    assert "start-up:" in printed and "x (median of the pairs' ratios" in printed


def test_startup_mode_pairs_a_scoring_with_the_bare_import(tmp_path, capsys):
    out = tmp_path / "startup.json"
    assert bench_loo.main(["--startup", "--runs", "2", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["runs"] == 2 and data["score_s"] > 0 and data["bare_s"] > 0
    assert data["ratio"] > 0 and data["load_before"].startswith("load")
    assert "start-up: `svgloo score` on a one-unit file" in capsys.readouterr().out


def test_in_process_mode_compares_the_methods_pixel_by_pixel(two_files, tmp_path):
    out = tmp_path / "inproc.json"
    assert bench_loo.main([str(two_files), "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert len(data["rows"]) == 2
    assert all(r["max_pixel_diff"] <= 2 for r in data["rows"])
