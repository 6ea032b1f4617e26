"""The warm scoring service behind the daemon, independent of the transport: warm backbones,
the render pool, a few analysis threads fed by a priority queue, superseding, the result
cache, watchers and event subscribers. It calls the engine; it does not score by itself.

Several documents are analysed at once (``concurrency`` threads, by default as many as the
render pool has workers, at least two), sharing one render pool whose workers the documents
take in turn (engine fair_dispatch.py): the CPU budget stays the pool's, and a big file no
longer holds up the small icon another editor sends meanwhile. An editor's request goes
ahead of background work twice over: it leaves the queue first, and its renders take the
workers first. Work nobody will read is stopped: a superseded version, a closed document
(``close_document``), a client that went away.

``server.py`` puts HTTP on top of this; ``svgloo watch`` uses it directly in-process.
"""

from __future__ import annotations

import itertools
import logging
import os
import queue
import threading
import time
import traceback
from dataclasses import asdict, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from svgloo.daemon.cache import LRUCache, ResultCache, result_key
from svgloo.engine.errors import Cancelled, ConfigError, InputError, LimitError, SvglooError
from svgloo.engine.limits import DEFAULT_LIMITS, Limits

if TYPE_CHECKING:
    from svgloo.daemon.watcher import Watcher
    from svgloo.engine.limits import DocumentBudget

log = logging.getLogger("svgloo.daemon")

PRIORITIES = {"interactive": 0, "batch": 1}
MIN_CONCURRENCY = 2  # so one document never waits for another to finish
LAYER_CACHE_BYTES = 512 * 1024 * 1024
# Documents whose last scoring is kept for an incremental re-scoring after an edit (each
# holds its full render, patches and the reference's statistics: a few MB at 384 px).
KEPT_RUNS = 8


class Preempted(Exception):
    """Raised inside a batch job when an interactive one waits: the batch job goes back
    in the queue (its rendered layers stay in the layer cache) and the editor goes first."""


class Job:
    _seq = itertools.count()

    def __init__(self, kind: str, text: str, name: str, uri: str | None, version,
                 settings, settings_key: dict, priority: str, key: str | None,
                 publish: bool = False):
        self.kind = kind
        self.text = text
        self.name = name
        self.uri = uri
        self.version = version
        self.settings = settings
        self.settings_key = settings_key
        self.priority = priority
        self.key = key
        self.publish = publish
        self.seq = next(Job._seq)
        self.submitted = time.monotonic()
        self.started: float | None = None
        self.done = threading.Event()
        self.result: dict | None = None
        self.error: dict | None = None
        self.cached = False
        self.cancel_reason: str | None = None
        self.followers: list[Job] = []  # identical requests that wait for this one
        self.preemptions = 0
        self.budget: DocumentBudget | None = None  # the running attempt's (its renders' priority)
        self._outcome_lock = threading.Lock()
        self._completed = False

    @property
    def cancelled(self) -> bool:
        return self.cancel_reason is not None

    def should_stop(self) -> bool:
        """Stop computing: this request was cancelled and nobody else waits for it."""
        return self.cancelled and all(f.done.is_set() for f in self.followers)

    def follow(self, other: "Job") -> bool:
        """Answer ``other`` (an identical request) with this job's outcome; False when
        the computation is already over (or stopping) and ``other`` must run itself."""
        with self._outcome_lock:
            if self._completed or self.should_stop():
                return False
            self.followers.append(other)
            return True

    def complete(self, result: dict | None = None, error: dict | None = None) -> None:
        """The computation's outcome, for this job (unless it already answered, e.g. its
        client left) and for every follower still waiting."""
        with self._outcome_lock:
            self._completed = True
            followers = list(self.followers)
        self._finish(result=result, error=error)
        for f in followers:
            if not f.done.is_set():
                f.started = self.started
                f._finish(result=result, error=dict(error, uri=f.uri, version=f.version)
                          if error else None)

    def cancel(self, reason: str) -> None:
        """Stop the job (if not finished): it answers with a ``reason`` error."""
        if self.done.is_set():
            return
        self.cancel_reason = reason
        self._finish(error=self._cancel_error())

    def _cancel_error(self) -> dict:
        msg = {"superseded": "a newer version of this document was submitted",
               "disconnected": "the client closed the connection",
               "closed": "the document was closed",
               "shutdown": "the daemon is shutting down"}.get(self.cancel_reason or "",
                                                             self.cancel_reason or "")
        return {"kind": self.cancel_reason, "file": self.name, "message": msg,
                "line": None, "column": None, "uri": self.uri, "version": self.version}

    def _finish(self, result: dict | None = None, error: dict | None = None) -> None:
        if self.done.is_set():
            return
        self.result, self.error = result, error
        self.done.set()

    def response(self) -> dict:
        """The result with a ``daemon`` block saying how it was served."""
        out = dict(self.result or {})
        now = time.monotonic()
        out["daemon"] = {"cached": self.cached, "uri": self.uri, "version": self.version,
                         "priority": self.priority,
                         "queue_s": round((self.started or now) - self.submitted, 4),
                         "elapsed_s": round(now - self.submitted, 4)}
        return out


