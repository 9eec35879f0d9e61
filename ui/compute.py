"""Cached wrappers around `core`: every number the pages draw comes from here, as tidy DataFrames with SI column
names (`_bytes`, `_flops`, `_s`, `_usd`, `_frac`). No Streamlit widgets; the caches are bounded.

Grids (the fit map, the activation curves, time & cost) call `core.estimate.evaluate` once with array columns —
the same vectorised function a million-row sweep uses — rather than looping over configurations.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd
import streamlit as st

from core import advisor, grid as G, limits as core_limits, memory as M
from core import plan as core_plan
from core.record import FIT_STATUS, STEP_PART_WORDS, STEP_PARTS, TOTAL_PARTS, fit_status
from core.grid import pareto_mask  # noqa: F401  (the frames' Pareto mask lives in core)
from core import roofline as R
from core.estimate import Config, activation_ledger, config_from_inputs, estimate
from core.hardware import catalog, get_accelerator, peak_or_nan
from core.model import get_preset, preset_info, preset_names
from core.tables import DTYPE_BYTES, DTYPES

# every cache bounded in entries, bytes and age (and all of them together by server.maxCacheDataSize, config.toml);
# a Config is keyed by its repr (every field, the model's and the accelerator's included): Streamlit's own hashing
# walks the nested dataclasses and took ~45 ms of a Calculator rerun
_KEYS = {Config: repr}
CACHE = dict(max_entries=256, max_size="32MB", ttl=1800, show_spinner=False, hash_funcs=_KEYS)
SMALL = dict(max_entries=64, max_size="32MB", ttl=1800, show_spinner=False, hash_funcs=_KEYS)

# Parts of the per-GPU total, in drawing order (the record's column names without `_bytes`).
PARTS = tuple(p.removesuffix("_bytes") for p in TOTAL_PARTS)  # core/record.py declares them
MODES = ("none", "selective", "flash", "full")  # activation modes drawn on the Activations page


def build_config(inputs: dict) -> Config:
    """A validated Config from the flat input vocabulary; raises ValueError naming the field."""
    return config_from_inputs(**inputs)


@st.cache_data(**CACHE)
def record(cfg: Config) -> dict:
    return estimate(cfg)


@st.cache_data(**{**SMALL, "max_entries": 128})
def advice(cfg: Config, margin="realistic", knobs: tuple = advisor.KNOBS) -> dict:
    """`core.advisor.advise`: the ranked options that fit with the margin, using only the `knobs` a page can set."""
    return advisor.advise(cfg, margin=margin, knobs=knobs)


@st.cache_data(**{**SMALL, "max_entries": 128})
def limits(cfg: Config) -> dict:
    return core_limits.limits(cfg)


@st.cache_data(**CACHE)
def ledger(cfg: Config) -> pd.DataFrame:
    """Per-layer activation ledger (one row per tensor) with the whole-stack bytes and each tensor's share."""
    df = pd.DataFrame(activation_ledger(cfg))
    if df.empty:
        return pd.DataFrame(columns=["tensor", "bytes", "what", "kept_by", "share_frac"])
    df = df.rename(columns={"bytes": "bytes_per_layer"})
    df["share_frac"] = df["bytes_per_layer"] / df["bytes_per_layer"].sum()
    return df.sort_values("bytes_per_layer", ascending=False, kind="stable").reset_index(drop=True)


def memory_parts(rec: dict) -> pd.DataFrame:
    """The stacked-bar data: one row per part with its bytes per GPU (zero parts kept so colours stay stable)."""
    rows = [{"part": p, "bytes": float(rec[f"{p}_bytes"])} for p in PARTS]
    df = pd.DataFrame(rows)
    df["start_bytes"] = df["bytes"].cumsum() - df["bytes"]
    df["end_bytes"] = df["bytes"].cumsum()
    df["gpu_memory_bytes"] = float(rec["gpu_memory_bytes"])
    df["fragmentation_bytes"] = float(rec.get("fragmentation_bytes", 0.0))  # of the overhead: a risk, not a need
    return df


# ---------------------------------------------------------------------------------------------------------------
# Grids: one vectorised `evaluate` over the cartesian product of some inputs
# ---------------------------------------------------------------------------------------------------------------

