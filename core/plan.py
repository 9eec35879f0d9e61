"""Layout search: every valid parallel layout of a model on N GPUs, ranked by predicted step time or cost.

`plan` builds one sweep (core/spec.py) whose axes are the layout choices — tensor, pipeline, context and expert
parallel degrees, interleaved virtual stages, micro-batch, ZeRO stage, recomputation and sequence parallelism —
around the fixed inputs (model, accelerator, sequence length, global batch, …), runs it on the sweep engine (the
same vectorised `evaluate` as one estimate, so every number equals `python -m core estimate` of that layout),
drops what the input rules refuse (a degree that does not divide, a global batch that is no multiple of
dp·micro_batch, …), keeps what fits with the headroom margin, and ranks the rest.

Candidate degrees: tp and cp powers of two up to 64 (tp ≤ n_heads), pp every divisor of n_gpus up to n_layers
(so 12 or 35 stages are tried where the GPU count allows), ep the powers of two dividing n_experts (MoE only),
virtual stages 1, 2, 4, 8, micro-batches 1, 2, 4, 8 (and the global batch's limit), ZeRO 0–3, the three
recomputation modes, sequence parallelism on and off (only with tp > 1).
"""
from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import record as R
from .model import ARCH_FIELDS, Model
from .spec import SweepSpec
from .sweep import to_table

OBJECTIVES = ("time", "cost")
POW2 = (1, 2, 4, 8, 16, 32, 64)
MICRO_BATCHES = (1, 2, 4, 8)
VIRTUAL_STAGES = (1, 2, 4, 8)
LAYOUT = ("tp", "pp", "cp", "ep", "virtual_stages", "micro_batch", "zero_stage", "recompute", "sequence_parallel")
MAX_SPACE = 5_000_000  # layouts evaluated at most in one search (a few seconds on two cores)


