"""The engine pieces the evaluation suites use, imported in one place.

Suites sit above the engine (imports go one way: evals -> engine); keeping the names in
one module keeps that boundary easy to see.
"""

from __future__ import annotations

from svgloo.engine.document import Document, parse_document
from svgloo.engine.errors import ConfigError, InputError, LimitError, RenderError, SvglooError, \
    WorkerError
from svgloo.engine.files import atomic_write_text
from svgloo.engine.limits import DEFAULT_LIMITS, Limits
from svgloo.engine.protocols import Reference, load_plugin
from svgloo.engine.render import render_rgba
from svgloo.engine.safety import check_document
from svgloo.engine.score import ScoreSettings, score_document
from svgloo.engine.workers import RenderPool

__all__ = ["atomic_write_text", "Document", "parse_document", "ConfigError", "InputError",
           "LimitError", "RenderError", "SvglooError", "WorkerError", "DEFAULT_LIMITS", "Limits",
           "render_rgba", "check_document", "Reference", "load_plugin", "ScoreSettings", "score_document", "RenderPool"]
