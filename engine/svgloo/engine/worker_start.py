"""How render workers start: forked from multiprocessing's fork server (spawned where there
is none), which imports the renderer once, and without the caller's ``__main__``."""

from __future__ import annotations

import multiprocessing
import multiprocessing.process
import multiprocessing.spawn
import multiprocessing.util
import os
import sys
import threading

# What the fork server imports once; every worker is forked from it ready to render.
_PRELOAD = ["svgloo.engine.render", "cairosvg.surface", "cairosvg.parser"]


# Render workers never run the caller's ``__main__``. multiprocessing's forkserver and spawn
# methods re-run the main script in every child (as ``__mp_main__``) so that functions defined
# there can be unpickled; render jobs only name engine functions, and re-running a user's
# script would run its top-level code (``score_file`` in a script without a ``__main__``
# guard: every worker would start scoring and die) and pay its imports in every worker.
_launching = threading.local()
_stdlib_preparation_data = multiprocessing.spawn.get_preparation_data


# Render workers import only from the installed environment. A child gets the parent's
# ``sys.path``, where ``''``, the current directory (``python -m``) or the script's folder can
# stand before site-packages: svgloo run inside a folder holding a ``cairosvg.py``, a
# ``numpy.py`` or a ``svgloo/`` (a downloaded icon repository, a source checkout) would have
# its workers import, and execute, those instead. The fork server itself is started with
# ``python -c``, which puts ``''`` first, and Python up to 3.11 ignores the ``sys_path`` it
# is handed: its command is prefixed with a line that drops those entries before it
# imports anything (the renderer preload included).
def _unsafe_path_entries() -> set[str]:
    entries = {"", os.getcwd()}
    for folder in (multiprocessing.process.ORIGINAL_DIR,
                   os.path.dirname(os.path.abspath(sys.argv[0])) if sys.argv and sys.argv[0] else None):
        if folder:
            entries.add(folder)
    return entries


def installed_sys_path(path: list[str]) -> list[str]:
    """``path`` without the entries that point at the folder svgloo runs in."""
    unsafe = {os.path.abspath(p) for p in _unsafe_path_entries() if p}
    return [p for p in path if p and os.path.abspath(p) not in unsafe]


_SAFE_PATH_PREFIX = ("import os, sys; cwd = os.getcwd(); "
                     "sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != cwd]; ")


def _preparation_data(name):
    data = _stdlib_preparation_data(name)
    if getattr(_launching, "render_worker", False):
        data.pop("init_main_from_name", None)
        data.pop("init_main_from_path", None)
        if "sys_path" in data:
            data["sys_path"] = installed_sys_path(data["sys_path"])
    return data


multiprocessing.spawn.get_preparation_data = _preparation_data  # only our launches change

_stdlib_spawnv_passfds = multiprocessing.util.spawnv_passfds


def _spawnv_passfds(path, args, passfds):
    """Start the fork server (``python ... -c CMD``) with its ``sys.path`` made safe first."""
    if getattr(_launching, "render_worker", False) and "-c" in args[:-1]:
        args = list(args)
        i = len(args) - 1 - args[::-1].index("-c")
        args[i + 1] = _SAFE_PATH_PREFIX + args[i + 1]
    return _stdlib_spawnv_passfds(path, args, passfds)


multiprocessing.util.spawnv_passfds = _spawnv_passfds  # only our launches change


class _render_worker_launch:
    """While it is entered, this thread's process launches are render workers'."""

    def __enter__(self):
        self.outer = getattr(_launching, "render_worker", False)
        _launching.render_worker = True

    def __exit__(self, *exc):
        _launching.render_worker = self.outer


def _without_main(popen):
    def launch(process_obj):
        with _render_worker_launch():
            return popen(process_obj)
    return staticmethod(launch)


# Module-level classes: the process object is pickled to the child.
class _SpawnRenderProcess(multiprocessing.context.SpawnProcess):
    _Popen = _without_main(multiprocessing.context.SpawnProcess._Popen)


if hasattr(multiprocessing.context, "ForkServerProcess"):  # POSIX
    class _ForkServerRenderProcess(multiprocessing.context.ForkServerProcess):
        _Popen = _without_main(multiprocessing.context.ForkServerProcess._Popen)


def render_worker_context(method: str):
    """The ``method`` context, with processes that start without the caller's ``__main__``."""
    base = multiprocessing.get_context(method)
    context = type(base)()
    context.Process = _ForkServerRenderProcess if method == "forkserver" else _SpawnRenderProcess
    return context


_contexts: dict = {}


def worker_context():
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    if method not in _contexts:
        _contexts[method] = render_worker_context(method)
    context = _contexts[method]
    if method == "forkserver":
        context.set_forkserver_preload(_PRELOAD)
    return context


def start_fork_server() -> None:
    """Start the process render workers are forked from, now: its imports (the renderer,
    about 0.25 s) then overlap with the caller's own start instead of delaying the first
    render. Costs the caller one fork-exec; a no-op where there is no fork server."""
    context = worker_context()
    if context.get_start_method() == "forkserver":
        from multiprocessing import forkserver

        with _render_worker_launch():
            forkserver.ensure_running()
