"""How sure a predicted step is: an 80 % interval from the profile's leave-one-source-out errors, wider where no
published run validates the layout.

bench/fit_profiles.py predicts every published run of a profile with the constants fitted without the run's source
(leave-one-source-out), and writes the 10th and 90th percentiles of measured/predicted step time (sources weighted
equally), their logs multiplied by `interval_widen`, to data/fitted.csv (`interval_low`, `interval_high`). That
factor (data/fitted.csv `all, interval_widen`) keeps two coverages of unseen runs furthest inside 70–90 %: nested
leave-one-source-out — each source's runs against the interval and validated region its profile's other sources
give, their ratios predicted by constants fitted without either source — and the prospective record
(data/prospective.csv: runs as the code of their day predicted them before they joined); a user's run is most often
from a source the fit has not seen. It also writes the layout classes, chip families, model sizes and sequence lengths
its runs cover to data/validated.csv. A row is *validated* when its framework has at least MIN_RUNS published runs
of its layout class on its chip family, within SIZE_SPAN × the sizes and SEQ_SPAN × the sequence lengths those runs
span;
otherwise its interval's log-width is multiplied by WIDEN and is at least FLOOR either way (decided, not fitted: a
layout nobody published is less certain than the runs' own spread says; the nested check above applies it to the
left-out runs outside the others' region, 21 % of them). A calibration (core/calibrate.py) gives
its own bounds through the inputs interval_low / interval_high, which replace the profile's.

How much of the step is overhead: the bounds are stated for a step of GEMMs and attention core alone (data/fitted.csv
`interval_low`, `interval_high`: the percentiles of the leave-one-source-out log ratios each divided by its run's
1 + interval_slope · u), and a row's are those log-bounds × (1 + interval_slope · u), u its predicted step's overhead
share, 1 − compute_s / step_time_s (`overhead_share`). The model's error grows with that share: on the 1,159 published
runs (2026-12-06) the 80th percentile of |log ratio| rises from 0.12 where u ≈ 0.13 to 0.33 where u ≈ 0.56, and the
prospective record's coverage of a constant-width interval fell from 77–82 % to 57 % along it. The slope (data/fitted.csv
`all, interval_slope`) is the maximum-likelihood one of a Laplace law whose scale is σ_profile·(1 + slope · u), fitted by
bench/fit_profiles.py on the four profiles' leave-one-source-out ratios (sources weighted equally).

MoE and low-precision rows: data/published_runs.csv holds dense bf16 runs only, but the recipe tables
(data/published_runs_moe.csv, data/published_runs_lowp.csv), which no fit reads, measure how far the model is off for
those kinds of row; where a table covers the row's framework, the row's interval is that table's 10th–90th percentile
of measured / predicted step (data/recipe_intervals.csv), in place of the widened dense one.

Layout class: the parallelism and sharding features a layout uses — tp, pp, cp, moe (experts), zero3 (ZeRO-2/3,
FSDP: gradients or weights sharded), offload, hsdp (replicated shards) — joined by '+', or 'dp' for plain data
parallelism.
"""
from __future__ import annotations

import csv
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import profiles as PF
from . import vec as VE

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
MIN_RUNS = 2
SIZE_SPAN = 3.0  # a validated row's n_params lies within [min / 3, max × 3] of its class's runs
SEQ_SPAN = 4.0
WIDEN = 2.0  # log-width multiplier off the validated region
FLOOR = (0.80, 1.25)  # an unvalidated interval is at least this wide (ratios to the point)
FEATURES = ("tp", "pp", "cp", "moe", "zero3", "offload", "hsdp")
# what an unvalidated prediction means, in words (the CLI and the app both say it)
NOT_VALIDATED = ("no published run of this framework with this layout class (tp / pp / cp / MoE / ZeRO-3 / offload / "
                 "hybrid sharding), size, sequence length or precision is in data/published_runs.csv, so the interval "
                 "is widened (for MoE and low-precision rows of a framework the published recipe tables cover it is "
                 "the spread of that framework's runs there, data/recipe_intervals.csv)")


