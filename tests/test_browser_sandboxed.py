"""Chromium draws untrusted SVGs as documents (the ``<object>``/inline way, masks live)
without running them: ``render_sandboxed``, used by ``fix --browser`` and the rewrite
benchmark. Refereed in the real Chromium."""

from __future__ import annotations

import http.server
import threading

import numpy as np
import pytest
from PIL import Image

SIZE = 64
RED, BLUE = (255, 0, 0), (0, 0, 255)


def _object_page(tmp_path, data: bytes):
    (tmp_path / "doc.svg").write_bytes(data)
    page = tmp_path / "doc.html"
    page.write_text('<!doctype html><style>html,body{margin:0;background:transparent}'
                    'object{display:block}</style><object data="doc.svg" '
                    f'type="image/svg+xml" width="{SIZE}" height="{SIZE}"></object>')
    return page


@pytest.mark.parametrize("name", ["logos/lateral-icon.svg", "noto/emoji_u1f9af.svg",
                                  "twemoji/1f3ba.svg"])
def test_sandboxed_draws_as_an_object_does(chromium, corpus_dir, tmp_path, name):
    data = (corpus_dir / name).read_bytes()
    as_object = chromium.render_document(_object_page(tmp_path, data), SIZE, SIZE)
    assert np.array_equal(chromium.render_sandboxed(data, SIZE), as_object)


def test_a_script_in_the_svg_does_not_run(chromium, tmp_path):
    svg = (b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10" width="64" '
           b'height="64" onload="document.getElementById(\'r\').setAttribute(\'height\', 5)">'
           b'<rect id="r" width="10" height="10" fill="#f00"/>'
           b'<script>document.getElementById("r").setAttribute("fill", "#00f")</script></svg>')
    # The same file opened as a page runs both (so this test can fail): blue, half height.
    trusted = chromium.render_document(_object_page(tmp_path, svg), SIZE, SIZE)
    assert tuple(trusted[2, 2, :3]) == BLUE and trusted[SIZE - 2, 2, 3] == 0
    picture = chromium.render_sandboxed(svg, SIZE)
    assert tuple(picture[2, 2, :3]) == RED and tuple(picture[SIZE - 2, 2, :3]) == RED


def test_nothing_outside_the_svg_is_fetched(chromium, tmp_path):
    """An image on a local server and one beside the file: neither request is made (or
    it is failed), and neither image's colour is drawn."""
    green = tmp_path / "green.png"
    Image.new("RGB", (8, 8), (0, 255, 0)).save(green)
    served = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(tmp_path), **kwargs)

        def log_message(self, *args):
            served.append(self.path)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        svg = ('<svg xmlns="http://www.w3.org/2000/svg" '
               'xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10" width="64" '
               'height="64"><rect width="10" height="10" fill="#f00"/>'
               f'<image href="http://127.0.0.1:{port}/green.png" width="5" height="10"/>'
               f'<image xlink:href="{green.as_uri()}" x="5" width="5" height="10"/>'
               '<image href="green.png" x="5" width="5" height="10"/></svg>').encode()
        blocked_before = len(chromium.blocked)
        picture = chromium.render_sandboxed(svg, SIZE)
    finally:
        server.shutdown()
    assert served == []
    assert any(f":{port}/green.png" in url for url in chromium.blocked[blocked_before:])
    # No green anywhere (Chromium draws its broken-image sign, light blue, instead).
    assert not _green(picture).any()
    # A file opened as a page does load the image beside it (so this test can fail).
    beside = (b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10" width="64" '
              b'height="64"><image href="green.png" width="10" height="10"/></svg>')
    assert _green(chromium.render_document(_object_page(tmp_path, beside), SIZE, SIZE)).any()
    assert not _green(chromium.render_sandboxed(beside, SIZE)).any()


def _green(picture: np.ndarray) -> np.ndarray:
    r, g, b = (picture[..., k].astype(int) for k in range(3))
    return (g > 200) & (r < 60) & (b < 60)


@pytest.mark.parametrize("data", [b"<svg", b"plain text", b""])
def test_bytes_that_are_not_xml_are_refused_not_drawn(chromium, data):
    """Chromium would draw its XML error page (dark text on a box) as the picture."""
    from svgloo.validation.chromium import BrowserError

    with pytest.raises(BrowserError, match="not well-formed XML"):
        chromium.render_sandboxed(data, 64)
