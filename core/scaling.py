"""Compute-optimal model size and tokens (Hoffmann et al. 2022, "Training Compute-Optimal Large Language Models",
arXiv:2203.15556): the parametric loss L(N, D) = E + A/N^α + B/D^β (§3.3, App. D.2) minimised under C = 6·N·D gives

    N_opt = G·(C/6)^a,  D_opt = G^-1·(C/6)^b,  G = (αA/(βB))^(1/(α+β)),  a = β/(α+β),  b = α/(α+β)

with the fit's unrounded values from the paper's TeX source (E 1.6934, A 406.4, B 410.7, α 0.3392, β 0.2849; the
printed 0.34 / 0.28 are rounded and miss the paper's own 40B-at-the-Gopher-budget frontier). Or, for over-training,
a chosen tokens-per-parameter ratio R: N = √(C / (6R)), D = R·N.
"""
from __future__ import annotations

import numpy as np

E, A, B, ALPHA, BETA = 1.6934, 406.4, 410.7, 0.3392, 0.2849
G = (ALPHA * A / (BETA * B)) ** (1.0 / (ALPHA + BETA))
EXP_N, EXP_D = BETA / (ALPHA + BETA), ALPHA / (ALPHA + BETA)


def compute_optimal(flops, tokens_per_param=None) -> tuple:
    """(N, D) for a training budget of `flops` (C = 6·N·D): Chinchilla's law, or the given tokens-per-parameter."""
    c = np.asarray(flops, dtype=np.float64)
    if tokens_per_param:
        n = np.sqrt(c / (6.0 * float(tokens_per_param)))
        return n, float(tokens_per_param) * n
    return G * (c / 6.0) ** EXP_N, (c / 6.0) ** EXP_D / G


def loss(n_params, tokens) -> np.ndarray:
    """Chinchilla's predicted final loss (nats per token on their data): lower is better."""
    return E + A / np.asarray(n_params, dtype=np.float64) ** ALPHA + B / np.asarray(tokens, dtype=np.float64) ** BETA
