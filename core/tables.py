"""Rule tables: the small fixed vocabularies the formulas interpret, each a table of named records with its source.

One owner per fact (docs/architecture): a new optimizer, recipe, dtype or overhead preset is one row here; the
choice lists of the input schema (`core.inputs`), the formulas (`core.memory`, `core.flops`), the CLI, the sweep
grammar and the app's pickers all read these tables. Human units never appear here: bytes, fractions.
"""
from __future__ import annotations

from dataclasses import dataclass

from .units import GiB


@dataclass(frozen=True)
class Dtype:
    """A numeric format: bytes per element and which accelerator peak (catalog column) runs it."""

    name: str
    bytes: int
    peak: str  # "bf16", "fp8" or "fp32": the catalog's peak column for matmuls in this dtype
    source: str


DTYPES = {d.name: d for d in (
    Dtype("bf16", 2, "bf16", "bfloat16; dense tensor-core peak (hardware.md)"),
    Dtype("fp16", 2, "bf16", "IEEE binary16; same tensor-core rate as bf16 on every catalog chip (hardware.md)"),
    Dtype("fp8", 1, "fp8", "E4M3/E5M2; dense fp8 tensor-core peak where the chip has one (hardware.md)"),
    Dtype("fp32", 4, "fp32", "IEEE 754 binary32; non-tensor-core fp32 peak (hardware.md)"),
)}
DTYPE_BYTES = {d.name: d.bytes for d in DTYPES.values()}
COMPUTE_DTYPES = tuple(DTYPES)  # dtypes a run can compute in (each maps to one catalog peak)
STATE_DTYPES = ("bf16", "fp16", "fp32", "fp8")  # dtypes accepted for weights and gradients
WEIGHT_DTYPES = ("bf16", "fp16", "fp32")  # offered as inputs for weights and gradients


@dataclass(frozen=True)
class Optimizer:
    """Optimizer state per parameter, excluding the fp32 master copy (counted separately)."""

    name: str
    bytes_per_param: float  # NaN: not a per-parameter constant (adafactor: factored, see memory.adafactor_*)
    source: str


OPTIMIZERS_TABLE = {o.name: o for o in (
    Optimizer("adamw", 8.0, "two fp32 moments (Loshchilov & Hutter 2019; CS336 lecture 2)"),
    Optimizer("adamw_bf16", 4.0, "two bf16 moments: Megatron-Core's precision-aware optimizer "
                                 "(--use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16), as "
                                 "Megatron-Bridge's DeepSeek-V3 recipe sets it (recipes/deepseek/deepseek_v3.py @v0.2.0: "
                                 "exp_avg_dtype = exp_avg_sq_dtype = torch.bfloat16); with bf16 weights its master "
                                 "copy is kept as 16-bit remainders (core/memory.master_bytes_per_param)"),
    Optimizer("adamw8bit", 2.0, "two 8-bit moments (Dettmers et al. 2022; per-block fp32 absmax, 8 B per 2048 "
                                "values, ignored)"),
    Optimizer("sgd_momentum", 4.0, "one fp32 momentum buffer"),
    Optimizer("adafactor", float("nan"), "factored second moment, no momentum (Shazeer & Stern 2018)"),
    Optimizer("lion", 4.0, "one fp32 momentum (Chen et al. 2023)"),
    Optimizer("sgd", 0.0, "no state"),
)}
OPTIMIZERS = tuple(OPTIMIZERS_TABLE)


@dataclass(frozen=True)
class Recipe:
    """A named mixed-precision recipe: the state inputs it sets (explicit inputs win over it)."""

    name: str
    weight_dtype: str
    grad_dtype: str
    master_weights: bool
    grad_accum_fp32: bool
    optimizer: str
    source: str

    def fields(self) -> dict:
        """The inputs this recipe sets."""
        return {k: getattr(self, k) for k in RECIPE_FIELDS}


