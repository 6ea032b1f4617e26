"""svgbench against a real HTTP judge on 127.0.0.1: request bodies byte for byte, the
score for each kind of answer, the failure paths, fallback, retries, concurrency, repeat."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("httpx", reason="the judge client needs httpx (the [judge] extra)")

from judge_server import ScriptedJudge
from svgloo.evals.runner import RunOptions, run_eval
from svgloo.evals.svgbench.render import render_cairosvg, svg_size
from svgloo.evals.svgbench.suite import DATA, SvgbenchSuite

ROWS = [json.loads(line) for line in DATA.read_text().splitlines()]
SVG = '<svg viewBox="0 0 100 100" width="100" height="100"><circle cx="50" cy="50" r="40" fill="red"/></svg>'
RESPONSE = f"Here it is:\n```svg\n{SVG}\n```\nDone."


def answer(count) -> str:
    return json.dumps({"number_of_fulfilled_requirements": count, "reasoning": "scripted"})


def judge_text(reqs: list[str]) -> str:
    """The original's judge text, written out here independently of prompts.py."""
    numbered = "\n".join(f"{i}. {r}" for i, r in enumerate(reqs, 1))
    n = len(reqs)
    return ("Examine the generated image. How many of the following " + str(n) +
            " requirements were fulfilled?\n\nBe strict about the requirements and respond "
            "ONLY with a JSON object in this exact format:\n"
            '{"number_of_fulfilled_requirements": <count>,\n"reasoning": <reasoning_text>}\n\n'
            "Where <count> is a number between 0 and " + str(n) + ".\n\nRequirements:\n" +
            numbered)


REQ_SCHEMA = {"properties": {"reasoning": {"title": "Reasoning", "type": "string"},
                             "number_of_fulfilled_requirements": {
                                 "title": "Number Of Fulfilled Requirements",
                                 "type": "integer"}},
              "required": ["reasoning", "number_of_fulfilled_requirements"],
              "title": "SVGBenchResponse", "type": "object"}


def expected_body(reqs, png: bytes, model="judge-model", schema=True) -> bytes:
    body = {"model": model, "messages": [{"role": "user", "content": [
        {"type": "text", "text": judge_text(reqs)},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," +
                                            base64.b64encode(png).decode()}}]}],
            "temperature": 0.0}
    if schema:
        body["response_format"] = {"type": "json_schema", "json_schema": {
            "name": "SVGBenchResponse", "schema": REQ_SCHEMA}}
    return json.dumps(body).encode()


def preds_file(tmp_path, responses: dict):
    p = tmp_path / "preds.jsonl"
    p.write_text("".join(json.dumps({"id": k, "response": v}) + "\n"
                         for k, v in responses.items()))
    return p


def run(tmp_path, judge, responses, task="requirements", limit=None, workers=1, **opts):
    options = {"judge_url": judge.url if judge else None, "judge_model": "judge-model",
               "judge_backoff": 0.0, "judge_retries": 2, **opts}
    return run_eval(SvgbenchSuite(), task, "builtin", preds_file(tmp_path, responses),
                    RunOptions(limit=limit or len(responses), workers=workers,
                               suite_options=options, progress=False))


def test_scores_for_each_answer_and_bodies_byte_for_byte(tmp_path):
    n = [len(r["requirements"]) for r in ROWS[:7]]
    script = [(200, answer(-3)), (200, answer(0)), (200, answer(7)), (200, answer(n[3])),
              (200, answer(n[4] + 5)), (200, json.dumps({"reasoning": "no count"})),
              (200, "")]
    with ScriptedJudge(script) as judge:
        result = run(tmp_path, judge, {f"row_{i}": RESPONSE for i in range(7)})
    scores = [r["metrics"]["score"] for r in result["samples"]]
    assert scores == [0.0, 0.0, pytest.approx(7 / n[2]), 1.0, 1.0, 0.0, 0.0]
    assert "Missing required field" in result["samples"][5]["reason"]
    assert "Empty response" in result["samples"][6]["reason"]
    png = render_cairosvg(SVG)
    assert len(judge.bodies) == 7
    for i, body in enumerate(judge.bodies):
        assert body == expected_body(ROWS[i]["requirements"], png), i
    assert result["summary"]["score"] == pytest.approx(sum(scores) / 7)
    assert result["summary"]["passed"] is (sum(scores) / 7 >= 0.5)