def class_code(tp, pp, cp, n_experts, zero_stage, offload, dp_replicate) -> np.ndarray:
    """The layout class of each row as a bit mask over FEATURES (bit i set: FEATURES[i] used); 0 is 'dp'."""
    off = np.asarray(offload)
    flags = (np.asarray(tp) > 1, np.asarray(pp) > 1, np.asarray(cp) > 1, np.asarray(n_experts) > 1,
             np.asarray(zero_stage) >= 2, off != "none" if off.dtype.kind in "OUS" else off.astype(bool),
             np.asarray(dp_replicate) > 1)
    code = np.zeros(np.broadcast_shapes(*(np.shape(f) for f in flags)), dtype=np.int64)
    for i, f in enumerate(flags):
        if np.any(f):
            code = code | (np.asarray(f, dtype=np.int64) << i)
    return code


def class_name(code: int) -> str:
    """'tp+pp+zero3' for a class code; 'dp' for 0."""
    return "+".join(k for i, k in enumerate(FEATURES) if int(code) >> i & 1) or "dp"


def code_of(name: str) -> int:
    return sum(1 << FEATURES.index(k) for k in name.split("+") if k != "dp")


def layout_class(tp, pp, cp, n_experts, zero_stage, offload, dp_replicate) -> np.ndarray:
    """The layout class of each row, as names (see the module docstring)."""
    code = class_code(tp, pp, cp, n_experts, zero_stage, offload, dp_replicate)
    names = {int(k): class_name(k) for k in np.unique(code)}
    return np.vectorize(names.__getitem__, otypes=[object])(code) if code.ndim else np.asarray(names[int(code)])


def class_of(inputs: dict) -> str:
    """The layout class of one point given as inputs (defaults: the schema's)."""
    return str(layout_class(inputs.get("tp", 1), inputs.get("pp", 1), inputs.get("cp", 1),
                            inputs.get("n_experts", 1), inputs.get("zero_stage", 1), inputs.get("offload", "none"),
                            inputs.get("dp_replicate", 1)))


@lru_cache(maxsize=1)
def validated_rows() -> tuple:
    """data/validated.csv rows: (framework, layout_class, runs, families, params_min, params_max, seq_min,
    seq_max)."""
    path = DATA_DIR / "validated.csv"
    if not path.exists():
        return ()
    with open(path, newline="") as fh:
        return tuple((r["framework"], r["layout_class"], int(r["runs"]), tuple(r["families"].split()),
                      float(r["params_min"]), float(r["params_max"]), float(r["seq_min"]), float(r["seq_max"]))
                     for r in csv.DictReader(fh))


def validated(framework, code, family_index, n_params, seq_len, rows=None) -> np.ndarray:
    """True where published runs of the framework validate the row's layout class (`class_code`), chip family (its
    index in core.hardware.family_names()), size and sequence length; `rows`, a region in `validated_rows`' form,
    stands for data/validated.csv (bench/fit_profiles.py's nested check builds one without each source)."""
    from .hardware import family_names
    fams = family_names()
    fw = np.asarray(framework)
    cl, fam = np.asarray(code), np.asarray(family_index)
    N, s = np.asarray(n_params, dtype=np.float64), np.asarray(seq_len, dtype=np.float64)
    shape = np.broadcast_shapes(fw.shape, cl.shape, fam.shape, N.shape, s.shape)
    ok = np.zeros(shape, dtype=bool)
    present = set(fw.ravel().tolist()) if fw.ndim == 0 or fw.size <= 64 else set(np.unique(fw).tolist())
    codes = set(np.unique(cl).tolist())
    for f, c, runs, fam_names, pmin, pmax, smin, smax in (validated_rows() if rows is None else rows):
        cc = code_of(c)
        if runs < MIN_RUNS or f not in present or cc not in codes:
            continue
        idx = [fams.index(x) for x in fam_names if x in fams]
        ok = ok | ((fw == f) & (cl == cc) & VE.isin(fam, idx) & (N >= pmin / SIZE_SPAN) & (N <= pmax * SIZE_SPAN)
                   & (s >= smin / SEQ_SPAN) & (s <= smax * SEQ_SPAN))
    return ok


