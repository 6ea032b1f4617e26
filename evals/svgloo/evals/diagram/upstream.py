"""``--impl upstream``: score with the user's own checkout of VFig's ``rule-based-eval/``.

svgloo cannot ship that code (it has no licence), so it imports it from where the user
keeps it, exactly as its own ``lib/eval.py`` does, and reshapes the result. Importing runs
the user's code: this is an explicit opt-in (``--upstream-dir``)."""

from __future__ import annotations

import contextlib
import importlib
import io
import sys
from pathlib import Path

from ..engine import ConfigError


def _folder(path: str | Path) -> Path:
    p = Path(path).expanduser()
    if (p / "rule-based-eval" / "main.py").is_file():
        p = p / "rule-based-eval"
    if not (p / "main.py").is_file() or not (p / "lib").is_dir():
        raise ConfigError(None, f"--upstream-dir {path}: no rule-based-eval checkout there "
                                "(expected main.py and lib/ from RAIVNLab/VFig)")
    return p


def load_upstream(path: str | Path):
    """An ``evaluate(gen, gt) -> {"overall", "shapes", "arrows"}`` backed by the checkout's
    ``main.evaluate_standalone``."""
    folder = _folder(path)
    for entry in (str(folder / "lib"), str(folder)):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            main = importlib.import_module("main")
    except Exception as exc:  # noqa: BLE001 - the user's code: report, do not crash
        raise ConfigError(None, f"--upstream-dir {path}: importing main.py failed "
                                f"({type(exc).__name__}: {exc})") from None
    if not hasattr(main, "evaluate_standalone") or \
            Path(getattr(main, "__file__", "")).resolve().parent != folder.resolve():
        raise ConfigError(None, f"--upstream-dir {path}: main.evaluate_standalone not found "
                                "(another module named 'main' was imported first?)")

    def evaluate(gen: Path, gt: Path) -> dict:
        with contextlib.redirect_stdout(io.StringIO()):
            shapes, _, arrows, _ = main.evaluate_standalone(Path(gen), Path(gt))
        numeric = lambda d: {k: v for k, v in d.items()  # noqa: E731
                             if isinstance(v, (int, float)) and not isinstance(v, bool)}
        shapes, arrows = numeric(shapes), numeric(arrows)
        return {"overall": 0.5 * shapes.get("composite", 0.0) + 0.5 * arrows.get("composite", 0.0),
                "shapes": shapes, "arrows": arrows}

    return evaluate
