"""svgloo PyQt6 viewer: windows and widgets over the engine's results."""
