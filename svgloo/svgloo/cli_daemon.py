"""``svgloo daemon start|stop|status`` and ``svgloo watch DIR``."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

STOP_GRACE_S = 20  # s: how long `svgloo watch` may take to close after Ctrl-C


def _stop_now() -> None:
    """Ctrl-C was pressed and closing has not finished: say so and end the process (the
    render workers end with it: they watch their parent)."""
    print(f"svgloo: watch: closing took over {STOP_GRACE_S} s; stopped without waiting",
          file=sys.stderr, flush=True)
    os._exit(0)


def register(sub) -> None:
    p = sub.add_parser("daemon", help="run the svgloo daemon (warm models, cache, API)",
                       description="The svgloo daemon keeps models warm, caches results and "
                                   "serves a local HTTP/JSON API on a Unix socket.")
    dsub = p.add_subparsers(dest="daemon_command", metavar="ACTION")
    start = dsub.add_parser("start", help="start the daemon (detached unless --foreground)")
    start.add_argument("--foreground", action="store_true",
                       help="run in this process (for systemd/launchd and debugging)")
    _socket_arg(start)
    start.add_argument("--tcp", type=int, metavar="PORT",
                       help="also listen on 127.0.0.1:PORT (0: any free port), with a bearer "
                            "token in <socket>.token")
    start.add_argument("--log-level", default="INFO")
    start.add_argument("--idle-exit", type=float, metavar="SECONDS", default=None,
                       help="exit after this long with no request, job or watched folder "
                            "(default: never; daemons a client starts on demand use "
                            "$SVGLOO_DAEMON_IDLE_EXIT, else 1800)")
    start.add_argument("--exit-after-clients", type=float, metavar="SECONDS", default=None,
                       help="exit this long after the last process that used the daemon has "
                            "ended (default: never; daemons a client starts on demand use "
                            "$SVGLOO_DAEMON_CLIENT_GRACE, else 60)")
    start.add_argument("--document-timeout", type=float, metavar="SECONDS",
                       help="wall-clock budget for one document's analysis (default 300)")
    start.add_argument("--document-memory", type=int, metavar="MB",
                       help="renders one document may bring back from the workers, in MB "
                            "(default 1024)")
    start.set_defaults(func=run_start)
    stop = dsub.add_parser("stop", help="stop the running daemon")
    _socket_arg(stop)
    stop.set_defaults(func=run_stop)
    status = dsub.add_parser("status", help="show the daemon's state")
    _socket_arg(status)
    status.add_argument("--json", action="store_true", help="print the status JSON")
    status.set_defaults(func=run_status)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])

    from svgloo.cli_score import add_reference_arguments, add_scoring_arguments

    w = sub.add_parser("watch", help="re-score SVG files in a folder whenever they are saved",
                       description="Score every SVG file in a folder once, then watch it and "
                                   "print one line per re-scored file whenever one is saved "
                                   "(Ctrl-C stops). <name>.ref.svg reference sidecars are "
                                   "not scored. Results also go to the cache.")
    w.add_argument("folder", help="folder to watch (recursively)")
    add_reference_arguments(w)
    add_scoring_arguments(w)
    w.add_argument("--json", action="store_true", help="print one JSON event per line")
    w.add_argument("--debounce", type=float, default=0.3, help="quiet time in seconds "
                                                               "before re-scoring (0.3)")
    w.add_argument("--no-initial", dest="initial", action="store_false",
                   help="do not score the files already there at start")
    # After Ctrl-C the watcher has closed its service and render pool itself; ending at
    # once (cli.exit_at_once) means no thread left behind by a cancelled scoring can hold
    # the interpreter's shutdown, which joins them without a time limit.
    w.set_defaults(func=run_watch, exit_at_once=True)


def _socket_arg(p) -> None:
    p.add_argument("--socket", metavar="PATH",
                   help="Unix socket (default: $SVGLOO_SOCKET or "
                        "<user runtime dir>/svgloo/daemon.sock)")


def _socket(args) -> Path:
    from svgloo.daemon.server import default_socket_path

    return Path(args.socket) if args.socket else default_socket_path()


def run_start(args) -> int:
    from svgloo.daemon.server import run_foreground, socket_answers

    path = _socket(args)
    if args.foreground:
        return run_foreground(path, args.tcp, log_level=args.log_level,
                              idle_exit_s=args.idle_exit, limits=_limits(args),
                              client_grace_s=args.exit_after_clients)
    if socket_answers(path):
        print(_already_running(path))
        return 0
    from svgloo.daemon.client import DaemonUnavailable, start_daemon

    extra = [] if args.tcp is None else ["--tcp", str(args.tcp)]
    if args.document_timeout is not None:
        extra += ["--document-timeout", str(args.document_timeout)]
    if args.document_memory is not None:
        extra += ["--document-memory", str(args.document_memory)]
    if args.exit_after_clients is not None:
        extra += ["--exit-after-clients", f"{args.exit_after_clients:g}"]
    try:
        pid = start_daemon(path, extra + ["--log-level", args.log_level],
                           idle_exit_s=args.idle_exit or 0)
    except DaemonUnavailable as exc:
        print(f"svgloo: error: {exc}", file=sys.stderr)
        return 1
    if pid == -1:   # another start won the race: that daemon is the one running
        print(_already_running(path))
        return 0
    print(f"svgloo daemon: started (pid {pid}) on {path}")
    return 0


def running_pid(path: Path) -> int | None:
    """The pid of the daemon serving ``path``: as it says itself, else from its pid file
    while a live daemon holds that file's lock; None when neither can be had."""
    from svgloo.daemon.client import DaemonClient, DaemonError, DaemonUnavailable
    from svgloo.daemon.server import daemon_alive, pid_path
    from svgloo.engine.errors import SvglooError
    from svgloo.engine.reading.files import read_regular_file

    try:
        pid = DaemonClient(path, autostart=False, timeout=5).status().get("pid")
        if isinstance(pid, int) and pid > 0:
            return pid
    except (DaemonUnavailable, DaemonError, OSError, ValueError):
        pass
    try:
        if daemon_alive(path):
            return int(read_regular_file(pid_path(path), 64, follow_symlinks=False))
    except (OSError, ValueError, SvglooError):
        pass
    return None


