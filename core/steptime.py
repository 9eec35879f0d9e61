"""Predicted step time per parallel layout (vectorised): a table of terms, one small function each.

No profiling: every rate is the accelerator's datasheet figure times an achievable fraction that was measured and
published (data/accelerators.csv `matmul_efficiency`; data/efficiency.csv per chip family), with the source on
each row; how the framework executes (which elementwise kernels are fused, which attention kernel runs, how
collectives overlap, host work per kernel) is its profile (core/profiles.py, data/frameworks.csv, data/kernels.csv);
the few fitted constants (`sustained_fraction`, each profile's `overlap_cost` and `unit_host_s`) are fitted by
bench/fit_profiles.py and evaluated leave-one-source-out (bench/RESULTS.md). The structure follows Narayanan et al.
2021 (arXiv:2104.04473) §2–3 and Korthikanti et al. 2022 (arXiv:2205.05198) §4–5; docs/formulas.md gives every
term with its source.

Legend: s, b, h, a, k, f, V, L = seq_len, micro_batch, d_model, n_heads, n_kv_heads, d_ff, vocab_size, n_layers;
t, p, c, e, v = tp, pp, cp, ep, virtual_stages; d = n_gpus/(t·p·c) (data-parallel degree); T = b·s/c tokens a GPU
holds of one micro-batch; m = global_batch/(d·b) micro-batches per replica per step.

One micro-batch through one layer on one GPU, forward, split into components (core/recompute.py names them):
- GEMMs (m rows = T): qkv (n = (a·d_h + k·d_h + k·d_v)/t; MLA: the query down/up, the KV down (with the shared RoPE
  key) and up, DeepSeek-V2 §2.1), out (n = h, k = a·d_v/t), mlp_in (up, or gate+up: n = f/t or 2f/t; MoE: E/e local
  experts, each of e·T·top_k/E tokens, one grouped GEMM, plus the router and the shared experts), mlp_out (down).
  Each GEMM runs at peak × matmul_efficiency × sustained with tile and wave quantization (⌈m/128⌉·⌈n/256⌉ output
  tiles of 128×256 in waves of one tile per SM; NVIDIA Matrix Multiplication Background User's Guide), and never
  faster than its bytes at HBM speed (roofline). Dense-first MoE models average their dense and MoE layers.
- core: flash attention (Dao et al. 2022/2023): causal, half of the 4·b·(s/c)·s·width/t FLOPs, at peak ×
  the profile's attention kernel efficiency (the family's best kernel, or FlashAttention-2's: data/efficiency.csv;
  FlexAttention at the family's flex_over_fa2 of it, the older FlashAttention in Triton at TRITON_OVER_FA2)
  × sustained (not for a family whose figure was measured inside a training step, attention_in_step: Hopper's and
  Blackwell's hold it already) × attention_length_factor (the tile pipeline's start-up and the causal mask's deficit
  at the length s/c), forward 1/3.5 of forward+backward (backward = 2.5 × forward); a sliding window's layers over
  the whole tiles their band touches (window_tile_keys), at the start-up rate of those keys, with the causal
  deficit the tiles do not explain, so that a band as wide as the sequence costs a global layer; a chunk's over its
  keys. Without flash (Megatron 2021): QKᵀ and AV as batched GEMMs over every score, the softmax (read + write 4 B
  each) and its dropout (5 B) at HBM speed.
- memory-bound components at HBM speed × hbm_efficiency × sustained, bytes per element from data/kernels.csv for the
  profile's implementation (fused kernels, or eager PyTorch's separate kernels): norm (n_norms norms of h, QK-norm),
  rope (q and k), act (SwiGLU or GeLU over d_ff/t), resid (two residual adds, dropout masks); outside tensor
  parallelism (norms, residuals) the work is replicated on the t ranks unless sequence parallelism splits it; an MoE
  layer's token permutation (dispatch and combine: data/kernels.csv `permute` bytes per element of each routed copy,
  `permute_flex` with the DeepEP / HybridEP dispatchers).
Backward = (1 + trained share) × forward for GEMMs (frozen weights skip their weight gradients: LoRA, frozen_frac),
2 × forward for memory-bound work, 2.5/3.5 of flash's forward+backward. The last stage adds the LM head (GEMM
n = V/t) and the loss (data/kernels.csv `loss` bytes per logit); MTP modules a projection, a block and the head; the
critical stage is the busiest rank's layers plus what of those the last rank's fewer layers leave exposed (embedding
and loss slots, or Megatron's custom layout, `pp_layout`: core/schedule.layout_ranks).

Recomputation (core/recompute.py): full = every layer's forward again (under XLA less its last projection, which
the backward never reads: profile remat_dce; a routed expert's still reruns, the router's gradient reads its
outputs; with its tensor-parallel communication; with
recompute_layers K only K of the stage's layers); otherwise the components the modules or remat policy name.

Communication, per micro-batch and layer (core/comm.py for the link each group uses): tensor parallel (2
all-reduces of T·h·2 bytes forward and 2 backward, +2 per recomputed forward, +1 under remat_dce whose rerun skips
the MLP's row-parallel projection; exposed unless tp_overlap, then what
exceeds the layer's GEMMs, or under PyTorch's async TP the backward's and what the forward's exceed of the forward
GEMMs: profile tp_overlap_scope); context parallel (all-gather of K/V forward, reduce-scatter of their gradients;
Llama 3 §3.3.2); expert parallel (all-to-all dispatch and combine, T·top_k·h·2 bytes each way); data parallel
(gradient all-reduce of the stage's parameters ÷ t once per step, ZeRO-1/2 its reduce-scatter + all-gather; ZeRO-3
all-gathers forward and backward and reduce-scatters per micro-batch; over the dp_shard·c ranks that shard, and an
all-reduce of the shards over dp_replicate under hybrid sharding). ZeRO-3 / FSDP issue those collectives per unit (a
layer), and so does FSDP's SHARD_GRAD_OP (ZeRO-2 under fsdp: a gather per unit forward, a reduce-scatter per unit
backward): each pays the ring's latency, which grows with the nodes the group spans (core/comm.ring_latency_s, NCCL's
own latency model). Overlapped (dp_overlap; the profile's
grad_reduce), a unit's share stays exposed (the first gather, the last reduction) and so does what exceeds the
compute it hides behind; while a collective runs beside kernels they slow by the profile's `overlap_cost` (fitted:
NCCL kernels take SMs and HBM bandwidth) times the hidden time. Pipeline: core/schedule.py.

Host: each layer's kernels cost the profile's `host_s_per_kernel` of CPU; what exceeds the GPU's time for the layer
is exposed (eager PyTorch on small layers); plus `unit_host_s` per sharded unit and micro-batch where the stage runs
hooks (data/frameworks.csv unit_hook_stages; fitted) and `step_host_s` per step (fitted). XLA
dispatches one program: none. CUDA graphs (megatron, `cuda_graphs`): per layer, no launch time per kernel; the full
iteration, no per-step host time either. Offload
(ZeRO-Offload, ZeRO-Infinity, activation offload): host ↔ device transfers at the host link's rate
(data/accelerators.csv host_gb_per_s) and the CPU optimizer step at the profile's CPU-Adam rate on the host (an x86
node's CPUs shared by its GPUs, or a Grace per 1-2 GPUs), overlapped as the framework does (gradients down during
the backward; the CPU step and the parameters back after it: max of the two; parameter fetches per micro-batch
behind the compute); a paged optimizer's moments that wait on the host (bitsandbytes) cross the link once each way
per step, exposed.

Step = the sum of the terms in TERMS (the CLI, the record and the charts read the table); `step_parts` returns each
term and their sum.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import comm as C
from . import lowp as LP
from . import profiles as P
from . import recompute as RC
from . import schedule as S
from . import vec as VE
from .hardware import family_names
from .inputs import expert_tp
from .flops import local_keys
from .model import block_counts, head_dims, layer_counts, mamba_dims, moe_load_factor, moe_widths
from .tables import GATED_MLPS, NODE_DEDUP_DISPATCHERS

TPU_FAMILY = float(family_names().index("tpu"))
TILE_M, TILE_N = 128.0, 256.0  # cuBLAS's largest tile (NVIDIA Matrix Multiplication Background User's Guide)
FLASH_BWD_OVER_FWD = 2.5  # the flash-attention benchmarks count backward FLOPs as 2.5 × forward (Dao 2023)


def mxu_fill(x, mxu):
    """The share of a TPU matrix unit a GEMM dimension of `x` fills: x ÷ (x rounded up to whole MXU widths); 1
    where `mxu` is NaN (no MXU model). MaxText's guide: on Trillium's 256×256 MXU 'two 128x128 operations … will
    halve the efficiency' (custom_model.md @e591f30c)."""
    x, mxu = np.asarray(x, dtype=np.float64), np.asarray(mxu, dtype=np.float64)
    ok = (mxu > 0) & (x > 0)
    w = np.where(ok, mxu, 1.0)
    return np.where(ok, x / np.where(ok, np.ceil(x / w) * w, 1.0), 1.0)


