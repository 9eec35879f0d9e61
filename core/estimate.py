"""The estimate: one vectorised function from input columns to the record, and a frozen `Config` for one point.

`evaluate(**columns)` takes the input vocabulary as numpy arrays or scalars (they broadcast) and returns every
record column, with `valid`/`reason` for combinations that make no sense. A sweep of a million rows and a single
estimate run this same code; `estimate(config)` is the scalar wrapper that raises `ValueError` instead.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields

import numpy as np

from . import flops as F
from . import memory as M
from .hardware import Accelerator, get_accelerator
from .model import ARCH_FIELDS, Model, get_preset, param_breakdown, raw_model

# ---------------------------------------------------------------------------------------------------------------
# Validation, vectorised: a reason code per row (0 = valid). The scalar path raises the same message.
# ---------------------------------------------------------------------------------------------------------------

REASONS = (
    "",
    "n_gpus: must be ≥ 1",
    "tp: must be an integer ≥ 1",
    "pp: must be an integer ≥ 1",
    "tp·pp: does not divide n_gpus",
    "tp: larger than n_heads",
    "tp: does not divide n_heads",
    "pp: larger than n_layers",
    "seq_len: must be ≥ 1",
    "micro_batch: must be ≥ 1",
    "mfu: must be in (0, 1]",
    "zero_stage: must be 0, 1, 2 or 3",
    "master_weights: the weights are already fp32; an fp32 master copy would duplicate them",
    "compute_dtype: this accelerator has no peak for that dtype",
    "recompute: must be none, selective or full",
    "optimizer: unknown optimizer",
    "weight_dtype/grad_dtype: unknown dtype",
    "attention_flops: must be none, full or causal",
    "d_model: not divisible by n_heads",
    "n_kv_heads: must divide n_heads",
    "virtual_stages: must be an integer ≥ 1",
    "profile: must be fused or eager",
    "tokens: must be between 0 and 1e18",
    "price_per_gpu_hour: must be ≥ 0",
    "time_overhead_frac: must be ≥ 0",
    "overhead: fixed bytes must be ≥ 0 and fragmentation_frac in [0, 1)",
    "d_ff: not divisible by tp",
    "virtual_stages: more than the layers of one pipeline stage",
    "tokens_per_second: the measured throughput would exceed 100% of peak (check it, the GPU count or the GPU)",
)
MEASURED_ABOVE_PEAK = len(REASONS) - 1  # set by `evaluate`, which alone knows the FLOPs


def reason_text(code) -> np.ndarray:
    """Reason codes → text (vectorised)."""
    return np.asarray(REASONS, dtype=object)[np.asarray(code, dtype=np.int64)]


def check(c: dict) -> np.ndarray:
    """Reason code per row; the first failing rule wins. Inputs as in `evaluate`."""
    g = lambda k: np.asarray(c[k])  # noqa: E731
    n_gpus, tp, pp = g("n_gpus"), g("tp"), g("pp")
    rules = [
        n_gpus < 1,
        (tp < 1) | (tp != np.floor(tp)),
        (pp < 1) | (pp != np.floor(pp)),
        np.mod(n_gpus, np.maximum(tp * pp, 1)) != 0,
        tp > g("n_heads"),
        np.mod(g("n_heads"), np.maximum(tp, 1)) != 0,
        pp > g("n_layers"),
        g("seq_len") < 1,
        g("micro_batch") < 1,
        ~((g("mfu") > 0) & (g("mfu") <= 1)),
        ~np.isin(g("zero_stage"), (0, 1, 2, 3)),
        (g("weight_dtype") == "fp32") & g("master_weights").astype(bool),
        ~(g("peak_flops_per_s") > 0),
        ~np.isin(g("recompute"), M.RECOMPUTE_MODES),
        ~np.isin(g("optimizer"), M.OPTIMIZERS),
        ~(np.isin(g("weight_dtype"), M.STATE_DTYPES) & np.isin(g("grad_dtype"), M.STATE_DTYPES)),
        ~np.isin(g("attention_flops"), F.ATTENTION_FLOPS),
        np.mod(g("d_model"), g("n_heads")) != 0,
        (g("n_kv_heads") > g("n_heads")) | (np.mod(g("n_heads"), np.maximum(g("n_kv_heads"), 1)) != 0),
        g("virtual_stages") < 1,
        ~np.isin(g("profile"), M.PROFILES),
        (g("tokens") < 0) | (g("tokens") > 1e18),
        g("price_per_gpu_hour") < 0,
        g("time_overhead_frac") < 0,
        (g("overhead_fixed_bytes") < 0) | (g("fragmentation_frac") < 0) | (g("fragmentation_frac") >= 1),
        np.mod(g("d_ff"), np.maximum(tp, 1)) != 0,
        g("virtual_stages") > np.ceil(g("n_layers") / np.maximum(pp, 1)),
    ]
    shape = np.broadcast_shapes(*(np.shape(r) for r in rules))
    code = np.zeros(shape, dtype=np.int64)
    for i in range(len(rules), 0, -1):  # last to first so the first failing rule wins
        if np.any(rules[i - 1]):  # a rule no row breaks leaves the codes as they are (sweeps: most rules)
            code = np.where(rules[i - 1], i, code)
    return code


# ---------------------------------------------------------------------------------------------------------------
# The vectorised estimate
# ---------------------------------------------------------------------------------------------------------------

def stage_split(c: dict, pp) -> dict:
    """Parameters held by the first and the last pipeline stage (before tensor parallelism and ZeRO).

    The transformer blocks split by layers: a stage holds ⌈L/p⌉ of them (uneven splits put the extra layers on
    the busiest stage). The input embedding and learned positions sit on the first stage, the LM head on the last;
    with tied embeddings the last stage keeps its own copy of the table for the head (Megatron-LM shares it by
    all-reducing its gradient). With p = 1 one GPU holds all n_params. In raw-N mode the stand-in shape's split
    is scaled to n_params (`outside_params` then scales too, so hardware FLOPs never fall below model FLOPs).
    """
    from .model import param_breakdown
    pb = param_breakdown(*(c[k] for k in ("n_layers", "d_model", "n_heads", "n_kv_heads", "d_ff", "vocab_size",
                                          "mlp", "norm", "bias", "tied_embeddings", "position", "max_position",
                                          "n_experts", "top_k")))
    N = np.asarray(c["n_params"], dtype=np.float64)
    scale = N / pb["total"]
    table = pb["embedding"] * scale
    inputs = table + pb["position"] * scale
    outside = inputs + pb["lm_head"] * scale
    blocks = N - outside
    L = np.asarray(c["n_layers"], dtype=np.float64)
    share = np.ceil(L / pp) / L
    one = pp == 1
    return {
        "shape_params": pb["total"],
        "outside_params": outside,
        "first_stage_params": np.where(one, N, blocks * share + inputs),
        "last_stage_params": np.where(one, N, blocks * share + table),
    }


def adafactor_elements(c: dict, shape_params=None):
    """Adafactor's second-moment elements for the model in `c`, or None when no row uses Adafactor."""
    if not np.any(np.asarray(c["optimizer"]) == "adafactor"):
        return None
    return M.adafactor_state_elements(c["n_layers"], c["d_model"], c["n_heads"], c["n_kv_heads"], c["d_ff"],
                                      c["vocab_size"], c["mlp"], c["n_experts"], c["tied_embeddings"], c["n_params"],
                                      shape_params)


