"""How render workers start: forked from multiprocessing's fork server (spawned where there
is none), which imports the renderer once, without the caller's ``__main__``, importing only
from the installed environment, and with their stderr in a small file of their own (read
when one dies: ``worker_stderr_tail``).

A one-shot program (``svgloo score``) may instead fork its workers directly from itself
(``allow_direct_fork``): it loads the renderer once (``load_renderer_here``) and forks
while it is still single-threaded, so no second interpreter imports everything again
(issue 25: that import was most of a small file's wall time). Everything else, and any
caller with a thread running (the daemon, the language server, the watcher, a library
user), keeps the fork server: forking a process with threads is unsafe."""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
import multiprocessing.process
import multiprocessing.spawn
import multiprocessing.util
import atexit
import contextlib
import importlib
import itertools
import os
import shutil
import signal
import sys
import tempfile
import threading
from typing import Any

# What the fork server imports once; every worker is forked from it ready to render
# (CairoSVG, the job functions' modules, a renderer already warmed up: worker_preload.py).
_PRELOAD = ["svgloo.engine.processes.worker_preload"]


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
    for folder in (multiprocessing.process.ORIGINAL_DIR,  # type: ignore[attr-defined]  # not in typeshed
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


# A render worker's stderr goes to a small file of its own, so that when the worker dies
# its owner can say what happened in the worker's words (the last line it wrote: an import
# error, a C library's abort message) instead of guessing. The redirect must happen before
# the child unpickles anything of svgloo's (a broken install fails right there), so it
# travels in the preparation data, which the child loads first: unpickling the value below
# calls ``os.dup2(os.open(path, ...), 2)``, stdlib functions only. ``prepare`` ignores the
# unknown key. The worker keeps the file short (``trim_stderr_file``).
class _OpenForAppend:
    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
        return os.open, (self.path, flags, 0o600)


class _StderrToFile:
    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return os.dup2, (_OpenForAppend(self.path), 2)


_stderr_folder: str | None = None
_stderr_names = itertools.count()
_stderr_lock = threading.Lock()


_STDERR_PREFIX = "svgloo-worker-stderr-"


def _remove_stale_stderr_folders(parent: str) -> None:
    """Folders of owners that ended without their atexit (kill -9, ``os._exit``): their
    names carry the owner's pid. Only this user's, only when that pid is gone."""
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        pid = entry.name[len(_STDERR_PREFIX):].split("-", 1)[0]
        if not (entry.name.startswith(_STDERR_PREFIX) and pid.isdigit()):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_uid != os.getuid() or \
                    not entry.is_dir(follow_symlinks=False):
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            continue


def _new_stderr_path() -> str | None:
    global _stderr_folder
    if os.name != "posix":   # the spawn child of Windows gets its stderr another way
        return None
    with _stderr_lock:
        if _stderr_folder is None:
            _remove_stale_stderr_folders(tempfile.gettempdir())
            _stderr_folder = tempfile.mkdtemp(prefix=f"{_STDERR_PREFIX}{os.getpid()}-")
            atexit.register(shutil.rmtree, _stderr_folder, True)
        return os.path.join(_stderr_folder, f"worker-{next(_stderr_names)}.txt")


STDERR_TAIL_BYTES = 4096


def worker_stderr_tail(process) -> str:
    """The last line a render worker wrote to its stderr ('' when none, or not recorded)."""
    path = getattr(process, "_stderr_path", None)
    if not path:
        return ""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - STDERR_TAIL_BYTES))
            tail = f.read(STDERR_TAIL_BYTES)
    except OSError:
        return ""
    lines = [line.strip() for line in tail.decode("utf-8", "replace").splitlines()]
    lines = [line for line in lines if line]
    return lines[-1][:300] if lines else ""


def discard_worker_stderr(process) -> None:
    path = getattr(process, "_stderr_path", None)
    if path:
        try:
            os.unlink(path)
        except OSError:
            pass


def stderr_is_own_file() -> bool:
    """In a render worker: whether fd 2 is the worker's own stderr file (not, say, the
    user's log file that a worker started some other way inherited)."""
    import multiprocessing as mp

    path = getattr(mp.current_process(), "_stderr_path", None)
    if not path:
        return False
    try:
        return os.path.samestat(os.fstat(2), os.stat(path, follow_symlinks=False))
    except OSError:
        return False


def trim_stderr_file(max_bytes: int = 64 * 1024) -> None:
    """Keep the worker's stderr file under ``max_bytes``: its last ``STDERR_TAIL_BYTES``
    stay (the file is open for reading and appending, so later writes follow them)."""
    try:
        size = os.fstat(2).st_size
        if size <= max_bytes:
            return
        tail = os.pread(2, STDERR_TAIL_BYTES, size - STDERR_TAIL_BYTES)
        os.ftruncate(2, 0)
        os.write(2, tail)
    except OSError:
        pass


