"""The engine: file bytes -> Document -> Units -> leave-one-out renders -> ScoreResult.

Every front end (CLI, daemon, language server, viewer, eval) calls these modules; none of
them parses SVG, renders or scores on its own. Nothing here imports another svgloo package
except the plugins found through entry points (see ``protocols``).
"""
