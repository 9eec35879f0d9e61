"""The estimate: one vectorised function from input columns to the record, and a frozen `Config` for one point.

`evaluate(**columns)` takes the input vocabulary as numpy arrays or scalars (they broadcast) and returns every
record column, with `valid`/`reason` for combinations that make no sense. A sweep of a million rows and a single
estimate run this same code; `estimate(config)` is the scalar wrapper that raises `ValueError` instead.
"""
from __future__ import annotations

import math
from dataclasses import field, fields, make_dataclass

import numpy as np

from . import flops as F
from . import memory as M
from . import energy as EN
from . import goodput as GP
from . import intervals as IV
from . import lowp as LP
from . import profiles as PF
from . import recompute as RC
from . import schedule as SC
from . import steptime as ST
from . import vec as VE
from .hardware import Accelerator, catalog, family_names, get_accelerator, peak_field, peak_or_nan, tier_price  # noqa: F401  (peak_or_nan: re-export)
from .inputs import (BY_NAME, canonical_inputs, choices_text, CONFIG_FIELDS, expert_tp, GPU_FIELDS, MAX_INT, MEASURED_ABOVE_PEAK, PRESET_INPUTS, REASONS,  # noqa: F401
                     NO_GOODPUT, TIME_OVERFLOW, lora_width,
                     check, reason_text)
from . import model as MD
from .model import ARCH_FIELDS, Model, get_preset, raw_model
from .tables import BASE_FORMATS, GATED_MLPS
from .record import BINDING, STAGES, STATE_PARTS, TIME_SOURCES, TOTAL_PARTS  # noqa: F401  (re-exported for callers)

# ---------------------------------------------------------------------------------------------------------------
# The vectorised estimate
# ---------------------------------------------------------------------------------------------------------------

def stage_split(c: dict, pp) -> dict:
    """Parameters held by the first and the last pipeline stage (before tensor parallelism and ZeRO).

    The transformer blocks split by layers: a stage holds ⌈L/p⌉ of them (uneven splits put the extra layers on
    the busiest stage). The input embedding and learned positions sit on the first stage, the LM head on the last;
    with tied embeddings the last stage keeps its own copy of the table for the head (Megatron-LM shares it by
    all-reducing its gradient). With the embedding and the loss counted as layers in the split
    (`pp_embedding_loss_slots`, core/schedule.stage_layers) the first and last stages hold one layer fewer than the
    middle ones, and the "first" stage's figure is the larger of the first stage and the second (which holds a full
    stage of layers and, in the 1F1B warm-up, one micro-batch fewer: it can hold the most activations); a custom
    layout (`pp_layout`) puts its own counts on the first, the last and the busiest rank. With p = 1
    one GPU holds all n_params. In raw-N mode the stand-in shape's split
    is scaled to n_params (`outside_params` then scales too, so hardware FLOPs never fall below model FLOPs).
    Multi-token-prediction modules (DeepSeek-V3) train with the model (full training) and sit with the head on the
    last stage (`mtp_params`; DeepSeek-V3 §3.2.2); `block_share` is the blocks' share a stage holds.
    """
    arch = MD.arch_columns(c)
    pb = MD.param_breakdown(**arch)
    N = np.asarray(c["n_params"], dtype=np.float64)
    scale = N / pb["total"]
    table = pb["embedding"] * scale
    inputs = table + pb["position"] * scale
    outside = inputs + pb["lm_head"] * scale
    blocks = N - outside
    L = np.asarray(c["n_layers"], dtype=np.float64)
    sl = SC.stage_layers(L, pp, c.get("pp_embedding_loss_slots", False), c.get("pp_layout", ""))
    share = sl["most"] / L
    end_share = sl["first"] / L
    one = pp == 1
    experts = np.where(np.asarray(c["n_experts"]) > 1, pb["experts"] * scale, 0.0)  # routed expert MLPs
    mtp = MD.mtp_breakdown(**arch)
    full = np.asarray(c.get("training", "full")) == "full"  # LoRA fine-tuning loads the main model only
    mtp_p = np.where(full, mtp["mtp"], 0.0)
    mtp_e = np.where(full, mtp["mtp_experts"], 0.0)
    first = np.where(one, N + mtp_p, np.where(sl["slots"], np.maximum(blocks * end_share + inputs, blocks * share),
                                               blocks * share + inputs))
    last = np.where(one, N + mtp_p, blocks * sl["last"] / L + table + mtp_p)
    first_e = np.where(one, experts + mtp_e, experts * share)
    last_e = np.where(one, experts, experts * sl["last"] / L) + mtp_e
    # a DualPipe schedule's first rank also holds the last chunk (core/schedule.both_ends): DualPipe's whole last
    # stage (two stages per GPU: schedule.TWO_STAGES), DualPipeV's V its LM head and MTP modules beside the first
    # chunk (its two chunks are the planner's virtual stages, the blocks already counted). The first rank is the
    # busiest then (DualPipe's last rank holds stages p − 1 and 0, the same load; DualPipeV's middle chunks only), and
    # the "last" figures stand for a middle rank
    sched = np.asarray(c.get("pp_schedule", "1f1b"))
    ends = SC.both_ends(sched, pp)
    if np.any(ends):
        two = np.isin(sched, SC.TWO_STAGES)
        first = np.where(ends, first + np.where(two, last, table + mtp_p), first)
        first_e = np.where(ends, first_e + np.where(two, last_e, mtp_e), first_e)
        last = np.where(ends, blocks * share, last)
        last_e = np.where(ends, experts * share, last_e)
    return {
        "shape_params": pb["total"],
        "outside_params": outside,
        "first_stage_params": first,
        "last_stage_params": last,
        # routed experts (split over ep): the busiest stage's layers', and on the last stage (the only one at pp 1)
        # the MTP modules' too (an MoE block each, expert-parallel as any)
        "stage_expert_params": first_e,
        "last_stage_expert_params": last_e,
        "mtp_params": mtp_p,
        "mtp_active_params": np.where(full, mtp["mtp_active"], 0.0),
        "block_share": np.where(one, 1.0, share),
    }


def training_split(c: dict, split: dict) -> dict:
    """What trains and how the frozen rest is stored, per pipeline stage (parameters, before tp and ZeRO).

    full: every parameter trains, except `frozen_frac` of them (kept in the weight dtype). lora / qlora: the base
    is frozen; adapters (`model.lora_params`, in the blocks, so a stage holds its block share of them) train. A
    quantised base (`base_dtype` int8 or nf4, `tables.BASE_FORMATS`) stores the blocks' linear weights
    (`model.block_linear_params`) at its bytes per parameter with the quantisation constants (NF4: 4.127 bits
    with double quantization); the rest of the frozen model stays in the weight dtype. In raw-N mode the stand-in
    shape's adapter and linear counts scale to n_params."""
    arch = MD.arch_columns(c)
    lora = VE.isin(np.asarray(c["training"]), ("lora", "qlora"))
    scale = np.asarray(c["n_params"], dtype=np.float64) / split["shape_params"]
    if np.any(lora):
        adapters = np.where(lora, MD.lora_params(c["lora_rank"], c["lora_targets"], **arch) * scale, 0.0)
        adapters_active = np.where(lora, MD.lora_params(c["lora_rank"], c["lora_targets"], True, **arch) * scale,
                                   0.0)
    else:
        adapters = adapters_active = np.zeros(np.shape(lora))
    base = np.asarray(c["base_dtype"])
    quantized = np.zeros(base.shape, dtype=bool)
    qbytes = np.zeros(base.shape)
    for f in BASE_FORMATS.values():
        if f.quantized:
            quantized = quantized | (base == f.name)
            qbytes = np.where(base == f.name, np.where(np.asarray(c["double_quant"], dtype=bool),
                                                       f.bytes_per_param_double_quant, f.bytes_per_param), qbytes)
    quantized = quantized & lora
    linear = MD.block_linear_params(**arch) * scale if np.any(quantized) else 0.0
    frozen_frac = np.where(lora, 1.0, np.asarray(c["frozen_frac"], dtype=np.float64))
    float_bytes = M.dtype_bytes_array(np.where(VE.isin(base, M.STATE_DTYPES), base, "bf16"))
    share = split["block_share"]
    out = {"adapters": adapters, "adapters_active": adapters_active, "quantized_bytes": qbytes,
           "frozen_bytes": np.where(lora & ~quantized, float_bytes, M.dtype_bytes_array(c["weight_dtype"])),
           "frozen_frac": frozen_frac, "lora": lora, "quantized_total": np.where(quantized, linear, 0.0)}
    for st in ("first", "last"):
        P = split[f"{st}_stage_params"]
        out[f"{st}_trainable"] = np.where(frozen_frac == 0, P, P * (1.0 - frozen_frac))
        out[f"{st}_adapters"] = adapters * share
        out[f"{st}_quantized"] = np.where(quantized, linear * share, 0.0)
    return out


# inputs added after the column vocabulary settled (issues 19, 20): hand-built columns may lack them
LATE_INPUTS = ("etp", "pp_schedule", "document_tokens", "moe_capacity_factor", "moe_load_imbalance",
               "moe_pad_to_capacity", "moe_overlap",
               "moe_dispatcher", "pp_embedding_loss_slots", "pp_layout", "activation_offload_layers",
               "distribute_saved_activations",
               "fp8_recipe", "fp8_param_gather", "fp8_attention", "price_tier", "preemption_rate_per_gpu_hour",
               "failure_rate_per_gpu_hour", "storage_bytes_per_s", "restart_s", "checkpoint_interval_s",
               "power_draw_frac", "node_overhead_frac", "pue", "carbon_kg_per_kwh", "optimizer_in_backward",
               "paged_optimizer", "sac_saves_all_to_all", "bf16_first_layers", "bf16_last_layers")


