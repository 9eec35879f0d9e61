"""Issue 19 item 2: MoE routing as it runs — a load imbalance (the busiest expert's share), a capacity factor with
token dropping or padding to capacity, in time and memory; the eager profile's routing bookkeeping and index_add_'s
copy in the ledger (measured in tests/test_measure_moe.py).

Sources: GShard (Lepikhin et al. 2020, §2.2) and Switch Transformer (Fedus et al. 2021, §2.2) for the expert
capacity (capacity factor × tokens·k / experts); Megatron-Core --moe-expert-capacity-factor,
--moe-pad-expert-input-to-capacity; the Megatron-Bridge benchmarks route forced-balanced (imbalance 1).
"""
from __future__ import annotations

import pytest

from core.estimate import config_from_inputs, estimate
from core.memory import ledger
from core.model import moe_load_factor

MIXTRAL = dict(model="mixtral-8x7b", n_gpus=16, ep=8, seq_len=4096, micro_batch=1)


@pytest.mark.parametrize("cf,imb,pad,want", [
    (0.0, 1.0, False, 1.0),    # dropless, balanced: the benchmarks' forced balance
    (0.0, 1.6, False, 1.6),    # dropless: the busiest expert takes all its tokens
    (1.25, 1.6, False, 1.25),  # tokens beyond the capacity are dropped
    (1.25, 1.1, False, 1.1),   # under the capacity nothing is dropped
    (2.0, 1.1, True, 2.0),     # padded to the capacity: every expert computes capacity·T·k/E
])
def test_the_busiest_experts_load(cf, imb, pad, want):
    assert float(moe_load_factor(cf, imb, pad)) == pytest.approx(want)


def test_imbalance_scales_the_expert_tensors_and_the_dispatch():
    """The busiest rank holds load × the balanced share of the routed tokens' tensors, and its all-to-all carries
    load × the bytes; the dense parts (attention, norms, router) do not change."""
    c0 = config_from_inputs(**MIXTRAL).columns()
    c1 = config_from_inputs(**MIXTRAL, moe_load_imbalance=1.5).columns()
    a, b = ledger(c0), ledger(c1)
    for t in ("expert_inputs", "expert_outputs", "gate", "up", "mlp_hidden"):
        assert float(b[t]) == pytest.approx(1.5 * float(a[t])), t
    for t in ("q", "qkv_input", "router_probs", "norm1_input"):
        assert float(b[t]) == pytest.approx(float(a[t])), t
    r0 = estimate(config_from_inputs(**MIXTRAL))
    r1 = estimate(config_from_inputs(**MIXTRAL, moe_load_imbalance=1.5))
    assert 1.3 < r1["ep_comm_s"] / r0["ep_comm_s"] <= 1.5 + 1e-9  # bytes × 1.5; each collective's latency stays
    assert 1.2 < r1["predicted_step_time_s"] / r0["predicted_step_time_s"] < 1.5  # the experts are most of the step


def test_a_capacity_factor_bounds_the_imbalance_and_padding_costs_the_capacity():
    base = estimate(config_from_inputs(**MIXTRAL))
    dropped = estimate(config_from_inputs(**MIXTRAL, moe_load_imbalance=2.0, moe_capacity_factor=1.25))
    free = estimate(config_from_inputs(**MIXTRAL, moe_load_imbalance=2.0))
    padded = estimate(config_from_inputs(**MIXTRAL, moe_capacity_factor=1.25, moe_pad_to_capacity=True))
    assert base["predicted_step_time_s"] < dropped["predicted_step_time_s"] < free["predicted_step_time_s"]
    assert padded["predicted_step_time_s"] == pytest.approx(dropped["predicted_step_time_s"], rel=1e-9)
    assert base["total_bytes"] < dropped["total_bytes"] == pytest.approx(padded["total_bytes"])


def test_the_eager_profile_keeps_the_routing_bookkeeping_and_index_adds_copy():
    """(30·k + 4)·T bytes of indices and weights, and a copy of the weighted expert outputs (k·T·h·2), measured in the
    transformers-style layer (tests/test_measure_moe.py); the fused profile counts neither."""
    T, k, h = 4096, 2, 4096
    eager = ledger(config_from_inputs(**MIXTRAL, profile="eager").columns(), tp=1)
    fused = ledger(config_from_inputs(**MIXTRAL, profile="fused").columns(), tp=1)
    assert float(eager["moe_routing_indices"]) == (30 * k + 4) * T
    assert float(eager["moe_weighted_outputs"]) == float(eager["expert_outputs"]) == 2 * k * T * h
    assert float(fused["moe_routing_indices"]) == float(fused["moe_weighted_outputs"]) == 0.0


def test_routing_inputs_are_refused_by_name_when_they_mean_nothing():
    with pytest.raises(ValueError, match="^moe_load_imbalance: "):
        estimate(config_from_inputs(**MIXTRAL, moe_load_imbalance=0.5))
    with pytest.raises(ValueError, match="^moe_capacity_factor: "):
        estimate(config_from_inputs(**MIXTRAL, moe_capacity_factor=-1))


