"""A data set through one model: several files in flight in one process, their
leave-one-out images embedded together (``svgloo batch`` with a backbone that embeds images,
such as CLIP).

The per-file layout (``LocalExecutor``: N processes, each scoring one file at a time with
its own render worker) is the right one for the weight-free pixel backbone, but with a
model it loads N copies of it (N copies on one GPU) and sends each file's 20-99 images to
the encoder on their own. Here instead:

- one process holds the model and one render pool with a worker per core; ``workers + 1``
  files are scored at once on threads, and the render pool gives their renders the
  workers in turn (engine fair_dispatch.py), so renders run on every core with several
  files in flight while other files composite or wait for the encoder: the stages overlap;
- ``CrossFileBatcher`` stands in for the backbone: each file's ``similarity`` call waits
  while the batcher gathers the images of the files in flight, and one encoder pass embeds
  them all (at least ``min_batch`` images, 128 on CUDA, unless every file in flight is
  already waiting). Each file's scores are then its own images' embeddings against its own
  reference, as the backbone's ``similarity`` computes them.

The numbers are the per-file path's up to the encoder's floating point: a batch of other
composition sums in another order (the CLIP backbone's own tests allow 1e-5 between
batch sizes); ``tests/validation/test_pipeline.py`` compares every delta and verdict.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

import numpy as np

CUDA_MIN_BATCH = 128  # issue 37: the encoder is fed at least this many images on CUDA
CPU_MIN_BATCH = 32
GATHER_WAIT_S = 0.05  # how long a partial batch waits for the files still computing


def embeds_images(backbone) -> bool:
    """Whether cross-file batching applies: the backbone embeds images and scores them
    against a prepared vector (CLIP), and has no patch-wise path of its own (pixel)."""
    return callable(getattr(backbone, "embed_images", None)) and \
        not hasattr(backbone, "similarity_patched")


class _Request:
    __slots__ = ("images", "prepared", "done", "result", "error")

    def __init__(self, images: np.ndarray, prepared) -> None:
        self.images = images
        self.prepared = prepared
        self.done = threading.Event()
        self.result: np.ndarray | None = None
        self.error: BaseException | None = None


class CrossFileBatcher:
    """The backbone as the engine sees it, with ``similarity`` calls of several scoring
    threads embedded in one encoder pass. Everything else is the backbone's own."""

    # The engine sends a file's changed images in batches of this size (most files' all
    # at once, so that they meet the other files' images here; a huge file's in parts,
    # so that its images are never all held at once).
    batch_size = 256

    def __init__(self, backbone, min_batch: int | None = None,
                 gather_wait_s: float = GATHER_WAIT_S, files_known: bool = True) -> None:
        self._backbone = backbone
        # False (a Ray actor): the files in flight are elsewhere and not counted, so a
        # partial batch goes when it is big enough or has waited long enough.
        self.files_known = files_known
        device = str(getattr(backbone, "device", "cpu"))
        self.min_batch = min_batch or (CUDA_MIN_BATCH if device.startswith("cuda")
                                       else CPU_MIN_BATCH)
        self.gather_wait_s = gather_wait_s
        self._cond = threading.Condition()
        self._queue: list[_Request] = []
        self._active = 0   # files being scored now
        self._closed = False
        self.batches: list[tuple[int, int]] = []  # (images, files) of each encoder pass
        self._thread = threading.Thread(target=self._run, name="svgloo-encoder", daemon=True)
        self._thread.start()

    def __getattr__(self, name: str):
        return getattr(self._backbone, name)

    # -- what the scoring threads call --------------------------------------------------
    def file_started(self) -> None:
        with self._cond:
            self._active += 1

    def file_finished(self) -> None:
        with self._cond:
            self._active -= 1
            self._cond.notify_all()  # one fewer file to wait for

    def similarity(self, images: np.ndarray, prepared) -> np.ndarray:
        images = np.asarray(images)
        if images.ndim == 3:
            images = images[None]
        if len(images) == 0:
            return np.zeros((0,), np.float64)
        request = _Request(images, prepared)
        with self._cond:
            if self._closed:
                raise RuntimeError("the encoder was closed")
            self._queue.append(request)
            self._cond.notify_all()
        request.done.wait()
        if request.error is not None:
            raise request.error
        assert request.result is not None  # _run sets a result or an error before done
        return request.result

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=30)

    # -- the encoder thread -------------------------------------------------------------
    def _take(self) -> list[_Request] | None:
        """The next batch: once ``min_batch`` images wait, or every file in flight is
        waiting (no more images can come), or the oldest has waited ``gather_wait_s``."""
        with self._cond:
            first_seen = None
            while True:
                if self._queue:
                    waiting = sum(len(r.images) for r in self._queue)
                    first_seen = first_seen or time.monotonic()
                    if (waiting >= self.min_batch
                            or (self.files_known and len(self._queue) >= self._active)
                            or self._closed
                            or time.monotonic() - first_seen >= self.gather_wait_s):
                        taken, self._queue = self._queue, []
                        return taken
                    self._cond.wait(max(0.001, self.gather_wait_s
                                        - (time.monotonic() - first_seen)))
                elif self._closed:
                    return None
                else:
                    self._cond.wait()

    def _run(self) -> None:
        while True:
            taken = self._take()
            if taken is None:
                return
            try:
                images = np.concatenate([r.images for r in taken])
                embedded = self._backbone.embed_images(images)
                self.batches.append((len(images), len(taken)))
                at = 0
                for r in taken:
                    emb = embedded[at:at + len(r.images)]
                    at += len(r.images)
                    # as ClipBackbone.similarity: cosine of L2-normalised embeddings
                    ref = np.asarray(r.prepared, dtype=np.float64).reshape(-1)
                    r.result = np.clip(emb @ ref, -1.0, 1.0).astype(np.float64)
            except BaseException as exc:  # noqa: BLE001 - each waiting file gets it, or hangs
                for r in taken:
                    r.error = exc
            for r in taken:
                r.done.set()


