"""Scoring: leave-one-out pictures -> deltas, verdicts and findings -> the svgloo.score/1 result.

``score`` runs a scoring (and a re-scoring after an edit), ``reference`` resolves what the
pictures are compared with and ``reference_checks`` warns when it cannot fit, ``backbones``
finds the similarity backbones (plugins, through entry points), ``findings`` adds the
weight-free findings (specks, mostly hidden units).
"""
