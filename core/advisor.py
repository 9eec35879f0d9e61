"""Advisor: when a setup does not fit with room to spare, the cheapest changes that make it fit, ranked by what they
cost the run.

The knobs are the remedies of CS336 lecture 2 and Korthikanti et al. 2022 for the term that grew: activations →
flash attention (Dao et al. 2022), a smaller micro-batch with gradient accumulation, selective then full
recomputation (Korthikanti §5), context parallelism (Llama 3 §3.3.2); model state → a higher ZeRO stage
(Rajbhandari et al. 2020), tensor parallelism, more GPUs; logits → no fp32 copy of them. Dropping the fp32 master
copy is never proposed: it changes the training numerics, not its cost.

Every combination of the knobs is evaluated at once on the core's one grid path (`core.grid`, `evaluate`), with
time taken from the predicted step (`core/steptime.py`, mfu "auto"), so each option carries what it costs: the
predicted step time, MFU and the run's GPU-hours, days and dollars. An option is admissible when its headroom is at
least the margin (`margin_bytes`). Options come in three classes — the same GPUs (memory savers, sharding, a smaller
micro-batch), more GPUs (whole nodes), the same GPUs with a shorter sequence (a different run) — and the best of each
class is always offered (a class is left out only when it has no option), then the next best up to `max_options`;
within a class: the fewest GPUs first (more GPUs), the longest sequence first (shorter sequence), then the run's
predicted GPU-hours (costs within COST_TIE_FRAC tie: the smaller change wins). Of options changing the same inputs only the best-ranked stays, and of two options one of
which adds changes to the other, the better-ranked. GPU counts are whole nodes of the accelerator (`gpus_per_node`),
or powers of two below one node; sequence lengths are multiples of 1,024.
"""
from __future__ import annotations

import math

import numpy as np

from . import grid as G
from .estimate import Config, estimate
from .memory import PER_STEP_PARTS, dynamic_bytes, overhead_bytes
from .record import BINDING_WORDS
from .tables import OVERHEADS

# --- the margin ----------------------------------------------------------------------------------------------------
DEFAULT_MARGIN = "realistic"
MARGIN_FLOOR_FRAC = 0.05  # never less free memory than this share of the GPU (allocator spikes, NCCL growth)
MARGIN_HELP = ("headroom every suggestion keeps free: 'realistic' = the realistic overhead (1.5 GiB CUDA context + "
               "NCCL buffers, 10 % fragmentation of the per-step tensors) where the setup does not count it, at least "
               f"{MARGIN_FLOOR_FRAC:.0%} of GPU memory; or a fraction (0–1) of GPU memory; default: realistic")
SEQ_MULTIPLE = 1024  # suggested sequence lengths are multiples of this
MAX_OPTIONS = 3


def check_margin(margin) -> str | float:
    """'realistic' or a fraction in [0, 1); anything else is refused by name."""
    if margin == "realistic":
        return margin
    try:
        x = float(margin)
    except (TypeError, ValueError):
        raise ValueError(f"margin: 'realistic' or a fraction of GPU memory (0–1), got {margin!r}") from None
    if not (0.0 <= x < 1.0) or isinstance(margin, bool):
        raise ValueError(f"margin: a fraction of GPU memory must be in [0, 1), got {margin!r}")
    return x


# the record columns margin_bytes reads: the GPU's memory, the overhead counted, and what the overhead fragments
MARGIN_COLUMNS = ("gpu_memory_bytes", "overhead_bytes") + PER_STEP_PARTS


def margin_bytes(rec: dict, margin="realistic"):
    """Free memory a setup should keep, per GPU (vectorised over record columns). 'realistic': the realistic
    overhead preset (core/tables.py OVERHEADS) minus the overhead the setup already counts, never below
    MARGIN_FLOOR_FRAC of the GPU's memory; a fraction: that share of the GPU's memory."""
    margin = check_margin(margin)
    cap = np.asarray(rec["gpu_memory_bytes"], dtype=np.float64)
    if margin != "realistic":
        return margin * cap
    counted = np.asarray(rec["overhead_bytes"], dtype=np.float64)
    o = OVERHEADS["realistic"]
    realistic = overhead_bytes(dynamic_bytes(rec), o.overhead_fixed_bytes, o.fragmentation_frac)
    return np.maximum(realistic - counted, MARGIN_FLOOR_FRAC * cap)


