"""Bad input raises ValueError naming the field (Python) or prints `error: <field>: …` with exit 2 (CLI)."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli import main
from core.estimate import config_from_inputs, estimate
from core.hardware import get_accelerator
from core.limits import limits

ROOT = Path(__file__).resolve().parents[1]

BAD = [
    (dict(model="llama-2-7b", d_model=4100, n_heads=32, d_ff=11008), "d_model"),
    (dict(model="llama-2-7b", n_kv_heads=5), "n_kv_heads"),
    (dict(model="llama-2-7b", n_gpus=0), "n_gpus"),
    (dict(model="llama-2-7b", n_gpus=-8), "n_gpus"),
    (dict(model="llama-2-7b", tp=3, n_gpus=8), "tp·pp"),
    (dict(model="llama-2-7b", tp=2, pp=2, n_gpus=6), "tp·pp"),
    (dict(model="llama-2-7b", tp=64, n_gpus=64), "tp: larger than n_heads"),
    (dict(model="llama-2-7b", tp=3, n_gpus=3), "tp: does not divide n_heads"),
    (dict(model="llama-2-7b", pp=64, n_gpus=64), "pp"),
    (dict(model="llama-2-7b", mfu=0), "mfu"),
    (dict(model="llama-2-7b", mfu=1.5), "mfu"),
    (dict(model="llama-2-7b", mfu=-0.1), "mfu"),
    (dict(model="llama-2-7b", mfu=float("nan")), "mfu"),
    (dict(model="llama-2-7b", mfu="fast"), "mfu"),
    (dict(model="llama-2-7b", seq_len=0), "seq_len"),
    (dict(model="llama-2-7b", seq_len=2048.5), "seq_len"),
    (dict(model="llama-2-7b", seq_len="long"), "seq_len"),
    (dict(model="llama-2-7b", micro_batch=-1), "micro_batch"),
    (dict(model="llama-2-7b", zero_stage=4), "zero_stage"),
    (dict(model="llama-2-7b", tokens=-1.0), "tokens"),
    (dict(model="llama-2-7b", price_per_gpu_hour=-2.0), "price_per_gpu_hour"),
    (dict(model="llama-2-7b", recompute="some"), "recompute"),
    (dict(model="llama-2-7b", optimizer="adam9"), "optimizer"),
    (dict(model="llama-2-7b", weight_dtype="fp32", master_weights=True), "master_weights"),
    (dict(model="llama-2-7b", gpu="a100-80gb", compute_dtype="fp8"), "compute_dtype"),
    (dict(model="llama-2-7b", flash_attention="yes"), "flash_attention"),
    (dict(model="llama-9b"), "model: unknown preset"),
    (dict(model="llama-2-7b", gpu="h1000"), "gpu: unknown accelerator"),
    (dict(n_params=-7e9), "n_params"),
    (dict(n_params=float("inf")), "n_params"),
    (dict(model="llama-2-7b", n_params=7e9), "model"),
    (dict(model="llama-2-7b", recipe="cheap"), "recipe"),
    (dict(model="llama-2-7b", gpu="custom", gpu_memory_bytes=80e9), "gpu: a custom accelerator needs"),
    (dict(model="llama-2-7b", gpu="custom", peak_flops_per_s=1e15, gpu_memory_bytes=-1,
          memory_bandwidth_bytes_per_s=1e12), "gpu_memory_bytes"),
    (dict(model="llama-2-7b", step_time_s=1.0), "step_time_s"),
    (dict(model="llama-2-7b", colour="red"), "colour"),
    (dict(n_layers=2, d_model=64), "model"),
]


@pytest.mark.parametrize("kw, field", BAD, ids=[f"{b[1]}-{i}" for i, b in enumerate(BAD)])
def test_invalid_input_names_field(kw, field):
    with pytest.raises(ValueError) as e:
        config_from_inputs(**kw)
    assert str(e.value).startswith(field.split(":")[0]) and field in str(e.value)


def test_unknown_names_list_known():
    with pytest.raises(ValueError, match="llama-3.1-8b"):
        config_from_inputs(model="nope")
    with pytest.raises(ValueError, match="h100-sxm"):
        get_accelerator("nope")


def test_custom_accelerator_works_everywhere():
    cfg = config_from_inputs(model="llama-2-7b", gpu="custom", peak_flops_per_s=500e12, gpu_memory_bytes=96e9,
                             memory_bandwidth_bytes_per_s=4e12, price_per_gpu_hour=2.0, n_gpus=8, zero_stage=3)
    r = estimate(cfg)
    assert r["gpu_memory_bytes"] == 96e9 and r["peak_flops_per_s"] == 500e12 and math.isfinite(r["cost_usd"])
    assert limits(cfg)["max_seq_len"] > 0


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "core", *args], capture_output=True, text=True, cwd=ROOT)


def test_cli_estimate_json_full_record():
    """The issue's done-when command prints the full record as one JSON object."""
    p = run_cli("estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--seq-len", "8192", "--json")
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    for k in ("n_params", "weights_bytes", "grads_bytes", "optimizer_bytes", "master_bytes", "activations_bytes",
              "activations_per_layer_bytes", "logits_bytes", "overhead_bytes", "total_bytes", "gpu_memory_bytes",
              "headroom_bytes", "fits", "binding", "flops_per_token", "train_flops", "days", "gpu_hours", "cost_usd",
              "achieved_mfu"):
        assert k in rec
    assert rec["n_params"] == pytest.approx(8.03e9, rel=1e-3)
    assert rec["inputs"]["seq_len"] == 8192 and rec["activation_ledger"]


