"""Compatibility name for third-party plugins: the Protocols live in ``svgloo.engine.protocols``."""

from svgloo.engine.protocols import *  # noqa: F403
from svgloo.engine.protocols import __all__  # noqa: F401