def _preparation_data(name):
    data = _stdlib_preparation_data(name)
    if getattr(_launching, "render_worker", False):
        data.pop("init_main_from_name", None)
        data.pop("init_main_from_path", None)
        if "sys_path" in data:
            data["sys_path"] = installed_sys_path(data["sys_path"])
        stderr_path = getattr(_launching, "stderr_path", None)
        if stderr_path:
            data["svgloo_worker_stderr"] = _StderrToFile(stderr_path)
    return data


multiprocessing.spawn.get_preparation_data = _preparation_data  # only our launches change

_stdlib_spawnv_passfds = multiprocessing.util.spawnv_passfds


_RESOURCE_TRACKER_CMD = "from multiprocessing.resource_tracker import main"


def _spawnv_passfds(path, args, passfds):
    """Start the fork server (``python ... -c CMD``) with its ``sys.path`` made safe first.
    multiprocessing's resource tracker, started just before it, needs only the standard
    library: it starts without ``site`` (``-S``: no site-packages, no ``.pth`` files run),
    which halves the CPU it takes while the fork server and the caller are importing."""
    if getattr(_launching, "render_worker", False) and "-c" in args[:-1]:
        args = list(args)
        i = len(args) - 1 - args[::-1].index("-c")
        if args[i + 1].startswith(_RESOURCE_TRACKER_CMD):
            args.insert(i, "-S")
            i += 1
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
            process_obj._stderr_path = _launching.stderr_path = _new_stderr_path()
            try:
                return popen(process_obj)
            finally:
                _launching.stderr_path = None
    return staticmethod(launch)


# Module-level classes: the process object is pickled to the child.
class _SpawnRenderProcess(multiprocessing.context.SpawnProcess):
    _Popen = _without_main(multiprocessing.context.SpawnProcess._Popen)


if hasattr(multiprocessing.context, "ForkServerProcess"):  # POSIX
    from multiprocessing import forkserver as _forkserver
    from multiprocessing import popen_forkserver as _popen_forkserver

    class _ForkServerPopen(_popen_forkserver.Popen):
        """A fork-server worker's handle whose exit status one thread reads, once. The fork
        server writes the status to the worker's sentinel pipe, once; the standard handle
        lets two threads that both see the pipe readable both read it, and the one that
        finds it already read records exit code 255 over the real one. Several threads do
        read it (the pool's own, a map naming a dead worker), and a worker killed with
        SIGKILL was then reported as "died (exit code 255)"."""

        def __init__(self, process_obj):
            self._status_lock = threading.Lock()
            super().__init__(process_obj)

        def poll(self, flag=os.WNOHANG):
            if self.returncode is None:
                from multiprocessing.connection import wait

                if not wait([self.sentinel], 0 if flag == os.WNOHANG else None):
                    return None
                with self._status_lock:  # held only once the status is there to read
                    if self.returncode is None:
                        try:
                            self.returncode = _forkserver.read_signed(self.sentinel)
                        except (OSError, EOFError):  # the fork server itself is gone
                            self.returncode = 255
            return self.returncode

    def _forkserver_popen(process_obj):
        return _ForkServerPopen(process_obj)

    class _ForkServerRenderProcess(multiprocessing.context.ForkServerProcess):
        _Popen = _without_main(_forkserver_popen)


if hasattr(multiprocessing.context, "ForkProcess"):  # POSIX
    class _ForkRenderProcess(multiprocessing.context.ForkProcess):
        """A render worker forked from its owner itself (``allow_direct_fork``). A fork
        runs nothing of the caller's (no ``__main__``, nothing unpickled): the child
        continues from the fork with what the owner had imported. Right after the fork
        it gets what a fork-server worker has (``_as_after_a_fork_server``) and its own
        stderr file."""

        @staticmethod
        def _Popen(process_obj):
            process_obj._stderr_path = _new_stderr_path()
            return multiprocessing.context.ForkProcess._Popen(process_obj)

        def _bootstrap(self, *args, **kwargs):
            _as_after_a_fork_server()
            if self._stderr_path:
                flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
                os.dup2(os.open(self._stderr_path, flags, 0o600), 2)
            return super()._bootstrap(*args, **kwargs)

    class _ForkedPoolProcess(multiprocessing.context.ForkProcess):
        """A worker of a process pool (``svgloo batch``'s) forked from its owner itself
        (``pool_context_forking_here``), with what the owner had imported: the renderer
        is not imported again in every worker. It dies with the owner: forked, it holds
        the owner's ends of the pool's pipes, so it would never read the end of them."""

        @staticmethod
        def _Popen(process_obj):
            process_obj._owner_pid = os.getpid()
            return multiprocessing.context.ForkProcess._Popen(process_obj)

        def _bootstrap(self, *args, **kwargs):
            die_with_parent()
            if os.getppid() != self._owner_pid:  # gone between the fork and the prctl
                os._exit(1)
            _as_after_a_fork_server()
            return super()._bootstrap(*args, **kwargs)


