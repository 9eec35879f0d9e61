"""Roofline (Williams et al. 2009; seed 000 via CS336 lecture 2): arithmetic intensity = FLOPs / bytes moved,
attainable FLOP/s = min(peak, intensity · bandwidth), time = max(FLOPs/peak, bytes/bandwidth).
All functions are vectorised. Byte counts assume each operand is read once and the result written once."""
from __future__ import annotations

import numpy as np

from .tables import GATED_MLPS


def matmul_cost(m, n, k, dtype_bytes=2.0):
    """(m×k)·(k×n): FLOPs 2mnk; bytes (mk + kn + mn)·dtype. 1024³ in bf16 → intensity ≈ 341 (seed 000)."""
    m, n, k = (np.asarray(x, dtype=np.float64) for x in (m, n, k))
    return 2 * m * n * k, (m * k + k * n + m * n) * np.asarray(dtype_bytes, dtype=np.float64)


def matvec_cost(m, k, dtype_bytes=2.0):
    """(m×k)·(k): FLOPs 2mk; bytes (mk + k + m)·dtype → intensity ≈ 1 in bf16 (seed 000)."""
    m, k = (np.asarray(x, dtype=np.float64) for x in (m, k))
    return 2 * m * k, (m * k + k + m) * np.asarray(dtype_bytes, dtype=np.float64)


def elementwise_cost(m, k, dtype_bytes=2.0, flops_per_element=1.0):
    """One op per element of an m×k tensor, read once and written once: intensity = flops/(2·dtype) =
    0.25 for ReLU in bf16 (seed 000)."""
    n = np.asarray(m, dtype=np.float64) * np.asarray(k, dtype=np.float64)
    return n * np.asarray(flops_per_element, dtype=np.float64), 2 * n * np.asarray(dtype_bytes, dtype=np.float64)


def roofline(flops, bytes_moved, peak_flops_per_s, bandwidth_bytes_per_s):
    """Arithmetic intensity, ridge intensity, attainable FLOP/s, time and whether compute- or memory-bound."""
    flops = np.asarray(flops, dtype=np.float64)
    by = np.asarray(bytes_moved, dtype=np.float64)
    peak = np.asarray(peak_flops_per_s, dtype=np.float64)
    bw = np.asarray(bandwidth_bytes_per_s, dtype=np.float64)
    ai = flops / by
    ridge = peak / bw
    compute_s = flops / peak
    memory_s = by / bw
    return {
        "flops": flops, "bytes_moved": by, "arithmetic_intensity": ai, "ridge_intensity": ridge + 0 * ai,
        "attainable_flops_per_s": np.minimum(peak, ai * bw), "compute_time_s": compute_s, "memory_time_s": memory_s,
        "time_s": np.maximum(compute_s, memory_s), "bound": np.where(ai >= ridge, "compute", "memory"),
    }


def layer_ops(seq_len, micro_batch, d_model, n_heads, n_kv_heads, d_ff, mlp="swiglu", dtype_bytes=2.0):
    """The forward ops of one layer at T = s·b tokens per step, each as (name, FLOPs, bytes moved).

    QKV: T×h by h×(h + 2kh/a). Attention without flash: scores QKᵀ (reads Q, K; writes a·s²·b), softmax (reads and writes
    them), AV (reads them); with flash (Dao et al. 2022): one kernel reading Q, K, V and writing O.
    Output projection h×h; MLP 2 (GeLU) or 3 (SwiGLU) matmuls of h×f; norms as elementwise ops with ≈5 FLOPs
    per element (square, mean, rsqrt, scale, weight). `decode_matvec` is decoding one token: every weight matrix
    of the layer read once for 2·params FLOPs (matrix-vector work, memory-bound)."""
    s, b, h, a, k, f = (np.asarray(x, dtype=np.float64) for x in (seq_len, micro_batch, d_model, n_heads, n_kv_heads,
                                                                     d_ff))
    p = float(dtype_bytes)
    T = s * b
    kv = k * h / a
    dh = h / a
    n_mlp = 3.0 if mlp in GATED_MLPS else 2.0
    ops = []
    ops.append(("qkv_proj",) + matmul_cost(T, h + 2 * kv, h, p))
    sc_flops = 2 * b * a * s * s * dh
    ops.append(("attn_scores_qk", sc_flops, (T * h + T * kv + a * s * s * b) * p))
    ops.append(("attn_softmax", 5 * a * s * s * b, 2 * a * s * s * b * p))
    ops.append(("attn_av", sc_flops, (a * s * s * b + T * kv + T * h) * p))
    ops.append(("attn_flash", 2 * sc_flops, (2 * T * h + 2 * T * kv) * p))
    ops.append(("out_proj",) + matmul_cost(T, h, h, p))
    ops.append(("mlp",) + tuple(n_mlp * x for x in matmul_cost(T, f, h, p)))
    ops.append(("norm",) + elementwise_cost(T, h, p, 5.0))
    w = 2 * h * h + 2 * h * kv + n_mlp * h * f
    ops.append(("decode_matvec", 2 * w, w * p))
    return ops
