"""Every front end names a unit the same way (engine/describe.py): the CLI table, the
editor's diagnostic messages and quick fixes, and the viewer's table cell, for an element
with an id, one without, and a subpath (counted from 1 everywhere)."""

from __future__ import annotations

import os
import subprocess
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

from svgloo.engine.scoring.score import ScoreSettings, score_file

# Three units with no visible effect (outside the viewBox), so the editor has a diagnostic
# for each: an element with an id, one without, and the second subpath of a path.
SVG = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">\n'
       '<rect width="100" height="100" fill="#9cf"/>\n'
       '<rect id="ghost" x="200" y="200" width="5" height="5"/>\n'
       '<circle cx="-50" cy="-50" r="3"/>\n'
       '<path id="p" d="M10 10h30v30h-30z M300 300h2v2h-2z" fill="#c00"/>\n'
       '</svg>\n')
NAMES = {"rect#ghost", "circle", "path#p subpath 2"}


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    path = tmp_path_factory.mktemp("names") / "ghosts.svg"
    path.write_text(SVG, encoding="utf-8")
    return path, score_file(str(path), ScoreSettings(backbone="pixel", size=64)).result


def test_the_engine_names_the_three_units(scored):
    _, result = scored
    from svgloo.engine.wording.describe import describe_unit

    invisible = [describe_unit(r) for r in result["units"] if not r["visible"]]
    assert set(invisible) == NAMES and len(invisible) == 3


def test_the_cli_table_uses_the_names(scored):
    path, _ = scored
    proc = subprocess.run([sys.executable, "-m", "svgloo", "score", str(path), "--backbone",
                           "pixel", "--size", "64"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    for name in NAMES:
        assert f" {name} " in proc.stdout, (name, proc.stdout)
    assert "path#p subpath 1 " in proc.stdout  # the visible first subpath, from 1 as well


def test_the_editor_messages_and_fixes_use_the_names(scored):
    from svgloo.lsp.actions import current_units, remove_unit_action
    from svgloo.lsp.convert import DiagnosticOptions, LineIndex, score_diagnostics

    path, result = scored
    lines = LineIndex(SVG)
    diagnostics = [d for d in score_diagnostics(result, lines, DiagnosticOptions(), 1)
                   if d.code == "invisible"]
    named = {d.message.split(": no visible effect")[0] for d in diagnostics}
    assert named == NAMES
    us = current_units(SVG, str(path))
    titles = {remove_unit_action("file:///x.svg", 1, lines, us, d).title for d in diagnostics}
    assert titles == {f"Remove {name}" for name in NAMES}


def test_the_viewer_cell_uses_the_names(scored, qtbot):
    pytest.importorskip("PyQt6.QtWidgets")
    from svgloo.qt_viewer.models import COLUMNS, UnitTableModel

    _, result = scored
    model = UnitTableModel()
    model.set_rows(result["units"])
    column = COLUMNS.index("unit")
    cells = {model.data(model.index(i, column)) for i, r in enumerate(result["units"])
             if not r["visible"]}
    assert cells == NAMES
