"""The rule-based diagram evaluation (RAIVNLab/VFig ``rule-based-eval/``), re-implemented
clean-room from the definitions in ``shared/specs/eval-suites.md`` section 4.

The original code carries no licence, so nothing of it is copied here; ``upstream.py``
imports a user's own checkout when they want the original byte for byte. Modules:
``colors`` (colour parsing and scores), ``geometry`` (the SVG reading: boxes, paths,
translate, defs), ``extract`` (ground-truth and generated shapes and arrows), ``metrics``
(per-shape/per-arrow scores and composites), ``runs`` (the run-level bookkeeping),
``suite`` (the ``svgloo eval`` plugin and its commands).
"""

UPSTREAM = "RAIVNLab/VFig@4874af7 rule-based-eval/ (no licence: re-implemented clean-room)"
