"""Edit -> review -> Save in the viewer (pytest-qt, offscreen): the close prompt, the removal
proof off the window's thread, finding marks that follow the table, blank cells that say
why, and the divider that stays put."""

from __future__ import annotations

import os
import shutil
import threading

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest

pytest.importorskip("PyQt6.QtWidgets")
pytest.importorskip("pytestqt")

from svgloo.qt_viewer.marks import MAX_OUTLINES, PAD, density_rgba, finding_marks

CORPUS_FILE = "twemoji/1f307.svg"
WAIT_MS = 120_000


@pytest.fixture
def window(qtbot, tmp_path, corpus_dir):
    from PyQt6.QtCore import QSettings
    from PyQt6.QtWidgets import QMessageBox

    from svgloo.qt_viewer.window import ViewerWindow

    svg = tmp_path / "picture.svg"
    shutil.copyfile(corpus_dir / CORPUS_FILE, svg)
    store = QSettings(str(tmp_path / "viewer.ini"), QSettings.Format.IniFormat)
    w = ViewerWindow(settings_store=store, concepts=False, debounce_ms=150)
    w.answers = []  # what the close prompt was asked, and answers from the test

    def ask():
        w.answers.append("asked")
        return w.answer

    w.answer = QMessageBox.StandardButton.Discard
    w.ask_unsaved = ask
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    with qtbot.waitSignal(w.analysisReady, timeout=WAIT_MS):
        w.open_file(svg)
    qtbot.waitUntil(lambda: w.job is None, timeout=WAIT_MS)
    yield w, svg
    w.answer = QMessageBox.StandardButton.Discard
    w.shutdown()


@pytest.mark.slow
def test_closing_with_unsaved_edits_asks_save_discard_or_cancel(window, qtbot):
    from PyQt6.QtWidgets import QMessageBox

    w, svg = window
    original = svg.read_bytes()
    assert w.close() and w.answers == []  # nothing edited: no question
    w.show()
    assert w.remove_unit(1)
    qtbot.waitUntil(lambda: w.job is None, timeout=WAIT_MS)
    edited = w.session.current_bytes()

    w.answer = QMessageBox.StandardButton.Cancel
    assert not w.close()
    assert w.isVisible() and w.isWindowModified() and svg.read_bytes() == original
    w.answer = QMessageBox.StandardButton.Save
    assert w.close() and not w.isVisible()
    assert svg.read_bytes() == edited != original

    # Discard: closes, writes nothing
    w.show()
    assert w.undo() and w.isWindowModified()
    w.answer = QMessageBox.StandardButton.Discard
    assert w.close() and svg.read_bytes() == edited
    assert w.answers == ["asked"] * 3
    # opening a file asks too: Cancel keeps the edits and the file open
    w.show()
    w.answer = QMessageBox.StandardButton.Cancel
    assert w.session.modified and not w.open_file(svg)
    assert w.answers == ["asked"] * 4 and w.session.modified


@pytest.mark.slow
def test_the_removal_proof_runs_off_the_window_thread(window, qtbot, monkeypatch):
    import svgloo.engine.proving.removal as removal

    w, svg = window
    seen = []
    real = removal.check_removal

    def recording(*args, **kw):
        seen.append(threading.current_thread() is threading.main_thread())
        return real(*args, **kw)

    monkeypatch.setattr(removal, "check_removal", recording)
    monkeypatch.setattr(w, "removal_candidates", lambda: [0])
    with qtbot.waitSignal(w.removalProven, timeout=WAIT_MS):
        assert w.remove_proven_removable()
        assert w.proof_job is not None  # started, the window goes on
    assert seen == [False]
    qtbot.waitUntil(lambda: w.proof_job is None, timeout=WAIT_MS)


def test_marks_follow_the_selection_and_the_filter():
    boxes = {k: (k, k + 2, 2 * k, 2 * k + 3) for k in range(168)}
    # 168 findings shown: no outlines, one density map covering every box
    many = finding_marks(boxes, list(range(168)), None, 400)
    assert many.outlines == [] and many.units == 168
    expected = np.zeros((400, 400), np.int32)
    for y0, y1, x0, x1 in boxes.values():
        expected[max(0, y0 - PAD):y1 + PAD, max(0, x0 - PAD):x1 + PAD] += 1
    assert np.array_equal(many.density, expected)
    rgba = density_rgba(many.density, (181, 23, 158))
    assert (rgba[..., 3] > 0).sum() == (expected > 0).sum() and rgba[..., 3].max() == 190
    # a filter that shows few: their outlines; a selection: its own only
    few = finding_marks(boxes, [3, 500, 7], None, 400)
    assert few.outlines == [boxes[3], boxes[7]] and few.density is None
    assert finding_marks(boxes, list(range(168)), 5, 400).outlines == [boxes[5]]
    assert finding_marks(boxes, list(range(168)), 999, 400).outlines == []
    assert len(finding_marks(boxes, list(range(MAX_OUTLINES)), None, 400).outlines) \
        == MAX_OUTLINES


@pytest.mark.slow
def test_blank_concept_cells_say_why_and_the_divider_stays(window, qtbot):
    from PyQt6.QtCore import Qt

    from svgloo.qt_viewer.models import CONCEPT_COLUMN

    w, svg = window
    model = w.model
    for col in (CONCEPT_COLUMN - 1, CONCEPT_COLUMN):  # purity, concept
        tip = model.data(model.index(0, col), Qt.ItemDataRole.ToolTipRole)
        assert tip == "no concepts: they are off (--no-concepts)"
    model.concept_note = ""
    model.rows[0].update(primary=None, purity=None)
    tip = model.data(model.index(0, CONCEPT_COLUMN), Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("not a concept's element")

    w.main_split.setSizes([800, 468])
    qtbot.wait(50)
    w._remember_split()
    chosen = w.main_split.sizes()
    assert w.remove_unit(0)
    qtbot.waitUntil(lambda: w.job is None and w.analysis.run.doc.text == w.session.text,
                    timeout=WAIT_MS)
    qtbot.wait(50)
    assert w.main_split.sizes() == chosen