def gemm_time_s(m, n, k, peak_flops_per_s, matmul_efficiency, sm_count, hbm_bytes_per_s, dtype_bytes=2.0,
                batch=1.0, mxu=np.nan):
    """`batch` (m×k)·(k×n) GEMMs in one kernel (a batched or grouped GEMM: attention heads, MoE experts):
    tile- and wave-quantised compute at peak × efficiency, or the bytes at HBM speed, whichever is slower.
    The batch's output tiles share the waves. `sm_count` NaN (no SM model, e.g. TPU) skips the wave quantisation;
    on a TPU (`mxu`, the matrix unit's side) the contraction k and the output width n fill whole MXU widths."""
    m, n, k, batch = (np.asarray(x, dtype=np.float64) for x in (m, n, k, batch))
    tiles = batch * np.ceil(m / TILE_M) * np.ceil(n / TILE_N)
    sms = np.asarray(sm_count, dtype=np.float64)
    waves = np.ceil(tiles / np.where(sms > 0, sms, 1.0))
    padded = np.where(sms > 0, waves * sms * TILE_M * TILE_N, batch * m * n)  # output elements the waves cost
    compute = 2.0 * padded * k / (peak_flops_per_s * matmul_efficiency)
    if np.any(np.asarray(mxu, dtype=np.float64) > 0):
        compute = compute / (mxu_fill(n, mxu) * mxu_fill(k, mxu))
    memory = batch * (m * k + k * n + m * n) * dtype_bytes / hbm_bytes_per_s
    return np.maximum(compute, memory)


# ---------------------------------------------------------------------------------------------------------------
# The shared quantities of one layout: a layer's components, the critical stage, the groups' links
# ---------------------------------------------------------------------------------------------------------------

ATTN_TILE_STARTUP_TOKENS = 238.0  # FlashAttention-3 forward, H100, head dim 128: 430, 517, 566, 590, 614, 621 TFLOP/s
# at 0.5k-16k tokens (pytorch/benchmark PR #2391, the FA3 paper's shapes) follow R·s/(s + 238) within 1 % (derived)
ATTN_REF_TOKENS = 2048.0  # the length the catalog's attention efficiencies and causal ratio are quoted at


# flash attention's rate at head dim 64 relative to 128, the width the catalog's attention efficiency is quoted for
# (Shah et al. 2024, FlashAttention-3, Fig. 5, forward on H100 SXM5, BF16: FlashAttention-3 460–497 against 625–648
# TFLOP/s at 2K–16K = 0.74–0.77; FlashAttention-2 318–324 against 362–370 = 0.88); the backward assumed alike.
# A chip whose native kernel differs says so in the catalog (data/accelerators.csv head_dim_64_factor: B100, B200,
# GB200 0.66, FlashAttention-4's; Blackwell Ultra back at Hopper's 0.75, its exponential units doubled)
HEAD_DIM_64_FACTOR = {"native": 0.75, "fa2": 0.88}

# FlashAttention in Triton (the FlashAttention-1-era kernel, attention_kernel triton) against FlashAttention-2: "around
# 1.3-1.5× faster than FlashAttention in Triton in the forward pass and around 2× faster in the backward pass" on A100
# (Dao 2023, arXiv:2307.08691 §4.1). With the backward 2.5 × the forward's FLOPs (FLASH_BWD_OVER_FWD), forward and
# backward take (1.4 + 2 × 2.5) / 3.5 = 1.83 × FlashAttention-2's time: 0.547 of its rate (derived; the A100 ratio is
# assumed on other chips, with FlashAttention-2's head-dim-64 factor)
TRITON_OVER_FA2 = (1.0 + FLASH_BWD_OVER_FWD) / (1.4 + 2.0 * FLASH_BWD_OVER_FWD)


def head_dim_factor(hd, fa2, native_at64=np.nan):
    """Flash kernel rate at head dim `hd` ÷ its rate at 128: 1 from 128 up, at 64 and below the FlashAttention-2
    class's 0.88 or the native kernel's (the chip's catalog figure `native_at64`, else FlashAttention-3's 0.75),
    log-linear between (a narrower head does less work per tile load)."""
    chip = np.asarray(native_at64, dtype=np.float64)
    native = np.where(chip > 0, chip, HEAD_DIM_64_FACTOR["native"])
    at64 = np.where(np.asarray(fa2, dtype=bool), HEAD_DIM_64_FACTOR["fa2"], native)
    x = np.clip(np.log2(np.maximum(np.asarray(hd, dtype=np.float64), 1.0) / 64.0), 0.0, 1.0)
    return at64 + (1.0 - at64) * x


def head_width_factor(hd, vd, fa2, native_at64=np.nan, mxu=np.nan):
    """The flash kernel's rate for heads `hd` (QK) and `vd` (V) wide ÷ its rate at 128: on a GPU `head_dim_factor`;
    on a TPU (`mxu` > 0) the matrix unit's fill instead — QKᵀ contracts over hd, PV writes vd wide, each filling
    whole MXU widths (mxu_fill), weighed by their FLOPs (∝ hd and vd): (hd + vd) / (hd/fill(hd) + vd/fill(vd)). On a
    TPU the fill stands for the head width's cost; the GPU kernels' measured factor is not applied on top of it."""
    hd, vd, mxu = _f(hd), _f(vd), _f(mxu)
    gpu = head_dim_factor(hd, fa2, native_at64)
    if not np.any(mxu > 0):
        return gpu
    tpu = (hd + vd) / (hd / mxu_fill(hd, mxu) + vd / mxu_fill(vd, mxu))
    return np.where(mxu > 0, tpu, gpu)


def attention_length_factor(s, causal_ratio_ref):
    """The flash kernel's causal efficiency at length `s` relative to the catalog's attention efficiency (quoted at
    2,048 tokens): (a) the tile pipeline's start-up, s/(s + 238) ÷ its value at 2,048 (FlashAttention-3 forward on
    H100, pytorch/benchmark PR #2391: 430 → 621 TFLOP/s from 0.5k to 16k, derived); (b) the causal mask's partly
    masked tiles and load imbalance, a deficit 1 − causal_ratio at 2,048 that shrinks as √(2048/s) (FlashAttention-2
    causal / non-causal on A100, head dim 128: 155/187, 173/196, 182/201 at 2k, 4k, 8k = 0.83, 0.88, 0.91; the law
    gives 0.83, 0.88, 0.915; Dao 2023, flash2_a100_fwd_bwd_benchmark.png; derived). At 256K tokens: 1.11 × 0.985."""
    s = np.maximum(_f(s), 1.0)
    startup = startup_factor(s)
    causal = 1.0 - (1.0 - _f(causal_ratio_ref)) * np.sqrt(ATTN_REF_TOKENS / s)
    # a guard, not a measurement: far below the benchmarks' 512 tokens the √ law would go negative (at 23 tokens)
    return startup * np.maximum(causal, 0.05)


def window_tile_keys(s, window, block):
    """The keys a sliding-window layer's kernel computes per query, in whole tiles: a block of `block` queries
    reads every block of `block` keys its band (the w keys up to and including each query) touches,
    ⌈(w − 1)/B⌉ + 1 blocks in steady state and fewer for the first query blocks; the masked parts of those tiles
    cost as much as the rest. Returns tiles × B² ÷ s keys per query: about w + B for a band wider than the tile
    (FlashAttention's 128 keys), 8 × w for a 128-token window in TPU splash blocks of 512 (data/frameworks.csv
    window_block, window_block_tpu); the band formula (flops.local_keys) counts w per query in steady state."""
    s, w, B = (np.maximum(_f(x), 1.0) for x in (s, window, block))
    nq = np.ceil(s / B)  # query blocks
    nw = np.ceil((w - 1.0) / B) + 1.0  # key blocks a query block reads once the band is full
    tiles = np.where(nq <= nw, nq * (nq + 1.0) / 2.0, nw * (nw + 1.0) / 2.0 + (nq - nw) * nw)
    return tiles * B * B / s


def startup_factor(s):
    """attention_length_factor's tile-pipeline part alone, s/(s + 238) ÷ its value at 2,048 tokens: for a window's
    layers counted in whole tiles (window_tile_keys), whose masked tiles stand for the causal deficit."""
    s = np.maximum(_f(s), 1.0)
    return (s / (s + ATTN_TILE_STARTUP_TOKENS)) / (ATTN_REF_TOKENS / (ATTN_REF_TOKENS + ATTN_TILE_STARTUP_TOKENS))


def _f(x):
    return np.asarray(x, dtype=np.float64)