def _settings_fields(cls) -> set[str]:
    return {f.name for f in fields(cls)} - {"limits"}


def check_field_types(cls, d: dict, name: str) -> None:
    """A JSON value of the wrong type for a settings field (a list as the backbone, a
    string as the size) is a ConfigError naming the field, not a crash later on. The
    field types are the dataclass's own, read by the engine's settings converter."""
    from svgloo.engine.settings import parse_field

    for f in fields(cls):
        # limits are the daemon's own; concepts (a list of strings) are checked by the caller
        if f.name not in d or f.name in ("limits", "concepts"):
            continue
        value = d[f.name]
        try:
            parse_field(cls, f.name, value)
        except ValueError as exc:
            raise ConfigError(name, f"bad score settings: {exc}") from None
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ConfigError(name, f"bad settings: {f.name} is not valid "
                                        "Unicode") from None


def _optional_float(value):
    return None if value is None else float(value)


def _known_fields(cls, d: dict | None, name: str, what: str) -> dict:
    """A copy of ``d`` whose keys are all fields of the settings class ``cls``, each of its
    declared type (``limits`` dropped: they stay the daemon's); ConfigError otherwise."""
    d = dict(d or {})
    d.pop("limits", None)
    unknown = set(d) - _settings_fields(cls)
    if unknown:
        raise ConfigError(name, f"unknown {what} settings: {', '.join(sorted(unknown))}")
    check_field_types(cls, d, name)
    return d


def score_settings_from_dict(d: dict | None, limits: Limits, name: str):
    """ScoreSettings from a JSON dict of its field names; limits stay the daemon's."""
    from svgloo.engine.scoring.score import ScoreSettings

    d = _known_fields(ScoreSettings, d, name, "score")
    try:
        s = ScoreSettings(**d, limits=limits)
        size = int(s.size)
        if not 8 <= size <= limits.max_render_size:
            raise ValueError(f"size must be between 8 and {limits.max_render_size}")
        s = s.with_(size=size, subpaths=bool(s.subpaths),
                    helpful_threshold=_optional_float(s.helpful_threshold),
                    harmful_threshold=_optional_float(s.harmful_threshold))
    except (TypeError, ValueError) as exc:
        raise ConfigError(name, f"bad score settings: {exc}") from None
    return s


def structure_settings_from_dict(d: dict | None, limits: Limits, name: str):
    from svgloo.structure.analysis import StructureSettings  # the structure module may be missing

    d = _known_fields(StructureSettings, d, name, "structure")
    if "concepts" in d and d["concepts"] is not None:
        if not isinstance(d["concepts"], list) or not all(isinstance(c, str)
                                                         for c in d["concepts"]):
            raise ConfigError(name, "bad structure settings: concepts must be a list of "
                                    "strings")
        d["concepts"] = tuple(d["concepts"])
    try:
        return StructureSettings(**d, limits=limits)
    except (TypeError, ValueError) as exc:
        raise ConfigError(name, f"bad structure settings: {exc}") from None


def uri_to_name(uri: str | None, path: str | None) -> str:
    if path:
        return str(path)
    if uri and uri.startswith("file://"):
        from urllib.parse import unquote, urlparse

        return unquote(urlparse(uri).path)
    return uri or "<input>"