STATE_PARTS = ("weights_bytes", "grads_bytes", "grad_accum_bytes", "optimizer_bytes", "master_bytes")
TOTAL_PARTS = STATE_PARTS + ("activations_bytes", "logits_bytes", "overhead_bytes")
BINDING = ("state", "activations", "logits", "overhead")


def evaluate(**c) -> dict:
    """All record columns from input columns (numpy arrays or scalars that broadcast).

    Required columns: the architecture fields (n_layers, d_model, n_heads, n_kv_heads, d_ff, vocab_size, mlp,
    norm, dropout, ...), n_params and n_active_params (from the model), the accelerator's peak_flops_per_s
    (for the chosen compute dtype), gpu_memory_bytes and price_per_gpu_hour, and the training inputs of `Config`.
    Invalid rows get valid=False and a reason; their numbers are NaN (never a plausible wrong value).
    """
    code = check(c)
    valid = code == 0
    s, b = c["seq_len"], c["micro_batch"]
    L, h, a = c["n_layers"], c["d_model"], c["n_heads"]
    # Invalid rows only need usable divisors here (their numbers become NaN below). Masking with `valid` itself
    # would broadcast tp, pp and n_gpus to the whole grid and make every term after them full-size.
    tp = np.where(np.asarray(c["tp"]) >= 1, c["tp"], 1)
    pp = np.where(np.asarray(c["pp"]) >= 1, c["pp"], 1)
    n_gpus = np.where(np.asarray(c["n_gpus"]) >= 1, c["n_gpus"], 1)

    # --- model state, per pipeline stage -------------------------------------------------------------------
    split = stage_split(c, pp)
    ada = adafactor_elements(c, split["shape_params"])
    st_first = M.state_bytes(c["n_params"], c["weight_dtype"], c["grad_dtype"], c["master_weights"],
                             c["grad_accum_fp32"], c["optimizer"], c["zero_stage"], n_gpus, tp, pp, ada,
                             split["first_stage_params"])
    st_last = M.state_bytes(c["n_params"], c["weight_dtype"], c["grad_dtype"], c["master_weights"],
                            c["grad_accum_fp32"], c["optimizer"], c["zero_stage"], n_gpus, tp, pp, ada,
                            split["last_stage_params"])

    # --- activations ---------------------------------------------------------------------------------------
    led = M.layer_ledger(s, b, h, a, c["n_kv_heads"], c["d_ff"], c["mlp"], c["norm"], c["dropout"],
                         c["flash_attention"], "none", tp, c["sequence_parallel"], c["profile"],
                         n_experts=c["n_experts"], top_k=c["top_k"])
    full_layer = sum(led.values())
    core = led["softmax_output"] + led["softmax_dropout_mask"] + led["dropout_output"] + led["softmax_lse"]
    layer_input = led["norm1_input"]  # 2sbh (÷t with sequence parallelism): what full recomputation keeps
    rec = np.asarray(c["recompute"])
    per_layer = np.select([rec == "selective", rec == "full"], [full_layer - core, layer_input], full_layer)
    first = M.activation_bytes(L, per_layer, layer_input, full_layer, rec, pp, c["virtual_stages"])
    acts_first = first["stored_bytes"] + first["recompute_peak_bytes"]
    # the last pipeline stage holds one micro-batch of its ⌈L/p⌉ layers (1F1B), and the logits
    acts_last = (np.where(rec == "full", layer_input, per_layer) * np.ceil(np.asarray(L) / pp)
                 + first["recompute_peak_bytes"])
    logits = M.logits_bytes(s, b, c["vocab_size"], tp, c["fp32_loss"])
    state_first, state_last = sum(st_first.values()), sum(st_last.values())
    last_is_worst = (pp > 1) & (state_last + acts_last + logits > state_first + acts_first)
    st = {k: np.where(last_is_worst, st_last[k], st_first[k]) for k in st_first}
    state = np.where(last_is_worst, state_last, state_first)
    activations = np.where(last_is_worst, acts_last, acts_first)
    logits_here = np.where(pp > 1, np.where(last_is_worst, logits, 0.0), logits)

    subtotal = state + activations + logits_here
    overhead = M.overhead_bytes(subtotal, c["overhead_fixed_bytes"], c["fragmentation_frac"])
    total = subtotal + overhead
    cap = np.asarray(c["gpu_memory_bytes"], dtype=np.float64)
    groups = np.stack(np.broadcast_arrays(state, activations, logits_here, overhead))
    binding = np.asarray(BINDING, dtype=object)[np.argmax(groups, axis=0)]

    # --- compute, time, cost -------------------------------------------------------------------------------
    attn = F.attention_flops_per_token(L, h, s, c["attention_flops"])
    fpt = F.model_flops_per_token(c["n_active_params"], L, h, s, c["attention_flops"])
    hw = F.hardware_flops_per_token(fpt, attn, rec, 6.0 * split["outside_params"])
    tokens = np.asarray(c["tokens"], dtype=np.float64)
    train_flops = fpt * tokens
    time_s = F.train_time_s(train_flops, n_gpus, c["peak_flops_per_s"], c["mfu"], c["time_overhead_frac"])
    tc = F.time_and_cost(time_s, n_gpus, c["price_per_gpu_hour"])
    tps = np.asarray(c["tokens_per_second"], dtype=np.float64)
    mfu_meas = F.achieved_utilization(tps, fpt, n_gpus, c["peak_flops_per_s"])
    hfu_meas = F.achieved_utilization(tps, hw, n_gpus, c["peak_flops_per_s"])
    above = hfu_meas > 1  # NaN (no measurement) compares False
    if np.any(above):
        code = np.where((code == 0) & above, MEASURED_ABOVE_PEAK, code)
        valid = code == 0

    nan = np.nan
    out = {
        "valid": valid,
        "reason": reason_text(code),
        "reason_code": code,
        "n_params": c["n_params"],
        "n_active_params": c["n_active_params"],
        "dp": np.where(valid, n_gpus // np.maximum(tp * pp, 1), 1),
        **st,
        "state_bytes": state,
        "activations_bytes": activations,
        "activations_per_layer_bytes": per_layer,
        "recompute_peak_bytes": first["recompute_peak_bytes"],
        "logits_bytes": logits_here,
        "overhead_bytes": overhead,
        "total_bytes": total,
        "gpu_memory_bytes": cap,
        "headroom_bytes": cap - total,
        "fits": total <= cap,
        "binding": binding,
        "worst_stage": np.where(last_is_worst, "last", "first"),
        "flops_per_token": fpt,
        "attention_flops_per_token": attn,
        "hardware_flops_per_token": hw,
        "train_flops": train_flops,
        "train_flops_6nd": 6.0 * np.asarray(c["n_active_params"], dtype=np.float64) * tokens,
        "peak_flops_per_s": c["peak_flops_per_s"],
        "time_s": time_s,
        **tc,
        "tokens_per_param": tokens / np.asarray(c["n_params"], dtype=np.float64),
        "price_per_gpu_hour": np.asarray(c["price_per_gpu_hour"], dtype=np.float64),
        "achieved_mfu": mfu_meas,
        "achieved_hfu": hfu_meas,
    }
    shape = np.broadcast_shapes(*(np.shape(v) for v in out.values()))
    for k, v in out.items():
        v = np.broadcast_to(v, shape)
        if k not in ("valid", "reason", "reason_code") and v.dtype.kind == "f":
            v = np.where(valid, v, nan)
        elif k == "fits":
            v = v & valid
        out[k] = v
    return out


# ---------------------------------------------------------------------------------------------------------------
# One configuration
# ---------------------------------------------------------------------------------------------------------------

MAX_INT = 2**31 - 1  # bound on integer inputs (GPUs, tokens per sequence, ...): beyond it numpy overflows
_NUM_INT = ("seq_len", "micro_batch", "n_gpus", "tp", "pp", "virtual_stages", "zero_stage")
_NUM_FLOAT = ("mfu", "tokens", "overhead_fixed_bytes", "fragmentation_frac", "time_overhead_frac")
_BOOL = ("sequence_parallel", "flash_attention", "master_weights", "grad_accum_fp32", "fp32_loss")
OVERHEAD_CHOICES = ("none", "realistic")
_CHOICES = {
    "recompute": M.RECOMPUTE_MODES, "optimizer": M.OPTIMIZERS, "grad_dtype": ("bf16", "fp16", "fp32"),
    "weight_dtype": ("bf16", "fp16", "fp32"), "compute_dtype": ("bf16", "fp16", "fp8", "fp32"),
    "attention_flops": F.ATTENTION_FLOPS, "profile": M.PROFILES,
}


@dataclass(frozen=True)
class Config:
    """One training setup. Defaults: the 16-byte mixed-precision AdamW recipe (seed 001), no sharding, no
    recomputation, no flash attention, attention FLOPs counted in full, 50% MFU (seed 000/002), no overheads."""

    model: Model
    gpu: Accelerator
    seq_len: int = 2048
    micro_batch: int = 1
    n_gpus: int = 1
    tp: int = 1
    pp: int = 1
    virtual_stages: int = 1
    zero_stage: int = 0
    sequence_parallel: bool = False
    recompute: str = "none"
    flash_attention: bool = False
    optimizer: str = "adamw"
    master_weights: bool = True
    grad_dtype: str = "bf16"
    weight_dtype: str = "bf16"
    grad_accum_fp32: bool = False
    compute_dtype: str = "bf16"
    fp32_loss: bool = False
    profile: str = "fused"
    attention_flops: str = "full"
    mfu: float = 0.5
    tokens: float = 1e12
    price_per_gpu_hour: float | None = None  # None: the accelerator's catalog price
    tokens_per_second: float | None = None  # measured, whole job
    step_time_s: float | None = None  # measured; with global_batch gives tokens_per_second
    global_batch: int | None = None  # sequences per optimizer step
    overhead_fixed_bytes: float = 0.0
    fragmentation_frac: float = 0.0
    time_overhead_frac: float = 0.0

    def __post_init__(self):
        if not isinstance(self.model, Model):
            raise ValueError(f"model: expected a Model, got {type(self.model).__name__}")
        if not isinstance(self.gpu, Accelerator):
            raise ValueError(f"gpu: expected an Accelerator, got {type(self.gpu).__name__}")
        for f in _NUM_INT:
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ValueError(f"{f}: must be an integer, got {v!r}")
            if abs(v) > MAX_INT:
                raise ValueError(f"{f}: must be at most {MAX_INT:,}, got {v!r}")
        for f in _NUM_FLOAT:
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.number)) or not math.isfinite(v):
                raise ValueError(f"{f}: must be a finite number, got {v!r}")
        for f in ("price_per_gpu_hour", "tokens_per_second", "step_time_s", "global_batch"):
            v = getattr(self, f)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float, np.number))
                                  or not math.isfinite(v) or v < 0):
                raise ValueError(f"{f}: must be a non-negative number, got {v!r}")
        if self.tokens_per_second is not None and self.step_time_s is not None:
            raise ValueError("tokens_per_second: give either tokens_per_second or step_time_s with global_batch")
        if (self.step_time_s is None) != (self.global_batch is None):
            raise ValueError("step_time_s: needs global_batch (sequences per step) too, and vice versa")
        if self.step_time_s is not None and self.step_time_s <= 0:
            raise ValueError("step_time_s: must be > 0")
        if self.global_batch is not None and (self.global_batch != int(self.global_batch) or self.global_batch < 1):
            raise ValueError(f"global_batch: must be an integer ≥ 1, got {self.global_batch!r}")
        if self.tokens_per_second is not None and self.tokens_per_second <= 0:
            raise ValueError("tokens_per_second: must be > 0")
        for f in _BOOL:
            if not isinstance(getattr(self, f), (bool, np.bool_)):
                raise ValueError(f"{f}: expected true/false, got {getattr(self, f)!r}")
        for f, allowed in _CHOICES.items():
            if getattr(self, f) not in allowed:
                raise ValueError(f"{f}: {getattr(self, f)!r} is not one of {', '.join(allowed)}")
        cols = self.columns()
        code = int(check(cols))
        if code:
            raise ValueError(_explain(code, self))
        if math.isfinite(self.measured_tokens_per_second):  # a measurement is checked against the peak
            out = evaluate(**cols)
            if not bool(out["valid"]):
                raise ValueError(f"{out['reason']}: {self.measured_tokens_per_second:.4g} tokens/s on "
                                 f"{self.n_gpus} GPUs")

    @property
    def measured_tokens_per_second(self) -> float:
        if self.tokens_per_second is not None:
            return float(self.tokens_per_second)
        if self.step_time_s is not None:
            return self.global_batch * self.seq_len / self.step_time_s
        return math.nan

    def columns(self) -> dict:
        """The input columns of `evaluate` for this one point (scalars)."""
        m, g = self.model, self.gpu
        peak = peak_or_nan(g, self.compute_dtype)
        price = g.price_usd_per_gpu_hour if self.price_per_gpu_hour is None else self.price_per_gpu_hour
        cols = {k: v for k, v in asdict(self).items() if k not in ("model", "gpu")}
        cols.update(m.arch())
        cols.update(n_params=m.n_params, n_active_params=m.n_active_params, peak_flops_per_s=peak,
                    gpu_memory_bytes=g.memory_bytes, price_per_gpu_hour=price,
                    tokens_per_second=self.measured_tokens_per_second)
        return cols

    def replace(self, **kw) -> "Config":
        """A copy with some fields changed (validated again). Architecture fields go to the model."""
        arch = {k: kw.pop(k) for k in list(kw) if k in ARCH_FIELDS}
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        if arch:
            d["model"] = self.model.with_overrides(**arch)
        unknown = set(kw) - set(d)
        if unknown:
            raise ValueError(f"{sorted(unknown)[0]}: not an input")
        d.update(kw)
        return Config(**d)


