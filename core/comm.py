"""Collective communication time (vectorised): nccl-tests bus-bandwidth conventions and where a group's ranks sit.

Bus bandwidth (NVIDIA nccl-tests, doc/PERFORMANCE.md): a collective over n ranks of an S-byte array moves, per
rank, S · factor bytes over the bottleneck link, so t = latency + S · factor / busbw, with factor
  all-reduce 2(n−1)/n, reduce-scatter and all-gather (n−1)/n, all-to-all (n−1)/n, point-to-point 1
(S is the whole array: for all-gather `recvcount · sizeof · n`, for reduce-scatter the input).

Where the ranks sit (Megatron-LM's rank order: tensor parallel innermost, then context, then data, then
pipeline): a group of `size` ranks spaced `stride` apart has m = clip(gpus_per_node // stride, 1, size) ranks in
one node. If the whole group fits in a node it runs at the intra-node link; otherwise NCCL runs one ring per
GPU/NIC pair, each crossing every node boundary once, so the bus bandwidth is the slower of the intra-node link
and the m NICs the group has in a node: busbw = min(intra, m · inter). Each link runs at its achievable fraction
(data/efficiency.csv: measured nccl-tests bus bandwidth over the link's rate).
"""
from __future__ import annotations

import numpy as np

FACTORS = ("all_reduce", "reduce_scatter", "all_gather", "all_to_all", "p2p")


def bytes_factor(op: str, n):
    """Bytes over the bottleneck link per byte of the array (nccl-tests PERFORMANCE.md)."""
    n = np.asarray(n, dtype=np.float64)
    if op == "all_reduce":
        return 2.0 * (n - 1) / n
    if op in ("reduce_scatter", "all_gather", "all_to_all"):
        return (n - 1) / n
    if op == "p2p":
        return np.ones_like(n)
    raise ValueError(f"op: {op!r} is not one of {', '.join(FACTORS)}")


def group_bus_bandwidth(size, stride, gpus_per_node, intra_bytes_per_s, inter_bytes_per_s, intra_frac, inter_frac):
    """Achievable bus bandwidth (bytes/s) of a group of `size` ranks spaced `stride` apart (module docstring)."""
    size = np.asarray(size, dtype=np.float64)
    stride = np.asarray(stride, dtype=np.float64)
    gpn = np.asarray(gpus_per_node, dtype=np.float64)
    per_node = np.clip(np.floor(gpn / stride), 1.0, size)
    intra = np.asarray(intra_bytes_per_s, dtype=np.float64) * intra_frac
    inter = np.asarray(inter_bytes_per_s, dtype=np.float64) * inter_frac
    inside = (size <= per_node) & (stride * size <= gpn)
    return np.where(inside, intra, np.minimum(intra, per_node * inter))


def collective_time_s(op: str, array_bytes, size, bus_bytes_per_s, latency_s):
    """Seconds for one collective of an `array_bytes` array over `size` ranks; 0 for a group of one."""
    t = (np.asarray(latency_s, dtype=np.float64)
         + np.asarray(array_bytes, dtype=np.float64) * bytes_factor(op, np.maximum(size, 1)) / bus_bytes_per_s)
    return np.where(np.asarray(size) > 1, t, 0.0)
