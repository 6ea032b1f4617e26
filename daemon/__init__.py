"""The svgloo engine (parsing, scoring units, rendering, leave-one-out, scores) and the
daemon that keeps it warm. Front ends (CLI, LSP, viewer) call into this package only."""
