"""Render worker processes with a memory limit, a CPU limit and a wall-clock timeout.

A hostile document can make CairoSVG run for a long time or allocate gigabytes; that must
cost one error for that file, never the calling process (the daemon, the editor's language
server). Workers are long-lived (imports are paid once); a worker that times out or dies
is killed with its pool, and a fresh pool is started on the next call. A worker that dies
is reported as what happened: a limit of ours (LimitError), or how it ended and the last
line it wrote to stderr (WorkerError), never a guess.

Workers die with the process that owns the pool, however it ends (exit, SIGTERM, kill -9):
a worker's parent is multiprocessing's fork server, or the owner's main thread where the
owner forks its workers itself (worker_start.allow_direct_fork), so on Linux each worker asks
the kernel for SIGKILL when that parent goes (the fork server itself exits when the owner's
pipe closes), and on every platform a watcher thread exits the worker once the owner's pid is
gone.
"""

from __future__ import annotations

import contextlib
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

from svgloo.engine.errors import LimitError, RenderError, SvglooError, WorkerError
from svgloo.engine.processes.fair_dispatch import FairDispatcher
from svgloo.engine.limits import DEFAULT_LIMITS, Limits, current_budget
from svgloo.engine.processes.worker_start import die_with_parent as _die_with_parent
from svgloo.engine.processes.worker_start import (discard_worker_stderr, signals_held_while_forking,
                                                  start_fork_server, stderr_is_own_file,
                                                  trim_stderr_file, worker_context, worker_stderr_tail)


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
    """Exit this worker as soon as the pool's owner or this worker's parent is gone; keep
    the worker's stderr file short meanwhile."""
    own_stderr = stderr_is_own_file()

    def watch() -> None:
        while True:
            if os.getppid() != parent_pid or not _owner_alive(owner_pid):
                os._exit(1)
            if own_stderr:
                trim_stderr_file()
            time.sleep(interval_s)

    threading.Thread(target=watch, name="svgloo-owner-watch", daemon=True).start()


def _limit_worker(memory_mb: int, owner_pid: int, die_with_parent: bool = True) -> None:
    parent_pid = os.getppid()
    if die_with_parent:
        # Asked when the parent is the fork server, or the owner's main thread (a direct
        # fork happens there only: worker_start.direct_fork_now). Not when another thread
        # of the owner started this worker (spawn): the kernel's "parent" is then that
        # thread, and a worker started from a short-lived thread would be killed when it
        # ends. The watch below holds either way.
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
    from svgloo.engine.rendering.render import warm_up

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


# What a worker's last words look like when an allocation failed under RLIMIT_AS, in
# Python (MemoryError) or in a C library that gives up instead (GLib, C++, plain perror).
_OUT_OF_MEMORY_WORDS = ("memoryerror", "out of memory", "cannot allocate memory",
                        "failed to allocate", "bad_alloc")


def worker_death_error(name: str, exitcode: int | None, last_line: str,
                       limits: Limits) -> SvglooError:
    """What to tell the user about a render worker that ended while rendering ``name``.

    A limit of ours is a LimitError naming the limit: SIGXCPU is RLIMIT_CPU's soft limit;
    an allocation refused under RLIMIT_AS shows in the worker's last stderr line. Anything
    else (killed from outside, a crash, an import error) is a WorkerError saying how it
    ended and the worker's last line: it is not the document's fault, and guessing "out of
    memory" would send the user after the wrong problem. SIGKILL is the out-of-memory
    killer's signal as well as kill -9's: both are named, neither is claimed."""
    signum = -exitcode if exitcode is not None and exitcode < 0 else None
    if signum is not None:
        try:
            how = f"killed by {signal.Signals(signum).name}"
        except ValueError:
            how = f"killed by signal {signum}"
        if signum == getattr(signal, "SIGKILL", None):
            how += ", from another process or the system's out-of-memory killer"
    elif exitcode is not None:
        how = f"exit code {exitcode}"
    else:
        how = "no exit status"
    if signum is not None and signum == getattr(signal, "SIGXCPU", None):
        return LimitError(name, f"rendering used more than {limits.render_cpu_s} s of CPU "
                                "time (render CPU limit); the document is too expensive")
    if any(word in last_line.lower() for word in _OUT_OF_MEMORY_WORDS):
        return LimitError(name, f"the renderer ran out of memory ({limits.render_memory_mb} "
                                f"MB render memory limit; the worker died: {how}: "
                                f"{last_line})")
    said = f": {last_line}" if last_line else ""
    return WorkerError(name, f"the render worker died ({how}){said}")


