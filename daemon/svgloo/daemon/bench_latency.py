"""Measure score latency through the daemon: cold start, warm, after a small edit, cache hit.

    python -m svgloo.daemon.bench_latency [FILE] [--repeat 3] [--json]

Starts a fresh daemon on a temporary socket with an empty temporary cache, then times
(wall clock, client side, one request at a time):

* cold: the first score call (process just started: backbone loaded and render workers
  started by this call);
* warm, full render: the same file at a render size not seen before (no cached layers);
* warm, one element edited: one colour changed, so only that element's layers re-render;
* cache hit: the same request again;
* in-process: ``svgloo score FILE --json`` as a fresh process, for comparison.

The default file is the ~50-unit corpus file noto/emoji_u1f6d5.svg (49 units).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_FILE = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "noto" / \
    "emoji_u1f6d5.svg"


def _edit_colour(text: str, i: int) -> str:
    """Change the first #rrggbb colour to a new value (a one-element edit)."""
    m = re.search(r"#[0-9a-fA-F]{6}", text)
    if not m:
        return text.replace("</svg>", f"<!-- {i} --></svg>")
    return text[:m.start()] + f"#{(i * 2654435761) % 0xFFFFFF:06x}" + text[m.end():]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m svgloo.daemon.bench_latency")
    ap.add_argument("file", nargs="?", default=str(DEFAULT_FILE))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--backbone", default="auto")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    from svgloo.daemon.client import DaemonClient, start_daemon
    from svgloo.engine.document import load_document
    from svgloo.engine.units import extract_units

    path = os.path.abspath(args.file)
    text = Path(path).read_text()
    n_units = len(extract_units(load_document(path)).units)
    base = Path(tempfile.mkdtemp(prefix="sglb", dir="/tmp"))
    sock = base / "d.sock"
    env = dict(os.environ, SVGLOO_CACHE_DIR=str(base / "cache"))
    old_env = os.environ.get("SVGLOO_CACHE_DIR")
    os.environ["SVGLOO_CACHE_DIR"] = str(base / "cache")
    client = DaemonClient(sock, autostart=False)
    settings = {"backbone": args.backbone}
    out: dict = {"file": path, "units": n_units}
    try:
        t0 = time.perf_counter()
        start_daemon(sock, env=env)
        out["daemon_start_s"] = time.perf_counter() - t0

        def timed(**kw):
            t = time.perf_counter()
            r = client.score(**kw)
            return time.perf_counter() - t, r

        out["cold_s"], r = timed(text=text, uri="file://" + path, settings=settings)
        assert not r["daemon"]["cached"]
        out["backbone"] = r["backbone"]
        full, edit, hit = [], [], []
        for i in range(args.repeat):
            dt, r = timed(text=text, uri="file://" + path,
                          settings={**settings, "size": 384 - 1 - i})
            assert not r["daemon"]["cached"]
            full.append(dt)
            dt, r = timed(text=_edit_colour(text, i + 1), uri="file://" + path, settings=settings)
            assert not r["daemon"]["cached"]
            edit.append(dt)
            dt, r = timed(text=text, uri="file://" + path, settings=settings)
            assert r["daemon"]["cached"]
            hit.append(dt)
        out["warm_full_render_s"] = statistics.median(full)
        out["warm_one_edit_s"] = statistics.median(edit)
        out["cache_hit_s"] = statistics.median(hit)
        st = client.status()
        out["cache"] = {k: st["cache"][k] for k in ("hits", "misses", "layer_entries")}
        client.shutdown()
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "svgloo", "score", path, "--json",
                        "--backbone", args.backbone], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        out["in_process_cli_s"] = time.perf_counter() - t
    finally:
        try:
            client.shutdown()
        except Exception:
            pass
        if old_env is None:
            os.environ.pop("SVGLOO_CACHE_DIR", None)
        else:
            os.environ["SVGLOO_CACHE_DIR"] = old_env
        time.sleep(0.5)
        shutil.rmtree(base, ignore_errors=True)

    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"{out['file']} ({out['units']} units, backbone {out['backbone']}, "
              f"median of {args.repeat})")
        print(f"  daemon start (process up, socket answers): {out['daemon_start_s'] * 1000:8.0f} ms")
        print(f"  cold score (first call after start):       {out['cold_s'] * 1000:8.0f} ms")
        print(f"  warm score, full render (new size):        "
              f"{out['warm_full_render_s'] * 1000:8.0f} ms")
        print(f"  warm score, one element edited:            "
              f"{out['warm_one_edit_s'] * 1000:8.0f} ms")
        print(f"  cache hit:                                 {out['cache_hit_s'] * 1000:8.1f} ms")
        print(f"  in-process `svgloo score` (new process):   "
              f"{out['in_process_cli_s'] * 1000:8.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
