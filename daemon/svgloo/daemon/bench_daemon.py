"""Load benchmark of the daemon: N clients x M requests against one fresh daemon.

    python -m svgloo.daemon.bench_daemon [--clients 20] [--requests 20] [--files 10]
                                          [--corpus DIR] [--size 128] [--json]

Every client is a thread with its own ``DaemonClient`` (autostart on) released at the
same moment with no daemon running, as editors and batch jobs starting together would.
Each request scores one of ``--files`` corpus files (client and request number pick it,
so most files are asked for by several clients at once: repeats and merges). Two rounds:
the first starts cold (empty cache), the second asks for the same files again (cache hits).

A round 0 first: all clients ask for the status at once with no daemon running.
Printed: errors, p50/p95 latency of computed and of cached answers, the number of daemons
serving the socket before and after, and the resident memory of the daemon and of its
render workers (the daemon's process group) before the first score and after each round.
Last, a preemption probe: the largest of the files (fresh text, 1024 px, naive method) as
a batch job, and while it runs the smallest as an editor request: how long that waited.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path


def _stat_fields(pid: int) -> list[str] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def daemons_on(sock: Path) -> list[int]:
    """Live ``svgloo daemon start`` processes serving ``sock`` (Linux /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        fields = _stat_fields(int(entry.name))
        if fields and fields[0] != "Z" and b"daemon" in argv and b"start" in argv \
                and str(sock).encode() in argv:
            out.append(int(entry.name))
    return out


def memory(daemon_pid: int) -> dict:
    """RSS of the daemon and of the other processes in its group (fork server, workers)."""
    others = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != daemon_pid:
            fields = _stat_fields(int(entry.name))
            if fields and fields[0] != "Z" and int(fields[2]) == daemon_pid:
                others.append(int(entry.name))
    return {"daemon_mb": round(_rss_mb(daemon_pid), 1),
            "workers": len(others),
            "workers_mb": round(sum(_rss_mb(p) for p in others), 1)}


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def start_round(sock: Path, clients: int) -> dict:
    """All clients ask for the status at once with no daemon running: one must start."""
    from svgloo.daemon.client import DaemonClient

    errors: list[str] = []
    pids: set[int] = set()
    gate = threading.Barrier(clients)

    def client_thread() -> None:
        client = DaemonClient(sock)
        gate.wait()
        try:
            pids.add(client.status()["pid"])
        except Exception as exc:  # noqa: BLE001 - every failure is counted, whatever it is
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=client_thread) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"errors": len(errors), "daemon_pids_seen": len(pids),
            "error_samples": sorted(set(errors))[:5]}


