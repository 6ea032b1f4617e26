"""What the pytest-lsp clients of tests/lsp/ record: every publishDiagnostics, in order.

pytest-lsp keeps only the last diagnostics per document; the tests need each publication
with its version (a stale one published after a newer one is a bug they look for)."""

from __future__ import annotations

from lsprotocol import types


def record_published(lsp_client) -> None:
    """Keep every publishDiagnostics in ``lsp_client.published`` (and still hand it on)."""
    lsp_client.published = []
    features = lsp_client.protocol.fm.features
    original = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params: types.PublishDiagnosticsParams):
        lsp_client.published.append(params)
        return original(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record
