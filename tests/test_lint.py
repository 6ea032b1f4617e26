"""The linter and the type checker pass on the working tree: ``ruff check`` and ``mypy`` over
every package, configured in pyproject.toml ([tool.ruff], [tool.mypy]). A test fails with
the tool's own report. Where a tool is not installed the test is skipped, except in CI,
which installs the [dev] extra: there a missing tool is a failure."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib

import pytest

from conftest import REPO, _on_ci

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
# mypy over the whole tree takes 1-3 minutes on two cores (longer on a cold cache).
MYPY_TIMEOUT_S = 900


def require(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        message = f"{module} is not installed (it is in the [dev] extra)"
        if _on_ci():
            pytest.fail(message)
        pytest.skip(message)


def mypy_targets() -> list[str]:
    """Every package and command module of svgloo, as mypy names them: each source root
    holds one package (engine/svgloo/engine -> -p svgloo.engine), except svgloo/, whose
    root holds the command's modules side by side (svgloo/svgloo/cli.py -> -m svgloo.cli)."""
    targets = []
    for root in PYPROJECT["tool"]["mypy"]["mypy_path"]:
        if root == "svgloo":
            for module in sorted((REPO / root / "svgloo").glob("*.py")):
                targets += ["-m", f"svgloo.{module.stem}"]
        else:
            targets += ["-p", f"svgloo.{root}"]
    return targets


def run_tool(args: list[str], timeout_s: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout_s)


def test_ruff_finds_nothing():
    require("ruff")
    proc = run_tool(["ruff", "check", "--no-cache", "."], 300)
    if proc.returncode != 0:
        pytest.fail(f"ruff check (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}",
                    pytrace=False)


@pytest.mark.slow
@pytest.mark.timeout(MYPY_TIMEOUT_S + 60)
def test_mypy_finds_nothing():
    require("mypy")
    # The cache (.mypy_cache, git-ignored) makes a second run take seconds.
    proc = run_tool(["mypy", *mypy_targets()], MYPY_TIMEOUT_S)
    if proc.returncode != 0:
        pytest.fail(f"mypy (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}",
                    pytrace=False)


def test_mypy_is_given_every_package():
    """A new source root, or a new command module, is type-checked without anyone
    remembering to add it: the targets come from the roots on disk."""
    targets = mypy_targets()
    packages = {targets[i + 1] for i, flag in enumerate(targets) if flag == "-p"}
    modules = {targets[i + 1] for i, flag in enumerate(targets) if flag == "-m"}
    on_disk = {f"svgloo.{p.parent.name}" for p in REPO.glob("*/svgloo/*/__init__.py")
               if p.parent.name == p.parents[2].name}
    assert packages == on_disk
    assert "svgloo.cli" in modules and "svgloo.__main__" in modules
