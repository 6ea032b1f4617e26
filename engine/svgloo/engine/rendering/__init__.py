"""Rendering: SVG text -> RGBA pixels.

CairoSVG (the analysis renderer) and resvg (the second opinion) behind ``render``; values
CairoSVG rejects rewritten in the copy it draws (``normalize``); pixel arithmetic
(``raster``, ``composite``: cairo's 8-bit "over", ``masks``: dilations); and the job
functions the render workers run (``render_jobs``). Knows nothing of units or proofs.
"""
