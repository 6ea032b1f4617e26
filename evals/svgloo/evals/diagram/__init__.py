"""The rule-based diagram evaluation (RAIVNLab/VFig ``rule-based-eval/``), re-implemented
from that code's behaviour: every rule reproduces the original's (file:line references in
the docstrings), checked against the original run as a black box (tests/evals/diagram).

The original carries no licence, so nothing of it is copied here; ``upstream.py`` imports
a user's own checkout when they want to run it. Modules: ``geometry`` (numbers, paths,
boxes, translate), ``styles`` (CSS, paint servers, dashes, fonts), ``texts`` (positioned
labels), ``ground_truth`` (shapes, arrows and heads of a ground truth), ``generated`` (the
heuristics that find them in a model's SVG), ``colors`` (colour scores), ``metrics`` (per
shape/arrow scores, matching, composites), ``runs`` (the run-level bookkeeping), ``suite``
(the ``svgloo eval`` plugin and its commands).
"""

UPSTREAM = "RAIVNLab/VFig@4874af7 rule-based-eval/ (no licence: re-implemented, not copied)"
