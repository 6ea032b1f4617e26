"""The ``svgloo`` command: a thin dispatcher over subcommand modules.

Each subcommand is one module that exposes ``register(subparsers)``, which adds its
parser and sets ``func`` (``args -> exit code``): ``svgloo/svgloo/cli_<name>.py``
(``svgloo.cli_score``...) for the engine's commands, the front end's own ``cli.py`` for
``lsp`` and ``view`` (``lsp/svgloo/lsp/cli.py``, ``qt_viewer/svgloo/qt_viewer/cli.py``). Modules are imported
here only to build the parsers, so they must not import torch or Qt at module level.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import re
import signal
import sys
from typing import NoReturn

from svgloo.engine.version import __version__

SUBCOMMAND_MODULES = [
    "svgloo.cli_score",
    "svgloo.cli_structure",
    "svgloo.cli_bench",
    "svgloo.cli_batch",
    "svgloo.cli_fix",
    "svgloo.cli_daemon",
    "svgloo.cli_eval",
    "svgloo.cli_models",
    "svgloo.cli_vscode",
    "svgloo.lsp.cli",
    "svgloo.qt_viewer.cli",
]


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _close(word: str, candidates) -> str | None:
    import difflib  # only on a typo: not part of every command's start-up

    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


def _named_parser(parser: argparse.ArgumentParser, words: list[str]) -> argparse.ArgumentParser:
    """The (sub)command parser the words name: ``svgloo daemon start ...`` -> its parser."""
    for word in words:
        parser = _subcommands(parser).get(word, parser)
    return parser


def did_you_mean(message: str, parser: argparse.ArgumentParser) -> str:
    """`` (did you mean X?)`` for argparse's two typo errors: a misspelt subcommand or
    choice ("invalid choice: 'scroe' (choose from ...)") and an unknown flag
    ("unrecognized arguments: --refrence", checked against ``parser``'s flags). Empty when
    nothing is close."""
    choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if choice:
        options = [o.strip().strip("'\"") for o in choice.group(2).split(",")]
        match = _close(choice.group(1), options)
        return f" (did you mean {match!r}?)" if match else ""
    if message.startswith("unrecognized arguments:"):
        flags = [o for a in parser._actions for o in a.option_strings]
        typed = [w.split("=", 1)[0] for w in message.split(":", 1)[1].split()
                 if w.startswith("-")]
        hints = [(w, m) for w in typed if (m := _close(w, flags))]
        if len(hints) == 1:
            return f" (did you mean {hints[0][1]}?)"
        if hints:
            return " (did you mean " + ", ".join(f"{m} for {w}" for w, m in hints) + "?)"
    return ""


class SuggestingParser(argparse.ArgumentParser):
    """argparse with one error line that suggests the nearest command, choice or flag,
    instead of the whole usage (a typo in `svgloo scroe` printed the usage of every
    command, and no hint)."""

    # The command line being parsed: an unknown flag is reported by the top parser, and
    # belongs to the subcommand these words name.
    words: list[str] = []

    def error(self, message: str) -> NoReturn:
        parser: argparse.ArgumentParser = self
        if message.startswith("unrecognized arguments:"):
            parser = _named_parser(self, SuggestingParser.words)
        self.exit(2, f"{parser.prog}: error: {message}{did_you_mean(message, parser)}; "
                     f"`{parser.prog} --help` lists what it takes\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole ``svgloo`` parser; with ``command`` (the subcommand about to run), the
    subcommand modules are registered only until one has registered it: parsing that
    command needs no other, and ``svgloo score`` then starts its render workers without
    first importing every other command's module."""
    parser = SuggestingParser(
        prog="svgloo",
        description="Leave-one-out analysis of SVG files: which elements help the picture, "
                    "which hurt it, and how cleanly the structure maps onto what it shows.")
    parser.add_argument("--version", action="version", version=f"svgloo {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # that front end is not part of this build
                continue
            raise
        module.register(sub)
        if command is not None and command in sub.choices:
            break
    return parser


# How long a terminated command may spend in its ``finally`` blocks and atexit handlers
# before it is ended outright: a process pool's atexit handler joins its workers, and a
# batch run waited on them for over 30 s.
TERMINATION_GRACE_S = 1.0


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, theirs, ...), from /proc; [] where there is
    no /proc. Found by parent, not by process group: Chromium and some workers start
    sessions of their own."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _kill_descendants() -> None:
    # SIGSTOP first so no process starts a new child while the tree is walked
    tree = _descendants(os.getpid())
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        for pid in tree:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass


def _exit_on_termination() -> None:
    """SIGTERM / SIGHUP end the command like Ctrl-C does: ``finally`` blocks and atexit run,
    so render pools are shut down rather than left for the workers' own parent watch. Every
    process the command started (render workers, batch workers, Chromium) is killed at
    once, and if the clean-up takes longer than TERMINATION_GRACE_S the process ends
    outright: a terminated command is gone within a second or two, leaving nothing."""

    def on_signal(signum, _frame):
        import threading

        def deadline() -> None:
            _kill_descendants()
            os._exit(128 + signum)

        timer = threading.Timer(TERMINATION_GRACE_S, deadline)
        timer.daemon = True
        timer.start()
        _kill_descendants()
        from svgloo.engine.processes.workers import close_all_pools

        close_all_pools()
        raise SystemExit(128 + signum)

    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None and signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, on_signal)
    # A signal mask is inherited across exec: a parent that blocked SIGINT or SIGTERM in the
    # thread that started svgloo (some process managers and libraries do, around their own
    # spawns) would leave Ctrl-C and kill pending for ever.
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM,
                                                    getattr(signal, "SIGHUP", signal.SIGTERM)})


def error_line(exc, file: str | None) -> str:
    """``svgloo: error: FILE: message``. An error raised without a file (a setting the
    engine checks before it knows which file) names the file the command was given, not
    the engine's ``<input>`` placeholder."""
    if exc.file == "<input>":
        return f"svgloo: error: {file}: {exc.message}" if file else f"svgloo: error: {exc.message}"
    return f"svgloo: error: {exc}"


def main(argv: list[str] | None = None) -> int:
    from svgloo.engine.errors import SvglooError

    _exit_on_termination()
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(words[0] if words and not words[0].startswith("-") else None)
    SuggestingParser.words = list(words)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    args.program = argv is None  # svgloo runs as a program, not called by other code
    try:
        code = int(args.func(args) or 0)
    except SvglooError as exc:
        print(error_line(exc, getattr(args, "file", None)), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("svgloo: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    if argv is None and getattr(args, "exit_at_once", False):
        exit_at_once(code)
    return code


def exit_at_once(code: int) -> NoReturn:
    """End the program now: what it printed is flushed, the render pool closed and every
    atexit handler run (temporary folders, multiprocessing's finalizers), then the process
    exits without the interpreter tearing down every module it imported (0.05-0.07 s after
    a scoring: numpy, lxml, the engine; a one-unit file's whole scoring takes less).
    Commands whose work is done when they return ask for it (``exit_at_once`` in their
    defaults: ``score``, and ``watch`` after Ctrl-C), only when ``svgloo`` runs as a
    program (``main()`` without arguments)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said
            pass
    workers = sys.modules.get("svgloo.engine.processes.workers")
    if workers is not None:
        workers.close_all_pools()
    atexit._run_exitfuncs()
    os._exit(code)


if __name__ == "__main__":
    raise SystemExit(main())