def describe_margin(margin="realistic") -> str:
    margin = check_margin(margin)
    if margin == "realistic":
        o = OVERHEADS["realistic"]
        return (f"the realistic overhead ({o.overhead_fixed_bytes / 2**30:g} GiB + {o.fragmentation_frac:.0%} "
                f"fragmentation of the per-step tensors) where not counted, at least {MARGIN_FLOOR_FRAC:.0%} of GPU "
                "memory")
    return f"{margin:.0%} of GPU memory"


# --- the knobs -----------------------------------------------------------------------------------------------------
# input name -> how far a value is from the current one (the tie-break: the smaller change wins)
RECOMPUTE_ORDER = ("none", "selective", "full")
KNOBS = ("flash_attention", "zero_stage", "micro_batch", "fp32_loss", "recompute", "tp", "cp", "n_gpus", "seq_len",
         "global_batch")
TIERS = ("same GPUs", "more GPUs", "same GPUs, shorter sequence")


def _pow2_below(x: int) -> list[int]:
    out, v = [], x
    while v > 1 and v % 2 == 0:
        v //= 2
        out.append(v)
    return out


def gpu_counts(cfg: Config, top: int = 1 << 20) -> list[int]:
    """GPU counts above the current one a planner can rent: powers of two below one node, then whole nodes
    (1–16 nodes, then about 12 % apart). Counts the layout cannot take (tp·pp·cp must divide them) are left to
    the input rules."""
    gpn = int(cfg.gpus_per_node or cfg.gpu.gpus_per_node)
    n0 = cfg.n_gpus
    out = [2 ** k for k in range(0, 31) if 2 ** k < gpn and 2 ** k > n0]
    k, nodes = 1, []
    while k * gpn <= top:
        nodes.append(k)
        k = k + 1 if k < 16 else int(math.ceil(k * 1.125))
    out += [k * gpn for k in nodes if k * gpn > n0]
    return out


def shorter_seq_lens(seq_len: int, most: int = 512) -> list[int]:
    """Sequence lengths below `seq_len`, multiples of SEQ_MULTIPLE, longest first: every one up to `most` of them,
    beyond that `most` values about evenly spaced in log (so a 2^31-token input does not build a billion rows)."""
    top = (seq_len - 1) // SEQ_MULTIPLE
    if top < 1:
        return []
    if top <= most:
        ks = range(top, 0, -1)
    else:
        ks = sorted({max(1, int(k)) for k in np.geomspace(top, 1, most)}, reverse=True)
    return [k * SEQ_MULTIPLE for k in ks]


def _axes(cfg: Config, knobs: set, gpn: int) -> dict:
    """The values each knob takes: the current one first, then the changes (never a step back)."""
    m = cfg.model
    ax = {}
    ax["flash_attention"] = [cfg.flash_attention] + ([True] if not cfg.flash_attention else [])
    ax["zero_stage"] = list(range(cfg.zero_stage, 4))
    ax["micro_batch"] = [cfg.micro_batch] + _pow2_below(cfg.micro_batch)
    ax["fp32_loss"] = [cfg.fp32_loss] + ([False] if cfg.fp32_loss else [])
    ax["recompute"] = list(RECOMPUTE_ORDER[RECOMPUTE_ORDER.index(cfg.recompute):])
    ax["tp"] = [cfg.tp] + [t for t in (2, 4, 8) if cfg.tp < t <= gpn and m.n_heads % t == 0]
    ax["cp"] = [cfg.cp] + [c for c in (2, 4, 8) if c > cfg.cp and cfg.seq_len % c == 0 and cfg.seq_len >= 8192]
    return {k: (v if k in knobs else v[:1]) for k, v in ax.items()}