def test_the_png_is_the_padded_cairosvg_render():
    from PIL import Image
    import io

    png = render_cairosvg(SVG)
    img = Image.open(io.BytesIO(png)).convert("RGB")
    assert img.size == (100 + 40, 100 + 40)
    assert img.getpixel((5, 5)) == (255, 255, 255)            # padding
    assert img.getpixel((70, 70)) == (255, 0, 0)              # the circle's centre
    assert svg_size('<svg viewBox="0 0 300 200">') == (300, 200)
    assert svg_size('<svg width="640" height="480" viewBox="0 0 10 10">') == (640, 480)
    assert svg_size("<svg>") == (800, 600)


def test_failure_paths_score_zero_without_asking(tmp_path):
    with ScriptedJudge([]) as judge:
        result = run(tmp_path, judge, {"row_0": "I cannot draw that.",
                                       "row_1": "```svg\n<svg><g></svg>\n```"}, limit=3)
    rows = {r["id"]: r for r in result["samples"]}
    assert rows["row_0"]["status"] == "no_svg" and rows["row_0"]["metrics"]["score"] == 0.0
    assert rows["row_0"]["reason"].startswith("SVG extraction failed")
    assert rows["row_1"]["status"] == "render_error"
    assert rows["row_1"]["reason"].startswith("Failed to render SVG to PNG")
    assert rows["row_2"]["status"] == "missing" and rows["row_2"]["metrics"]["score"] == 0.0
    assert judge.bodies == []
    assert result["summary"]["score"] == 0.0 and result["summary"]["passed"] is False


def test_fallback_without_json_schema(tmp_path):
    def server_without_schema(body):
        if "response_format" in body:
            return 400, None
        return 200, "Sure.\n```json\n" + answer(4) + "\n```"

    with ScriptedJudge(server_without_schema) as judge:
        result = run(tmp_path, judge, {"row_0": RESPONSE, "row_1": RESPONSE})
    n0, n1 = (len(ROWS[i]["requirements"]) for i in (0, 1))
    assert [r["metrics"]["score"] for r in result["samples"]] == [
        pytest.approx(4 / n0), pytest.approx(4 / n1)]
    png = render_cairosvg(SVG)
    # one refused request, then the same body without response_format; the second sample
    # goes straight to the fallback
    assert judge.bodies == [expected_body(ROWS[0]["requirements"], png),
                            expected_body(ROWS[0]["requirements"], png, schema=False),
                            expected_body(ROWS[1]["requirements"], png, schema=False)]


def test_retries_then_gives_up(tmp_path):
    with ScriptedJudge([(503, None), (200, answer(3)), (500, None), (500, None),
                        (500, None)]) as judge:
        result = run(tmp_path, judge, {"row_0": RESPONSE, "row_1": RESPONSE})
    a, b = result["samples"]
    assert a["metrics"]["score"] == pytest.approx(3 / len(ROWS[0]["requirements"]))
    assert b["metrics"]["score"] == 0.0 and "HTTP 500" in b["reason"]
    assert len(judge.bodies) == 5                       # 2 for row_0, 1 + 2 retries for row_1


def test_unreachable_judge_scores_zero(tmp_path):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()                                            # nothing listens there now

    class Closed:
        url = f"http://127.0.0.1:{port}/v1"

    result = run(tmp_path, Closed, {"row_0": RESPONSE})
    row = result["samples"][0]
    assert row["metrics"]["score"] == 0.0 and "unreachable" in row["reason"]


def test_repeat_reports_the_spread(tmp_path):
    with ScriptedJudge([(200, answer(2)), (200, answer(4)), (200, answer(6))]) as judge:
        result = run(tmp_path, judge, {"row_0": RESPONSE}, repeat=3)
    n = len(ROWS[0]["requirements"])
    m = result["samples"][0]["metrics"]
    assert m["runs"] == [pytest.approx(2 / n), pytest.approx(4 / n), pytest.approx(6 / n)]
    assert m["score"] == pytest.approx(4 / n)
    assert m["std"] == pytest.approx((8 / 3) ** 0.5 / n)
    assert result["summary"]["repeat"] == 3
    assert result["summary"]["repeat_range"] == pytest.approx(4 / n)
    assert len(set(judge.bodies)) == 1                   # the same request each time