class ScoringService:
    """Warm models + queue + cache. Thread-safe; ``submit`` returns a Job to wait on."""

    def __init__(self, cache: ResultCache | None = None, limits: Limits = DEFAULT_LIMITS,
                 layer_cache_bytes: int = LAYER_CACHE_BYTES, pool=None,
                 concurrency: int | None = None):
        from svgloo.engine.processes.workers import shared_pool

        self.limits = limits
        self.cache = cache if cache is not None else ResultCache()
        self.layer_cache = LRUCache(max_bytes=layer_cache_bytes)
        # (document, settings, backbone) -> its last ScoreRun: an edit re-scores only
        # what it can have changed (score_document's ``previous``).
        self.runs = LRUCache(max_items=KEPT_RUNS)
        self.incremental = 0  # scorings that started from a kept run
        self.proven_later = 0  # removal proofs added to a kept run scored without one
        self.pool = pool or shared_pool(limits)
        self.started = time.time()
        self._queue: queue.PriorityQueue = queue.PriorityQueue()
        self._latest: dict[str, Job] = {}
        # reentrant: submit supersedes (cancels) a job while holding it, and cancelling a
        # running job takes it again to replace its thread
        self._lock = threading.RLock()
        self._auto: dict[tuple, object] = {}
        self._running: dict[int, Job] = {}  # analysis thread id -> its job
        self.completed = 0
        self.failed = 0
        self.cancelled = 0
        self.interrupted = 0
        self.preempted = 0
        self.merged = 0
        self._subscribers: list[queue.Queue] = []
        self._watchers: dict[str, Watcher] = {}
        self._path_keys: dict[str, str | None] = {}
        self._inflight: dict[str, Job] = {}  # result key -> the job computing it
        self._closed = False
        self.concurrency = max(1, concurrency or default_concurrency(self.pool))
        # Threads whose job was cancelled while it ran: each leaves once its job has
        # stopped, and a fresh thread took its place at once (see _replace).
        self._retiring: set[int] = set()
        self._workers: list[threading.Thread] = []
        for _ in range(self.concurrency):
            self._start_worker()

    def _start_worker(self) -> None:
        self._workers = [w for w in self._workers if w.is_alive()]
        worker = threading.Thread(target=self._work, daemon=True,
                                  name=f"svgloo-analysis-{len(self._workers)}")
        self._workers.append(worker)
        worker.start()

    def _replace(self, job: Job) -> None:
        """``job`` was cancelled while it ran: a stage that does not look at the
        cancellation (compositing a 1,000-rect stack, tens of seconds) may keep its thread
        a while, so another thread takes its place in the pool of analysis threads now,
        and the stopping one leaves when its job ends. Nobody waits for a job that will
        be thrown away."""
        with self._lock:
            holders = [t for t, j in self._running.items()
                       if j is job and t not in self._retiring]
            if not holders or self._closed:
                return
            self._retiring.update(holders)
        for _ in holders:
            self._start_worker()

    # -- submitting ---------------------------------------------------------------------
    def _choose(self, settings):
        """Backbone choice, memoised per (name, weights): ``auto`` is resolved once."""
        from svgloo.engine.scoring.backbones import GROUP, choose_backbone
        from svgloo.engine.protocols import load_plugin

        k = (settings.backbone, settings.weights)
        if k not in self._auto:
            choice = choose_backbone(settings.backbone, settings.weights)
            try:
                takes_text = bool(getattr(load_plugin(GROUP, choice.name), "takes_text", False))
            except (KeyError, ImportError) as exc:
                raise ConfigError(None, str(exc)) from None
            self._auto[k] = (choice, takes_text)
        return self._auto[k]

    def _reference_fingerprint(self, text: str, name: str, settings, takes_text: bool):
        from svgloo.engine.reading.document import parse_document
        from svgloo.engine.scoring.reference import resolve_reference

        doc = parse_document(text, name, self.limits) if takes_text and not \
            (settings.reference or settings.prompt) else None
        spec = resolve_reference(name, doc, takes_text=takes_text,
                                 reference=settings.reference, prompt=settings.prompt)
        fp: dict[str, object] = dict(spec.to_json())
        if spec.path:
            try:
                st = os.stat(spec.path)
                fp["stat"] = [st.st_size, st.st_mtime_ns]
            except OSError:
                fp["stat"] = None
        if spec.text:
            fp["text"] = spec.text
        return fp

    def submit(self, kind: str = "score", text: str | bytes | None = None,
               path: str | None = None, uri: str | None = None, version=None,
               settings: dict | None = None, priority: str = "interactive",
               publish: bool = False) -> Job:
        """Queue an analysis, or answer it from the cache. Raises SvglooError for bad
        requests (unreadable path, bad settings); analysis errors land in ``job.error``."""
        name = uri_to_name(uri, path)
        if priority not in PRIORITIES:
            raise ConfigError(name, f"priority must be one of {', '.join(PRIORITIES)}")
        if text is None:
            if not path:
                raise InputError(name, "give the document text or a path")
            text = self._read(path)
        if isinstance(text, bytes):
            if len(text) > self.limits.max_file_bytes:
                raise LimitError(name, f"document is {len(text)} bytes; the limit is "
                                       f"{self.limits.max_file_bytes}")
            from svgloo.engine.reading.document import parse_document  # decodes like the engine does

            text = parse_document(text, name, self.limits).text
        if len(text) > self.limits.max_file_bytes:
            raise LimitError(name, f"document is {len(text)} characters; the limit is "
                                   f"{self.limits.max_file_bytes}")
        if kind == "score":
            s = score_settings_from_dict(settings, self.limits, name)
            key = None
            try:
                choice, takes_text = self._choose(s)
                ref = self._reference_fingerprint(text, name, s, takes_text)
                key = result_key("score", text, name, s.key(), choice.name, ref)
            except SvglooError:
                key = None  # let the engine report it, with the file named
            skey = s.key()
        elif kind == "structure":
            s = structure_settings_from_dict(settings, self.limits, name)
            skey = {k: v for k, v in asdict(s).items() if k != "limits"}
            key = result_key("structure", text, name, skey, "",
                             _structure_fingerprint(name, s))
        else:
            raise ConfigError(name, f"unknown analysis {kind!r}")

        job = Job(kind, text, name, uri, version, s, skey, priority, key, publish)
        with self._lock:
            if uri is not None:
                old = self._latest.get(uri)
                same = old is not None and key is not None and old.key == key
                if old is not None and not old.done.is_set() and not same:
                    # (the same content again is merged with it below, not superseded)
                    if _older(version, old.version):
                        self.cancel(job, "superseded")  # a newer one is already in flight
                        return job
                    self.cancel(old, "superseded")
                self._latest[uri] = job
        t0 = time.perf_counter()
        cached = self.cache.get(key) if key else None
        if cached is not None:
            job.cached = True
            job.started = time.monotonic()
            job._finish(result=_as_cache_hit(cached, time.perf_counter() - t0))
            if path:
                self._path_keys[str(path)] = key
            if publish:
                self._publish_result(job)
            return job
        if path:
            self._path_keys[str(path)] = key
        with self._lock:
            leader = self._inflight.get(key) if key else None
            if leader is not None and leader.follow(job):
                self.merged += 1
                if job.priority == "interactive":
                    leader.priority = "interactive"  # an editor waits on it: no preempting
                    if leader.budget is not None:
                        leader.budget.priority = PRIORITIES["interactive"]
                return job  # the same analysis is already queued or running
            if key:
                self._inflight[key] = job
        self._queue.put((PRIORITIES[priority], job.seq, job))
        return job

    @property
    def current(self) -> Job | None:
        """The job running longest (None when none runs)."""
        running = self.running_jobs()
        return running[0] if running else None

    def running_jobs(self) -> list[Job]:
        """The jobs being analysed now, the longest-running first."""
        with self._lock:
            jobs = list(self._running.values())
        return sorted(jobs, key=lambda j: j.started or 0.0)

    def busy(self) -> bool:
        return bool(self._running) or not self._queue.empty()

    def watching(self) -> bool:
        return bool(self._watchers)

    def _interactive_waiting(self) -> bool:
        """An editor's request waits in the queue while every analysis thread is busy."""
        if len(self._running) < self.concurrency:
            return False  # a free thread takes it at once
        with self._queue.mutex:
            return any(p == PRIORITIES["interactive"] and not j.done.is_set()
                       for p, _, j in self._queue.queue if j is not None)

    def cancel(self, job: Job, reason: str) -> None:
        """Cancel a job that has not finished (superseded, client gone, shutdown)."""
        if not job.done.is_set():
            job.cancel(reason)
            self.cancelled += 1
            if job.should_stop():  # no identical request still waits for it
                self._replace(job)

    def close_document(self, uri: str) -> dict:
        """The editor closed ``uri``: stop its analysis, queued or running (nobody will
        read it), and drop what was kept for re-scoring it after an edit."""
        with self._lock:
            job = self._latest.pop(uri, None)
            kept = [k for k in self.runs if k[0] == uri]
        stopped = job is not None and not job.done.is_set()
        if job is not None:
            self.cancel(job, "closed")
        for k in kept:
            try:
                del self.runs[k]
            except KeyError:
                pass
        return {"uri": uri, "stopped": stopped, "forgotten_runs": len(kept)}

    def _read(self, path: str) -> bytes:
        from svgloo.engine.reading.files import read_regular_file

        return read_regular_file(path, self.limits.max_file_bytes)

    def run(self, **kw) -> Job:
        """Submit and wait (in-process callers such as ``svgloo watch``)."""
        job = self.submit(**kw)
        job.done.wait()
        return job

    # -- the model worker ---------------------------------------------------------------
    def _work(self) -> None:
        me = threading.get_ident()
        while True:
            with self._lock:
                if me in self._retiring:  # replaced while its job stopped
                    self._retiring.discard(me)
                    return
            _, _, job = self._queue.get()
            if job is None:
                return
            if job.done.is_set() and job.should_stop():
                self._forget(job)
                continue  # superseded or disconnected while queued
            with self._lock:
                self._running[me] = job
            job.started = time.monotonic()
            try:
                result = self._compute(job)
                if job.key:
                    self.cache.put(job.key, result)
                job.complete(result=result)
                self.completed += 1
                if job.publish and not job.cancelled:
                    self._publish_result(job)
            except Preempted:
                job.preemptions += 1
                self.preempted += 1
                self._queue.put((PRIORITIES[job.priority], job.seq, job))
                continue  # still in flight: not forgotten
            except Cancelled:
                self.interrupted += 1  # stopped mid-way; the job already answered
                job.complete(error=job._cancel_error())
            except SvglooError as exc:
                self.failed += 1
                job.complete(error=exc.to_json())
                if job.publish:
                    self.publish({"event": "error", "path": job.name, "error": exc.to_json()})
            except Exception as exc:  # noqa: BLE001 - a bug must not take the daemon down
                self.failed += 1
                log.error("internal error on %s:\n%s", job.name, traceback.format_exc())
                err = {"kind": "internal", "file": job.name,
                       "message": f"internal error: {type(exc).__name__}: {exc}",
                       "line": None, "column": None}
                job.complete(error=err)
            finally:
                with self._lock:
                    self._running.pop(me, None)
            self._forget(job)

    def _forget(self, job: Job) -> None:
        with self._lock:
            if job.uri is not None and self._latest.get(job.uri) is job:
                del self._latest[job.uri]
            if job.key and self._inflight.get(job.key) is job:
                del self._inflight[job.key]

    def _compute(self, job: Job) -> dict:
        from svgloo.engine.limits import DocumentBudget, document_budget

        def check(done=None, total=None):
            if self._closed or job.should_stop():
                raise Cancelled(job.cancel_reason)
            if job.priority != "interactive" and self._interactive_waiting():
                raise Preempted()

        check()
        # One budget per attempt: time a preempted job spent waiting is not charged.
        budget = DocumentBudget.from_limits(job.name, self.limits, interrupt=check)
        budget.priority = PRIORITIES[job.priority]  # its renders' turn in the pool
        job.budget = budget
        try:
            with document_budget(budget):
                return self._analyse(job, check)
        finally:
            job.budget = None

    def _analyse(self, job: Job, check) -> dict:
        if job.kind == "score":
            from svgloo.engine.scoring.backbones import get_backbone
            from svgloo.engine.scoring.score import score_text

            s = job.settings
            choice, _ = self._choose(s)
            backbone = get_backbone(choice.name, s.weights, s.device, s.precision,
                                    s.preprocess)
            check()
            # One kept run per document whether it was proven or not: the removal proof
            # asked for after a scoring without it (the editor's two steps) proves that
            # run, and an edit re-scores from it either way.
            same_scoring = {k: v for k, v in s.key().items() if k != "prove"}
            doc_key = (job.uri or job.name, repr(sorted(same_scoring.items())), choice.name)
            previous = self.runs.get(doc_key)
            if s.prove and _unproven_run_of(previous, job.text, s):
                from svgloo.engine.scoring.deferred_proof import prove_run

                run = prove_run(previous, pool=self.pool, should_stop=check)
                self.proven_later += 1
            else:
                run = score_text(job.text, job.name, s, pool=self.pool, progress=check,
                                 backbone=backbone, layer_cache=self.layer_cache,
                                 previous=previous)
                self.incremental += previous is not None
            self.runs[doc_key] = run
            result = run.result
            result["backbone_detail"]["reason"] = choice.reason
            return cast(dict, result)
        from svgloo.structure.analysis import structure_text

        srun = structure_text(job.text, job.name, job.settings, pool=self.pool, progress=check)
        return srun.result

    # -- events and watchers ------------------------------------------------------------
    def subscribe(self) -> queue.Queue:
        q: queue.Queue = queue.Queue(maxsize=1000)
        with self._lock:
            self._subscribers.append(q)
        return q

    def unsubscribe(self, q: queue.Queue) -> None:
        with self._lock:
            if q in self._subscribers:
                self._subscribers.remove(q)

    def publish(self, event: dict) -> None:
        with self._lock:
            subs = list(self._subscribers)
        for q in subs:
            try:
                q.put_nowait(event)
            except queue.Full:  # a stalled subscriber loses events, not the daemon
                pass

    def _publish_result(self, job: Job) -> None:
        self.publish({"event": "result", "path": job.name, "result": job.response()})

    def watch(self, folder: str, settings: dict | None = None, on_event=None,
              debounce_s: float | None = None) -> dict:
        from svgloo.daemon.watcher import Watcher, read_watched

        folder = os.path.abspath(folder)
        if not os.path.isdir(folder):
            raise InputError(folder, "not a folder")
        score_settings_from_dict(settings, self.limits, folder)  # validate now
        with self._lock:
            if folder in self._watchers:
                return {"folder": folder, "watching": True, "new": False}

        def rejected(path: str, exc: SvglooError) -> None:
            self.publish({"event": "error", "path": path, "error": exc.to_json()})
            if on_event:
                on_event({"event": "error", "path": path, "error": exc.to_json()})

        def rescore(path: str) -> Job | None:
            try:  # read with the watcher's checks (type, size, symlinks) again
                data = read_watched(folder, path, self.limits.max_file_bytes)
                job = self.submit("score", text=data, path=path, settings=settings,
                                  priority="batch", publish=True,
                                  uri=Path(path).absolute().as_uri())
            except FileNotFoundError:
                return None  # deleted meanwhile: the watcher reports it
            except SvglooError as exc:
                rejected(path, exc)
                return None
            if on_event:
                job.done.wait()
                if job.error and job.error.get("kind") == "superseded":
                    return job
                on_event({"event": "error", "path": path, "error": job.error}
                         if job.error else
                         {"event": "result", "path": path, "result": job.response()})
            return job

        def deleted(path: str) -> None:
            key = self._path_keys.pop(path, None)
            if key:
                self.cache.memory.pop(key, None)
            ev = {"event": "deleted", "path": path}
            self.publish(ev)
            if on_event:
                on_event(ev)

        optional: dict[str, Any] = {} if debounce_s is None else {"debounce_s": debounce_s}
        w = Watcher(folder, rescore, deleted, rejected=rejected,
                    max_bytes=self.limits.max_file_bytes, **optional)
        w.start()
        with self._lock:
            self._watchers[folder] = w
        return {"folder": folder, "watching": True, "new": True}

    def score_existing(self, folder: str) -> None:
        """Score the drawings already in a watched folder, through the watcher's own
        checks and callbacks (so the first pass refuses exactly what a save would)."""
        with self._lock:
            w = self._watchers.get(os.path.abspath(folder))
        if w is None:
            raise InputError(folder, "not watched")
        w.settle_existing()

    def unwatch(self, folder: str) -> dict:
        folder = os.path.abspath(folder)
        with self._lock:
            w = self._watchers.pop(folder, None)
        if w is not None:
            w.stop()
        return {"folder": folder, "watching": False, "was_watching": w is not None}

    # -- status and shutdown ------------------------------------------------------------
    def status(self) -> dict:
        from svgloo.engine.scoring.backbones import loaded_backbones

        loaded = loaded_backbones()
        running = [{"file": j.name, "uri": j.uri, "version": j.version,
                    "priority": j.priority} for j in self.running_jobs()]
        return {
            "pid": os.getpid(),
            "uptime_s": round(time.time() - self.started, 3),
            "models_loaded": loaded,
            "backbone": loaded[0]["name"] if loaded else None,
            "device": loaded[0]["device"] if loaded else None,
            "queue_length": self._queue.qsize(),
            "running": running[0] if running else None,  # the longest-running one
            "running_jobs": running,
            "concurrency": self.concurrency,
            "jobs": {"completed": self.completed, "failed": self.failed,
                     "cancelled": self.cancelled, "interrupted": self.interrupted,
                     "preempted": self.preempted, "merged": self.merged},
            "cache": {**self.cache.stats(), "layer_entries": len(self.layer_cache),
                      "layer_bytes": self.layer_cache.bytes,
                      "documents_kept": len(self.runs),
                      "incremental_scorings": self.incremental,
                      "proofs_after_scoring": self.proven_later},
            "watching": sorted(self._watchers),
            "subscribers": len(self._subscribers),
            "render_workers": self.pool.workers,
            "limits": asdict(self.limits),
        }

    def close(self) -> None:
        self._closed = True
        for folder in list(self._watchers):
            self.unwatch(folder)
        while True:
            try:
                _, _, job = self._queue.get_nowait()
            except queue.Empty:
                break
            if job is not None:
                self.cancel(job, "shutdown")
        for job in self.running_jobs():
            self.cancel(job, "shutdown")
        workers = list(self._workers)
        for _ in workers:
            self._queue.put((-1, -1, None))
        deadline = time.monotonic() + 10
        for worker in workers:
            worker.join(timeout=max(0.0, deadline - time.monotonic()))
        self.publish({"event": "shutdown"})