# --- expert data parallelism and the overlapped all-to-all (Megatron-Core) -------------------------------------------
def _dp(**kw):
    return estimate(config_from_inputs(**{**MIXTRAL, "n_gpus": 64, "dp_overlap": False, **kw}))["dp_comm_s"]


def test_expert_gradients_reduce_over_the_expert_data_parallel_ranks_only():
    """Megatron-Core keeps the routed experts' gradients in their own buffers, reduced over the expert-data-parallel
    group, n/(etp·ep·pp) ranks (distributed_data_parallel.py, parallel_state.py): with ep = n each expert lives on one
    rank and its gradients never leave it, so the experts' count no longer moves the data-parallel time; with ep < n
    they do, as the dense parameters always do."""
    # (the router's h·E weights are dense parameters: 0.5 % more bytes at 128 experts)
    assert _dp(ep=64, n_experts=64) == pytest.approx(_dp(ep=64, n_experts=128), rel=0.01)
    assert _dp(ep=8, n_experts=64) > 1.5 * _dp(ep=64, n_experts=64)   # 8 of 64 experts per rank, reduced over 8
    assert _dp(ep=8, n_experts=64) < _dp(ep=8, n_experts=128)


def test_unpaired_micro_batches_follow_megatrons_warmup_count():
    """Megatron's num_warmup_microbatches (schedules.py) on the first stage: (p − 1)·2 + (v − 1)·p chunks of 1/v
    micro-batch interleaved, one more with the all-to-all overlap; without a pipeline the first forward and the last
    backward, one micro-batch's worth; never more than the step's m."""
    from core.schedule import unpaired_micro_batches as u
    assert float(u(1, 1, 32)) == 1.0
    assert float(u(8, 4, 128)) == pytest.approx((7 * 2 + 3 * 8 + 1) / 4)
    assert float(u(8, 4, 4)) == 4.0


def test_the_overlapped_all_to_all_is_exposed_only_in_the_unpaired_micro_batches():
    """--overlap-moe-expert-parallel-comm runs one micro-batch's dispatch and combine beside another's compute: where
    the compute outlasts them (Mixtral's experts here), only the unpaired micro-batches' all-to-all stays exposed —
    without a pipeline, one micro-batch's worth of the m — and the compute itself does not change."""
    kw = dict(MIXTRAL, n_gpus=64, global_batch=1024)
    off = estimate(config_from_inputs(**kw))
    on = estimate(config_from_inputs(**kw, moe_overlap=True))
    m = off["micro_batches"]
    assert m >= 8
    assert off["ep_comm_s"] / m <= on["ep_comm_s"] < off["ep_comm_s"] / m * 1.5  # (+ the overlap cost of the profile)
    assert on["compute_s"] == off["compute_s"]
    assert on["predicted_step_time_s"] < off["predicted_step_time_s"]
    with pytest.raises(ValueError, match="^moe_overlap: "):  # Megatron's combined 1F1B needs the interleaved schedule
        config_from_inputs(**kw, pp=2, moe_overlap=True).columns()
    with pytest.raises(ValueError, match="^moe_dispatcher: "):
        config_from_inputs(model="llama-3.1-8b", n_gpus=8, moe_dispatcher="deepep").columns()


def _zoo_pair():
    from core import validation as V
    runs = {r.id: r for r in V.read("data/published_runs_moe.csv")}
    a, b = runs["zoo-qwen3-235b-h100-256g-0"], runs["zoo-qwen3-235b-h100-256g-1"]
    assert {k: v for k, v in b.inputs.items() if k != "moe_overlap"} == a.inputs and b.inputs["moe_overlap"]
    ra, rb = (estimate(config_from_inputs(**{**r.inputs, "mfu": "auto"})) for r in (a, b))
    return ra, rb, ra["predicted_step_time_s"] - rb["predicted_step_time_s"]


def test_the_zoos_overlapped_qwen3_run_saves_no_more_than_its_all_to_all():
    """Megatron-MoE-ModelZoo's Qwen3-235B on 256 H100 (TP 2, PP 8, VP 4, EP 32 over four nodes, DeepEP): 19.7 s a step
    without and 17.6 s with the 1F1B all-to-all overlap (best_practice/qwen3/readme.md, the two rows that differ only
    in it). The overlap saves time, never more than the exposed all-to-all it hides."""
    ra, rb, saved = _zoo_pair()
    assert 0.0 < saved <= ra["ep_comm_s"]


@pytest.mark.xfail(strict=True, reason="the model hides the cross-node all-to-all behind the other micro-batch's "
                   "compute (saving ~6.8 s); the zoo measured 2.1 s: DeepEP's SMs taken from the GEMMs and the "
                   "per-phase pairing of dispatch and combine with compute are not modelled")
