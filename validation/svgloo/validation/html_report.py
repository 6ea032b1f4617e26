"""Reports people look at: ``svgloo batch --html FILE`` and ``svgloo eval ... --html FILE``.

One self-contained HTML file each (``svgloo.engine.reporting.html``: inline CSS/JS, images as data:
URIs, nothing fetched). The batch report has a row per file with its thumbnail, verdict
counts, structure metrics and the footprints of its worst units (harmful first, worst
first, then flagged units, then by |delta|: the contact sheet's order), every column
sortable. The eval report has a histogram per metric and a sortable row per sample.

The batch report's "to look at" column shows what a reviewer acts on, never the most
helpful units: with a reference (image or text) the most harmful units first, then the
flagged ones; scored against itself (no harmful unit is possible), the specks, mostly
hidden and proven-removable units. Per file it counts proven-removable units, specks and
mostly hidden units.
"""

from __future__ import annotations

import time
from pathlib import Path

from svgloo.engine.reporting.html import cell, esc, img, page, svg_histogram, table, unit_thumbnails
from svgloo.engine.wording.describe import describe_unit
from svgloo.engine.reading.files import atomic_write_text
from svgloo.evals.report import element_name, headline, loo_findings

WORST_UNITS = 3
VERDICTS = ("helpful", "harmful", "neutral", "invisible")
# summary key -> column: what `svgloo fix` would remove, and what a reviewer looks at
ACTIONABLE = (("proven_removable", "removable"), ("specks", "specks"),
              ("mostly_hidden", "hidden"))


def _fmt(v, digits: int = 3) -> str:
    return "" if v is None else (f"{v:.{digits}f}" if isinstance(v, float) else str(v))


def _has(row: dict, kind: str) -> bool:
    return any(f.get("kind") == kind for f in row.get("findings") or [])


def units_to_look_at(score: dict, k: int = WORST_UNITS) -> list[dict]:
    """The units a reviewer acts on, most pressing first. Against a reference: harmful
    units, worst first, then the flagged ones. Against the file itself nothing can be
    harmful and the largest deltas are merely the most helpful units, so: specks (the
    smallest first), mostly hidden units (the most hidden first), then units proven
    removable. Units with nothing to act on are never shown."""
    rows = score.get("units", [])
    with_reference = (score.get("reference") or {}).get("kind") not in (None, "self")
    harmful = sorted((u for u in rows if u["verdict"] == "harmful"), key=lambda u: u["delta"]) \
        if with_reference else []
    specks = sorted((u for u in rows if _has(u, "speck")), key=lambda u: u["footprint_pixels"])
    hidden = sorted((u for u in rows if _has(u, "mostly_hidden") and not _has(u, "speck")),
                    key=lambda u: -max(f.get("hidden_share", 0) for f in u["findings"]))
    removable = [u for u in rows if (u.get("removal") or {}).get("status") == "proven"]
    out: list[dict] = []
    for u in harmful + specks + hidden + removable:
        if u not in out:
            out.append(u)
    return out[:k]


# The old name: the contact sheet's first units are no longer what the report shows.
worst_units = units_to_look_at


def look_caption(row: dict, with_reference: bool) -> str:
    """Why a unit is shown: its delta when harmful, else what was found."""
    if with_reference and row["verdict"] == "harmful":
        return f"{row['delta']:+.4f}"
    for f in row.get("findings") or []:
        if f.get("kind") == "speck":
            return f"speck, {row['footprint_pixels']} px"
        if f.get("kind") == "mostly_hidden":
            return f"{f.get('hidden_share', 0):.0%} hidden"
    if (row.get("removal") or {}).get("status") == "proven":
        return "removable"
    return f"{row['delta']:+.4f}"


