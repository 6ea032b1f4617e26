"""svgloo: element-level leave-one-out analysis of SVG files.

The package is assembled from the repository's top-level folders (see pyproject.toml):
``svgloo.daemon`` (the engine and its server), ``svgloo.plugins`` (backbones, concept
sources, grounders), ``svgloo.lsp`` (language server) and ``svgloo.qt_viewer``.
"""

__version__ = "0.1.0"
