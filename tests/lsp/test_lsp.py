"""End-to-end tests of `svgloo lsp` (the real server process) with pytest-lsp, as VS Code
(UTF-16) and as Neovim 0.11 (UTF-8). Diagnostics are pushed to both: Neovim 0.11 does not
support the pull model's refresh, so pulled purity diagnostics never appeared there."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import pytest_lsp
from lsprotocol import types
from lxml import etree
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from conftest import CORPUS, EXAMPLES
from lsp_recording import record_published
from svgloo.engine.proving.proof import PROOF_TOLERANCE

# One server per client kind for the module (starting one costs seconds); each test opens
# its own documents.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(180),
              pytest.mark.asyncio(loop_scope="module")]

EMOJI = "\U0001F3B1"
STRAY = '<rect x="2" y="2" width="8" height="8" fill="#F4900C"/>'
WAIT_S = 90


@pytest_lsp.fixture(
    scope="module",
    params=["visual-studio-code", "neovim"],
    config=ClientServerConfig(server_command=[sys.executable, "-m", "svgloo", "lsp"]),
)
async def client(lsp_client: LanguageClient, request, tmp_path_factory):
    lsp_client.set_configuration({"useDaemon": False}, section="svgloo")
    record_published(lsp_client)
    lsp_client.lens_refreshes = 0

    def lens_refresh(params):  # VS Code's capabilities include codeLens refresh support
        lsp_client.lens_refreshes += 1

    lsp_client.protocol.fm.features[types.WORKSPACE_CODE_LENS_REFRESH] = lens_refresh
    caps = client_capabilities(request.param)
    lsp_client.init_result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=caps, root_uri=tmp_path_factory.getbasetemp().as_uri(),
        initialization_options={"useDaemon": False, "renderSize": 192}))
    yield
    await lsp_client.shutdown_session()


# --- independent helpers ------------------------------------------------------------------

def encoding_of(client: LanguageClient) -> str:
    enc = client.init_result.capabilities.position_encoding or "utf-16"
    return getattr(enc, "value", enc)


def units(s: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(s.encode("utf-8"))
    if encoding == "utf-32":
        return len(s)
    return len(s.encode("utf-16-le")) // 2


def position(text: str, offset: int, encoding: str) -> types.Position:
    line = text.count("\n", 0, offset)
    prefix = text[text.rfind("\n", 0, offset) + 1:offset]
    return types.Position(line=line, character=units(prefix, encoding))


def span_range(text: str, start: int, end: int, encoding: str) -> types.Range:
    return types.Range(start=position(text, start, encoding), end=position(text, end, encoding))


def offset_of(text: str, pos: types.Position, encoding: str) -> int:
    lines = text.split("\n")
    base = sum(len(line) + 1 for line in lines[:pos.line])
    line, used = lines[pos.line], 0
    for i, ch in enumerate(line):
        if used >= pos.character:
            return base + i
        used += units(ch, encoding)
    return base + len(line)


def apply_workspace_edit(text: str, edit: types.WorkspaceEdit, uri: str, version: int,
                         encoding: str) -> str:
    [change] = edit.document_changes
    assert change.text_document.uri == uri
    assert change.text_document.version == version  # a versioned edit for this text
    spans = sorted(((offset_of(text, e.range.start, encoding),
                     offset_of(text, e.range.end, encoding), e.new_text) for e in change.edits),
                   reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


CHECKING = "removal-check-running"


async def diagnostics(client: LanguageClient, uri: str, version: int,
                      proven: bool = True) -> list[types.Diagnostic]:
    """The first diagnostics published for ``version``; with ``proven``, the first that
    no longer say the removal check is running (the server's second publication)."""

    async def published():
        while True:
            for p in client.published:
                if p.uri == uri and p.version == version and not (
                        proven and any(d.code == CHECKING for d in p.diagnostics)):
                    return list(p.diagnostics)
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    return await asyncio.wait_for(published(), WAIT_S)


def open_doc(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="svg", version=version,
                                             text=text)))
    return uri


