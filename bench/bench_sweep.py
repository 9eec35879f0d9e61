"""Benchmark of sweeps (not a test): rows per second evaluated, and evaluated plus inserted into DuckDB, at 1M and
10M rows, with peak resident memory; the CLI streaming 1M and 10M rows to Parquet; and the same 500-configuration
grid through the `llm-analysis` package, one `LLMAnalysis(...).training(...)` call per configuration, as a ratio.

    python bench/bench_sweep.py                    # print the results as Markdown
    python bench/bench_sweep.py --write            # also replace the "## Sweeps" section of bench/RESULTS.md
    python bench/bench_sweep.py --peer-python /tmp/peer/bin/python   # where llm-analysis is installed

llm-analysis is installed only for the benchmark, best in its own environment so the project's stays as pinned:
    python -m venv --system-site-packages /tmp/peer && /tmp/peer/bin/pip install llm-analysis

Every measurement runs in a fresh child process, so its peak resident memory (ru_maxrss) is its own; each is the
best of `--repeat` runs (the machine may be shared). The DuckDB runs use `core.db.connect(memory_limit="1GB")`:
an in-memory database that offloads table blocks to its temp directory beyond that, so 10M rows (about 3.5 GB
as DuckDB holds them uncompressed) stay within bounded memory.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "RESULTS.md"

# The grids live beside this file so the CLI can be run on them by hand:
#   python -m core sweep --spec bench/sweep_1m.json --out x.parquet
# 1M: 5 models × 10 seq_len × 10 GPU counts × 5 tp × 5 pp × 5 micro_batch × 4 ZeRO stages × 4 accelerators;
# 10M: the same × 2 flash settings × 5 MFUs. The peer's 500: GPT-3 shapes (llm-analysis needs d_ff divisible by
# d_model) × 5 seq_len × 5 micro_batch × 4 ZeRO stages, full recomputation, 64 H100.
SPEC_1M = json.loads((ROOT / "bench" / "sweep_1m.json").read_text())
SPEC_10M = json.loads((ROOT / "bench" / "sweep_10m.json").read_text())
SPEC_500 = json.loads((ROOT / "bench" / "sweep_peer_500.json").read_text())
PEER_MODELS = SPEC_500["model"]


def _rss_mb() -> float:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


# --- scenarios, each run in a child process -----------------------------------------------------------------------

def scenario_eval(spec: dict) -> dict:
    from core.sweep import Sweep, SweepSpec
    sw = Sweep(SweepSpec.from_dict(spec))
    t0 = time.perf_counter()
    for _ in sw:
        pass
    return {"rows": sw.rows, "seconds": time.perf_counter() - t0, "valid": sw.valid, "fits": sw.fits}


def scenario_duckdb(spec: dict) -> dict:
    from core import db
    from core.sweep import SweepSpec, run_sweep
    con = db.connect(memory_limit="1GB")
    s = SweepSpec.from_dict(spec)
    t0 = time.perf_counter()
    table = run_sweep(s, con)
    seconds = time.perf_counter() - t0
    info = db.sweep_info(con, table)
    t1 = time.perf_counter()
    db.fit_region(con, table)
    query_s = time.perf_counter() - t1
    return {"rows": info["n_rows"], "seconds": seconds, "valid": info["n_valid"], "fits": info["n_fit"],
            "fit_region_query_s": query_s}


def scenario_ours_500(spec: dict) -> dict:
    from core import db
    from core.sweep import SweepSpec, run_sweep
    con = db.connect()
    t0 = time.perf_counter()
    run_sweep(SweepSpec.from_dict(spec), con)
    return {"rows": SweepSpec.from_dict(spec).n_rows, "seconds": time.perf_counter() - t0}


SCENARIOS = {"eval": scenario_eval, "duckdb": scenario_duckdb, "ours500": scenario_ours_500}


def run_child(name: str, spec: dict) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", name, json.dumps(spec)], cwd=tempfile.gettempdir(),
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def best_of(n: int, name: str, spec: dict) -> dict:
    runs = [run_child(name, spec) for _ in range(n)]
    best = min(runs, key=lambda r: r["seconds"])
    best["peak_rss_mb"] = max(r["peak_rss_mb"] for r in runs)
    best["all_seconds"] = [round(r["seconds"], 3) for r in runs]
    return best


def run_cli(spec: dict, repeat: int) -> dict:
    """`python -m core sweep` from a fresh interpreter (imports included), streamed to Parquet."""
    best = None
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "spec.json"
        p.write_text(json.dumps(spec))
        for _ in range(repeat):
            t0 = time.perf_counter()
            proc = subprocess.Popen([sys.executable, "-m", "core", "sweep", "--spec", str(p), "--out",
                                     str(Path(d) / "x.parquet"), "--json", "--quiet"], cwd=ROOT,
                                    stdout=subprocess.PIPE, text=True)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            summary = json.loads(proc.stdout.read().strip())
            proc.stdout.close()
            if os.waitstatus_to_exitcode(status) != 0:
                raise RuntimeError("the CLI failed")
            r = {"rows": summary["rows"], "seconds": wall, "peak_rss_mb": usage.ru_maxrss / 1024,
                 "parquet_mb": (Path(d) / "x.parquet").stat().st_size / 1e6}
            if best is None or r["seconds"] < best["seconds"]:
                best = r
    return best


# --- the peer ---------------------------------------------------------------------------------------------------

PEER_CODE = r"""
import json, logging, sys, time
logging.disable(logging.CRITICAL)
from llm_analysis.analysis import LLMAnalysis, ActivationRecomputation, DSZeRO
from llm_analysis.config import ModelConfig, GPUConfig, ParallelismConfig, get_dtype_config_by_name
job = json.load(sys.stdin)
gpu = GPUConfig(**job["gpu"])
models = {m["name"]: ModelConfig(**m) for m in job["models"]}
dtype = get_dtype_config_by_name("w16a16e16")
zero = [DSZeRO.NONE, DSZeRO.STAGE_1, DSZeRO.STAGE_2, DSZeRO.STAGE_3]
best, errors = None, 0
for _ in range(job["repeat"]):
    errors = 0
    t0 = time.perf_counter()
    for c in job["configs"]:
        try:
            a = LLMAnalysis(models[c["model"]], gpu, dtype, ParallelismConfig(tp_size=1, pp_size=1, dp_size=c["n_gpus"]),
                            flops_efficiency=0.5, hbm_memory_efficiency=0.9)
            a.training(batch_size_per_gpu=c["micro_batch"], seq_len=c["seq_len"], total_num_tokens=c["tokens"],
                       activation_recomputation=ActivationRecomputation.FULL, ds_zero=zero[c["zero_stage"]],
                       flash_attn=False)
        except Exception:
            errors += 1
    s = time.perf_counter() - t0
    best = s if best is None else min(best, s)
