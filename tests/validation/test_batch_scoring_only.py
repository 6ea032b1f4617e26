"""svgloo batch scores data sets without the removal proof by default (issue 37, item 3;
issue 36's ``ScoreSettings.prove``): the numbers are the per-file path's, the proof runs
only with ``--proof``."""

from __future__ import annotations

import shutil

import pytest

from svgloo.engine.scoring.score import ScoreSettings, score_file
from svgloo.validation.batch import read_results

pytestmark = pytest.mark.slow

# noto/emoji_u1f4b5.svg: 123 units, of which 114 have no footprint and 112 are proven
# removable at 384 px; the feather icons are small (2 units each).
FILES = ["noto/emoji_u1f4b5.svg", "feather/bold.svg", "twemoji/1f5bc.svg"]


@pytest.fixture()
def folder(tmp_path, corpus_dir):
    src = tmp_path / "in"
    src.mkdir()
    for name in FILES:
        shutil.copy(corpus_dir / name, src / name.replace("/", "-"))
    return src


def _batch(folder, out, *extra: str) -> dict:
    from svgloo.cli import main

    code = main(["batch", str(folder), "--out", str(out), "--workers", "2",
                 "--backbone", "pixel", "--size", "128", *extra])
    assert code == 0
    return {r["file"].rsplit("/", 1)[-1]: r for r in read_results(str(out))}


def _numbers(result: dict) -> list:
    """What a scoring-only run must reproduce: every unit's delta, verdict, footprint and
    findings, the full score."""
    return [result["full_score"]] + [(u["index"], u["delta"], u["verdict"],
                                      u["footprint_pixels"], u["findings"])
                                     for u in result["units"]]


def test_batch_scores_without_the_proof_by_default_and_numbers_equal_per_file(
        folder, tmp_path, render_pool):
    rows = _batch(folder, tmp_path / "out")
    assert len(rows) == len(FILES)
    for name, row in rows.items():
        assert row["status"] == "ok", row["error"]
        got = row["score"]
        # scoring only: the proof never ran, so no proof timing and no removal offered
        assert "proof_s" not in got["timings"] and "proof_renders" not in got["timings"]
        assert "bulk_removal" not in got and "proven_removable" not in got["summary"]
        # the per-file path, proof and all, computed here
        want = score_file(str(folder / name), ScoreSettings(backbone="pixel", size=128),
                          pool=render_pool).result
        assert _numbers(got) == _numbers(want)
        # nothing is called removable without the proof: every unit waits for it
        assert {g["removal"]["status"] for g in got["units"]} == {"unchecked"}
        assert "not checked" in got["units"][0]["removal"]["reason"]
    noto = rows["noto-emoji_u1f4b5.svg"]["score"]["summary"]
    assert noto["units"] == 123 and noto["unchecked"] == 123


def test_batch_proof_on_request_and_its_rows_are_kept_apart(folder, tmp_path, render_pool):
    out = tmp_path / "out"
    _batch(folder, out, "--no-proof")
    rows = _batch(folder, out, "--proof")  # other settings: not skipped as already done
    assert len(read_results(str(out))) == 2 * len(FILES)
    name = "noto-emoji_u1f4b5.svg"
    got = rows[name]["score"]
    want = score_file(str(folder / name), ScoreSettings(backbone="pixel", size=128),
                      pool=render_pool).result
    assert got["timings"]["proof_renders"] > 0
    assert [u["removal"] for u in got["units"]] == [u["removal"] for u in want["units"]]
    assert got["summary"]["proven_removable"] == want["summary"]["proven_removable"] > 0