def stray_fixture(tmp_path: Path) -> tuple[Path, str, str, int]:
    """A corpus file with a comment holding an astral character and a stray element
    injected on the same line; its clean original as the sidecar reference."""
    src = CORPUS / "twemoji" / "1f387.svg"
    if not src.is_file():
        pytest.skip("the shared corpus is not present")
    clean = src.read_text(encoding="utf-8")
    at = clean.rindex("</svg>")
    prefix = clean[:at] + f"<!-- {EMOJI} -->"
    dirty = prefix + STRAY + clean[at:]
    path = tmp_path / "fireworks.svg"
    path.write_text(dirty, encoding="utf-8")
    (tmp_path / "fireworks.ref.svg").write_text(clean, encoding="utf-8")
    return path, dirty, clean, len(prefix)


async def code_actions(client, uri, diag) -> list[types.CodeAction]:
    got = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=diag.range,
        context=types.CodeActionContext(diagnostics=[diag])))
    return [a for a in got or [] if isinstance(a, types.CodeAction)]


# --- tests ----------------------------------------------------------------------------------

async def test_stray_element_warning_and_remove_element(client: LanguageClient, tmp_path):
    path, dirty, clean, at = stray_fixture(tmp_path)
    enc = encoding_of(client)
    uri = open_doc(client, path, dirty)
    diags = await diagnostics(client, uri, 1)

    warnings = [d for d in diags if d.severity == types.DiagnosticSeverity.Warning]
    assert len(warnings) == 1, diags
    [w] = warnings
    assert w.range == span_range(dirty, at, at + len(STRAY), enc)
    assert w.code == "harmful" and w.source == "svgloo"
    # plain words in the message; the delta in the related information beneath it
    assert w.message == ("rect: harmful: the picture is closer to its reference without it, "
                         "so remove it")
    assert "delta -" in w.related_information[0].message
    assert not [d for d in diags if d.severity == types.DiagnosticSeverity.Error]

    # Hover on the stray element; summary code lens on the root <svg>.
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=position(dirty, at + 3, enc)))
    assert hover is not None and "harmful" in hover.contents.value
    assert "footprint" in hover.contents.value
    assert "of 192x192" in hover.contents.value  # renderSize from the init options
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    assert lenses and lenses[0].range.start == types.Position(line=0, character=0)
    assert "1 harmful" in lenses[0].command.title

    # Quick fix: a versioned edit that leaves the file minus exactly that element.
    fixes = [a for a in await code_actions(client, uri, w) if a.title == "Remove rect"]
    assert len(fixes) == 1
    fixed = apply_workspace_edit(dirty, fixes[0].edit, uri, 1, enc)
    assert fixed == dirty[:at] + dirty[at + len(STRAY):]
    etree.fromstring(fixed.encode("utf-8"))

    # Once the text changed, the old diagnostic no longer offers a fix.
    new_text = dirty.replace(STRAY, STRAY.replace('x="2"', 'x="3"'))
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=new_text)]))
    assert not [a for a in await code_actions(client, uri, w)
                if a.title == "Remove rect"]

    if client.capabilities.window.work_done_progress:
        kinds = [type(v).__name__ for reports in client.progress_reports.values()
                 for v in reports]
        assert "WorkDoneProgressBegin" in kinds and "WorkDoneProgressEnd" in kinds


