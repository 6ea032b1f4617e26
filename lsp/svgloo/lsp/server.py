"""The svgloo language server (pygls 2.x): registers features and translates.

The handlers (end of this module) are module-level functions that pygls calls with the
server; they only translate between LSP and the server's per-document state
(``SvglooServer``, ``DocState``), ``actions`` (which code actions) and ``convert`` (LSP
objects). ``create_server`` registers them.

Scoring is the engine's (``svgloo.engine.scoring.score.score_text``, in a thread so the event
loop never blocks) or the daemon's (``svgloo.daemon.client.DaemonClient``, when
``useDaemon`` is on and one can be reached); ``convert`` turns results into LSP objects
and ``actions`` builds the quick fixes.

Per document: a change that comes alone is scored at once, one that comes as typing is
debounced (``change_delay``, ``DEBOUNCE_S``); a newer change cancels the work for
the older version (the asyncio task, and the engine run - scoring, the removal proof and
the structure analysis after it - through its progress callback), and results are
published only for the version they were computed on.

Two speeds (docs/two-speeds.md): the first diagnostics come from a scoring without the
removal proof (``ScoreSettings.prove`` off: verdicts, findings, footprints), published at
once; the proof follows in the background (``_prove``: the engine's
``deferred_proof.prove_run``, or the daemon's score with ``prove`` on, which proves the run
it kept) and the diagnostics are published again with it. Until then no unit is offered
for deletion ("no visible effect" needs a proven removal) and one hint says the check is
running; a proof is applied only to the very text it was computed on.

Diagnostics are pushed (``textDocument/publishDiagnostics``, which every client shows):
each publication is the complete set for its version, and an identical set is never
published twice for the same version. ``shutdown`` cancels all work; ``exit``, the end of
stdin or the death of the client process (``processId``) ends the process at once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import Any, cast

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from svgloo.engine.errors import Cancelled
from svgloo.engine.result_types import ScoreResult, is_proven
from svgloo.engine.settings import DEFAULT_RENDER_SIZE, parse_fields
from svgloo.engine.version import __version__

from . import actions
from .convert import (DiagnosticOptions, LineIndex, document_diagnostics, encoding_name,
                      hover_markdown, metrics_title, refusal_diagnostic, structure_rows,
                      summary_title)

log = logging.getLogger("svgloo.lsp")

DEBOUNCE_S = 0.1
# An edit after this long without one is taken at once (a pasted colour, an undo, a quick
# fix); one sooner is typing, and waits DEBOUNCE_S for the next keystroke.
TYPING_GAP_S = 0.5
CONFIG_WAIT_S = 3.0
SECTION = "svgloo"
SUMMARY_COMMAND = "svgloo.showSummary"


# The keys editors send (camelCase) -> the fields of Settings below / DiagnosticOptions.
CLIENT_NAMES = {"backbone": "backbone", "reference": "reference", "prompt": "prompt",
                "helpfulThreshold": "helpful_threshold",
                "harmfulThreshold": "harmful_threshold", "useDaemon": "use_daemon",
                "renderSize": "render_size"}
DIAGNOSTIC_NAMES = {"harmful": "harmful", "invisible": "invisible", "purity": "purity",
                    "maxPerDocument": "max_per_document"}


@dataclass(frozen=True)
class Settings:
    backbone: str = "auto"
    reference: str = ""
    prompt: str = ""
    helpful_threshold: float | None = None  # None: the backbone's own (engine/score.py)
    harmful_threshold: float | None = None
    diagnostics: DiagnosticOptions = field(default_factory=DiagnosticOptions)
    use_daemon: bool = True
    render_size: int = DEFAULT_RENDER_SIZE

    def updated(self, raw: Any) -> "Settings":
        """These settings overridden by a client's dict; see ``parsed``."""
        return self.parsed(raw)[0]

    def parsed(self, raw: Any) -> tuple["Settings", list[str]]:
        """(settings, problems): these settings overridden by a client's dict (camelCase
        keys as the editors send them), through the engine's settings converter. A value
        of the wrong type is left out (the key keeps its value here) and named in
        ``problems``, which the server shows to the user: never fatal."""
        if not isinstance(raw, dict):
            return self, []
        known = {k: v for k, v in raw.items() if k in CLIENT_NAMES}
        changes, problems = parse_fields(Settings, known, CLIENT_NAMES)
        diag = raw.get("diagnostics")
        if isinstance(diag, dict):
            known = {k: v for k, v in diag.items() if k in DIAGNOSTIC_NAMES}
            found, bad = parse_fields(DiagnosticOptions, known, DIAGNOSTIC_NAMES)
            if found.get("max_per_document", 0) < 0:
                found.pop("max_per_document")
                bad.append("maxPerDocument must be an integer >= 0 (0 means no cap)")
            problems += [f"diagnostics.{p}" for p in bad]
            changes["diagnostics"] = replace(self.diagnostics, **found)
        elif diag is not None:
            problems.append(f"diagnostics must be an object, not {type(diag).__name__}")
        for problem in problems:
            log.warning("svgloo setting ignored: %s", problem)
        return replace(self, **changes), problems

    def engine_dict(self, prove: bool = False) -> dict:
        """ScoreSettings field names (what the engine and the daemon take); ``prove``:
        with the removal proof (the editor's first answer comes without it)."""
        return {"backbone": self.backbone or "auto", "size": int(self.render_size),
                "reference": self.reference.strip() or None,
                "prompt": self.prompt.strip() or None,
                "helpful_threshold": self.helpful_threshold,
                "harmful_threshold": self.harmful_threshold, "prove": prove}


