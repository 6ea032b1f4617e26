"""The house keeps its shape: imports go one way (front ends -> daemon -> validation ->
structure -> engine), checked by import-linter with the contracts in pyproject.toml, on the
working tree itself; and every tool that needs the source roots is given the same ones."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib

import pytest

import import_graph
from conftest import REPO

# An editable install's .pth also puts the working tree's roots on sys.path; a namespace
# package merges every root it finds, so a lint of another tree must not see them (grimp
# would pick either copy of a module).
LINT = ("import os, sys; hidden = set(os.environ['SVGLOO_HIDDEN_ROOTS'].split(os.pathsep)); "
        "sys.path[:] = [p for p in sys.path if p not in hidden]; "
        "from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())")
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def source_roots() -> list[str]:
    """The folders an editable install puts on sys.path (hatch's dev-mode-dirs)."""
    return PYPROJECT["tool"]["hatch"]["build"]["dev-mode-dirs"]


def lint(root, pythonpath):
    """import-linter run from ``root`` as a developer runs it there, with ``pythonpath`` as the
    source roots (what the editable install's .pth file adds)."""
    hidden = [str(REPO / r) for r in source_roots()] if root != REPO else []
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "PYTHONPATH": os.pathsep.join(str(p) for p in pythonpath),
           "SVGLOO_HIDDEN_ROOTS": os.pathsep.join(hidden)}
    return subprocess.run([sys.executable, "-c", LINT], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


def test_every_tool_is_given_the_same_source_roots():
    roots = source_roots()
    assert all((REPO / r / "svgloo").is_dir() for r in roots), roots
    # Every folder holding a part of the svgloo namespace is a root.
    found = sorted(p.parent.name for p in REPO.glob("*/svgloo") if p.is_dir())
    assert found == sorted(roots)
    wheel = PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["only-include"] == [f"{r}/svgloo" for r in roots]
    assert wheel["sources"] == {f"{r}/svgloo": "svgloo" for r in roots}
    assert PYPROJECT["tool"]["pytest"]["ini_options"]["pythonpath"] == roots + ["tests"]
    assert PYPROJECT["tool"]["pyright"]["extraPaths"] == roots
    assert PYPROJECT["tool"]["mypy"]["mypy_path"] == roots


def test_svgloo_is_one_namespace_package_and_each_root_holds_one_part():
    """No root has an ``svgloo/__init__.py`` (it would hide every other root's part); each
    root but the command's holds exactly the package named after it."""
    assert not any((REPO / r / "svgloo" / "__init__.py").exists() for r in source_roots())
    for root in source_roots():
        if root == "svgloo":
            continue
        parts = [p.name for p in (REPO / root / "svgloo").iterdir() if p.name != "__pycache__"]
        assert parts == [root], (root, parts)
        assert (REPO / root / "svgloo" / root / "__init__.py").is_file()


def test_the_version_is_written_the_same_in_both_places():
    from svgloo.engine.version import __version__

    assert PYPROJECT["project"]["version"] == __version__


def test_import_contracts_hold_on_the_working_tree():
    pytest.importorskip("importlinter")
    proc = lint(REPO, [REPO / r for r in source_roots()])
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert re.search(r"Contracts: 6 kept, 0 broken\.", proc.stdout), proc.stdout[-2000:]


def _copy_of_the_roots(tmp_path) -> None:
    """The source roots and pyproject.toml, copied to ``tmp_path`` for a lint that breaks
    a contract without touching the working tree."""
    for root in source_roots():
        shutil.copytree(REPO / root / "svgloo", tmp_path / root / "svgloo",
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")


def test_the_contract_catches_an_upward_import(tmp_path):
    """The check can fail: an engine module that imports the daemon breaks it (on a copy of
    the roots, so the working tree is not touched)."""
    pytest.importorskip("importlinter")
    _copy_of_the_roots(tmp_path)
    loo = tmp_path / "engine" / "svgloo" / "engine" / "leave_one_out" / "loo.py"
    loo.write_text(loo.read_text() + "\nfrom svgloo.daemon import client  # noqa\n")
    proc = lint(tmp_path, [tmp_path / r for r in source_roots()])
    assert proc.returncode != 0
    assert "svgloo.engine.leave_one_out.loo -> svgloo.daemon.client" in proc.stdout


def test_an_engine_layer_cannot_import_the_one_above(tmp_path):
    """The engine's own layers can fail too: leave-one-out importing the proof breaks them."""
    pytest.importorskip("importlinter")
    _copy_of_the_roots(tmp_path)
    blocks = tmp_path / "engine" / "svgloo" / "engine" / "leave_one_out" / "blocks.py"
    blocks.write_text(blocks.read_text() + "\n\ndef _late():\n"
                      "    from svgloo.engine.proving import proof  # noqa\n")
    proc = lint(tmp_path, [tmp_path / r for r in source_roots()])
    assert proc.returncode != 0
    assert "svgloo.engine.leave_one_out.blocks -> svgloo.engine.proving.proof" in proc.stdout


def test_no_import_cycle_anywhere():
    """No module of svgloo imports, at module level or inside a function, a module that
    imports it back, directly or through others (imports only for type checking aside)."""
    modules = import_graph.package_modules([REPO / r for r in source_roots()])
    assert len(modules) > 100
    assert import_graph.cycles(import_graph.imports_of(modules)) == []


def test_the_cycle_check_finds_a_cycle_made_in_a_function(tmp_path):
    """The check can fail: a function-level import back up closes a cycle it reports."""
    pkg = tmp_path / "root" / "svgloo" / "engine"
    pkg.mkdir(parents=True)
    (pkg / "a.py").write_text("from svgloo.engine.b import thing\n")
    (pkg / "b.py").write_text("thing = 1\n\ndef f():\n    from svgloo.engine import a\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                              "    from svgloo.engine import a\n")
    modules = import_graph.package_modules([tmp_path / "root"])
    assert import_graph.cycles(import_graph.imports_of(modules)) == [
        ["svgloo.engine.a", "svgloo.engine.b"]]


def test_go_to_definition_lands_in_the_file_being_edited():
    """jedi (what jedi-language-server and many editors use), given the source roots as an
    editable install gives them, resolves an import to the file in the working tree."""
    jedi = pytest.importorskip("jedi")
    source = "from svgloo.engine.reading.units import extract_units\nextract_units\n"
    project = jedi.Project(REPO, added_sys_path=[str(REPO / r) for r in source_roots()],
                           smart_sys_path=False)
    script = jedi.Script(source, path=REPO / "lsp" / "svgloo" / "lsp" / "example.py",
                         project=project)
    found = script.goto(2, 3, follow_imports=True)
    assert [d.module_path for d in found] == [REPO / "engine" / "svgloo" / "engine" / "reading" / "units.py"]
