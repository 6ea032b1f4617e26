"""The engine pieces the evaluation suites use, imported in one place.

Suites sit above the engine (imports go one way: evals -> engine); keeping the names in
one module keeps that boundary easy to see.
"""

from __future__ import annotations

from svgloo.engine.reading.document import Document, parse_document
from svgloo.engine.errors import ConfigError, InputError, LimitError, RenderError, SvglooError, \
    WorkerError
from svgloo.engine.reading.files import atomic_write_text
from svgloo.engine.limits import DEFAULT_LIMITS, Limits
from svgloo.engine.protocols import Reference, load_plugin
from svgloo.engine.rendering.render import render_rgba
from svgloo.engine.reading.safety import check_document
from svgloo.engine.scoring.score import ScoreSettings, score_document
from svgloo.engine.processes.workers import RenderPool

__all__ = ["atomic_write_text", "Document", "parse_document", "ConfigError", "InputError",
           "LimitError", "RenderError", "SvglooError", "WorkerError", "DEFAULT_LIMITS", "Limits",
           "render_rgba", "check_document", "Reference", "load_plugin", "ScoreSettings", "score_document",
           "RenderPool"]