@dataclass
class DocState:
    uri: str
    task: asyncio.Task | None = None
    cancel: threading.Event | None = None
    version: int | None = None          # version the stored outcome was computed on
    text: str | None = None
    result: ScoreResult | None = None
    error: Exception | None = None
    structure: dict | None = None
    structure_spans: list = field(default_factory=list)
    layer_cache: dict = field(default_factory=dict)
    run: Any = None                     # the last in-process ScoreRun: an edit starts from it
    by_daemon: bool = False             # the stored result came from the daemon
    waiters: list = field(default_factory=list)
    published: tuple | None = None      # (version, diagnostics) last pushed
    removal: tuple | None = None        # (text, candidates, size, allowed, RemovalCheck)
    last_change: float = float("-inf")  # time.monotonic() of the last didChange


def fs_name(uri: str) -> str:
    """The file system path of a file: URI (used by the engine to find the reference),
    or the URI itself (which the engine treats as having no file)."""
    if uri.startswith("file:"):
        try:
            path = to_fs_path(uri)
            if path:
                return path
        except Exception:  # noqa: BLE001 - odd URIs are just names
            pass
    return "<" + uri + ">"


class SvglooServer(LanguageServer):
    def __init__(self):
        super().__init__("svgloo", __version__,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.settings = Settings()
        # Defaults with the initialization options: what a client's configuration
        # section is applied to, whole, each time it is read (a key the client dropped
        # goes back to its default instead of keeping an old value).
        self.base_settings = Settings()
        self.docs: dict[str, DocState] = {}
        self.executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=2, thread_name_prefix="svgloo-score")
        # The structure analysis has its own thread so that it never holds the scoring
        # thread; a new version cancels it through its progress callback.
        self.structure_executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="svgloo-structure")
        self.config_ready: asyncio.Event | None = None
        self.settings_problems: set[str] = set()  # shown to the user already
        self.shutting_down = False

    # --- client capabilities ----------------------------------------------------------
    def client_supports(self, field: str):
        """A client capability by its dotted path (pygls' ``get_capability``), None when
        the client did not say."""
        return get_capability(self.client_capabilities, field)

    @property
    def versioned_edits(self) -> bool:
        """Quick fixes as versioned ``documentChanges`` unless the client says it cannot
        take them (then a plain ``changes`` map)."""
        return self.client_supports("workspace.workspace_edit.document_changes") is not False

    @property
    def encoding(self) -> str:
        return encoding_name(self.workspace.position_encoding)

    def state(self, uri: str) -> DocState:
        if uri not in self.docs:
            self.docs[uri] = DocState(uri)
        return self.docs[uri]

    def current(self, uri: str):
        """(version, text) of the open document, or None."""
        try:
            doc = self.workspace.get_text_document(uri)
            return doc.version, doc.source
        except Exception:  # noqa: BLE001
            return None

    # --- scheduling ---------------------------------------------------------------------
    def change_delay(self, uri: str) -> float:
        """How long an edit waits before it is scored: nothing when it comes alone, the
        debounce when it follows another within TYPING_GAP_S (a burst of keystrokes is
        scored once, after its last)."""
        st = self.state(uri)
        now = time.monotonic()
        typing = now - st.last_change < TYPING_GAP_S
        st.last_change = now
        return DEBOUNCE_S if typing else 0.0

    def schedule(self, uri: str, delay: float = DEBOUNCE_S) -> None:
        if self.shutting_down:
            return
        st = self.state(uri)
        if st.task is not None and not st.task.done():
            st.task.cancel()
        if st.cancel is not None:
            st.cancel.set()
        st.cancel = threading.Event()
        st.task = asyncio.get_running_loop().create_task(self._run(uri, delay, st.cancel))

    async def _run(self, uri: str, delay: float, cancel: threading.Event) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
            if self.config_ready is not None and not self.config_ready.is_set():
                try:
                    await asyncio.wait_for(self.config_ready.wait(), CONFIG_WAIT_S)
                except asyncio.TimeoutError:
                    pass
            snapshot = self.current(uri)
            if snapshot is None:
                return
            version, text = snapshot
            st = self.state(uri)
            settings = self.settings
            result, error = await self._score(uri, version, text, settings, cancel, st)
            if cancel.is_set() or self.current(uri) != snapshot:
                return  # stale: a newer version is scheduled
            st.version, st.text, st.result, st.error = version, text, result, error
            st.structure, st.structure_spans = None, []
            self._deliver(uri)
            if result is not None and not is_proven(result):
                await self._prove(uri, snapshot, settings, cancel, st)
            if result is not None and settings.diagnostics.purity:
                await self._structure(uri, snapshot, settings, cancel)
        except asyncio.CancelledError:
            cancel.set()
            raise
        except Exception as exc:  # logged: the server must never die on one document
            log.exception("svgloo: scoring %s failed", uri)
            snapshot = self.current(uri)
            failed = self.docs.get(uri)
            if snapshot is not None and failed is not None and not cancel.is_set():
                # Not an empty outcome: no diagnostics would read as "no problems".
                failed.version, failed.text, failed.result, failed.error = (snapshot[0], snapshot[1],
                                                                            None, exc)
                failed.structure, failed.structure_spans = None, []
                self._deliver(uri)

    async def _score(self, uri, version, text, settings: Settings, cancel, st: DocState):
        """(result dict, None) or (None, SvglooError). Raises Cancelled when stale."""
        from svgloo.engine.errors import SvglooError

        loop = asyncio.get_running_loop()
        name = fs_name(uri)
        progress = await self._progress_begin(f"svgloo: scoring {name.rsplit('/', 1)[-1]}")
        st.by_daemon = False
        try:
            if settings.use_daemon:
                try:
                    result = await loop.run_in_executor(
                        self.executor, _score_via_daemon, text, uri, version,
                        settings.engine_dict())
                    if result is not None:
                        st.by_daemon = True
                        return result, None
                except SvglooError as exc:
                    return None, exc
                except Exception as exc:  # noqa: BLE001 - score in-process instead
                    log.warning("svgloo: daemon scoring failed (%s); scoring in-process", exc)

            def on_progress(done: int, total: int) -> None:
                if cancel.is_set():
                    raise Cancelled()
                if progress is not None and total:
                    loop.call_soon_threadsafe(progress.report, done, total)

            try:
                st.run = await loop.run_in_executor(
                    self.executor, _score_in_process, text, name, settings.engine_dict(),
                    on_progress, st.layer_cache, st.run)
                return st.run.result, None
            except SvglooError as exc:
                return None, exc
            except Cancelled:
                raise asyncio.CancelledError() from None
        finally:
            if progress is not None:
                progress.end()

    async def _prove(self, uri, snapshot, settings: Settings, cancel, st: DocState) -> None:
        """The removal proof of the result just published (scored without it), then the
        diagnostics again with it; nothing when a newer text came meanwhile (``cancel``,
        the snapshot) or the proof failed (the first answer stays: nothing offered)."""
        from svgloo.engine.errors import SvglooError

        loop = asyncio.get_running_loop()
        version, text = snapshot

        def should_stop(*_) -> bool:
            if cancel.is_set():
                raise Cancelled()
            return False

        try:
            result: ScoreResult | None = None
            if st.by_daemon:
                try:
                    result = await loop.run_in_executor(
                        self.executor, _score_via_daemon, text, uri, version,
                        settings.engine_dict(prove=True))
                except SvglooError as exc:
                    log.info("svgloo: no removal proof for %s: %s", uri, exc)
                    return
                except Exception as exc:  # noqa: BLE001 - prove here instead
                    log.warning("svgloo: daemon proof failed (%s); proving in-process", exc)
            if result is None:
                if st.run is None or st.run.doc.text != text:
                    # (the first answer came from the daemon, now gone: score with the proof)
                    st.run = await loop.run_in_executor(
                        self.executor, _score_in_process, text, fs_name(uri),
                        settings.engine_dict(prove=True), should_stop, st.layer_cache,
                        st.run)
                else:
                    st.run = await loop.run_in_executor(self.executor, _prove_in_process,
                                                        st.run, should_stop)
                result = st.run.result
        except Cancelled:
            return
        except Exception as exc:  # noqa: BLE001 - the first answer stays, nothing offered
            log.info("svgloo: no removal proof for %s: %s", uri, exc)
            return
        if cancel.is_set() or self.current(uri) != snapshot or st.text != text:
            return  # a stale proof is never applied to a newer text
        st.result = result
        self._deliver(uri)

    async def _structure(self, uri, snapshot, settings: Settings, cancel) -> None:
        loop = asyncio.get_running_loop()
        version, text = snapshot

        def on_progress(done: int, total: int) -> None:
            if cancel.is_set():
                raise Cancelled()

        try:
            structure, spans = await loop.run_in_executor(
                self.structure_executor, _structure_in_process, text, fs_name(uri),
                settings.render_size, on_progress)
        except Cancelled:
            return
        except Exception as exc:  # noqa: BLE001 - concepts are optional
            log.info("svgloo: no structure for %s: %s", uri, exc)
            return
        if structure is None or cancel.is_set() or self.current(uri) != snapshot:
            return
        st = self.state(uri)
        st.structure, st.structure_spans = structure, spans
        self._deliver(uri)

    # --- delivering diagnostics -----------------------------------------------------
    def diagnostics_for(self, uri: str) -> list[types.Diagnostic]:
        st = self.docs.get(uri)
        if st is None or st.text is None:
            return []
        lines = LineIndex(st.text, self.encoding)
        if st.error is not None:
            return [refusal_diagnostic(st.error, lines)]
        if st.result is None:
            return []
        rows = (structure_rows(st.structure, st.structure_spans)
                if st.structure is not None else None)
        return document_diagnostics(st.result, rows, lines, self.settings.diagnostics,
                                    st.version, uri)

    def _deliver(self, uri: str) -> None:
        """Push the document's complete diagnostics for its version, unless exactly these
        were already pushed for it (a rescore after a settings change, or a structure
        analysis that found nothing to add)."""
        st = self.state(uri)
        waiters, st.waiters = st.waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)
        diagnostics = self.diagnostics_for(uri)
        key = (st.version, tuple(repr(self.protocol._converter.unstructure(d))
                                 for d in diagnostics))
        if key != st.published:
            st.published = key
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, version=st.version, diagnostics=diagnostics))
        if self.client_supports("workspace.code_lens.refresh_support"):
            self.workspace_code_lens_refresh(None)

    def fresh_state(self, uri: str) -> DocState | None:
        """The state if it was computed on the current text, else None."""
        snapshot = self.current(uri)
        st = self.docs.get(uri)
        if snapshot is None or st is None or st.text != snapshot[1]:
            return None
        return st

    async def prove_removal(self, st: DocState, text: str, candidates: list[int],
                            allowed: dict[int, int] | None = None):
        """Which of ``candidates`` can go together without changing the picture (engine
        ``removal.check_removal``, rendered in the scoring thread; ``allowed``: pixels
        each may change, see there); remembered for the text so that repeated code-action
        requests cost nothing. None if it failed."""
        size = int(self.settings.render_size)
        key = (text, tuple(candidates), size, tuple(sorted((allowed or {}).items())))
        if st.removal is not None and st.removal[:4] == key:
            return st.removal[4]
        loop = asyncio.get_running_loop()
        try:
            check = await loop.run_in_executor(self.executor, _check_removal, text,
                                               fs_name(st.uri), candidates, size, allowed)
        except Exception as exc:  # noqa: BLE001 - no proof, no bulk fix
            log.info("svgloo: bulk removal not proven for %s: %s", st.uri, exc)
            return None
        st.removal = key + (check,)
        return check

    # --- progress -----------------------------------------------------------------------
    async def _progress_begin(self, title: str):
        if not self.client_supports("window.work_done_progress"):
            return None
        token = f"svgloo-{uuid.uuid4().hex[:12]}"
        try:
            # Shielded: when a newer version cancels this task, the request stays pending
            # and pygls can still set its answer (a cancelled future there is a
            # "CANCELLED" error the client shows to the user).
            await asyncio.wait_for(asyncio.shield(self.work_done_progress.create_async(token)),
                                   5.0)
        except Exception as exc:  # noqa: BLE001 - progress is cosmetic
            log.debug("svgloo: no progress token: %s", exc)
            return None
        return _Progress(self, token, title)

    # --- settings -----------------------------------------------------------------------
    async def pull_configuration(self) -> None:
        if not self.client_supports("workspace.configuration"):
            return
        try:
            answer = await asyncio.wait_for(self.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])),
                CONFIG_WAIT_S)
        except Exception as exc:  # noqa: BLE001
            log.warning("svgloo: workspace/configuration failed: %s", exc)
            return
        if answer:
            self.settings = self.settings_from(self.base_settings, answer[0])

    def settings_from(self, base: Settings, raw: Any) -> Settings:
        """``base`` overridden by a client's settings; a value of the wrong type is shown
        to the user (once per distinct problem) and its default used."""
        settings, problems = base.parsed(raw)
        for problem in problems:
            if problem not in self.settings_problems:
                self.settings_problems.add(problem)
                self.window_show_message(types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message=f"svgloo: setting ignored, the default is used: {problem}"))
        return settings

    async def reconfigure(self, pushed: Any) -> None:
        """Apply a ``workspace/didChangeConfiguration`` (its ``settings``, when the client
        pushes our section, then a pull) and rescore the open documents if anything
        changed (editors send one right after ``initialized``: then nothing is redone)."""
        before = self.settings
        if isinstance(pushed, dict) and isinstance(pushed.get(SECTION), dict):
            self.settings = self.settings_from(self.base_settings, pushed[SECTION])
        await self.pull_configuration()
        if self.settings == before:
            return
        for uri in list(self.docs):
            if self.current(uri) is not None:
                self.schedule(uri, 0)

    def close(self, uri: str) -> None:
        """Forget a closed document: stop its work, release its waiters, clear its
        diagnostics."""
        st = self.docs.pop(uri, None)
        if st is not None:
            if self.settings.use_daemon and (st.by_daemon or (st.task is not None
                                                             and not st.task.done())):
                # the daemon stops analysing it too and forgets its re-scoring state
                self.executor.submit(_close_on_daemon, uri)
            if st.task is not None:
                st.task.cancel()
            if st.cancel is not None:
                st.cancel.set()
            for fut in st.waiters:
                if not fut.done():
                    fut.set_result(None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, diagnostics=[]))

    # --- ending -------------------------------------------------------------------------
    def cancel_all(self) -> None:
        """Stop every document's work: tasks, engine runs (their progress callbacks see
        the event) and the render workers they wait on."""
        self.shutting_down = True
        for st in self.docs.values():
            if st.task is not None and not st.task.done():
                st.task.cancel()
            if st.cancel is not None:
                st.cancel.set()
        from svgloo.engine.processes.workers import close_all_pools
        close_all_pools()

    def hard_exit(self, code: int) -> None:
        """End the process now: the executor threads may sit in a render or a daemon call
        that the interpreter's exit would wait for (the server once took 37 s)."""
        try:
            self.cancel_all()
        finally:
            logging.shutdown()
            os._exit(code)

    def watch_client(self, pid: int | None, interval_s: float = 1.0) -> None:
        """Exit when the client process dies without saying so (LSP ``processId``)."""
        if not pid or pid == os.getpid():
            return

        def watch() -> None:
            while True:
                threading.Event().wait(interval_s)
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    log.warning("svgloo: client process %s is gone; exiting", pid)
                    self.hard_exit(1)
                except PermissionError:
                    pass  # alive, owned by someone else

        threading.Thread(target=watch, name="svgloo-client-watch", daemon=True).start()


