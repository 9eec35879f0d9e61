"""Accelerator catalog (data/accelerators.csv) and user-defined accelerators.

The CSV holds human units with the unit in the column name (TFLOP/s, TB/s, GB/s, GB or GiB as
the vendor stated it); this module converts them once to SI. Every row carries its source.
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from .profiles import sustained_fraction
from .tables import DTYPES
from .units import GB, GiB, TB, TFLOP

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


@dataclass(frozen=True)
class Accelerator:
    """One accelerator in SI units. NaN peak means the chip has no such mode (e.g. fp8 on A100)."""

    name: str
    peak_bf16_flops_per_s: float
    memory_bytes: float
    memory_bandwidth_bytes_per_s: float
    peak_fp8_flops_per_s: float = math.nan
    peak_fp32_flops_per_s: float = math.nan
    peak_fp4_flops_per_s: float = math.nan  # dense FP4 / NVFP4 (Blackwell), MXFP4 (CDNA4)
    # what a process can allocate, as the runtime reports it (PyTorch's "total capacity", cudaDeviceProp /
    # hipDeviceProp totalGlobalMem; data/accelerators.csv usable_gib with usable_source): vendors' "80GB" is binary,
    # 80 GiB of HBM of which CUDA exposes 79.1 GiB (84.9e9 B), not 80e9 B; NaN: not published, the vendor's figure
    usable_memory_bytes: float = math.nan
    board_power_w: float = math.nan  # rated board power under load (data/accelerators.csv power_source)
    # achievable fraction of the fp8 peak (data/accelerators.csv: ml-engineering's MAMF, AMD's MAF); NaN: unknown
    fp8_matmul_efficiency: float = math.nan
    intra_node_bytes_per_s: float = math.nan
    inter_node_bytes_per_s: float = math.nan
    host_link_bytes_per_s: float = math.nan  # GPU ↔ host (PCIe / NVLink-C2C), one direction
    # GPUs per Grace CPU on Grace superchips (GH200: one Grace and one Hopper, NVIDIA GH200 datasheet; GB200 and GB300
    # NVL72: 36 Grace CPUs for 72 GPUs, NVIDIA GB200/GB300 NVL72 pages); NaN: an x86 host shared by the node's GPUs
    gpus_per_grace: float = math.nan
    # TPU slices: the ICI torus's dimensions (2: v5e, v6e, v3; 3: v4, v5p) and the axis length that closes a ring
    # (16 on v5e/v6e, 4 on v4/v5p: jax-ml/scaling-book tpus.md @0819a7d8); NaN: a switched fabric (core/comm.py)
    ici_axes: float = math.nan
    ici_wrap: float = math.nan
    price_usd_per_gpu_hour: float = math.nan
    # step-time constants (data/accelerators.csv and, by family, data/efficiency.csv; sources in their rows)
    family: str = "hopper"
    gpus_per_node: int = 8
    sm_count: float = math.nan
    # a TPU's systolic matrix unit, one side (256 on Trillium v6e, 128 before: MaxText custom_model.md, in the
    # catalog's step_source): a GEMM dimension it streams over (contraction, output) fills whole MXU widths; NaN: none
    mxu_dim: float = math.nan
    # the native flash kernel's rate at head dim 64 ÷ its rate at 128 (data/accelerators.csv step_source); NaN: the
    # FlashAttention-3 figure (core/steptime.HEAD_DIM_64_FACTOR)
    head_dim_64_factor: float = math.nan
    matmul_efficiency: float = 0.8
    # bf16 grouped GEMM as PyTorch's torch._grouped_mm runs it (MoE experts under torchtitan), a fraction of the peak
    # where measured (data/accelerators.csv grouped_gemm_efficiency); NaN: at the dense rate
    grouped_gemm_efficiency: float = math.nan
    attention_efficiency: float = 0.55
    # measured inside a training step (data/efficiency.csv): the sustained fraction is already in it (core/steptime.py)
    attention_in_step: bool = False
    native_fa2: bool = False  # the family's own attention kernel is FlashAttention-2 class (data/efficiency.csv)
    fa2_attention_efficiency: float = 0.33  # FlashAttention-2-class kernels (PyTorch SDPA, flash-attn 2)
    flex_over_fa2: float = 1.0  # FlexAttention's rate ÷ FlashAttention-2's (data/efficiency.csv)
    causal_ratio: float = 0.83  # at 2,048 tokens (core/steptime.attention_length_factor)
    sustained_fraction: float = 0.84
    hbm_efficiency: float = 0.9
    intra_node_efficiency: float = 0.8
    inter_node_efficiency: float = 0.8
    collective_latency_s: float = 40e-6
    label: str = ""
    memory_unit: str = "GB"
    usable_source: str = ""
    price_date: str = ""
    price_source: str = ""
    source: str = "user input"
    note: str = ""

    def __post_init__(self):
        for f in ("peak_bf16_flops_per_s", "memory_bytes", "memory_bandwidth_bytes_per_s"):
            v = getattr(self, f)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise ValueError(f"{f}: must be a positive number, got {v!r}")
        for f in ("peak_fp8_flops_per_s", "peak_fp32_flops_per_s", "intra_node_bytes_per_s",
                  "inter_node_bytes_per_s", "host_link_bytes_per_s", "price_usd_per_gpu_hour"):
            v = getattr(self, f)
            if not isinstance(v, (int, float)) or (not math.isnan(v) and v < 0):
                raise ValueError(f"{f}: must be a non-negative number, got {v!r}")

    def peak_flops_per_s(self, compute_dtype: str = "bf16") -> float:
        """Dense peak for the compute dtype (no sparsity); an error if the chip lacks that mode."""
        d = DTYPES.get(compute_dtype) if isinstance(compute_dtype, str) else None
        if d is None:
            raise ValueError(f"compute_dtype: unknown {compute_dtype!r}; known: {', '.join(DTYPES)}")
        v = getattr(self, peak_field(compute_dtype))
        if math.isnan(v):
            raise ValueError(f"compute_dtype: {self.name} has no {compute_dtype} peak in the catalog")
        return v

    @property
    def allocatable_bytes(self) -> float:
        """The memory a training process can allocate (what fits against): the runtime's total capacity where the
        catalog gives it (usable_gib), else the vendor's figure (memory_bytes)."""
        return self.usable_memory_bytes if math.isfinite(self.usable_memory_bytes) else self.memory_bytes

    @property
    def family_index(self) -> float:
        """The chip family's position in data/efficiency.csv (a number, so accelerator columns stay numeric); −1 for
        a user-typed accelerator (no published run validates it)."""
        fams = tuple(efficiency_table())
        return float(fams.index(self.family)) if self.name != "custom" and self.family in fams else -1.0

    @property
    def ridge_intensity(self) -> float:
        """FLOPs per byte at which bf16 matmuls stop being memory-bound: peak / bandwidth (seed 000)."""
        return self.peak_bf16_flops_per_s / self.memory_bandwidth_bytes_per_s


