"""``svgloo lsp``: the language server over stdio.

There is no TCP mode. A language server on a TCP port cannot tell who connects: the Language
Server Protocol has no place for a token before the first message (the daemon's HTTP API
checks a bearer token and the Host header; an LSP byte stream has neither), so any local
user, or a web page whose request the browser sends to 127.0.0.1, could open documents,
read what the server reads and apply its edits. Every editor svgloo ships a setup for
starts the server over stdio, where only its parent can talk to it. ``--tcp`` is still
recognised, to say so in one line (docs/security.md)."""

from __future__ import annotations

import argparse
import logging
import sys


def register(sub) -> None:
    p = sub.add_parser(
        "lsp", help="run the language server (LSP over stdio)",
        description="Language server for SVG files: harmful and invisible elements as "
                    "diagnostics, quick fixes to remove them, hover and a summary code lens. "
                    "Editors start it as `svgloo lsp` (stdio).")
    # removed modes, kept only to answer them in one line
    p.add_argument("--tcp", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--host", help=argparse.SUPPRESS)
    p.add_argument("--port", help=argparse.SUPPRESS)
    p.add_argument("--log-level", default="WARNING",
                   choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                   help="log level of messages on stderr (default WARNING)")
    p.set_defaults(func=run)


TCP_REMOVED = ("--tcp was removed: a language server on a TCP port cannot check who "
               "connects (LSP has no token), so any local user or web page could drive it; "
               "editors start `svgloo lsp` over stdio")


def run(args: argparse.Namespace) -> int:
    if args.tcp or args.host is not None or args.port is not None:
        from svgloo.engine.errors import ConfigError

        raise ConfigError(None, TCP_REMOVED)
    # stdout is the protocol channel: logs go to stderr only.
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, args.log_level),
                        format="%(asctime)s %(name)s %(levelname)s: %(message)s")
    from .server import create_server

    server = create_server()
    server.start_io()
    # The client closed stdin (or the socket) without `exit`: end now, work included.
    server.hard_exit(0 if server.shutting_down else 1)
    return 0
