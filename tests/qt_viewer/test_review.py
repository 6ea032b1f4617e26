"""The review experience (pytest-qt, offscreen): the picture is re-rendered crisply at the
zoom and stays aligned with the analysis raster, one selection drives table, concept list
and picture, a revert to the last good bytes clears the failure banner, the filter
survives Remove then Undo, and findings / proven bulk removal."""

from __future__ import annotations

import os
import shutil

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest

pytest.importorskip("PyQt6.QtWidgets")
pytest.importorskip("pytestqt")

from conftest import EXAMPLES

CORPUS_FILE = "twemoji/1f307.svg"
WAIT_MS = 120_000


@pytest.fixture
def make_window(qtbot, tmp_path):
    from PyQt6.QtCore import QSettings
    from PyQt6.QtWidgets import QMessageBox

    from svgloo.qt_viewer.window import ViewerWindow

    store = QSettings(str(tmp_path / "viewer.ini"), QSettings.Format.IniFormat)
    made = []

    def make(path, **kw):
        kw.setdefault("concepts", False)
        kw.setdefault("debounce_ms", 150)
        w = ViewerWindow(settings_store=store, **kw)
        w.ask_unsaved = lambda: QMessageBox.StandardButton.Discard  # no dialog at teardown
        qtbot.addWidget(w)
        w.resize(1280, 800)
        w.show()
        made.append(w)
        wait = w.conceptsReady if kw["concepts"] else w.analysisReady
        with qtbot.waitSignal(wait, timeout=WAIT_MS):
            w.open_file(path)
        qtbot.waitUntil(lambda: w.job is None, timeout=WAIT_MS)
        return w

    yield make
    for w in made:
        w.shutdown()


@pytest.fixture
def svg_copy(tmp_path, corpus_dir):
    p = tmp_path / "picture.svg"
    shutil.copyfile(corpus_dir / CORPUS_FILE, p)
    return p


def qimage_array(img) -> np.ndarray:
    from PyQt6.QtGui import QImage

    img = img.convertToFormat(QImage.Format.Format_RGB888)
    ptr = img.constBits()
    ptr.setsize(img.sizeInBytes())
    rows = np.frombuffer(ptr, np.uint8).reshape(img.height(), img.bytesPerLine())
    return rows[:, : img.width() * 3].reshape(img.height(), img.width(), 3).copy()