async def test_remove_subpath_keeps_other_subpaths(client: LanguageClient, tmp_path):
    from svgloo.engine.reading.document import parse_document
    from svgloo.engine.rendering.render import render_rgba
    from svgloo.engine.reading.units import extract_units, text_without

    clean = (EXAMPLES / "billiards.svg").read_text(encoding="utf-8")
    # Inject a 3x3 subpath into the compound "8" path, between two subpaths chained by
    # relative movetos; the next moveto is adjusted so every other subpath stays put.
    join = clean.index("zm2.742-.176") + 1
    injected = "m-3.7-3.5h3v3h-3z"
    dirty = clean[:join] + injected + "m6.442 3.324" + clean[join + len("m2.742-.176"):]
    path = tmp_path / "eight.svg"
    path.write_text(dirty, encoding="utf-8")
    (tmp_path / "eight.ref.svg").write_text(clean, encoding="utf-8")
    enc = encoding_of(client)
    uri = open_doc(client, path, dirty)

    diags = await diagnostics(client, uri, 1)
    warnings = [d for d in diags if d.severity == types.DiagnosticSeverity.Warning]
    assert [w.range for w in warnings] == [span_range(dirty, join, join + len(injected), enc)]
    fixes = [a for a in await code_actions(client, uri, warnings[0])
             if re.fullmatch(r"Remove path(#\S+)? subpath \d+", a.title)]
    assert len(fixes) == 1
    fixed = apply_workspace_edit(dirty, fixes[0].edit, uri, 1, enc)
    assert injected not in fixed

    size = 192
    after = render_rgba(fixed, size).astype(int)
    before = render_rgba(dirty, size).astype(int)
    us = extract_units(parse_document(dirty, "eight.svg"))
    [stray] = [u.index for u in us.units if u.start == join]
    assert np.array_equal(after, render_rgba(text_without(us, {stray}), size))
    # Outside the removed square (user units 10..13 x 16.7..19.7, +2 px) nothing moved.
    scale = size / 36
    outside = np.ones((size, size), bool)
    outside[int(16.7 * scale) - 2:int(19.7 * scale) + 3, int(10 * scale) - 2:int(13 * scale) + 3] = False
    assert np.abs(after - before).max(axis=2)[outside].max() <= 3
    assert np.abs(after - before).max(axis=2)[~outside].max() > 100  # the square is gone


async def test_burst_of_changes_publishes_last_version_only(client: LanguageClient, tmp_path):
    path, dirty, clean, at = stray_fixture(tmp_path)
    enc = encoding_of(client)
    uri = open_doc(client, path, dirty)
    await diagnostics(client, uri, 1)
    client.published.clear()

    # 50 incremental edits, each moving the stray rect: x="2" -> x="2.2" -> ... -> x="12.2".
    text = dirty
    for version in range(2, 52):
        start = text.index('x="', at) + 3
        end = text.index('"', start)
        new = f"{2 + version / 5:g}"
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(
                range=span_range(text, start, end, enc), text=new)]))
        text = text[:start] + new + text[end:]
    assert 'x="12.2"' in text

    diags = await diagnostics(client, uri, 51)
    stray_end = text.index("/>", at) + 2
    harmful = [d for d in diags if d.code == "harmful"]
    assert [d.range for d in harmful] == [span_range(text, at, stray_end, enc)]
    assert all(d.data["version"] == 51 for d in harmful)
    versions = [p.version for p in client.published if p.uri == uri]
    assert set(versions) == {51}
    # Never the same set twice for one version (a second one only adds purity findings).
    sets = [repr(p.diagnostics) for p in client.published if p.uri == uri]
    assert len(sets) == len(set(sets))


async def test_malformed_and_non_svg_documents_give_one_error(client: LanguageClient,
                                                             tmp_path):
    enc = encoding_of(client)
    bad = f'<svg xmlns="http://www.w3.org/2000/svg">\n<title>{EMOJI}</title><rect>\n</svg>\n'
    with pytest.raises(etree.XMLSyntaxError) as lx:
        etree.fromstring(bad.encode("utf-8"))
    uri = open_doc(client, tmp_path / "bad.svg", bad)
    diags = await diagnostics(client, uri, 1)
    assert len(diags) == 1
    [d] = diags
    assert d.severity == types.DiagnosticSeverity.Error
    assert lx.value.lineno - 1 == 2  # libxml2 notices at </svg> ...
    # ... but the error belongs on the element left open: <rect on line 1.
    rect_at = bad.index("<rect")
    assert d.range == span_range(bad, rect_at, rect_at + len("<rect"), enc)
    assert d.message.startswith(NOT_ANALYSED + "malformed XML")

    html = "<html><body>not a picture</body></html>\n"
    uri2 = open_doc(client, tmp_path / "page.svg", html)
    diags = await diagnostics(client, uri2, 1)
    assert len(diags) == 1 and diags[0].severity == types.DiagnosticSeverity.Error
    assert "not an SVG" in diags[0].message
    assert diags[0].range.start == position(html, 0, enc)

    # The server is still alive and scoring after bad input.
    good = (EXAMPLES / "billiards.svg").read_text(encoding="utf-8")
    uri3 = open_doc(client, tmp_path / "good.svg", good)
    diags = await diagnostics(client, uri3, 1)
    assert not [d for d in diags if d.severity == types.DiagnosticSeverity.Error]


