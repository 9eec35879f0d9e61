"""Every worked number in ../shared/seeds/ (000: resource accounting article; 001: memory and compute arithmetic;
002: CS336-style lesson), reproduced to 3 significant figures, plus the ZeRO paper's Fig. 1 and Korthikanti et al.
Table 2. Each test names its source; tolerances are explicit (rel=5e-3 means the seed's 3 figures)."""
from __future__ import annotations

import math

import pytest

from core import memory as M
from core import roofline as R
from core.estimate import config_from_inputs, estimate
from core.hardware import get_accelerator
from core.limits import min_gpus_state_only
from core.units import GB, MB

SIG3 = 5e-3  # a number printed with 3 significant figures is within ±0.5 in its last digit


def state_gb(n_params, recipe, parts=None, **kw):
    cfg = config_from_inputs(conventions="paper", n_params=n_params, recipe=recipe, **kw)
    rec = estimate(cfg)
    parts = parts or ("weights_bytes", "grads_bytes", "grad_accum_bytes", "optimizer_bytes", "master_bytes")
    return sum(rec[p] for p in parts) / GB


# ----- model state: seeds 000, 001, 002 -----------------------------------------------------------------------------
@pytest.mark.parametrize("recipe, bpp, expected_gb", [
    ("zero-16", 16, 112),  # seed 000 "16 bytes per parameter, a 7-billion-parameter model needs 112 GB"; seed 001
    ("megatron-18", 18, 126),  # seed 002 "≈18 … 126 GB with fp32 grads"
    ("cs336-12", 12, 84),  # seed 000: 12 bytes/param (CS336) × 7B
    ("playbook-20", 20, 140),  # Ultra-Scale Playbook convention, 20 bytes/param
    ("fp32-16", 16, 112),  # pure fp32 is also 16
])
def test_7b_state_by_recipe(recipe, bpp, expected_gb):
    assert state_gb(7e9, recipe) == pytest.approx(expected_gb, rel=1e-12)
    assert M.RECIPE_BYTES[recipe] == bpp


def test_7b_core14_without_gradients():
    """Seed 002: '7B · core 14 bytes × 7×10⁹ = 98 GB just for weights + fp32 master + Adam m,v'."""
    assert state_gb(7e9, "zero-16", ("weights_bytes", "optimizer_bytes", "master_bytes")) == pytest.approx(98, rel=1e-12)


@pytest.mark.parametrize("n, expected_gb", [(70e9, 1120), (13e9, 208), (1.3e9, 20.8)])
def test_state_table_seed002(n, expected_gb):
    """Seed 002 fit table: 70B ≈1,120 GB, 13B ≈208 GB, 1.3B ≈21 GB; seed 001: 70B '~1.1 TB'."""
    assert state_gb(n, "zero-16") == pytest.approx(expected_gb, rel=SIG3)


def test_1p3b_fits_one_80gb_gpu():
    """Seed 002: 1.3B '≈21 GB — yes, room for activations' on one 80 GB H100."""
    rec = estimate(config_from_inputs(conventions="paper", n_params=1.3e9, gpu="h100-sxm", seq_len=512))
    assert rec["fits"]
    assert (rec["state_bytes"]) / GB == pytest.approx(21, abs=0.5)


@pytest.mark.parametrize("n, gpus", [(1.3e9, 1), (7e9, 2), (13e9, 3), (70e9, 14)])
def test_fewest_80gb_gpus_for_state_alone(n, gpus):
    """Seed 002 table 'min H100s (state only, ÷G)': 1.3B → 1, 7B → 2, 13B → 3, 70B → 14 (state evenly sharded)."""
    assert min_gpus_state_only(config_from_inputs(conventions="paper", n_params=n, zero_stage=3, gpu="h100-sxm")) == gpus


def test_7b_does_not_fit_one_h100_before_activations():
    """Seeds 000/002: 112 GB of state > 80 GB; the optimizer state alone overflows the device."""
    rec = estimate(config_from_inputs(conventions="paper", n_params=7e9, gpu="h100-sxm", seq_len=512))
    assert not rec["fits"] and rec["binding"] == "state"
    assert rec["state_bytes"] > rec["gpu_memory_bytes"]


