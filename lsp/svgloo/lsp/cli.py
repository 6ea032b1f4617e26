"""``svgloo lsp``: the language server over stdio (default) or TCP."""

from __future__ import annotations

import argparse
import logging
import sys


def register(sub) -> None:
    p = sub.add_parser(
        "lsp", help="run the language server (LSP over stdio; --tcp for a socket)",
        description="Language server for SVG files: harmful and invisible elements as "
                    "diagnostics, quick fixes to remove them, hover and a summary code lens. "
                    "Editors start it as `svgloo lsp` (stdio).")
    p.add_argument("--tcp", action="store_true", help="listen on a TCP socket instead of stdio")
    p.add_argument("--host", default="127.0.0.1", help="TCP host (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=2087, help="TCP port (default 2087)")
    p.add_argument("--log-level", default="WARNING",
                   choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                   help="log level of messages on stderr (default WARNING)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # stdout is the protocol channel: logs go to stderr only.
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, args.log_level),
                        format="%(asctime)s %(name)s %(levelname)s: %(message)s")
    from .server import create_server

    server = create_server()
    if args.tcp:
        server.start_tcp(args.host, args.port)
    else:
        server.start_io()
    # The client closed stdin (or the socket) without `exit`: end now, work included.
    server.hard_exit(0 if server.shutting_down else 1)
    return 0