NOT_ANALYSED = "svgloo did not analyse this document: "


def refused_documents() -> dict[str, tuple[str, str]]:
    """Documents the engine refuses, each with what its message must say; a comment
    before the root holds "<svg" to show the Warning goes on the real root tag."""
    from svgloo.engine.limits import Limits

    limits = Limits()
    head = ('<?xml version="1.0"?>\n<!-- drawn from <svg> sources -->\n'
            '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'
            ' viewBox="0 0 10 10">\n')
    bomb = ['<defs><rect id="l0" width="1" height="1"/>']
    for i in range(1, 8):
        bomb.append(f'<g id="l{i}">' + f'<use xlink:href="#l{i - 1}"/>' * 10 + "</g>")
    bomb.append('</defs><use xlink:href="#l7"/>')
    return {
        # over the size limit: the case that once gave no diagnostics at all
        "big.svg": (head + "<!--" + "x" * limits.max_inflated_bytes + "-->\n</svg>\n",
                    f"larger than {limits.max_inflated_bytes} bytes"),
        "many.svg": (head + "<g/>" * limits.max_elements + "</svg>\n",
                     f"the limit is {limits.max_elements}"),
        "deep.svg": (head + "<g>" * 300 + "</g>" * 300 + "</svg>\n",
                     f"more than {limits.max_nesting_depth} levels deep (svgloo's nesting "
                     "limit)"),
        "units.svg": (head + '<rect width="1" height="1"/>' * (limits.max_units + 1)
                      + "</svg>\n", f"the limit is {limits.max_units}"),
        "bomb.svg": (head + "".join(bomb) + "</svg>\n", "<use> references expand"),
    }


async def test_refused_documents_get_one_warning_saying_why(client: LanguageClient, tmp_path):
    enc = encoding_of(client)
    for name, (text, why) in refused_documents().items():
        uri = open_doc(client, tmp_path / name, text)
        diags = await diagnostics(client, uri, 1)
        assert len(diags) == 1, (name, diags)
        [d] = diags
        assert d.severity == types.DiagnosticSeverity.Warning, name
        assert d.code == "LimitError" and d.source == "svgloo"
        assert d.message.startswith(NOT_ANALYSED) and why in d.message, (name, d.message)
        assert "XML_PARSE_HUGE" not in d.message
        root = text.index("<svg xmlns")
        assert d.range == span_range(text, root, root + len("<svg"), enc), name
        client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))


async def test_configuration_change_rescores(client: LanguageClient, tmp_path):
    path, dirty, clean, at = stray_fixture(tmp_path)
    uri = open_doc(client, path, dirty)
    diags = await diagnostics(client, uri, 1)
    assert [d.code for d in diags if d.code == "harmful"] == ["harmful"]

    client.published.clear()
    client.set_configuration({"useDaemon": False, "diagnostics": {"harmful": False}},
                             section="svgloo")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    diags = await diagnostics(client, uri, 1)
    assert not [d for d in diags if d.code == "harmful"]
    client.set_configuration({"useDaemon": False}, section="svgloo")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))


