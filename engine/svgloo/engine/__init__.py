"""The engine: file bytes -> Document -> Units -> leave-one-out renders -> ScoreResult.

Its sub-packages follow the data flow, each importing only those below it (checked in CI
by the import-linter contracts in pyproject.toml):

    fixing, reporting      svgloo fix; heatmaps, contact sheets, HTML
    scoring                deltas, verdicts, findings -> the svgloo.score/1 result
    proving                what may be deleted, proven in two renderers
    leave_one_out          the picture without each unit
    processes              the render worker pool
    rendering, reading,    SVG text -> pixels; file bytes -> Document -> Units;
    wording                names and plain-word messages for a unit

The modules at this level are the vocabulary every layer shares: ``errors``, ``limits``,
``settings``, ``progress``, ``protocols`` (the plugin Protocols), ``result_types`` (the
result schema as types) and ``version``; they import no sub-package.

Every front end (CLI, daemon, language server, viewer, eval) calls the engine; none of
them parses SVG, renders or scores on its own. Nothing here imports another svgloo package
except the plugins found through entry points (see ``protocols``).
"""
