"""svgloo language server (pygls): translates engine results into LSP diagnostics."""
