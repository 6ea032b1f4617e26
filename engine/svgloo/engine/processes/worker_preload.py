"""What the render workers' fork server loads once, before it forks any worker.

Importing this module (the fork server's only preload, worker_start._PRELOAD) imports
CairoSVG, the modules that hold the workers' job functions and the pool's worker side,
and draws one tiny picture, so a worker is forked ready: otherwise every worker imported
the job modules and warmed the renderer itself on its first job (about 0.1 s each, all
on the first render's path, twice on two cores). Nothing here reads a document: the limits
each worker sets on itself (workers._limit_worker) apply to every document it renders.

It runs in the fork server, or in a one-shot ``svgloo score`` that forks its workers
itself (worker_start.load_renderer_here); other callers never import it.
"""

from __future__ import annotations

import ctypes.util
import importlib
import sys

from svgloo.engine.rendering import cairo_binding


def _soname_from_ldconfig(name: str) -> str | None:
    """``ctypes.util.find_library`` without its fallbacks: the dynamic linker's cache only."""
    return ctypes.util._findSoname_ldconfig(name)  # type: ignore[attr-defined]


def _import_cairosvg() -> None:
    """Import CairoSVG. On Linux, cairocffi asks ``find_library`` for three names of which
    two never exist there ('cairo-2', 'libcairo-2': Windows names); each miss runs gcc and
    ld (20 ms in all). They are looked up in the linker's cache only; if cairo cannot be
    loaded that way, the import is done again the ordinary way. cairocffi's C declarations
    come parsed from svgloo's cache (cairo_binding)."""
    cairo_binding.install()
    if not (sys.platform.startswith("linux") and
            hasattr(ctypes.util, "_findSoname_ldconfig")):
        import cairosvg.parser
        import cairosvg.surface
        return
    ordinary = ctypes.util.find_library
    ctypes.util.find_library = _soname_from_ldconfig
    try:
        import cairosvg.parser
        import cairosvg.surface
        return
    except OSError:  # cairo not where ldconfig says: forget the half import, look again
        _forget(("cairocffi", "cairosvg"))
    finally:
        ctypes.util.find_library = ordinary
    import cairosvg.parser
    import cairosvg.surface  # noqa: F401


def _forget(packages: tuple[str, ...]) -> None:
    for name in [m for m in sys.modules if m.split(".")[0] in packages]:
        del sys.modules[name]


# The modules whose functions the workers run (the job functions, pickled by name) and the
# pool's worker side, named rather than imported: the preload sits below the proof and the
# leave-one-out in the engine's layers, and loads only these modules, not the machinery
# that sends the jobs (the proof's bisection, its reuse's state, leave-one-out's blocks).
JOB_MODULES = (
    "svgloo.engine.rendering.render_jobs",   # layers, full and leave-one-out renders, windows
    "svgloo.engine.proving.pictures",      # the proof's pictures in both renderers
    "svgloo.engine.proving.proof_reuse",   # extents and masks measured for the proof's reuse
    "svgloo.engine.processes.workers",       # the pool's worker side
)


def preload() -> None:
    _import_cairosvg()
    for name in JOB_MODULES:
        importlib.import_module(name)
    from svgloo.engine.rendering.render import warm_up

    warm_up()


try:
    preload()
except Exception:  # noqa: BLE001 - each worker then loads what it needs itself, as it
    # would without a preload, and reports what fails in its own words (its stderr)
    _forget(("cairocffi", "cairosvg"))
