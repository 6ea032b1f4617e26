"""Fair sharing of one render pool between documents analysed at the same time.

``RenderPool.map`` used to hand every job of a call to the process pool at once, and the
pool runs jobs first come, first served: a 1,000-rect document queued a thousand layer
renders, and a small icon analysed beside it (another editor, in the same daemon) waited
behind all of them. Here each call's jobs wait in a queue of their *owner* (the document:
its ``DocumentBudget`` when one is set, else the document's name) and only
``slots`` jobs (the pool's workers plus one, so a worker never idles between two jobs) are
in the process pool at a time. Whenever a job ends, the next one is taken from the owner
with the most urgent priority (``owner.priority``: 0 for an editor's request, 1 for
background work; 0 when unset), and among those from the owner served longest ago: two
documents get a worker in turn, whatever their sizes, and a document that arrives while
another renders gets the very next worker.

The dispatcher hands out ``concurrent.futures.Future`` stand-ins: cancelling one before it
was dispatched drops the job, ``dispatched_at`` says when it reached the pool (a render
timeout runs from there, not from the call), ``executor`` which process pool ran it.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from typing import Any

REMEMBERED_OWNERS = 64


class DispatchedFuture(Future):
    """A job's result as the caller sees it, dispatched to the process pool in its turn."""

    def __init__(self) -> None:
        super().__init__()
        self.dispatched_at: float | None = None
        self.executor: object | None = None


class _Owner:
    """The queued jobs of one document and when it was last given a worker."""

    __slots__ = ("key", "pending", "last_served", "in_flight")

    def __init__(self, key: object) -> None:
        self.key = key
        self.pending: deque[tuple[DispatchedFuture, tuple]] = deque()
        self.last_served = 0  # 0: never served, so a newcomer goes first among its peers
        self.in_flight = 0