def _already_running(path: Path) -> str:
    pid = running_pid(path)
    return f"svgloo daemon: already running (pid {pid}) on {path}" if pid else \
        f"svgloo daemon: already running on {path}"


def _limits(args):
    from dataclasses import replace

    from svgloo.engine.limits import DEFAULT_LIMITS

    changes = {}
    if args.document_timeout is not None:
        changes["document_timeout_s"] = args.document_timeout
    if args.document_memory is not None:
        changes["document_render_mb"] = args.document_memory
    return replace(DEFAULT_LIMITS, **changes)


def run_stop(args) -> int:
    from svgloo.daemon.client import DaemonClient, DaemonError, DaemonUnavailable
    from svgloo.daemon.server import daemon_alive, pid_path, socket_answers
    from svgloo.engine.errors import SvglooError
    from svgloo.engine.reading.files import read_regular_file

    path = _socket(args)
    client = DaemonClient(path, autostart=False, timeout=10)
    try:
        pid = client.shutdown().get("pid")
    except (DaemonUnavailable, DaemonError):
        pid = None
        try:  # not answering: fall back to the pid file, if a live daemon holds it
            if not daemon_alive(path):
                raise ValueError("no daemon holds the lock")
            pid = int(read_regular_file(pid_path(path), 64, follow_symlinks=False))
            os.kill(pid, signal.SIGTERM)
        except (OSError, ValueError, SvglooError):
            print(f"svgloo daemon: not running on {path}")
            return 0
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and socket_answers(path, 0.2):
        time.sleep(0.1)
    print(f"svgloo daemon: stopped (pid {pid})")
    return 0


def run_status(args) -> int:
    from svgloo.daemon.client import DaemonClient, DaemonUnavailable, UntrustedDaemon

    path = _socket(args)
    try:
        st = DaemonClient(path, autostart=False, timeout=10).status()
    except UntrustedDaemon as exc:
        print(f"svgloo daemon: {exc}", file=sys.stderr)
        return 1
    except DaemonUnavailable:
        print(f"svgloo daemon: not running (socket {path})")
        return 1
    if args.json:
        print(json.dumps(st, indent=2))
        return 0
    models = ", ".join(f"{m['name']} on {m['device']}" for m in st["models_loaded"]) or \
        "none yet (loaded on the first request)"
    c = st["cache"]
    addr = st["address"]
    print(f"svgloo daemon {st.get('version', '')} (pid {st['pid']})")
    print(f"  address:  {addr['socket']}" + (f", {addr['tcp']}" if addr.get("tcp") else ""))
    print(f"  uptime:   {st['uptime_s']:.0f} s")
    print(f"  models:   {models}")
    print(f"  queue:    {st['queue_length']} waiting"
          + (f", running {st['running']['file']}" if st.get("running") else ""))
    print(f"  jobs:     {st['jobs']['completed']} done, {st['jobs']['failed']} failed, "
          f"{st['jobs']['cancelled']} cancelled")
    print(f"  cache:    {c['hits']} hits, {c['misses']} misses, {c['memory_entries']} in "
          f"memory, {c['layer_entries']} layers ({c['layer_bytes'] / 1e6:.0f} MB); "
          f"{c['directory']}")
    if c.get("write_error"):
        print(f"  warning:  {c['write_error']} (results are kept in memory only)")
    if st.get("watching"):
        print(f"  watching: {', '.join(st['watching'])}")
    return 0


