"""Budget-first planning (issue 20 item 4): from dollars (or GPU-hours) and a deadline, the compute-optimal model and
tokens (core/scaling.py) and the accelerator, GPU count and layout that spend the budget within the deadline.

For each accelerator with a price: GPU-hours H = budget ÷ price; GPUs = the smallest whole number of nodes that finish
H GPU-hours within the deadline; the compute those hours buy at the *predicted* MFU and goodput of the run (a first
pass at 40 % MFU, then the predicted figures, twice) sets N and D; the layout is the first of a short ladder (ZeRO-1,
tensor parallelism 1–8 inside a node with sequence parallelism, then pipeline stages) that fits with the advisor's
margin. The answer ranks by Chinchilla's predicted loss (lower: a better model for the money), the three next best
are the alternatives. Each figure carries the record's interval and with-failures values.
"""
from __future__ import annotations

import math

from . import inputs as I
from .estimate import config_from_inputs, estimate
from .hardware import catalog, tier_price
from .profiles import default_zero_stage
from .scaling import compute_optimal, loss

# Megatron-style layouts first (the class published runs validate) at the framework's own ZeRO stage, ZeRO-3 at tp 1
# last
LADDER = [dict(tp=1, pp=1), dict(tp=2, pp=1), dict(tp=4, pp=1), dict(tp=8, pp=1), dict(tp=8, pp=2), dict(tp=8, pp=4),
          dict(tp=8, pp=8), dict(tp=8, pp=16), dict(tp=1, pp=1, zero_stage=3)]
FIRST_MFU = 0.40
DEFAULT_DAYS = 90.0  # decided: without a deadline, the run may take a quarter
# decided: a run that loses more than half its paid hours to failures and restarts (core/goodput.py) is no answer to
# a budget; such clusters are the ones a short deadline grows without end
MIN_GOODPUT = 0.5


VOCAB = 128_256
_COLS: dict = {}


def shape_for(n_params: float) -> dict:
    """A Llama-3-style dense architecture of about `n_params` parameters (decided, from Llama 3's own shapes: 8B has
    d_model/n_layers = 128, 70B 102, 405B 130): SwiGLU MLP of width 3.5·d_model (to 256), heads of 128, 8 KV heads,
    RMSNorm, rotary, untied 128,256-token vocabulary; d_model ≈ (128·N/12.5)^(1/3), then the
    layer count that lands nearest N (d_model in multiples of 1024 from 2B parameters, so that the heads divide by 8)."""
    from .model import param_breakdown
    unit = 1024 if n_params >= 2e9 else 256  # heads a multiple of 8 (KV heads, tensor parallelism up to 8)
    h = max(256, int(round((n_params * 128 / 12.5) ** (1 / 3) / unit)) * unit)
    f = int(round(3.5 * h / 256)) * 256
    base = dict(d_model=h, n_heads=h // 128, n_kv_heads=min(8, h // 128), d_ff=f, vocab_size=VOCAB, mlp="swiglu",
                norm="rmsnorm", bias="none", position="rotary", tied_embeddings=False, dropout=False)
    one = float(param_breakdown(n_layers=1, **base)["total"])
    per_layer = float(param_breakdown(n_layers=2, **base)["total"]) - one
    outside = one - per_layer
    L = max(1, int(round((n_params - outside) / per_layer)))
    return {**base, "n_layers": L}


def _rungs(n_params, tokens, gpu, n_gpus, extra):
    """One request's ladder: the evaluation columns of every rung (one row each; the input rules refuse the rungs this
    model or GPU count cannot take) and the rungs, or None where the accelerator refuses the setup itself."""
    import numpy as np

    from .model import param_breakdown
    shape = shape_for(n_params)
    key = (gpu, tuple(sorted(extra.items())))
    if key not in _COLS:  # one Config per accelerator (its validation is most of the cost); the shape, the GPU count
        try:  # and the tokens are columns the evaluation derives the rest from (a dense shape: active = total)
            cfg = config_from_inputs(**shape, gpu=gpu, n_gpus=n_gpus, tokens=tokens, mfu="auto", **extra)
        except ValueError:
            return None
        if len(_COLS) > 256:
            _COLS.clear()
        _COLS[key] = cfg.columns()
    total = float(param_breakdown(**shape)["total"])
    cols = {**_COLS[key], **shape, "n_params": total, "n_active_params": total, "n_gpus": n_gpus, "tokens": tokens}
    # the rungs' stage: the framework's own (fsdp and maxtext run no ZeRO-1)
    z = int(default_zero_stage(extra.get("framework", I.BY_NAME["framework"].default)))
    rungs = [{"zero_stage": z, **r, "sequence_parallel": r.get("tp", 1) > 1} for r in LADDER]
    over = {k: np.array([r[k] for r in rungs]) for k in ("tp", "pp", "zero_stage", "sequence_parallel")}
    return {**cols, **over}, rungs


