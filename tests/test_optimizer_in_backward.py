"""The optimizer stepped inside the backward (torchtune's optimizer_in_bwd, input `optimizer_in_backward`).

torchtune keeps one optimizer per parameter and steps and zeroes it in a post-accumulate-grad hook as soon as the
parameter's gradient is ready (pytorch/torchtune @bd2a0fc7: torchtune/modules/optim.py OptimizerInBackward, single
device; torchtune/training/memory.py register_optim_in_bwd_hooks, distributed), so no gradient buffer outlives its
parameter; its recipes refuse gradient accumulation and clipping with it. The ledger keeps the largest parameter's
gradient instead of the buffer (core/memory.optimizer_in_backward).

torchtune's published memory table, three of whose rows run it: tests/test_memory_reports.py.
"""
import subprocess
import sys

import pytest

from core.estimate import config_from_inputs, estimate

GiB = 2**30
# Llama 3.2 3B, one A100, as torchtune's table runs it (data/published_runs.csv ttune-3b-a100-ac)
TUNE = dict(model="llama-3.2-3b", gpu="a100-80gb", n_gpus=1, framework="fsdp", zero_stage=0, micro_batch=2,
            global_batch=2, seq_len=4096, recompute="full", compile=True, chunked_loss=True, optimizer="adamw_bf16",
            master_weights=False)


def _rec(**kw):
    return estimate(config_from_inputs(**{**TUNE, **kw}))


def test_the_gradient_buffer_becomes_the_largest_parameters_gradient():
    off, on = _rec(), _rec(optimizer_in_backward=True)
    # Llama 3.2 3B's largest tensor is its tied embedding, 128,256 × 3,072, its bf16 gradient 2 bytes an element
    assert on["grads_bytes"] == pytest.approx(128256 * 3072 * 2, rel=1e-9)
    assert off["grads_bytes"] == pytest.approx(2 * off["n_params"], rel=1e-9)  # the whole bf16 buffer without it
    assert on["grad_accum_bytes"] == 0
    for k in ("weights_bytes", "optimizer_bytes", "master_bytes", "activations_bytes", "logits_bytes"):
        assert on[k] == off[k], k
    assert on["total_bytes"] < off["total_bytes"]
    # the step's time does not move: the same updates, run inside the backward on the same stream
    assert on["predicted_step_time_s"] == pytest.approx(off["predicted_step_time_s"], rel=1e-12)


@pytest.mark.parametrize("kw", [dict(), dict(zero_stage=3, n_gpus=8, global_batch=16),
                                dict(zero_stage=2, n_gpus=8, global_batch=16),
                                dict(offload="optimizer"), dict(frozen_frac=0.5),
                                dict(model="llama-3.1-8b", optimizer="adamw8bit"),
                                dict(zero_stage=3, n_gpus=8, global_batch=16, master_weights=True, optimizer="adamw")])
def test_it_never_adds_memory_and_shards_with_zero(kw):
    off, on = _rec(**kw), _rec(**kw, optimizer_in_backward=True)
    assert on["grads_bytes"] <= off["grads_bytes"]
    assert on["total_bytes"] <= off["total_bytes"]
    assert on["grad_accum_bytes"] == 0
    if kw.get("zero_stage", 0) >= 2:  # the hook fires on the reduce-scattered shard: ÷ the 8 ranks; FSDP's fp32
        # master makes the gradient fp32 (4 bytes), bf16 parameters keep bf16 ones
        grad_b = 4 if kw.get("master_weights") else 2
        assert on["grads_bytes"] == pytest.approx(128256 * 3072 * grad_b / 8, rel=1e-9)
    elif kw.get("offload") == "optimizer":  # the gradients stream to the host: nothing left on the GPU
        assert on["grads_bytes"] == off["grads_bytes"] == 0


@pytest.mark.parametrize("fw", ["megatron", "deepspeed", "maxtext"])
def test_frameworks_without_it_refuse_it_by_name(fw):
    kw = dict(TUNE, framework=fw, optimizer_in_backward=True)
    if fw == "maxtext":
        kw["gpu"] = "tpu-v5p"
    with pytest.raises(ValueError, match=r"^optimizer_in_backward: the framework does not step the optimizer"):
        estimate(config_from_inputs(**kw))


