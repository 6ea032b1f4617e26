"""Measure how long a small icon waits while the daemon analyses a big file (issue 37's
bar: <= 3 s beside 1,000 stacked rects).

    python -m svgloo.daemon.bench_fairness [--rects 1000] [--runs 5] [--icon FILE]
                                           [--concurrency N] [--give-up 120] [--json FILE]

Starts a fresh daemon on a temporary socket with an empty cache (``--concurrency`` sets
``SVGLOO_DAEMON_CONCURRENCY``; 1 analyses one document at a time, as the daemon did
before). Then, per run: one client sends ``--rects`` translucent stacked rects (pixel
backbone, default settings), the icon is sent from a second client once the big file has
been analysed for ``--head-start`` seconds, and the icon's answer time (wall clock, client
side) is recorded, with whether the big file was still being analysed then. The big file
is then closed (``/v1/close``), which stops its analysis. An icon not answered within
``--give-up`` seconds is recorded as such. Prints each run, the median and the worst, and
the machine's load before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

BAR_S = 3.0
DEFAULT_ICON = Path(__file__).resolve().parents[3] / "examples" / "billiards.svg"


def stacked_rects(n: int, seed: int = 37) -> str:
    """``n`` translucent rects piled on one another (the issue's 1,000-rect file)."""
    import random

    rng = random.Random(seed)
    rects = [f'<rect x="{rng.randint(0, 300)}" y="{rng.randint(0, 300)}" '
             f'width="{rng.randint(60, 100)}" height="{rng.randint(60, 100)}" '
             f'fill="#{rng.randint(0, 0xFFFFFF):06x}" fill-opacity="0.6"/>' for _ in range(n)]
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="400" height="400" '
            'viewBox="0 0 400 400">\n' + "\n".join(rects) + "\n</svg>\n")


def machine_load() -> str:
    try:
        return "load " + " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "load unknown"


def _unique(text: str) -> str:
    return text.replace("</svg>", f"<!-- {uuid.uuid4()} --></svg>")


def one_run(sock: Path, big_text: str, icon_text: str, head_start: float,
            give_up: float, run: int) -> dict:
    from svgloo.daemon.client import DaemonClient, DaemonError

    big_client = DaemonClient(sock, autostart=False)
    icon_client = DaemonClient(sock, autostart=False)
    big_uri = f"file:///tmp/bench-stacked-{run}.svg"
    big: dict = {}

    def analyse_big() -> None:
        try:
            big["result"] = big_client.score(text=_unique(big_text), uri=big_uri,
                                             settings={"backbone": "pixel"})
        except Exception as exc:  # noqa: BLE001 - said by the caller, waiting for it to start
            big["stopped"] = f"{type(exc).__name__}: {exc}"

    thread = threading.Thread(target=analyse_big, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not any(r.get("uri") == big_uri for r in big_client.status().get("running_jobs")
                  or [big_client.status().get("running") or {}]):
        if "stopped" in big or "result" in big:
            raise SystemExit(f"the big file's analysis ended at once: {big}")
        if time.monotonic() > deadline:
            raise SystemExit("the big file's analysis did not start within 60 s")
        time.sleep(0.05)
    time.sleep(head_start)
    icon: dict = {}

    def analyse_icon() -> None:
        t0 = time.monotonic()
        icon["result"] = icon_client.score(text=_unique(icon_text), uri="file:///tmp/icon.svg",
                                           settings={"backbone": "pixel"})
        icon["s"] = time.monotonic() - t0

    icon_thread = threading.Thread(target=analyse_icon, daemon=True)
    icon_thread.start()
    icon_thread.join(timeout=give_up)
    big_running = thread.is_alive()
    closed_at = time.monotonic()
    try:
        big_client.close_document(big_uri)
    except DaemonError:
        pass  # a daemon without /v1/close: the big file runs to its end
    icon_thread.join()
    thread.join()
    # The next run starts once the big file's analysis has really stopped (a stage that
    # does not look at the cancellation runs on until its end): runs do not overlap.
    while any(r.get("uri") == big_uri for r in big_client.status().get("running_jobs", [])):
        time.sleep(0.2)
    return {"icon_s": icon.get("s"), "answered": "s" in icon and icon["s"] <= give_up,
            "big_still_running": big_running,
            "big_stopped_s": round(time.monotonic() - closed_at, 2)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m svgloo.daemon.bench_fairness",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--rects", type=int, default=1000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--icon", default=str(DEFAULT_ICON))
    p.add_argument("--concurrency", type=int,
                   help="documents analysed at once (default: the daemon's own)")
    p.add_argument("--head-start", type=float, default=3.0,
                   help="seconds the big file is analysed before the icon is sent")
    p.add_argument("--give-up", type=float, default=120.0)
    p.add_argument("--json")
    args = p.parse_args(argv)
    big_text, icon_text = stacked_rects(args.rects), Path(args.icon).read_text()
    base = Path(tempfile.mkdtemp(prefix="sglbf", dir="/tmp"))
    sock = base / "run" / "d.sock"
    sock.parent.mkdir(mode=0o700)
    env = dict(os.environ, SVGLOO_CACHE_DIR=str(base / "cache"))
    if args.concurrency:
        env["SVGLOO_DAEMON_CONCURRENCY"] = str(args.concurrency)
    log = open(base / "daemon.log", "ab")
    proc = subprocess.Popen([sys.executable, "-m", "svgloo", "daemon", "start", "--foreground",
                             "--socket", str(sock)], env=env, stdout=log, stderr=log,
                            stdin=subprocess.DEVNULL)
    load_before = machine_load()
    rows = []
    try:
        from svgloo.daemon.client import DaemonClient
        from svgloo.daemon.server import socket_answers

        while not socket_answers(sock):
            if proc.poll() is not None:
                raise SystemExit("the daemon did not start: " + (base / "daemon.log")
                                 .read_text()[-2000:])
            time.sleep(0.05)
        warm = DaemonClient(sock, autostart=False)
        warm.score(text=_unique(icon_text), settings={"backbone": "pixel"})  # workers up
        concurrency = warm.status().get("concurrency", 1)
        for run in range(args.runs):
            row = one_run(sock, big_text, icon_text, args.head_start, args.give_up, run)
            row["load"] = machine_load()
            rows.append(row)
            answered = f"{row['icon_s']:.2f} s" if row["answered"] else \
                f"not within {args.give_up:g} s"
            print(f"run {run + 1}: icon answered in {answered}; big file still analysed "
                  f"then: {row['big_still_running']}; its analysis stopped "
                  f"{row['big_stopped_s']:.1f} s after it was closed; {row['load']}",
                  flush=True)
    except BaseException:
        print("daemon log:\n" + (base / "daemon.log").read_text(errors="replace")[-3000:],
              file=sys.stderr)
        raise
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        shutil.rmtree(base, ignore_errors=True)
    times = [r["icon_s"] if r["answered"] else float("inf") for r in rows]
    print(f"icon beside {args.rects} stacked rects, {concurrency} document(s) at once: median "
          f"{statistics.median(times):.2f} s, worst {max(times):.2f} s over {len(rows)} runs "
          f"(bar {BAR_S:g} s); {load_before} before, {machine_load()} after")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "concurrency": concurrency},
                                              indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