def peak_field(compute_dtype: str) -> str:
    """The Accelerator field holding the peak for a compute dtype (fp16 runs at the bf16 rate: tables.DTYPES)."""
    return f"peak_{DTYPES[compute_dtype].peak}_flops_per_s"


def peak_or_nan(g: Accelerator, compute_dtype: str) -> float:
    """The one answer to "peak FLOP/s of this accelerator for this dtype": the peak, or NaN when the chip has no
    such mode — which the input rules turn into "compute_dtype: this accelerator has no peak for that dtype" (so
    one rule serves a point and a sweep)."""
    try:
        return g.peak_flops_per_s(compute_dtype)
    except ValueError:
        return math.nan


def _f(row: dict, key: str, scale: float = 1.0) -> float:
    v = (row.get(key) or "").strip()
    return float(v) * scale if v else math.nan


@lru_cache(maxsize=1)
def tier_prices() -> dict:
    """(accelerator, tier) → (USD per GPU-hour, date, source) for the reserved and spot tiers (data/prices.csv); the
    on-demand price is the catalog's."""
    path = DATA_DIR / "prices.csv"
    if not path.exists():
        return {}
    with open(path, newline="") as fh:
        return {(r["name"], r["tier"]): (float(r["price_usd_per_gpu_hour"]), r["date"], r["source"])
                for r in csv.DictReader(fh)}


def tier_price(name: str, tier: str) -> float:
    """The price of an accelerator in a tier; ValueError naming price_tier where the data has none."""
    if tier == "on_demand":
        return get_accelerator(name).price_usd_per_gpu_hour
    row = tier_prices().get((name, tier))
    if row is None:
        have = sorted(n for (n, t) in tier_prices() if t == tier)
        raise ValueError(f"price_tier: no {tier} price for {name} in data/prices.csv (have: {', '.join(have)}); give "
                         "price_per_gpu_hour")
    return row[0]