def derived_columns(c: dict) -> dict:
    """Columns the rules and formulas read that follow from the inputs: whether MFU is "auto", the global batch
    the step uses (default one micro-batch per data-parallel replica, dp·micro_batch), bytes of the state dtypes.
    Idempotent; `evaluate` and `Config.columns` both apply it."""
    c = dict(c)
    for name in LATE_INPUTS:  # columns built by hand (older callers, tests) get the schema's own defaults
        c.setdefault(name, BY_NAME[name].default)
    c.setdefault("mfu_auto", False)
    c.setdefault("achieved_flops_per_s", np.nan)
    c.setdefault("cp", 1)
    c.setdefault("ep", 1)
    for k, v in {**MD.ARCH_DEFAULTS, **TRAINING_DEFAULTS, **FRAMEWORK_DEFAULTS}.items():  # "off" where not given
        c.setdefault(k, v)
    if c.get("recompute_modules") is None:
        c["recompute_modules"] = ""
    if c.get("profile") is None:  # the framework's kernels: fused, eager PyTorch unless compiled
        prof = PF.kernel_impl(c["framework"], c["compile"])
        c["profile"] = np.where(prof == "", "fused", prof)  # an unknown framework: refused by its own rule
    if c.get("zero_stage") is None:  # hand-built columns without a stage: the framework's own
        c["zero_stage"] = PF.default_zero_stage(c["framework"])
    if c.get("dp_overlap") is None or c.get("tp_overlap") is None:  # the framework's overlap defaults
        dp_ov, tp_ov = PF.default_overlap(c["framework"], c["zero_stage"])
        if c.get("dp_overlap") is None:
            c["dp_overlap"] = dp_ov
        if c.get("tp_overlap") is None:
            c["tp_overlap"] = tp_ov
    # einsum dispatch computes every slot of the capacity buffers: its experts are padded to capacity
    c["moe_pad_to_capacity"] = np.asarray(c["moe_pad_to_capacity"], dtype=bool) \
        | (np.asarray(c["moe_dispatcher"]) == "einsum")
    # dense dispatch (Hugging Face's Llama 4) runs every expert on every token: a capacity of E/k, padded
    dense = np.asarray(c["moe_dispatcher"]) == "dense"
    if np.any(dense):
        c["moe_capacity_factor"] = np.where(dense, np.asarray(c["n_experts"], dtype=np.float64)
                                            / np.maximum(np.asarray(c["top_k"], dtype=np.float64), 1.0),
                                            c["moe_capacity_factor"])
        c["moe_pad_to_capacity"] = c["moe_pad_to_capacity"] | dense
    # a framework whose activations are always split over the tensor axis (maxtext: XLA's sharding rules)
    c["sequence_parallel"] = PF.sequence_parallel_used(c["framework"], c["tp"], c["sequence_parallel"])
    if c.get("zero_convention") is None:  # how the framework allocates ZeRO's buffers
        c["zero_convention"] = PF.zero_convention(c["framework"])
    if c.get("host_memory_bytes") is None:
        c["host_memory_bytes"] = np.nan
    if c.get("base_dtype") is None:  # LoRA's base in the weight dtype, QLoRA's in NF4
        c["base_dtype"] = np.where(np.asarray(c["training"]) == "qlora", "nf4", np.asarray(c["weight_dtype"]))
    gb = np.asarray(np.nan if c.get("global_batch") is None else c["global_batch"], dtype=np.float64)
    if c.get("step_time_s") is not None:  # a measured step gives the throughput (as Config.measured_tokens_per_second)
        step = np.asarray(c["step_time_s"])
        if step.dtype == object:  # columns gathered from several points: None where no step was measured
            step = np.where(step == None, np.nan, step).astype(np.float64)  # noqa: E711
        tps = np.asarray(c.get("tokens_per_second", np.nan), dtype=np.float64)
        c["tokens_per_second"] = np.where(np.isfinite(tps), tps, gb * np.asarray(c["seq_len"]) / step)
    dp = np.floor(np.asarray(c["n_gpus"], dtype=np.float64)
                  / np.maximum(np.asarray(c["tp"]) * np.asarray(c["pp"]) * np.asarray(c["cp"]), 1))
    # the optimizer stepped inside the backward takes no accumulation: its default global batch is dp·micro_batch
    target = np.where(np.asarray(c["optimizer_in_backward"], dtype=bool), 0, c.get("target_batch_tokens", 0))
    c["global_batch_used"] = np.where(np.isnan(gb), default_global_batch(dp, c["micro_batch"], c["seq_len"], target),
                                      gb)
    # a long step's steady state (no global batch, no target: the published ledgers' convention): no step count
    c["batch_steady"] = np.isnan(gb) & (np.asarray(c.get("target_batch_tokens", 0), dtype=np.float64) <= 0)
    return c


def _matmul_weights(c: dict) -> dict:
    """Each forward matmul component's share of a layer's matmul FLOPs (proportional to its weight elements; MoE:
    the top-k experts and shared experts per token): what partial recomputation's hardware FLOPs count."""
    f64 = lambda x: np.asarray(x, dtype=np.float64)  # noqa: E731
    h, a, kh, f = f64(c["d_model"]), f64(c["n_heads"]), f64(c["n_kv_heads"]), f64(c["d_ff"])
    hd, vd = MD.head_dims(h, a, c["head_dim"], c["v_head_dim"])
    fe, fs = MD.moe_widths(f, c["moe_d_ff"], c["shared_d_ff"])
    gated = np.where(VE.isin(np.asarray(c["mlp"]), GATED_MLPS), 2.0, 1.0)
    moe = f64(c["n_experts"]) > 1
    shared = np.where(moe, f64(c["n_shared_experts"]) * fs, 0.0)
    width = np.where(moe, f64(c["top_k"]) * fe + shared, f)
    # (shared_in / shared_out: the shared experts' part of mlp_in / mlp_out, which a recompute unit reruns apart)
    return {"qkv": h * (a * hd + kh * hd + kh * vd), "k_proj": h * kh * hd, "out": a * vd * h,
            "mlp_in": gated * width * h, "mlp_out": width * h, "shared_in": gated * shared * h,
            "shared_out": shared * h}


def default_global_batch(dp, micro_batch, seq_len, target_batch_tokens):
    """The global batch when none is given (sequences per optimizer step): the smallest multiple of dp·micro_batch
    whose tokens reach `target_batch_tokens` (the planner's 2^22 ≈ 4M tokens: Llama 3 §3.4.1 starts at 4M tokens per
    step; GPT-3 175B used 3.2M, Brown et al. 2020 Table 2.1), or one micro-batch per data-parallel replica when the
    target is 0 (the published ledgers' convention, `--conventions paper`). Vectorised."""
    unit = np.maximum(np.asarray(dp, dtype=np.float64), 1.0) * np.asarray(micro_batch, dtype=np.float64)
    tgt = np.asarray(target_batch_tokens, dtype=np.float64)
    steps = np.ceil(tgt / np.maximum(unit * np.asarray(seq_len, dtype=np.float64), 1.0))
    return unit * np.where(tgt > 0, np.maximum(steps, 1.0), 1.0)


# the issue-12 training inputs with their "off" values (for column dicts built without them)
TRAINING_DEFAULTS = {"training": "full", "lora_rank": 16, "lora_targets": "all", "double_quant": True,
                     "frozen_frac": 0.0, "offload": "none"}
# the issue-18 inputs with their "off" values (the framework's own rules fill profile and zero_convention)
FRAMEWORK_DEFAULTS = {"framework": "megatron", "compile": False, "attention_kernel": "auto", "chunked_loss": False, "recompute_modules": "", "recompute_layers": 0,
                      "remat_policy": "none", "remat_custom": "", "activation_offload": False, "dp_shard": 0, "dp_replicate": 1,
                      "efficiency_scale": 1.0, "network_scale": 1.0, "interval_low": 0.0, "interval_high": 0.0}


def adafactor_elements(c: dict, shape_params=None):
    """Adafactor's second-moment elements for the model in `c`, or None when no row uses Adafactor."""
    if not np.any(np.asarray(c["optimizer"]) == "adafactor"):
        return None
    return M.adafactor_state_elements(c["n_layers"], c["d_model"], c["n_heads"], c["n_kv_heads"], c["d_ff"],
                                      c["vocab_size"], c["mlp"], c["n_experts"], c["tied_embeddings"], c["n_params"],
                                      shape_params)


def _stage_state(c, n_gpus, tp, pp, ep, ada, stage_params, expert_params, tr=None, stage="first") -> dict:
    """Model-state parts per GPU for a pipeline stage holding `stage_params`. With expert parallelism the stage's
    routed experts (`expert_params`) split over ep ranks of the data-parallel group, so their ZeRO sharding runs
    over the remaining n_gpus/(tp·pp·ep) ranks (Megatron's expert-data-parallel group). `tr` (`training_split`):
    what of the stage trains, its adapters, and how its frozen part is stored (spread evenly over its parameters
    where expert parallelism splits them)."""
    args = (c["weight_dtype"], c["grad_dtype"], c["master_weights"], c["grad_accum_fp32"], c["optimizer"],
            c["zero_stage"])
    kw = {}
    if tr is not None:
        kw = dict(trainable_params=tr[f"{stage}_trainable"], adapter_params=tr[f"{stage}_adapters"],
                  quantized_params=tr[f"{stage}_quantized"], frozen_bytes=tr["frozen_bytes"],
                  quantized_bytes=tr["quantized_bytes"], zero_convention=c["zero_convention"])
    if not np.any(np.asarray(ep) > 1):
        return M.state_bytes(c["n_params"], *args, n_gpus, tp, pp, ada, stage_params, **kw)
    dense_kw, expert_kw = dict(kw), dict(kw)
    if tr is not None:
        keep = 1.0 - tr["frozen_frac"]
        frac = expert_params / np.where(stage_params > 0, stage_params, 1.0)  # the experts' share of the stage
        dense_kw.update(trainable_params=(stage_params - expert_params) * keep,
                        adapter_params=tr[f"{stage}_adapters"] * (1.0 - frac),
                        quantized_params=tr[f"{stage}_quantized"] * (1.0 - frac))
        expert_kw.update(trainable_params=expert_params / ep * keep,
                         adapter_params=tr[f"{stage}_adapters"] * frac / ep,
                         quantized_params=tr[f"{stage}_quantized"] * frac / ep)
    dense = M.state_bytes(c["n_params"], *args, n_gpus, tp, pp, ada, stage_params - expert_params, **dense_kw)
    # each expert over etp ranks (0: tp, Megatron's default), its ZeRO over the expert-data-parallel n/(pp·ep·etp)
    etp = expert_tp(c["etp"], tp)
    experts = M.state_bytes(c["n_params"], *args, n_gpus / ep, etp, pp, ada, expert_params / ep, **expert_kw)
    return {k: dense[k] + experts[k] for k in dense}


