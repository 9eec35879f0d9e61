"""Published training runs (data/published_runs.csv) and what the step-time model predicts for them.

Each row is a run with its published layout and one published figure: hardware TFLOP/s per GPU (FLOPs with
recomputation, as Narayanan et al. 2021 count them), model TFLOP/s per GPU, or MFU. `set` is "visible" (the
rows the one fitted constant was fitted to) or "check" (out of sample). The test suite and bench/bench_steptime.py
read the same rows."""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from .estimate import config_from_inputs, estimate
from .units import GB

DATA = Path(__file__).resolve().parent.parent / "data" / "published_runs.csv"
_INT = ("n_layers", "d_model", "n_heads", "n_kv_heads", "d_ff", "vocab_size", "seq_len", "n_gpus", "tp", "pp", "cp",
        "virtual_stages", "micro_batch", "global_batch", "zero_stage")
_BOOL = ("dropout", "tied_embeddings", "sequence_parallel", "flash_attention", "dp_overlap", "tp_overlap")
_STR = ("gpu", "mlp", "norm", "bias", "position", "recompute", "compute_dtype")


@dataclass(frozen=True)
class Run:
    id: str
    set: str
    source: str
    metric: str
    published: float
    inputs: dict
    note: str = ""


def runs(which: str | None = None) -> list[Run]:
    """The published runs, optionally only one set ("visible" or "check")."""
    out = []
    with open(DATA, newline="") as fh:
        for r in csv.DictReader(fh):
            inputs = {k: int(r[k]) for k in _INT} | {k: r[k] == "true" for k in _BOOL} | {k: r[k] for k in _STR}
            if inputs["compute_dtype"] == "fp16":
                inputs.update(weight_dtype="fp16", grad_dtype="fp16")
            if inputs["position"] == "learned":
                inputs["max_position"] = inputs["seq_len"]
            if r["inter_node_gb_per_s"]:  # the run's network where it differs from the catalog's
                inputs["inter_node_bytes_per_s"] = float(r["inter_node_gb_per_s"]) * GB
            run = Run(r["id"], r["set"], r["source"], r["metric"], float(r["published"]), inputs, r["note"])
            if which is None or run.set == which:
                out.append(run)
    return out


def predicted(run: Run, **over) -> float:
    """The model's value of the run's published metric (mfu as a fraction, TFLOP/s per GPU otherwise)."""
    inputs = {**run.inputs, "mfu": "auto", **over}
    r = estimate(config_from_inputs(**inputs))
    if run.metric == "mfu":
        return r["predicted_mfu"]
    flops = r["hardware_flops_per_token"] if run.metric == "hardware_tflops_per_gpu" else r["flops_per_token"]
    return flops * r["predicted_tokens_per_s"] / run.inputs["n_gpus"] / 1e12