def peak_or_nan(g: Accelerator, compute_dtype: str) -> float:
    """The accelerator's peak for the dtype, or NaN when it has none — which `check` turns into the reason
    "compute_dtype: this accelerator has no peak for that dtype" (so one rule serves a point and a sweep)."""
    try:
        return g.peak_flops_per_s(compute_dtype)
    except ValueError:
        return math.nan


def _explain(code: int, cfg: Config) -> str:
    """The reason with the values that broke it, keyed by the reason's field (not by its position)."""
    msg = REASONS[code]
    m = cfg.model
    detail = {
        "tp·pp": f" (tp={cfg.tp}, pp={cfg.pp}, n_gpus={cfg.n_gpus})",
        "tp": f" (tp={cfg.tp}, n_heads={m.n_heads})",
        "pp": f" (pp={cfg.pp}, n_layers={m.n_layers})",
        "mfu": f" (got {cfg.mfu})",
        "zero_stage": f" (got {cfg.zero_stage})",
        "compute_dtype": f" ({cfg.gpu.name} has no {cfg.compute_dtype} peak)",
        "d_ff": f" (d_ff={m.d_ff}, tp={cfg.tp})",
        "virtual_stages": f" (virtual_stages={cfg.virtual_stages}, n_layers={m.n_layers}, pp={cfg.pp})",
    }.get(msg.split(":")[0], "")
    return msg + detail


