"""Fixing: a scored file -> the same file without what is proven removable (``svgloo fix``)."""