def _col(c, k):
    return np.asarray(c.get(k, np.nan), dtype=np.float64)


def _largest_of_four(a0, a1, a2, a3) -> np.ndarray:
    """Index (int16) of the largest of four broadcastable arrays, the first of equal maxima — np.argmax over their
    stack, by two pairwise duels and a final (no stacked full-size copy: ~4× faster on a sweep's chunk). A NaN never
    wins a duel (argmax would pick the first NaN); only invalid rows carry NaN, and their binding is null or unused."""
    hi01, hi23 = np.maximum(a0, a1), np.maximum(a2, a3)
    i01 = (np.asarray(a1) > np.asarray(a0)).astype(np.int16)
    i23 = 2 + (np.asarray(a3) > np.asarray(a2)).astype(np.int16)
    return np.where(hi23 > hi01, i23, i01).astype(np.int16, copy=False)


def evaluate(**c) -> dict:
    """All record columns from input columns (numpy arrays or scalars that broadcast).

    Required columns: the architecture fields (n_layers, d_model, n_heads, n_kv_heads, d_ff, vocab_size, mlp,
    norm, dropout, ...), n_params and n_active_params (from the model), the accelerator's peak_flops_per_s
    (for the chosen compute dtype), gpu_memory_bytes and price_per_gpu_hour, and the training inputs of `Config`.
    Invalid rows get valid=False and a reason; their numbers are NaN (never a plausible wrong value).
    """
    nan_invalid = c.pop("_nan_invalid", True)  # the sweep masks invalid rows as Arrow nulls itself
    as_codes = c.pop("_label_codes", False)  # the sweep: label columns as their index in the record's labels
    c = derived_columns(c)
    code = check(c)
    valid = code == 0
    b = c["micro_batch"]
    cp = np.where(np.asarray(c["cp"]) >= 1, c["cp"], 1)
    ep = np.where(np.asarray(c["ep"]) >= 1, c["ep"], 1)
    s_full = c["seq_len"]
    s = np.asarray(s_full) / cp  # tokens of a sequence one GPU holds (context parallelism splits the sequence)
    L, h = c["n_layers"], c["d_model"]
    # Invalid rows only need usable divisors here (their numbers become NaN below). Masking with `valid` itself
    # would broadcast tp, pp and n_gpus to the whole grid and make every term after them full-size.
    tp = np.where(np.asarray(c["tp"]) >= 1, c["tp"], 1)
    pp = np.where(np.asarray(c["pp"]) >= 1, c["pp"], 1)
    n_gpus = np.where(np.asarray(c["n_gpus"]) >= 1, c["n_gpus"], 1)

    # --- model state, per pipeline stage -------------------------------------------------------------------
    split = stage_split(c, pp)
    tr = training_split(c, split)
    ada = adafactor_elements(c, split["shape_params"])
    # hybrid sharding (HSDP, hpZ): ZeRO shards over the dp / dp_replicate ranks of one replica
    rep = np.where(np.asarray(c["dp_replicate"]) >= 1, c["dp_replicate"], 1)
    shard_gpus = n_gpus / rep
    # (DualPipe's first rank holds two stages, stage_split: their state as any stage's, over the same ZeRO group —
    # "Parameter Per Device 2×"; no source says the frameworks shard a stage's state over its two copies)
    st_first = _stage_state(c, shard_gpus, tp, pp, ep, ada, split["first_stage_params"],
                            split["stage_expert_params"], tr, "first")
    st_last = _stage_state(c, shard_gpus, tp, pp, ep, ada, split["last_stage_params"],
                           split["last_stage_expert_params"], tr, "last")
    st_first, host_first = M.offload_split(st_first, c["offload"])
    st_last, host_last = M.offload_split(st_last, c["offload"])
    # fp8 parameters (Megatron --fp8-param-gather): the model's weights are the fp8 tensors (1 byte; the fp32 master
    # stays in the optimizer), so the bf16 copy is gone and only the transpose remains a separate copy
    recipe = LP.effective(c["fp8_recipe"], c["compute_dtype"])
    fp8_params = np.asarray(c["fp8_param_gather"], dtype=bool) & (recipe != "none")
    if np.any(fp8_params):
        for stx in (st_first, st_last):
            stx["weights_bytes"] = np.where(fp8_params, stx["weights_bytes"] * 0.5, stx["weights_bytes"])
    # gathered-parameter buffers (ZeRO-3/FSDP conventions, parameter offload) and QLoRA's dequantised layer
    arch = MD.arch_columns(c)
    units = MD.unit_params(**arch)
    scale = np.asarray(c["n_params"], dtype=np.float64) / split["shape_params"]
    lora = tr["lora"]
    blocks_total = np.maximum(split["shape_params"] * scale - split["outside_params"], 1.0)
    q_frac = tr["quantized_total"] / blocks_total
    wb = M.dtype_bytes_array(c["weight_dtype"])
    fp32_master = M.fp32_param_master(c["zero_convention"], c["master_weights"], c["optimizer"], c["weight_dtype"])
    grad_b = np.where(fp32_master, 4.0, M.dtype_bytes_array(c["grad_dtype"]))  # an fp32 master's are fp32 (memory.py)
    gathered = np.where(lora, q_frac * tr["quantized_bytes"] + (1.0 - q_frac) * tr["frozen_bytes"], wb)
    trained_frac = np.where(lora, 0.0, 1.0 - tr["frozen_frac"])
    # an MoE block's routed experts are split over the expert-parallel ranks (each over etp of them, as the rest of
    # the block over tp, which param_buffer_bytes divides by): a rank gathers its own experts only
    block_local = np.maximum(units["block"] - units["block_experts"] * (1.0 - tp / (ep * expert_tp(c["etp"], tp))),
                             units["block_dense"])
    buffers = M.param_buffer_bytes(c["zero_stage"], c["zero_convention"], c["offload"],
                                   units["largest_layer"] * scale, np.maximum(block_local, units["root"]) * scale,
                                   tp, gathered, grad_b, trained_frac,
                                   np.where(tr["quantized_total"] > 0, units["largest_linear"] * scale, 0.0),
                                   overlap=c["dp_overlap"])
    # the optimizer stepped inside the backward (torchtune's optimizer_in_bwd): one parameter's gradient at a time.
    # The step still reads every gradient once (`grads_read`, for the optimizer's HBM time below)
    grads_read_first, grads_read_last = st_first["grads_bytes"], st_last["grads_bytes"]
    if np.any(np.asarray(c["optimizer_in_backward"], dtype=bool)):
        shard = shard_gpus / (tp * pp)  # the ZeRO group state_bytes shards over
        st_first, st_last = (M.optimizer_in_backward(stx, c["optimizer_in_backward"], units["largest_layer"] * scale,
                                                     grad_b, trained_frac, tp, c["zero_stage"], shard)
                             for stx in (st_first, st_last))

    # --- activations ---------------------------------------------------------------------------------------
    led = M.ledger(c, recompute="none", tp=tp, seq_len=s)
    full_layer = sum(led.values())
    # a hybrid's ledger is its average layer (memory.ledger weighs attention, Mamba-2 and MLP tensors by the layers
    # that have them); the MLP layers of a dense-first MoE model average their dense and MoE ledgers
    La, Lssm, Lf = MD.block_counts(L, c["mamba_layers"], c["attention_layers"], c["mlp_layers"])
    n_dense, n_moe = MD.layer_counts(Lf, c["n_experts"], c["n_dense_layers"])
    mixed = (n_dense > 0) & (n_moe > 0)
    if np.any(mixed):  # dense-first MoE models: the layers' average (exact for one stage, see docs/formulas.md)
        dense_layer = sum(M.ledger(c, recompute="none", tp=tp, seq_len=s, n_experts=1, top_k=1).values())
        full_layer = np.where(mixed, (n_dense * dense_layer + n_moe * full_layer) / Lf, full_layer)
    # 2sbh (÷t with sequence parallelism): what full recomputation keeps of every layer, whatever its kind (a
    # hybrid's ledger weighs norm1_input by its attention layers)
    layer_input = M.layer_input_bytes(s, b, h, tp, c["sequence_parallel"])
    # recomputation as the frameworks name it (core/recompute.py): tensors a recomputed unit does not keep
    moe_share = np.where(np.asarray(c["n_experts"]) > 1, np.where(mixed, n_moe / Lf, 1.0), 0.0)
    spec = recompute_policy(c, moe_share)
    dropped = sum((share * led[t] for t, share in spec["drop"].items() if t in led), 0.0)
    partial = np.maximum(full_layer - dropped, layer_input)
    # what the policy's device places alone keep (the rest of `partial` beyond the input waits on the host)
    partial_dev = partial if spec["drop_device"] is None else np.minimum(np.maximum(full_layer - sum(
        (share * led[t] for t, share in spec["drop_device"].items() if t in led), 0.0), layer_input), partial)
    full = spec["full"]
    sl = SC.stage_layers(L, pp, c["pp_embedding_loss_slots"], c["pp_layout"])
    Ls_act = sl["most"]
    K = np.asarray(c["recompute_layers"], dtype=np.float64)
    vs = np.asarray(c["virtual_stages"], dtype=np.float64)
    phi = np.where(full, np.where(K > 0, np.minimum(K * vs, Ls_act) / Ls_act, 1.0), 0.0)  # share recomputed whole
    # distributed saved activations (Megatron --distribute-saved-activations): a rank keeps 1/tp of each checkpointed
    # input, and gathers it whole again to recompute the layer
    ckpt_input = np.where(np.asarray(c["distribute_saved_activations"], dtype=bool), layer_input / tp, layer_input)
    per_layer = np.where(full, phi * ckpt_input + (1.0 - phi) * full_layer, partial)
    rec_peak = np.where(full, full_layer - ckpt_input, 0.0) * (phi > 0)
    # layers' worth the first stage holds (1F1B); with embedding/loss slots the larger of the first rank (a layer
    # fewer) and the second (a full stage, one micro-batch fewer in flight); with a layout (pp_layout) the larger of the
    # first rank and the other rank whose layers in flight peak (core/schedule.layout_ranks)
    # (the combined 1F1B of moe_overlap warms up one chunk more on the interleaved schedule: schedule.warmup_chunks)
    # (a step of m micro-batches per replica holds at most m: schedule.in_flight_of_rank; the published ledgers'
    # convention — no global batch, target_batch_tokens 0 — counts a long step's steady state, Korthikanti Eq. 5)
    ov = np.asarray(c["moe_overlap"], dtype=bool) & (pp > 1)
    steady = np.asarray(c["batch_steady"], dtype=bool)  # derived_columns
    m = np.where(steady, np.inf, SC.micro_batches(c["global_batch_used"], n_gpus, tp, pp, cp, b))
    # (a zero-bubble or DualPipe schedule holds its own count: schedule.schedule_held)
    sched = np.asarray(c["pp_schedule"])
    in_flight = np.where(sl["slots"], np.maximum(SC.in_flight_of_rank(sl["first"], pp, c["virtual_stages"], 0, m,
                                                                      overlap=ov, schedule=sched),
                                                 SC.in_flight_of_rank(sl["peak"], pp, c["virtual_stages"],
                                                                      sl["peak_rank"], m, overlap=ov, schedule=sched)),
                         SC.in_flight_of_rank(np.asarray(L, dtype=np.float64) / pp, pp, c["virtual_stages"], 0, m,
                                              overlap=ov, schedule=sched))
    # activation offload: everything but the two layers in flight (the one computed, the one moving) waits on the
    # host; with activation_offload_layers K only K of the stage's Ls layers move (Megatron --cpu-offloading-num-layers):
    # the share K/Ls of what the stage holds, the rest stays; a MaxText *_offloaded policy keeps each layer's input on
    # the device (decoder_layer_input: 'device'), a custom policy may send it (and or) the rest there
    flag = np.asarray(c["activation_offload"], dtype=bool)
    K_off = np.asarray(c["activation_offload_layers"], dtype=np.float64)
    off_share = np.where(flag, np.where(K_off > 0, np.minimum(K_off / Ls_act, 1.0), 1.0), 0.0)
    input_off = spec["input_offload"] & ~flag
    inp = np.minimum(per_layer, layer_input)
    rest = np.maximum(per_layer - layer_input, 0.0)
    rest_host = np.where(flag | full, 0.0, np.where(spec["host_all"], rest, np.maximum(partial - partial_dev, 0.0)))
    rest_dev = rest - rest_host

    def on_device(layers):  # Megatron offloads the first K layers: by the forward's end they are on the host;
        moved = off_share * layers  # when every layer moves, the two in flight (computed, moving) stay
        offloaded = per_layer * np.where(off_share >= 1.0, np.minimum(2.0, layers), layers - moved)
        two = np.minimum(2.0, layers)
        return np.where(flag, offloaded, inp * np.where(input_off, two, layers) + rest_dev * layers + rest_host * two)

    kept_device = on_device(in_flight)
    act_host = per_layer * in_flight - kept_device
    act_moved = np.where(flag, off_share * per_layer, rest_host + np.where(input_off, inp, 0.0)) * Ls_act  # per
    # micro-batch
    n_mtp = np.where(np.asarray(c["training"]) == "full", np.asarray(c["n_mtp_layers"], dtype=np.float64), 0.0)
    mtp_acts = per_layer * n_mtp
    chunk = np.where(np.asarray(c["chunked_loss"], dtype=bool), np.minimum(1.0, M.LOSS_CHUNK_TOKENS / (
        np.asarray(s, dtype=np.float64) * np.asarray(b, dtype=np.float64))), 1.0)  # chunked: one chunk's logits
    logits = M.logits_bytes(s, b, c["vocab_size"], tp, c["fp32_loss"]) * (1.0 + n_mtp) * chunk
    # the stage that holds the logits: they and a recomputed layer's working set never coexist (the output layer's
    # backward frees the logits before the first recomputed layer reruns its forward), so the peak is the larger of
    # the two; recompute_peak_bytes is what the recompute adds beyond the logits there (memory.recompute_beyond_logits)
    rec_last = M.recompute_beyond_logits(rec_peak, logits)
    rec_first = np.where(pp == 1, rec_last, rec_peak)
    first = {"stored_bytes": kept_device, "recompute_peak_bytes": rec_first + 0.0 * kept_device}
    acts_first = first["stored_bytes"] + first["recompute_peak_bytes"] + np.where(pp == 1, mtp_acts, 0.0)
    # the last pipeline stage holds one micro-batch of its layers (⌈L/p⌉, or what slots or a layout leave it; 1F1B),
    # and the logits
    acts_last = on_device(sl["last"]) + rec_last + mtp_acts
    state_first, state_last = sum(st_first.values()), sum(st_last.values())
    # a DualPipe schedule's first rank computes the loss too (schedule.both_ends): the logits and the MTP modules'
    # activations are its (beside a recompute working set: it runs one micro-batch's forward next to another's
    # backward), and the rank compared with it holds middle chunks without them
    ends = SC.both_ends(sched, pp)
    if np.any(ends):
        acts_first = np.where(ends, acts_first + mtp_acts, acts_first)
        acts_last = np.where(ends, acts_last - mtp_acts, acts_last)
    last_is_worst = (pp > 1) & ~ends & (state_last + acts_last + logits > state_first + acts_first)
    st = {k: np.where(last_is_worst, st_last[k], st_first[k]) for k in st_first}
    state = np.where(last_is_worst, state_last, state_first)
    offloaded = np.where(last_is_worst, host_last, host_first) + act_host
    activations = np.where(last_is_worst, acts_last, acts_first)
    logits_here = np.where(pp > 1, np.where(last_is_worst | ends, logits, 0.0), logits)

    # low-precision weight copies (core/lowp.py): per local parameter; under ZeRO-3 only the gathered layer's
    # (the bytes per parameter depend on the family: core.lowp.weight_copy_bytes; rows without a recipe have none)
    copy_b = 0.0
    if np.any(recipe != "none"):
        blackwell = np.asarray(c.get("family_index", -1.0), dtype=np.float64) == float(
            family_names().index("blackwell"))
        copy_b = np.maximum(LP.weight_copy_bytes(recipe, np.where(blackwell, "blackwell", "")) - np.where(
            fp8_params, 1.0, 0.0), 0.0)
    # a LoRA run's frozen base weights held as fp8 (fp8 primary weights): no transpose cache for the whole model,
    # one module's dgrad copy at a time, as under ZeRO-3 (decided 2026-12-05 from published runs that fit only so:
    # MLPerf Llama 2 70B LoRA on 8 GPUs at tp 1 — Dell's H200 (v5.0, NVIDIA's NeMo code) and AMD's MI300X (v5.0, v5.1):
    # 64 GiB of fp8 weights beside 61-68 GiB of activations in 140 and 192 GB; a cached transpose would add 64 GiB)
    if np.any(copy_b > 0):
        one_module = (np.asarray(c["zero_stage"]) == 3) | ((np.asarray(c["training"]) == "lora") & fp8_params)
        local = np.where(one_module, units["largest_layer"] * scale / tp,
                         st["weights_bytes"] / np.maximum(wb * np.where(fp8_params, 0.5, 1.0), 1e-9))
        # the worst stage's layers kept in bf16 (bf16_first_layers / bf16_last_layers) have no low-precision copies
        # (one gathered module at a time: the largest is a low-precision one while any is)
        bf = [c.get(k, 0) for k in ("bf16_first_layers", "bf16_last_layers")]
        if np.any(np.asarray(bf[0]) + np.asarray(bf[1]) > 0):
            bf_share = np.where(last_is_worst, LP.bf16_layer_share(*bf, L, pp, sl["last"], stage="last"),
                                LP.bf16_layer_share(*bf, L, pp, sl["first"], stage="first"))
            local = np.where(one_module, local, local * (1.0 - bf_share))
        lowp_w = copy_b * local
    else:
        lowp_w = 0.0
    subtotal = state + buffers + lowp_w + activations + logits_here
    # the overhead is a GPU runtime's (CUDA context, NCCL, the caching allocator): XLA on TPU assigns buffers statically
    on_tpu = np.asarray(c.get("family_index", -1.0), dtype=np.float64) == float(family_names().index("tpu"))
    # fragmentation is of what is allocated and freed every step (activations, logits, gathered and communication
    # buffers); the model state lives in tensors allocated once (memory.overhead_bytes)
    per_step = M.dynamic_bytes(dict(zip(M.PER_STEP_PARTS, (activations, logits_here, buffers))))
    # the allocator's fragmentation is a risk, not a need (memory.fragmentation_bytes): the run fits when what it
    # allocates fits (fits), tightly where the fragmentation counted would not (headroom_bytes < 0)
    frag = np.where(on_tpu, 0.0, M.fragmentation_bytes(per_step, c["fragmentation_frac"]))
    overhead = np.where(on_tpu, 0.0, np.asarray(c["overhead_fixed_bytes"], dtype=np.float64)) + frag  # = overhead_bytes
    total = subtotal + overhead
    cap = np.asarray(c["gpu_memory_bytes"], dtype=np.float64)
    # a paged optimizer (bitsandbytes): the moments the device cannot hold wait in host memory (memory.paged_out_bytes);
    # those still on the device can be evicted too, so they count as headroom (what the run could still allocate)
    paged = np.asarray(c["paged_optimizer"], dtype=bool)
    evictable = 0.0
    if np.any(paged):
        # bitsandbytes pages only large parameters (memory.PAGED_MIN_ELEMENTS): a LoRA adapter of rank r on d_model h
        # has r·h/t elements
        small = lora & (np.asarray(c["lora_rank"], dtype=np.float64) * np.asarray(h, dtype=np.float64) / tp
                        < M.PAGED_MIN_ELEMENTS)
        pageable = np.where(paged & ~small, st["optimizer_bytes"], 0.0)
        paged_out = M.paged_out_bytes(pageable, total, cap)
        st = {**st, "optimizer_bytes": st["optimizer_bytes"] - paged_out}
        state, total, offloaded = state - paged_out, total - paged_out, offloaded + paged_out
        evictable = pageable - paged_out
    else:
        paged_out = 0.0
    binding = _largest_of_four(state + buffers, activations, logits_here, overhead)  # index into BINDING
    host = offloaded * np.minimum(n_gpus, np.asarray(c["gpus_per_node"], dtype=np.float64))
    host_cap = np.asarray(c["host_memory_bytes"], dtype=np.float64)
    host_fits = np.isnan(host_cap) | (host <= host_cap)

    # --- compute, time, cost -------------------------------------------------------------------------------
    # packed rows with document masking (document_tokens): the attention the kernels run follows the documents
    attn_pattern = F.document_window(c["document_tokens"], s_full, c["sliding_window"], c["global_every"],
                                     c["chunked_attention"], c["flash_attention"])
    attn_kw = dict(attn_width=F.attention_width(h, c["n_heads"], c["head_dim"], c["v_head_dim"]), **attn_pattern)
    attn = F.attention_flops_per_token(La, h, s_full, c["attention_flops"], **attn_kw)
    if np.any(n_mtp > 0):  # each MTP module: a global-attention block, and the shared LM head once more
        attn = attn + F.attention_flops_per_token(n_mtp, h, s_full, c["attention_flops"],
                                                  attn_width=attn_kw["attn_width"],
                                                  global_keys=attn_pattern["global_keys"])
    vh = np.asarray(c["vocab_size"], dtype=np.float64) * np.asarray(h, dtype=np.float64)
    n_flop = np.asarray(c["n_active_params"], dtype=np.float64) + split["mtp_active_params"] + n_mtp * vh
    trained = np.where(lora, 0.0, np.where(tr["frozen_frac"] == 0, n_flop, n_flop * (1.0 - tr["frozen_frac"])))
    ssm = F.ssm_flops_per_token(Lssm, h, **{k: c[k] for k in ("mamba_heads", "mamba_head_dim", "mamba_state",
                                                                "mamba_groups", "mamba_chunk")}) \
        if np.any(Lssm > 0) else 0.0  # (a chunk without hybrids skips the Mamba-2 terms)
    fpt = F.matmul_flops_per_token(n_flop, trained, tr["adapters_active"]) + attn + ssm
    frozen_any = lora | (tr["frozen_frac"] > 0)
    rerun = np.where(frozen_any, 2.0 * (n_flop - split["outside_params"]) + 2.0 * tr["adapters_active"] + attn / 3.0,
                     np.nan)  # the blocks' forward, which full recomputation runs again
    hw_full = F.hardware_flops_per_token(fpt, attn, "full", 6.0 * split["outside_params"],
                                         rerun if np.any(frozen_any) else None)
    # partial recomputation: the rerun share of the blocks' matmul FLOPs and of the attention core's forward
    rr = spec["rerun"]
    wts = _matmul_weights(c)
    # (mlp_in / mlp_out: the routed part and the shared experts' part at their own shares, as the step reads them:
    # recompute.mlp_rerun)
    gemm_share = (sum(rr[k] * wts[k] for k in ("qkv", "k_proj", "out"))
                  + RC.mlp_rerun(rr, wts)) \
        / np.maximum(sum(wts[k] for k in ("qkv", "out", "mlp_in", "mlp_out")), 1.0)
    blocks_fwd = np.maximum(hw_full - fpt - attn / 3.0, 0.0)  # the blocks' matmul forward per token
    hw = np.where(full, fpt + phi * (hw_full - fpt), fpt + gemm_share * blocks_fwd + rr["core"] * attn / 3.0)
    tokens = np.asarray(c["tokens"], dtype=np.float64)
    train_flops = fpt * tokens

    # --- the predicted step (core/steptime.py) -------------------------------------------------------------
    step = ST.step_parts({**c, **attn_pattern, "tp": tp, "pp": pp, "cp": cp, "ep": ep, "n_gpus": n_gpus,
                          "weight_dtype_bytes": np.where(lora, gathered, wb),
                          "grad_dtype_bytes": grad_b,
                          "trained_frac": trained_frac,
                          "grad_frac": trained_frac + np.where(lora, tr["adapters"] / np.maximum(
                              np.asarray(c["n_params"], dtype=np.float64), 1.0), 0.0),
                          "offloaded_state_bytes": offloaded - act_host - paged_out,
                          "paged_state_bytes": paged_out,
                          "offloaded_params": np.where(np.asarray(c["offload"]) != "none", (
                              tr["first_trainable"] + tr["first_adapters"]) / tp / np.where(
                              np.asarray(c["zero_stage"]) >= 1, np.maximum(shard_gpus / (tp * pp), 1.0), 1.0), 0.0),
                          "offloaded_activation_bytes": act_moved},
                         # the optimizer step reads and writes what trains: frozen weights (LoRA's base, frozen_frac
                         # of the model) are not its state (under LoRA the adapters' own 16-bit weights, under 1 % of
                         # their state, go with the base)
                         # (where the fp32 parameter is the master the weights row holds the frozen part alone)
                         state - np.where(M.no_trained_weights_row(c["zero_convention"], c["zero_stage"], fp32_master),
                                          1.0, tr["frozen_frac"]) * st["weights_bytes"]
                         + np.where(last_is_worst, grads_read_last, grads_read_first) - st["grads_bytes"]
                         + paged_out,  # the GPU updates the paged moments too, once paged in
                         np.maximum(split["first_stage_params"], split["last_stage_params"]),
                         split["stage_expert_params"])
    peak = np.asarray(c["peak_flops_per_s"], dtype=np.float64)
    tokens_per_step = np.asarray(c["global_batch_used"], dtype=np.float64) * np.asarray(s_full, dtype=np.float64)
    pred_tps = tokens_per_step / step["step_time_s"]

    # --- how sure the predicted step is (core/intervals.py) -----------------------------------------------------
    fam_idx = np.asarray(c.get("family_index", -1.0), dtype=np.float64).astype(np.int64)
    cls = IV.class_code(tp, pp, cp, c["n_experts"], c["zero_stage"], c["offload"], rep)
    # low-precision runs: data/published_runs.csv holds bf16 runs only (the fp8 pairs check speed-ups, tests/
    # test_recipes.py), so a recipe's absolute prediction is outside the validated region
    is_valid = IV.validated(c["framework"], cls, fam_idx, c["n_params"], s_full) & (recipe == "none")
    lo, hi = IV.bounds(c["framework"], is_valid, c["interval_low"], c["interval_high"],
                       moe=np.asarray(c["n_experts"]) > 1, lowp=recipe != "none",
                       overhead=IV.overhead_share(step["compute_s"], step["step_time_s"]))

    tps = np.asarray(c["tokens_per_second"], dtype=np.float64)
    ach = np.asarray(c.get("achieved_flops_per_s", np.nan), dtype=np.float64)
    if np.any(np.isfinite(ach)):  # hardware FLOP/s per GPU (recomputation included) → the job's tokens/s
        tps = np.where(np.isfinite(tps), tps, ach * n_gpus / hw)
    measured = np.isfinite(tps)
    auto = np.asarray(c["mfu_auto"], dtype=bool)
    ovh = 1.0 + np.asarray(c["time_overhead_frac"], dtype=np.float64)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # overflow is refused by rule below
        pred_time = tokens / pred_tps * ovh  # the run at the predicted step, whatever time_s comes from
        time_s = np.where(measured, tokens / np.where(measured, tps, 1.0) * ovh,
                          np.where(auto, pred_time,
                                   F.train_time_s(train_flops, n_gpus, peak, np.where(auto, 1.0, c["mfu"]),
                                                  c["time_overhead_frac"])))
        source = np.where(measured, TIME_SOURCES.index("measured"), np.where(auto, TIME_SOURCES.index("predicted"),
                                                                          TIME_SOURCES.index("mfu"))).astype(np.int16)
        tc = F.time_and_cost(time_s, n_gpus, c["price_per_gpu_hour"])
        power = np.where(np.asarray(c.get("gpu_power_w", np.nan), dtype=np.float64) > 0,
                         np.asarray(c.get("gpu_power_w", np.nan), dtype=np.float64), _col(c, "board_power_w"))
        # goodput (core/goodput.py): failures, checkpoints and restarts stretch the ideal time
        trainable = np.where(lora, tr["adapters"], (np.asarray(c["n_params"], dtype=np.float64) + split["mtp_params"])
                             * (1.0 - tr["frozen_frac"]))
        # the optimizer's state: bytes per trainable parameter, or Adafactor's factored moments (fp32 elements of
        # the whole model, memory.adafactor_state_elements) — not a NaN per parameter
        opt_state = trainable * np.nan_to_num(M.optimizer_bytes_per_param(c["optimizer"]), nan=0.0)
        if ada is not None:
            opt_state = np.where(np.asarray(c["optimizer"]) == "adafactor", 4.0 * ada, opt_state)
        # a checkpoint stores the fp32 master values (4 B), also where the GPU keeps them as bf16 remainders; where
        # the fp32 parameter is the master (FSDP) no 16-bit copy of what trains is stored beside it
        ckpt_bytes = ((np.asarray(c["n_params"], dtype=np.float64) - np.where(fp32_master, trainable, 0.0)) * wb
                      + trainable * np.where(np.asarray(c["master_weights"], dtype=bool), 4.0, 0.0) + opt_state)
        ckpt_s = ckpt_bytes / np.asarray(c["storage_bytes_per_s"], dtype=np.float64)
        rate = np.asarray(c["failure_rate_per_gpu_hour"], dtype=np.float64) + np.where(
            np.asarray(c["price_tier"]) == "spot",
            np.asarray(c["preemption_rate_per_gpu_hour"], dtype=np.float64), 0.0)  # spot: preemptions too
        with np.errstate(divide="ignore"):
            mtbf_s = np.where(rate > 0, 3600.0 / (rate * n_gpus), np.inf)
        given_tau = np.asarray(c["checkpoint_interval_s"], dtype=np.float64)
        tau = np.where(given_tau > 0, given_tau, GP.daly_interval_s(ckpt_s, np.where(np.isfinite(mtbf_s), mtbf_s, 1.0)))
        good = GP.goodput_frac(tau, ckpt_s, mtbf_s, c["restart_s"])
        good_div = np.where(good > 0, good, np.nan)  # goodput 0 is refused below (NO_GOODPUT), never divided by
        en = EN.energy_and_carbon(tc["gpu_hours"] / good_div, power, c["power_draw_frac"], c["node_overhead_frac"],
                                  c["pue"], c["carbon_kg_per_kwh"])
        # the interval follows time_s: predicted → the step's 80 % interval; a given MFU or a measurement is the
        # user's figure, not a prediction (its interval is the point)
        pred = source == TIME_SOURCES.index("predicted")
        f_lo, f_hi = np.where(pred, lo, 1.0), np.where(pred, hi, 1.0)  # days and cost are proportional to time
        mfu_meas = F.achieved_utilization(tps, fpt, n_gpus, c["peak_flops_per_s"])
        hfu_meas = F.achieved_utilization(tps, hw, n_gpus, c["peak_flops_per_s"])
    above = hfu_meas > 1  # NaN (no measurement) compares False
    if np.any(above):
        code = np.where((code == 0) & above, MEASURED_ABOVE_PEAK, code)
        valid = code == 0
    overflow = np.isinf(time_s) | np.isinf(tc["gpu_hours"]) | np.isinf(tc["cost_usd"])
    if np.any(overflow):  # a time, GPU-hours or cost beyond float64: refused, never printed as inf or null
        code = np.where((code == 0) & overflow, TIME_OVERFLOW, code)
        valid = code == 0
    no_good = ~(good > 0)  # failures leave no useful work: days with failures would be infinite
    if np.any(no_good):
        code = np.where((code == 0) & no_good, NO_GOODPUT, code)
        valid = code == 0

    nan = np.nan
    pred_mfu = fpt * pred_tps / (n_gpus * peak)
    lp_peak = np.where(recipe == "none", 0.0, np.where(LP.is_fp4(recipe), _col(c, "peak_fp4_flops_per_s"),
                                                       _col(c, "peak_fp8_flops_per_s")))
    out = {
        "valid": valid,
        "reason": reason_text(code),
        "reason_code": code,
        "n_params": c["n_params"],
        "n_active_params": c["n_active_params"],
        "n_trainable_params": np.where(lora, tr["adapters"], (np.asarray(c["n_params"], dtype=np.float64)
                                                             + split["mtp_params"]) * (1.0 - tr["frozen_frac"])),
        "n_mtp_params": split["mtp_params"],
        "dp": np.where(valid, n_gpus // np.maximum(tp * pp * cp, 1), 1),
        **st,
        "state_bytes": state,
        "activations_bytes": activations,
        "activations_per_layer_bytes": per_layer,
        "recompute_peak_bytes": np.where(last_is_worst, rec_last, first["recompute_peak_bytes"]),
        "logits_bytes": logits_here,
        "param_buffer_bytes": buffers,
        "lowp_weights_bytes": lowp_w,
        "overhead_bytes": overhead,
        "fragmentation_bytes": frag,
        "total_bytes": total,
        "gpu_memory_bytes": cap,
        "headroom_bytes": cap - total + evictable,
        "fits": (total - frag <= cap) & host_fits,
        "offloaded_bytes": offloaded,
        "paged_out_bytes": paged_out,
        "host_bytes": host,
        "host_fits": host_fits,
        "binding": binding if as_codes else np.asarray(BINDING, dtype=object)[binding],
        "worst_stage": np.where(last_is_worst, STAGES.index("last"), STAGES.index("first")).astype(np.int16)
        if as_codes else np.where(last_is_worst, "last", "first"),
        "flops_per_token": fpt,
        "attention_flops_per_token": attn,
        "hardware_flops_per_token": hw,
        "train_flops": train_flops,
        "train_flops_6nd": 6.0 * np.asarray(c["n_active_params"], dtype=np.float64) * tokens,
        "peak_flops_per_s": c["peak_flops_per_s"],
        "time_s": time_s,
        **tc,
        "tokens_per_param": tokens / np.asarray(c["n_params"], dtype=np.float64),
        "goodput_frac": good,
        "checkpoint_interval_s": np.where(np.isfinite(mtbf_s), tau, np.inf),
        "checkpoint_write_s": ckpt_s,
        "days_with_failures": tc["days"] / good_div,
        "gpu_hours_with_failures": tc["gpu_hours"] / good_div,
        "cost_with_failures_usd": tc["cost_usd"] / good_div,
        **en,
        "price_per_gpu_hour": np.asarray(c["price_per_gpu_hour"], dtype=np.float64),
        "achieved_mfu": mfu_meas,
        "achieved_hfu": hfu_meas,
        "time_source": source if as_codes else np.asarray(TIME_SOURCES, dtype=object)[source],
        "global_batch": np.where(valid, np.asarray(c["global_batch_used"], dtype=np.float64), 0).astype(np.int64),
        "micro_batches": step["micro_batches"],
        **{k: step[k] for k in ST.STEP_PARTS},
        "predicted_step_time_s": step["step_time_s"],
        "predicted_mfu": pred_mfu,
        "predicted_hfu": hw * pred_tps / (n_gpus * peak),
        "predicted_tokens_per_s": pred_tps,
        "predicted_time_s": pred_time,
        "predicted_step_time_low_s": step["step_time_s"] * lo,
        "predicted_step_time_high_s": step["step_time_s"] * hi,
        "predicted_mfu_low": pred_mfu / hi,
        "predicted_mfu_high": pred_mfu / lo,
        "days_low": tc["days"] * f_lo,
        "days_high": tc["days"] * f_hi,
        "cost_low_usd": tc["cost_usd"] * f_lo,
        "cost_high_usd": tc["cost_usd"] * f_hi,
        "model_tflops_per_gpu": fpt * pred_tps / n_gpus / 1e12,
        "predicted_mfu_lowp": np.where(lp_peak > 0, fpt * pred_tps / (n_gpus * np.where(lp_peak > 0, lp_peak, 1.0)),
                                       pred_mfu),
        "validated": is_valid & pred,
    }
    shape = np.broadcast_shapes(*(np.shape(v) for v in out.values()))
    all_valid = not nan_invalid or bool(np.all(valid))
    for k, v in out.items():
        v = np.broadcast_to(v, shape)
        if all_valid:
            pass
        elif k not in ("valid", "reason", "reason_code") and v.dtype.kind == "f":
            v = np.where(valid, v, nan)
        elif k in ("fits", "host_fits", "validated"):
            v = v & valid
        out[k] = v
    return out


# ---------------------------------------------------------------------------------------------------------------
# One configuration
# ---------------------------------------------------------------------------------------------------------------

_PY_TYPE = {"int": int, "float": float, "bool": bool, "choice": str, "str": str}


def _check_input(name: str, v) -> None:
    """One Config input against its schema row (core/inputs.py): type, finiteness, choices, bounds."""
    i = BY_NAME[name]
    if v is None:
        if i.default is None:
            return  # optional input, not given
        raise ValueError(f"{name}: required")
    if i.kind == "int":
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"{name}: must be an integer, got {v!r}")
        if abs(v) > MAX_INT:
            raise ValueError(f"{name}: must be at most {MAX_INT:,}, got {v!r}")
        if i.default is None and i.lo is not None and v < i.lo:
            raise ValueError(f"{name}: must be an integer ≥ {i.lo:g}, got {v!r}")
    elif i.kind == "float":
        if i.auto and v == "auto":
            return
        if isinstance(v, bool) or not isinstance(v, (int, float, np.number)) or not math.isfinite(v):
            raise ValueError(f"{name}: must be a {'non-negative' if i.default is None else 'finite'} number, "
                             f"got {v!r}")
        if i.default is None and v < 0:
            raise ValueError(f"{name}: must be a non-negative number, got {v!r}")
        if i.hi is not None and v > i.hi:
            raise ValueError(f"{name}: must be at most {i.hi:g} ({i.unit}), got {v!r}")
    elif i.kind == "bool":
        if not isinstance(v, (bool, np.bool_)):
            raise ValueError(f"{name}: expected true/false, got {v!r}")
    elif i.kind == "choice" and v not in i.choices:
        raise ValueError(f"{name}: {v!r} is not one of {choices_text(name)}")


