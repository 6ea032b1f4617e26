"""The test suite's name for svgloo.validation.chromium, the headless Chromium driver
(moved there so ``svgloo fix --browser`` and the benchmarks can use it too)."""

from svgloo.validation.chromium import *  # noqa: F403
from svgloo.validation.chromium import find_chromium  # noqa: F401 - tests patch through it
