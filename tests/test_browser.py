"""The Chromium harness (tests/browser.py) against pixels derived by hand, and its lifetime."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import browser
from browser import DARK, WHITE, BrowserError, Chromium, over, premultiplied

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent


def svg(body: str, view: str = "0 0 100 100") -> bytes:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="{view}" width="100" '
            f'height="100">{body}</svg>').encode()


def box(mask: np.ndarray) -> tuple[int, int, int, int]:
    """(top, bottom, left, right), inclusive, of the True pixels."""
    ys, xs = np.nonzero(mask)
    return int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())


def test_a_rect_covers_exactly_its_pixels(chromium):
    # x=10 y=20 w=30 h=40 in a 100-unit viewBox drawn at 100 px: columns 10..39, rows
    # 20..59, fully opaque red, and nothing else on the transparent page.
    [im] = chromium.render([svg('<rect x="10" y="20" width="30" height="40" fill="red"/>')],
                           100)
    assert im.shape == (100, 100, 4) and im.dtype == np.uint8
    assert box(im[..., 3] > 0) == (20, 59, 10, 39)
    assert (im[20:60, 10:40] == [255, 0, 0, 255]).all()
    assert (im[..., 3] > 0).sum() == 30 * 40


def test_scaling_keeps_pixel_edges_exact(chromium):
    # The same rect at 300 px: every coordinate times 3.
    [im] = chromium.render([svg('<rect x="10" y="20" width="30" height="40" fill="red"/>')],
                           300)
    assert im.shape == (300, 300, 4)
    assert box(im[..., 3] == 255) == (60, 179, 30, 119)
    assert (im[..., 3] > 0).sum() == 90 * 120


def test_half_transparent_fill_has_half_alpha_and_composites_by_hand(chromium):
    [im] = chromium.render([svg('<rect width="100" height="100" fill="#0000ff" '
                                'fill-opacity="0.5"/>')], 100)
    px = im[50, 50].astype(int)
    assert px[2] == 255 and px[0] == px[1] == 0 and abs(px[3] - 128) <= 1
    a = px[3] / 255
    # over white: red and green fade to 255 * (1 - a), blue stays 255
    white = over(im, WHITE)[50, 50].astype(int)
    assert abs(white[0] - 255 * (1 - a)) <= 1 and abs(white[1] - 255 * (1 - a)) <= 1
    assert white[2] == 255
    dark = over(im, DARK)[50, 50].astype(int)
    assert abs(dark[0] - DARK[0] * (1 - a)) <= 1
    assert abs(dark[2] - (255 * a + DARK[2] * (1 - a))) <= 1
    assert (premultiplied(im)[50, 50].astype(int) - [0, 0, round(255 * a), px[3]]).max() <= 1


def test_a_wide_picture_is_centred_as_its_viewbox_says(chromium):
    # viewBox 200x100 in a 100 px square: scale 1/2, centred vertically (xMidYMid meet),
    # so the full-viewBox rect covers rows 25..74.
    wide = svg('<rect width="200" height="100" fill="lime"/>', view="0 0 200 100")
    [im] = chromium.render([wide], 100)
    assert box(im[..., 3] > 0) == (25, 74, 0, 99)


DETAILED = svg('<path d="M10 10 C 40 90, 60 -10, 90 90 S 20 60 15 85" stroke="#036" '
              'stroke-width="2.7" fill="#fc0" fill-opacity="0.6"/>'
              '<circle cx="61.3" cy="33.7" r="17.9" fill="none" stroke="red" stroke-width="1.1"/>'
              '<text x="5" y="50" font-size="20">Ag</text>')


def test_a_picture_does_not_depend_on_what_was_drawn_before_it(chromium):
    # Pictures drawn several to a page came out antialiased differently (by up to 100/255 on
    # a corpus icon's edges) from the same picture drawn alone: each render must stand alone.
    alone = chromium.render([DETAILED], 384)[0]
    others = [svg(f'<circle cx="{10 * k}" cy="50" r="70" fill="#{k}0{k}0{k}0"/>')
              for k in range(3)]
    chromium.render(others, 200)
    batch = chromium.render([others[0], DETAILED, others[1], DETAILED], 384)
    assert np.array_equal(batch[1], alone) and np.array_equal(batch[3], alone)
    assert not np.array_equal(batch[0], batch[2])


def test_rendering_is_deterministic(chromium):
    text = svg('<path d="M10 10 C 40 90, 60 -10, 90 90" stroke="black" stroke-width="3" '
               'fill="none"/><text x="5" y="50" font-size="20">Ag</text>')
    first, second = chromium.render([text, text], 128)
    assert first[..., 3].max() == 255
    assert np.array_equal(first, second)
    assert np.array_equal(first, chromium.render([text], 128)[0])


def test_an_svg_chromium_cannot_load_is_an_error_naming_it(chromium):
    good = svg('<rect width="10" height="10"/>')
    with pytest.raises(BrowserError, match="SVG number 1 of"):
        chromium.render([good, b"<svg this is not xml", good], 50)
    # the browser is still usable afterwards
    assert chromium.render([good], 50)[0][..., 3].sum() > 0


def test_render_document_follows_an_external_href_beside_the_file(chromium, tmp_path):
    from PIL import Image

    Image.new("RGBA", (4, 4), (0, 128, 0, 255)).save(tmp_path / "pic.png")
    (tmp_path / "page.svg").write_bytes(
        b'<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40">'
        b'<image href="pic.png" x="10" y="10" width="20" height="20"/></svg>')
    im = chromium.render_document(tmp_path / "page.svg", 40, 40)
    assert box(im[..., 3] > 0) == (10, 29, 10, 29)
    assert (im[12:28, 12:28] == [0, 128, 0, 255]).all()
    # as an <img>, the same file may not load anything beside it
    [as_img] = chromium.render([(tmp_path / "page.svg").read_bytes()], 40)
    assert as_img[..., 3].max() == 0


def _marked(marker: str) -> list[int]:
    """Live (non-zombie) processes whose command line contains ``marker``."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            out.append(int(entry))
    return out


def _wait_gone(marker: str, seconds: float = 60) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := _marked(marker)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def test_close_leaves_no_chromium_process(chromium):
    if browser.find_chromium() is None:  # the fixture already skipped or failed
        pytest.skip("no Chromium")
    own = Chromium()
    marker = own._profile
    own.render([svg('<rect width="5" height="5"/>')], 20)
    assert len(_marked(marker)) >= 3  # watchdog, browser, helpers (and the crash handler)
    own.close()
    assert _wait_gone(marker) == []
    assert not os.path.exists(marker)


OWNER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from browser import Chromium
b = Chromium()
b.render([b'<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"/>'], 9)
print(b._profile, flush=True)
time.sleep(600)
"""


def test_chromium_dies_with_its_owner_even_on_sigkill(chromium):
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(HERE)],
                             stdout=subprocess.PIPE, text=True)
    try:
        marker = owner.stdout.readline().strip()
        assert marker and len(_marked(marker)) >= 3
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    assert _wait_gone(marker) == []
