"""Where a batch's per-file jobs run: local worker processes, or Ray tasks.

An executor takes a module-level function and a list of ``(key, args)`` jobs and yields
``(key, result, error)`` as jobs finish, in any order; ``error`` is the exception when the
job's process died (a job's own failures are rows, not exceptions). ``run_batch`` and
``svgloo eval`` record the results the same way whichever executor ran them, so
``results.jsonl``, the progress bar, the error rows and resuming do not change.
"""

from __future__ import annotations

import itertools
import multiprocessing
from concurrent.futures import ProcessPoolExecutor, as_completed


class LocalExecutor:
    """``workers`` processes on this machine: forked from this process where a one-shot
    program allowed it and loaded the renderer (``svgloo batch``: see
    worker_start.pool_context_forking_here), else from the render workers' fork server
    where there is one."""

    name = "local"

    def __init__(self, workers: int = 1):
        self.workers = max(1, workers)

    def run(self, fn, jobs):
        from svgloo.engine.processes import worker_start

        if not jobs:
            return
        ctx = worker_start.pool_context_forking_here()
        if ctx is None:
            # The render workers' fork server, started the way they start it if it is not
            # running yet: the renderer preloaded, nothing imported from the working
            # folder. A fork server started here first would have no preload, for them too.
            worker_start.start_fork_server()
            ctx = multiprocessing.get_context(
                "forkserver" if "forkserver" in multiprocessing.get_all_start_methods()
                else "spawn")
        ex = ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx)
        try:
            with worker_start.signals_held_while_forking():  # a fork, at the first submit
                futures = {ex.submit(fn, *args): key for key, args in jobs}
            for fut in as_completed(futures):
                try:
                    yield futures[fut], fut.result(), None
                except Exception as exc:  # noqa: BLE001 - the worker process itself died
                    yield futures[fut], None, exc
        except BaseException:
            # Ctrl-C, or the caller stopped reading: stop now. A plain shutdown would run
            # every job still queued first (the workers take Ctrl-C as one job's failure
            # and go on to the next): the rest of the batch. Their render workers die with
            # them; the rows already written stay, and a rerun resumes after them.
            _stop_now(ex)
            raise
        ex.shutdown(wait=True)


def _stop_now(ex: ProcessPoolExecutor) -> None:
    """Kill the pool's workers (they are ours alone) and cancel what has not started, as
    the render pool stops its own (a worker killed mid-result would otherwise leave the
    pool's thread, and this interpreter's exit, waiting for the rest of it)."""
    from svgloo.engine.processes.workers import (kill_executor_workers,
                                                 shut_down_killed_executor)

    processes = kill_executor_workers(ex)
    shut_down_killed_executor(ex)
    for process in processes:
        process.join(timeout=5)


class RayExecutor:
    """One Ray task per job (the optional ``[cluster]`` extra).

    ``address`` None starts a local Ray instance with ``workers`` CPUs and shuts it down
    afterwards (every process it started); an address (``auto``, ``HOST:6379``,
    ``ray://HOST:10001``) joins that cluster, whose nodes must have svgloo installed, and
    leaves it running. Each task asks for one CPU."""

    name = "ray"

    def __init__(self, address: str | None = None, workers: int = 1):
        try:
            import ray  # noqa: F401
        except ImportError:
            from svgloo.engine.errors import ConfigError

            raise ConfigError(None, "--ray needs Ray: pip install 'svgloo[cluster]'") from None
        self.address = address
        self.workers = max(1, workers)

    def _remote_for(self, ray, fn):
        """How a job is submitted: one Ray task per file."""
        return ray.remote(num_cpus=1, max_retries=0)(fn).remote

    def _finished(self, ray) -> None:
        """Called when every job has finished (before a local instance shuts down)."""

    def run(self, fn, jobs):
        import ray

        if not jobs:
            return
        started = False
        if not ray.is_initialized():
            if self.address:
                ray.init(address=self.address, log_to_driver=False)
            else:
                ray.init(num_cpus=self.workers, include_dashboard=False, log_to_driver=False,
                         configure_logging=False)
                started = True
        try:
            remote = self._remote_for(ray, fn)
            # a local instance queues everything itself; on a cluster keep about two tasks
            # per CPU in flight so a huge folder is not submitted at once
            cap = len(jobs) if started else max(
                self.workers, int(2 * ray.cluster_resources().get("CPU", 1)))
            pending, queue = {}, list(jobs)
            while queue or pending:
                while queue and len(pending) < cap:
                    key, args = queue.pop(0)
                    pending[remote(*args)] = key
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    key = pending.pop(ref)
                    try:
                        yield key, ray.get(ref), None
                    except Exception as exc:  # noqa: BLE001 - the task's worker died (RayTaskError...)
                        yield key, None, exc
            self._finished(ray)
        finally:
            if started:
                ray.shutdown()


