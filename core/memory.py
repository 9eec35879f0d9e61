"""Memory ledger per GPU: model state (weights, gradients, optimizer, master), activations as an
explicit per-tensor ledger, logits, overhead. All vectorised: arguments broadcast, results are arrays.

Conventions (seeds 000, 001, 002):
- Mixed-precision AdamW state is 2 (bf16 weights) + 2 (bf16 grads) + 4 + 4 (fp32 moments) = 12 bytes per
  parameter (CS336, seed 000), 16 with an fp32 master copy (ZeRO §3.1, seeds 000/001/002), 18 with fp32 grads
  (Megatron/DeepSpeed, seed 002), 20 with bf16 grads plus an fp32 accumulation buffer (Ultra-Scale Playbook).
- Sharding (ZeRO, Rajbhandari et al. 2020 §5, Fig. 1): all state divides by tp·pp; then with data-parallel
  degree d = n_gpus/(tp·pp): stage 1 shards optimizer + master by d, stage 2 also gradients, stage 3 also weights.
- Activations: Korthikanti et al. 2022 (arXiv:2205.05198) §4: per layer sbh(34 + 5as/h) for the GPT block in
  16-bit, reproduced here tensor by tensor; tensor parallel, sequence parallel, selective and full recomputation
  (Table 2), pipeline 1F1B first stage = L layers' worth (Eq. 5), interleaved × (1 + (p−1)/(p·m)).
"""
from __future__ import annotations

import numpy as np

from . import vec as VE
from .model import head_dims, moe_widths
from .profiles import word
from .tables import (BASE_FORMATS, DEEPSPEED_PREFETCH_PARAMS, DEEPSPEED_REDUCE_BUCKET, DTYPE_BYTES,  # noqa: F401
                     GATED_MLPS, OPTIMIZERS, OPTIMIZERS_TABLE, OVERHEADS, PROFILES, RECIPES, RECOMPUTE_MODES, STATE_DTYPES,
                     zero_conventions_with, LEDGER_TENSORS)

# ---------------------------------------------------------------------------------------------------------------
# Model state (optimizers, recipes and dtypes are rows of core/tables.py)
# ---------------------------------------------------------------------------------------------------------------

# ZeRO stage from which each state part is sharded over the data-parallel degree (Rajbhandari et al. 2020 §5)
ZERO_SHARD_STAGE = {"weights_bytes": 3, "grads_bytes": 2, "grad_accum_bytes": 2, "optimizer_bytes": 1,
                    "master_bytes": 1}


def dtype_bytes_array(dtype) -> np.ndarray:
    """Bytes per element for an array of dtype names (vectorised lookup)."""
    d = np.asarray(dtype)
    out = np.full(d.shape, np.nan)
    for k in STATE_DTYPES:
        out = np.where(d == k, float(DTYPE_BYTES[k]), out)
    return out


def optimizer_bytes_per_param(optimizer) -> np.ndarray:
    """Optimizer-state bytes per parameter, excluding the master copy (counted separately).

    adamw: two fp32 moments = 8 (Loshchilov & Hutter 2019; seed 000). adamw_bf16: two bf16 moments = 4 (Megatron-Core's
    precision-aware optimizer). adamw8bit: two 8-bit moments = 2
    (Dettmers et al. 2022; per-block fp32 absmax constants, 8 bytes per 2048 values, are ignored).
    sgd_momentum: one fp32 buffer = 4. lion: one fp32 momentum = 4 (Chen et al. 2023). sgd: 0.
    adafactor: factored second moment, handled by `adafactor_state_elements` (returns NaN here).
    """
    o = np.asarray(optimizer)
    rows = [r for r in OPTIMIZERS_TABLE.values() if r.bytes_per_param == r.bytes_per_param]  # NaN: adafactor
    return np.select([o == r.name for r in rows], [r.bytes_per_param for r in rows], np.nan)


def adafactor_state_elements(n_layers, d_model, n_heads, n_kv_heads, d_ff, vocab_size, mlp, n_experts, tied_embeddings,
                             n_params, shape_params=None):
    """Adafactor (Shazeer & Stern 2018, no momentum) second-moment elements: a weight matrix of shape r×c keeps
    r + c fp32 values (row and column statistics) instead of r·c; every other parameter (norms, biases,
    position table treated as a vector set) keeps one per element. Returns the element count (× 4 bytes).
    `shape_params` is the shape's own count when `n_params` is a raw count priced with a stand-in shape; the
    elements then scale by n_params / shape_params (monotone in n_params)."""
    L, h, a, k, f, V = (np.asarray(x, dtype=np.float64) for x in (n_layers, d_model, n_heads, n_kv_heads, d_ff,
                                                                      vocab_size))
    E = np.asarray(n_experts, dtype=np.float64)
    kv = k * h / a
    swiglu = VE.isin(np.asarray(mlp), GATED_MLPS)
    n_mlp = np.where(swiglu, 3.0, 2.0)
    # factored matrices per layer: Q (h×h), K, V (h×kv), O (h×h), MLP (h×f each)
    mat_elems = 2 * h * h + 2 * h * kv + E * n_mlp * h * f
    mat_stats = 2 * (h + h) + 2 * (h + kv) + E * n_mlp * (h + f)
    emb_elems = V * h * np.where(np.asarray(tied_embeddings, dtype=bool), 1.0, 2.0)
    emb_stats = (V + h) * np.where(np.asarray(tied_embeddings, dtype=bool), 1.0, 2.0)
    factored = L * mat_elems + emb_elems
    N = np.asarray(n_params, dtype=np.float64)
    shape = N if shape_params is None else np.asarray(shape_params, dtype=np.float64)
    elements = L * mat_stats + emb_stats + np.maximum(shape - factored, 0.0)
    # raw-N mode prices n_params with a stand-in shape: scale the shape's elements to the raw count
    return elements * N / shape


def master_bytes_per_param(master_weights, optimizer="adamw", weight_dtype="bf16") -> np.ndarray:
    """Bytes per trained parameter of the master copy: 4 (fp32), or 2 under Megatron-Core's precision-aware optimizer
    (`adamw_bf16`) with bf16 weights, which keeps only the 16 low bits of each fp32 master value, the bf16 weight
    being its high half ("Weight memory-optimized BF16 training: ... storing only the BF16 remainder of the master
    weight copies ... default enabled when using precision-aware optimizer in Megatron Core", Megatron-Bridge
    docs/performance-guide.md, Memory section, @067f987); 0 without master weights."""
    remainder = (np.asarray(optimizer) == "adamw_bf16") & (np.asarray(weight_dtype) == "bf16")
    return np.where(np.asarray(master_weights, dtype=bool), np.where(remainder, 2.0, 4.0), 0.0)


def fp32_param_master(zero_convention, master_weights, optimizer="adamw", weight_dtype="bf16") -> np.ndarray:
    """True where the trained parameter itself is the fp32 master (a convention with fp32_master, core/tables.py:
    PyTorch FSDP's mixed precision 'fsdp', MaxText's float32 weights 'xla'; with 16-bit weights and a 4-byte master;
    state_bytes says what follows)."""
    mb = master_bytes_per_param(master_weights, optimizer, weight_dtype)
    return VE.isin(np.asarray(zero_convention), zero_conventions_with("fp32_master")) & (mb == 4.0) \
        & (dtype_bytes_array(weight_dtype) < 4.0)