class FairDispatcher:
    """Feeds one pool's executor from per-document queues (see the module's doc).

    ``get_executor`` returns the pool's current executor (starting one when needed);
    ``submit_to(executor, call)`` submits ``call`` (a tuple of the function and its
    arguments) and returns the executor's future; ``replace_broken(executor)`` replaces an
    executor that refused a job as broken (a worker died after its last job), so the job
    goes to a fresh one, as a new call to the pool would."""

    def __init__(self, slots: int, get_executor: Callable[[], object],
                 submit_to: Callable[[Any, tuple], Future],
                 replace_broken: Callable[[object], None]) -> None:
        self.slots = max(1, slots)
        self._get_executor = get_executor
        self._submit_to = submit_to
        self._replace_broken = replace_broken
        self._lock = threading.Lock()
        self._owners: dict[object, _Owner] = {}
        self._in_flight: dict[Future, tuple[DispatchedFuture, _Owner, object]] = {}
        self._turn = itertools.count(1)
        # When each recent owner was last served, kept after its queue empties: a document
        # that renders in several calls in a row does not count as a newcomer each time.
        self._served: OrderedDict[object, int] = OrderedDict()

    # -- what callers use ---------------------------------------------------------------
    def submit(self, owner: object, calls: list[tuple]) -> list[DispatchedFuture]:
        """Queue ``calls`` for ``owner``; returns one future per call, in order."""
        futures = [DispatchedFuture() for _ in calls]
        with self._lock:
            entry = self._owners.get(owner)
            if entry is None:
                entry = self._owners[owner] = _Owner(owner)
                entry.last_served = self._served.get(owner, 0)
            entry.pending.extend(zip(futures, calls))
        self.pump()
        return futures

    def others_active(self, owner: object) -> bool:
        """Whether a document other than ``owner`` has jobs queued or running: killing the
        workers now would break its renders."""
        with self._lock:
            return any(o.key is not owner and (o.pending or o.in_flight)
                       for o in self._owners.values())

    def pump(self) -> None:
        """Fill the free slots, each with the next job in turn. Safe from any thread."""
        while True:
            with self._lock:
                if len(self._in_flight) >= self.slots:
                    return
                picked = self._next()
                if picked is None:
                    return
                entry, future, call = picked
            if not future.set_running_or_notify_cancel():
                self._release_owner(entry)
                continue  # cancelled while it waited: dropped
            spent = _out_of_time(entry.key)
            if spent is not None:
                # Its document's time ran out while it waited (and the pool may have just
                # been killed for it): no fresh workers for it, the error is its own.
                self._release_owner(entry)
                future.set_exception(spent)
                continue
            try:
                executor = self._get_executor()
                try:
                    real = self._submit_to(executor, call)
                except BrokenProcessPool:
                    self._replace_broken(executor)
                    executor = self._get_executor()
                    real = self._submit_to(executor, call)
            except (BrokenProcessPool, RuntimeError) as exc:
                self._release_owner(entry)
                future.set_exception(exc if isinstance(exc, BrokenProcessPool)
                                     else BrokenProcessPool(str(exc)))
                continue
            future.dispatched_at = time.monotonic()
            future.executor = executor
            with self._lock:
                self._in_flight[real] = (future, entry, executor)
            real.add_done_callback(self._finished)

    def forget_executor(self, executor: object) -> None:
        """The pool killed ``executor``: its jobs no longer hold slots (their futures fail
        with BrokenProcessPool, as the executor's own would), so queued jobs go to the next
        executor instead of waiting for callbacks a killed pool may never make."""
        with self._lock:
            gone = [(real, held) for real, held in self._in_flight.items()
                    if held[2] is executor]
            for real, _ in gone:
                del self._in_flight[real]
        for _, (future, entry, _) in gone:
            self._release_owner(entry)
            if not future.done():
                future.set_exception(BrokenProcessPool("the render workers were stopped"))

    # -- inside -------------------------------------------------------------------------
    def _next(self) -> tuple[_Owner, DispatchedFuture, tuple] | None:
        """The most urgent owner's next job; among equals, the owner served longest ago.
        Called with the lock held."""
        best: _Owner | None = None
        for entry in self._owners.values():
            if not entry.pending:
                continue
            if best is None or (_priority(entry.key), entry.last_served) < \
                    (_priority(best.key), best.last_served):
                best = entry
        if best is None:
            return None
        future, call = best.pending.popleft()
        best.last_served = next(self._turn)
        self._served[best.key] = best.last_served
        self._served.move_to_end(best.key)
        while len(self._served) > REMEMBERED_OWNERS:
            self._served.popitem(last=False)
        best.in_flight += 1
        return best, future, call

    def _release_owner(self, entry: _Owner) -> None:
        with self._lock:
            entry.in_flight -= 1
            if not entry.pending and entry.in_flight <= 0 and \
                    self._owners.get(entry.key) is entry:
                del self._owners[entry.key]

    def _finished(self, real: Future) -> None:
        """A job left the process pool: hand its outcome over and fill the slot. Runs on
        the executor's own thread, so it must never raise."""
        with self._lock:
            held = self._in_flight.pop(real, None)
        if held is None:
            return  # its executor was forgotten: the future already failed
        future, entry, _ = held
        self._release_owner(entry)
        if not future.done():
            if real.cancelled():
                future.set_exception(BrokenProcessPool("the render workers were stopped"))
            elif real.exception() is not None:
                future.set_exception(real.exception())
            else:
                future.set_result(real.result())
        try:
            self.pump()
        except Exception:  # noqa: BLE001 - the next caller's pump, or its wait, tries again
            pass


def _out_of_time(owner: object) -> BaseException | None:
    """The error of an owner whose budget (``remaining_s``/``check``) has run out."""
    remaining = getattr(owner, "remaining_s", None)
    if remaining is None or remaining() > 0:
        return None
    try:
        owner.check()  # type: ignore[attr-defined]  # an owner with remaining_s is a budget
    except BaseException as exc:  # noqa: BLE001 - the budget's own error fails the jobs
        return exc
    return TimeoutError("the document's time budget ran out")


def _priority(owner: object) -> int:
    try:
        return int(getattr(owner, "priority", 0) or 0)
    except (TypeError, ValueError):
        return 0


__all__ = ["FairDispatcher", "DispatchedFuture"]