RECIPE_FIELDS = ("weight_dtype", "grad_dtype", "master_weights", "grad_accum_fp32", "optimizer")
RECIPES = {r.name: r for r in (
    Recipe("cs336-12", "bf16", "bf16", False, False, "adamw", "bf16 weights and grads, fp32 Adam moments, no master "
           "copy (CS336 lecture 2)"),
    Recipe("zero-16", "bf16", "bf16", True, False, "adamw", "+ fp32 master weights (ZeRO §3.1; the planning number "
           "of the CS336 lecture, the ZeRO paper and the Ultra-Scale Playbook)"),
    Recipe("megatron-18", "bf16", "fp32", True, False, "adamw", "fp32 gradients (Megatron-LM, DeepSpeed)"),
    Recipe("playbook-20", "bf16", "bf16", True, True, "adamw", "bf16 grads + an fp32 accumulation buffer "
           "(Ultra-Scale Playbook)"),
    Recipe("fp32-16", "fp32", "fp32", False, False, "adamw", "pure fp32: weights, grads, two moments"),
)}


@dataclass(frozen=True)
class Overhead:
    """Memory beyond state + activations + logits: fixed bytes plus a fraction of the rest."""

    name: str
    overhead_fixed_bytes: float
    fragmentation_frac: float
    source: str

    def fields(self) -> dict:
        return {"overhead_fixed_bytes": self.overhead_fixed_bytes, "fragmentation_frac": self.fragmentation_frac}


# "realistic": CUDA context + NCCL communication buffers ≈ 1.5 GiB (PyTorch's CUDA context is typically 0.3–1 GiB
# depending on the kernels loaded; NCCL allocates buffers per communicator), plus 10 % allocator fragmentation of
# what is allocated and freed every step — activations, logits, gathered buffers; the model state sits in buffers
# allocated once (core/memory.overhead_bytes) — (PyTorch caching allocator; its memory-management notes). A stated
# rule of thumb, not a fit.
OVERHEADS = {o.name: o for o in (
    Overhead("none", 0.0, 0.0, "no overhead: the published ledgers (CS336, ZeRO, Korthikanti) count none"),
    Overhead("realistic", 1.5 * GiB, 0.10, "CUDA context + NCCL buffers 1.5 GiB, + 10 % fragmentation of the "
             "per-step tensors "
             "(rule of thumb, see the comment above)"),
)}

RECOMPUTE_MODES = ("none", "selective", "full")  # Korthikanti et al. 2022 §5 (selective), Chen et al. 2016 (full)
PROFILES = ("fused", "eager")  # the kernels a step runs: the tensors kept (memory.layer_ledger), the bytes moved
# the attention kernel a step runs (core/steptime.py): the profile's own (auto), the chip's best (native),
# FlashAttention-2 class (fa2), PyTorch's FlexAttention (flex), or FlashAttention in Triton, the
# FlashAttention-1-era kernel (triton)
ATTENTION_KERNELS = ("auto", "native", "fa2", "flex", "triton")
GPU_ATTENTION_KERNELS = ("fa2", "flex", "triton")  # rated against FlashAttention-2; no TPU runs them
ATTENTION_FLOPS = ("none", "full", "causal")  # how attention FLOPs are counted (flops.attention_flops_per_token)
# MoE token dispatchers (the moe_dispatcher input; core/steptime.py): NCCL's all-to-all, the two that send a token
# once per destination node (DeepEP, HybridEP: NODE_DEDUP_DISPATCHERS), and GShard-style one-hot einsums over
# capacity buffers (MaxText's dense path)
MOE_DISPATCHERS = ("alltoall", "deepep", "hybridep", "einsum", "dense")
NODE_DEDUP_DISPATCHERS = ("deepep", "hybridep")
# MLP: gelu = 2 matrices (GPT); swiglu = SiLU-gated, 3 matrices (Llama, Shazeer 2020); geglu = GeLU-gated, 3 matrices
# (Gemma: gate_proj, up_proj, down_proj with gelu_pytorch_tanh). The gated kinds keep the same tensors. relu2 = squared
# ReLU, 2 matrices, not gated (So et al. 2021, Primer; Nemotron-4 and Nemotron-H: up_proj, relu², down_proj): it keeps
# the tensors gelu keeps (its input for the derivative 2·relu(x), the hidden for the down projection).
MLP_KINDS = ("gelu", "swiglu", "geglu", "relu2")
GATED_MLPS = ("swiglu", "geglu")
# nonparametric: LayerNorm without weight or bias (OLMo 1, Groeneveld et al. 2024 §2.1)
NORM_KINDS = ("layernorm", "rmsnorm", "nonparametric")
BIAS_KINDS = ("none", "qkv", "all")
# alibi: linear biases on the scores, no parameters (BLOOM, Press et al. 2022); none: no position encoding
POSITION_KINDS = ("learned", "rotary", "alibi", "none")
# standard: multi-head / grouped-query / multi-query by n_kv_heads (Ainslie et al. 2023); mla: multi-head latent
# attention, low-rank compressed queries and keys/values with a decoupled RoPE key (DeepSeek-V2, arXiv:2405.04434 §2.1)
ATTENTION_KINDS = ("standard", "mla")
# RMSNorm on queries and keys before RoPE: per_head = one head_dim-wide weight each for q and k (Qwen3, Gemma 3);
# full = over the whole projection, n_heads·head_dim and n_kv_heads·head_dim wide (OLMo 2, arXiv:2501.00656 §3.1)
QK_NORMS = ("none", "per_head", "full")
NORMS_PER_LAYER = (1, 2, 4)  # 1: one norm feeds attention and MLP in parallel (Falcon 7B); 4: Gemma 2/3 post-norms

