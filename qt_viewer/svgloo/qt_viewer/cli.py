"""``svgloo view [FILE]``: the PyQt6 viewer. Qt is imported inside ``run`` only."""

from __future__ import annotations

import sys


def register(sub) -> None:
    from svgloo.cli_score import add_scoring_arguments

    p = sub.add_parser("view", help="open the Qt viewer on an SVG file",
                       description="Review an SVG element by element: the render with each "
                                   "unit's footprint, a sortable table of deltas, the source "
                                   "snippet, concepts, and a 'remove unit' action with undo. "
                                   "Re-scores when the file changes on disk. Needs PyQt6 "
                                   "(pip install PyQt6, or pip install \".[viewer]\" in an "
                                   "svgloo checkout).")
    p.add_argument("file", nargs="?", help="SVG file to open (or use File > Open)")
    ref = p.add_mutually_exclusive_group()
    ref.add_argument("--reference", help="reference image (PNG/JPEG) or SVG")
    ref.add_argument("--prompt", help="text reference (needs a text-capable backbone)")
    add_scoring_arguments(p)
    p.add_argument("--no-concepts", dest="concepts", action="store_false",
                   help="do not compute concepts (skips the structure analysis)")
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from svgloo.cli_score import settings_from_args
    from svgloo.engine.errors import ConfigError, InputError

    if args.file and not Path(args.file).is_file():
        raise InputError(args.file, "no such file")
    try:
        from PyQt6.QtWidgets import QApplication
    except ImportError as exc:
        raise ConfigError(args.file or "svgloo view",
                          f"the viewer needs PyQt6 ({exc}); install it with "
                          "pip install PyQt6 (or pip install \".[viewer]\" in an svgloo "
                          "checkout)") from None
    missing = missing_xcb_libraries()
    if missing:
        raise ConfigError(args.file or "svgloo view", xcb_message(missing))
    absent = no_display_reason()
    if absent:
        # Qt would abort the process (SIGABRT, exit 134) when it creates the application
        print(f"svgloo: error: no display: {absent}", file=sys.stderr)
        return 2
    from .window import ViewerWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("svgloo viewer")
    app.setOrganizationName("svgloo")
    settings = settings_from_args(args)
    win = ViewerWindow(args.file, reference=args.reference, prompt=args.prompt,
                       backbone=args.backbone, base_settings=settings, concepts=args.concepts)
    win.show()
    _quit_on_termination(app)
    try:
        return int(app.exec())
    finally:
        win.shutdown()


# Qt's xcb platform plugin (the X11 desktop) loads these at start and aborts the process,
# with no Python exception, when one is missing: check first and name the packages.
XCB_LIBRARIES = {"xcb-cursor": "libxcb-cursor0", "xcb-icccm": "libxcb-icccm4",
                 "xcb-keysyms": "libxcb-keysyms1"}


def uses_xcb(environ=None) -> bool:
    """Whether Qt will pick its X11 (xcb) platform plugin."""
    import os

    env = os.environ if environ is None else environ
    if not sys.platform.startswith("linux"):
        return False
    platform = env.get("QT_QPA_PLATFORM", "")
    if platform:
        return platform.split(":")[0].split(";")[0] == "xcb"
    return bool(env.get("DISPLAY")) and not env.get("WAYLAND_DISPLAY")


def no_display_reason(environ=None, platform: str | None = None) -> str | None:
    """Why Qt has no display to open on Linux (None when it has one, or may): no X11 or
    Wayland display is named and no QT_QPA_PLATFORM (e.g. offscreen) is chosen."""
    import os

    env = os.environ if environ is None else environ
    if not (platform or sys.platform).startswith("linux"):
        return None
    if env.get("QT_QPA_PLATFORM") or env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"):
        return None
    return ("neither DISPLAY nor WAYLAND_DISPLAY is set, so the viewer has no window to "
            "open; run it in a desktop session, over ssh -X, or under xvfb-run")


def missing_xcb_libraries(environ=None, find=None) -> list[str]:
    """Debian/Ubuntu package names of the xcb libraries Qt needs and cannot find."""
    if not uses_xcb(environ):
        return []
    if find is None:
        from ctypes.util import find_library as find
    return [pkg for lib, pkg in XCB_LIBRARIES.items() if not find(lib)]


def xcb_message(missing: list[str]) -> str:
    return ("the viewer's X11 (xcb) display needs system libraries that are missing: "
            f"{', '.join(missing)}; install them (Debian/Ubuntu: sudo apt-get install "
            f"{' '.join(missing)}; Fedora: xcb-util-cursor xcb-util-wm xcb-util-keysyms), "
            "or run under Wayland (QT_QPA_PLATFORM=wayland)")


def _quit_on_termination(app) -> None:
    """SIGTERM / SIGHUP close the window like File > Quit. Qt's event loop runs in C++, so a
    timer hands control back to Python often enough for the handler to run."""
    import signal

    from PyQt6.QtCore import QTimer

    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), lambda *_: app.quit())
    timer = QTimer(app)
    timer.timeout.connect(lambda: None)
    timer.start(200)