def test_gradient_accumulation_is_refused_by_name():
    with pytest.raises(ValueError, match=r"^optimizer_in_backward: .*no gradient accumulation"):
        _rec(optimizer_in_backward=True, global_batch=4)


@pytest.mark.parametrize("kw, why", [
    (dict(pp=2, n_gpus=2), "pipeline"), (dict(model="mixtral-8x7b", ep=8, n_gpus=8, zero_stage=3), "expert"),
    (dict(training="lora"), "full training"), (dict(grad_accum_fp32=True), "accumulation buffer"),
    (dict(n_gpus=8, zero_stage=0), "ZeRO-2 or 3")])
def test_setups_no_framework_runs_are_refused_by_name(kw, why):
    with pytest.raises(ValueError, match=r"^optimizer_in_backward: .*" + why):
        _rec(**{"global_batch": None, **kw}, optimizer_in_backward=True)


def test_its_default_global_batch_takes_no_accumulation():
    """Without a global batch the planner's default (≥ target_batch_tokens) would accumulate: here dp·micro_batch."""
    rec = estimate(config_from_inputs(model="llama-3.1-8b", n_gpus=8, framework="fsdp", zero_stage=3, micro_batch=2,
                                      optimizer_in_backward=True))
    assert rec["predicted_tokens_per_s"] * rec["predicted_step_time_s"] == pytest.approx(8 * 2 * 4096, rel=1e-9)


def test_a_partly_frozen_model_keeps_a_whole_gradient_in_flight():
    assert _rec(optimizer_in_backward=True, frozen_frac=0.5)["grads_bytes"] == pytest.approx(128256 * 3072 * 2)


def test_the_cli_takes_it_and_says_why_not():
    base = [sys.executable, "-m", "core", "estimate", "--model", "llama-3.2-3b", "--gpu", "a100-80gb", "--n-gpus",
            "1", "--zero-stage", "0", "--micro-batch", "2", "--global-batch", "2", "--seq-len", "4096",
            "--optimizer-in-backward"]
    ok = subprocess.run(base + ["--framework", "fsdp"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    row = next(line for line in ok.stdout.splitlines() if line.strip().startswith("grads "))
    # the default recipe keeps an fp32 master, which under FSDP is the fp32 parameter: fp32 gradients, 4 bytes
    assert float(row.split()[-1]) == pytest.approx(128256 * 3072 * 4 / GiB, abs=0.001)
    bad = subprocess.run(base + ["--framework", "megatron"], capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "optimizer_in_backward" in bad.stderr and "Traceback" not in bad.stderr


def test_limits_move_the_global_batch_with_the_micro_batch():
    """core/limits varies one input at a time; with the step in the backward a given global batch cannot stay fixed
    while the micro-batch or the GPU count moves (that would need accumulation), so it follows dp·micro_batch."""
    from core.limits import max_micro_batch, min_gpus
    cfg = config_from_inputs(model="llama-3.1-8b", n_gpus=8, framework="fsdp", zero_stage=3, micro_batch=2,
                             global_batch=16, optimizer_in_backward=True)
    assert max_micro_batch(cfg) >= 2  # the given micro-batch fits (estimate says so), so the limit is at least it
    assert estimate(cfg)["fits"]
    assert min_gpus(cfg) is not None and min_gpus(cfg) <= 8


def test_plan_over_several_gpu_counts_keeps_pure_data_parallelism_for_each():
    """Without a given global batch the search fixes one: the least common multiple of the counts, one sequence per
    GPU of it, so each count can run every GPU as a data-parallel rank (micro-batch lcm / n)."""
    from core.plan import plan
    out = plan(dict(model="llama-3.1-8b", framework="fsdp", optimizer_in_backward=True), (8, 32), top=200)
    assert out["global_batch"] == 32
    pure = {(s["n_gpus"], s["micro_batch"]) for s in out["strategies"] if s["dp"] == s["n_gpus"]}
    assert (32, 1) in pure and (8, 4) in pure