def run_round(sock: Path, files: list[Path], clients: int, requests: int,
              settings: dict) -> dict:
    from svgloo.daemon.client import DaemonClient

    errors: list[str] = []
    cold: list[float] = []
    cached: list[float] = []
    lock = threading.Lock()
    gate = threading.Barrier(clients)

    def client_thread(n: int) -> None:
        client = DaemonClient(sock)
        gate.wait()
        for k in range(requests):
            path = files[(n + k * 3) % len(files)]
            t0 = time.perf_counter()
            try:
                r = client.score(path=str(path), settings=settings, priority="batch")
            except Exception as exc:  # noqa: BLE001 - every failure is counted, whatever it is
                with lock:
                    errors.append(f"{type(exc).__name__}: {exc}")
                continue
            dt = time.perf_counter() - t0
            with lock:
                (cached if r["daemon"]["cached"] else cold).append(dt)

    threads = [threading.Thread(target=client_thread, args=(n,)) for n in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0

    def ms(v):
        return None if v is None else round(v * 1000, 1)

    return {"requests": clients * requests, "errors": len(errors),
            "error_samples": sorted(set(errors))[:5], "wall_s": round(wall, 2),
            "computed_or_merged": len(cold), "cached": len(cached),
            "p50_cold_ms": ms(percentile(cold, 0.5)), "p95_cold_ms": ms(percentile(cold, 0.95)),
            "p50_cached_ms": ms(percentile(cached, 0.5)),
            "p95_cached_ms": ms(percentile(cached, 0.95))}


def preemption_probe(sock: Path, heavy: Path, light: Path, settings: dict) -> dict:
    """How long an editor's request waits when a batch job is already running: a heavy
    file (unique text, so never cached) as batch, then a light one as interactive."""
    from svgloo.daemon.client import DaemonClient

    client = DaemonClient(sock, autostart=False)
    heavy_text = heavy.read_text() + f"<!-- {time.time()} -->"
    batch: dict = {}

    def run_batch():
        batch["r"] = client.score(text=heavy_text, settings={**settings, "size": 1024,
                                                             "method": "naive"},
                                  priority="batch")

    t = threading.Thread(target=run_batch)
    t.start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (client.status().get("running") or {}):
        time.sleep(0.02)
    time.sleep(0.5)  # let the batch job get into its renders
    t0 = time.perf_counter()
    editor = client.score(text=light.read_text() + f"<!-- {time.time()} -->",
                          settings=settings, priority="interactive")
    waited = time.perf_counter() - t0
    t.join()
    return {"interactive_total_s": round(waited, 3),
            "interactive_queue_s": editor["daemon"]["queue_s"],
            "batch_elapsed_s": batch["r"]["daemon"]["elapsed_s"],
            "preempted": client.status()["jobs"]["preempted"]}


def corpus_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    here = Path(__file__).resolve()
    for folder in [Path.cwd(), *here.parents]:
        candidate = folder.parent / "shared" / "corpus"
        if candidate.is_dir():
            return candidate
    raise SystemExit("no corpus found: give --corpus DIR")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--requests", type=int, default=20)
    p.add_argument("--files", type=int, default=10)
    p.add_argument("--corpus", help="folder of */*.svg files (default: ../shared/corpus)")
    p.add_argument("--size", type=int, default=128)
    p.add_argument("--backbone", default="pixel")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)

    files = sorted(corpus_dir(args.corpus).glob("*/*.svg"))
    step = max(1, len(files) // args.files)
    files = files[::step][:args.files]
    settings = {"backbone": args.backbone, "size": args.size}
    base = Path(tempfile.mkdtemp(prefix="sglbench", dir="/tmp"))
    sock = base / "run" / "d.sock"
    os.environ["SVGLOO_CACHE_DIR"] = str(base / "cache")
    os.environ["SVGLOO_DAEMON_IDLE_EXIT"] = "600"
    report: dict = {"clients": args.clients, "requests_per_client": args.requests,
                    "files": [str(f) for f in files], "settings": settings,
                    "cpus": os.cpu_count(), "load_avg_before": os.getloadavg()}
    try:
        report["daemons_before"] = len(daemons_on(sock))
        from svgloo.daemon.client import DaemonClient

        report["round0_autostart"] = start_round(sock, args.clients)
        report["daemons_after_start"] = len(daemons_on(sock))
        pid = DaemonClient(sock, autostart=False).status()["pid"]
        report["memory_at_start"] = memory(pid)
        report["round1_cold"] = run_round(sock, files, args.clients, args.requests, settings)
        report["daemons_after_round1"] = len(daemons_on(sock))
        report["memory_after_round1"] = memory(pid)
        report["round2_cached"] = run_round(sock, files, args.clients, args.requests, settings)
        report["daemons_after"] = len(daemons_on(sock))
        report["memory_after_round2"] = memory(pid)
        heavy = max(files, key=lambda f: f.stat().st_size)
        light = min(files, key=lambda f: f.stat().st_size)
        report["preemption"] = preemption_probe(sock, heavy, light, settings)
        st = DaemonClient(sock, autostart=False).status()
        report["daemon_jobs"] = st["jobs"]
        report["daemon_cache"] = {k: st["cache"][k] for k in ("hits", "misses")}
        report["load_avg_after"] = os.getloadavg()
        DaemonClient(sock, autostart=False).shutdown()
        deadline = time.monotonic() + 60
        while daemons_on(sock) and time.monotonic() < deadline:
            time.sleep(0.1)
        report["daemons_after_shutdown"] = len(daemons_on(sock))
    finally:
        for pid in daemons_on(sock):
            os.kill(pid, 9)
        shutil.rmtree(base, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{args.clients} clients x {args.requests} requests, {len(files)} files, "
              f"{settings}, {os.cpu_count()} CPUs, load {report['load_avg_before'][0]:.1f}")
        r0 = report["round0_autostart"]
        print(f"autostart: {args.clients} clients at once with no daemon: {r0['errors']} "
              f"errors, {r0['daemon_pids_seen']} daemon pid(s) answered")
        print(f"daemons: before {report['daemons_before']}, after start "
              f"{report['daemons_after_start']}, after round 1 "
              f"{report['daemons_after_round1']}, after round 2 {report['daemons_after']}, "
              f"after shutdown {report['daemons_after_shutdown']}")
        for name in ("round1_cold", "round2_cached"):
            r = report[name]
            print(f"{name}: {r['errors']} errors of {r['requests']} in {r['wall_s']} s; "
                  f"computed/merged {r['computed_or_merged']} p50 {r['p50_cold_ms']} ms p95 "
                  f"{r['p95_cold_ms']} ms; cached {r['cached']} p50 {r['p50_cached_ms']} ms "
                  f"p95 {r['p95_cached_ms']} ms")
            for e in r["error_samples"]:
                print(f"  error: {e}")
        for name in ("memory_at_start", "memory_after_round1", "memory_after_round2"):
            m = report[name]
            print(f"{name}: daemon {m['daemon_mb']} MB, {m['workers']} worker processes "
                  f"{m['workers_mb']} MB")
        pre = report["preemption"]
        print(f"editor request during a batch job: waited {pre['interactive_queue_s']} s in "
              f"the queue, answered in {pre['interactive_total_s']} s (the batch job took "
              f"{pre['batch_elapsed_s']} s; preempted {pre['preempted']} time(s))")
        print(f"daemon jobs: {report['daemon_jobs']}")
    ok = (report["round0_autostart"]["errors"] == report["round1_cold"]["errors"]
          == report["round2_cached"]["errors"] == 0 and report["daemons_after"] == 1)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
