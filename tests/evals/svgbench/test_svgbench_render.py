"""The PNG the judge sees: the engine's CairoSVG path, and the original's Chromium page."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from svgloo.evals.engine import SvglooError
from svgloo.evals.svgbench.render import find_chromium, render_chromium

# (Chromium lays out very small windows at a minimum width: keep the page a real size)
SVG = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 300" width="400" '
       'height="300"><rect width="400" height="300" fill="#0000ff"/></svg>')


def test_chromium_refuses_external_references_before_starting_a_browser():
    hostile = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
               'width="10" height="10"><image xlink:href="http://example.invalid/x.png" '
               'width="10" height="10"/></svg>')
    with pytest.raises(SvglooError, match="external references are refused"):
        render_chromium(hostile)


@pytest.mark.slow
@pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed "
                                                    "(apt install chromium)")
def test_chromium_page_window_and_padding():
    img = Image.open(io.BytesIO(render_chromium(SVG))).convert("RGB")
    assert img.size == (400 + 40, 300 + 40)            # --window-size = (w + 40, h + 40)
    assert img.getpixel((10, 10)) == (255, 255, 255)   # the body's 20 px white padding
    assert img.getpixel((19, 100)) == (255, 255, 255)
    assert img.getpixel((20, 20)) == (0, 0, 255)       # the SVG starts at (20, 20)
    # the page is 300 + 40 px plus the inline baseline gap, so the window scrolls and the
    # scroll bar narrows the SVG (max-width: 100%): the original's page does the same
    assert img.getpixel((200, 150)) == (0, 0, 255)


# --- untrusted predictions: no local file reaches the judge's picture (issue 35) ----------
# A local PNG of a colour nothing else draws; each trick tries to draw it into the page. The
# picture's own blue square shows the prediction itself was drawn (a blank page would pass
# the "no secret pixel" check for the wrong reason).
SECRET = (13, 211, 97)
OWN = (0, 0, 255)
needs_chromium = pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed "
                                                                   "(apt install chromium)")


@pytest.fixture(scope="module")
def secret():
    """(file:// URL, path relative to a page in the temp folder, folder) of the secret PNG.
    It lives in the system temp folder, beside the folder the old renderer wrote its
    file:// page into, so a relative ``../`` path from that page reached it."""
    import shutil
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(prefix="svgloo-secret-"))
    Image.new("RGB", (300, 300), SECRET).save(folder / "secret.png")
    secret_url = (folder / "secret.png").as_uri()
    # a style sheet that paints with the secret, for the @import / <link> tricks
    (folder / "evil.css").write_text(
        f"p {{ background: url({secret_url}); width: 250px; height: 250px; }}\n"
        f".x {{ fill: rgb{SECRET} !important; }}\n")
    yield secret_url, f"../{folder.name}/secret.png", folder
    shutil.rmtree(folder, ignore_errors=True)


def _html(body: str) -> str:
    return ('<foreignObject x="0" y="0" width="260" height="260"><div xmlns='
            f'"http://www.w3.org/1999/xhtml">{body}</div></foreignObject>')


def _nested_svg(url: str) -> str:
    import base64

    inner = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
             f'width="250" height="250"><image xlink:href="{url}" width="250" height="250"/></svg>')
    return "data:image/svg+xml;base64," + base64.b64encode(inner.encode()).decode()


def _js_draws(url: str) -> str:
    return f"var i=new Image(250,250);i.src='{url}';document.body.appendChild(i)"


# name -> prediction body given (file URL, relative path, folder URL). The first six are the
# issue's; the rest are the "and more" (CSS @import and url(), <link>, <video poster>,
# <embed>, nested data: SVG) and a few more ways to name a file that the old pre-check missed.
TRICKS = {
    "foreignObject-iframe": lambda u, r, f: _html(f'<iframe src="{u}" width="250" height="250"></iframe>'),
    "img-src": lambda u, r, f: _html(f'<img src="{u}" width="250" height="250"/>'),
    "img-relative-path": lambda u, r, f: _html(f'<img src="{r}" width="250" height="250"/>'),
    "object-data": lambda u, r, f: _html(f'<object data="{u}" width="250" height="250"></object>'),
    "script": lambda u, r, f: f"<script>{_js_draws(u)}</script>",
    "onload-handler": lambda u, r, f: f'<set attributeName="x" to="0" onbegin="{_js_draws(u)}"/>',
    "onerror-handler": lambda u, r, f: _html(f'<img src="nothing" onerror="{_js_draws(u)}"/>'),
    "css-url-escaped": lambda u, r, f: _html(
        f'<div style="width:250px;height:250px;background:\\75rl({u})"></div>'),
    "css-import-escaped": lambda u, r, f: (f'<style>@\\69mport "{f}/evil.css";</style>'
                                           '<rect class="x" width="260" height="260" fill="#fff"/>'),
    "img-srcset": lambda u, r, f: _html(f'<img srcset="{u} 1x" width="250" height="250"/>'),
    "input-image": lambda u, r, f: _html(f'<input type="image" src="{u}" width="250" height="250"/>'),
    "video-poster": lambda u, r, f: _html(f'<video poster="{u}" width="250" height="250"></video>'),
    "embed": lambda u, r, f: _html(f'<embed src="{u}" width="250" height="250"/>'),
    "nested-data-svg-img": lambda u, r, f: _html(f'<img src="{_nested_svg(u)}" width="250" height="250"/>'),
    "nested-data-svg-object": lambda u, r, f: _html(
        f'<object data="{_nested_svg(u)}" width="250" height="250"></object>'),
}


