"""The package installs as one namespace from the repository's folders, normally and
editable, and the base install imports without torch."""

from __future__ import annotations

import os
import subprocess
import venv

import pytest

from conftest import REPO

CHECK = ("import svgloo, svgloo.daemon.score, svgloo.plugins.pixel_backbone, svgloo.lsp, "
         "svgloo.qt_viewer, svgloo.cli, sys; "
         "import importlib.metadata as m; "
         "eps = {e.name for e in m.entry_points(group='svgloo.backbones')}; "
         "assert {'pixel', 'clip'} <= eps, eps; "
         "assert 'torch' not in sys.modules; "
         "print(svgloo.daemon.score.__file__)")


@pytest.mark.slow
@pytest.mark.parametrize("editable", [False, True])
def test_normal_and_editable_installs_import(tmp_path, editable):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, system_site_packages=True, with_pip=True)
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
        assert location.startswith(str(REPO / "daemon"))
    else:
        assert str(env_dir) in location
    cli = subprocess.run([str(env_dir / "bin" / "svgloo"), "--help"], capture_output=True,
                         text=True, env=env, timeout=120)
    assert cli.returncode == 0 and "score" in cli.stdout
