"""Limits, solved rather than scanned: the largest sequence length, the largest micro-batch, the fewest GPUs (per
ZeRO stage) and the largest model of a shape family that fit one GPU's memory — with the overhead the setup counts
(headroom ≥ 0): a value where the run fits only tightly, without the allocator's fragmentation, is past the limit.

Per-GPU memory is non-decreasing in seq_len (at most quadratic), micro_batch and n_layers, and non-increasing in
the data-parallel degree, so each limit is an integer bisection over `evaluate` (≈ 25 evaluations each).
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from .estimate import Config, evaluate
from .model import raw_model
from .record import FIT_STATUS, fit_status

HI = 1 << 24  # search ceiling: 16.7M tokens, sequences, layers or data-parallel ranks


def _fits(cfg: Config, **over) -> np.ndarray:
    """Fits with the overhead the setup counts (headroom ≥ 0): a limit is a value a run can be planned at, so a setup
    that fits only tightly (without the allocator's fragmentation: core/memory.fragmentation_bytes) is past it."""
    cols = cfg.columns()
    cols.update(over)
    if cols.get("optimizer_in_backward"):  # no accumulation there: the global batch follows dp·micro_batch, the
        cols["global_batch"] = None  # default estimate.derived_columns gives under the flag
    out = evaluate(**cols)
    return fit_status(out["fits"], out["headroom_bytes"]) == FIT_STATUS[0]


def _max_true(pred, lo: int, hi: int) -> int:
    """Largest x in [lo, hi] with pred(x) true, assuming pred is true then false; lo-1 if pred(lo) is false."""
    if not pred(lo):
        return lo - 1
    if pred(hi):
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pred(mid):
            lo = mid
        else:
            hi = mid
    return lo


def max_seq_len(cfg: Config, multiple_of: int = 1) -> int:
    """Largest sequence length (a multiple of `multiple_of`) that fits; 0 if even one token does not."""
    m = max(int(multiple_of), 1)
    k = _max_true(lambda x: bool(_fits(cfg, seq_len=x * m)), 1, HI // m)
    return max(k, 0) * m


def max_micro_batch(cfg: Config) -> int:
    """Largest micro-batch (sequences per GPU per step) that fits; 0 if none does."""
    return max(_max_true(lambda x: bool(_fits(cfg, micro_batch=x)), 1, HI), 0)


def min_gpus(cfg: Config, zero_stage: int | None = None) -> int | None:
    """Fewest GPUs (a multiple of tp·pp) for which the setup fits, at the given ZeRO stage (the config's by
    default). Stage 0 replicates state, so more GPUs never help: None unless it fits with tp·pp GPUs."""
    z = cfg.zero_stage if zero_stage is None else zero_stage
    mp = cfg.tp * cfg.pp
    pred = lambda d: bool(_fits(cfg, zero_stage=z, n_gpus=d * mp))  # noqa: E731
    if not pred(1):
        if z == 0 or not pred(HI):
            return None
        # smallest d that fits = (largest d that does not) + 1
        d = _max_true(lambda x: not pred(x), 1, HI) + 1
        return d * mp
    return mp


def min_gpus_by_stage(cfg: Config) -> dict[int, int | None]:
    return {z: min_gpus(cfg, z) for z in (0, 1, 2, 3)}


def max_n_layers(cfg: Config) -> int:
    """Largest depth (n_layers, the rest of the shape fixed) that fits — the 'depth' shape family. Raw-N models
    are re-priced from their shape for this search, and split evenly over the stages (a pipeline layout names its
    layers: it cannot hold another depth). Returns 0 if one layer does not fit."""
    base = replace(cfg.model, n_params_override=0.0)
    mult = max(cfg.pp, 1)

    def pred(k: int) -> bool:
        m = replace(base, n_layers=k * mult)
        return bool(_fits(cfg, n_layers=k * mult, n_params=m.n_params, n_active_params=m.n_active_params,
                          pp_layout=""))
    return max(_max_true(pred, 1, 1 << 16), 0) * mult


def max_n_params(cfg: Config) -> float | None:
    """Largest raw parameter count (raw-N mode, GPT-3 Table 2.1 shapes for the activations) that fits, found by
    bisection on a 0.1% grid in log space from 1M to 1e15 parameters. Only counts whose stand-in shape works with
    the setup's tp and pp are searched (tp must divide the shape's heads, pp at most its layers). Returns 0.0 if
    the smallest such count does not fit, None if no stand-in shape works with this tp/pp."""
    grid = np.exp(np.linspace(np.log(1e6), np.log(1e15), 20000))
    from .model import GPT3_SHAPES, Model
    own = np.array([Model(n_layers=L, d_model=h, n_heads=a).n_params for _, L, h, a in GPT3_SHAPES])
    nearest = np.argmin(np.abs(np.log(own)[None, :] - np.log(grid)[:, None]), axis=1)
    ok_shape = np.array([a % cfg.tp == 0 and cfg.tp <= a and cfg.pp <= L for _, L, h, a in GPT3_SHAPES])
    idx = np.flatnonzero(ok_shape[nearest])
    if idx.size == 0:
        return None

    def pred(j: int) -> bool:
        m = raw_model(float(grid[idx[j]]))
        cols = cfg.columns()
        cols.update(m.arch())
        cols.update(n_params=m.n_params, n_active_params=m.n_active_params)
        return bool(evaluate(**cols)["fits"])
    j = _max_true(pred, 0, idx.size - 1)
    return float(grid[idx[j]]) if j >= 0 else 0.0


# what each limit means and its unit, for the CLI and the app (a limit of 0, or None for a GPU count, means even the
# smallest value does not fit)
LIMIT_WORDS = {
    "max_seq_len": ("longest sequence", "tokens"),
    "max_micro_batch": ("largest micro-batch", "sequences"),
    "min_gpus": ("fewest GPUs (this ZeRO stage)", "GPUs"),
    "min_gpus_zero0": ("fewest GPUs at ZeRO-0", "GPUs"),
    "min_gpus_zero1": ("fewest GPUs at ZeRO-1", "GPUs"),
    "min_gpus_zero2": ("fewest GPUs at ZeRO-2", "GPUs"),
    "min_gpus_zero3": ("fewest GPUs at ZeRO-3", "GPUs"),
    "max_n_layers": ("most layers (this width)", "layers"),
    "max_n_params": ("largest model (GPT-3 shapes)", "parameters"),
}


def limits(cfg: Config) -> dict:
    """All limits for one setup, in the record vocabulary."""
    by_stage = min_gpus_by_stage(cfg)
    return {
        "max_seq_len": max_seq_len(cfg),
        "max_micro_batch": max_micro_batch(cfg),
        "min_gpus": by_stage[cfg.zero_stage],
        "min_gpus_zero0": by_stage[0],
        "min_gpus_zero1": by_stage[1],
        "min_gpus_zero2": by_stage[2],
        "min_gpus_zero3": by_stage[3],
        "max_n_layers": max_n_layers(cfg),
        "max_n_params": max_n_params(cfg),
    }


def min_gpus_state_only(cfg: Config, zero_stage: int | None = None) -> int | None:
    """Fewest GPUs whose memory holds the model state alone (no activations, logits or overhead) — seed 002's
    "min H100s (state only, ÷G)" column. Closed form: per GPU a stage's state is A + B/d, where B is what the ZeRO
    stage shards over the data-parallel degree d and A the rest, so d = ⌈B / (cap − A)⌉ for the busier of the
    first and last pipeline stages; n_gpus = d·tp·pp. None when even the unsharded part A does not fit."""
    from .estimate import adafactor_elements, stage_split
    from .memory import ZERO_SHARD_STAGE, state_bytes
    z = cfg.zero_stage if zero_stage is None else zero_stage
    c = cfg.columns()
    split = stage_split(c, cfg.pp)
    ada = adafactor_elements(c, split["shape_params"])
    cap = cfg.gpu.allocatable_bytes
    need = 1
    for stage in ("first_stage_params", "last_stage_params"):
        parts = state_bytes(c["n_params"], cfg.weight_dtype, cfg.grad_dtype, cfg.master_weights, cfg.grad_accum_fp32,
                            cfg.optimizer, 0, cfg.tp * cfg.pp, cfg.tp, cfg.pp, ada, split[stage])
        A = sum(float(v) for k, v in parts.items() if z < ZERO_SHARD_STAGE[k])
        B = sum(float(v) for k, v in parts.items() if z >= ZERO_SHARD_STAGE[k])
        if A + B <= cap:
            continue
        if A >= cap or B == 0:
            return None
        need = max(need, math.ceil(B / (cap - A) - 1e-12))
    return need * cfg.tp * cfg.pp