class _ConfigMethods:
    """Behaviour of `Config`; its fields are generated from the input schema below."""

    def __post_init__(self):
        for name in CONFIG_FIELDS:  # a stack's name is its profile's (torchtitan: fsdp), as at every entry point
            if BY_NAME[name].canon is not None:
                object.__setattr__(self, name, BY_NAME[name].canon(getattr(self, name)))
        if self.zero_stage is None:  # not given: the framework's own (data/frameworks.csv default_zero_stage)
            object.__setattr__(self, "zero_stage", int(PF.default_zero_stage(self.framework)))
        if not isinstance(self.model, Model):
            raise ValueError(f"model: expected a Model, got {type(self.model).__name__}")
        if not isinstance(self.gpu, Accelerator):
            raise ValueError(f"gpu: expected an Accelerator, got {type(self.gpu).__name__}")
        for name in CONFIG_FIELDS:
            _check_input(name, getattr(self, name))
        given = [k for k in ("tokens_per_second", "step_time_s", "achieved_flops_per_s") if getattr(self, k) is not None]
        if len(given) > 1:
            raise ValueError(f"{given[0]}: give one measurement — tokens_per_second, step_time_s (with global_batch) "
                             f"or achieved_flops_per_s — not {' and '.join(given)}")
        if self.achieved_flops_per_s is not None and self.achieved_flops_per_s <= 0:
            raise ValueError("achieved_flops_per_s: must be > 0")
        if self.step_time_s is not None and self.global_batch is None:
            raise ValueError("step_time_s: needs global_batch (sequences per step) too")
        if self.step_time_s is not None and self.step_time_s <= 0:
            raise ValueError("step_time_s: must be > 0")
        if self.tokens_per_second is not None and self.tokens_per_second <= 0:
            raise ValueError("tokens_per_second: must be > 0")
        cols = self.columns()
        code = int(check(cols))
        if code:
            raise ValueError(_explain(code, self))
        out = evaluate(**cols)  # what only the evaluation knows: a measurement above the peak, an overflow
        code = int(out["reason_code"])
        if code == MEASURED_ABOVE_PEAK:  # the rule's words, then which measurement and the peak it exceeds
            peak = f"the {self.gpu.name} {self.compute_dtype} peak of {cols['peak_flops_per_s'] / 1e12:,.4g} TFLOP/s"
            if self.achieved_flops_per_s is not None:
                raise ValueError(f"{REASONS[code]}: achieved_flops_per_s {self.achieved_flops_per_s:.4g} FLOP/s per "
                                 f"GPU is above {peak}")
            name = "tokens_per_second" if self.tokens_per_second is not None else "step_time_s"
            raise ValueError(f"{REASONS[code]}: {name} gives {self.measured_tokens_per_second:.4g} tokens/s on "
                             f"{self.n_gpus:,} GPUs, above {peak}")
        if code:
            raise ValueError(REASONS[code])

    @property
    def resolved_profile(self) -> str:
        """The kernels the run uses (the tensors kept, the bytes moved): the given ones, else the framework's (fused;
        eager PyTorch unless compiled)."""
        return str(self.columns()["profile"])

    @property
    def has_measurement(self) -> bool:
        return any(getattr(self, k) is not None for k in ("tokens_per_second", "step_time_s", "achieved_flops_per_s"))

    @property
    def measured_tokens_per_second(self) -> float:
        if self.tokens_per_second is not None:
            return float(self.tokens_per_second)
        if self.step_time_s is not None:
            return self.global_batch * self.seq_len / self.step_time_s
        return math.nan

    def columns(self) -> dict:
        """The input columns of `evaluate` for this one point (scalars)."""
        cols = {k: getattr(self, k) for k in CONFIG_FIELDS}
        cols.update(model_columns(self.model))
        cols.update(gpu_columns(self.gpu, self.compute_dtype,
                                tiered_price(self.gpu.name, self.price_tier, self.price_per_gpu_hour)))
        for k in ("gpus_per_node", "collective_latency_s"):  # None: the catalog's
            if getattr(self, k) is not None:
                cols[k] = getattr(self, k)
        cols["mfu_auto"] = self.mfu == "auto"
        cols["mfu"] = math.nan if self.mfu == "auto" else self.mfu
        cols["tokens_per_second"] = self.measured_tokens_per_second
        cols["achieved_flops_per_s"] = math.nan if self.achieved_flops_per_s is None else self.achieved_flops_per_s
        return derived_columns(cols)

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


