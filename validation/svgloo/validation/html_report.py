"""Reports people look at: ``svgloo batch --html FILE`` and ``svgloo eval ... --html FILE``.

One self-contained HTML file each (``svgloo.engine.reporting.html``: inline CSS/JS, images as data:
URIs, nothing fetched). The batch report has a row per file with its thumbnail, verdict
counts, structure metrics and the footprints of its worst units (harmful first, worst
first, then flagged units, then by |delta|: the contact sheet's order), every column
sortable. The eval report has a histogram per metric and a sortable row per sample.
"""

from __future__ import annotations

import time
from pathlib import Path

from svgloo.engine.reporting.html import cell, esc, img, page, svg_histogram, table, unit_thumbnails
from svgloo.engine.reading.describe import describe_unit
from svgloo.engine.reading.files import atomic_write_text
from svgloo.engine.reporting.plots import sheet_order

WORST_UNITS = 3
VERDICTS = ("helpful", "harmful", "neutral", "invisible")


def _fmt(v, digits: int = 3) -> str:
    return "" if v is None else (f"{v:.{digits}f}" if isinstance(v, float) else str(v))


def worst_units(score: dict, k: int = WORST_UNITS) -> list[dict]:
    """The units a reviewer looks at first, as on the contact sheet; units with no visible
    effect have no footprint to show and are left to the counts."""
    return [u for u in sheet_order(score.get("units", [])) if u.get("visible", True)][:k]


def _file_row(row: dict, thumb_size: int, limits) -> str:
    score = row.get("score") or {}
    summary = score.get("summary") or {}
    metrics = (row.get("structure") or {}).get("metrics") or {}
    name = row["file"]
    thumb, prints = "", ""
    if row.get("status") == "ok":
        worst = worst_units(score) if score else []
        try:
            full, heat = unit_thumbnails(name, worst, bool(score.get("subpaths", True)),
                                         thumb_size, limits)
            thumb = img(full, name)
            prints = "".join(
                f'<figure>{img(h, describe_unit(u), "")}<figcaption class="{esc(u["verdict"])}">'
                f"{esc(describe_unit(u))}<br>{u['delta']:+.4f}</figcaption></figure>"
                for u, h in zip(worst, heat))
        except Exception as exc:  # noqa: BLE001 - the file changed or vanished since the run
            prints = f'<span class="error">no pictures: {esc(exc)}</span>'
    status = row.get("status", "?")
    error = (row.get("error") or {}).get("message") if isinstance(row.get("error"), dict) \
        else row.get("error")
    cells = [cell(thumb, raw=True, sort=name),
             cell(f"{esc(name)}" + (f'<br><span class="error">{esc(error)}</span>'
                                    if error else ""), raw=True, sort=name),
             cell(status, cls="error" if status != "ok" else ""),
             cell(summary.get("units"), num=True)]
    cells += [cell(summary.get(v), num=True, cls=v) for v in VERDICTS]
    cells += [cell(_fmt(metrics.get(m)), num=True, sort=metrics.get(m)
                   if metrics.get(m) is not None else -1e300)
              for m in ("purity", "coverage")]
    cells += [cell(prints, raw=True, cls="prints", sort=(worst_units(score)[0]["delta"]
                                                         if score and worst_units(score) else 0)),
              cell(_fmt(row.get("seconds"), 2), num=True, sort=row.get("seconds") or 0)]
    return "".join(cells)


def batch_report(rows: list[dict], title: str, *, thumb_size: int = 96, limits=None) -> str:
    """The HTML of a batch report over result rows (``svgloo batch``'s results.jsonl)."""
    totals = {v: sum((r.get("score") or {}).get("summary", {}).get(v) or 0 for r in rows)
              for v in VERDICTS}
    errors = sum(r.get("status") != "ok" for r in rows)
    counts = "".join(f'<span class="{v}">{totals[v]} {v}</span>' for v in VERDICTS)
    counts += f'<span class="error">{errors} error{"s" if errors != 1 else ""}</span>'
    head = ["file", "name", "status", "units", *VERDICTS, "purity", "coverage",
            f"worst units (footprints, up to {WORST_UNITS})", "s"]
    body = (f"<h1>{esc(title)}</h1>"
            f'<div class="meta">{len(rows)} file{"s" if len(rows) != 1 else ""}; '
            f"written {esc(time.strftime('%Y-%m-%d %H:%M'))}; click a column to sort</div>"
            f'<div class="counts">{counts}</div>'
            + table(head, [_file_row(r, thumb_size, limits) for r in rows]))
    return page(title, body)


def write_batch_report(out_dir: str, files: list[str], key: str, path: str,
                       limits=None) -> Path:
    """``path``: the batch report of the latest row per file with settings ``key``."""
    from .batch import read_results

    wanted, latest = set(files), {}
    for row in read_results(out_dir):
        if row.get("settings_key") == key and row.get("file") in wanted:
            latest[row["file"]] = row
    rows = [latest[f] for f in sorted(latest)]
    text = batch_report(rows, f"svgloo batch: {out_dir}", limits=limits)
    atomic_write_text(Path(path), text)
    return Path(path)


def eval_report(result: dict) -> str:
    """The HTML of an ``svgloo.eval/1`` result: status counts, a histogram per numeric
    metric over the scored samples, and every sample's metrics in a sortable table."""
    samples = result.get("samples", [])
    ok = [r for r in samples if r.get("status") == "ok"]
    names = sorted({k for r in samples for k, v in (r.get("metrics") or {}).items()
                    if isinstance(v, (int, float)) and not isinstance(v, bool)})
    counts = (result.get("summary") or {}).get("status_counts") or {}
    title = f"svgloo eval: {result.get('suite')} / {result.get('task')}"
    hist = "".join(svg_histogram([r["metrics"].get(n) for r in ok], n) for n in names)
    rows = []
    for r in samples:
        m = r.get("metrics") or {}
        rows.append(cell(r.get("id")) + cell(r.get("status")) + "".join(
            cell(_fmt(m.get(n), 4), num=True, sort=m.get(n) if m.get(n) is not None
                 else -1e300) for n in names) + cell(r.get("reason") or ""))
    summary = "".join(f"<span>{esc(n)} {esc(s)}</span>" for s, n in counts.items() if n)
    body = (f"<h1>{esc(title)}</h1>"
            f'<div class="meta">reproduces {esc(result.get("upstream"))}; '
            f"{len(samples)} samples; predictions: {esc(result.get('predictions'))}</div>"
            f'<div class="counts">{summary}</div>'
            + "".join(f'<p class="error">warning: {esc(w)}</p>'
                      for w in result.get("warnings", []))
            + f"<h2>Metrics over the {len(ok)} scored samples</h2>{hist}"
            + "<h2>Samples</h2>" + table(["id", "status", *names, "reason"], rows))
    return page(title, body)


def write_eval_report(result: dict, path: str) -> Path:
    atomic_write_text(Path(path), eval_report(result))
    return Path(path)


__all__ = ["batch_report", "write_batch_report", "eval_report", "write_eval_report",
           "worst_units"]