class RayPipelineExecutor(RayExecutor):
    """``--ray`` with a model backbone: Ray tasks score the files (one CPU each, rendering
    in a render worker of their own) and a pool of encoder actors holds the model
    (``pipeline.EncoderActor``): ``actors`` of them, by default one per GPU of the
    cluster (at least one), each with one GPU where the cluster has one for each. A
    task sends all its file's model calls to one actor, the files going to the actors
    in turn, so that each actor's CrossFileBatcher gathers the images of its share of
    the files in flight. ``make_backbone`` loads the model in an actor
    (``pipeline.backbone_factory(settings)``)."""

    name = "ray-pipeline"

    def __init__(self, make_backbone, address: str | None = None, workers: int = 1,
                 actors: int | None = None, min_batch: int | None = None,
                 gather_wait_s: float | None = None, actor_concurrency: int = 64):
        super().__init__(address, workers)
        self.make_backbone = make_backbone
        self.actors = None if actors is None else max(1, actors)
        self.min_batch = min_batch
        self.gather_wait_s = gather_wait_s
        self.actor_concurrency = actor_concurrency
        # after run: each actor's encoder passes, (images, files) each, and all of them
        self.batches_per_actor: list[list[tuple[int, int]]] = []
        self.batches: list[tuple[int, int]] = []

    def _start_actors(self, ray) -> list:
        from svgloo.validation.pipeline import GATHER_WAIT_S, EncoderActor

        gpus = float(ray.cluster_resources().get("GPU", 0))
        count = self.actors or max(1, int(gpus))
        # one GPU each where the cluster has one per actor; fewer GPUs are shared evenly
        per_actor = min(1.0, gpus / count)
        actor_class = ray.remote(num_cpus=0, num_gpus=per_actor,
                                 max_concurrency=self.actor_concurrency)(EncoderActor)
        return [actor_class.remote(self.make_backbone, self.min_batch,
                                   self.gather_wait_s or GATHER_WAIT_S)
                for _ in range(count)]

    def _remote_for(self, ray, fn):
        from svgloo.validation.pipeline import score_with_actor

        # Not ray.util.ActorPool: it runs each piece of work *in* an actor and gives an
        # actor one call at a time, while here the files are scored in CPU tasks and
        # many tasks' calls must wait in one actor together for its batcher to gather
        # them. The files go to the actors in turn: each actor then has as many files
        # in flight as any other (the tasks, not the actors, do each file's own work).
        self._pool = self._start_actors(ray)
        task = ray.remote(num_cpus=1, max_retries=0)(score_with_actor)
        turn = itertools.count()

        def submit(*args):
            return task.remote(fn, args, self._pool[next(turn) % len(self._pool)])

        return submit

    def _finished(self, ray) -> None:
        for actor in getattr(self, "_pool", []):
            try:
                passes = ray.get(actor.batches.remote())
            except Exception:  # noqa: BLE001 - an actor that died: its passes are not counted
                passes = []
            self.batches_per_actor.append(passes)
            self.batches.extend(passes)
        self._pool = []


def make_executor(workers: int = 1, ray: str | None = None, settings=None,
                  encoders: int | None = None):
    """``ray`` None: local processes; "local": a local Ray instance; else a Ray address.
    ``settings`` whose backbone is a model (``cli_batch.model_backbone``): the model in
    one place, images batched across files (locally pipeline.PipelineExecutor; on Ray,
    tasks scoring and ``encoders`` actors holding the model, default one per GPU)."""
    if ray is None:
        if settings is not None:
            from svgloo.validation.pipeline import PipelineExecutor

            return PipelineExecutor(settings, workers)
        return LocalExecutor(workers)
    address = None if ray == "local" else ray
    if settings is not None:
        from svgloo.validation.pipeline import backbone_factory

        return RayPipelineExecutor(backbone_factory(settings), address, workers,
                                   actors=encoders)
    return RayExecutor(address, workers)