Config = make_dataclass(
    "Config",
    [("model", Model), ("gpu", Accelerator)]
    + [(n, _PY_TYPE[BY_NAME[n].kind] | (None if BY_NAME[n].default is None else str if BY_NAME[n].auto
                                         else _PY_TYPE[BY_NAME[n].kind]),
        field(default=BY_NAME[n].default)) for n in CONFIG_FIELDS],
    bases=(_ConfigMethods,), frozen=True)
Config.__module__ = __name__  # (make_dataclass's `module=` is Python ≥ 3.12): pickling and caches find it here
Config.__doc__ = """One training setup: a Model, an Accelerator, and every input whose target is "config" in
core/inputs.py (fields, types and defaults generated from that schema). Defaults: the 16-byte mixed-precision
AdamW recipe, no sharding, no recomputation, no flash attention, attention FLOPs counted in full, 50 % MFU, no
overheads — the conventions of the CS336 lecture and the ZeRO paper, so their published numbers reproduce."""


def model_columns(m: Model) -> dict:
    """The one model → `evaluate` columns mapping: architecture fields, n_params and n_active_params."""
    return {**m.arch(), "n_params": m.n_params, "n_active_params": m.n_active_params}


def tiered_price(gpu_name: str, tier: str, price: float | None = None) -> float | None:
    """The price an accelerator runs at: the one given, else the tier's (reserved, spot: data/prices.csv), else None
    (the catalog's on-demand price, `gpu_columns`); ValueError naming price_tier for a chip with no price in that tier
    (one estimate's Config.columns and a sweep's accelerator axis both read it here)."""
    if price is not None or tier == BY_NAME["price_tier"].default:
        return price
    if gpu_name not in catalog():
        raise ValueError(f"price_tier: a {gpu_name} accelerator has no {tier} price; give price_per_gpu_hour")
    return tier_price(gpu_name, tier)


