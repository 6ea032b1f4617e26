"""The svgloo version: the one place it is written (and in pyproject.toml; tests/test_layout.py
checks they agree)."""

__version__ = "0.1.0"
