"""How each framework executes a training step: one profile per framework, as data with sources.

data/frameworks.csv holds what the framework's own docs and code say (which elementwise kernels are fused, which
attention kernel runs, how gradients and parameters are communicated, which layouts it offers, what "selective"
recomputation means there, its memory conventions); data/kernels.csv holds the bytes each elementwise kernel moves
in a fused and in an eager implementation; data/fitted.csv holds the few constants fitted to published runs by
bench/fit_profiles.py (each row says to which runs, and the leave-one-source-out error), and the prediction
interval of each profile. The step terms (core/steptime.py) and the ledger (core/memory.py) read these rows —
there is no `if framework == …` in a formula.

Vectorised access: `value(framework_column, key)` maps a column of framework names to a column of a profile's
numbers (or strings), so a sweep over frameworks costs one `np.where` per profile.
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import vec as VE
from .schedule import SCHEDULES
from .tables import GPU_ATTENTION_KERNELS, PROFILES  # PROFILES: the kernels a step runs (the `profile` input)

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
ELEMENTWISE_OPS = ("rmsnorm", "layernorm", "swiglu", "gelu", "rope", "residual", "loss")
# the numbers of a profile (everything else is a word or a list)
NUMERIC = ("kernels_per_layer", "kernels_per_layer_compiled", "host_s_per_kernel",
           "cpu_optimizer_params_per_s_per_node", "cpu_optimizer_params_per_s_per_grace", "window_block",
           "window_block_tpu")
# fitted by bench/fit_profiles.py (data/fitted.csv); the value each takes before any fit
FITTED_DEFAULTS = {"sustained_scale": 1.0, "overlap_cost": 0.0, "unit_host_s": 0.0, "step_host_s": 0.0,
                   "interval_low": 0.85, "interval_high": 1.15, "calibrated_low": 0.90, "calibrated_high": 1.10}
FITTED_KEYS = tuple(FITTED_DEFAULTS)


SINK_WINDOW_SKIP = ("yes", "tpu", "no")  # where a kernel skips a window's masked blocks under attention sinks
GRAD_ALLREDUCE = ("overlapped", "exposed")  # the data-parallel gradient all-reduce: hidden behind the backward or not
# ZeRO-1/2's all-gather of the updated parameters: overlapped with the next forward, or after the optimizer step with
# nothing left to hide it (DeepSpeed)
PARAM_GATHER = ("overlapped", "after_step")
# where an MoE layer multiplies the routing weights: on the experts' outputs in the combine (which keeps each routed
# copy's output for the weights' gradient), or inside the experts' activation (Megatron-Core since core_v0.13.0:
# nothing beyond the activation's own input is kept)
MOE_PROBS = ("output", "activation")
# how an MoE layer's experts multiply: one GEMM kernel at the dense matmul rate (Transformer Engine's grouped or
# per-expert cuBLAS GEMMs, XLA), or PyTorch's torch._grouped_mm at the chip's measured grouped rate where there is one
# (data/accelerators.csv grouped_gemm_efficiency)
MOE_GEMM = ("dense", "torch_grouped_mm")
# whether the framework can run the optimizer step inside the backward, each parameter as soon as its gradient is
# ready (torchtune's optimizer_in_bwd: no gradient buffer kept; core/estimate.py)
OPTIMIZER_IN_BACKWARD = ("offered", "no")
# whether the framework takes a bitsandbytes paged optimizer (the moments in CUDA unified memory; core/estimate.py)
PAGED_OPTIMIZER = ("offered", "no")
# whether the framework runs models whose MoE layers compute every expert on every token (moe_dispatcher dense:
# Hugging Face transformers' Llama 4)
MOE_DENSE = ("offered", "no")
# which tensor-parallel collectives its TP overlap (tp_overlap) hides behind GEMMs: every one (Transformer Engine's
# userbuffers overlap the forward's and the backward's; XLA's collective matmul) or the forward's only (the measured
# gain of PyTorch's async TP is the forward's: data/frameworks.csv fsdp tp_overlap_scope)
TP_OVERLAP_SCOPE = ("all", "forward")
# the words checked when data/frameworks.csv is read: their allowed values and the value a profile omitting one takes
# (None: it must say)
CHECKED_WORDS = {"kernels": (PROFILES, None), "sink_window_skip": (SINK_WINDOW_SKIP, "no"),
                 "grad_allreduce": (GRAD_ALLREDUCE, GRAD_ALLREDUCE[0]), "param_gather": (PARAM_GATHER, PARAM_GATHER[0]),
                 "moe_probs": (MOE_PROBS, MOE_PROBS[0]), "moe_gemm": (MOE_GEMM, MOE_GEMM[0]),
                 "optimizer_in_backward": (OPTIMIZER_IN_BACKWARD, None), "paged_optimizer": (PAGED_OPTIMIZER, None),
                 "moe_dense": (MOE_DENSE, None), "tp_overlap_scope": (TP_OVERLAP_SCOPE, TP_OVERLAP_SCOPE[0])}


@dataclass(frozen=True)
class Profile:
    """One framework's profile (rows of data/frameworks.csv and data/fitted.csv)."""

    name: str
    label: str
    kernels: str  # "fused" | "eager" without compilation: the bytes its elementwise ops move and the tensors kept
    compile: str  # "no" (fused already) | "offered" (torch.compile) | "always" (XLA)
    attention: str  # "native" (the family's best kernel) | "fa2" (FlashAttention-2 class)
    grad_reduce: str  # bucketed | per_unit | zero_buckets | lhs (core/steptime.py)
    selective: str  # what --recompute selective means here (core/tables.py RECOMPUTE_UNITS)
    zero_stages: tuple
    unit_hook_stages: tuple  # the ZeRO stages whose units run host hooks per micro-batch (unit_host_s applies)
    default_zero_stage: int  # the stage a question that names none gets (data/frameworks.csv, with its source)
    layouts: tuple
    pp_schedules: tuple  # the pipeline schedules it runs (core/schedule.py SCHEDULES)
    zero_convention: str
    dp_overlap: str  # yes | no | stage3 (only ZeRO-3 overlaps: DeepSpeed's overlap_comm default)
    tp_overlap: str  # yes | no
    tp_overlap_scope: str = TP_OVERLAP_SCOPE[0]  # forward: its TP overlap hides the forward's collectives only
    remat_dce: str = "no"  # yes: the compiler drops recomputed work the backward never reads (XLA)
    sink_window_skip: str = "no"  # where its kernel skips windowed blocks under attention sinks (SINK_WINDOW_SKIP)
    sequence_parallel: str = "input"  # always: activations are split over tp whatever the input says (XLA sharding)
    grad_allreduce: str = GRAD_ALLREDUCE[0]  # exposed: the data-parallel gradient all-reduce waits for the backward
    param_gather: str = PARAM_GATHER[0]  # after_step: ZeRO-1/2's parameter all-gather runs after the optimizer step
    moe_probs: str = MOE_PROBS[0]  # activation: the routing weights multiply inside the experts (no output kept)
    moe_gemm: str = MOE_GEMM[0]  # torch_grouped_mm: the experts at the chip's measured grouped-GEMM rate
    optimizer_in_backward: str = OPTIMIZER_IN_BACKWARD[1]  # offered: the optimizer can step inside the backward
    paged_optimizer: str = PAGED_OPTIMIZER[1]  # offered: it takes a bitsandbytes paged optimizer
    moe_dense: str = MOE_DENSE[1]  # offered: it runs models whose experts compute every token (moe_dispatcher dense)
    stacks: tuple = ()  # the stacks it stands for, accepted as framework names for it (`canonical`)
    numbers: dict = field(default_factory=dict)
    sources: dict = field(default_factory=dict)

    def number(self, key: str) -> float:
        return self.numbers[key]


