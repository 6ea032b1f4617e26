"""Render worker processes with a memory limit, a CPU limit and a wall-clock timeout.

A hostile document can make CairoSVG run for a long time or allocate gigabytes; that must
cost one error for that file, never the calling process (the daemon, the editor's language
server). Workers are long-lived (imports are paid once); a worker that times out or dies
is killed with its pool, and a fresh pool is started on the next call.

Workers die with the process that owns the pool, however it ends (exit, SIGTERM, kill -9):
a worker's parent is multiprocessing's fork server, so on Linux each worker asks the kernel
for SIGKILL when that parent goes (the fork server itself exits when the owner's pipe closes),
and on every platform a watcher thread exits the worker once the owner's pid is gone.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, TimeoutError as FutureTimeout
from concurrent.futures import wait as futures_wait
from concurrent.futures.process import BrokenProcessPool

from svgloo.engine.errors import LimitError, RenderError
from svgloo.engine.limits import DEFAULT_LIMITS, Limits, current_budget
from svgloo.engine.worker_start import start_fork_server, worker_context


def _die_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when its parent exits (Linux only)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no libc prctl: the owner watch below still applies
        pass


def _pid_exists(pid: int, others_count: bool = True) -> bool:
    """Whether process ``pid`` exists (signal 0); with ``others_count=False`` a process of
    another user counts as gone (a reused pid). Always True on Windows, where os.kill with
    any other signal than a console event terminates the process."""
    if sys.platform == "win32":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return others_count
    return True


def _owner_alive(pid: int) -> bool:
    return _pid_exists(pid, others_count=False)


def _watch_owner(owner_pid: int, parent_pid: int, interval_s: float = 0.5) -> None:
    """Exit this worker as soon as the pool's owner or this worker's parent is gone."""

    def watch() -> None:
        while True:
            if os.getppid() != parent_pid or not _owner_alive(owner_pid):
                os._exit(1)
            time.sleep(interval_s)

    threading.Thread(target=watch, name="svgloo-owner-watch", daemon=True).start()


def _limit_worker(memory_mb: int, owner_pid: int, parent_is_fork_server: bool = True) -> None:
    parent_pid = os.getppid()
    if parent_is_fork_server:
        # Not when the owner itself started this worker (spawn): the kernel's "parent" is
        # then the owner's thread that happened to start it, and a worker started from a
        # short-lived thread would be killed when that thread ends. The watch below holds.
        _die_with_parent()
    # The parent may have gone between fork and prctl: check once after asking.
    if os.getppid() != parent_pid or not _owner_alive(owner_pid):
        os._exit(1)
    _watch_owner(owner_pid, parent_pid)
    try:
        import resource

        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):  # not on this platform: timeouts still apply
        pass
    from svgloo.engine.render import warm_up

    warm_up()


def _set_cpu_budget(seconds: int) -> None:
    """Soft CPU limit = CPU used so far + budget: the limit applies to this job only."""
    try:
        import resource

        used = resource.getrusage(resource.RUSAGE_SELF)
        now = int(used.ru_utime + used.ru_stime) + 1
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        soft = now + seconds
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    except (ImportError, ValueError, OSError):
        pass


def _run_job(cpu_seconds: int, fn: Callable, args: tuple):
    _set_cpu_budget(cpu_seconds)
    return fn(*args)


def default_worker_count() -> int:
    """Render workers per pool: ``$SVGLOO_RENDER_WORKERS`` when set (e.g. 1 where several
    svgloo processes share a machine, like a parallel test run or batch workers), else the
    usable cores, at most 4."""
    configured = os.environ.get("SVGLOO_RENDER_WORKERS", "").strip()
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, 4))


_live_pools: weakref.WeakSet = weakref.WeakSet()
INTERRUPT_POLL_S = 0.2   # how often a waiting map asks the document's interrupt hook
INTERRUPT_GRACE_S = 0.8  # renders under way may finish within this; else workers are killed
DEAD_WORKER_POLL_S = 0.5  # how often a waiting map checks that its workers are alive


def close_all_pools() -> None:
    """Kill every pool's workers now (on SIGTERM/SIGHUP, before the interpreter exits and
    concurrent.futures would wait for queued jobs to finish)."""
    for pool in list(_live_pools):
        pool.close()


class RenderPool:
    """A small process pool for render jobs. Thread-safe; one instance per process is
    enough (see ``shared_pool``)."""

    def __init__(self, workers: int | None = None, limits: Limits = DEFAULT_LIMITS):
        self.workers = workers or default_worker_count()
        self.limits = limits
        self._executor: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        _live_pools.add(self)

    def _get(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._executor is None:
                context = worker_context()
                self._executor = ProcessPoolExecutor(
                    max_workers=self.workers, mp_context=context, initializer=_limit_worker,
                    initargs=(self.limits.render_memory_mb, os.getpid(),
                              context.get_start_method() == "forkserver"))
            return self._executor

    def _kill(self) -> None:
        with self._lock:
            ex, self._executor = self._executor, None
        if ex is None:
            return
        results = getattr(ex, "_result_queue", None)
        for proc in list((getattr(ex, "_processes", None) or {}).values()):
            try:
                proc.kill()
            except Exception:  # already gone
                pass
        ex.shutdown(wait=False, cancel_futures=True)
        # A worker killed while sending a result (a 1536 px render is 7 MB) leaves half a
        # message in the result pipe; the executor's manager thread then waits for the rest
        # forever, and so does this interpreter at exit (it joins that thread). With the
        # workers dead, this process's copy of the pipe's write end is the last one:
        # closing it ends that wait (EOF) and the thread winds the pool up.
        writer = getattr(results, "_writer", None)
        if writer is not None:
            try:
                writer.close()
            except OSError:
                pass

    def close(self) -> None:
        self._kill()

    def _a_worker_died(self) -> bool:
        """Whether a worker of the current pool is gone (its pid no longer exists: its
        parent, the fork server, reaps it at once). Does not touch the pool's own process
        handles, which its manager thread reads."""
        with self._lock:
            ex = self._executor
        for proc in list((getattr(ex, "_processes", None) or {}).values()):
            if proc.pid is not None and not _pid_exists(proc.pid):
                return True
        return False

    def _wait(self, fut, timeout_s: float, budget, futures: list):
        """One job's result within ``timeout_s`` and the document's budget. While it
        waits, the budget's ``interrupt`` (if any) is called every ``INTERRUPT_POLL_S``:
        when it raises (the job was cancelled, or must give way to an editor's request),
        the document's queued renders are dropped, the ones under way get
        ``INTERRUPT_GRACE_S`` to finish (restarting workers costs seconds), the workers
        are killed if they do not, and the error goes up.

        A worker that died without the pool noticing (killed while sending its result:
        the pool's reader waits for the rest of the message) is found within two
        ``DEAD_WORKER_POLL_S``: the pool is killed and BrokenProcessPool raised, as when
        the pool notices, instead of waiting out the render timeout."""
        deadline = time.monotonic() + timeout_s
        interrupt = getattr(budget, "interrupt", None)
        dead_seen = False
        while True:
            step = min(deadline - time.monotonic(), DEAD_WORKER_POLL_S)
            if budget is not None:
                step = min(step, budget.remaining_s())
            if interrupt is not None:
                step = min(step, INTERRUPT_POLL_S)
            try:
                return fut.result(timeout=max(step, 0.001))
            except FutureTimeout:
                if budget is not None and budget.remaining_s() <= 0:
                    self._kill()
                    budget.check()  # raises the document budget's LimitError
                if time.monotonic() >= deadline:
                    raise
                if self._a_worker_died():
                    if dead_seen:  # and the pool has not noticed since the last look
                        self._kill()
                        raise BrokenProcessPool("a render worker died unnoticed") from None
                    dead_seen = True
            if interrupt is not None:
                try:
                    interrupt()
                except BaseException:
                    for other in futures:
                        other.cancel()
                    _, running = futures_wait(futures, timeout=INTERRUPT_GRACE_S)
                    if running:
                        self._kill()
                    raise

    def map(self, fn: Callable, jobs: Sequence[tuple], name: str,
            timeout_s: float | None = None,
            on_done: Callable[[int], None] | None = None) -> list:
        """Run ``fn(*job)`` for each job in the workers; results in job order.

        ``timeout_s`` bounds each job's wall-clock time from when the pool reaches it.
        A job over time, over memory or crashing raises LimitError/RenderError naming
        ``name``; the pool is replaced and the caller carries on."""
        timeout_s = timeout_s or self.limits.render_timeout_s
        budget = current_budget(name)  # the document's own budget, when one is set
        if budget is not None:
            budget.check()
        ex = self._get()
        try:
            futures = [ex.submit(_run_job, self.limits.render_cpu_s, fn, job) for job in jobs]
        except BrokenProcessPool:
            self._kill()
            ex = self._get()
            futures = [ex.submit(_run_job, self.limits.render_cpu_s, fn, job) for job in jobs]
        results = []
        try:
            # Waiting starts when the previous job is done, so each wait covers at most one
            # job in flight on another worker plus this one; callers size jobs well below.
            for i, fut in enumerate(futures):
                results.append(self._wait(fut, timeout_s, budget, futures))
                if budget is not None:
                    budget.charge(result_bytes(results[-1]))
                if on_done:
                    on_done(i)
        except FutureTimeout:
            self._kill()
            raise LimitError(name, f"rendering took longer than {timeout_s:g} s "
                                   f"(render timeout); the document is too expensive") from None
        except BrokenProcessPool:
            self._kill()
            if getattr(budget, "interrupt", None) is not None:
                budget.interrupt()  # another thread's interrupt killed the pool: say that
            raise LimitError(name, "the renderer was killed: it ran out of memory "
                                   f"({self.limits.render_memory_mb} MB limit) or CPU time "
                                   f"({self.limits.render_cpu_s} s limit)") from None
        except MemoryError:
            self._kill()
            raise LimitError(name, f"rendering needed more than "
                                   f"{self.limits.render_memory_mb} MB") from None
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise
        return results


def result_bytes(value) -> int:
    """Rough size of a worker's result (numpy arrays, bytes, nested tuples and lists)."""
    n = getattr(value, "nbytes", None)
    if isinstance(n, int):
        return n
    if isinstance(value, (bytes, bytearray, str)):
        return len(value)
    if isinstance(value, (tuple, list)):
        return sum(result_bytes(v) for v in value)
    if isinstance(value, dict):
        return sum(result_bytes(v) for v in value.values())
    return 0


_shared: RenderPool | None = None
_shared_lock = threading.Lock()


def shared_pool(limits: Limits = DEFAULT_LIMITS) -> RenderPool:
    global _shared
    with _shared_lock:
        if _shared is None or _shared.limits != limits:
            if _shared is not None:
                _shared.close()
            _shared = RenderPool(limits=limits)
        return _shared


def chunked(items: Iterable, size: int) -> list[list]:
    items = list(items)
    return [items[i:i + size] for i in range(0, len(items), max(1, size))]


__all__ = ["RenderPool", "shared_pool", "close_all_pools", "chunked", "RenderError",
           "start_fork_server"]