# --- training modes (issue 12) ----------------------------------------------------------------------------------
TRAINING_MODES = ("full", "lora", "qlora")
# which linear layers of each block carry LoRA adapters (Hu et al. 2021 §4.2 adapt W_q and W_v; QLoRA, Dettmers
# et al. 2023 §4, adapts every linear layer of the block, which it finds necessary to match full fine-tuning)
LORA_TARGETS = ("qv", "attention", "all")


@dataclass(frozen=True)
class BaseFormat:
    """Storage of frozen base weights under LoRA: bytes per parameter, the quantisation constants included."""

    name: str
    bytes_per_param: float
    bytes_per_param_double_quant: float  # with QLoRA's double quantization of the constants (same if n/a)
    quantized: bool  # only the blocks' linear weights are quantised; embeddings, LM head, norms stay 16-bit
    source: str


# NF4 (Dettmers et al. 2023, QLoRA §3): 4-bit codes in blocks of 64 with one fp32 absmax each = 4 + 32/64 = 4.5 bits;
# double quantization stores the absmax as 8-bit codes (blocks of 256, one fp32 constant each):
# 4 + 8/64 + 32/(64·256) = 4.127 bits. int8: bitsandbytes LLM.int8 (Dettmers et al. 2022), 1 byte per weight
# (its fp32 scale per output row, 4 bytes per d_model weights or more, is not counted).
BASE_FORMATS = {f.name: f for f in (
    BaseFormat("bf16", 2.0, 2.0, False, "16-bit base weights"),
    BaseFormat("fp16", 2.0, 2.0, False, "16-bit base weights"),
    BaseFormat("fp32", 4.0, 4.0, False, "32-bit base weights"),
    BaseFormat("int8", 1.0, 1.0, True, "bitsandbytes LLM.int8 (Dettmers et al. 2022); row scales not counted"),
    BaseFormat("nf4", (4 + 32 / 64) / 8, (4 + 8 / 64 + 32 / (64 * 256)) / 8, True,
               "4-bit NormalFloat, blocks of 64 with an fp32 absmax (4.5 bits); double quantization 4.127 bits "
               "(Dettmers et al. 2023, QLoRA §3)"),
)}
BASE_DTYPES = tuple(BASE_FORMATS)