def _event_line(ev: dict) -> str:
    stamp = time.strftime("%H:%M:%S")
    path = ev.get("path")
    if ev["event"] == "deleted":
        return f"{stamp} {path}: deleted"
    if ev["event"] == "error":
        e = ev.get("error") or {}
        return f"{stamp} {path}: error ({e.get('kind')}): {e.get('message')}"
    r = ev["result"]
    s = r["summary"]
    d = r.get("daemon", {})
    how = "cached" if d.get("cached") else f"{d.get('elapsed_s', 0):.2f} s"
    from svgloo.cli_score import plural

    line = (f"{stamp} {path}: {plural(s['units'], 'unit')}, {s['helpful']} helpful, {s['harmful']} "
            f"harmful, {s['neutral']} neutral, {s['invisible']} invisible ({how})")
    return line + "".join(f"\n  {change_line(c)}" for c in _shown(ev.get("changes") or []))


WATCH_CHANGES_SHOWN = 10  # per save; the rest is counted


def _shown(changes: list[dict]) -> list:
    if len(changes) <= WATCH_CHANGES_SHOWN:
        return changes
    return changes[:WATCH_CHANGES_SHOWN] + [len(changes) - WATCH_CHANGES_SHOWN]


def change_line(change) -> str:
    """One unit whose verdict changed since the last save (``verdicts.VerdictChange``
    as JSON), or how many more there are."""
    if isinstance(change, int):
        return f"... and {change} more verdict change{'s' if change != 1 else ''}"
    from svgloo.daemon.verdicts import VerdictChange

    return VerdictChange(change["unit"], change["line"], change["column"], change["before"],
                         change["after"], change["delta"]).describe()


def run_watch(args) -> int:
    from svgloo.daemon.service import ScoringService
    from svgloo.daemon.client import settings_dict
    from svgloo.daemon.verdicts import verdict_changes
    from svgloo.cli_score import settings_from_args
    from svgloo.engine.errors import InputError

    folder = os.path.abspath(args.folder)
    if not os.path.isdir(folder):
        raise InputError(folder, "not a folder")
    settings = settings_dict(settings_from_args(args))
    if settings.get("reference"):
        settings["reference"] = os.path.abspath(settings["reference"])

    last_results: dict[str, dict] = {}  # path -> its result at the last save
    lock = threading.Lock()

    def on_event(ev: dict) -> None:
        with lock:  # the watcher's thread and the first pass both report
            if ev["event"] == "result":
                ev["changes"] = [c.to_json() for c in verdict_changes(
                    last_results.get(ev["path"]), ev["result"])]
                last_results[ev["path"]] = ev["result"]
            elif ev["event"] == "deleted":
                last_results.pop(ev.get("path", ""), None)
            if args.json:
                print(json.dumps(ev), flush=True)
            else:
                print(_event_line(ev), flush=True)

    # Ctrl-C stops the watcher even where the parent left SIGINT ignored (an ignored signal
    # is inherited across exec; CI's test runner was seen doing it).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    service = ScoringService()
    service.watch(folder, settings, on_event=on_event, debounce_s=args.debounce)
    try:
        if args.initial:  # the watcher is already on: a save during this pass is not lost
            service.score_existing(folder)
        print(f"watching {folder} (Ctrl-C stops)", file=sys.stderr, flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        # Ctrl-C must end the watcher even if closing hangs (a thread of a cancelled
        # scoring, a worker that does not answer): the process ends 20 s later regardless.
        guard = threading.Timer(STOP_GRACE_S, _stop_now)
        guard.daemon = True
        guard.start()
        service.close()
        service.pool.close()
    return 0
