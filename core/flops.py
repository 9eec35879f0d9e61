"""Compute, time and cost (vectorised).

Seeds 001/002: training costs ≈ 6N FLOPs per token (2N forward, 4N backward; N = parameters, MoE: active
parameters), attention adds ≈ 12·L·h·s per token (forward + backward), and time = FLOPs / (GPUs · peak · MFU).
"""
from __future__ import annotations

import numpy as np

from .model import head_dims
from .tables import ATTENTION_FLOPS  # noqa: F401  (the counting conventions, a row each)
from .units import SECONDS_PER_DAY, SECONDS_PER_HOUR


def local_keys(seq_len, window, chunked=False) -> np.ndarray:
    """s_eff: the keys a windowed layer's query attends to, as the causal count's length (its scores are s_eff·s/2
    where a global causal layer's are s²/2). A sliding band of w < s (Mistral 7B v0.1, Gemma 2/3 local layers):
    w·s − w²/2 scores, s_eff = (2·w·s − w²)/s. Block-diagonal causal chunks of c < s (Llama 4's chunked attention,
    meta-llama/llama-models `create_chunked_attention_mask`): ⌊s/c⌋ chunks of c²/2 scores and a last one of r²/2
    (r = s mod c), s_eff = (⌊s/c⌋·c² + r²)/s — about half the band's. s where w ≥ s or no window."""
    s, w = np.asarray(seq_len, dtype=np.float64), np.asarray(window, dtype=np.float64)
    on = (w > 0) & (w < s)
    wc = np.where(on, w, 1.0)
    band = (2.0 * wc * s - wc * wc) / s
    r = np.mod(s, wc)
    chunk = (np.floor(s / wc) * wc * wc + r * r) / s
    return np.where(on, np.where(np.asarray(chunked, dtype=bool), chunk, band), s)


def document_window(document_tokens, seq_len, sliding_window, global_every, chunked_attention, flash=True) -> dict:
    """The attention pattern of packed rows (several documents in one sequence, attention kept inside each:
    document masking). With flash kernels each document runs as its own sequence (flash-attn's flash_attn_varlen_func
    with cu_seqlens; Transformer Engine's THD format; FlexAttention's document mask, whose block mask skips the blocks
    across documents), so a document length d < s (the token-weighted mean Σd²/Σd, for which the count is exact when
    the documents fill the row) makes a layer block-diagonal causal chunks of d, as Llama 4's chunked attention
    (`local_keys`): every layer of a model without a window, or with a window (or chunks) wider than d; with a
    narrower window its local layers run their band (or chunks) inside each document, a sequence of d
    (`local_len`), and its global layers take the documents' chunks (`global_keys`). Without flash (a dense mask
    over all s × s scores) nothing changes. Returns the effective `sliding_window`, `global_every`,
    `chunked_attention`, `global_keys` (keys per query of a global layer, as local_keys counts them; s without
    documents), `local_len` (the sequence a local layer's window runs over: d inside documents, else s) and
    `document_chunks` (the pattern comes from the documents: a varlen kernel skips the other documents whatever else
    the layer does)."""
    d = np.asarray(document_tokens, dtype=np.float64)
    s = np.asarray(seq_len, dtype=np.float64)
    if not np.any(d > 0):  # unpacked rows (the usual case): the model's own pattern
        return {"sliding_window": sliding_window, "global_every": global_every, "chunked_attention": chunked_attention,
                "global_keys": s, "local_len": s, "document_chunks": False}
    win = np.asarray(sliding_window, dtype=np.float64)
    windowed = (win > 0) & (win < s)
    on = (d > 0) & (d < s) & np.asarray(flash, dtype=bool)
    every = on & (~windowed | (d < win))  # every layer chunks of d
    return {"sliding_window": np.where(every, d, win), "global_every": np.where(every, 0, global_every),
            "chunked_attention": np.where(every, True, np.asarray(chunked_attention, dtype=bool)),
            "global_keys": np.where(on, local_keys(s, np.where(on, d, s), True), s),
            "local_len": np.where(on & ~every, d, s), "document_chunks": on}


