"""Activation recomputation as the frameworks name it: which of a layer's forward work runs again in the backward
(time, core/steptime.py) and which of its tensors are not kept (memory, core/memory.py), per row.

Inputs (core/inputs.py): `recompute` none | selective | full (today's meaning); `recompute_modules`, Megatron's
names (transformer_config.py l.560-583: core_attn, mlp, moe_act, layernorm, mla_up_proj, moe, shared_experts),
which apply with `recompute selective` as in Megatron; `recompute_layers` K, with `recompute full`: only K layers
of each pipeline stage are recomputed (Megatron --recompute-method block --recompute-num-layers K), the rest keep
everything; `remat_policy`, MaxText's names (src/maxtext/configs/base.yml l.355-383; what each saves:
layers/decoders.py get_remat_policy), which replaces `recompute` when given. `recompute selective` with no modules
means what the framework's selective means (data/frameworks.csv `selective`: Megatron core_attn, torchtitan's
per-op SAC, MaxText minimal).

The forward work of one layer is split into components (core/steptime.py computes each one's time):
norm (the norms, QK-norm), qkv (the attention input projections; k_proj the key projection, mla_up MLA's
up-projections, both inside qkv), rope, core (the attention core; scores, inside it, a non-flash core's QKᵀ and
softmax), out (output projection), mlp_in (gate/up or fc1; experts, router and shared experts included), act (the
MLP activation), mlp_out (down or fc2), resid (residual adds), dispatch (an MoE layer's forward all-to-alls,
dispatch and combine: a share of the two; they cost time only with ep > 1). A unit says which components rerun (a
share of each) and which ledger tensors (core/memory.py LEDGER_TENSORS) it drops; `scope` restricts it to the dense
or the MoE layers.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

COMPONENTS = ("norm", "qkv", "k_proj", "mla_up", "rope", "core", "scores", "out", "mlp_in", "act", "mlp_out",
              "resid", "dispatch")
NORM_OUT = ("qkv_input", "mlp_input", "norm1_normalized", "norm2_normalized", "norm1_upcast", "norm2_upcast",
            "qk_norm_input", "mla_latents_normed")
CORE = ("softmax_output", "softmax_dropout_mask", "dropout_output", "softmax_lse")
MLP_HIDDEN = ("gelu_input", "gate", "up", "silu_output", "mlp_hidden")


@dataclass(frozen=True)
class Unit:
    """One recomputed piece of a layer: components rerun (share of each), tensors dropped, where it applies."""

    name: str
    rerun: tuple  # ((component, share), ...)
    drop: tuple  # ledger tensors not kept
    scope: str = "all"  # all | dense | moe (layers it applies to)
    source: str = ""
    drop_local: tuple = ()  # tensors not kept only where the tokens reach the experts without an all-to-all (ep 1)


# Megatron's --recompute-modules (Megatron-Core transformer_config.py l.560-583, checked l.1943-1958)
MEGATRON_MODULES = {u.name: u for u in (
    Unit("core_attn", (("core", 1.0),), CORE, source="the core attention part (softmax, dropout; flash's LSE)"),
    Unit("mlp", (("mlp_in", 1.0), ("act", 1.0)), MLP_HIDDEN, "dense",
         "the dense MLP submodule (its fc2 output is not needed again)"),
    Unit("moe_act", (("act", 1.0),), ("silu_output", "mlp_hidden"), "moe",
         "the MoE experts' activation (output-discarding checkpoint)"),
    Unit("layernorm", (("norm", 1.0),), NORM_OUT, source="input_layernorm and pre_mlp_layernorm outputs"),
    Unit("mla_up_proj", (("mla_up", 1.0), ("rope", 1.0)), ("q", "k", "v"),
         source="MLA up projection and RoPE (MLA only)"),
    Unit("moe", (("mlp_in", 1.0), ("act", 1.0), ("dispatch", 1.0)),
         MLP_HIDDEN + ("router_probs", "expert_inputs", "expert_outputs"), "moe",
         "the whole MoE layer, its token dispatcher's all-to-alls included"),
    Unit("shared_experts", (), ("shared_experts",), "moe", "the shared experts (their time is in mlp_in: not split)"),
)}
# torchtitan's per-op selective AC: save the outputs of mm and SDPA except every second mm (wk, wo, w3 of wq, wk, wv,
# wo, w1, w3, w2), recompute the rest (norms, RoPE, SiLU·mul, adds) (parallelize_llama.py L213-285 @9dec370)
OP_SAC = Unit("op_sac", (("norm", 1.0), ("rope", 1.0), ("act", 1.0), ("resid", 1.0), ("k_proj", 1.0),
                         ("out", 1.0), ("mlp_in", 0.5)),
              NORM_OUT + ("k", "up", "silu_output", "mlp_hidden"), source="torchtitan per-op SAC")
# ... and in its MoE layers: the experts' grouped GEMMs (torch._grouped_mm) are not in the save list, so all three rerun
# and none of their outputs is kept; the dispatched and combined tokens are kept only as the outputs of an
# all-to-all, which the list saves (all_to_all_single, DeepEP's and HybridEP's dispatch and combine): at ep 1 they
# are gathers and rerun too (torchtitan/distributed/activation_checkpoint.py _get_default_save_ops @b5bcd76)
OP_SAC_MOE = Unit("op_sac_moe", (("mlp_in", 0.5), ("mlp_out", 1.0)), ("gate",), "moe",
                  "torchtitan per-op SAC, MoE layers: expert GEMMs recomputed",
                  drop_local=("expert_inputs", "expert_outputs"))
_ALL_ELEM = (("norm", 1.0), ("rope", 1.0), ("resid", 1.0))
_MIN_DROP = NORM_OUT + ("attn_output", "softmax_lse", "silu_output", "mlp_hidden")
# MaxText remat policies: what each saves (decoders.py get_remat_policy); everything else is recomputed. `offload`:
# the saved tensors go to pinned host memory instead of HBM.
REMAT_POLICIES = {
    "minimal": (Unit("minimal", _ALL_ELEM + (("core", 1.0), ("act", 1.0)), _MIN_DROP,
                     source="saves q/k/v, out_proj, mlpwi (gate, up), mlpwo; not the attention context"), False),
    "minimal_with_context": (Unit("minimal_with_context", _ALL_ELEM + (("act", 1.0),),
                                  tuple(t for t in _MIN_DROP if t not in ("attn_output", "softmax_lse")),
                                  source="minimal + the attention context"), False),
    "minimal_flash": (Unit("minimal_flash", _ALL_ELEM + (("act", 1.0),),
                           tuple(t for t in _MIN_DROP if t not in ("attn_output", "softmax_lse")),
                           source="alias of minimal_with_context (deprecated name)"), False),
    "save_dot_except_mlpwi": (Unit("save_dot_except_mlpwi", _ALL_ELEM + (("core", 1.0), ("mlp_in", 1.0),
                                                                          ("act", 1.0)),
                                   _MIN_DROP + MLP_HIDDEN,
                                   source="saves q/k/v, out_proj, mlpwo: the MLP input projections rerun"), False),
    "save_dot_except_mlp": (Unit("save_dot_except_mlp", _ALL_ELEM + (("core", 1.0), ("mlp_in", 1.0), ("act", 1.0)),
                                 _MIN_DROP + MLP_HIDDEN, source="saves q/k/v and out_proj"), False),
    "save_dot_with_context_except_mlp": (Unit("save_dot_with_context_except_mlp",
                                              _ALL_ELEM + (("mlp_in", 1.0), ("act", 1.0)),
                                              NORM_OUT + MLP_HIDDEN,
                                              source="saves q/k/v, the context and out_proj"), False),
    "save_qkv_proj": (Unit("save_qkv_proj", _ALL_ELEM + (("core", 1.0), ("out", 1.0), ("mlp_in", 1.0),
                                                         ("act", 1.0)),
                           _MIN_DROP + MLP_HIDDEN + ("attn_dropout_mask", "mlp_dropout_mask", "norm1_stats",
                                                     "norm2_stats", "norm2_input"),
                           source="saves q/k/v only"), False),
    "save_out_proj": (Unit("save_out_proj", _ALL_ELEM + (("qkv", 1.0), ("core", 1.0), ("mlp_in", 1.0),
                                                         ("act", 1.0)),
                           _MIN_DROP + MLP_HIDDEN + ("q", "k", "v"), source="saves out_proj only"), False),
    "qkv_proj_offloaded": (Unit("qkv_proj_offloaded", _ALL_ELEM + (("core", 1.0), ("out", 1.0), ("mlp_in", 1.0),
                                                                   ("act", 1.0)),
                                _MIN_DROP + MLP_HIDDEN + ("attn_dropout_mask", "mlp_dropout_mask", "norm1_stats",
                                                          "norm2_stats", "norm2_input"),
                                source="q/k/v saved to pinned host memory"), True),
    "minimal_offloaded": (Unit("minimal_offloaded", _ALL_ELEM + (("core", 1.0), ("act", 1.0)), _MIN_DROP,
                               source="the minimal set saved to pinned host memory"), True),
}
# ... in their MoE layers (layers/moe.py @e591f30, the default sparse_matmul path): the permuted or dispatched tokens
# carry no name, so no policy keeps them (they rerun: a gather, and with ep > 1 the forward's dispatch all-to-all,
# half of its two); the up-projection's output is named moe_mlpwi_1 only (l.1959, 1985), which the minimal policies
# (saving mlpwi_1) do not keep, so it reruns; the experts' output (mlpwo) is kept only by a policy that saves it,
# else its GEMM reruns too (the combine's weight gradient reads it)
_SAVES_MLPWO = ("minimal", "minimal_with_context", "minimal_flash", "save_dot_except_mlpwi", "minimal_offloaded")
_SAVES_MLPWI = ("minimal", "minimal_with_context", "minimal_flash", "minimal_offloaded")
REMAT_MOE = {name: Unit(name + "_moe",
                        (("dispatch", 0.5),) + ((("mlp_in", 0.5),) if name in _SAVES_MLPWI else ())
                        + ((("mlp_out", 1.0),) if name not in _SAVES_MLPWO else ()),
                        ("expert_inputs",) + (("up",) if name in _SAVES_MLPWI else ())
                        + (("expert_outputs",) if name not in _SAVES_MLPWO else ()), "moe",
                        "MaxText MoE layers: the dispatched tokens are not named")
             for name in REMAT_POLICIES}
# ... and without a flash kernel the attention probabilities (s × s per head) carry no name either: no names-based
# policy keeps them (jax.checkpoint save_only_these_names saves the named residuals only); the backward recomputes
# them (QKᵀ and the softmax) from the kept q and k
UNNAMED_SCORES = Unit("unnamed_scores", (("scores", 1.0),), ("softmax_output", "softmax_dropout_mask",
                                                             "dropout_output"),
                      source="a names-based remat policy never keeps the unnamed attention probabilities")


def names_policy(name: str) -> tuple:
    """The units of one MaxText remat policy: what it saves in every layer, in the MoE layers, and the unnamed
    attention probabilities it never keeps."""
    return (REMAT_POLICIES[name][0], REMAT_MOE[name], UNNAMED_SCORES)


REMAT_NAMES = ("none", "full") + tuple(REMAT_POLICIES)  # none: no policy given (recompute decides)
MODULE_NAMES = tuple(MEGATRON_MODULES)
SELECTIVE_DEFAULTS = {"core_attn": (MEGATRON_MODULES["core_attn"],), "op_sac": (OP_SAC, OP_SAC_MOE),
                      "minimal": names_policy("minimal")}


def parse_modules(text) -> tuple:
    """Megatron module names from 'a,b' (or 'a b'); an unknown name is an error naming it."""
    if text is None:
        return ()
    names = tuple(n for n in str(text).replace(",", " ").split() if n)
    bad = [n for n in names if n not in MEGATRON_MODULES]
    if bad:
        raise ValueError(f"recompute_modules: unknown module {bad[0]!r}; known: {', '.join(MODULE_NAMES)}")
    return names


def modules_valid(text) -> bool:
    try:
        parse_modules(text)
        return True
    except ValueError:
        return False


@dataclass(frozen=True)
class Spec:
    """What one row recomputes: `full` (the whole layer; with `full_share` of the stage's layers), else `units`;
    `offload` (the kept tensors live on the host: MaxText *_offloaded policies)."""

    full: bool
    units: tuple
    offload: bool = False


def spec(recompute, modules, policy, selective) -> Spec:
    """The recompute spec of one row (scalars)."""
    policy = str(policy)
    if policy not in ("none", ""):
        if policy == "full":
            return Spec(True, ())
        return Spec(False, names_policy(policy), REMAT_POLICIES[policy][1])
    if recompute == "full":
        return Spec(True, ())
    if recompute == "selective":
        names = parse_modules(modules)
        if names:
            return Spec(False, tuple(MEGATRON_MODULES[n] for n in names))
        return Spec(False, SELECTIVE_DEFAULTS[str(selective)])
    return Spec(False, ())


def columns(recompute, modules, policy, selective, moe_share, *, local) -> dict:
    """Per row: `full` (bool), `offload` (bool), `rerun` {component: share} and `drop` {tensor: share} (shares of a
    layer: a unit scoped to the MoE layers counts moe_share, to the dense ones 1 − moe_share; a unit's `drop_local`
    tensors count only where `local`, the MoE tokens crossing no all-to-all). Vectorised over the unique combinations
    of the four inputs."""
    cols = np.broadcast_arrays(np.asarray(recompute, dtype=object), np.asarray(modules, dtype=object),
                               np.asarray(policy, dtype=object), np.asarray(selective, dtype=object))
    shape = cols[0].shape
    moe_share = np.broadcast_to(np.asarray(moe_share, dtype=np.float64), np.broadcast_shapes(shape, np.shape(moe_share)))
    out_shape = moe_share.shape
    full = np.zeros(out_shape, dtype=bool)
    offload = np.zeros(out_shape, dtype=bool)
    rerun = {c: np.zeros(out_shape) for c in COMPONENTS}
    drop: dict = {}
    uniq, inv = zip(*(np.unique(c.astype(str).reshape(-1), return_inverse=True) for c in cols))
    code = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=np.int64)
    for u, i in zip(uniq, inv):
        code = code * len(u) + i
    code = code.reshape(shape)
    for k in np.unique(code):
        idx, rest = [], int(k)
        for u in reversed(uniq):
            idx.append(u[rest % len(u)])
            rest //= len(u)
        r, m, p, s = reversed(idx)
        sp = spec(r, m, p, s)
        where = np.broadcast_to(code == k, out_shape)
        full = full | (where & sp.full)
        offload = offload | (where & sp.offload)
        for u in sp.units:
            share = np.where(u.scope == "moe", moe_share, np.where(u.scope == "dense", 1.0 - moe_share, 1.0))
            share = np.where(where, share, 0.0)
            for comp, frac in u.rerun:
                rerun[comp] = rerun[comp] + share * frac
            for t in u.drop:
                drop[t] = np.maximum(drop.get(t, 0.0), share)
            for t in u.drop_local:
                drop[t] = np.maximum(drop.get(t, 0.0), np.where(local, share, 0.0))
    return {"full": full, "offload": offload, "rerun": {k: np.minimum(v, 1.0) for k, v in rerun.items()},
            "drop": drop}
