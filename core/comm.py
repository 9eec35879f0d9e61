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
(data/efficiency.csv: measured nccl-tests bus bandwidth over the link's rate). Latency: the catalog's measured
latency of a collective inside one node; a reduce-scatter or all-gather ring spanning nodes adds NCCL's per-step
latencies for the steps beyond the node's (`ring_latency_s`: NCCL's own tuning model), an all-reduce does not (NCCL
runs it as a tree or NVLS at scale).

An all-to-all has no ring to spread over a node's NICs: each rank sends 1/n of its array to every other rank, the
(m − 1)/n for ranks in its node over NVLink and the (n − m)/n for the other nodes through its own NIC (the catalog's
inter-node figure is per GPU: one NIC per GPU on DGX/HGX nodes), both at once, so
t = S · max((m − 1)/intra, (n − m)/inter)/n: the bus bandwidth for the (n − 1)/n factor is
(n − 1)/max((m − 1)/intra, (n − m)/inter) (`all_to_all_bus_bandwidth`).

MoE dispatch (`dispatch_time_s`): NCCL's all-to-all (Megatron's alltoall dispatcher) sends every routed copy; DeepEP
and HybridEP (Megatron's flex dispatcher) send a token once per destination node over RDMA and forward it inside that
node over NVLink (deepseek-ai/DeepEP README: "internode" kernels, NVLink forwarding), so the NIC carries T·h·2 bytes
× the distinct other nodes a token's top-k experts sit on, (N − 1)·(1 − (1 − 1/N)^k) for N nodes and balanced routing.

TPU slices (`torus_fraction`): chips of one slice talk over a 2D (v5e, v6e, v3) or 3D (v4, v5p) torus of ICI links
and slices over DCN (the JAX scaling book, jax-ml/scaling-book tpus.md and sharding.md @0819a7d8). A collective over
a mesh axis runs at the bidirectional link rate per physical axis it spans ("AllGather ... bytes / (bidirectional ICI
bandwidth * num_axes)", sharding.md), so a group of k chips of an S-chip slice gets the share ln k / ln S of the
slice's all-axes rate (the axes a compact sub-torus of k chips spans, D·ln k / ln S of D, taken continuously; at
least one axis), and half of it where the slice's axes are too short to close a ring ("smaller topologies ... with no
wraparounds ... typically doubles the time of most communication", tpus.md: an axis of 16 on v5e/v6e, a multiple of
4 on v4/v5p; approximated by the slice's mean axis, S^(1/D) chips, against that length). Switched fabrics (NVLink, NVSwitch, xGMI) have no torus: `torus_axes` NaN.
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


def _is_torus(torus_axes) -> np.ndarray:
    """True where the fabric is a TPU torus (`torus_axes` a positive axis count), False for a switched one (NaN, 0)."""
    D = np.asarray(torus_axes, dtype=np.float64)
    return np.isfinite(D) & (D > 0)


def _ranks_per_node(size, stride, gpus_per_node):
    """(n, m): a group's ranks, and how many of them share a node when they are spaced `stride` apart."""
    n = np.maximum(np.asarray(size, dtype=np.float64), 1.0)
    gpn = np.asarray(gpus_per_node, dtype=np.float64)
    return n, np.clip(np.floor(gpn / np.asarray(stride, dtype=np.float64)), 1.0, n)