class _Progress:
    def __init__(self, server: SvglooServer, token: str, title: str):
        self.server, self.token, self.last, self.ended = server, token, -1, False
        server.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title=title, percentage=0, cancellable=False))

    def report(self, done: int, total: int) -> None:
        pct = int(100 * done / max(total, 1))
        if self.ended:
            return
        if pct >= self.last + 10 or done == total:
            self.last = pct
            try:
                self.server.work_done_progress.report(self.token, types.WorkDoneProgressReport(
                    message=f"{pct}%", percentage=pct))
            except Exception:  # noqa: BLE001
                pass

    def end(self) -> None:
        self.ended = True
        try:
            self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd())
        except Exception:  # noqa: BLE001
            pass


# --- blocking work (runs in the executor) ----------------------------------------------

def _score_via_daemon(text: str, uri: str, version, settings: dict) -> ScoreResult | None:
    """The daemon's result, or None when no daemon can be used (so score in-process)."""
    try:
        from svgloo.daemon.client import DaemonClient, DaemonUnavailable
    except ImportError:
        return None
    try:
        # the daemon answers the engine's own svgloo.score/1 object, as JSON
        return cast(ScoreResult, DaemonClient().score(text=text, uri=uri, version=version,
                                                      settings=settings))
    except DaemonUnavailable as exc:
        log.info("svgloo: daemon unavailable (%s); scoring in-process", exc)
        return None