# host (CPU) offload: optimizer = ZeRO-Offload (Ren et al. 2021 §4: gradients, fp32 master and optimizer moments on
# the host, the update on the CPU); optimizer_params = ZeRO-Infinity's CPU parameter offload on top (Rajbhandari et
# al. 2021; DeepSpeed offload_param, ZeRO-3 only): the GPU keeps only gathered layers
OFFLOAD_MODES = ("none", "optimizer", "optimizer_params")


@dataclass(frozen=True)
class ZeroConvention:
    """How ZeRO's partitioned state and its working buffers are counted: one row per framework."""

    name: str
    source: str
    fp32_master: bool = False  # with 16-bit weights and an fp32 master, the trained fp32 parameter is the master
    # and its gradients are 4 bytes (reduced so too); its 16-bit copy lives whole below ZeRO-3 (unsharded_copy) or is a
    # cast of the weights in use (never a row)
    unsharded_copy: bool = False
    offload_buffers: bool = True  # parameter offload brings DeepSpeed's (ZeRO-Infinity's) gathered-layer buffers


ZERO_CONVENTIONS = {z.name: z for z in (
    ZeroConvention("paper", "ZeRO paper Fig. 1 (Rajbhandari et al. 2020 §5): partitioned state only, no buffers"),
    ZeroConvention("deepspeed", "DeepSpeed's estimators (deepspeed/runtime/zero/stage_1_and_2.py "
                   "estimate_zero2_model_states_mem_needs: 4·N + 16·N/d; stage3.py "
                   "estimate_zero3_model_states_mem_needs: 4 × largest layer + 18·N/d; docs 'Memory "
                   "Requirements'): the optimizer's gradients are an fp32 partition (4·N/d); ZeRO-1 also keeps "
                   "the full 16-bit gradients, ZeRO-2 its 16-bit partition (stage_1_and_2.py reduce_ipg_grads frees "
                   "the rest as each bucket is reduced; the estimator's 4·N counts them whole), ZeRO-3 none but the "
                   "largest layer's, gathered with its 16-bit "
                   "parameters (4 bytes per parameter of that layer), plus the prefetch bucket "
                   "(stage3_prefetch_bucket_size, 5e7 parameters by default, deepspeed/runtime/zero/config.py)"),
    ZeroConvention("fsdp", "PyTorch FSDP (Zhao et al. 2023, VLDB, §3.2-3.3; torch.distributed.fsdp docs): one "
                   "transformer block (or the root: embedding, LM head, final norm) per unit; the unit being "
                   "computed and the one prefetched are gathered in the weight dtype, and one unit's unsharded "
                   "gradients live until their reduce-scatter; mixed precision (torch 2.13 _fully_shard "
                   "_fsdp_param.py orig_dtype, _fsdp_collectives.py foreach_reduce): the sharded fp32 parameter is the "
                   "master, its 16-bit copy exists only unsharded, gradients are reduced and kept in fp32 (torchtitan "
                   "mixed_precision_reduce float32)", fp32_master=True, unsharded_copy=True, offload_buffers=False),
    ZeroConvention("xla", "MaxText on XLA: the trained parameters are fp32 (MaxText base.yml weight_dtype float32) and "
                   "are the optimizer's master, their gradients fp32 (base.yml grad_dtype float32); the bf16 compute "
                   "copy is a cast of the weights in use, and XLA assigns the gathered weights statically as part of "
                   "the layer's working set (buffer assignment), so no buffers beyond the state",
                   fp32_master=True, offload_buffers=False),
)}
ZERO_CONVENTION_NAMES = tuple(ZERO_CONVENTIONS)


def zero_conventions_with(flag: str) -> tuple:
    """The conventions whose `flag` (fp32_master, unsharded_copy, offload_buffers) is set."""
    return tuple(n for n, z in ZERO_CONVENTIONS.items() if getattr(z, flag))


DEEPSPEED_PREFETCH_PARAMS = 5e7  # stage3_prefetch_bucket_size default (DeepSpeed config docs, ZeRO section)
# reduce_bucket_size default, elements (deepspeed/runtime/zero/config.py: Field(pp_int(5e8))): with contiguous_gradients
# (default True) ZeRO-3 keeps one such bucket on the GPU (stage3.py: bucket.buffer = torch.empty(reduce_bucket_size)),
# ZeRO-1/2 one, or two with overlap_comm ("double buffers", stage_1_and_2.py)
DEEPSPEED_REDUCE_BUCKET = 5e8