def _ended_workers(ex) -> list[tuple[int | None, str]]:
    """(exit code, last stderr line) of each worker of ``ex`` that has ended; the one that
    ended first comes first. The pool terminates (SIGTERM) the others once it breaks, so a
    worker that ended some other way is the one that broke it."""
    ended = []
    for proc in list((getattr(ex, "_processes", None) or {}).values()):
        try:
            code = proc.exitcode
        except Exception:  # noqa: BLE001 - a handle already closed
            continue
        if code is not None:
            ended.append((code, worker_stderr_tail(proc)))
    sigterm = -getattr(signal, "SIGTERM", 15)
    ended.sort(key=lambda e: e[0] == sigterm)
    return ended


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
BROKEN_POOL_SETTLE_S = 10.0  # a broken pool's own thread reaps its workers within this
CLOSE_GRACE_S = 5.0  # how long close() waits for a killed pool's thread to end


def _settled_ended(ex) -> list[tuple[int | None, str]]:
    """How the workers of the broken pool ``ex`` ended, read once the pool's own thread has
    reaped them (it ends then; waited for at most ``BROKEN_POOL_SETTLE_S``), so that the
    exit statuses are final and read by one thread only. On that thread itself (the
    dispatcher's callback) they are read at once: the dead worker's status is there, the
    others are still running. What another thread recorded meanwhile comes first: the pool
    may have been killed, and its handles dropped, while this one waited."""
    manager = getattr(ex, "_executor_manager_thread", None)
    if manager is not None and manager is not threading.current_thread():
        manager.join(BROKEN_POOL_SETTLE_S)
    return (getattr(ex, "_svgloo_ended", None) or _ended_workers(ex)
            or getattr(ex, "_svgloo_ended", None) or [])


def _record_ended(ex, ended: list) -> None:
    """Keep on a pool how its workers ended (see RenderPool.map), the first reading only."""
    if ended and getattr(ex, "_svgloo_ended", None) is None:
        try:
            ex._svgloo_ended = ended
        except AttributeError:  # not an executor that takes attributes
            pass


class _WorkerDied(Exception):
    """A worker of the pool died without the pool noticing; ``ended`` says how."""

    def __init__(self, ended: list):
        super().__init__("a render worker died unnoticed")
        self.ended = ended


def close_all_pools() -> None:
    """Kill every pool's workers now (on SIGTERM/SIGHUP, before the interpreter exits and
    concurrent.futures would wait for queued jobs to finish)."""
    for pool in list(_live_pools):
        pool.close()


def kill_executor_workers(ex: ProcessPoolExecutor,
                          each: Callable[[object], object] | None = None) -> list:
    """SIGKILL the worker processes of ``ex`` (``each(process)`` after each); returns them.

    The executor starts workers on demand, inside submit and under its shutdown lock.
    Marked shut down under that lock, it starts none after the list below is taken: a
    worker started by a submit racing with this kill used to escape it, left for the
    pool's own thread to stop."""
    with getattr(ex, "_shutdown_lock", None) or contextlib.nullcontext():
        ex._shutdown_thread = True
        workers = list((getattr(ex, "_processes", None) or {}).values())
    for proc in workers:
        try:
            proc.kill()
        except Exception:  # noqa: BLE001 - already gone
            pass
        if each is not None:
            each(proc)
    return workers


def shut_down_killed_executor(ex: ProcessPoolExecutor) -> None:
    """Shut down ``ex``, whose workers ``kill_executor_workers`` killed, without waiting:
    its queued jobs are cancelled and its own thread is let end."""
    results = getattr(ex, "_result_queue", None)
    # shutdown() drops the executor's reference to its thread; close() waits for it.
    ex._svgloo_manager = getattr(ex, "_executor_manager_thread", None)  # type: ignore[attr-defined]
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