def gpu_columns(g: Accelerator, compute_dtype: str, price_per_gpu_hour: float | None = None) -> dict:
    """The one accelerator → `evaluate` columns mapping: peak for the dtype (NaN when the chip has none, which
    the rules refuse by name), memory, and the price (the catalog's unless given)."""
    price = g.price_usd_per_gpu_hour if price_per_gpu_hour is None else price_per_gpu_hour
    return {"peak_flops_per_s": peak_or_nan(g, compute_dtype), "gpu_memory_bytes": g.allocatable_bytes,
            "price_per_gpu_hour": price, **{k: getattr(g, k) for k in GPU_STEP_FIELDS}}


# the accelerator's step-time constants, as `evaluate` columns (data/accelerators.csv, data/efficiency.csv)
GPU_STEP_FIELDS = ("memory_bandwidth_bytes_per_s", "intra_node_bytes_per_s", "inter_node_bytes_per_s",
                   "host_link_bytes_per_s", "gpus_per_grace", "ici_axes", "ici_wrap", "family_index",
                   "fa2_attention_efficiency", "flex_over_fa2",
                   "gpus_per_node", "sm_count", "mxu_dim", "head_dim_64_factor", "matmul_efficiency", "attention_efficiency",
                   "grouped_gemm_efficiency",
                   "attention_in_step", "native_fa2", "causal_ratio",
                   "sustained_fraction",
                   "hbm_efficiency", "intra_node_efficiency", "inter_node_efficiency", "collective_latency_s",
                   "peak_bf16_flops_per_s", "peak_fp8_flops_per_s", "peak_fp4_flops_per_s", "fp8_matmul_efficiency",
                   "board_power_w")


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
        "lora_rank": f" (lora_rank={cfg.lora_rank:,}; the narrowest matrix of lora_targets={cfg.lora_targets} is "
                     f"{_lora_width_of(cfg):,} wide)",
        "frozen_frac": f" (got {cfg.frozen_frac!r} of {m.n_params:,.0f} parameters)",
    }.get(msg.split(":")[0], "")
    return msg + (detail or _parse_error(msg.split(":")[0], cfg))


