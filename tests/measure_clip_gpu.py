"""One-shot GPU measurement of svgloo's CLIP backbone (and a smoke test of the other torch
plugins on the GPU), written for a lent machine with no internet and a strict time budget.

    python tests/measure_clip_gpu.py --out DIR [--gpu cuda] [--corpus DIR] [--limit 12]
        [--budget 240] [--stages bench_gpu,bench_gpu_seq,micro_gpu,bench_cpu,bench_cpu_seq,
                            micro_cpu,smoke,bench_gpu_w16]

tests/measure_clip_gpu.sh runs it on a bare machine (carried wheels, carried libcairo);
its results are in docs/measurements/: clip-gpu-h200.json (before the preprocessing
thread pool, without the *_seq stages) and clip-gpu-h200-preprocess-threads.json (README,
Backbones).

Stages, each timed, each guarded (an exception is recorded with its traceback and the next
stage runs), the JSON rewritten after each (so a run stopped at its limit still leaves
what it measured):

1. weights: a ViT-B-32 built by open_clip with random weights (torch.manual_seed(0),
   pretrained=None), its state_dict saved to /tmp: the machine cannot download the
   trained weights; throughput depends on the architecture, not on the weights.
2. bench_gpu / bench_cpu: svgloo.validation.bench_clip's own run_precision (the way
   `svgloo score --backbone clip` scores: fast leave-one-out at 384 px, the file's own
   reference) on the files bench_clip.select_files picks (12 files of 20-99 units), per
   precision (fp32, bf16), the model loaded once per precision; per-unit deltas and
   verdicts are kept so devices can be compared (bench_clip compares precisions only).
   On CUDA the backbone's default (preprocess="auto") resizes and normalises on the
   device; bench_gpu_host is the same with the host path (open_clip's PIL transform on
   threads), whose deltas differ from the device's within the input's one 8-bit level.
   Each run prints where its time goes (bench_clip.where_the_time_goes: renders,
   composites, preprocessing and encoder, ...).
   bench_gpu_seq / bench_cpu_seq: the host path with one preprocessing thread (the
   backbone's code before its thread pool), so the run compares the two on its own
   machine; the deltas must be the same bit for bit ("identical_deltas" in the
   comparisons of */host and */seq).
3. micro_gpu / micro_cpu: the image tower alone on random (B, 3, 224, 224) tensors per
   batch size and dtype (CUDA synchronised), and the backbone's host-side preprocessing
   (PIL resize + normalise of 384 px renders, then the copy to the device): one thread
   against the thread pool per thread count, interleaved ("pixels"), with a bit-for-bit
   check of the model's input and the embeddings; "device_pixels": the same 128 images
   made on the device against the host path (the upload and the device's steps timed
   apart), the inputs' largest difference in 8-bit levels and the embeddings'.
4. smoke: the CLIPSeg grounder and the VLM concept source on the GPU with the tiny random
   models the tests build (tests/plugins/tiny_models.py), against the CPU where the
   numbers must agree; the CLIP backbone's text reference in bf16 on the GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
T0 = time.perf_counter()
RESULT: dict = {"stages": {}, "errors": {}}
OUT: Path = Path(".")
BUDGET = 240.0


def left() -> float:
    return BUDGET - (time.perf_counter() - T0)


def save() -> None:
    RESULT["elapsed_s"] = round(time.perf_counter() - T0, 2)
    (OUT / "clip_gpu_bench.json").write_text(json.dumps(RESULT, indent=1))


def stage(name: str, need_s: float):
    """Decorator-ish runner: run fn if at least need_s seconds are left."""
    def wrap(fn):
        def run(*a, **kw):
            if left() < need_s:
                RESULT["stages"][name] = {"skipped": f"{left():.0f} s left, needs {need_s:.0f}"}
                print(f"== {name}: skipped ({left():.0f} s left)", flush=True)
                save()
                return None
            print(f"== {name} ({left():.0f} s left)", flush=True)
            t = time.perf_counter()
            try:
                out = fn(*a, **kw)
                RESULT["stages"][name] = {"seconds": round(time.perf_counter() - t, 2),
                                          **(out or {})}
            except Exception:  # noqa: BLE001 - a failing stage is recorded and the run goes on
                tb = traceback.format_exc()
                print(tb, flush=True)
                RESULT["errors"][name] = tb
                RESULT["stages"][name] = {"failed": tb.strip().splitlines()[-1]}
                out = None
            save()
            return out
        return run
    return wrap


def env_info(gpu: str) -> dict:
    import torch

    info = {"python": sys.version.split()[0], "platform": platform.platform(),
            "torch": torch.__version__, "torch_cuda": torch.version.cuda,
            "cuda_available": torch.cuda.is_available(), "cpu_count": os.cpu_count(),
            "torch_threads": torch.get_num_threads()}
    for mod in ("open_clip", "transformers", "cairosvg", "PIL", "numpy"):
        try:
            info[mod] = __import__(mod).__version__
        except Exception as e:  # noqa: BLE001 - recorded, not fatal here
            info[mod] = f"unavailable: {e}"
    if gpu.startswith("cuda") and torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        info["gpu"] = {"name": p.name, "memory_gib": round(p.total_memory / 2**30, 1),
                       "multiprocessors": p.multi_processor_count}
    try:
        info["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
             "--format=csv,noheader"], check=False, capture_output=True, text=True,
            timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        info["nvidia_smi"] = f"unavailable: {e}"
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu_model"] = next(line.split(":", 1)[1].strip()
                                     for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        info["cpu_model"] = None
    from svgloo.plugins.torch_util import pick_device

    info["pick_device_default"] = pick_device(None)
    return info


def make_weights(path: Path) -> dict:
    import open_clip
    import torch

    torch.manual_seed(0)
    model = open_clip.create_model("ViT-B-32", pretrained=None)
    torch.save(model.state_dict(), path)
    n = sum(p.numel() for p in model.parameters())
    checksum = float(sum(p.detach().double().sum() for p in model.parameters()))
    return {"path": str(path), "parameters": n, "parameter_sum": checksum,
            "bytes": path.stat().st_size}


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def bench(files, weights: Path, device: str, precisions: list[str], pool,
          tag: str = "", preprocess_threads: int | None = None,
          preprocess: str = "auto") -> dict:
    import torch
    from svgloo.plugins.clip_backbone import ClipBackbone
    from svgloo.validation.bench_clip import run_precision, where_the_time_goes

    rows = {}
    for pr in precisions:
        t = time.perf_counter()
        bb = ClipBackbone(device=device, weights=str(weights), model_name="ViT-B-32",
                          precision=pr, preprocess_threads=preprocess_threads,
                          preprocess=preprocess)
        load_s = time.perf_counter() - t
        if device.startswith("cuda"):
            torch.cuda.reset_peak_memory_stats()
        t = time.perf_counter()
        row = run_precision(files, bb, pr, pool)
        row["seconds_incl_warmup"] = round(time.perf_counter() - t, 2)
        row["load_s"] = round(load_s, 2)
        row["batch_size"] = bb.batch_size
        row["description"] = bb.description
        if device.startswith("cuda"):
            row["peak_gpu_memory_mib"] = round(torch.cuda.max_memory_allocated() / 2**20)
        row["deltas"] = [float(x) for x in row["deltas"]]
        row["verdicts"] = [str(x) for x in row["verdicts"]]
        row["render_workers"] = pool.workers
        row["preprocess_threads"] = bb.preprocess_threads
        key = f"{device}/{pr}{tag}"
        rows[key] = row
        RESULT.setdefault("runs", {})[key] = row
        print(f"  {key}: {row['units']} units, LOO {row['units_per_s']:.1f} img/s, "
              f"encoder {row['encoder_images_per_s']:.1f} img/s ({bb.description})\n"
              f"    {where_the_time_goes(row)}", flush=True)
        save()
        del bb
        if device.startswith("cuda"):
            torch.cuda.empty_cache()
    return {"runs": list(rows)}


def compare(a: str, b: str) -> dict | None:
    runs = RESULT.get("runs", {})
    if a not in runs or b not in runs:
        return None
    da, db = np.array(runs[a]["deltas"]), np.array(runs[b]["deltas"])
    va, vb = np.array(runs[a]["verdicts"]), np.array(runs[b]["verdicts"])
    if len(da) != len(db):
        return {"error": f"unit counts differ: {len(da)} vs {len(db)}"}
    return {"units": len(da),
            "delta_correlation": float(np.corrcoef(da, db)[0, 1]) if da.std() > 0 else None,
            "max_abs_delta_difference": float(np.abs(da - db).max()),
            "mean_abs_delta_difference": float(np.abs(da - db).mean()),
            "identical_deltas": bool(np.array_equal(da, db)),
            "verdict_agreement": float((va == vb).mean()),
            "verdicts_differing": int((va != vb).sum())}


def micro(weights: Path, device: str, batch_sizes: list[int], dtypes: list[str],
          min_time: float) -> dict:
    import torch
    from svgloo.plugins.clip_backbone import ClipBackbone

    out: dict = {"encoder": {}, "preprocess": {}}
    for dt in dtypes:
        # the host path here (on CUDA auto is the device's); device_pixels compares them
        bb = ClipBackbone(device=device, weights=str(weights), model_name="ViT-B-32",
                          precision=dt, preprocess="host")
        dtype = torch.bfloat16 if dt == "bf16" else torch.float32
        for bs in batch_sizes:
            x = torch.randn(bs, 3, 224, 224, generator=torch.Generator().manual_seed(1))
            x = x.to(device, dtype)
            with torch.inference_mode():
                for _ in range(2):
                    bb.model.encode_image(x)
                _sync(device)
                n, t = 0, time.perf_counter()
                while True:
                    bb.model.encode_image(x)
                    n += 1
                    _sync(device)
                    if time.perf_counter() - t >= min_time:
                        break
                el = time.perf_counter() - t
            out["encoder"][f"{dt}/b{bs}"] = {"images_per_s": round(bs * n / el, 1),
                                             "ms_per_batch": round(1000 * el / n, 3)}
            print(f"  encoder {device} {dt} batch {bs}: {bs * n / el:.1f} img/s", flush=True)
        if dt == dtypes[0]:
            rng = np.random.default_rng(0)
            imgs = [rng.integers(0, 256, (384, 384, 3), dtype=np.uint8) for _ in range(128)]
            from PIL import Image

            t = time.perf_counter()
            cpu_batch = torch.stack([bb.preprocess(Image.fromarray(im, "RGB")) for im in imgs])
            pre = time.perf_counter() - t
            t = time.perf_counter()
            cpu_batch.to(device, dtype)
            _sync(device)
            copy = time.perf_counter() - t
            t = time.perf_counter()
            bb.embed_images(imgs)
            _sync(device)
            whole = time.perf_counter() - t
            out["preprocess"] = {"images": len(imgs), "size": 384,
                                 "preprocess_images_per_s": round(len(imgs) / pre, 1),
                                 "copy_to_device_ms": round(1000 * copy, 2),
                                 "embed_images_per_s_incl_preprocess":
                                     round(len(imgs) / whole, 1)}
            print(f"  preprocess {out['preprocess']}", flush=True)
        out.setdefault("pixels", {})[dt] = pixels(bb, device, imgs)
        out.setdefault("device_pixels", {})[dt] = device_pixels(bb, weights, device, dt, imgs)
        del bb
    return out


def _threads(bb, n: int):
    """The backbone with ``n`` preprocessing threads (a fresh pool)."""
    bb.preprocess_threads, bb._pool = n, None
    return bb


def pixels(bb, device: str, imgs: list, reps: int = 3) -> dict:
    """The backbone's whole host-side step (ClipBackbone._pixels: preprocessing, the batch,
    the copy to the device, synchronised) one image after the other (1 thread, the code
    before the thread pool) against the thread pool, interleaved, median of ``reps``; and
    whether the model's input and the embeddings are the same bit for bit."""
    import torch

    default = bb.preprocess_threads
    counts = sorted({1, 2, 4, default, 16})
    times: dict[int, list[float]] = {n: [] for n in counts}
    with torch.inference_mode():
        for _ in range(reps):
            for n in counts:
                _threads(bb, n)
                t = time.perf_counter()
                bb._pixels(imgs)
                _sync(device)
                times[n].append(time.perf_counter() - t)
        want = _threads(bb, 1)._pixels(imgs)
        got = _threads(bb, default)._pixels(imgs)
        same_input = bool(torch.equal(want, got))
    emb_seq = _threads(bb, 1).embed_images(imgs)
    t = time.perf_counter()
    emb_seq = _threads(bb, 1).embed_images(imgs)
    seq_s = time.perf_counter() - t
    _threads(bb, default).embed_images(imgs)
    t = time.perf_counter()
    emb_par = bb.embed_images(imgs)
    par_s = time.perf_counter() - t
    res = {"images": len(imgs), "default_threads": default,
           "images_per_s_by_threads": {str(n): round(len(imgs) / float(np.median(v)), 1)
                                       for n, v in times.items()},
           "input_bit_identical": same_input,
           "embeddings_bit_identical": bool(np.array_equal(emb_seq, emb_par)),
           "embed_images_per_s_seq": round(len(imgs) / seq_s, 1),
           "embed_images_per_s_threaded": round(len(imgs) / par_s, 1)}
    print(f"  pixels {device} {res}", flush=True)
    return res