def context(c: dict, state_bytes, stage_params, expert_params=0.0) -> dict:
    """Everything the terms read, computed once: per-layer component times (forward, one micro-batch), the
    critical stage's forward/backward, communication per collective, micro-batches. `c` holds `evaluate`'s
    columns with the accelerator's step constants."""
    g = lambda k, d: c[k] if k in c else d  # noqa: E731  (columns absent in older callers: "off")
    s, b, h, a, kh, f, V, L = (_f(c[x]) for x in ("seq_len", "micro_batch", "d_model", "n_heads", "n_kv_heads",
                                                   "d_ff", "vocab_size", "n_layers"))
    t, p, cp, ep, v = (np.maximum(_f(c[x]), 1.0) for x in ("tp", "pp", "cp", "ep", "virtual_stages"))
    E, topk = _f(c["n_experts"]), _f(c["top_k"])
    fw = np.asarray(g("framework", "megatron"))
    hd, vd = head_dims(h, a, g("head_dim", 0), g("v_head_dim", 0))
    mla = np.asarray(g("attention", "standard")) == "mla"
    qr, kvr, dr = (_f(g(k, 0)) for k in ("q_lora_rank", "kv_lora_rank", "qk_rope_head_dim"))
    fe, fs = moe_widths(f, g("moe_d_ff", 0), g("shared_d_ff", 0))
    n_shared = _f(g("n_shared_experts", 0))
    # hybrid Mamba-2 models (core/model.py block_counts): each unit's components weigh by the layers that have it
    n_attn, n_ssm, n_mlp = block_counts(L, g("mamba_layers", 0), g("attention_layers", 0), g("mlp_layers", 0))
    has_ssm = n_ssm > 0
    w_attn, w_ssm = n_attn / L, n_ssm / L
    n_dense, n_moe = layer_counts(n_mlp, E, g("n_dense_layers", 0))
    trained = _f(g("trained_frac", 1.0))
    grads = _f(g("grad_frac", 1.0))
    full_training = np.asarray(g("training", "full")) == "full"
    n_mtp = np.where(full_training, _f(g("n_mtp_layers", 0)), 0.0)
    window, every = _f(g("sliding_window", 0)), _f(g("global_every", 0))
    kh = np.where(mla, a, kh)
    n = np.maximum(_f(c["n_gpus"]), 1.0)
    d = S.dp_degree(n, t, p, cp)
    eff_scale = _f(g("efficiency_scale", 1.0))  # calibration (core/calibrate.py): 1 = the published constants
    net_scale = _f(g("network_scale", 1.0))
    # the profile's kernels against the family's (fitted: an eager stack's launch gaps and syncs; not for TPUs,
    # whose sustained fraction is fitted on the one TPU stack)
    prof_scale = _f(c["fit_sustained_scale"]) if "fit_sustained_scale" in c else P.number(fw, "sustained_scale")
    on_tpu = _f(g("family_index", -1.0)) == TPU_FAMILY
    sus = _f(c["sustained_fraction"]) * eff_scale * np.where(on_tpu, 1.0, prof_scale)
    # low precision (core/lowp.py, data/lowp.csv): the linear layers at the recipe's rate, the rest at bf16
    recipe = LP.effective(g("fp8_recipe", "none"), g("compute_dtype", "bf16"))
    lowp = recipe != "none"
    bf16_raw = _f(g("peak_bf16_flops_per_s", np.nan))
    fp8_dt = np.asarray(g("compute_dtype", "bf16")) == "fp8"
    base_raw = np.where(fp8_dt & (bf16_raw > 0), bf16_raw, _f(c["peak_flops_per_s"]))
    peak, eff, sms = base_raw * sus, _f(c["matmul_efficiency"]), _f(c["sm_count"])
    fp4 = LP.is_fp4(recipe)
    lp_raw = np.where(fp4, _f(g("peak_fp4_flops_per_s", np.nan)), _f(g("peak_fp8_flops_per_s", np.nan)))
    eff8 = _f(g("fp8_matmul_efficiency", np.nan))
    eff8 = np.where(eff8 > 0, eff8, eff * LP.FP8_OVER_BF16_MAMF) * LP.number(recipe, "gemm_factor")
    peak_lin = np.where(lowp, lp_raw * sus, peak)
    eff_lin = np.where(lowp, eff8, eff)
    lin_bytes = np.where(lowp, np.where(fp4, 0.5, 1.0), 2.0)
    # layers a low-precision run keeps in bf16 (inputs bf16_first_layers / bf16_last_layers): their share of the
    # fullest stage's layers runs its linear GEMMs at the bf16 rate (core/lowp.bf16_layer_share, stage "slowest")
    sl = S.stage_layers(L, p, g("pp_embedding_loss_slots", False), g("pp_layout", ""))
    bf16_share = 0.0
    if np.any(lowp & (_f(g("bf16_first_layers", 0)) + _f(g("bf16_last_layers", 0)) > 0)):
        bf16_share = np.where(lowp, LP.bf16_layer_share(g("bf16_first_layers", 0), g("bf16_last_layers", 0), L, p,
                                                        sl["most"]), 0.0)
    hbm = _f(c["memory_bandwidth_bytes_per_s"]) * _f(c["hbm_efficiency"]) * sus
    lat = _f(c["collective_latency_s"])
    gpn = _f(c["gpus_per_node"])
    # a TPU's "node" is its ICI slice (the catalog's pod, or gpus_per_node chips per slice for a multi-slice run):
    # a slice's collectives run on its torus (core/comm.torus_fraction), slices talk over DCN (inter-node)
    link = dict(gpus_per_node=gpn, intra_bytes_per_s=_f(c["intra_node_bytes_per_s"]) * net_scale,
                inter_bytes_per_s=_f(c["inter_node_bytes_per_s"]) * net_scale,
                intra_frac=_f(c["intra_node_efficiency"]), inter_frac=_f(c["inter_node_efficiency"]),
                torus_axes=_f(g("ici_axes", np.nan)), torus_wrap=_f(g("ici_wrap", np.nan)),
                slice_chips=np.minimum(n, gpn))
    sp = np.asarray(c["sequence_parallel"], dtype=bool)
    flash = np.asarray(c["flash_attention"], dtype=bool)
    drop = np.asarray(c["dropout"], dtype=bool)
    swiglu = VE.isin(np.asarray(c["mlp"]), GATED_MLPS)
    rotary = np.asarray(c["position"]) == "rotary"
    moe = E > 1
    T = b * s / cp
    # the kernels the step runs (the `profile` input; estimate.derived_columns fills in the framework's own,
    # core/profiles.kernel_impl): the bytes each elementwise op moves (data/kernels.csv), the kernels a layer launches
    impl = np.asarray(c["profile"])
    fa2 = P.runs_fa2(fw, g("attention_kernel", "auto"))
    # a family's attention efficiency measured inside a training step (data/efficiency.csv attention_in_step) holds
    # the clocks and gaps under load already: the sustained fraction `sus` multiplies the rate below, so it is
    # divided out here (the calibration's and the profile's scales stay)
    in_step = np.asarray(g("attention_in_step", False), dtype=bool)
    native_eff = _f(c["attention_efficiency"]) / np.where(in_step, _f(c["sustained_fraction"]), 1.0)
    kernel = np.asarray(g("attention_kernel", "auto"))
    class_eff = np.where(fa2, _f(g("fa2_attention_efficiency", 0.33)), native_eff)  # the Mamba-2 SSD kernels' rate too
    attn_eff = class_eff * np.where(kernel == "triton", TRITON_OVER_FA2, 1.0) \
        * np.where(kernel == "flex", _f(g("flex_over_fa2", 1.0)), 1.0)

    mxu = _f(g("mxu_dim", np.nan))

    def gemm(m_, n_, k_, batch=1.0):
        return gemm_time_s(m_, n_, k_, peak, eff, sms, hbm, batch=batch, mxu=mxu)

    def lin(m_, n_, k_, batch=1.0, eff_=None, eff_bf16=None):  # a linear layer's GEMM: at the low-precision rate
        # under a recipe; the share of layers kept in bf16 at the bf16 rate (`eff_bf16`: their efficiency, where
        # `eff_` is a low-precision one's)
        t_ = gemm_time_s(m_, n_, k_, peak_lin, eff_lin if eff_ is None else eff_, sms, hbm, dtype_bytes=lin_bytes,
                         batch=batch, mxu=mxu)
        if np.all(np.asarray(bf16_share) == 0.0):
            return t_
        t_bf = gemm_time_s(m_, n_, k_, peak, eff if eff_bf16 is None else eff_bf16, sms, hbm, batch=batch, mxu=mxu)
        return (1.0 - bf16_share) * t_ + bf16_share * t_bf

    # --- one layer's forward components --------------------------------------------------------------------------
    gated = np.where(swiglu, 2.0, 1.0)
    dense_in, dense_out = lin(T, gated * f / t, h), lin(T, h, f / t)
    # MoE as Megatron-Core runs it (megatron/core/transformer/moe/token_dispatcher.py, MoEAlltoAllTokenDispatcher:
    # "A2A(EP) -> AG(TP) -> experts -> RS(TP) -> A2A(EP)", the TP there being the expert-TP group): the router and the
    # all-to-all see the TP rank's sequence shard T/t; the expert-TP group gathers etp ranks' tokens, each expert's
    # weights split over etp (0: tp). Balanced routing: a rank's E/ep local experts get ep·(T/t)·top_k·etp/E tokens each.
    etp = expert_tp(_f(g("etp", 0)), t)
    T_moe = T / t
    # routing imbalance (core.model.moe_load_factor): the busiest expert's rank computes and receives `load` × the
    # balanced share, and every rank waits for it at the combine
    load = moe_load_factor(g("moe_capacity_factor", 0.0), g("moe_load_imbalance", 1.0), g("moe_pad_to_capacity", False))
    if np.any(moe):
        # the routed experts' GEMMs: PyTorch's torch._grouped_mm (profile moe_gemm) runs bf16 experts at the chip's
        # measured grouped rate (data/accelerators.csv grouped_gemm_efficiency), the other stacks at the dense one
        grouped = _f(g("grouped_gemm_efficiency", np.nan))
        # (dense dispatch, every expert on every token, is a batched matmul or a loop of plain GEMMs: the dense rate)
        grouped_bf16 = (np.asarray(P.word(fw, "moe_gemm")) == "torch_grouped_mm") & (grouped > 0) \
            & (np.asarray(g("moe_dispatcher", "alltoall")) != "dense")
        eff_exp = np.where(grouped_bf16 & ~lowp, grouped, eff_lin)
        eff_exp_bf16 = np.where(grouped_bf16, grouped, eff)  # a bf16 layer's experts under a recipe
        tok_e = ep * T_moe * topk * etp * load / np.where(moe, E, 1.0)
        shared_in = np.where(n_shared > 0, lin(T, gated * n_shared * fs / t, h), 0.0)
        shared_out = np.where(n_shared > 0, lin(T, h, n_shared * fs / t), 0.0)
        moe_in = lin(tok_e, gated * fe / etp, h, E / ep, eff_exp, eff_exp_bf16) + gemm(T_moe, E, h) + shared_in
        # GShard-style einsum dispatch (moe_dispatcher einsum; MaxText dense_matmul, src/maxtext/layers/moe.py
        # @e591f30c l.2588-2825: "BSM,BSEC -> EBCM" and "EBCM,BSEC -> BSM" with one-hot masks over capacity buffers
        # of C = capacity_factor·S·k/E slots per sequence): two GEMMs of S × E·C × h per sequence, on the rank's
        # sequences and its share h/t of the embedding; forward (and rerun) with the MLP's input GEMMs. Their
        # backward is 3 such GEMMs, not a weight GEMM's 2 per forward one: the dispatch mask, from integer indices,
        # has no gradient, the combine mask (the router's weights) does, whatever share of the weights trains
        ein = np.asarray(g("moe_dispatcher", "alltoall")) == "einsum"
        if np.any(ein):
            S_ = s / cp
            EC = load * S_ * topk  # the buffers' slots: einsum pads to capacity, so `load` is the capacity factor
            ein_t = np.where(ein & moe, gemm(EC, h / t, S_, b) + gemm(S_, h / t, EC, b), 0.0)
            moe_in = moe_in + ein_t
        else:
            ein_t = 0.0
        moe_out = lin(tok_e, h, fe / etp, E / ep, eff_exp, eff_exp_bf16) + shared_out
    else:  # a chunk without MoE rows skips the experts' GEMMs (a dense layer never reads them: n_moe = 0)
        moe_in = moe_out = ein_t = shared_in = shared_out = 0.0
    mixed = (moe & (n_dense > 0) & (n_moe > 0)) | has_ssm  # layers differ: the components are the layers' average
    moe_share = np.where(moe, np.where(mixed, n_moe / L, 1.0), 0.0)

    def avg(dense_v, moe_v):  # an MLP component per layer: over the dense and the MoE layers (a hybrid: ÷ all layers)
        return np.where(mixed, (n_dense * dense_v + n_moe * moe_v) / L, np.where(moe, moe_v, dense_v))

    std_qkv = lin(T, (a * hd + kh * hd + kh * vd) / t, h)
    if np.any(mla):
        q_up = np.where(qr > 0, lin(T, a * hd / t, qr), lin(T, a * hd / t, h))
        kv_up = lin(T, a * (hd - dr + vd) / t, kvr)
        mla_qkv = np.where(qr > 0, lin(T, qr, h), 0.0) + q_up + lin(T, kvr + dr, h) + kv_up
        mla_up = np.where(qr > 0, q_up, 0.0) + kv_up  # Megatron's mla_up_proj: the up-projections
    else:  # a chunk without MLA rows skips its projections (read only where mla)
        mla_qkv = mla_up = 0.0
    width = a * (hd + vd) / 2.0
    core_flops = 4.0 * b * (s / cp) * s * width / t
    # a window saves work only where the kernel skips the masked blocks; with attention sinks the reference
    # implementation (openai/gpt-oss gpt_oss/torch/model.py `sdpa`: the sink as an extra logit column, the window as
    # a mask over all s×s scores) computes every block, and so do the GPU kernels of the profiles (decided); where
    # the profile says so (data/frameworks.csv sink_window_skip: MaxText's splash kernel on TPU) it skips them
    # FlexAttention's block mask skips the window's masked blocks whatever the score_mod (the sinks) does
    skip = np.asarray(P.word(fw, "sink_window_skip"))
    sink_skip = (skip == "yes") | ((skip == "tpu") & on_tpu) | (kernel == "flex")
    # FlashAttention in Triton has no sliding window (causal masks only): it computes a window's layers in full
    # (packed documents, document_chunks: a varlen kernel runs each document as its own sequence, sinks or not)
    docs = np.asarray(g("document_chunks", False), dtype=bool)
    windowed = (window > 0) & (window < s) & (~np.asarray(g("attention_sinks", False), dtype=bool) | sink_skip
                                              | docs) & (kernel != "triton")
    n_global = np.where(every > 0, np.floor(L / np.maximum(every, 1.0)), 0.0)
    chunked = np.asarray(g("chunked_attention", False), dtype=bool)
    s_loc = _f(g("local_len", s))  # a window inside packed documents runs over each document (flops.document_window)
    s_eff = np.where(windowed, local_keys(s_loc, window, chunked), s) if np.any(windowed) else s
    # the kernel's efficiency follows the keys a query block iterates: s/c for global layers, the window (or chunk)
    # for local ones, which run like short attention (attention_length_factor at their average keys). A sliding
    # band is computed in whole tiles (window_tile_keys: FlashAttention's 128 keys on a GPU, the framework's splash
    # blocks on a TPU), at the tile pipeline's start-up rate for the keys it iterates, times the causal deficit the
    # tiles do not explain (the global layer's factor over the same count for a band as wide as the sequence: load
    # imbalance and the mask's cost, 1.04-1.05 at 2K-8K; decided, so that a window of s − 1 costs a global layer); a
    # chunk's causal blocks keep the band formula's count
    per_global = 1.0 / attention_length_factor(s / cp, c["causal_ratio"])
    if np.any(windowed):
        block = np.where(on_tpu, P.number(fw, "window_block_tpu"), P.number(fw, "window_block"))

        def tiles(w, length):
            keys = np.minimum(window_tile_keys(length, w, block), length)
            return 2.0 * keys / s / startup_factor(np.minimum(keys, s / cp))
        band = tiles(window, s_loc) * per_global / tiles(s, s)
        chunk = (s_eff / s) / attention_length_factor(np.minimum(s_eff, s / cp), c["causal_ratio"])
        # a global layer of packed rows attends within its documents (flops.document_window global_keys)
        gk = _f(g("global_keys", s))
        per_doc = (gk / s) / attention_length_factor(np.minimum(gk, s / cp), c["causal_ratio"])
        window_factor = np.where(windowed, ((L - n_global) * np.where(chunked, chunk, band) + n_global * per_doc)
                                 / L, per_global)
    else:
        window_factor = per_global
    # fp8 attention (--fp8-dot-product-attention: cuDNN's fp8 fused attention; refused with FlashAttention-2, which
    # has no fp8 path): the core at the fp8 peak, at LP.FP8_ATTENTION_OVER_BF16 of bf16 attention's efficiency
    fp8_attn = np.asarray(g("fp8_attention", False), dtype=bool) & lowp
    attn_peak = np.where(fp8_attn, _f(g("peak_fp8_flops_per_s", np.nan)) * sus * LP.FP8_ATTENTION_OVER_BF16, peak)
    # a family whose own kernel is FlashAttention-2 class (data/efficiency.csv native_fa2: A100, Ada, ROCm) keeps
    # FlashAttention-2's head-dim-64 factor under native too
    width_rate = head_width_factor(hd, vd, fa2 | np.asarray(g("native_fa2", False), dtype=bool),
                                   g("head_dim_64_factor", np.nan), mxu)
    flash_fb = (0.5 * core_flops * (1 + FLASH_BWD_OVER_FWD) / (attn_peak * attn_eff * width_rate)) * window_factor
    if not np.all(flash):
        scores, heads = b * (a / t) * (s / cp) * s, b * a / t
        qk = gemm(s / cp, s, hd, heads)
        bmm = qk + gemm(s / cp, vd, s, heads)
        softmax_fwd = scores * (4.0 + 5.0 * drop) / hbm
        math_fwd = bmm + softmax_fwd
        probs_fwd = qk + softmax_fwd  # QKᵀ and the softmax (and dropout): the probabilities alone
        math_bwd = 2.0 * bmm + scores * (6.0 + 5.0 * drop) / hbm
    else:  # a chunk of flash attention only skips the unfused path (read only where not flash)
        math_fwd = probs_fwd = math_bwd = 0.0

    outside = np.where(sp, 1.0 / t, 1.0)
    npl = _f(g("norms_per_layer", 2))
    norm_b = np.where(np.asarray(c["norm"]) == "rmsnorm", P.element_bytes(impl, "rmsnorm"),
                      P.element_bytes(impl, "layernorm"))
    qk_width = np.where(np.asarray(g("qk_norm", "none")) == "none", 0.0, (a * hd + kh * hd) / t)
    rope_width = np.where(mla, (a * dr + dr) / t, (a * hd + kh * hd) / t)
    act_width = avg(f, topk * fe + n_shared * fs) / t
    act_b = np.where(swiglu, P.element_bytes(impl, "swiglu"), P.element_bytes(impl, "gelu"))
    # Mamba-2 (Megatron-Core ssm/mamba_mixer.py: in_proj column-parallel, out_proj row-parallel, heads, d_inner and
    # groups split over tp): the projections are linear GEMMs; the SSD core (flops.ssm_flops_per_token's forward
    # matmuls, chunks of Q×N and Q×P) runs in Triton kernels at the attention kernel's rate (assumed: no published
    # SSD kernel efficiency; ~3 % of the layer's FLOPs), and never faster than its bytes; the causal conv1d, dt, the
    # gating and the gated norm are memory-bound (read + write of zxbcdt's and the output's elements, the fp32 chunk
    # states written and read: d_inner·N/Q per token)
    if np.any(has_ssm):
        dm = mamba_dims(h, g("mamba_heads", 0), g("mamba_head_dim", 0), g("mamba_state", 0), g("mamba_groups", 0),
                        g("mamba_conv", 0), g("mamba_chunk", 0))
        ssd_flops = T * (2.0 * dm["Q"] * (dm["G"] * dm["N"] + dm["d_inner"]) + 4.0 * dm["N"] * dm["d_inner"]) / t
        ssd_bytes = T * (2.0 * 2.0 * (dm["in_width"] + dm["d_inner"]) + 4.0 * 2.0 * dm["d_inner"] * dm["N"]
                         / dm["Q"]) / t
        ssm_core = np.where(has_ssm, np.maximum(ssd_flops / (peak * class_eff), ssd_bytes / hbm), 0.0)
        ssm_elem = np.where(has_ssm, T * (dm["conv_width"] * 2.0 * 2.0 + dm["d_inner"] * 3.0 * 2.0) / t / hbm, 0.0)
        ssm_in = np.where(has_ssm, lin(T, dm["in_width"] / t, h), 0.0)
        ssm_out = np.where(has_ssm, lin(T, h, dm["d_inner"] / t), 0.0)
    else:  # a chunk without hybrids skips the Mamba-2 terms
        dm = {"d_inner": 0.0, "in_width": 0.0}
        ssm_core = ssm_elem = ssm_in = ssm_out = 0.0
    # the token permutation's bytes per element: the alltoall dispatcher's permute and chunk sorts, or the flex
    # dispatchers' single permute and unpermute (data/kernels.csv permute, permute_flex)
    permute_b = np.where(VE.isin(np.asarray(g("moe_dispatcher", "alltoall")), NODE_DEDUP_DISPATCHERS),
                         P.element_bytes(impl, "permute_flex"), P.element_bytes(impl, "permute"))
    comp = {
        "qkv": w_attn * np.where(mla, mla_qkv, std_qkv),
        "k_proj": w_attn * np.where(mla, 0.0, lin(T, kh * hd / t, h)),
        "mla_up": w_attn * np.where(mla, mla_up, 0.0),
        "out": w_attn * lin(T, h, a * vd / t),
        "mlp_in": avg(dense_in, moe_in),
        "mlp_out": avg(dense_out, moe_out),
        # the shared experts' part of mlp_in / mlp_out (what a recompute unit may rerun apart: core/recompute.Unit)
        "shared_in": avg(0.0, shared_in),
        "shared_out": avg(0.0, shared_out),
        "core": w_attn * np.where(flash, flash_fb / (1 + FLASH_BWD_OVER_FWD), math_fwd),
        # without flash, the probabilities alone: QKᵀ and the softmax (what a recompute of them reruns; in core)
        "scores": w_attn * np.where(flash, 0.0, probs_fwd),
        "ssm_in": w_ssm * ssm_in,
        "ssm_out": w_ssm * ssm_out,
        "ssm_core": w_ssm * ssm_core,
        "norm": T * (outside * npl * h * norm_b + w_attn * qk_width * P.element_bytes(impl, "rmsnorm")) / hbm,
        "rope": w_attn * T * np.where(rotary, rope_width * P.element_bytes(impl, "rope"), 0.0) / hbm,
        "act": T * act_width * act_b / hbm + w_ssm * ssm_elem
               + moe_share * T_moe * topk * load * h * permute_b / hbm,
        "resid": T * outside * (2.0 * P.element_bytes(impl, "residual") * h + 2.0 * h * drop) / hbm,
    }
    gemm_names = ("qkv", "out", "mlp_in", "mlp_out", "ssm_in", "ssm_out")
    elem_names = ("norm", "rope", "act", "resid")
    gemm_fwd = sum(comp[k] for k in gemm_names)
    elem_fwd = sum(comp[k] for k in elem_names)
    core_fwd = comp["core"] + comp["ssm_core"]
    # the SSD backward: twice the forward's matmuls and, recomputed inside the kernel (ssd_combined.py), the chunk
    # states and C·Bᵀ once more: 2.5 × the forward, as flash attention's
    core_bwd = w_attn * np.where(flash, flash_fb * FLASH_BWD_OVER_FWD / (1 + FLASH_BWD_OVER_FWD), math_bwd) \
        + FLASH_BWD_OVER_FWD * comp["ssm_core"]
    layer_fwd = gemm_fwd + core_fwd + elem_fwd
    ein_fwd = avg(0.0, ein_t)  # the einsum dispatch's share of mlp_in: its backward is 1.5 × its forward
    bwd_gemm = (1.0 + np.minimum(trained, 1.0)) * (gemm_fwd - ein_fwd) + 1.5 * ein_fwd

    # --- recomputation (core/recompute.py) ---------------------------------------------------------------------
    # (`local` moves what is kept, which time does not read, and a unit's rerun_local components: the dispatch and
    # combine that per-op SAC reruns where its save list lacks the all-to-all, sac_saves_all_to_all false with
    # ep > 1; at ep 1 nothing more reruns, the expert-TP gather beside the dispatch included)
    spec = RC.columns(c.get("recompute", "none"), g("recompute_modules", ""), g("remat_policy", "none"),
                      P.word(fw, "selective"), moe_share,
                      local=RC.all_to_alls_rerun(ep, g("sac_saves_all_to_all", True)),
                      no_w2=RC.shared_w2_not_saved(n_shared, g("attention", "standard"), qr),
                      custom=g("remat_custom", ""))
    r = spec["rerun"]
    # mlp_in / mlp_out rerun as the routed experts (and a dense layer's MLP) do, their shared-expert part as the
    # shared experts do
    partial = (sum(r[k] * comp[k] for k in ("qkv", "out", "core") + elem_names)
               + RC.mlp_rerun(r, comp)
               + np.maximum(r["k_proj"] - r["qkv"], 0.0) * comp["k_proj"]
               + np.maximum(r["mla_up"] - r["qkv"], 0.0) * comp["mla_up"]
               + np.maximum(r["scores"] - r["core"], 0.0) * comp["scores"])
    Ls = sl["most"]
    K = _f(g("recompute_layers", 0))
    full_share = np.where(spec["full"], np.where(K > 0, np.minimum(K * v, Ls) / Ls, 1.0), 0.0)
    # under XLA (profile remat_dce) a fully rematerialised layer skips its last projection and residual add: only
    # their outputs would be recomputed, and the backward reads their inputs (data/frameworks.csv remat_dce). Not the
    # routed experts' down projection: MaxText weighs its outputs by the router's weights after it (layers/moe.py
    # RoutedMoE.unpermute, weight_sum), and the router's gradient reads them; a dense MLP's and the shared experts'
    # are skipped
    dce = np.asarray(P.word(fw, "remat_dce")) == "yes"
    dce_gemm = np.where(dce, avg(dense_out, 0.0) + comp["shared_out"], 0.0)  # the GEMMs the rerun skips (and the TP
    # overlap below)
    full_fwd = layer_fwd - dce_gemm - np.where(dce, 0.5 * comp["resid"], 0.0)
    layer_rec = full_share * full_fwd + (1.0 - full_share) * partial
    rec_full = spec["full"]

    # --- the critical stage: the busiest rank's layers, and the last rank's LM head + loss (and MTP) ---------------
    head_gemm = gemm(T, V / t, h)
    head_elem = T * P.element_bytes(impl, "loss") * V / t / hbm
    if np.any(n_mtp > 0):  # multi-token prediction (DeepSeek-V3 §2.2), last stage: a projection 2h→h, a block, the head
        mtp_gemm = gemm(T, h, 2.0 * h) + comp["qkv"] + comp["out"] + np.where(moe, moe_in + moe_out,
                                                                            dense_in + dense_out)
        mtp_t = n_mtp * 3.0 * (mtp_gemm + core_fwd + elem_fwd + head_gemm + head_elem)
    else:
        mtp_gemm = mtp_t = 0.0
    # the last rank runs its `last` layers beside the head, the loss and the MTP modules, the busiest its Ls layers:
    # the critical stage is Ls layers + the share w of those extras that the last rank's shortfall in layers does not
    # cover: 1 for an even split, the head's time beyond one layer's with embedding/loss slots (a layer fewer), 0
    # where a layout (core/schedule.layout_ranks) leaves the last rank enough room
    extras_t = 3.0 * (head_gemm + head_elem) + mtp_t
    head_w = np.clip(((sl["last"] - Ls) * 3.0 * layer_fwd + extras_t) / np.maximum(extras_t, 1e-30), 0.0, 1.0)
    gemm_stage = Ls * (gemm_fwd + bwd_gemm) + head_w * np.where(trained < 1, (2.0 + trained) * head_gemm,
                                                                 3.0 * head_gemm)
    core_stage = Ls * (core_fwd + core_bwd)
    elem_stage = Ls * 3.0 * elem_fwd + 3.0 * head_w * head_elem
    fwd = Ls * layer_fwd + head_w * (head_gemm + head_elem)
    # the recipe's quantise / amax / transpose kernels (data/lowp.csv bytes per element) on each linear GEMM's
    # input (forward) and output gradient (backward), at HBM speed; TE quantises a sequence-parallel input on its shard
    if np.any(lowp):
        w_mlp = n_mlp / L
        x_in = w_attn * (outside * h + a * vd / t) + w_mlp * outside * h + act_width \
            + w_ssm * (outside * h + dm["d_inner"] / t)
        g_out = w_attn * ((a * hd + 2.0 * kh * hd) / t + outside * h) + w_ssm * (dm["in_width"] / t + outside * h) \
            + avg(gated * f, gated * (topk * fe + n_shared * fs)) / t \
            + w_mlp * outside * h
        q_fwd = np.where(lowp, T * x_in * LP.number(recipe, "fwd_bytes") / hbm, 0.0) * (1.0 - bf16_share)
        q_bwd = np.where(lowp, T * g_out * LP.number(recipe, "bwd_bytes") / hbm, 0.0) * (1.0 - bf16_share)
        elem_stage = elem_stage + Ls * (q_fwd + q_bwd)
        fwd = fwd + Ls * q_fwd
    if np.any(n_mtp > 0):  # the MTP modules on the last rank, at the share w above
        wm = head_w * n_mtp
        gemm_stage = gemm_stage + wm * ((2.0 + np.minimum(trained, 1.0)) * mtp_gemm + 3.0 * head_gemm)
        core_stage = core_stage + wm * (core_fwd + core_bwd)
        elem_stage = elem_stage + wm * 3.0 * (elem_fwd + head_elem)
        fwd = fwd + wm * (mtp_gemm + core_fwd + elem_fwd + head_gemm + head_elem)
    recompute = Ls * layer_rec
    bwd = gemm_stage + core_stage + elem_stage - fwd

    # --- communication per micro-batch ------------------------------------------------------------------------
    act_bytes = T * h * 2.0
    tp_bw = C.group_bus_bandwidth(t, 1.0, **link)
    tp_one = C.collective_time_s("all_reduce", act_bytes, t, tp_bw, lat)
    # two all-reduces per sublayer (forward and backward; + one per recomputed forward); an MoE layer's MLP collectives
    # are the dispatcher's; a hybrid's sublayers are its attention, Mamba-2 and dense MLP blocks per layer
    # (under XLA's dead-code elimination the rerun skips each dense MLP's last projection and so its all-reduce)
    dense_mlp = avg(1.0, 0.0)  # the layers' share with a dense MLP
    tp_pass = w_attn + w_ssm + dense_mlp  # all-reduces of one pass
    n_tp = 2.0 * tp_pass + full_share * (tp_pass - np.where(dce, dense_mlp, 0.0))
    # distributed saved activations: each recomputed layer first all-gathers its checkpointed input over tp
    dist = np.asarray(g("distribute_saved_activations", False), dtype=bool)
    tp_total = n_tp * tp_one + np.where(dist, full_share * C.collective_time_s("all_gather", act_bytes, t, tp_bw, lat),
                                        0.0)
    tp_ov = np.asarray(c["tp_overlap"], dtype=bool)
    # overlapped, the collectives hide behind the GEMMs; where the profile's overlap covers the forward only
    # (data/frameworks.csv tp_overlap_scope: PyTorch's async TP) the backward's share, one pass's count (tp_pass),
    # stays exposed and the forward's (and the recomputed forward's) hide behind the forward GEMMs they run beside;
    # a whole overlap hides the forward's, the backward's and the recomputed forward's collectives behind those
    # passes' GEMMs, pooled (one pass's excess may hide behind another's slack): the backward's GEMMs as the step
    # counts them (bwd_gemm: frozen weights and the einsum dispatch included) and the rerun pass's as its recompute
    # does (under XLA's dead-code elimination without the MLP's last projection)
    fwd_only = np.asarray(P.word(fw, "tp_overlap_scope")) == "forward"
    bwd_tp = np.where(fwd_only, tp_pass * tp_one, 0.0)
    hide = np.where(fwd_only, 0.0, bwd_gemm) + gemm_fwd + full_share * (gemm_fwd - dce_gemm)
    tp_exposed = np.where(tp_ov, bwd_tp + np.maximum(0.0, tp_total - bwd_tp - hide), tp_total)
    cp_bw = C.group_bus_bandwidth(cp, t, **link)
    kv_bytes = cp * T * kh * (hd + vd) * 2.0 / t
    cp_layer = w_attn * (C.collective_time_s("all_gather", kv_bytes, cp, cp_bw, lat) * (1.0 + rec_full * full_share)
                         + C.collective_time_s("reduce_scatter", kv_bytes, cp, cp_bw, lat))
    # a Mamba-2 layer under context parallelism (Megatron-Core ssm/mamba_context_parallel.py): an all-to-all turns
    # the sequence-sharded in_proj output into head-sharded full sequences before the conv and the SSD, and another
    # turns the SSD output back; the backward does the reverse (+ one forward's worth per full recompute)
    if np.any(has_ssm & (cp > 1)):
        ssm_a2a = (C.collective_time_s("all_to_all", cp * T * dm["in_width"] * 2.0 / t, cp, cp_bw, lat)
                   + C.collective_time_s("all_to_all", cp * T * dm["d_inner"] * 2.0 / t, cp, cp_bw, lat))
        cp_layer = cp_layer + w_ssm * np.where(has_ssm, (2.0 + rec_full * full_share) * ssm_a2a, 0.0)
    # expert ranks in Megatron's order: etp, then ep, then edp; the dispatcher decides what crosses nodes (core/comm)
    etp_bw = C.group_bus_bandwidth(etp, 1.0, **link)
    dedup = VE.isin(np.asarray(g("moe_dispatcher", "alltoall")), NODE_DEDUP_DISPATCHERS)
    a2a = C.dispatch_time_s(T_moe * topk * load * h * 2.0, T_moe * load * h * 2.0, topk, ep, etp, **link,
                            latency_s=lat, dedup=dedup)
    etp_ag = np.where(etp > 1, C.collective_time_s("all_gather", etp * T_moe * topk * load * h * 2.0, etp, etp_bw, lat),
                      0.0)
    # forward dispatch + combine, backward the same; + one forward's worth per full recompute, and the share of it a
    # partial recompute reruns (core/recompute.py `dispatch`, already weighted by the MoE layers' share)
    ep_layer = np.where(moe, (4.0 + 2.0 * full_share) * moe_share + 2.0 * (1.0 - full_share) * r["dispatch"],
                        0.0) * (a2a + etp_ag)
    m = S.micro_batches(c["global_batch_used"], n, t, p, cp, b)
    t_mb_compute = gemm_stage + core_stage + elem_stage + recompute
    # the all-to-all overlapped with another micro-batch's compute (moe_overlap, core/schedule.py): the unpaired
    # micro-batches' all-to-all is exposed, the paired ones' only where it outlasts the compute beside it
    ep_mb = Ls * ep_layer
    moe_ov = np.asarray(g("moe_overlap", False), dtype=bool) & moe
    if np.any(moe_ov):
        u = S.unpaired_micro_batches(p, v, m)
        ep_exp = (u * ep_mb + (m - u) * np.maximum(0.0, ep_mb - t_mb_compute)) / m
        ep_hidden = np.where(moe_ov, ep_mb - ep_exp, 0.0)
        ep_mb = np.where(moe_ov, ep_exp, ep_mb)
    else:
        ep_hidden = 0.0

    # --- data parallel (hybrid sharding: shard over dp_shard·c ranks, replicate over dp_replicate) ------------
    rep = np.maximum(_f(g("dp_replicate", 1)), 1.0)
    shard = np.maximum(d / rep, 1.0)
    shard_group = shard * cp
    shard_bw = C.group_bus_bandwidth(shard_group, t, **link)
    rep_bw = C.group_bus_bandwidth(rep, t * shard_group, **link)
    grad_b, weight_b = _f(c["grad_dtype_bytes"]), _f(c["weight_dtype_bytes"])
    # fp8 parameter gathers (Megatron --fp8-param-gather): ZeRO-3 gathers and the distributed optimizer's parameter
    # all-gather move 1 byte per parameter (the gradient reduce-scatter stays at grad_b)
    fp8_gather = np.asarray(g("fp8_param_gather", False), dtype=bool) & lowp
    weight_b = np.where(fp8_gather, 1.0, weight_b)
    # an MoE stage's routed experts are not replicated over the data-parallel ranks: each expert-parallel rank holds
    # E/ep experts split over etp, and their gradients reduce over the expert-data-parallel group, n/(etp·ep·p) ranks
    # strided by etp·ep (Megatron-Core parallel_state.py: the expert ranks ordered etp, ep, edp, pp;
    # distributed/distributed_data_parallel.py keeps the expert parameters in their own buffers, reduced over
    # expert_data_parallel_group); the dense rest reduces over the dp·cp ranks
    experts_local = _f(expert_params) / (ep * etp)
    local = (_f(stage_params) - _f(expert_params)) / t
    edp = np.maximum(np.floor(n / (etp * ep * p)), 1.0)
    edp_bw = C.group_bus_bandwidth(edp, etp * ep, **link)
    z3 = np.asarray(c["zero_stage"]) == 3
    # (terms no row of the chunk has are skipped: a sweep's chunk is mostly one kind)
    hybrid = bool(np.any(rep > 1))
    rep_ar = np.where(rep > 1, C.collective_time_s("all_reduce", local * grads * grad_b / shard, rep, rep_bw, lat),
                      0.0) if hybrid else 0.0
    # the distributed optimizer's reduce-scatter + all-gather (an all-reduce's bytes), the gather half at 1 byte with
    # fp8 parameter gathers
    ar_scale = np.where(fp8_gather & (np.asarray(c["zero_stage"]) >= 1), (grad_b + 1.0) / (2.0 * grad_b), 1.0)
    ar = (C.collective_time_s("all_reduce", local * grads * grad_b * ar_scale, shard_group, shard_bw, lat) + rep_ar
          + C.collective_time_s("all_reduce", experts_local * grads * grad_b * ar_scale, edp, edp_bw, lat))
    # FSDP's SHARD_GRAD_OP (ZeRO-2 under fsdp): an all-gather per unit in the forward and a reduce-scatter per unit
    # in the backward, so 2·Ls collectives where the all-reduce above counts one; what is charged is each one's ring
    # latency beyond a node's (core/comm.ring_latency_s), which grows with the nodes the group spans — inside one
    # node the bucket's latency above stands for them all. Once per step, as the bytes above (the runs it was checked
    # on, llm-foundry's, accumulate no gradients; with accumulation FSDP gathers and reduces every micro-batch)
    Lu = np.maximum(Ls, 1.0)
    per_unit = (np.asarray(P.word(fw, "grad_reduce")) == "per_unit") & (np.asarray(c["zero_stage"]) == 2) \
        & (shard_group > 1)
    if np.any(per_unit):
        ar = ar + np.where(per_unit, 2.0 * Lu * (C.ring_latency_s(shard_group, t, gpn, lat, link["torus_axes"])
                                                 - lat), 0.0)

    def z3_gathers(params, size, stride, bw):  # ZeRO-3 per micro-batch and unit (a layer): gather forward and
        # backward, reduce-scatter the grads; each unit's collectives pay the ring's latency (core/comm.ring_latency_s)
        rl = C.ring_latency_s(size, stride, gpn, lat, link["torus_axes"])
        return Lu * (2.0 * C.collective_time_s("all_gather", params * weight_b / Lu, size, bw, rl)
                     + C.collective_time_s("reduce_scatter", params * grads * grad_b / Lu, size, bw, rl))
    z3_mb = (z3_gathers(local, shard_group, t, shard_bw) + z3_gathers(experts_local, edp, etp * ep, edp_bw)) \
        if np.any(z3) else 0.0
    z3_step = rep_ar
    overlap = np.asarray(c["dp_overlap"], dtype=bool)
    # the fitted constants (data/fitted.csv); bench/fit_profiles.py passes trial values as fit_* columns
    cost = _f(c["fit_overlap_cost"]) if "fit_overlap_cost" in c else P.number(fw, "overlap_cost")
    fwdbwd = fwd + bwd
    # the gradient all-reduce over data-parallel replicas (ZeRO-0/1/2's, hybrid sharding's between replicas) is
    # exposed in full where the profile says so (data/frameworks.csv grad_allreduce: XLA's)
    ar_overlap = overlap & (np.asarray(P.word(fw, "grad_allreduce")) != "exposed")
    # ZeRO-1/2 under a profile that gathers the updated parameters after the optimizer step (data/frameworks.csv
    # param_gather after_step: DeepSpeed) leave that all-gather half of the all-reduce above exposed: the backward it
    # could hide behind is over (the reduce-scatter half overlaps as before)
    zs = np.asarray(c["zero_stage"])
    after = (np.asarray(P.word(fw, "param_gather")) == "after_step") & ((zs == 1) | (zs == 2))
    # (the gather moves what the optimizer updated: the trained parameters, grad_frac, at the weights' bytes; never
    # more than the all-reduce it is half of)
    ag = np.minimum(ar, np.where(after, C.collective_time_s("all_gather", local * grads * weight_b, shard_group,
                                                             shard_bw, lat)
                                 + C.collective_time_s("all_gather", experts_local * grads * weight_b, edp, edp_bw,
                                                       lat), 0.0)) if np.any(after) else 0.0
    rs = ar - ag
    ar_exp = np.where(ar_overlap, np.maximum(rs / Ls, rs - bwd), rs) + ag
    dp_exposed, dp_hidden = ar_exp, ar - ar_exp
    if np.any(z3):  # a chunk of ZeRO ≤ 2 rows only skips the ZeRO-3 terms (sweeps: half their chunks)
        z3_exp = np.where(overlap, np.maximum(z3_mb / Ls, z3_mb - fwdbwd), z3_mb)
        z3_step_exp = np.where(ar_overlap, np.maximum(z3_step / Ls, z3_step - bwd), z3_step)
        dp_exposed = np.where(z3, m * z3_exp + z3_step_exp, dp_exposed)
        dp_hidden = np.where(z3, m * (z3_mb - z3_exp) + (z3_step - z3_step_exp), dp_hidden)
    tp_hidden = np.where(tp_ov, tp_total - tp_exposed, 0.0)

    # --- pipeline (core/schedule.py) ------------------------------------------------------------------------------
    # the bubble's micro-batches are the unpaired ones: their all-to-all is exposed in full
    t_mb = t_mb_compute + Ls * (tp_exposed + cp_layer + ep_layer)
    # what the zero-bubble and DualPipe schedules (pp_schedule, core/schedule.bubble_time) split a micro-batch into:
    # W, the weight-gradient GEMMs of what trains (one per forward GEMM, the head's included), the forward's compute
    # (t_f) and the micro-batch's compute alone (t_c: DualPipe hides the communication behind the paired chunk)
    sched = np.asarray(g("pp_schedule", "1f1b"))
    t_f, t_c = fwd, t_mb_compute
    t_w = np.minimum(trained, 1.0) * (Ls * gemm_fwd + head_w * head_gemm)
    pp_bw = C.group_bus_bandwidth(p, t * cp * d, **link)
    p2p = C.collective_time_s("p2p", act_bytes / t, p, pp_bw, lat)

    # --- host: kernels' CPU time beyond the GPU's, per layer and micro-batch; sharded units' hooks -----------------
    # (a calibration's efficiency_scale speeds the host's work as the GPU's: the stack on this machine as one)
    # CUDA graphs (cuda_graphs): a captured layer or iteration replays its kernels from one launch, so no launch
    # time per kernel; a captured iteration also replays the host work between the step's kernels, the profile's
    # per-step host time (the optimizer step, outside Megatron-Core's full-iteration graph, is its own term)
    graphs = np.asarray(g("cuda_graphs", "none"))
    # forward and about twice as many in the backward
    kernels = P.kernels_per_layer(fw, impl) * 3.0 * (graphs == "none")
    host_layer = np.maximum(0.0, kernels * P.number(fw, "host_s_per_kernel") / eff_scale
                            - (layer_fwd * 3.0 + layer_rec))
    units = np.where(P.unit_hooks(fw, c["zero_stage"]), Ls, 0.0)
    unit_host = _f(c["fit_unit_host_s"]) if "fit_unit_host_s" in c else P.number(fw, "unit_host_s")
    step_host = (_f(c["fit_step_host_s"]) if "fit_step_host_s" in c else P.number(fw, "step_host_s")) \
        * (graphs != "full_iteration")
    host = m * (Ls * host_layer + units * unit_host / eff_scale) + step_host / eff_scale

    # --- offload: host link transfers and the CPU optimizer ----------------------------------------------------
    off = np.asarray(g("offload", "none"))
    act_off_bytes = _f(g("offloaded_activation_bytes", 0.0))  # per micro-batch, both ways
    paged = _f(g("paged_state_bytes", 0.0))  # a paged optimizer's moments the device cannot hold (per GPU)
    if not (np.any(off != "none") or np.any(act_off_bytes > 0) or np.any(paged > 0)):
        return _context_out(locals(), 0.0)
    host_bw = np.where(_f(g("host_link_bytes_per_s", np.nan)) > 0, _f(g("host_link_bytes_per_s", np.nan)), 16e9) \
        * net_scale
    off_state = _f(g("offloaded_state_bytes", 0.0))
    n_params_local = _f(g("offloaded_params", 0.0))  # parameters whose optimizer runs on the host (per GPU)
    # an x86 host's CPUs are shared by the node's GPUs; a Grace superchip's Grace by its 1-2 GPUs (data/accelerators.csv
    # gpus_per_grace): the two rates are the profile's, each measured on such a host (data/frameworks.csv)
    per_grace = _f(g("gpus_per_grace", np.nan))
    cpu_rate = np.where(per_grace > 0, P.number(fw, "cpu_optimizer_params_per_s_per_grace") / per_grace,
                        P.number(fw, "cpu_optimizer_params_per_s_per_node") / np.minimum(gpn, n)) * eff_scale
    cpu_step = np.where(n_params_local > 0, n_params_local / np.where(cpu_rate > 0, cpu_rate, np.inf), 0.0)
    grads_down = n_params_local * grad_b / host_bw
    params_up = n_params_local * weight_b / host_bw
    gpu_saved = 2.0 * off_state / hbm  # the GPU's optimizer pass over the state that moved (never credited)
    opt_off = np.where(off != "none", np.maximum(np.maximum(cpu_step, params_up), gpu_saved)
                       + np.maximum(0.0, grads_down - bwd), 0.0)
    param_fetch = np.where(off == "optimizer_params", m * np.maximum(0.0, 2.0 * (local / shard + experts_local / edp)
                                                                      * weight_b / host_bw
                                                                      - fwdbwd), 0.0)
    act_off = m * np.maximum(0.0, 2.0 * act_off_bytes / host_bw - fwdbwd)
    # a paged optimizer (bitsandbytes): every step the moments on the host are paged in for their update and as many
    # updated pages are evicted (assumed to share the time, the link being full duplex); exposed: it prefetches each
    # parameter's state on the update's own stream and synchronises after it (bitsandbytes @95f9af30
    # bitsandbytes/optim/optimizer.py Optimizer8bit.step: prefetch_state, update_step, sync_gpu; csrc
    # pythonInterface.cpp cprefetch: cudaMemPrefetchAsync on stream 0). The volume is a lower bound: the updates sweep
    # the moments in the same order every step, so under the driver's roughly least-recently-used eviction up to all
    # of them may cross (no published measurement settles it; the one published run, torchtune's 8B on an RTX 4090,
    # runs faster than even this bound predicts)
    page = paged / host_bw
    return _context_out(locals(), opt_off + param_fetch + act_off + page)