def no_trained_weights_row(zero_convention, zero_stage, fp32_param) -> np.ndarray:
    """True where the weights row holds no 16-bit copy of what trains (only frozen weights): the fp32 parameter is
    the master (`fp32_param`) and its 16-bit copy is the gathered units' under ZeRO-3, or a cast of the weights in use
    where the convention keeps no unsharded copy (xla)."""
    return np.asarray(fp32_param, dtype=bool) & ((np.asarray(zero_stage) == 3) | ~VE.isin(
        np.asarray(zero_convention), zero_conventions_with("unsharded_copy")))


def state_bytes(n_params, weight_dtype="bf16", grad_dtype="bf16", master_weights=True, grad_accum_fp32=False,
                optimizer="adamw", zero_stage=0, n_gpus=1, tp=1, pp=1, adafactor_elements=None, stage_params=None,
                trainable_params=None, adapter_params=0.0, quantized_params=0.0, frozen_bytes=None,
                quantized_bytes=0.0, zero_convention="paper"):
    """Model-state bytes per GPU as named parts: weights, grads, grad_accum, optimizer, master.

    Per parameter: weights = bytes(weight_dtype); grads = bytes(grad_dtype); grad_accum = 4 if an fp32
    accumulation buffer is kept; optimizer = `optimizer_bytes_per_param`; master = `master_bytes_per_param` (4, or 2
    as bf16 remainders under the precision-aware optimizer).
    A GPU holds its pipeline stage's parameters (`stage_params`; n_params/pp when not given) divided by tp, then
    ZeRO divides by d = n_gpus/(tp·pp): stage ≥1 optimizer + master, stage ≥2 grads + grad_accum, stage 3
    weights (ZeRO Fig. 1; FSDP = stage 3). `adafactor_elements` are the whole model's, scaled to the stage.

    Only what trains has gradients, optimizer state and a master copy (issue 12): `trainable_params` of the stage's
    parameters (all of them unless given: full training; a frozen fraction; none under LoRA) plus `adapter_params`
    (LoRA's A and B, in the weight dtype, Hu et al. 2021). Frozen parameters keep only their weights, at
    `frozen_bytes` each (the weight dtype unless given), except `quantized_params` of them stored at
    `quantized_bytes` (QLoRA's NF4 blocks with their constants, `tables.BASE_FORMATS`).
    zero_convention 'deepspeed' (DeepSpeed's stage_1_and_2.py / stage3.py and their memory estimators): the
    optimizer's gradients are an fp32 partition, 4 bytes per trained parameter ÷ d (in grad_accum); ZeRO-1 also
    keeps the full 16-bit gradients (reduced at the accumulation boundary), ZeRO-2 only its 16-bit partition (its
    backward hooks reduce each gradient bucket as it fills, copy this rank's share into the partition buffer and
    free the rest: stage_1_and_2.py reduce_ipg_grads, copy_grads_in_partition / clear_grad_attribute; the bucket
    itself is `param_buffer_bytes`' — DeepSpeed's estimator, 4·N + 16·N/d, counts them whole, which a published
    14B ZeRO-2 run on 8 × 80 GB contradicts), ZeRO-3 none (the gathered layer's are `param_buffer_bytes`).
    zero_convention 'fsdp' with 16-bit weights and an fp32 master (PyTorch FSDP's mixed precision): the sharded fp32
    parameter is the master (sharded as a master is), its 16-bit copy exists only unsharded — the gathered units
    under ZeRO-3 (`param_buffer_bytes`: no weights row for what trains), the whole stage's from the forward to the
    backward under ZeRO-2 (SHARD_GRAD_OP) and without sharding — and the reduced gradient is cast to the parameter's
    dtype (torch 2.13 distributed/fsdp/_fully_shard/_fsdp_param.py `orig_dtype = sharded_param.dtype`,
    _fsdp_collectives.py foreach_reduce `_to_dtype_if_needed(reduce_output, orig_dtype)`): 4-byte gradients, reduced
    in fp32 too (torchtitan mixed_precision_reduce float32; core/estimate.py passes 4 bytes to the step), whatever
    grad_dtype says. zero_convention 'xla' (MaxText: float32 weights and gradients, base.yml) counts the same state
    but no 16-bit copy at any stage (a cast of the weights in use).
    """
    N = np.asarray(n_params, dtype=np.float64)
    t = np.asarray(tp, dtype=np.float64)
    p = np.asarray(pp, dtype=np.float64)
    d = np.asarray(n_gpus, dtype=np.float64) / (t * p)
    z = np.asarray(zero_stage)
    n_gpu = (N / p if stage_params is None else np.asarray(stage_params, dtype=np.float64)) / t  # params per GPU
    base_t = n_gpu if trainable_params is None else np.asarray(trainable_params, dtype=np.float64) / t
    trained = base_t + np.asarray(adapter_params, dtype=np.float64) / t  # parameters with gradients and moments
    q = np.asarray(quantized_params, dtype=np.float64) / t
    wb = dtype_bytes_array(weight_dtype)
    fb = wb if frozen_bytes is None else np.asarray(frozen_bytes, dtype=np.float64)
    opt_pp = optimizer_bytes_per_param(optimizer)
    if adafactor_elements is not None:
        opt_b = np.where(np.asarray(optimizer) == "adafactor", 4.0 * adafactor_elements * trained / N, opt_pp * trained)
    else:
        opt_b = opt_pp * trained
    ds = np.asarray(zero_convention) == "deepspeed"
    mb = master_bytes_per_param(master_weights, optimizer, weight_dtype)
    fp32_param = fp32_param_master(zero_convention, master_weights, optimizer, weight_dtype)
    grads = trained * np.where(fp32_param, 4.0, dtype_bytes_array(grad_dtype))
    parts = {
        "weights_bytes": trained * np.where(no_trained_weights_row(zero_convention, z, fp32_param), 0.0, wb)
                         + (n_gpu - base_t - q) * fb
                         + q * np.asarray(quantized_bytes, dtype=np.float64),
        "grads_bytes": np.where(ds & (z == 3), 0.0, grads),
        "grad_accum_bytes": np.where(np.asarray(grad_accum_fp32, dtype=bool) | (ds & (z >= 1)), 4.0 * trained, 0.0),
        "optimizer_bytes": opt_b,
        "master_bytes": mb * trained,
    }
    out = {k: v / np.where(z >= ZERO_SHARD_STAGE[k], d, 1.0) for k, v in parts.items()}
    # DeepSpeed ZeRO-1: the 16-bit gradients are kept whole (ZeRO-2 keeps its partition, sharded as the rule says);
    # the fp32 partition is sharded from stage 1 on
    out["grads_bytes"] = np.where(ds & (z == 1), parts["grads_bytes"], out["grads_bytes"])
    out["grad_accum_bytes"] = np.where(ds & (z >= 1), parts["grad_accum_bytes"] / d, out["grad_accum_bytes"])
    return out


# host offload (tables.OFFLOAD_MODES): which state parts move to host memory
OFFLOADED_PARTS = {"optimizer": ("grads_bytes", "grad_accum_bytes", "optimizer_bytes", "master_bytes"),
                   "optimizer_params": ("weights_bytes", "grads_bytes", "grad_accum_bytes", "optimizer_bytes",
                                        "master_bytes")}


