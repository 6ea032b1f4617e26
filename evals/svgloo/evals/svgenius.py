"""SVGenius (ZJU-REAL/SVGenius@528cbff, Apache-2.0): the weight-free metrics, exactly.

Read from the original code (spec eval-suites.md §2.4; file:line below are upstream's):

- answer extraction (``eval_util.py:84-100``): the last ``Answer: <svg…</svg>``, else the
  last ``<svg…</svg>``, else none; a sample with no answer is left out of the averages;
- render (``metrics/data_util.py:42-65``): ``cairosvg.svg2png(bytestring,
  background_color='white', output_width=224, output_height=224, dpi=128, scale=2)``, RGB;
  an SVG that cannot be rendered becomes a blank white 224 x 224 image and still counts;
- MSE (``metrics/compute_mse.py``): mean of (gt - gen)^2 over 3 x 224 x 224, pixels / 255;
- bugfix (``editing/bug_fixing/set_metric.py``): accuracy 1 iff the texts are equal with all
  whitespace removed; change magnitude = cm(bug, model) - cm(bug, truth) when accurate;
- codeopt (``editing/code_opti/set_metric.py``): ratio_percent = 1 - len(gen)/len(ori) in
  UTF-8 bytes (a fraction, despite the name), MSE(ori, gen);
- styleedit (``editing/style_editing/set_metric.py``): edit distances ori->gen, ori->gt,
  their difference; rMSE = sqrt(1 - min(MSE(gen,gt)/MSE(ori,gt), 1)) when MSE(ori,gt) > 0;
  "MSE better" when MSE(gen,gt) <= MSE(ori,gt);
- t2s (``generation/text2svg/set_metrics.py``): CLIPScore and rCLIP with the user's CLIP
  ViT-L/14 weights only (``--weights clip=PATH``); aesthetic, HPSv2, FID and PSS skipped;
- i2s (``generation/image2svg/set_metric.py``, which cannot run as shipped): SSIM
  (skimage, window 11, data_range 255, per channel) and MSE of the generated render
  against the reference render; LPIPS and DINO need weights;
- t2s and i2s: PSS and its dimensions (``pss.py``), when svgelements and svgpathtools
  are installed (the ``eval`` extra); an invalid pair scores 0, as the original's
  text2svg summary counts it;
- qa (``understanding/evaluation_fix.py:58-103``): the letter extraction rules; accuracy =
  correct / total, an unextractable answer counting as wrong.

Departure: when CairoSVG fails, the original first retries on a BeautifulSoup-prettified
copy (``clean_svg``); svgloo does not, so a document that only that repair would save
scores as the blank image (the original's result when the retry fails too).
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any
from pathlib import Path

import numpy as np

from .base import (ERROR, INVALID, MISSING, NO_SVG, OK, RENDER_ERROR, EvalContext, EvalSample,
                   Prediction, Scored, infrastructure_failure)
from .engine import InputError, SvglooError
from .models import clip_score, clip_scorer
from .metrics import change_magnitude, mean, mse, ssim_uniform, whitespace_free_ratio
from .render import RenderProtocol, render_with_warnings

PROTOCOL = RenderProtocol(size=224, dpi=128, background="white",
                          call="cairosvg.svg2png(bytestring, background_color='white', "
                               "output_width=224, output_height=224, dpi=128, scale=2) -> RGB")
TASKS = ("bugfix", "codeopt", "styleedit", "t2s", "i2s", "qa")
PSS_REASON = ("PSS needs svgelements and svgpathtools (pip install 'svgloo[eval]')")
MODEL_METRICS = {
    "i2s": {"lpips": "LPIPS (VGG) needs lpips weights: lpips.LPIPS(net='vgg'); not supported "
                     "by svgloo yet",
            "dino": "DINO score needs DINOv2-base weights (AutoModel './dinov2-base'); not "
                    "supported by svgloo yet",
            "pss": PSS_REASON},
    "t2s": {"clip": "CLIPScore needs OpenAI CLIP ViT-L/14 weights: --weights clip=PATH",
            "rclip": "rCLIP needs OpenAI CLIP ViT-L/14 weights: --weights clip=PATH",
            "aesthetic": "aesthetic score needs the SigLIP v2.5 aesthetic predictor; not "
                         "supported by svgloo yet",
            "hpsv2": "HPSv2 needs the HPS v2.1 checkpoint; not supported by svgloo yet",
            "fid": "FID needs InceptionV3 weights; not supported by svgloo yet",
            "pss": PSS_REASON},
}
WEIGHT_METRICS = {"clip": ("clip", "rclip")}  # --weights NAME -> metrics it enables
_ANSWER_SVG = re.compile(r"Answer:\s*(<svg[\s\S]*?<\/svg>)")
_ANY_SVG = re.compile(r"(<svg[\s\S]*?<\/svg>)")


def extract_svg(response: str) -> str | None:
    """``eval_util.extract_svg_from_response``: the last answer-marked SVG, else the last."""
    found = _ANSWER_SVG.findall(response)
    if found:
        return found[-1]
    found = _ANY_SVG.findall(response)
    return found[-1] if found else None


def extract_choice(response: str | None) -> str | None:
    """``understanding/evaluation_fix.extract_answer``: A-D from a QA response."""
    if not response:
        return None
    found = re.findall(r"Answer:\s*([A-D])", response)
    if found:
        return found[-1]
    for line in reversed(response.split("\n")):
        line = line.strip()
        if line and re.match(r"^[A-D]$", line):
            return line
        m = re.search(r"(?:The\s+)?answer(?:\s+is)?(?:\s*[:=]?\s*)([A-D])", line, re.IGNORECASE)
        if m:
            return m.group(1)
        m = re.search(r"(?:I|my)?\s*(?:choose|select|pick|opt\s+for)(?:\s+option)?\s*(?:is|:)?"
                      r"\s*([A-D])", line, re.IGNORECASE)
        if m:
            return m.group(1)
        m = re.search(r"option\s*([A-D])(?:\s+is\s+(?:correct|right|the\s+answer))", line,
                      re.IGNORECASE)
        if m:
            return m.group(1)
    return None


def repair_metrics(model_svg: str, truth: str, bug: str) -> dict:
    accuracy = 1.0 if whitespace_free_ratio(model_svg, truth) == 1.0 else 0.0
    magnitude = (change_magnitude(bug, model_svg) - change_magnitude(bug, truth)
                 if accuracy == 1 else 0)
    return {"repair_accuracy": accuracy, "change_magnitude": magnitude}


def compression_ratio(ori: str, gen: str) -> float:
    """``ratio_percent``: 1 - gen/ori in UTF-8 bytes (0 - ... when ori is empty: 1)."""
    ori_size, gen_size = len(ori.encode("utf-8")), len(gen.encode("utf-8"))
    return 1 - ((gen_size / ori_size) if ori_size > 0 else 0)


def relative_mse(mse_gen_gt: float, mse_ori_gt: float) -> float | None:
    if mse_ori_gt > 0:
        return math.sqrt(1 - min(mse_gen_gt / mse_ori_gt, 1))
    return None


def _level(path: Path) -> str | None:
    for level in ("easy", "medium", "hard"):
        if level in path.name:
            return level
    return None


class SvgeniusSuite:
    name = "svgenius"
    upstream = "ZJU-REAL/SVGenius@528cbff"
    description = ("SVGenius: bug fixing, code optimisation, style editing, image-to-SVG "
                   "(SSIM, MSE) and understanding QA, weight-free metrics")
    tasks = TASKS
    protocol = PROTOCOL
    loo_backbone = "svgenius-mse"

    def load(self, data: Path, task: str) -> list[EvalSample]:
        path = Path(data)
        if not path.is_file():
            raise InputError(str(path), f"SVGenius {task} data is one JSON task file "
                                        "(src/tasks/...)")
        try:
            items = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(str(path), f"cannot read the task file: {exc}") from None
        level = _level(path)
        try:
            return getattr(self, f"_load_{task}")(items, level, path)
        except (KeyError, TypeError, AttributeError, IndexError) as exc:
            raise InputError(str(path), f"not an SVGenius {task} file (missing {exc})") from None

    def _load_bugfix(self, items, level, path):
        return [EvalSample(f"sample_{i + 1}", "bugfix", {"bug": it["bug_svg"],
                                                         "truth": it["ground_truth"]}, level,
                           reference_svg=it["ground_truth"]) for i, it in enumerate(items)]

    def _load_codeopt(self, items, level, path):
        return [EvalSample(f"sample_{i + 1}", "codeopt", {"original": it["origin_svg"]}, level,
                           reference_svg=it["origin_svg"]) for i, it in enumerate(items)]

    def _load_styleedit(self, items, level, path):
        out = []
        for i, item in enumerate(items):
            [(filename, it)] = item.items()
            out.append(EvalSample(f"sample_{i + 1}", "styleedit",
                                  {"file": filename, "original": it["original"],
                                   "modified": it["modified"], "command": it["command"]},
                                  level, reference_svg=it["modified"]))
        return out

    def _load_t2s(self, items, level, path):
        return [EvalSample(f"sample_{i + 1}", "t2s", {"reference": it["answer"],
                                                      "caption": it["question"][0]}, level,
                           reference_svg=it["answer"]) for i, it in enumerate(items)]

    def _load_i2s(self, items, level, path):
        return [EvalSample(f"sample_{i + 1}", "i2s", {"reference": it["answer"]}, level,
                           reference_svg=it["answer"]) for i, it in enumerate(items)]

    def _load_qa(self, items, level, path):
        entries = items.items() if isinstance(items, dict) else \
            [(os.path.basename(it.get("image_path", "")), it) for it in items]
        out = []
        for image_name, it in entries:
            for key, q in it.get("questions", {}).items():
                out.append(EvalSample(f"{image_name}:{key}", "qa",
                                      {"answer": q.get("answer", "")}, level))
        return out

    # --- scoring ----------------------------------------------------------------------

    def _answer(self, prediction: Prediction | None,
                ctx: EvalContext) -> tuple[str | None, Scored | None]:
        if prediction is None:
            return None, Scored(MISSING, reason="no prediction for this id")
        if prediction.svg is None and prediction.response is None:
            return None, Scored(ERROR, reason="prediction file over svgloo's size limit "
                                              "(not scored)")
        too_large = ctx.too_large(prediction.svg or prediction.response or "")
        if too_large:
            return None, Scored(ERROR, reason=too_large)
        if prediction.svg is not None:
            return prediction.svg, None
        svg = extract_svg(prediction.response or "")
        if svg is None:
            return None, Scored(NO_SVG, reason="no <svg>...</svg> in the response")
        return svg, None

    def _render(self, svg: str, name: str, ctx: EvalContext) -> tuple[np.ndarray, str | None]:
        """The render the original uses; a failure of the document gives its blank white
        image + a reason ("status: why"); refused external references give "ok: ...".
        svgloo's own failures (a limit, a dead worker) go up: they are not the original's
        blank image, and the sample is not scored."""
        kw = {"pool": ctx.pool}
        if ctx.limits is not None:
            kw["limits"] = ctx.limits
        try:
            rgb, warnings = render_with_warnings(svg, PROTOCOL, name, **kw)
            return rgb, (f"{OK}: " + "; ".join(warnings)) if warnings else None
        except SvglooError as exc:
            if infrastructure_failure(exc):
                raise
            status = INVALID if isinstance(exc, InputError) else RENDER_ERROR
            return _white(), f"{status}: {exc}"

    def score(self, sample: EvalSample, prediction: Prediction | None,
              ctx: EvalContext) -> Scored:
        if sample.task == "qa":
            return self._score_qa(sample, prediction, ctx)
        svg, failed = self._answer(prediction, ctx)
        if failed:
            return failed
        assert svg is not None  # _answer gives one or the other
        inputs = sample.inputs
        if sample.task == "bugfix":
            return Scored(OK, repair_metrics(svg, inputs["truth"], inputs["bug"]), svg=svg)
        gen, problem = self._render(svg, f"{sample.id} (prediction)", ctx)
        metrics: dict[str, Any]
        if sample.task == "codeopt":
            ori, _ = self._render(inputs["original"], f"{sample.id} (original)", ctx)
            metrics = {"ratio_percent": compression_ratio(inputs["original"], svg),
                       "mse": mse(ori, gen)}
        elif sample.task == "styleedit":
            gt, _ = self._render(inputs["modified"], f"{sample.id} (modified)", ctx)
            ori, _ = self._render(inputs["original"], f"{sample.id} (original)", ctx)
            to_gen = change_magnitude(inputs["original"], svg)
            to_gt = change_magnitude(inputs["original"], inputs["modified"])
            m_gen, m_ori = mse(gt, gen), mse(gt, ori)
            metrics = {"ori_to_gen": to_gen, "ori_to_gt": to_gt, "difference": to_gen - to_gt,
                       "mse_gen_vs_gt": m_gen, "mse_ori_vs_gt": m_ori,
                       "rmse": relative_mse(m_gen, m_ori), "mse_better": m_gen <= m_ori}
        elif sample.task == "t2s":
            metrics = self._text_metrics(sample, gen, ctx)
            metrics.update(self._pss_metrics(inputs["reference"], svg, ctx))
        else:  # i2s
            ref, _ = self._render(inputs["reference"], f"{sample.id} (reference)", ctx)
            metrics = {"ssim": ssim_uniform(ref, gen), "mse": mse(ref, gen)}
            metrics.update(self._pss_metrics(inputs["reference"], svg, ctx))
        if problem:
            status, _, reason = problem.partition(": ")
            if status != OK:
                reason += " (scored as the blank white image, as the original does)"
            return Scored(status, metrics, reason, svg=svg)
        return Scored(OK, metrics, svg=svg)

    def _pss_metrics(self, reference: str, generated: str, ctx: EvalContext) -> dict:
        if not pss_available():
            return {}
        from .engine import DEFAULT_LIMITS
        from .pss import pss

        result = pss(reference, generated, ctx.limits or DEFAULT_LIMITS, ctx.pool)
        out = {"pss": result["pss"], "pss_valid": result["valid"]}
        if result["valid"]:
            out.update({f"pss_{k}": result[k] for k in ("global_iou", "path_count", "shape",
                                                        "color", "position", "order")})
        else:
            out["pss_invalid_reason"] = result["reason"]
        return out

    def _text_metrics(self, sample: EvalSample, gen: np.ndarray, ctx: EvalContext) -> dict:
        """CLIPScore and rCLIP (``generation/text2svg/set_metrics.py:7-22``) when the user
        gave CLIP weights; rCLIP returns the raw CLIPScore when the reference's is <= 0,
        as the original does."""
        scorer = clip_scorer(ctx)
        if scorer is None:
            return {}
        caption = sample.inputs["caption"]
        ref, _ = self._render(sample.inputs["reference"], f"{sample.id} (reference)", ctx)
        c_gen, c_ref = clip_score(scorer, gen, caption), clip_score(scorer, ref, caption)
        rclip = 1 - max(0.0, (c_ref - c_gen) / c_ref) if c_ref > 0 else c_gen
        return {"clip": c_gen, "clip_reference": c_ref, "rclip": rclip}

    def _score_qa(self, sample: EvalSample, prediction: Prediction | None,
                  ctx: EvalContext) -> Scored:
        if prediction is None:
            return Scored(MISSING, reason="no response for this question")
        if ctx.too_large(prediction.response or ""):
            return Scored(ERROR, reason=ctx.too_large(prediction.response or ""))
        choice = extract_choice(prediction.response)
        correct = bool(choice) and choice == sample.inputs["answer"]
        return Scored(OK, {"model_answer": choice, "correct_answer": sample.inputs["answer"],
                           "is_correct": correct},
                      None if choice else "no A-D answer found (counts as wrong)")

    # --- summaries (the originals' evaluation.py) ---------------------------------------

    def aggregate(self, rows: list[dict], task: str) -> dict:
        # What the original evaluates: every sample with an answer, render failures
        # included (blank image); missing, unextractable and oversized answers excluded.
        done = [r["metrics"] for r in rows if r["metrics"] or r["status"] == OK]
        out: dict = {"samples_evaluated": len(done), "total_samples": len(rows),
                     "success_rate": len(done) / len(rows) if rows else 0}
        if task == "bugfix":
            perfect = [m for m in done if m["repair_accuracy"] == 1]
            out.update(average_repair_accuracy=mean(m["repair_accuracy"] for m in done),
                       change_magnitude=mean(m["change_magnitude"] for m in done),
                       change_magnitude_perfect=mean(m["change_magnitude"] for m in perfect)
                       or 0.0,
                       perfect_repair_rate=len(perfect) / len(done) if done else None)
        elif task == "codeopt":
            zero = [m for m in done if m["mse"] == 0]
            out.update(ratio_percent=mean(m["ratio_percent"] for m in done),
                       mse=mean(m["mse"] for m in done),
                       mse_zero_percentage=100 * len(zero) / len(done) if done else None,
                       zero_mse_ratio_percent=mean(m["ratio_percent"] for m in zero))
        elif task == "styleedit":
            better = [m for m in done if m["mse_better"]]
            out.update(
                edit_distance_original_to_generated=mean(m["ori_to_gen"] for m in done),
                edit_distance_original_to_modified=mean(m["ori_to_gt"] for m in done),
                edit_distance_difference=mean(m["difference"] for m in done),
                mse_gen_vs_gt=mean(m["mse_gen_vs_gt"] for m in done),
                mse_ori_vs_gt=mean(m["mse_ori_vs_gt"] for m in done),
                custom_metric=mean(m["rmse"] for m in done),
                mse_better_samples_percentage=100 * len(better) / len(done) if done else None,
                mse_better_edit_distance_difference=mean(m["difference"] for m in better))
            tot_gen = sum(m["mse_gen_vs_gt"] for m in done)
            tot_ori = sum(m["mse_ori_vs_gt"] for m in done)
            out["mse_ratio"] = tot_gen / tot_ori if tot_ori > 0 else None
        elif task == "t2s":
            if any("clip" in m for m in done):  # only with --weights clip=PATH
                out.update(clip=mean(m.get("clip") for m in done),
                           rclip=mean(m.get("rclip") for m in done))
        elif task == "i2s":
            out.update(ssim=mean(m["ssim"] for m in done), mse=mean(m["mse"] for m in done))
        if task in ("t2s", "i2s") and any("pss" in m for m in done):
            out["pss"] = mean(m.get("pss") for m in done)
            out["pss_valid_share"] = sum(bool(m.get("pss_valid")) for m in done) / len(done)
        elif task == "qa":
            answered = [r["metrics"] for r in rows if r["status"] == OK]
            correct = sum(m["is_correct"] for m in answered)
            out = {"overall_accuracy": correct / len(answered) if answered else 0,
                   "total": len(answered), "correct": correct,
                   "answer_is_null": sum(m["model_answer"] is None for m in answered)}
        return out

    def config(self, task: str) -> dict:
        if task in ("bugfix", "qa"):
            return {"render": None, "extraction": "eval_util.extract_svg_from_response"
                    if task == "bugfix" else "evaluation_fix.extract_answer"}
        return {"render": PROTOCOL.to_json(),
                "extraction": "eval_util.extract_svg_from_response",
                "render_failure": "blank white 224 x 224 image (data_util.rasterize_svg)"}

    def skipped_metrics(self, task: str, ctx: EvalContext) -> list[dict]:
        enabled = {m for name, metrics in WEIGHT_METRICS.items() if ctx.weights.get(name)
                   for m in metrics}
        if pss_available():
            enabled.add("pss")
        return [{"name": name, "reason": reason}
                for name, reason in MODEL_METRICS.get(task, {}).items() if name not in enabled]

    def weights_used(self, task: str) -> set[str]:
        """``--weights`` names this task reads (the runner warns about the others)."""
        return {"clip", "clip-config"} if task == "t2s" else set()


def pss_available() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("svgelements", "svgpathtools"))


def _white() -> np.ndarray:
    return np.full((PROTOCOL.size, PROTOCOL.size, 3), 255, np.uint8)