def _default_zero(name: str, kv: dict) -> int:
    z = int(kv["default_zero_stage"])
    if str(z) not in kv["zero_stages"].split():
        raise ValueError(f"data/frameworks.csv {name} default_zero_stage: {z} is not one of its zero_stages")
    return z


@lru_cache(maxsize=1)
def profiles() -> dict[str, Profile]:
    """Every framework's profile by name, from data/frameworks.csv and data/fitted.csv."""
    rows: dict[str, dict] = {}
    sources: dict[str, dict] = {}
    with open(DATA_DIR / "frameworks.csv", newline="") as fh:
        for r in csv.DictReader(fh):
            rows.setdefault(r["framework"], {})[r["key"]] = r["value"]
            sources.setdefault(r["framework"], {})[r["key"]] = r["source"]
    fitted = fitted_rows()
    out = {}
    for name, kv in rows.items():
        for key, (allowed, default) in CHECKED_WORDS.items():
            if kv.setdefault(key, default) not in allowed:
                raise ValueError(f"data/frameworks.csv {name} {key}: {kv[key]!r} is not one of {allowed}")
        nums = {k: float(kv[k]) for k in NUMERIC if k in kv}
        nums.setdefault("kernels_per_layer_compiled", nums.get("kernels_per_layer", 0.0))
        for k in ("window_block", "unit_hook_stages", "pp_schedules"):
            if k not in kv:
                raise ValueError(f"data/frameworks.csv {name}: no {k} row")
        nums.setdefault("window_block_tpu", nums["window_block"])  # a framework that runs only on GPUs
        bad = [x for x in kv["pp_schedules"].split() if x not in SCHEDULES]
        if bad or "1f1b" not in kv["pp_schedules"].split():
            raise ValueError(f"data/frameworks.csv {name} pp_schedules: {kv['pp_schedules']!r} must hold 1f1b and "
                             f"only {SCHEDULES}")
        for k, d in FITTED_DEFAULTS.items():
            nums[k] = fitted.get((name, k), (d, ""))[0]
            sources[name][k] = fitted.get((name, k), (d, "not fitted (default)"))[1]
        out[name] = Profile(name=name, label=kv["label"], kernels=kv["kernels"], compile=kv["compile"],
                            attention=kv["attention"],
                            grad_reduce=kv["grad_reduce"], selective=kv["selective"],
                            zero_stages=tuple(int(z) for z in kv["zero_stages"].split()),
                            unit_hook_stages=tuple(int(z) for z in kv["unit_hook_stages"].split() if z != "none"),
                            default_zero_stage=_default_zero(name, kv),
                            layouts=tuple(kv["layouts"].split()), pp_schedules=tuple(kv["pp_schedules"].split()),
                            zero_convention=kv["zero_convention"],
                            dp_overlap=kv["dp_overlap"], tp_overlap=kv["tp_overlap"],
                            tp_overlap_scope=kv["tp_overlap_scope"],
                            remat_dce=kv.get("remat_dce", "no"),
                            sink_window_skip=kv["sink_window_skip"],
                            sequence_parallel=kv.get("sequence_parallel", "input"),
                            grad_allreduce=kv["grad_allreduce"], param_gather=kv["param_gather"],
                            moe_probs=kv["moe_probs"], moe_gemm=kv["moe_gemm"],
                            optimizer_in_backward=kv["optimizer_in_backward"],
                            paged_optimizer=kv["paged_optimizer"],
                            moe_dense=kv["moe_dense"],
                            stacks=tuple(kv.get("stacks", "").lower().split()), numbers=nums,
                            sources=sources[name])
    seen: dict = {}
    for name, p in out.items():
        for s in p.stacks:
            if s in out or s in seen:
                raise ValueError(f"data/frameworks.csv {name} stacks: {s!r} is already "
                                 f"{'a profile' if s in out else 'a stack of ' + seen[s]}")
            seen[s] = name
    return out


