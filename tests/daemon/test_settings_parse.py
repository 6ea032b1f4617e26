"""The daemon parses settings with the engine's settings converter (engine/settings.py):
settings survive the trip through JSON, and a value of the wrong type is one clear error."""

from __future__ import annotations

import json

import pytest

from svgloo.daemon.service import score_settings_from_dict, structure_settings_from_dict
from svgloo.engine.errors import ConfigError
from svgloo.engine.limits import DEFAULT_LIMITS
from svgloo.engine.settings import ScoreSettings


@pytest.mark.parametrize("settings", [
    ScoreSettings(),
    ScoreSettings(backbone="pixel", method="naive", size=96, subpaths=False,
                  reference="ref.png", helpful_threshold=0.01, harmful_threshold=-0.02,
                  speck_threshold=0.001, hidden_threshold=0.5, precision="bf16"),
])
def test_score_settings_round_trip_through_json(settings):
    wire = json.loads(json.dumps(settings.key()))
    assert score_settings_from_dict(wire, DEFAULT_LIMITS, "x.svg") == settings


def test_structure_settings_round_trip_through_json():
    from svgloo.structure.analysis import StructureSettings

    settings = StructureSettings(concepts=("sky", "sea"), subpaths=True, size=128)
    wire = json.loads(json.dumps(settings.key()))
    assert structure_settings_from_dict(wire, DEFAULT_LIMITS, "x.svg") == settings


@pytest.mark.parametrize("bad, words", [
    ({"size": "384"}, "size must be int, not str"),
    ({"subpaths": "false"}, "subpaths must be bool, not str"),
    ({"helpful_threshold": True}, "helpful_threshold must be float or None, not bool"),
    ({"backbone": ["pixel"]}, "backbone must be str, not list"),
])
def test_a_value_of_the_wrong_type_is_one_error_naming_the_field(bad, words):
    with pytest.raises(ConfigError) as err:
        score_settings_from_dict(bad, DEFAULT_LIMITS, "x.svg")
    assert words in str(err.value) and "x.svg" in str(err.value)


@pytest.mark.parametrize("parse, what", [(score_settings_from_dict, "score"),
                                         (structure_settings_from_dict, "structure")])
def test_an_unknown_setting_is_one_error_naming_it(parse, what):
    with pytest.raises(ConfigError) as err:
        parse({"sise": 96, "subpaths": True}, DEFAULT_LIMITS, "x.svg")
    assert f"unknown {what} settings: sise" in str(err.value) and "x.svg" in str(err.value)


def test_the_daemons_limits_are_kept_whatever_the_client_sends():
    settings = score_settings_from_dict({"limits": {"max_render_size": 10**9}},
                                        DEFAULT_LIMITS, "x.svg")
    assert settings.limits == DEFAULT_LIMITS
