"""Model description and parameter count.

A `Model` is built from architecture fields (or a preset from data/models.csv, or a Hugging Face
config.json, or a raw parameter count). The parameter count is derived from the fields as named
parts — embedding, position, attention, mlp (dense), experts (routed), shared_experts, router, norms, lm_head —
plus a total, and for mixture-of-experts an active count (top_k of n_experts routed MLPs per token, every shared
expert). A multi-token-prediction module (DeepSeek-V3) is counted apart (`mtp_breakdown`), as its publisher does.

Symbols inside formulas: L, h, a, k, f, V = n_layers, d_model, n_heads, n_kv_heads, d_ff, vocab_size;
d_h = head_dim (query/key width per head; h / a unless given), d_v = v_head_dim (= d_h unless given); the K and V
projections have k·d_h and k·d_v columns (GQA/MQA; k = a is multi-head). MLA (multi-head latent attention, DeepSeek-V2
arXiv:2405.04434 §2.1): r_q, r_kv = q_lora_rank, kv_lora_rank, d_r = qk_rope_head_dim (the decoupled RoPE part of d_h).
MoE: E, E_s = n_experts, n_shared_experts; f_e = moe_d_ff (routed expert width; d_ff unless given), f_s = shared_d_ff
(each shared expert's width; f_e unless given); L_d = n_dense_layers (the first layers, dense with width f).
"""
from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import vec as VE
from .tables import (ATTENTION_KINDS, BIAS_KINDS, GATED_MLPS, LORA_TARGETS, MLP_KINDS, NORM_KINDS,  # noqa: F401
                     NORMS_PER_LAYER, POSITION_KINDS, QK_NORMS)

DATA_DIR = Path(__file__).resolve().parent.parent / "data"

# Hybrid Mamba-2 models (issue 19): the layers' mixers and MLPs counted by kind, and the Mamba-2 mixer's shape
# (Dao & Gu 2024, arXiv:2405.21060; state-spaces/mamba mamba_ssm/modules/mamba2.py; Megatron-Core ssm/mamba_mixer.py).
# With mamba_layers = 0 the model is the classic one (every layer attention + MLP) and the other fields are moot.
MAMBA_FIELDS = ("mamba_layers", "attention_layers", "mlp_layers", "mamba_heads", "mamba_head_dim", "mamba_state",
                "mamba_groups", "mamba_conv", "mamba_chunk", "mamba_norm", "mamba_parallel")
MAMBA_DEFAULTS = {"mamba_layers": 0, "attention_layers": 0, "mlp_layers": 0, "mamba_heads": 0, "mamba_head_dim": 0,
                  "mamba_state": 0, "mamba_groups": 0, "mamba_conv": 0, "mamba_chunk": 0, "mamba_norm": True,
                  "mamba_parallel": False}
# what a 0 means (the reference module's defaults, mamba2.py; chunk 128 as Megatron-Core and every hybrid config
# read here set it — the reference module's own default is 256)
MAMBA_RESOLVED = {"mamba_head_dim": 64, "mamba_state": 128, "mamba_groups": 1, "mamba_conv": 4, "mamba_chunk": 128}

# Names of the architecture fields, in the CLI/JSON vocabulary. The second group (issue 12) defaults to "off" (0,
# false, standard, none, 2 norms), so a model that does not set them is counted exactly as before.
ARCH_FIELDS = ("n_layers", "d_model", "n_heads", "n_kv_heads", "d_ff", "vocab_size", "mlp", "norm", "bias",
               "dropout", "tied_embeddings", "position", "max_position", "n_experts", "top_k",
               "head_dim", "v_head_dim", "attention", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "qk_norm",
               "norms_per_layer", "embedding_norm", "moe_d_ff", "n_shared_experts", "shared_d_ff",
               "shared_expert_gate", "n_dense_layers", "sliding_window", "global_every", "n_mtp_layers",
               "attention_sinks", "chunked_attention", *MAMBA_FIELDS)
# the issue-12 fields with their "off" values (a model, a sweep column or a hand-built column dict without them)
ARCH_DEFAULTS = {**MAMBA_DEFAULTS, "chunked_attention": False, "head_dim": 0, "v_head_dim": 0, "attention": "standard", "q_lora_rank": 0, "kv_lora_rank": 0,
                 "qk_rope_head_dim": 0, "qk_norm": "none", "norms_per_layer": 2, "embedding_norm": False,
                 "moe_d_ff": 0, "n_shared_experts": 0, "shared_d_ff": 0, "shared_expert_gate": False,
                 "n_dense_layers": 0, "sliding_window": 0, "global_every": 0, "n_mtp_layers": 0,
                 "attention_sinks": False}
_INT_ARCH = ("head_dim", "v_head_dim", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "norms_per_layer",
             "moe_d_ff", "n_shared_experts", "shared_d_ff", "n_dense_layers", "sliding_window", "global_every",
             "n_mtp_layers", *(f for f in MAMBA_FIELDS if not isinstance(MAMBA_DEFAULTS[f], bool)))


