"""`svgloo score` says what is wrong with the file before it starts anything: no fork
server, no render worker, not even the rest of the engine imported (issue 25: it took
0.7-0.9 s to say a file does not exist, because the workers started first)."""

from __future__ import annotations

import json
import subprocess
import sys

from svgloo.engine.limits import DEFAULT_LIMITS

# Each case in the same fresh process, one after another; after each: the exit code, the
# message, and whether anything was started or imported that scoring would need.
PROBE = r"""
import contextlib, io, json, multiprocessing, sys
from multiprocessing import forkserver
from svgloo.cli import main

out = []
for path in sys.argv[1:]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["score", path, "--backbone", "pixel"])
    out.append({"code": code, "stderr": err.getvalue(),
                "fork_server": forkserver._forkserver._forkserver_pid,
                "children": len(multiprocessing.active_children()),
                "score_imported": "svgloo.engine.score" in sys.modules,
                "daemon_client_imported": "svgloo.daemon.client" in sys.modules})
print(json.dumps(out))
"""


def test_errors_about_the_file_come_before_any_worker_starts(tmp_path):
    malformed = tmp_path / "malformed.svg"
    malformed.write_text('<svg xmlns="http://www.w3.org/2000/svg"><rect></svg>')
    folder = tmp_path / "folder.svg"
    folder.mkdir()
    too_big = tmp_path / "too-big.svg"
    too_big.write_bytes(b" " * (DEFAULT_LIMITS.max_file_bytes + 1))
    many = tmp_path / "many-units.svg"
    many.write_text('<svg xmlns="http://www.w3.org/2000/svg">'
                    + '<rect width="1" height="1"/>' * (DEFAULT_LIMITS.max_units + 1)
                    + "</svg>")
    cases = [tmp_path / "missing.svg", folder, malformed, too_big, many]
    done = subprocess.run([sys.executable, "-c", PROBE, *map(str, cases)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    for path, r in zip(cases, results):
        assert r["code"] == 2, (path.name, r)
        # one line naming the file and the problem
        assert r["stderr"].count("\n") == 1 and path.name in r["stderr"], r["stderr"]
        assert r["stderr"].startswith("svgloo: error:"), r["stderr"]
        assert r["fork_server"] is None and r["children"] == 0, (path.name, r)
        assert not r["score_imported"], path.name
    assert "8388608" in results[3]["stderr"] and "units" in results[4]["stderr"]


def test_with_daemon_a_bad_file_is_reported_without_asking_or_starting_a_daemon(tmp_path):
    missing = tmp_path / "missing.svg"
    probe = PROBE.replace('"--backbone", "pixel"', '"--daemon"')
    done = subprocess.run([sys.executable, "-c", probe, str(missing)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    [r] = json.loads(done.stdout)
    assert r["code"] == 2 and "missing.svg" in r["stderr"]
    assert r["fork_server"] is None and r["children"] == 0
    assert not r["daemon_client_imported"]