def attention_flops_per_token(n_layers, d_model, seq_len, attention_flops="full", attn_width=None,
                              sliding_window=0, global_every=0, chunked_attention=False, global_keys=None,
                              local_len=None, document_chunks=False):
    """Attention score and value matmuls per token, forward + backward: 12·L·h·s (seed 001; PaLM appendix B,
    as in nanoGPT's estimate_mfu). 'causal' halves it (only the lower triangle is computed; Megatron-LM's
    convention since 2025); 'none' drops it (the seeds' 6ND planning number).

    Issue 12: h is the attention width w = a·(d_h + d_v)/2 (`attn_width`; QKᵀ is 2·s·a·d_h and AV 2·s·a·d_v FLOPs
    per token forward), which is d_model for the classic block. A sliding window w_s < s (Mistral 7B v0.1; Gemma
    2/3's local layers) leaves each query w_s keys: the causal count of a sequence is w_s·s − w_s²/2 scores instead
    of s²/2, so a windowed layer counts s_eff = (2·w_s·s − w_s²)/s in place of s (continuous at w_s = s).
    `global_every` k > 0 keeps every k-th layer global (⌊L/k⌋ layers); `chunked_attention`: the window is Llama 4's
    chunks (`local_keys`). `global_keys`: a global layer's keys per query where documents limit them, `local_len` the
    sequence a window runs over (`document_window`; s when not given); `document_chunks` is read by the step time
    only."""
    L, h, s = (np.asarray(x, dtype=np.float64) for x in (n_layers, d_model, seq_len))
    gk = s if global_keys is None else np.asarray(global_keys, dtype=np.float64)
    w = h if attn_width is None else np.asarray(attn_width, dtype=np.float64)
    mode = np.asarray(attention_flops)
    scale = np.select([mode == "full", mode == "causal", mode == "none"], [1.0, 0.5, 0.0], np.nan)
    win = np.asarray(sliding_window, dtype=np.float64)
    every = np.asarray(global_every, dtype=np.float64)
    windowed = (win > 0) & (win < s)
    if not np.any(windowed):
        return 12.0 * L * w * gk * scale
    n_global = np.where(every > 0, np.floor(L / np.maximum(every, 1.0)), 0.0)
    s_eff = local_keys(s if local_len is None else local_len, win, chunked_attention)
    return np.where(windowed, 12.0 * w * ((L - n_global) * s_eff + n_global * gk) * scale, 12.0 * L * w * gk * scale)


def ssm_flops_per_token(mamba_layers, d_model, mamba_heads=0, mamba_head_dim=0, mamba_state=0, mamba_groups=0,
                        mamba_chunk=0):
    """The Mamba-2 SSD core's matmul FLOPs per token, forward + backward (× 3: backward = 2 × forward, as for the
    projections), over the model's Mamba-2 layers; in_proj, conv1d and out_proj are in 6·N.

    Forward per token and layer, from the SSD algorithm (Dao & Gu 2024, arXiv:2405.21060 §6 / Listing 1; the Triton
    kernels of state-spaces/mamba ssd_combined.py follow it; derived in docs/formulas.md): C·Bᵀ inside each chunk per
    group 2·Q·N·G, the intra-chunk output (L∘CBᵀ)·X 2·Q·d_i, the chunk states Bᵀ·X 2·N·d_i, and the states' output C·h
    2·N·d_i: 2·Q·(G·N + d_i) + 4·N·d_i (Q chunk, N state, G groups, d_i = H·P); the inter-chunk recurrence is
    2·H·P·N/Q (negligible, left out). Nemotron-H 8B: 6.55 MFLOP per token and layer, ~3 % of the layer. Megatron-LM's
    convention (training.py `mamba_layer_flops`: 7·d_in·N with d_in = 2h) gives 7.3 MFLOP for the same layer; the
    backward's recomputation of CBᵀ and the states (ssd_combined.py) is hardware work, not model FLOPs."""
    from .model import mamba_dims
    m = mamba_dims(d_model, mamba_heads, mamba_head_dim, mamba_state, mamba_groups, 0, mamba_chunk)
    fwd = 2.0 * m["Q"] * (m["G"] * m["N"] + m["d_inner"]) + 4.0 * m["N"] * m["d_inner"]
    return 3.0 * np.asarray(mamba_layers, dtype=np.float64) * fwd


def attention_width(d_model, n_heads, head_dim=0, v_head_dim=0):
    """w = a·(d_h + d_v)/2: the width the attention matmuls run over (d_model for the classic block)."""
    hd, vd = head_dims(d_model, n_heads, head_dim, v_head_dim)
    return np.asarray(n_heads, dtype=np.float64) * (hd + vd) / 2.0


def model_flops_per_token(n_active_params, n_layers, d_model, seq_len, attention_flops="full", **attention):
    """Model FLOPs per token = 6·N (dense; N = active parameters for MoE) + attention term (`attention`: the
    keywords of `attention_flops_per_token`)."""
    return 6.0 * np.asarray(n_active_params, dtype=np.float64) + attention_flops_per_token(
        n_layers, d_model, seq_len, attention_flops, **attention)


def matmul_flops_per_token(n_active_params, trained_active_params=None, adapter_active_params=0.0):
    """The parameters' share of the FLOPs per token: 6·N when everything trains (2N forward, 2N for the gradients
    of the activations, 2N for those of the weights). A frozen parameter skips its weight gradient: 4·N + 2·N_t for
    the N_t that train, and LoRA adapters A add 6·A (Hu et al. 2021 §4.2: no gradients for most parameters, ~25%
    faster on GPT-3 175B). With N_t = N and A = 0 this is 6·N exactly."""
    N = np.asarray(n_active_params, dtype=np.float64)
    if trained_active_params is None:
        return 6.0 * N
    Nt = np.asarray(trained_active_params, dtype=np.float64)
    A = np.asarray(adapter_active_params, dtype=np.float64)
    return np.where((Nt == N) & (A == 0), 6.0 * N, 4.0 * N + 2.0 * Nt + 6.0 * A)


