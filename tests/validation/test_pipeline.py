"""svgloo batch with a model backbone: several files in flight in one process, their
leave-one-out images embedded together (validation/pipeline.py), and the numbers of the
per-file path. On a tiny, randomly initialised CLIP (no network, no real weights)."""

from __future__ import annotations

import shutil

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.torch]

pytest.importorskip("torch")
pytest.importorskip("open_clip")

from svgloo.engine.scoring.score import ScoreSettings, score_file  # noqa: E402
from svgloo.plugins.clip_backbone import ClipBackbone  # noqa: E402
from svgloo.validation.batch import read_results, run_batch  # noqa: E402
from svgloo.validation.pipeline import PipelineExecutor, embeds_images  # noqa: E402

# 5 to 24 units each: every file alone sends the encoder fewer than 32 images
FILES = ["twemoji/1f5bc.svg", "twemoji/1f3b1.svg", "twemoji/1f40f.svg",
         "twemoji/1f3dc.svg", "feather/bold.svg", "twemoji/1f314.svg"]
SETTINGS = ScoreSettings(backbone="clip", size=64, prove=False)


@pytest.fixture(scope="module")
def clip(tiny_clip_files):
    cfg, ckpt = tiny_clip_files
    return ClipBackbone(device="cpu", weights=ckpt, model_name=cfg)


@pytest.fixture()
def folder(tmp_path, corpus_dir):
    src = tmp_path / "in"
    src.mkdir()
    for name in FILES:
        shutil.copy(corpus_dir / name, src / name.replace("/", "-"))
    return src


def _echo(n: int, pool=None, backbone=None) -> int:
    return n


def test_an_exception_the_consumer_throws_in_is_its_own_not_a_failed_file(clip):
    """``run`` yields each file's outcome; an exception thrown into it at a yield (the
    consumer's own error, e.g. through ``generator.throw``) used to be caught as the
    file's failure and the next file's outcome handed back instead."""
    run = PipelineExecutor(SETTINGS, workers=1, backbone=clip).run(
        _echo, [(f"f{n}", (n,)) for n in range(3)])
    key, value, error = next(run)
    assert error is None and value == int(key[1:])
    with pytest.raises(KeyError, match="the consumer's"):
        run.throw(KeyError("the consumer's"))
    with pytest.raises(StopIteration):  # and the run is over, its pool closed
        next(run)


def test_images_of_several_files_go_through_the_encoder_together_with_equal_numbers(
        clip, folder, tmp_path, render_pool):
    assert embeds_images(clip)
    files = sorted(str(p) for p in folder.iterdir())
    executor = PipelineExecutor(SETTINGS, workers=2, backbone=clip)
    counts = run_batch(files, str(tmp_path / "out"), SETTINGS, executor=executor)
    assert counts["ok"] == len(FILES) and counts["error"] == 0
    rows = {r["file"]: r["score"] for r in read_results(str(tmp_path / "out"))}

    changed_per_file = []
    for path in files:
        want = score_file(path, SETTINGS, pool=render_pool, backbone=clip).result
        got = rows[path]
        assert [u["verdict"] for u in got["units"]] == [u["verdict"] for u in want["units"]]
        assert got["full_score"] == pytest.approx(want["full_score"], abs=1e-5)
        assert [u["delta"] for u in got["units"]] == pytest.approx(
            [u["delta"] for u in want["units"]], abs=1e-5)
        assert [u["footprint_pixels"] for u in got["units"]] == \
            [u["footprint_pixels"] for u in want["units"]]
        changed_per_file.append(sum(u["footprint_pixels"] > 0 for u in want["units"]))

    # Encoder passes held the images of several files at once (a per-file path makes
    # one or two passes per file, each with one file's images).
    batches = executor.batcher.batches
    assert max(files_in_it for _, files_in_it in batches) >= 2, batches
    assert sum(n for n, _ in batches) >= sum(changed_per_file)


def test_ray_tasks_score_and_a_pool_of_encoder_actors_holds_the_model_with_equal_numbers(
        tiny_clip_files, clip, folder, tmp_path, render_pool):
    """svgloo batch --ray with a model backbone: Ray tasks score the files, two encoder
    actors each hold the (tiny) model and embed the images of the files sent to them;
    numbers as the per-file path, and both actors had files."""
    pytest.importorskip("ray", reason="the [cluster] extra (ray) is not installed")
    import functools

    from svgloo.validation.executors import RayPipelineExecutor

    cfg, ckpt = tiny_clip_files
    make = functools.partial(ClipBackbone, device="cpu", weights=ckpt, model_name=cfg)
    executor = RayPipelineExecutor(make, None, workers=2, actors=2, gather_wait_s=0.5)
    files = sorted(str(p) for p in folder.iterdir())[:4]
    counts = run_batch(files, str(tmp_path / "out"), SETTINGS, executor=executor)
    assert counts["ok"] == len(files) and counts["error"] == 0
    rows = {r["file"]: r["score"] for r in read_results(str(tmp_path / "out"))}
    changed = 0
    for path in files:
        want = score_file(path, SETTINGS, pool=render_pool, backbone=clip).result
        got = rows[path]
        assert [u["verdict"] for u in got["units"]] == [u["verdict"] for u in want["units"]]
        assert [u["delta"] for u in got["units"]] == pytest.approx(
            [u["delta"] for u in want["units"]], abs=1e-5)
        changed += sum(u["footprint_pixels"] > 0 for u in want["units"])
    # every image went through an actor's encoder, and each actor embedded some: the
    # files were spread over the pool (two files each, in turn)
    assert len(executor.batches_per_actor) == 2
    assert all(sum(n for n, _ in passes) > 0 for passes in executor.batches_per_actor)
    assert sum(n for n, _ in executor.batches) >= changed


def test_the_encoder_pool_has_one_actor_per_gpu_and_at_least_one():
    """The default pool size and each actor's share of a GPU, from the cluster's
    resources (a stand-in for ray: no cluster is started)."""
    from svgloo.validation.executors import RayPipelineExecutor

    started = []

    class FakeRay:
        def __init__(self, gpus):
            self.gpus = gpus

        def cluster_resources(self):
            return {"CPU": 16.0, **({"GPU": self.gpus} if self.gpus else {})}

        def remote(self, **options):
            def wrap(cls):
                class Handle:
                    @staticmethod
                    def remote(*args):
                        started.append(options["num_gpus"])
                return Handle
            return wrap

    for gpus, actors, want in [(0, None, [0.0]), (4, None, [1.0] * 4),
                               (1, 2, [0.5, 0.5]), (8, 2, [1.0, 1.0])]:
        started.clear()
        RayPipelineExecutor(lambda: None, actors=actors)._start_actors(FakeRay(gpus))
        assert started == want, (gpus, actors)