def _unproven_run_of(run, text: str, settings) -> bool:
    """Whether ``run`` (a kept ScoreRun, or None) is ``text`` scored with ``settings`` but
    without the removal proof: the proof alone is then what a request with it asks."""
    return (run is not None and run.proof is None and run.doc.text == text
            and run.settings == settings.with_(prove=False))


def default_concurrency(pool) -> int:
    """Documents analysed at once: one per render worker (more would only queue renders),
    at least MIN_CONCURRENCY. ``$SVGLOO_DAEMON_CONCURRENCY`` overrides it."""
    configured = os.environ.get("SVGLOO_DAEMON_CONCURRENCY", "").strip()
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    return max(MIN_CONCURRENCY, int(getattr(pool, "workers", 1) or 1))


def _as_cache_hit(result: dict, seconds: float) -> dict:
    """A cached result with this call's timing: nothing was parsed or rendered now (the
    cold run's total stays as ``cold_total_s``)."""
    timings = result.get("timings")
    if isinstance(timings, dict):
        result["timings"] = {**{k: 0.0 for k in timings if k.endswith("_s")},
                             "renders": 0, "total_s": round(seconds, 4), "cached": True,
                             "cold_total_s": timings.get("total_s")}
    return result


def _stat(path) -> list | None:
    try:
        st = os.stat(path)
        return [str(path), st.st_size, st.st_mtime_ns]
    except OSError:
        return None


def _structure_fingerprint(name: str, settings) -> dict:
    """What besides the text decides a structure result: the project config (concepts)
    and the mask files."""
    from svgloo.engine.scoring.reference import find_config

    fp: dict = {"config": None, "masks": None}
    if name and not name.startswith("<") and "://" not in name:
        try:
            cfg = find_config(Path(name).parent)
        except OSError:
            cfg = None
        fp["config"] = _stat(cfg) if cfg else None
    masks = getattr(settings, "masks_dir", None)
    if masks:
        try:
            fp["masks"] = sorted(filter(None, (_stat(p) for p in Path(masks).iterdir())))
        except OSError:
            fp["masks"] = None
    return fp


def _older(version, than) -> bool:
    """True when ``version`` is strictly older than ``than`` (None is never older)."""
    if version is None or than is None:
        return False
    try:
        return version < than
    except TypeError:
        return False


__all__ = ["ScoringService", "Job", "score_settings_from_dict", "PRIORITIES"]
