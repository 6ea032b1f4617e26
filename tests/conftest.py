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


@pytest.fixture(scope="module")
def tiny_clip_files(tmp_path_factory) -> tuple[str, str]:
    """A tiny randomly initialised open_clip model (tests/plugins/tiny_models.py; the
    [clip] extra): its config's and checkpoint's paths."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent / "plugins"))
    from tiny_models import tiny_clip_checkpoint

    cfg, ckpt, _, _ = tiny_clip_checkpoint(tmp_path_factory.mktemp("clip"))
    return str(cfg), str(ckpt)


def hang_detector_s() -> float:
    """pytest-timeout's per-test limit (pyproject.toml): the suite's hang detector."""
    import tomllib

    with open(REPO / "pyproject.toml", "rb") as fh:
        return float(tomllib.load(fh)["tool"]["pytest"]["ini_options"]["timeout"])


def result_test_limits():
    """Engine limits for tests about results, not limits (fast equals naive, scores,
    findings): the time limits are as long as the hang detector, so a slow or loaded
    machine cannot fail them (a render of logos/memgraph.svg passed the 60 s default at
    load 8-16) while a real hang still ends the test. Size and memory limits are the
    defaults. Tests about limits build their own pools."""
    from dataclasses import replace

    from svgloo.engine.limits import DEFAULT_LIMITS

    hang = hang_detector_s()
    return replace(DEFAULT_LIMITS, render_timeout_s=hang, render_cpu_s=int(hang),
                   document_timeout_s=hang)


@pytest.fixture(scope="session")
def render_pool():
    from svgloo.engine.processes.workers import RenderPool

    pool = RenderPool(limits=result_test_limits())
    yield pool
    pool.close()


def _on_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="session")
def chromium():
    """One warm headless Chromium for the session (tests/browser.py). Without one the
    browser tests skip, except on CI (CI=true), where a missing browser is a failure: .ci/run
    installs Debian's chromium."""
    from browser import Chromium, find_chromium

    if find_chromium() is None:
        why = ("no Chromium on this machine (apt-get install chromium, or set "
               "SVGLOO_CHROMIUM): the browser referee tests need a real browser")
        if _on_ci():
            pytest.fail(why + "; CI must run them", pytrace=False)
        pytest.skip(why)
    browser = Chromium()
    yield browser
    browser.close()