def _distance(name: str, new, old) -> float:
    if name == "recompute":
        return RECOMPUTE_ORDER.index(new) - RECOMPUTE_ORDER.index(old)
    if name in ("micro_batch", "seq_len"):
        return math.log2(old / new) if new else 99.0
    if name in ("tp", "cp", "n_gpus"):
        return math.log2(new / old)
    if name == "zero_stage":
        return new - old
    return 0.0 if new == old else 1.0


def _grid(base: dict, axes: dict, margin, last: str | None = None) -> list[dict]:
    """Every combination of `axes` (input -> values) evaluated at once on the core's grid path; returns the
    admissible rows (valid, headroom ≥ margin) as dicts with the knob values and the numbers the ranking needs.
    With `last` (the name of the last axis), only the first admissible value along it is kept per combination of
    the others (the fewest GPUs, the longest sequence: its values come in that order)."""
    names = list(axes)
    g_axes = [G.plain_axis(n, axes[n]) for n in names]
    with np.errstate(all="ignore"):
        out, shape, _ = G.evaluate_box(base, g_axes)
    full = {k: np.broadcast_to(out[k], shape) for k in ("valid", "headroom_bytes", *MARGIN_COLUMNS)}
    marg = margin_bytes(full, margin)
    ok = full["valid"] & (full["headroom_bytes"] >= marg)
    if last is not None:
        first = np.argmax(ok, axis=-1)
        keep = np.zeros_like(ok)
        np.put_along_axis(keep, first[..., None], True, axis=-1)
        ok = ok & keep
    idx = np.nonzero(ok.reshape(-1))[0]
    if idx.size == 0:
        return []
    pos = np.unravel_index(idx, shape)
    cols = {k: G.flat(out[k], shape)[idx] for k in (
        "total_bytes", "headroom_bytes", "predicted_step_time_s", "predicted_mfu", "predicted_tokens_per_s",
        "days", "gpu_hours", "cost_usd", "global_batch", "binding")}
    cols["margin_bytes"] = marg.reshape(-1)[idx]
    rows = []
    for j in range(idx.size):
        row = {k: (v[j].item() if hasattr(v[j], "item") else v[j]) for k, v in cols.items()}
        row["values"] = {n: axes[n][pos[i][j]] for i, n in enumerate(names)}
        rows.append(row)
    return rows


def _option(cfg: Config, row: dict, tier: int, base_cost: float, extra: dict | None = None) -> dict:
    cur = {n: getattr(cfg, n) for n in row["values"]}
    change = {n: v for n, v in row["values"].items() if v != cur[n]}
    change.update(extra or {})
    out = {
        "change": {k: (v.item() if hasattr(v, "item") else v) for k, v in change.items()},
        "changes": [k for k in KNOBS if k in change],
        "tier": TIERS[tier],
        "what": describe(change, cfg),
        **{k: row[k] for k in ("total_bytes", "headroom_bytes", "margin_bytes", "predicted_step_time_s",
                               "predicted_mfu", "predicted_tokens_per_s", "days", "gpu_hours", "cost_usd")},
        "n_gpus": int(row["values"].get("n_gpus", cfg.n_gpus)),
        "binding": row["binding"],
    }
    out["gpu_hours_change_frac"] = (out["gpu_hours"] / base_cost - 1.0) if base_cost > 0 else math.nan
    size = sum(_distance(k, v, getattr(cfg, k)) for k, v in change.items() if k != "global_batch")
    # within a tier: the fewest GPUs first (more GPUs), the longest sequence first (shorter sequence), then the cost
    first = out["n_gpus"] if tier == 1 else -int(row["values"].get("seq_len", cfg.seq_len)) if tier == 2 else 0
    out["_key"] = (tier, first, out["gpu_hours"], len(out["changes"]), size)
    return out


