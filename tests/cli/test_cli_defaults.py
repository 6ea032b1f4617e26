"""The CLI's defaults are the settings' own (engine/settings.py), not numbers of its own."""

from __future__ import annotations

import argparse
import dataclasses

from svgloo.cli_score import add_reference_arguments, add_scoring_arguments, settings_from_args
from svgloo.engine.settings import DEFAULT_RENDER_SIZE, ScoreSettings


def test_score_options_default_to_the_score_settings():
    parser = argparse.ArgumentParser()
    add_reference_arguments(parser)
    add_scoring_arguments(parser)
    parsed = parser.parse_args([])
    assert settings_from_args(parsed) == ScoreSettings()
    defaults = ScoreSettings()
    for f in dataclasses.fields(ScoreSettings):
        if hasattr(parsed, f.name):
            assert getattr(parsed, f.name) == getattr(defaults, f.name), f.name
    assert parsed.size == DEFAULT_RENDER_SIZE


def test_a_changed_default_reaches_the_cli(monkeypatch):
    """The parser reads the dataclass: a default changed there is the CLI's default."""
    import svgloo.cli_score as cli_score

    monkeypatch.setattr(cli_score, "DEFAULT", ScoreSettings(size=200, speck_threshold=0.01))
    parser = argparse.ArgumentParser()
    cli_score.add_scoring_arguments(parser)
    parsed = parser.parse_args([])
    assert (parsed.size, parsed.speck_threshold) == (200, 0.01)