import llm_analysis, importlib.metadata as md
print(json.dumps({"configs": len(job["configs"]), "seconds": best, "errors": errors,
                  "version": md.version("llm-analysis")}))
"""


def run_peer(python: str, repeat: int) -> dict | None:
    sys.path.insert(0, str(ROOT))
    from core.hardware import get_accelerator
    from core.model import get_preset
    from core.sweep import SweepSpec
    import itertools
    spec = SweepSpec.from_dict(SPEC_500)
    names = spec.names
    configs = [dict(zip(names, c)) for c in itertools.product(*(spec.values(k) for k in names))]
    for c in configs:
        c.setdefault("n_gpus", SPEC_500["n_gpus"])
        c.setdefault("tokens", SPEC_500["tokens"])
    models = []
    for name in PEER_MODELS:
        m = get_preset(name)
        models.append({"name": name, "num_layers": m.n_layers, "n_head": m.n_heads, "hidden_dim": m.d_model,
                       "vocab_size": m.vocab_size, "max_seq_len": 131072, "num_key_value_heads": m.n_kv_heads,
                       "ffn_embed_dim": m.d_ff})
    g = get_accelerator("h100-sxm")
    gpu = {"name": g.name, "mem_per_GPU_in_GB": g.memory_bytes / 1e9,
           "hbm_bandwidth_in_GB_per_sec": g.memory_bandwidth_bytes_per_s / 1e9,
           "intra_node_bandwidth_in_GB_per_sec": g.intra_node_bytes_per_s / 1e9, "intra_node_min_message_latency": 8e-6,
           "peak_fp16_TFLOPS": g.peak_bf16_flops_per_s / 1e12}
    job = {"gpu": gpu, "models": models, "configs": configs, "repeat": repeat}
    try:
        out = subprocess.run([python, "-c", PEER_CODE], input=json.dumps(job), capture_output=True, text=True,
                             check=True, cwd=tempfile.gettempdir())
    except (subprocess.CalledProcessError, FileNotFoundError) as e:
        print(f"llm-analysis not run ({getattr(e, 'stderr', '') or e}); install it: "
              "python -m venv --system-site-packages /tmp/peer && /tmp/peer/bin/pip install llm-analysis",
              file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- report -----------------------------------------------------------------------------------------------------

def _machine() -> dict:
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    free = subprocess.run(["free", "-h"], capture_output=True, text=True).stdout.strip()
    cpu = ""
    try:
        cpu = re.search(r"model name\s*:\s*(.*)", Path("/proc/cpuinfo").read_text()).group(1)
    except (OSError, AttributeError):
        pass
    import duckdb
    import numpy
    import pyarrow
    return {"nproc": nproc, "free": free, "cpu": cpu, "load": os.getloadavg(), "python": platform.python_version(),
            "numpy": numpy.__version__, "duckdb": duckdb.__version__, "pyarrow": pyarrow.__version__}


def _m(x: float) -> str:
    return f"{x / 1e6:.2f} M"


def report(res: dict, cmd: str) -> str:
    m = res["machine"]
    L = ["## Sweeps", "",
         f"Command: `{cmd}` (from the repository root). Date: {res['date']}.",
         f"Machine: {m['nproc']} cores (`nproc`), {m['cpu']}; Python {m['python']}, NumPy {m['numpy']}, "
         f"DuckDB {m['duckdb']}, PyArrow {m['pyarrow']}; load average at start {m['load'][0]:.2f} "
         "(the machine is shared; every figure is the best of the runs listed).", "",
         "```", "$ free -h", m["free"], "```", "",
         "| rows | what | seconds (runs) | rows/s | peak RSS |", "|---:|---|---|---:|---:|"]
    for key, label in (("eval", "evaluation alone (chunks of 131,072 rows)"),
                       ("duckdb", "evaluation + insert into DuckDB (in memory, memory_limit 1GB)"),
                       ("cli", "`python -m core sweep --out x.parquet` (fresh process, imports included)")):
        for size in ("1M", "10M"):
            r = res.get(f"{key}_{size}")
            if not r:
                continue
            runs = ", ".join(f"{s:.2f}" for s in r.get("all_seconds", [r["seconds"]]))
            L.append(f"| {r['rows']:,} | {label} | {r['seconds']:.2f} ({runs}) | {_m(r['rows'] / r['seconds'])} | "
                     f"{r['peak_rss_mb']:,.0f} MB |")
    peer, ours = res.get("peer"), res.get("duckdb_1M")
    L.append("")
    if peer:
        rate = peer["configs"] / peer["seconds"]
        L.append(f"Peer: llm-analysis {peer['version']}, the same 500-configuration grid (GPT-3 1.3B–175B × seq_len "
                 f"512–8k × micro_batch 1–16 × ZeRO 0–3, full recomputation, 64 H100), one `LLMAnalysis(...).training(...)` per "
                 f"configuration: {peer['seconds']:.3f} s, **{rate:,.0f} configurations/s** "
                 f"({peer['errors']} raised llm-analysis's 'does not fit' assertion part-way, which only flatters its rate).")
        o5 = res.get("ours_500")
        if o5:
            L.append(f"Ours on that grid: {o5['seconds'] * 1e3:.1f} ms into DuckDB ({o5['rows'] / o5['seconds']:,.0f}"
                     f"/s; fixed costs dominate at 500 rows, {o5['seconds'] / peer['seconds']:.2f}× the peer's time).")
        if ours:
            ratio = ours["rows"] / ours["seconds"] / rate
            L.append(f"**Ratio: {ratio:,.0f}×** the peer's configurations per second (1M rows into DuckDB, "
                     f"{_m(ours['rows'] / ours['seconds'])} rows/s, vs {rate:,.0f}/s).")
            if res.get("eval_1M"):
                e = res["eval_1M"]
                L.append(f"Evaluation alone: {e['rows'] / e['seconds'] / rate:,.0f}× the peer.")
    else:
        L.append("Peer: llm-analysis was not available for this run.")
    L += ["", "Targets: ≥ 5M rows/s evaluated, ≥ 2M rows/s into DuckDB (> 300× the peer), 10M rows under 2 GB "
          "peak resident memory.", ""]
    d = res.get("duckdb_1M")
    if d and d.get("fit_region_query_s") is not None:
        L.append(f"A fit-region query (`db.fit_region`, model × n_gpus × seq_len) over the 1M-row table takes "
                 f"{d['fit_region_query_s'] * 1e3:.0f} ms; over 10M rows "
                 f"{res['duckdb_10M']['fit_region_query_s'] * 1e3:.0f} ms." if res.get("duckdb_10M") else "")
    return "\n".join(x for x in L) + "\n"


def write_section(text: str) -> None:
    old = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n\n"
    pat = re.compile(r"^## Sweeps\n.*?(?=^## |\Z)", re.S | re.M)
    new = pat.sub(lambda _: text + "\n", old) if pat.search(old) else old.rstrip("\n") + "\n\n" + text
    RESULTS.write_text(new)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        sys.path.insert(0, str(ROOT))
        r = SCENARIOS[sys.argv[2]](json.loads(sys.argv[3]))
        r["peak_rss_mb"] = _rss_mb()
        print(json.dumps(r))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per 1M measurement (10M: half, at least 1)")
    ap.add_argument("--peer-python", default=sys.executable, help="a Python with llm-analysis installed")
    ap.add_argument("--skip-10m", action="store_true")
    ap.add_argument("--write", action="store_true", help="replace the '## Sweeps' section of bench/RESULTS.md")
    args = ap.parse_args()
    res = {"machine": _machine(), "date": dt.date.today().isoformat()}
    sizes = [("1M", SPEC_1M, args.repeat)] + ([] if args.skip_10m else [("10M", SPEC_10M, max(1, args.repeat // 2))])
    for size, spec, n in sizes:
        for key in ("eval", "duckdb"):
            res[f"{key}_{size}"] = best_of(n, key, spec)
            print(f"{key} {size}: {res[f'{key}_{size}']}", file=sys.stderr)
        res[f"cli_{size}"] = run_cli(spec, n)
        print(f"cli {size}: {res[f'cli_{size}']}", file=sys.stderr)
    res["ours_500"] = best_of(args.repeat, "ours500", SPEC_500)
    res["peer"] = run_peer(args.peer_python, args.repeat)
    print(f"peer: {res['peer']}", file=sys.stderr)
    cmd = "python bench/bench_sweep.py" + (f" --peer-python {args.peer_python}" if args.peer_python != sys.executable
                                           else "") + (" --write" if args.write else "")
    text = report(res, cmd)
    print(text)
    (ROOT / "bench" / "out").mkdir(exist_ok=True)
    (ROOT / "bench" / "out" / "bench_sweep.json").write_text(json.dumps(res, indent=1, default=str))
    if args.write:
        write_section(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
