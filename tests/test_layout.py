"""The house keeps its shape: imports go one way (front ends -> daemon -> validation ->
structure -> engine), checked by import-linter with the contracts in pyproject.toml."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib

import pytest

from conftest import REPO

LINT = "import sys; from importlinter.cli import lint_imports_command; " \
       "sys.exit(lint_imports_command())"


def assemble_package(dest):
    """Copy each folder to where its package lives (pyproject's package-dir), so the
    analyser sees one ``svgloo`` tree; the repository keeps one folder per package."""
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    for package, folder in setuptools["package-dir"].items():
        target = dest.joinpath(*package.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for source in (REPO / folder).glob("*.py"):
            shutil.copy(source, target / source.name)
    return setuptools["packages"]


def lint(tree, config):
    return subprocess.run([sys.executable, "-c", LINT, "--config", str(config)], cwd=tree,
                          env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=300)


def test_every_package_folder_is_declared(tmp_path):
    packages = assemble_package(tmp_path)
    declared = set(packages)
    found = {".".join(p.parent.relative_to(tmp_path).parts)
             for p in tmp_path.rglob("__init__.py")}
    assert found == declared


def test_import_contracts_hold(tmp_path):
    pytest.importorskip("importlinter")
    assemble_package(tmp_path)
    proc = lint(tmp_path, REPO / "pyproject.toml")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "Contracts: 4 kept, 0 broken." in proc.stdout


def test_the_contract_catches_an_upward_import(tmp_path):
    """The check can fail: an engine module that imports the daemon breaks it."""
    pytest.importorskip("importlinter")
    assemble_package(tmp_path)
    loo = tmp_path / "svgloo" / "engine" / "loo.py"
    loo.write_text(loo.read_text() + "\nfrom svgloo.daemon import client  # noqa\n")
    proc = lint(tmp_path, REPO / "pyproject.toml")
    assert proc.returncode != 0
    assert "svgloo.engine.loo -> svgloo.daemon.client" in proc.stdout