# ----- activations: seed 000 (Korthikanti Eq. 1), seed 001 -----------------------------------------------------------
def gpt_layer(s, b=1, h=4096, a=32, **kw):
    return M.layer_ledger(s, b, h, a, a, 4 * h, "gelu", "layernorm", True, **kw)


def test_gpt_layer_s4096_terms():
    """Seed 000: s=4096, b=1, h=4096, a=32 → 34sbh = 0.57 GB, 5as²b = 2.68 GB, 3.25 GB per layer, ≈104 GB for 32."""
    led = gpt_layer(4096)
    s2 = sum(float(led[k]) for k in ("softmax_output", "softmax_dropout_mask", "dropout_output"))
    linear = sum(float(v) for v in led.values()) - s2
    assert linear / GB == pytest.approx(0.57, rel=SIG3 * 2)  # 0.5705: '0.57' has 2 figures after rounding
    assert s2 / GB == pytest.approx(2.68, rel=SIG3)
    total = sum(float(v) for v in led.values())
    assert total / GB == pytest.approx(3.25, rel=SIG3)
    assert 32 * total / GB == pytest.approx(104, rel=SIG3)


def test_gpt_model_32_layers_activations_104gb():
    """Seed 000 '≈104 GB for 32 layers' through the whole estimate (the 7B GPT shape, h=4096, a=32)."""
    cfg = config_from_inputs(conventions="paper", model="gpt-3-6.7b", seq_len=4096)
    assert estimate(cfg)["activations_bytes"] / GB == pytest.approx(104, rel=SIG3)


def test_gpt_layer_s1024():
    """Seed 000: 'at s = 1024 the whole layer needs only 0.31 GB'."""
    assert sum(float(v) for v in gpt_layer(1024).values()) / GB == pytest.approx(0.31, rel=0.02)


def test_full_recompute_keeps_2sbh():
    """Seeds 000/001: full recomputation keeps only the layer input, 2·s·b·h bytes, '~34 MB here' (s=h=4096)."""
    cfg = config_from_inputs(conventions="paper", model="gpt-3-6.7b", seq_len=4096, recompute="full")
    rec = estimate(cfg)
    assert rec["activations_per_layer_bytes"] / MB == pytest.approx(34, rel=0.02)
    assert rec["activations_per_layer_bytes"] == 2 * 4096 * 4096


def test_seed001_flash_estimate_34sbh():
    """Seed 001: with flash attention (no s×s score matrix) ≈ 34·s·b·h ≈ 570 MB per layer, ≈18 GB for 32 layers.
    Our flash ledger keeps the fp32 log-sum-exp too (4·a·s·b, 0.5 MB here), so it is 34sbh + 4asb."""
    led = gpt_layer(4096, flash_attention=True)
    total = sum(float(v) for v in led.values())
    assert total == 34 * 4096 * 4096 + 4 * 32 * 4096
    assert total / MB == pytest.approx(570, rel=0.01)
    assert 32 * total / GB == pytest.approx(18, rel=0.02)


# ----- the 1.24B fine-tuning exercise (seed 000) --------------------------------------------------------------------
def exercise(master: bool):
    return config_from_inputs(conventions="paper", n_params=1.24e9, n_layers=16, d_model=2048, n_heads=32, vocab_size=128000,
                              seq_len=1024, micro_batch=1, master_weights=master,
                              gpu="custom", gpu_memory_bytes=24e9, peak_flops_per_s=165e12,
                              memory_bandwidth_bytes_per_s=1e12)


@pytest.mark.parametrize("master, left_gb", [(True, 4.2), (False, 9.1)])
def test_exercise_state_leaves(master, left_gb):
    """Seed 000: 'State: … leaving 4.2 or 9.1 GB' on a 24 GB GPU (16 / 12 bytes per parameter)."""
    rec = estimate(exercise(master))
    assert (24e9 - rec["state_bytes"]) / GB == pytest.approx(left_gb, abs=0.05)


