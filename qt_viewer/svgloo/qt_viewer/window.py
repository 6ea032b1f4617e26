"""The svgloo viewer's main window."""

from __future__ import annotations

import io
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PyQt6.QtCore import QItemSelectionModel, QSettings, Qt, QTimer, pyqtSignal
from PyQt6.QtGui import (QAction, QColor, QFont, QKeySequence, QPixmap, QTextCharFormat,
                         QTextCursor, QUndoCommand, QUndoStack)
from PyQt6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QHBoxLayout, QHeaderView, QLabel,
                             QLineEdit, QListWidget, QMainWindow, QMessageBox, QPlainTextEdit,
                             QProgressBar, QSizePolicy,
                             QPushButton, QSplitter, QTableView, QTabWidget, QTextEdit,
                             QToolBar, QVBoxLayout, QWidget, QAbstractItemView, QScrollArea)

from svgloo.engine.leave_one_out.loo import CHANGED_THRESHOLD

from .edits import FileSession
from .images import ImageView, heat_overlay, nonzero_box
from .marks import MAX_OUTLINES, density_rgba, finding_marks
from .models import (CONCEPT_COLUMN, FILTERS, FINDING_COLOR, ROW_ROLE, UnitFilterProxy,
                     UnitTableModel)
from .worker import Analysis, ConceptsOutcome, ProofJob, ScoreJob

if TYPE_CHECKING:
    from svgloo.engine.result_types import ScoreResult
    from svgloo.structure.analysis import StructureRun

    from .watcher import FileWatcher

METRIC_HELP = {
    "purity": "how much of each element's attribution goes to its main concept "
              "(1 = every element serves exactly one concept)",
    "coverage": "the share of concepts that at least one element mainly serves",
    "compactness": "whether a concept rests on one dominant element rather than many equal "
                   "ones (1 = one element)",
    "locality": "whether a concept's elements sit together in drawing (z) order "
                "(1 = contiguous)",
    "crosstalk": "what a concept's elements give to the other concepts, relative to their "
                 "own (lower is better)",
}
MAX_RECENT = 10
LONG_LINE = 200  # source lines longer than this are cut in the source view
# A footprint is |change| / 255; the engine counts a pixel changed above this (loo.py).
CHANGED = CHANGED_THRESHOLD / 255
_LINES = re.compile(r"\r\n|\r|\n")  # the engine's line breaks