def _divisors(n: int, limit: int) -> tuple:
    small = [d for d in range(1, int(math.isqrt(n)) + 1) if n % d == 0]
    return tuple(sorted({d for d in small + [n // d for d in small] if d <= limit}))


def search_space(m: Model, n_gpus_list: tuple, seq_len: int, global_batch: int) -> dict:
    """The candidate values of each layout input for model `m` (module docstring)."""
    if not n_gpus_list:
        raise ValueError("n_gpus: give at least one GPU count")
    tps = tuple(t for t in POW2 if t <= m.n_heads and m.n_heads % t == 0)
    pps = tuple(sorted(set().union(*(_divisors(n, m.n_layers) for n in n_gpus_list))))
    cps = tuple(c for c in POW2 if seq_len % c == 0 and c <= max(n_gpus_list))
    eps = tuple(e for e in POW2 if m.n_experts % e == 0) if m.n_experts > 1 else (1,)
    mbs = tuple(b for b in MICRO_BATCHES if b <= global_batch)
    return {"tp": tps, "pp": pps, "cp": cps, "ep": eps, "virtual_stages": VIRTUAL_STAGES, "micro_batch": mbs,
            "zero_stage": (0, 1, 2, 3), "recompute": ("none", "selective", "full"),
            "sequence_parallel": (False, True)}


def plan(inputs: dict, n_gpus: tuple, objective: str = "time", top: int = 10, margin_bytes: float = 0.0,
         fixed: dict | None = None) -> dict:
    """Rank the layouts of `inputs` (the flat vocabulary: model or architecture fields, gpu, seq_len,
    global_batch, …) on each GPU count of `n_gpus`. `fixed` pins some layout inputs (e.g. {"tp": 8}).
    Returns {"strategies": [record, …] best first, "searched": layouts evaluated, "valid": layouts the rules
    accept, "fit": layouts that fit with the margin}."""
    from .estimate import build_model
    if objective not in OBJECTIVES:
        raise ValueError(f"objective: {objective!r} is not one of {', '.join(OBJECTIVES)}")
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= 1000:
        raise ValueError(f"top: must be an integer from 1 to 1000, got {top!r}")
    if not (isinstance(margin_bytes, (int, float)) and math.isfinite(margin_bytes) and margin_bytes >= 0):
        raise ValueError(f"margin: must be a non-negative number of bytes, got {margin_bytes!r}")
    inputs = {k: v for k, v in inputs.items() if v is not None}
    if "hf_config" in inputs:
        raise ValueError("hf_config: the layout search takes a preset or the architecture fields")
    m = build_model(inputs.get("model"), inputs.get("n_params"), **{k: inputs[k] for k in ARCH_FIELDS if k in inputs})
    n_list = tuple(int(n) for n in n_gpus)
    seq = int(inputs.get("seq_len", 2048))
    gbs = inputs.get("global_batch")
    if gbs is None:
        raise ValueError("global_batch: the layout search needs the global batch (sequences per step)")
    space = search_space(m, n_list, seq, int(gbs))
    for k, v in (fixed or {}).items():
        if k not in LAYOUT:
            raise ValueError(f"{k}: not a layout input; layout inputs: {', '.join(LAYOUT)}")
        space[k] = (v,)
    spec_d = {"mfu": "auto", **{k: v for k, v in inputs.items() if k not in LAYOUT and k != "n_gpus"}}
    spec_d.update(space)
    spec_d["n_gpus"] = list(n_list)
    spec = SweepSpec.from_dict({**spec_d, "drop_invalid": True})
    if spec.n_rows > MAX_SPACE:
        raise ValueError(f"n_gpus: {spec.n_rows:,} layouts to search (limit {MAX_SPACE:,}); pin some layout inputs")
    table = to_table(spec, max_rows=MAX_SPACE)
    # sequence parallelism means nothing without tp, interleaving nothing without pp: keep one of each pair
    table = table.filter((~pc.field("sequence_parallel") | (pc.field("tp") > 1))
                         & ((pc.field("virtual_stages") == 1) | (pc.field("pp") > 1)))
    valid = table.num_rows
    headroom = table.column("headroom_bytes").to_numpy(zero_copy_only=False)
    ok = table.column("fits").to_numpy(zero_copy_only=False) & (np.nan_to_num(headroom, nan=-1.0) >= margin_bytes)
    table = table.filter(pa.array(ok))
    key = "predicted_step_time_s" if objective == "time" else "cost_usd"
    vals = table.column(key).to_numpy(zero_copy_only=False)
    if objective == "cost" and np.all(np.isnan(vals)):
        raise ValueError("objective: no price for this accelerator; give price_per_gpu_hour or rank by time")
    # ties (equal to 4 significant digits) go to the simpler layout: lower ZeRO stage, less recomputation, no
    # interleaving, smaller tp, pp, cp, no sequence parallelism, larger micro-batch
    main = np.nan_to_num(vals, nan=np.inf)
    rounded = _significant(main, 4)
    col = lambda k: table.column(k).to_numpy(zero_copy_only=False)  # noqa: E731
    rc = np.select([col("recompute") == "none", col("recompute") == "selective"], [0, 1], 2)
    keys = (-col("micro_batch"), col("sequence_parallel").astype(int), col("cp"), col("pp"), col("tp"),
            col("virtual_stages"), rc, col("zero_stage"), rounded)
    order = np.lexsort(keys)[:top] if len(rounded) else np.array([], dtype=np.int64)
    rows = table.take(pa.array(order, type=pa.int64())).to_pylist()
    keep = ("model", "gpu", "n_gpus", *LAYOUT, *R.NAMES)
    strategies = [{k: r[k] for k in keep if k in r} for r in rows]
    return {"strategies": strategies, "searched": spec.n_rows, "valid": valid, "fit": int(ok.sum()),
            "objective": objective, "space": {k: list(v) for k, v in space.items()},
            "by_tp_pp": _best_by_tp_pp(table)}


def _significant(x: np.ndarray, digits: int) -> np.ndarray:
    """`x` rounded to `digits` significant digits, vectorised (inf stays inf)."""
    finite = np.isfinite(x) & (x != 0)
    scale = 10.0 ** (np.floor(np.log10(np.abs(np.where(finite, x, 1.0)))) - (digits - 1))
    return np.where(finite, np.round(x / scale) * scale, x)


def layout_label(r) -> str:
    """'tp8 sp pp4 v2 cp2 dp16 mb1 ZeRO-1 selective': a layout in one line (cp, ep, v and recomputation only when
    they are not the plain choice)."""
    bits = [f"tp{r['tp']}" + (" sp" if r["sequence_parallel"] else ""), f"pp{r['pp']}"]
    if r["virtual_stages"] > 1:
        bits.append(f"v{r['virtual_stages']}")
    bits += [f"{k}{r[k]}" for k in ("cp", "ep") if r[k] > 1]
    bits += [f"dp{r['dp']}", f"mb{r['micro_batch']}", f"ZeRO-{r['zero_stage']}"]
    if r["recompute"] != "none":
        bits.append(r["recompute"])
    return " ".join(bits)


def _best_by_tp_pp(table: pa.Table) -> list:
    """For each (tp, pp) with a layout that fits: the best predicted MFU over every other choice, with its step."""
    if table.num_rows == 0:
        return []
    tp, pp = (table.column(k).to_numpy(zero_copy_only=False) for k in ("tp", "pp"))
    mfu = np.nan_to_num(table.column("predicted_mfu").to_numpy(zero_copy_only=False), nan=-1.0)
    step = table.column("predicted_step_time_s").to_numpy(zero_copy_only=False)
    order = np.lexsort((-mfu, pp, tp))  # within each (tp, pp), highest MFU first
    first = np.ones(len(order), dtype=bool)
    first[1:] = (tp[order][1:] != tp[order][:-1]) | (pp[order][1:] != pp[order][:-1])
    best = order[first]
    return [{"tp": int(tp[i]), "pp": int(pp[i]), "predicted_mfu": float(mfu[i]),
             "predicted_step_time_s": float(step[i])} for i in best]
