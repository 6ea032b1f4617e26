"""svgloo batch: good files score, a malformed file is an error row, re-runs resume."""

from __future__ import annotations

import csv
import json
import shutil

import pytest

from svgloo.validation.batch import (RESULTS, SUMMARY, process_file, read_results, run_batch,
                                     shard)
from svgloo.engine.errors import ConfigError
from svgloo.engine.scoring.score import ScoreSettings

SETTINGS = ScoreSettings(backbone="pixel", size=96)


@pytest.fixture()
def folder(tmp_path, corpus_dir):
    src = tmp_path / "in"
    (src / "sub").mkdir(parents=True)
    shutil.copy(corpus_dir / "feather" / "bold.svg", src / "bold.svg")
    shutil.copy(corpus_dir / "feather" / "italic.svg", src / "sub" / "italic.svg")
    (src / "broken.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"><rect')
    return src


@pytest.mark.slow
def test_batch_rows_summary_and_resume(folder, tmp_path):
    from svgloo.validation.batch import find_svgs

    files = find_svgs(str(folder))
    assert [f.rsplit("/", 1)[-1] for f in files] == ["bold.svg", "broken.svg", "italic.svg"]
    out = tmp_path / "out"
    counts = run_batch(files, str(out), SETTINGS, workers=2)
    assert (counts["ok"], counts["error"], counts["skipped"]) == (2, 1, 0)
    rows = {r["file"].rsplit("/", 1)[-1]: r for r in read_results(str(out))}
    assert rows["broken.svg"]["status"] == "error"
    assert "broken.svg" in rows["broken.svg"]["error"]["file"]
    assert rows["broken.svg"]["score"] is None
    bold = rows["bold.svg"]
    assert bold["status"] == "ok" and bold["score"]["schema"] == "svgloo.score/1"
    assert bold["score"]["summary"]["units"] == 2  # two paths in feather's bold icon
    assert len(bold["sha256"]) == 64 and bold["structure"] is None
    with open(out / SUMMARY) as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 3
    assert {r["status"] for r in table} == {"ok", "error"}
    assert [r["units"] for r in table if r["file"].endswith("bold.svg")] == ["2"]

    again = run_batch(files, str(out), SETTINGS, workers=1)
    assert (again["ok"], again["error"], again["skipped"]) == (0, 0, 3)
    assert len((out / RESULTS).read_text().splitlines()) == 3

    # changed content or settings are not skipped
    (folder / "bold.svg").write_text((folder / "bold.svg").read_text() + "\n")
    third = run_batch(files, str(out), SETTINGS, workers=1)
    assert (third["ok"], third["skipped"]) == (1, 2)
    fourth = run_batch(files[:1], str(out), SETTINGS.with_(size=64), workers=1)
    assert (fourth["ok"], fourth["skipped"]) == (1, 0)
    json.loads((out / RESULTS).read_text().splitlines()[-1])


class _InOrder:
    """An executor that runs the jobs here, one after another, noting the order."""

    name = "in-order"

    def __init__(self):
        self.order: list[str] = []

    def run(self, fn, jobs):
        for key, args in jobs:
            self.order.append(key)
            yield key, fn(*args), None


def test_batch_starts_the_largest_files_first(tmp_path, corpus_dir):
    """A big file taken last would run alone while the other workers wait: the files go
    to the executor largest first (ties in the order given), and every one gets its row."""
    src = tmp_path / "in"
    src.mkdir()
    picked = {"a.svg": corpus_dir / "feather" / "bold.svg",
              "b.svg": corpus_dir / "feather" / "italic.svg",
              "c.svg": corpus_dir / "twemoji" / "1f307.svg",
              "d.svg": corpus_dir / "feather" / "italic.svg"}
    for name, path in picked.items():
        shutil.copy(path, src / name)
    files = [str(src / name) for name in sorted(picked)]
    sizes = {f: (src / f).stat().st_size for f in files}
    assert len(set(sizes.values())) == 3  # b and d are one file twice: a tie
    executor = _InOrder()
    counts = run_batch(files, str(tmp_path / "out"), SETTINGS, executor=executor)
    assert executor.order == sorted(files, key=lambda f: -sizes[f])
    assert executor.order.index(files[1]) < executor.order.index(files[3])  # tie: as given
    assert counts["ok"] == 4
    assert sorted(r["file"] for r in read_results(str(tmp_path / "out"))) == files


def test_process_file_missing_file_is_an_error_row(tmp_path):
    row = process_file(str(tmp_path / "nope.svg"), SETTINGS)
    assert row["status"] == "error" and "nope.svg" in row["error"]["file"]


def test_shard_splits_the_list():
    files = [f"f{i}" for i in range(7)]
    parts = [shard(files, f"{i}/3") for i in range(3)]
    assert sorted(sum(parts, [])) == files and parts[0] == ["f0", "f3", "f6"]
    with pytest.raises(ConfigError):
        shard(files, "3/3")


@pytest.mark.slow
def test_structure_row_feeds_the_summary(corpus_dir):
    from svgloo.validation.batch import summary_row

    row = process_file(str(corpus_dir / "feather" / "bold.svg"), SETTINGS, do_score=False,
                       do_structure=True)
    assert row["status"] == "ok", row["error"]
    assert row["score"] is None and row["structure"]["schema"] == "svgloo.structure/1"
    s = summary_row(row)
    assert s["purity"] == row["structure"]["metrics"]["purity"]
    assert s["units"] == 2 and s["helpful"] is None
