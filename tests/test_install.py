"""The package installs as one namespace from the repository's source roots, normally and
editable, and the base install imports without torch."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from conftest import REPO

CHECK = ("import svgloo, svgloo.engine.scoring.score, svgloo.structure.analysis, "
         "svgloo.validation.artifacts, "
         "svgloo.daemon.server, svgloo.plugins.pixel_backbone, svgloo.lsp, "
         "svgloo.qt_viewer, svgloo.cli, sys; "
         "import importlib.metadata as m; "
         "eps = {e.name for e in m.entry_points(group='svgloo.backbones')}; "
         "assert {'pixel', 'clip'} <= eps, eps; "
         "assert 'torch' not in sys.modules; "
         "print(svgloo.engine.scoring.score.__file__)")


def _borrow_dependencies(env_dir: Path) -> None:
    """Let the fresh venv import svgloo's third-party dependencies from the environment
    running the tests (which the project's own install command filled), without seeing that
    environment's svgloo: a .pth line adds each site folder as a plain path, so the editable
    finder installed there is not run (only site folders run .pth files)."""
    borrowed = [p for p in sys.path
                if Path(p).name in ("site-packages", "dist-packages") and Path(p).is_dir()]
    target = next((env_dir / "lib").glob("python*/site-packages"))
    (target / "_svgloo_test_deps.pth").write_text("\n".join(borrowed) + "\n")


@pytest.mark.slow
@pytest.mark.parametrize("editable", [False, True])
def test_normal_and_editable_installs_import(tmp_path, editable):
    env_dir = tmp_path / "venv"
    # Not system_site_packages: that is the base interpreter's, which has nothing installed
    # on a fresh machine; the dependencies come from the project's own environment instead.
    venv.create(env_dir, with_pip=True)
    _borrow_dependencies(env_dir)
    python = env_dir / "bin" / "python"
    args = [str(python), "-m", "pip", "install", "-q", "--no-deps"]
    args += ["-e", str(REPO)] if editable else [str(REPO)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run(args, check=True, env=env, timeout=300,
                   cwd=tmp_path)
    proc = subprocess.run([str(python), "-c", CHECK], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    location = proc.stdout.strip()
    if editable:
        assert location.startswith(str(REPO / "engine"))
    else:
        assert str(env_dir) in location
    cli = subprocess.run([str(env_dir / "bin" / "svgloo"), "--help"], capture_output=True,
                         text=True, env=env, timeout=120)
    assert cli.returncode == 0 and "score" in cli.stdout
