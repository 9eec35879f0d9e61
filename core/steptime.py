"""Predicted step time per parallel layout (vectorised): kernels, communication, pipeline bubble, optimizer.

No profiling: every rate is the accelerator's datasheet figure times an achievable fraction that was measured and
published (data/accelerators.csv `matmul_efficiency`; data/efficiency.csv per chip family), with the source on
each row — and one fitted constant, `sustained_fraction` (0.84: kernels inside a training step against the same
kernels in a hot-loop benchmark), fitted to Narayanan et al. 2021 Table 1 and checked out of sample. The structure follows Narayanan et al. 2021 (arXiv:2104.04473) §2–3 and Korthikanti et al. 2022
(arXiv:2205.05198) §4–5; docs/formulas.md gives every term with its source.

Legend: s, b, h, a, k, f, V, L = seq_len, micro_batch, d_model, n_heads, n_kv_heads, d_ff, vocab_size, n_layers;
t, p, c, e, v = tp, pp, cp, ep, virtual_stages; d = n_gpus/(t·p·c) (data-parallel degree); T = b·s/c tokens a GPU
holds of one micro-batch; m = global_batch/(d·b) micro-batches per replica per step.

One micro-batch through one layer on one GPU, forward:
- GEMMs (m rows = T): QKV (n = (h + 2k·h/a)/t, k = h), attention output (n = h, k = h/t), MLP up (n = f/t, or
  2f/t gated) and down (n = h, k = f/t); MoE: E/e local experts, each of e·T·top_k/E tokens (one grouped GEMM), plus the router.
  Each GEMM runs at peak × matmul_efficiency with tile and wave quantization: ⌈m/128⌉·⌈n/256⌉ output tiles of
  128×256 (times the batch of a batched or grouped GEMM) run in waves of one tile per SM (NVIDIA Matrix Multiplication Background User's Guide, "tile
  quantization" and "wave quantization"), and never faster than its bytes at HBM speed (roofline).
- Issue 12 shapes: Q, K, V and O follow the head dims (n = (a·d_h + k·d_h + k·d_v)/t; O k = a·d_v/t); MLA runs the
  query down (h→r_q) and up (r_q→a·d_h/t) projections, the KV down (h→r_kv + d_r) and up (r_kv→a·(d_h − d_r + d_v)/t)
  projections; routed experts have width f_e, shared experts one more MLP of width E_s·f_s; dense-first MoE models
  average their dense and MoE layers; MTP modules add a projection, a block and the head on the last stage; frozen
  weights (LoRA, frozen_frac) skip their weight-gradient GEMMs (backward GEMMs (1 + trained share) × forward; the
  adapters' own rank-r GEMMs are not modelled) and data parallelism reduces only what trains.
- Attention core. Flash attention (Dao et al. 2022/2023): causal, so half of the 4·b·(s/c)·s·h/t FLOPs are
  done, at peak × attention_efficiency × causal_ratio (FlashAttention-2/3 measured TFLOP/s, data/efficiency.csv),
  over the attention width a·(d_h + d_v)/2, and a sliding window's layers only over their window's scores;
  forward 1/3.5 of the forward+backward time (the flash-attention benchmarks count backward as 2.5 × forward).
  Without flash (Megatron 2021): QKᵀ and AV as batched GEMMs over all s² scores (masking does not skip work),
  and the scores' softmax (read + write, 4 B each) and dropout (read, write, 1-byte mask: 5 B) at HBM speed.
- Memory-bound work at HBM speed × hbm_efficiency: two norms (read + write 2h·2 B each), two residual adds with
  dropout (read 2h, write h, 1-byte mask), the activation (GeLU: read f, write f; SwiGLU: read 2f, write f;
  ÷ t), rotary embedding on q and k. Outside tensor parallelism (norms, residuals) the work is replicated on the
  t ranks unless sequence parallelism splits it. Fused kernels are assumed (Megatron's fused softmax and
  bias-dropout-add).
Backward = 2 × forward for GEMMs and memory-bound work (input and weight gradients; read saved tensor and
incoming gradient, write the gradient), 2.5/3.5 of flash's forward+backward. Recomputation reruns the forward:
full = every layer's forward (with its tensor-parallel communication), selective = the attention core (free with
flash: its backward already recomputes the scores).

Communication, per micro-batch and layer (module core.comm for the link each group uses):
- tensor parallel: 2 all-reduces of T·h·2 bytes forward and 2 backward (with sequence parallelism a
  reduce-scatter + all-gather pair moves the same bytes; Korthikanti §4.2.3), +2 per recomputed forward.
  Exposed unless `tp_overlap` (then only what exceeds the layer's GEMM time).
- context parallel (Llama 3 §3.3.2): all-gather of the local K and V (2·T·k·h/a·2 bytes ÷ t) forward, a
  reduce-scatter of their gradients backward; exposed (Llama 3 does not overlap it).
- expert parallel: all-to-all dispatch and combine of T·top_k·h·2 bytes forward (the rank's own token copies, the
  whole array in nccl-tests' convention; an earlier ×e overcounted it e-fold), and again backward.
- pipeline (Narayanan §2.2, §4.1): each micro-batch crosses 2·v stage boundaries (activations forward, their
  gradients backward), T·h·2 bytes each (÷ t: Megatron's scatter/gather of the sent tensor over the t ranks);
  bubble = (p − 1)/v × one micro-batch's time on the critical stage.
- data parallel: gradient all-reduce of the stage's parameters ÷ t (ZeRO-1/2: reduce-scatter + all-gather, the
  same bytes; ZeRO §7), over d·c ranks (Megatron reduces over data × context parallel), once per step. ZeRO-3
  instead all-gathers the weights forward and backward and reduce-scatters the gradients for every micro-batch
  (1.5 × the all-reduce bytes per micro-batch; ZeRO §7). With `dp_overlap` (default; PyTorch DDP, FSDP,
  Megatron's overlap-grad-reduce) only what exceeds the backward of one micro-batch is exposed (ZeRO-3: what
  exceeds the compute it prefetches behind) — and never less than one layer's share, which has nothing to hide
  behind (the first layer's gather, the last bucket's reduction).
The critical pipeline stage holds ⌈L/p⌉ layers and, as the last stage, the LM head and the loss (a GEMM of n = V/t
and a memory-bound cross-entropy, 3 × 4 B per logit each way). The optimizer step reads and writes the GPU's
whole state once (2 × state bytes at HBM speed).

Step = compute + recompute + exposed tp/cp/ep/dp/pp communication + bubble + optimizer; `step_parts` returns each
term and their sum.
"""
from __future__ import annotations

