"""The ``svgbench`` suite of ``svgloo eval``: eval-protocol's SVGBench requirement judge.

    svgloo eval svgbench prompts [--data FILE] > prompts.jsonl   (what the model is asked)
    svgloo eval svgbench requirements --pred preds.jsonl --judge-url URL --judge-model NAME
    svgloo eval svgbench live ...      (0.3 requirements + 0.7 the rubric judge's score)

Without ``--data`` the vendored 105-row data set is used; ids are ``row_<i>`` as in the
original. The original evaluates only the first row by default (``max_dataset_rows=1``):
``--limit 1`` does the same.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import threading
from pathlib import Path
from typing import Any

from ..base import ERROR, MISSING, NO_SVG, OK, RENDER_ERROR, EvalContext, EvalSample, \
    Prediction, Scored, infrastructure_failure
from ..engine import ConfigError, InputError, SvglooError
from ..predictions import jsonl_rows
from . import prompts
from .judge import JudgeClient, JudgeError
from .render import render_png

UPSTREAM = "eval-protocol/python-sdk@000c2a4 tests/pytest/test_svgbench.py, test_livesvgbench.py"
DATA = Path(__file__).with_name("svgbench_dataset.jsonl")
PASS_THRESHOLD = {"requirements": 0.5, "live": 0.6}
LIVE_WEIGHTS = (0.3, 0.7)     # requirements, human preference
DEFAULT_MODEL = "gpt-4.1"     # the original's judge; any name the endpoint serves works


def load_rows(data: Path | None) -> list[dict]:
    path = DATA if data is None or str(data) in ("", "builtin") else Path(data)
    if path.is_dir():
        for candidate in (path / "svgbench_dataset.jsonl",
                          path / "tests" / "pytest" / "data" / "svgbench_dataset.jsonl"):
            if candidate.is_file():
                path = candidate
                break
    if not path.is_file():
        raise InputError(str(path), "no svgbench data set (a JSONL of {prompt, requirements})")
    rows = []
    for n, row in jsonl_rows(path, path.read_text(encoding="utf-8").splitlines()):
        if not isinstance(row, dict) or not isinstance(row.get("prompt"), str) or \
                not isinstance(row.get("requirements"), list) or not row["requirements"]:
            raise InputError(str(path), f"line {n} lacks \"prompt\" or \"requirements\"")
        rows.append(row)
    return rows


def requirements_score(content: str, n: int) -> tuple[float, dict]:
    """The original's parsing: empty → error; JSON; the field must be there; then
    clamp(count, 0, N) / N. Raises ValueError/TypeError like the original."""
    if not content or content.strip() == "":
        raise ValueError("Empty response from LLM judge")
    result = json.loads(content)
    if not isinstance(result, dict) or "number_of_fulfilled_requirements" not in result:
        raise ValueError("Missing required field in response")
    fulfilled = result.get("number_of_fulfilled_requirements", 0)
    fulfilled = max(0, min(fulfilled, n))
    return fulfilled / n, result


def preference_score(content: str) -> tuple[float, dict]:
    if not content or content.strip() == "":
        raise ValueError("Empty response from human preference evaluator")
    result = json.loads(content)
    for name in prompts.PREFERENCE_REQUIRED:
        if not isinstance(result, dict) or name not in result:
            raise ValueError(f"Missing required field in response: {name}")
    return float(result.get("overall_human_preference_score", 0.0)), result


class SvgbenchSuite:
    name = "svgbench"
    upstream = UPSTREAM
    description = ("SVGBench (eval-protocol): a vision judge counts the fulfilled "
                   "requirements of 105 prompts; 'live' adds a 5-rubric preference judge")
    tasks = ("requirements", "live")
    commands = ("prompts",)
    builtin_data = "builtin"     # the vendored data set when --data is not given

    def __init__(self):
        self._lock = threading.Lock()
        self._clients: dict = {}

    # ---- data and prompts

    def load(self, data: Path, task: str) -> list[EvalSample]:
        return [EvalSample(f"row_{i}", task, {"prompt": r["prompt"],
                                              "requirements": list(r["requirements"])})
                for i, r in enumerate(load_rows(data))]

    def run_command(self, args) -> int:
        for i, row in enumerate(load_rows(Path(args.data) if args.data else None)):
            sys.stdout.write(json.dumps({"id": f"row_{i}",
                                         "prompt": prompts.generation_prompt(row)}) + "\n")
        return 0

    # ---- scoring

    def _client(self, ctx: EvalContext) -> JudgeClient | None:
        o = ctx.options
        if not o.get("judge_url"):
            return None
        key = (o["judge_url"], o.get("judge_model"))
        with self._lock:
            if key not in self._clients:
                api_key = None
                if o.get("judge_key_env"):
                    api_key = os.environ.get(o["judge_key_env"])
                    if not api_key:
                        raise ConfigError(None, f"--judge-key-env {o['judge_key_env']}: "
                                                "that variable is not set")
                self._clients[key] = JudgeClient(
                    o["judge_url"], o.get("judge_model") or DEFAULT_MODEL, api_key,
                    temperature=0.0, timeout=float(o.get("judge_timeout") or 120),
                    retries=int(o.get("judge_retries", 3)),
                    concurrency=int(o.get("judge_concurrency") or 4),
                    backoff=float(o.get("judge_backoff", 1.0)))
            return self._clients[key]

    def score(self, sample: EvalSample, prediction: Prediction | None,
              ctx: EvalContext) -> Scored:
        zero = {"score": 0.0}
        if prediction is None:
            return Scored(MISSING, zero, "No model response found")
        svg_code: str | None
        if prediction.svg is not None:
            svg_code = prediction.svg.strip()
        else:
            text = prediction.response or ""
            reason = ctx.too_large(text)
            if reason:
                return Scored(ERROR, reason=reason)
            svg_code = prompts.extract_svg_code(text)
        if not svg_code:
            return Scored(NO_SVG, zero, "SVG extraction failed: No valid SVG code found in "
                                        "response")
        reason = ctx.too_large(svg_code)
        if reason:
            return Scored(ERROR, reason=reason)
        try:
            png = render_png(svg_code, ctx.options.get("render") or "cairosvg", ctx.limits,
                             ctx.pool if (ctx.options.get("render") or "cairosvg") == "cairosvg"
                             else None)
        except SvglooError as exc:
            if infrastructure_failure(exc):  # svgloo's failure (a limit, chromium died)
                raise
            return Scored(RENDER_ERROR, zero, f"Failed to render SVG to PNG ({exc})")
        client = self._client(ctx)
        if client is None:
            return Scored(OK, {"score": None, "rendered_png_bytes": len(png)},
                          "no judge (--judge-url): rendered only", svg=svg_code)
        n = len(sample.inputs["requirements"])
        repeat = max(1, int(ctx.options.get("repeat") or 1))
        runs, reasons = [], []
        for _ in range(repeat):
            value, reason = self._judge_once(client, sample, png, n)
            runs.append(value)
            reasons.append(reason)
        metrics = {"score": statistics.fmean(runs), "n_requirements": n, "runs": runs}
        if repeat > 1:
            metrics.update(std=statistics.pstdev(runs), min=min(runs), max=max(runs))
        failed = [r for r in reasons if r and r.startswith("Evaluation error")]
        return Scored(OK, metrics, "; ".join(failed) or reasons[0], svg=svg_code)

    def _judge_once(self, client, sample, png: bytes, n: int) -> tuple[float, str]:
        live = sample.task == "live"
        try:
            content = client.ask(prompts.requirements_judge_prompt(sample.inputs["requirements"]),
                                 png, prompts.REQUIREMENTS_SCHEMA_NAME,
                                 prompts.REQUIREMENTS_SCHEMA)
            req, result = requirements_score(content, n)
            if not live:
                return req, str(result.get("reasoning", ""))
            content = client.ask(prompts.preference_judge_prompt(sample.inputs["prompt"],
                                                                 sample.inputs["requirements"]),
                                 png, prompts.PREFERENCE_SCHEMA_NAME, prompts.PREFERENCE_SCHEMA)
            pref, _ = preference_score(content)
            return LIVE_WEIGHTS[0] * req + LIVE_WEIGHTS[1] * pref, \
                f"requirements {req:.3f}, human preference {pref:.3f}"
        except (JudgeError, ValueError, TypeError) as exc:
            return 0.0, f"Evaluation error: {exc}"

    def aggregate(self, rows: list[dict], task: str) -> dict:
        """Mean score over every sample (failures count 0.0, as in the original), pass or
        not, and with --repeat K the K run means and their spread."""
        threshold = PASS_THRESHOLD[task]
        if any(r["status"] == OK and r["metrics"].get("score") is None for r in rows) \
                or not rows:
            return {"score": None, "n": len(rows), "passed": None, "pass_threshold": threshold}
        mean = statistics.fmean(r["metrics"].get("score") or 0.0 for r in rows)
        summary: dict[str, Any] = {"score": mean, "n": len(rows), "pass_threshold": threshold,
                   "passed": mean >= threshold}
        k = max((len(r["metrics"].get("runs", ())) for r in rows), default=0)
        if k > 1:
            per_repeat = [statistics.fmean(r["metrics"]["runs"][i] if "runs" in r["metrics"]
                                           else r["metrics"].get("score") or 0.0
                                           for r in rows)
                          for i in range(k)]
            summary.update(repeat=k, repeat_means=per_repeat,
                           repeat_std=statistics.pstdev(per_repeat),
                           repeat_range=max(per_repeat) - min(per_repeat))
        return summary

    def config(self, task: str) -> dict:
        return {"render": None, "judge": {"temperature": 0.0,
                                          "response_format": "json_schema " + (
                                              prompts.REQUIREMENTS_SCHEMA_NAME if task ==
                                              "requirements" else "SVGBenchResponse + "
                                              "HumanPreferenceResponse"),
                                          "score": "clamp(count, 0, N) / N"},
                "pass_threshold": PASS_THRESHOLD[task],
                "combination": "0.3 requirements + 0.7 human preference" if task == "live"
                else None}

    def skipped_metrics(self, task: str, ctx: EvalContext) -> list[dict]:
        if ctx.options.get("judge_url"):
            return []
        return [{"name": "score", "reason": "needs a vision judge: give --judge-url and "
                                            "--judge-model (any OpenAI-compatible server)"}]
