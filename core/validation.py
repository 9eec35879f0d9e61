"""Published training runs (data/published_runs.csv) and what the step-time model predicts for them.

Each row is one published configuration: its framework, its source (project, document, table), the accelerator, one
published figure (`metric`: tokens/s per GPU, model or hardware TFLOP/s per GPU — hardware counting recomputation as
Narayanan et al. 2021 do —, MFU, or a step time) and `inputs`, the planner inputs that describe the run (a JSON
object: the model's architecture, the layout, the recompute the source states). The test suite, bench/fit_profiles.py
(which fits the few free constants, leave-one-source-out) and bench/bench_steptime.py read the same rows.
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import profiles as PF
from .estimate import config_from_inputs, estimate, evaluate

DATA = Path(__file__).resolve().parent.parent / "data" / "published_runs.csv"
FIELDS = ("id", "framework", "source", "url", "section", "date", "gpu", "metric", "published", "inputs", "note")
METRICS = ("tokens_per_s_per_gpu", "model_tflops_per_gpu", "hardware_tflops_per_gpu", "mfu", "step_time_s")


@dataclass(frozen=True)
class Run:
    id: str
    framework: str
    source: str
    metric: str
    published: float
    inputs: dict = field(hash=False)
    gpu: str = ""
    url: str = ""
    section: str = ""
    date: str = ""
    note: str = ""

    @property
    def group(self) -> str:
        """The source a leave-one-source-out fit leaves out: the text before ' — ' in `source`."""
        return self.source.split(" — ")[0]


def read(path: Path | str = DATA) -> list[Run]:
    """The runs of a published-runs CSV (the repository's, or a file in the same format)."""
    out = []
    with open(path, newline="") as fh:
        for r in csv.DictReader(fh):
            if r["metric"] not in METRICS:
                raise ValueError(f"{path}: run {r['id']}: metric {r['metric']!r} is not one of {', '.join(METRICS)}")
            if r["framework"] not in PF.FRAMEWORKS:  # the fits and groupings compare profile names: no stack names
                raise ValueError(f"{path}: run {r['id']}: framework {r['framework']!r} is not one of "
                                 f"{', '.join(PF.FRAMEWORKS)}")
            inputs = {"gpu": r["gpu"], "framework": r["framework"], **json.loads(r["inputs"])}
            out.append(Run(r["id"], r["framework"], r["source"], r["metric"], float(r["published"]), inputs,
                           r["gpu"], r["url"], r["section"], r["date"], r["note"]))
    return out


def runs(framework: str | None = None) -> list[Run]:
    """The published runs, optionally of one framework."""
    return [r for r in read() if framework is None or r.framework == framework]


def write(rows: list[Run], path: Path | str = DATA) -> None:
    """Write runs in the CSV's format (inputs as JSON, keys sorted)."""
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        for r in rows:
            inputs = {k: v for k, v in r.inputs.items() if k not in ("gpu", "framework")}
            w.writerow({"id": r.id, "framework": r.framework, "source": r.source, "url": r.url, "section": r.section,
                        "date": r.date, "gpu": r.gpu, "metric": r.metric, "published": repr(r.published),
                        "inputs": json.dumps(inputs, sort_keys=True), "note": r.note})


def metric_of(rec: dict, run: Run, i=None) -> float:
    """The run's published metric from a record (or row i of evaluated columns): MFU as a fraction, TFLOP/s per GPU,
    tokens/s per GPU, or the step in seconds."""
    get = (lambda k: float(rec[k])) if i is None else (lambda k: float(np.asarray(rec[k]).reshape(-1)[i]))
    n = run.inputs["n_gpus"]
    if run.metric == "mfu":
        return get("predicted_mfu")
    if run.metric == "step_time_s":
        return get("predicted_step_time_s")
    if run.metric == "tokens_per_s_per_gpu":
        return get("predicted_tokens_per_s") / n
    flops = get("hardware_flops_per_token") if run.metric == "hardware_tflops_per_gpu" else get("flops_per_token")
    return flops * get("predicted_tokens_per_s") / n / 1e12


def step_ratio(run: Run, predicted_metric: float) -> float:
    """measured step time / predicted step time implied by the metric (throughputs are inverse to the step)."""
    if run.metric == "step_time_s":
        return run.published / predicted_metric
    return predicted_metric / run.published


def predicted(run: Run, **over) -> float:
    """The model's value of the run's published metric (mfu as a fraction, TFLOP/s per GPU otherwise)."""
    inputs = {**run.inputs, "mfu": "auto", **over}
    return metric_of(estimate(config_from_inputs(**inputs)), run)


def columns(rows: list[Run], **over) -> dict:
    """`evaluate`'s columns for many runs at once (one array per input, one entry per run)."""
    cols = [config_from_inputs(**{**r.inputs, "mfu": "auto", **over}).columns() for r in rows]
    out = {}
    for k in cols[0]:
        vals = [c[k] for c in cols]
        arr = np.asarray(vals, dtype=object)
        try:
            arr = np.asarray(vals, dtype=np.float64) if not any(isinstance(v, (str, np.str_)) for v in vals) and not \
                any(isinstance(v, (bool, np.bool_)) for v in vals) else arr
        except (TypeError, ValueError):
            pass
        if all(isinstance(v, (bool, np.bool_)) for v in vals):
            arr = np.asarray(vals, dtype=bool)
        elif arr.dtype == object and all(isinstance(v, (str, np.str_)) for v in vals):
            arr = np.asarray(vals, dtype=object)
        out[k] = arr
    return out


def predict_columns(rows: list[Run], cols: dict, **extra) -> tuple[np.ndarray, dict]:
    """Each run's predicted metric from prepared columns (`columns`), with extra columns (the fit's constants)."""
    rec = evaluate(**{**cols, **extra})
    return np.array([metric_of(rec, r, i) for i, r in enumerate(rows)]), rec


# the recipe tables (no profile fit reads them; MXFP8's GEMM rate is fitted to eight rows of the low-precision table,
# bench/fit_mxfp8.py) and the kind of row each validates (core/intervals.py)
RECIPE_TABLES = {"moe": "published_runs_moe.csv", "lowp": "published_runs_lowp.csv"}


def ratios(path: Path | str) -> list[float]:
    """measured / predicted step of every run of a published-runs file."""
    return [q for q, _ in ratios_and_overheads(path)]


def ratios_and_overheads(path: Path | str) -> list[tuple[float, float]]:
    """(measured / predicted step, the predicted step's overhead share: core/intervals.overhead_share) of every run of
    a published-runs file, from one prediction each."""
    from .intervals import overhead_share
    out = []
    for r in read(path):
        rec = estimate(config_from_inputs(**{**r.inputs, "mfu": "auto"}))
        out.append((step_ratio(r, metric_of(rec, r)),
                    float(overhead_share(rec["compute_s"], rec["predicted_step_time_s"]))))
    return out


def source_weights(groups, mask=None) -> np.ndarray:
    """Weights that count every source once: 1 / (its runs in `mask`) on each of them, 0 outside `mask`."""
    groups = np.asarray(groups)
    mask = np.ones(len(groups), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    w = np.zeros(len(groups))
    for g in np.unique(groups[mask]):
        sel = mask & (groups == g)
        w[sel] = 1.0 / sel.sum()
    return w


def weighted_quantile(x, w, q) -> float:
    """The q-quantile of `x` with weights `w` (midpoint rule on the cumulative weights)."""
    order = np.argsort(x)
    x, w = np.asarray(x, dtype=np.float64)[order], np.asarray(w, dtype=np.float64)[order]
    cw = np.cumsum(w) / np.sum(w)
    return float(np.interp(q, cw - w / (2 * np.sum(w)), x))


def interval_widen() -> float:
    """The factor on the log-bounds of an interval that keeps its coverage of unseen runs inside 70–90 %
    (data/fitted.csv `all, interval_widen`, fitted by bench/fit_profiles.py on the nested leave-one-source-out and the
    prospective record; 1 before any fit)."""
    from .profiles import fitted_rows
    return float(fitted_rows().get(("all", "interval_widen"), (1.0, ""))[0])


def interval_of(q, groups, widen: float = 1.0, by_source: bool = True, width=None) -> tuple[float, float]:
    """An 80 % interval of measured / predicted ratios `q`: the 10th and 90th percentiles with every source (or,
    `by_source` false, every run) weighted equally, their logs × `widen`, and always low ≤ 1 ≤ high. With `width`
    (each run's core/intervals.width_factor of its overhead share) the percentiles are of the log ratios ÷ width: the
    interval of a step without overhead, which core/intervals.bounds scales back by the row's own factor."""
    lq = np.log(np.asarray(q, dtype=np.float64))
    if width is not None:
        lq = lq / np.asarray(width, dtype=np.float64)
    if by_source:
        w = source_weights(groups)
        lo, hi = weighted_quantile(lq, w, 0.10), weighted_quantile(lq, w, 0.90)
    else:  # runs weighted equally: numpy's linear percentiles, as the recipe intervals were always taken
        lo, hi = (float(x) for x in np.percentile(lq, [10, 90]))
    return float(np.exp(widen * min(lo, 0.0))), float(np.exp(widen * max(hi, 0.0)))


def recipe_intervals() -> list[dict]:
    """The 80 % interval of each recipe table's runs, per framework: the 10th and 90th percentiles of measured /
    predicted step over its runs, widened by the fitted `interval_widen` (fitted on the dense profiles, not on these
    tables; it also widens the one-source maxtext MoE table, which no nested check can test), each run's log ratio
    first divided by its overhead width factor as the profiles' are (core/intervals.py). Runs, not sources,
    weigh equally here: the tables' sources are few and uneven (one Megatron-Bridge archive, MLPerf split by submitter
    and round), and run weights cover a left-out source better (nested leave-one-source-out, bench/bench_recipes.py,
    2026-12-05, megatron's low-precision runs: 78 % of the runs and 83 % source by source, against 76 % and 76 % with
    sources weighted equally). The MoE table covers a left-out source far less (about half of the runs): its GPT-OSS
    rows, one source, run 1.07–1.62× the prediction, which the other sources do not foresee; what
    data/recipe_intervals.csv holds (bench/bench_recipes.py --write writes it, a test checks it)."""
    from .intervals import interval_slope, width_factor
    out = []
    k = interval_widen()
    for kind, name in RECIPE_TABLES.items():
        rows = read(DATA.parent / name)
        q, u = (np.asarray(x) for x in zip(*ratios_and_overheads(DATA.parent / name)))
        width = width_factor(u)
        for fw in sorted({r.framework for r in rows}):
            sel = np.asarray([r.framework == fw for r in rows])
            groups = [r.group for r, s in zip(rows, sel) if s]
            lo, hi = interval_of(q[sel], groups, k, by_source=False, width=width[sel])
            out.append({"framework": fw, "kind": kind, "interval_low": round(lo, 4),
                        "interval_high": round(hi, 4), "runs": int(sel.sum()),
                        "source": f"10th and 90th percentiles of measured / predicted step over the {int(sel.sum())} "
                                  f"runs of data/{name} ({len(set(groups))} sources; no profile constant fitted "
                                  f"to them), each log ratio ÷ its overhead width factor (interval_slope "
                                  f"{interval_slope():.2f}: a step without overhead), log-bounds × {k:.2f} "
                                  f"(interval_widen, data/fitted.csv)"})
    return out
