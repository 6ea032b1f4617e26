"""``svgloo structure FILE``: which element serves which concept, and the structure metrics."""

from __future__ import annotations

import json
import sys

from svgloo.engine.settings import DEFAULT_RENDER_SIZE

from svgloo.engine.limits import DEFAULT_LIMITS


def register(sub) -> None:
    p = sub.add_parser(
        "structure", help="concepts, element-concept attribution and structure metrics",
        description="Attribute every element's leave-one-out footprint to the picture's "
                    "visual concepts and report purity, coverage, compactness, locality "
                    "and crosstalk: how editable the file's structure is.")
    p.add_argument("file", help="SVG file (.svg or .svgz)")
    p.add_argument("--concept", action="append", default=[], metavar="TEXT",
                   help="a concept of the picture (repeat for several); implies the author "
                        "source under --concepts auto")
    p.add_argument("--concepts", dest="concept_source", default="auto",
                   choices=["auto", "author", "labels", "regions", "vlm"],
                   help="concept source (default auto: author if given or in svgloo.toml, "
                        "else the file's own labels if it names two or more, else a local "
                        "VLM if its weights are present, else colour regions)")
    p.add_argument("--grounder", default="auto",
                   choices=["auto", "labels", "regions", "clipseg", "masks"],
                   help="where each concept is (default auto: labels/regions ground "
                        "themselves; author/vlm concepts use --masks when given (a mask "
                        "with a score in scores.json must pass score > 0.3 and area "
                        "0.005-0.95, else CLIPSeg grounds it), else CLIPSeg if its weights "
                        "are present); --grounder masks with no --concept takes the "
                        "concepts from the mask file names")
    p.add_argument("--masks", dest="masks_dir", metavar="DIR",
                   help="one grayscale PNG per concept, named by the concept's slug "
                        "(red-flower-head.png)")
    p.add_argument("--definitions", choices=["paper", "packed", "lica"], default="paper",
                   help="metric definitions: the paper's equations read literally "
                        "(default), packed (locality 1 for any contiguous group), or the "
                        "published lica-bench svg_loo code's")
    p.add_argument("--subpaths", action="store_true",
                   help="split compound paths into subpath units (default: whole elements, "
                        "as editors edit them)")
    p.add_argument("--method", choices=["fast", "naive"], default="fast",
                   help="leave-one-out method (default fast)")
    p.add_argument("--size", type=int, default=DEFAULT_RENDER_SIZE,
                   help=f"render size in pixels (default {DEFAULT_RENDER_SIZE})")
    p.add_argument("--device", help="torch device for model plugins (vlm, clipseg)")
    p.add_argument("--json", action="store_true",
                   help="print the svgloo.structure/1 JSON object")
    p.add_argument("--plots", metavar="DIR",
                   help="write the attribution matrix, concept heatmaps and per-concept "
                        "footprint overlays as PNGs")
    p.set_defaults(func=run)


def settings_from_args(args):
    from svgloo.structure.analysis import StructureSettings

    return StructureSettings(concepts=tuple(args.concept), concept_source=args.concept_source,
                             grounder=args.grounder, masks_dir=args.masks_dir,
                             definitions=args.definitions, subpaths=args.subpaths,
                             size=args.size, method=args.method, limits=DEFAULT_LIMITS,
                             device=args.device)


def run(args) -> int:
    from svgloo.cli_score import progress_bar
    from svgloo.structure.analysis import structure_file

    settings = settings_from_args(args)
    bar = progress_bar(f"analysing {args.file}")
    try:
        run_ = structure_file(args.file, settings, progress=bar)
    finally:
        bar.close()
    if args.plots:
        from svgloo.structure.plots import write_structure_plots

        paths = write_structure_plots(run_, args.plots)
        print(f"wrote {len(paths)} images to {args.plots}", file=sys.stderr)
    if args.json:
        json.dump(run_.result, sys.stdout)
        sys.stdout.write("\n")
    else:
        print_report(run_.result)
    return 0


