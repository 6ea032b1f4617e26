"""Human output for ``svgloo.eval/1`` results: a terminal table and a metric histogram.

What a reader wants first comes first: the suite's headline numbers (its summary, as the
original benchmark reports it), then what ``--loo`` found (which elements of which
predictions cost the score), then the per-sample table. The HTML report
(``svgloo.validation.html_report.eval_report``) uses the same two helpers.
"""

from __future__ import annotations

import sys

LOO_SHOWN = 10


def headline(result: dict) -> list[tuple[str, object]]:
    """The summary's metrics in the suite's own order (what the original reports), without
    the status counts, which are bookkeeping."""
    return [(k, v) for k, v in (result.get("summary") or {}).items() if k != "status_counts"]


def loo_findings(result: dict, shown: int = LOO_SHOWN) -> dict | None:
    """What ``--loo`` found over the run: how many elements were scored and how many
    cost the score (delta < 0), and the ``shown`` costliest, each with its sample. None
    when the run had no ``--loo``."""
    scored = [(r["id"], u) for r in result.get("samples", [])
              for u in ((r.get("loo") or {}).get("units") or [])]
    if not any(r.get("loo") for r in result.get("samples", [])):
        return None
    costly = sorted(((sid, u) for sid, u in scored if u["delta"] < 0),
                    key=lambda t: t[1]["delta"])
    failed = sum(1 for r in result.get("samples", []) if (r.get("loo") or {}).get("error"))
    return {"elements": len(scored), "costly": len(costly),
            "samples": len({sid for sid, _ in costly}), "failed": failed,
            "worst": [{"sample": sid, **u} for sid, u in costly[:shown]]}


def element_name(unit: dict) -> str:
    """``<path#id> subpath 2, line 7`` for a --loo unit."""
    name = unit["tag"] + (f"#{unit['id']}" if unit.get("id") else "")
    if unit.get("subpath") is not None:
        name += f" subpath {int(unit['subpath']) + 1}"
    return f"<{name}>, line {unit['line']}"


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return f"{v:.6f}" if abs(v) < 1000 else f"{v:.1f}"
    return str(v)


def print_table(result: dict, out=None, max_rows: int = 40) -> None:
    out = out or sys.stdout  # looked up per call: tests and pagers replace sys.stdout
    print(f"{result['suite']} / {result['task']}  (reproduces {result['upstream']})", file=out)
    render = result["config"].get("render")
    if render:
        print(f"  render: {render['call'] or render}", file=out)
    print(file=out)
    print("  headline (the suite's summary):", file=out)
    for k, v in headline(result):
        if isinstance(v, dict):
            v = ", ".join(f"{a}={_fmt(b)}" for a, b in v.items())
        print(f"    {k}: {_fmt(v)}", file=out)
    counts = (result.get("summary") or {}).get("status_counts") or {}
    if counts:
        print(f"    samples: {', '.join(f'{n} {s}' for s, n in counts.items() if n)}", file=out)
    found = loo_findings(result)
    if found is not None:
        print(f"  --loo: {found['costly']} of {found['elements']} elements cost the score, in "
              f"{found['samples']} sample{'' if found['samples'] == 1 else 's'}"
              + (f" ({found['failed']} could not be scored)" if found["failed"] else "")
              + (":" if found["worst"] else ""), file=out)
        for u in found["worst"]:
            print(f"    {u['sample']}: {element_name(u)}: delta {u['delta']:+.5f}", file=out)
    rows = result["samples"]
    metric_names = sorted({k for r in rows for k, v in r["metrics"].items()
                           if isinstance(v, (int, float)) and not isinstance(v, bool)})
    id_w = max([len(r["id"]) for r in rows] + [6])
    head = f"  {'id':<{id_w}}  {'status':<12}" + "".join(f"  {m:>14}" for m in metric_names)
    print(file=out)
    print(head, file=out)
    shown = rows if len(rows) <= max_rows else rows[:max_rows]
    for r in shown:
        line = f"  {r['id']:<{id_w}}  {r['status']:<12}" + "".join(
            f"  {_fmt(r['metrics'].get(m)):>14}" for m in metric_names)
        if r.get("reason"):
            line += f"  {r['reason'][:70]}"
        if r.get("loo") and "units" in r["loo"]:
            harmful = [u for u in r["loo"]["units"] if u["delta"] < 0]
            if harmful:
                w = min(harmful, key=lambda u: u["delta"])
                line += (f"  most harmful: unit {w['index']} <{w['tag']}> line {w['line']} "
                         f"({w['delta']:+.5f}; {len(harmful)} harmful)")
        print(line, file=out)
    if len(rows) > max_rows:
        print(f"  ... {len(rows) - max_rows} more rows (--json or --out for all)", file=out)
    print(file=out)
    for s in result["skipped_metrics"]:
        print(f"  skipped: {s['name']}: {s['reason']}", file=out)
    for w in result["warnings"]:
        print(f"  warning: {w}", file=out)
    t = result["timings"]
    print(f"  {len(rows)} samples in {t['total_s']:.2f} s "
          f"({t['per_sample_s'] or 0:.4f} s per sample, "
          f"{t['workers']} worker{'' if t['workers'] == 1 else 's'})", file=out)


def write_histograms(result: dict, path: str) -> str:
    """One histogram per numeric metric over the scored samples, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in result["samples"] if r["status"] == "ok"]
    names = sorted({k for r in rows for k, v in r["metrics"].items()
                    if isinstance(v, (int, float)) and not isinstance(v, bool)})
    fig, axes = plt.subplots(1, max(1, len(names)), figsize=(4 * max(1, len(names)), 3),
                             squeeze=False)
    for ax, name in zip(axes[0], names):
        values = [r["metrics"][name] for r in rows if r["metrics"].get(name) is not None]
        ax.hist(values, bins=20, color="#4477aa")
        ax.set_title(f"{name} (n={len(values)})")
    fig.suptitle(f"{result['suite']} / {result['task']}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