def offload_split(parts: dict, offload="none") -> tuple[dict, np.ndarray]:
    """(the parts left on the GPU, bytes per GPU moved to host memory). 'optimizer' (ZeRO-Offload, Ren et al. 2021
    §4): gradients stream to the host, where the fp32 master copy and the moments live and the update runs; the GPU
    keeps the 16-bit weights. 'optimizer_params' (ZeRO-Infinity's CPU offload of parameters, ZeRO-3): the weights
    too; the GPU keeps only gathered layers (`param_buffer_bytes`)."""
    o = np.asarray(offload)
    host = 0.0
    gpu = dict(parts)
    for k in parts:
        moved = (o == "optimizer_params") | ((o == "optimizer") & (k in OFFLOADED_PARTS["optimizer"]))
        if np.any(moved):
            host = host + np.where(moved, parts[k], 0.0)
            gpu[k] = np.where(moved, 0.0, parts[k])
    return gpu, host + 0.0 * sum(parts.values())


def optimizer_in_backward(parts: dict, on, largest_params, grad_bytes_per_param=2.0, trained_frac=1.0, tp=1,
                          zero_stage=0, shard=1.0) -> dict:
    """The state parts when the optimizer steps inside the backward (`on`): each parameter's optimizer is stepped
    and its gradient zeroed in a post-accumulate-grad hook as soon as that gradient is ready (torchtune's
    optimizer_in_bwd, pytorch/torchtune @bd2a0fc7: torchtune/modules/optim.py OptimizerInBackward in the
    single-device recipe, torchtune/training/memory.py register_optim_in_bwd_hooks in the distributed one), so no
    gradient buffer outlives its parameter: the gradients part becomes the largest parameter's gradient
    (`largest_params`, the largest single module's parameters as `param_buffer_bytes` takes them: the embedding or
    LM head table, or the largest matrix; whole wherever anything trains) ÷ tp, and ÷ the ZeRO shards from stage 2
    on (assumed: the hook fires on the reduce-scattered shard, and the unsharded unit's gradients are
    `param_buffer_bytes`), at most what the buffer held; no fp32 accumulation buffer (the rules refuse one, and
    gradient accumulation). The moments, the master copy and the weights are unchanged. Convention: one gradient in
    flight — a layer's other gradients are freed within the same backward op's hooks."""
    flag = np.asarray(on, dtype=bool)
    if not np.any(flag):
        return parts
    one = (np.asarray(largest_params, dtype=np.float64) * np.asarray(grad_bytes_per_param, dtype=np.float64)
           * (np.asarray(trained_frac, dtype=np.float64) > 0) / np.asarray(tp, dtype=np.float64)
           / np.where(np.asarray(zero_stage) >= ZERO_SHARD_STAGE["grads_bytes"], np.asarray(shard, dtype=np.float64),
                      1.0))
    out = dict(parts)
    out["grads_bytes"] = np.where(flag, np.minimum(parts["grads_bytes"], one), parts["grads_bytes"])
    out["grad_accum_bytes"] = np.where(flag, 0.0, parts["grad_accum_bytes"])
    return out


# bitsandbytes gives paged state only to parameters of at least this many elements; smaller ones get ordinary device
# tensors (bitsandbytes-foundation/bitsandbytes @95f9af30 bitsandbytes/optim/optimizer.py get_state_buffer)
PAGED_MIN_ELEMENTS = 1e5


def paged_out_bytes(pageable_bytes, allocated_bytes, capacity_bytes) -> np.ndarray:
    """The moments a paged optimizer keeps in host memory, per GPU: bitsandbytes' paged optimizers allocate their
    state in CUDA unified memory (cudaMallocManaged, hipMallocManaged on ROCm; bitsandbytes-foundation/bitsandbytes
    @95f9af30 bitsandbytes/functional.py get_paged), which the driver evicts to host memory when the device runs short
    (Dettmers et al. 2023, QLoRA §2 "Paged Optimizers"). So the device holds what is left beside everything else the
    run allocates (`allocated_bytes`, the moments and the allocator's fragmentation included: its segments are
    cudaMalloc'd, and the driver evicts managed pages to make room for them) and the rest waits on the host:
    max(0, allocated − capacity), at most the pageable moments (`pageable_bytes`: 0 where nothing pages, or where
    the parameters are under PAGED_MIN_ELEMENTS, as small LoRA adapters are)."""
    over = np.asarray(allocated_bytes, dtype=np.float64) - np.asarray(capacity_bytes, dtype=np.float64)
    return np.clip(over, 0.0, np.asarray(pageable_bytes, dtype=np.float64))


def param_buffer_bytes(zero_stage, zero_convention, offload, largest_layer_params, unit_params, tp=1,
                       gathered_bytes_per_param=2.0, grad_bytes_per_param=2.0, trained_frac=1.0,
                       dequant_params=0.0, overlap=False):
    """Working buffers of sharded parameters and gradients, per GPU (0 under the ZeRO paper's accounting, the default).

    deepspeed (ZeRO-3, or parameters offloaded): 4 bytes × the largest layer's parameters — its gathered 16-bit
      parameters and gradients, DeepSpeed's `estimate_zero3_model_states_mem_needs` — plus the prefetch bucket,
      stage3_prefetch_bucket_size = 5e7 parameters in the gathered dtype (deepspeed/runtime/zero/config.py). And at
      every ZeRO stage the gradient reduce bucket, reduce_bucket_size = 5e8 elements in the gradient dtype: one at
      ZeRO-3, one at ZeRO-1/2 or two with overlap_comm (core/tables.DEEPSPEED_REDUCE_BUCKET); not divided by tp.
    fsdp (ZeRO-3): two units gathered (the one computing and the next, prefetched; FSDP's default
      backward_prefetch and limit_all_gathers) in their stored dtype, and one unit's unsharded gradients before their
      reduce-scatter (Zhao et al. 2023 §3.3); a unit is a transformer block or the root (embedding, LM head). Kept as
      two of the largest unit (decided, 2026-12-05): the wrappings disagree — with one root (HF Accelerate's
      auto-wrap, torchtitan before mid-2025) the root is not resharded after the forward (FSDP2's default for the
      root), so root + two blocks stay gathered and the root's gradients live through the backward, more than this;
      with the embedding and the head wrapped apart (torchtitan since July 2025, #1094) head + block, less.
    And, with a quantised base (QLoRA), the one linear layer being dequantised to 16 bits (`dequant_params` × 2).
    Tensor parallelism divides all of it."""
    z = np.asarray(zero_stage)
    conv = np.asarray(zero_convention)
    params_off = np.asarray(offload) == "optimizer_params"
    gb = np.asarray(gathered_bytes_per_param, dtype=np.float64)
    ds = ((conv == "deepspeed") & (z == 3)) | (params_off & VE.isin(conv, zero_conventions_with("offload_buffers")))
    fsdp = (conv == "fsdp") & (z == 3)
    largest, unit = (np.asarray(x, dtype=np.float64) for x in (largest_layer_params, unit_params))
    ds_b = 4.0 * largest + DEEPSPEED_PREFETCH_PARAMS * gb
    fsdp_b = 2.0 * unit * gb + unit * np.asarray(grad_bytes_per_param, dtype=np.float64) * trained_frac
    out = np.where(ds, ds_b, np.where(fsdp, fsdp_b, 0.0)) + 2.0 * np.asarray(dequant_params, dtype=np.float64)
    buckets = np.where((conv == "deepspeed") & (z >= 1),
                       np.where((z < 3) & np.asarray(overlap, dtype=bool), 2.0, 1.0), 0.0)
    return out / np.asarray(tp, dtype=np.float64) + buckets * DEEPSPEED_REDUCE_BUCKET * np.asarray(
        grad_bytes_per_param, dtype=np.float64)


