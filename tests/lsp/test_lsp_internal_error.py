"""An engine failure that is not one of svgloo's refusals (a bug) still gives the editor
one Warning saying the document was not analysed, instead of an empty list that reads as
"no problems". The real `svgloo lsp` runs with its in-process scoring replaced by a
function that raises."""

from __future__ import annotations

import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from lsp_recording import record_published
from test_lsp import diagnostics, encoding_of, open_doc, span_range

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180),
              pytest.mark.asyncio(loop_scope="module")]

BROKEN_SERVER = (
    "import sys\n"
    "import svgloo.lsp.server as server\n"
    "def broken(*args, **kwargs):\n"
    "    raise ZeroDivisionError('the engine broke')\n"
    "server._score_in_process = broken\n"
    "from svgloo.cli import main\n"
    "sys.exit(main(['lsp']))\n")


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(
    server_command=[sys.executable, "-c", BROKEN_SERVER]))
async def client(lsp_client: LanguageClient):
    lsp_client.set_configuration({"useDaemon": False}, section="svgloo")
    record_published(lsp_client)
    lsp_client.protocol.fm.features[types.WORKSPACE_CODE_LENS_REFRESH] = lambda params: None
    lsp_client.init_result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={"useDaemon": False}))
    yield
    await lsp_client.shutdown_session()


async def test_an_internal_error_is_one_warning_not_silence(client, tmp_path):
    text = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 4 4">\n'
            '  <rect width="2" height="2"/>\n</svg>\n')
    uri = open_doc(client, tmp_path / "fine.svg", text)
    [d] = await diagnostics(client, uri, 1)
    assert d.severity == types.DiagnosticSeverity.Warning
    assert d.message.startswith("svgloo did not analyse this document: internal error "
                                "(ZeroDivisionError: the engine broke)")
    assert d.range == span_range(text, 0, len("<svg"), encoding_of(client))