import numpy as np

from . import comm as C
from . import record as R
from .model import head_dims, layer_counts, moe_widths
from .tables import GATED_MLPS

TILE_M, TILE_N = 128.0, 256.0  # cuBLAS's largest tile (NVIDIA Matrix Multiplication Background User's Guide)
FLASH_BWD_OVER_FWD = 2.5  # the flash-attention benchmarks count backward FLOPs as 2.5 × forward (Dao 2023)
STEP_PARTS = R.STEP_PARTS  # declared with their meanings in core/record.py


def gemm_time_s(m, n, k, peak_flops_per_s, matmul_efficiency, sm_count, hbm_bytes_per_s, dtype_bytes=2.0,
                batch=1.0):
    """`batch` (m×k)·(k×n) GEMMs in one kernel (a batched or grouped GEMM: attention heads, MoE experts):
    tile- and wave-quantised compute at peak × efficiency, or the bytes at HBM speed, whichever is slower.
    The batch's output tiles share the waves. `sm_count` NaN (no SM model, e.g. TPU) skips quantisation."""
    m, n, k, batch = (np.asarray(x, dtype=np.float64) for x in (m, n, k, batch))
    tiles = batch * np.ceil(m / TILE_M) * np.ceil(n / TILE_N)
    sms = np.asarray(sm_count, dtype=np.float64)
    waves = np.ceil(tiles / np.where(sms > 0, sms, 1.0))
    padded = np.where(sms > 0, waves * sms * TILE_M * TILE_N, batch * m * n)  # output elements the waves cost
    compute = 2.0 * padded * k / (peak_flops_per_s * matmul_efficiency)
    memory = batch * (m * k + k * n + m * n) * dtype_bytes / hbm_bytes_per_s
    return np.maximum(compute, memory)


