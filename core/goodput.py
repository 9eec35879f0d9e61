"""Goodput: the share of wall time a run spends on useful steps when its job fails and restarts (issue 20 item 2).

Failures arrive as a Poisson process at `failure_rate_per_gpu_hour` × GPUs (the job's mean time between failures
M = 1 / (λ·n)). The job writes a checkpoint every τ seconds, each taking δ = checkpoint bytes ÷ storage bandwidth; a
failure costs the restart R and the work since the last checkpoint. Daly 2006 (Future Generation Computer Systems
22(3):303–312) gives the expected wall time of T_s seconds of work as M·e^{R/M}·(e^{(τ+δ)/M} − 1)·T_s/τ, so

    goodput = τ / (M · e^{R/M} · (e^{(τ+δ)/M} − 1))

and the optimal interval (his eq. 37, as LLNL SCR implements it): τ = √(2δM)·[1 + ⅓√(δ/2M) + (δ/2M)/9] − δ for
δ < 2M, else M. Young 1974's first-order √(2δM) is its leading term.

Defaults, each with its source: λ from Llama 3 (Dubey et al. 2024, arXiv:2407.21783 §3.3.4): 419 unexpected
interruptions in a 54-day snapshot of up to 16,384 H100 → 419 / (54·24·16,384) = 1.97e-5 per GPU-hour; storage
2 TB/s (the same paper's Tectonic "sustainable throughput of 2 TB/s"); restart 5 minutes (Kokolis et al. 2024,
arXiv:2410.21680, Meta's reliability study: "Daly-Young optimal checkpointing with 5 minute restart overhead"). The
checkpoint holds the model state once (weights, master copy, optimizer moments: each shard written by one rank).
"""
from __future__ import annotations

import numpy as np

LLAMA3_FAILURE_RATE = 419 / (54 * 24 * 16_384)  # unexpected interruptions per GPU-hour
LLAMA3_STORAGE_BYTES_PER_S = 2e12  # Tectonic's sustainable throughput, Llama 3 §3.3.1
RESTART_S = 300.0  # Kokolis et al. 2024


def daly_interval_s(checkpoint_s, mtbf_s) -> np.ndarray:
    """Daly 2006 eq. 37: the optimal compute time between checkpoints (vectorised)."""
    d, m = np.asarray(checkpoint_s, dtype=np.float64), np.asarray(mtbf_s, dtype=np.float64)
    x = d / (2.0 * m)
    tau = np.sqrt(2.0 * d * m) * (1.0 + np.sqrt(x) / 3.0 + x / 9.0) - d
    return np.where(d < 2.0 * m, tau, m)


def goodput_frac(interval_s, checkpoint_s, mtbf_s, restart_s) -> np.ndarray:
    """Useful share of wall time (Daly 2006's expected run time with restarts); 1 without failures."""
    tau, d, m, r = (np.asarray(x, dtype=np.float64) for x in (interval_s, checkpoint_s, mtbf_s, restart_s))
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        g = tau / (m * np.exp(r / m) * np.expm1((tau + d) / m))
    return np.where(np.isfinite(m) & (m > 0) & (tau > 0), np.clip(g, 0.0, 1.0), 1.0)
