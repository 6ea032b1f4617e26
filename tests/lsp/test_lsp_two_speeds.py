"""The language server's two speeds (docs/two-speeds.md): the first diagnostics come from a
scoring without the removal proof, the proof follows in the background and is applied
only to the very text it was computed on; until then nothing is offered for deletion and
the hover says the check is running."""

from __future__ import annotations

import asyncio
import threading

from svgloo.engine.result_types import is_proven
from svgloo.lsp.convert import (DiagnosticCode, DiagnosticOptions, LineIndex,
                                document_diagnostics, hover_markdown)
from svgloo.lsp.server import Settings, SvglooServer, _score_in_process

TWINS_AND_GHOST = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
                   '<rect x="4" y="4" width="8" height="8" fill="#c00"/>'
                   '<rect x="4" y="4" width="8" height="8" fill="#c00"/>'
                   '<circle cx="8" cy="8" r="3" fill="blue" opacity="0"/>'
                   '<path d="M1 1h2v2h-2z" fill="#0a0"/></svg>')
URI = "file:///tmp/two-speeds.svg"


def _settings(render_pool) -> tuple[Settings, dict]:
    settings = Settings(backbone="pixel", render_size=64, use_daemon=False)
    return settings, {**settings.engine_dict(), "limits": render_pool.limits}


def test_the_first_answer_offers_nothing_and_says_the_check_is_running(render_pool):
    settings, engine = _settings(render_pool)
    quick = _score_in_process(TWINS_AND_GHOST, "t.svg", engine, None, {})
    assert not is_proven(quick.result)
    lines = LineIndex(TWINS_AND_GHOST)
    diags = document_diagnostics(quick.result, None, lines, DiagnosticOptions(), 1, URI)
    codes = [d.code for d in diags]
    assert DiagnosticCode.INVISIBLE not in codes
    [checking] = [d for d in diags if d.code == DiagnosticCode.CHECKING]
    assert checking.message.startswith("3 units show no footprint: the removal check is "
                                       "running")
    assert checking.data is None  # nothing for a quick fix to act on
    hidden = quick.result["units"][1]
    assert "the removal check is running" in hover_markdown(hidden, None, quick.result)

    proven = _score_in_process(TWINS_AND_GHOST, "t.svg", {**engine, "prove": True}, None, {})
    diags = document_diagnostics(proven.result, None, lines, DiagnosticOptions(), 1, URI)
    assert DiagnosticCode.CHECKING not in [d.code for d in diags]
    assert [d.code for d in diags].count(DiagnosticCode.INVISIBLE) == 2


def _prove(server: SvglooServer, snapshot, settings, cancel, st):
    asyncio.run(server._prove(URI, snapshot, settings, cancel, st))


def _server_with_first_answer(render_pool, monkeypatch, now):
    """A server whose document holds the first answer for version 1 (as ``_run`` leaves
    it); ``now`` is what the editor holds while the proof runs (version, text)."""
    settings, engine = _settings(render_pool)
    server = SvglooServer()
    st = server.state(URI)
    st.run = _score_in_process(TWINS_AND_GHOST, "t.svg", engine, None, st.layer_cache)
    st.version, st.text, st.result = 1, TWINS_AND_GHOST, st.run.result
    delivered: list[str] = []
    monkeypatch.setattr(server, "current", lambda uri: now)
    monkeypatch.setattr(server, "_deliver", lambda uri: delivered.append(uri))
    return server, st, settings, delivered


def test_the_proof_is_published_for_the_text_it_proved(render_pool, monkeypatch):
    snapshot = (1, TWINS_AND_GHOST)
    server, st, settings, delivered = _server_with_first_answer(render_pool, monkeypatch,
                                                                snapshot)
    _prove(server, snapshot, settings, threading.Event(), st)
    assert delivered == [URI] and is_proven(st.result)
    assert st.result["summary"]["proven_removable"] == 2


def test_a_proof_of_an_older_text_is_never_applied(render_pool, monkeypatch):
    """The editor moved on to version 2 while version 1 was being proven: the proof is
    dropped, and the first answer (nothing offered) stays until version 2's own."""
    edited = TWINS_AND_GHOST.replace("#0a0", "#00a")
    server, st, settings, delivered = _server_with_first_answer(render_pool, monkeypatch,
                                                                (2, edited))
    first = st.result
    _prove(server, (1, TWINS_AND_GHOST), settings, threading.Event(), st)
    assert delivered == [] and st.result is first and not is_proven(st.result)


def test_a_cancelled_proof_stops_and_publishes_nothing(render_pool, monkeypatch):
    snapshot = (1, TWINS_AND_GHOST)
    server, st, settings, delivered = _server_with_first_answer(render_pool, monkeypatch,
                                                                snapshot)
    cancel = threading.Event()
    cancel.set()  # the next edit arrived
    _prove(server, snapshot, settings, cancel, st)
    assert delivered == [] and not is_proven(st.result)
    assert st.run.proof is None  # stopped, not finished and thrown away
