"""Benchmark of sweeps on Dask (not a test): 1 vs 2 local worker processes on the ≥ 50M-row spec, a ≥ 200M-row
sweep (wall time, dataset size on disk, peak RSS per worker), and a fit-region and a Pareto query over the dataset
with DuckDB reading it in place (core.db.open_dataset).

    python bench/bench_dask.py --write     # replace the "## Sweeps on Dask" section of bench/RESULTS.md
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _usage():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return {"cpu_s": r.ru_utime + r.ru_stime, "maxrss_mb": r.ru_maxrss / 1024}


def _du(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e9


def run(spec_file: str, workers: int, out: Path) -> dict:
    from distributed import Client, LocalCluster

    from core import distributed as D
    from core.spec import SweepSpec
    spec = SweepSpec.from_json((ROOT / spec_file).read_text())
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=":0")
    client = Client(cluster)
    try:
        before = client.run(_usage)
        t0 = time.perf_counter()
        m = D.run(spec, out, client)
        wall = time.perf_counter() - t0
        after = client.run(_usage)
    finally:
        client.close()
        cluster.close()
    cpu = sum(after[w]["cpu_s"] - before[w]["cpu_s"] for w in after if w in before)
    return {"rows": m["rows"], "tasks": m["tasks"], "wall_s": wall, "worker_cpu_s": cpu,
            "peak_rss_mb": max(a["maxrss_mb"] for a in after.values()), "gb_on_disk": _du(out)}


def queries(path: Path) -> dict:
    from core import db
    con = db.connect(threads=2, memory_limit="4GB", temp_directory=db.private_temp_directory(),
                     allowed_directories=(path,))
    t0 = time.perf_counter()
    name = db.open_dataset(con, path)
    t_open = time.perf_counter() - t0
    t0 = time.perf_counter()
    fr = db.fit_region(con, name)
    t_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    pa = db.pareto(con, name)
    t_par = time.perf_counter() - t0
    t0 = time.perf_counter()
    one = db.count(con, name, [db.Filter("model", "=", "llama-3.1-8b"), db.Filter("gpu", "=", "h100-sxm")])
    t_prune = time.perf_counter() - t0
    con.close()
    return {"open_s": t_open, "fit_region_s": t_fit, "fit_region_rows": len(fr), "pareto_s": t_par,
            "pareto_rows": len(pa), "pruned_count_s": t_prune, "pruned_count": one}


def section(r1, r2, big, q) -> str:
    head = (f"Command: `python bench/bench_dask.py --write` · machine: {platform.machine()}, {os.cpu_count()} CPUs, "
            f"Python {platform.python_version()} · date: {dt.date.today().isoformat()} · code: "
            + subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
                             ).stdout.strip())
    L = ["## Sweeps on Dask", "", head, "",
         "LocalCluster on loopback, one thread per worker process; each task evaluates ~1M rows with the in-process "
         "engine's `evaluate` and writes hive-partitioned Parquet (model=…/gpu=…). CPU seconds are the workers' "
         "(user + system).", "",
         "| run | rows | tasks | workers | wall (s) | worker CPU (s) | rows/s | peak RSS per worker (MB) | on disk (GB) |",
         "|---|---|---|---|---|---|---|---|---|"]
    for label, r, w in (("bench/sweep_dask_50m.json", r1, 1), ("bench/sweep_dask_50m.json", r2, 2),
                        ("bench/sweep_dask_200m.json", big, 2)):
        if r:
            L.append(f"| {label} | {r['rows']:,} | {r['tasks']} | {w} | {r['wall_s']:.1f} | {r['worker_cpu_s']:.1f} | "
                     f"{r['rows'] / r['wall_s'] / 1e6:.2f} M | {r['peak_rss_mb']:.0f} | {r['gb_on_disk']:.2f} |")
    if r1 and r2:
        L += ["", f"Speed-up with 2 workers on 2 cores: {r1['wall_s'] / r2['wall_s']:.2f}× (target ≥ 1.5×)."]
    if q:
        L += ["", f"Queries over the {big['rows']:,}-row dataset with DuckDB in place (`core.db.open_dataset`): open "
                  f"{q['open_s']:.2f} s; fit region {q['fit_region_s']:.2f} s ({q['fit_region_rows']:,} cells); Pareto "
                  f"{q['pareto_s']:.2f} s ({q['pareto_rows']:,} points); a count on one model and accelerator "
                  f"(partition pruning) {q['pruned_count_s']:.2f} s ({q['pruned_count']:,} rows)."]
    return "\n".join(L) + "\n"


def write_section(text: str) -> None:
    """Replace the `## Sweeps on Dask` section of bench/RESULTS.md (bench/results.py)."""
    from bench.results import write_section as replace
    replace("Sweeps on Dask", text)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--skip-200m", action="store_true")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_dask_"))
    try:
        r1 = run("bench/sweep_dask_50m.json", 1, tmp / "a")
        print("1 worker", r1, flush=True)
        shutil.rmtree(tmp / "a")
        r2 = run("bench/sweep_dask_50m.json", 2, tmp / "b")
        print("2 workers", r2, flush=True)
        shutil.rmtree(tmp / "b")
        big = q = None
        if not a.skip_200m:
            big = run("bench/sweep_dask_200m.json", 2, tmp / "c")
            print("200M", big, flush=True)
            q = queries(tmp / "c")
            print("queries", q, flush=True)
        text = section(r1, r2, big, q)
        print(text)
        if a.write:
            write_section(text)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