COST_TIE_FRAC = 0.02  # predicted costs this close are a tie (the step model's resolution): the smaller change wins


def _rank_key(o: dict, cheapest: dict) -> tuple:
    """(tier, GPUs in the more-GPUs tier or −sequence length in the shorter-sequence tier, cost in steps of
    COST_TIE_FRAC above the cheapest of the same (tier, GPUs or length), number of changes, size of the change,
    cost)."""
    tier, gpus, cost, n_changes, size = o["_key"]
    low = cheapest[(tier, gpus)]
    step = math.floor((cost / low - 1.0) / COST_TIE_FRAC) if low > 0 and math.isfinite(cost) else 0
    return (tier, gpus, step, n_changes, size, cost)


def _prune(options: list[dict]) -> list[dict]:
    """Rank; of options changing the same inputs keep the best-ranked; of two options one of which adds changes to
    the other keep the better-ranked (an added change must make the run cheaper by more than a tie)."""
    cheapest: dict = {}
    for o in options:
        k = o["_key"][:2]
        cheapest[k] = min(cheapest.get(k, math.inf), o["_key"][2])
    for o in options:
        o["_rank"] = _rank_key(o, cheapest)
    best: dict = {}
    for o in sorted(options, key=lambda o: o["_rank"]):
        best.setdefault(frozenset(o["change"]), o)
    kept = []
    for key, o in best.items():  # of two options one of which only adds changes to the other, the better-ranked
        items = set(o["change"].items())
        nested = [p for k2, p in best.items() if k2 != key and (set(p["change"].items()) < items
                                                                or items < set(p["change"].items()))]
        if all(o["_rank"] < p["_rank"] for p in nested):
            kept.append(o)
    return sorted(kept, key=lambda o: o["_rank"])


def advise(cfg: Config, margin="realistic", knobs=KNOBS, max_options: int = MAX_OPTIONS) -> dict:
    """Diagnosis and the ranked options. `fits` and `binding` come from the estimate; `margin_bytes` is the free
    memory every option keeps (see `margin_bytes`); when the setup already keeps it, `options` is empty.
    `options` holds up to `max_options` changes (input → new value), best first, each with its per-GPU total,
    headroom, margin, predicted step time, MFU, GPU-hours, days and cost; `best` is the first (None when no
    option within the knobs fits). `knobs` limits which inputs may change (a page offers only those it has)."""
    margin = check_margin(margin)
    knobs = set(knobs)
    rec = estimate(cfg)
    m_now = float(margin_bytes(rec, margin))
    out = {"fits": rec["fits"], "binding": rec["binding"], "binding_words": BINDING_WORDS[rec["binding"]],
           "total_bytes": rec["total_bytes"], "gpu_memory_bytes": rec["gpu_memory_bytes"],
           "headroom_bytes": rec["headroom_bytes"], "margin": margin, "margin_bytes": m_now,
           "margin_words": describe_margin(margin), "fits_with_margin": rec["headroom_bytes"] >= m_now,
           "options": [], "best": None}
    if out["fits_with_margin"]:
        return out
    gpn = int(cfg.gpus_per_node or cfg.gpu.gpus_per_node)
    base = cfg.columns()
    base.update(mfu=math.nan, mfu_auto=True, tokens_per_second=math.nan)
    now = estimate(cfg.replace(mfu="auto", tokens_per_second=None, step_time_s=None))
    out["current"] = {k: now[k] for k in ("predicted_step_time_s", "predicted_mfu", "days", "gpu_hours", "cost_usd")}
    base_cost = now["gpu_hours"]
    axes = _axes(cfg, knobs, gpn)
    options = []

    # tier 0: the same GPUs, the same global batch (a smaller micro-batch or more model parallelism accumulates)
    g0 = cfg.global_batch if cfg.global_batch is not None else rec["global_batch"]
    keep_batch = "global_batch" in knobs or cfg.global_batch is not None
    same = dict(base, global_batch=g0 if keep_batch else None)
    for row in _grid(_clean(same), axes, margin):
        extra = {}
        if cfg.global_batch is None and keep_batch and int(row["global_batch"]) != _default_batch(cfg, row):
            extra["global_batch"] = int(row["global_batch"])
        options.append(_option(cfg, row, 0, base_cost, extra))

    # tier 1: more GPUs, whole nodes (the global batch grows with the data-parallel degree unless it was given)
    if "n_gpus" in knobs:
        counts = gpu_counts(cfg)
        if counts:
            rows = _grid(_clean(dict(base, global_batch=cfg.global_batch)), {**axes, "n_gpus": counts}, margin,
                         last="n_gpus")
            options += [_option(cfg, r, 1, base_cost) for r in rows]

    # tier 2: the same GPUs with a shorter sequence (multiples of 1,024, longest first), with the same knobs
    if "seq_len" in knobs and cfg.seq_len > SEQ_MULTIPLE:
        seqs = shorter_seq_lens(cfg.seq_len)
        rows = _grid(_clean(dict(base, global_batch=cfg.global_batch)), {**axes, "seq_len": seqs}, margin,
                     last="seq_len")
        options += [_option(cfg, r, 2, base_cost) for r in rows]

    ranked = _prune(options)
    # every kind of fix: the best option of each class first (same GPUs, more GPUs, a shorter sequence; a class with
    # no option is left out), then the next best of any class up to max_options
    firsts = [next(o for o in ranked if o["tier"] == t) for t in TIERS if any(o["tier"] == t for o in ranked)]
    rest = [o for o in ranked if o not in firsts]
    chosen = firsts + rest[:max(0, max_options - len(firsts))]
    chosen.sort(key=lambda o: o["_rank"])
    for o in chosen:
        o.pop("_rank")
        o.pop("_key")
    out["options"] = chosen
    out["classes"] = [o["tier"] for o in firsts]
    out["best"] = chosen[0] if chosen else None
    return out


