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
sys.path.insert(0, str(ROOT))

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

def _cpu() -> float:
    import resource
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def scenario_eval(spec: dict) -> dict:
    from core.sweep import Sweep, SweepSpec
    sw = Sweep(SweepSpec.from_dict(spec))
    c0, t0 = _cpu(), time.perf_counter()
    for _ in sw:
        pass
    return {"rows": sw.rows, "seconds": time.perf_counter() - t0, "cpu_s": _cpu() - c0, "valid": sw.valid,
            "fits": sw.fits}


def scenario_duckdb(spec: dict) -> dict:
    from core import db
    from core.sweep import SweepSpec, run_sweep
    con = db.connect(memory_limit="1GB")
    s = SweepSpec.from_dict(spec)
    c0, t0 = _cpu(), time.perf_counter()
    table = run_sweep(s, con)
    seconds, cpu_s = time.perf_counter() - t0, _cpu() - c0
    info = db.sweep_info(con, table)
    t1 = time.perf_counter()
    db.fit_region(con, table)
    query_s = time.perf_counter() - t1
    return {"rows": info["n_rows"], "seconds": seconds, "cpu_s": cpu_s, "valid": info["n_valid"],
            "fits": info["n_fit"], "fit_region_query_s": query_s}


def scenario_ours_500(spec: dict) -> dict:
    from core import db
    from core.sweep import SweepSpec, run_sweep
    con = db.connect()
    c0, t0 = _cpu(), time.perf_counter()
    run_sweep(SweepSpec.from_dict(spec), con)
    return {"rows": SweepSpec.from_dict(spec).n_rows, "seconds": time.perf_counter() - t0, "cpu_s": _cpu() - c0}


SCENARIOS = {"eval": scenario_eval, "duckdb": scenario_duckdb, "ours500": scenario_ours_500}


def _busy() -> float:
    """Fraction of the machine's CPU time busy over the last 0.5 s (the bench is idle while it looks)."""
    def snap():
        f = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
        return sum(f), f[3] + f[4]
    (t0, i0), _ = snap(), time.sleep(0.5)
    t1, i1 = snap()
    return 1 - (i1 - i0) / max(t1 - t0, 1)


def wait_quiet(max_wait_s: float = 45, busy_below: float = 0.15) -> float:
    """Wait (at most `max_wait_s`) until other processes leave the cores nearly idle; returns the busy fraction
    seen last. The machine is shared, so each run starts in a quiet moment where there is one."""
    t_end = time.monotonic() + max_wait_s
    busy = _busy()
    while busy >= busy_below and time.monotonic() < t_end:
        busy = _busy()
    return busy