def evaluate_grid(cfg: Config, axes: dict[str, Iterable]) -> pd.DataFrame:
    """Evaluate `cfg` over the cartesian product of `axes` (input name -> values) on the core's one grid path
    (`core.grid`, the sweep engine's). Axis 'model' takes preset names and 'gpu' catalog names; any other axis is
    an input column of `evaluate` (seq_len, n_gpus, zero_stage, mfu, recompute, ...). Returns the axes plus every
    record column; invalid rows keep valid=False and a reason."""
    names = list(axes)
    values = [list(v) for v in axes.values()]
    if any(not v for v in values):
        return pd.DataFrame(columns=names)
    reasons = G.Reasons()
    grid_axes = []
    for name, vals in zip(names, values):
        if name == "model":
            grid_axes.append(G.model_axis([get_preset(v) for v in vals], vals, reasons))
        elif name == "gpu":
            grid_axes.append(G.gpu_axis([get_accelerator(v) for v in vals], vals, [cfg.compute_dtype] * len(vals),
                                        reasons, price_given=cfg.price_per_gpu_hour is not None))
        else:
            grid_axes.append(G.plain_axis(name, vals))
    out, shape, _ = G.evaluate_box(cfg.columns(), grid_axes, reasons=reasons)
    df = pd.DataFrame({k: G.flat(v, shape) for k, v in out.items()})
    position = np.unravel_index(np.arange(len(df)), shape)
    for i, (n, vals) in enumerate(zip(names, values)):
        df.insert(i, n if n not in df.columns else f"{n}_axis", np.asarray(vals, dtype=object)[position[i]])
    return df


FIT_TP = (1, 2, 4, 8)  # tensor-parallel degrees the fit map tries per cell (one node's worth)
FIT_PP = (1, 2, 4, 8, 16, 32)  # pipeline degrees it tries


@st.cache_data(**SMALL)
def fit_models_by_gpus(cfg: Config, models: tuple[str, ...], gpu_counts: tuple[int, ...],
                       search_layouts: bool = False) -> pd.DataFrame:
    """Model size × GPU count: per-GPU total / capacity and the binding term, for the fit map. With
    `search_layouts` each cell takes its best layout over tp ∈ FIT_TP × pp ∈ FIT_PP (the valid one with the
    lowest per-GPU total ÷ capacity), and tp/pp are columns; otherwise the configuration's own tp and pp."""
    axes = {"model": models, "n_gpus": gpu_counts}
    if search_layouts:
        axes.update(tp=FIT_TP, pp=FIT_PP)
    df = evaluate_grid(cfg, axes)
    if search_layouts:
        fill = np.where(df["valid"], df["total_bytes"] / df["gpu_memory_bytes"], np.inf)
        df = (df.assign(_fill=fill).sort_values(["model", "n_gpus", "_fill", "tp", "pp"], kind="stable")
              .drop_duplicates(["model", "n_gpus"]).drop(columns="_fill"))
    df["label"] = [preset_info(m)["label"] for m in df["model"]]
    df["n_params"] = [get_preset(m).n_params for m in df["model"]]
    out = _fit_columns(df)
    if search_layouts:
        out.insert(out.columns.get_loc("n_gpus") + 1, "tp", df["tp"].to_numpy())
        out.insert(out.columns.get_loc("tp") + 1, "pp", df["pp"].to_numpy())
    return out


@st.cache_data(**SMALL)
def fit_seq_by_batch(cfg: Config, seq_lens: tuple[int, ...], micro_batches: tuple[int, ...]) -> pd.DataFrame:
    df = evaluate_grid(cfg, {"seq_len": seq_lens, "micro_batch": micro_batches})
    return _fit_columns(df)


def _fit_columns(df: pd.DataFrame) -> pd.DataFrame:
    df["fill_frac"] = df["total_bytes"] / df["gpu_memory_bytes"]
    df["status"] = np.where(~df["valid"], "invalid", fit_status(df["fits"], df["headroom_bytes"]))
    keep = [c for c in ("model", "label", "n_params", "n_gpus", "seq_len", "micro_batch") if c in df.columns]
    keep += ["valid", "reason", "fits", "status", "binding", "fill_frac", "total_bytes", "gpu_memory_bytes",
             "state_bytes", "activations_bytes", "logits_bytes", "headroom_bytes"]
    return df[keep].reset_index(drop=True)