def device_pixels(host, weights: Path, device: str, precision: str, imgs: list,
                  reps: int = 3) -> dict:
    """The model's input made on the device (preprocess="device") against the host path
    (``host``, its default threads), interleaved, synchronised, median of ``reps``: the
    whole ``_pixels``, and the device path split into the uint8 upload and the resize and
    normalisation there; then the embeddings of the batch each way, and how far apart the
    two inputs are (in 8-bit levels) and the embeddings."""
    import torch
    from svgloo.plugins.clip_backbone import ClipBackbone

    dev = ClipBackbone(device=device, weights=str(weights), model_name="ViT-B-32",
                       precision=precision, preprocess="device")
    _threads(host, host.preprocess_threads)
    assert host.preprocess_on == "host", host.description
    rows = [np.ascontiguousarray(im[..., :3]) for im in imgs]

    def timed(fn) -> float:
        t = time.perf_counter()
        fn()
        _sync(device)
        return time.perf_counter() - t

    times: dict[str, list[float]] = {"host": [], "device": [], "upload": [], "steps": []}
    with torch.inference_mode():
        for _ in range(reps + 1):  # the first round warms both up and is dropped
            for name, fn in (("host", lambda: host._pixels(imgs)),
                             ("device", lambda: dev._pixels(imgs))):
                times[name].append(timed(fn))
            up = dev._upload(rows)
            _sync(device)
            times["upload"].append(timed(lambda: dev._upload(rows)))
            times["steps"].append(timed(lambda up=up: dev._device_steps(up, dev._dtype)))
        want, got = host._pixels(imgs).float(), dev._pixels(imgs).float()
        std = torch.tensor(dev._device_steps.std, device=want.device).view(1, 3, 1, 1)
        levels = ((want - got).abs() * std * 255).round()
    embed = {name: timed(lambda b=b: b.embed_images(imgs)) for name, b in
             (("host", host), ("device", dev), ("host_again", host), ("device_again", dev))}
    diff = np.abs(host.embed_images(imgs) - dev.embed_images(imgs)).max()
    med = {k: float(np.median(v[1:])) for k, v in times.items()}
    res = {"images": len(imgs), "description": dev.description,
           "pixels_images_per_s": {k: round(len(imgs) / v, 1) for k, v in med.items()},
           "pixels_ms": {k: round(1000 * v, 2) for k, v in med.items()},
           "embed_images_per_s": {k: round(len(imgs) / v, 1) for k, v in embed.items()},
           "input_max_levels_off": float(levels.max()),
           "input_share_off": float((levels > 0).float().mean()),
           "embedding_max_abs_difference": float(diff)}
    print(f"  device pixels {device} {precision}: {res}", flush=True)
    return res