def _close_on_daemon(uri: str) -> None:
    """Tell a running daemon that the editor closed ``uri`` (best effort: a daemon that is
    not running is not started for it, and one that cannot be reached has nothing to stop)."""
    try:
        from svgloo.daemon.client import DaemonClient, DaemonError, DaemonUnavailable
    except ImportError:
        return
    try:
        DaemonClient(autostart=False).close_document(uri)
    except (DaemonUnavailable, DaemonError, OSError) as exc:
        log.info("svgloo: the daemon was not told that %s closed (%s)", uri, exc)


def _score_in_process(text: str, name: str, settings: dict, progress, layer_cache,
                      previous=None):
    """The engine's ScoreRun; ``previous`` (the document's last run) lets it re-score only
    what an edit can have changed (the engine falls back to a cold scoring by itself)."""
    from svgloo.engine.scoring.score import ScoreSettings, score_text

    return score_text(text, name, ScoreSettings(**settings), progress=progress,
                      layer_cache=layer_cache, previous=previous)


def _prove_in_process(run, should_stop):
    """The run with its removal proof (engine ``deferred_proof.prove_run``)."""
    from svgloo.engine.scoring.deferred_proof import prove_run

    return prove_run(run, should_stop=should_stop)


def _check_removal(text: str, name: str, candidates: list[int], size: int,
                   allowed: dict[int, int] | None = None):
    from svgloo.engine.proving.removal import check_removal_text

    return check_removal_text(text, name, candidates, size=size, allowed=allowed)


