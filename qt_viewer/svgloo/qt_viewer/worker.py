"""Work off the GUI thread: one QThread per analysis or removal proof, reporting through
signals. A job the window no longer needs (it is closing) is cancelled: the engine stops
at its next step or, while renders are under way, within a fraction of a second (the
document budget's interrupt, as the daemon cancels its jobs), instead of the window
waiting for a whole scoring of a large file before it can close."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PyQt6.QtCore import QThread, pyqtSignal

if TYPE_CHECKING:
    from svgloo.engine.scoring.score import ScoreRun
    from svgloo.structure.analysis import StructureRun


@dataclass
class Analysis:
    """What one scoring job produced: the exact bytes it read and the engine's run."""

    path: Path
    raw: bytes
    run: ScoreRun
    finding_boxes: dict | None = None  # filled by the window on first use


@dataclass
class ConceptsOutcome:
    run: StructureRun | None = None
    message: str | None = None      # why there are no concepts


class _Cancellable(QThread):
    """A job with ``cancel()``: its work raises ``Cancelled`` at the next check."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._cancelled = False

    def cancel(self) -> None:
        """Stop the work as soon as it can stop (thread-safe: a flag it polls)."""
        self._cancelled = True

    def _stop_if_cancelled(self, *_progress) -> bool:
        """Raises Cancelled once cancelled; never asks to stop otherwise."""
        if self._cancelled:
            from svgloo.engine.errors import Cancelled

            raise Cancelled("the viewer no longer needs this analysis")
        return False

    def _budget(self, name: str, limits):
        """The document budget of this job's renders, whose interrupt is the cancel flag
        (polled while a render map waits on its workers)."""
        from svgloo.engine.limits import DocumentBudget, document_budget

        return document_budget(DocumentBudget.from_limits(name, limits,
                                                          interrupt=self._stop_if_cancelled))


class ScoreJob(_Cancellable):
    """Scores the bytes given (the edited text in memory, encoded like the file) or, with
    none, the file's bytes read once; then (optionally) asks the structure module for
    concepts. Results arrive on the GUI thread through queued signals."""

    progress = pyqtSignal(int, int)
    scored = pyqtSignal(object)        # Analysis
    structured = pyqtSignal(object)    # ConceptsOutcome
    failed = pyqtSignal(str)

    def __init__(self, path, settings, concepts: bool = True, layer_cache: dict | None = None,
                 parent=None, source: bytes | None = None):
        super().__init__(parent)
        self.path = Path(path)
        self.source = source
        self.settings = settings
        self.concepts = concepts
        self.layer_cache = layer_cache

    def run(self) -> None:  # runs on the worker thread
        from svgloo.engine.reading.document import parse_document, read_svg_bytes
        from svgloo.engine.errors import Cancelled, SvglooError
        from svgloo.engine.scoring.score import score_document

        try:
            raw = (self.source if self.source is not None
                   else read_svg_bytes(self.path, self.settings.limits))
            doc = parse_document(raw, str(self.path), self.settings.limits)
            with self._budget(str(self.path), self.settings.limits):
                run = score_document(doc, self.settings, progress=self._progress,
                                     layer_cache=self.layer_cache)
        except Cancelled:
            return  # the window is closing: nobody waits for a result
        except SvglooError as exc:
            self.failed.emit(str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - an engine bug must not take the window down
            self.failed.emit(f"{self.path}: {type(exc).__name__}: {exc}")
            return
        self.scored.emit(Analysis(self.path, raw, run))
        if self.concepts and not self._cancelled:
            self.structured.emit(self._structure(doc))

    def _progress(self, done: int, total: int) -> None:
        self._stop_if_cancelled()
        self.progress.emit(int(done), int(total))

    def _structure(self, doc) -> ConceptsOutcome:
        try:
            from svgloo.structure import analysis as structure
        except ImportError:
            return ConceptsOutcome(message="concepts unavailable (this build has no "
                                           "svgloo.structure.analysis)")
        try:
            settings = structure.StructureSettings(size=self.settings.size,
                                                   limits=self.settings.limits)
            if hasattr(structure, "structure_document"):
                srun = structure.structure_document(doc, settings)
            else:
                srun = structure.structure_file(str(self.path), settings)
        except Exception as exc:  # noqa: BLE001 - concepts are optional: any failure is a message
            return ConceptsOutcome(message=f"concepts unavailable: {exc}")
        return ConceptsOutcome(run=srun)


class ProofJob(_Cancellable):
    """Proves a multi-unit removal by rendering (``engine.removal.check_removal``: the
    picture without all of ``candidates`` against the full one, narrowed greedily), so the
    window stays responsive meanwhile."""

    proven = pyqtSignal(object)   # engine.removal.RemovalCheck
    failed = pyqtSignal(str)

    def __init__(self, run, candidates: list[int], settings, parent=None):
        super().__init__(parent)
        self.run_ = run  # the ScoreRun whose units the candidates index
        self.candidates = list(candidates)
        self.settings = settings

    def run(self) -> None:  # runs on the worker thread
        from svgloo.engine.errors import Cancelled
        from svgloo.engine.proving.removal import check_removal

        try:
            with self._budget(self.run_.doc.name, self.settings.limits):
                check = check_removal(self.run_.units, self.candidates,
                                      size=self.settings.size, limits=self.settings.limits,
                                      should_stop=self._stop_if_cancelled)
        except Cancelled:
            return
        except Exception as exc:  # noqa: BLE001 - a render failure or engine bug: a message, not a crash
            self.failed.emit(f"{self.run_.doc.name}: could not prove the removal: {exc}")
            return
        self.proven.emit(check)