@lru_cache(maxsize=1)
def fitted_rows() -> dict:
    """(scope, key) → (value, source) from data/fitted.csv (written by bench/fit_profiles.py). The scope is a
    framework, 'gpu' / 'tpu' for the sustained fraction of every GPU / TPU family, or a chip family fitted on its own
    (bench/fit_profiles.FAMILY_FITS)."""
    path = DATA_DIR / "fitted.csv"
    if not path.exists():
        return {}
    with open(path, newline="") as fh:
        return {(r["scope"], r["key"]): (float(r["value"]), r["source"]) for r in csv.DictReader(fh)}


def sustained_fraction(family: str) -> tuple:
    """(value, source) of the fitted sustained fraction for a chip family: TPUs have their own (fixed clocks, one
    XLA program), a GPU family fitted on its own runs (bench/fit_profiles.FAMILY_FITS) its own, every other
    GPU family shares one (data/fitted.csv; 0.84 before any fit). `family` is the one whose fraction is taken: a
    family that runs another's GEMM kernels names it in data/efficiency.csv sustained_as, which
    core.hardware.efficiency_table resolves before it asks here (Ada and GeForce Blackwell: Ampere's)."""
    rows = fitted_rows()
    if (family, "sustained_fraction") in rows:
        return rows[(family, "sustained_fraction")]
    scope = "tpu" if family == "tpu" else "gpu"
    return rows.get((scope, "sustained_fraction"), (0.84, "not fitted (default)"))


