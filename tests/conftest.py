"""Shared fixtures. The real-SVG corpus lives beside the repository in ../shared/corpus."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

# Under pytest-xdist every test process has its own render pools: one worker each keeps the
# machine from being oversubscribed (2 cores, 2 test processes), which timing-sensitive
# limits (render timeouts) would otherwise feel. Subprocesses the tests start inherit it.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("SVGLOO_RENDER_WORKERS", "1")

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
EXAMPLES = REPO / "examples"


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*/*.svg"))


def corpus_manifest() -> list[dict]:
    return json.loads((CORPUS / "manifest.json").read_text())


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    if not CORPUS.is_dir():
        pytest.skip("the shared corpus (../shared/corpus) is not present")
    return CORPUS


@pytest.fixture(scope="session")
def render_pool():
    from svgloo.engine.workers import RenderPool

    pool = RenderPool()
    yield pool
    pool.close()