_CONTEXT = ("m", "sched", "t_f", "t_w", "t_c", "fwd", "bwd", "gemm_stage", "core_stage", "elem_stage", "recompute",
            "Ls", "tp_exposed", "cp_layer",
            "ep_mb", "ep_hidden", "dp_exposed", "dp_hidden", "tp_hidden", "cost", "t_mb", "p", "v", "p2p", "hbm", "host")


def _context_out(x: dict, offload) -> dict:
    """What the terms read from `context`'s locals."""
    return {**{k: x[k] for k in _CONTEXT}, "state_bytes": _f(x["state_bytes"]), "offload": offload}


# ---------------------------------------------------------------------------------------------------------------
# The terms: one function each, with its meaning and chart colour (the CLI, the record and the charts read TERMS)
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Term:
    name: str
    words: str
    colour: str
    seconds: Callable[[dict], np.ndarray]


TERMS: tuple[Term, ...] = (
    Term("compute_s", "GEMMs and the attention core, forward + backward, of the critical pipeline stage, all "
         "micro-batches", "#1f77b4", lambda x: x["m"] * (x["gemm_stage"] + x["core_stage"])),
    Term("elementwise_s", "memory-bound kernels (norms, activation, rotary, residuals, loss) at HBM speed; eager "
         "PyTorch's separate kernels move more bytes than fused ones (data/kernels.csv)", "#17becf",
         lambda x: x["m"] * x["elem_stage"]),
    Term("recompute_s", "forward work recomputed for the backward (full, the modules, or the remat policy)",
         "#aec7e8", lambda x: x["m"] * x["recompute"]),
    Term("tp_comm_s", "exposed tensor-parallel all-reduces (reduce-scatter + all-gather with sequence "
         "parallelism), and the slowdown of GEMMs they overlap", "#ff7f0e",
         lambda x: x["m"] * x["Ls"] * x["tp_exposed"] + x["cost"] * x["m"] * x["Ls"] * x["tp_hidden"]),
    Term("cp_comm_s", "context-parallel all-gather of K/V and reduce-scatter of their gradients", "#ffbb78",
         lambda x: x["m"] * x["Ls"] * x["cp_layer"]),
    Term("ep_comm_s", "expert-parallel all-to-all (dispatch and combine) not hidden behind another micro-batch's "
         "compute (moe_overlap), and the slowdown of the kernels it overlaps", "#8c564b",
         lambda x: x["m"] * (x["ep_mb"] + x["cost"] * x["ep_hidden"])),
    Term("dp_comm_s", "exposed data-parallel communication (gradient reduction; ZeRO-3/FSDP parameter gathers per "
         "unit and micro-batch, each with its ring's latency) and the slowdown of the kernels it overlaps", "#2ca02c",
         lambda x: x["dp_exposed"] + x["cost"] * x["dp_hidden"]),
    Term("pp_bubble_s", "pipeline bubble: (pp − 1)/virtual_stages × one micro-batch's time under 1F1B, less under the "
         "zero-bubble and DualPipe schedules (pp_schedule; core/schedule.py)", "#d62728",
         lambda x: S.bubble_time(x["sched"], x["p"], x["v"], x["m"], x["t_mb"], x["t_f"], x["t_w"], x["t_c"])),
    Term("pp_comm_s", "pipeline stage-to-stage sends", "#ff9896",
         lambda x: x["m"] * S.sends_per_micro_batch(x["v"]) * x["p2p"]),
    Term("optimizer_s", "optimizer step on the GPU: the state of what trains (frozen weights excluded) read and "
         "written once at HBM speed", "#9467bd",
         lambda x: 2.0 * x["state_bytes"] / x["hbm"]),
    Term("offload_s", "host offload: the CPU optimizer step and host-link transfers not hidden behind compute (a "
         "paged optimizer's page traffic too)",
         "#c5b0d5", lambda x: x["offload"]),
    Term("host_s", "host (CPU) time not hidden behind the GPU: kernel launches of small layers, sharding hooks",
         "#7f7f7f", lambda x: x["host"]),
)
STEP_PARTS = tuple(t.name for t in TERMS)
STEP_PART_WORDS = {t.name: t.words for t in TERMS}
STEP_PART_COLOURS = {t.name: t.colour for t in TERMS}


def step_parts(c: dict, state_bytes, stage_params, expert_params=0.0) -> dict:
    """The step-time terms (seconds) for the layout in `c` (`evaluate`'s columns, with the accelerator's step
    constants), the GPU's model-state bytes the optimizer step reads and writes (frozen weights excluded) and the
    parameters of the busiest pipeline stage (before tp), of which
    `expert_params` are routed experts (split over ep·etp, reduced over the expert-data-parallel ranks)."""
    x = context(c, state_bytes, stage_params, expert_params)
    parts = {t.name: t.seconds(x) for t in TERMS}
    parts["step_time_s"] = sum(parts[k] for k in STEP_PARTS)
    parts["micro_batches"] = x["m"]
    return parts