def _structure_in_process(text: str, name: str, size: int, progress=None):
    """(structure dict, element spans of its units) or (None, []) when unavailable."""
    try:
        from svgloo.structure.analysis import StructureSettings, structure_text
    except ImportError:
        return None, []
    run = structure_text(text, name, StructureSettings(size=size), progress=progress)
    spans = [(u.start, u.end) for u in run.units.units]
    return run.result, spans


# --- features: module-level handlers that only translate ---------------------------------
# pygls passes the server (``ls``) to each; what they do is the server's methods' (state,
# scheduling, settings), ``actions``' (code actions) and ``convert``'s (LSP objects).
# Edits are debounced in ``SvglooServer.schedule`` (``DEBOUNCE_S``, when they come as
# typing: ``change_delay``), and only there.

def guarded(default=None):
    """Log a handler's failure and answer ``default``: the server never dies on one
    request."""
    def wrap(fn):
        async def handler(ls, params):
            try:
                return await fn(ls, params)
            except asyncio.CancelledError:
                raise
            except Exception:  # logged, and the server carries on
                log.exception("svgloo: %s failed", fn.__name__)
                return default
        handler.__name__ = fn.__name__
        handler.__doc__ = fn.__doc__
        return handler
    return wrap


@guarded()
async def initialize(ls: SvglooServer, params: types.InitializeParams):
    ls.config_ready = asyncio.Event()
    ls.base_settings = ls.settings_from(Settings(), params.initialization_options)
    ls.settings = ls.base_settings
    ls.watch_client(params.process_id)