def estimate(cfg: Config) -> dict:
    """The full record for one configuration as plain Python values (floats, bools, str)."""
    out = evaluate(**cfg.columns())
    rec = {k: _scalar(v) for k, v in out.items() if k != "reason_code"}
    rec["model"] = cfg.model.name
    rec["gpu"] = cfg.gpu.name
    if not math.isfinite(cfg.measured_tokens_per_second):
        rec["achieved_mfu"] = None
        rec["achieved_hfu"] = None
    return rec


def _scalar(v):
    v = np.asarray(v).item() if np.ndim(v) == 0 else v
    if isinstance(v, (np.floating, float)):
        return float(v)
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    return v


def activation_ledger(cfg: Config) -> list[dict]:
    """The per-layer ledger for display: one row per tensor with bytes per layer on one GPU (0-byte tensors
    dropped), under the configuration's recompute mode (full recomputation shows the working set rebuilt
    during a layer's backward, plus the kept layer input)."""
    m = cfg.model
    rec = "none" if cfg.recompute == "full" else cfg.recompute
    led = M.layer_ledger(cfg.seq_len, cfg.micro_batch, m.d_model, m.n_heads, m.n_kv_heads, m.d_ff, m.mlp, m.norm,
                         m.dropout, cfg.flash_attention, rec, cfg.tp, cfg.sequence_parallel, cfg.profile,
                         n_experts=m.n_experts, top_k=m.top_k)
    info = {name: (what, op) for name, what, op in M.LEDGER_TENSORS}
    rows = [{"tensor": k, "bytes": float(v), "what": info[k][0], "kept_by": info[k][1]}
            for k, v in led.items() if float(v) > 0]
    return rows