@lru_cache(maxsize=1)
def kernels() -> dict:
    """(impl, op) → bytes moved per element by one elementwise op, forward (data/kernels.csv)."""
    with open(DATA_DIR / "kernels.csv", newline="") as fh:
        return {(r["impl"], r["op"]): float(r["bytes_per_element"]) for r in csv.DictReader(fh)}


def names() -> tuple:
    return tuple(profiles())


FRAMEWORKS = ("megatron", "fsdp", "deepspeed", "maxtext")  # the input's choices, in the order the help lists them
assert set(FRAMEWORKS) == set(names()), names()


def stack_names() -> dict:
    """Each stack a profile stands for (data/frameworks.csv `stacks`: torchtitan, nemo, axlearn, …) → that profile."""
    return {s: n for n, p in profiles().items() for s in p.stacks}


def canonical(value):
    """A framework name as the profiles know it: a stack's name (any case) → its profile; anything else unchanged (so
    that the input's check names it)."""
    if isinstance(value, str):
        return stack_names().get(value.strip().lower(), value.strip().lower() if value.strip().lower() in FRAMEWORKS
                                 else value)
    return value


def describe() -> str:
    """The profiles and the stacks each stands for, in the order of FRAMEWORKS (the input's help)."""
    p = profiles()
    return "; ".join(f"{n} ({p[n].label}" + (f"; also accepted as {', '.join(p[n].stacks)}" if p[n].stacks else "")
                     + ")" for n in FRAMEWORKS)


def _select(framework, get, dtype=np.float64):
    fw = np.asarray(framework)
    vals = {n: get(p) for n, p in profiles().items()}
    if fw.ndim == 0:
        v = vals.get(str(fw), None)
        return np.asarray(math.nan if v is None and dtype == np.float64 else v, dtype=dtype if v is not None
                          or dtype == np.float64 else object)
    out = np.full(fw.shape, np.nan) if dtype == np.float64 else np.full(fw.shape, "", dtype=object)
    for n, v in vals.items():
        out = np.where(fw == n, v, out)
    return out


def number(framework, key: str) -> np.ndarray:
    """A profile's number for each row's framework (NaN where the name is unknown: the rules refuse it)."""
    return _select(framework, lambda p: p.numbers[key])


def offered_by(attr: str, value: str = "offered") -> str:
    """The profiles whose word `attr` is `value` ("offered" unless given; data/frameworks.csv), for a rule's text."""
    return ", ".join(n for n, p in profiles().items() if getattr(p, attr) == value)


def word(framework, attr: str) -> np.ndarray:
    """A profile's word (kernels, attention, grad_reduce, selective, …) for each row."""
    return _select(framework, lambda p: getattr(p, attr), dtype=object)


def zero_convention(framework) -> np.ndarray:
    """The ZeRO accounting a framework's rows use when none is given (paper for an unknown name: refused elsewhere)."""
    zc = word(framework, "zero_convention")
    return np.where(zc == "", "paper", zc)


def sequence_parallel_used(framework, tp, sequence_parallel) -> np.ndarray:
    """The sequence parallelism a row runs: the input, or on where the framework always splits activations over the
    tensor axis and tp > 1 (data/frameworks.csv `sequence_parallel always`: maxtext)."""
    always = word(framework, "sequence_parallel") == "always"
    return np.asarray(sequence_parallel, dtype=bool) | (always & (np.asarray(tp) > 1))


def runs_fa2(framework, attention_kernel) -> np.ndarray:
    """True per row where the attention kernel is not the chip's native one: FlashAttention-2 class, asked for
    (attention_kernel fa2) or the profile's own under auto (fsdp, deepspeed), or one rated against it (flex:
    data/efficiency.csv flex_over_fa2; triton: core/steptime.TRITON_OVER_FA2)."""
    kernel = np.asarray(attention_kernel)
    return VE.isin(kernel, GPU_ATTENTION_KERNELS) | ((kernel == "auto") & (word(framework, "attention") == "fa2"))


