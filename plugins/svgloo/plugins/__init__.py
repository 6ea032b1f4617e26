"""Extension points: similarity backbones, concept sources and grounders.

Each kind has one small Protocol and is discovered through an entry-point group
(``svgloo.backbones``, ``svgloo.concepts``, ``svgloo.grounders``)."""
