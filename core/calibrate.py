"""Calibrate the step model from a user's own measured runs: refit the free constants for that framework and
hardware, and give the interval the user's residuals justify.

A calibration file is a JSON list of runs, each an object of planner inputs (model, gpu, framework, layout, …) with
one measurement: `step_time_s` (seconds per optimizer step, with `global_batch`) or `tokens_per_s` (whole job).
Every run must name the same framework and accelerator (a calibration is of one stack on one machine).

What is refitted: one factor on every kernel rate (GEMM, attention, HBM) and every link's bandwidth together
(`efficiency_scale` = `network_scale`) — the user's clocks, libraries, kernels and network against the published
constants — and, with three runs or more that differ in their communication, `network_scale` apart from it. Both are inputs of the schema
(core/inputs.py), so a calibrated prediction is reproducible from its inputs alone (a shared link carries them).
The interval: with three runs or more, the 10th–90th percentile of the leave-one-run-out ratios (at least
CAL_FLOOR either way); with fewer, the profile's calibrated interval — how well one run of a source predicts the
others of that source across data/published_runs.csv (bench/fit_profiles.py writes it as `calibrated_low/high`).
Without a calibration nothing changes (both factors 1, the profile's interval).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from . import inputs as I
from . import profiles as PF

EFF_GRID = np.exp(np.linspace(math.log(0.2), math.log(5.0), 161))
NET_GRID = np.exp(np.linspace(math.log(0.1), math.log(10.0), 41))
CAL_FLOOR = (0.97, 1.03)  # no calibration is trusted to better than ±3 % (decided: run-to-run noise)
MEASURED = ("step_time_s", "tokens_per_s")


def read(path: str | Path) -> list[dict]:
    """The runs of a calibration file (a JSON list of objects); errors name the run and the field."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"calibrate: cannot read {Path(path).name}: {e.__class__.__name__}") from None
    return check(data)


def check(data) -> list[dict]:
    if not isinstance(data, list) or not data:
        raise ValueError("calibrate: expected a JSON list of runs (objects of inputs with step_time_s or tokens_per_s)")
    out = []
    for i, r in enumerate(data, 1):
        if not isinstance(r, dict):
            raise ValueError(f"calibrate: run {i}: expected an object of inputs")
        given = [k for k in MEASURED if r.get(k) is not None]
        if len(given) != 1:
            raise ValueError(f"calibrate: run {i}: give exactly one of step_time_s, tokens_per_s")
        v = r[given[0]]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise ValueError(f"calibrate: run {i}: {given[0]} must be a positive number, got {v!r}")
        if given[0] == "step_time_s" and r.get("global_batch") is None:
            raise ValueError(f"calibrate: run {i}: step_time_s needs global_batch (sequences per step)")
        out.append(dict(r))
    out = [I.canonical_inputs(r) for r in out]  # a stack's name is its profile's (torchtitan: fsdp)
    for k in ("framework", "gpu"):
        vals = {str(r.get(k, I.BY_NAME[k].default)) for r in out}
        if len(vals) > 1:
            raise ValueError(f"calibrate: every run must have the same {k} (a calibration is of one stack on one "
                             f"machine); got {', '.join(sorted(vals))}")
    return out


def _configs(runs: list[dict]):
    from .estimate import config_from_inputs, estimate
    cfgs, meas = [], []
    for i, r in enumerate(runs, 1):
        inp = {k: v for k, v in r.items() if k not in MEASURED}
        for k in ("efficiency_scale", "network_scale", "interval_low", "interval_high"):
            inp.pop(k, None)
        try:
            cfg = config_from_inputs(**{**inp, "mfu": "auto"})
        except ValueError as e:
            raise ValueError(f"calibrate: run {i}: {e}") from None
        tokens_per_step = cfg.columns()["global_batch_used"] * cfg.seq_len
        step = r["step_time_s"] if r.get("step_time_s") is not None else float(tokens_per_step) / r["tokens_per_s"]
        rec = estimate(cfg)
        implied = float(rec["predicted_mfu"]) * float(rec["predicted_step_time_s"]) / step  # model FLOP/s ÷ peak
        if not implied <= 1.0:
            given = "step_time_s" if r.get("step_time_s") is not None else "tokens_per_s"
            raise ValueError(f"calibrate: run {i}: {given}: implies an MFU of {implied:.0%} (model FLOPs per second "
                             "above the accelerators' peak); check the measurement, global_batch and n_gpus")
        cfgs.append(cfg)
        meas.append(float(step))
    return cfgs, np.asarray(meas)


