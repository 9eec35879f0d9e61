"""Benchmark (not a test): `budget` across every catalog accelerator with a price ($2M, 60 days), in process after
imports, each run with the per-accelerator column cache cleared; and the CLI with imports.

    python bench/bench_budget.py [--repeat 5]
"""
import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core import budget as B  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--repeat", type=int, default=5)
a = ap.parse_args()
times = []
for _ in range(a.repeat):
    B._COLS.clear()
    t0 = time.perf_counter()
    res = B.plan_budget(usd=2e6, days=60)
    times.append(time.perf_counter() - t0)
t0 = time.perf_counter()
subprocess.run([sys.executable, "-m", "core", "budget", "--usd", "2e6", "--days", "60"], cwd=ROOT, check=True,
               capture_output=True)
cli = time.perf_counter() - t0
import math  # noqa: E402
from core.hardware import catalog  # noqa: E402
n = sum(1 for g in catalog().values() if math.isfinite(g.price_usd_per_gpu_hour))
print(f"budget $2M / 60 days over {n} accelerators: best {min(times):.3f} s, median {statistics.median(times):.3f} s "
      f"(runs: {', '.join(f'{t:.3f}' for t in times)}); CLI with imports {cli:.2f} s; best answer "
      f"{res['best']['gpu']} {res['best']['n_params'] / 1e9:.1f}B on {res['best']['tokens'] / 1e12:.2f}T tokens")