def attribution_png(structure_result: dict, unit_labels: dict[int, str] | None = None,
                    path=None, width_px: int = 600, height_px: int = 380) -> bytes:
    """The units x concepts attribution matrix as a labelled heatmap (PNG bytes) sized to
    ``width_px`` x ``height_px`` with every label inside; also written to ``path``."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    from svgloo.structure.plots import display_name, shorten

    A = np.asarray(structure_result.get("attribution") or [[0.0]], dtype=float)
    if A.ndim != 2 or A.size == 0:
        A = np.zeros((1, 1))
    concepts = [shorten(display_name(c["name"]), 22)
                for c in structure_result.get("concepts", [])] or ["-"]
    units = [u["index"] for u in structure_result.get("units", [])] or list(range(A.shape[0]))
    labels = [(unit_labels or {}).get(i, f"#{i}") for i in units][:A.shape[0]]
    fig = Figure(figsize=(width_px / 100, height_px / 100), dpi=100)
    ax = fig.add_subplot(111)
    im = ax.imshow(A, aspect="auto", cmap="viridis", interpolation="nearest")
    ax.set_xticks(range(A.shape[1]), concepts[:A.shape[1]], rotation=30, ha="right",
                  fontsize=7)
    step = max(1, math.ceil(A.shape[0] / 24))  # at most 24 unit labels
    ax.set_yticks(range(0, A.shape[0], step), labels[::step], fontsize=6)
    ax.set_ylabel("unit" + (f" (every {step}th labelled)" if step > 1 else ""), fontsize=7)
    ax.set_title(f"{Path(structure_result.get('file', '')).name}: attribution of each unit "
                 "to each concept", fontsize=8)
    fig.colorbar(im, ax=ax, fraction=0.05)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    data = buf.getvalue()
    if path is not None:
        Path(path).write_bytes(data)
    return data


def plural_units(n: int) -> str:
    return f"{n} unit{'' if n == 1 else 's'}"


class TextEdit(QUndoCommand):
    """One edit of the text in memory (a removal, the proven bulk removal): undo and redo
    swap the whole text, which the window then re-scores."""

    def __init__(self, window: "ViewerWindow", before: str, after: str, what: str):
        super().__init__(what)
        self.window, self.before, self.after, self.what = window, before, after, what

    def redo(self) -> None:
        self.window._set_text(self.after, self.what)

    def undo(self) -> None:
        self.window._set_text(self.before, f"undone: {self.what}")


class ViewerWindow(QMainWindow):
    """One file at a time: render, units table, concepts, source; scoring off-thread."""

    analysisReady = pyqtSignal()     # a new scoring result is shown
    conceptsReady = pyqtSignal()     # the concepts panel was filled (or said why not)
    errorShown = pyqtSignal(str)
    removalProven = pyqtSignal(bool)  # the bulk removal's proof ended (True: edited)

    def __init__(self, path=None, *, reference=None, prompt=None, backbone="auto",
                 base_settings=None, concepts=True, settings_store: QSettings | None = None,
                 debounce_ms: int = 300):
        super().__init__()
        from svgloo.engine.scoring.score import ScoreSettings

        self.base_settings = base_settings or ScoreSettings()
        self.concepts_enabled = concepts
        self.store = settings_store if settings_store is not None else QSettings("svgloo",
                                                                                 "viewer")
        self.path: Path | None = None
        self.analysis: Analysis | None = None
        self.structure: StructureRun | None = None
        self.session: FileSession | None = None
        self.job: ScoreJob | None = None
        self.proof_job: ProofJob | None = None
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._clean_changed)
        self._split_sizes: list[int] | None = None
        self._rescore_pending = False
        self.scoring_failed = False
        self.selection = None       # see _set_selection
        self.last_removal = None    # the last engine.proof.RemovalCheck applied
        self._syncing = False
        self._known_bytes: set[bytes] = set()
        self.watcher: FileWatcher | None = None
        self.layer_cache: dict = {}
        self._restore_key = None
        self.score_count = 0
        self.setWindowTitle("svgloo viewer")
        self.resize(1280, 800)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(debounce_ms)
        self._debounce.timeout.connect(self._file_changed_settled)
        self._build_ui(backbone, reference, prompt)
        if path:
            self.open_file(path)

    # ------------------------------------------------------------------ UI
    def _build_ui(self, backbone, reference, prompt) -> None:
        tb = QToolBar("main", self)
        tb.setObjectName("mainToolbar")
        self.addToolBar(tb)
        self.act_open = QAction("Open…", self, shortcut=QKeySequence.StandardKey.Open)
        self.act_open.triggered.connect(self._open_dialog)
        self.act_rescore = QAction("Re-score", self, shortcut=QKeySequence("F5"))
        self.act_rescore.triggered.connect(self.rescore)
        self.act_save = QAction("Save", self, shortcut=QKeySequence.StandardKey.Save)
        self.act_save.setToolTip("write the edits to the file (atomically: a temporary file "
                                 "in the same folder, renamed over it)")
        self.act_save.triggered.connect(self.save)
        self.act_save.setEnabled(False)
        self.act_remove = QAction("Remove unit", self, shortcut=QKeySequence("Ctrl+Del"))
        self.act_remove.triggered.connect(self.remove_selected_unit)
        self.act_undo = self.undo_stack.createUndoAction(self, "Undo")
        self.act_undo.setShortcut(QKeySequence.StandardKey.Undo)
        self.act_redo = self.undo_stack.createRedoAction(self, "Redo")
        self.act_redo.setShortcut(QKeySequence.StandardKey.Redo)
        self.act_remove_proven = QAction("Remove all proven-removable", self)
        self.act_remove_proven.setToolTip(
            "remove every unit the analysis proved removable together: without them, "
            "CairoSVG's and resvg's pictures stay within a few /255 per channel (alpha "
            "included) at the analysis size and the document's size")
        self.act_remove_proven.triggered.connect(self.remove_proven_removable)
        self.act_remove_proven.setEnabled(False)
        for a in (self.act_open, self.act_save, self.act_rescore, self.act_remove,
                  self.act_remove_proven, self.act_undo, self.act_redo):
            tb.addAction(a)
        tb.addSeparator()
        tb.addWidget(QLabel(" backbone "))
        self.backbone_combo = QComboBox()
        self.backbone_combo.addItems(self._backbone_names())
        if self.backbone_combo.findText(backbone) < 0:
            self.backbone_combo.addItem(backbone)
        self.backbone_combo.setCurrentText(backbone)
        self.backbone_combo.currentTextChanged.connect(lambda _: self.rescore())
        tb.addWidget(self.backbone_combo)
        tb.addWidget(QLabel(" reference "))
        self.reference_edit = QLineEdit(reference or "")
        self.reference_edit.setPlaceholderText("image or SVG (default: svgloo.toml / self)")
        self.reference_edit.setMinimumWidth(180)
        self.reference_edit.editingFinished.connect(self._settings_edited)
        tb.addWidget(self.reference_edit)
        browse = QPushButton("…")
        browse.setFixedWidth(32)
        browse.setToolTip("choose a reference image or SVG")
        browse.clicked.connect(self._browse_reference)
        tb.addWidget(browse)
        tb.addWidget(QLabel(" prompt "))
        self.prompt_edit = QLineEdit(prompt or "")
        self.prompt_edit.setPlaceholderText("text reference (clip)")
        self.prompt_edit.editingFinished.connect(self._settings_edited)
        tb.addWidget(self.prompt_edit)
        self._last_settings_text = (self.reference_edit.text(), self.prompt_edit.text())

        menu = self.menuBar().addMenu("&File")
        menu.addAction(self.act_open)
        menu.addAction(self.act_save)
        self.recent_menu = menu.addMenu("Open recent")
        menu.addSeparator()
        self.act_export_sheet = QAction("Export footprint contact sheet…", self)
        self.act_export_sheet.triggered.connect(lambda: self._export_dialog("sheet"))
        self.act_export_attr = QAction("Export attribution heatmap…", self)
        self.act_export_attr.triggered.connect(lambda: self._export_dialog("attribution"))
        menu.addAction(self.act_export_sheet)
        menu.addAction(self.act_export_attr)
        menu.addSeparator()
        menu.addAction("Quit", QKeySequence.StandardKey.Quit, self.close)
        edit = self.menuBar().addMenu("&Edit")
        edit.addAction(self.act_remove)
        edit.addAction(self.act_remove_proven)
        edit.addAction(self.act_undo)
        edit.addAction(self.act_redo)
        edit.addAction(self.act_rescore)
        self._refresh_recent_menu()

        central = QWidget()
        outer = QVBoxLayout(central)
        outer.setContentsMargins(4, 4, 4, 4)
        self.error_banner = QLabel()
        self.error_banner.setObjectName("errorBanner")
        self.error_banner.setWordWrap(True)
        self.error_banner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_banner.setStyleSheet("QLabel#errorBanner { background: #fde0dc; color: #8b1a10;"
                                        " border: 1px solid #d73027; padding: 6px; }")
        self.error_banner.hide()
        outer.addWidget(self.error_banner)
        # The engine's warning when CairoSVG's picture differs from resvg's (proof.py).
        self.render_banner = QLabel()
        self.render_banner.setObjectName("renderBanner")
        self.render_banner.setWordWrap(True)
        self.render_banner.setStyleSheet("QLabel#renderBanner { background: #fff4ce; "
                                         "color: #5c4400; border: 1px solid #e0b400; "
                                         "padding: 6px; }")
        self.render_banner.hide()
        outer.addWidget(self.render_banner)

        split = QSplitter(Qt.Orientation.Horizontal)
        self.view = ImageView()
        self.view.pixelClicked.connect(self.select_at_pixel)
        split.addWidget(self.view)

        self.tabs = QTabWidget()
        units_tab = QWidget()
        ul = QVBoxLayout(units_tab)
        row = QHBoxLayout()
        row.addWidget(QLabel("show"))
        self.filter_combo = QComboBox()
        for key, label in FILTERS.items():
            self.filter_combo.addItem(label, key)
        self.filter_combo.currentIndexChanged.connect(self._filter_changed)
        row.addWidget(self.filter_combo)
        self.mark_findings = QCheckBox("mark findings")
        self.mark_findings.setToolTip(
            "mark specks and mostly hidden units on the picture: the selected unit's, else "
            f"those the filter shows (outlined up to {MAX_OUTLINES}, a density map beyond)")
        self.mark_findings.setChecked(True)
        self.mark_findings.toggled.connect(lambda _: self._show_finding_markers())
        row.addWidget(self.mark_findings)
        self.summary_label = QLabel()
        # its text changes with every score: as a minimum width it moved the divider
        self.summary_label.setSizePolicy(QSizePolicy.Policy.Ignored,
                                         QSizePolicy.Policy.Preferred)
        row.addWidget(self.summary_label, 1)
        ul.addLayout(row)
        self.model = UnitTableModel(self)
        self.proxy = UnitFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # the concept (last) column takes what is left and elides: every other column,
        # purity included, stays whole at 1280x800
        header.setSectionResizeMode(CONCEPT_COLUMN, QHeaderView.ResizeMode.Stretch)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.selectionModel().selectionChanged.connect(self._selection_changed)
        vsplit = QSplitter(Qt.Orientation.Vertical)
        vsplit.addWidget(self.table)
        self.source_view = QPlainTextEdit()
        self.source_view.setReadOnly(True)
        self.source_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.source_view.setFont(mono)
        self.source_view.setPlaceholderText("select a unit to see its source")
        vsplit.addWidget(self.source_view)
        vsplit.setSizes([500, 200])
        ul.addWidget(vsplit)
        self.tabs.addTab(units_tab, "Units")

        concepts_tab = QWidget()
        cl = QVBoxLayout(concepts_tab)
        self.concepts_status = QLabel("concepts: waiting for the score" if self.concepts_enabled
                                      else "concepts: off")
        self.concepts_status.setWordWrap(True)
        cl.addWidget(self.concepts_status)
        self.concept_list = QListWidget()
        self.concept_list.setMaximumHeight(120)
        self.concept_list.currentRowChanged.connect(self._concept_selected)
        cl.addWidget(self.concept_list)
        self.metrics_label = QLabel()
        self.metrics_label.setWordWrap(True)
        self.metrics_label.setTextFormat(Qt.TextFormat.RichText)
        cl.addWidget(self.metrics_label)
        self.attribution_label = QLabel()
        self.attribution_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        scroll = QScrollArea()
        self.attribution_scroll = scroll
        scroll.setWidget(self.attribution_label)
        scroll.setWidgetResizable(True)
        cl.addWidget(scroll, 1)
        self.tabs.addTab(concepts_tab, "Concepts")
        split.addWidget(self.tabs)
        split.setSizes([620, 640])
        self.main_split = split
        # the sizes the reviewer chose (or the first ones) are kept across re-scores: a new
        # table's column widths must not move the divider
        split.splitterMoved.connect(lambda *_: self._remember_split())
        outer.addWidget(split, 1)
        self.setCentralWidget(central)

        self.status_label = QLabel("no file")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().addPermanentWidget(self.progress)

    @staticmethod
    def _backbone_names() -> list[str]:
        names = ["auto", "pixel", "clip"]
        try:
            from svgloo.engine.protocols import discover

            for name in discover("svgloo.backbones"):
                if name not in names:
                    names.append(str(name))
        except Exception:  # noqa: BLE001 - a broken plugin must not empty the list
            pass
        return names

    # ------------------------------------------------------------ settings
    def score_settings(self):
        ref = self.reference_edit.text().strip() or None
        prompt = self.prompt_edit.text().strip() or None
        if ref and prompt:
            prompt = None  # an image reference wins; the CLI makes these exclusive
        # prove: the viewer's Remove and "Remove all proven-removable" act on the proof
        return self.base_settings.with_(backbone=self.backbone_combo.currentText(),
                                        reference=ref, prompt=prompt, prove=True)

    def _settings_edited(self) -> None:
        now = (self.reference_edit.text(), self.prompt_edit.text())
        if now != self._last_settings_text:
            self._last_settings_text = now
            self.rescore()

    def _browse_reference(self) -> None:
        start = str(self.path.parent) if self.path else ""
        name, _ = QFileDialog.getOpenFileName(self, "Reference image", start,
                                              "Images (*.png *.jpg *.jpeg *.svg *.svgz)")
        if name:
            self.reference_edit.setText(name)
            self._settings_edited()

    # --------------------------------------------------------------- files
    def _open_dialog(self) -> None:
        start = str(self.path.parent) if self.path else ""
        name, _ = QFileDialog.getOpenFileName(self, "Open SVG", start, "SVG (*.svg *.svgz)")
        if name:
            self.open_file(name)

    def _refresh_recent_menu(self) -> None:
        self.recent_menu.clear()
        for name in self.recent_files():
            act = self.recent_menu.addAction(name)
            act.triggered.connect(lambda _=False, n=name: self.open_file(n))
        self.recent_menu.setEnabled(bool(self.recent_files()))

    def recent_files(self) -> list[str]:
        value = self.store.value("recent", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def _remember(self, path: Path) -> None:
        items = [str(path)] + [p for p in self.recent_files() if p != str(path)]
        self.store.setValue("recent", items[:MAX_RECENT])
        self.store.sync()
        self._refresh_recent_menu()

    def open_file(self, path) -> bool:
        """Open ``path`` (after asking about unsaved edits of the open file, if any)."""
        if not self.confirm_discard():
            return False
        path = Path(path).resolve()
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None
        self.path = path
        self.analysis = None
        self.session = None
        self.undo_stack.clear()
        self.structure = None
        self.scoring_failed = False
        self.layer_cache = {}
        self._known_bytes = set()
        self._restore_key = None
        self.view._fitted = False
        self.view._fit_on_resize = True
        self.setWindowTitle(f"svgloo viewer — {path.name}[*]")  # [*]: "*" when modified
        self._remember(path)
        try:
            from .watcher import FileWatcher

            self.watcher = FileWatcher(path, self)
            self.watcher.changed.connect(self._debounce.start)
        except Exception as exc:  # noqa: BLE001 - the viewer still works; re-score by hand
            self.status_label.setText(f"not watching {path.name}: {exc}")
        self.rescore()
        return True

    # ------------------------------------------------------------- scoring
    def is_busy(self) -> bool:
        return self.job is not None

    def rescore(self) -> None:
        if self.path is None:
            return
        if self.job is not None:
            self._rescore_pending = True
            return
        self._rescore_pending = False
        key = self.selected_key()
        if key is not None:
            self._restore_key = key
        job = ScoreJob(self.path, self.score_settings(), concepts=self.concepts_enabled,
                       layer_cache=self.layer_cache, parent=self, source=self._source_bytes())
        job.progress.connect(self._on_progress)
        job.scored.connect(self._on_scored)
        job.structured.connect(self._on_structured)
        job.failed.connect(self._on_failed)
        job.finished.connect(self._on_job_finished)
        self.job = job
        self.progress.setRange(0, 0)
        self.progress.show()
        self.status_label.setText(f"scoring {self.path.name}…")
        job.start()

    def _source_bytes(self) -> bytes | None:
        """What a re-score scores: the text in memory (the file's own bytes while it is
        unedited), or None to read the file (nothing loaded yet, or reloading)."""
        if self.session is None:
            return None
        return self.session.current_bytes() if self.session.modified else self.session.saved

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat("%p%")  # engine steps of every stage (progress.py)

    def _on_job_finished(self) -> None:
        job, self.job = self.job, None
        if job is not None:
            job.deleteLater()
        self.progress.hide()
        if self._rescore_pending:
            self.rescore()

    def _on_failed(self, message: str) -> None:
        self.scoring_failed = True
        self.show_error(message)
        self.status_label.setText("scoring failed")

    def show_error(self, message: str) -> None:
        self.error_banner.setText(message)
        self.error_banner.show()
        self.statusBar().showMessage(message, 10000)
        self.errorShown.emit(message)

    def clear_error(self) -> None:
        self.error_banner.clear()
        self.error_banner.hide()

    def _forget_failure(self) -> None:
        self.scoring_failed = False
        self.clear_error()
        if self.analysis is not None:
            self.status_label.setText(self._status_text(self.analysis.run.result))

    def _status_text(self, res: ScoreResult) -> str:
        """One short line (the full reference source and the notes go to the tooltip)."""
        ref = res["reference"]
        return (f"{self.path.name}: {res['backbone']} backbone vs {ref['kind']} reference; "
                f"scored in {res['timings']['total_s']:.1f} s"
                + (f"; {len(res['notes'])} note{'s' if len(res['notes']) > 1 else ''} "
                   "(hover)" if res["notes"] else ""))

    def _status_tip(self, res: ScoreResult) -> str:
        ref = res["reference"]
        return "\n".join([f"reference: {ref['kind']} ({ref.get('source')})"] + res["notes"])

    def _on_scored(self, analysis: Analysis) -> None:
        if self.path is None or analysis.path != self.path:
            return  # a file that is no longer open
        self.scoring_failed = False
        self.clear_error()
        prev_key = self._restore_key or self.selected_key()
        self.analysis = analysis
        self.score_count += 1
        if self.session is None or self.session.path != analysis.path:
            # read from disk: a new file, or one changed by someone else while unedited
            # here (the old undo steps would discard that change)
            self.session = FileSession(analysis.path, analysis.raw, analysis.run.doc.text)
            self.undo_stack.clear()
        if not self.session.modified:
            self._known_bytes = {self.session.saved}
        run = analysis.run
        res = run.result
        self.view.set_image(run.loo.full, (run.doc.text, str(analysis.path),
                                           self.base_settings.limits))
        rows = []
        for r in res["units"]:
            rows.append({**r, "line": r["range"]["start"]["line"] + 1,
                         "column": r["range"]["start"]["character"] + 1, "primary": None,
                         "purity": None})
        self.model.set_rows(rows)
        self.model.concept_note = self._concept_note()
        if self.structure is not None:
            self._apply_structure_to_rows()
        self._show_finding_markers()
        self._restore_split()
        self.act_remove_proven.setEnabled(len(self.removal_candidates()) >= 1)
        differ = [w for w in res.get("warnings", []) if w.startswith("CairoSVG draws")]
        self.render_banner.setText(differ[0] if differ else "")
        self.render_banner.setVisible(bool(differ))
        s = res["summary"]
        flagged = sum(bool(r.get("findings")) for r in res["units"])
        self.summary_label.setText(f"{plural_units(s['units'])}: {s['helpful']} helpful, "
                                   f"{s['harmful']} harmful, {s['neutral']} neutral, "
                                   f"{s.get('proven_removable', 0)} proven removable, "
                                   f"{s.get('unverified', 0)} unverified, {flagged} flagged")
        self.summary_label.setToolTip(self.summary_label.text())
        self.status_label.setText(self._status_text(res))
        self.status_label.setToolTip(self._status_tip(res))
        self._restore_key = None
        if not (prev_key and self.select_key(prev_key)):
            self._set_selection(None)
        self.analysisReady.emit()

    # ------------------------------------------------------------ concepts
    def _on_structured(self, outcome: ConceptsOutcome) -> None:
        self.concept_list.clear()
        self.metrics_label.clear()
        self.attribution_label.clear()
        self.structure = outcome.run
        self.model.concept_note = self._concept_note()
        if outcome.run is None:
            self.model.concept_note = f"no concepts: {outcome.message or 'unavailable'}"
            self.concepts_status.setText(outcome.message or "concepts unavailable")
            self.conceptsReady.emit()
            return
        res = outcome.run.result
        self.concepts_status.setText(f"{len(res.get('concepts', []))} concepts "
                                     f"({res.get('definitions', '')} definitions); select one "
                                     "to see its heatmap over the render")
        from svgloo.structure.plots import display_name, units_text

        for c in res.get("concepts", []):
            self.concept_list.addItem(f"{display_name(c['name'])}  ({c.get('source', '')}; "
                                      f"{units_text(c.get('units', []), 60)})")
        lines = []
        for name, value in (res.get("metrics") or {}).items():
            shown = "—" if value is None else f"{value:.3f}" if isinstance(value, float) \
                else str(value)
            lines.append(f"<b>{name}</b> {shown}: {METRIC_HELP.get(name, '')}")
        self.metrics_label.setText("<br>".join(lines))
        try:
            # sized from the tab panel (the scroll area has no size while its tab is
            # hidden): the panel's width, and what the list and metrics leave of its height
            png = attribution_png(res, self._unit_labels(outcome.run),
                                  width_px=max(420, self.tabs.width() - 48),
                                  height_px=max(280, min(480, self.tabs.height() - 330)))
            pm = QPixmap()
            pm.loadFromData(png, "PNG")
            self.attribution_label.setPixmap(pm)
        except Exception as exc:  # noqa: BLE001 - the plot is optional: its failure is shown in its place
            self.attribution_label.setText(f"attribution plot failed: {exc}")
        self._apply_structure_to_rows()
        self._restore_split()
        self.conceptsReady.emit()

    @staticmethod
    def _unit_labels(srun) -> dict[int, str]:
        try:
            return {u.index: f"#{u.index} {u.tag}" + (f" {u.id}" if u.id else "")
                    for u in srun.units.units}
        except AttributeError:  # a run without element units
            return {}

    def _apply_structure_to_rows(self) -> None:
        if self.structure is None or self.analysis is None:
            return
        from svgloo.structure.plots import display_name

        res = self.structure.result
        names = [c["name"] for c in res.get("concepts", [])]
        by_element = {}
        try:
            sunits = self.structure.units.units
        except AttributeError:  # a run without element units
            sunits = None
        for u in res.get("units", []):
            primary = u.get("primary")
            if isinstance(primary, int) and 0 <= primary < len(names):
                primary = display_name(names[primary])
            element = sunits[u["index"]].element if sunits is not None else u["index"]
            by_element[element] = (primary, u.get("purity"))
        per_unit = {}
        for su in self.analysis.run.units.units:
            if su.element in by_element:
                per_unit[su.index] = by_element[su.element]
        self.model.set_concepts(per_unit)

    def _concept_selected(self, row: int) -> None:
        """The concept list's current row changed: the concept becomes the selection (the
        units table is cleared, so table and picture never disagree)."""
        if self._syncing:
            return
        if self.structure is None or row < 0:
            if self.selection and self.selection[0] == "concept":
                self._set_selection(None)
            return
        self._set_selection(("concept", row))

    def _draw_concept(self, row: int) -> None:
        heat = np.asarray(self.structure.heatmaps[row], dtype=np.float32)
        full = self.analysis.run.loo.full if self.analysis else None
        if full is not None and heat.shape != full.shape[:2]:
            from PIL import Image

            heat = np.asarray(Image.fromarray(heat).resize(full.shape[1::-1]), np.float32)
        self.view.set_overlay(heat_overlay(heat), nonzero_box(heat > 0.5 * heat.max())
                              if heat.max() > 0 else None)

    def finding_boxes(self) -> dict:
        """Unit -> image box of each unit with findings: where it changes the picture, or
        for a unit that changes nothing (hidden), where it draws when rendered alone."""
        if self.analysis is None:
            return {}
        if self.analysis.finding_boxes is not None:
            return self.analysis.finding_boxes
        run = self.analysis.run
        boxes = {}
        for r in run.result["units"]:
            if not r.get("findings"):
                continue
            box = nonzero_box(run.footprint(r["index"]) > 0) or self._drawn_box(r["index"])
            if box is not None:
                boxes[r["index"]] = box
        self.analysis.finding_boxes = boxes
        return boxes

    def _drawn_box(self, unit: int):
        """Where ``unit`` draws on its own (the engine's renderer, everything else
        removed); None when it draws nothing or cannot be rendered."""
        from svgloo.engine.errors import SvglooError
        from svgloo.engine.rendering.render import render_layer
        from svgloo.engine.reading.units import apply_edits, edits_keeping

        run = self.analysis.run
        text = apply_edits(run.doc.text, edits_keeping(run.units, {unit}))
        try:
            box, _ = render_layer(text, run.loo.full.shape[0], self.base_settings.limits,
                                  str(self.path))
        except SvglooError:
            return None
        return box

    def shown_units(self) -> list[int]:
        """The units the table shows through its filter, in table order."""
        return [self.proxy.data(self.proxy.index(k, 0), ROW_ROLE)["index"]
                for k in range(self.proxy.rowCount())]

    def _show_finding_markers(self) -> None:
        """Marks for the selected unit's finding, else for the flagged units the filter
        shows: outlines up to MAX_OUTLINES, a density map beyond (marks.py)."""
        if not self.mark_findings.isChecked() or self.analysis is None:
            self.view.set_markers([])
            self.view.set_density(None)
            return
        selected = self.selection[1] if self.selection and self.selection[0] == "unit" \
            else None
        marks = finding_marks(self.finding_boxes(), self.shown_units(), selected,
                              self.analysis.run.loo.full.shape[0])
        self.view.set_markers(marks.outlines)
        color = QColor(FINDING_COLOR)
        self.view.set_density(None if marks.density is None else density_rgba(
            marks.density, (color.red(), color.green(), color.blue())))

    def _filter_changed(self, _=None) -> None:
        self.proxy.set_mode(self.filter_combo.currentData())
        self._show_finding_markers()

    # ---------------------------------------------------------- splitter
    def _remember_split(self) -> None:
        self._split_sizes = self.main_split.sizes()

    def _restore_split(self) -> None:
        """Put the picture/table divider back where the reviewer left it: a new table's
        column widths change the panel's size hint, which made the divider jump."""
        if self._split_sizes is None:
            self._split_sizes = self.main_split.sizes()
        elif self.main_split.sizes() != self._split_sizes:
            self.main_split.setSizes(self._split_sizes)
        # and once more after the layout has taken the new contents in
        QTimer.singleShot(0, self._reapply_split)

    def _reapply_split(self) -> None:
        if self._split_sizes is not None and self.main_split.sizes() != self._split_sizes:
            self.main_split.setSizes(self._split_sizes)

    def _concept_note(self) -> str:
        """Why the purity and concept cells are blank for every unit (the tooltip)."""
        if not self.concepts_enabled:
            return "no concepts: they are off (--no-concepts)"
        if self.structure is None:
            return ("no structure analysis yet: it runs after the score (see the Concepts "
                    "tab)")
        return ""

    # ----------------------------------------------------------- selection
    def selected_unit(self) -> int | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        return self.proxy.data(rows[0], ROW_ROLE)["index"]

    def selected_key(self):
        i = self.selected_unit()
        if i is None or self.analysis is None:
            return None
        r = self.model.rows[i] if i < len(self.model.rows) else None
        if r is None:
            return None
        return (r.get("id"), r["tag"], r["index"], r.get("subpath"))

    def select_key(self, key) -> bool:
        uid, tag, index, subpath = key
        match = None
        if uid:
            cands = [r for r in self.model.rows if r.get("id") == uid]
            match = next((r for r in cands if r.get("subpath") == subpath), None) or \
                (cands[0] if cands else None)
        if match is None:
            match = next((r for r in self.model.rows
                          if r["index"] == index and r["tag"] == tag), None)
        if match is None:
            return False
        return self.select_unit(match["index"], reveal=False)

    def select_unit(self, unit: int, reveal: bool = True) -> bool:
        """Select a unit in the table (and so in the picture). A unit the filter hides is
        shown by switching to "All units" when ``reveal``; otherwise it stays unselected
        (restoring a selection after a re-score must not undo the reviewer's filter)."""
        src_row = next((k for k, r in enumerate(self.model.rows) if r["index"] == unit), None)
        if src_row is None:
            return False
        pidx = self.proxy.mapFromSource(self.model.index(src_row, 0))
        if not pidx.isValid():
            if not reveal:
                return False
            self.filter_combo.setCurrentIndex(self.filter_combo.findData("all"))
            pidx = self.proxy.mapFromSource(self.model.index(src_row, 0))
        self.table.selectionModel().select(
            pidx, QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows)
        self.table.scrollTo(pidx)
        return True

    def _selection_changed(self, *_):
        """The table's selection changed (a click, select_unit, or a model reset)."""
        if self._syncing:
            return
        unit = self.selected_unit()
        if unit is None:
            if self.selection is None or self.selection[0] == "unit":
                self._set_selection(None)
            return
        self._set_selection(("unit", unit))

    def selected_concept(self) -> int | None:
        return self.selection[1] if self.selection and self.selection[0] == "concept" else None

    def _set_selection(self, selection) -> None:
        """The one selection state: None, ("unit", index) or ("concept", row). It sets the
        table, the concept list, the picture's overlay and the source view together."""
        self.selection = selection
        self._syncing = True
        try:
            if selection is None or selection[0] != "unit":
                self.table.selectionModel().clearSelection()
            if selection is None or selection[0] != "concept":
                self.concept_list.setCurrentRow(-1)
        finally:
            self._syncing = False
        self._show_finding_markers()
        if selection is None or self.analysis is None:
            self.view.set_overlay(None)
            self.source_view.clear()
            return
        kind, index = selection
        if kind == "concept":
            self._draw_concept(index)
            self.source_view.clear()
            self.source_view.setPlaceholderText("a concept is selected: pick a unit to see "
                                                "its source")
            return
        run = self.analysis.run
        fp = run.footprint(index)
        box = nonzero_box(fp > CHANGED) or nonzero_box(fp > 0) or run.loo.patches[index].box
        self.view.set_overlay(heat_overlay(fp), box)
        self._show_source(index)

    def _show_source(self, unit: int) -> None:
        """The element's lines with line numbers and two lines of context each side, all
        with one gutter so the columns line up; the element's lines are tinted and the
        unit's own characters (a subpath's, say) marked. Lines longer than LONG_LINE (a
        one-line file) are shown from the element's start, with '…' for what is cut."""
        run = self.analysis.run
        doc = run.doc
        u = run.units.units[unit]
        el = doc.elements[u.element]
        lines = _LINES.split(doc.text)
        line0, col0 = doc.position(el.start)
        line1, _ = doc.position(max(el.start, el.end - 1))
        first, last = max(0, line0 - 2), min(len(lines) - 1, line1 + 2)
        width = len(str(last + 1))
        shown: list = []
        tinted: list = []
        marks: list = []
        for n in range(first, last + 1):
            text = lines[n]
            line_start = doc.offset(n, 0)
            inside = line0 <= n <= line1
            lo, hi = 0, len(text)
            if len(text) > LONG_LINE:
                if inside:
                    # from the element's start (on its first line) to its end, capped
                    lo = col0 if n == line0 else 0
                    hi = min(len(text), max(lo, el.end - line_start), lo + 4 * LONG_LINE)
                else:
                    hi = LONG_LINE
            gutter = f"{'>' if inside else ' '}{n + 1:>{width}} | " + ("… " if lo else "")
            body = text[lo:hi] + (" …" if hi < len(text) else "")
            if inside:
                tinted.append(len(shown))
                a = max(u.start, line_start + lo) - line_start - lo
                b = min(u.end, line_start + hi) - line_start - lo
                if b > a:
                    marks.append((len(shown), len(gutter) + a, len(gutter) + b))
            shown.append(gutter + body)
        self.source_view.setPlainText("\n".join(shown))
        line_fmt = QTextCharFormat()
        line_fmt.setBackground(QColor("#fff3c4"))
        line_fmt.setProperty(QTextCharFormat.Property.FullWidthSelection, True)
        unit_fmt = QTextCharFormat()
        unit_fmt.setBackground(QColor("#ffd76e"))
        sels = []
        document = self.source_view.document()
        for k in tinted:
            sel = QTextEdit.ExtraSelection()
            sel.format = line_fmt
            sel.cursor = QTextCursor(document.findBlockByNumber(k))
            sels.append(sel)
        for k, a, b in marks:
            cur = QTextCursor(document.findBlockByNumber(k))
            block_start = cur.position()
            cur.setPosition(block_start + a)
            cur.setPosition(block_start + b, QTextCursor.MoveMode.KeepAnchor)
            sel = QTextEdit.ExtraSelection()
            sel.format = unit_fmt
            sel.cursor = cur
            sels.append(sel)
        self.source_view.setExtraSelections(sels)
        if tinted:
            self.source_view.setTextCursor(QTextCursor(document.findBlockByNumber(tinted[0])))
            self.source_view.centerCursor()

    def unit_at_pixel(self, x: int, y: int) -> int | None:
        """The unit whose footprint is strongest at image pixel (x, y)."""
        if self.analysis is None:
            return None
        loo = self.analysis.run.loo
        h, w = loo.full.shape[:2]
        if not (0 <= x < w and 0 <= y < h):
            return None
        best, best_val = None, 0
        ref = loo.full[y, x].astype(np.int16)
        for i, p in enumerate(loo.patches):
            if p.box is None:
                continue
            y0, y1, x0, x1 = p.box
            if y0 <= y < y1 and x0 <= x < x1:
                assert p.pixels is not None  # a patch with a box has its pixels
                val = int(np.abs(ref - p.pixels[y - y0, x - x0].astype(np.int16)).max())
                if val > best_val:
                    best, best_val = i, val
        return best

    def select_at_pixel(self, x: int, y: int) -> None:
        unit = self.unit_at_pixel(x, y)
        if unit is not None:
            self.select_unit(unit)
        else:
            self.statusBar().showMessage(f"no unit changes pixel ({x}, {y})", 4000)

    # --------------------------------------------------------------- edits
    def remove_selected_unit(self) -> bool:
        unit = self.selected_unit()
        if unit is None:
            self.show_error("select a unit to remove")
            return False
        return self.remove_unit(unit)

    def remove_unit(self, unit: int) -> bool:
        """Remove one unit from the text in memory (the engine's removal edit, undoable);
        the file is written by Save."""
        from svgloo.engine.reading.units import apply_edits, removal_edit

        run = self._editable_run()
        if run is None:
            return False
        text = apply_edits(run.doc.text, [removal_edit(run.units, unit)])
        self.undo_stack.push(TextEdit(self, run.doc.text, text, f"removed unit {unit}"))
        return True

    def _editable_run(self):
        """The analysis of exactly the text in memory, when that text may be edited; else
        None with the reason in the banner."""
        from svgloo.engine.errors import SvglooError

        if self.analysis is None or self.session is None:
            self.show_error("nothing is loaded yet")
            return None
        if self.analysis.run.doc.text != self.session.text:
            self.show_error(f"{self.path}: the analysis is being updated; try again when the "
                            "re-score finishes")
            return None
        try:
            self.session.check_editable()
        except SvglooError as exc:
            self.show_error(str(exc))
            return None
        return self.analysis.run

    def removal_candidates(self) -> list[int]:
        """The units the engine proved removable (``removal.status == "proven"``: CairoSVG's
        and resvg's pictures unchanged, engine/proof.py); never units that are merely
        without a CairoSVG footprint."""
        if self.analysis is None:
            return []
        return [r["index"] for r in self.analysis.run.result["units"]
                if (r.get("removal") or {}).get("status") == "proven"]

    def remove_proven_removable(self) -> bool:
        """Start proving, on a worker thread, which of the units the engine proved removable
        while scoring can go together now (engine proof.check_removal: CairoSVG and resvg,
        alpha compared; a set that changes a picture is narrowed greedily);
        ``removalProven`` says when it ended.
        The proven units are then removed in one undoable edit. False when nothing
        started."""
        run = self._editable_run()
        if run is None:
            return False
        if self.proof_job is not None:
            self.statusBar().showMessage("a removal is already being proven", 5000)
            return False
        candidates = self.removal_candidates()
        if not candidates:
            self.statusBar().showMessage("no unit is proven removable", 5000)
            return False
        job = ProofJob(run, candidates, self.score_settings(), parent=self)
        job.proven.connect(lambda check: self._on_proven(run, candidates, check))
        job.failed.connect(self._on_proof_failed)
        job.finished.connect(self._on_proof_finished)
        self.proof_job = job
        self.act_remove_proven.setEnabled(False)
        self.status_label.setText(f"proving the removal of {plural_units(len(candidates))} "
                                  "by rendering…")
        job.start()
        return True

    def _on_proven(self, run, candidates: list[int], check) -> None:
        from svgloo.engine.reading.units import apply_edits, edits_keeping

        self.last_removal = check
        if self.analysis is None or self.analysis.run is not run \
                or self.session is None or self.session.text != run.doc.text:
            self.show_error(f"{self.path}: the text changed while the removal was being "
                            "proven; nothing was removed (try again)")
            self.removalProven.emit(False)
            return
        if not check.removable:
            self.show_error(f"{self.path}: none of the {len(candidates)} units with no visible "
                            "effect can be removed without changing the picture")
            self.removalProven.emit(False)
            return
        keep = {u.index for u in run.units.units} - set(check.removable)
        text = apply_edits(run.doc.text, edits_keeping(run.units, keep))
        k, n = len(check.removable), len(candidates)
        what = (f"removed {plural_units(k)} with no visible effect (proven in CairoSVG and "
                "resvg)"
                if k == n else
                f"removed {k} of {n} units with no visible effect ({n - k} kept: removing "
                "them too would change the picture)")
        self.undo_stack.push(TextEdit(self, run.doc.text, text, what))
        self.removalProven.emit(True)

    def _on_proof_failed(self, message: str) -> None:
        self.show_error(message)
        self.removalProven.emit(False)

    def _on_proof_finished(self) -> None:
        job, self.proof_job = self.proof_job, None
        if job is not None:
            job.deleteLater()
        self.act_remove_proven.setEnabled(bool(self.removal_candidates()))
        if self.analysis is not None and self.job is None:
            self.status_label.setText(self._status_text(self.analysis.run.result))

    def undo(self) -> bool:
        if not self.undo_stack.canUndo():
            return False
        self.undo_stack.undo()
        return True

    def redo(self) -> bool:
        if not self.undo_stack.canRedo():
            return False
        self.undo_stack.redo()
        return True

    def _clean_changed(self, clean: bool) -> None:
        """The title's "*" and Save follow the undo stack: clean is what is on disk."""
        self.setWindowModified(not clean)
        self.act_save.setEnabled(not clean)

    def _set_text(self, text: str, what: str) -> None:
        """The text in memory becomes ``text`` (an edit, its undo or redo): re-score it."""
        self.session.text = text
        self.clear_error()
        self.statusBar().showMessage(f"{self.path.name}: {what} (not saved)", 5000)
        self.rescore()

    def save(self) -> bool:
        """Write the text in memory to the file: atomic (the engine's atomic write), in the
        file's encoding, refused when the file is read-only or changed on disk."""
        from svgloo.engine.errors import SvglooError

        if self.session is None or not self.session.modified:
            return self.session is not None
        try:
            data = self.session.save()
        except SvglooError as exc:
            self.show_error(str(exc))
            return False
        except OSError as exc:
            self.show_error(f"{self.path}: cannot write: {exc}")
            return False
        self._known_bytes.add(data)  # the watcher will see our own write
        self.undo_stack.setClean()
        self.clear_error()
        self.statusBar().showMessage(f"{self.path.name}: saved", 5000)
        return True

    def ask_unsaved(self) -> QMessageBox.StandardButton:
        """Save, Discard or Cancel, asked when unsaved edits would be lost (tests replace
        this)."""
        buttons = (QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                   | QMessageBox.StandardButton.Cancel)
        return QMessageBox.question(self, "Unsaved changes",
                                    f"{self.path.name} has unsaved changes. Save them?",
                                    buttons, QMessageBox.StandardButton.Save)

    def confirm_discard(self) -> bool:
        """True when nothing unsaved would be lost: no edits, or the reviewer saved them
        (successfully) or chose to discard them."""
        if self.session is None or not self.session.modified:
            return True
        answer = self.ask_unsaved()
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def _file_changed_settled(self) -> None:
        if self.path is None:
            return
        try:
            current = self.path.read_bytes()
        except OSError:
            return  # mid-save (deleted before the rename); the rename will come
        if self.session is not None and self.session.modified:
            if current != self.session.saved:
                # never drop the reviewer's edits for someone else's: Save will refuse
                self.show_error(f"{self.path}: changed on disk while you have unsaved edits; "
                                "they are kept, but Save will refuse to overwrite the other "
                                "change (close without saving and open it again to see it)")
            return
        if (self.scoring_failed and self.analysis is not None and self.job is None
                and current == self.analysis.raw):
            # back to the exact bytes of the last good analysis (an editor's undo): that
            # analysis is valid again, so the failure no longer applies
            self.session = FileSession(self.path, current, self.analysis.run.doc.text)
            self._forget_failure()
            return
        if self.session is not None and current == self.session.saved:
            # the file holds what this window holds (our own Save, seen late, perhaps while
            # an Undo's scoring runs): nothing to read again, and the undo steps stay
            return
        if current in self._known_bytes and self.job is None:
            return
        self._known_bytes.add(current)
        self.session = None  # unedited here: read the file again (and drop the undo steps)
        self.rescore()

    # -------------------------------------------------------------- export
    def export_contact_sheet(self, path) -> None:
        from svgloo.engine.reporting.plots import contact_sheet

        if self.analysis is None:
            raise RuntimeError("nothing is scored yet")
        contact_sheet(self.analysis.run, path)

    def export_attribution(self, path) -> None:
        if self.structure is None:
            raise RuntimeError("no concepts: the attribution matrix is unavailable")
        attribution_png(self.structure.result, self._unit_labels(self.structure), path)

    def _export_dialog(self, what: str) -> None:
        if self.path is None:
            return
        default = self.path.with_name(self.path.stem + ("-footprints.png" if what == "sheet"
                                                        else "-attribution.png"))
        name, _ = QFileDialog.getSaveFileName(self, "Export PNG", str(default), "PNG (*.png)")
        if not name:
            return
        try:
            (self.export_contact_sheet if what == "sheet" else self.export_attribution)(name)
            self.statusBar().showMessage(f"wrote {name}", 5000)
        except Exception as exc:  # noqa: BLE001 - any failure is one message to the user
            self.show_error(f"export failed: {exc}")

    # ------------------------------------------------------------ shutdown
    def shutdown(self) -> None:
        self._debounce.stop()
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None
        self._rescore_pending = False
        for job in (self.job, self.proof_job):  # stop both first, then wait for both
            if job is not None:
                job.cancel()
        for job in (self.job, self.proof_job):
            if job is not None:
                job.wait()

    def closeEvent(self, event) -> None:
        if not self.confirm_discard():
            event.ignore()
            return
        self.shutdown()
        super().closeEvent(event)
