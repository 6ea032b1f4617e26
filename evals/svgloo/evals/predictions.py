"""Reading predictions: a JSONL file or a folder of ``<id>.svg`` (or ``<id>.txt``) files.

JSONL lines are ``{"id": ..., "response": "raw model text"}`` (the suite extracts the
answer its original way) or ``{"id": ..., "svg": "<svg ...>"}``; an optional ``"task"``
key restricts a line to one task. Bad lines are reported with their line number.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from .base import Prediction
from .engine import DEFAULT_LIMITS, InputError, LimitError


def load_predictions(path: str | Path, task: str | None = None,
                     max_bytes: int = DEFAULT_LIMITS.max_file_bytes) -> dict[str, Prediction]:
    p = Path(path)
    if p.is_dir():
        return _from_folder(p, task, max_bytes)
    if not p.is_file():
        raise InputError(str(p), "predictions not found (give a .jsonl file or a folder of "
                                 "<id>.svg files)")
    return _from_jsonl(p, task)


def _from_folder(folder: Path, task: str | None, max_bytes: int) -> dict[str, Prediction]:
    if task and (folder / task).is_dir():  # DIR/<task>/<id>.svg also works
        folder = folder / task
    out: dict[str, Prediction] = {}
    for f in sorted(folder.iterdir()):
        if f.suffix not in (".svg", ".txt") or not f.is_file():
            continue
        if f.stat().st_size > max_bytes:
            out[f.stem] = Prediction(f.stem, svg=None, response=None)
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        out[f.stem] = (Prediction(f.stem, svg=text) if f.suffix == ".svg"
                       else Prediction(f.stem, response=text))
    return out


def jsonl_rows(path: Path, lines: Iterable[str]) -> Iterator[tuple[int, object]]:
    """(line number, parsed value) for every non-blank line of a JSONL file; a line that
    is not JSON is an InputError naming the file and the line."""
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(str(path), f"line {n} is not JSON: {exc.msg}") from None
        yield n, row


def _from_jsonl(path: Path, task: str | None) -> dict[str, Prediction]:
    out: dict[str, Prediction] = {}
    size = path.stat().st_size
    if size > 1024 * 1024 * 1024:
        raise LimitError(str(path), "predictions file is larger than 1 GiB")
    with open(path, encoding="utf-8", errors="replace") as fh:
        for n, row in jsonl_rows(path, fh):
            if not isinstance(row, dict) or "id" not in row:
                raise InputError(str(path), f"line {n} has no \"id\"")
            if task and row.get("task") not in (None, task):
                continue
            response, svg = row.get("response"), row.get("svg")
            if response is None and svg is None:
                raise InputError(str(path), f"line {n} has neither \"response\" nor \"svg\"")
            if not isinstance(response, (str, type(None))) or \
                    not isinstance(svg, (str, type(None))):
                raise InputError(str(path), f"line {n}: \"response\"/\"svg\" must be text")
            out[str(row["id"])] = Prediction(str(row["id"]), response=response, svg=svg)
    return out
