"""Whether a document's leave-one-out fits its memory budget, told before the work starts.

What leave-one-out holds grows with the pixels each unit draws: its layer (premultiplied
RGBA, 4 bytes a pixel, brought back from the render workers) and its leave-one-out patch
(RGB, 3 bytes a pixel, where its image differs from the full render, which on an
overlap-heavy file is most of its box). Both are cut to the unit's box, so a thousand
dots cost little while a thousand shapes that each cover a third of the canvas cost
gigabytes. Counting units cannot tell the two apart; a few units drawn alone can: their
boxes, scaled up to every unit, estimate what the work will hold. A file over the
document's memory budget (limits.document_render_mb) is refused there and then, in
seconds, with what to do, instead of after minutes of renders.

Only element units are sampled: subpaths of a compound path are drawn window by window
(subpath_windows.py), whose memory does not grow with the path's box.
"""

from __future__ import annotations

import math
import random

from svgloo.engine.errors import LimitError
from svgloo.engine.limits import Limits
from svgloo.engine.reading.units import UnitSet

BYTES_PER_PIXEL = 4 + 3  # a unit's layer (RGBA) and its leave-one-out patch (RGB)
SAMPLE = 24              # units drawn alone to measure their boxes


def estimated_bytes(us: UnitSet, size: int, limits: Limits, pool) -> int | None:
    """About how many bytes the layers and patches of ``us`` take at ``size``; None when
    even the worst case (every element unit drawing the whole canvas) fits the budget,
    so nothing is rendered to find out."""
    elements = [u.index for u in us.units if u.kind != "subpath"]
    budget = limits.document_render_mb * 1024 * 1024
    if len(elements) * size * size * BYTES_PER_PIXEL <= budget:
        return None
    from svgloo.engine.leave_one_out.layers import LayerTexts
    from svgloo.engine.rendering.render_jobs import job_render_layers

    sample = random.Random(37).sample(elements, min(SAMPLE, len(elements)))
    texts = LayerTexts(us)
    [layers] = pool.map(job_render_layers,
                        [([texts.keeping({k}) for k in sample], size, limits, us.doc.name)],
                        us.doc.name)
    area = sum((b[1] - b[0]) * (b[3] - b[2]) for b, _ in layers if b is not None)
    return int(area / len(sample) * len(elements) * BYTES_PER_PIXEL)


def check_fits(us: UnitSet, size: int, limits: Limits, pool) -> None:
    """Raise LimitError (one line: the estimate, the budget, what to do) when the units'
    layers and leave-one-out images would not fit the document's memory budget."""
    need = estimated_bytes(us, size, limits, pool)
    budget = limits.document_render_mb * 1024 * 1024
    if need is None or need <= budget:
        return
    # Memory goes with the square of the size: the largest size that fits, in 32s.
    smaller = int(size * math.sqrt(budget / need)) // 32 * 32
    hint = f"score at --size {smaller} or less, or " if smaller >= 64 else ""
    raise LimitError(us.doc.name,
                     f"{len(us.units)} units whose pictures would hold about "
                     f"{need / 2 ** 20:.0f} MB at {size} px (their layers and "
                     f"leave-one-out images), over the document memory budget of "
                     f"{limits.document_render_mb} MB; {hint}split the file")


__all__ = ["estimated_bytes", "check_fits", "BYTES_PER_PIXEL"]