class PipelineExecutor:
    """Runs ``process_file`` jobs as described in the module's doc: ``workers`` render
    workers, ``workers + 1`` files in flight on threads, one backbone behind a
    ``CrossFileBatcher``. Same ``run`` contract as the other executors."""

    name = "pipeline"

    def __init__(self, settings, workers: int = 1, backbone=None,
                 min_batch: int | None = None) -> None:
        self.settings = settings
        self.workers = max(1, workers)
        self._backbone = backbone  # a loaded one (tests), else the settings' own
        self.min_batch = min_batch
        self.batcher: CrossFileBatcher | None = None

    def run(self, fn: Callable, jobs: list) -> Iterator:
        if not jobs:
            return
        from svgloo.engine.scoring.backbones import choose_backbone, get_backbone
        from svgloo.engine.processes.workers import RenderPool

        s = self.settings
        backbone = self._backbone or get_backbone(
            choose_backbone(s.backbone, s.weights).name, s.weights, s.device, s.precision,
            s.preprocess)
        self.batcher = batcher = CrossFileBatcher(backbone, self.min_batch)
        pool = RenderPool(workers=self.workers, limits=s.limits)

        def one(args: tuple):
            batcher.file_started()
            try:
                return fn(*args, pool=pool, backbone=batcher)
            finally:
                batcher.file_finished()

        try:
            with ThreadPoolExecutor(max_workers=self.workers + 1,
                                    thread_name_prefix="svgloo-file") as ex:
                futures = {ex.submit(one, args): key for key, args in jobs}
                for fut in as_completed(futures):
                    # The outcome is read outside the yield: an exception the consumer
                    # throws into this generator at the yield is the consumer's, not a
                    # failure of this file, and goes back up through the finally below.
                    outcome: tuple[Any, Any, Exception | None]
                    try:
                        outcome = futures[fut], fut.result(), None
                    except Exception as exc:  # noqa: BLE001 - any failure is reported with its file
                        outcome = futures[fut], None, exc
                    yield outcome
        finally:
            batcher.close()
            pool.close()


class EncoderActor:
    """A Ray actor holding the model (``svgloo batch --ray`` with a model backbone): the
    scoring tasks' ``similarity`` calls meet in its ``CrossFileBatcher``. Run threaded
    (``max_concurrency``) so that calls from several tasks wait in it together."""

    def __init__(self, make_backbone: Callable, min_batch: int | None = None,
                 gather_wait_s: float = GATHER_WAIT_S) -> None:
        self.backbone = make_backbone()
        self.batcher = CrossFileBatcher(self.backbone, min_batch, gather_wait_s,
                                        files_known=False)

    def info(self) -> dict:
        b = self.backbone
        return {"name": b.name, "description": getattr(b, "description", b.name),
                "takes_text": bool(getattr(b, "takes_text", False))}

    def prepare(self, reference):
        return self.backbone.prepare(reference)

    def similarity(self, images: np.ndarray, prepared) -> np.ndarray:
        return self.batcher.similarity(images, prepared)

    def batches(self) -> list[tuple[int, int]]:
        return list(self.batcher.batches)


class RemoteBackbone:
    """The backbone as a scoring task sees it: every model call goes to an
    ``EncoderActor``."""

    batch_size = CrossFileBatcher.batch_size

    def __init__(self, actor) -> None:
        import ray

        self._actor = actor
        info = ray.get(actor.info.remote())
        self.name, self.description = info["name"], info["description"]
        self.takes_text = info["takes_text"]

    def prepare(self, reference):
        import ray

        return ray.get(self._actor.prepare.remote(reference))

    def similarity(self, images: np.ndarray, prepared) -> np.ndarray:
        import ray

        return ray.get(self._actor.similarity.remote(np.asarray(images), prepared))


def score_with_actor(fn: Callable, args: tuple, actor) -> dict:
    """A Ray task: ``fn`` (process_file) on one file, rendering in this task's own render
    worker, the model calls going to ``actor``."""
    return fn(*args, backbone=RemoteBackbone(actor))


def backbone_factory(settings) -> Callable:
    """What an actor calls to load the settings' backbone (picklable)."""
    import functools

    from svgloo.engine.scoring.backbones import choose_backbone, get_backbone

    return functools.partial(get_backbone, choose_backbone(settings.backbone,
                                                           settings.weights).name,
                             settings.weights, settings.device, settings.precision,
                             settings.preprocess)


__all__ = ["CrossFileBatcher", "PipelineExecutor", "embeds_images", "EncoderActor",
           "RemoteBackbone", "score_with_actor", "backbone_factory"]