# ---------------------------------------------------------------------------------------------------------------
# Building a Config from the flat input vocabulary (CLI, JSON, URL)
# ---------------------------------------------------------------------------------------------------------------

GPU_FIELDS = ("peak_flops_per_s", "gpu_memory_bytes", "memory_bandwidth_bytes_per_s")


def build_model(model: str | None = None, n_params: float | None = None, hf_config=None, **arch) -> Model:
    """A model from a preset name, a raw count, or a Hugging Face config, then architecture overrides."""
    sources = sum(x is not None for x in (model, n_params, hf_config))
    if sources > 1:
        raise ValueError("model: give one of model (preset), n_params (raw) or hf_config")
    arch = {k: v for k, v in arch.items() if v is not None}
    for k, v in arch.items():
        if k not in ("mlp", "norm", "bias", "position", "dropout", "tied_embeddings") and (
                isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < (0 if k == "max_position" else 1)):
            raise ValueError(f"{k}: must be an integer ≥ {0 if k == 'max_position' else 1}, got {v!r}")
    if hf_config is not None:
        from .model import from_hf_config
        base = from_hf_config(hf_config)
    elif n_params is not None:
        base = raw_model(n_params)
    elif model is not None:
        base = get_preset(model)
    else:
        needed = ("n_layers", "d_model", "n_heads")
        missing = [k for k in needed if k not in arch]
        if missing:
            raise ValueError(f"model: give a preset (model), n_params, or at least {', '.join(needed)} "
                             f"(missing {', '.join(missing)})")
        return Model(**arch)
    return base.with_overrides(**arch) if arch else base