def _fmt(x) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def print_report(result: dict, out=None) -> None:
    from svgloo.cli_score import plural
    from svgloo.structure.analysis import METRIC_HELP
    from svgloo.structure.plots import display_name

    out = out or sys.stdout
    print(result["file"], file=out)
    concepts = result["concepts"]
    names = [display_name(c["name"]) for c in concepts]
    src = result.get("concept_source")
    grounder = result.get("grounder")
    print(f"  concepts: {src} source" + (f", {grounder} grounder" if grounder else "")
          + f"; {result.get('unit_kind', 'element')} units; {result['definitions']} "
            "definitions", file=out)
    for w in result.get("warnings", []):
        print(f"  warning: {w}", file=out)
    if not concepts:
        print("  no concepts found: nothing to attribute, so there are no metrics.", file=out)
        for note in result.get("notes", []):
            print(f"  note: {note}", file=out)
        return
    print(file=out)
    name_w = max(len(n) for n in names + ["concept"])
    per = {c["name"]: c for c in result["per_concept"]}
    print(f"  {'#':>2}  {'concept':<{name_w}}  {'drawn by units':<16} {'compact':>7} "
          f"{'local':>7} {'xtalk':>7}", file=out)
    low = []
    for j, c in enumerate(concepts):
        units = ", ".join(str(i) for i in c["units"]) or "none"
        if len(units) > 16:
            units = units[:15].rsplit(",", 1)[0] + ",…"
        pc = per.get(c["name"], {})
        if pc.get("compactness") is not None and pc["compactness"] < LOW_COMPACTNESS:
            low.append(j)
        print(f"  {j:>2}  {names[j]:<{name_w}}  {units:<16} {_fmt(pc.get('compactness')):>7} "
              f"{_fmt(pc.get('locality')):>7} {_fmt(pc.get('crosstalk')):>7}", file=out)
    print("  (units: those whose main concept it is; compact 1 = one unit draws it; local 1 = "
          "its units are adjacent in z-order; xtalk 0 = they touch no other concept)",
          file=out)
    if low:
        print(f"  low compactness (< {LOW_COMPACTNESS}) in concept "
              f"{', '.join(str(j) for j in low)}: drawn by several units of similar weight, so "
              "editing it means editing all of them", file=out)
    print(file=out)
    for key, value in result["metrics"].items():
        print(f"  {key:<12} {_fmt(value):>6}  {METRIC_HELP[key]}", file=out)
    for key, value in (result.get("lica_extra") or {}).items():
        print(f"  {key:<12} {value:>6.3f}  (lica)", file=out)
    print(file=out)
    rows = result["units"]
    label_w = max([len(_label(r)) for r in rows] + [7])
    at = [_at(r) for r in rows]
    at_w = max([len(a) for a in at] + [8])
    prims = []
    for r in rows:
        if r["active"]:
            prims.append(f"{r['primary']}: {names[r['primary']]}" if r["primary"] is not None
                         else "-")
        else:
            prims.append("(inactive)")
    prim_w = max(len(p) for p in prims + ["primary concept"])
    print(f"  {'unit':>4}  {'element':<{label_w}}  {'line:col':>{at_w}}  "
          f"{'primary concept':<{prim_w}}  {'purity':>6}", file=out)
    for r, a, prim in zip(rows, at, prims):
        pur = _fmt(r["purity"]) if r["active"] else ""
        print(f"  {r['index']:>4}  {_label(r):<{label_w}}  {a:>{at_w}}  {prim:<{prim_w}}  "
              f"{pur:>6}", file=out)
    inactive = sum(not r["active"] for r in rows)
    if inactive:
        print(f"  (inactive) = the unit's footprint falls on no concept (attribution below "
              f"0.01), so it has no main concept and no purity: {plural(inactive, 'unit')}",
              file=out)
    for note in result.get("notes", []):
        print(f"  note: {note}", file=out)


LOW_COMPACTNESS = 0.5


def _at(r: dict) -> str:
    """line:column, both 1-based (a one-line file's units differ only in the column)."""
    if r.get("character") is None:
        return str(r["line"] + 1)
    return f"{r['line'] + 1}:{r['character'] + 1}"


def _label(r: dict) -> str:
    label = r["tag"] + (f"#{r['id']}" if r.get("id") else "")
    if r.get("subpath") is not None:
        label += f" subpath {r['subpath']}"
    return label[:40]
