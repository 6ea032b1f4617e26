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
                "score_imported": "svgloo.engine.scoring.score" in sys.modules,
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


# What importing the parser for a command loads, printed by a fresh process.
PARSER_PROBE = r"""
import json, sys
from svgloo.cli import build_parser
build_parser(sys.argv[1] or None)
print(json.dumps(sorted(sys.modules)))
"""


def test_the_parser_for_score_is_built_before_anything_heavy_is_imported():
    """`svgloo score` reads the file and starts the fork server right after parsing: the
    parser must not import numpy or the other commands' modules first."""
    for command in ("score", ""):
        done = subprocess.run([sys.executable, "-c", PARSER_PROBE, command],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        loaded = set(json.loads(done.stdout))
        assert not loaded & {"numpy", "svgloo.engine.fixing.fix", "svgloo.engine.processes.workers"}, command
    assert "svgloo.cli_fix" not in json.loads(subprocess.run(
        [sys.executable, "-c", PARSER_PROBE, "score"], capture_output=True, text=True,
        timeout=120).stdout)


def test_score_parses_the_same_with_its_own_parser_as_with_the_whole_one():
    from svgloo.cli import build_parser

    for argv in (["score", "a.svg"],
                 ["score", "a.svg", "--json", "--size", "128", "--method", "naive",
                  "--no-subpaths", "--reference", "b.png", "--speck-threshold", "0"]):
        assert vars(build_parser("score").parse_args(argv)) == \
            vars(build_parser().parse_args(argv))


def test_a_scoring_program_exits_with_its_output_whole_and_its_files_removed(tmp_path):
    """`svgloo score` ends without the interpreter's teardown (cli.exit_at_once): what it
    printed must all arrive (a pipe, a few hundred KB of JSON) and its atexit cleanup must
    have run (the render workers' stderr folder is named after the process)."""
    import glob
    import tempfile

    svg = tmp_path / "grid.svg"
    svg.write_text('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 200">'
                   + "".join(f'<rect x="{10 * (i % 20)}" y="{10 * (i // 20)}" width="6" '
                             f'height="6" fill="#{i:03x}"/>' for i in range(300)) + "</svg>")
    proc = subprocess.Popen([sys.executable, "-m", "svgloo", "score", str(svg), "--json",
                             "--backbone", "pixel"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    result = json.loads(out)
    assert result["summary"]["units"] == len(result["units"]) == 300
    assert len(out) > 100_000
    assert glob.glob(f"{tempfile.gettempdir()}/svgloo-worker-stderr-{proc.pid}-*") == []
