"""bench_batch's ratio counts the same files on both sides (issue 37's throughput bar)."""

from __future__ import annotations

from svgloo.validation.bench_batch import baseline_of


def test_baseline_counts_only_the_files_the_batch_scored():
    rows = [{"units": 10, "seconds": 1.0}, {"units": 736, "seconds": 98.0},
            {"units": 0, "error": "not an SVG"}, {"units": 30, "seconds": 1.0}]
    every = baseline_of(rows)
    assert (every["images"], every["seconds"]) == (776, 100.0)
    # the 736-unit file ran out of time in the batch: its slow renders leave the baseline
    # too, else the batch's images/s (without its images) is set against them
    scored = baseline_of(rows, {0, 3})
    assert (scored["images"], scored["seconds"]) == (40, 2.0)
    assert scored["images_per_s"] == 20.0
    assert baseline_of(rows, set())["images_per_s"] == 0.0