def _stack(parts: list) -> dict | None:
    """Several requests' rung columns as one table (rows in request order), or None where a column is None for some
    requests only (then each is evaluated alone)."""
    import numpy as np
    n = len(LADDER)
    out = {}
    for k in parts[0]:
        vals = [p[k] for p in parts]
        if all(v is None for v in vals):
            out[k] = None
            continue
        if any(v is None for v in vals):
            return None
        out[k] = np.concatenate([np.broadcast_to(np.asarray(v), (n,)) for v in vals])
    return out


def _layouts(requests: list, extra) -> list:
    """For each request (n_params, tokens, gpu, n_gpus): the first ladder layout that fits with a 5 % margin and that
    rung's record, or (None, None). All the requests' rungs are evaluated in one vectorised call (the search's cost
    is the calls, not the rows)."""
    import numpy as np

    from .estimate import evaluate
    built = [_rungs(*r, extra) for r in requests]
    live = [i for i, b in enumerate(built) if b is not None]
    answers = [(None, None)] * len(requests)
    if not live:
        return answers
    n = len(LADDER)
    table = _stack([built[i][0] for i in live])
    groups = [(live, table)] if table is not None else [([i], built[i][0]) for i in live]
    for members, cols in groups:
        with np.errstate(all="ignore"):
            out = evaluate(**cols)
        ok = (np.asarray(out["valid"]) & np.asarray(out["fits"])
              & (np.asarray(out["headroom_bytes"]) >= 0.05 * np.asarray(out["gpu_memory_bytes"])))
        ok = np.broadcast_to(ok, (len(members) * n,))
        for j, i in enumerate(members):
            mine = ok[j * n:(j + 1) * n]
            if not mine.any():
                continue
            r = int(np.argmax(mine))
            row = j * n + r
            rec = {k: (np.asarray(v).reshape(-1)[row] if np.ndim(v) else v) for k, v in out.items()}
            rec = {k: (float(v) if isinstance(v, (np.floating, float)) else v) for k, v in rec.items()}
            rung = built[i][1][r]
            answers[i] = ({k: (bool(v) if isinstance(v, (bool, np.bool_)) else int(v)) for k, v in rung.items()}, rec)
    return answers


def _search(name, g, hours, n_gpus, gpn, deadline, tokens_per_param):
    """One accelerator's search, as a generator: it yields each (n_params, tokens, gpu, n_gpus) it needs a layout
    for, is sent back (layout, record), and returns (layout, record, n_params, tokens, n_gpus)."""
    mfu, good, rec, layout = FIRST_MFU, 1.0, None, None
    n_params = tokens = 0.0
    for _ in range(4):  # the compute the hours buy at the run's own MFU and goodput (a fixed point, 2–3 passes)
        flops = hours * 3600.0 * g.peak_bf16_flops_per_s * mfu * good
        n_params, tokens = compute_optimal(flops, tokens_per_param)
        n_params, tokens = float(n_params), float(tokens)
        if n_params < 1e6:
            break
        layout, rec = yield (n_params, tokens, name, n_gpus)
        if rec is None:
            break
        converged = abs(rec["gpu_hours_with_failures"] / hours - 1) < 0.03  # the token scaling below settles the rest
        mfu, good = rec["predicted_mfu"], rec["goodput_frac"]
        if converged:
            break
    # more GPUs (whole nodes) until the run meets the deadline: the same GPU-hours, fewer days
    capped = False
    for _ in range(4):
        if rec is None or rec["days_with_failures"] <= deadline:
            break
        grown = int(math.ceil(n_gpus * rec["days_with_failures"] / deadline * 1.01 / gpn)) * gpn \
            if math.isfinite(rec["days_with_failures"]) else I.MAX_INT + 1
        if grown > I.MAX_INT:  # failures grow with the cluster: past the input's bound no count helps
            capped = True
            break
        n_gpus = grown
        layout, rec = yield (n_params, tokens, name, n_gpus)
    # spend no more than the budget: fewer tokens (not where the cluster could not grow to the deadline: trimming
    # its tokens by a goodput near 0 would pass a run of almost no tokens as on time; it is left out as late)
    if rec is not None and rec["gpu_hours_with_failures"] > hours and not capped:
        tokens *= hours / rec["gpu_hours_with_failures"]
        layout, rec = yield (n_params, tokens, name, n_gpus)
    return layout, rec, n_params, tokens, n_gpus


def _run_searches(searches: dict, extra) -> dict:
    """Drive the accelerators' searches in lockstep: each round evaluates every pending request at once."""
    done, pending = {}, {}
    for name, gen in searches.items():
        try:
            pending[name] = next(gen)
        except StopIteration as stop:
            done[name] = stop.value
    while pending:
        names = list(pending)
        answers = _layouts([pending[n] for n in names], extra)
        pending = {}
        for name, ans in zip(names, answers):
            try:
                pending[name] = searches[name].send(ans)
            except StopIteration as stop:
                done[name] = stop.value
    return done


