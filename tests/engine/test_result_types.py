"""The typed result contract (engine/result_types.py) matches what the engine emits.

Real scores of corpus files (and the stray example against its reference, so there is a
harmful unit) are walked key by key against the TypedDicts: a key the engine adds or drops
without the types following, a verdict outside the Literal, a wrong value type, fails."""

# No `from __future__ import annotations`: on Python 3.11 a TypedDict with string
# annotations counts its NotRequired keys as required.
import json
import types
import typing
from typing import Literal, NotRequired, TypedDict

import pytest

from svgloo.engine import result_types as rt
from svgloo.engine.scoring.score import ScoreSettings, score_file

from conftest import EXAMPLES


def mismatches(value, tp, where: str = "result") -> list[str]:
    """Every place where ``value`` (parsed JSON) does not fit the type ``tp``: TypedDicts
    (required and NotRequired keys, no unknown keys), Literal, unions, list[X], and the
    JSON scalars (an int fits a float; a bool fits neither)."""
    origin = typing.get_origin(tp)
    if typing.is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__}, not an object ({tp.__name__})"]
        hints = typing.get_type_hints(tp)
        out = [f"{where}: no key {k!r} ({tp.__name__})"
               for k in sorted(tp.__required_keys__ - set(value))]
        out += [f"{where}: key {k!r} is not in {tp.__name__}"
                for k in sorted(set(value) - set(hints))]
        for k in sorted(set(value) & set(hints)):
            out += mismatches(value[k], hints[k], f"{where}.{k}")
        return out
    if origin is Literal:
        return [] if value in typing.get_args(tp) else [f"{where}: {value!r} not in {tp}"]
    if origin in (typing.Union, types.UnionType):
        options = [mismatches(value, arm, where) for arm in typing.get_args(tp)]
        return [] if any(not o for o in options) else min(options, key=len)
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {type(value).__name__}, not a list"]
        [item] = typing.get_args(tp)
        return [m for i, v in enumerate(value) for m in mismatches(v, item, f"{where}[{i}]")]
    if tp is type(None):
        return [] if value is None else [f"{where}: {value!r} is not null"]
    if tp is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return [] if ok else [f"{where}: {value!r} is not a number"]
    if tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{where}: {value!r} is not an integer"]
    if tp in (str, bool):
        return [] if isinstance(value, tp) else [f"{where}: {value!r} is not a {tp.__name__}"]
    raise TypeError(f"{where}: the checker does not know {tp!r}")


# --- the checker itself fails where it should (a check that cannot fail is no check) ---

class _Inner(TypedDict):
    verdict: rt.Verdict
    note: NotRequired[str]


class _Outer(TypedDict):
    rows: list[_Inner]
    size: int
    share: float | None


def test_the_checker_finds_each_kind_of_mismatch():
    good = {"rows": [{"verdict": "helpful"}, {"verdict": "neutral", "note": "x"}],
            "size": 3, "share": None}
    assert mismatches(good, _Outer) == []
    assert mismatches({**good, "extra": 1}, _Outer) == ["result: key 'extra' is not in _Outer"]
    assert mismatches({"rows": [], "share": 0.5}, _Outer) == ["result: no key 'size' (_Outer)"]
    assert mismatches({**good, "rows": [{"verdict": "great"}]}, _Outer) == [
        "result.rows[0].verdict: 'great' not in typing.Literal['helpful', 'harmful', "
        "'neutral']"]
    assert mismatches({**good, "size": True}, _Outer) == ["result.size: True is not an integer"]
    assert mismatches({**good, "share": "0.5"}, _Outer) != []
    assert mismatches({**good, "rows": [{"verdict": "harmful", "note": 1}]}, _Outer) != []


# --- real results -----------------------------------------------------------------------

# Between them: elements and subpaths, both finding kinds, invisible units, and (the stray
# example against its reference) a harmful one.
CORPUS_CASES = ["noto/emoji_u1f487_200d_2640.svg", "logos/oauth.svg", "logos/lighthouse.svg",
                "feather/mic-off.svg"]


@pytest.fixture(scope="module")
def results(corpus_dir) -> list[dict]:
    settings = ScoreSettings(backbone="pixel", size=128)
    out = [score_file(str(corpus_dir / name), settings).result for name in CORPUS_CASES]
    out.append(score_file(str(EXAMPLES / "billiards-with-stray.svg"),
                          settings.with_(reference=str(EXAMPLES / "billiards.svg"))).result)
    # What a front end reads: the JSON the CLI prints and the daemon sends.
    return [json.loads(json.dumps(r)) for r in out]


def test_real_results_match_the_typed_contract(results):
    for result in results:
        assert mismatches(result, rt.ScoreResult) == [], result["file"]


def test_the_cases_cover_every_variant_of_the_types(results):
    rows = [row for r in results for row in r["units"]]
    assert {row["kind"] for row in rows} == set(typing.get_args(rt.UnitKind))
    assert {row["verdict"] for row in rows} == set(typing.get_args(rt.Verdict))
    assert {f["kind"] for row in rows for f in row["findings"]} == \
        set(typing.get_args(rt.FindingKind))
