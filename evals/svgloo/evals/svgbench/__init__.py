"""eval-protocol svgbench: the requirement judge and its live variant (spec §5)."""