@lru_cache(maxsize=1)
def efficiency_table() -> dict[str, dict]:
    """Achievable fractions by chip family (data/efficiency.csv), each row with its source."""
    out = {}
    with open(DATA_DIR / "efficiency.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            # fitted (data/fitted.csv); a family that runs another's GEMM kernels takes that one's (sustained_as)
            takes = (row.get("sustained_as") or "").strip() or row["family"]
            out[row["family"]] = {
                "attention_efficiency": float(row["attention_efficiency"]),
                "attention_in_step": _flag(row["attention_in_step"], "attention_in_step", row["family"]),
                "native_fa2": _flag(row["native_fa2"], "native_fa2", row["family"]),
                "fa2_attention_efficiency": float(row["fa2_attention_efficiency"]),
                "attention_measured_on": row["attention_measured_on"].strip(),
                "attention_carries_to": tuple(row["attention_carries_to"].split()),
                "flex_over_fa2": float(row["flex_over_fa2"]),
                "causal_ratio": float(row["causal_ratio"]),
                "sustained_as": takes,
                "sustained_fraction": sustained_fraction(takes)[0],
                "hbm_efficiency": float(row["hbm_efficiency"]),
                "intra_node_efficiency": float(row["intra_node_efficiency"]),
                "inter_node_efficiency": float(row["inter_node_efficiency"]),
                "collective_latency_s": float(row["collective_latency_us"]) * 1e-6,
                "source": row["source"],
            }
    for f, row in out.items():  # one step to a GPU family that takes its own fraction
        t = row["sustained_as"]
        why = ("is not a family of the table (" + ", ".join(out) + ")" if t not in out
               else "takes another family's fraction itself (name that one)" if out[t]["sustained_as"] != t
               else "is the TPU family (a GPU family takes a GPU family's fraction)" if t == "tpu" != f else "")
        if why:
            raise ValueError(f"data/efficiency.csv {f} sustained_as: {t!r} {why}")
    return out


@lru_cache(maxsize=1)
def catalog() -> dict[str, Accelerator]:
    """All catalog accelerators by name, converted to SI."""
    out: dict[str, Accelerator] = {}
    fam = efficiency_table()
    with open(DATA_DIR / "accelerators.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            unit = row["memory_unit"].strip()
            mem_scale = {"GB": GB, "GiB": GiB}[unit]
            out[row["name"]] = Accelerator(
                name=row["name"],
                label=row["label"],
                peak_bf16_flops_per_s=_f(row, "bf16_tflops", TFLOP),
                peak_fp8_flops_per_s=_f(row, "fp8_tflops", TFLOP),
                peak_fp32_flops_per_s=_f(row, "fp32_tflops", TFLOP),
                peak_fp4_flops_per_s=_f(row, "fp4_tflops", TFLOP),
                fp8_matmul_efficiency=_f(row, "fp8_matmul_efficiency"),
                board_power_w=_f(row, "board_power_w"),
                memory_bytes=_f(row, "memory", mem_scale),
                memory_unit=unit,
                usable_memory_bytes=_f(row, "usable_gib", GiB),
                usable_source=row.get("usable_source", ""),
                memory_bandwidth_bytes_per_s=_f(row, "hbm_tb_per_s", TB),
                intra_node_bytes_per_s=_f(row, "intra_node_gb_per_s", GB),
                inter_node_bytes_per_s=_f(row, "inter_node_gb_per_s", GB),
                host_link_bytes_per_s=_f(row, "host_gb_per_s", GB),
                gpus_per_grace=_f(row, "gpus_per_grace"),
                ici_axes=_f(row, "ici_axes"),
                ici_wrap=_f(row, "ici_wrap"),
                price_usd_per_gpu_hour=_f(row, "price_usd_per_gpu_hour"),
                family=row["family"],
                gpus_per_node=int(row["gpus_per_node"]),
                sm_count=_f(row, "sm_count"),
                mxu_dim=_f(row, "mxu_dim"),
                head_dim_64_factor=_f(row, "head_dim_64_factor"),
                matmul_efficiency=_f(row, "matmul_efficiency"),
                grouped_gemm_efficiency=_f(row, "grouped_gemm_efficiency"),
                **{k: v for k, v in fam[row["family"]].items()
                   if k not in ("source", "attention_measured_on", "attention_carries_to", "sustained_as")},
                price_date=row["price_date"],
                price_source=row["price_source"],
                source=row["source"],
                note=row["note"],
            )
    return _attention_at_each_chips_gemm_rate(_unmeasured_take_family_mean(out))


def _attention_at_each_chips_gemm_rate(cat: dict[str, Accelerator], fams: dict | None = None
                                       ) -> dict[str, Accelerator]:
    """A family's attention figures (native and FlashAttention-2) were measured on one chip (data/efficiency.csv
    attention_measured_on; Hopper's FlashAttention-2 figure on H100 SXM, whose matmul efficiency is H200's, and
    Blackwell's an assumption taken as measured on B200); the chips of the same silicon at other clocks or power
    (attention_carries_to) run the same kernels at their own GEMMs' rate relative to that chip's: × their matmul
    efficiency ÷ the measured chip's (GB200's 1822 of 2500 TFLOP/s against B200's 1745 of 2250, MI325X at 1000 W
    against MI300X at 750 W; assumed). The measured chip's grouped-GEMM rate (data/accelerators.csv
    grouped_gemm_efficiency) carries the same way to a chip without its own. The family's other chips keep the
    figures as they are."""
    fams = efficiency_table() if fams is None else fams
    for family, f in fams.items():
        ref, carries = f["attention_measured_on"], f["attention_carries_to"]
        for name in ((ref,) if ref else ()) + carries:
            if name not in cat or cat[name].family != family:
                raise ValueError(f"data/efficiency.csv {family} attention_measured_on / attention_carries_to: "
                                 f"{name!r} is not a catalog chip of family {family!r}")
        if carries and not ref:
            raise ValueError(f"data/efficiency.csv {family} attention_carries_to: needs attention_measured_on")
        for name in carries:
            g = cat[name]
            k = g.matmul_efficiency / cat[ref].matmul_efficiency
            grouped = g.grouped_gemm_efficiency if math.isfinite(g.grouped_gemm_efficiency) \
                else cat[ref].grouped_gemm_efficiency * k
            cat[name] = replace(g, attention_efficiency=g.attention_efficiency * k,
                                fa2_attention_efficiency=g.fa2_attention_efficiency * k,
                                grouped_gemm_efficiency=grouped)
    return cat


def _unmeasured_take_family_mean(cat: dict[str, Accelerator]) -> dict[str, Accelerator]:
    """A chip whose matmul efficiency is blank (no published GEMM figure) takes the mean of its family's measured
    chips (assumed: TPU v3-v5p from v6e's and TPU7x's tpu-recipes measurements); one place, so a re-measure carries."""
    measured: dict[str, list] = {}
    for g in cat.values():
        if math.isfinite(g.matmul_efficiency):
            measured.setdefault(g.family, []).append(g.matmul_efficiency)
    for name, g in cat.items():
        if not math.isfinite(g.matmul_efficiency):
            if g.family not in measured:
                raise ValueError(f"data/accelerators.csv {name} matmul_efficiency: blank, and no chip of family "
                                 f"{g.family!r} is measured")
            cat[name] = replace(g, matmul_efficiency=sum(measured[g.family]) / len(measured[g.family]))
    return cat


def family_names() -> tuple:
    """Chip families in data/efficiency.csv order (what `Accelerator.family_index` counts)."""
    return tuple(efficiency_table())


def _flag(text: str, field: str, family: str) -> bool:
    if text not in ("true", "false"):
        raise ValueError(f"data/efficiency.csv {field} of {family}: expected true or false, got {text!r}")
    return text == "true"


def accelerator_names() -> list[str]:
    return list(catalog())


def get_accelerator(name: str) -> Accelerator:
    """Catalog lookup; an unknown name is an error listing the known ones."""
    if not isinstance(name, str):
        raise ValueError(f"gpu: expected a name, got {name!r}")
    try:
        return catalog()[name]
    except KeyError:
        raise ValueError(f"gpu: unknown accelerator {name!r}; known: {', '.join(catalog())}") from None


def custom_accelerator(peak_flops_per_s: float, memory_bytes: float, memory_bandwidth_bytes_per_s: float,
                       price_usd_per_gpu_hour: float = math.nan, name: str = "custom",
                       peak_fp8_flops_per_s: float = math.nan, peak_fp32_flops_per_s: float = math.nan
                       ) -> Accelerator:
    """A user-typed accelerator; works everywhere a catalog one does."""
    return Accelerator(name=name, label=f"{name} (user input)", peak_bf16_flops_per_s=peak_flops_per_s,
                       memory_bytes=memory_bytes, memory_bandwidth_bytes_per_s=memory_bandwidth_bytes_per_s,
                       price_usd_per_gpu_hour=price_usd_per_gpu_hour, peak_fp8_flops_per_s=peak_fp8_flops_per_s,
                       peak_fp32_flops_per_s=peak_fp32_flops_per_s)