@guarded()
async def initialized(ls: SvglooServer, params: types.InitializedParams):
    try:
        await ls.pull_configuration()
    finally:
        assert ls.config_ready is not None  # made by initialize
        ls.config_ready.set()


@guarded()
async def shutdown(ls: SvglooServer, params):
    ls.cancel_all()


def exit_now(ls: SvglooServer, params):
    # 0 after a shutdown request, 1 otherwise (the protocol's rule).
    ls.hard_exit(0 if ls.shutting_down else 1)


@guarded()
async def did_change_configuration(ls: SvglooServer,
                                   params: types.DidChangeConfigurationParams):
    await ls.reconfigure(getattr(params, "settings", None))


@guarded()
async def did_open(ls: SvglooServer, params: types.DidOpenTextDocumentParams):
    ls.schedule(params.text_document.uri, 0)


@guarded()
async def did_change(ls: SvglooServer, params: types.DidChangeTextDocumentParams):
    ls.schedule(params.text_document.uri, ls.change_delay(params.text_document.uri))


@guarded()
async def did_save(ls: SvglooServer, params: types.DidSaveTextDocumentParams):
    ls.schedule(params.text_document.uri, 0)


@guarded()
async def did_close(ls: SvglooServer, params: types.DidCloseTextDocumentParams):
    ls.close(params.text_document.uri)


