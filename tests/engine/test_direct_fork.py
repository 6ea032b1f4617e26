"""Render workers forked directly from a one-shot program (issue 25's start-up): ``svgloo
score`` loads the renderer itself and forks its workers while it is single-threaded,
instead of starting a fork server that imports everything a second time. These workers
must be what a fork-server worker is: limited (memory, CPU), dying with their owner,
writing their stderr to their own file, importing nothing from the folder svgloo runs in,
never running the caller's ``__main__``. Any process with a thread running, or that did not
ask for it (the daemon, the language server, the watcher, a library user), keeps the fork
server. Each check runs in a fresh process: the test process itself has threads."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="direct forks are used on Linux only")

HERE = Path(__file__).parent
ONE_UNIT = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="5" height="5"/></svg>'


# -- a job function (a forked worker has this module already; a fork-server one imports it)

def worker_state() -> dict:
    import ctypes
    import multiprocessing
    import resource

    libc = ctypes.CDLL(None, use_errno=True)
    pdeathsig = ctypes.c_int(0)
    libc.prctl(2, ctypes.byref(pdeathsig), 0, 0, 0)  # PR_GET_PDEATHSIG
    from svgloo.engine.processes.worker_start import stderr_is_own_file

    status = Path("/proc/self/status").read_text().splitlines()
    vm_kb = next(int(line.split()[1]) for line in status if line.startswith("VmSize:"))
    return {"pid": os.getpid(), "ppid": os.getppid(),
            "memory_limit": resource.getrlimit(resource.RLIMIT_AS)[0],
            "pdeathsig": pdeathsig.value, "own_stderr": stderr_is_own_file(),
            "sigterm_default": signal.getsignal(signal.SIGTERM) is signal.SIG_DFL,
            "cwd_on_path": any(p in ("", os.getcwd()) for p in sys.path),
            "renderer_loaded": "cairosvg.surface" in sys.modules,
            "main": getattr(sys.modules.get("__main__"), "__file__", None),
            "process_class": type(multiprocessing.current_process()).__name__,
            "vm_mb": vm_kb // 1024}


# The owner: a program that asks for direct forks as ``svgloo score`` does (and handles
# SIGTERM itself, as the CLI does). Started with ``-c``: ``''`` (its folder) is first on its
# ``sys.path``; its workers' must not have it (what they import later comes from the
# installed environment only).
OWNER = r"""
import json, signal, sys, threading, warnings
sys.path.insert(0, {here!r})
warnings.simplefilter("error")  # Python 3.12+ warns when a process with threads forks
import test_direct_fork as t
import test_workers as w  # its job functions: exit, spin, allocate
from multiprocessing import forkserver, resource_tracker
from svgloo.engine.processes import worker_start
from svgloo.engine.errors import LimitError, WorkerError
from svgloo.engine.limits import Limits
from svgloo.engine.processes.workers import RenderPool

signal.signal(signal.SIGTERM, lambda *a: sys.exit(99))
if {allow!r}:
    worker_start.allow_direct_fork()
    worker_start.load_renderer_here()
if {thread!r}:
    stop = threading.Event()
    threading.Thread(target=stop.wait, daemon=True).start()
pool = RenderPool(workers=1, limits=Limits(render_memory_mb=900, render_cpu_s=1))
out = {{"method": pool.start(), "owner": __import__("os").getpid()}}
[out["state"]] = pool.map(t.worker_state, [()], "state.svg")
out["fork_server"] = forkserver._forkserver._forkserver_pid is not None
out["resource_tracker"] = resource_tracker._resource_tracker._pid is not None
for name, fn, args in (("memory", w._allocate_numpy, (2000,)), ("cpu", w._spin, (60.0,)),
                       ("exit", w._say_and_exit, ("libfoo: it broke", 3))):
    try:
        pool.map(fn, [args], name + ".svg", timeout_s=120)
        out[name] = "no error"
    except (LimitError, WorkerError) as exc:
        out[name] = str(exc)
out["after"] = pool.map(w._allocate_numpy, [(1,)], "small.svg")[0]
if {hold!r}:
    [pid] = pool.map(__import__("os").getpid, [()], "pid")
    print(pid, flush=True)
    __import__("time").sleep(600)
