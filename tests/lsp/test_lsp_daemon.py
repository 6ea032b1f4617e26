"""`svgloo lsp` with its default `useDaemon: true`: the server starts a daemon on demand
(on a private socket here) and its diagnostics come from the daemon."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from svgloo.daemon.client import DaemonClient
from lsp_recording import record_published
from test_lsp import STRAY, diagnostics, encoding_of, open_doc, span_range, stray_fixture

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180),
              pytest.mark.asyncio(loop_scope="module")]

RUN_DIR = tempfile.mkdtemp(prefix="svgloo-lsp-daemon-")
SOCKET = os.path.join(RUN_DIR, "daemon.sock")
ENV = {**os.environ, "SVGLOO_SOCKET": SOCKET, "SVGLOO_CACHE_DIR": os.path.join(RUN_DIR, "cache")}


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(
    server_command=[sys.executable, "-m", "svgloo", "lsp"], server_env=ENV))
async def client(lsp_client: LanguageClient):
    lsp_client.set_configuration({"useDaemon": True, "renderSize": 192}, section="svgloo")
    record_published(lsp_client)
    # VS Code's capabilities include code lens refresh, which the server then asks for.
    lsp_client.protocol.fm.features[types.WORKSPACE_CODE_LENS_REFRESH] = lambda params: None
    try:
        lsp_client.init_result = await lsp_client.initialize_session(types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            initialization_options={"useDaemon": True, "renderSize": 192}))
        yield
        await lsp_client.shutdown_session()
    finally:  # the daemon the server started outlives it: stop it and clean up
        subprocess.run([sys.executable, "-m", "svgloo", "daemon", "stop", "--socket", SOCKET],
                       env=ENV, timeout=60, capture_output=True)
        shutil.rmtree(RUN_DIR, ignore_errors=True)


async def test_harmful_element_is_reported_through_the_daemon(client, tmp_path):
    path, dirty, _clean, at = stray_fixture(tmp_path)
    uri = open_doc(client, path, dirty)
    diags = await diagnostics(client, uri, 1)
    warnings = [d for d in diags if d.severity == types.DiagnosticSeverity.Warning]
    assert len(warnings) == 1, diags
    assert warnings[0].range == span_range(dirty, at, at + len(STRAY), encoding_of(client))
    status = DaemonClient(socket_path=SOCKET, autostart=False).status()
    assert status["jobs"]["completed"] >= 1  # the daemon, not the in-process engine, scored


async def test_daemon_killed_mid_session_the_editor_keeps_its_diagnostics(client, tmp_path):
    """kill -9 of the daemon while an editor session is open: the next edit is still
    scored (a fresh daemon is started, or the server scores in-process) and the stray is
    still reported on its range; the language server itself stays up."""
    import signal
    import time

    path, dirty, _clean, at = stray_fixture(tmp_path)
    uri = open_doc(client, path, dirty)
    await diagnostics(client, uri, 1)
    old_pid = DaemonClient(socket_path=SOCKET, autostart=False).status()["pid"]
    os.kill(old_pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # reaped by whoever started it; gone from /proc
        try:
            os.kill(old_pid, 0)
        except ProcessLookupError:
            break
        if os.path.exists(f"/proc/{old_pid}/stat") and \
                open(f"/proc/{old_pid}/stat").read().split(") ")[1][0] == "Z":
            break
        time.sleep(0.1)

    edited = dirty.replace("</svg>", "<!-- edited after the daemon died --></svg>")
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)]))
    diags = await diagnostics(client, uri, 2)
    warnings = [d for d in diags if d.severity == types.DiagnosticSeverity.Warning]
    assert len(warnings) == 1, diags
    assert warnings[0].range == span_range(edited, at, at + len(STRAY), encoding_of(client))
    assert not any(d.severity == types.DiagnosticSeverity.Error for d in diags), diags


async def test_closing_a_document_lets_the_daemon_forget_it(client, tmp_path):
    """didClose reaches the daemon (POST /v1/close): what it kept to re-score the document
    after an edit is dropped, so a closed file holds neither memory nor, mid-analysis, CPU."""
    import asyncio
    import time

    path, dirty, _clean, _at = stray_fixture(tmp_path)
    uri = open_doc(client, path, dirty)
    await diagnostics(client, uri, 1)
    daemon = DaemonClient(socket_path=SOCKET, autostart=False)
    kept = daemon.status()["cache"]["documents_kept"]
    assert kept >= 1
    client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    deadline = time.monotonic() + 30
    while daemon.status()["cache"]["documents_kept"] >= kept:
        assert time.monotonic() < deadline, "the daemon still keeps the closed document"
        await asyncio.sleep(0.1)
