"""Low-precision training recipes (data/lowp.csv): which GEMMs run in fp8 / fp4, at what rate, with which extra
memory-bound kernels and weight copies. Each row carries its source (the framework's docs; bytes derived from the
kernels' reads and writes).

Convention (decided): the linear layers' GEMMs (QKV, output projection, MLP / experts) run at the recipe's peak
(fp8, or fp4 for nvfp4) × the accelerator's achievable fp8 matmul fraction (data/accelerators.csv
`fp8_matmul_efficiency`, ml-engineering's MAMF table or the vendor's own, AMD's Max-Achievable FLOPs for MI300X and
MI325X; where unknown 0.95 × the bf16 fraction, the median FP8/BF16 MAMF ratio of the five NVIDIA parts measured
there) × the recipe's `gemm_factor`; the attention core, the router and
the LM head stay bf16 (Transformer Engine and torchao convert nn.Linear layers of the blocks only). `compute_dtype`
fp8 with no recipe is the delayed recipe (TE's default).
"""
from __future__ import annotations

import csv
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import vec as VE

DATA = Path(__file__).resolve().parent.parent / "data" / "lowp.csv"
FP8_OVER_BF16_MAMF = 0.95
# fp8 attention (TE / Megatron --fp8-dot-product-attention: cuDNN's fp8 fused attention): its share of the fp8 peak
# against bf16 attention's share of the bf16 peak. FlashAttention-3 (Shah et al. 2024, arXiv:2407.08608, abstract,
# H100): bf16 "up to 740 TFLOPs/s (75% utilization)", fp8 "close to 1.2 PFLOPs/s", on a chip whose dense fp8 peak is
# twice its bf16 one: (1200 / 740) / 2 = 0.81, a 1.62× faster attention core. Measured for the forward on Hopper;
# taken for the backward and for Blackwell's and CDNA's kernels (assumed: no published fp8 attention backward or
# other-chip figure at hand).
FA3_BF16_TFLOPS, FA3_FP8_TFLOPS, FP8_OVER_BF16_PEAK = 740.0, 1200.0, 2.0
FP8_ATTENTION_OVER_BF16 = FA3_FP8_TFLOPS / FA3_BF16_TFLOPS / FP8_OVER_BF16_PEAK
NUMERIC = ("fwd_bytes", "bwd_bytes", "weight_copy_bytes", "weight_copy_bytes_blackwell", "saved_input_bytes",
           "gemm_factor")


@lru_cache(maxsize=1)
def recipes() -> dict:
    with open(DATA, newline="") as fh:
        return {r["recipe"]: {**{k: float(r[k]) for k in NUMERIC}, "peak": r["peak"],
                              "families": tuple(r["families"].split()), "source": r["source"]}
                for r in csv.DictReader(fh)}


NAMES = ("none", "delayed", "current", "rowwise", "blockwise", "mxfp8", "nvfp4")
assert set(NAMES) == set(recipes()), sorted(recipes())


def effective(recipe, compute_dtype) -> np.ndarray:
    """The recipe each row runs: its fp8_recipe, or 'delayed' where compute_dtype is fp8 and none is given."""
    r = np.asarray(recipe, dtype=object)
    return np.where((r == "none") & (np.asarray(compute_dtype, dtype=object) == "fp8"), "delayed", r)


def number(recipe, key: str) -> np.ndarray:
    r = np.asarray(recipe, dtype=object)
    out = np.zeros(r.shape)
    if r.ndim == 0:
        return np.asarray(recipes().get(str(r), recipes()["none"])[key])
    for name, row in recipes().items():
        if np.any(r == name):
            out = np.where(r == name, row[key], out)
    return out


def weight_copy_bytes(recipe, family) -> np.ndarray:
    """Bytes per local parameter of the recipe's low-precision weight copies on the accelerator family: Hopper's fp8
    tensor cores take TN GEMMs only, so tensor-wise recipes keep the fp8 weight and its transpose (2 B); Blackwell's
    take either layout (1 B) (Transformer Engine maintainers, NVIDIA/TransformerEngine #1261, #1880)."""
    bw = np.asarray(family, dtype=object) == "blackwell"
    return np.where(bw, number(recipe, "weight_copy_bytes_blackwell"), number(recipe, "weight_copy_bytes"))


def is_fp4(recipe) -> np.ndarray:
    return np.asarray(recipe, dtype=object) == "nvfp4"


def supported(recipe, family) -> np.ndarray:
    """True where the accelerator family runs the recipe (mxfp8 / nvfp4: Blackwell's block-scaled tensor cores)."""
    r, f = np.asarray(recipe, dtype=object), np.asarray(family, dtype=object)
    ok = r == "none"
    for name, row in recipes().items():
        if name != "none":
            ok = ok | ((r == name) & VE.isin(f, row["families"]))
    return ok


def bf16_layer_share(first, last, n_layers, pp, stage_layers, stage="slowest") -> np.ndarray:
    """The share of a pipeline stage's layers that a low-precision run keeps in bf16 (Megatron-Core
    --first-last-layers-bf16 with --num-layers-at-start-in-bf16 `first` and --num-layers-at-end-in-bf16 `last`:
    those layers' linear layers are built without fp8/fp4 autocast; Megatron-Bridge's
    training/mixed_precision.py bf16_with_fp8_current_scaling_mixed keeps 1 and 1, its NVFP4 recipes for Llama 3 8B
    and GPT-OSS 20B the last 4, @067f987; its performance scripts turn it off for fp8_cs).
    Convention: one pipeline (pp 1) mixes them into its average layer, (first + last)/n_layers; with pp > 1 the first
    stage holds `first` of its layers and the last stage `last`, `stage_layers` being the named stage's count: stage
    "first" or "last" (memory) that stage's share; stage "slowest" (time: the end stage with more bf16 layers sets
    the pipeline's pace, `stage_layers` the fullest stage's count) the larger share of the fullest stage's layers —
    the spare time of an end stage that a layout or the embedding and loss slots leave shorter is not credited."""
    f, l_, L = (np.asarray(x, dtype=np.float64) for x in (first, last, n_layers))
    Ls = np.maximum(np.asarray(stage_layers, dtype=np.float64), 1.0)
    one = np.minimum(f + l_, L) / np.maximum(L, 1.0)
    on_first, on_last = np.minimum(f, Ls) / Ls, np.minimum(l_, Ls) / Ls
    staged = {"slowest": np.maximum(on_first, on_last), "first": on_first, "last": on_last}[stage]
    return np.where(np.asarray(pp) > 1, staged, one)
