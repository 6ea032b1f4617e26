"""`svgloo daemon start` when a daemon is already there names that daemon's pid (issue 35:
a start that lost the race printed "started (pid -1)")."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _svgloo(*args: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "svgloo", "daemon", *args], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_a_second_start_says_already_running_with_the_daemons_pid():
    folder = Path(tempfile.mkdtemp(prefix="svd", dir="/tmp"))   # a short socket path
    sock = folder / "d.sock"
    env = dict(os.environ, SVGLOO_CACHE_DIR=str(folder / "cache"))
    env.pop("SVGLOO_SOCKET", None)
    try:
        # two starts at once: one starts the daemon, the other finds it
        racing = [_svgloo("start", "--socket", str(sock), "--idle-exit", "120", env=env)
                  for _ in range(2)]
        said = [p.communicate(timeout=120) for p in racing]
        assert [p.returncode for p in racing] == [0, 0], said
        status = _svgloo("status", "--socket", str(sock), "--json", env=env)
        pid = json.loads(status.communicate(timeout=30)[0])["pid"]
        again = _svgloo("start", "--socket", str(sock), env=env)
        out, _ = again.communicate(timeout=60)
        lines = [o.strip() for o, _ in said] + [out.strip()]
        assert "pid -1" not in " ".join(lines)
        assert lines[2] == f"svgloo daemon: already running (pid {pid}) on {sock}"
        pids = {int(m.group(1)) for m in (re.search(r"\(pid (\d+)\)", line) for line in lines)
                if m}
        assert pids == {pid}, lines
        assert sum(line.startswith("svgloo daemon: started") for line in lines) == 1
    finally:
        stop = _svgloo("stop", "--socket", str(sock), env=env)
        stop.communicate(timeout=60)
        shutil.rmtree(folder, ignore_errors=True)