pool.close()
print(json.dumps(out))
"""


def run_owner(tmp_path, allow=True, thread=False) -> dict:
    done = subprocess.run([sys.executable, "-c", OWNER.format(
        here=str(HERE), allow=allow, thread=thread, hold=False)], capture_output=True,
        text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_a_direct_fork_worker_is_limited_like_a_fork_server_worker(tmp_path):
    out = run_owner(tmp_path)
    state = out["state"]
    assert out["method"] == "fork"
    assert not out["fork_server"] and not out["resource_tracker"]
    assert state["ppid"] == out["owner"]  # forked by the owner itself
    assert state["renderer_loaded"] and state["process_class"] == "_ForkRenderProcess"
    assert state["memory_limit"] == 900 * 1024 * 1024
    assert state["pdeathsig"] == signal.SIGKILL
    assert state["own_stderr"] and state["sigterm_default"] and not state["cwd_on_path"]
    assert out["memory"] == "memory.svg: rendering needed more than 900 MB"
    assert out["cpu"] == ("cpu.svg: rendering used more than 1 s of CPU time (render CPU "
                          "limit); the document is too expensive")
    assert out["exit"] == "exit.svg: the render worker died (exit code 3): libfoo: it broke"
    assert out["after"] == 1024 * 1024  # the pool recovered


def test_a_direct_fork_worker_has_the_memory_headroom_of_a_fork_server_worker(tmp_path):
    """The same RLIMIT_AS leaves the same room to render: a worker forked from the owner
    starts about as large as one forked from the fork server."""
    direct = run_owner(tmp_path)["state"]["vm_mb"]
    server = run_owner(tmp_path, allow=False)
    assert server["method"] == "forkserver"
    assert direct <= server["state"]["vm_mb"] + 64, (direct, server["state"]["vm_mb"])


@pytest.mark.parametrize("allow, thread", [(False, False), (True, True)],
                         ids=["not-asked", "a-thread-running"])
def test_other_callers_keep_the_fork_server(tmp_path, allow, thread):
    """A caller that did not ask (the daemon, the language server, a library user), or one
    with a thread running, gets fork-server workers, limited the same way; warnings are
    errors in the owner, so a fork with threads (Python 3.12+ warns) would fail it."""
    out = run_owner(tmp_path, allow=allow, thread=thread)
    assert out["method"] == "forkserver" and out["fork_server"]
    assert out["state"]["ppid"] != out["owner"]
    assert out["state"]["memory_limit"] == 900 * 1024 * 1024
    assert out["state"]["pdeathsig"] == signal.SIGKILL
    assert out["memory"] == "memory.svg: rendering needed more than 900 MB"


def test_a_direct_fork_worker_dies_with_its_owner(tmp_path):
    owner = subprocess.Popen([sys.executable, "-c", OWNER.format(
        here=str(HERE), allow=True, thread=False, hold=True)], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        worker = int(owner.stdout.readline())
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(timeout=60)
        deadline = time.monotonic() + 30
        while Path(f"/proc/{worker}").exists() and time.monotonic() < deadline:
            state = Path(f"/proc/{worker}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state == "Z":  # gone, waiting to be reaped by init
                break
            time.sleep(0.05)
        else:
            assert not Path(f"/proc/{worker}").exists(), "the worker outlived its owner"
    finally:
        if owner.poll() is None:
            owner.kill()
        owner.communicate()


# `svgloo score` as a program, its start method and children recorded at its exit (the
# command exits through atexit handlers, then os._exit).
CLI = r"""
import atexit, json, os, sys
from multiprocessing import forkserver
sys.argv = ["svgloo", "score", sys.argv[1], "--json"]
with open(os.environ["TOP_LEVEL_RUNS"], "a") as f:
    f.write(str(os.getpid()) + "\n")

def record():
    import svgloo.engine.processes.workers as w
    pool = w._shared
    with open(os.environ["RECORD"], "w") as f:
        json.dump({"method": pool.start_method if pool else None,
                   "fork_server": forkserver._forkserver._forkserver_pid is not None}, f)

atexit.register(record)
from svgloo.cli import main
raise SystemExit(main())
"""


@pytest.mark.parametrize("large, method", [(False, "fork"), (True, "forkserver")],
                         ids=["small-file", "large-file"])
def test_svgloo_score_forks_its_workers_directly_for_small_files(tmp_path, large, method):
    from svgloo.cli_score import DIRECT_FORK_MAX_CHARS

    svg = tmp_path / "file.svg"
    padding = f"<!--{'x' * DIRECT_FORK_MAX_CHARS}-->" if large else ""
    svg.write_text(ONE_UNIT.replace("</svg>", padding + "</svg>"))
    env = dict(os.environ, RECORD=str(tmp_path / "record.json"),
               TOP_LEVEL_RUNS=str(tmp_path / "runs.txt"))
    done = subprocess.run([sys.executable, "-c", CLI, str(svg)], capture_output=True,
                          text=True, timeout=300, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["summary"]["units"] == 1
    record = json.loads((tmp_path / "record.json").read_text())
    assert record == {"method": method, "fork_server": method == "forkserver"}
    # render workers never ran the program's top level
    assert len((tmp_path / "runs.txt").read_text().split()) == 1


# SIGTERM arriving while the workers are being forked: the CLI's handler closes every pool,
# which takes the locks the launch holds (in the same thread). Sent from inside the launch,
# after the first worker is forked; the owner must end at once through the handler.
TERM_DURING_LAUNCH = r"""
import os, signal, sys
from svgloo import cli
from svgloo.engine.processes import worker_start
from svgloo.engine.processes.workers import RenderPool

cli._exit_on_termination()  # the CLI's handler: close every pool, then SystemExit(143)
worker_start.allow_direct_fork()
worker_start.load_renderer_here()
launch = worker_start._ForkRenderProcess._Popen

def launch_then_term(process_obj):
    popen = launch(process_obj)
    os.kill(os.getpid(), signal.SIGTERM)
    return popen

worker_start._ForkRenderProcess._Popen = staticmethod(launch_then_term)
pool = RenderPool(workers=2)
pool.start()
print("the handler never ran")
"""


def test_a_termination_signal_during_the_launch_ends_the_owner_at_once():
    done = subprocess.run([sys.executable, "-c", TERM_DURING_LAUNCH], capture_output=True,
                          text=True, timeout=120)  # it used to wait for ever
    assert done.returncode == 128 + signal.SIGTERM, done.stderr[-3000:]
    assert "never ran" not in done.stdout