MFU_STEPS = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)


def current_mfu(cfg: Config) -> float:
    """The MFU the configuration's time uses: the given one, or the predicted step's when mfu is "auto"."""
    return record(cfg)["predicted_mfu"] if cfg.mfu == "auto" else cfg.mfu


@st.cache_data(**SMALL)
def mfu_sensitivity(cfg: Config, mfus: tuple[float, ...] = MFU_STEPS) -> pd.DataFrame:
    """Days and cost at each MFU of `mfus` and at the configuration's own MFU (always one of the rows)."""
    df = evaluate_grid(cfg, {"mfu": tuple(sorted(set(mfus) | {current_mfu(cfg)}))})
    return df[["mfu", "time_s", "days", "gpu_hours", "cost_usd"]].rename(columns={"mfu": "mfu_frac"})


# ---------------------------------------------------------------------------------------------------------------
# Activations vs sequence length
# ---------------------------------------------------------------------------------------------------------------

def _mode_overrides(mode: str) -> dict:
    return {"none": {"recompute": "none", "flash_attention": False},
            "selective": {"recompute": "selective", "flash_attention": False},
            "flash": {"recompute": "none", "flash_attention": True},
            "full": {"recompute": "full", "flash_attention": False}}[mode]


@st.cache_data(**SMALL)
def activation_curves(cfg: Config, seq_lens: tuple[int, ...]) -> pd.DataFrame:
    """Per-GPU memory against sequence length for each activation mode: state + activations + logits."""
    frames = []
    for mode in MODES:
        over = _mode_overrides(mode)
        df = evaluate_grid(cfg, {"seq_len": seq_lens, **{k: (v,) for k, v in over.items()}})
        df["mode"] = mode
        frames.append(df[["mode", "seq_len", "valid", "total_bytes", "state_bytes", "activations_bytes",
                          "logits_bytes", "gpu_memory_bytes", "fits"]])
    return pd.concat(frames, ignore_index=True)


def _layer_ledger(cfg: Config, seq_len, recompute: str, flash: bool) -> dict:
    return M.ledger(cfg.columns(), seq_len=seq_len, recompute=recompute, flash_attention=flash)


@st.cache_data(**SMALL)
def block_parts(cfg: Config, seq_lens: tuple[int, ...]) -> pd.DataFrame:
    """One layer's activation bytes per GPU by part of the block, against sequence length (no recomputation,
    no flash: the ledger that the modes then cut)."""
    s = np.asarray(seq_lens, dtype=np.float64)
    led = _layer_ledger(cfg, s, "none", False)
    rows = []
    for group, names in M.LEDGER_GROUPS.items():
        total = sum(np.broadcast_to(led[n], s.shape) for n in names if n in led)
        for x, v in zip(seq_lens, total):
            rows.append({"part": group, "seq_len": int(x), "bytes_per_layer": float(v)})
    df = pd.DataFrame(rows)
    return df[df.groupby("part")["bytes_per_layer"].transform("max") > 0].reset_index(drop=True)


def quadratic_crossover(cfg: Config) -> float:
    """This block's s* (`core.memory.quadratic_crossover_seq_len`): where the s² attention scores equal the rest
    of one layer's ledger; NaN when the block stores no s² tensor."""
    m = cfg.model
    return float(M.quadratic_crossover_seq_len(cfg.micro_batch, m.d_model, m.n_heads, m.n_kv_heads, m.d_ff, m.mlp,
                                               m.norm, m.dropout, cfg.tp, cfg.sequence_parallel, cfg.resolved_profile,
                                               n_experts=m.n_experts, top_k=m.top_k))


# ---------------------------------------------------------------------------------------------------------------
# Roofline
# ---------------------------------------------------------------------------------------------------------------

ROOFLINE_DTYPES = tuple(d for d in DTYPES if d != "fp16")  # fp16 runs at the bf16 rate (core/tables.py)