@guarded([])
async def code_action(ls: SvglooServer, params: types.CodeActionParams):
    uri = params.text_document.uri
    snapshot = ls.current(uri)
    if snapshot is None:
        return []
    version, text = snapshot
    ours = actions.requested_diagnostics(params.context.diagnostics, params.range)
    if not ours:
        return []
    us = actions.current_units(text, fs_name(uri))
    if us is None:
        return []
    lines = LineIndex(text, ls.encoding)
    checks = {}
    for request in actions.group_proof_requests(us, lines, ours):
        check = await ls.prove_removal(ls.state(uri), text, request.candidates,
                                       request.allowed)
        if check is not None:
            checks[request.position] = check
    st = ls.fresh_state(uri)
    return actions.quick_fixes(uri, version, lines, us, ours, checks,
                               st.result if st is not None else None, ls.versioned_edits)


@guarded(None)
async def hover(ls: SvglooServer, params: types.HoverParams):
    st = ls.fresh_state(params.text_document.uri)
    if st is None or st.result is None:
        return None
    assert st.text is not None  # a result is of a text
    lines = LineIndex(st.text, ls.encoding)
    offset = lines.offset(params.position) - lines.base
    rows = [r for r in st.result.get("units", [])
            if r["offsets"][0] <= offset < r["offsets"][1]]
    if not rows:
        return None
    row = min(rows, key=lambda r: r["offsets"][1] - r["offsets"][0])  # the innermost
    srow = None
    if st.structure is not None:
        for s in structure_rows(st.structure, st.structure_spans):
            if s["offsets"][0] <= row["offsets"][0] and row["offsets"][1] <= s["offsets"][1]:
                srow = s
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                     value=hover_markdown(row, srow, st.result)),
        range=lines.engine_range(*row["offsets"]))