def test_exercise_activations_and_logits():
    """Seed 000: 'about 239 MB per layer, 3.8 GB for 16 layers'; logits for a 128,000 vocabulary ≈0.26 GB."""
    rec = estimate(exercise(True))
    assert rec["activations_per_layer_bytes"] / MB == pytest.approx(239, rel=SIG3)
    assert rec["activations_bytes"] / GB == pytest.approx(3.8, rel=0.02)
    assert rec["logits_bytes"] / GB == pytest.approx(0.26, rel=0.02)


def test_exercise_fits_tightly_with_master_and_comfortably_without():
    """Seed 000: 'fits tightly with master weights and comfortably without, before temporary buffers and the logits
    … which may tip the tight case over'. With master: 19.84 + 3.83 + 0.26 = 23.93 GB of 24 — it fits, barely."""
    tight, roomy = estimate(exercise(True)), estimate(exercise(False))
    assert tight["fits"] and tight["headroom_bytes"] / GB < 0.1
    assert roomy["fits"] and roomy["headroom_bytes"] / GB > 5


def test_exercise_doubling_seq_breaks_tight_case_and_recompute_fixes_it():
    """Seed 000: 'Doubling the sequence length would more than double the activations and break the tight case;
    recomputation or a smaller batch would bring it back.'"""
    base = exercise(True)
    longer = base.replace(seq_len=2048)
    a1, a2 = estimate(base), estimate(longer)
    assert a2["activations_bytes"] > 2 * a1["activations_bytes"]
    assert not a2["fits"]
    assert estimate(longer.replace(recompute="full"))["fits"]


# ----- time and FLOPs: seeds 000, 001, 002 ----------------------------------------------------------------------------
def days(n, tokens, gpus, mfu, gpu="h100-sxm"):
    cfg = config_from_inputs(conventions="paper", n_params=n, tokens=tokens, n_gpus=gpus, mfu=mfu, gpu=gpu, zero_stage=3,
                             attention_flops="none")
    return estimate(cfg)["days"]


def test_70b_15t_1024_h100_144_days():
    """Seed 000 (CS336 lecture 2): 70B on 15T tokens, 1,024 H100 at 50% MFU ≈ 144 days."""
    assert days(70e9, 15e12, 1024, 0.5) == pytest.approx(144, rel=SIG3)


def test_70b_14t_2048_h100_8p4_days():
    """Seed 001: 70B on 1.4T tokens, 2,048 H100 (989 TFLOP/s) at 40% ≈ 7.3e5 s ≈ 8.4 days."""
    assert days(70e9, 1.4e12, 2048, 0.4) == pytest.approx(8.4, rel=SIG3)
    cfg = config_from_inputs(conventions="paper", n_params=70e9, tokens=1.4e12, attention_flops="none")
    assert estimate(cfg)["train_flops"] == pytest.approx(5.9e23, rel=0.01)


def test_7b_14t_8_h100_172_days():
    """Seed 002: 7B on 1.4T tokens, 8 H100 at 50% ≈ 1.49e7 s ≈ 172 days; C ≈ 5.9e22."""
    assert days(7e9, 1.4e12, 8, 0.5) == pytest.approx(172, rel=SIG3)


def test_gpt3_175b_300b_tokens_flops():
    """Seed 002: C ≈ 6 · 175e9 · 300e9 ≈ 3.15e23 FLOPs."""
    cfg = config_from_inputs(conventions="paper", n_params=175e9, tokens=300e9, attention_flops="none")
    assert estimate(cfg)["train_flops"] == pytest.approx(3.15e23, rel=SIG3)


def test_every_mfu_point_is_a_day_and_a_half():
    """Seed 000: 'Every percentage point is worth roughly a day and a half of this run' (70B/15T/1,024 H100, 144 days).
    Reproduced as 1% of the run's 144 days = 1.44 ≈ 1.5 days. Note: one MFU *point* near 50% is worth more —
    144 · 50/49 − 144 = 2.9 days — because time scales as 1/MFU; the planner reports the latter exactly."""
    d50 = days(70e9, 15e12, 1024, 0.50)
    assert 0.01 * d50 == pytest.approx(1.5, abs=0.1)
    assert days(70e9, 15e12, 1024, 0.49) - d50 == pytest.approx(d50 * (0.50 / 0.49 - 1), rel=1e-12)


