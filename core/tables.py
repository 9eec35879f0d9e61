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
# everything else (PyTorch caching allocator; its memory-management notes). A stated rule of thumb, not a fit.
OVERHEADS = {o.name: o for o in (
    Overhead("none", 0.0, 0.0, "no overhead: the published ledgers (CS336, ZeRO, Korthikanti) count none"),
    Overhead("realistic", 1.5 * GiB, 0.10, "CUDA context + NCCL buffers 1.5 GiB, + 10 % fragmentation "
             "(rule of thumb, see the comment above)"),
)}

RECOMPUTE_MODES = ("none", "selective", "full")  # Korthikanti et al. 2022 §5 (selective), Chen et al. 2016 (full)
PROFILES = ("fused", "eager")  # which tensors a framework keeps (memory.layer_ledger)
ATTENTION_FLOPS = ("none", "full", "causal")  # how attention FLOPs are counted (flops.attention_flops_per_token)
MLP_KINDS = ("gelu", "swiglu")
NORM_KINDS = ("layernorm", "rmsnorm")
BIAS_KINDS = ("none", "qkv", "all")
POSITION_KINDS = ("learned", "rotary")
