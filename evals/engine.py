"""The engine pieces the evaluation suites use, imported in one place.

The engine is moving from ``svgloo.daemon`` to ``svgloo.engine``; only this module names
the package, so the move touches one import block.
"""

from __future__ import annotations

try:  # the new layout
    from svgloo.engine.document import Document, parse_document  # type: ignore
    from svgloo.engine.files import atomic_write_text  # type: ignore
    from svgloo.engine.errors import (ConfigError, InputError, LimitError,  # type: ignore
                                      RenderError, SvglooError)
    from svgloo.engine.limits import DEFAULT_LIMITS, Limits  # type: ignore
    from svgloo.engine.render import render_rgba  # type: ignore
    from svgloo.engine.safety import check_document  # type: ignore
    from svgloo.engine.score import ScoreSettings, score_document  # type: ignore
    from svgloo.engine.workers import RenderPool  # type: ignore
except ModuleNotFoundError:  # the old layout: everything under svgloo.daemon
    from svgloo.daemon.document import Document, parse_document
    from svgloo.daemon.files import atomic_write_text
    from svgloo.daemon.errors import (ConfigError, InputError, LimitError, RenderError,
                                      SvglooError)
    from svgloo.daemon.limits import DEFAULT_LIMITS, Limits
    from svgloo.daemon.render import render_rgba
    from svgloo.daemon.safety import check_document
    from svgloo.daemon.score import ScoreSettings, score_document
    from svgloo.daemon.workers import RenderPool

__all__ = ["atomic_write_text", "Document", "parse_document", "ConfigError", "InputError", "LimitError",
           "RenderError", "SvglooError", "DEFAULT_LIMITS", "Limits", "render_rgba",
           "check_document", "ScoreSettings", "score_document", "RenderPool"]