def _parse_error(field: str, cfg: Config) -> str:
    """A text input's parser's own words on its value (which entry, why), or nothing where it parses."""
    inp = BY_NAME.get(field)
    if inp is None or inp.parse is None:
        return ""
    try:
        inp.parse(getattr(cfg, field))
        return ""
    except ValueError as e:
        return " — " + str(e).split(": ", 1)[-1]


def _lora_width_of(cfg) -> int:
    cols = cfg.columns()
    return int(np.asarray(lora_width(lambda k: np.asarray(cols[k]))))


def estimate(cfg: Config) -> dict:
    """The full record for one configuration as plain Python values (floats, bools, str)."""
    out = evaluate(**cfg.columns())
    rec = {k: _scalar(v) for k, v in out.items() if k != "reason_code"}
    rec["model"] = cfg.model.name
    rec["gpu"] = cfg.gpu.name
    if not cfg.has_measurement:
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


def recompute_policy(c, moe_share) -> dict:
    """Recomputation as the frameworks name it (core/recompute.columns) for `evaluate`'s columns `c`: which ledger
    tensors a recomputed unit does not keep, as shares of a layer (`moe_share`: the MoE layers' share of the MLP
    layers) — the one reading of recompute, recompute_modules, remat_policy and the profile's selective word that the
    estimate and the displayed ledger share."""
    return RC.columns(c["recompute"], c["recompute_modules"], c["remat_policy"], PF.word(c["framework"], "selective"),
                      moe_share, local=RC.tokens_not_saved(c["ep"], c.get("sac_saves_all_to_all", True)),
                      no_w2=RC.shared_w2_not_saved(c["n_shared_experts"], c["attention"], c["q_lora_rank"]),
                      custom=c["remat_custom"])