def test_zoom_rerenders_crisply_and_stays_aligned(make_window, svg_copy):
    from dataclasses import replace

    from svgloo.engine.rendering.render import over_white, render_rgba

    w = make_window(svg_copy)
    view = w.view
    assert view.render_crisp()
    view.zoom_by(4.0)
    assert view.render_crisp()
    canvas, (y0, y1, x0, x1) = view.crisp_request
    size = view.image_size()
    assert canvas == round(size * view.zoom() * view.devicePixelRatioF()) > 4 * size
    shown = qimage_array(view.crisp_image)
    assert shown.shape == (y1 - y0, x1 - x0, 3)

    # the same pixels as an independent render of the whole picture at that scale
    limits = replace(w.base_settings.limits, max_render_size=canvas)
    reference = over_white(render_rgba(w.analysis.run.doc.text, canvas, limits))[y0:y1, x0:x1]
    err_crisp = np.abs(shown.astype(int) - reference).mean()
    assert np.abs(shown.astype(int) - reference).max() <= 16 and err_crisp < 0.5
    # ... and sharp: the analysis raster blown up (what the view showed before) is not
    full = w.analysis.run.loo.full
    ys = (np.arange(y0, y1) * size // canvas).clip(0, size - 1)
    xs = (np.arange(x0, x1) * size // canvas).clip(0, size - 1)
    blown_up = full[ys][:, xs]
    assert np.abs(blown_up.astype(int) - reference).mean() > 4 * err_crisp + 0.5

    # placed where the analysis raster is: scene point (x, y) of the crisp layer is image
    # pixel (x, y), so footprints, boxes and clicks line up at this zoom
    k = canvas / size
    assert view.crisp_item.scale() == pytest.approx(1 / k)
    assert (view.crisp_item.pos().x(), view.crisp_item.pos().y()) == pytest.approx((x0 / k,
                                                                                  y0 / k))
    iy = np.arange(int(np.ceil(y0 / k)), int((y1 - 1) / k))
    ix = np.arange(int(np.ceil(x0 / k)), int((x1 - 1) / k))
    sample = shown[((iy + 0.5) * k - y0).astype(int)][:, ((ix + 0.5) * k - x0).astype(int)]
    aligned = np.abs(sample.astype(int) - full[iy][:, ix]).mean()
    shifted = np.abs(sample.astype(int) - full[iy + 1][:, ix + 1]).mean()
    assert aligned < shifted / 2


@pytest.mark.slow
def test_concept_and_unit_selection_stay_in_sync(make_window, svg_copy):
    from svgloo.qt_viewer.images import heat_overlay

    w = make_window(svg_copy, concepts=True)
    if w.structure is None or not w.structure.result["concepts"]:
        pytest.skip(w.concepts_status.text())
    run = w.analysis.run
    unit = max(w.model.rows, key=lambda r: r["footprint_pixels"])["index"]

    def overlay():
        return qimage_array(w.view.overlay_image)

    w.select_unit(unit)
    assert w.selection == ("unit", unit) and w.concept_list.currentRow() == -1
    unit_overlay = overlay()
    assert np.array_equal(unit_overlay, heat_overlay(run.footprint(unit))[..., :3])

    w.tabs.setCurrentIndex(1)
    w.concept_list.setCurrentRow(0)
    assert w.selection == ("concept", 0) and w.selected_concept() == 0
    assert w.selected_unit() is None  # the table no longer claims a unit
    assert not w.table.selectionModel().hasSelection()
    heat = np.asarray(w.structure.heatmaps[0], np.float32)
    assert np.array_equal(overlay(), heat_overlay(heat)[..., :3])

    w.tabs.setCurrentIndex(0)  # back to Units: still the concept, nothing else highlighted
    assert w.selection == ("concept", 0) and w.selected_unit() is None
    w.select_unit(unit)
    assert w.selection == ("unit", unit) and w.concept_list.currentRow() == -1
    assert np.array_equal(overlay(), unit_overlay)
    w.select_at_pixel(-5, -5)  # outside the picture: nothing changes
    assert w.selection == ("unit", unit)


@pytest.mark.slow
def test_revert_to_last_good_bytes_clears_the_failure(make_window, svg_copy, qtbot):
    good = svg_copy.read_bytes()
    w = make_window(svg_copy)
    count = w.score_count
    with qtbot.waitSignal(w.errorShown, timeout=WAIT_MS):
        svg_copy.write_bytes(good.replace(b"</svg>", b"<g></svg>"))
    qtbot.waitUntil(lambda: w.job is None, timeout=WAIT_MS)
    assert w.error_banner.isVisible() and w.status_label.text() == "scoring failed"
    svg_copy.write_bytes(good)  # the editor's undo
    qtbot.waitUntil(lambda: not w.error_banner.isVisible(), timeout=WAIT_MS)
    assert w.status_label.text().startswith("picture.svg:")
    assert w.score_count == count  # the last good analysis is valid again: no re-score
    assert w.analysis.raw == good


@pytest.mark.slow
def test_harmful_filter_survives_remove_then_undo(make_window, tmp_path, qtbot):
    svg = tmp_path / "stray.svg"
    shutil.copyfile(EXAMPLES / "billiards-with-stray.svg", svg)
    original = svg.read_bytes()
    w = make_window(svg, reference=str(EXAMPLES / "billiards.svg"))
    w.filter_combo.setCurrentIndex(w.filter_combo.findData("harmful"))
    harmful = [r["index"] for r in w.model.rows if r["verdict"] == "harmful"]
    assert harmful and w.proxy.rowCount() == len(harmful)
    w.select_unit(harmful[0])
    assert w.remove_selected_unit()
    qtbot.waitUntil(lambda: w.job is None and w.analysis.raw != original, timeout=WAIT_MS)
    assert svg.read_bytes() == original  # in memory until saved
    assert w.filter_combo.currentData() == "harmful"
    assert w.undo()
    qtbot.waitUntil(lambda: w.job is None and w.analysis.raw == original, timeout=WAIT_MS)
    assert w.filter_combo.currentData() == "harmful" and w.proxy.mode == "harmful"
    assert w.proxy.rowCount() == len(harmful)


FINDINGS_SVG = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 384 384">
<rect x="20" y="20" width="344" height="344" fill="#2b6cb0"/>
<rect x="80" y="80" width="110" height="110" fill="#f6ad55"/>
<rect x="80" y="80" width="110" height="110" fill="#f6ad55"/>
<circle cx="270" cy="270" r="40" fill="#e53e3e" opacity="0"/>
<rect x="230" y="80" width="80" height="80" fill="#68d391"/>
<rect x="300" y="300" width="2" height="2" fill="#000"/>
</svg>
"""


@pytest.mark.slow
def test_findings_and_proven_bulk_removal(make_window, tmp_path, qtbot):
    from svgloo.engine.reading.document import parse_document
    from svgloo.engine.rendering.render import over_white, render_rgba
    from svgloo.engine.reading.units import extract_units, text_without

    svg = tmp_path / "findings.svg"
    svg.write_text(FINDINGS_SVG)
    original = svg.read_bytes()
    w = make_window(svg)
    rows = w.model.rows
    flagged = [r for r in rows if r.get("findings")]
    assert any(f["kind"] == "speck" for r in flagged for f in r["findings"])
    from svgloo.qt_viewer.models import flags_text

    assert "speck" in flags_text(next(r for r in flagged if r["index"] == 5))
    assert len(w.view.marker_items) == len(w.finding_boxes()) == len(flagged)  # <= 12
    w.filter_combo.setCurrentIndex(w.filter_combo.findData("findings"))
    assert w.proxy.rowCount() == len(flagged)

    # the duplicate squares (1, 2) each have no footprint at 384 px, and neither has the
    # transparent circle (3); but at the icon size the proof checks next (64 px) their
    # edges fall between pixels, where one square drawn twice is darker than once: only
    # the circle is proven, and only what the engine proved is offered
    rows_by_index = {r["index"]: r for r in rows}
    assert not rows_by_index[1]["visible"] and not rows_by_index[2]["visible"]
    assert w.removal_candidates() == [3]
    assert "at 64 px" in rows_by_index[1]["removal"]["reason"]
    with qtbot.waitSignal(w.removalProven, timeout=WAIT_MS) as proven:
        assert w.remove_proven_removable()  # the proof runs on a worker thread
    assert proven.args == [True]
    check = w.last_removal
    assert check.removable == (3,)
    edited = w.session.text
    us = extract_units(parse_document(original, str(svg)))
    assert edited == text_without(us, set(check.removable))  # the engine's edit
    # independently: the picture is unchanged
    assert np.array_equal(over_white(render_rgba(edited, 384)),
                          over_white(render_rgba(FINDINGS_SVG, 384)))
    qtbot.waitUntil(lambda: w.job is None and w.analysis.run.doc.text == edited,
                    timeout=WAIT_MS)
    assert svg.read_bytes() == original and w.save() and svg.read_text() == edited
    assert w.undo() and w.session.text == original.decode()


def test_the_viewer_scores_with_the_removal_proof_whatever_its_base_settings(make_window,
                                                                            tmp_path):
    """Remove and "Remove all proven-removable" act on the removal proof: the viewer asks
    for it even when the settings it was given would score without it
    (docs/two-speeds.md), so what it offers is proven, never "unchecked"."""
    from svgloo.engine.scoring.score import ScoreSettings

    svg = tmp_path / "findings.svg"
    svg.write_text(FINDINGS_SVG)
    w = make_window(svg, base_settings=ScoreSettings(backbone="pixel", prove=False))
    assert w.score_settings().prove is True
    statuses = {r["index"]: r["removal"]["status"] for r in w.model.rows}
    assert "unchecked" not in statuses.values()
    assert statuses[3] == "proven" and w.removal_candidates() == [3]