@lru_cache(maxsize=1)
def recipe_interval_rows() -> dict:
    """data/recipe_intervals.csv as {(framework, kind): (low, high)} (empty when the file is absent)."""
    path = DATA_DIR / "recipe_intervals.csv"
    if not path.exists():
        return {}
    with open(path, newline="") as fh:
        return {(r["framework"], r["kind"]): (float(r["interval_low"]), float(r["interval_high"]))
                for r in csv.DictReader(fh)}


def interval_slope() -> float:
    """How fast an interval's log-width grows with the step's overhead share (data/fitted.csv `all, interval_slope`,
    fitted by bench/fit_profiles.py; 0, a constant width, before any fit)."""
    return float(PF.fitted_rows().get(("all", "interval_slope"), (0.0, ""))[0])


def overhead_share(compute_s, step_time_s) -> np.ndarray:
    """u = 1 − compute_s / step_time_s: the share of the predicted step outside the GEMMs and the attention core
    (memory-bound kernels, recompute, communication, bubble, optimizer, offload, host), in [0, 1]."""
    c, s = np.asarray(compute_s, dtype=np.float64), np.asarray(step_time_s, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = 1.0 - c / s
    return np.clip(np.where(np.isfinite(u), u, 0.0), 0.0, 1.0)


def width_factor(overhead, slope=None) -> np.ndarray:
    """1 + slope · u: the factor on a row's log-bounds for its overhead share u (module docstring); `slope` the fitted
    interval_slope unless given (bench/fit_profiles.py tries its own)."""
    b = interval_slope() if slope is None else slope
    return 1.0 + b * np.asarray(overhead, dtype=np.float64)


def bounds(framework, is_validated, interval_low=0.0, interval_high=0.0, moe=False, lowp=False,
           overhead=0.0) -> tuple:
    """(low, high): the step time's 80 % interval as ratios to the predicted step, per row. The profile's
    leave-one-source-out percentiles, their logs × `width_factor` of the row's overhead share (`overhead_share`),
    widened off the validated region; for MoE rows (`moe`) and low-precision dense rows (`lowp`) the recipe table's
    spread where one covers the framework, × the same factor (module docstring); a calibration's (interval_low/high >
    0) replaces either. Always low ≤ 1 ≤ high."""
    # in logs throughout, one exp per bound at the end (the sweep evaluates this for every row)
    k = width_factor(overhead)
    ll = k * np.log(np.minimum(PF.number(framework, "interval_low"), 1.0))
    hh = k * np.log(np.maximum(PF.number(framework, "interval_high"), 1.0))
    v = np.asarray(is_validated, dtype=bool)
    if not np.all(v):
        ll = np.where(v, ll, np.minimum(WIDEN * ll, np.log(FLOOR[0])))
        hh = np.where(v, hh, np.maximum(WIDEN * hh, np.log(FLOOR[1])))
    kinds = {"moe": np.asarray(moe, dtype=bool), "lowp": np.asarray(lowp, dtype=bool) & ~np.asarray(moe, dtype=bool)}
    fw = None
    for (f, name), (rlo, rhi) in recipe_interval_rows().items():
        sel = kinds.get(name)
        if sel is None or not np.any(sel):  # a sweep's chunk mostly has neither: skip the string compare
            continue
        fw = np.asarray(framework) if fw is None else fw
        use = sel & (fw == f)
        ll = np.where(use, k * np.log(min(rlo, 1.0)), ll)
        hh = np.where(use, k * np.log(max(rhi, 1.0)), hh)
    lo, hi = np.exp(ll), np.exp(hh)
    cal_lo, cal_hi = np.asarray(interval_low, dtype=np.float64), np.asarray(interval_high, dtype=np.float64)
    cal = (cal_lo > 0) & (cal_hi > 0)
    return np.where(cal, np.minimum(cal_lo, 1.0), lo), np.where(cal, np.maximum(cal_hi, 1.0), hi)
