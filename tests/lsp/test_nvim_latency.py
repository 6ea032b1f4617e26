"""Neovim end to end: colour edits on a 122-unit emoji, each answered with diagnostics for
its own version, in-process and through the daemon. The driver records edit-to-diagnostics
times; ``SVGLOO_NVIM_TIMES=path`` writes their medians out (README's performance table).
No timing is asserted: a loaded machine makes them slow, not wrong."""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import CORPUS
from test_nvim import byte_col, errors_shown, nvim, record_times, run_nvim, step  # noqa: F401

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

EMOJI = CORPUS / "noto" / "emoji_u1f4b6.svg"  # 122 units
EDITS = 6


def colour_edits(text: str) -> list[dict]:
    """Edits of one colour in the middle of the file, each to a new value."""
    found = list(re.finditer(r"fill[=:]\"?#([0-9A-Fa-f]{6})", text))
    at = found[len(found) // 2].start(1)
    line, col = byte_col(text, at)
    return [{"kind": "edit", "name": f"edit {i}", "line": line, "col": col, "end_col": col + 6,
             "text": f"{(i + 1) * 2654435761 % 0xFFFFFF:06x}"} for i in range(EDITS)]


@pytest.mark.parametrize("mode", ["in-process", "daemon"])
def test_every_colour_edit_gets_its_versions_diagnostics(nvim, tmp_path, mode):  # noqa: F811
    text = EMOJI.read_text()
    path = tmp_path / EMOJI.name
    path.write_text(text)
    env = {}
    if mode == "daemon":
        env = {"SVGLOO_SOCKET": str(tmp_path / "d.sock"),
               "SVGLOO_CACHE_DIR": str(tmp_path / "cache")}
    home = Path(tempfile.mkdtemp(prefix="svgloo-nvl-"))
    try:
        result = run_nvim(nvim, home, {"useDaemon": mode == "daemon"},
                          [{"kind": "open", "name": "open", "path": str(path)}]
                          + colour_edits(text), extra_env=env)
    finally:
        if env:
            subprocess.run([sys.executable, "-m", "svgloo", "daemon", "stop", "--socket",
                            env["SVGLOO_SOCKET"]], env={**os.environ, **env}, timeout=60,
                           capture_output=True)
        shutil.rmtree(home, ignore_errors=True)
    assert not errors_shown(result), errors_shown(result)
    times = [step(result, f"edit {i}")["ms"] for i in range(EDITS)]
    assert all(isinstance(t, (int, float)) for t in times), times  # each version answered
    # The first edit after opening may meet the purity analysis of the opening.
    record_times({f"{mode}: colour edit to diagnostics, 122-unit emoji (median)":
                  statistics.median(times[1:])})