# bytes of state per parameter for each recipe (12, 16, 18, 20, 16), derived rather than typed
RECIPE_BYTES = {name: int(sum(float(v) for v in state_bytes(1.0, **r.fields()).values()))
                for name, r in RECIPES.items()}


# ---------------------------------------------------------------------------------------------------------------
# Activations: the per-tensor ledger of one transformer layer
# ---------------------------------------------------------------------------------------------------------------

# Order and meaning of the ledger's tensors: core/tables.py LEDGER_TENSORS (core/recompute.py reads the names too)
LEDGER_NAMES = tuple(t[0] for t in LEDGER_TENSORS)


def layer_input_bytes(seq_len, micro_batch, d_model, tp=1, sequence_parallel=False, act_bytes=2.0):
    """A layer's input, the residual stream: act_bytes·s·b·h, ÷ t with sequence parallelism (Korthikanti §4.2.3) —
    `layer_ledger`'s norm1_input, and what full recomputation keeps of every layer, whatever its kind."""
    t_out = np.where(np.asarray(sequence_parallel, dtype=bool), np.asarray(tp, dtype=np.float64), 1.0)
    sbh = np.asarray(seq_len, dtype=np.float64) * np.asarray(micro_batch, dtype=np.float64) * np.asarray(
        d_model, dtype=np.float64)
    return np.asarray(act_bytes, dtype=np.float64) * sbh / t_out