def _as_after_a_fork_server() -> None:
    """In a child just forked from its owner: what a fork-server child starts with. The
    default action for the termination signals the owner handles itself (the CLI's
    handler would close the owner's pools, from inside a worker), the signal mask from
    before the launch, and a ``sys.path`` without the folder svgloo runs in (for what the
    child imports later)."""
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None and callable(signal.getsignal(sig)):
            signal.signal(sig, signal.SIG_DFL)
    if _mask_outside_launch is not None:  # forked while they were held
        signal.pthread_sigmask(signal.SIG_SETMASK, _mask_outside_launch)
    sys.path[:] = installed_sys_path(sys.path)


def die_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when its parent exits (Linux only; the
    caller checks that the parent did not go before the request)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no libc prctl: the owner's other watches apply
        pass


def render_worker_context(method: str):
    """The ``method`` context, with processes that start without the caller's ``__main__``."""
    base = multiprocessing.get_context(method)
    # A concrete context (ForkServerContext, ...): each has a Process attribute to replace,
    # which the stubs' BaseContext does not declare.
    context: Any = type(base)()
    if method == "forkserver":
        context.Process = _ForkServerRenderProcess
    elif method == "fork":
        context.Process = _ForkRenderProcess
    else:
        context.Process = _SpawnRenderProcess
    return context


_contexts: dict = {}
_direct_fork = False


def allow_direct_fork() -> None:
    """Let this process fork its render workers itself, while it is single-threaded (a
    one-shot program: ``svgloo score``). Call ``load_renderer_here`` before the first pool,
    so the workers are forked with the renderer loaded."""
    global _direct_fork
    _direct_fork = True


def os_thread_count() -> int:
    """Threads of this process as the kernel counts them (a C library's too: OpenBLAS
    starts its own when numpy is imported); Python's own count where /proc is not."""
    try:
        with open("/proc/self/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[17])
    except (OSError, IndexError, ValueError):
        return threading.active_count()


def direct_fork_possible() -> bool:
    """Whether workers may ever be forked directly here: on Linux (macOS and Windows keep
    the fork server or spawn)."""
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def direct_fork_now() -> bool:
    """Whether a pool started now forks its workers from this process: it was allowed, on
    Linux (macOS and Windows keep the fork server or spawn), from the main thread (a
    worker asks to die with the thread that forked it) and with no other thread running
    (then forking is safe, and Python 3.12+ has nothing to warn about)."""
    return (_direct_fork and direct_fork_possible()
            and threading.current_thread() is threading.main_thread()
            and os_thread_count() == 1)


_HELD_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                      if hasattr(signal, name))
_mask_outside_launch = None


@contextlib.contextmanager
def signals_held_while_forking():
    """Hold Ctrl-C and the termination signals while the main thread of a process allowed
    to fork its workers starts a pool; they are handled as soon as it is done. Forking the
    workers happens inside the pool's locks (RenderPool's, ProcessPoolExecutor's shutdown
    lock), and the CLI's handler for SIGTERM closes every pool, which takes those locks:
    run in the same thread while they are held, it would wait for ever. Elsewhere (the
    workers are started by a fork server, from any thread) this does nothing."""
    global _mask_outside_launch
    if not (_direct_fork and hasattr(signal, "pthread_sigmask")
            and threading.current_thread() is threading.main_thread()):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)
    _mask_outside_launch = previous
    try:
        yield
    finally:
        _mask_outside_launch = None
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def load_renderer_here() -> None:
    """Import what a render worker needs (worker_preload: CairoSVG, the job functions'
    modules, a warmed-up renderer) in this process, for workers forked from it. numpy is
    imported here with one OpenBLAS thread (unless the user chose a number), which keeps
    this process single-threaded, so that it can fork; nothing in the CLI's process gains
    from BLAS threads (its matrix products are a few vectors)."""
    if "numpy" in sys.modules:
        importlib.import_module("svgloo.engine.processes.worker_preload")
        return
    chosen = os.environ.get("OPENBLAS_NUM_THREADS")
    if chosen is None:
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        importlib.import_module("svgloo.engine.processes.worker_preload")
    finally:
        if chosen is None:  # read when OpenBLAS loads; processes started later get the user's
            os.environ.pop("OPENBLAS_NUM_THREADS", None)


def pool_context_forking_here():
    """A multiprocessing context whose processes are forked from this process, for a
    ProcessPoolExecutor (which forks all its workers at the first submit, before its
    own thread starts), or None where that is not safe now (``direct_fork_now``: only a
    one-shot program that allowed it, on Linux, single-threaded). The caller loads what
    its workers need first (``load_renderer_here``) and submits inside
    ``signals_held_while_forking``."""
    if not direct_fork_now():
        return None
    if "pool" not in _contexts:
        context: Any = type(multiprocessing.get_context("fork"))()
        context.Process = _ForkedPoolProcess
        _contexts["pool"] = context
    return _contexts["pool"]


def worker_context():
    if direct_fork_now():
        if "fork" not in _contexts:
            _contexts["fork"] = render_worker_context("fork")
        return _contexts["fork"]
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