def _clean(cols: dict) -> dict:
    """`evaluate` columns with a None global batch left out (= the default, one micro-batch per replica)."""
    c = dict(cols)
    if c.get("global_batch") is None:
        c.pop("global_batch", None)
    return c


def _default_batch(cfg: Config, row: dict) -> int:
    v = row["values"]
    dp = cfg.n_gpus // (v.get("tp", cfg.tp) * cfg.pp * v.get("cp", cfg.cp))
    return dp * v.get("micro_batch", cfg.micro_batch)


# --- words ---------------------------------------------------------------------------------------------------------
def describe(change: dict, cfg: Config | None = None) -> str:
    """A change in words: 'flash attention on + ZeRO stage 2'. With `cfg`, GPU counts say how many nodes."""
    words = []
    for k in KNOBS:
        if k not in change:
            continue
        v = change[k]
        if k == "flash_attention":
            words.append("flash attention on" if v else "flash attention off")
        elif k == "zero_stage":
            words.append(f"ZeRO stage {v}")
        elif k == "fp32_loss":
            words.append("no fp32 copy of the logits" if not v else "fp32 copy of the logits")
        elif k == "recompute":
            words.append(f"{v} recomputation")
        elif k == "micro_batch":
            words.append(f"micro-batch {v:,}")
        elif k == "tp":
            words.append(f"tensor parallel {v}")
        elif k == "cp":
            words.append(f"context parallel {v}")
        elif k == "n_gpus":
            gpn = int(cfg.gpus_per_node or cfg.gpu.gpus_per_node) if cfg is not None else 0
            nodes = f" ({v // gpn:,} node{'s' if v // gpn != 1 else ''} of {gpn})" if gpn and v % gpn == 0 else ""
            words.append(f"{v:,} GPUs{nodes}")
        elif k == "seq_len":
            words.append(f"sequence length {v:,}")
        elif k == "global_batch":
            words.append(f"global batch kept at {v:,} sequences (gradient accumulation)")
    words += [f"{k} = {v}" for k, v in change.items() if k not in KNOBS]
    return " + ".join(words)