def run_child(name: str, spec: dict) -> dict:
    busy = wait_quiet()
    out = subprocess.run([sys.executable, __file__, "--child", name, json.dumps(spec)], cwd=tempfile.gettempdir(),
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["busy_before"] = round(busy, 2)
    return r


def best_of(n: int, name: str, spec: dict) -> dict:
    runs = [run_child(name, spec) for _ in range(n)]
    best = min(runs, key=lambda r: r["seconds"])
    best["peak_rss_mb"] = max(r["peak_rss_mb"] for r in runs)
    best["all_seconds"] = [round(r["seconds"], 3) for r in runs]
    return best


def run_cli(spec: dict, repeat: int) -> dict:
    """`python -m core sweep` from a fresh interpreter (imports included), streamed to Parquet."""
    runs = []
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "spec.json"
        p.write_text(json.dumps(spec))
        for _ in range(repeat):
            wait_quiet()
            t0 = time.perf_counter()
            proc = subprocess.Popen([sys.executable, "-m", "core", "sweep", "--spec", str(p), "--out",
                                     str(Path(d) / "x.parquet"), "--json", "--quiet"], cwd=ROOT,
                                    stdout=subprocess.PIPE, text=True)
            out = proc.stdout.read()
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            proc.stdout.close()
            if os.waitstatus_to_exitcode(status) != 0:
                raise RuntimeError("the CLI failed")
            runs.append({"rows": json.loads(out.strip())["rows"], "seconds": wall,
                         "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024,
                         "parquet_mb": (Path(d) / "x.parquet").stat().st_size / 1e6})
    best = min(runs, key=lambda r: r["seconds"])
    best["peak_rss_mb"] = max(r["peak_rss_mb"] for r in runs)
    best["all_seconds"] = [round(r["seconds"], 3) for r in runs]
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
            par = ParallelismConfig(tp_size=1, pp_size=1, dp_size=c["n_gpus"])
            a = LLMAnalysis(models[c["model"]], gpu, dtype, par, flops_efficiency=0.5, hbm_memory_efficiency=0.9)
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
    wait_quiet()
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
    free = subprocess.run(["free", "-h"], capture_output=True, text=True).stdout.rstrip()
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


def _ok(x: bool) -> str:
    return "met" if x else "**not met**"


def report(res: dict, cmd: str) -> str:
    m = res["machine"]
    L = ["## Sweeps", "",
         f"Command: `{cmd}` (from the repository root; see the script's docstring for installing llm-analysis). "
         f"Date: {res['date']}.",
         f"Machine: {m['nproc']} cores (`nproc`), {m['cpu']}; Python {m['python']}, NumPy {m['numpy']}, "
         f"DuckDB {m['duckdb']}, PyArrow {m['pyarrow']}. The machine is shared with other sessions (load average "
         f"{m['load'][0]:.2f} at start): each run waits up to 45 s for idle cores, every figure is the best of the "
         "runs listed, and CPU seconds (user + sys, all threads) are the load-independent cost.", "",
         "```", "$ free -h", m["free"], "```", "",
         "| rows | what | seconds, best (all runs) | rows/s | CPU s | peak RSS |", "|---:|---|---|---:|---:|---:|"]
    for key, label in (("eval", "evaluation alone (chunks of 131,072 rows)"),
                       ("duckdb", "evaluation + insert into DuckDB (in memory, `memory_limit` 1GB)"),
                       ("cli", "`python -m core sweep --out x.parquet` (fresh process, imports included)")):
        for size in ("1M", "10M"):
            r = res.get(f"{key}_{size}")
            if r:
                runs = ", ".join(f"{x:.2f}" for x in r["all_seconds"])
                L.append(f"| {r['rows']:,} | {label} | {r['seconds']:.2f} ({runs}) | {_m(r['rows'] / r['seconds'])} "
                         f"| {r['cpu_s']:.2f} | {r['peak_rss_mb']:,.0f} MB |")
    L.append("")
    peer, rate = res.get("peer"), None
    if peer:
        rate = peer["configs"] / peer["seconds"]
        L.append(f"Peer: llm-analysis {peer['version']} on the same 500-configuration grid "
                 "(`bench/sweep_peer_500.json`: GPT-3 1.3B–175B × seq_len 512–8192 × micro_batch 1–16 × ZeRO 0–3, "
                 "full recomputation, 64 H100), "
                 "one `LLMAnalysis(...).training(...)` per configuration, best of the runs: "
                 f"{peer['seconds'] * 1e3:.1f} ms, **{rate:,.0f} configurations/s**. ({peer['errors']} of them stop "
                 "part-way at llm-analysis's own 'does not fit' assertion, which only flatters its rate.)")
        o5 = res.get("ours_500")
        if o5:
            L.append(f"The same 500 through `run_sweep` into DuckDB: {o5['seconds'] * 1e3:.1f} ms "
                     f"({o5['seconds'] / peer['seconds']:.2f}× the peer's time; at 500 rows fixed costs dominate).")
    else:
        L.append("Peer: llm-analysis was not available for this run (see the docstring to install it).")
    L += ["", "Against the targets:", ""]
    e1, e10, d1, d10 = (res.get(k) for k in ("eval_1M", "eval_10M", "duckdb_1M", "duckdb_10M"))
    if e1 and e10:
        lo = min(e1["rows"] / e1["seconds"], e10["rows"] / e10["seconds"])
        L.append(f"- ≥ 5M rows/s evaluated: {_m(e1['rows'] / e1['seconds'])} (1M), "
                 f"{_m(e10['rows'] / e10['seconds'])} (10M) — {_ok(lo >= 5e6)}.")
    if d1 and d10:
        r1, r10 = d1["rows"] / d1["seconds"], d10["rows"] / d10["seconds"]
        L.append(f"- ≥ 2M rows/s into DuckDB: {_m(r1)} (1M), {_m(r10)} (10M) — {_ok(min(r1, r10) >= 2e6)}. "
                 f"CPU per million rows: {d1['cpu_s']:.2f} s (1M), {d10['cpu_s'] / 10:.2f} s (10M).")
        if rate:
            L.append(f"- > 300× the peer: **{r1 / rate:,.0f}×** (1M into DuckDB), {r10 / rate:,.0f}× (10M); "
                     f"evaluation alone {e1['rows'] / e1['seconds'] / rate:,.0f}× — "
                     f"{_ok(min(r1, r10) / rate > 300)}.")
        peak = max(d10["peak_rss_mb"], e10["peak_rss_mb"] if e10 else 0, res.get("cli_10M", {}).get("peak_rss_mb", 0))
        L.append(f"- 10M rows under 2 GB peak resident memory: {d10['peak_rss_mb']:,.0f} MB into DuckDB, "
                 f"{e10['peak_rss_mb']:,.0f} MB evaluation alone, {res['cli_10M']['peak_rss_mb']:,.0f} MB streamed "
                 f"to Parquet — {_ok(peak < 2048)}.")
    L += ["", "Notes:", "",
          "- The table is written by one `CREATE TABLE … AS SELECT` over the Arrow stream while a helper thread "
          "evaluates the next chunk, so the two overlap on the two cores. DuckDB's insert is the larger share of "
          "the CPU (about 0.4 s per million rows of 43 columns against 0.15 s for the evaluation).",
          "- With `memory_limit`, DuckDB moves finished blocks of the in-memory table to its temp directory, which "
          "keeps 10M rows (about 3.5 GB as DuckDB holds them) near 1.3 GB resident; without a limit the same run "
          "peaks at about 3.6 GB and is no faster (page faults).",
          "- The CLI streams the sweep through DuckDB's COPY into Parquet without building a table; most of its "
          "time is Parquet encoding."]
    if d1 and d1.get("fit_region_query_s") is not None and d10:
        L.append(f"- A fit-region query (`db.fit_region`, model × n_gpus × seq_len) takes "
                 f"{d1['fit_region_query_s'] * 1e3:.0f} ms over the 1M-row table and "
                 f"{d10['fit_region_query_s'] * 1e3:.0f} ms over the 10M-row one.")
    return "\n".join(L) + "\n"


def write_section(text: str) -> None:
    """Replace the `## Sweeps` section of bench/RESULTS.md (bench/results.py)."""
    from bench.results import write_section as replace
    replace("Sweeps", text)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        sys.path.insert(0, str(ROOT))
        r = SCENARIOS[sys.argv[2]](json.loads(sys.argv[3]))
        r["peak_rss_mb"] = _rss_mb()
        print(json.dumps(r))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="runs per 1M measurement (10M: half, at least 1)")
    ap.add_argument("--peer-python", default=sys.executable, help="a Python with llm-analysis installed")
    ap.add_argument("--skip-10m", action="store_true")
    ap.add_argument("--write", action="store_true", help="replace the '## Sweeps' section of bench/RESULTS.md")
    ap.add_argument("--from-json", help="render a saved bench/out/bench_sweep.json instead of measuring")
    args = ap.parse_args()
    if args.from_json:
        saved = json.loads(Path(args.from_json).read_text())
        text = report(saved["results"], saved["command"])
        print(text)
        if args.write:
            write_section(text)
        return 0
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
    (ROOT / "bench" / "out" / "bench_sweep.json").write_text(json.dumps({"results": res, "command": cmd}, indent=1,
                                                                        default=str))
    if args.write:
        write_section(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