PEAK_FIELD = {"bf16": "peak_bf16_flops_per_s", "fp16": "peak_bf16_flops_per_s", "fp8": "peak_fp8_flops_per_s",
              "fp32": "peak_fp32_flops_per_s"}


def build_gpu(gpu: str | None = "h100-sxm", peak_flops_per_s=None, gpu_memory_bytes=None,
              memory_bandwidth_bytes_per_s=None, compute_dtype: str = "bf16") -> Accelerator:
    """A catalog accelerator, or 'custom' with typed numbers; numbers given with a catalog name override it.
    `peak_flops_per_s` is the peak for `compute_dtype` (the dtype the run computes in)."""
    from dataclasses import replace as dc_replace

    from .hardware import custom_accelerator
    if compute_dtype not in PEAK_FIELD:
        raise ValueError(f"compute_dtype: {compute_dtype!r} is not one of {', '.join(PEAK_FIELD)}")
    for name, v in (("peak_flops_per_s", peak_flops_per_s), ("gpu_memory_bytes", gpu_memory_bytes),
                    ("memory_bandwidth_bytes_per_s", memory_bandwidth_bytes_per_s)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float, np.number))
                              or not math.isfinite(v) or v <= 0):
            raise ValueError(f"{name}: must be a positive number, got {v!r}")
    over = {}
    if peak_flops_per_s is not None:
        over[PEAK_FIELD[compute_dtype]] = float(peak_flops_per_s)
    if gpu_memory_bytes is not None:
        over["memory_bytes"] = float(gpu_memory_bytes)
    if memory_bandwidth_bytes_per_s is not None:
        over["memory_bandwidth_bytes_per_s"] = float(memory_bandwidth_bytes_per_s)
    if gpu == "custom" or gpu is None:
        missing = [k for k, v in (("peak_flops_per_s", peak_flops_per_s), ("gpu_memory_bytes", gpu_memory_bytes),
                                  ("memory_bandwidth_bytes_per_s", memory_bandwidth_bytes_per_s)) if v is None]
        if missing:
            raise ValueError(f"gpu: a custom accelerator needs {', '.join(missing)}")
        acc = custom_accelerator(float(peak_flops_per_s), float(gpu_memory_bytes), float(memory_bandwidth_bytes_per_s))
        return dc_replace(acc, **over)
    acc = get_accelerator(gpu)
    return dc_replace(acc, name=f"{acc.name} (modified)", **over) if over else acc