class RenderPool:
    """A small process pool for render jobs. Thread-safe; one instance per process is
    enough (see ``shared_pool``)."""

    def __init__(self, workers: int | None = None, limits: Limits = DEFAULT_LIMITS):
        self.workers = workers or default_worker_count()
        self.limits = limits
        self._executor: ProcessPoolExecutor | None = None
        self.start_method: str | None = None  # of the current workers, once started
        self._lock = threading.Lock()
        # Documents rendering at once (the daemon's) take the workers in turn, not first
        # come first served: see fair_dispatch.py.
        self._dispatch = FairDispatcher(self.workers + 1, self._get, _submit_job,
                                        self._replace_broken)
        _live_pools.add(self)

    def _get(self) -> ProcessPoolExecutor:
        with signals_held_while_forking(), self._lock:
            if self._executor is None:
                context = worker_context()
                self.start_method = context.get_start_method()
                self._executor = ProcessPoolExecutor(
                    max_workers=self.workers, mp_context=context, initializer=_limit_worker,
                    initargs=(self.limits.render_memory_mb, os.getpid(),
                              self.start_method in ("forkserver", "fork")))
                if self.start_method == "fork":
                    # A direct fork (worker_start.allow_direct_fork): every worker is forked
                    # now, in this thread, before the pool starts a thread of its own.
                    self._executor.submit(os.getpid)
            return self._executor

    def start(self) -> str:
        """Start the workers now, without waiting for them; returns the start method."""
        self._get().submit(os.getpid)
        assert self.start_method is not None  # _get() started the workers
        return self.start_method

    def _kill(self, only=None, stopped: bool = True) -> ProcessPoolExecutor | None:
        """Kill the current executor's workers (``only``: that executor, if it is still the
        current one); returns the executor killed. ``stopped``: the kill is ours (a timeout,
        a cancellation, a close), which a map still waiting on it reports as such; a pool
        replaced because a worker died is not marked (``_replace_broken``)."""
        with self._lock:
            if only is not None and self._executor is not only:
                return None  # already replaced: the current pool is another one, and healthy
            ex, self._executor = self._executor, None
        if ex is None:
            return None
        if stopped:
            ex._svgloo_stopped = True  # type: ignore[attr-defined]
        kill_executor_workers(ex, each=discard_worker_stderr)
        self._dispatch.forget_executor(ex)
        shut_down_killed_executor(ex)
        return ex

    def close(self, grace_s: float = CLOSE_GRACE_S) -> None:
        """Kill the workers now and wait, at most ``grace_s``, for the pool's own thread to
        reap them and end (it is what the interpreter joins, without a limit, at exit).
        The workers get SIGKILL at once: they hold nothing to save, and how one died was
        read before any kill that reports it."""
        ex = self._kill()
        manager = getattr(ex, "_svgloo_manager", None)
        if manager is not None and manager is not threading.current_thread():
            manager.join(grace_s)

    def _replace_broken(self, executor) -> None:
        """Kill ``executor`` if it is still the current one (a broken pool refuses jobs);
        the next ``_get`` starts a fresh one.

        A pool breaks because a worker died, so this is no stop of ours: how its workers
        ended is recorded before the kill (which adds SIGKILLs of its own and drops the
        pool's process handles), and the pool is not marked stopped. The dispatcher calls
        this from the pool's own thread, while it fails the dead worker's jobs, so a map
        waiting on one of those jobs used to find the pool marked stopped and report the
        death as "the render workers were stopped"."""
        with self._lock:
            if self._executor is not executor:
                return
        _record_ended(executor, _settled_ended(executor))
        self._kill(only=executor, stopped=False)

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
        ``DEAD_WORKER_POLL_S``: ``_WorkerDied`` is raised with how it ended, instead of
        waiting out the render timeout."""
        deadline = time.monotonic() + timeout_s
        interrupt = getattr(budget, "interrupt", None)
        dead_seen = False
        while True:
            if getattr(fut, "executor", True) is None:
                # Still queued behind other documents' renders: its time starts when it
                # reaches a worker. Fill any slot a killed pool left free meanwhile (a job
                # whose document is out of time fails there instead of starting workers).
                deadline = time.monotonic() + timeout_s
                self._dispatch.pump()
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
                        # How it ended, read before the kill: the pool's thread, stuck
                        # reading the half-sent result, does not read exit statuses.
                        with self._lock:
                            ex = self._executor
                        ended = _ended_workers(ex)
                        _record_ended(ex, ended)
                        self._kill(only=ex, stopped=False)
                        raise _WorkerDied(ended) from None
                    dead_seen = True
            if interrupt is not None:
                try:
                    interrupt()
                except BaseException:
                    for other in futures:
                        other.cancel()
                    _, running = futures_wait(futures, timeout=INTERRUPT_GRACE_S)
                    # Killing the workers would break the renders of the other documents
                    # under way: leave those still running to finish (each within the
                    # render timeout); their results are dropped.
                    if running and not self._dispatch.others_active(_owner(budget, None)):
                        self._kill()
                    raise

    def map(self, fn: Callable, jobs: Sequence[tuple], name: str,
            timeout_s: float | None = None,
            on_done: Callable[[int], None] | None = None) -> list:
        """Run ``fn(*job)`` for each job in the workers; results in job order.

        ``timeout_s`` bounds each job's wall-clock time from when the pool reaches it.
        A job over time, over memory or CPU time raises LimitError naming ``name``; a
        worker that dies otherwise raises WorkerError saying how (``worker_death_error``).
        The pool is replaced and the caller carries on."""
        timeout_s = timeout_s or self.limits.render_timeout_s
        budget = current_budget(name)  # the document's own budget, when one is set
        if budget is not None:
            budget.check()
        ex = self._get()
        futures = self._dispatch.submit(
            _owner(budget, name),
            [(self.limits.render_cpu_s, fn, job) for job in jobs])
        results = []
        fut = None
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
            for other in futures:
                other.cancel()
            self._kill()
            raise LimitError(name, f"rendering took longer than {timeout_s:g} s "
                                   f"(render timeout); the document is too expensive") from None
        except (BrokenProcessPool, _WorkerDied) as exc:
            for other in futures:
                other.cancel()  # the rest of this call's queued jobs are not wanted now
            ex = getattr(fut, "executor", None) or ex  # the pool that ran the failed job
            if budget is not None and budget.remaining_s() <= 0:
                # Another of this document's renders found its time run out and stopped
                # the workers: that is what to say, not the stop.
                self._kill()
                budget.check()
            # Killed by this pool itself (another thread's timeout or cancellation), unless
            # ``_wait`` found the dead worker and killed the pool after reading how it ended.
            # Several threads may wait on one pool (a scoring renders its full pictures
            # beside its layers): the first to read how its workers ended records it on the
            # pool before killing it, and the others report the same death, not the kill.
            # The stop mark is read before the record: every kill that records how the
            # workers ended records it before it marks anything, so a pool seen stopped
            # and unrecorded here was stopped on purpose, never broken by a death.
            stopped = getattr(ex, "_svgloo_stopped", False)
            recorded = getattr(ex, "_svgloo_ended", None)
            stopped_by_us = not isinstance(exc, _WorkerDied) and not recorded and stopped
            ended: list[tuple[int | None, str]]
            if isinstance(exc, _WorkerDied):
                ended = exc.ended
            elif recorded:
                ended = recorded
            elif stopped_by_us:
                ended = []
            else:
                ended = _settled_ended(ex)
            _record_ended(ex, ended)
            # That pool only: the dispatcher may have replaced it already, and the fresh
            # one runs other documents' renders.
            self._kill(only=ex, stopped=stopped_by_us)
            interrupt = getattr(budget, "interrupt", None)
            if interrupt is not None:
                interrupt()  # another thread's interrupt killed the pool: say that
            if stopped_by_us:
                raise WorkerError(name, "the render workers were stopped while this document "
                                        "rendered (another render in this process went over a "
                                        "limit or was cancelled); try again") from None
            if not ended:
                raise WorkerError(name, "a render worker died (its exit status could not be "
                                        "read)") from None
            code, last_line = ended[0]
            raise worker_death_error(name, code, last_line, self.limits) from None
        except MemoryError:
            for other in futures:
                other.cancel()
            self._kill()
            raise LimitError(name, f"rendering needed more than "
                                   f"{self.limits.render_memory_mb} MB") from None
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise
        return results


def _submit_job(executor: ProcessPoolExecutor, call: tuple):
    """Hand one job (``(cpu_seconds, fn, args)``) to the process pool."""
    return executor.submit(_run_job, *call)


def _owner(budget, name: str | None) -> object:
    """Whose turn a job waits for: its document's budget (the daemon sets the budget's
    ``priority``), else the document's name."""
    return budget if budget is not None else name


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
           "WorkerError", "worker_death_error", "start_fork_server"]