def smoke(gpu: str, repo_tests: Path, weights: Path) -> dict:
    import torch

    sys.path.insert(0, str(repo_tests / "plugins"))
    from svgloo.engine.protocols import Concept, Reference
    from svgloo.plugins.clip_backbone import ClipBackbone
    from svgloo.plugins.clipseg_grounder import ClipSegGrounder
    from svgloo.plugins.vlm_concepts import VlmConceptSource
    from tiny_models import tiny_clipseg_dir, tiny_qwen2vl_dir

    res: dict = {}
    tmp = Path(tempfile.mkdtemp())
    rgb = np.full((40, 70, 3), 255, np.uint8)
    rgb[5:30, 10:40] = (200, 30, 30)
    rgb[20:38, 45:65] = (20, 20, 180)
    concepts = [Concept("red square", "vlm"), Concept("blue box", "labels", elements=(1,))]

    def guarded(name, fn):
        try:
            res[name] = fn()
        except Exception:  # noqa: BLE001 - a failing stage is recorded and the run goes on
            tb = traceback.format_exc()
            print(tb, flush=True)
            res[name] = {"failed": tb.strip().splitlines()[-1]}
            RESULT["errors"][f"smoke/{name}"] = tb

    def clipseg():
        d = tiny_clipseg_dir(tmp)
        g = ClipSegGrounder(device=gpu, model_id=str(d))
        c = ClipSegGrounder(device="cpu", model_id=str(d))
        hg, hc = g.heatmaps(None, rgb, concepts, {}), c.heatmaps(None, rgb, concepts, {})
        return {"device": g.description, "shape": list(hg.shape), "dtype": str(hg.dtype),
                "max_abs_diff_vs_cpu": float(np.abs(hg - hc).max()),
                "model_param_device": str(next(g.model.parameters()).device)}

    def vlm():
        d = tiny_qwen2vl_dir(tmp)
        s = VlmConceptSource(device=gpu, model_id=str(d), max_new_tokens=8)
        answer = s.ask(rgb, {})
        cs = s.concepts(None, rgb, {})
        return {"device": s.description, "answer_chars": len(answer),
                "concepts": [c.name for c in cs],
                "model_dtype": str(next(s.model.parameters()).dtype)}

    def clip_text_bf16():
        out = {}
        for pr in ("fp32", "bf16"):
            bb = ClipBackbone(device=gpu, weights=str(weights), model_name="ViT-B-32",
                              precision=pr)
            ref = bb.prepare(Reference(kind="text", text="a red square", source="smoke"))
            sims = bb.similarity(np.stack([rgb[:, :40], rgb[:, 30:]]), ref)
            out[pr] = {"ref_norm": float(np.linalg.norm(ref)), "sims": [float(s) for s in sims]}
            del bb
        out["max_abs_sim_diff_bf16_vs_fp32"] = float(np.abs(
            np.array(out["bf16"]["sims"]) - np.array(out["fp32"]["sims"])).max())
        return out

    guarded("clipseg", clipseg)
    guarded("vlm", vlm)
    guarded("clip_text_reference", clip_text_bf16)
    if gpu.startswith("cuda"):
        res["peak_gpu_memory_mib"] = round(torch.cuda.max_memory_allocated() / 2**20)
    return res