def megatron_flops_per_token(n_layers, d_model, seq_len, vocab_size):
    """Megatron per-iteration form divided by B·s tokens: 72·B·s·L·h²·(1 + s/(6h) + V/(12hL)) / (B·s)
    (Narayanan et al. 2021, §5.1, Eq. 3; GPT block with d_ff = 4h, full attention, logits included)."""
    L, h, s, V = (np.asarray(x, dtype=np.float64) for x in (n_layers, d_model, seq_len, vocab_size))
    return 72.0 * L * h * h * (1 + s / (6 * h) + V / (12 * h * L))


def hardware_flops_per_token(model_flops_per_token_, attention_flops_per_token_, recompute="none",
                             outside_blocks_flops_per_token=0.0, rerun_flops_per_token=None):
    """FLOPs the hardware executes, recomputation included (for HFU). Full recomputation runs the transformer
    blocks' forward once more: + (model − outside_blocks)/3, where `outside_blocks` = 6 × the parameters outside
    the blocks (embedding, positions, LM head), which checkpointing does not rerun — as in Narayanan et al. 2021
    Eq. 3 with recomputation, 96·B·s·L·h²·(1 + s/(6h) + V/(16hL)), whose logit term stays 6·B·s·V·h. With
    outside = 0 this is seed 001's "one extra forward pass, ≈ +33%". Selective recomputes the attention core's
    forward: + attention/3 (Korthikanti §5). None: equal to the model FLOPs. `rerun_flops_per_token`, where given
    (not NaN), is the blocks' forward itself: a frozen model's FLOPs are not 3 × its forward
    (`matmul_flops_per_token`)."""
    rec = np.asarray(recompute)
    mf = np.asarray(model_flops_per_token_, dtype=np.float64)
    af = np.asarray(attention_flops_per_token_, dtype=np.float64)
    full_extra = (mf - np.asarray(outside_blocks_flops_per_token, dtype=np.float64)) / 3.0
    if rerun_flops_per_token is not None:
        rr = np.asarray(rerun_flops_per_token, dtype=np.float64)
        full_extra = np.where(np.isnan(rr), full_extra, rr)
    return mf + np.select([rec == "full", rec == "selective", rec == "none"], [full_extra, af / 3.0, 0.0 * mf],
                          np.nan)


def outside_blocks_flops_per_token(vocab_size, d_model, tied_embeddings, position="rotary", max_position=0):
    """6 × the parameters outside the transformer blocks (input embedding, learned positions, LM head; tied
    embeddings counted once), i.e. the part of 6N that full recomputation does not run again."""
    V, h = np.asarray(vocab_size, dtype=np.float64), np.asarray(d_model, dtype=np.float64)
    tables = np.where(np.asarray(tied_embeddings, dtype=bool), 1.0, 2.0) * V * h
    pos = np.where(np.asarray(position) == "learned", np.asarray(max_position, dtype=np.float64) * h, 0.0)
    return 6.0 * (tables + pos)


def train_time_s(train_flops, n_gpus, peak_flops_per_s, mfu, time_overhead_frac=0.0):
    """Wall-clock seconds = FLOPs / (GPUs · peak · MFU) × (1 + overhead) (seeds 000/001/002; seed 001 advises
    budgeting 10–30% for failures, restarts, evaluations and stalls; 0 by default)."""
    return (np.asarray(train_flops, dtype=np.float64)
            / (np.asarray(n_gpus, dtype=np.float64) * np.asarray(peak_flops_per_s, dtype=np.float64)
               * np.asarray(mfu, dtype=np.float64))
            * (1.0 + np.asarray(time_overhead_frac, dtype=np.float64)))


def time_and_cost(time_s, n_gpus, price_usd_per_gpu_hour):
    """days, GPU-hours and cost = GPU-hours × $/GPU-hour."""
    t = np.asarray(time_s, dtype=np.float64)
    gpu_hours = t * np.asarray(n_gpus, dtype=np.float64) / SECONDS_PER_HOUR
    return {"days": t / SECONDS_PER_DAY, "gpu_hours": gpu_hours,
            "cost_usd": gpu_hours * np.asarray(price_usd_per_gpu_hour, dtype=np.float64)}


def achieved_utilization(tokens_per_second, flops_per_token, n_gpus, peak_flops_per_s):
    """The seeds' "slow steps" check: achieved FLOP/s / (GPUs · peak). With model FLOPs per token this is MFU;
    with hardware FLOPs (recomputation included) it is HFU (Korthikanti §6, Chowdhery et al. 2022 App. B)."""
    return (np.asarray(tokens_per_second, dtype=np.float64) * np.asarray(flops_per_token, dtype=np.float64)
            / (np.asarray(n_gpus, dtype=np.float64) * np.asarray(peak_flops_per_s, dtype=np.float64)))