def torus_fraction(ranks, slice_chips, torus_axes, torus_wrap):
    """The share of a TPU slice's all-axes ICI rate that a group of `ranks` chips gets (module docstring): the axes
    it spans, ln k / ln S of them (at least one of the slice's `torus_axes`), halved when the slice's axis, S^(1/D),
    is shorter than `torus_wrap` chips (no wraparound link); 1 for a switched fabric (`torus_axes` NaN or 0).
    `slice_chips`: the slice's chips (`_placement` gives the node's when the caller does not)."""
    k = np.maximum(np.asarray(ranks, dtype=np.float64), 1.0)
    D = np.asarray(torus_axes, dtype=np.float64)
    torus = _is_torus(D)
    if not np.any(torus):
        return np.ones(np.broadcast(k, D).shape)
    S = np.maximum(np.asarray(slice_chips, dtype=np.float64), 2.0)
    Dv = np.where(torus, D, 1.0)
    share = np.clip(np.log(k) / np.log(S), 1.0 / Dv, 1.0)
    wrapped = ~(S ** (1.0 / Dv) < np.asarray(torus_wrap, dtype=np.float64) - 1e-9)  # NaN: no rule, wrapped
    return np.where(torus, share * np.where(wrapped, 1.0, 0.5), 1.0)


def _placement(size, stride, gpus_per_node, intra_bytes_per_s, inter_bytes_per_s, intra_frac, inter_frac,
               torus_axes=np.nan, torus_wrap=np.nan, slice_chips=np.nan):
    """Where a group's ranks sit: (n, m ranks per node, achievable intra and inter link rates, whether it fits a node).
    On a TPU torus the intra-slice rate is the share of the axes the group's m in-slice chips span."""
    n, m = _ranks_per_node(size, stride, gpus_per_node)
    stride = np.asarray(stride, dtype=np.float64)
    gpn = np.asarray(gpus_per_node, dtype=np.float64)
    intra = np.asarray(intra_bytes_per_s, dtype=np.float64) * intra_frac \
        * torus_fraction(m, np.where(np.isfinite(slice_chips), slice_chips, gpn), torus_axes, torus_wrap)
    inter = np.asarray(inter_bytes_per_s, dtype=np.float64) * inter_frac
    return n, m, intra, inter, (n <= 1.0) | ((n <= m) & (stride * n <= gpn))


def group_bus_bandwidth(size, stride, gpus_per_node, intra_bytes_per_s, inter_bytes_per_s, intra_frac, inter_frac,
                        **torus):
    """Achievable bus bandwidth (bytes/s) of a group of `size` ranks spaced `stride` apart (module docstring; `torus`:
    a TPU slice's torus_axes, torus_wrap and slice_chips)."""
    _, m, intra, inter, inside = _placement(size, stride, gpus_per_node, intra_bytes_per_s, inter_bytes_per_s,
                                            intra_frac, inter_frac, **torus)
    return np.where(inside, intra, np.minimum(intra, m * inter))


def collective_time_s(op: str, array_bytes, size, bus_bytes_per_s, latency_s):
    """Seconds for one collective of an `array_bytes` array over `size` ranks; 0 for a group of one or an empty
    array (a collective that is never issued)."""
    b = np.asarray(array_bytes, dtype=np.float64)
    t = np.asarray(latency_s, dtype=np.float64) + b * bytes_factor(op, np.maximum(size, 1)) / bus_bytes_per_s
    return np.where((np.asarray(size) > 1) & (b > 0), t, 0.0)


# NCCL's latency model (NVIDIA/nccl src/graph/tuning.cc, ncclTopoTuneModel; hwLat, Simple protocol): a ring step
# costs 3.4 us over NVLink and 14 us across the network, and a reduce-scatter or all-gather over n ranks is n − 1
# steps, nodes − 1 of them between nodes; with one rank per node NCCL runs PAT instead, whose latency is
# log2(nodes) × 14/3.5 us + 2.8 us per rank
RING_HOP_NVLINK_S, RING_HOP_NET_S, PAT_PER_RANK_S = 3.4e-6, 14.0e-6, 2.8e-6


