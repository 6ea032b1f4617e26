"""Self-contained HTML pieces for reports: one page with inline CSS and JavaScript, images as
``data:`` URIs, sortable tables, inline SVG histograms. Nothing is fetched when the page is
opened (no http(s) URL is ever written), so a report can be mailed or opened offline.

The batch and eval reports (``svgloo.validation.html_report``) are built from these; the
thumbnails and footprints come from the engine's own renderer.
"""

from __future__ import annotations

import base64
import html
import io
import math

import numpy as np

CSS = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#222}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:24px 0 8px}
.meta{color:#555;margin-bottom:12px}
.counts span{display:inline-block;margin-right:16px;padding:2px 8px;border-radius:4px;
background:#f2f2f2}
.helpful{color:#1a9850}.harmful{color:#d73027}.neutral{color:#777}.error{color:#b00020}
table{border-collapse:collapse;margin-top:8px}
th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{cursor:pointer;background:#fafafa;position:sticky;top:0;user-select:none}
th.asc::after{content:" \\25B2"}th.desc::after{content:" \\25BC"}
td.num{text-align:right;font-variant-numeric:tabular-nums}
img.thumb{width:96px;height:96px;border:1px solid #ccc;image-rendering:auto}
td.prints{white-space:nowrap;min-width:250px}
figure{display:inline-block;margin:0 6px 0 0;text-align:center;font-size:11px}
figure img{width:72px;height:72px;border:1px solid #ccc}
.hist{display:inline-block;margin:0 16px 16px 0}
"""

# Click a header to sort by it; again to reverse. Cells sort by data-sort (numbers) or text.
SORT_JS = """
document.querySelectorAll('table.sortable').forEach(function(table){
  table.querySelectorAll('th').forEach(function(th, col){
    th.addEventListener('click', function(){
      var asc = !th.classList.contains('asc');
      table.querySelectorAll('th').forEach(function(h){h.classList.remove('asc','desc');});
      th.classList.add(asc ? 'asc' : 'desc');
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      function key(row){
        var cell = row.cells[col]; var v = cell.getAttribute('data-sort');
        if (v === null) v = cell.textContent.trim();
        var n = parseFloat(v); return isNaN(n) ? v.toLowerCase() : n;
      }
      rows.sort(function(a, b){
        var x = key(a), y = key(b);
        if (typeof x !== typeof y) { x = String(x); y = String(y); }
        return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
      });
      rows.forEach(function(r){ body.appendChild(r); });
    });
  });
});
"""


def esc(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def page(title: str, body: str) -> str:
    """A complete HTML document: inline style and script, nothing external."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>\n{body}\n"
            f"<script>{SORT_JS}</script></body></html>\n")


def png_data_uri(rgb: np.ndarray) -> str:
    """``data:image/png;base64,...`` of an RGB (or RGBA) uint8 array."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(rgb)).save(buf, format="PNG", compress_level=6)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def img(rgb: np.ndarray, alt: str, cls: str = "thumb") -> str:
    return f'<img class="{cls}" alt="{esc(alt)}" src="{png_data_uri(rgb)}">'


def cell(value, *, num: bool = False, sort=None, raw: bool = False, cls: str = "") -> str:
    """One ``<td>``: escaped text (or ``raw`` HTML), right-aligned numbers, an optional
    sort key (missing numbers sort first)."""
    classes = " ".join(c for c in ("num" if num else "", cls) if c)
    attrs = f' class="{classes}"' if classes else ""
    if sort is not None:
        attrs += f' data-sort="{esc(sort)}"'
    elif num:
        attrs += f' data-sort="{esc(-1e300 if value in (None, "") else value)}"'
    return f"<td{attrs}>{value if raw else esc(value)}</td>"


def table(headers: list[str], rows: list[str]) -> str:
    """A sortable table: ``rows`` are ``<tr>`` contents built with ``cell``."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "\n".join(f"<tr>{r}</tr>" for r in rows)
    return (f'<table class="sortable"><thead><tr>{head}</tr></thead>'
            f"<tbody>\n{body}\n</tbody></table>")


def svg_histogram(values: list[float], title: str, bins: int = 20, width: int = 320,
                  height: int = 160) -> str:
    """An inline SVG histogram of ``values`` (equal-width bins over their range), with
    the range and the count under it."""
    values = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    pad_b, pad_t = 34, 22
    out = [f'<svg class="hist" width="{width}" '
           f'height="{height}" role="img" aria-label="{esc(title)}">',
           f'<text x="4" y="15" font-size="13">{esc(title)} (n={len(values)})</text>']
    if values:
        lo, hi = min(values), max(values)
        span = hi - lo or 1.0
        counts = np.bincount(np.minimum(((np.array(values) - lo) / span * bins).astype(int),
                                        bins - 1), minlength=bins)
        top = max(1, int(counts.max()))
        bar_w = (width - 8) / bins
        plot_h = height - pad_b - pad_t
        for k, c in enumerate(counts):
            h = plot_h * int(c) / top
            out.append(f'<rect x="{4 + k * bar_w:.1f}" y="{pad_t + plot_h - h:.1f}" '
                       f'width="{max(1.0, bar_w - 1):.1f}" height="{h:.1f}" fill="#4477aa">'
                       f"<title>{int(c)}</title></rect>")
        out.append(f'<line x1="4" x2="{width - 4}" y1="{height - pad_b}" '
                   f'y2="{height - pad_b}" stroke="#888"/>')
        out.append(f'<text x="4" y="{height - pad_b + 14}" font-size="11">{lo:.4g}</text>')
        out.append(f'<text x="{width - 4}" y="{height - pad_b + 14}" font-size="11" '
                   f'text-anchor="end">{hi:.4g}</text>')
        out.append(f'<text x="4" y="{height - 4}" font-size="11" fill="#555">'
                   f"tallest bar: {top}</text>")
    else:
        out.append(f'<text x="4" y="{height // 2}" font-size="12" fill="#777">no values</text>')
    out.append("</svg>")
    return "".join(out)


def unit_thumbnails(path: str, units: list[dict], subpaths: bool, size: int = 96,
                    limits=None) -> tuple[np.ndarray, list[np.ndarray]]:
    """The file's render and, per unit row (``svgloo.score/1``), its footprint heatmap at
    ``size`` px: the render without the unit (a text edit, as the scoring made it) compared
    with the full one. Raises SvglooError for a file that cannot be read or rendered."""
    from svgloo.engine.reading.document import load_document
    from svgloo.engine.limits import DEFAULT_LIMITS
    from svgloo.engine.reporting.plots import heatmap_rgb
    from svgloo.engine.rendering.render import over_white, render_rgba
    from svgloo.engine.reading.units import extract_units, text_without

    limits = limits or DEFAULT_LIMITS
    doc = load_document(path, limits)
    full = over_white(render_rgba(doc.text, size, limits, doc.name))
    us = extract_units(doc, subpaths)
    prints = []
    for row in units:
        without = over_white(render_rgba(text_without(us, {int(row["index"])}), size, limits,
                                         doc.name))
        change = np.abs(full.astype(np.int16) - without.astype(np.int16)).max(axis=2)
        prints.append(heatmap_rgb(full, change.astype(np.float32) / 255.0))
    return full, prints


__all__ = ["page", "table", "cell", "img", "png_data_uri", "svg_histogram", "esc",
           "unit_thumbnails"]