@dataclass(frozen=True)
class Conventions:
    """A named set of defaults (`--conventions`): the inputs it sets unless they are given. `planner` holds the
    schema's own defaults (core/inputs.py), so choosing it changes nothing; `paper` holds the conventions the
    published ledgers and worked examples count by (CS336 lecture 2, the ZeRO paper, Korthikanti et al. 2022, the
    seeds): no flash attention, ZeRO-0, no memory overhead, sequence length 2048 on one GPU, a given 50 % MFU, and one
    micro-batch per data-parallel replica per step."""

    name: str
    values: tuple  # (input name, value) pairs
    source: str

    def fields(self) -> dict:
        return dict(self.values)


PAPER_VALUES = (("seq_len", 2048), ("n_gpus", 1), ("flash_attention", False), ("zero_stage", 0),
                ("overhead_fixed_bytes", 0.0), ("fragmentation_frac", 0.0), ("mfu", 0.5),
                ("target_batch_tokens", 0))
CONVENTIONS = {c.name: c for c in (
    Conventions("planner", (), "the schema's defaults: what a planner would launch with (core/inputs.py)"),
    Conventions("paper", PAPER_VALUES, "CS336 lecture 2; ZeRO §3.1 and Fig. 1; Korthikanti et al. 2022 §4–5; the "
                "seeds' worked examples"),
)}


# ---------------------------------------------------------------------------------------------------------------
# Activations: the per-tensor ledger of one transformer layer (core/memory.py layer_ledger computes each one's bytes)
# ---------------------------------------------------------------------------------------------------------------

