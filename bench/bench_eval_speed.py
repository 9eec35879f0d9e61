"""Rows per second of the sweep engine's evaluation alone (not a test): the 1M-row grid of bench/sweep_1m.json
evaluated chunk by chunk (core.sweep.Sweep), imports excluded, best of --repeat. Every row now carries the framework
profile's terms and the 80 % interval (issue 18).

    python bench/bench_eval_speed.py                       # this tree
    PYTHONPATH=/tmp/before python bench/bench_eval_speed.py   # another checkout's core (git worktree add /tmp/before REV)
"""
import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if not any(Path(p, "core", "sweep.py").exists() for p in sys.path if p):
    sys.path.insert(0, str(HERE.parent))

from core.sweep import Sweep, SweepSpec  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--repeat", type=int, default=3)
ap.add_argument("--spec", default=str(HERE / "sweep_1m.json"))
a = ap.parse_args()
spec = SweepSpec.from_dict(json.loads(Path(a.spec).read_text()))
best = float("inf")
for _ in range(a.repeat):
    sw = Sweep(spec)
    t0 = time.perf_counter()
    for _b in sw:
        pass
    best = min(best, time.perf_counter() - t0)
print(json.dumps({"rows": sw.rows, "best_s": round(best, 3), "rows_per_s": round(sw.rows / best),
                  "core": str(Path(sys.modules["core"].__file__).parent)}))