def layer_ledger(seq_len, micro_batch, d_model, n_heads, n_kv_heads=None, d_ff=None, mlp="gelu", norm="layernorm",
                 dropout=True, flash_attention=False, recompute="none", tp=1, sequence_parallel=False,
                 profile="fused", act_bytes=2.0, n_experts=1, top_k=1, head_dim=0, v_head_dim=0, attention="standard",
                 q_lora_rank=0, kv_lora_rank=0, qk_norm="none", norms_per_layer=2, moe_d_ff=0, n_shared_experts=0,
                 shared_d_ff=0, shared_expert_gate=False, training="full", lora_rank=16, lora_targets="all",
                 mamba_layers=0, mamba_heads=0, mamba_head_dim=0, mamba_state=0, mamba_groups=0, mamba_norm=True,
                 mamba_parallel=False, moe_load=1.0, saved_input_bytes=None, act_fp8_store=False,
                 moe_outputs_kept=True):
    """Bytes of each tensor one transformer layer keeps for its backward pass, per GPU (vectorised).

    Legend: s, b, h, a, k, f, t = seq_len, micro_batch, d_model, n_heads, n_kv_heads, d_ff, tp. Activations are
    16-bit (`act_bytes` = 2) and dropout masks 1 byte, as in Korthikanti et al. 2022 §4.1. For the GPT block
    (layernorm, a = k, f = 4h, GeLU, dropout, no flash, profile 'fused') the sum is exactly sbh(34 + 5as/h):
      attention 11sbh + 5as²b  = qkv_input 2 + q 2 + k 2 + v 2 + attn_output 2 + mask 1 (sbh); softmax 2as²b,
                                 softmax mask as²b, dropout output 2as²b
      MLP 19sbh                = mlp_input 2 + gelu_input 8 + mlp_hidden 8 + mask 1
      norms 4sbh               = norm1_input 2 + norm2_input 2
    Korthikanti counts norm inputs only, so in profile 'fused' the layernorm statistics are 0 for the GPT block.
    Llama-style block (rmsnorm, swiglu, no dropout): norm inputs; fp32 rstd per row (4sb each); q, and k, v with
    k heads (2sb·k·h/a); gate, up and the down-projection input, each 2sbf; profile 'eager' (PyTorch eager,
    Hugging Face style) also keeps SiLU(gate) 2sbf, and layernorm's fp32 mean and rstd (8sb); its RMSNorm
    (transformers' LlamaRMSNorm: x.float(), pow, mean, rsqrt, multiply, cast, weight multiply) keeps the input
    upcast to fp32 (4sbh) where a fused kernel keeps the 16-bit input (2sbh), and x·rstd cast back to 16 bits
    (2sbh) for the weight's gradient: per eager RMSNorm 4sbh more than fused, shown as `normN_upcast`
    ((4 − act_bytes)·sbh, so normN_input + normN_upcast is the fp32 copy) and `normN_normalized` (act_bytes·sbh).
    `norm1_input` stays the 16-bit layer input in every profile: it is what full recomputation keeps.
    Measured with PyTorch 2.13 (core.measure, bench/RESULTS.md).
    Flash attention (Dao et al. 2022): no s×s tensors; the kernel keeps the fp32 log-sum-exp 4·a·s·b and the
    output O (= attn_output); attention dropout regenerates its mask from the RNG state.
    Tensor parallel (Korthikanti §4.2.2): tensors inside the attention core and MLP divide by t; the norm inputs,
    QKV/MLP inputs and dropout masks outside (10sbh) divide by t only with sequence parallelism (§4.2.3).
    K/V with k < t heads are replicated: k/t is floored at 1 head per GPU.
    Mixture of experts (dropless top-k routing, as Mixtral's reference implementation): each token's d_ff-wide
    tensors exist once per chosen expert (× top_k, width f_e = moe_d_ff), plus the fp32 router probabilities
    (4·s·b·E), the gathered expert inputs and the expert outputs kept for the routing-weight multiply (top_k · 2sbh
    each; not where the weights multiply inside the experts' activation, `moe_outputs_kept` false: Megatron-Core,
    data/frameworks.csv moe_probs); shared experts (DeepSeekMoE, Qwen2-MoE) keep an MLP's tensors of width E_s·f_s,
    and a shared-expert gate its output (2sbh) and sigmoid (2sb). `moe_load` (core.model.moe_load_factor: the busiest expert's tokens ÷ the
    balanced share, up to the capacity factor) scales the routed experts' tensors on the busiest rank. Profile
    'eager' (the transformers-style loop over experts that core/torch_blocks.py builds and measures: tests/
    test_measure_moe.py) also keeps the routing's bookkeeping — int64 top-k indices 8Tk, the renormalisation's fp32
    operands 4Tk + 4T, each expert's int64 token and slot indices 16Tk, its 16-bit routing weights 2Tk
    (`moe_routing_indices`) — and index_add_'s copy of the weighted expert outputs, p·T·k·h (`moe_weighted_outputs`);
    T = s·b tokens. The fused profile's dispatchers (Megatron-Core's permute) keep what expert_inputs counts; their
    own index maps (O(T·k), int32) are not measured here and not counted.
    Issue 12, derived tensor by tensor: head_dim d_h and v_head_dim d_v set q, k (a·d_h, k·d_h) and v, O (k·d_v,
    a·d_v) — with d_h = d_v = h/a the classic sizes; QK-norm keeps q and k before their norms and an rstd per head
    (per row for 'full'); MLA (DeepSeek-V2 §2.1) keeps the query and KV latents (r_q + r_kv wide) for their norms,
    an rstd each, and the normalised latents for the up-projections, then q and k of a heads × d_h and v of a × d_v;
    norms_per_layer 4 (Gemma 2/3) adds two norms' inputs and statistics, 1 (one norm for a parallel block) drops
    norm 2 and the MLP input (the MLP reads the attention's normalised input, already kept as qkv_input).
    LoRA / QLoRA (frozen base, Hu et al. 2021): a frozen linear layer keeps no input for its weight's gradient, so
    the input of the output projection (unless adapted, or flash keeps O), of the MLP and of the down projection
    (unless the MLP is adapted: targets 'all') and the experts' gathered inputs are dropped, and so is eager
    RMSNorm's x·rstd (its weight is frozen); each adapted matrix keeps its rank-r intermediate x·Aᵀ (2·s·b·r; per
    chosen expert); lora_dropout 0 (PEFT's default), so A's input is the base layer's. A quantised base (QLoRA)
    keeps the same: bitsandbytes' 4-bit matmul saves no input for a frozen weight.
    Mamba-2 (hybrid models; the mamba_* tensors, those of one Mamba-2 layer, 0 without Mamba layers): the fused
    training path Megatron-Core and the reference use (state-spaces/mamba ssd_combined.py
    `MambaSplitConv1dScanCombinedFn.forward`, ctx.save_for_backward) keeps in_proj's output zxbcdt (2·d_i + 2GN + H
    per token), the SSD output before the gated norm (d_i) and the norm's fp32 rstd per group; the conv output, dt,
    the chunk states and out_proj's input are recomputed in backward; in_proj keeps its input and the layer's
    pre-norm its own (shared with attention's in a parallel hybrid, Falcon-H1). All split over tp (heads, d_i and
    groups per rank: Megatron-Core ssm/mamba_mixer.py), the inputs outside as the norms. Nemotron-H 8B: 2·(4096 +
    18,560 + 8,192) + 4·8 bytes per token beside the pre-norm's (models.md §4). `ledger` weighs each unit by the
    layers that have it (a hybrid's average layer).
    Low-precision recipes (`saved_input_bytes`, data/lowp.csv): a linear layer saves its input for the weight
    gradient in the recipe's format — fp8, 1 byte per element (Transformer Engine maintainers, NVIDIA/
    TransformerEngine #1764: "we cache the FP8 data (on Blackwell) or the FP8 transpose data (on Hopper)") — so
    qkv_input, mlp_input, mlp_hidden, expert_inputs and mamba_input shrink, and with flash attention the output
    projection keeps an fp8 copy of O beside the kernel's 16-bit O. `act_fp8_store` (Megatron-Core
    activation_func_fp8_input_store, transformer_config.py: "Store the input of MLP activation function in FP8 for
    backprop to save memory"): gate and up (gelu_input) at 1 byte.
    Selective recomputation (§5): the attention core (softmax, its mask, dropout output; flash's LSE) is
    recomputed, so those entries are 0. Full recomputation: see `activation_bytes`; this ledger is the
    per-layer working set that is rebuilt during that layer's backward.
    """
    s = np.asarray(seq_len, dtype=np.float64)
    b = np.asarray(micro_batch, dtype=np.float64)
    h = np.asarray(d_model, dtype=np.float64)
    a = np.asarray(n_heads, dtype=np.float64)
    k = a if n_kv_heads is None else np.asarray(n_kv_heads, dtype=np.float64)
    f = 4 * h if d_ff is None else np.asarray(d_ff, dtype=np.float64)
    t = np.asarray(tp, dtype=np.float64)
    p = np.asarray(act_bytes, dtype=np.float64)
    lin_b = p if saved_input_bytes is None else np.asarray(saved_input_bytes, dtype=np.float64)  # linear inputs
    act_in = np.where(np.asarray(act_fp8_store, dtype=bool), 1.0, p)  # the MLP activation's saved input
    lowp_in = np.asarray(lin_b != p)
    sp = np.asarray(sequence_parallel, dtype=bool)
    drop = np.asarray(dropout, dtype=bool)
    flash = np.asarray(flash_attention, dtype=bool)
    rec = np.asarray(recompute)
    selective = rec == "selective"
    swiglu = VE.isin(np.asarray(mlp), GATED_MLPS)
    rms = np.asarray(norm) == "rmsnorm"
    eager = np.asarray(profile) == "eager"
    E = np.asarray(n_experts, dtype=np.float64)
    moe = E > 1
    kx = np.where(moe, np.asarray(top_k, dtype=np.float64), 1.0)  # copies of each d_ff-wide tensor
    hd, vd = head_dims(d_model, n_heads, head_dim, v_head_dim)
    mla = np.asarray(attention) == "mla"
    kh = np.where(mla, a, k)  # key/value heads (MLA: one per query head)
    fe, fs = moe_widths(f, moe_d_ff, shared_d_ff)
    fw = np.where(moe, fe, f)  # the width of this layer's (routed) MLP
    npl = np.asarray(norms_per_layer, dtype=np.float64)
    lora = VE.isin(np.asarray(training), ("lora", "qlora"))
    tgt = np.asarray(lora_targets)
    o_kept = ~lora | (tgt != "qv") | flash  # the output projection's input: trained/adapted, or flash keeps O
    mlp_kept = ~lora | (tgt == "all")  # the MLP's linear inputs: trained or adapted

    sbh = s * b * h
    t_out = np.where(sp, t, 1.0)  # divisor of tensors outside the TP regions
    kv_per_gpu = np.maximum(kh / t, 1.0) * hd  # K width per GPU (replicated below one head)
    v_per_gpu = np.maximum(kh / t, 1.0) * vd
    s2 = a * s * s * b / t  # per-GPU s×s elements over all heads
    no_core = flash | selective  # s×s tensors absent
    # fp32 statistics per row: layernorm keeps mean and rstd, rmsnorm rstd; Korthikanti (fused) ignores layernorm's
    stats = np.where(rms, 4.0 * s * b, np.where(eager, 8.0 * s * b, 0.0)) / t_out
    eager_rms = eager & rms  # unfused RMSNorm: fp32 copy of the input and a 16-bit normalised copy
    upcast = np.where(eager_rms, (4.0 - p) * sbh, 0.0) / t_out
    normalized = np.where(eager_rms & ~lora, p * sbh, 0.0) / t_out
    hybrid = np.asarray(mamba_layers, dtype=np.float64) > 0
    one_norm = (npl == 1) & ~hybrid  # a parallel block: the MLP reads the attention's normalised input (a hybrid's
    #                                  one-norm layers are each one mixer or one MLP with its own pre-norm: Nemotron-H)

    z = np.zeros(np.broadcast(s, b, h, a, k, f, t, p, sp, drop, flash, rec, swiglu, rms, eager, kx, hd, vd, npl,
                              lora).shape)
    load = np.where(moe, np.asarray(moe_load, dtype=np.float64), 1.0)  # the busiest rank's share of routed tokens
    sbf = kx * load * s * b * fw / t  # d_ff-wide elements per GPU, over the chosen experts
    # shared experts: an MLP of width E_s·f_s (its input is mlp_input), and a gate's output and sigmoid
    sbs = np.where(moe, np.asarray(n_shared_experts, dtype=np.float64), 0.0) * s * b * fs / t
    shared_mlp = np.where(swiglu, 2.0 * act_in * sbs + eager * p * sbs, act_in * sbs) + np.where(mlp_kept, p * sbs, 0.0)
    gate_on = moe & np.asarray(shared_expert_gate, dtype=bool)
    shared = shared_mlp + np.where(gate_on, p * sbh / t_out + p * s * b / t_out, 0.0)
    # QK-norm: q and k before the norm (fused: 16-bit; eager: the fp32 copy, and x·rstd unless frozen)
    qkn = np.asarray(qk_norm)
    qk_elems = np.where(qkn == "none", 0.0, s * b * (a / t * hd + np.maximum(kh / t, 1.0) * hd))
    qk_bytes = np.where(eager_rms, 4.0 + np.where(lora, 0.0, p), p)
    qk_rows = np.select([qkn == "per_head", qkn == "full"], [s * b * (a / t + np.maximum(kh / t, 1.0)),
                                                              2.0 * s * b / t_out], 0.0)
    # MLA latents (not split by tensor parallelism: the down-projections are replicated)
    qr = np.where(mla, np.asarray(q_lora_rank, dtype=np.float64), 0.0)
    kvr = np.where(mla, np.asarray(kv_lora_rank, dtype=np.float64), 0.0)
    lat = s * b * (qr + kvr) / t_out
    lat_rows = s * b * (np.where(qr > 0, 1.0, 0.0) + np.where(mla, 1.0, 0.0)) / t_out
    # LoRA: adapted matrices per layer (q, k, v, o; MLA: the query path, the KV down and up, o) and per MLP
    std_attn = np.where(tgt == "qv", 2.0, 4.0)
    mla_attn = np.where(qr > 0, 2.0, 1.0) + 2.0 + np.where(tgt == "qv", 0.0, 1.0)
    n_mlp_mats = np.where(swiglu, 3.0, 2.0) * (kx + np.where(moe, np.asarray(n_shared_experts, dtype=np.float64), 0.0))
    lora_mats = np.where(mla, mla_attn, std_attn) + np.where(tgt == "all", n_mlp_mats, 0.0)
    sbq = s * b * (a * hd)  # query elements (= sbh for the classic block)
    sbo = s * b * (a * vd)  # attention output elements
    led = {
        "norm1_input": z + layer_input_bytes(s, b, h, t, sp, p),
        "norm1_stats": z + stats,
        "norm1_upcast": z + upcast,
        "norm1_normalized": z + normalized,
        "qkv_input": z + lin_b * sbh / t_out,
        "q": z + p * sbq / t,
        "k": z + p * s * b * kv_per_gpu,
        "softmax_output": np.where(no_core, 0.0, p * s2),
        "softmax_dropout_mask": np.where(no_core | ~drop, 0.0, 1.0 * s2),
        "dropout_output": np.where(no_core | ~drop, 0.0, p * s2),
        "v": z + p * s * b * v_per_gpu,
        "softmax_lse": np.where(flash & ~selective, 4.0 * a * s * b / t, 0.0),
        # flash keeps O (16-bit); the output projection saves its own copy where it is another format (fp8), or
        # where no kernel keeps O (the math path): o_kept's cases
        "attn_output": np.where(flash, p * sbo / t, 0.0)
                       + np.where(o_kept & (~flash | lowp_in) & (~lora | (tgt != "qv")), lin_b * sbo / t, 0.0) + z,
        "attn_dropout_mask": np.where(drop, 1.0 * sbh / t_out, 0.0),
        "norm2_input": np.where(one_norm, 0.0, p * sbh / t_out) + z,
        "norm2_stats": np.where(one_norm, 0.0, stats) + z,
        "norm2_upcast": np.where(one_norm, 0.0, upcast) + z,
        "norm2_normalized": np.where(one_norm, 0.0, normalized) + z,
        "mlp_input": np.where(one_norm | ~mlp_kept, 0.0, lin_b * sbh / t_out) + z,
        "gelu_input": np.where(swiglu, 0.0, act_in * sbf),
        "gate": np.where(swiglu, act_in * sbf, 0.0),
        "up": np.where(swiglu, act_in * sbf, 0.0),
        "silu_output": np.where(swiglu & eager, p * sbf, 0.0),
        "mlp_hidden": np.where(mlp_kept, lin_b * sbf, 0.0) + z,
        "mlp_dropout_mask": np.where(drop, 1.0 * sbh / t_out, 0.0),
        "router_probs": np.where(moe, 4.0 * s * b * E / t_out, 0.0),
        "expert_inputs": np.where(moe & mlp_kept, kx * load * lin_b * sbh / t_out, 0.0),
        "expert_outputs": np.where(moe & np.asarray(moe_outputs_kept, dtype=bool), kx * load * p * sbh / t_out, 0.0),
        "moe_routing_indices": np.where(moe & eager, (30.0 * kx + 4.0) * s * b / t_out, 0.0),
        "moe_weighted_outputs": np.where(moe & eager, kx * load * p * sbh / t_out, 0.0),
        "shared_experts": z + shared,
        "qk_norm_input": z + qk_bytes * qk_elems,
        "qk_norm_stats": z + 4.0 * qk_rows,
        "mla_latents": z + np.where(eager_rms, 4.0, p) * lat,
        "mla_latent_stats": z + 4.0 * lat_rows,
        "mla_latents_normed": z + (p + np.where(eager_rms & ~lora, p, 0.0)) * lat,
        "post_norms": np.where(npl == 4, 2.0 * (p * sbh / t_out + stats + upcast + normalized), 0.0) + z,
        "lora_hidden": np.where(lora, p * s * b * np.asarray(lora_rank, dtype=np.float64) * lora_mats, 0.0) + z,
    }
    if not np.any(hybrid):  # (a chunk without hybrids: the Mamba-2 tensors are 0)
        led.update({k: z for k in LEDGER_GROUPS["Mamba-2 (SSM)"]})
        return led
    from .model import mamba_dims
    dm = mamba_dims(d_model, mamba_heads, mamba_head_dim, mamba_state, mamba_groups)
    own_norm = hybrid & ~np.asarray(mamba_parallel, dtype=bool)
    led.update({
        "mamba_norm_input": np.where(own_norm, p * sbh / t_out, 0.0) + z,
        "mamba_norm_stats": np.where(own_norm, stats + upcast + normalized, 0.0) + z,
        "mamba_input": np.where(own_norm, lin_b * sbh / t_out, 0.0) + z,
        "mamba_zxbcdt": np.where(hybrid, p * s * b * dm["in_width"] / t, 0.0) + z,
        "mamba_out_x": np.where(hybrid, p * s * b * dm["d_inner"] / t, 0.0) + z,
        "mamba_rstd": np.where(hybrid & np.asarray(mamba_norm, dtype=bool), 4.0 * s * b * dm["G"] / t, 0.0) + z,
    })
    return led