def _prediction(body: str) -> str:
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="320" height="320">'
            f'<rect x="270" y="270" width="40" height="40" fill="rgb{OWN}"/>{body}</svg>')


def _pixels_of(png: bytes, colour: tuple[int, int, int], tolerance: int = 3) -> int:
    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    return int((np.abs(rgb - np.asarray(colour)).max(axis=-1) <= tolerance).sum())


@pytest.mark.slow
@needs_chromium
@pytest.mark.parametrize("trick", sorted(TRICKS))
def test_a_prediction_draws_no_local_file(trick, secret):
    secret_url, relative, folder = secret
    png = render_chromium(_prediction(TRICKS[trick](secret_url, relative, folder.as_uri())))
    assert _pixels_of(png, SECRET) == 0, f"{trick}: the local file's pixels were drawn"
    assert _pixels_of(png, OWN) >= 30 * 30   # the prediction itself was drawn


@pytest.mark.slow
@needs_chromium
@pytest.mark.parametrize("trick", ["css-import", "link-stylesheet", "image-href"])
def test_the_browser_alone_loads_nothing_the_pre_check_refuses(trick, secret):
    """What the engine's pre-check refuses (href, url(), @import) is refused by the browser
    sandbox too: the screenshot below skips the pre-check."""
    from svgloo.evals.svgbench import chromium

    secret_url, _, folder = secret
    body = {"css-import": f'<style>@import "{folder.as_uri()}/evil.css";</style>'
                          '<rect class="x" width="260" height="260" fill="#fff"/>',
            "link-stylesheet": _html(f'<link rel="stylesheet" href="{folder.as_uri()}/evil.css"/>'
                                     '<p>x</p>'),
            "image-href": f'<image href="{secret_url}" width="250" height="250"/>'}[trick]
    png = chromium.screenshot(find_chromium(), _prediction(body), True, 360, 360, 30)
    assert _pixels_of(png, SECRET) == 0
    assert _pixels_of(png, OWN) >= 30 * 30


def _original_page(svg: str, width: int, height: int) -> np.ndarray:
    """The original protocol, for trusted pictures only: the SVG pasted into a file:// page,
    screenshotted by ``chromium --headless --screenshot`` in a (w + 40) x (h + 40) window."""
    import subprocess
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp, "page.html")
        page.write_text("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>body { margin: 0; "
                        "padding: 20px; background: white; } svg { max-width: 100%; height: "
                        f"auto; }}</style></head><body>\n{svg}\n</body></html>")
        subprocess.run([find_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                        "--disable-dev-shm-usage", f"--window-size={width + 40},{height + 40}",
                        f"--user-data-dir={tmp}/profile", f"--screenshot={tmp}/shot.png",
                        page.as_uri()], capture_output=True, timeout=60, check=True)
        return np.asarray(Image.open(Path(tmp, "shot.png")).convert("RGB"))


@pytest.mark.slow
@needs_chromium
@pytest.mark.parametrize("svg,size", [
    ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 300 200"><circle cx="150" '
     'cy="100" r="80" fill="#08c"/><path d="M20 20 L280 180" stroke="#c00" stroke-width="7"/>'
     '</svg>', (300, 200)),
    ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 36 36"><circle cx="18" cy="18" '
     'r="17" fill="#ffcc4d"/><ellipse cx="12" cy="14" rx="2.5" ry="4" fill="#664500"/></svg>',
     (36, 36)),
    # no viewBox, narrowed by the scroll bar: inline cuts the drawing off, never scales it
    ('<svg xmlns="http://www.w3.org/2000/svg" width="300" height="120"><rect x="200" y="10" '
     'width="98" height="100" fill="#c00"/><circle cx="60" cy="60" r="50" fill="#0a0"/></svg>',
     (300, 120)),
])
def test_a_picture_that_loads_nothing_looks_as_in_the_original_page(svg, size):
    """The image in a sandboxed page draws the same pixels as the original's inline page,
    where the picture's box is whole pixels (docs/security.md says where it is not)."""
    ours = np.asarray(Image.open(io.BytesIO(render_chromium(svg))).convert("RGB"))
    assert np.array_equal(ours, _original_page(svg, *size))