def roof_rows(gpus: tuple, dtype: str, custom: tuple | None) -> tuple[list, list]:
    """(name, peak for the dtype, bandwidth) per chosen accelerator — the core's one peak lookup — and the names
    with no peak for that dtype (left out). `custom` is the typed row for "custom"."""
    rows, skipped = [], []
    for name in gpus:
        if name == "custom":
            rows.append(custom)
            continue
        g = catalog()[name]
        peak = peak_or_nan(g, dtype)
        if peak == peak:
            rows.append((name, peak, g.memory_bandwidth_bytes_per_s))
        else:
            skipped.append(name)
    return rows, skipped


OP_LABELS = {
    "qkv_proj": "QKV projection", "attn_scores_qk": "attention QKᵀ (no flash)", "attn_softmax": "softmax (no flash)",
    "attn_av": "attention AV (no flash)", "attn_flash": "attention (flash, fused)", "out_proj": "output projection",
    "mlp": "MLP matmuls", "norm": "norm (elementwise)", "decode_matvec": "decode: weights × one token",
    "seed_matmul": "example: 1024² × 1024² matmul", "seed_matvec": "example: 1024² matrix × vector",
    "seed_relu": "example: ReLU on 1024²",
}


def roof_curves(gpus: tuple, dtype: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Roof lines (dense logspace in intensity) and ridge points for accelerators given as
    (name, peak_flops_per_s, bandwidth_bytes_per_s) tuples."""
    ai = np.logspace(-2, 4.5, 240)
    roofs, ridges = [], []
    for name, peak, bw in gpus:
        r = R.roofline(ai, 1.0, peak, bw)
        roofs.append(pd.DataFrame({"gpu": name, "arithmetic_intensity": ai,
                                   "attainable_flops_per_s": r["attainable_flops_per_s"]}))
        ridges.append({"gpu": name, "ridge_intensity": float(r["ridge_intensity"][0]), "peak_flops_per_s": peak,
                       "bandwidth_bytes_per_s": bw, "dtype": dtype})
    return pd.concat(roofs, ignore_index=True), pd.DataFrame(ridges)


@st.cache_data(**SMALL)
def roofline_ops(model_inputs: tuple, seq_len: int, micro_batch: int, dtype: str, gpu: tuple,
                 seeds: bool = True) -> pd.DataFrame:
    """Ops of one layer at seq_len × micro_batch tokens per step (and the seeds' three examples) on one
    accelerator (name, peak, bandwidth): intensity, attainable FLOP/s, time, bound."""
    m = config_from_inputs(**dict(model_inputs)).model
    p = float(DTYPE_BYTES[dtype])
    ops = list(R.layer_ops(seq_len, micro_batch, m.d_model, m.n_heads, m.n_kv_heads, m.d_ff, m.mlp, p))
    kinds = ["model"] * len(ops)
    if seeds:
        ops += [("seed_matmul",) + R.matmul_cost(1024, 1024, 1024, p), ("seed_matvec",) + R.matvec_cost(1024, 1024, p),
                ("seed_relu",) + R.elementwise_cost(1024, 1024, p)]
        kinds += ["seed"] * 3
    name, peak, bw = gpu
    rows = []
    for (op, fl, by), kind in zip(ops, kinds):
        r = R.roofline(fl, by, peak, bw)
        rows.append({"n": len(rows) + 1, "op": op, "label": OP_LABELS.get(op, op), "kind": kind, "gpu": name,
                     **{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()}})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------------------------
# Time & cost
# ---------------------------------------------------------------------------------------------------------------

# the Time & cost page's GPU counts: 1, 2, 4, then whole 8-GPU nodes at 1 and 1.5 × powers of two up to 65,536
TIME_COST_COUNTS = tuple(sorted({1, 2, 4} | {n for k in range(14) for n in (8 << k, 12 << k) if n <= 65_536 and n % 8 == 0}))


@st.cache_data(**SMALL)
def time_cost(cfg: Config, gpus: tuple[str, ...], counts: tuple[int, ...]) -> pd.DataFrame:
    """Days and cost for every accelerator × count: each point at its own predicted step (at the configuration's
    global batch rule: more GPUs mean fewer micro-batches each), or at the configuration's MFU override — the one time
    figure every page uses. Rows that do not fit, or whose accelerator lacks a price or a peak for the compute dtype,
    are kept with fits=False / NaN cost and a reason. Here `fits` is what a recommendation needs: the total with the
    counted overhead fits (headroom ≥ 0); a setup that fits only without the allocator's fragmentation is `tight`
    (and out of the frontier and the answers)."""
    df = evaluate_grid(cfg, {"gpu": gpus, "n_gpus": counts})
    mfu = "predicted_mfu" if cfg.mfu == "auto" else None
    out = df[["gpu", "n_gpus", "valid", "reason", "fits", "total_bytes", "gpu_memory_bytes", "gpu_hours",
              "binding", "days", "cost_usd", "predicted_mfu", "predicted_step_time_s", "global_batch",
              "time_source", "days_low", "days_high", "cost_low_usd", "cost_high_usd", "validated",
              "days_with_failures", "cost_with_failures_usd", "goodput_frac"]].copy()
    status = fit_status(df["fits"], df["headroom_bytes"])
    out["tight"] = status == FIT_STATUS[1]
    out["fits"] = status == FIT_STATUS[0]
    out["label"] = [catalog()[g].label for g in out["gpu"]]
    out["mfu_frac"] = out["predicted_mfu"] if mfu else cfg.mfu
    out["on_frontier"] = pareto_mask(out["days"].to_numpy(), out["cost_usd"].to_numpy(),
                                     (out["fits"] & out["valid"]).to_numpy())
    return out.reset_index(drop=True)


def constrained_answers(df: pd.DataFrame, max_days: float | None, max_usd: float | None) -> dict:
    """The Time & cost page's direct answers (issue 20): among the points that fit and have a price, the cheapest
    within the deadline and the fastest within the budget (both with failures, core/goodput.py), and how many points
    each constraint leaves out."""
    ok = df[df["fits"] & df["valid"] & df["cost_usd"].notna()]
    within = ok
    out = {"late": 0, "dear": 0}
    if max_days is not None:
        out["late"] = int((ok["days_with_failures"] > max_days).sum())
        within = within[within["days_with_failures"] <= max_days]
    if max_usd is not None:
        out["dear"] = int((ok["cost_with_failures_usd"] > max_usd).sum())
        within = within[within["cost_with_failures_usd"] <= max_usd]
    out["cheapest"] = within.sort_values("cost_with_failures_usd").head(1).to_dict("records")
    out["fastest"] = within.sort_values("days_with_failures").head(1).to_dict("records")
    out["n"] = len(within)
    return out


def left_out_words(left: pd.DataFrame) -> str:
    """Why the combinations left out of a chart are out, in words, most common first: "12 do not fit in memory, 4
    have no catalog price, 3: global_batch: must be a multiple of dp·micro_batch …"."""
    why = []
    for _, r in left.iterrows():
        if not r["valid"]:
            why.append(str(r["reason"]))
        elif r.get("tight", False):
            why.append("fit only tightly (without the allocator's fragmentation counted)")
        elif not r["fits"]:
            why.append("do not fit in memory")
        else:
            why.append("have no catalog price (type one)")
    counts = pd.Series(why).value_counts()
    return "; ".join(f"{n} {w}" if not w[:1].islower() or w.startswith(("do ", "have ", "fit ")) else f"{n}: {w}"
                     for w, n in counts.items())


def preset_sizes() -> list[tuple[str, float]]:
    """Preset names with their parameter counts, smallest first."""
    return sorted(((n, get_preset(n).n_params) for n in preset_names()), key=lambda x: x[1])


@st.cache_data(**SMALL)
def max_seq_by_mode(cfg: Config) -> pd.DataFrame:
    """The longest sequence that fits under each activation mode (`core.limits.max_seq_len`, solved)."""
    rows = []
    for mode in MODES:
        c = cfg.replace(**_mode_overrides(mode))
        rows.append({"mode": mode, "max_seq_len": core_limits.max_seq_len(c)})
    return pd.DataFrame(rows)


@st.cache_data(**{**SMALL, "max_entries": 16})
def measured(cfg: Config, dropout_impl: str, whole_model: bool) -> dict:
    """`core.measure.compare_isolated` on CPU (seconds; the size cap applies): a child process with capped memory,
    so this server never imports torch and its memory comes back when the child exits. Cached per configuration."""
    from core import measure
    return measure.compare_isolated(cfg, dropout_impl=dropout_impl, whole_model=whole_model)


# ---------------------------------------------------------------------------------------------------------------
# Parallel layout (core/plan.py) and the predicted step
# ---------------------------------------------------------------------------------------------------------------

LAYOUT_COLUMNS = ("n_gpus", "tp", "pp", "cp", "ep", "virtual_stages", "micro_batch", "zero_stage", "recompute",
                  "sequence_parallel", "dp")


def plan_work(inputs: tuple, n_gpus: tuple):
    """What the layout search for these inputs costs (`core.work.plan_work`), known before it runs; ValueError
    names the field when the inputs cannot be searched."""
    from core.work import plan_work as _plan_work
    return _plan_work(core_plan.plan_spec(dict(inputs), n_gpus).n_rows)


@st.cache_data(max_entries=32, max_size="16MB", ttl=1800, show_spinner="Searching the layouts…")
def plan_layouts(inputs: tuple, n_gpus: tuple, objective: str, top: int) -> dict:
    """The layout search for the flat inputs (a sorted tuple of items): {"top": DataFrame best first,
    "by_tp_pp": DataFrame, counts}. Each row carries the whole record (`core.plan.plan`). It runs in the sweeps'
    queue (`SweepStore.run_work`): one large job at a time on the server, whoever started it."""
    from . import sweeps
    rows = core_plan.plan_spec(dict(inputs), n_gpus).n_rows
    res = sweeps.store().run_work(rows, sweeps.session_id(),
                                  lambda: core_plan.plan(dict(inputs), n_gpus, objective, top))
    top_df = pd.DataFrame(res["strategies"])
    if not top_df.empty:
        top_df.insert(0, "layout", [core_plan.layout_label(r) for _, r in top_df.iterrows()])
    return {"top": top_df, "by_tp_pp": pd.DataFrame(res["by_tp_pp"]), "searched": res["searched"],
            "valid": res["valid"], "fit": res["fit"], "global_batch": res["global_batch"],
            "best_validated": res.get("best_validated")}


def calibration(inputs: dict, step_time_s: float, global_batch: int) -> dict:
    """core/calibrate.py's fit of one measured step of this configuration: the inputs that calibrate every
    prediction (efficiency_scale, network_scale, interval_low/high) and its report."""
    from core import calibrate as CAL
    run = {k: v for k, v in inputs.items() if v is not None and k not in ("target_batch_tokens", "mfu")}
    return CAL.fit([{**run, "global_batch": int(global_batch), "step_time_s": float(step_time_s)}])


@st.cache_data(**SMALL)
def budget(usd: float, days: float, gpus: tuple, tokens_per_param: float | None) -> dict:
    """core/budget.py's answer for the page (about a second for every priced accelerator; cached per question)."""
    from core.budget import plan_budget
    return plan_budget(usd=usd, days=days, gpus=gpus or None, tokens_per_param=tokens_per_param)


def budget_table(res: dict) -> pd.DataFrame:
    """The answer and its alternatives, one row each (the page's table and chart)."""
    rows = ([res["best"]] if res["best"] else []) + list(res["alternatives"])
    return pd.DataFrame([{"accelerator": r["gpu"], "GPUs": r["n_gpus"], "parameters (B)": r["n_params"] / 1e9,
                          "tokens (T)": r["tokens"] / 1e12, "tokens per parameter": r["tokens_per_param"],
                          "Chinchilla loss": r["loss"], "MFU": r["predicted_mfu"], "goodput": r["goodput_frac"],
                          "days with failures": r["days_with_failures"],
                          "cost with failures (USD)": r["cost_with_failures_usd"],
                          "layout": ", ".join(f"{k} {v}" for k, v in r["layout"].items()),
                          "validated": r["validated"]} for r in rows])


def step_table(rec: dict) -> pd.DataFrame:
    """The predicted step of one record as rows: part, seconds, share of the step, meaning."""
    total = rec["predicted_step_time_s"]
    return pd.DataFrame([{"part": k[:-2].replace("_", " "), "seconds": rec[k], "share_frac": rec[k] / total,
                          "what": STEP_PART_WORDS[k]} for k in STEP_PARTS if rec[k] > 0])