# The ledger's tensors grouped by part of the block (for per-part curves and summaries); every tensor is in one group.
LEDGER_INPUTS = ("seq_len", "micro_batch", "d_model", "n_heads", "n_kv_heads", "d_ff", "mlp", "norm", "dropout",
                 "flash_attention", "recompute", "tp", "sequence_parallel", "profile", "n_experts", "top_k",
                 "head_dim", "v_head_dim", "attention", "q_lora_rank", "kv_lora_rank", "qk_norm", "norms_per_layer",
                 "moe_d_ff", "n_shared_experts", "shared_d_ff", "shared_expert_gate", "training", "lora_rank",
                 "lora_targets", "mamba_layers", "mamba_heads", "mamba_head_dim", "mamba_state", "mamba_groups",
                 "mamba_norm", "mamba_parallel")
LEDGER_DEFAULTS = {"training": "full", "lora_rank": 16, "lora_targets": "all"}  # + model.ARCH_DEFAULTS
# inputs the ledger reads whose defaults are the schema's own (core/inputs.py), not restated here
SCHEMA_DEFAULTED = ("moe_capacity_factor", "moe_load_imbalance", "moe_pad_to_capacity", "fp8_recipe", "compute_dtype",
                    "act_fp8_store", "framework", "bf16_first_layers", "bf16_last_layers", "pp",
                    "pp_embedding_loss_slots", "pp_layout")


