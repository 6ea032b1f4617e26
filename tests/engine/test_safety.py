"""Untrusted documents: nothing is fetched, bombs are refused, runaway renders are killed."""

from __future__ import annotations

import base64
import http.server
import io
import threading

import numpy as np
import pytest
from PIL import Image

from svgloo.engine.reading.document import parse_document
from svgloo.engine.errors import LimitError
from svgloo.engine.limits import Limits
from svgloo.engine.rendering.render_jobs import job_render_full
from svgloo.engine.rendering.render import over_white, render_rgba, take_refused
from svgloo.engine.reading.safety import check_document, use_expansion
from svgloo.engine.processes.workers import RenderPool

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

    def do_GET(self):
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


# -- errors cross process boundaries (issue 12, item 5) ----------------------------------

def test_every_error_class_survives_pickling():
    import pickle

    from svgloo.engine.errors import ConfigError, InputError, RenderError, SvglooError

    for cls in (SvglooError, InputError, LimitError, RenderError, ConfigError):
        err = cls("a.svg", "bad\nthing", line=3, column=4)
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is cls
        assert (back.file, back.message, back.line, back.column) == ("a.svg", "bad thing", 3, 4)
        assert str(back) == "a.svg:4:5: bad thing"  # one line


def _raise_render_error(name: str):
    from svgloo.engine.errors import RenderError

    raise RenderError(name, "invalid matrix in a transform")


def test_a_render_error_in_a_worker_keeps_its_message_and_the_pool():
    from svgloo.engine.errors import RenderError

    pool = RenderPool(workers=1)
    try:
        with pytest.raises(RenderError, match="invalid matrix") as info:
            pool.map(_raise_render_error, [("m.svg",)], "m.svg", timeout_s=120)
        assert "killed" not in str(info.value)
        executor = pool._executor
        # a real render error from the renderer (text its own parser refuses)
        broken = f'<svg {NS} width="4" height="4"><rect width="2" height="2"></svg>'
        with pytest.raises(RenderError, match="ParseError") as info:
            pool.map(job_render_full, [(broken, 8, Limits(), "b.svg")], "b.svg", timeout_s=120)
        assert "killed" not in str(info.value)
        assert pool._executor is executor  # the pool was not torn down
    finally:
        pool.close()


# -- the per-document budget (item 6) ------------------------------------------------------

def _echo_pixels(n: int) -> np.ndarray:
    return np.zeros(n, np.uint8)


def test_document_budget_bounds_time_and_rendered_bytes():
    from svgloo.engine.limits import DocumentBudget, current_budget, document_budget

    pool = RenderPool(workers=1)
    try:
        with document_budget(DocumentBudget("big.svg", 600, max_bytes=3 * 1024)):
            assert current_budget() is not None
            assert len(pool.map(_echo_pixels, [(1024,), (1024,)], "big.svg",
                                timeout_s=120)) == 2
            with pytest.raises(LimitError, match="document memory budget"):
                pool.map(_echo_pixels, [(1024,), (1024,)], "big.svg", timeout_s=120)
        assert current_budget("big.svg") is None
        # a budget already spent stops the next render before it starts
        with document_budget(DocumentBudget("late.svg", 0, max_bytes=10 ** 9)):
            with pytest.raises(LimitError, match="document time budget"):
                pool.map(_echo_pixels, [(1,)], "late.svg", timeout_s=120)
        # a budget that runs out while a render is under way stops it
        with document_budget(DocumentBudget("slow.svg", 0.5, max_bytes=10 ** 9)):
            with pytest.raises(LimitError, match="document time budget"):
                pool.map(_slow_render, [(60,)], "slow.svg", timeout_s=120)
        # a helper thread of the engine finds the budget by the document's name
        seen = []
        with document_budget(DocumentBudget("t.svg", 600, 1)):
            t = threading.Thread(target=lambda: seen.append(current_budget("t.svg")))
            t.start()
            t.join()
        assert seen and seen[0] is not None and seen[0].name == "t.svg"
    finally:
        pool.close()


# -- reference images (item 4) -------------------------------------------------------------

def _png_header(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims width x height (no real pixel data)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b""))


@pytest.mark.parametrize("width,height", [(20000, 20000), (12000, 12000)])
def test_oversized_reference_is_refused_before_decoding(tmp_path, width, height):
    import resource

    from svgloo.engine.errors import ConfigError
    from svgloo.engine.scoring.reference import load_image_reference

    ref = tmp_path / "big.png"
    ref.write_bytes(_png_header(width, height))
    assert ref.stat().st_size < 200
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ConfigError, match="pixels; the limit is 40000000 pixels") as info:
        load_image_reference(str(ref), 64, render_svg=None)
    assert "\n" not in str(info.value)
    # nothing was decoded: the peak memory did not grow by the image (>= 1 GB)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200 * 1024