async def test_one_line_svg_offers_the_fixes_at_the_cursor(client: LanguageClient, tmp_path):
    """An exported icon is one line: clients send every diagnostic of that line, but the
    fixes offered are those of the diagnostics under the cursor, the preferred first."""
    path, dirty, clean, at = stray_fixture(tmp_path)
    assert "\n" not in dirty.rstrip("\n")
    enc = encoding_of(client)
    uri = open_doc(client, path, dirty)
    diags = await diagnostics(client, uri, 1)
    assert len(diags) >= 2, diags  # the stray Warning and other units' hints
    cursor = position(dirty, at + 3, enc)
    got = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=cursor, end=cursor),
        context=types.CodeActionContext(diagnostics=diags)))
    got = [a for a in got or [] if isinstance(a, types.CodeAction)]
    assert got and got[0].title == "Remove rect" and got[0].is_preferred
    stray = span_range(dirty, at, at + len(STRAY), enc)
    for action in got:
        assert all(d.range == stray for d in action.diagnostics), action.title


TWINS = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
         '<rect x="4" y="4" width="8" height="8" fill="#c00"/>'
         '<rect x="4" y="4" width="8" height="8" fill="#c00"/>{extra}'
         '<path d="M1 1h2v2h-2z" fill="#0a0"/></svg>')
GHOST = '<circle cx="8" cy="8" r="3" fill="blue" opacity="0"/>'


async def test_bulk_fix_keeps_the_picture(client: LanguageClient, tmp_path):
    """Two identical squares on top of each other are each without a footprint; removing
    both would erase the square, so the engine's proof keeps one of them, and only the
    units it proved removable get the "no visible effect" hint and the bulk fix."""
    from svgloo.engine.rendering.render import render_rgba

    enc = encoding_of(client)
    # Twins only: one of the two is proven removable; one unit needs no bulk fix.
    twins = TWINS.format(extra="")
    uri = open_doc(client, tmp_path / "twins.svg", twins)
    diags = await diagnostics(client, uri, 1)
    hidden = [d for d in diags if d.code == "invisible"]
    assert len(hidden) == 1
    assert hidden[0].message.endswith(": no visible effect: safe to remove")
    [proof] = hidden[0].related_information   # the proof, in the engine's words
    assert f"{PROOF_TOLERANCE}/255" in proof.message and "resvg" in proof.message
    titles = [a.title for a in await code_actions(client, uri, hidden[0])]
    assert titles and not [t for t in titles if "no visible effect" in t], titles

    # Twins and a transparent circle: one twin and the circle, proven together.
    text = TWINS.format(extra=GHOST)
    uri = open_doc(client, tmp_path / "twins-ghost.svg", text)
    diags = await diagnostics(client, uri, 1)
    hidden = [d for d in diags if d.code == "invisible"]
    assert len(hidden) == 2
    [bulk] = [a for a in await code_actions(client, uri, hidden[1])
              if "no visible effect" in a.title]
    assert bulk.title == "Remove all elements with no visible effect (2, proven together)"
    fixed = apply_workspace_edit(text, bulk.edit, uri, 1, enc)
    assert GHOST not in fixed and fixed.count("<rect") == 1
    assert np.array_equal(render_rgba(fixed, 192), render_rgba(text, 192))


async def test_nothing_is_offered_for_deletion_before_the_proof(client: LanguageClient,
                                                                   tmp_path):
    """The first publication comes from the scoring without the removal proof: one hint
    says the check is running and no unit is offered for deletion; the publication for
    the same version after the proof has the proven "no visible effect" hints and the
    bulk fix."""
    text = TWINS.format(extra=GHOST)
    uri = open_doc(client, tmp_path / "early.svg", text)
    first = await diagnostics(client, uri, 1, proven=False)
    [checking] = [d for d in first if d.code == CHECKING]
    assert "removal check is running" in checking.message and checking.data is None
    assert not [d for d in first if d.code == "invisible"]
    assert await code_actions(client, uri, checking) == []
    # (the mostly hidden twin keeps its own Remove, as before: a finding, not the proof's)
    titles = [a.title for d in first for a in await code_actions(client, uri, d)]
    assert not [t for t in titles if "no visible effect" in t]
    later = await diagnostics(client, uri, 1)
    assert not [d for d in later if d.code == CHECKING]
    assert len([d for d in later if d.code == "invisible"]) == 2


