"""The dense MoE dispatcher (moe_dispatcher dense): every expert computes every token, weighted by the router's scores
(0 where it was not chosen), as Hugging Face transformers' Llama 4 does at its release (Llama4TextMoe,
transformers 4.51, 2025-04: routed_in = hidden_states.repeat(num_experts, 1), torch.bmm over the experts). It is the
capacity-padded expert path with a capacity of E/k: E/k × the routed experts' FLOPs, activations and copies.

The published runs that need it: axolotl's Llama 4 Scout QLoRA README (data/published_runs_moe.csv axo-llama4scout-*),
predicted 7.6× and 12.2× too fast before (data/prospective.csv, batch 29)."""
import pytest

from core.estimate import config_from_inputs, estimate

SCOUT = dict(model="llama-4-scout", gpu="h100-sxm", framework="fsdp", n_gpus=1, gpus_per_node=1, zero_stage=0,
             micro_batch=1, global_batch=1, seq_len=4096, training="qlora", recompute="full")


def _rec(**kw):
    return estimate(config_from_inputs(**{**SCOUT, **kw}))


def test_dense_is_the_padded_capacity_of_e_over_k():
    dense = _rec(moe_dispatcher="dense")
    # Llama 4 Scout: 16 experts, top-1 (its preset) -> a capacity of 16 balanced shares, padded
    padded = _rec(moe_capacity_factor=16.0, moe_pad_to_capacity=True)
    for k in ("predicted_step_time_s", "activations_bytes", "total_bytes"):
        assert dense[k] == pytest.approx(padded[k], rel=1e-12), k


def test_dense_costs_more_than_routing_and_never_less_memory():
    dense, routed = _rec(moe_dispatcher="dense"), _rec()
    assert dense["predicted_step_time_s"] > 3 * routed["predicted_step_time_s"]
    assert dense["activations_bytes"] > routed["activations_bytes"]
    assert dense["weights_bytes"] == routed["weights_bytes"]  # the same experts, only more work
    # model FLOPs are the routed ones: the extra experts' work lowers the MFU
    assert dense["flops_per_token"] == routed["flops_per_token"]
    assert dense["predicted_mfu"] < routed["predicted_mfu"]


@pytest.mark.parametrize("kw", [dict(ep=8, n_gpus=8, global_batch=8, zero_stage=3),
                                dict(model="llama-3.1-8b", training="full")])
def test_dense_needs_an_moe_model_without_expert_parallelism(kw):
    with pytest.raises(ValueError, match=r"^moe_dispatcher: dense runs every expert on every token"):
        _rec(moe_dispatcher="dense", **kw)


@pytest.mark.parametrize("fw, gpu", [("megatron", "h100-sxm"), ("maxtext", "tpu-v5p")])
def test_stacks_with_their_own_moe_layer_refuse_it_by_name(fw, gpu):
    with pytest.raises(ValueError, match=r"^moe_dispatcher: dense is how Hugging Face transformers models run"):
        _rec(moe_dispatcher="dense", framework=fw, gpu=gpu, training="full", zero_stage=1 if fw == "megatron" else 3)


def test_dense_experts_run_at_the_dense_gemm_rate():
    """A batched matmul over every expert (or axolotl's loop of plain GEMMs) is not torch._grouped_mm: on B200, where
    the fsdp profile's routed experts take the measured grouped rate (data/accelerators.csv
    grouped_gemm_efficiency), dense takes the dense one, so it is faster than the same padded capacity grouped."""
    kw = dict(gpu="b200", training="full", n_gpus=8, gpus_per_node=8, zero_stage=3, global_batch=8)
    dense = _rec(moe_dispatcher="dense", **kw)
    grouped = _rec(moe_capacity_factor=16.0, moe_pad_to_capacity=True, **kw)
    assert dense["activations_bytes"] == pytest.approx(grouped["activations_bytes"], rel=1e-12)
    assert dense["predicted_step_time_s"] < grouped["predicted_step_time_s"]
