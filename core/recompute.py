"""Activation recomputation as the frameworks name it: which of a layer's forward work runs again in the backward
(time, core/steptime.py) and which of its tensors are not kept (memory, core/memory.py), per row.

Inputs (core/inputs.py): `recompute` none | selective | full (today's meaning); `recompute_modules`, Megatron's
names (transformer_config.py l.560-583: core_attn, mlp, moe_act, layernorm, mla_up_proj, moe, shared_experts),
which apply with `recompute selective` as in Megatron; `recompute_layers` K, with `recompute full`: only K layers
of each pipeline stage are recomputed (Megatron --recompute-method block --recompute-num-layers K), the rest keep
everything; `remat_policy`, MaxText's names (src/maxtext/configs/base.yml l.355-383; what each saves:
layers/decoders.py get_remat_policy), which replaces `recompute` when given, and with remat_policy 'custom' its
per-tensor places `remat_custom` ('query_proj=device, decoder_layer_input=offload, ...'; NAMED_POLICIES holds each
named policy as the names it saves, so one rule reads both). `recompute selective` with no modules
means what the framework's selective means (data/frameworks.csv `selective`: Megatron core_attn, torchtitan's
per-op SAC, MaxText minimal).

The forward work of one layer is split into components (core/steptime.py computes each one's time):
norm (the norms, QK-norm), qkv (the attention input projections; k_proj the key projection, mla_up MLA's
up-projections, both inside qkv), rope, core (the attention core; scores, inside it, a non-flash core's QKᵀ and
softmax), out (output projection), mlp_in (gate/up or fc1; experts, router and shared experts included), act (the
MLP activation), mlp_out (down or fc2), resid (residual adds), dispatch (an MoE layer's forward all-to-alls,
dispatch and combine: a share of the two; they cost time only with ep > 1), shared_in / shared_out (an MoE layer's
shared experts' part of mlp_in / mlp_out, which a unit may rerun apart from the routed experts': Unit.shared; counted
over the MoE layers whatever the unit's scope, the only layers that have them). A unit says which components rerun (a
share of each) and which ledger tensors (core/tables.py LEDGER_TENSORS) it drops; `scope` restricts it to the dense
or the MoE layers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .tables import LEDGER_TENSORS

COMPONENTS = ("norm", "qkv", "k_proj", "mla_up", "rope", "core", "scores", "out", "mlp_in", "act", "mlp_out",
              "resid", "dispatch", "shared_in", "shared_out")
# (shared_in / shared_out: an MoE layer's shared experts' input and output GEMMs, which mlp_in / mlp_out hold beside
# the routed experts'; a unit reruns them as it reruns mlp_in / mlp_out unless it says otherwise: Unit.shared)
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
    drop_local: tuple = ()  # tensors not kept only where the MoE tokens are not saved as all-to-all outputs (`local`)
    rerun_local: tuple = ()  # components rerun where the all-to-all's outputs are not saved (core/steptime.py's `local`)
    drop_no_w2: tuple = ()  # tensors not kept only in MoE layers that save no shared expert's w2 output (`no_w2`)
    rerun_no_w2: tuple = ()  # components rerun only there
    # the shared experts' components it reruns, ((shared_in | shared_out, share), ...); None: at its mlp_in / mlp_out
    # shares (the shared experts run and rerun with the routed ones)
    shared: tuple | None = None
    # (a `drop` entry is a tensor's name, or (name, share) where the unit keeps part of a ledger row)


# Megatron's --recompute-modules (Megatron-Core transformer_config.py l.560-583, checked l.1943-1958)
MEGATRON_MODULES = {u.name: u for u in (
    Unit("core_attn", (("core", 1.0),), CORE, source="the core attention part (softmax, dropout; flash's LSE)"),
    # tensor_parallel.checkpoint reruns the whole submodule's forward in the backward, fc2 included, though its output
    # is not needed again (transformer_layer.py _forward_mlp: tensor_parallel.checkpoint(self.mlp, False, ...);
    # moe_layer.py: the same around the MoE layer's forward)
    Unit("mlp", (("mlp_in", 1.0), ("act", 1.0), ("mlp_out", 1.0)), MLP_HIDDEN, "dense",
         "the dense MLP submodule, rerun whole (fc1, activation, fc2)"),
    Unit("moe_act", (("act", 1.0),), ("silu_output", "mlp_hidden"), "moe",
         "the MoE experts' activation (output-discarding checkpoint)"),
    Unit("layernorm", (("norm", 1.0),), NORM_OUT, source="input_layernorm and pre_mlp_layernorm outputs"),
    Unit("mla_up_proj", (("mla_up", 1.0), ("rope", 1.0)), ("q", "k", "v"),
         source="MLA up projection and RoPE (MLA only)"),
    Unit("moe", (("mlp_in", 1.0), ("act", 1.0), ("mlp_out", 1.0), ("dispatch", 1.0)),
         MLP_HIDDEN + ("router_probs", "expert_inputs", "expert_outputs"), "moe",
         "the whole MoE layer, its token dispatcher's all-to-alls included"),
    Unit("shared_experts", (), ("shared_experts",), "moe", "the shared experts' forward",
         shared=(("shared_in", 1.0), ("shared_out", 1.0))),
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
# A save list without the all-to-all (torchtitan's per-model lists before PR #1672, 2025-09-06, which added
# all_to_all_single to DeepSeek-V3's and Llama 4's; Qwen3's until PR #2357, 2026-03-23, centralised one list for all:
# input sac_saves_all_to_all false) keeps neither and reruns the forward's dispatch and combine in the backward
# Nor does the list hold the routing-weight multiply (its output, the ledger's moe_weighted_outputs, reruns) or the
# residual add whose output the second norm reads (norm2_input): a dense layer saves the down projection's output, its
# seventh mm, of that size in its place; an MoE layer's routed experts run torch._grouped_mm, which the mm count does not
# see (PyTorch's get_default_op_list has no _grouped_mm; torch 2.13), so where no shared expert follows nothing h-wide
# is kept (Qwen3-MoE, GPT-OSS). A shared expert's FeedForward is three mms after the attention's four (the router's is
# forced to recompute, SelectiveAC.Config force_recompute_mm_shapes_by_fqns ['moe.router.gate'] @b5bcd76, since PR
# #1380 of 2025-07-16): w1 (5th) and w2 (7th) are saved, w3 reruns, so of the ledger's shared_experts row (gate, up,
# SiLU, down input: eager PyTorch's four d_ff-wide tensors) one in four is kept, and w2's h-wide output stands where
# norm2_input does in a dense layer. After five attention mms (MLA with a query down-projection, q_lora_rank > 0:
# wq_a, wq_b, wkv_a, wkv_b, wo) the count shifts: w3 (7th) is saved, w1 and w2 rerun, nothing h-wide is kept, so
# norm2_input goes there too (`columns`' `no_w2`). Convention: share 3/4 of the row, exact for eager PyTorch; compiled,
# the row holds three tensors and 3/4 of one is kept (under by a quarter of one, T·f_s/2 bytes per layer). Lists before
# PR #1380 counted the router's mm: then w3 alone was saved, an over-count of T·h·2 bytes per MoE layer there.
# Time: the unit reruns the routed experts' GEMMs whole (mlp_in 0.5 beside OP_SAC's 0.5, mlp_out 1.0) and of the
# shared expert what is not saved: w3, OP_SAC's half of shared_in, and where the count shifts (`no_w2`) w2 too (w1
# then reruns in w3's place: still half of shared_in)
OP_SAC_MOE = Unit("op_sac_moe", (("mlp_in", 0.5), ("mlp_out", 1.0)), ("gate", "moe_weighted_outputs",
                                                                      ("shared_experts", 0.75)), "moe",
                  "torchtitan per-op SAC, MoE layers: expert GEMMs, routing-weight multiply and residual add recomputed",
                  drop_local=("expert_inputs", "expert_outputs"), rerun_local=(("dispatch", 1.0),),
                  drop_no_w2=("norm2_input",), rerun_no_w2=(("shared_out", 1.0),), shared=())
_ALL_ELEM = (("norm", 1.0), ("rope", 1.0), ("resid", 1.0))
# MaxText's checkpoint names (src/maxtext/configs/base.yml l.359-382 @e591f30, where each is 'remat', 'device' or
# 'offload' under remat_policy 'custom'; named in layers/attentions.py, attention_op.py, linears.py, moe.py,
# decoders.py): the ones the ledger and the step model can follow. MLA's (mla_q, mla_kv, query_wa_proj,
# kv_wa_proj), the indexer's and engram's are not modelled and are refused by name.
CUSTOM_NAMES = ("decoder_layer_input", "query_proj", "key_proj", "value_proj", "kv_proj", "qkv_proj", "context",
                "attention_out", "out_proj", "mlpwi", "mlpwi_0", "mlpwi_1", "mlpwo", "moe_mlpwi_0", "moe_mlpwi_1",
                "moe_mlpwo")
CUSTOM_WHERE = ("remat", "device", "offload")
# the ledger's tensors of an MoE layer only: a names policy drops them there (scope moe), the layers' shares apart
MOE_TENSORS = ("router_probs", "expert_inputs", "expert_outputs", "moe_routing_indices", "moe_weighted_outputs",
               "shared_experts")
_QKV = ("query_proj", "value_proj", "key_proj", "kv_proj", "qkv_proj")
_MINIMAL = _QKV + ("out_proj", "mlpwi_0", "mlpwi_1", "mlpwi", "mlpwo")
# MaxText's named policies as the names each saves (layers/decoders.py get_remat_policy and minimal_policy @e591f30;
# the *_offloaded ones and 'custom' through maxtext_utils.get_save_and_offload_names): (saved names, offloaded to
# pinned host)
NAMED_POLICIES = {
    "minimal": (_MINIMAL, False),
    "minimal_with_context": (_MINIMAL + ("context",), False),
    "minimal_flash": (_MINIMAL + ("context",), False),  # the deprecated alias of minimal_with_context
    "save_dot_except_mlpwi": (_QKV + ("out_proj", "mlpwo"), False),
    "save_dot_except_mlp": (_QKV + ("out_proj",), False),
    "save_dot_with_context_except_mlp": (_QKV + ("context", "out_proj"), False),
    "save_qkv_proj": (_QKV, False),
    "save_out_proj": (("out_proj",), False),
    "qkv_proj_offloaded": (("query_proj", "value_proj", "key_proj", "kv_proj"), True),
    "minimal_offloaded": (_MINIMAL, True),
}


def saved_units(saved, name: str) -> tuple:
    """What a names-based remat policy saving `saved` (MaxText checkpoint names) reruns and does not keep: one unit
    for every layer, one for the MoE layers. Everything unnamed reruns (norms, RoPE, residual adds, the MLP
    activation); q/k/v rerun unless all three are saved, the attention core unless 'context' is (its output and the
    LSE), out_proj unless it is (it feeds the residual sum the second norm reads), the gate and up projections unless
    saved (mlpwi fused, or mlpwi_0 / mlpwi_1). In the MoE layers (layers/moe.py @e591f30, the default sparse path)
    the dispatched tokens carry no name (a gather, and with ep > 1 the forward's dispatch all-to-all, half of its two,
    rerun), the up projection is named moe_mlpwi_1 only and the experts' output mlpwo / moe_mlpwo, which the combine's
    weight gradient reads: it reruns unless saved (parse_custom refuses a MoE name saved without its dense twin)."""
    s = set(saved)
    q = bool(s & {"query_proj", "qkv_proj"})
    k, v = (bool(s & {n, "kv_proj", "qkv_proj"}) for n in ("key_proj", "value_proj"))
    ctx, out = "context" in s, "out_proj" in s
    gate, up = (bool(s & {"mlpwi", n}) for n in ("mlpwi_0", "mlpwi_1"))
    rerun = _ALL_ELEM + ((("qkv", 1.0),) if not (q and k and v) else ()) + ((("core", 1.0),) if not ctx else ()) \
        + ((("out", 1.0),) if not out else ()) \
        + ((("mlp_in", 0.5 * (not gate) + 0.5 * (not up)),) if not (gate and up) else ()) + (("act", 1.0),)
    moe_up = up and "moe_mlpwi_1" not in s  # kept in the dense layers, not in the MoE ones
    moe_out = bool(s & {"mlpwo", "moe_mlpwo"})
    # jax.checkpoint's save_only_these_names keeps the named values and the layer's input (the scan's carry), nothing
    # else: every other tensor of the ledger is rematerialised (norm statistics, QK-norm, MLA latents, Gemma's
    # post-norms, the router's probabilities, shared experts, dropout masks). The saved names stand for: q/k/v the
    # projections, context the core's output and LSE (attention_out, attentions.py, its output alone: the core still
    # reruns), out_proj the residual sum the second norm reads, mlpwi_0 / mlpwi_1 the gate and up (a GeLU MLP's fc1
    # output when both), mlpwo in the MoE layers the experts' output
    kept = {"norm1_input"} | {t for t, k_ in (("q", q), ("k", k), ("v", v), ("gate", gate), ("up", up),
                                              ("softmax_lse", ctx), ("attn_output", ctx or "attention_out" in s),
                                              ("norm2_input", out), ("gelu_input", gate and up),
                                              ("expert_outputs", moe_out)) if k_}
    drop = tuple(n for n, _, _ in LEDGER_TENSORS if n not in kept and n not in MOE_TENSORS)
    moe = Unit(name + "_moe", (("dispatch", 0.5),) + ((("mlp_in", 0.5),) if moe_up else ())
               + ((("mlp_out", 1.0),) if not moe_out else ()),
               tuple(n for n in MOE_TENSORS if n != "expert_outputs" or not moe_out) + (("up",) if moe_up else ()),
               "moe",
               "MaxText MoE layers: the dispatched tokens are not named",
               # the shared experts are a dense MlpBlock (moe.py): named mlpwi_0 / mlpwi_1 / mlpwo, so their input
               # GEMMs rerun with the dense layers' (the unit above) and their output, which only the residual sum
               # reads, never (XLA drops the rerun the backward does not read)
               shared=())
    return Unit(name, rerun, drop, source="saves " + (", ".join(sorted(s)) or "nothing but the layer input")), moe


def parse_custom(text) -> dict:
    """MaxText's per-tensor assignments for remat_policy 'custom' from 'name=where, ...' (where: one of CUSTOM_WHERE;
    entries separated by commas, semicolons or white space, case and spaces around '=' ignored); unnamed tensors take
    base.yml's defaults (decoder_layer_input 'device', the rest 'remat'). An unknown name or place, a name given two
    different places, or a MoE name saved without its dense twin is an error naming the entry."""
    out = {n: "remat" for n in CUSTOM_NAMES}
    out["decoder_layer_input"] = "device"
    given: dict = {}
    norm = re.sub(r"\s*=\s*", "=", str(text or "").strip().lower())
    for part in (p for p in re.split(r"[,;\s]+", norm) if p):
        name, _, where = part.partition("=")
        if name not in CUSTOM_NAMES:
            raise ValueError(f"remat_custom: unknown or unmodelled tensor {name!r} in {part!r}; known: "
                             f"{', '.join(CUSTOM_NAMES)}")
        if where not in CUSTOM_WHERE:
            raise ValueError(f"remat_custom: {name} must be {', '.join(CUSTOM_WHERE)}, got {where!r}")
        if name == "decoder_layer_input" and where == "remat":
            raise ValueError("remat_custom: decoder_layer_input cannot be rematerialised (it is the checkpoint the "
                             "layer reruns from): device or offload")
        if given.get(name, where) != where:
            raise ValueError(f"remat_custom: {name} given twice, as {given[name]} and {where}")
        given[name] = out[name] = where
    for moe_name, dense in (("moe_mlpwi_0", "mlpwi_0"), ("moe_mlpwi_1", "mlpwi_1"), ("moe_mlpwo", "mlpwo")):
        if out[moe_name] != "remat" and out[dense] == "remat" and not (dense != "mlpwo" and out["mlpwi"] != "remat"):
            raise ValueError(f"remat_custom: {moe_name} saved without {dense} is not modelled (the MoE layers' "
                             f"saves are counted beside the dense layers'): save {dense} too")
    return out


def custom_spec(text) -> "Spec":
    """The spec of remat_policy 'custom': the saved names' units; what the names placed on the device alone would
    keep stays there, the rest of what is kept waits on the host (core/estimate.py), the layer input where its own
    place says. A row whose text does not parse gets an empty spec: the input rules refuse it by name."""
    try:
        a = parse_custom(text)
    except ValueError:
        return Spec(False, ())
    saved = tuple(n for n, w in a.items() if w != "remat" and n != "decoder_layer_input")
    device = tuple(n for n in saved if a[n] == "device")
    return Spec(False, names_units(saved, "custom"), a["decoder_layer_input"] == "offload",
                names_units(device, "custom") if device else (() if saved else None))


# ... and without a flash kernel the attention probabilities (s × s per head) carry no name either: no names-based
# policy keeps them (jax.checkpoint save_only_these_names saves the named residuals only); the backward recomputes
# them (QKᵀ and the softmax) from the kept q and k
UNNAMED_SCORES = Unit("unnamed_scores", (("scores", 1.0),), ("softmax_output", "softmax_dropout_mask",
                                                             "dropout_output"),
                      source="a names-based remat policy never keeps the unnamed attention probabilities")


def names_units(saved, name: str) -> tuple:
    """The units of a names-based policy saving `saved`: what it keeps in every layer, in the MoE layers, and the
    unnamed attention probabilities it never keeps."""
    return saved_units(saved, name) + (UNNAMED_SCORES,)


def names_policy(name: str) -> tuple:
    """The units of one named MaxText remat policy."""
    return names_units(NAMED_POLICIES[name][0], name)


REMAT_NAMES = ("none", "full") + tuple(NAMED_POLICIES) + ("custom",)  # none: no policy given (recompute decides)
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


@dataclass(frozen=True)
class Spec:
    """What one row recomputes: `full` (the whole layer; with `full_share` of the stage's layers), else `units`;
    where the kept tensors live (`input_offload`, `device_units`)."""

    full: bool
    units: tuple
    input_offload: bool = False  # the layer's input (MaxText decoder_layer_input 'offload') waits on the host
    # what the tensors kept on the device alone would be (None: all that `units` keeps; (): none of it, everything
    # kept beyond the layer input): the rest of what `units` keeps waits in pinned host memory (MaxText's 'offload'
    # places, its *_offloaded policies)
    device_units: tuple | None = None


def spec(recompute, modules, policy, selective, custom="") -> Spec:
    """The recompute spec of one row (scalars)."""
    policy = str(policy)
    if policy not in ("none", ""):
        if policy == "full":
            return Spec(True, ())
        if policy == "custom":
            return custom_spec(custom)
        saved, offloaded = NAMED_POLICIES[policy]
        return Spec(False, names_policy(policy), device_units=() if offloaded else None)
    if recompute == "full":
        return Spec(True, ())
    if recompute == "selective":
        names = parse_modules(modules)
        if names:
            return Spec(False, tuple(MEGATRON_MODULES[n] for n in names))
        return Spec(False, SELECTIVE_DEFAULTS[str(selective)])
    return Spec(False, ())


def mlp_rerun(rerun: dict, parts: dict):
    """The rerun mlp_in and mlp_out of `parts` (their times or FLOPs, the shared experts' part included): the routed
    part at the mlp_* share, the shared experts' part (`parts`' shared_in / shared_out) at the shared_* share."""
    return sum(rerun[k] * (parts[k] - parts[sh]) + rerun[sh] * parts[sh]
               for k, sh in (("mlp_in", "shared_in"), ("mlp_out", "shared_out")))


def tokens_not_saved(ep, sac_saves_all_to_all=True) -> np.ndarray:
    """Where an MoE layer's dispatched tokens are not kept as all-to-all outputs (`columns`' `local`): no all-to-all
    (ep 1: a gather, which per-op SAC reruns), or a save list without it (input sac_saves_all_to_all false)."""
    return (np.asarray(ep) <= 1) | ~np.asarray(sac_saves_all_to_all, dtype=bool)


def shared_w2_not_saved(n_shared_experts, attention="standard", q_lora_rank=0) -> np.ndarray:
    """Where per-op SAC saves no h-wide output in an MoE layer (`columns`' `no_w2`, OP_SAC_MOE's comment): no shared
    expert, or MLA with a query down-projection, whose five attention mms shift the every-second-mm count."""
    out, q = np.asarray(n_shared_experts) < 1, np.asarray(q_lora_rank)
    if not np.any(q > 0):  # (the string comparison only where some row has a query down-projection)
        return out
    return out | ((np.asarray(attention) == "mla") & (q > 0))


def all_to_alls_rerun(ep, sac_saves_all_to_all=True) -> np.ndarray:
    """Where a save list without the all-to-all reruns it (`columns`' `local` for time): only where there is one
    (ep > 1); at ep 1 the gather that stands for it costs no communication to rerun."""
    return (np.asarray(ep) > 1) & ~np.asarray(sac_saves_all_to_all, dtype=bool)


def columns(recompute, modules, policy, selective, moe_share, *, local, no_w2=False, custom="") -> dict:
    """Per row: `full`, `input_offload` and `host_all` (bool), `rerun` {component: share}, `drop` {tensor: share}
    (not kept) and `drop_device` (not kept on the device: what a policy's device places alone would drop; None where
    it is `drop` on every row) (shares of a layer: a unit scoped to the MoE layers counts moe_share, to the dense
    ones 1 − moe_share; a unit's `drop_local` tensors and `rerun_local` components count only where `local`, the MoE
    tokens not saved as all-to-all outputs: `tokens_not_saved`; its `drop_no_w2` tensors and `rerun_no_w2`
    components only where `no_w2`, MoE layers where per-op SAC saves no shared expert's w2 output:
    `shared_w2_not_saved`). Vectorised over the unique combinations of the five inputs (`custom`: remat_custom, read
    under remat_policy 'custom')."""
    cols = np.broadcast_arrays(np.asarray(recompute, dtype=object), np.asarray(modules, dtype=object),
                               np.asarray(policy, dtype=object), np.asarray(selective, dtype=object),
                               np.asarray(custom, dtype=object))
    shape = cols[0].shape
    moe_share = np.broadcast_to(np.asarray(moe_share, dtype=np.float64), np.broadcast_shapes(shape, np.shape(moe_share)))
    out_shape = moe_share.shape
    full = np.zeros(out_shape, dtype=bool)
    input_offload = np.zeros(out_shape, dtype=bool)
    rerun = {c: np.zeros(out_shape) for c in COMPONENTS}
    drop: dict = {}
    drop_device: dict = {}  # what is not kept on the device: `drop` and, for a policy that offloads, the offloaded
    host_all = np.zeros(out_shape, dtype=bool)  # everything kept beyond the layer input waits on the host
    split = False  # some row places part of what it keeps on the host (else drop_device is drop: None)
    uniq, inv = zip(*(np.unique(c.astype(str).reshape(-1), return_inverse=True) for c in cols))
    code = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=np.int64)
    for u, i in zip(uniq, inv):
        code = code * len(u) + i
    code = code.reshape(shape)

    def share_of(u, where, comp=""):  # a unit's share of a layer, on the rows `where`
        if comp.startswith("shared_"):  # only the MoE layers have shared experts, and the step model's shared_in /
            # shared_out are already their average over the layers: a unit of them all or of the MoE layers counts 1
            return np.where(where, 0.0 if u.scope == "dense" else 1.0, 0.0)
        return np.where(where, np.where(u.scope == "moe", moe_share, np.where(u.scope == "dense", 1.0 - moe_share,
                                                                             1.0)), 0.0)

    def drops(units, where, into):
        for u in units:
            share = share_of(u, where)
            for t in u.drop:
                t, part = (t, 1.0) if isinstance(t, str) else t
                into[t] = np.maximum(into.get(t, 0.0), share * part)
            for tensors, mask in ((u.drop_local, local), (u.drop_no_w2, no_w2)):
                for t in tensors:
                    into[t] = np.maximum(into.get(t, 0.0), np.where(mask, share, 0.0))

    for k in np.unique(code):
        idx, rest = [], int(k)
        for u in reversed(uniq):
            idx.append(u[rest % len(u)])
            rest //= len(u)
        r, m, p, s, cu = reversed(idx)
        sp = spec(r, m, p, s, cu)
        where = np.broadcast_to(code == k, out_shape)
        full = full | (where & sp.full)
        input_offload = input_offload | (where & sp.input_offload)
        for u in sp.units:
            shared = u.shared if u.shared is not None else tuple(
                ("shared_" + comp[4:], frac) for comp, frac in u.rerun if comp in ("mlp_in", "mlp_out"))
            for comp, frac in u.rerun + shared:
                rerun[comp] = rerun[comp] + share_of(u, where, comp) * frac
            for comps, mask in ((u.rerun_local, local), (u.rerun_no_w2, no_w2)):
                for comp, frac in comps:
                    rerun[comp] = rerun[comp] + np.where(mask, share_of(u, where, comp), 0.0) * frac
        drops(sp.units, where, drop)
        drops(sp.units if sp.device_units is None else sp.device_units, where, drop_device)
        host_all = host_all | (where & (sp.device_units == ()))
        split = split or sp.device_units is not None
    return {"full": full, "input_offload": input_offload, "rerun": {k: np.minimum(v, 1.0) for k, v in rerun.items()},
            "drop": drop, "drop_device": drop_device if split else None, "host_all": host_all}