def _f(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def head_dims(d_model, n_heads, head_dim=0, v_head_dim=0):
    """(d_h, d_v): the query/key and value widths per head; d_h = h / a and d_v = d_h where not given (0)."""
    hd = np.where(_f(head_dim) > 0, _f(head_dim), _f(d_model) / _f(n_heads))
    return hd, np.where(_f(v_head_dim) > 0, _f(v_head_dim), hd)


def moe_widths(d_ff, moe_d_ff=0, shared_d_ff=0):
    """(f_e, f_s): a routed expert's width (d_ff unless moe_d_ff is given) and a shared expert's (f_e unless given)."""
    fe = np.where(_f(moe_d_ff) > 0, _f(moe_d_ff), _f(d_ff))
    return fe, np.where(_f(shared_d_ff) > 0, _f(shared_d_ff), fe)


def layer_counts(n_layers, n_experts, n_dense_layers=0):
    """(dense layers, MoE layers): a dense model's layers are all dense; an MoE model's first n_dense_layers are."""
    L, E = _f(n_layers), _f(n_experts)
    dense = np.where(E > 1, np.minimum(_f(n_dense_layers), L), L)
    return dense, L - dense


def moe_load_factor(capacity_factor=0.0, load_imbalance=1.0, pad_to_capacity=False):
    """Tokens the busiest expert (and so the busiest expert-parallel rank) processes ÷ the balanced share T·k/E: the
    routing's load imbalance (1 = balanced, as the forced-balanced benchmarks route), capped by a capacity factor
    (Megatron-Core --moe-expert-capacity-factor: tokens beyond capacity·T·k/E are dropped), or exactly the capacity
    when inputs are padded to it (--moe-pad-expert-input-to-capacity); 0 = dropless (GShard, Lepikhin et al. 2020
    §2.2; Switch Transformer, Fedus et al. 2021 §2.2, for the capacity factor)."""
    cf, imb = _f(capacity_factor), np.maximum(_f(load_imbalance), 1.0)
    return np.where(cf > 0, np.where(np.asarray(pad_to_capacity, dtype=bool), cf, np.minimum(imb, cf)), imb)


def block_counts(n_layers, mamba_layers=0, attention_layers=0, mlp_layers=0):
    """(attention layers, Mamba-2 layers, MLP layers) of a model: a classic model (mamba_layers = 0) has attention and
    an MLP in every layer; a hybrid has the counts it gives (Nemotron-H 8B: 4 attention, 24 Mamba-2 and 24 MLP
    layers of its 52; Falcon-H1: attention, Mamba-2 and an MLP in each of its layers)."""
    L, Lm = _f(n_layers), _f(mamba_layers)
    hybrid = Lm > 0
    return (np.where(hybrid, _f(attention_layers), L), np.where(hybrid, Lm, 0.0),
            np.where(hybrid, _f(mlp_layers), L))


def mamba_dims(d_model, mamba_heads=0, mamba_head_dim=0, mamba_state=0, mamba_groups=0, mamba_conv=0,
               mamba_chunk=0) -> dict:
    """The Mamba-2 mixer's sizes with 0 resolved (MAMBA_RESOLVED): P head width, H heads (2·d/P: expand 2, the
    reference default), d_inner = H·P, N state, G groups (of B and C), K conv kernel, Q chunk; in_proj width
    2·d_inner + 2·G·N + H ([z, x, B, C, dt], mamba2.py line 96) and the conv channels d_inner + 2·G·N (x, B, C)."""
    P = np.where(_f(mamba_head_dim) > 0, _f(mamba_head_dim), float(MAMBA_RESOLVED["mamba_head_dim"]))
    H = np.where(_f(mamba_heads) > 0, _f(mamba_heads), 2.0 * _f(d_model) / P)
    N = np.where(_f(mamba_state) > 0, _f(mamba_state), float(MAMBA_RESOLVED["mamba_state"]))
    G = np.where(_f(mamba_groups) > 0, _f(mamba_groups), float(MAMBA_RESOLVED["mamba_groups"]))
    K = np.where(_f(mamba_conv) > 0, _f(mamba_conv), float(MAMBA_RESOLVED["mamba_conv"]))
    Q = np.where(_f(mamba_chunk) > 0, _f(mamba_chunk), float(MAMBA_RESOLVED["mamba_chunk"]))
    di = H * P
    return {"P": P, "H": H, "N": N, "G": G, "K": K, "Q": Q, "d_inner": di, "in_width": 2 * di + 2 * G * N + H,
            "conv_width": di + 2 * G * N}


def mamba_mixer_params(d_model, mamba_norm=True, **dims) -> np.ndarray:
    """One Mamba-2 mixer's parameters (mamba2.py, no projection biases as every hybrid read here): in_proj
    d·(2·d_i + 2GN + H), the depthwise causal conv1d (d_i + 2GN)·K weights + as many biases, dt_bias, A_log and D
    (H each), the gated RMSNorm's d_i weights (absent in Falcon-H1: mamba_rms_norm false), out_proj d_i·d. The block's
    pre-norm is counted with the norms. Nemotron-H 8B (d 4096, H 128, P 64, N 128, G 8): 109.63M."""
    m = mamba_dims(d_model, **dims)
    h = _f(d_model)
    return (h * m["in_width"] + m["conv_width"] * (m["K"] + 1.0) + 3.0 * m["H"]
            + np.where(np.asarray(mamba_norm, dtype=bool), m["d_inner"], 0.0) + m["d_inner"] * h)


def mamba_args(a: dict) -> dict:
    """The Mamba-2 shape fields of an architecture mapping, as `mamba_dims` keywords."""
    return {k: a[k] for k in ("mamba_heads", "mamba_head_dim", "mamba_state", "mamba_groups", "mamba_conv",
                              "mamba_chunk")}


def norm_params(d_model, norm):
    """Parameters of one norm over d_model: 2h layernorm (weight + bias), h rmsnorm, 0 nonparametric."""
    n = np.asarray(norm)
    return np.select([n == "layernorm", n == "nonparametric"], [2.0, 0.0], 1.0) * _f(d_model)


def attention_parts(d_model, n_heads, n_kv_heads, head_dim=0, v_head_dim=0, attention="standard", q_lora_rank=0,
                    kv_lora_rank=0, qk_rope_head_dim=0, qk_norm="none", norm="rmsnorm", bias="none"):
    """One layer's attention projections as (in + out) sums per group, for LoRA, and the layer's parameters.

    Standard (Vaswani et al. 2017; GQA, Ainslie et al. 2023): Q h×a·d_h, K h×k·d_h, V h×k·d_v, O a·d_v×h
      [+ a·d_h + k·d_h + k·d_v biases if bias ∈ {qkv, all}] [+ h output bias if bias = all]; with d_h = d_v = h/a
      this is 2h² + 2h·kh/a.
    MLA (DeepSeek-V2 §2.1, DeepSeek-V3 config fields): queries h×r_q, an RMSNorm r_q, r_q×a·d_h (or h×a·d_h when
      r_q = 0); the compressed KV and the shared RoPE key h×(r_kv + d_r), an RMSNorm r_kv, the up-projection
      r_kv×a·(d_h − d_r + d_v) to the per-head keys (without RoPE) and values; O a·d_v×h.
    QK-norm: per_head 2·d_h (Qwen3, Gemma 3), full a·d_h + k·d_h (OLMo 2); × 2 for a layernorm (weight and bias).
    Returns {"params", "norms" (the MLA latents' and the QK-norms' weights, part of params), "q", "k", "v", "o"}
    (the last four: Σ (in + out) of the group's matrices, for `lora_params`)."""
    h, a, k = _f(d_model), _f(n_heads), _f(n_kv_heads)
    hd, vd = head_dims(d_model, n_heads, head_dim, v_head_dim)
    mla = np.asarray(attention) == "mla"
    qr, kvr, dr = _f(q_lora_rank), _f(kv_lora_rank), _f(qk_rope_head_dim)
    b = np.asarray(bias)
    qkv_bias = (b == "qkv") | (b == "all")
    all_bias = b == "all"
    nrm = np.select([np.asarray(norm) == "layernorm", np.asarray(norm) == "nonparametric"], [2.0, 0.0], 1.0)
    qkn = np.asarray(qk_norm)
    qk_norm_p = nrm * np.select([qkn == "per_head", qkn == "full"], [2 * hd, (a + k) * hd], 0.0)

    std = (h * (a * hd) + h * (k * hd) + h * (k * vd) + (a * vd) * h
           + np.where(qkv_bias, a * hd + k * hd + k * vd, 0.0) + np.where(all_bias, h, 0.0))
    q_mla = np.where(qr > 0, h * qr + qr + qr * (a * hd), h * (a * hd))
    kv_mla = h * (kvr + dr) + kvr + kvr * (a * (hd - dr + vd))
    mla_p = q_mla + kv_mla + (a * vd) * h
    params = np.where(mla, mla_p, std) + qk_norm_p
    norms = qk_norm_p + np.where(mla, np.where(qr > 0, qr, 0.0) + kvr, 0.0)
    q_io = np.where(mla & (qr > 0), (h + qr) + (qr + a * hd), h + a * hd)
    k_io = np.where(mla, (h + kvr + dr) + (kvr + a * (hd - dr + vd)), h + k * hd)
    v_io = np.where(mla, 0.0, h + k * vd)
    o_io = a * vd + h
    return {"params": params, "norms": norms, "q": q_io, "k": k_io, "v": v_io, "o": o_io}


def param_breakdown(n_layers, d_model, n_heads, n_kv_heads, d_ff, vocab_size, mlp="swiglu", norm="rmsnorm",
                    bias="none", tied_embeddings=False, position="rotary", max_position=0, n_experts=1, top_k=1,
                    dropout=None, head_dim=0, v_head_dim=0, attention="standard", q_lora_rank=0, kv_lora_rank=0,
                    qk_rope_head_dim=0, qk_norm="none", norms_per_layer=2, embedding_norm=False, moe_d_ff=0,
                    n_shared_experts=0, shared_d_ff=0, shared_expert_gate=False, n_dense_layers=0, sliding_window=0,
                    global_every=0, n_mtp_layers=0, attention_sinks=False, chunked_attention=False, mamba_layers=0,
                    attention_layers=0,
                    mlp_layers=0, mamba_heads=0, mamba_head_dim=0, mamba_state=0, mamba_groups=0, mamba_conv=0,
                    mamba_chunk=0, mamba_norm=True, mamba_parallel=False):
    """Parameter count as named parts (vectorised; arrays broadcast).

    Per layer (Vaswani et al. 2017 block; GQA as in Ainslie et al. 2023; MLA, head_dim and QK-norm: see
    `attention_parts`):
      attention = 2h² + 2h·(k·h/a) for the classic block [+ biases]
      mlp       = 2·h·f [+ f + h biases if bias = all]  for gelu (2 matrices)
                  3·h·f [+ 2f + h biases if bias = all] for swiglu / geglu (gate, up, down; GPT-OSS's experts)
      MoE layer = E routed experts of width f_e + E_s shared experts of width f_s (DeepSeekMoE, arXiv:2401.06066
                  §3; Qwen1.5/2-MoE), router h·E (Mixtral) [+ E bias if bias = all, GPT-OSS] [+ h for a
                  shared-expert gate, Qwen2-MoE]
      sinks     = n_heads learnable logits per layer with attention_sinks (GPT-OSS, arXiv:2508.10925 §2.2)
      norms     = norms_per_layer · (2h layernorm | h rmsnorm | 0 nonparametric) — 2 pre-norms (GPT, Llama), 4 with
                  Gemma 2/3's post-norms, 1 for a parallel block with one norm (Falcon 7B)
    Dense-first MoE models (DeepSeek-V3 first_k_dense_replace): the first L_d layers have a dense MLP of width f.
    Hybrid Mamba-2 models (`block_counts`): attention in attention_layers, a Mamba-2 mixer (`mamba_mixer_params`)
    in mamba_layers, an MLP or MoE block in mlp_layers of the n_layers (each with norms_per_layer norms: 1 for
    Nemotron-H, whose every layer is one mixer or one MLP with its pre-norm).
    Whole model: embedding V·h, learned positions max_position·h, [embedding LayerNorm (BLOOM)], final norm, LM head
    V·h unless tied. `active` counts top_k of the E routed experts (and every shared expert): what one token
    touches. `dropout`, `sliding_window`, `global_every` and `n_mtp_layers` are accepted (and ignored: no
    parameters; the MTP module is `mtp_breakdown`) so a model's whole field dict can be passed.
    Checked against GPT-3 175B = 174.6B (Brown et al. Table 2.1) and the presets' published counts.
    """
    L, h, f, V = _f(n_layers), _f(d_model), _f(d_ff), _f(vocab_size)
    E, topk = _f(n_experts), _f(top_k)
    gated = VE.isin(np.asarray(mlp), GATED_MLPS)
    all_bias = np.asarray(bias) == "all"
    fe, fs = moe_widths(d_ff, moe_d_ff, shared_d_ff)
    La, Lssm, Lf = block_counts(n_layers, mamba_layers, attention_layers, mlp_layers)
    Ld, Lm = layer_counts(Lf, n_experts, n_dense_layers)
    Es = _f(n_shared_experts)

    def one_mlp(width):
        return np.where(gated, 3 * h * width + np.where(all_bias, 2 * width + h, 0.0),
                        2 * h * width + np.where(all_bias, width + h, 0.0))

    attn = attention_parts(d_model, n_heads, n_kv_heads, head_dim, v_head_dim, attention, q_lora_rank, kv_lora_rank,
                           qk_rope_head_dim, qk_norm, norm, bias)["params"]
    moe = E > 1
    router = np.where(moe, h * E + np.where(all_bias, E, 0.0)
                      + np.where(np.asarray(shared_expert_gate, dtype=bool), h, 0.0), 0.0)
    sinks = np.where(np.asarray(attention_sinks, dtype=bool), _f(n_heads), 0.0)
    norm_per = norm_params(d_model, norm)
    expert = one_mlp(fe)
    parts = {
        "embedding": V * h,
        "position": np.where(np.asarray(position) == "learned", _f(max_position) * h, 0.0),
        "attention": La * (attn + sinks),
        "mamba": Lssm * mamba_mixer_params(d_model, mamba_norm, mamba_heads=mamba_heads, mamba_head_dim=mamba_head_dim,
                                           mamba_state=mamba_state, mamba_groups=mamba_groups, mamba_conv=mamba_conv,
                                           mamba_chunk=mamba_chunk),
        "mlp": Ld * one_mlp(f),
        "experts": np.where(moe, Lm * E * expert, 0.0),
        "shared_experts": np.where(moe, Lm * Es * one_mlp(fs), 0.0),
        "router": Lm * router,
        "norms": L * _f(norms_per_layer) * norm_per + norm_per
                 + np.where(np.asarray(embedding_norm, dtype=bool), norm_per, 0.0),
        "lm_head": np.where(np.asarray(tied_embeddings, dtype=bool), 0.0, V * h),
    }
    total = sum(parts.values())
    active = total - np.where(moe, Lm * (E - topk) * expert, 0.0)
    return {**parts, "total": total, "active": active}


def arch_columns(c) -> dict:
    """The architecture fields of a mapping of columns (a Model's `arch()`, `evaluate`'s inputs, a sweep chunk),
    the issue-12 fields filled with their "off" values where absent."""
    return {k: c[k] if k in c else ARCH_DEFAULTS[k] for k in ARCH_FIELDS}


def mtp_breakdown(**arch) -> dict:
    """Multi-token prediction modules (DeepSeek-V3, arXiv:2412.19437 §2.2): each is one more transformer block (an
    MoE block when the model's layers are MoE), a projection of [h; embedding] 2h×h and three RMSNorms (the two
    inputs', and the shared output head's); the embedding and the output head are shared with the main model and
    not counted again. Returns {"mtp": total, "mtp_active": per token, "mtp_experts": its routed experts, which
    expert parallelism splits as any MoE block's} (0 without MTP modules). The checkpoint on
    Hugging Face also stores a copy of the embedding and of the head per module, which training does not need."""
    a = arch_columns(arch)
    n = _f(a["n_mtp_layers"])
    one = param_breakdown(**{**a, "n_layers": 1, "n_dense_layers": 0, "vocab_size": 0, "tied_embeddings": True,
                             "embedding_norm": False, "position": "rotary"})
    norm_per = norm_params(a["d_model"], a["norm"])
    # a 1-layer model's count is its block plus one final norm; the module has 3 norms of its own
    extra = 2 * _f(a["d_model"]) ** 2 + 2 * norm_per
    return {"mtp": n * (one["total"] + extra), "mtp_active": n * (one["active"] + extra),
            "mtp_experts": n * np.where(_f(a["n_experts"]) > 1, one["experts"], 0.0)}


def lora_params(rank, targets, active=False, **arch):
    """LoRA adapter parameters (Hu et al. 2021 §4.1): a frozen d_in×d_out matrix W gets B·A with A r×d_in and B
    d_out×r, r·(d_in + d_out) parameters. `targets`: qv (W_q and W_v, the LoRA paper's choice; MLA: the query path
    and the KV down- and up-projections, which make K and V together), attention (Q, K, V, O), all (also every MLP
    matrix: QLoRA §4, Dettmers et al. 2023 — each routed and shared expert's, not the router — and a Mamba-2 mixer's
    in_proj and out_proj, as Megatron-Bridge's Nemotron-H targets). `active`: the adapters one token uses (top_k of
    the routed experts'). Vectorised; MTP modules carry none."""
    a = arch_columns(arch)
    La, Lssm, Lf = block_counts(a["n_layers"], a["mamba_layers"], a["attention_layers"], a["mlp_layers"])
    h = _f(a["d_model"])
    p = attention_parts(a["d_model"], a["n_heads"], a["n_kv_heads"], a["head_dim"], a["v_head_dim"], a["attention"],
                        a["q_lora_rank"], a["kv_lora_rank"], a["qk_rope_head_dim"], a["qk_norm"], a["norm"], a["bias"])
    t = np.asarray(targets)
    mla = np.asarray(a["attention"]) == "mla"
    qv = p["q"] + np.where(mla, p["k"], p["v"])
    attn = np.where(t == "qv", qv, p["q"] + p["k"] + p["v"] + p["o"])
    n_mat = np.where(VE.isin(np.asarray(a["mlp"]), GATED_MLPS), 3.0, 2.0)
    fe, fs = moe_widths(a["d_ff"], a["moe_d_ff"], a["shared_d_ff"])
    Ld, Lm = layer_counts(Lf, a["n_experts"], a["n_dense_layers"])
    E = _f(a["n_experts"])
    routed = np.where(active, _f(a["top_k"]), E)
    moe_mlp = np.where(E > 1, routed * n_mat * (h + fe) + _f(a["n_shared_experts"]) * n_mat * (h + fs), 0.0)
    mlp = np.where(t == "all", Ld * n_mat * (h + _f(a["d_ff"])) + Lm * moe_mlp, 0.0)
    dm = mamba_dims(a["d_model"], **mamba_args(a))
    ssm = np.where(t == "all", Lssm * ((h + dm["in_width"]) + (dm["d_inner"] + h)), 0.0)
    return _f(rank) * (La * attn + mlp + ssm)


def block_linear_params(**arch):
    """Parameters of the blocks' linear layers (attention projections, MLPs, experts; not the router, the norms,
    the embedding or the LM head): what a 4-bit or 8-bit base quantises (bitsandbytes keeps the rest 16-bit)."""
    a = arch_columns(arch)
    pb = param_breakdown(**a)
    attn = attention_parts(a["d_model"], a["n_heads"], a["n_kv_heads"], a["head_dim"], a["v_head_dim"], a["attention"],
                           a["q_lora_rank"], a["kv_lora_rank"], a["qk_rope_head_dim"], a["qk_norm"], a["norm"],
                           a["bias"])
    La, Lssm, _ = block_counts(a["n_layers"], a["mamba_layers"], a["attention_layers"], a["mlp_layers"])
    dm = mamba_dims(a["d_model"], **mamba_args(a))
    ssm = Lssm * _f(a["d_model"]) * (dm["in_width"] + dm["d_inner"])  # in_proj and out_proj
    return (pb["attention"] - La * attn["norms"]) + pb["mlp"] + pb["experts"] + pb["shared_experts"] + ssm


def unit_params(**arch) -> dict:
    """Sizes that gathered-parameter buffers follow (ZeRO-3 / FSDP), in parameters:
    largest_layer = the largest single module's own parameters (DeepSpeed's `model_to_params`: the embedding or LM
      head table, or the largest projection or expert matrix; experts as separate modules);
    largest_linear = the largest matrix inside a block (what a quantised base dequantises at a time);
    block = the largest transformer block (FSDP's usual unit: one decoder layer with all its experts);
    block_experts = the routed experts' parameters inside that block (0 for a dense model): with expert parallelism a
      rank gathers only its own experts' share of them (core/estimate.py);
    block_dense = a dense (non-MoE) block where the model has one (DeepSeek's first layers), the floor of that unit;
    root = what the root unit keeps (embedding, learned positions, final and embedding norms, an untied LM head)."""
    a = arch_columns(arch)
    h, f, V = _f(a["d_model"]), _f(a["d_ff"]), _f(a["vocab_size"])
    hd, vd = head_dims(a["d_model"], a["n_heads"], a["head_dim"], a["v_head_dim"])
    an, kn = _f(a["n_heads"]), _f(a["n_kv_heads"])
    fe, fs = moe_widths(a["d_ff"], a["moe_d_ff"], a["shared_d_ff"])
    E = _f(a["n_experts"])
    mla = np.asarray(a["attention"]) == "mla"
    qr, kvr, dr = _f(a["q_lora_rank"]), _f(a["kv_lora_rank"]), _f(a["qk_rope_head_dim"])
    La, Lssm, Lf = block_counts(a["n_layers"], a["mamba_layers"], a["attention_layers"], a["mlp_layers"])
    Ld, Lm = layer_counts(Lf, a["n_experts"], a["n_dense_layers"])
    dm = mamba_dims(a["d_model"], **mamba_args(a))
    std = ~mla
    mats = [V * h, np.where(std, h * an * hd, 0.0), np.where(std, h * kn * vd, 0.0), an * vd * h,
            h * np.where(Ld > 0, f, 0.0), h * np.where(Lm > 0, fe, 0.0),
            h * np.where(Lm > 0, fs * _f(a["n_shared_experts"]), 0.0), h * np.where(Lm > 0, E, 0.0),
            np.where(mla, np.maximum(np.where(qr > 0, np.maximum(h * qr, qr * an * hd), h * an * hd),
                                     np.maximum(h * (kvr + dr), kvr * an * (hd - dr + vd))), 0.0),
            np.where(Lssm > 0, h * dm["in_width"], 0.0), np.where(Lssm > 0, dm["d_inner"] * h, 0.0),
            np.where(np.asarray(a["position"]) == "learned", _f(a["max_position"]) * h, 0.0)]
    largest = mats[0]
    for m in mats[1:]:
        largest = np.maximum(largest, m)
    linear = mats[1]
    for m in mats[2:-1]:  # every matrix inside a block: not the vocabulary table (first), not the positions (last)
        linear = np.maximum(linear, m)
    one = {**a, "n_layers": 1, "vocab_size": 0, "tied_embeddings": True, "embedding_norm": False,
           "position": "rotary", "mamba_layers": 0}
    norm_per = norm_params(a["d_model"], a["norm"])
    pd_ = param_breakdown(**{**one, "n_experts": 1, "top_k": 1})
    pm_ = param_breakdown(**{**one, "n_dense_layers": 0})
    dense_block = pd_["total"] - norm_per
    moe_block = pm_["total"] - norm_per
    block = np.maximum(np.where(Ld > 0, dense_block, 0.0), np.where(Lm > 0, moe_block, 0.0))
    # a hybrid's layers differ: its largest mixer (attention, Mamba-2, or both side by side) and its largest MLP or
    # MoE block, together where some layers carry a mixer and an MLP (Granite 4, Falcon-H1), else apart (Nemotron-H)
    par = np.asarray(a["mamba_parallel"], dtype=bool)
    ssm_u = mamba_mixer_params(a["d_model"], a["mamba_norm"], **mamba_args(a))
    attn_u = np.where(La > 0, pd_["attention"], 0.0)
    mixer = np.where(par, attn_u + ssm_u, np.maximum(attn_u, np.where(Lssm > 0, ssm_u, 0.0)))
    mlp_u = np.maximum(np.where(Ld > 0, pd_["mlp"], 0.0),
                       np.where(Lm > 0, pm_["experts"] + pm_["shared_experts"] + pm_["router"], 0.0))
    npl = _f(a["norms_per_layer"])
    both = np.where(par, np.maximum(La, Lssm), La + Lssm) + Lf > _f(a["n_layers"])
    hybrid_block = np.where(both, mixer + mlp_u + npl * norm_per, np.maximum(mixer, mlp_u) + npl * norm_per)
    block = np.where(Lssm > 0, hybrid_block, block)
    pb = param_breakdown(**a)
    root = pb["embedding"] + pb["position"] + pb["lm_head"] + norm_per * np.where(
        np.asarray(a["embedding_norm"], dtype=bool), 2.0, 1.0)
    block_experts = np.where((Lm > 0) & (Lssm <= 0) & (block == np.where(Lm > 0, moe_block, 0.0)), pm_["experts"],
                             0.0)
    block_dense = np.where((Ld > 0) & (Lssm <= 0), dense_block, 0.0)
    return {"largest_layer": largest, "largest_linear": linear, "block": block, "block_experts": block_experts,
            "block_dense": block_dense, "root": root}


# GPT-like shapes used when only a parameter count is given (raw-N mode, as in seed 002's calculator):
# Brown et al. 2020 (GPT-3) Table 2.1 — n_layers, d_model, n_heads — with d_ff = 4h and vocab 50257.
GPT3_SHAPES = (
    ("gpt-3-small", 12, 768, 12), ("gpt-3-medium", 24, 1024, 16), ("gpt-3-large", 24, 1536, 16),
    ("gpt-3-xl", 24, 2048, 16), ("gpt-3-2.7b", 32, 2560, 32), ("gpt-3-6.7b", 32, 4096, 32),
    ("gpt-3-13b", 40, 5120, 40), ("gpt-3-175b", 96, 12288, 96),
)


@dataclass(frozen=True)
class Model:
    """A frozen, validated model description. `n_params_override` > 0 means raw-N mode:
    the state is priced from that count while activations use the (documented) shape fields."""

    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int = 0  # 0 -> same as n_heads
    d_ff: int = 0  # 0 -> 4·d_model
    vocab_size: int = 50257
    mlp: str = "gelu"
    norm: str = "layernorm"
    bias: str = "all"
    dropout: bool = True
    tied_embeddings: bool = True
    position: str = "learned"
    max_position: int = 2048
    n_experts: int = 1
    top_k: int = 1
    # issue 12 (every default is "off": a model that does not set them is the classic block)
    head_dim: int = 0  # 0 -> d_model / n_heads (query/key width per head; MLA: nope + rope part)
    v_head_dim: int = 0  # 0 -> head_dim
    attention: str = "standard"  # standard (MHA/GQA/MQA) | mla
    q_lora_rank: int = 0  # MLA: query compression rank (0: no compression, DeepSeek-V2-Lite)
    kv_lora_rank: int = 0  # MLA: compressed KV width
    qk_rope_head_dim: int = 0  # MLA: the decoupled RoPE part of head_dim (one shared key)
    qk_norm: str = "none"  # none | per_head | full
    norms_per_layer: int = 2  # 1, 2 or 4
    embedding_norm: bool = False  # LayerNorm after the embedding (BLOOM)
    moe_d_ff: int = 0  # routed expert width (0 -> d_ff)
    n_shared_experts: int = 0  # experts every token uses (DeepSeekMoE, Qwen2-MoE)
    shared_d_ff: int = 0  # each shared expert's width (0 -> moe_d_ff)
    shared_expert_gate: bool = False  # a sigmoid gate h->1 on the shared expert (Qwen2-MoE)
    n_dense_layers: int = 0  # MoE: the first layers are dense, width d_ff (DeepSeek first_k_dense_replace)
    sliding_window: int = 0  # attention window in tokens (0: none)
    global_every: int = 0  # with a window: every k-th layer attends globally (Gemma 2: 2, Gemma 3: 6; 0: none)
    n_mtp_layers: int = 0  # multi-token prediction modules (DeepSeek-V3: 1), counted apart from the model
    attention_sinks: bool = False  # a learnable logit per head in the softmax's denominator (GPT-OSS)
    chunked_attention: bool = False  # the window is a chunk: block-diagonal causal chunks (Llama 4), not a sliding band
    # hybrid Mamba-2 (issue 19; MAMBA_FIELDS): with mamba_layers = 0 every layer is attention + MLP
    mamba_layers: int = 0  # layers with a Mamba-2 mixer
    attention_layers: int = 0  # with mamba_layers > 0: layers with attention
    mlp_layers: int = 0  # with mamba_layers > 0: layers with an MLP (or MoE) block
    mamba_heads: int = 0  # H (0: 2·d_model / head_dim)
    mamba_head_dim: int = 0  # P (0: 64)
    mamba_state: int = 0  # N, the SSM state per head channel (0: 128)
    mamba_groups: int = 0  # G, groups sharing B and C (0: 1)
    mamba_conv: int = 0  # K, the causal conv1d kernel (0: 4)
    mamba_chunk: int = 0  # Q, the SSD chunk (0: 128)
    mamba_norm: bool = True  # the gated RMSNorm before out_proj (Falcon-H1: none)
    mamba_parallel: bool = False  # the Mamba-2 mixer runs beside attention on the same normed input (Falcon-H1)
    name: str = "custom"
    n_params_override: float = 0.0
    shape_note: str = ""

    def __post_init__(self):
        if self.n_kv_heads == 0:
            object.__setattr__(self, "n_kv_heads", self.n_heads)
        if self.d_ff == 0:
            object.__setattr__(self, "d_ff", 4 * self.d_model)
        for f in ("n_layers", "d_model", "n_heads", "n_kv_heads", "d_ff", "vocab_size", "n_experts", "top_k"):
            _check_int(f, getattr(self, f), minimum=1)
        _check_int("max_position", self.max_position, minimum=0)
        for f in _INT_ARCH:
            _check_int(f, getattr(self, f), minimum=0)
        if self.d_model % self.n_heads:  # kept with head_dim too (the sweep engine's array checks are the same)
            raise ValueError(f"d_model: {self.d_model} is not divisible by n_heads={self.n_heads}")
        if self.n_kv_heads > self.n_heads or self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_kv_heads: {self.n_kv_heads} must divide n_heads={self.n_heads}")
        if self.top_k > self.n_experts:
            raise ValueError(f"top_k: {self.top_k} exceeds n_experts={self.n_experts}")
        for f, allowed in (("mlp", MLP_KINDS), ("norm", NORM_KINDS), ("bias", BIAS_KINDS),
                           ("position", POSITION_KINDS), ("attention", ATTENTION_KINDS), ("qk_norm", QK_NORMS)):
            if getattr(self, f) not in allowed:
                raise ValueError(f"{f}: {getattr(self, f)!r} is not one of {', '.join(allowed)}")
        for f in ("dropout", "tied_embeddings", "embedding_norm", "shared_expert_gate", "attention_sinks", "mamba_norm",
                  "mamba_parallel", "chunked_attention"):
            if not isinstance(getattr(self, f), (bool, np.bool_)):
                raise ValueError(f"{f}: expected true/false, got {getattr(self, f)!r}")
        if not isinstance(self.n_params_override, (int, float)) or not math.isfinite(self.n_params_override) \
                or self.n_params_override < 0:
            raise ValueError(f"n_params: must be a positive number, got {self.n_params_override!r}")
        msg = arch_problem(**self.arch())
        if msg:
            raise ValueError(msg)

    def arch(self) -> dict:
        """The architecture fields as a dict (the CLI/JSON vocabulary)."""
        return {f: getattr(self, f) for f in ARCH_FIELDS}

    def params(self) -> dict:
        """Named parts + total + active, as Python floats."""
        return {k: float(v) for k, v in param_breakdown(**self.arch()).items()}

    def mtp_params(self) -> dict:
        """The multi-token-prediction modules' parameters (`mtp_breakdown`), apart from `params()`."""
        return {k: float(v) for k, v in mtp_breakdown(**self.arch()).items()}

    @property
    def attention_kind(self) -> str:
        """MHA, GQA, MQA or MLA, for display."""
        if self.attention == "mla":
            return "MLA"
        return "MHA" if self.n_kv_heads == self.n_heads else "MQA" if self.n_kv_heads == 1 else "GQA"

    @property
    def n_params(self) -> float:
        return self.n_params_override or self.params()["total"]

    @property
    def n_active_params(self) -> float:
        if self.n_params_override:
            return self.n_params_override
        return self.params()["active"]

    def with_overrides(self, **kw) -> "Model":
        """A copy with some architecture fields replaced (validated again)."""
        unknown = set(kw) - {f.name for f in fields(self)}
        if unknown:
            raise ValueError(f"{sorted(unknown)[0]}: not a model field; known: {', '.join(ARCH_FIELDS)}")
        # derived defaults follow their base field: multi-head attention stays multi-head when n_heads changes,
        # and a 4h MLP stays 4h when d_model changes (unless given explicitly)
        if "n_heads" in kw and "n_kv_heads" not in kw and self.n_kv_heads == self.n_heads:
            kw["n_kv_heads"] = kw["n_heads"]
        if "d_model" in kw and "d_ff" not in kw and self.d_ff == 4 * self.d_model:
            kw["d_ff"] = 4 * kw["d_model"]
        if any(k in ARCH_FIELDS for k in kw) and "name" not in kw:
            kw["name"] = f"{self.name} (modified)"
        new = replace(self, **kw)
        if new.n_params_override and any(k in ARCH_FIELDS for k in kw) and "shape_note" not in kw:
            changed = ", ".join(f"{k}={kw[k]}" for k in ARCH_FIELDS if k in kw)
            new = replace(new, shape_note=f"{self.shape_note}; overridden: {changed}")
        return new


# The consistency rules of the issue-12 fields: (field, message), one owner for the scalar check below and the
# vectorised rules of `core.inputs` (so a sweep's invalid row and a refused point say the same words).
ARCH_RULES = {
    "mla_only": ("q_lora_rank/kv_lora_rank/qk_rope_head_dim", "only with attention=mla"),
    "kv_rank": ("kv_lora_rank", "attention=mla needs the compressed KV width (≥ 1)"),
    "rope": ("qk_rope_head_dim", "must be smaller than head_dim"),
    "mla_qk_norm": ("qk_norm", "not with attention=mla (its latents are normalised instead)"),
    "norms": ("norms_per_layer", "must be 1, 2 or 4"),
    "shared": ("shared_expert_gate/shared_d_ff", "need n_shared_experts ≥ 1"),
    "window": ("global_every", "needs a sliding_window (the other layers' window)"),
    "hybrid_counts": ("attention_layers/mlp_layers/mamba_layers", "each at most n_layers, and every layer has a "
                      "mixer (attention or Mamba-2) or an MLP"),
    "mamba_shape": ("mamba_heads/mamba_groups", "mamba_groups must divide mamba_heads"),
    "mamba_parallel": ("mamba_parallel", "a Mamba-2 mixer beside attention needs as many attention layers"),
}


def arch_problem(**arch) -> str:
    """The first inconsistency among the issue-12 fields of one model, as 'field: message (values)', or '' (the
    scalar form of the rules `core.inputs` checks over arrays, from the same `ARCH_RULES`). Fields that only qualify
    another are ignored, not refused, where that other makes them moot — so overriding a classic field never
    refuses a preset: the MoE fields (moe_d_ff, shared experts, n_dense_layers) apply only with n_experts > 1
    (n_dense_layers ≥ n_layers: every layer dense), and MLA has a key and value per head whatever n_kv_heads says."""
    a = arch_columns(arch)
    mla = a["attention"] == "mla"
    hd = a["head_dim"] or (a["d_model"] / a["n_heads"])

    def say(rule, detail):
        field, message = ARCH_RULES[rule]
        return f"{field}: {message} ({detail})"
    if not mla:
        for f in ("q_lora_rank", "kv_lora_rank", "qk_rope_head_dim"):
            if a[f]:
                return say("mla_only", f"{f}={a[f]} with attention={a['attention']}")
    else:
        if a["kv_lora_rank"] < 1:
            return say("kv_rank", f"kv_lora_rank={a['kv_lora_rank']}")
        if a["qk_rope_head_dim"] >= hd:
            return say("rope", f"{a['qk_rope_head_dim']} ≥ head_dim {hd:g}")
        if a["qk_norm"] != "none":
            return say("mla_qk_norm", f"qk_norm={a['qk_norm']}")
    if a["norms_per_layer"] not in NORMS_PER_LAYER:
        return say("norms", f"got {a['norms_per_layer']}")
    if (a["shared_expert_gate"] or a["shared_d_ff"]) and not a["n_shared_experts"]:
        return say("shared", f"n_shared_experts={a['n_shared_experts']}")
    if a["global_every"] and not a["sliding_window"]:
        return say("window", f"global_every={a['global_every']}, sliding_window=0")
    if a["mamba_layers"]:
        L, la, lm, lf = a["n_layers"], a["attention_layers"], a["mamba_layers"], a["mlp_layers"]
        mixers = max(la, lm) if a["mamba_parallel"] else la + lm  # layers with a mixer (one each unless parallel)
        if max(la, lm, lf) > L or mixers > L or mixers + lf < L:
            return say("hybrid_counts", f"n_layers={L}, attention_layers={la}, mamba_layers={lm}, mlp_layers={lf}")
        dm = mamba_dims(a["d_model"], **mamba_args(a))
        if float(dm["H"]) % float(dm["G"]) or float(dm["H"]) != int(dm["H"]):
            return say("mamba_shape", f"mamba_heads={float(dm['H']):g}, mamba_groups={float(dm['G']):g}")
        if a["mamba_parallel"] and la < lm:
            return say("mamba_parallel", f"attention_layers={la} < mamba_layers={lm}")
    return ""


def _check_int(name, v, minimum):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum or v > 2**31 - 1:
        raise ValueError(f"{name}: must be an integer from {minimum} to {2**31 - 1:,}, got {v!r}")


def _bool(s: str) -> bool:
    return s.strip().lower() in ("true", "1", "yes")


@lru_cache(maxsize=1)
def _preset_rows() -> dict[str, dict]:
    with open(DATA_DIR / "models.csv", newline="") as fh:
        return {r["name"]: r for r in csv.DictReader(fh)}


def preset_names() -> list[str]:
    return list(_preset_rows())


def preset_info(name: str) -> dict:
    """The catalog row (label, published counts, source) for a preset."""
    get_preset(name)
    return dict(_preset_rows()[name])


@lru_cache(maxsize=64)
def get_preset(name: str) -> Model:
    """A preset by name; an unknown name is an error listing the known ones."""
    rows = _preset_rows()
    if not isinstance(name, str) or name not in rows:
        raise ValueError(f"model: unknown preset {name!r}; known: {', '.join(rows)}")
    r = rows[name]
    ints = ("n_layers", "d_model", "n_heads", "n_kv_heads", "d_ff", "vocab_size", "max_position", "n_experts",
            "top_k")
    return Model(**{k: int(r[k]) for k in ints}, mlp=r["mlp"], norm=r["norm"], bias=r["bias"],
                 dropout=_bool(r["dropout"]), tied_embeddings=_bool(r["tied_embeddings"]), position=r["position"],
                 name=name, **_arch_cell(name, r.get("arch")))


def _arch_cell(name: str, cell: str | None) -> dict:
    """The catalog's `arch` column: the issue-12 fields a preset sets, as space-separated key=value pairs
    (head_dim=256 norms_per_layer=4); a row without the column, or with it empty, sets none."""
    out = {}
    for item in (cell or "").split():
        k, _, v = item.partition("=")
        if k not in ARCH_DEFAULTS:
            raise ValueError(f"model: preset {name!r} sets {k!r}, not an architecture field")
        d = ARCH_DEFAULTS[k]
        out[k] = _bool(v) if isinstance(d, bool) else int(v) if isinstance(d, int) else v
    return out


def raw_model(n_params: float) -> Model:
    """Raw-N mode: only a parameter count. The activation shape is the GPT-3 Table 2.1 row whose
    own count is nearest in log space (GPT block: layernorm, GeLU 4h MLP, dropout, vocab 50257);
    the state is priced from `n_params` exactly. `shape_note` says which shape was picked."""
    if isinstance(n_params, bool) or not isinstance(n_params, (int, float)) or not math.isfinite(n_params) \
            or n_params <= 0:
        raise ValueError(f"n_params: must be a positive number, got {n_params!r}")
    best = None
    for label, L, h, a in GPT3_SHAPES:
        m = Model(n_layers=L, d_model=h, n_heads=a)
        d = abs(math.log(m.n_params / n_params))
        if best is None or d < best[0]:
            best = (d, label, m)
    _, label, m = best
    note = (f"raw N = {n_params:.4g}; activation shape from GPT-3 Table 2.1 '{label}' "
            f"(L={m.n_layers}, h={m.d_model}, a={m.n_heads}, d_ff=4h, vocab 50257)")
    return replace(m, name=raw_labels([n_params])[0], n_params_override=float(n_params), shape_note=note)


def raw_labels(counts) -> list[str]:
    """Labels of raw-N models shown together (a sweep's model column): "raw-" and the count to 3 significant digits
    (raw-7e+09, the name `raw_model` gives), with as many more digits as it takes to tell apart counts that would
    share a label (7e9, 7.001e9, 7.004e9 → raw-7e+09, raw-7.001e+09, raw-7.004e+09). Equal counts share one."""
    counts = [float(c) for c in counts]
    digits = [3] * len(counts)
    while True:
        labels = [f"{c:.{d}g}" for c, d in zip(counts, digits)]
        owners: dict = {}
        for i, text in enumerate(labels):
            owners.setdefault(text, set()).add(counts[i])
        clash = [i for i, text in enumerate(labels) if len(owners[text]) > 1 and digits[i] < 17]
        if not clash:
            return ["raw-" + text for text in labels]
        for i in clash:
            digits[i] += 1


HF_NAME_CHARS = 200  # a config's _name_or_path or file stem, as the model's label


def _short(v) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def from_hf_config(path_or_dict, bounds: dict | None = None) -> Model:
    """Build a Model from a Hugging Face config.json (a local file path or an already-parsed dict).

    Recognises the model types in `HF_MODEL_TYPES` (llama, mistral, mixtral, qwen2/qwen3 and their MoE, gemma,
    gemma2, gemma3_text, deepseek_v2/v3, phi3, olmo, olmo2, gpt2, gpt_neox, bloom, falcon), each with its library
    defaults for absent fields (`_hf_fields`); a model type not in the list, or a feature of a listed one that the
    fields cannot express (a multimodal config, a gated MLP with biases, MoE on every k-th layer, ...), is refused
    by name, never approximated. What is read by convention is said in the model's `shape_note`. No network access. A file is read through `core.safejson` (at most
    1 MiB, nesting bounded, finite numbers). `bounds` maps model fields (`d_model`, …) to inclusive (lo, hi)
    limits, for a caller whose inputs are narrower than the model's own 1 to 2^31−1 (an app's widgets); a value
    outside is refused with a message naming the config's field and the model's."""
    from . import safejson
    if isinstance(path_or_dict, dict):
        c = path_or_dict
        name = c.get("_name_or_path") or c.get("model_type") or "hf-config"
    elif not isinstance(path_or_dict, (str, Path)):
        raise ValueError(f"config: expected a path or a JSON object, got {type(path_or_dict).__name__}")
    else:
        p = Path(path_or_dict)
        c = safejson.loads(safejson.read(p, "config"), "config")  # bounded: size, nesting, finite numbers
        name = p.stem
    if not isinstance(c, dict):
        raise ValueError("config: a Hugging Face config.json must be a JSON object")
    name = str(name)[:HF_NAME_CHARS]
    c = _Tracked(c)  # which fields the model type's reader looks at: the structural ones it does not are refused

    def get(*keys, default=None):
        for k in keys:
            if k in c and c[k] is not None:
                return c[k]
        if default is None:
            raise ValueError(f"config: missing field {keys[0]!r} in the Hugging Face config")
        return default

    def geti(field, *keys, default=None):
        v = get(*keys, default=default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v != int(v):
            raise ValueError(f"config: field {keys[0]!r} must be an integer, got {_short(v)}")
        lo, hi = (bounds or {}).get(field, (0 if field == "max_position" else 1, 2**31 - 1))
        if not lo <= v <= hi:
            given = any(k in c and c[k] is not None for k in keys)
            what = f"field {keys[0]!r}" if given else f"{field} (derived: no {keys[0]!r} field)"
            raise ValueError(f"config: {what} = {int(v):,} is outside the {lo:,} to {hi:,} accepted for {field}")
        return int(v)

    def getf(*keys, default=None):
        v = get(*keys, default=default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"config: field {keys[0]!r} must be a number, got {_short(v)}")
        return float(v)

    def getb(*keys, default=False):
        v = get(*keys, default=default)
        if not isinstance(v, bool):
            raise ValueError(f"config: field {keys[0]!r} must be true or false, got {_short(v)}")
        return v

    mt = c.get("model_type")
    if not isinstance(mt, str) or not mt:
        raise ValueError("config: missing field 'model_type' in the Hugging Face config (it names the "
                         "architecture); recognised model types: " + ", ".join(HF_MODEL_TYPES))
    mt = mt.lower()
    if mt == "gemma3" or (mt not in HF_MODEL_TYPES and isinstance(c.get("text_config"), dict)):
        raise ValueError(f"config: model_type {mt!r} is multimodal (vision_config: its vision tower is not "
                         "modelled); import its 'text_config' (the language model) instead")
    if mt not in HF_MODEL_TYPES:
        raise ValueError(f"config: model_type {mt!r} is not recognised; recognised: {', '.join(HF_MODEL_TYPES)}")
    read = c.read_keys if isinstance(c, _Tracked) else set()
    kw, notes = _hf_fields(mt, c, get, geti, getf, getb)
    _refuse_unread(mt, c, read)
    h, a = kw["d_model"], kw["n_heads"]
    hd = kw.get("head_dim", 0)
    if hd and h % a == 0 and hd == h // a and kw.get("attention", "standard") == "standard":
        kw["head_dim"] = 0  # the classic h / a: stored as "follow d_model", as a preset would be
    return Model(**kw, name=name, shape_note="; ".join(notes))


class _Tracked(dict):
    """A config dict that records which keys were looked at (get, [], in)."""

    def __init__(self, d):
        super().__init__(d)
        self.read_keys: set = set()

    def get(self, k, default=None):
        self.read_keys.add(k)
        return super().get(k, default)

    def __getitem__(self, k):
        self.read_keys.add(k)
        return super().__getitem__(k)

    def __contains__(self, k):
        self.read_keys.add(k)
        return super().__contains__(k)


# Config fields that change a model's structure (experts, windows, chunked attention, latent attention, state-space
# layers, hybrid patterns, multi-token prediction, sinks): one that the model type's reader did not look at, set to
# something other than "off", is refused by name — a llama config.json with num_local_experts is not a dense Llama.
HF_STRUCTURAL = ("num_local_experts", "num_experts", "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
                 "n_shared_experts", "shared_expert_intermediate_size", "moe_layer_freq", "first_k_dense_replace",
                 "decoder_sparse_step", "mlp_only_layers", "interleave_moe_layer_step", "moe_layers",
                 "intermediate_size_mlp", "sliding_window", "layer_types", "use_sliding_window",
                 "sliding_window_pattern", "attention_chunk_size", "no_rope_layers", "q_lora_rank", "kv_lora_rank",
                 "qk_rope_head_dim", "v_head_dim", "num_nextn_predict_layers", "hybrid_override_pattern",
                 "layers_block_type", "attn_layer_indices", "attn_layer_period", "expert_layer_period",
                 "mamba_d_state", "mamba_expand", "mamba_n_heads", "ssm_state_size", "use_qk_norm", "qk_layernorm",
                 "num_attention_sinks", "cross_attention_layers", "vision_config", "text_config", "audio_config")
_OFF_COUNTS = {"num_local_experts", "num_experts", "n_routed_experts", "num_experts_per_tok", "moe_layer_freq",
               "decoder_sparse_step", "interleave_moe_layer_step", "num_nextn_predict_layers"}


def _refuse_unread(mt: str, c: dict, read: set) -> None:
    """Refuse a structural field (HF_STRUCTURAL) the reader of `mt` did not look at, unless it is "off"."""
    for k in HF_STRUCTURAL:
        if k in read or not dict.__contains__(c, k):
            continue
        v = dict.__getitem__(c, k)
        if v in (None, False, 0, "", [], {}) or (k in _OFF_COUNTS and v == 1):
            continue
        raise ValueError(f"config: field {k!r} = {_short(v)} is not read for model_type {mt!r}: the import cannot "
                         "express it, so the model would be counted without it; use its own model_type (e.g. "
                         "mixtral for experts), a preset, or the architecture fields")


# Hugging Face model types the importer reads, each with its library defaults (transformers' configuration classes)
HF_MODEL_TYPES = ("llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2",
                  "gemma3_text", "deepseek_v2", "deepseek_v3", "phi3", "olmo", "olmo2", "gpt2", "gpt_neox", "bloom",
                  "falcon", "gpt_oss", "llama4_text", "nemotron_h")
_SILU = ("silu", "swish")


def _gated(act: str, field: str = "hidden_act") -> str:
    """A gated MLP's kind from its activation: swiglu (SiLU), geglu (any GeLU variant); anything else refused."""
    a = act.lower()
    if a in _SILU:
        return "swiglu"
    if "gelu" in a:
        return "geglu"
    raise ValueError(f"config: {field} {act!r}: a gated MLP with this activation is not modelled (silu or gelu)")


def _window_pattern(mt, c, n_layers, sliding, default_every):
    """(sliding_window, global_every) from a config's window and its layer pattern: `layer_types` (newer
    transformers: 'sliding_attention' / 'full_attention' per layer), else `sliding_window_pattern` (Gemma 3: every
    k-th layer global), else the type's fixed pattern (Gemma 2 alternates: every 2nd). A pattern that is not "every
    k-th layer global" is refused by name."""
    types = c.get("layer_types")
    c.get("sliding_window_pattern")  # read either way: layer_types, when given, is the pattern that counts
    if types is not None:
        if not isinstance(types, list) or len(types) != n_layers or not all(
                t in ("sliding_attention", "full_attention") for t in types):
            raise ValueError(f"config: layer_types must list 'sliding_attention' or 'full_attention' for each of "
                             f"the {n_layers} layers")
        glob = [i for i, t in enumerate(types) if t == "full_attention"]
        if not glob:
            return sliding, 0
        if len(glob) == n_layers:
            return 0, 0
        k = glob[0] + 1
        if glob != list(range(k - 1, n_layers, k)):
            raise ValueError("config: layer_types: global layers that are not every k-th layer are not modelled "
                             f"(global at {glob[:6]}…)")
        return sliding, k
    k = c.get("sliding_window_pattern", default_every)
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"config: field 'sliding_window_pattern' must be an integer, got {_short(k)}")
    return sliding, k


NEMOTRON_H_LAYERS = {"M": "Mamba-2 mixer", "*": "self-attention", "-": "MLP", "E": "MoE"}


def _nemotron_h(c, get, geti, getb, kw, notes):
    """A nemotron_h config.json (Nemotron-H 4B/8B/47B/56B, Nemotron 3): `hybrid_override_pattern` gives one character
    per layer (M Mamba-2, * attention, - MLP, E MoE; each layer one block with its pre-norm), squared-ReLU MLPs, no
    position embedding, Mamba-2 mixers of mamba_num_heads × mamba_head_dim with ssm_state_size and n_groups. Fields as
    NVIDIA-NeMo/Megatron-Bridge models/nemotronh/nemotron_h_bridge.py maps them."""
    L = kw["n_layers"]
    pat = get("hybrid_override_pattern")
    if not isinstance(pat, str) or len(pat) != L or set(pat) - set(NEMOTRON_H_LAYERS):
        raise ValueError(f"config: hybrid_override_pattern must be {L} characters of "
                         + ", ".join(f"{k} ({v})" for k, v in NEMOTRON_H_LAYERS.items()) + f", got {_short(pat)}")
    n = {k: pat.count(k) for k in NEMOTRON_H_LAYERS}
    if n["-"] and n["E"]:
        raise ValueError("config: hybrid_override_pattern mixes dense MLP (-) and MoE (E) layers: not modelled "
                         "(one MLP kind per model)")
    act = str(get("mlp_hidden_act", "hidden_act", default="relu2")).lower()
    if act != "relu2":
        raise ValueError(f"config: mlp_hidden_act {act!r}: Nemotron-H's MLPs are modelled as squared ReLU (relu2)")
    for f in ("use_bias", "mlp_bias", "mamba_proj_bias"):
        if getb(f, default=False):
            raise ValueError(f"config: {f} true: biases on the linear layers of a nemotron_h model are not modelled")
    a = kw["n_heads"]
    kw.update(mlp="relu2", norm="rmsnorm", bias="none", position="none", norms_per_layer=1,
              n_kv_heads=geti("n_kv_heads", "num_key_value_heads", default=a),
              head_dim=geti("head_dim", "head_dim", "attention_head_dim", default=kw["d_model"] // a),
              d_ff=geti("d_ff", "intermediate_size", default=4 * kw["d_model"]),
              max_position=geti("max_position", "max_position_embeddings", default=4096),
              tied_embeddings=getb("tie_word_embeddings", default=False),
              mamba_layers=n["M"], attention_layers=n["*"], mlp_layers=n["-"] + n["E"],
              mamba_heads=geti("mamba_heads", "mamba_num_heads", default=128),
              mamba_head_dim=geti("mamba_head_dim", "mamba_head_dim", default=64),
              mamba_state=geti("mamba_state", "ssm_state_size", default=128),
              mamba_groups=geti("mamba_groups", "n_groups", default=8),
              mamba_conv=geti("mamba_conv", "conv_kernel", default=4),
              mamba_chunk=geti("mamba_chunk", "chunk_size", default=128))
    if not getb("use_conv_bias", default=True):
        notes.append("use_conv_bias false: the conv1d's biases (d_inner + 2·G·N per layer) are counted anyway")
    if n["E"]:
        kw.update(n_experts=geti("n_experts", "n_routed_experts", default=128),
                  top_k=geti("top_k", "num_experts_per_tok", default=6),
                  moe_d_ff=geti("moe_d_ff", "moe_intermediate_size", default=kw["d_ff"]))
        shared_w = geti("shared_d_ff", "moe_shared_expert_intermediate_size", default=0) if (
            "moe_shared_expert_intermediate_size" in c) else 0
        n_sh = geti("n_shared_experts", "n_shared_experts", default=1 if shared_w else 0) if (
            "n_shared_experts" in c or shared_w) else 0
        if n_sh:
            kw.update(n_shared_experts=n_sh, shared_d_ff=shared_w or kw["moe_d_ff"])
        if c.get("moe_latent_size"):
            raise ValueError("config: moe_latent_size (latent MoE, Nemotron 3 Super) is not modelled")
    if geti("n_mtp", "num_nextn_predict_layers", default=0) if "num_nextn_predict_layers" in c else 0:
        raise ValueError("config: num_nextn_predict_layers on a nemotron_h model is not modelled")
    c.get("residual_in_fp32"), c.get("rescale_prenorm_residual"), c.get("rms_norm_eps"), c.get("layer_norm_epsilon")
    notes.append(f"hybrid: {n['M']} Mamba-2, {n['*']} attention, {n['-'] + n['E']} {'MoE' if n['E'] else 'MLP'} "
                 "layers (hybrid_override_pattern), no position embedding")
    return kw, notes


def _hf_fields(mt, c, get, geti, getf, getb):
    """The Model fields of a recognised model type, and notes on what was read by convention. Defaults are the
    transformers configuration classes' (e.g. GemmaConfig ties the embeddings and its MLP is gated whatever the
    activation's name; DeepseekV3Config's first 3 layers are dense)."""
    notes = []
    gpt_style = mt in ("gpt2", "gpt_neox", "bloom", "falcon")
    h = geti("d_model", "hidden_size", "n_embd", "n_embed")
    a = geti("n_heads", "num_attention_heads", "n_head")
    L = geti("n_layers", "num_hidden_layers", "n_layer")
    kw = dict(n_layers=L, d_model=h, n_heads=a, vocab_size=geti("vocab_size", "vocab_size"))
    gpt2_drop = 0.1 if mt == "gpt2" else 0.0  # GPT2Config's dropouts default to 0.1, the others' to 0
    drops = {"attention_dropout": 0.0, "hidden_dropout": 0.0, "attn_pdrop": gpt2_drop, "resid_pdrop": gpt2_drop,
             "embd_pdrop": gpt2_drop}
    kw["dropout"] = any(getf(k, default=d) > 0 for k, d in drops.items())
    if gpt_style:
        act = str(get("hidden_act", "activation_function", default="gelu")).lower()
        if "gelu" not in act:
            raise ValueError(f"config: activation {act!r}: only GeLU-family two-matrix MLPs are modelled here")
        kw.update(mlp="gelu", norm="layernorm", d_ff=geti("d_ff", "intermediate_size", "n_inner", "ffn_hidden_size",
                                                          default=4 * h))
    if mt == "gpt2":
        kw.update(bias="all", position="learned", tied_embeddings=getb("tie_word_embeddings", default=True),
                  max_position=geti("max_position", "n_positions", "max_position_embeddings", default=1024),
                  n_kv_heads=a)
        return kw, notes
    if mt == "gpt_neox":
        if not getb("attention_bias", default=True):
            raise ValueError("config: attention_bias false: GPT-NeoX keeps its MLP biases then, a bias layout not "
                             "modelled (none, qkv or all)")
        kw.update(bias="all", position="rotary", n_kv_heads=a, max_position=geti(
            "max_position", "max_position_embeddings", default=2048),
            tied_embeddings=getb("tie_word_embeddings", default=False))
        if get("use_parallel_residual", default=True):
            notes.append("parallel residual (same parameters; the MLP reads norm2 of the block input)")
        return kw, notes
    if mt == "bloom":
        kw.update(bias="all", position="alibi", max_position=0, n_kv_heads=a, embedding_norm=True,
                  tied_embeddings=getb("tie_word_embeddings", default=True))
        return kw, notes
    if mt == "falcon":
        new_arch = getb("new_decoder_architecture", default=False)
        parallel = getb("parallel_attn", default=True)
        if new_arch:
            kv = geti("n_kv_heads", "num_kv_heads", default=a)
            n_ln = geti("norms_per_layer", "num_ln_in_parallel_attn", default=2)
        else:
            kv = 1 if getb("multi_query", default=True) else a
            n_ln = 1 if parallel else 2
        if n_ln not in (1, 2):
            raise ValueError(f"config: num_ln_in_parallel_attn={n_ln} is not modelled (1 or 2)")
        kw.update(n_kv_heads=kv, norms_per_layer=n_ln, bias="all" if getb("bias", default=False) else "none",
                  position="alibi" if getb("alibi", default=False) else "rotary", max_position=geti(
                      "max_position", "max_position_embeddings", default=2048),
                  tied_embeddings=getb("tie_word_embeddings", default=True))
        return kw, notes

    if mt == "gpt_oss":  # transformers GptOssConfig defaults (the 120b's); arXiv:2508.10925 §2.2
        if not getb("attention_bias", default=True):
            raise ValueError("config: attention_bias false: GPT-OSS's attention and experts carry biases")
        kw.update(mlp="swiglu", norm="rmsnorm", position="rotary", bias="all", attention_sinks=True,
                  n_kv_heads=geti("n_kv_heads", "num_key_value_heads", default=8),
                  head_dim=geti("head_dim", "head_dim", default=64),
                  d_ff=geti("d_ff", "intermediate_size", default=2880),
                  n_experts=geti("n_experts", "num_local_experts", default=128),
                  top_k=geti("top_k", "num_experts_per_tok", default=4),
                  max_position=geti("max_position", "max_position_embeddings", default=131072),
                  tied_embeddings=getb("tie_word_embeddings", default=False))
        sw = geti("sliding_window", "sliding_window", default=128)
        if c.get("layer_types") is None:  # GptOssConfig: sliding on even layers, full on odd
            kw["sliding_window"], kw["global_every"] = sw, 2
        else:
            kw["sliding_window"], kw["global_every"] = _window_pattern(mt, c, L, sw, 2)
        if c.get("swiglu_limit") is not None:
            notes.append("SwiGLU with clamping (swiglu_limit) and GPT-OSS's residual: counted as SwiGLU")
        notes.append("attention sinks: one learnable logit per head and layer")
        return kw, notes
    if mt == "llama4_text":  # transformers Llama4TextConfig; meta-llama/llama-models models/llama4
        L_ = L
        step = geti("interleave_moe_layer_step", "interleave_moe_layer_step", default=1)
        if step < 1 or L_ % step:
            raise ValueError(f"config: interleave_moe_layer_step={step} must divide num_hidden_layers={L_}")
        if c.get("moe_layers") not in (None, list(range(step - 1, L_, step))):
            raise ValueError("config: moe_layers other than every interleave_moe_layer_step-th layer are not modelled")
        if getb("attention_bias", default=False):
            raise ValueError("config: attention_bias true is not modelled for llama4_text")
        moe_w = geti("moe_d_ff", "intermediate_size", default=8192)
        kw.update(mlp=_gated(str(get("hidden_act", default="silu"))), norm="rmsnorm", position="rotary", bias="none",
                  n_kv_heads=geti("n_kv_heads", "num_key_value_heads", default=8),
                  head_dim=geti("head_dim", "head_dim", default=128),
                  d_ff=geti("d_ff", "intermediate_size_mlp", default=16384), moe_d_ff=moe_w,
                  n_experts=geti("n_experts", "num_local_experts", default=16),
                  top_k=geti("top_k", "num_experts_per_tok", default=1), n_shared_experts=1, shared_d_ff=moe_w,
                  n_dense_layers=L_ - L_ // step,
                  max_position=geti("max_position", "max_position_embeddings", default=4096 * 32),
                  tied_embeddings=getb("tie_word_embeddings", default=False))
        if step > 1:
            notes.append(f"MoE on every {step}th layer: counted as {L_ - L_ // step} dense then {L_ // step} MoE layers "
                         "(the same parameters)")
        chunk = c.get("attention_chunk_size", 8192)
        every = geti("no_rope_layer_interval", "no_rope_layer_interval", default=4)
        c.get("no_rope_layers")
        c.get("use_qk_norm")  # an L2 norm without parameters
        if chunk:
            kw["sliding_window"] = geti("attention_chunk_size", "attention_chunk_size", default=8192)
            kw["global_every"] = every
            kw["chunked_attention"] = True
            notes.append(f"chunked attention ({kw['sliding_window']} tokens) on the RoPE layers, every {every}th "
                         "layer global")
        return kw, notes

    if mt == "nemotron_h":  # transformers NemotronHConfig (Nemotron-H, Nemotron 3): one mixer or MLP per layer
        return _nemotron_h(c, get, geti, getb, kw, notes)

    # --- the Llama family: gated MLP, RMSNorm (OLMo 1: LayerNorm without parameters), rotary ---------------------
    gemma = mt.startswith("gemma")
    act = str(get("hidden_activation", "hidden_act", default="gelu_pytorch_tanh" if gemma else "silu"))
    kw.update(mlp=_gated(act), norm="nonparametric" if mt == "olmo" else "rmsnorm", position="rotary",
              n_kv_heads=geti("n_kv_heads", "num_key_value_heads", default=a),
              d_ff=geti("d_ff", "intermediate_size", default=4 * h),
              max_position=geti("max_position", "max_position_embeddings", default=2048),
              tied_embeddings=getb("tie_word_embeddings", default=gemma))
    if getb("mlp_bias", default=False):
        raise ValueError("config: mlp_bias true: biases on a gated MLP are not modelled")
    attn_bias = getb("attention_bias", default=False)
    if mt in ("qwen2", "qwen2_moe"):
        kw["bias"] = "qkv"  # Qwen2Attention: q, k, v with bias, o without (hard-coded)
    elif attn_bias:
        raise ValueError("config: attention_bias true: biases on q, k, v and o (not the MLP) are not a bias layout "
                         "modelled here (none, qkv or all)")
    else:
        kw["bias"] = "none"
    if "head_dim" in c or mt in ("gemma", "gemma2", "gemma3_text", "qwen3", "qwen3_moe"):
        kw["head_dim"] = geti("head_dim", "head_dim", default=128 if mt.startswith("qwen3") else 256)
    if mt in ("qwen3", "qwen3_moe", "gemma3_text"):
        kw["qk_norm"] = "per_head"
    if mt == "olmo2":
        kw["qk_norm"] = "full"
    if mt in ("gemma2", "gemma3_text"):
        kw["norms_per_layer"] = 4
        sw = geti("sliding_window", "sliding_window", default=4096)
        kw["sliding_window"], kw["global_every"] = _window_pattern(mt, c, L, sw, 2 if mt == "gemma2" else 6)
    if mt in ("mistral", "mixtral", "phi3") and c.get("sliding_window") is not None:
        kw["sliding_window"] = geti("sliding_window", "sliding_window")  # every layer (Mistral 7B v0.1: 4096)
    if mt in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe") and get("use_sliding_window", default=False):
        raise ValueError("config: use_sliding_window true: Qwen's window on the layers past max_window_layers is not "
                         "modelled")
    if mt == "mixtral":
        kw.update(n_experts=geti("n_experts", "num_local_experts", default=8),
                  top_k=geti("top_k", "num_experts_per_tok", default=2))
    if mt in ("qwen2_moe", "qwen3_moe"):
        if geti("decoder_sparse_step", "decoder_sparse_step", default=1) != 1 or get("mlp_only_layers", default=[]):
            raise ValueError("config: decoder_sparse_step ≠ 1 or mlp_only_layers: dense layers between the MoE "
                             "layers are not modelled (only the first n_dense_layers)")
        kw.update(n_experts=geti("n_experts", "num_experts", default=60 if mt == "qwen2_moe" else 128),
                  top_k=geti("top_k", "num_experts_per_tok", default=4 if mt == "qwen2_moe" else 8),
                  moe_d_ff=geti("moe_d_ff", "moe_intermediate_size", default=1408 if mt == "qwen2_moe" else 768))
        if mt == "qwen2_moe":
            sf = geti("shared_d_ff", "shared_expert_intermediate_size", default=5632)
            kw.update(n_shared_experts=1, shared_d_ff=sf, shared_expert_gate=True)
    if mt in ("deepseek_v2", "deepseek_v3"):
        v3 = mt == "deepseek_v3"
        nope = geti("head_dim", "qk_nope_head_dim", default=128)
        rope = geti("qk_rope_head_dim", "qk_rope_head_dim", default=64)
        q_rank = c.get("q_lora_rank", 1536)
        kw.update(attention="mla", n_kv_heads=a, head_dim=nope + rope, qk_rope_head_dim=rope,
                  v_head_dim=geti("v_head_dim", "v_head_dim", default=128),
                  q_lora_rank=0 if q_rank is None else geti("q_lora_rank", "q_lora_rank", default=1536),
                  kv_lora_rank=geti("kv_lora_rank", "kv_lora_rank", default=512),
                  n_experts=geti("n_experts", "n_routed_experts", default=256 if v3 else 160),
                  top_k=geti("top_k", "num_experts_per_tok", default=8 if v3 else 6),
                  moe_d_ff=geti("moe_d_ff", "moe_intermediate_size", default=2048 if v3 else 1536),
                  n_shared_experts=geti("n_shared_experts", "n_shared_experts", default=1 if v3 else 2),
                  n_dense_layers=geti("n_dense_layers", "first_k_dense_replace", default=3 if v3 else 1),
                  n_mtp_layers=int(getf("num_nextn_predict_layers", default=0)))
        if c.get("num_key_value_heads", a) != a:
            notes.append(f"num_key_value_heads {c['num_key_value_heads']} ignored: MLA has a key and value per head")
        if geti("moe_layer_freq", "moe_layer_freq", default=1) != 1:
            raise ValueError("config: moe_layer_freq ≠ 1: MoE on every k-th layer only is not modelled")
        if str(c.get("topk_method", "noaux_tc" if v3 else "greedy")) == "noaux_tc":
            notes.append("routing bias e_score_correction_bias (n_routed_experts per MoE layer, a buffer in "
                         "transformers) not counted")
    return kw, notes