def ledger(c, **over) -> dict:
    """`layer_ledger` for a configuration: `c` is any mapping of `evaluate`'s input columns (a sweep chunk, or
    `Config.columns()`); keyword arguments override single inputs (e.g. recompute="none", tp=1)."""
    from .model import ARCH_DEFAULTS
    from .inputs import BY_NAME
    dflt = {**ARCH_DEFAULTS, **LEDGER_DEFAULTS, **{k: BY_NAME[k].default for k in SCHEMA_DEFAULTED}}
    get = lambda k: over[k] if k in over else c[k] if k in c else dflt[k]  # noqa: E731
    kw = {k: get(k) for k in LEDGER_INPUTS}
    from .model import moe_load_factor
    from . import lowp as LP
    recipe = LP.effective(get("fp8_recipe"), get("compute_dtype"))
    # a low-precision run's layers kept in bf16 (bf16_first_layers / bf16_last_layers) save 16-bit linear inputs: the
    # first stage's average layer (core/lowp.bf16_layer_share, stage "first": the stage that holds the most in flight;
    # the estimate's last stage reads the same per-layer ledger: its own share is not applied there, a stated
    # approximation, under by the 16-bit inputs of bf16_last_layers where the last stage peaks)
    first, last = (np.asarray(get(k), dtype=np.float64) for k in ("bf16_first_layers", "bf16_last_layers"))
    if np.any(first + last > 0) and np.any((first + last > 0) & (recipe != "none")):
        from .schedule import stage_layers
        L, pp = get("n_layers"), get("pp")
        share = np.where(recipe != "none", LP.bf16_layer_share(first, last, L, pp, stage_layers(
            L, pp, get("pp_embedding_loss_slots"), get("pp_layout"))["first"], stage="first"), 0.0)
        cd = np.asarray(get("compute_dtype"), dtype=object)
        lp_led, bf_led = (ledger(c, **{**over, "bf16_first_layers": 0, "bf16_last_layers": 0, **x}) for x in (
            {}, {"fp8_recipe": "none", "compute_dtype": np.where(cd == "fp8", "bf16", cd), "act_fp8_store": False}))
        return {k: (1.0 - share) * v + share * bf_led[k] for k, v in lp_led.items()}
    saved = LP.number(recipe, "saved_input_bytes") if np.any(recipe != "none") else None  # data/lowp.csv (none: 2)
    led = layer_ledger(**kw, moe_load=moe_load_factor(get("moe_capacity_factor"), get("moe_load_imbalance"),
                                                      get("moe_pad_to_capacity")), saved_input_bytes=saved,
                       act_fp8_store=get("act_fp8_store"),
                       # the profile's routing-weight multiply (data/frameworks.csv moe_probs): on the outputs, which
                       # keeps them, or inside the experts' activation (Megatron-Core), which does not; the eager
                       # transformers-style loop weighs the outputs whatever the framework (over: moe_probs)
                       moe_outputs_kept=(over.get("moe_probs", word(get("framework"), "moe_probs")) != "activation")
                       | (np.asarray(kw["profile"]) == "eager"))
    if not np.any(np.asarray(get("mamba_layers")) > 0):
        return led
    # a hybrid's average layer: each unit's tensors × the share of layers that have it (core.model.block_counts)
    from .model import block_counts
    L = np.asarray(get("n_layers"), dtype=np.float64)
    La, Lm, Lf = block_counts(L, get("mamba_layers"), get("attention_layers"), get("mlp_layers"))
    share = {"attention": La / L, "mamba": Lm / L, "mlp": Lf / L}
    return {k: v * share[LEDGER_UNIT[k]] if k in LEDGER_UNIT else v for k, v in led.items()}


LEDGER_GROUPS = {
    "attention scores (∝ s²)": ("softmax_output", "softmax_dropout_mask", "dropout_output"),
    "attention, linear in s": ("qkv_input", "q", "k", "v", "attn_output", "softmax_lse", "qk_norm_input",
                               "qk_norm_stats", "mla_latents", "mla_latent_stats", "mla_latents_normed"),
    "MLP": ("mlp_input", "gelu_input", "gate", "up", "silu_output", "mlp_hidden", "shared_experts"),
    "MoE routing": ("router_probs", "expert_inputs", "expert_outputs", "moe_routing_indices", "moe_weighted_outputs"),
    "norms": ("norm1_input", "norm1_stats", "norm1_upcast", "norm1_normalized", "norm2_input", "norm2_stats",
              "norm2_upcast", "norm2_normalized", "post_norms"),
    "dropout masks": ("attn_dropout_mask", "mlp_dropout_mask"),
    "LoRA adapters": ("lora_hidden",),
    "Mamba-2 (SSM)": ("mamba_norm_input", "mamba_norm_stats", "mamba_input", "mamba_zxbcdt", "mamba_out_x",
                      "mamba_rstd"),
}
QUADRATIC_TENSORS = LEDGER_GROUPS["attention scores (∝ s²)"]
# the unit of a layer each tensor belongs to, for a hybrid's average layer (`ledger`); LoRA's adapters stay whole
LEDGER_UNIT = {**{t: "attention" for g in ("attention scores (∝ s²)", "attention, linear in s") for t in LEDGER_GROUPS[g]},
               **{t: "attention" for t in ("norm1_input", "norm1_stats", "norm1_upcast", "norm1_normalized",
                                           "attn_dropout_mask")},
               **{t: "mlp" for g in ("MLP", "MoE routing") for t in LEDGER_GROUPS[g]},
               **{t: "mlp" for t in ("norm2_input", "norm2_stats", "norm2_upcast", "norm2_normalized",
                                     "mlp_dropout_mask")},
               **{t: "mamba" for t in LEDGER_GROUPS["Mamba-2 (SSM)"]}}


def quadratic_crossover_seq_len(micro_batch, d_model, n_heads, n_kv_heads=None, d_ff=None, mlp="gelu",
                                norm="layernorm", dropout=True, tp=1, sequence_parallel=False, profile="fused",
                                n_experts=1, top_k=1):
    """Sequence length at which one layer's s² attention-score tensors equal the rest of its ledger (no
    recomputation, no flash). Both parts are exact polynomials in s — linear l·s and quadratic q·s² — so
    s* = l / q; for the GPT block 34h/(5a) (Korthikanti Eq. 1: 34sbh = 5as²b). NaN when no s² tensor is stored."""
    led = layer_ledger(1.0, micro_batch, d_model, n_heads, n_kv_heads, d_ff, mlp, norm, dropout, False, "none", tp,
                       sequence_parallel, profile, n_experts=n_experts, top_k=top_k)
    q = sum(led[n] for n in QUADRATIC_TENSORS)
    lin = sum(v for k, v in led.items() if k not in QUADRATIC_TENSORS)
    return np.where(q > 0, lin / np.where(q > 0, q, 1.0), np.nan)


