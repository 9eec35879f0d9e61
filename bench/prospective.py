"""The prospective record: published runs as they were predicted before they joined the data (not a test).

Each batch of new published runs was predicted with the code committed at the time, before any constant saw it
(bench/fit_profiles.py's notes: "predicted before it joined, with the code of <commit>"). data/prospective.csv keeps,
for every such run that joined, the batch, that commit, and what that code predicted: the measured / predicted step
ratio, the 80 % interval's bounds as multiples of the predicted step, and the fit verdict. It is the one test of the
intervals that no fit has seen, and bench/fit_profiles.py sets the interval widening from it (with the nested
leave-one-source-out coverage).

    python bench/prospective.py            # recompute every row: a git worktree per commit, the run's current inputs
    python bench/prospective.py --check    # recompute and report rows that differ from data/prospective.csv

Each row keeps the run as it was described when predicted (gpu, metric, published figure, inputs): some rows of the
data tables changed after joining (a catalog row added for their hardware, a dtype their config states), which the
old code could not read. Only runs that joined the tables are kept (a batch's rows left out are not in the record).
"""
import argparse
import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

PATH = ROOT / "data" / "prospective.csv"
# the run as it was described when it was predicted (its row may have changed since: a catalog row added, a dtype
# stated), then what that code predicted
RUN_FIELDS = ("id", "framework", "source", "url", "section", "date", "gpu", "metric", "published", "inputs", "note")
FIELDS = ("id", "batch", "commit", "framework", "source", "gpu", "metric", "published", "inputs", "ratio", "low",
          "high", "fits")

# run inside the old checkout: its own core and data (constants as they were)
PREDICT = """
import json, sys
sys.path.insert(0, '.')
from core import validation as V
from core.estimate import config_from_inputs, estimate
for r in V.read(sys.argv[1]):
    rec = estimate(config_from_inputs(**{**r.inputs, "mfu": "auto"}))
    st = float(rec["predicted_step_time_s"])
    print(json.dumps({"id": r.id, "ratio": V.step_ratio(r, V.metric_of(rec, r)),
                      "low": float(rec["predicted_step_time_low_s"]) / st,
                      "high": float(rec["predicted_step_time_high_s"]) / st, "fits": bool(rec["fits"])}))
"""


def read() -> list[dict]:
    """The record's rows (numbers as floats, fits as bool); empty if there is none."""
    if not PATH.exists():
        return []
    with open(PATH, newline="") as fh:
        return [{**r, "ratio": float(r["ratio"]), "low": float(r["low"]), "high": float(r["high"]),
                 "fits": r["fits"] == "True", "batch": int(r["batch"])} for r in csv.DictReader(fh)]


def coverage(rows: list[dict], widen: float, shape=None) -> float:
    """Share of the runs (weighted equally) inside their interval as predicted then, its log-bounds × `widen` (and ×
    each row's `shape`, where given: bench/fit_profiles.prospective_shape)."""
    if not rows:
        return float("nan")
    k = widen * (np.ones(len(rows)) if shape is None else np.asarray(shape, dtype=np.float64))
    inside = [np.exp(ki * np.log(r["low"])) <= r["ratio"] <= np.exp(ki * np.log(r["high"])) for r, ki in zip(rows, k)]
    return float(np.mean(inside))


def overheads(rows: list[dict]) -> tuple:
    """Each row's overhead share (core/intervals.overhead_share) as the current code predicts the run, and its kind:
    'moe', 'lowp' (a low-precision dense row) or 'dense' (the kinds core/intervals.bounds takes its interval by)."""
    sys.path.insert(0, str(ROOT))
    from core import lowp as LP
    from core.estimate import config_from_inputs, estimate
    from core.intervals import overhead_share
    u, kind = [], []
    for r in rows:
        cfg = config_from_inputs(**{**json.loads(r["inputs"]), "gpu": r["gpu"], "framework": r["framework"],
                                    "mfu": "auto"})
        rec = estimate(cfg)
        c = cfg.columns()
        u.append(float(overhead_share(rec["compute_s"], rec["predicted_step_time_s"])))
        kind.append("moe" if float(c["n_experts"]) > 1 else "lowp" if str(LP.effective(
            c["fp8_recipe"], c["compute_dtype"])) != "none" else "dense")
    return np.asarray(u), np.asarray(kind)


def recompute(rows: list[dict]) -> list[dict]:
    """Each row predicted again by its commit's code (a git worktree), from the run as the record describes it."""
    out = []
    for commit in sorted({r["commit"] for r in rows}):
        batch = [r for r in rows if r["commit"] == commit]
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp) / "tree"
            subprocess.run(["git", "worktree", "add", "--detach", "-f", str(tree), commit], cwd=ROOT, check=True,
                           capture_output=True)
            try:
                csv_path = Path(tmp) / "runs.csv"
                with open(csv_path, "w", newline="") as fh:
                    w = csv.writer(fh)
                    w.writerow(RUN_FIELDS)
                    for r in batch:
                        w.writerow([r.get(k, "") for k in RUN_FIELDS])
                res = subprocess.run([sys.executable, "-c", PREDICT, str(csv_path)], cwd=tree, check=True,
                                     capture_output=True, text=True).stdout
            finally:
                subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)
        got = {d["id"]: d for d in map(json.loads, res.splitlines())}
        for r in batch:
            out.append({**r, **{k: got[r["id"]][k] for k in ("ratio", "low", "high", "fits")}})
    return out


def write(rows: list[dict]) -> None:
    with open(PATH, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(FIELDS)
        for r in sorted(rows, key=lambda r: (r["batch"], r["id"])):
            w.writerow([r["id"], r["batch"], r["commit"], r["framework"], r["source"], r["gpu"], r["metric"],
                        r["published"], r["inputs"], f"{r['ratio']:.6g}", f"{r['low']:.6g}", f"{r['high']:.6g}",
                        r["fits"]])


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    old = read()
    new = recompute(old)
    if a.check:
        diff = [(o["id"], o["ratio"], n["ratio"]) for o, n in zip(sorted(old, key=lambda r: r["id"]),
                                                                   sorted(new, key=lambda r: r["id"]))
                if abs(o["ratio"] - n["ratio"]) > 1e-4 * abs(o["ratio"])]
        print(f"{len(old)} rows, {len(diff)} differ: {diff}")
    else:
        write(new)
        print(f"wrote {PATH} ({len(new)} rows)")