def config_from_inputs(**inp) -> Config:
    """A Config from the flat vocabulary: model/n_params/hf_config + architecture fields, gpu (+ custom numbers),
    recipe (sets weight_dtype, grad_dtype, master_weights, grad_accum_fp32, optimizer unless given), overhead
    ('none' | 'realistic', or overhead_fixed_bytes/fragmentation_frac), and the Config fields."""
    inp = {k: v for k, v in inp.items() if v is not None}
    model = build_model(inp.pop("model", None), inp.pop("n_params", None), inp.pop("hf_config", None),
                        **{k: inp.pop(k) for k in list(inp) if k in ARCH_FIELDS})
    gpu = build_gpu(inp.pop("gpu", "h100-sxm"), **{k: inp.pop(k) for k in list(inp) if k in GPU_FIELDS},
                    compute_dtype=inp.get("compute_dtype", "bf16"))
    recipe = inp.pop("recipe", None)
    if recipe is not None:
        if recipe not in M.RECIPES:
            raise ValueError(f"recipe: unknown recipe {recipe!r}; known: {', '.join(M.RECIPES)}")
        wd, gd, mw, acc, opt = M.RECIPES[recipe]
        for k, v in (("weight_dtype", wd), ("grad_dtype", gd), ("master_weights", mw), ("grad_accum_fp32", acc),
                     ("optimizer", opt)):
            inp.setdefault(k, v)
    overhead = inp.pop("overhead", None)
    if overhead is not None:
        if overhead not in OVERHEAD_CHOICES:
            raise ValueError(f"overhead: must be none or realistic, got {overhead!r}")
        if overhead == "realistic":
            inp.setdefault("overhead_fixed_bytes", M.REALISTIC_OVERHEAD_BYTES)
            inp.setdefault("fragmentation_frac", M.REALISTIC_FRAGMENTATION_FRAC)
    known = {f.name for f in fields(Config)} - {"model", "gpu"}
    unknown = set(inp) - known
    if unknown:
        raise ValueError(f"{sorted(unknown)[0]}: not an input; known inputs: {', '.join(sorted(known))}")
    return Config(model=model, gpu=gpu, **inp)