def test_cli_same_vocabulary_as_python():
    args = ["--model", "llama-2-7b", "--seq-len", "4096", "--n-gpus", "8", "--zero-stage", "3", "--flash-attention",
            "--no-master-weights", "--recompute", "selective", "--json"]
    assert main(["estimate", *args]) == 0
    p = run_cli("estimate", *args)
    rec = json.loads(p.stdout)
    py = estimate(config_from_inputs(model="llama-2-7b", seq_len=4096, n_gpus=8, zero_stage=3, flash_attention=True,
                                     master_weights=False, recompute="selective"))
    assert rec["total_bytes"] == py["total_bytes"]


def test_cli_readable_output_and_subcommands():
    p = run_cli("estimate", "--model", "llama-2-7b")
    assert p.returncode == 0 and "GB (1e9)" in p.stdout and "GiB (2^30)" in p.stdout
    p = run_cli("limits", "--model", "llama-2-7b", "--n-gpus", "8", "--zero-stage", "3", "--json")
    lim = json.loads(p.stdout)
    assert lim["max_seq_len"] > 0 and lim["max_micro_batch"] >= 1 and lim["min_gpus"] >= 1
    p = run_cli("roofline", "--op", "matmul", "--m", "1024", "--n", "1024", "--k", "1024", "--json")
    r = json.loads(p.stdout)
    assert r["arithmetic_intensity"] == pytest.approx(341.33, rel=1e-3) and r["bound"] == "compute"
    assert r["ridge_intensity"] == pytest.approx(295.4, rel=1e-3)
    for op, ai in (("matvec", 1.0), ("elementwise", 0.25)):
        r = json.loads(run_cli("roofline", "--op", op, "--m", "1024", "--k", "1024", "--json").stdout)
        assert r["arithmetic_intensity"] == pytest.approx(ai, rel=0.01) and r["bound"] == "memory"
    ops = json.loads(run_cli("roofline", "--model", "llama-3.1-8b", "--seq-len", "4096", "--micro-batch", "1",
                             "--json").stdout)["ops"]
    assert {o["op"] for o in ops} >= {"qkv_proj", "attn_flash", "mlp", "norm", "decode_matvec"}
    p = run_cli("list")
    for name in ("h100-sxm", "h100-pcie", "h200", "b200", "a100-80gb", "a100-40gb", "mi300x", "rtx-4090",
                 "gpt-3-175b", "llama-2-7b", "llama-3.1-8b", "llama-3.2-1b", "mixtral-8x7b"):
        assert name in p.stdout
    p = run_cli("advise", "--model", "llama-3.1-8b", "--seq-len", "16384", "--n-gpus", "8", "--json")
    adv = json.loads(p.stdout)
    assert not adv["fits"] and adv["best"] is not None


@pytest.mark.parametrize("args, field", [
    (["estimate", "--model", "nope"], "model"),
    (["estimate", "--model", "llama-2-7b", "--tp", "3", "--n-gpus", "4"], "tp·pp"),
    (["estimate", "--model", "llama-2-7b", "--mfu", "2"], "mfu"),
    (["estimate", "--model", "llama-2-7b", "--mfu", "abc"], "mfu"),
    (["estimate", "--model", "llama-2-7b", "--seq-len", "1.5"], "seq_len"),
    (["estimate", "--model", "llama-2-7b", "--gpu", "tpu"], "gpu"),
    (["estimate", "--hf-config", "/nonexistent/config.json"], "config"),
    (["roofline", "--op", "matmul", "--m", "4"], "k"),
])
def test_cli_errors_are_one_line_no_traceback(args, field):
    p = run_cli(*args)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr and field in p.stderr


def test_cli_json_never_contains_nan():
    p = run_cli("estimate", "--model", "llama-2-7b", "--json")
    assert "NaN" not in p.stdout and "Infinity" not in p.stdout