def main() -> int:
    global OUT, BUDGET
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--gpu", default="cuda", help="the accelerator's torch device")
    p.add_argument("--corpus", default=str(REPO.parent / "shared" / "corpus"))
    p.add_argument("--repo", default=str(REPO), help="repository root (for tests/plugins)")
    p.add_argument("--limit", type=int, default=12)
    p.add_argument("--budget", type=float, default=240.0)
    p.add_argument("--micro-time", type=float, default=0.5)
    p.add_argument("--stages",
                   default="bench_gpu,bench_gpu_host,micro_gpu,bench_gpu_seq,bench_cpu,"
                           "bench_cpu_seq,micro_cpu,smoke,bench_gpu_w16")
    args = p.parse_args()
    OUT, BUDGET = Path(args.out), args.budget
    OUT.mkdir(parents=True, exist_ok=True)
    stages = args.stages.split(",")
    gpu = args.gpu

    RESULT["env"] = stage("env", 0)(env_info)(gpu)
    print(json.dumps(RESULT["stages"].get("env"), indent=1), flush=True)
    RESULT["env"] = RESULT["stages"].pop("env")
    weights = Path(tempfile.gettempdir()) / "svgloo-vit-b-32-random-seed0.pt"
    stage("weights", 0)(make_weights)(weights)

    from svgloo.engine.processes.workers import RenderPool
    from svgloo.validation.bench_clip import select_files

    files = select_files(Path(args.corpus), args.limit, 20, 99)
    RESULT["files"] = [str(f.relative_to(args.corpus)) for f in files]
    print(f"{len(files)} files", flush=True)
    pool = RenderPool()
    RESULT["render_workers"] = pool.workers
    try:
        if "bench_gpu" in stages:
            stage("bench_gpu", 30)(bench)(files, weights, gpu, ["fp32", "bf16"], pool)
        if "bench_gpu_host" in stages:  # bench_gpu preprocesses on the device (auto on CUDA)
            stage("bench_gpu_host", 30)(bench)(files, weights, gpu, ["fp32", "bf16"], pool,
                                               "/host", None, "host")
        if "micro_gpu" in stages:
            stage("micro_gpu", 25)(micro)(weights, gpu, [1, 32, 128, 256, 512],
                                          ["fp32", "bf16"], args.micro_time)
        if "bench_gpu_seq" in stages:  # the host path with 1 preprocessing thread
            stage("bench_gpu_seq", 30)(bench)(files, weights, gpu, ["fp32", "bf16"], pool,
                                              "/seq", 1, "host")
        if "bench_cpu" in stages:
            stage("bench_cpu", 45)(bench)(files, weights, "cpu", ["fp32", "bf16"], pool)
        if "bench_cpu_seq" in stages:
            stage("bench_cpu_seq", 45)(bench)(files, weights, "cpu", ["fp32", "bf16"], pool,
                                              "/seq", 1)
        if "micro_cpu" in stages:
            stage("micro_cpu", 20)(micro)(weights, "cpu", [32, 128], ["fp32", "bf16"],
                                          args.micro_time)
        if "smoke" in stages:
            stage("smoke", 20)(smoke)(gpu, Path(args.repo) / "tests", weights)
    finally:
        pool.close()
    if "bench_gpu_w16" in stages:  # the same, with 16 render workers instead of the default
        pool = RenderPool(workers=16)
        try:
            stage("bench_gpu_w16", 30)(bench)(files, weights, gpu, ["fp32"], pool, "/w16")
        finally:
            pool.close()
    RESULT["comparisons"] = {
        f"{a} vs {b}": compare(a, b) for a, b in [
            (f"{gpu}/fp32", "cpu/fp32"), (f"{gpu}/bf16", f"{gpu}/fp32"),
            ("cpu/bf16", "cpu/fp32"), (f"{gpu}/bf16", "cpu/bf16"),
            (f"{gpu}/fp32", f"{gpu}/fp32/host"), (f"{gpu}/bf16", f"{gpu}/bf16/host"),
            (f"{gpu}/fp32/host", f"{gpu}/fp32/seq"), (f"{gpu}/bf16/host", f"{gpu}/bf16/seq"),
            ("cpu/fp32", "cpu/fp32/seq"), ("cpu/bf16", "cpu/bf16/seq"),
            (f"{gpu}/fp32/w16", f"{gpu}/fp32")]}
    d = np.abs(np.array(RESULT.get("runs", {}).get("cpu/fp32", RESULT.get("runs", {}).get(
        f"{gpu}/fp32", {"deltas": [0.0]}))["deltas"]))
    RESULT["fp32_abs_delta_quantiles"] = {q: float(np.quantile(d, float(q)))
                                          for q in ("0.5", "0.9", "0.99", "1.0")}
    save()
    print(json.dumps(RESULT["comparisons"], indent=1))
    print(json.dumps({k: {kk: vv for kk, vv in v.items() if kk not in ("deltas", "verdicts")}
                      for k, v in RESULT.get("runs", {}).items()}, indent=1))
    print("errors:", list(RESULT["errors"]))
    print(f"done in {time.perf_counter() - T0:.1f} s")
    return 1 if RESULT["errors"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