def test_live_combines_point3_and_point7(tmp_path):
    pref = {k: 0.5 for k in ("intent_matching_score", "content_recognizability_score",
                             "spatial_design_score", "user_experience_score",
                             "visual_coherence_score")}
    pref["overall_human_preference_score"] = 0.8
    script = [(200, answer(3)), (200, json.dumps(pref)),
              (200, answer(3)), (200, json.dumps({"overall_human_preference_score": 0.8}))]
    with ScriptedJudge(script) as judge:
        result = run(tmp_path, judge, {"row_0": RESPONSE, "row_1": RESPONSE}, task="live")
    n = len(ROWS[0]["requirements"])
    a, b = result["samples"]
    assert a["metrics"]["score"] == pytest.approx(0.3 * 3 / n + 0.7 * 0.8)
    assert b["metrics"]["score"] == 0.0 and "intent_matching_score" in b["reason"]
    second = json.loads(judge.bodies[1])
    assert second["response_format"]["json_schema"]["name"] == "HumanPreferenceResponse"
    text = second["messages"][0]["content"][0]["text"]
    assert text.startswith("You are evaluating an SVG image from a human preference "
                           "perspective.\n\nOriginal Request: " + ROWS[0]["prompt"] + "\n")
    assert result["summary"]["pass_threshold"] == 0.6


@pytest.mark.slow
def test_concurrency_limit_and_key_header(tmp_path, monkeypatch):
    def slow(body):
        time.sleep(0.05)
        return 200, answer(1)

    monkeypatch.setenv("SVGLOO_TEST_JUDGE_KEY", "sk-test")
    with ScriptedJudge(slow) as judge:
        result = run(tmp_path, judge, {f"row_{i}": RESPONSE for i in range(6)}, workers=4,
                     judge_concurrency=2, judge_key_env="SVGLOO_TEST_JUDGE_KEY")
    assert all(r["status"] == "ok" for r in result["samples"])
    assert 1 <= judge.max_in_flight <= 2
    assert all(h.get("Authorization") == "Bearer sk-test" for h in judge.headers)


def test_without_a_judge_the_metric_is_skipped(tmp_path):
    result = run(tmp_path, None, {"row_0": RESPONSE})
    assert result["samples"][0]["status"] == "ok"
    assert result["summary"]["score"] is None
    assert result["skipped_metrics"][0]["name"] == "score"


def test_cli_prompts_and_a_judged_run(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "svgloo.cli", "eval", "svgbench", "prompts"],
                          capture_output=True, text=True, timeout=120)
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    assert len(lines) == 105 and lines[0]["id"] == "row_0"
    reqs = "\n".join(f"{i}. {r}" for i, r in enumerate(ROWS[0]["requirements"], 1))
    assert lines[0]["prompt"] == (
        ROWS[0]["prompt"] + " Wrap the SVG code in an SVG code block following the example "
        'below.\n\nExample:\n```svg\n<svg viewBox="0 0 100 100" width="100" height="100">\n'
        '    <circle cx="50" cy="50" r="40" fill="red" />\n</svg>\n```\n\nRequirements:\n' + reqs)
    with ScriptedJudge([(200, answer(100))]) as judge:
        out = tmp_path / "r.json"
        proc = subprocess.run(
            [sys.executable, "-m", "svgloo.cli", "eval", "svgbench", "requirements", "--pred",
             str(preds_file(tmp_path, {"row_0": RESPONSE})), "--limit", "1", "--judge-url",
             judge.url, "--judge-model", "judge-model", "--out", str(out)],
            capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert data["summary"]["score"] == 1.0 and data["summary"]["passed"] is True
    bad = subprocess.run([sys.executable, "-m", "svgloo.cli", "eval", "svgbench",
                          "requirements", "--pred", str(tmp_path / "preds.jsonl"),
                          "--judge-url", "http://127.0.0.1:9/v1", "--judge-key-env",
                          "SVGLOO_SURELY_UNSET_VAR"], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and "SVGLOO_SURELY_UNSET_VAR" in bad.stderr
    assert threading.active_count() >= 1