def plan_budget(usd=None, gpu_hours=None, days=None, gpus=None, tokens_per_param=None, **extra) -> dict:
    extra = I.canonical_inputs(extra)  # a stack's name is its profile's (torchtitan: fsdp)
    if (usd is None) == (gpu_hours is None):
        raise ValueError("budget: give exactly one of --usd or --gpu-hours")
    amount, field = (usd, "usd") if usd is not None else (gpu_hours, "gpu_hours")
    if not (isinstance(amount, (int, float)) and math.isfinite(amount) and amount > 0):
        raise ValueError(f"{field}: the budget must be a positive number, got {amount!r}")
    if days is not None and not (math.isfinite(days) and days > 0):
        raise ValueError(f"days: must be a positive number of days, got {days!r}")
    if tokens_per_param is not None and not (math.isfinite(tokens_per_param) and tokens_per_param > 0):
        raise ValueError(f"tokens_per_param: must be positive, got {tokens_per_param!r}")
    cat = catalog()
    names = list(gpus) if gpus else [n for n, g in cat.items() if math.isfinite(g.price_usd_per_gpu_hour)]
    for n in names:
        if n not in cat:
            raise ValueError(f"gpu: unknown accelerator {n!r}")
    deadline = days if days is not None else DEFAULT_DAYS
    options, left_out, searches = [], {}, {}
    for name in names:
        g = cat[name]
        price = extra.get("price_per_gpu_hour")
        if price is None:
            try:
                price = tier_price(name, extra.get("price_tier", "on_demand"))
            except ValueError:
                left_out[name] = f"no {extra['price_tier']} price in data/prices.csv"
                continue
        if usd is not None and not (price and math.isfinite(price)):
            left_out[name] = "no price (give --price-per-gpu-hour)"
            continue
        hours = gpu_hours if gpu_hours is not None else usd / price
        gpn = max(int(g.gpus_per_node), 1) if g.gpus_per_node <= 8 else 8
        n_gpus = max(gpn, int(math.ceil(hours / (deadline * 24.0) / gpn)) * gpn)
        if n_gpus > I.MAX_INT:
            left_out[name] = f"{n_gpus:,} GPUs to spend the budget within the deadline: past the planner's {I.MAX_INT:,}"
            continue
        searches[name] = _search(name, g, hours, n_gpus, gpn, deadline, tokens_per_param)
    found = _run_searches(searches, extra)
    for name in searches:  # the catalog's order
        layout, rec, n_params, tokens, n_gpus = found[name]
        if rec is None:
            left_out[name] = (f"no layout of the ladder fits a {n_params / 1e9:.3g}B model on {n_gpus:,} GPUs"
                              if n_params >= 1e6 else "the budget buys too little compute for a model")
            continue
        if rec["goodput_frac"] < MIN_GOODPUT:
            left_out[name] = (f"failures and restarts take {1 - rec['goodput_frac']:.0%} of the time on {n_gpus:,} GPUs "
                              f"(goodput below {MIN_GOODPUT:.0%})")
            continue
        within = rec["days_with_failures"] <= deadline * 1.0000001
        n_params = float(rec["n_params"])
        options.append({"gpu": name, "n_gpus": n_gpus, "n_params": n_params, "tokens": tokens,
                        "shape": shape_for(n_params),
                        "tokens_per_param": tokens / n_params, "loss": float(loss(n_params, tokens)),
                        "layout": layout, "days": rec["days"], "days_with_failures": rec["days_with_failures"],
                        "days_high_with_failures": rec["days_high"] / rec["goodput_frac"], "cost_usd": rec["cost_usd"],
                        "cost_with_failures_usd": rec["cost_with_failures_usd"], "gpu_hours": rec["gpu_hours"],
                        "predicted_mfu": rec["predicted_mfu"], "goodput_frac": rec["goodput_frac"],
                        "within_deadline": bool(within), "validated": bool(rec["validated"])})
    ok = sorted((o for o in options if o["within_deadline"]), key=lambda o: o["loss"])
    late = sorted((o for o in options if not o["within_deadline"]), key=lambda o: o["days_with_failures"])
    for o in late:
        left_out[o["gpu"]] = f"{o['days_with_failures']:.1f} days with failures, past the {deadline:g}-day deadline"
    return {"budget": {"usd": usd, "gpu_hours": gpu_hours, "days": deadline, "deadline_given": days is not None,
                       "tokens_per_param": tokens_per_param},
            "best": ok[0] if ok else None, "alternatives": ok[1:4], "left_out": left_out}
