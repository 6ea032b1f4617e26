"""The evaluation-suite extension point: one Protocol, found through ``svgloo.evals``.

A suite reproduces one published benchmark's scoring. It loads the benchmark's own files
into ``EvalSample``s, scores one prediction per sample, and aggregates the rows the way
the original code does. The runner (``runner.py``) does everything else: reading
predictions, workers, the progress bar, ``--loo``, and the ``svgloo.eval/1`` output.

A third party adds a suite with an entry point in its own package::

    [project.entry-points."svgloo.evals"]
    mybench = "my_pkg.bench:MyBenchSuite"

and a class with the attributes and methods of ``EvalSuite`` (constructed with no
arguments; loading data happens in ``load``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .render import RenderProtocol

GROUP = "svgloo.evals"
SCHEMA = "svgloo.eval/1"

# Per-sample status values of the output schema.
OK = "ok"                       # scored
NO_SVG = "no_svg"               # the suite's answer extraction found no SVG
INVALID = "invalid"             # an answer was found but is unusable (several blocks, bad XML,
                                # over a limit, not an answer for this task)
RENDER_ERROR = "render_error"   # well-formed, but the renderer failed on it
MISSING = "missing"             # no prediction for this sample id
ERROR = "error"                 # not scored: svgloo's own failure (a render worker died, a
                                # limit of svgloo's, an internal error); never in a summary,
                                # and the run exits non-zero
STATUSES = (OK, NO_SVG, INVALID, RENDER_ERROR, MISSING, ERROR)


def infrastructure_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is svgloo's own failure rather than the prediction's: a limit of
    svgloo's (the original code has none, so nobody knows what it would have scored), a
    render worker that died, or anything that is not one of the engine's document errors
    (a bug). Such a sample is never scored: suites let these errors go up and the runner
    gives the sample the ``error`` status. Only what the original itself rejects (bad XML,
    a document CairoSVG cannot draw) keeps the original's treatment."""
    from .engine import ConfigError, LimitError, SvglooError, WorkerError

    if isinstance(exc, (LimitError, WorkerError, MemoryError)):
        return True
    return not isinstance(exc, SvglooError) or isinstance(exc, ConfigError)


@dataclass(frozen=True)
class EvalSample:
    """One benchmark item. ``inputs`` holds what scoring needs (reference SVGs, the
    original, the correct answer...), ``reference_svg`` the SVG a prediction is compared
    against when there is one (used by ``--loo``)."""

    id: str
    task: str
    inputs: dict = field(default_factory=dict, compare=False)
    level: str | None = None
    reference_svg: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Prediction:
    """A model's output for one sample: raw ``response`` text (the suite extracts the
    answer its original way) or an ``svg`` given directly."""

    id: str
    response: str | None = None
    svg: str | None = None


@dataclass
class Scored:
    """What a suite returns for one sample. ``svg`` is the extracted answer (for --loo)."""

    status: str
    metrics: dict = field(default_factory=dict)
    reason: str | None = None
    svg: str | None = None


@dataclass
class EvalContext:
    """What scoring may use besides the sample: the render pool, the user's model weights
    (``--weights NAME=PATH``) and options such as ``no_edit``."""

    pool: Any = None
    weights: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    limits: Any = None

    def too_large(self, text: str) -> str | None:
        """A reason when a prediction's text is over the file-size limit (checked before
        any extraction, diff or render, whose cost grows with the text), else None."""
        cap = self.limits.max_file_bytes if self.limits is not None else 8 * 1024 * 1024
        if len(text) > cap:
            return (f"prediction is {len(text)} characters; svgloo's file-size limit is "
                    f"{cap} (not scored)")
        return None


@runtime_checkable
class EvalSuite(Protocol):
    name: str                 # registry name: "svgeditbench", "svgenius"
    upstream: str             # the code or data reproduced, "ZJU-REAL/SVGenius@528cbff"
    description: str
    tasks: tuple[str, ...]

    def load(self, data: Path, task: str) -> list[EvalSample]:
        """Read the benchmark's files for ``task``; raise the engine's InputError when
        ``data`` is not this benchmark's layout."""

    def score(self, sample: EvalSample, prediction: Prediction | None,
              ctx: EvalContext) -> Scored:
        """Score one prediction (None: no prediction was given for the sample). Must not
        raise for bad predictions: they get a status and a reason. Raises (or returns
        ``ERROR`` for) svgloo's own failures: see ``infrastructure_failure``."""

    def aggregate(self, rows: list[dict], task: str) -> dict:
        """The summary the original reports, from the output rows (dicts with ``status``
        and ``metrics``); rows with the ``error`` status are never passed in."""

    def config(self, task: str) -> dict:
        """Render protocol, thresholds and other settings, for the output's ``config``."""

    def skipped_metrics(self, task: str, ctx: EvalContext) -> list[dict]:
        """``[{"name", "reason"}]`` for metrics this run cannot compute (no weights)."""


def discover_suites() -> dict:
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=GROUP)}


def load_suite(name: str):
    from .engine import ConfigError

    eps = discover_suites()
    if name not in eps:
        known = ", ".join(sorted(eps)) or "none installed"
        raise ConfigError(None, f"unknown evaluation suite {name!r} (known: {known})")
    return eps[name].load()()


__all__ = ["GROUP", "SCHEMA", "STATUSES", "OK", "NO_SVG", "INVALID", "RENDER_ERROR",
           "MISSING", "ERROR", "infrastructure_failure", "EvalSample", "Prediction", "Scored", "EvalContext",
           "EvalSuite",
           "RenderProtocol", "discover_suites", "load_suite"]
