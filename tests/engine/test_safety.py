"""Untrusted documents: nothing is fetched, bombs are refused, runaway renders are killed."""

from __future__ import annotations

import base64
import http.server
import io
import threading

import numpy as np
import pytest
from PIL import Image

from svgloo.engine.document import parse_document
from svgloo.engine.errors import LimitError
from svgloo.engine.limits import Limits
from svgloo.engine.loo import job_render_full
from svgloo.engine.render import over_white, render_rgba, take_refused
from svgloo.engine.safety import check_document, use_expansion
from svgloo.engine.workers import RenderPool

NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'


def _use_bomb(levels: int) -> str:
    parts = [f'<svg {NS} viewBox="0 0 10 10"><defs><rect id="l0" width="1" height="1"/>']
    for i in range(1, levels + 1):
        parts.append(f'<g id="l{i}">' + "".join(f'<use xlink:href="#l{i-1}"/>'
                                                  for _ in range(10)) + "</g>")
    parts.append(f'</defs><use xlink:href="#l{levels}"/></svg>')
    return "".join(parts)


def test_use_bomb_is_refused_before_rendering():
    doc = parse_document(_use_bomb(7), "bomb.svg")
    assert len(doc.text) < 2000
    with pytest.raises(LimitError, match="expand"):
        check_document(doc)


def test_use_cycle_is_detected():
    svg = (f'<svg {NS}><g id="a"><use xlink:href="#b"/></g>'
           f'<g id="b"><use xlink:href="#a"/></g></svg>')
    with pytest.raises(LimitError, match="cycle"):
        use_expansion(parse_document(svg, "cycle.svg"))


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list = []

    def do_GET(self):  # noqa: N802
        _Recorder.hits.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_external_references_are_listed_and_never_fetched(tmp_path):
    server = http.server.HTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    local = tmp_path / "secret.png"
    Image.new("RGB", (4, 4), "red").save(local)
    svg = (f'<svg {NS} viewBox="0 0 10 10"><style>@import url({url}/a.css);</style>'
           f'<image width="10" height="10" xlink:href="{url}/img.png"/>'
           f'<image width="10" height="10" href="file://{local}"/>'
           f'<rect width="10" height="10" fill="url({url}/p#x)"/></svg>')
    try:
        doc = parse_document(svg, "ext.svg")
        warnings = check_document(doc)
        take_refused()
        rgba = render_rgba(doc.text, 32)
        refused = take_refused()
    finally:
        server.shutdown()
    assert _Recorder.hits == []
    assert len(warnings) >= 3 and all("refused" in w for w in warnings)
    assert any("img.png" in r for r in refused)
    # nothing red was drawn from the local file
    assert not ((rgba[..., 0] > 200) & (rgba[..., 1] < 50)).any()


def _png_data_url(color: str) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (4, 4), color).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def test_inline_png_is_drawn_but_inline_svg_is_refused():
    inner = base64.b64encode(f'<svg {NS}><rect width="9" height="9" fill="red"/></svg>'
                             .encode()).decode()
    svg = (f'<svg {NS} viewBox="0 0 20 10">'
           f'<image x="0" width="10" height="10" xlink:href="{_png_data_url("blue")}"/>'
           f'<image x="10" width="10" height="10" xlink:href="data:image/svg+xml;base64,{inner}"/>'
           '</svg>')
    rgb = over_white(render_rgba(svg, 40))
    left, right = rgb[15:25, 2:18], rgb[15:25, 24:38]
    assert (left[..., 2] > 200).all() and (left[..., 0] < 60).all()
    assert (right >= 250).all()  # white: the inline SVG's red square was not drawn
    assert any("svg+xml" in r for r in take_refused())


def _slow_render(seconds: float) -> None:
    import time

    time.sleep(seconds)


def _allocate(mb: int) -> int:
    return len(bytearray(mb * 1024 * 1024))


def test_render_timeout_kills_the_worker_and_the_pool_recovers():
    pool = RenderPool(workers=1, limits=Limits(render_timeout_s=1.0))
    try:
        with pytest.raises(LimitError, match="longer than"):
            pool.map(_slow_render, [(30,)], "slow.svg")
        svg = f'<svg {NS} viewBox="0 0 1 1"><rect width="1" height="1"/></svg>'
        # The replacement pool's first job includes starting a worker: give it a limit
        # that holds on a loaded machine (the 1 s limit above is the thing under test).
        [(rgb, _)] = pool.map(job_render_full, [(svg, 8, Limits(), "ok.svg")], "ok.svg",
                              timeout_s=120)
        assert (rgb == 0).all()
    finally:
        pool.close()


def test_memory_limit_turns_into_an_error_for_that_file():
    pool = RenderPool(workers=1, limits=Limits(render_memory_mb=600))
    try:
        with pytest.raises(LimitError):
            pool.map(_allocate, [(2000,)], "huge.svg")
        assert pool.map(_allocate, [(1,)], "small.svg") == [1024 * 1024]
    finally:
        pool.close()


def test_render_output_is_clamped():
    svg = f'<svg {NS} width="100000" height="100000"><rect width="10" height="10"/></svg>'
    rgba = render_rgba(svg, 10 ** 6, Limits(max_render_size=64))
    assert rgba.shape == (64, 64, 4)
    assert np.isfinite(rgba).all()