def test_large_reference_is_downscaled_on_load(tmp_path):
    from svgloo.engine.scoring.reference import load_image_reference

    ref = tmp_path / "wide.jpg"
    Image.new("RGB", (3000, 1500), (200, 10, 10)).save(ref, quality=90)
    rgb = load_image_reference(str(ref), 64, render_svg=None)
    assert rgb.shape == (64, 64, 3)
    # letterboxed: white bars above and below, the red image in the middle
    assert (rgb[0] == 255).all() and abs(int(rgb[32, 32, 0]) - 200) < 12


def test_score_cli_reports_a_bomb_sidecar_in_one_line(tmp_path):
    import subprocess
    import sys

    svg = tmp_path / "a.svg"
    svg.write_text(f'<svg {NS} viewBox="0 0 4 4"><rect width="2" height="2"/></svg>')
    (tmp_path / "a.ref.png").write_bytes(_png_header(20000, 20000))
    out = subprocess.run([sys.executable, "-m", "svgloo", "score", str(svg), "--backbone",
                          "pixel", "--size", "32"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and "DecompressionBomb" not in out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "a.ref.png" in lines[0] and "the limit is" in lines[0]


# -- atomic writes that keep the user's file (item 10) ----------------------------------------

def test_write_through_a_symlink_keeps_the_link(tmp_path):
    import os

    from svgloo.engine.reading.files import atomic_write_bytes

    real = tmp_path / "art" / "real.svg"
    real.parent.mkdir()
    real.write_bytes(b"old")
    link = tmp_path / "link.svg"
    link.symlink_to(real)
    atomic_write_bytes(link, b"new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() == b"new"
    assert [p.name for p in real.parent.iterdir()] == ["real.svg"]  # no temp file left


def test_write_keeps_hard_links_owner_and_mode(tmp_path):
    import os

    from svgloo.engine.reading.files import atomic_write_bytes

    a = tmp_path / "a.svg"
    a.write_bytes(b"old")
    a.chmod(0o640)
    b = tmp_path / "b.svg"
    os.link(a, b)
    inode = a.stat().st_ino
    atomic_write_bytes(a, b"new content")
    assert a.stat().st_ino == inode and b.read_bytes() == b"new content"
    assert oct(a.stat().st_mode & 0o777) == oct(0o640)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.svg", "b.svg"]
    if os.geteuid() == 0:  # only root can hand a file to someone else
        c = tmp_path / "c.svg"
        c.write_bytes(b"old")
        os.chown(c, 12345, 12345)
        atomic_write_bytes(c, b"new")
        assert (c.stat().st_uid, c.stat().st_gid) == (12345, 12345)
        assert c.read_bytes() == b"new"


def test_utf16_file_is_written_back_as_utf16(tmp_path):
    from svgloo.engine.errors import InputError
    from svgloo.engine.reading.files import encode_like

    text = ('<?xml version="1.0" encoding="UTF-16"?>\n'
            f'<svg {NS} viewBox="0 0 4 4"><title>caf\u00e9</title>'
            '<rect width="2" height="2"/></svg>')
    original = text.encode("utf-16")  # with a byte-order mark
    edited = text.replace("<rect", "<circle r='1'/><rect")
    data = encode_like(edited, original)
    assert data.startswith(original[:2]) and data.decode("utf-16") == edited
    doc = parse_document(data, "u16.svg")  # still parseable, as its declaration says
    assert "circle" in doc.text
    # a BOM-less UTF-16 file and a Latin-1 one keep their encodings
    assert encode_like(edited, text.encode("utf-16-le")).decode("utf-16-le") == edited
    latin = text.replace("UTF-16", "ISO-8859-1")
    assert encode_like(latin, latin.encode("latin-1")) == latin.encode("latin-1")
    # text the encoding cannot hold is refused, not mangled
    with pytest.raises(InputError, match="cannot be written as ISO-8859-1"):
        encode_like(latin + "\u2603", latin.encode("latin-1"), "l1.svg")


def test_bounded_read_refuses_special_files_before_reading(tmp_path):
    import os

    from svgloo.engine.errors import InputError
    from svgloo.engine.reading.files import read_regular_file

    with pytest.raises(InputError, match="not a regular file"):
        read_regular_file("/dev/zero", 1024)
    fifo = tmp_path / "pipe.svg"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):  # and it does not block
        read_regular_file(fifo, 1024)
    big = tmp_path / "big.svg"
    big.write_bytes(b"x" * 2048)
    with pytest.raises(LimitError, match="2048 bytes"):
        read_regular_file(big, 1024)
    assert read_regular_file(big, 4096) == b"x" * 2048


def test_images_are_named_as_images():
    from svgloo.engine.errors import InputError

    png = io.BytesIO()
    Image.new("RGB", (4, 4)).save(png, "PNG")
    with pytest.raises(InputError, match="this is a PNG image, not SVG"):
        parse_document(png.getvalue(), "p.svg")
    with pytest.raises(InputError) as info:
        parse_document(b"<svg xmlns='http://www.w3.org/2000/svg'>\n  <rect></svg>", "b.svg")
    # lxml says "line 2, column 15" for this mismatch: the error says the same, once
    assert str(info.value).startswith("b.svg:2:15: malformed XML")
    assert "column" not in str(info.value)


def test_a_many_subpath_path_stops_at_the_document_memory_budget(render_pool):
    """The issue's reproducer, scaled down: one even-odd path (a canvas frame and 400
    small squares). Since compound paths are re-rendered in windows it brings back a few
    MB rather than hundreds, so a 2 MB budget stands in for the real one: the budget stops
    it with a limit error naming the budget, and the same pool scores the next file."""
    from dataclasses import replace

    from svgloo.engine.limits import DEFAULT_LIMITS, DocumentBudget, document_budget
    from svgloo.engine.scoring.score import ScoreSettings, score_text

    squares = " ".join(f"M{10 + (i % 40) * 9} {10 + (i // 40) * 9}h5v5h-5z" for i in range(400))
    svg = (f'<svg {NS} viewBox="0 0 400 400"><path fill-rule="evenodd" '
           f'd="M0 0H400V400H0Z {squares}"/></svg>')
    limits = replace(DEFAULT_LIMITS, document_render_mb=2)
    settings = ScoreSettings(backbone="pixel", size=384, limits=limits)
    budget = DocumentBudget.from_limits("frame.svg", limits)
    with document_budget(budget), pytest.raises(LimitError, match="document memory budget"):
        score_text(svg, "frame.svg", settings, pool=render_pool)
    assert 2 * 2 ** 20 < budget.spent_bytes < 200 * 2 ** 20  # stopped early, not at the end
    ok = f'<svg {NS} viewBox="0 0 4 4"><rect width="2" height="2"/></svg>'
    assert len(score_text(ok, "ok.svg", settings, pool=render_pool).result["units"]) == 1


class _GiveWay(Exception):
    pass


def test_a_budget_interrupt_stops_renders_under_way_and_the_pool_recovers():
    """The daemon's hook for cancelling a job or making a batch job give way: raised
    while a render is running, it stops that render (the workers are replaced)."""
    from svgloo.engine.limits import DocumentBudget, document_budget

    calls = []

    def interrupt():
        calls.append(1)
        if len(calls) >= 2:
            raise _GiveWay()

    pool = RenderPool(workers=1)
    try:
        with document_budget(DocumentBudget("slow.svg", 600, 10 ** 9, interrupt=interrupt)):
            with pytest.raises(_GiveWay):
                pool.map(_slow_render, [(600,)], "slow.svg", timeout_s=600)
        svg = f'<svg {NS} viewBox="0 0 1 1"><rect width="1" height="1"/></svg>'
        [(rgb, _)] = pool.map(job_render_full, [(svg, 8, Limits(), "ok.svg")], "ok.svg",
                              timeout_s=120)
        assert (rgb == 0).all()
    finally:
        pool.close()


# An entity that would expand inside <text>: refused by svgloo's own check whatever the
# document's encoding, not left to reach CairoSVG's parser (issue 35).
_ENTITY_DOC = ('<?xml version="1.0" encoding="{enc}"?>\n<!DOCTYPE svg [<!ENTITY x "hello">]>\n'
               '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>&x;</text>'
               '</svg>')


@pytest.mark.parametrize("declared,codec,bom", [
    ("UTF-16", "utf-16-le", b"\xff\xfe"),
    ("UTF-16", "utf-16-be", b"\xfe\xff"),
    ("UTF-16", "utf-16-be", b""),           # no byte-order mark: the '<' pattern decides
    ("UTF-32", "utf-32-le", b"\xff\xfe\x00\x00"),
    ("UTF-8", "utf-8", b""),
])
def test_an_entity_is_refused_in_the_documents_own_encoding(declared, codec, bom):
    from svgloo.engine.errors import InputError

    raw = bom + _ENTITY_DOC.format(enc=declared).encode(codec)
    assert b"<!ENTITY" not in raw or codec == "utf-8"
    with pytest.raises(InputError, match="DTD entity declarations are not supported"):
        parse_document(raw, "entity.svg")


def test_a_dtd_without_entities_still_parses_in_utf16():
    raw = ('<?xml version="1.0" encoding="UTF-16"?>\n<!DOCTYPE svg>\n<svg xmlns='
           '"http://www.w3.org/2000/svg" width="10" height="10"/>').encode("utf-16")
    assert parse_document(raw, "plain.svg").elements[0].tag == "svg"