def _file_row(row: dict, thumb_size: int, limits) -> str:
    score = row.get("score") or {}
    summary = score.get("summary") or {}
    metrics = (row.get("structure") or {}).get("metrics") or {}
    name = row["file"]
    thumb, prints = "", ""
    worst = units_to_look_at(score) if score else []
    with_reference = (score.get("reference") or {}).get("kind") not in (None, "self")
    if row.get("status") == "ok":
        try:
            full, heat = unit_thumbnails(name, worst, bool(score.get("subpaths", True)),
                                         thumb_size, limits)
            thumb = img(full, name)
            prints = "".join(
                f'<figure>{img(h, describe_unit(u), "")}<figcaption class="{esc(u["verdict"])}">'
                f"{esc(describe_unit(u))}<br>{esc(look_caption(u, with_reference))}"
                "</figcaption></figure>"
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
    cells += [cell(summary.get(key), num=True) for key, _ in ACTIONABLE]
    cells += [cell(_fmt(metrics.get(m)), num=True, sort=metrics.get(m)
                   if metrics.get(m) is not None else -1e300)
              for m in ("purity", "coverage")]
    # sorts by how much there is to act on: the worst harmful delta, else the count
    look_sort = (worst[0]["delta"] if worst and with_reference and worst[0]["verdict"] ==
                 "harmful" else -len(worst))
    cells += [cell(prints, raw=True, cls="prints", sort=look_sort),
              cell(_fmt(row.get("seconds"), 2), num=True, sort=row.get("seconds") or 0)]
    return "".join(cells)


def batch_report(rows: list[dict], title: str, *, thumb_size: int = 96, limits=None) -> str:
    """The HTML of a batch report over result rows (``svgloo batch``'s results.jsonl)."""
    keys = [*VERDICTS, *(key for key, _ in ACTIONABLE)]
    totals = {v: sum((r.get("score") or {}).get("summary", {}).get(v) or 0 for r in rows)
              for v in keys}
    errors = sum(r.get("status") != "ok" for r in rows)
    counts = "".join(f'<span class="{v}">{totals[v]} {v}</span>' for v in VERDICTS)
    counts += "".join(f'<span class="{key}">{totals[key]} {label}</span>'
                      for key, label in ACTIONABLE)
    counts += f'<span class="error">{errors} error{"s" if errors != 1 else ""}</span>'
    head = ["file", "name", "status", "units", *VERDICTS,
            *(label for _, label in ACTIONABLE), "purity", "coverage",
            f"to look at (footprints, up to {WORST_UNITS}: harmful with a reference, else "
            "specks, hidden, removable)", "s"]
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
    # The suite's headline numbers first, as the original benchmark reports them.
    heads = "".join(f'<tr><th>{esc(k)}</th><td class="num">{esc(_headline_value(v))}</td></tr>'
                    for k, v in headline(result))
    body = (f"<h1>{esc(title)}</h1>"
            f'<div class="meta">reproduces {esc(result.get("upstream"))}; '
            f"{len(samples)} samples; predictions: {esc(result.get('predictions'))}</div>"
            f'<table class="headline">{heads}</table>'
            f'<div class="counts">{summary}</div>'
            + "".join(f'<p class="error">warning: {esc(w)}</p>'
                      for w in result.get("warnings", []))
            + _loo_section(result)
            + f"<h2>Metrics over the {len(ok)} scored samples</h2>{hist}"
            + "<h2>Samples</h2>" + table(["id", "status", *names, "reason"], rows))
    return page(title, body)


def _headline_value(v) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{a}={_headline_value(b)}" for a, b in v.items())
    return _fmt(v, 4) if isinstance(v, float) else str(v)


def _loo_section(result: dict) -> str:
    """What ``--loo`` found: the elements that cost the score, costliest first."""
    found = loo_findings(result)
    if found is None:
        return ""
    lead = (f"<p>{found['costly']} of {found['elements']} elements cost the score (removing "
            f"them would raise it), in {found['samples']} sample"
            f"{'' if found['samples'] == 1 else 's'}"
            + (f"; {found['failed']} samples could not be scored" if found["failed"] else "")
            + ".</p>")
    rows = [cell(u["sample"]) + cell(element_name(u)) +
            cell(f"{u['delta']:+.5f}", num=True, sort=u["delta"]) for u in found["worst"]]
    return ("<h2>Elements that cost the score (--loo)</h2>" + lead
            + (table(["sample", "element", "delta"], rows) if rows else ""))


def write_eval_report(result: dict, path: str) -> Path:
    atomic_write_text(Path(path), eval_report(result))
    return Path(path)


__all__ = ["batch_report", "write_batch_report", "eval_report", "write_eval_report",
           "look_caption", "units_to_look_at", "worst_units"]