def korthikanti_per_layer_bytes(seq_len, micro_batch, d_model, n_heads, tp=1, sequence_parallel=False,
                                recompute="none"):
    """Korthikanti et al. 2022 Table 2 closed forms (bytes per layer, 16-bit), for cross-checking the ledger:
    none: sbh(34 + 5as/h); TP: sbh(10 + 24/t + 5as/(ht)); TP+SP: sbh/t·(34 + 5as/h); selective: drop the 5as/h
    term; full recomputation: 2sbh."""
    s, b, h, a, t = (np.asarray(x, dtype=np.float64) for x in (seq_len, micro_batch, d_model, n_heads, tp))
    sp = np.asarray(sequence_parallel, dtype=bool)
    rec = np.asarray(recompute)
    core = np.where(rec == "selective", 0.0, 5 * a * s / h)
    tp_form = np.where(sp, (34 + core) / t, 10 + (24 + core) / t)
    return np.where(rec == "full", 2 * s * b * h, s * b * h * tp_form)


def activation_bytes(n_layers, per_layer_bytes, layer_input_bytes, full_layer_bytes, recompute="none", pp=1,
                     virtual_stages=1):
    """Activation bytes held by the busiest GPU (the first pipeline stage), as named parts.

    Without full recomputation: stored = L · per_layer (Korthikanti Eq. 5: in 1F1B the first stage holds p
    micro-batches of L/p layers = L layers' worth, whatever p). Full recomputation keeps only each layer's input
    (`layer_input_bytes` = 2sbh, Table 2) for L layers, and during one layer's backward that layer's whole set is
    alive again; its input is already among the kept ones, so `recompute_peak` = full_layer − layer_input.
    Interleaved schedule (m = virtual_stages > 1): × (1 + (p−1)/(p·m)) (Korthikanti §4.2.3).
    """
    L = np.asarray(n_layers, dtype=np.float64)
    p = np.asarray(pp, dtype=np.float64)
    m = np.asarray(virtual_stages, dtype=np.float64)
    full = np.asarray(recompute) == "full"
    factor = np.where(m > 1, 1 + (p - 1) / (p * m), 1.0)
    stored = np.where(full, L * layer_input_bytes, L * per_layer_bytes) * factor
    peak = np.where(full, full_layer_bytes - layer_input_bytes, 0.0)
    return {"stored_bytes": stored, "recompute_peak_bytes": peak + 0 * stored}


LOSS_CHUNK_TOKENS = 4096.0  # a chunked loss keeps one chunk's logits (decided: Liger and torchtitan chunk by about 1-8k)


def logits_bytes(seq_len, micro_batch, vocab_size, tp=1, fp32_loss=False):
    """Logits kept for the loss: bf16 logits 2·s·b·V, plus the fp32 copy 4·s·b·V that a cross-entropy in fp32
    keeps (`fp32_loss`); divided by tp (vocabulary-parallel output layer, Megatron). Seed 000: ≈0.26 GB per
    sequence at s = 1024, V = 128,000."""
    s, b, V, t = (np.asarray(x, dtype=np.float64) for x in (seq_len, micro_batch, vocab_size, tp))
    return s * b * V * (2.0 + np.where(np.asarray(fp32_loss, dtype=bool), 4.0, 0.0)) / t


def recompute_beyond_logits(recompute_peak, logits):
    """Bytes a recomputed layer's working set adds to the peak of the stage that also holds the loss's logits. In the
    backward the loss, then the output layer, run first; the output layer's backward frees the logits (and their fp32
    copy and gradient) before the last transformer layer reruns its forward under full recomputation (Korthikanti
    et al. 2022 §4: the recomputed layer's activations exist only during that layer's backward). The two never
    coexist, so the stage's peak holds the larger: max(recompute_peak − logits, 0) on top of the logits. Both in
    bytes; 0 where nothing is recomputed whole."""
    r, lg = np.asarray(recompute_peak, dtype=np.float64), np.asarray(logits, dtype=np.float64)
    return np.maximum(r - lg, 0.0)


# The documented "realistic" overhead (a row of core/tables.OVERHEADS, with its reasoning there).
REALISTIC_OVERHEAD_BYTES = OVERHEADS["realistic"].overhead_fixed_bytes
REALISTIC_FRAGMENTATION_FRAC = OVERHEADS["realistic"].fragmentation_frac


def overhead_bytes(dynamic_bytes_, overhead_fixed_bytes=0.0, fragmentation_frac=0.0):
    """Overhead = fixed bytes (CUDA context, communication buffers) + fragmentation_frac × the bytes allocated and
    freed every step (`dynamic_bytes`: activations, logits, gathered and communication buffers). The model state
    (weights, gradients, optimizer state, master weights, low-precision copies) is allocated once, in flat buffers —
    Megatron-Core's contiguous param-and-grad buffers (core/distributed/param_and_grad_buffer.py), DeepSpeed's flat
    ZeRO partitions, FSDP2's sharded parameters — which the caching allocator does not split, so it is not
    fragmented (decided; it was before this round, which predicted published runs not to fit: GPT-OSS-120B on 64
    B200 by 5 GB). 0 by default so the seeds' numbers reproduce; `REALISTIC_*` above is the realistic setting."""
    return np.asarray(overhead_fixed_bytes, dtype=np.float64) + fragmentation_bytes(dynamic_bytes_, fragmentation_frac)


def fragmentation_bytes(dynamic_bytes_, fragmentation_frac=0.0):
    """The caching allocator's fragmentation: fragmentation_frac × the bytes allocated and freed every step, the part
    of `overhead_bytes` beyond the fixed bytes. A risk, not a need: when cudaMalloc fails, PyTorch's caching allocator
    frees every cached block that is not split and retries before it raises out-of-memory (pytorch/pytorch
    c10/cuda/CUDACachingAllocator.cpp, the header comment), and with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
    (set by torchtitan's run script and Megatron-Bridge's performance recipes) segments grow in place instead of
    splitting. So a run fits when what it allocates fits (`fits`: total_bytes − fragmentation_bytes ≤ the GPU's
    memory); where the fragmentation counted would not fit (headroom_bytes < 0) it fits tightly, and the planner's
    margin (core/advisor.margin_bytes) keeps it out of recommendations (decided: of the 312 published GPU runs with
    fragmentation counted, 2026-12-05, 5 that ran leave room for only 5-9 % of their per-step tensors, less than the
    realistic preset's 10 %)."""
    return np.asarray(fragmentation_frac, dtype=np.float64) * dynamic_bytes_


# the record's parts allocated and freed every step: what fragments (overhead_bytes)
PER_STEP_PARTS = ("activations_bytes", "logits_bytes", "param_buffer_bytes")


def dynamic_bytes(parts: dict):
    """Bytes allocated and freed every step, what fragments (overhead_bytes): activations, logits and the gathered /
    communication buffers, from a record or any mapping of PER_STEP_PARTS."""
    return sum(np.asarray(parts[k], dtype=np.float64) for k in PER_STEP_PARTS)