def test_the_zoos_overlap_saves_what_the_zoo_measured():
    assert _zoo_pair()[2] == pytest.approx(19.7 - 17.6, rel=0.3)


def test_einsum_dispatch_costs_its_two_gemms_per_moe_layer():
    """moe_dispatcher einsum (MaxText's dense path, src/maxtext/layers/moe.py @e591f30c l.2588-2825: 'BSM,BSEC ->
    EBCM' and 'EBCM,BSEC -> BSM' over capacity buffers of C = cf·S·k/E slots per sequence): each einsum is a GEMM of
    F = 2·S·(E·C)·h FLOPs per sequence, forward 2F, backward 3F (the dispatch mask has no gradient). Mixtral 8x7B
    (32 MoE layers, h 4096, top-2) at S 4096, cf 1.25: E·C = 10,240, F = 2·4096·10240·4096 = 3.44e11; 5F × 32 layers =
    5.5e13 FLOPs per sequence, at H100's 989.5e12 × 0.803 (MAMF) × 0.75 (sustained) × 1.04 (maxtext's fitted scale)
    ≈ 620 TFLOP/s: 0.089 s, the wave quantization of 1,280 tiles over 132 SMs (10 waves for 9.7) on top. The
    all-to-all and the expert GEMMs are those of padding to capacity; doubling the capacity factor doubles the cost.
    With tp 2, cp 2 and 2 sequences a micro-batch, each rank runs its 2,048 tokens of each sequence (E·C = 5,120)
    on its half of the embedding, for both sequences, in 2 micro-batches."""
    from core import profiles as PF
    base = dict(model="mixtral-8x7b", gpu="h100-sxm", n_gpus=8, zero_stage=3, micro_batch=1, global_batch=8,
                seq_len=4096, recompute="none", framework="maxtext", moe_pad_to_capacity=True)

    def extra(cf, **over):
        kw = {**base, **over}
        pad = estimate(config_from_inputs(mfu="auto", moe_capacity_factor=cf, **kw))
        ein = estimate(config_from_inputs(mfu="auto", moe_capacity_factor=cf, moe_dispatcher="einsum", **kw))
        assert float(ein["ep_comm_s"]) == pytest.approx(float(pad["ep_comm_s"]), rel=1e-12)
        return float(ein["compute_s"]) - float(pad["compute_s"])

    rate = 989.5e12 * 0.803 * PF.sustained_fraction("hopper")[0] * PF.profiles()["maxtext"].number("sustained_scale")
    f = 2 * 4096 * (1.25 * 4096 * 2) * 4096
    assert extra(1.25) == pytest.approx(32 * 5 * f / rate * 10 / 9.7, rel=0.03)
    assert extra(2.5) == pytest.approx(2 * extra(1.25), rel=0.05)
    # tp 2, cp 2, 2 sequences a micro-batch (dp 2: 2 micro-batches of the global 8): the dispatch GEMM has
    # 40·8·2 = 640 tiles (5 waves for 4.85), the combine GEMM 16·8·2 = 256 (2 waves for 1.94): both 1.031
    f2 = 2 * 2 * 2048 * (1.25 * 2048 * 2) * 2048
    assert extra(1.25, tp=2, cp=2, micro_batch=2) == pytest.approx(2 * 32 * 5 * f2 / rate * 5 / 4.85, rel=0.03)
    # without padding implied: einsum computes every capacity slot whatever moe_pad_to_capacity says
    nopad = {**base, "moe_pad_to_capacity": False}
    a = estimate(config_from_inputs(mfu="auto", moe_capacity_factor=1.25, moe_dispatcher="einsum", **nopad))
    b = estimate(config_from_inputs(mfu="auto", moe_capacity_factor=1.25, moe_dispatcher="einsum", **base))
    assert float(a["predicted_step_time_s"]) == float(b["predicted_step_time_s"])


def test_einsum_dispatch_needs_capacity_buffers():
    """einsum dispatches to capacity buffers: without a capacity factor, or on a dense model, the input is refused
    with the field's name (as the CLI and the app show it)."""
    with pytest.raises(ValueError, match="moe_dispatcher: einsum .* moe_capacity_factor > 0"):
        estimate(config_from_inputs(model="mixtral-8x7b", gpu="h100-sxm", n_gpus=8, zero_stage=3,
                                    framework="maxtext", moe_dispatcher="einsum"))
    with pytest.raises(ValueError, match="moe_dispatcher: einsum"):
        estimate(config_from_inputs(model="llama-3.1-8b", gpu="h100-sxm", n_gpus=8, moe_dispatcher="einsum",
                                    moe_capacity_factor=1.0))
    # ep 1 is fine (TPU Mixtral recipes shard the experts over fsdp): only deepep and hybridep need ep > 1
    ok = estimate(config_from_inputs(model="mixtral-8x7b", gpu="h100-sxm", n_gpus=8, zero_stage=3, framework="maxtext",
                                     moe_dispatcher="einsum", moe_capacity_factor=1.25))
    assert bool(ok["valid"])