def ring_latency_s(size, stride, gpus_per_node, latency_s, torus_axes=np.nan):
    """Latency of one reduce-scatter or all-gather over `size` ranks spaced `stride` apart: the catalog's measured
    latency of a collective inside one node (`latency_s`) plus what a group spanning nodes adds in NCCL's model — the
    ring's n − m steps beyond the node's m − 1, nodes − 1 of them over the network, or PAT's per-rank and log2(nodes)
    terms with one rank per node. All-reduce keeps `latency_s` (at scale NCCL runs it as a tree or NVLS: log2 of the
    nodes); so does a TPU torus (XLA's collectives, not NCCL's)."""
    n, m = _ranks_per_node(size, stride, gpus_per_node)
    nodes = np.ceil(n / m)
    ring = (nodes - 1.0) * RING_HOP_NET_S + np.maximum(n - m - (nodes - 1.0), 0.0) * RING_HOP_NVLINK_S
    pat = np.log2(nodes) * RING_HOP_NET_S / 3.5 + n * PAT_PER_RANK_S
    extra = np.where(nodes <= 1.0, 0.0, np.where(m <= 1.0, pat, ring))
    return np.asarray(latency_s, dtype=np.float64) + np.where(_is_torus(torus_axes), 0.0, extra)


def _per_byte(bw):
    """Seconds per byte of a link (inf for a zero-rate one, without a division warning)."""
    return np.where(bw > 0, 1.0 / np.where(bw > 0, bw, 1.0), np.inf)


def _a2a_worst(n, m, intra, inter):
    """Seconds per byte of the array for an all-to-all's slower share: max((m − 1)/intra, (n − m)/inter)/n."""
    return np.maximum((m - 1.0) * _per_byte(intra), np.where(n > m, (n - m) * _per_byte(inter), 0.0)) / n


def all_to_all_bus_bandwidth(size, stride, gpus_per_node, intra_bytes_per_s, inter_bytes_per_s, intra_frac,
                             inter_frac, **torus):
    """Achievable bus bandwidth (bytes/s, for the (n − 1)/n factor) of an all-to-all over `size` ranks spaced `stride`
    apart: the intra-node share over NVLink and the cross-node share through each rank's own NIC, concurrently
    (module docstring)."""
    n, m, intra, inter, inside = _placement(size, stride, gpus_per_node, intra_bytes_per_s, inter_bytes_per_s,
                                            intra_frac, inter_frac, **torus)
    worst = _a2a_worst(n, m, intra, inter)
    return np.where(inside, intra, (n - 1.0) / n / np.where(worst > 0, worst, np.inf))


def dispatch_time_s(copies_bytes, token_bytes, top_k, size, stride, gpus_per_node, intra_bytes_per_s,
                    inter_bytes_per_s, intra_frac, inter_frac, latency_s, dedup, **torus):
    """Seconds for one MoE dispatch (or combine) over `size` expert-parallel ranks spaced `stride` apart:
    `copies_bytes` of routed copies (T·k·h·2), `token_bytes` of distinct tokens (T·h·2); across nodes NCCL sends every
    copy through the rank's NIC (`all_to_all_bus_bandwidth`), DeepEP/HybridEP (`dedup`) each token once per other node
    it routes to, forwarding the copies over NVLink inside the node (module docstring)."""
    n, m, intra, inter, inside = _placement(size, stride, gpus_per_node, intra_bytes_per_s, inter_bytes_per_s,
                                            intra_frac, inter_frac, **torus)
    S = np.asarray(copies_bytes, dtype=np.float64)
    over_nvlink = S * (n - 1.0) / n * _per_byte(intra)
    nccl = np.where(inside, over_nvlink, S * _a2a_worst(n, m, intra, inter))
    nodes = np.maximum(n / m, 1.0)
    k = np.maximum(np.asarray(top_k, dtype=np.float64), 1.0)
    remote_nodes = (nodes - 1.0) * (1.0 - (1.0 - 1.0 / nodes) ** k)
    forwarded = np.where(m > 1, over_nvlink, 0.0)  # nothing to forward with one rank a node
    deep = np.maximum(forwarded, np.asarray(token_bytes, dtype=np.float64) * remote_nodes * _per_byte(inter))
    t = np.where(inside | ~np.asarray(dedup, dtype=bool), nccl, deep)
    return np.where((n > 1) & (S > 0), np.asarray(latency_s, dtype=np.float64) + t, 0.0)