def _steps(cfgs, eff, net) -> np.ndarray:
    from .estimate import estimate
    return np.array([estimate(c.replace(efficiency_scale=float(eff), network_scale=float(net)))[
        "predicted_step_time_s"] for c in cfgs])


def fit(runs: list[dict]) -> dict:
    """The calibration of `runs` (see the module docstring): the inputs to apply and a report."""
    runs = check(runs)
    cfgs, meas = _configs(runs)
    fw = str(cfgs[0].columns()["framework"])
    two = len(runs) >= 3

    def loss(eff, net):
        return float(np.mean(np.log(meas / _steps(cfgs, eff, net)) ** 2))

    # one factor first, on the kernels and the links together (the machine and its stack as one: leave-one-source-out,
    # a source's runs share their error across compute- and communication-bound runs alike, bench/fit_profiles.py
    # "Calibration"); the step is nearly 1/factor: a coarse grid, then a refinement around the best
    best = min((loss(e, e), e) for e in EFF_GRID[::8])
    lo, hi = best[1] / 1.25, best[1] * 1.25
    best = min((loss(e, e), e) for e in np.exp(np.linspace(math.log(lo), math.log(hi), 25)))
    eff = net = best[1]
    if two:  # three runs or more: the links may differ from the kernels
        cand = min(((loss(eff, n), n) for n in NET_GRID[::4] * eff), key=lambda x: x[0])
        if cand[0] < best[0] * 0.98:  # the links explain something the kernels do not
            net = cand[1]
            best = min((loss(e, net), e) for e in np.exp(np.linspace(math.log(eff / 1.3), math.log(eff * 1.3), 25)))
            eff = best[1]
    ratios = meas / _steps(cfgs, eff, net)
    if len(runs) >= 3:  # leave one run out: refit the factor the fit above fitted without it, predict it
        link = (lambda e: net) if net != eff else (lambda e: e)  # the links apart, or with the kernels
        loo = []
        for i in range(len(runs)):
            keep = [j for j in range(len(runs)) if j != i]
            e_i = min((float(np.mean(np.log(meas[keep] / _steps([cfgs[j] for j in keep], e, link(e))) ** 2)), e)
                      for e in np.exp(np.linspace(math.log(eff / 1.3), math.log(eff * 1.3), 13)))[1]
            loo.append(meas[i] / _steps([cfgs[i]], e_i, link(e_i))[0])
        lq = np.log(loo)
        low, high = float(np.exp(np.quantile(lq, 0.10))), float(np.exp(np.quantile(lq, 0.90)))
        basis = f"the leave-one-run-out ratios of your {len(runs)} runs"
    else:
        low = float(PF.number(fw, "calibrated_low"))
        high = float(PF.number(fw, "calibrated_high"))
        basis = (f"how one run of a published source predicts its other runs ({fw}, bench/fit_profiles.py); "
                 "give three runs or more for your own")
    low, high = min(low, CAL_FLOOR[0]), max(high, CAL_FLOOR[1])
    return {"inputs": {"efficiency_scale": round(float(eff), 4), "network_scale": round(float(net), 4),
                       "interval_low": round(low, 4), "interval_high": round(high, 4)},
            "framework": fw, "gpu": cfgs[0].gpu.name, "runs": len(runs),
            "ratios": [round(float(x), 4) for x in ratios], "basis": basis}


def describe(cal: dict) -> str:
    """One paragraph for the CLI and the app."""
    i = cal["inputs"]
    if i["network_scale"] == i["efficiency_scale"]:
        rates = f"kernel, host and link rates × {i['efficiency_scale']:.3g}"
    else:
        rates = f"kernel and host rates × {i['efficiency_scale']:.3g}, link bandwidths × {i['network_scale']:.3g}"
    return (f"calibrated on {cal['runs']} measured run(s) of {cal['framework']} on {cal['gpu']}: {rates}; "
            f"80 % interval {i['interval_low']:.2f}–{i['interval_high']:.2f} × the "
            f"step ({cal['basis']}); measured / calibrated step of each run: "
            + ", ".join(f"{r:.3f}" for r in cal["ratios"]))
