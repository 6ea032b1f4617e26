"""Emacs + eglot, the real client, in batch mode (runs where `emacs` and eglot are
installed; Debian: emacs-nox and elpa-eglot on Emacs 28, eglot is built in from 29).

The shipped packaging/emacs/svgloo-eglot.el maps .svg to nxml-mode and starts `svgloo lsp`;
the stray rectangle gets one Warning on its exact range."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from conftest import EXAMPLES, REPO
from test_lsp import span_range

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

CONFIG = REPO / "packaging" / "emacs" / "svgloo-eglot.el"
DRIVER = REPO / "tests" / "lsp" / "eglot_driver.el"


def eglot_available() -> bool:
    if not shutil.which("emacs"):
        return False
    probe = subprocess.run(["emacs", "--batch", "--eval",
                            "(progn (require 'package) (package-initialize) (require 'eglot))"],
                           capture_output=True, timeout=60)
    return probe.returncode == 0


@pytest.mark.skipif(not shutil.which("emacs"), reason="emacs is not installed")
def test_eglot_shows_the_stray_warning_on_its_range(tmp_path):
    if not eglot_available():
        pytest.skip("eglot is not available to this Emacs")
    dirty = (EXAMPLES / "billiards-with-stray.svg").read_text(encoding="utf-8")
    at = dirty.index('<rect id="stray"')  # a one-line file, as exported icons are
    stray_end = dirty.index(">", at) + 1
    target = tmp_path / "stray.svg"
    target.write_text(dirty, encoding="utf-8")
    proc = subprocess.run(
        ["emacs", "--batch", "-l", str(DRIVER), str(CONFIG), sys.executable,
         str(EXAMPLES / "billiards.svg"), str(target)],
        capture_output=True, text=True, timeout=240, cwd=tmp_path)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("SVGLOO-DIAGNOSTICS ")]
    assert proc.returncode == 0 and lines, proc.stdout[-2000:] + proc.stderr[-3000:]
    params = json.loads(lines[0].split(" ", 1)[1])
    warnings = [d for d in params["diagnostics"] if d.get("severity") == 2]
    assert len(warnings) == 1, params
    want = span_range(dirty, at, stray_end, "utf-16")
    got = warnings[0]["range"]
    assert (got["start"]["line"], got["start"]["character"]) == (want.start.line,
                                                                  want.start.character)
    assert (got["end"]["line"], got["end"]["character"]) == (want.end.line, want.end.character)
    assert not [d for d in params["diagnostics"] if d.get("severity") == 1], params