def kernel_impl(framework, compile_) -> np.ndarray:
    """'fused' or 'eager' per row, the `profile` input's default: the profile's kernels, fused where it compiles
    (always, or offered and asked for with --compile). The one choice sets both the tensors the step keeps
    (core/memory.py) and the bytes its elementwise kernels move and how many it launches (core/steptime.py)."""
    base = word(framework, "kernels")
    mode = word(framework, "compile")
    compiled = (mode == "always") | ((mode == "offered") & np.asarray(compile_, dtype=bool))
    return np.where(compiled, "fused", base)


def kernels_per_layer(framework, impl) -> np.ndarray:
    """Kernels a layer's forward launches: the profile's count for its fused kernels (compiled, or Transformer
    Engine's) or for eager PyTorch's."""
    fused = np.asarray(impl) == "fused"
    return np.where(fused, number(framework, "kernels_per_layer_compiled"), number(framework, "kernels_per_layer"))


def default_overlap(framework, zero_stage) -> tuple:
    """(dp_overlap, tp_overlap) per row when not given: the profile's defaults."""
    dp = word(framework, "dp_overlap")
    tp = word(framework, "tp_overlap")
    return (dp == "yes") | ((dp == "stage3") & (np.asarray(zero_stage) == 3)), tp == "yes"


def element_bytes(impl, op: str) -> np.ndarray:
    """Bytes per element of one elementwise op under each row's implementation ('fused' | 'eager')."""
    k = kernels()
    impl = np.asarray(impl)
    return np.where(impl == "eager", k[("eager", op)], k[("fused", op)])


# the stage of a row whose framework is not in data/frameworks.csv (its own rule refuses the framework by name)
UNKNOWN_FRAMEWORK_ZERO = 1


def default_zero_stage(framework) -> np.ndarray:
    """The ZeRO stage each row's framework runs when the question names none (data/frameworks.csv
    default_zero_stage, each with its source)."""
    z = _select(framework, lambda p: p.default_zero_stage)  # NaN where the name is unknown
    return np.where(np.isnan(z), UNKNOWN_FRAMEWORK_ZERO, z).astype(np.int64)


def _at_stages(framework, zero_stage, stages_of) -> np.ndarray:
    """True where the row's ZeRO stage is one of `stages_of(profile)` for its framework (False for an unknown name).
    Names are compared once per stage that some row has (a sweep's chunk at ZeRO 0-1 compares none for hooks)."""
    fw, z = np.asarray(framework), np.asarray(zero_stage)
    table = {n: stages_of(p) for n, p in profiles().items()}
    ok = np.zeros(np.broadcast_shapes(fw.shape, z.shape), dtype=bool)
    for stage in sorted(set().union(*table.values())):
        at = z == stage
        if np.any(at):
            ok = ok | (at & VE.isin(fw, [n for n, st in table.items() if stage in st]))
    return ok


def unit_hooks(framework, zero_stage) -> np.ndarray:
    """True where the framework's sharded units run host hooks per micro-batch at that ZeRO stage (data/frameworks.csv
    unit_hook_stages, with their sources): where the fitted unit_host_s applies."""
    return _at_stages(framework, zero_stage, lambda p: p.unit_hook_stages)


def supports_zero(framework, zero_stage) -> np.ndarray:
    """True where the framework runs that ZeRO stage (data/frameworks.csv zero_stages)."""
    return _at_stages(framework, zero_stage, lambda p: p.zero_stages)


def supports_schedule(framework, schedule) -> np.ndarray:
    """True where the framework runs that pipeline schedule (data/frameworks.csv pp_schedules)."""
    fw, sched = np.broadcast_arrays(np.asarray(framework), np.asarray(schedule))
    ok = np.zeros(fw.shape, dtype=bool)
    for n, p in profiles().items():
        ok = ok | ((fw == n) & VE.isin(sched, p.pp_schedules))
    return ok


def supports(framework, layout: str) -> np.ndarray:
    """True where the framework offers a layout dimension (tp, pp, vp, cp, ep, sp)."""
    fw = np.asarray(framework)
    ok = np.zeros(fw.shape, dtype=bool)
    for n, p in profiles().items():
        if layout in p.layouts:
            ok = ok | (fw == n)
    return ok
