"""The record schema: every output column of `core.estimate.evaluate`, in its order, with kind, unit and meaning.

Declared once (docs/architecture): the sweep tables' Arrow types, the DuckDB allow-lists and categorical columns,
the CLI's text output, the explanations and the charts read it; no schema is discovered by running an estimate.
A test checks `evaluate` returns exactly these columns, and that the memory parts sum to their totals.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # "float" | "int" | "bool" | "label" (a few fixed strings) | "text" (the reason)
    unit: str
    meaning: str
    labels: tuple = ()  # the fixed values of a "label" column


# Memory parts: state parts sum to state_bytes; TOTAL_PARTS sum to total_bytes (tests/test_record_schema.py).
STATE_PARTS = ("weights_bytes", "grads_bytes", "grad_accum_bytes", "optimizer_bytes", "master_bytes")
TOTAL_PARTS = STATE_PARTS + ("param_buffer_bytes", "lowp_weights_bytes", "activations_bytes", "logits_bytes",
                             "overhead_bytes")
BINDING = ("state", "activations", "logits", "overhead")  # which group of TOTAL_PARTS is largest (buffers: state)
STAGES = ("first", "last")
TIME_SOURCES = ("mfu", "predicted", "measured")
# the predicted step's parts: the term table of core/steptime.py (name, meaning, colour), summing to
# predicted_step_time_s
from .steptime import STEP_PART_COLOURS, STEP_PART_WORDS, STEP_PARTS  # noqa: E402,F401
# what the binding groups mean, in words a visitor understands
BINDING_WORDS = {
    "state": "model state (weights, gradients, optimizer moments, master copy, gathered-parameter buffers)",
    "activations": "activations kept for the backward pass",
    "logits": "the logits kept for the loss",
    "overhead": "fixed overhead and fragmentation",
}

_B = "bytes per GPU"
RECORD: tuple[Column, ...] = (
    Column("valid", "bool", "", "the inputs make sense together (else every number is empty and reason says why)"),
    Column("reason", "text", "", "why the row is invalid (empty when valid)"),
    Column("n_params", "float", "count", "parameters of the model"),
    Column("n_active_params", "float", "count", "parameters used per token (MoE: top-k experts)"),
    Column("n_trainable_params", "float", "count", "parameters with gradients and optimizer state: all (full "
           "training, MTP modules included) less frozen_frac, or the LoRA adapters"),
    Column("n_mtp_params", "float", "count", "multi-token prediction modules (DeepSeek-V3): trained with the model, "
           "not in n_params (the publisher's count)"),
    Column("dp", "int", "count", "data-parallel degree n_gpus / (tp·pp·cp)"),
    Column("weights_bytes", "float", _B, "working weights"),
    Column("grads_bytes", "float", _B, "gradients"),
    Column("grad_accum_bytes", "float", _B, "fp32 gradient-accumulation buffer"),
    Column("optimizer_bytes", "float", _B, "optimizer state (moments)"),
    Column("master_bytes", "float", _B, "master weights (fp32; bf16 remainders under the precision-aware optimizer)"),
    Column("state_bytes", "float", _B, "model state: the sum of the five parts above"),
    Column("activations_bytes", "float", _B, "activations kept for backward on the busiest stage"),
    Column("activations_per_layer_bytes", "float", _B, "activations one layer keeps (one micro-batch)"),
    Column("recompute_peak_bytes", "float", _B, "extra bytes alive while a layer is recomputed (full recompute); "
           "on the stage that holds the logits only what exceeds them (the two never coexist)"),
    Column("logits_bytes", "float", _B, "logits kept for the loss (last stage)"),
    Column("param_buffer_bytes", "float", _B, "gathered-parameter buffers of ZeRO-3/FSDP (zero_convention "
           "deepspeed or fsdp; parameter offload) and a quantised base's dequantised layer"),
    Column("lowp_weights_bytes", "float", _B, "the low-precision recipe's weight copies (fp8 weights and their "
           "transposes, block scales; data/lowp.csv weight_copy_bytes per local parameter; ZeRO-3: the gathered layer's)"),
    Column("overhead_bytes", "float", _B, "fixed overhead + fragmentation"),
    Column("fragmentation_bytes", "float", _B, "the caching allocator's fragmentation, the part of overhead_bytes "
           "beyond the fixed bytes: a risk the run may avoid (expandable segments), not a need (core/memory.py)"),
    Column("total_bytes", "float", _B, "state + buffers + activations + logits + overhead"),
    Column("gpu_memory_bytes", "float", "bytes (GB = 1e9)", "memory a process can allocate on one accelerator: the "
           "runtime's total capacity (PyTorch / CUDA / HIP) where the catalog gives it (usable_gib), else the "
           "vendor's figure"),
    Column("headroom_bytes", "float", _B, "gpu_memory_bytes − total_bytes, plus a paged optimizer's moments still "
           "on the device (the driver evicts them for anything else; paged_optimizer) (negative: does not fit, or fits "
           "only tightly: see fits)"),
    Column("fits", "bool", "", "what the run allocates fits: total_bytes − fragmentation_bytes ≤ gpu_memory_bytes "
           "(and host_fits); with headroom_bytes < 0 it fits tightly, only while fragmentation stays below what "
           "total_bytes counts"),
    Column("offloaded_bytes", "float", _B, "model state and activations moved to host memory (offload, "
           "activation_offload, paged_optimizer), per GPU"),
    Column("paged_out_bytes", "float", _B, "a paged optimizer's moments the device cannot hold, in host memory "
           "(part of offloaded_bytes; paged_optimizer), per GPU"),
    Column("host_bytes", "float", "bytes per node", "host memory the offloaded state needs on one node: "
           "offloaded_bytes × the GPUs of a node"),
    Column("host_fits", "bool", "", "host_bytes ≤ host_memory_bytes (true when no host memory is given)"),
    Column("binding", "label", "", "the largest group of the total", BINDING),
    Column("worst_stage", "label", "", "the pipeline stage whose total is reported", STAGES),
    Column("flops_per_token", "float", "FLOPs", "model FLOPs per token (6N + attention)"),
    Column("attention_flops_per_token", "float", "FLOPs", "attention FLOPs per token (forward + backward)"),
    Column("hardware_flops_per_token", "float", "FLOPs", "FLOPs per token including recomputation"),
    Column("train_flops", "float", "FLOPs", "model FLOPs of the whole run"),
    Column("train_flops_6nd", "float", "FLOPs", "6·N·D, the usual approximation"),
    Column("peak_flops_per_s", "float", "FLOP/s", "accelerator peak for compute_dtype"),
    Column("time_s", "float", "s", "wall time of the run: from the measured throughput if given, else the "
           "predicted step (mfu auto), else the given MFU (see time_source)"),
    Column("days", "float", "days", "time_s in days"),
    Column("gpu_hours", "float", "GPU-hours", "time × GPUs"),
    Column("cost_usd", "float", "USD", "GPU-hours × price"),
    Column("tokens_per_param", "float", "tokens/parameter", "training tokens per parameter"),
    Column("goodput_frac", "float", "fraction", "useful share of wall time with failures, checkpoints and restarts "
           "(Daly 2006; core/goodput.py)"),
    Column("checkpoint_interval_s", "float", "s", "compute time between checkpoints (Daly's optimum unless given; "
           "inf without failures)"),
    Column("checkpoint_write_s", "float", "s", "one checkpoint's write: the model state once ÷ storage bandwidth"),
    Column("days_with_failures", "float", "days", "days ÷ goodput_frac"),
    Column("gpu_hours_with_failures", "float", "GPU-hours", "GPU-hours ÷ goodput_frac"),
    Column("cost_with_failures_usd", "float", "USD", "cost ÷ goodput_frac"),
    Column("energy_kwh", "float", "kWh", "energy of the run: GPU-hours with failures × board power × power_draw_frac × (1 + "
           "node_overhead_frac) × PUE (core/energy.py; NaN where the accelerator has no board power: give gpu_power_w)"),
    Column("co2e_kg", "float", "kg CO2e", "energy_kwh × carbon_kg_per_kwh (location-based)"),
    Column("price_per_gpu_hour", "float", "USD per GPU-hour", "price used for the cost"),
    Column("achieved_mfu", "float", "fraction", "MFU implied by a measured throughput (empty without one)"),
    Column("achieved_hfu", "float", "fraction", "HFU (recomputation included) implied by a measured throughput"),
    Column("time_source", "label", "", "what time_s comes from: mfu (given), predicted (mfu auto) or measured",
           TIME_SOURCES),
    Column("global_batch", "int", "count (sequences)", "sequences per optimizer step used by the predicted step"),
    Column("micro_batches", "float", "count", "micro-batches per data-parallel replica per step"),
    *(Column(k, "float", "s", w) for k, w in STEP_PART_WORDS.items()),
    Column("predicted_step_time_s", "float", "s", "predicted time of one optimizer step: the sum of the step parts "
           "above (core/steptime.py)"),
    Column("predicted_mfu", "float", "fraction", "model FLOPs per second of the predicted step ÷ (GPUs · peak)"),
    Column("predicted_hfu", "float", "fraction", "hardware FLOPs (recomputation included) per second ÷ (GPUs · "
           "peak)"),
    Column("predicted_tokens_per_s", "float", "tokens/s", "whole-cluster throughput of the predicted step"),
    Column("predicted_time_s", "float", "s", "wall time of the run at the predicted step (× 1 + time_overhead_frac), "
           "whatever time_s comes from"),
    Column("predicted_step_time_low_s", "float", "s", "80 % interval of the predicted step, low end: the profile's "
           "leave-one-source-out errors (data/fitted.csv), wider as more of the step is overhead (outside the GEMMs "
           "and attention core) and off the validated region (core/intervals.py)"),
    Column("predicted_step_time_high_s", "float", "s", "80 % interval of the predicted step, high end"),
    Column("predicted_mfu_low", "float", "fraction", "predicted MFU at the slow end of the interval"),
    Column("predicted_mfu_high", "float", "fraction", "predicted MFU at the fast end of the interval"),
    Column("days_low", "float", "days", "days at the fast end of the interval (= days unless time_source is "
           "predicted)"),
    Column("days_high", "float", "days", "days at the slow end of the interval"),
    Column("cost_low_usd", "float", "USD", "cost at the fast end of the interval"),
    Column("cost_high_usd", "float", "USD", "cost at the slow end of the interval"),
    Column("model_tflops_per_gpu", "float", "TFLOP/s", "model FLOPs per second per GPU at the predicted step (how "
           "published tables compare runs of any precision)"),
    Column("predicted_mfu_lowp", "float", "fraction", "the predicted MFU against the recipe's low-precision peak (fp8, or "
           "fp4 for nvfp4); equal to predicted_mfu without a recipe"),
    Column("validated", "bool", "", "the time is predicted and published runs of this framework validate the layout "
           "class, chip family, size and sequence length (core/intervals.py); false: outside what was validated"),
)
BY_NAME = {c.name: c for c in RECORD}
NAMES = tuple(BY_NAME)
CATEGORICAL = tuple(c.name for c in RECORD if c.kind in ("bool", "label", "text", "int"))

# the fit verdict in words (one owner: the CLI, the app's tiles and tables, the bench prose)
FIT_STATUS = ("fits", "fits tightly", "does not fit")


def fit_status(fits, headroom_bytes):
    """'fits' (the total with the counted overhead fits), 'fits tightly' (what the run allocates fits, the total with
    the allocator's fragmentation does not: core/memory.fragmentation_bytes) or 'does not fit'; vectorised."""
    f, h = np.asarray(fits, dtype=bool), np.asarray(headroom_bytes, dtype=np.float64)
    return np.where(~f, FIT_STATUS[2], np.where(h >= 0, FIT_STATUS[0], FIT_STATUS[1]))