def step_parts(c: dict, state_bytes, stage_params) -> dict:
    """The step-time terms (seconds) for the layout in `c` (`evaluate`'s columns, with the accelerator's step
    constants), the GPU's model-state bytes and the parameters of the busiest pipeline stage (before tp)."""
    f64 = lambda x: np.asarray(x, dtype=np.float64)  # noqa: E731
    s, b, h, a, kh, f, V, L = (f64(c[x]) for x in ("seq_len", "micro_batch", "d_model", "n_heads", "n_kv_heads",
                                                     "d_ff", "vocab_size", "n_layers"))
    t, p, cp, ep, v = (np.maximum(f64(c[x]), 1.0) for x in ("tp", "pp", "cp", "ep", "virtual_stages"))
    E, topk = f64(c["n_experts"]), f64(c["top_k"])
    g = lambda k, d: c[k] if k in c else d  # noqa: E731  (issue-12 columns, "off" when absent)
    hd, vd = head_dims(h, a, g("head_dim", 0), g("v_head_dim", 0))
    mla = np.asarray(g("attention", "standard")) == "mla"
    qr, kvr, dr = (f64(g(k, 0)) for k in ("q_lora_rank", "kv_lora_rank", "qk_rope_head_dim"))
    fe, fs = moe_widths(f, g("moe_d_ff", 0), g("shared_d_ff", 0))
    n_shared = f64(g("n_shared_experts", 0))
    n_dense, n_moe = layer_counts(L, E, g("n_dense_layers", 0))
    trained = f64(g("trained_frac", 1.0))  # the share of the matmul weights that trains (0 under LoRA)
    grads = f64(g("grad_frac", 1.0))  # gradient elements per parameter of the stage (LoRA: its adapters')
    full_training = np.asarray(g("training", "full")) == "full"
    n_mtp = np.where(full_training, f64(g("n_mtp_layers", 0)), 0.0)
    window, every = f64(g("sliding_window", 0)), f64(g("global_every", 0))
    kh = np.where(mla, a, kh)  # MLA: a key and a value per head
    n = np.maximum(f64(c["n_gpus"]), 1.0)
    d = np.maximum(np.floor(n / (t * p * cp)), 1.0)
    sus = f64(c["sustained_fraction"])  # kernels in a real step vs the microbenchmarks (fitted; efficiency.csv)
    peak, eff, sms = f64(c["peak_flops_per_s"]) * sus, f64(c["matmul_efficiency"]), f64(c["sm_count"])
    hbm = f64(c["memory_bandwidth_bytes_per_s"]) * f64(c["hbm_efficiency"]) * sus
    lat = f64(c["collective_latency_s"])
    gpn = f64(c["gpus_per_node"])
    link = dict(gpus_per_node=gpn, intra_bytes_per_s=c["intra_node_bytes_per_s"],
                inter_bytes_per_s=c["inter_node_bytes_per_s"], intra_frac=f64(c["intra_node_efficiency"]),
                inter_frac=f64(c["inter_node_efficiency"]))
    sp = np.asarray(c["sequence_parallel"], dtype=bool)
    flash = np.asarray(c["flash_attention"], dtype=bool)
    drop = np.asarray(c["dropout"], dtype=bool)
    swiglu = np.isin(np.asarray(c["mlp"]), GATED_MLPS)  # gated: swiglu, geglu
    rotary = np.asarray(c["position"]) == "rotary"
    rec = np.asarray(c["recompute"])
    moe = E > 1
    T = b * s / cp  # tokens of one micro-batch on this GPU

    def gemm(m_, n_, k_, batch=1.0):
        return gemm_time_s(m_, n_, k_, peak, eff, sms, hbm, batch=batch)

    # --- one layer, forward -----------------------------------------------------------------------------------
    gated = np.where(swiglu, 2.0, 1.0)
    up_n = gated * f / t
    dense_mlp = gemm(T, up_n, h) + gemm(T, h, f / t)
    tok_e = ep * T * topk / np.where(moe, E, 1.0)  # tokens per local expert
    moe_mlp = (gemm(tok_e, gated * fe / t, h, E / ep) + gemm(tok_e, h, fe / t, E / ep) + gemm(T, E, h)  # grouped
               + np.where(n_shared > 0, gemm(T, gated * n_shared * fs / t, h) + gemm(T, h, n_shared * fs / t), 0.0))
    mixed = moe & (n_dense > 0) & (n_moe > 0)  # dense-first MoE: the layers' average
    mlp_time = np.where(mixed, (n_dense * dense_mlp + n_moe * moe_mlp) / L, np.where(moe, moe_mlp, dense_mlp))
    # attention projections: Q, K, V (a·d_h, k·d_h, k·d_v wide), O (a·d_v → h); MLA: the query down/up, the KV
    # down (with the shared RoPE key) and up, then O (DeepSeek-V2 §2.1)
    std_qkv = gemm(T, (a * hd + kh * hd + kh * vd) / t, h)
    mla_qkv = (np.where(qr > 0, gemm(T, qr, h) + gemm(T, a * hd / t, qr), gemm(T, a * hd / t, h))
               + gemm(T, kvr + dr, h) + gemm(T, a * (hd - dr + vd) / t, kvr))
    attn_gemm = np.where(mla, mla_qkv, std_qkv) + gemm(T, h, a * vd / t)
    gemm_fwd = attn_gemm + mlp_time

    width = a * (hd + vd) / 2.0  # = h for the classic block
    core_flops = 4.0 * b * (s / cp) * s * width / t  # QKᵀ and AV, every score
    # a sliding window: flash skips the blocks outside it (the math path computes every score and masks them)
    windowed = (window > 0) & (window < s)
    n_global = np.where(every > 0, np.floor(L / np.maximum(every, 1.0)), 0.0)
    s_eff = np.where(windowed, (2.0 * window * s - window * window) / s, s)
    window_factor = np.where(windowed, ((L - n_global) * s_eff + n_global * s) / (L * s), 1.0)
    flash_fb = (0.5 * core_flops * (1 + FLASH_BWD_OVER_FWD) / (peak * f64(c["attention_efficiency"])
                                                               * f64(c["causal_ratio"]))) * window_factor
    scores = b * (a / t) * (s / cp) * s  # score elements on this GPU
    heads = b * a / t
    bmm = gemm(s / cp, s, hd, heads) + gemm(s / cp, vd, s, heads)  # QKᵀ and AV, batched over b·a/t heads
    math_core = bmm + scores * (4.0 + 5.0 * drop) / hbm
    math_core_bwd = 2.0 * bmm + scores * (6.0 + 5.0 * drop) / hbm
    attn_fwd = np.where(flash, flash_fb / (1 + FLASH_BWD_OVER_FWD), math_core)
    attn_bwd = np.where(flash, flash_fb * FLASH_BWD_OVER_FWD / (1 + FLASH_BWD_OVER_FWD), math_core_bwd)

    outside = np.where(sp, 1.0 / t, 1.0)  # norms and residuals: split by sequence parallelism, else replicated
    act_width = np.where(moe, topk * fe + n_shared * fs, f)
    act = np.where(mixed, (n_dense * f + n_moe * act_width) / L, act_width)
    act = np.where(swiglu, 6.0, 4.0) * act / t
    npl = f64(g("norms_per_layer", 2))
    qk_norm = np.where(np.asarray(g("qk_norm", "none")) == "none", 0.0, 4.0 * (a * hd + kh * hd) / t)
    rope = np.where(mla, 4.0 * (a * dr + dr) / t, 4.0 * (a * hd + kh * hd) / t)
    elem_per_token = (outside * (4.0 * npl * h + 12.0 * h + 2.0 * h * drop) + act
                      + np.where(rotary, rope, 0.0) + qk_norm)
    elem_fwd = T * elem_per_token / hbm
    layer_fwd = gemm_fwd + attn_fwd + elem_fwd
    # backward: the activations' gradients always, the weights' only for what trains (frozen: LoRA, frozen_frac)
    layer_bwd = (1.0 + np.minimum(trained, 1.0)) * gemm_fwd + attn_bwd + 2.0 * elem_fwd
    layer_rec = np.select([rec == "full", rec == "selective"], [layer_fwd, np.where(flash, 0.0, attn_fwd)], 0.0)

    # --- the critical stage: ⌈L/p⌉ layers, and the LM head + loss (last stage) --------------------------------
    Ls = np.ceil(L / p)
    head_gemm, head_elem = gemm(T, V / t, h), T * 12.0 * V / t / hbm
    head_fwd = head_gemm + head_elem
    fwd = Ls * layer_fwd + head_fwd
    bwd = Ls * layer_bwd + np.where(trained < 1, (1.0 + trained) * head_gemm + 2.0 * head_elem, 2.0 * head_fwd)
    if np.any(n_mtp > 0):  # multi-token prediction (DeepSeek-V3 §2.2), last stage: a projection 2h→h, a block (an
        # MoE block when the model's are), the shared head again
        mtp_gemm = gemm(T, h, 2.0 * h) + attn_gemm + np.where(moe, moe_mlp, dense_mlp)
        fwd = fwd + n_mtp * (mtp_gemm + attn_fwd + elem_fwd + head_fwd)
        bwd = bwd + n_mtp * ((1.0 + np.minimum(trained, 1.0)) * mtp_gemm + attn_bwd + 2.0 * elem_fwd + 2.0 * head_fwd)
    recompute = Ls * layer_rec

    # --- communication per micro-batch ------------------------------------------------------------------------
    act_bytes = T * h * 2.0
    tp_bw = C.group_bus_bandwidth(t, 1.0, **link)
    tp_one = C.collective_time_s("all_reduce", act_bytes, t, tp_bw, lat)
    n_tp = 4.0 + 2.0 * (rec == "full")
    tp_exposed = np.where(np.asarray(c["tp_overlap"], dtype=bool), np.maximum(0.0, n_tp * tp_one - 3.0 * gemm_fwd),
                          n_tp * tp_one)
    cp_bw = C.group_bus_bandwidth(cp, t, **link)
    kv_bytes = cp * T * kh * (hd + vd) * 2.0 / t  # the whole K and V of the sequence
    cp_layer = (C.collective_time_s("all_gather", kv_bytes, cp, cp_bw, lat)
                * (1.0 + (rec == "full")) + C.collective_time_s("reduce_scatter", kv_bytes, cp, cp_bw, lat))
    ep_bw = C.group_bus_bandwidth(ep, t * cp, **link)
    # each rank dispatches (and gathers back) its own T·top_k token copies: the all-to-all's whole array per rank
    # (nccl-tests' size convention, core/comm.py) is T·top_k·h·2 bytes, whatever ep is
    ep_layer = np.where(moe, 4.0 * C.collective_time_s("all_to_all", T * topk * h * 2.0, ep, ep_bw, lat), 0.0)
    per_mb_comm = Ls * (tp_exposed + cp_layer + ep_layer)

    gbs = f64(c["global_batch_used"])
    m = np.maximum(gbs / (d * b), 1.0)
    t_mb = fwd + bwd + recompute + per_mb_comm

    pp_bw = C.group_bus_bandwidth(p, t * cp * d, **link)
    p2p = C.collective_time_s("p2p", act_bytes / t, p, pp_bw, lat)
    pp_comm = m * 2.0 * v * p2p

    # --- data parallel ----------------------------------------------------------------------------------------
    dp_group = d * cp
    dp_bw = C.group_bus_bandwidth(dp_group, t, **link)
    grad_b = f64(c["grad_dtype_bytes"])
    weight_b = f64(c["weight_dtype_bytes"])
    local_params = f64(stage_params) / t
    z3 = np.asarray(c["zero_stage"]) == 3
    ar = C.collective_time_s("all_reduce", local_params * grads * grad_b, dp_group, dp_bw, lat)
    z3_mb = (2.0 * C.collective_time_s("all_gather", local_params * weight_b, dp_group, dp_bw, lat)
             + C.collective_time_s("reduce_scatter", local_params * grads * grad_b, dp_group, dp_bw, lat))
    overlap = np.asarray(c["dp_overlap"], dtype=bool)
    # overlapped, a layer's share is still exposed: the first layer's gather has no compute before it, the last
    # gradients none after them (ZeRO-3 prefetches one layer ahead; bucketed all-reduce starts with the last layer)
    dp_exposed = np.where(z3, np.where(overlap, m * np.maximum(z3_mb / Ls, z3_mb - (fwd + bwd)), m * z3_mb),
                          np.where(overlap, np.maximum(ar / Ls, ar - bwd), ar))

    parts = {
        "compute_s": m * (fwd + bwd),
        "recompute_s": m * recompute,
        "tp_comm_s": m * Ls * tp_exposed,
        "cp_comm_s": m * Ls * cp_layer,
        "ep_comm_s": m * Ls * ep_layer,
        "dp_comm_s": dp_exposed,
        "pp_bubble_s": (p - 1.0) / v * t_mb,
        "pp_comm_s": pp_comm,
        "optimizer_s": 2.0 * f64(state_bytes) / hbm,
    }
    parts["step_time_s"] = sum(parts[k] for k in STEP_PARTS)
    parts["micro_batches"] = m
    return parts
