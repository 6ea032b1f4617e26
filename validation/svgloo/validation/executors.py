"""Where a batch's per-file jobs run: local worker processes, or Ray tasks.

An executor takes a module-level function and a list of ``(key, args)`` jobs and yields
``(key, result, error)`` as jobs finish, in any order; ``error`` is the exception when the
job's process died (a job's own failures are rows, not exceptions). ``run_batch`` and
``svgloo eval`` record the results the same way whichever executor ran them, so
``results.jsonl``, the progress bar, the error rows and resuming do not change.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor, as_completed


class LocalExecutor:
    """``workers`` processes on this machine (forkserver where available)."""

    name = "local"

    def __init__(self, workers: int = 1):
        self.workers = max(1, workers)

    def run(self, fn, jobs):
        if not jobs:
            return
        ctx = multiprocessing.get_context(
            "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn")
        with ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx) as ex:
            futures = {ex.submit(fn, *args): key for key, args in jobs}
            for fut in as_completed(futures):
                try:
                    yield futures[fut], fut.result(), None
                except Exception as exc:  # noqa: BLE001 - the worker process itself died
                    yield futures[fut], None, exc


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
            remote = ray.remote(num_cpus=1, max_retries=0)(fn)
            # a local instance queues everything itself; on a cluster keep about two tasks
            # per CPU in flight so a huge folder is not submitted at once
            cap = len(jobs) if started else max(
                self.workers, int(2 * ray.cluster_resources().get("CPU", 1)))
            pending, queue = {}, list(jobs)
            while queue or pending:
                while queue and len(pending) < cap:
                    key, args = queue.pop(0)
                    pending[remote.remote(*args)] = key
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    key = pending.pop(ref)
                    try:
                        yield key, ray.get(ref), None
                    except Exception as exc:  # noqa: BLE001 - the task's worker died (RayTaskError...)
                        yield key, None, exc
        finally:
            if started:
                ray.shutdown()


def make_executor(workers: int = 1, ray: str | None = None):
    """``ray`` None: local processes; "local": a local Ray instance; else a Ray address."""
    if ray is None:
        return LocalExecutor(workers)
    return RayExecutor(None if ray == "local" else ray, workers)
