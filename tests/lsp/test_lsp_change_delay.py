"""An edit that comes alone is scored at once; a burst of keystrokes waits for its last."""

from svgloo.lsp import server as lsp_server
from svgloo.lsp.server import DEBOUNCE_S, TYPING_GAP_S, SvglooServer


def test_an_edit_alone_is_not_debounced_and_typing_is(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(lsp_server.time, "monotonic", lambda: clock[0])
    ls = SvglooServer()
    uri = "file:///tmp/icon.svg"
    assert ls.change_delay(uri) == 0.0            # the first edit of the document
    clock[0] += 0.12                              # a keystroke 120 ms later: typing
    assert ls.change_delay(uri) == DEBOUNCE_S
    clock[0] += TYPING_GAP_S - 0.01               # still within the gap of the last one
    assert ls.change_delay(uri) == DEBOUNCE_S
    clock[0] += TYPING_GAP_S + 0.01               # a pause, then a pasted colour
    assert ls.change_delay(uri) == 0.0
    # Documents are timed apart: typing in one does not slow an edit in another.
    clock[0] += 0.05
    assert ls.change_delay("file:///tmp/other.svg") == 0.0
    assert ls.change_delay(uri) == DEBOUNCE_S
