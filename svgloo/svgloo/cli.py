"""The ``svgloo`` command: a thin dispatcher over subcommand modules.

Each subcommand is one module that exposes ``register(subparsers)``, which adds its
parser and sets ``func`` (``args -> exit code``): ``svgloo/svgloo/cli_<name>.py``
(``svgloo.cli_score``...) for the engine's commands, the front end's own ``cli.py`` for
``lsp`` and ``view`` (``lsp/svgloo/lsp/cli.py``, ``qt_viewer/svgloo/qt_viewer/cli.py``). Modules are imported
here only to build the parsers, so they must not import torch or Qt at module level.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys

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
    "svgloo.lsp.cli",
    "svgloo.qt_viewer.cli",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
    return parser


def _exit_on_termination() -> None:
    """SIGTERM / SIGHUP end the command like Ctrl-C does: ``finally`` blocks and atexit run,
    so render pools are shut down rather than left for the workers' own parent watch."""

    def on_signal(signum, _frame):
        from svgloo.engine.workers import close_all_pools

        close_all_pools()
        raise SystemExit(128 + signum)

    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None and signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, on_signal)


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
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except SvglooError as exc:
        print(error_line(exc, getattr(args, "file", None)), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("svgloo: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
