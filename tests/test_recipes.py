"""Issue 19: the recipes and models frontier runs use — new model families with their published parameter counts,
attention sinks and windows, the newest accelerators, MoE as Megatron-Core runs it, low-precision training.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from core import profiles as PF
from core.estimate import config_from_inputs, estimate, evaluate
from core.hardware import catalog
from core.model import from_hf_config, get_preset, preset_info

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "hf"

# (preset, published total, published active, tolerance, what the published figure counts, source)
PUBLISHED = [
    ("gpt-oss-120b", 116.83e9, 5.13e9, 5e-4, "unembedding counted as active, the embedding not",
     "OpenAI 2025, gpt-oss model card (arXiv:2508.10925) Table 1"),
    ("gpt-oss-20b", 20.91e9, 3.61e9, 5e-4, "unembedding counted as active, the embedding not",
     "arXiv:2508.10925 Table 1"),
    ("llama-4-scout", 109e9, 17e9, 5e-3, "total with the vision encoder (1.9B); active with embedding and head",
     "meta-llama/llama-models models/llama4/MODEL_CARD.md"),
    ("llama-4-maverick", 400e9, 17e9, 5e-3, "text model; active with embedding and head",
     "meta-llama/llama-models models/llama4/MODEL_CARD.md"),
]
# Llama 4 Scout's published 109B counts the vision encoder and projector: a third-party dump of
# Llama4ForConditionalGeneration prints 109,676,279,296 trainable parameters, of which the text model is 107.77B
SCOUT_VISION = 1.9e9


@pytest.mark.parametrize("name,total,active,tol,what,src", PUBLISHED, ids=[p[0] for p in PUBLISHED])
def test_new_presets_reproduce_their_published_counts(name, total, active, tol, what, src):
    p = get_preset(name).params()
    assert float(preset_info(name)["published_params"]) == total
    if name.startswith("gpt-oss"):
        # the card's "active" leaves the embedding out (its caption says so); ours counts what a token touches
        assert p["total"] == pytest.approx(total, rel=tol), src
        assert p["active"] - p["embedding"] == pytest.approx(active, rel=1e-3), src  # 3 significant figures
    elif name == "llama-4-scout":  # the card's "109B" counts the vision encoder (~1.9B) and truncates 109.7B
        assert p["total"] + SCOUT_VISION == pytest.approx(total, rel=0.01), src
        assert p["total"] == pytest.approx(107.77e9, rel=1e-4)  # the text model from its config fields
        assert p["active"] == pytest.approx(active, rel=0.02), src  # "17B": 2 significant figures
    else:
        assert p["total"] == pytest.approx(total, rel=tol), src
        assert p["active"] == pytest.approx(active, rel=0.02), src


def test_gpt_oss_parts_match_the_cards_table():
    """arXiv:2508.10925 Table 1, 120b: MLP 114.71B (router, biases and the MoE norm included), attention 0.96B (biases,
    sinks and the attention norm included), embed + unembed 1.16B."""
    p = get_preset("gpt-oss-120b").params()
    L, h = 36, 2880
    mlp = p["experts"] + p["router"] + L * h  # the pre-MLP RMSNorm
    attn = p["attention"] + L * h
    assert mlp == pytest.approx(114.71e9, rel=5e-4)
    assert attn == pytest.approx(0.96e9, rel=5e-3)
    assert p["embedding"] + p["lm_head"] == pytest.approx(1.16e9, rel=5e-3)
    no_sinks = dataclasses.replace(get_preset("gpt-oss-120b"), attention_sinks=False).params()
    assert p["attention"] - no_sinks["attention"] == L * 64  # one logit per head and layer


@pytest.mark.parametrize("fixture,preset", [("gpt-oss-120b.json", "gpt-oss-120b"),
                                            ("llama-4-scout-text.json", "llama-4-scout")])
def test_hf_import_of_the_new_families_equals_the_preset(fixture, preset):
    """Fixtures: openai/gpt-oss-120b config.json (as quoted with its URL in a third-party test); Llama-4-Scout's
    text_config (a verbatim dump quoted in a vLLM issue), model_type llama4_text."""
    m = from_hf_config(str(FIXTURES / fixture))
    want = get_preset(preset).params()
    assert m.params()["total"] == want["total"] and m.params()["active"] == want["active"]
    assert m.attention_sinks == get_preset(preset).attention_sinks
    assert (m.sliding_window, m.global_every, m.chunked_attention) == (
        get_preset(preset).sliding_window, get_preset(preset).global_every, get_preset(preset).chunked_attention)


def test_chunked_attention_counts_block_diagonal_chunks_not_a_band():
    """Llama 4's local layers attend within their 8,192-token chunk (meta-llama/llama-models
    `create_chunked_attention_mask`): ⌊s/c⌋ causal chunks of c²/2 scores and a last one of r²/2 — about half a
    sliding window of the same length (c·s − c²/2 scores); at s ≤ c both are plain causal attention."""
    from core.flops import local_keys
    s, c = 32768, 8192
    assert float(local_keys(s, c, True)) * s / 2 == 4 * c * c / 2
    assert float(local_keys(s, c, False)) * s / 2 == c * s - c * c / 2
    assert float(local_keys(20000, c, True)) * 20000 / 2 == 2 * c * c / 2 + (20000 - 2 * c) ** 2 / 2
    assert float(local_keys(4096, c, True)) == float(local_keys(4096, c, False)) == 4096
    base = dict(model="llama-4-scout", n_gpus=64, ep=8, seq_len=s)
    chunked = estimate(config_from_inputs(**base))
    band = estimate(config_from_inputs(**base, chunked_attention=False))
    assert chunked["attention_flops_per_token"] < band["attention_flops_per_token"]
    assert chunked["predicted_step_time_s"] < band["predicted_step_time_s"]


def test_packed_documents_attend_as_block_diagonal_chunks():
    """Packed rows with document masking (document_tokens d, the token-weighted mean length): flash kernels run each
    document as its own sequence (flash-attn varlen cu_seqlens, TE THD, FlexAttention's document mask), so every layer
    counts block-diagonal causal chunks of d (core/flops.document_window): Llama 3.1 8B at 32K in documents of 4K does
    the attention of 8 sequences of 4K, FLOPs and time alike; d ≥ s or d = 0 changes nothing. With a window (Gemma 2's
    4K band, every other layer global): documents below the window make every layer chunks of d, FLOPs and time as an
    explicit chunked window; longer ones leave the band inside each document and chunk the global layers, with no jump
    at d = w; without flash, or with the Triton kernel (no varlen path), the input is refused."""
    from core.flops import local_keys
    base = dict(model="llama-3.1-8b", n_gpus=8, seq_len=32768, global_batch=8)
    one, docs = (estimate(config_from_inputs(**base, document_tokens=d)) for d in (0, 4096))
    assert float(docs["attention_flops_per_token"]) == pytest.approx(
        float(one["attention_flops_per_token"]) * 4096 / 32768)
    assert float(local_keys(32768, 4096, True)) == 4096.0  # 8 whole chunks: s_eff = c
    eight = estimate(config_from_inputs(**{**base, "seq_len": 4096, "global_batch": 64}))
    assert float(docs["compute_s"]) < 0.9 * float(one["compute_s"])
    assert float(docs["attention_flops_per_token"]) == pytest.approx(float(eight["attention_flops_per_token"]))
    whole = estimate(config_from_inputs(**base, document_tokens=32768))
    assert float(whole["predicted_step_time_s"]) == float(one["predicted_step_time_s"])
    g2 = dict(model="gemma-2-9b", n_gpus=8, seq_len=8192, global_batch=8)
    pat = estimate(config_from_inputs(**g2, document_tokens=1024))
    ref = estimate(config_from_inputs(**g2, sliding_window=1024, global_every=0, chunked_attention=True))
    for k in ("attention_flops_per_token", "predicted_step_time_s"):
        assert float(pat[k]) == pytest.approx(float(ref[k]))
    at = [float(estimate(config_from_inputs(**g2, document_tokens=d))["attention_flops_per_token"])
          for d in (4095, 4096, 4097, 6144)]
    assert at[0] == pytest.approx(at[1], rel=1e-3) == pytest.approx(at[2], rel=1e-3)  # continuous at d = w
    unpacked = float(estimate(config_from_inputs(**g2))["attention_flops_per_token"])
    assert at[1] < at[3] < unpacked  # the global layers shrink with the documents
    with pytest.raises(ValueError, match="document_tokens"):
        config_from_inputs(**base, document_tokens=4096, flash_attention=False)
    with pytest.raises(ValueError, match="document_tokens"):
        config_from_inputs(**base, document_tokens=4096, framework="fsdp", attention_kernel="triton")
    with pytest.raises(ValueError, match="document_tokens"):
        config_from_inputs(**base, document_tokens=40000)


TORCHAO_GROUPED_MM_B200 = [  # torchao MoE-training README (pytorch/ao@36027d82), bf16 torch._grouped_mm fwd + bwd, µs
    ((128000, 8192, 5120, 1), 43140.2), ((128000, 8192, 5120, 2), 39487.6), ((128000, 8192, 5120, 4), 39189.2),
    ((128000, 8192, 5120, 8), 37700.7), ((128000, 2048, 7168, 1), 13064.8), ((128000, 2048, 7168, 2), 14900.2),
    ((128000, 2048, 7168, 4), 15823.6), ((128000, 2048, 7168, 8), 14966.8)]


def test_grouped_gemm_rate_reproduces_torchaos_b200_table():
    """B200's grouped_gemm_efficiency (data/accelerators.csv, 0.349: the median shape's 786 TFLOP/s) through the
    planner's GEMM model (tiles, waves, bytes) gives each of the README's 8 shapes — forward, input and weight
    gradients of G experts over M tokens — within 25 % (the DeepSeek-V3 shape at G = 1 is the outlier, 1.22×) and their
    median within 5 %; it is half the dense rate (0.776)."""
    import numpy as np

    from core.hardware import catalog
    from core.steptime import gemm_time_s
    g = catalog()["b200"]
    assert g.grouped_gemm_efficiency == pytest.approx(0.349) and g.grouped_gemm_efficiency < 0.5 * g.matmul_efficiency
    ratios = []
    for (M, N, K, G), us in TORCHAO_GROUPED_MM_B200:
        def t(m, n, k):
            return float(gemm_time_s(m, n, k, 2250e12, g.grouped_gemm_efficiency, g.sm_count,
                                     g.memory_bandwidth_bytes_per_s, batch=G))
        ratios.append((t(M / G, N, K) + t(M / G, K, N) + t(N, K, M / G)) * 1e6 / us)
    assert all(0.75 < r < 1.25 for r in ratios), ratios
    assert float(np.median(ratios)) == pytest.approx(1.0, abs=0.05)


def test_torchtitan_experts_run_at_the_grouped_rate_on_b200_only():
    """fsdp's experts (torch._grouped_mm, data/frameworks.csv moe_gemm) on B200 take longer than Megatron's at the same
    layout and attention kernel; on H100 (no measured grouped rate) and under MXFP8 (the recipe's rate) they do not."""
    base = dict(model="qwen3-30b-a3b", n_gpus=8, seq_len=8192, global_batch=64, micro_batch=8, zero_stage=3,
                recompute="full", attention_kernel="fa2")

    def compute(**kw):
        return float(estimate(config_from_inputs(**base, **kw))["compute_s"])
    assert compute(gpu="b200", framework="fsdp") > 1.2 * compute(gpu="b200", framework="megatron")
    assert compute(gpu="h100-sxm", framework="fsdp") == pytest.approx(compute(gpu="h100-sxm", framework="megatron"))
    assert compute(gpu="b200", framework="fsdp", fp8_recipe="mxfp8") == pytest.approx(
        compute(gpu="b200", framework="megatron", fp8_recipe="mxfp8"))


def test_hf_gpt_oss_refuses_what_it_cannot_count():
    cfg = json.loads((FIXTURES / "gpt-oss-120b.json").read_text())
    with pytest.raises(ValueError, match="attention_bias"):
        from_hf_config({**cfg, "attention_bias": False})
    with pytest.raises(ValueError, match="layer_types"):
        from_hf_config({**cfg, "layer_types": ["full_attention", "sliding_attention"] * 18})


def test_llama4_interleaved_moe_counts_as_dense_then_moe():
    cfg = json.loads((FIXTURES / "llama-4-scout-text.json").read_text())
    mav = from_hf_config({**cfg, "num_local_experts": 128, "interleave_moe_layer_step": 2})
    assert mav.n_dense_layers == 24 and mav.params()["total"] == get_preset("llama-4-maverick").params()["total"]
    with pytest.raises(ValueError, match="moe_layers"):
        from_hf_config({**cfg, "interleave_moe_layer_step": 2, "moe_layers": [0, 2]})


def test_sinks_make_windowed_layers_cost_full_attention():
    """With sinks the kernels compute every block of a windowed layer (the issue's measurement: GPT-OSS-like runs were
    predicted 1.5–1.6× too fast); the model FLOPs still count the window, so MFU drops."""
    base = dict(model="gpt-oss-120b", n_gpus=64, ep=8, seq_len=8192, mfu="auto")
    with_sinks = estimate(config_from_inputs(**base))
    without = estimate(config_from_inputs(**base, attention_sinks=False))
    assert with_sinks["compute_s"] > without["compute_s"]
    assert with_sinks["flops_per_token"] == pytest.approx(without["flops_per_token"], rel=1e-6)
    assert with_sinks["predicted_mfu"] < without["predicted_mfu"]


def test_splash_on_tpu_skips_windowed_blocks_under_sinks():
    """MaxText's splash kernel on TPU takes the sinks as an argument and the window as a block-sparse LocalMask
    (attention_op.py @e591f30c): the windowed layers cost what they would without sinks. On GPU MaxText refuses
    flash attention with sinks, so there every block is computed (data/frameworks.csv sink_window_skip)."""
    tpu = dict(model="gpt-oss-120b", gpu="tpu7x", framework="maxtext", n_gpus=64, zero_stage=3, seq_len=8192,
               mfu="auto")
    with_sinks = estimate(config_from_inputs(**tpu))["compute_s"]
    assert with_sinks == pytest.approx(estimate(config_from_inputs(**tpu, attention_sinks=False))["compute_s"],
                                       rel=1e-9)
    unwindowed = estimate(config_from_inputs(**tpu, sliding_window=0, global_every=0))["compute_s"]
    assert with_sinks < 0.97 * unwindowed
    gpu = {**tpu, "gpu": "h100-sxm"}
    assert estimate(config_from_inputs(**gpu))["compute_s"] > estimate(
        config_from_inputs(**gpu, attention_sinks=False))["compute_s"]


def _core_s(**kw):
    """The attention core's predicted time: compute_s less compute_s with an attention kernel at no cost."""
    c = config_from_inputs(mfu="auto", **kw).columns()
    fast = dict(c, attention_efficiency=1e12, fa2_attention_efficiency=1e12)
    return float(evaluate(**c)["compute_s"]) - float(evaluate(**fast)["compute_s"])


def test_a_window_runs_at_short_attentions_rate():
    """A windowed layer's flash kernel iterates its window's keys, so it runs at the efficiency of attention that
    short (steptime.attention_length_factor at the window's average keys): a 512-token window over 8K saves less
    time than FLOPs, and a window as long as the sequence saves nothing."""
    from core.flops import local_keys
    base = dict(model="llama-3.1-8b", n_gpus=8, seq_len=8192)
    full = _core_s(**base)
    win = _core_s(**base, sliding_window=512, global_every=0)
    flop_share = float(local_keys(8192, 512, False)) / 8192
    assert flop_share * full < win < full
    assert _core_s(**base, sliding_window=8192, global_every=0) == pytest.approx(full, rel=1e-9)


def test_a_window_is_computed_in_whole_tiles():
    """A sliding window's layer reads every key block its band touches (steptime.window_tile_keys): 128-key tiles on
    a GPU (FlashAttention-3's local tiles), MaxText's splash blocks of 512 on a TPU (base.yml sa_block_* @e591f30c).
    Hand counts: 4,096 tokens, window 128, blocks of 128: 32 query blocks reading 1, 2, 2, … key blocks = 63 tiles,
    63·128²/4096 = 252 keys per query; 8,192 tokens in blocks of 512: 1 + 15·2 = 31 tiles, 31·512²/8192 = 992.
    The tiles always cover the band's keys (flops.local_keys / 2 per query), and a wider tile computes more."""
    from core.flops import local_keys
    from core.steptime import window_tile_keys
    assert float(window_tile_keys(4096, 128, 128)) == pytest.approx(252.0, rel=1e-12)
    assert float(window_tile_keys(8192, 128, 512)) == pytest.approx(992.0, rel=1e-12)
    for s in (1024, 4096, 8192, 32768):
        for w in (64, 128, 1000, 1024, 4096):
            for b in (64, 128, 512):
                if w < s:
                    assert window_tile_keys(s, w, b) >= local_keys(s, w, False) / 2.0 - 1e-9
    assert window_tile_keys(8192, 128, 512) > window_tile_keys(8192, 128, 128)


def test_a_tpu_window_is_computed_in_splash_blocks():
    """On a TPU MaxText's windowed layers cost whole splash blocks of 512 (data/frameworks.csv window_block_tpu), on a
    GPU FlashAttention's tiles of 128: with every layer windowed (128 tokens over 8K), the attention core's time
    against the same model without the window is the band's tiles (at their start-up rate) over the causal
    triangle's in the same tiles, exactly."""
    from core.steptime import startup_factor, window_tile_keys

    def tiles(w, block):
        keys = float(window_tile_keys(8192, w, block))
        return 2.0 * keys / 8192 / float(startup_factor(keys))
    for gpu, block in (("tpu-v5p", 512), ("h100-sxm", 128)):
        base = dict(model="llama-3.1-8b", gpu=gpu, framework="maxtext", n_gpus=8, seq_len=8192)
        full = _core_s(**base)
        win = _core_s(**base, sliding_window=128, global_every=0)
        assert win / full == pytest.approx(tiles(128, block) / tiles(8192, block), rel=1e-6), gpu


def test_a_window_as_wide_as_the_sequence_costs_a_global_layer():
    """Continuity (a reviewer's finding): a window of s − 1 keys masks one key per query, so its layer costs what a
    global causal layer costs, within the one tile row it may skip (1/64 of 8K's tiles); before, the band's tile
    count without the causal deficit the tiles do not explain put it 4.5 % below. Wider windows never cost less."""
    for gpu in ("h100-sxm", "tpu-v5p"):
        base = dict(model="llama-3.1-8b", gpu=gpu, framework="maxtext", n_gpus=8, seq_len=8192)
        full = _core_s(**base)
        assert _core_s(**base, sliding_window=8191, global_every=0) == pytest.approx(full, rel=1 / 64), gpu
        costs = [_core_s(**base, sliding_window=w, global_every=0) for w in (128, 512, 2048, 4096, 8191)]
        assert costs == sorted(costs) and costs[-1] <= full * (1 + 1e-9), gpu


def test_fp8_attention_runs_the_core_at_the_flashattention3_fp8_rate():
    """FlashAttention-3 (arXiv:2407.08608, H100): bf16 up to 740 TFLOP/s, fp8 close to 1.2 PFLOP/s. With
    --fp8-dot-product-attention the attention core runs 1.2e15/740e12 = 1.62× faster; the GEMMs and the model FLOPs
    do not change, and without a low-precision recipe it is refused by name."""
    base = dict(model="llama-3.1-8b", gpu="h100-sxm", n_gpus=8, seq_len=8192, fp8_recipe="current")
    bf16, fp8 = _core_s(**base), _core_s(**base, fp8_attention=True)
    assert bf16 / fp8 == pytest.approx(1.2e15 / 740e12, rel=0.01)
    a = estimate(config_from_inputs(**base, mfu="auto"))
    b = estimate(config_from_inputs(**base, fp8_attention=True, mfu="auto"))
    assert b["predicted_step_time_s"] < a["predicted_step_time_s"]
    assert b["flops_per_token"] == a["flops_per_token"]
    with pytest.raises(ValueError, match="fp8_attention: needs a low-precision recipe"):
        config_from_inputs(model="llama-3.1-8b", fp8_attention=True)
    # FlashAttention-2 (fsdp's and deepspeed's own kernel) has no fp8 path
    with pytest.raises(ValueError, match="fp8_attention: .*FlashAttention-2"):
        config_from_inputs(**base, framework="fsdp", zero_stage=3, fp8_attention=True)


@pytest.mark.parametrize("name,bf16,memory_gb,source_word", [
    ("b300", 2250e12, 288, "ml-engineering"), ("gb300", 2500e12, 288, "Blackwell Ultra"),
    ("mi325x", 1307e12, 256, "MI325X"), ("mi355x", 2500e12, 288, "ml-engineering"),
    ("tpu-v5p", 459e12, 95, "TPU"), ("tpu-v6e", 918e12, 32, "v6e"),
    ("a800-80gb", 312e12, 80, "A800"), ("h20", 148e12, 96, "H20"), ("v100-16gb", 125e12, 16, "V100"),
    ("rtx-a6000", 154.8e12, 48, "RTX A6000"),
])
def test_new_accelerators_in_the_catalog_with_sources(name, bf16, memory_gb, source_word):
    g = catalog()[name]
    assert g.peak_flops_per_s("bf16") == bf16
    assert g.memory_bytes == memory_gb * 1e9
    assert source_word in g.source + " " + g.label
    assert g.host_link_bytes_per_s > 0 and g.matmul_efficiency > 0


def test_the_a800_is_an_a100_with_two_thirds_of_its_nvlink():
    """The A800 is the A100 SXM4 80GB's GA100 with NVLink cut from 600 to 400 GB/s both directions (NVIDIA's export
    variant, 2022): the same compute, memory and allocatable bytes, 200 of 300 GB/s per direction inside a node."""
    a800, a100 = catalog()["a800-80gb"], catalog()["a100-80gb"]
    assert a800.peak_flops_per_s("bf16") == a100.peak_flops_per_s("bf16")
    assert a800.allocatable_bytes == a100.allocatable_bytes and a800.matmul_efficiency == a100.matmul_efficiency
    assert a800.intra_node_bytes_per_s / a100.intra_node_bytes_per_s == pytest.approx(2 / 3)


# --- MoE as Megatron-Core runs it ---------------------------------------------------------------------------------
DSV3 = dict(model="deepseek-v3", n_gpus=1024, tp=2, pp=16, ep=64, etp=1, sequence_parallel=True, global_batch=8192,
            seq_len=4096, zero_stage=1, recompute="full", mfu="auto")


def test_deepseek_v3_folded_ep_is_accepted_and_predicted():
    """The issue's run: DeepSeek-V3 on 1,024 H100 with TP 2, EP 64, expert-TP 1 (MoE parallel folding: the expert
    groups span tp·cp·dp = 64 ranks of a stage, while dp alone is 32)."""
    cfg = config_from_inputs(**DSV3)
    r = estimate(cfg)
    assert r["valid"] and r["dp"] == 32
    assert r["ep_comm_s"] > 0 and 0.05 < r["predicted_mfu"] < 0.6
    with pytest.raises(ValueError, match="ep"):
        config_from_inputs(**{**DSV3, "ep": 128})  # 128 · 1 does not divide the 64 ranks of a stage


def test_the_all_to_all_carries_the_tp_ranks_sequence_shard():
    """Megatron-Core's dispatcher runs on the TP rank's sequence shard: at tp 4 each rank sends a quarter of the
    tokens the tp 1 layout sends (same ep, same link), so the dispatch per micro-batch shrinks with tp (the step at
    tp 4 has 4× the micro-batches per replica: dp falls from 64 to 16)."""
    base = dict(model="mixtral-8x7b", n_gpus=64, ep=8, sequence_parallel=True, seq_len=4096, mfu="auto")
    t1 = estimate(config_from_inputs(**base, tp=1, etp=1))
    t4 = estimate(config_from_inputs(**base, tp=4, etp=1))
    per_mb = [r["ep_comm_s"] / r["micro_batches"] for r in (t1, t4)]
    assert per_mb[1] < per_mb[0] / 2


def test_megatron_keeps_no_expert_outputs_for_the_routing_weights():
    """Megatron-Core multiplies the routing weights inside the experts' activation (experts.py weighted_bias_swiglu_impl
    since ADLR/megatron-lm!2668, core_v0.13.0; data/frameworks.csv moe_probs), so no routed copy's output is kept:
    Mixtral 8x7B at 4K on 8 GPUs keeps k·T·h 16-bit elements fewer per MoE layer than under a framework that weighs
    the outputs (Hugging Face transformers' blocks under DeepSpeed)."""
    from core import memory as M
    base = dict(model="mixtral-8x7b", n_gpus=8, seq_len=4096, global_batch=8)
    mg = M.ledger(config_from_inputs(**base).columns())
    ds = M.ledger(config_from_inputs(**base, framework="deepspeed", zero_stage=1).columns())
    T, k, h = 4096, 2, 4096
    assert float(mg["expert_outputs"]) == 0.0
    assert float(ds["expert_outputs"]) == pytest.approx(2.0 * k * T * h, rel=1e-12)
    assert PF.word("megatron", "moe_probs") == "activation" and PF.word("fsdp", "moe_probs") == "output"


def test_the_mtp_modules_experts_split_over_expert_parallelism():
    """DeepSeek-V3's MTP module is one more MoE block (arXiv:2412.19437 §2.2): its 256 routed experts (3·7168·2048
    parameters each) split over the expert-parallel ranks as every MoE layer's do, so the last stage's expert
    parameters are its own layer's (one of the busiest rank's four, with Megatron-Bridge's 16-stage layout) and the
    module's."""
    from core import model as MD
    from core.estimate import stage_split
    c = config_from_inputs(model="deepseek-v3", gpu="b300", n_gpus=256, pp=16, ep=8, global_batch=4096,
                           pp_layout="Etttt|(tttt|)*14tmL").columns()
    mtp = MD.mtp_breakdown(**MD.arch_columns(c))
    assert float(mtp["mtp_experts"]) == pytest.approx(256 * 3 * 7168 * 2048, rel=1e-12)
    split = stage_split(c, 16)
    assert float(split["last_stage_expert_params"]) == pytest.approx(
        float(split["stage_expert_params"]) / 4 + float(mtp["mtp_experts"]), rel=1e-9)
    # without a pipeline the one stage holds every layer's experts and the module's (a reviewer's finding: counted
    # whole, unsplit by ep, at pp 1)
    one = stage_split(config_from_inputs(model="deepseek-v3", gpu="b300", n_gpus=256, ep=8).columns(), 1)
    assert float(one["stage_expert_params"]) == pytest.approx(float(one["last_stage_expert_params"]), rel=1e-12)
    assert float(one["stage_expert_params"]) == pytest.approx(float(split["stage_expert_params"]) * 61 / 4
                                                              + float(mtp["mtp_experts"]), rel=1e-9)


def test_the_flex_dispatchers_permute_once():
    """DeepEP and HybridEP hand the experts their tokens sorted by local expert (one permute after or inside the
    dispatch, one unpermute before the combine: 8 bytes per element of each routed copy) where the alltoall
    dispatcher also sorts the received chunks both ways (16): data/kernels.csv permute_flex, permute. The same
    layout's memory-bound time is lower with either, by the same amount."""
    from core import profiles as P
    assert float(P.element_bytes("fused", "permute_flex")) == 8.0 and float(P.element_bytes("fused", "permute")) == 16.0
    base = dict(model="deepseek-v3", gpu="b200", n_gpus=256, pp=16, ep=8, global_batch=4096, seq_len=4096,
                pp_layout="Etttt|(tttt|)*14tmL")
    a2a, deep, hyb = (estimate(config_from_inputs(**base, moe_dispatcher=d, mfu="auto"))
                      for d in ("alltoall", "deepep", "hybridep"))
    assert deep["elementwise_s"] < a2a["elementwise_s"]
    assert deep["elementwise_s"] == pytest.approx(hyb["elementwise_s"], rel=1e-12)


def test_expert_tp_splits_the_experts_state():
    """etp (0 = tp): each expert's weights over etp ranks, its ZeRO over n/(pp·ep·etp) ranks."""
    base = dict(model="mixtral-8x7b", n_gpus=64, tp=4, ep=8, sequence_parallel=True, zero_stage=0, mfu="auto")
    same = estimate(config_from_inputs(**base, etp=4))
    default = estimate(config_from_inputs(**base))
    one = estimate(config_from_inputs(**base, etp=1))
    assert same["weights_bytes"] == pytest.approx(default["weights_bytes"], rel=1e-12)
    assert one["weights_bytes"] > 2 * same["weights_bytes"]  # experts whole on each rank: most of Mixtral


# --- low-precision training -----------------------------------------------------------------------------------------
# Published BF16 / FP8 pairs (same model, layout and table; the BF16 run is in data/published_runs.csv): the published
# speed-up (fp8 tokens/s ÷ bf16 tokens/s) and the recipe the source states. torchtitan's and torchao's "tensorwise" is
# current scaling; their "rowwise" is rowwise; Pax/TE is delayed scaling; torchao's MXFP8 on B200 is mxfp8.
FP8_PAIRS = [  # (bf16 run, recipe, published speed-up, source of the fp8 figure)
    ("tt-h100-405b-aug24-bf16", "current", 177 / 109, "torchtitan docs/performance.md @3faaa1a, 405B on 128 H100"),
    ("tt-h100-dec24-8b-8g-compile", "current", 8532 / 6667, "torchtitan benchmarks/llama3_h100_202412, 8 H100"),
    ("tt-h100-dec24-8b-128g-compile", "current", 8380 / 6514, "torchtitan benchmarks/llama3_h100_202412, 128 H100"),
    ("tt-h100-jun25-70b-bf16-vanilla", "current", 809.8 / 597.3, "torchtitan asyncTP_llama3_h100_2025-06, tensorwise"),
    ("tt-h100-jun25-70b-bf16-vanilla", "rowwise", 599.6 / 597.3, "torchtitan asyncTP_llama3_h100_2025-06, rowwise"),
    ("tt-h100-jun25-70b-bf16-asynctp", "current", 942.4 / 652.4, "torchtitan asyncTP_llama3_h100_2025-06"),
    ("tt-h100-jun25-70b-bf16-asynctp", "rowwise", 624.8 / 652.4, "torchtitan asyncTP_llama3_h100_2025-06"),
    ("tt-h100-jun25-8b-bf16-vanilla", "current", 5078.1 / 4378, "torchtitan asyncTP_llama3_h100_2025-06"),
    ("tt-h100-jun25-8b-bf16-vanilla", "rowwise", 3708.5 / 4378, "torchtitan asyncTP_llama3_h100_2025-06"),
    ("tt-h100-jun25-8b-bf16-asynctp", "current", 5570.1 / 4809.4, "torchtitan asyncTP_llama3_h100_2025-06"),
    ("tt-h100-jun25-8b-bf16-asynctp", "rowwise", 3914.9 / 4809.4, "torchtitan asyncTP_llama3_h100_2025-06"),
    ("ao-h100-sxm-8b-bf16", "current", 7689.5 / 6150, "pytorch/ao torchao/float8 README, Llama 3 8B on 8 H100"),
    ("ao-h100-sxm-8b-bf16", "rowwise", 6768 / 6150, "pytorch/ao torchao/float8 README"),
    ("ao-mi300x-8b-bf16", "current", 6166.0 / 5376.5, "pytorch/ao torchao/float8 README, MI300X"),
    ("ao-mi300x-8b-bf16", "rowwise", 5891.0 / 5376.5, "pytorch/ao torchao/float8 README, MI300X"),
    ("ao-b200-8b-bf16", "current", 10417.0 / 8307.5, "pytorch/ao torchao/float8 README, B100 (power-limited B200)"),
    ("ao-b200-8b-bf16", "mxfp8", 9969.0 / 8307.5, "pytorch/ao torchao/float8 README, B100 MXFP8 (cuBLAS)"),
    ("ao-b200-8b-bf16", "rowwise", 8640.5 / 8307.5, "pytorch/ao torchao/float8 README, B100 (power-limited B200)"),
    ("pax-5b-h100-sxm-tebf16", "delayed", 4863304 / 3394028, "NVIDIA JAX-Toolbox Pax 5B, TE fp8"),
    ("pax-175b-h100-sxm-tebf16", "delayed", 172954 / 104448, "NVIDIA JAX-Toolbox Pax 175B, TE fp8"),
    # NVIDIA DGXC Benchmarking Paxml GPT3 5B (v24.11): the bf16 and fp8 step times of one layout at 16-128 H100
    ("dgxc-pax-gpt5b-bf16-16g", "delayed", 0.634 / 0.47, "DGXC Benchmarking Paxml GPT3 5B v24.11, 16 H100"),
    ("dgxc-pax-gpt5b-bf16-32g", "delayed", 0.639 / 0.48, "DGXC Benchmarking Paxml GPT3 5B v24.11, 32 H100"),
    ("dgxc-pax-gpt5b-bf16-64g", "delayed", 0.643 / 0.48, "DGXC Benchmarking Paxml GPT3 5B v24.11, 64 H100"),
    ("dgxc-pax-gpt5b-bf16-128g", "delayed", 0.651 / 0.50, "DGXC Benchmarking Paxml GPT3 5B v24.11, 128 H100"),
]
# predicted speed-up off by more than 10 %: torchtitan's rowwise runs are slower than BF16 (0.81–1.00) where torchao's
# own rowwise rows are faster (1.04–1.10) — one recipe, two sources that disagree; the August 2024 405B pair (1.62)
# changed more than the precision between its two rows; torchao's MI300X tensor-wise pair (1.15) is predicted too high
# (1.30 on 2026-12-02; today's figures of every pair: bench/RESULTS.md 'MoE and low precision') since the fsdp profile keeps the GPU family's sustained fraction (its bf16 step more compute-bound); since the 2026-12-05
# refit (the fsdp host time per unit 8.5 → 5.6 ms) torchao's MI300X and B100 rowwise pairs too (1.21 and 1.16 predicted
# against 1.10 and 1.04: the less host time, the more of the step fp8 speeds); and since the refit of 2026-12-05 that
# nanotron's named kernel moved (GPU sustained 0.76 → 0.77, the fsdp host time per unit 1.6 → 1.0 ms) torchao's B100
# tensor-wise and MXFP8 pairs (1.38 and 1.32 predicted against 1.25 and 1.20: 10.2 % high, 9.7 and 9.8 % before;
# 1.40 and 1.33, 11.3 and 11.1 % high, after the 2026-12-06 refits: the fsdp host time per unit 0.7 ms; 13 % high after
# the 27th batch's); and since the
# fifteenth batch's refit (absolute-log loss, fsdp host time per unit 0.0 ms) torchtitan's 8B async-TP tensor-wise pair
# (1.27 predicted against 1.16: 10.1 % high; the vanilla-TP pair beside it 1.21 against 1.16 stays within), back within
# after the sixteenth batch's refit (1.26: 8.4 % high; fsdp's host time per unit 0.7 ms, GPU sustained 0.76); out again
# at the 23rd batch's refit (unit host time 0: 10.1 % high), within again at the 24th's (1.0 ms), out again at the
# 27th's (11.1 % high: GPU sustained 0.73 -> 0.72, fsdp overlap cost 0.2 -> 0.1); within since async TP hides the
# forward's collectives alone (2026-12-07, data/frameworks.csv fsdp tp_overlap_scope: 1.22 against 1.16, 5.5 % high)
FP8_MISSES = {("tt-h100-405b-aug24-bf16", "current"), ("ao-mi300x-8b-bf16", "current"),
              ("ao-mi300x-8b-bf16", "rowwise"), ("ao-b200-8b-bf16", "rowwise"), ("ao-b200-8b-bf16", "current"),
              ("ao-b200-8b-bf16", "mxfp8"),
              ("tt-h100-jun25-70b-bf16-vanilla", "rowwise"), ("tt-h100-jun25-70b-bf16-asynctp", "rowwise"),
              ("tt-h100-jun25-8b-bf16-vanilla", "rowwise"), ("tt-h100-jun25-8b-bf16-asynctp", "rowwise")}


def _speedup(base_id, recipe):
    from core.validation import runs
    run = next(r for r in runs() if r.id == base_id)
    a = estimate(config_from_inputs(**{**run.inputs, "mfu": "auto"}))
    f = estimate(config_from_inputs(**{**run.inputs, "mfu": "auto", "fp8_recipe": recipe}))
    assert f["fits"]
    return a["predicted_step_time_s"] / f["predicted_step_time_s"]


@pytest.mark.parametrize("base,recipe,published,src", [
    pytest.param(*p, id=f"{p[0]}-{p[1]}", marks=[pytest.mark.xfail(strict=True, reason="known miss (see FP8_MISSES)")]
                 if (p[0], p[1]) in FP8_MISSES else []) for p in FP8_PAIRS])
def test_fp8_speed_up_of_each_published_pair_within_10_percent(base, recipe, published, src):
    assert _speedup(base, recipe) == pytest.approx(published, rel=0.10), src


# Pairs whose FP8 row is a published run of its own (data/published_runs_lowp.csv), with what else its source changed
# beside the precision (FP8 parameter gathers): the published speed-up is the two rows' tokens/s, the predicted one
# their predicted steps. Twenty-first batch (2026-12-06), predicted before joining: PyTorch's float8 + FSDP2 blog
# (IBM/Meta, 512 H100), Accelerate's FSDP2 float8 example, JAX-Toolbox's Pax README of 2023-10 (H100, TE).
FP8_RUN_PAIRS = [  # (bf16 run, fp8 run, source)
    ("ptblog-f8fsdp2-h100-512g-llama3-70b-bf16", "ptblog-f8fsdp2-h100-512g-llama3-70b-fp8",
     "PyTorch blog 'Supercharging Training using float8 and FSDP2' Table 3, 70B"),
    ("ptblog-f8fsdp2-h100-512g-llama3-405b-bf16", "ptblog-f8fsdp2-h100-512g-llama3-405b-fp8",
     "PyTorch blog 'Supercharging Training using float8 and FSDP2' Table 3, 405B"),
    ("accel-fsdp2-h100-llama31-8b-bf16", "accel-fsdp2-h100-llama31-8b-fp8-tensorwise",
     "huggingface/accelerate examples/fsdp2/README.md @d2e6b03, 8 H100"),
    ("jaxtb2310-pax-5b-h100-tebf16", "jaxtb2310-pax-5b-h100-tefp8", "JAX-Toolbox Pax README 23.10, 5B"),
    ("jaxtb2310-pax-175b-h100-tebf16", "jaxtb2310-pax-175b-h100-tefp8", "JAX-Toolbox Pax README 23.10, 175B"),
    # twenty-fifth batch (2026-12-06), predicted before joining with bc1822e: torchao's float8 pre-training tutorial
    # (torchtitan Llama 3 8B on 8 H100, rowwise and tensorwise), FP8-LM's Table 5 (Megatron + TE on H100, delayed)
    ("aotut-h100-llama3-8b-8g-bf16", "aotut-h100-llama3-8b-8g-fp8-rowwise", "torchao docs pretraining.rst, rowwise"),
    ("aotut-h100-llama3-8b-8g-bf16", "aotut-h100-llama3-8b-8g-fp8-tensorwise", "torchao docs pretraining.rst, tensorwise"),
    ("fp8lm-h100-gpt7b-32g-bf16", "fp8lm-h100-gpt7b-32g-fp8te", "FP8-LM (arXiv:2310.18313) Table 5, GPT-7B"),
    ("fp8lm-h100-gpt13b-32g-bf16", "fp8lm-h100-gpt13b-32g-fp8te", "FP8-LM Table 5, GPT-13B"),
    ("fp8lm-h100-gpt175b-128g-bf16", "fp8lm-h100-gpt175b-128g-fp8te", "FP8-LM Table 5, GPT-175B"),
    # thirty-first batch (2026-12-07), predicted before joining with 8424dc1: AMD Primus's Qwen3-30B-A3B campaign on 8
    # MI355X (EP 8, DeepEP), BF16 and Primus-Turbo's tensorwise FP8 (current scaling) at one layout: 1.078 published
    ("primusq3-mi355x-qwen3-30b-a3b-ep8-bf16", "primusq3-mi355x-qwen3-30b-a3b-ep8-fp8tw-base",
     "AMD-AGI/Primus agent workspace qwen3_fp8_tw_gfx950 PR body, BF16 vs FP8 tensorwise"),
    # thirty-second batch (2026-12-07), predicted before joining with 6a58b86: Megatron-Bridge's reduced-precision
    # tutorial (Llama 3.1 8B on 4 GB200; its FP8 keeps the first and last layer bf16, its NVFP4 the last 4: inputs
    # bf16_first_layers / bf16_last_layers) and a NeMo 25.09 fork's table (Llama 3 8B on 8 B200, every layer low)
    ("mbtut-gb200-4g-llama31-8b-bf16", "mbtut-gb200-4g-llama31-8b-fp8cs", "Megatron-Bridge tutorial, FP8 current"),
    ("mbtut-gb200-4g-llama31-8b-bf16", "mbtut-gb200-4g-llama31-8b-mxfp8", "Megatron-Bridge tutorial, MXFP8"),
    ("mbtut-gb200-4g-llama31-8b-bf16", "mbtut-gb200-4g-llama31-8b-nvfp4", "Megatron-Bridge tutorial, NVFP4"),
    ("vsnv4-b200-8g-llama3-8b-bf16", "vsnv4-b200-8g-llama3-8b-fp8ds", "vuiseng9/nemo-perf-nvfp4, FP8 delayed"),
    ("vsnv4-b200-8g-llama3-8b-bf16", "vsnv4-b200-8g-llama3-8b-mxfp8", "vuiseng9/nemo-perf-nvfp4, MXFP8"),
    ("vsnv4-b200-8g-llama3-8b-bf16", "vsnv4-b200-8g-llama3-8b-nvfp4", "vuiseng9/nemo-perf-nvfp4, NVFP4"),
]
# predicted speed-up off by more than 10 %: the 2023-10 Pax pairs (1.21 and 1.49 published, 1.42 and 1.65 predicted),
# where the same README's 2024-04 pairs (FP8_PAIRS, pax-*) are within 1 %: JAX's FP8 path on GPU a release earlier;
# FP8-LM's GPT-175B pair (1.28 published, 1.48 predicted), whose global batch and virtual stages are assumed (its
# source prints neither; with PP 4 they set the bubble), where its 7B and 13B pairs are within 4 %; the NeMo fork's
# NVFP4 pair (1.65 published, 1.90 predicted: an early build, a Megatron-LM fork 'core_v0.14.0+nvfp4' with TE 2.8,
# where Megatron-Bridge's tutorial on GB200 reads 1.56 against 1.71 predicted, and MLPerf v5.1's NVFP4 405B runs
# 0.89-1.06 alone); and since the refit after the thirty-fourth batch (GPU sustained fraction 0.71 -> 0.67, which
# lengthens the bf16 step's GEMMs more than the NVFP4 step's quantise kernels) the tutorial's NVFP4 pair: 1.72
# predicted against 1.56, 10.3 % high (9.5 % before); 1.71, 9.8 % high, within 10 % again after the refit with Ada's
# and AMD's GEMM rates (2026-12-07, twelfth session: the GPU sustained fraction 0.67 -> 0.68)
FP8_RUN_MISSES = {"jaxtb2310-pax-5b-h100-tebf16", "jaxtb2310-pax-175b-h100-tebf16", "fp8lm-h100-gpt175b-128g-bf16",
                  ("vsnv4-b200-8g-llama3-8b-bf16", "vsnv4-b200-8g-llama3-8b-nvfp4")}


@pytest.mark.parametrize("base,fp8,src", [
    pytest.param(*p, id=p[1], marks=[pytest.mark.xfail(strict=True, reason="known miss (see FP8_RUN_MISSES)")]
                 if p[0] in FP8_RUN_MISSES or p[:2] in FP8_RUN_MISSES else []) for p in FP8_RUN_PAIRS])
def test_fp8_speed_up_of_each_published_run_pair_within_10_percent(base, fp8, src):
    from core.validation import read
    rows = {r.id: r for f in ("published_runs.csv", "published_runs_lowp.csv", "published_runs_moe.csv")
            for r in read(Path(__file__).resolve().parent.parent / "data" / f)}
    a, b = rows[base], rows[fp8]
    assert a.metric == b.metric in ("tokens_per_s_per_gpu", "step_time_s")
    published = b.published / a.published if a.metric == "tokens_per_s_per_gpu" else a.published / b.published
    ea, eb = (estimate(config_from_inputs(**{**r.inputs, "mfu": "auto"})) for r in (a, b))
    assert eb["fits"]
    assert ea["predicted_step_time_s"] / eb["predicted_step_time_s"] == pytest.approx(published, rel=0.10), src


def test_fp8_is_not_a_peak_swap():
    """Only the linear layers run at the fp8 rate, with their quantisation kernels: the speed-up is well below the
    2× of the peaks (the issue's Llama-3.1-70B on 64 H100, tp 4, pp 2, 8K: the old model gave 1.72×)."""
    base = dict(model="llama-3.1-70b", n_gpus=64, tp=4, pp=2, seq_len=8192, sequence_parallel=True,
                global_batch=512, mfu="auto")
    b = estimate(config_from_inputs(**base))
    f = estimate(config_from_inputs(**base, fp8_recipe="delayed"))
    assert 1.1 < b["predicted_step_time_s"] / f["predicted_step_time_s"] < 1.6
    assert f["elementwise_s"] > b["elementwise_s"]  # the quantise / amax / transpose kernels
    # MFU against the bf16 peak by default (as published tables quote it), the fp8 figure beside it
    h100 = catalog()["h100-sxm"]
    assert f["predicted_mfu_lowp"] == pytest.approx(
        f["predicted_mfu"] * h100.peak_flops_per_s("bf16") / h100.peak_flops_per_s("fp8"), rel=1e-9)
    assert f["model_tflops_per_gpu"] == pytest.approx(f["predicted_mfu"] * h100.peak_flops_per_s("bf16") / 1e12,
                                                      rel=1e-9)
    legacy = estimate(config_from_inputs(**base, compute_dtype="fp8"))  # compute_dtype fp8 alone: delayed
    assert legacy["predicted_step_time_s"] == pytest.approx(f["predicted_step_time_s"], rel=1e-12)


def test_layers_kept_in_bf16_run_at_the_bf16_rate():
    """Megatron's --first-last-layers-bf16 (inputs bf16_first_layers, bf16_last_layers; Megatron-Bridge's NVFP4
    recipe for Llama 3 8B keeps the last 4 of 32 layers bf16, training/mixed_precision.py and recipes/llama/h100/
    llama3.py @067f987): with one pipeline the step's linear GEMMs and quantise kernels are the layers' mix, so
    every term moves linearly in the count and half the layers sit halfway between the all-nvfp4 and the bf16 step;
    their low-precision weight copies go and their saved linear inputs are 16-bit."""
    base = dict(model="llama-3.1-8b", gpu="b200", n_gpus=8, seq_len=8192, micro_batch=2, global_batch=128, mfu="auto")
    low = {k: estimate(config_from_inputs(**base, fp8_recipe="nvfp4", bf16_last_layers=k)) for k in (0, 4, 8, 16)}
    bf16 = estimate(config_from_inputs(**base))
    for key in ("compute_s", "elementwise_s", "predicted_step_time_s", "activations_bytes"):
        assert low[8][key] - low[4][key] == pytest.approx(low[4][key] - low[0][key], rel=1e-6), key
        assert low[16][key] == pytest.approx((low[0][key] + bf16[key]) / 2, rel=1e-6), key
    assert low[4]["lowp_weights_bytes"] == pytest.approx(low[0]["lowp_weights_bytes"] * 28 / 32, rel=1e-9)
    assert low[0]["predicted_step_time_s"] < low[4]["predicted_step_time_s"] < bf16["predicted_step_time_s"]
    # four stages of 8 layers: the last stage's 4 bf16 layers set the pace (half its layers); the first stage, where
    # the memory peaks, keeps its copies and its fp8 inputs
    pp = dict(base, pp=4, fp8_recipe="nvfp4")
    none, last4, first4 = (estimate(config_from_inputs(**pp, bf16_first_layers=f, bf16_last_layers=l_))
                           for f, l_ in ((0, 0), (0, 4), (4, 0)))
    assert last4["predicted_step_time_s"] == pytest.approx(first4["predicted_step_time_s"], rel=1e-9)
    assert last4["predicted_step_time_s"] > none["predicted_step_time_s"]
    assert last4["lowp_weights_bytes"] == pytest.approx(none["lowp_weights_bytes"], rel=1e-9)
    assert first4["lowp_weights_bytes"] == pytest.approx(none["lowp_weights_bytes"] / 2, rel=1e-9)
    assert last4["activations_bytes"] == pytest.approx(none["activations_bytes"], rel=1e-9)
    assert first4["activations_bytes"] > none["activations_bytes"]
    for bad, why in ((dict(bf16_last_layers=2), "needs a low-precision recipe"),
                     (dict(fp8_recipe="delayed", bf16_first_layers=1), "needs a low-precision recipe other than delayed"),
                     (dict(compute_dtype="fp8", bf16_last_layers=1), "needs a low-precision recipe other than delayed"),
                     (dict(fp8_recipe="nvfp4", bf16_first_layers=16, bf16_last_layers=16), "bf16_first_layers \\+ bf16_last")):
        with pytest.raises(ValueError, match=f"^bf16_(first|last)_layers: {why}"):
            config_from_inputs(**base, **bad)


def test_act_fp8_store_keeps_the_activation_input_in_fp8():
    """Megatron-Core's activation_func_fp8_input_store (MLPerf's FP8_ACT): gate and up, 2 bytes each per element of
    d_ff, saved at 1 byte; nothing else in the ledger moves; refused by name without a low-precision recipe.
    MLPerf's Llama 2 70B LoRA on 8 B200 (tp 1, 8K, fp8 weights): 1.65 → 1.18 GB a layer, and it fits (the 178.35 GiB,
    191.5 GB, a process can allocate)."""
    base = dict(model="llama-2-70b", n_gpus=8, gpu="b200", seq_len=8192, global_batch=8, fp8_recipe="delayed",
                fp8_param_gather=True, training="lora", lora_rank=16, lora_targets="attention")
    off = estimate(config_from_inputs(**base))
    on = estimate(config_from_inputs(**base, act_fp8_store=True))
    gate_up = 2 * 8192 * 28672  # elements of gate and up a layer keeps
    assert off["activations_per_layer_bytes"] - on["activations_per_layer_bytes"] == pytest.approx(gate_up, rel=1e-9)
    assert on["activations_per_layer_bytes"] / 1e9 == pytest.approx(1.18, abs=0.01) and on["fits"]
    assert not off["fits"]
    for bad in (dict(), dict(framework="fsdp", zero_stage=3, fp8_recipe="current")):
        with pytest.raises(ValueError, match="^act_fp8_store"):
            config_from_inputs(model="llama-3.1-8b", act_fp8_store=True, **bad)


def test_cuda_graphs_remove_the_host_time_they_replay():
    """per_layer: no kernel-launch host time; full_iteration: nor Megatron's per-step host time (its fitted
    step_host_s); the GPU's work is unchanged. Refused by name outside megatron, with activation offload and on TPUs. MLPerf's
    Llama 3.1 8B on 72 GB200 (cp 2, 8K, FP8): 147 ms of its 287 ms predicted step is that host time."""
    base = dict(model="llama-3.1-8b", n_gpus=72, gpu="gb200", cp=2, seq_len=8192, global_batch=36,
                fp8_recipe="current", mfu="auto")
    none, layer, full = (estimate(config_from_inputs(**base, cuda_graphs=g))
                         for g in ("none", "per_layer", "full_iteration"))
    assert none["host_s"] == pytest.approx(PF.number("megatron", "step_host_s"), rel=1e-9)
    assert layer["host_s"] == none["host_s"] and full["host_s"] == 0.0
    assert full["predicted_step_time_s"] == pytest.approx(none["predicted_step_time_s"] - none["host_s"], rel=1e-9)
    # a layer too small to hide its launches (4 layers of width 256, 64 tokens): 1.6 ms of launches exposed, gone
    tiny = dict(n_layers=4, d_model=256, n_heads=4, n_kv_heads=4, d_ff=1024, vocab_size=32000, mlp="swiglu",
                norm="rmsnorm", n_gpus=1, seq_len=64, micro_batch=1, global_batch=1, mfu="auto", gpu="h100-sxm")
    launches = estimate(config_from_inputs(**tiny))["host_s"] - PF.number("megatron", "step_host_s")
    assert launches > 1e-3
    assert estimate(config_from_inputs(**tiny, cuda_graphs="per_layer"))["host_s"] == pytest.approx(
        PF.number("megatron", "step_host_s"), rel=1e-9)
    for bad in (dict(framework="fsdp", zero_stage=3), dict(activation_offload=True), dict(gpu="tpu-v5p")):
        with pytest.raises(ValueError, match="^cuda_graphs"):
            config_from_inputs(model="llama-3.1-8b", cuda_graphs="full_iteration", **bad)


def test_fp8_memory_rows_and_param_gather():
    """Transformer Engine keeps fp8 weights and their transposes (2 bytes per local parameter, a named ledger row);
    with --fp8-param-gather the weights are the fp8 tensors (1 byte), only the transpose is extra, and the
    distributed optimizer's gathers move 1 byte per parameter."""
    base = dict(model="llama-3.1-8b", n_gpus=8, seq_len=4096, mfu="auto", fp8_recipe="delayed")
    r = estimate(config_from_inputs(**base))
    bf = estimate(config_from_inputs(**{**base, "fp8_recipe": "none"}))
    assert r["lowp_weights_bytes"] == pytest.approx(2 * r["weights_bytes"] / 2, rel=1e-9)  # 2 B vs bf16's 2 B
    assert r["total_bytes"] > bf["total_bytes"] and bf["lowp_weights_bytes"] == 0
    pg = estimate(config_from_inputs(**base, fp8_param_gather=True))
    assert pg["weights_bytes"] == pytest.approx(r["weights_bytes"] / 2, rel=1e-9)
    assert pg["lowp_weights_bytes"] == pytest.approx(r["lowp_weights_bytes"] / 2, rel=1e-9)
    assert pg["dp_comm_s"] < r["dp_comm_s"]


@pytest.mark.parametrize("inputs", [dict(gpu="h100-sxm", fp8_recipe="mxfp8"), dict(gpu="h100-sxm", fp8_recipe="nvfp4"),
                                    dict(gpu="a100-80gb", fp8_recipe="current")])
def test_a_recipe_the_accelerator_cannot_run_is_refused(inputs):
    with pytest.raises(ValueError, match="fp8_recipe"):
        config_from_inputs(model="llama-3.1-8b", **inputs)


def test_the_mxfp8_gemm_rate_is_the_scripts_fit():
    """data/lowp.csv's mxfp8 gemm_factor is what bench/fit_mxfp8.py fits to the same-layout FP8-CS / MXFP8 pairs
    (Megatron-Bridge 25.11 and, since the twenty-first batch, 26.02.01; torchao B200), and each source left out is
    predicted within 6 %: published MXFP8 runs 4-7 % slower than tensor-wise current scaling, which the derived bytes
    alone made 1-2 % faster (26.02.01's 405B GB300 pair, 0.927, was predicted 0.928 by the factor fitted before it
    joined)."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    import fit_mxfp8
    from core import lowp as LP
    before = float(LP.number("mxfp8", "gemm_factor"))
    res = fit_mxfp8.run()
    assert res["factor"] == pytest.approx(float(LP.number("mxfp8", "gemm_factor")), abs=1e-9)
    assert len(res["rows"]) >= 6 and len(res["loso"]) >= 3
    for _, (_, rows) in res["loso"].items():
        for _, pub, pred in rows:
            assert pred == pytest.approx(pub, rel=0.06)
    assert float(LP.number("mxfp8", "gemm_factor")) == before  # the script leaves the recipe table as it was


def test_nvfp4_on_blackwell_is_faster_than_mxfp8():
    base = dict(model="llama-3.1-70b", gpu="b200", n_gpus=64, tp=2, pp=4, sequence_parallel=True, seq_len=8192,
                global_batch=256, mfu="auto")
    mx = estimate(config_from_inputs(**base, fp8_recipe="mxfp8"))
    fp4 = estimate(config_from_inputs(**base, fp8_recipe="nvfp4"))
    assert fp4["predicted_step_time_s"] < mx["predicted_step_time_s"]
    assert fp4["lowp_weights_bytes"] < mx["lowp_weights_bytes"]


# --- MoE runs, out of sample ------------------------------------------------------------------------------------------
# data/published_runs_moe.csv: 45 published Megatron-Core MoE runs, 43 BF16 and 2 MXFP8 (Megatron-Bridge performance
# summaries, Megatron-MoE-ModelZoo's Qwen3 tables, the Megatron-Core MoE README), not used by any fit. Where the model misses
# (bench/RESULTS.md "MoE and low precision" gives the ratios and what they point at), the test is a strict xfail.
from core import validation as V  # noqa: E402

MOE_RUNS = V.read(Path(__file__).resolve().parent.parent / "data" / "published_runs_moe.csv")
# predicted not to fit (bench/RESULTS.md "Profiles" notes). torchtitan PR #1610's DeepSeek-V3 16B on 8 H100 (96 GB)
# fits since its MoE layers keep only what per-op SAC saves (70 GiB against a printed 78.1; tests/test_sac_all_to_all.py)
MOE_NOT_FIT = {"deepseek-v3-pretrain-2048xh800",
               "primus-proj-mi355x-mixtral-8x22b-bf16-8n"}
MOE_WITHIN = {"ao-moe-scout-gb200-256g-bf16",
              "automodel-gptoss-120b-h100-64g",
              "automodel-gptoss-20b-h100-8g",
              "automodel-kimi-k2-h100-256g",
              "dgxc2502-grok1-314b-h100-2048g-bf16",
              "dgxc2502-grok1-314b-h100-2048g-fp8",
              "dgxc2502-grok1-314b-h100-512g-bf16",
              "dgxc2502-grok1-314b-h100-512g-fp8",
              "dgxc2505-deepseek-v3-h100-1024g-bf16",
              "dgxc2505-deepseek-v3-h100-512g-bf16",
              "dgxc2505-grok1-314b-gb200-128g-bf16",
              "dgxc2505-grok1-314b-gb200-128g-fp8",
              "dgxc2505-grok1-314b-gb200-512g-bf16",
              "dgxc2505-grok1-314b-gb200-512g-fp8",
              "dgxc2505-grok1-314b-h100-512g-fp8",
              "dgxc2505-llama4-maverick-gb200-128g-bf16",
              "dgxc2505-llama4-maverick-gb200-128g-fp8",
              "dgxc2505-llama4-maverick-gb200-512g-bf16",
              "dgxc2505-llama4-maverick-h100-512g-bf16",
              "grc-a3ultra-mixtral-8x7b-nemo2407-bf16-256g",
              "grc-a4-mixtral-8x7b-nemo2502-fp8-256g",
              "hsohara-primus-mi325x-mixtral-8x7b-bf16-64g",
              "lambda-b200-gptoss20b-fsdp8-bs20",
              "lambda-b200-qwen3-30b-a3b-fsdp8-bs10",
              "lambda-b200-qwen3-30b-a3b-fsdp8-bs12",
              "lambda-b200-qwen3-30b-a3b-fsdp8-bs8",
              "lambda-gb300-gptoss20b-fsdp64-noac-compile-bs6",
              "lambda-gb300-gptoss20b-fsdp64-noac-compile-bs7-local",
              "lambda-gb300-gptoss20b-fsdp64-sac-compile-bs8",
              "mb2511-deepseek-v3-gb200-256g-bf16-tp1pp4cp1ep64vp4mbs1gbs4096",
              "mb2511-deepseek-v3-gb300-256g-bf16-tp1pp2cp1ep32vp4mbs1gbs4096",
              "mb2511-gpt-oss-120b-gb200-64g-bf16-tp1pp1cp1ep64vp1mbs1gbs1280",
              "mb2602-deepseek-v3-b200-256g-mxfp8-tp1pp16cp1ep8vp1mbs1gbs4096",
              "mb2602-deepseek-v3-b300-256g-mxfp8-tp1pp16cp1ep8vp1mbs1gbs4096",
              "mb2602-deepseek-v3-gb200-256g-mxfp8-tp1pp4cp1ep64vp4mbs1gbs4096",
              "mb2602-deepseek-v3-gb300-256g-mxfp8-tp1pp2cp1ep32vp8mbs2gbs4096",
              "mb2602-gpt-oss-120b-b200-64g-bf16-tp1pp1cp1ep64vp1mbs4gbs1280",
              "mb2602-qwen3-235b-a22b-gb200-256g-mxfp8-tp1pp8cp1ep32vp1mbs1gbs8192",
              "mb2602-qwen3-235b-a22b-gb300-256g-mxfp8-tp1pp4cp1ep32vp1mbs2gbs8192",
              "mb2602-qwen3-30b-a3b-b300-8g-mxfp8-tp1pp1cp1ep8vp1mbs8gbs512",
              "mb2602-qwen3-30b-a3b-gb200-8g-mxfp8-tp1pp1cp1ep8vp1mbs4gbs512",
              "mb2602-qwen3-30b-a3b-gb300-8g-mxfp8-tp1pp1cp1ep8vp1mbs8gbs512",
              "mb260201-deepseek-v3-b200-256g-mxfp8-tp1pp16cp1ep8vp1mbs1gbs4096",
              "mb260201-deepseek-v3-b300-256g-mxfp8-tp1pp16cp1ep8vp1mbs1gbs4096",
              "mb260201-deepseek-v3-gb200-256g-mxfp8-tp1pp4cp1ep64vp4mbs1gbs4096",
              "mb260201-deepseek-v3-gb300-256g-mxfp8-tp1pp2cp1ep32vp8mbs2gbs4096",
              "mb260201-qwen3-235b-a22b-gb200-256g-mxfp8-tp1pp8cp1ep32vp1mbs1gbs8192",
              "mb260201-qwen3-235b-a22b-gb300-256g-mxfp8-tp1pp4cp1ep32vp1mbs2gbs8192",
              "mb260201-qwen3-30b-a3b-b200-8g-mxfp8-tp1pp1cp1ep8vp1mbs4gbs512",
              "mb260201-qwen3-30b-a3b-b300-8g-mxfp8-tp1pp1cp1ep8vp1mbs8gbs512",
              "mb260201-qwen3-30b-a3b-gb200-8g-mxfp8-tp1pp1cp1ep8vp1mbs4gbs512",
              "mb260201-qwen3-30b-a3b-gb300-8g-mxfp8-tp1pp1cp1ep8vp1mbs8gbs512",
              "mb260401-deepseek-v3-b200-256g-mxfp8-tp1pp8cp1ep32vp2mbs1gbs4096",
              "mb260401-deepseek-v3-b300-256g-mxfp8-tp1pp8cp1ep8vp1mbs2gbs4096",
              "mb260401-deepseek-v3-gb200-256g-mxfp8-tp1pp4cp1ep64vp4mbs1gbs4096",
              "mb260401-deepseek-v3-gb300-256g-mxfp8-tp1pp2cp1ep32vp8mbs2gbs4096",
              "mb260401-qwen3-235b-a22b-b300-256g-mxfp8-tp1pp8cp1ep8vp1mbs2gbs8192",
              "mb260401-qwen3-235b-a22b-gb200-256g-mxfp8-tp1pp8cp1ep32vp3mbs1gbs8192",
              "mb260401-qwen3-235b-a22b-h100-sxm-256g-current-tp2pp8cp1ep32vp4mbs1gbs8192",
              "mb260401-qwen3-30b-a3b-b200-8g-mxfp8-tp1pp1cp1ep8vp1mbs4gbs512",
              "mb260401-qwen3-30b-a3b-b300-8g-mxfp8-tp1pp1cp1ep8vp1mbs8gbs512",
              "mb260401-qwen3-30b-a3b-gb200-8g-mxfp8-tp1pp1cp1ep8vp1mbs4gbs512",
              "mb260401-qwen3-30b-a3b-gb300-8g-mxfp8-tp1pp1cp1ep8vp1mbs8gbs512",
              "mb2606-deepseek-v3-b300-256g-mxfp8-tp1pp8cp1ep8vp1mbs2gbs4096",
              "mb2606-deepseek-v3-gb200-256g-mxfp8-tp1pp4cp1ep64vp4mbs1gbs4096",
              "mb2606-deepseek-v3-gb300-256g-mxfp8-tp1pp2cp1ep32vp8mbs1gbs15360",
              "mb2606-deepseek-v3-gb300-256g-mxfp8-tp1pp2cp1ep32vp8mbs1gbs4096",
              "mb2606-gpt-oss-120b-gb300-64g-mxfp8-tp1pp1cp1ep16vp1mbs4gbs1280",
              "mb2606-qwen3-235b-a22b-gb200-256g-mxfp8-tp1pp8cp1ep32vp3mbs1gbs8192",
              "mb2606-qwen3-235b-a22b-gb300-256g-mxfp8-tp1pp4cp1ep32vp12mbs2gbs8192",
              "mb2606-qwen3-30b-a3b-b300-8g-mxfp8-tp1pp1cp1ep8vp1mbs8gbs512",
              "mb2606-qwen3-30b-a3b-gb200-8g-mxfp8-tp1pp1cp1ep8vp1mbs4gbs512",
              "mb2606-qwen3-30b-a3b-gb300-8g-mxfp8-tp1pp1cp1ep8vp1mbs8gbs512",
              "mb2608-deepseek-v3-gb200-256g-mxfp8-tp1pp4cp1ep64vp4mbs1gbs4096",
              "mb2608-deepseek-v3-gb300-256g-mxfp8-tp1pp2cp1ep32vp8mbs1gbs4096",
              "mb2608-gpt-oss-120b-gb300-64g-mxfp8-tp1pp1cp1ep16vp1mbs4gbs1280",
              "mb2608-qwen3-235b-a22b-gb200-256g-mxfp8-tp1pp8cp1ep32vp3mbs1gbs8192",
              "mb2608-qwen3-235b-a22b-gb300-256g-mxfp8-tp1pp4cp1ep32vp12mbs2gbs8192",
              "mb2608-qwen3-30b-a3b-gb200-8g-mxfp8-tp1pp1cp1ep8vp1mbs4gbs512",
              "mb2608-qwen3-30b-a3b-gb300-8g-mxfp8-tp1pp1cp1ep8vp1mbs8gbs512",
              "mbcard-dsv3-gb200-256g-mxfp8-hybridep",
              "mbcard-dsv3-gb300-256g-mxfp8-hybridep",
              "mbcard-gpt-oss-120b-gb300-64g-mxfp8-hybridep",
              "mbcard-qwen3-235b-a22b-gb200-256g-mxfp8-hybridep",
              "mbcard-qwen3-235b-a22b-gb300-256g-mxfp8-hybridep",
              "mbcard-qwen3-30b-a3b-gb200-8g-mxfp8-hybridep",
              "mbcard-qwen3-30b-a3b-gb300-128g-mxfp8-hybridep-weakscale",
              "mbcard-qwen3-30b-a3b-gb300-256g-mxfp8-hybridep-weakscale",
              "mbcard-qwen3-30b-a3b-gb300-32g-mxfp8-hybridep-weakscale",
              "mbcard-qwen3-30b-a3b-gb300-8g-mxfp8-hybridep",
              "mbpr1869-dsv3-b200-256g-bf16-deepep-pp16ep16",
              "mbpr1869-dsv3-b200-256g-mxfp8-deepep-pp16ep16",
              "mbpr4330-dsv3-gb300-256g-mxfp8-gbs15360",
              "mcore-moe-readme-mixtral8x7b-h100-64g",
              "mlm-dsv3-gb200-256g-mxfp8-hybridep-final",
              "mlm-moerecipes-dsv3-b200-mxfp8-256g",
              "mlm-moerecipes-dsv3-gb200-mxfp8-256g",
              "mlperf60-cw-gb300-dsv3-2048g-mxfp8",
              "mlperf60-cw-gb300-dsv3-8192g-mxfp8",
              "mlperf60-google-gb200-dsv3-256g-mxfp8",
              "mlperf60-lambda-b200-gptoss20b-8g-mxfp8",
              "mlperf60-nv-gb200-dsv3-512g-mxfp8",
              "mlperf60-nv-gb300-dsv3-256g-mxfp8",
              "mlperf60-nv-gb300-dsv3-512g-mxfp8",
              "mt-guide-moe700b-4xv6e256-cf15",
              "mt-guide-moe700b-v6e256-cf10",
              "mt-guide-moe700b-v6e256-cf15",
              "mt-runmixtral-v5p128-mixtral-8x7b",
              "mtslurm-kimik2-mi355x-64g-cf125-pdbs4",
              "nebius-tt-dsv3-671b-b200-256g-bf16-a2a",
              "nebius-tt-dsv3-671b-b200-256g-bf16-deepep",
              "nemo2502-mixtral-8x7b-b200-64g-fp8-delayed",
              "nemo2507-llama4-scout-gb200-64g-fp8cs",
              "nemo2509-dsv3-b200-256g-fp8cs-tokendrop",
              "nemo2509-dsv3-b200-256g-mxfp8-tokendrop",
              "nemo2509-dsv3-gb200-256g-fp8cs-tokendrop",
              "nemo2509-qwen3-235b-a22b-b200-64g-mxfp8-tokendrop",
              "nemo2509-qwen3-235b-a22b-h100-256g-fp8cs-tokendrop",
              "nemo2509-qwen3-30b-a3b-gb200-8g-mxfp8-tokendrop",
              "nemo2509-qwen3-30b-a3b-h100-16g-fp8cs-tokendrop",
              "pf-mixtral8x22b-g8t8-h100-128g-fold",
              "pf-mixtral8x22b-h100-1024g-fold-gbs1024",
              "pf-mixtral8x22b-h100-128g-fold",
              "pf-mixtral8x22b-h100-128g-fold-16k",
              "pf-mixtral8x22b-h100-128g-fold-fp8",
              "pf-mixtral8x22b-h100-128g-mcore",
              "pf-mixtral8x22b-h100-128g-tpepdp",
              "pf-qwen2-57b-a14b-h100-64g-fold",
              "pf-qwen2-57b-a14b-h100-64g-mcore",
              "primus-moepkg-mi355x-dsv2lite-mbs14-final",
              "rocmblog-dsv3-mi355x-64g-cf125-pdbs16",
              "rocmblog-dsv3-mi355x-64g-cf125-pdbs8",
              "rocmblog-dsv3-mi355x-64g-cf2-pdbs8",
              "rocmblog-dsv3-mi355x-64g-cf4-pdbs8",
              "tier-v5p-mixtral-8x7b-128",
              "tr-tpu7x-gemma4-26b-4k-bf16-256",
              "tr-tpu7x-gemma4-26b-4k-bf16-64",
              "tr-tpu7x-qwen3-235b-4k-bf16-256",
              "tr-tpu7x-qwen3-235b-4k-fp8-256",
              "tr-v5p-llama4-scout-128",
              "tr-v5p-llama4-scout-512",
              "tr-v6e-mixtral-8x22b-256",
              "tr-v6e-mixtral-8x7b-256-cf125",
              "tr-v6e-mixtral-8x7b-256-full",
              "tt-deepep-dsv3-671b-h100-512g-deepep",
              "tt3105-gb200-4g-gpt-oss-20b-compile",
              "xhtt-h200-qwen3-30b-a3b-ep4-lbs4-s12k-sac-compile",
              "xtmoe-h800-q235b-tp2ep32pp8vp4-sel-a2a",
              "xtmoe-h800-q235b-tp2ep8pp32vp3-mbs1-sel",
              "yw-tpu7x-qwen3-235b-4k-bf16-256-feb26",
              "zoo-qwen3-235b-gb200-bf16-4096",
              "zoo-qwen3-235b-h100-256g-0",
              "zoo-qwen3-235b-h100-256g-3",
              "zoo-qwen3-235b-h100-longctx-131072-dropless",
              "zoo-qwen3-235b-h100-longctx-131072-forcedbalance",
              "zoo-qwen3-235b-h100-longctx-16384-forcedbalance",
              "zoo-qwen3-235b-h100-longctx-32768-forcedbalance",
              "zoo-qwen3-235b-h100-longctx-65536-dropless",
              "zoo-qwen3-235b-h100-longctx-65536-forcedbalance"}


def _published(run):
    rec = estimate(config_from_inputs(**{**run.inputs, "mfu": "auto"}))
    return V.step_ratio(run, V.metric_of(rec, run)), rec


# --- dense low-precision runs, absolute: NVIDIA's tables, MLPerf's submissions, the fsdp profile's FP8 rows ---------
# data/published_runs_lowp.csv: Megatron-Bridge 26.04 Llama 3 70B and Llama 3.1 405B in NVFP4, MXFP8 and FP8 (current
# scaling) on GB300, GB200 and H100 (and 26.04.01's 405B on 1,024 H100), and 25.11's Llama 3 8B, 70B and 405B rows whose
# release config states the table's layout, each with the inputs its recipe states (fp8 parameters, TP overlap but
# under NVFP4, Megatron-FSDP with K offloaded layers, the embedding and loss slots of the 405B split); since 2026-12-05
# MLPerf Training v4.0–v5.1's Megatron/NeMo submissions (NVIDIA's, AMD's, partners': CUDA graphs, fp8 weights, FP8_ACT
# as their configs set them) and torchtitan's, torchao's and OLMo-core's FP8 rows (fsdp). One constant touches them: MXFP8's GEMM rate, fitted to 25.11's four same-layout FP8-CS / MXFP8 pairs and torchao's
# (bench/fit_mxfp8.py, leave-one-source-out).
LOWP_RUNS = V.read(Path(__file__).resolve().parent.parent / "data" / "published_runs_lowp.csv")
LOWP_NOT_FIT = {"nemo2407-nemotron-340b-h100-fp8"}
LOWP_WITHIN = {"accel-fsdp2-h100-llama31-8b-fp8-tensorwise",
               "amdpt252-mi300x-llama31-8b-fp8-s4k",
               "amdpt252-mi300x-llama31-8b-fp8-s8k",
               "amdpt252-mi300x-mistral7b-fp8",
               "amdpt252-mi325x-llama31-8b-fp8-s4k",
               "amdpt252-mi325x-llama31-8b-fp8-s8k",
               "amdpt252-mi325x-mistral7b-fp8",
               "aws-sm-tt-8b-fp8-allgather",
               "aws-sm-tt-8b-fp8-linear",
               "dgxc-maxtext-llama2-70b-fp8-1024gpu",
               "dgxc-maxtext-llama2-70b-fp8-128gpu",
               "dgxc-maxtext-llama2-70b-fp8-2048gpu",
               "dgxc-maxtext-llama2-70b-fp8-256gpu",
               "dgxc-maxtext-llama2-70b-fp8-512gpu",
               "dgxc-maxtext-llama2-70b-fp8-64gpu",
               "dgxc-maxtext-llama3-70b-fp8-1024gpu",
               "dgxc-maxtext-llama3-70b-fp8-2048gpu",
               "dgxc-maxtext-llama3-70b-fp8-256gpu",
               "dgxc-pax-gpt5b-fp8-128g",
               "dgxc-pax-gpt5b-fp8-16g",
               "dgxc-pax-gpt5b-fp8-32g",
               "dgxc-pax-gpt5b-fp8-64g",
               "dgxc2502-gpt3-175b-h100-128g-fp8",
               "dgxc2502-gpt3-175b-h100-2048g-fp8",
               "dgxc2502-llama31-405b-h100-2304g-fp8",
               "dgxc2502-llama31-405b-h100-576g-fp8",
               "dgxc2502-llama31-70b-h100-2048g-fp8",
               "dgxc2502-llama31-70b-h100-64g-fp8",
               "dgxc2502-llama31-8b-h100-128g-fp8",
               "dgxc2502-llama31-8b-h100-8g-fp8",
               "dgxc2502-nemotron4-15b-h100-16g-fp8",
               "dgxc2502-nemotron4-15b-h100-2048g-fp8",
               "dgxc2502-nemotron4-340b-h100-128g-fp8",
               "dgxc2502-nemotron4-340b-h100-2048g-fp8",
               "dgxc2504-llama31-405b-h100-2048g-fp8",
               "dgxc2504-llama31-405b-h100-512g-fp8",
               "dgxc2504-llama31-70b-h100-2048g-fp8",
               "dgxc2504-llama31-70b-h100-64g-fp8",
               "dgxc2504-llama31-8b-h100-128g-fp8",
               "dgxc2504-llama31-8b-h100-8g-fp8",
               "dgxc2505-llama31-405b-gb200-128g-fp8",
               "dgxc2505-llama31-405b-gb200-512g-fp8",
               "dgxc2505-llama31-405b-h100-512g-fp8",
               "dgxc2505-nemotron4-15b-h100-16g-fp8",
               "dgxc2505-nemotron4-340b-gb200-128g-fp8-weak",
               "dgxc2505-nemotron4-340b-gb200-512g-fp8-strong",
               "dgxc2505-nemotron4-340b-gb200-512g-fp8-weak",
               "dgxc2505-nemotron4-340b-h100-256g-fp8",
               "grc-a3mega-gpt3-175b-nemo2407-fp8-256g",
               "grc-a3mega-llama3-70b-nemo2407-fp8-128g",
               "grc-a3ultra-llama31-405b-nemo2412-fp8-576g",
               "grc-a3ultra-llama31-70b-nemo2407-fp8-256g",
               "grc-a4-llama31-405b-maxtext-fp8-256g",
               "grc-a4-llama31-405b-nemo2502-fp8-224g",
               "grc-a4-llama31-70b-maxtext-fp8-256g",
               "grc-a4-llama31-70b-nemo2502-fp8-256g",
               "hsohara-primus-mi325x-llama2-70b-fp8-fsdp-16g",
               "lf-h100-fp8-1b-s32768-g32-mb1",
               "lf-h100-fp8-1b-s512-g1792-mb56",
               "lf-h100-fp8-1b-s8192-g64-mb2",
               "lf-h100-fp8-3b-s2048-g480-mb10",
               "lf-h100-fp8-3b-s32768-g144-mb3",
               "lf-h100-fp8-3b-s512-g1920-mb40",
               "lf-h100-fp8-3b-s8192-g144-mb3",
               "mb2511-llama-3.1-405b-b200-128g-current-tp4pp8cp2vp8mbs1gbs64",
               "mb2511-llama-3.1-405b-b200-128g-mxfp8-tp4pp8cp2vp8mbs1gbs64",
               "mb2511-llama-3.1-405b-h100-sxm-1024g-current-tp8pp8cp2vp8mbs1gbs512",
               "mb2511-llama-3.1-70b-gb200-64g-current-tp1pp1cp1vp1mbs2gbs256-fsdp",
               "mb2511-llama-3.1-70b-gb300-64g-current-tp1pp1cp1vp1mbs2gbs256-fsdp",
               "mb2511-llama-3.1-70b-h100-sxm-64g-current-tp4pp8cp1vp5mbs1gbs128",
               "mb2511-llama-3.1-8b-b200-8g-current-tp1pp1cp1vp1mbs2gbs128",
               "mb2511-llama-3.1-8b-b200-8g-mxfp8-tp1pp1cp1vp1mbs2gbs128",
               "mb2511-llama-3.1-8b-gb200-8g-current-tp1pp1cp1vp1mbs2gbs128",
               "mb2511-llama-3.1-8b-gb200-8g-mxfp8-tp1pp1cp1vp1mbs2gbs128",
               "mb2511-llama-3.1-8b-gb300-8g-current-tp1pp1cp1vp1mbs2gbs128",
               "mb2511-llama-3.1-8b-gb300-8g-mxfp8-tp1pp1cp1vp1mbs2gbs128",
               "mb2602-llama-3.1-405b-gb200-256g-current-tp4pp16cp1vp4mbs1gbs1536",
               "mb2602-llama-3.1-405b-gb200-256g-mxfp8-tp4pp16cp1vp8mbs1gbs1536",
               "mb2602-llama-3.1-405b-gb200-256g-nvfp4-tp4pp16cp1vp8mbs1gbs1536",
               "mb2602-llama-3.1-405b-gb300-256g-current-tp4pp8cp1vp4mbs1gbs1536",
               "mb2602-llama-3.1-405b-gb300-256g-mxfp8-tp2pp8cp2vp4mbs1gbs1536",
               "mb2602-llama-3.1-405b-gb300-256g-nvfp4-tp4pp8cp1vp4mbs1gbs1536",
               "mb2602-llama-3.1-405b-h100-sxm-1024g-current-tp8pp8cp2vp8mbs1gbs1536",
               "mb2602-llama-3.1-70b-gb200-64g-current-tp1pp1cp1vp1mbs2gbs256-fsdp",
               "mb2602-llama-3.1-70b-gb200-64g-mxfp8-tp2pp4cp1vp5mbs1gbs256",
               "mb2602-llama-3.1-70b-gb200-64g-nvfp4-tp2pp4cp1vp5mbs1gbs256",
               "mb2602-llama-3.1-70b-gb300-64g-current-tp1pp1cp1vp1mbs2gbs256-fsdp",
               "mb2602-llama-3.1-70b-gb300-64g-nvfp4-tp1pp4cp1vp5mbs1gbs256",
               "mb2602-llama-3.1-70b-h100-sxm-64g-current-tp4pp8cp1vp5mbs1gbs256",
               "mb260201-llama-3.1-405b-gb200-256g-current-tp4pp16cp1vp4mbs1gbs1536",
               "mb260201-llama-3.1-405b-gb200-256g-mxfp8-tp4pp16cp1vp8mbs1gbs1536",
               "mb260201-llama-3.1-405b-gb200-256g-nvfp4-tp4pp16cp1vp4mbs1gbs1536",
               "mb260201-llama-3.1-405b-gb300-256g-current-tp2pp8cp2vp4mbs1gbs1536",
               "mb260201-llama-3.1-405b-gb300-256g-mxfp8-tp2pp8cp2vp4mbs1gbs1536",
               "mb260201-llama-3.1-405b-gb300-256g-nvfp4-tp4pp8cp1vp4mbs1gbs1536",
               "mb260201-llama-3.1-70b-gb200-64g-current-tp1pp1cp1vp1mbs2gbs256-fsdp",
               "mb260201-llama-3.1-70b-gb200-64g-mxfp8-tp2pp4cp1vp5mbs1gbs256",
               "mb260201-llama-3.1-70b-gb200-64g-nvfp4-tp2pp4cp1vp5mbs1gbs256",
               "mb260201-llama-3.1-70b-gb300-64g-current-tp1pp1cp1vp1mbs2gbs256-fsdp",
               "mb260201-llama-3.1-70b-h100-sxm-64g-current-tp4pp8cp1vp5mbs1gbs256",
               "mb2604-llama-3.1-405b-gb200-256g-current-tp4pp16cp1vp4mbs1gbs1536",
               "mb2604-llama-3.1-405b-gb200-256g-mxfp8-tp4pp16cp1vp8mbs1gbs1536",
               "mb2604-llama-3.1-405b-gb200-256g-nvfp4-tp4pp16cp1vp8mbs1gbs1536",
               "mb2604-llama-3.1-405b-gb300-256g-current-tp4pp8cp1vp4mbs1gbs1536",
               "mb2604-llama-3.1-405b-gb300-256g-nvfp4-tp4pp8cp1vp4mbs1gbs1536",
               "mb2604-llama-3.1-70b-gb200-64g-current-tp1pp1cp1vp1mbs2gbs256-fsdp",
               "mb2604-llama-3.1-70b-gb200-64g-mxfp8-tp2pp4cp1vp5mbs1gbs256",
               "mb2604-llama-3.1-70b-gb200-64g-nvfp4-tp2pp4cp1vp5mbs1gbs256",
               "mb2604-llama-3.1-70b-gb300-64g-current-tp1pp1cp1vp1mbs2gbs256-fsdp",
               "mb2604-llama-3.1-70b-gb300-64g-nvfp4-tp1pp4cp1vp5mbs1gbs256",
               "mb2604-llama-3.1-70b-h100-sxm-64g-current-tp4pp8cp1vp5mbs1gbs256",
               "mb260401-llama-3.1-405b-gb200-256g-current-tp4pp16cp1vp4mbs1gbs1536",
               "mb260401-llama-3.1-405b-gb200-256g-mxfp8-tp4pp16cp1vp8mbs1gbs1536",
               "mb260401-llama-3.1-405b-gb300-256g-current-tp4pp8cp1vp4mbs1gbs1536",
               "mb260401-llama-3.1-405b-gb300-256g-mxfp8-tp2pp8cp2vp4mbs1gbs1536",
               "mb260401-llama-3.1-405b-gb300-256g-nvfp4-tp4pp8cp1vp4mbs1gbs1536",
               "mb260401-llama-3.1-405b-h100-sxm-1024g-current-tp8pp8cp2vp8mbs1gbs1536",
               "mb260401-llama-3.1-70b-gb200-64g-current-tp1pp1cp1vp1mbs2gbs256-fsdp",
               "mb260401-llama-3.1-70b-gb200-64g-mxfp8-tp2pp4cp1vp5mbs1gbs256",
               "mb260401-llama-3.1-70b-gb200-64g-nvfp4-tp2pp4cp1vp5mbs1gbs256",
               "mb260401-llama-3.1-70b-gb300-64g-current-tp1pp1cp1vp1mbs2gbs256-fsdp",
               "mb260401-llama-3.1-70b-gb300-64g-nvfp4-tp1pp4cp1vp5mbs1gbs256",
               "mb260401-llama-3.1-70b-h100-sxm-64g-current-tp4pp8cp1vp5mbs1gbs256",
               "mb2606-llama-3.1-405b-gb200-256g-current-tp4pp16cp1vp4mbs1gbs1536",
               "mb2606-llama-3.1-405b-gb200-256g-mxfp8-tp4pp16cp1vp8mbs1gbs1536",
               "mb2606-llama-3.1-405b-gb300-256g-current-tp4pp8cp1vp4mbs1gbs1536",
               "mb2606-llama-3.1-405b-gb300-256g-mxfp8-tp2pp8cp2vp4mbs1gbs1536",
               "mb2606-llama-3.1-405b-gb300-256g-nvfp4-tp4pp8cp1vp4mbs1gbs1536",
               "mb2606-llama-3.1-405b-h100-sxm-1024g-current-tp8pp8cp2vp8mbs1gbs1536",
               "mbtut-gb200-4g-llama31-8b-fp8cs",
               "mbtut-gb200-4g-llama31-8b-mxfp8",
               "mbtut-gb200-4g-llama31-8b-nvfp4",
               "mlm-llama-ex-h100-8b-fp8-tp1pp1cp2vp1",
               "mlperf30-nv-h100-gpt3-512g",
               "mlperf30-nvcw-h100-gpt3-3584g",
               "mlperf31-azure-h100-gpt3-10752g",
               "mlperf31-nv-h100-gpt3-10752g",
               "mlperf31-nv-h100-gpt3-4096g",
               "mlperf31-nv-h100-gpt3-512g",
               "mlperf40-fujitsu-gx2560m7-4xh100-lora",
               "mlperf40-nv-h100-gpt3-10752g",
               "mlperf40-nv-h100-gpt3-11616g",
               "mlperf40-nv-h100-gpt3-512g",
               "mlperf40-nv-h200-lora-8g",
               "mlperf40-smc-h100-gpt3-512g",
               "mlperf41-azure-h200-lora-512g",
               "mlperf41-dell-xe9640-4xh100-lora",
               "mlperf41-dell-xe9680-h200-lora",
               "mlperf41-nv-b200-gpt3-64g",
               "mlperf41-nv-b200-lora-8g",
               "mlperf41-nv-h100-gpt3-256g",
               "mlperf41-nv-h100-gpt3-512g",
               "mlperf41-oracle-h100-gpt3-1536g",
               "mlperf41-oracle-h100-gpt3-3072g",
               "mlperf50-amd-mi300x-llama2-70b-lora",
               "mlperf50-amd-mi325x-llama2-70b-lora",
               "mlperf50-cw-gb200-405b-1024g",
               "mlperf50-cw-gb200-405b-2496g",
               "mlperf50-cw-gb200-405b-512g",
               "mlperf50-dell-h200-lora-8g",
               "mlperf50-dell-mi300x-llama2-70b-lora",
               "mlperf50-giga-mi325x-llama2-70b-lora",
               "mlperf50-lambda-b200-lora-8g",
               "mlperf50-mangoboost-mi300x-2n-llama2-70b-lora",
               "mlperf50-mangoboost-mi300x-4n-llama2-70b-lora",
               "mlperf50-nebius-h200-405b-1024g",
               "mlperf50-nebius-h200-405b-512g",
               "mlperf50-nv-b200-lora-8g",
               "mlperf50-nv-gb200-405b-256g",
               "mlperf50-nv-gb200-405b-512g",
               "mlperf50-nv-gb200-lora-8g",
               "mlperf50-nv-h100-405b-2048g",
               "mlperf50-nv-h100-405b-512g",
               "mlperf50-nv-h100-405b-8192g",
               "mlperf50-oracle-mi300x-llama2-70b-lora",
               "mlperf50-scitix-h100-lora-64g",
               "mlperf51-amd-mi350x-llama2-70b-lora",
               "mlperf51-amd-mi350x-llama31-8b-fp8",
               "mlperf51-cisco-h100-8b-64g",
               "mlperf51-cisco-h100-lora-128g",
               "mlperf51-cisco-h100-lora-64g",
               "mlperf51-dell-b300-8b-8g",
               "mlperf51-dell-b300-lora-8g",
               "mlperf51-hpe-h200-8b-64g-fp8",
               "mlperf51-krai-mi300x-llama2-70b-lora-v50sw",
               "mlperf51-krai-mi300x-llama2-70b-lora-v51sw",
               "mlperf51-lambda-gb300-8b-72g-fp8",
               "mlperf51-lenovo-b300-8b-8g-nvfp4",
               "mlperf51-nebius-b200-8b-8g-nvfp4",
               "mlperf51-nv-gb200-405b-2560g-nvfp4",
               "mlperf51-nv-gb200-405b-5120g-nvfp4",
               "mlperf51-nv-gb200-405b-512g-nvfp4",
               "mlperf51-nv-gb200-8b-72g-fp8cs",
               "mlperf51-nv-gb200-lora-512g",
               "mlperf51-nv-gb200-lora-72g",
               "mlperf51-nv-gb300-405b-512g-nvfp4",
               "mlperf51-nv-gb300-8b-72g-fp8cs",
               "mlperf51-nv-gb300-lora-512g",
               "mlperf51-nv-gb300-lora-72g",
               "mlperf51-oracle-b200-8b-64g-fp8",
               "mlperf51-oracle-b200-8b-8g-nvfp4",
               "mlperf51-uf-b200-405b-256g",
               "mlperf51-uf-b200-405b-448g",
               "mlperf51-uf-b200-8b-128g",
               "mlperf51-uf-b200-8b-16g",
               "mlperf51-uf-b200-8b-32g",
               "mlperf51-uf-b200-8b-64g",
               "mlperf51-uf-b200-8b-8g",
               "mlperf51-uf-b200-lora-128g",
               "mlperf51-uf-b200-lora-16g",
               "mlperf51-uf-b200-lora-32g",
               "mlperf51-uf-b200-lora-64g",
               "mlperf51-uf-b200-lora-8g",
               "mlperf51-verda-b200-8b-64g",
               "mlperf60-cw-gb300-405b-4096g-nvfp4",
               "mlperf60-mitac-mi325x-llama31-8b-fp8",
               "mlperf60-nv-gb300-405b-2048g-nvfp4",
               "mtslurm-llama31-405b-mi355x-64g-fp8",
               "nemo-longseq-b200-llama-3.1-8b-1024k-tp4pp1dp4cp16",
               "nemo-longseq-b200-llama-3.1-8b-128k-tp2pp1dp4cp4",
               "nemo-longseq-b200-llama-3.1-8b-16k-tp1pp1dp4cp1",
               "nemo-longseq-b200-llama-3.1-8b-256k-tp4pp1dp4cp4",
               "nemo-longseq-b200-llama-3.1-8b-32k-tp1pp1dp4cp2",
               "nemo-longseq-b200-llama-3.1-8b-512k-tp4pp1dp4cp8",
               "nemo-longseq-b200-llama-3.1-8b-64k-tp1pp1dp4cp4",
               "nemo-longseq-b200-llama-3.1-8b-8k-tp1pp1dp2cp1",
               "nemo-longseq-h100-sxm-llama-2-7b-4k-tp1pp1dp4cp1",
               "nemo-longseq-h100-sxm-llama-2-7b-8k-tp1pp2dp4cp1",
               "nemo2407-gpt3-175b-128g-h100-fp8",
               "nemo2407-gpt3-20b-h100-fp8",
               "nemo2407-gpt3-5b-h100-fp8",
               "nemo2407-llama2-13b-h100-fp8",
               "nemo2407-llama2-70b-h100-fp8",
               "nemo2407-llama2-7b-h100-fp8",
               "nemo2407-llama3-70b-h100-fp8",
               "nemo2407-llama3-8b-h100-fp8",
               "nemo2407-nemotron-22b-h100-fp8",
               "nemo2407-nemotron-8b-h100-fp8",
               "nemo2502-gpt3-175b-b200-512g-fp8-delayed",
               "nemo2502-gpt3-175b-h100-sxm-512g-fp8-delayed",
               "nemo2502-llama3-405b-b200-128g-fp8-delayed",
               "nemo2502-llama3-70b-b200-64g-fp8-delayed",
               "nemo2502-llama3-8b-b200-8g-fp8-delayed",
               "nemo2502-nemotron4-15b-b200-64g-fp8-delayed",
               "nemo2502-nemotron4-340b-b200-128g-fp8-delayed",
               "nemo2504-gpt3-175b-gb200-fp8cs",
               "nemo2504-llama3-70b-fsdp-gb200-fp8cs",
               "nemo2504-llama3-8b-gb200-fp8cs",
               "nemo2504-nemotron4-15b-gb200-fp8cs",
               "nemo2504-nemotron4-340b-gb200-fp8cs",
               "nemo2507-llama3-70b-gb200-64g-fp8cs-fsdp",
               "nemo2507-llama3-8b-gb200-8g-fp8cs",
               "nemo2507-llama31-405b-gb200-128g-fp8cs-fsdp",
               "nemo2509-llama3-70b-gb200-64g-fp8cs-fsdp",
               "nemo2509-llama3-70b-gb200-64g-mxfp8",
               "nemo2509-llama3-70b-h100-64g-fp8cs",
               "nemo2509-llama3-8b-b200-8g-fp8cs",
               "nemo2509-llama3-8b-b200-8g-mxfp8",
               "nemo2509-llama3-8b-gb200-8g-fp8cs",
               "nemo2509-llama3-8b-gb200-8g-mxfp8",
               "nemo2509-llama3-8b-h100-8g-fp8cs-fsdp",
               "nemo2509-llama31-405b-b200-128g-fp8cs",
               "nemo2509-llama31-405b-b200-128g-mxfp8",
               "nemo2509-llama31-405b-gb200-128g-fp8cs-fsdp",
               "nemo2509-llama31-405b-h100-1024g-fp8cs",
               "olmocore-h100-1b-fp8",
               "olmocore-h100-7b-fp8",
               "olmocore-h100-llama8b-fp8",
               "pax-175b-h100-sxm-tefp8",
               "tgb200-llama31-405b-nvfp4-256g-tp4pp16vp8",
               "tgb200-llama31-405b-nvfp4-256g-tp4pp8vp4",
               "tgb200-llama31-8b-fp8cs-8g-mbs2",
               "tgb200-llama31-8b-nvfp4-8g-mbs4",
               "tgb200-nemotronh-56b-fp8cs-256g",
               "tgb200-nemotronh-56b-fp8cs-512g",
               "tgb200-nemotronh-56b-fp8cs-64g",
               "tr-tpu7x-llama3.1-405b-8k-fp8-256",
               "tt-gb200-nvfp4doc-8b-4g-mxfp8",
               "tt-h100-dec24-405b-512g-3d-1f1b-fp8",
               "tt-h100-dec24-405b-512g-3d-i1f1b-fp8",
               "tt-h100-dec24-405b-512g-4d-cp1-s32k-fp8",
               "tt-h100-dec24-70b-256g-fp8",
               "tt-h100-dec24-70b-256g-fp8-asynctp",
               "tt-h100-dec24-8b-128g-compile-fp8",
               "tt-h100-dec24-8b-8g-compile-fp8",
               "tt-h100-dec24-8b-8g-cp1-s32k-fp8",
               "tt-h100-dec24-8b-8g-cp2-s64k-fp8",
               "tt-h100-jun25-70b-fp8tensorwise-asynctp",
               "tt-h100-jun25-70b-fp8tensorwise-vanilla",
               "tt-pr1319-l3-70b-h100-256g-fp8rowwise-autofilter-tp8",
               "tt-pr808-l3-8b-h100-8g-fp8-rowwise-compile",
               "tt-pr812-l3-8b-h100-8g-fp8-tensorwise-compile",
               "tt-pr820-l3-8b-h100-8g-fp8-rowwise-compile-sac",
               "tt-pr833-l3-8b-h100-8g-fp8-ag-compile",
               "vsnv4-b200-8g-llama3-8b-fp8ds",
               "vsnv4-b200-8g-llama3-8b-mxfp8",
               "vsnv4-b200-8g-llama3-8b-nvfp4"}




def _params(runs, marked, reason, mark_if_in):
    """One pytest.param per run, a strict xfail where the run is (mark_if_in) or is not in `marked`."""
    return [pytest.param(r, id=r.id, marks=[pytest.mark.xfail(strict=True, reason=reason)]
                         if (r.id in marked) == mark_if_in else []) for r in runs]


@pytest.mark.parametrize("run", _params(MOE_RUNS, MOE_NOT_FIT, "predicted not to fit", True)
                         + _params(LOWP_RUNS, LOWP_NOT_FIT, "predicted not to fit", True))
def test_published_run_of_the_recipe_tables_fits(run):
    assert _published(run)[1]["fits"]


@pytest.mark.parametrize("run", _params(MOE_RUNS, MOE_WITHIN, "outside 15 %", False)
                         + _params(LOWP_RUNS, LOWP_WITHIN, "outside 15 %", False))
def test_published_run_of_the_recipe_tables_within_15_percent(run):
    assert _published(run)[0] == pytest.approx(1.0, abs=0.15)


# --- the recipe tables' spread is the interval of MoE and low-precision rows ----------------------------------------
def test_recipe_intervals_are_the_tables_spread():
    """data/recipe_intervals.csv is reproducible: the 10th–90th percentiles of measured / predicted step over each recipe
    table's runs, as core.validation.recipe_intervals computes them now (bench/bench_recipes.py --write rewrites it)."""
    import csv
    with open(Path(__file__).resolve().parent.parent / "data" / "recipe_intervals.csv", newline="") as fh:
        stored = {(r["framework"], r["kind"]): r for r in csv.DictReader(fh)}
    for want in V.recipe_intervals():
        got = stored[(want["framework"], want["kind"])]
        assert float(got["interval_low"]) == pytest.approx(want["interval_low"], abs=1e-3)
        assert float(got["interval_high"]) == pytest.approx(want["interval_high"], abs=1e-3)
        assert int(got["runs"]) == want["runs"]


# moe/megatron: an xfail until 2026-12-05 (the GPT-OSS rows, 1.07-1.62x of one Megatron-Bridge source, lay outside
# what the other sources gave); with the Primus MoE package and DeepSeek-V3 rows joined, its sources span them
# lowp/fsdp: 67.9 % after the fifteenth batch's refit (2026-12-06: the interval factor fitted on the dense profiles fell
# 1.05 -> 1.00 and fsdp's host time per unit 0.7 -> 0.0 ms), a strict xfail until the sixteenth batch (its 59 runs
# from 12 sources, fsdp's host time per unit 0.7 ms again) brought it back to 75 %
@pytest.mark.parametrize("kind,fw", [("lowp", "fsdp"), ("lowp", "megatron"), ("moe", "megatron")])
def test_recipe_interval_covers_an_unseen_source(kind, fw):
    """A recipe table's interval, rebuilt without each of its sources, covers 70-90 % of the left-out sources' runs
    pooled (runs weighted equally; nested leave-one-source-out, bench/bench_recipes.py; the widening factor was fitted
    on the dense profiles, not here)."""
    sys_path = str(Path(__file__).resolve().parent.parent / "bench")
    import sys
    if sys_path not in sys.path:
        sys.path.insert(0, sys_path)
    import bench_recipes
    got = {(k, f): run_cov for k, f, _, _, run_cov in bench_recipes.nested_recipe_coverage()}
    assert 0.70 <= got[(kind, fw)] <= 0.90, got


def test_an_moe_and_a_low_precision_row_carry_their_tables_interval():
    """A Megatron MoE row's 80 % interval is the MoE table's spread (its runs run up to 1.5× the prediction: GPT-OSS),
    a low-precision dense row's the low-precision table's, each log-bound × (1 + interval_slope · u) for the row's
    overhead share u as a dense row's (core/intervals.py); a dense bf16 row keeps the profile's."""
    from core.intervals import interval_slope, recipe_interval_rows
    moe = estimate(config_from_inputs(model="mixtral-8x7b", n_gpus=16, ep=8, mfu="auto"))
    lowp = estimate(config_from_inputs(model="llama-3.1-8b", gpu="b200", n_gpus=8, fp8_recipe="mxfp8", mfu="auto"))
    for rec, kind in ((moe, "moe"), (lowp, "lowp")):
        lo, hi = recipe_interval_rows()[("megatron", kind)]
        k = 1.0 + interval_slope() * (1.0 - rec["compute_s"] / rec["predicted_step_time_s"])
        assert rec["predicted_step_time_low_s"] / rec["predicted_step_time_s"] == pytest.approx(min(lo, 1.0) ** k)
        assert rec["predicted_step_time_high_s"] / rec["predicted_step_time_s"] == pytest.approx(max(hi, 1.0) ** k)
    assert recipe_interval_rows()[("megatron", "moe")][1] > 1.25  # wider than the widened dense floor


# --- low-precision memory against Transformer Engine's and torchao's published figures --------------------------------
def test_fp8_weight_copies_per_parameter_as_transformer_engine_states():
    """NVIDIA/TransformerEngine #1880 and #1261 (TE maintainers): tensor-wise fp8 keeps the fp8 weight and its transpose
    on Hopper (2 bytes per parameter: its fp8 tensor cores take TN GEMMs only), 1 byte on Blackwell; MXFP8 needs 2
    bytes per parameter (row- and column-wise scaling formats; the E8M0 scales add 1/32 each)."""
    def per_param(gpu, recipe):
        r = estimate(config_from_inputs(model="llama-3.1-8b", gpu=gpu, n_gpus=8, fp8_recipe=recipe))
        return r["lowp_weights_bytes"] / (r["weights_bytes"] / 2.0)  # bf16 weights: 2 bytes per local parameter
    assert per_param("h100-sxm", "delayed") == pytest.approx(2.0)
    assert per_param("h100-sxm", "current") == pytest.approx(2.0)
    assert per_param("b200", "delayed") == pytest.approx(1.0)
    assert per_param("b200", "mxfp8") == pytest.approx(2.0, rel=0.04)


def test_fp8_linear_layers_save_their_inputs_in_fp8():
    """TE #1764 (maintainer): a linear layer caches its input in fp8 for the weight gradient ('the FP8 data on
    Blackwell, the FP8 transpose data on Hopper'), half the bytes of a 16-bit input; with flash attention the output
    projection's fp8 copy sits beside the kernel's 16-bit O. torchao's tensorwise and rowwise runs peak at the same
    memory (pytorch/ao #4101: 69.6 and 70.1 GiB), as they do here on H100 (same weights, same saved inputs)."""
    from core.memory import ledger
    c = lambda r: config_from_inputs(model="llama-3.1-8b", n_gpus=8, fp8_recipe=r).columns()  # noqa: E731
    bf, f8 = ledger(c("none"), tp=1), ledger(c("delayed"), tp=1)
    for t in ("qkv_input", "mlp_input", "mlp_hidden"):
        assert float(f8[t]) == pytest.approx(float(bf[t]) / 2), t
    assert float(f8["attn_output"]) == pytest.approx(1.5 * float(bf["attn_output"]))
    for t in ("gate", "up", "q", "k", "v", "norm1_input"):  # what is not a linear layer's saved input stays 16-bit
        assert float(f8[t]) == pytest.approx(float(bf[t])), t
    base = dict(model="llama-3.1-8b", n_gpus=8, seq_len=16384)
    tw = estimate(config_from_inputs(**base, fp8_recipe="current"))
    rw = estimate(config_from_inputs(**base, fp8_recipe="rowwise"))
    assert rw["total_bytes"] == pytest.approx(tw["total_bytes"], rel=0.01)
    assert tw["activations_bytes"] < estimate(config_from_inputs(**base))["activations_bytes"]
