"""How render workers start: forked from multiprocessing's fork server (spawned where there
is none), which imports the renderer once, and without the caller's ``__main__``."""

from __future__ import annotations

import multiprocessing
import multiprocessing.spawn
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


def _preparation_data(name):
    data = _stdlib_preparation_data(name)
    if getattr(_launching, "render_worker", False):
        data.pop("init_main_from_name", None)
        data.pop("init_main_from_path", None)
    return data


multiprocessing.spawn.get_preparation_data = _preparation_data  # only our launches change


def _without_main(popen):
    def launch(process_obj):
        _launching.render_worker = True
        try:
            return popen(process_obj)
        finally:
            _launching.render_worker = False
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

        forkserver.ensure_running()