@guarded([])
async def code_lens(ls: SvglooServer, params: types.CodeLensParams):
    uri = params.text_document.uri
    st = ls.fresh_state(uri)
    if st is None or st.result is None:
        return []
    assert st.text is not None  # a result is of a text
    lines = LineIndex(st.text, ls.encoding)
    root = actions.current_units(st.text, "<lens>", subpaths=False)
    if root is None or not root.doc.elements:
        return []
    el = root.doc.elements[0]
    rng = lines.engine_range(el.start, el.start_tag_end)
    titles = [summary_title(st.result)]
    if st.structure is not None:
        titles.append(metrics_title(st.structure))
    return [types.CodeLens(range=rng, command=types.Command(
        title=title, command=SUMMARY_COMMAND, arguments=[uri])) for title in titles]


async def show_summary(ls: SvglooServer, uri=None):
    try:
        uri = uri if isinstance(uri, str) else None
        st = ls.docs.get(uri) if uri else None
        if st is not None and st.result is not None:
            ls.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Info, message=summary_title(st.result)))
    except Exception:
        log.exception("svgloo: %s failed", SUMMARY_COMMAND)
    return None


# (method, its registration options, handler). pygls derives the server's capabilities
# from these registrations (and the text document sync kind given to the server).
FEATURES = [
    (types.INITIALIZE, None, initialize),
    (types.INITIALIZED, None, initialized),
    (types.SHUTDOWN, None, shutdown),
    (types.EXIT, None, exit_now),
    (types.WORKSPACE_DID_CHANGE_CONFIGURATION, None, did_change_configuration),
    (types.TEXT_DOCUMENT_DID_OPEN, None, did_open),
    (types.TEXT_DOCUMENT_DID_CHANGE, None, did_change),
    (types.TEXT_DOCUMENT_DID_SAVE, None, did_save),
    (types.TEXT_DOCUMENT_DID_CLOSE, None, did_close),
    (types.TEXT_DOCUMENT_CODE_ACTION,
     types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]), code_action),
    (types.TEXT_DOCUMENT_HOVER, None, hover),
    (types.TEXT_DOCUMENT_CODE_LENS, None, code_lens),
]
COMMANDS = {SUMMARY_COMMAND: show_summary}


def create_server() -> SvglooServer:
    """A server with every feature and command registered."""
    server = SvglooServer()
    for method, options, handler in FEATURES:
        server.feature(method, options)(handler)
    for name, handler in COMMANDS.items():
        server.command(name)(handler)
    return server
