"""Benchmark evaluation suites behind ``svgloo eval`` (see base.py for the Protocol)."""