FINDINGS = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">\n'
            '<rect id="under" x="10" y="0" width="40" height="100" fill="#c00"/>\n'
            '<rect id="cover" x="10" y="0" width="40" height="98" fill="#06c"/>\n'
            '<rect id="dot" x="80" y="80" width="0.5" height="0.5" fill="#000"/>\n'
            '</svg>\n')


async def test_findings_without_a_reference(client: LanguageClient, tmp_path):
    """No reference: nothing is harmful, but a speck and a mostly hidden element are
    reported (Information, Hint) with their numbers, each with its removal fix."""
    enc = encoding_of(client)
    uri = open_doc(client, tmp_path / "findings.svg", FINDINGS)
    diags = await diagnostics(client, uri, 1)
    assert not [d for d in diags if d.severity in (types.DiagnosticSeverity.Error,
                                                   types.DiagnosticSeverity.Warning)], diags
    by_code = {d.code: d for d in diags}
    speck, hidden = by_code["speck"], by_code["mostly_hidden"]
    dot = FINDINGS.index('<rect id="dot"')
    assert speck.range == span_range(FINDINGS, dot, FINDINGS.index("/>", dot) + 2, enc)
    assert speck.severity == types.DiagnosticSeverity.Information
    assert speck.message.startswith("rect#dot: a speck, visible on only ")
    assert "threshold" in speck.related_information[0].message
    under = FINDINGS.index('<rect id="under"')
    assert hidden.range.start == position(FINDINGS, under, enc)
    assert hidden.severity == types.DiagnosticSeverity.Hint
    # 98 of 100 rows are covered; at 192 px the partly covered rows and the edges'
    # anti-aliasing count as seen, so the share is between the threshold and 98%.
    share = float(re.search(r"(\d+\.\d)%", hidden.related_information[0].message).group(1))
    assert 95.0 <= share <= 98.0, hidden.related_information
    assert f"{round(share)}% hidden behind later shapes" in hidden.message
    [fix] = [a for a in await code_actions(client, uri, speck)
             if a.title == "Remove rect#dot"]
    fixed = apply_workspace_edit(FINDINGS, fix.edit, uri, 1, enc)
    assert 'id="dot"' not in fixed and fixed.count("<rect") == 2


GRAIN = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">\n'
         '<path id="grain" fill="#000" d="M10 10h60v60h-60z M80 80h.5v.5h-.5z '
         'M90 10h.5v.5h-.5z M5 90h.5v.5h-.5z"/>\n</svg>\n')


async def test_specks_of_one_path_are_one_diagnostic_with_one_proven_fix(
        client: LanguageClient, tmp_path):
    """Three specks in one path: one diagnostic listing each subpath as related
    information, and one fix removing all three, proven by the engine's renders."""
    from svgloo.engine.reading.document import parse_document
    from svgloo.engine.reading.units import extract_units, text_without

    enc = encoding_of(client)
    uri = open_doc(client, tmp_path / "grain.svg", GRAIN)
    diags = await diagnostics(client, uri, 1)
    [speck] = diags
    assert speck.code == "speck" and speck.message.startswith('3 specks in path#grain')
    specks = ["M80 80h.5v.5h-.5z", "M90 10h.5v.5h-.5z", "M5 90h.5v.5h-.5z"]
    assert [r.location.range for r in speck.related_information] == [
        span_range(GRAIN, GRAIN.index(s), GRAIN.index(s) + len(s), enc) for s in specks]
    [fix] = [a for a in await code_actions(client, uri, speck) if "specks" in a.title]
    assert fix.title.startswith("Remove these 3 specks (proven by rendering")
    fixed = apply_workspace_edit(GRAIN, fix.edit, uri, 1, enc)
    us = extract_units(parse_document(GRAIN, "grain.svg"))
    assert fixed == text_without(us, {1, 2, 3})
    assert "M10 10h60v60h-60z" in fixed and not any(s in fixed for s in specks)