# Order and meaning of the ledger's tensors. Each entry: (name, what it is, which op keeps it for backward).
LEDGER_TENSORS = (
    ("norm1_input", "input of the attention-block norm (the residual stream)", "layernorm/rmsnorm 1"),
    ("norm1_stats", "fp32 per-row statistics of norm 1 (rstd; mean for layernorm)", "layernorm/rmsnorm 1"),
    ("norm1_upcast", "eager RMSNorm keeps its input upcast to fp32 instead of the 16-bit input: the extra bytes "
                     "(norm1_input + norm1_upcast = the fp32 copy)", "pow / rstd multiply (eager RMSNorm 1)"),
    ("norm1_normalized", "eager RMSNorm: x·rstd cast back to 16 bits, before the weight", "weight multiply (norm 1)"),
    ("qkv_input", "normalised input of the QKV projection", "QKV linear"),
    ("q", "queries (after RoPE where used)", "QKᵀ matmul"),
    ("k", "keys (after RoPE where used); n_kv_heads heads", "QKᵀ matmul"),
    ("softmax_output", "attention probabilities, one s×s matrix per head", "softmax backward / AV matmul"),
    ("softmax_dropout_mask", "1-byte dropout mask on the probabilities, one s×s per head", "attention dropout"),
    ("dropout_output", "dropped-out probabilities fed to the AV matmul", "AV matmul"),
    ("v", "values; n_kv_heads heads", "AV matmul"),
    ("softmax_lse", "fp32 log-sum-exp per head and row (flash attention keeps this instead of s×s)", "flash attn"),
    ("attn_output", "attention output: input of the output projection (and flash's O)", "output linear"),
    ("attn_dropout_mask", "1-byte dropout mask after the output projection", "residual dropout"),
    ("norm2_input", "input of the MLP-block norm", "layernorm/rmsnorm 2"),
    ("norm2_stats", "fp32 per-row statistics of norm 2", "layernorm/rmsnorm 2"),
    ("norm2_upcast", "eager RMSNorm 2: the fp32 copy's bytes beyond norm2_input", "pow / rstd multiply (norm 2)"),
    ("norm2_normalized", "eager RMSNorm 2: x·rstd cast back to 16 bits, before the weight", "weight multiply (norm 2)"),
    ("mlp_input", "normalised input of the first MLP projection(s)", "fc1 / gate+up linear"),
    ("gelu_input", "GeLU input (fc1 output), d_ff wide", "GeLU"),
    ("gate", "SwiGLU gate projection output (SiLU input), d_ff wide", "SiLU"),
    ("up", "SwiGLU up projection output, d_ff wide", "gate ⊙ up multiply"),
    ("silu_output", "SiLU(gate), d_ff wide (kept by eager PyTorch; fused SwiGLU kernels recompute it)", "multiply"),
    ("mlp_hidden", "input of the second MLP projection (GeLU output or SiLU(gate)⊙up), d_ff wide", "fc2 / down"),
    ("mlp_dropout_mask", "1-byte dropout mask after the MLP", "residual dropout"),
    ("router_probs", "MoE: fp32 router probabilities, n_experts per token", "router softmax / top-k"),
    ("expert_inputs", "MoE: tokens gathered for their top_k experts (top_k copies of the MLP input)", "expert linear"),
    ("expert_outputs", "MoE: each expert's output, kept for the routing-weight multiply (top_k copies)",
     "routing-weight multiply"),
    ("moe_routing_indices", "MoE, eager: the routing's bookkeeping — int64 top-k indices, the renormalisation's fp32 "
                            "operands, each expert's int64 token and slot indices, its 16-bit routing weights",
     "topk / gather / index_add_"),
    ("moe_weighted_outputs", "MoE, eager: each expert's weighted output, kept by index_add_ (its derivative reads "
                             "source.dim())", "index_add_"),
    ("shared_experts", "MoE: the shared experts' d_ff-wide tensors (as an MLP's: gate, up, [SiLU,] down input), and "
                       "with a shared-expert gate its output and sigmoid", "shared expert MLP"),
    ("qk_norm_input", "QK-norm: queries and keys before their RMSNorm (eager: the fp32 copy, and x·rstd)",
     "q_norm / k_norm"),
    ("qk_norm_stats", "QK-norm: fp32 rstd per head and row (full: per row)", "q_norm / k_norm"),
    ("mla_latents", "MLA: the compressed query and KV latents, input of their RMSNorms (eager: the fp32 copy)",
     "q_a_layernorm / kv_a_layernorm"),
    ("mla_latent_stats", "MLA: fp32 rstd of the latents' norms", "q_a_layernorm / kv_a_layernorm"),
    ("mla_latents_normed", "MLA: the normalised latents, input of the up-projections (eager: also x·rstd)",
     "q_b_proj / kv_b_proj"),
    ("post_norms", "Gemma 2/3: the post-attention and post-MLP norms' inputs and statistics", "post-norms"),
    ("lora_hidden", "LoRA: each adapter's rank-r intermediate x·Aᵀ, kept for B's gradient", "lora_B"),
    ("mamba_norm_input", "Mamba-2 layer: input of its pre-norm (the residual stream; a parallel hybrid shares "
                         "norm 1)", "layernorm/rmsnorm (Mamba-2 layer)"),
    ("mamba_norm_stats", "Mamba-2 layer: fp32 rstd of its pre-norm (eager: also the fp32 copy and x·rstd)",
     "rmsnorm (Mamba-2 layer)"),
    ("mamba_input", "Mamba-2: normalised input of in_proj (a parallel hybrid shares qkv_input)", "in_proj linear"),
    ("mamba_zxbcdt", "Mamba-2: in_proj's output [z, x, B, C, dt], 2·d_inner + 2·G·N + H wide: the fused kernel "
                     "recomputes the conv, dt and the SSD states from it", "mamba_split_conv1d_scan_combined"),
    ("mamba_out_x", "Mamba-2: the SSD output before the gated norm, d_inner wide (the norm's output and out_proj's "
                    "input are recomputed)", "mamba_split_conv1d_scan_combined"),
    ("mamba_rstd", "Mamba-2: fp32 rstd of the gated RMSNorm, one per group", "RMSNormGated"),
)
