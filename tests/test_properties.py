"""Identities, cross-checks and properties (hypothesis) of the accounting core."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core import flops as F
from core import memory as M
from core.estimate import STATE_PARTS, TOTAL_PARTS, config_from_inputs, estimate, evaluate
from core.model import preset_names

PRESETS = preset_names()
FAST = settings(max_examples=60, deadline=None)


def cfg_strategy():
    return st.fixed_dictionaries({
        "model": st.sampled_from(PRESETS),
        "seq_len": st.sampled_from([2, 128, 1000, 2048, 8192, 32768]),
        "micro_batch": st.integers(1, 8),
        "tp": st.sampled_from([1, 2, 4, 8]),
        "pp": st.sampled_from([1, 2, 4]),
        "dp": st.sampled_from([1, 2, 8, 64]),
        "zero_stage": st.integers(0, 3),
        "recompute": st.sampled_from(M.RECOMPUTE_MODES),
        "flash_attention": st.booleans(),
        "sequence_parallel": st.booleans(),
        "recipe": st.sampled_from(list(M.RECIPES)),
        "optimizer": st.sampled_from(M.OPTIMIZERS),
        "fp32_loss": st.booleans(),
        "gpu": st.sampled_from(["h100-sxm", "a100-40gb", "mi300x", "rtx-4090"]),
    })


def make(d):
    d = dict(d)
    d["n_gpus"] = d.pop("dp") * d["tp"] * d["pp"]
    try:
        return config_from_inputs(conventions="paper", **d)
    except ValueError:
        return None


@FAST
@given(cfg_strategy())
def test_parts_sum_to_total(d):
    cfg = make(d)
    if cfg is None:
        return
    r = estimate(cfg)
    assert r["total_bytes"] == pytest.approx(sum(r[k] for k in TOTAL_PARTS), rel=1e-12)
    assert r["state_bytes"] == pytest.approx(sum(r[k] for k in STATE_PARTS), rel=1e-12)
    assert r["headroom_bytes"] == pytest.approx(r["gpu_memory_bytes"] - r["total_bytes"], rel=1e-9, abs=1)
    assert r["fits"] == (r["total_bytes"] - r["fragmentation_bytes"] <= r["gpu_memory_bytes"])


@FAST
@given(cfg_strategy())
def test_more_gpus_or_higher_stage_never_raise_state(d):
    cfg = make(d)
    if cfg is None:
        return
    s0 = estimate(cfg)["state_bytes"]
    assert estimate(cfg.replace(n_gpus=cfg.n_gpus * 2))["state_bytes"] <= s0 * (1 + 1e-12)
    if cfg.zero_stage < 3:
        assert estimate(cfg.replace(zero_stage=cfg.zero_stage + 1))["state_bytes"] <= s0 * (1 + 1e-12)


@FAST
@given(cfg_strategy())
@example(d={"model": "gpt-3-2.7b", "seq_len": 128, "micro_batch": 3, "tp": 1, "pp": 2, "dp": 1, "zero_stage": 0,
            "recompute": "full", "flash_attention": False, "sequence_parallel": False, "recipe": "cs336-12",
            "optimizer": "adamw", "fp32_loss": True, "gpu": "h100-sxm"})
def test_longer_sequences_never_lower_activations(d):
    """Each pipeline stage's memory grows with the sequence, so the busiest stage's total does; its activations alone
    do without a pipeline (with one, the busiest stage can switch to the last, which holds the logits beside fewer
    activations: GPT-3 2.7B, pp 2, full recompute, fp32 loss, seq 128 → 256)."""
    cfg = make(d)
    if cfg is None:
        return
    a = estimate(cfg)
    for longer in (cfg.seq_len + 1, cfg.seq_len * 2):
        b = estimate(cfg.replace(seq_len=longer))
        assert b["total_bytes"] >= a["total_bytes"]
        if cfg.pp == 1:
            assert b["activations_bytes"] >= a["activations_bytes"]


@FAST
@given(cfg_strategy())
def test_recomputation_never_raises_activations(d):
    cfg = make(d)
    if cfg is None:
        return
    none = estimate(cfg.replace(recompute="none"))["activations_bytes"]
    for mode in ("selective", "full"):
        assert estimate(cfg.replace(recompute=mode))["activations_bytes"] <= none * (1 + 1e-12)


@FAST
@given(cfg_strategy())
def test_flash_never_raises_activations(d):
    cfg = make(d)
    if cfg is None or cfg.seq_len < 2:
        return
    off = estimate(cfg.replace(flash_attention=False))["activations_bytes"]
    assert estimate(cfg.replace(flash_attention=True))["activations_bytes"] <= off * (1 + 1e-12)


def test_regression_flash_raises_at_one_token_without_dropout():
    """Pinned counterexample to 'flash never raises activations': at s = 1 without dropout the fp32 log-sum-exp
    (4 bytes per head and row) outweighs the 2-byte 1×1 softmax output it replaces. True of real kernels too;
    the property holds for s ≥ 2 (4asb ≤ 2as²b)."""
    cfg = config_from_inputs(conventions="paper", model="llama-3.1-8b", seq_len=1)
    assert estimate(cfg.replace(flash_attention=True))["activations_bytes"] > estimate(cfg)["activations_bytes"]


@FAST
@given(cfg_strategy())
def test_vectorised_equals_per_point(d):
    """A sweep and a single estimate share code: evaluate on stacked columns equals per-point estimates."""
    cfgs = [make({**d, "seq_len": s, "micro_batch": b}) for s in (128, 4096) for b in (1, 3)]
    cfgs = [c for c in cfgs if c is not None]
    if not cfgs:
        return
    cols = [c.columns() for c in cfgs]
    stacked = {k: np.array([c[k] for c in cols]) for k in cols[0]}
    vec = evaluate(**stacked)
    for i, c in enumerate(cfgs):
        one = estimate(c)
        for k in TOTAL_PARTS + ("total_bytes", "flops_per_token", "days", "cost_usd"):
            assert vec[k][i] == pytest.approx(one[k], rel=1e-12, nan_ok=True)
        assert bool(vec["fits"][i]) == one["fits"] and vec["binding"][i] == one["binding"]


def test_vectorised_equals_loop_random_grid():
    """A random grid of 200 rows across presets and inputs, evaluated at once vs one by one."""
    rng = np.random.default_rng(0)
    cfgs = []
    while len(cfgs) < 200:
        d = {"model": rng.choice(PRESETS), "seq_len": int(rng.integers(1, 65536)), "micro_batch": int(rng.integers(1, 9)),
             "tp": int(rng.choice([1, 2, 4, 8])), "pp": int(rng.choice([1, 2])), "dp": int(rng.choice([1, 4, 16])),
             "zero_stage": int(rng.integers(0, 4)), "recompute": str(rng.choice(M.RECOMPUTE_MODES)),
             "flash_attention": bool(rng.integers(0, 2)), "recipe": str(rng.choice(list(M.RECIPES))),
             "optimizer": str(rng.choice(M.OPTIMIZERS)), "gpu": str(rng.choice(["h100-sxm", "b200", "l4"]))}
        c = make(d)
        if c is not None:
            cfgs.append(c)
    cols = [c.columns() for c in cfgs]
    vec = evaluate(**{k: np.array([c[k] for c in cols]) for k in cols[0]})
    for i, c in enumerate(cfgs):
        one = estimate(c)
        assert vec["total_bytes"][i] == pytest.approx(one["total_bytes"], rel=1e-12)
        assert vec["time_s"][i] == pytest.approx(one["time_s"], rel=1e-12)


def test_invalid_rows_are_flagged_not_nan_silently():
    c = config_from_inputs(conventions="paper", model="llama-3.1-8b").columns()
    cols = dict(c)
    cols["tp"] = np.array([1, 3, 64])
    cols["n_gpus"] = np.array([8, 8, 64])
    out = evaluate(**cols)
    assert list(out["valid"]) == [True, False, False]
    assert "tp·pp" in out["reason"][1] and "n_heads" in out["reason"][2]
    assert np.isnan(out["total_bytes"][1]) and not out["fits"][1]


def test_megatron_formula_matches_6n_plus_attention_for_gpt_shape():
    """Cross-check of two FLOP formulas: for a GPT block without biases/norms/positions, 6N + 12Lhs equals Megatron's
    72·L·h²·(1 + s/(6h) + V/(12hL)) per token (Narayanan et al. 2021 Eq. 3), with N = 12Lh² + Vh (tied)."""
    L, h, s, V = 96, 12288, 2048, 51200
    N = 12 * L * h * h + V * h
    ours = F.model_flops_per_token(N, L, h, s, "full")
    assert float(ours) == pytest.approx(float(F.megatron_flops_per_token(L, h, s, V)), rel=1e-12)


def test_megatron_recompute_formula_matches_hardware_flops():
    """With full recomputation Narayanan et al. 2021 count 96·B·s·L·h²·(1 + s/(6h) + V/(16hL)): the blocks run a
    second forward, the logit layer does not. Our hardware FLOPs agree for a GPT shape without biases/norms."""
    L, h, s, V = 96, 12288, 2048, 51200
    N = 12 * L * h * h + V * h
    mf = F.model_flops_per_token(N, L, h, s, "full")
    hw = F.hardware_flops_per_token(mf, F.attention_flops_per_token(L, h, s), "full",
                                    F.outside_blocks_flops_per_token(V, h, True))
    assert float(hw) == pytest.approx(96 * L * h * h * (1 + s / (6 * h) + V / (16 * h * L)), rel=1e-12)


def test_moe_flops_use_active_params():
    r = estimate(config_from_inputs(conventions="paper", model="mixtral-8x7b", attention_flops="none"))
    assert r["flops_per_token"] == 6 * r["n_active_params"] and r["n_active_params"] < r["n_params"] / 3


def test_measured_throughput_to_mfu_and_hfu():
    """Seed 000 'slow steps': achieved FLOP/s vs peak. 8 H100 at 1e4 tokens/s on llama-2-7b, full recompute."""
    cfg = config_from_inputs(conventions="paper", model="llama-2-7b", n_gpus=8, zero_stage=3, recompute="full", tokens_per_second=1e4,
                             seq_len=4096)
    r = estimate(cfg)
    assert r["achieved_mfu"] == pytest.approx(1e4 * r["flops_per_token"] / (8 * 989.5e12), rel=1e-12)
    outside = 6 * 2 * 32000 * 4096  # untied embedding and LM head are not recomputed
    assert r["achieved_hfu"] == pytest.approx(r["achieved_mfu"] * (1 + (1 - outside / r["flops_per_token"]) / 3),
                                              rel=1e-12)
    # 16·4096 tokens per 4 s (a global batch is a multiple of dp·micro_batch = 8 since the step-time model)
    step = cfg.replace(tokens_per_second=None, step_time_s=4.0, global_batch=16)
    assert estimate(step)["achieved_mfu"] == pytest.approx(16 * 4096 / 4 * r["flops_per_token"] / (8 * 989.5e12))


def test_cost_is_gpu_hours_times_price():
    r = estimate(config_from_inputs(conventions="paper", model="llama-2-7b", n_gpus=64, zero_stage=1, price_per_gpu_hour=2.0, tokens=1e11))
    assert r["cost_usd"] == pytest.approx(r["gpu_hours"] * 2.0, rel=1e-12)
    assert r["gpu_hours"] == pytest.approx(r["time_s"] * 64 / 3600, rel=1e-12)


def test_time_overhead_scales_time():
    c = config_from_inputs(conventions="paper", model="llama-2-7b")
    assert estimate(c.replace(time_overhead_frac=0.2))["days"] == pytest.approx(estimate(c)["days"] * 1.2)


def test_realistic_overhead_is_documented_and_off_by_default():
    base = estimate(config_from_inputs(conventions="paper", model="llama-2-7b"))
    real = estimate(config_from_inputs(conventions="paper", model="llama-2-7b", overhead="realistic"))
    assert base["overhead_bytes"] == 0
    per_step = real["activations_bytes"] + real["logits_bytes"] + real["param_buffer_bytes"]  # not the model state
    assert real["overhead_bytes"] == pytest.approx(M.REALISTIC_OVERHEAD_BYTES + M.REALISTIC_FRAGMENTATION_FRAC
                                                   * per_step)


def test_fragmentation_is_a_risk_not_a_need():
    """The fit verdict counts what a run allocates (core/memory.fragmentation_bytes): between the lean total and the
    total with the realistic 10 % of the per-step tensors a setup fits tightly (fits, headroom < 0); beyond the lean
    total it does not fit; on a TPU nothing fragments. Qwen3-30B-A3B on 8 GB300 (296.9 GB allocatable), 4K tokens, micro-batch 8, 9,
    10: the totals with fragmentation are 277, 303 and 329 GB (1e9), 21 GB of it fragmentation at 9 (micro-batches 6-8
    before 2026-12-06, when Megatron-Core's experts stopped keeping their outputs: data/frameworks.csv moe_probs)."""
    recs = [estimate(config_from_inputs(model="qwen3-30b-a3b", gpu="gb300", n_gpus=8, ep=8, seq_len=4096,
                                        micro_batch=mb)) for mb in (8, 9, 10)]
    for r in recs:
        per_step = M.dynamic_bytes(r)
        assert r["fragmentation_bytes"] == pytest.approx(M.REALISTIC_FRAGMENTATION_FRAC * per_step)
        assert r["overhead_bytes"] == pytest.approx(M.REALISTIC_OVERHEAD_BYTES + r["fragmentation_bytes"])
    fits, tight, over = recs
    assert fits["fits"] and fits["headroom_bytes"] >= 0
    assert tight["fits"] and tight["headroom_bytes"] < 0 < tight["headroom_bytes"] + tight["fragmentation_bytes"]
    assert not over["fits"] and over["headroom_bytes"] + over["fragmentation_bytes"] < 0
    tpu = estimate(config_from_inputs(model="llama-3.1-8b", gpu="tpu-v5p", n_gpus=8, seq_len=8192))
    assert tpu["fragmentation_bytes"] == 0 and tpu["overhead_bytes"] == 0


def test_pipeline_last_stage_can_be_the_worst():
    """With pp > 1 the logits live on the last stage; a huge vocabulary at a short sequence makes it the busiest."""
    c = config_from_inputs(conventions="paper", model="llama-3.1-8b", pp=8, n_gpus=8, seq_len=1024, flash_attention=True, fp32_loss=True,
                           vocab_size=1_000_000)
    r = estimate(c)
    assert r["worst_stage"] == "last" and r["logits_bytes"] > 0
    first = estimate(c.replace(fp32_loss=False, vocab_size=1000))
    assert first["worst_stage"] == "first" and first["logits_bytes"] == 0


def test_adafactor_factored_state_is_small():
    r = estimate(config_from_inputs(conventions="paper", model="llama-2-7b", optimizer="adafactor"))
    assert 0 < r["optimizer_bytes"] < 0.01 * 4 * r["n_params"]


def test_optimizer_bytes_per_param():
    n = 1e9
    for opt, bpp in (("adamw", 8), ("adamw_bf16", 4), ("adamw8bit", 2), ("sgd_momentum", 4), ("lion", 4), ("sgd", 0)):
        r = estimate(config_from_inputs(conventions="paper", n_params=n, optimizer=opt))
        assert r["optimizer_bytes"] == bpp * n


def test_precision_aware_optimizer_keeps_master_remainders():
    """Megatron-Bridge docs/performance-guide.md (Memory): under the precision-aware optimizer the fp32 master copy is
    kept as the 16-bit remainder of each bf16 weight: 2 bytes per parameter, 4 otherwise (fp32), 0 without master."""
    n = 1e9
    for opt, wd, mw, bpp in (("adamw_bf16", "bf16", True, 2), ("adamw", "bf16", True, 4),
                             ("adamw_bf16", "fp16", True, 4), ("adamw_bf16", "bf16", False, 0)):
        r = estimate(config_from_inputs(conventions="paper", n_params=n, optimizer=opt, weight_dtype=wd,
                                        master_weights=mw))
        assert r["master_bytes"] == bpp * n, (opt, wd, mw)


def test_gqa_shrinks_kv_and_tp_replicates_below_one_head():
    led = M.layer_ledger(1024, 1, 4096, 32, 8, 14336, "swiglu", "rmsnorm", False)
    assert float(led["k"]) == 2 * 1024 * 8 * 128
    led8 = M.layer_ledger(1024, 1, 4096, 32, 8, 14336, "swiglu", "rmsnorm", False, tp=16)
    assert float(led8["k"]) == 2 * 1024 * 1 * 128  # 8 kv heads over 16 ranks: one head per GPU (replicated)


def test_the_logits_and_a_recomputed_layer_never_coexist():
    """Under full recomputation the output layer's backward frees the logits before the last layer reruns its forward
    (core/memory.recompute_beyond_logits): the stage's peak holds the larger of the two, not their sum. A chunked loss
    keeps one chunk's logits, which gives the recomputed layer's whole working set."""
    from core.estimate import config_from_inputs, estimate
    base = dict(model="llama-3.1-8b", n_gpus=8, zero_stage=3, recompute="full", seq_len=8192, micro_batch=2)
    chunked = estimate(config_from_inputs(**base, chunked_loss=True))
    whole = estimate(config_from_inputs(**base, chunked_loss=False))
    raw = float(chunked["recompute_peak_bytes"] + chunked["logits_bytes"])  # the chunk's logits are below the peak
    assert float(chunked["logits_bytes"]) < raw and float(whole["logits_bytes"]) > 0
    assert float(whole["recompute_peak_bytes"]) == pytest.approx(max(raw - float(whole["logits_bytes"]), 0.0))
    stored = float(chunked["activations_bytes"] - chunked["recompute_peak_bytes"])
    assert float(whole["activations_bytes"] + whole["logits_bytes"]) == pytest.approx(
        stored + max(raw, float(whole["logits_bytes"])), rel=1e-12)
    # nothing recomputed whole: the logits add in full
    sel = estimate(config_from_inputs(**{**base, "recompute": "selective"}, chunked_loss=False))
    assert float(sel["recompute_peak_bytes"]) == 0.0


def test_an_fsdp_unit_gathers_only_its_ranks_experts():
    """ZeRO-3 / FSDP over an MoE model with expert parallelism: a block's routed experts are split over the ep ranks
    (each expert over etp of them), so the gathered unit holds the rank's experts only (core/model.unit_params
    block_experts; DeepSeek-V3: 11.3B routed-expert parameters a layer, 0.35B of them per rank at ep 32)."""
    from core.estimate import config_from_inputs, estimate
    from core.model import get_preset, unit_params
    u = unit_params(**get_preset("deepseek-v3").arch())
    assert float(u["block_experts"]) == pytest.approx(256 * 3 * 7168 * 2048, rel=1e-12)
    base = dict(model="deepseek-v3", gpu="h100-sxm", n_gpus=512, pp=8, zero_stage=3, zero_convention="fsdp",
                recompute="full", seq_len=4096, global_batch=1024)
    for ep in (1, 32):
        rec = estimate(config_from_inputs(**base, ep=ep))
        unit = max(float(u["block"]) - float(u["block_experts"]) * (1 - 1 / ep), float(u["root"]))
        grad_b = 4.0  # the fp32 master's gradients: the reduce-scatter's input is fp32 (core/memory.state_bytes)
        assert float(rec["param_buffer_bytes"]) == pytest.approx(2 * unit * 2 + unit * grad_b, rel=1e-9), ep
    # where the MoE block sets the size (ep 4: above the root), each expert over etp ranks: tp 2 with etp 1 gathers
    # a quarter of the experts whole, the rest of the block halved by tp
    for tp, etp in ((1, 1), (2, 1), (2, 2)):
        rec = estimate(config_from_inputs(**{**base, "tp": tp, "etp": etp, "sequence_parallel": tp > 1}, ep=4))
        moe_local = float(u["block"]) - float(u["block_experts"]) * (1 - tp / (4 * etp))
        assert moe_local > float(u["root"])
        unit = moe_local / tp
        assert float(rec["param_buffer_bytes"]) == pytest.approx(2 * unit * 2 + unit * 4, rel=1e-9), (tp, etp)
    # never below a dense block (DeepSeek's first layers): a small vocabulary, experts spread wide
    small = estimate(config_from_inputs(**{**base, "model": None, **{k: v for k, v in get_preset(
        "deepseek-v3").arch().items()}, "vocab_size": 8192}, ep=64))
    us = unit_params(**{**get_preset("deepseek-v3").arch(), "vocab_size": 8192})
    assert float(us["block_dense"]) > float(us["root"])
    assert float(small["param_buffer_bytes"]) >= 3 * float(us["block_dense"]) * 2 * (1 - 1e-12)
    # a dense model is untouched
    assert float(unit_params(**get_preset("llama-3.1-8b").arch())["block_experts"]) == 0.0


def test_a_lora_runs_frozen_fp8_weights_keep_one_modules_transpose():
    """LoRA over fp8 primary weights (fp8_param_gather) on Hopper: no transpose cache for the whole frozen model, one
    module's dgrad copy at a time (estimate.py; decided from MLPerf's Llama 2 70B LoRA runs on 8 H200 / MI300X at tp 1,
    which fit only so). Full training keeps Transformer Engine's cached transposes."""
    from core.estimate import config_from_inputs, estimate
    from core.model import get_preset, unit_params
    base = dict(model="llama-2-70b", gpu="h200", n_gpus=8, fp8_recipe="delayed", fp8_param_gather=True,
                seq_len=8192, global_batch=8)
    lora = estimate(config_from_inputs(**base, training="lora"))
    full = estimate(config_from_inputs(**base, zero_stage=1, training="full"))
    largest = float(unit_params(**get_preset("llama-2-70b").arch())["largest_layer"])
    assert float(lora["lowp_weights_bytes"]) == pytest.approx(largest * 1.0, rel=1e-9)  # 1 B: the transpose only
    assert float(full["lowp_weights_bytes"]) > 40 * float(lora["lowp_weights_bytes"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["fused", "eager", "none", "full", "x"]), min_size=0, max_size=80),
       st.lists(st.sampled_from(["fused", "eager", "none", "y"]), min_size=1, max_size=4), st.booleans())
def test_vec_isin_is_numpys_isin(values, names, as_object):
    """core/vec.isin (a set test on the few values a choice column holds) answers as np.isin does, for 0-d, small
    and large (> vec.SMALL) columns, str and object arrays, and object columns holding arrays."""
    from core import vec
    x = np.asarray(values, dtype=object if as_object else None)
    assert np.array_equal(vec.isin(x, tuple(names)), np.isin(x, names))
    if values:
        assert bool(vec.isin(np.asarray(values[0]), names)) == bool(np.isin(values[0], names))
        nested = np.empty(len(values), dtype=object)
        nested[:] = [np.asarray(v) for v in values]
        assert np.array_equal(vec.isin(nested, names), np.isin(nested, names))
    nums = np.arange(len(values), dtype=np.float64)
    assert np.array_equal(vec.isin(nums, (1, 3.0)), np.isin(nums, (1, 3.0)))
    if len(values) % 2 == 0 and values:  # a broadcast grid's column: the shape kept
        grid = x.reshape(2, -1, 1)
        got = vec.isin(grid, tuple(names))
        assert got.shape == grid.shape and np.array_equal(got, np.isin(grid, names))