def recomputes_whole(cfg: Config) -> bool:
    """Whether the configuration recomputes whole layers (recompute full, or remat_policy full): `recompute_policy`'s
    reading, for what the displayed ledger shows (the working set rebuilt in the backward)."""
    return bool(np.all(recompute_policy(cfg.columns(), 0.0)["full"]))


def activation_ledger(cfg: Config) -> list[dict]:
    """The per-layer ledger for display: one row per tensor with bytes per layer on one GPU (0-byte tensors
    dropped), under the configuration's recompute mode (full recomputation shows the working set rebuilt
    during a layer's backward, plus the kept layer input; a partial policy — Megatron's recompute_modules, the
    profile's selective, a MaxText remat_policy — keeps each tensor × (1 − the share of the layer that drops it),
    `recompute_policy`, the estimate's own reading: an MoE model's rows are its MoE layer's)."""
    c = derived_columns(cfg.columns())  # as `evaluate` reads them: its tp and the GPU's share of a sequence
    led = M.ledger(c, recompute="none", tp=max(int(c["tp"]), 1), seq_len=c["seq_len"] / max(int(c["cp"]), 1))
    if not recomputes_whole(cfg):
        drop = recompute_policy(c, 1.0 if cfg.model.n_experts > 1 else 0.0)["drop"]
        led = {k: v * (1.0 - float(np.max(drop.get(k, 0.0)))) for k, v in led.items()}
    info = {name: (what, op) for name, what, op in M.LEDGER_TENSORS}
    rows = [{"tensor": k, "bytes": float(v), "what": info[k][0], "kept_by": info[k][1]}
            for k, v in led.items() if float(v) > 0]
    return rows


# ---------------------------------------------------------------------------------------------------------------
# Building a Config from the flat input vocabulary (CLI, JSON, URL)
# ---------------------------------------------------------------------------------------------------------------

def build_model(model: str | None = None, n_params: float | None = None, hf_config=None, **arch) -> Model:
    """A model from a preset name, a raw count, or a Hugging Face config, then architecture overrides."""
    sources = sum(x is not None for x in (model, n_params, hf_config))
    if sources > 1:
        raise ValueError("model: give one of model (preset), n_params (raw) or hf_config")
    arch = {k: v for k, v in arch.items() if v is not None}
    for k, v in arch.items():
        lo = BY_NAME[k].lo if k in BY_NAME else 1
        if BY_NAME.get(k) is not None and BY_NAME[k].kind == "int" and (
                isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo):
            raise ValueError(f"{k}: must be an integer ≥ {lo:g}, got {v!r}")
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
        return _within_bounds(Model(**arch))
    return _within_bounds(base.with_overrides(**arch) if arch else base)


def _within_bounds(m: Model) -> Model:
    """The model's fields against the input schema's bounds (core/inputs.py), whatever the source — a preset, a
    raw count, a config.json: a field beyond its bound is refused by name, never priced."""
    for k, v in m.arch().items():
        i = BY_NAME.get(k)
        if i is not None and i.kind == "int" and isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            if (i.hi is not None and v > i.hi) or (i.lo is not None and v < i.lo and not (i.lo >= 1 and v == 0)):
                raise ValueError(f"{k}: must be from {i.lo:g} to {i.hi:,.0f} ({i.unit}), got {v:,}")
    return m


def build_gpu(gpu: str | None = "h100-sxm", peak_flops_per_s=None, gpu_memory_bytes=None,
              memory_bandwidth_bytes_per_s=None, compute_dtype: str = "bf16", intra_node_bytes_per_s=None,
              inter_node_bytes_per_s=None) -> Accelerator:
    """A catalog accelerator, or 'custom' with typed numbers; numbers given with a catalog name override it.
    `peak_flops_per_s` is the peak for `compute_dtype` (the dtype the run computes in); the link bandwidths
    override the catalog's intra-/inter-node rates (a custom accelerator takes the H100 SXM's unless given)."""
    from dataclasses import replace as dc_replace

    from .hardware import custom_accelerator
    _check_input("compute_dtype", compute_dtype)
    for name, v in (("peak_flops_per_s", peak_flops_per_s), ("gpu_memory_bytes", gpu_memory_bytes),
                    ("memory_bandwidth_bytes_per_s", memory_bandwidth_bytes_per_s),
                    ("intra_node_bytes_per_s", intra_node_bytes_per_s),
                    ("inter_node_bytes_per_s", inter_node_bytes_per_s)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float, np.number))
                              or not math.isfinite(v) or v <= 0):
            raise ValueError(f"{name}: must be a positive number, got {v!r}")
    over = {k: float(v) for k, v in (("intra_node_bytes_per_s", intra_node_bytes_per_s),
                                     ("inter_node_bytes_per_s", inter_node_bytes_per_s)) if v is not None}
    if peak_flops_per_s is not None:
        over[peak_field(compute_dtype)] = float(peak_flops_per_s)
    if gpu_memory_bytes is not None:  # a typed memory is what the run fits against (Accelerator.allocatable_bytes)
        over.update(memory_bytes=float(gpu_memory_bytes), usable_memory_bytes=float(gpu_memory_bytes),
                    usable_source="user input")
    if memory_bandwidth_bytes_per_s is not None:
        over["memory_bandwidth_bytes_per_s"] = float(memory_bandwidth_bytes_per_s)
    if gpu == "custom" or gpu is None:
        missing = [k for k, v in (("peak_flops_per_s", peak_flops_per_s), ("gpu_memory_bytes", gpu_memory_bytes),
                                  ("memory_bandwidth_bytes_per_s", memory_bandwidth_bytes_per_s)) if v is None]
        if missing:
            raise ValueError(f"gpu: a custom accelerator needs {', '.join(missing)}")
        acc = custom_accelerator(float(peak_flops_per_s), float(gpu_memory_bytes), float(memory_bandwidth_bytes_per_s))
        ref = get_accelerator(CUSTOM_LINKS_FROM)
        defaulted = [k for k in ("intra_node_bytes_per_s", "inter_node_bytes_per_s") if k not in over]
        for k in defaulted:  # the step model needs both links: the reference chip's, said in the note
            over[k] = getattr(ref, k)
        note = (f"link bandwidths not given: {', '.join(defaulted)} from {ref.name} "
                f"({ref.intra_node_bytes_per_s / 1e9:g} GB/s NVLink, {ref.inter_node_bytes_per_s / 1e9:g} GB/s NIC "
                "per GPU)") if defaulted else ""
        return dc_replace(acc, note=note, **over)
    acc = get_accelerator(gpu)
    return dc_replace(acc, name=f"{acc.name} (modified)", **over) if over else acc


CUSTOM_LINKS_FROM = "h100-sxm"  # a custom accelerator's link bandwidths, when not given, are this row's


def config_from_inputs(**inp) -> Config:
    """A Config from the flat vocabulary: model/n_params/hf_config + architecture fields, gpu (+ custom numbers),
    recipe (sets weight_dtype, grad_dtype, master_weights, grad_accum_fp32, optimizer unless given), overhead
    ('none' | 'realistic', or overhead_fixed_bytes/fragmentation_frac), and the Config fields."""
    inp = canonical_inputs({k: v for k, v in inp.items() if v is not None})
    model = build_model(inp.pop("model", None), inp.pop("n_params", None), inp.pop("hf_config", None),
                        **{k: inp.pop(k) for k in list(inp) if k in ARCH_FIELDS})
    gpu = build_gpu(inp.pop("gpu", "h100-sxm"), **{k: inp.pop(k) for k in list(inp) if k in GPU_FIELDS},
                    compute_dtype=inp.get("compute_dtype", "bf16"))
    for name, table in PRESET_INPUTS.items():  # recipe, overhead: explicit inputs win over the preset's fields
        preset = inp.pop(name, None)
        if preset is not None:
            if preset not in table:
                raise ValueError(f"{name}: unknown {name} {preset!r}; known: {', '.join(table)}")
            for k, v in table[preset].items():
                inp.setdefault(k, v)
    known = set(CONFIG_FIELDS)
    unknown = set(inp) - known
    if unknown:
        raise ValueError(f"{sorted(unknown)[0]}: not an input; known inputs: {', '.join(sorted(known))}")
    if inp.get("framework") in PF.FRAMEWORKS and isinstance(inp.get("tp", 1), int):  # the value the row runs with
        inp["sequence_parallel"] = bool(PF.sequence_parallel_used(inp["framework"], inp.get("tp", 1),
                                                                  inp.get("sequence_parallel", False)))
    return Config(model=model, gpu=gpu, **inp)