def test_attention_term_12lhs():
    """Seed 001: attention adds ≈ 12·L·h·s FLOPs per token (forward + backward); causal halves it."""
    cfg = config_from_inputs(conventions="paper", model="gpt-3-6.7b", seq_len=4096)
    rec = estimate(cfg)
    assert rec["attention_flops_per_token"] == 12 * 32 * 4096 * 4096
    assert rec["flops_per_token"] == 6 * rec["n_params"] + 12 * 32 * 4096 * 4096
    causal = estimate(cfg.replace(attention_flops="causal"))
    assert causal["attention_flops_per_token"] == 6 * 32 * 4096 * 4096


def test_full_recompute_costs_a_third_more():
    """Seed 001: recomputation 'one extra forward pass, roughly +33% compute'. Exactly: the blocks' forward again
    (not the embedding or LM head), so a little under 4/3 for the 6.7B GPT shape."""
    cfg = config_from_inputs(conventions="paper", model="gpt-3-6.7b", recompute="full")
    rec = estimate(cfg)
    assert rec["hardware_flops_per_token"] / rec["flops_per_token"] == pytest.approx(4 / 3, rel=0.01)
    outside = 6 * (50257 * 4096 + 2048 * 4096)  # tied embedding + learned positions
    assert rec["hardware_flops_per_token"] == pytest.approx(
        rec["flops_per_token"] + (rec["flops_per_token"] - outside) / 3, rel=1e-12)


# ----- roofline: seed 000 -------------------------------------------------------------------------------------------------
def test_h100_ridge_295():
    """Seed 000: 'The H100 can do 295 FLOPs per byte' (989.5 TFLOP/s / 3.35 TB/s)."""
    assert get_accelerator("h100-sxm").ridge_intensity == pytest.approx(295, rel=SIG3)


def test_matmul_1024_intensity_341():
    fl, by = R.matmul_cost(1024, 1024, 1024, 2)
    assert fl / by == pytest.approx(341, rel=SIG3)
    h = get_accelerator("h100-sxm")
    r = R.roofline(fl, by, h.peak_bf16_flops_per_s, h.memory_bandwidth_bytes_per_s)
    assert r["bound"] == "compute"


def test_matvec_1024_intensity_1_and_times():
    """Seed 000: matrix-vector intensity about 1; 'Reading the matrix takes 0.63 microseconds; the arithmetic would
    take 2 nanoseconds. Memory-bound by a factor of 300.'"""
    fl, by = R.matvec_cost(1024, 1024, 2)
    assert fl / by == pytest.approx(1, rel=0.01)
    h = get_accelerator("h100-sxm")
    r = R.roofline(fl, by, h.peak_bf16_flops_per_s, h.memory_bandwidth_bytes_per_s)
    assert 2 * 1024 * 1024 / h.memory_bandwidth_bytes_per_s * 1e6 == pytest.approx(0.63, rel=0.01)
    assert float(r["compute_time_s"]) * 1e9 == pytest.approx(2, rel=0.1)
    assert float(r["memory_time_s"] / r["compute_time_s"]) == pytest.approx(300, rel=0.02)
    assert r["bound"] == "memory"


def test_relu_intensity_quarter():
    fl, by = R.elementwise_cost(1024, 1024, 2)
    assert fl / by == 0.25


# ----- ZeRO paper Fig. 1 (Rajbhandari et al. 2020): Ψ = 7.5B, Nd = 64, K = 12, GB = 1e9 -----------------------------
@pytest.mark.parametrize("stage, expected_gb", [(0, 120), (1, 31.4), (2, 16.6), (3, 1.9)])
def test_zero_fig1(stage, expected_gb):
    st = M.state_bytes(7.5e9, "bf16", "bf16", True, False, "adamw", stage, 64, 1, 1)
    assert sum(float(v) for v in st.values()) / GB == pytest.approx(expected_gb, rel=0.015)


