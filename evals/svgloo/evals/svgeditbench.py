"""SVGEditBench (mti-lab/SVGEditBench, V1): six editing tasks on 100 Twemoji.

The repository ships the cases (``<n>_<Task>/query/<codepoint>.txt`` with the original in
the first ```svg block, ``answer/<codepoint>.svg``) but no evaluation code. The paper's
"No Edit" baselines (0.0286 / 0.0878 / 0.0402 / 0.1174 for Set Contour / Upside-Down /
Transparency / Crop to Half) are reproduced to 4 d.p. by exactly this protocol, and by no
other size or channel choice (spec eval-suites.md §3.3):

- the answer is the text of the response's only ```svg block; none, or several, and the
  response is excluded from the averages (counted by status);
- output and answer are rendered by CairoSVG at 72 x 72 px on a white background, RGB,
  pixels / 255; MSE is the mean over pixels and the three channels;
- compression ratio = len(output code) / len(original code).
"""

from __future__ import annotations

import re
from pathlib import Path

from .base import (ERROR, INVALID, MISSING, NO_SVG, OK, RENDER_ERROR, EvalContext, EvalSample,
                   Prediction, Scored, infrastructure_failure)
from .engine import InputError, RenderError, SvglooError
from .metrics import mean, mse
from .render import RenderProtocol, render, render_with_warnings

FOLDERS = {
    "changecolor": "1_ChangeColor",
    "setcontour": "2_SetContour",
    "compression": "3_Compression",
    "upsidedown": "4_UpSideDown",
    "transparency": "5_Transparency",
    "croptohalf": "6_CropToHalf",
}
PAPER_NO_EDIT = {"setcontour": 0.0286, "upsidedown": 0.0878, "transparency": 0.0402,
                 "croptohalf": 0.1174}
PROTOCOL = RenderProtocol(size=72, dpi=96, background="white",
                          call='cairosvg.svg2png(bytestring, background_color="white", '
                               'output_width=72, output_height=72) -> RGB / 255')
_BLOCK = re.compile(r"```svg(.*?)```", re.DOTALL)


def svg_blocks(text: str) -> list[str]:
    """The contents of every ```svg ... ``` block, stripped."""
    return [b.strip() for b in _BLOCK.findall(text)]


def extract_answer(response: str) -> tuple[str | None, str, str | None]:
    """(svg, status, reason) from a raw response: exactly one ```svg block is an answer."""
    blocks = svg_blocks(response)
    if not blocks:
        return None, NO_SVG, "no ```svg block in the response"
    if len(blocks) > 1:
        return None, INVALID, f"{len(blocks)} ```svg blocks (the paper excludes these)"
    return blocks[0], OK, None


class SvgEditBenchSuite:
    name = "svgeditbench"
    upstream = "mti-lab/SVGEditBench@5744bd4 (data; metric from the paper, no code released)"
    description = "SVGEditBench V1: six SVG editing tasks, MSE at 72 px and compression ratio"
    tasks = tuple(FOLDERS)
    loo_backbone = "svgeditbench-mse"

    protocol = PROTOCOL

    def load(self, data: Path, task: str) -> list[EvalSample]:
        folder = Path(data) / FOLDERS[task]
        if not (folder / "query").is_dir() or not (folder / "answer").is_dir():
            raise InputError(str(data), f"not an SVGEditBench checkout: {FOLDERS[task]}/query "
                                        "and /answer are missing")
        samples = []
        for query in sorted((folder / "query").glob("*.txt")):
            answer = folder / "answer" / f"{query.stem}.svg"
            if not answer.is_file():
                raise InputError(str(answer), "answer file missing for this query")
            text = query.read_text(encoding="utf-8")
            blocks = svg_blocks(text)
            if not blocks:
                raise InputError(str(query), "query holds no ```svg block with the original")
            gt = answer.read_text(encoding="utf-8")
            samples.append(EvalSample(query.stem, task, {"original": blocks[0], "answer": gt,
                                                         "query": text},
                                      reference_svg=gt))
        return samples

    def score(self, sample: EvalSample, prediction: Prediction | None,
              ctx: EvalContext) -> Scored:
        if ctx.options.get("no_edit"):
            svg, status, reason = sample.inputs["original"], OK, None
        elif prediction is None:
            return Scored(MISSING, reason="no prediction for this id")
        elif prediction.svg is None and prediction.response is None:
            return Scored(ERROR, reason="prediction file over svgloo's size limit (not scored)")
        elif ctx.too_large(prediction.svg or prediction.response or ""):
            return Scored(ERROR, reason=ctx.too_large(prediction.svg or prediction.response or ""))
        elif prediction.svg is not None:
            svg, status, reason = prediction.svg.strip(), OK, None
        else:
            svg, status, reason = extract_answer(prediction.response or "")
        if svg is None:
            return Scored(status, reason=reason)
        kw = {"pool": ctx.pool}
        if ctx.limits is not None:
            kw["limits"] = ctx.limits
        try:
            gt = render(sample.inputs["answer"], self.protocol, f"{sample.id} (answer)", **kw)
        except SvglooError as exc:
            if infrastructure_failure(exc):
                raise
            return Scored(RENDER_ERROR, reason=f"the answer itself does not render: {exc}")
        try:
            out, warnings = render_with_warnings(svg, self.protocol,
                                                 f"{sample.id} (prediction)", **kw)
        except SvglooError as exc:  # svgloo's own failures go up: never scored
            if infrastructure_failure(exc):
                raise
            status = RENDER_ERROR if isinstance(exc, RenderError) else INVALID
            return Scored(status, reason=str(exc), svg=svg)
        original = sample.inputs["original"]
        return Scored(OK, {"mse": mse(out, gt),
                           "compression_ratio": len(svg) / len(original)},
                      "; ".join(warnings) or None, svg=svg)

    def aggregate(self, rows: list[dict], task: str) -> dict:
        ok = [r for r in rows if r["status"] == OK]
        summary = {
            "mse": mean(r["metrics"]["mse"] for r in ok),
            "compression_ratio": mean(r["metrics"]["compression_ratio"] for r in ok),
            "n_scored": len(ok),
            "n_excluded": len(rows) - len(ok),
        }
        if task in PAPER_NO_EDIT:
            summary["paper_no_edit_mse"] = PAPER_NO_EDIT[task]
        return summary

    def config(self, task: str) -> dict:
        return {"render": self.protocol.to_json(),
                "extraction": "exactly one ```svg block; none or several: excluded"}

    def skipped_metrics(self, task: str, ctx: EvalContext) -> list[dict]:
        return []