def test_zero_fig1_exact():
    """The exact values behind Fig. 1's rounded labels: (2+2+12)Ψ, 4Ψ + 12Ψ/64, 2Ψ + 14Ψ/64, 16Ψ/64."""
    psi = 7.5e9
    exact = [16 * psi, 4 * psi + 12 * psi / 64, 2 * psi + 14 * psi / 64, 16 * psi / 64]
    for z, e in enumerate(exact):
        st = M.state_bytes(psi, "bf16", "bf16", True, False, "adamw", z, 64, 1, 1)
        assert sum(float(v) for v in st.values()) == pytest.approx(e, rel=1e-12)


# ----- Korthikanti et al. 2022 Table 2: all six rows -------------------------------------------------------------------
TABLE2 = [  # (name, tp, sequence_parallel, recompute, closed form as a function of s, b, h, a, t)
    ("no parallelism", 1, False, "none", lambda s, b, h, a, t: s * b * h * (34 + 5 * a * s / h)),
    ("tensor parallel", 8, False, "none", lambda s, b, h, a, t: s * b * h * (10 + 24 / t + 5 * a * s / (h * t))),
    ("tensor + sequence parallel", 8, True, "none", lambda s, b, h, a, t: s * b * h / t * (34 + 5 * a * s / h)),
    ("tensor parallel + selective", 8, False, "selective", lambda s, b, h, a, t: s * b * h * (10 + 24 / t)),
    ("tensor + sequence parallel + selective", 8, True, "selective", lambda s, b, h, a, t: s * b * h * 34 / t),
    ("full recompute", 1, False, "full", lambda s, b, h, a, t: 2 * s * b * h),
]


@pytest.mark.parametrize("name, t, sp, rec, form", TABLE2, ids=[r[0] for r in TABLE2])
@pytest.mark.parametrize("s, b, h, a", [(2048, 1, 12288, 96), (4096, 2, 4096, 32), (1024, 4, 2048, 16)])
def test_korthikanti_table2(name, t, sp, rec, form, s, b, h, a):
    cfg = config_from_inputs(conventions="paper", model="gpt-3-175b", n_layers=8, d_model=h, n_heads=a, n_kv_heads=a, d_ff=4 * h,
                             seq_len=s, micro_batch=b, tp=t, n_gpus=t, sequence_parallel=sp, recompute=rec)
    rec_ = estimate(cfg)
    assert rec_["activations_per_layer_bytes"] == pytest.approx(form(s, b, h, a, t), rel=1e-12)
    assert float(M.korthikanti_per_layer_bytes(s, b, h, a, t, sp, rec)) == pytest.approx(form(s, b, h, a, t), rel=1e-12)


def test_pipeline_first_stage_holds_L_layers():
    """Korthikanti Eq. 5: in 1F1B the first stage stores L layers' worth whatever p; interleaved × (1+(p−1)/(pm))."""
    base = config_from_inputs(conventions="paper", model="gpt-3-175b", seq_len=2048, tp=8, pp=1, n_gpus=64, sequence_parallel=True,
                              recompute="selective")
    per_layer = estimate(base)["activations_per_layer_bytes"]
    piped = estimate(base.replace(pp=8))
    assert piped["activations_bytes"] == pytest.approx(96 * per_layer, rel=1e-12)
    inter = estimate(base.replace(pp=8, virtual_stages=2))
    assert inter["activations_bytes"] == pytest.approx(96 * per_layer * (1 + 7 / 16), rel=1e-12)


def test_korthikanti_175b_selective_sp_per_gpu():
    """Korthikanti §6 setting for GPT-3 175B (s=2048, h=12288, a=96, t=8, b=1): with sequence parallelism and
    selective recomputation a layer needs 34·sbh/t bytes = 107 MB; 96 layers on the first stage ≈ 10.3 GB."""
    cfg = config_from_inputs(conventions="paper", model="gpt-3-175b", seq_len=2048, tp=8, pp=8, n_gpus=64, sequence_parallel=True,
                             recompute="selective")
    rec = estimate(cfg)
    assert rec["activations_per_layer_bytes"] == 34 * 2048 * 12288 / 8
    assert rec["activations_bytes"] / GB == pytest.approx(10.27, rel=SIG3)
