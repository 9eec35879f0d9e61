"""Limits are exact boundaries (fits at the limit, not one past it); the advisor's change makes the setup fit; the
accelerator catalog carries every row of shared/reference/hardware.md with a source."""
from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from core.advisor import advise
from core.estimate import config_from_inputs, estimate
from core.hardware import catalog, get_accelerator
from core.limits import limits, max_micro_batch, max_n_layers, max_n_params, max_seq_len, min_gpus
from core.units import GB, GiB

ROOT = Path(__file__).resolve().parents[1]
CASES = [
    dict(model="llama-3.1-8b", n_gpus=8, zero_stage=3, flash_attention=True),
    dict(model="llama-2-7b", n_gpus=8, zero_stage=1, recompute="selective"),
    dict(model="gpt-3-1.3b", gpu="rtx-4090", master_weights=False),
    dict(model="llama-3.1-70b", n_gpus=64, tp=8, zero_stage=1, sequence_parallel=True, flash_attention=True),
]


def fits(cfg, **kw):
    return estimate(cfg.replace(**kw))["fits"]


@pytest.mark.parametrize("kw", CASES)
def test_max_seq_len_is_the_boundary(kw):
    cfg = config_from_inputs(conventions="paper", **kw)
    s = max_seq_len(cfg)
    assert s > 0 and fits(cfg, seq_len=s) and not fits(cfg, seq_len=s + 1)


def test_a_limit_keeps_the_counted_overhead_free():
    """With the realistic overhead a limit is where the total with the allocator's fragmentation still fits
    (headroom ≥ 0): one step further the run fits only tightly, or not at all (Llama 3.1 8B on 8 H100, selective)."""
    cfg = config_from_inputs(model="llama-3.1-8b", n_gpus=8, recompute="selective")
    s = max_seq_len(cfg)
    at, past = estimate(cfg.replace(seq_len=s)), estimate(cfg.replace(seq_len=s + 1))
    assert at["fits"] and at["headroom_bytes"] >= 0 and past["headroom_bytes"] < 0
    assert past["fits"]  # tight, not over: the lean total still fits a token later


def test_a_typed_memory_overrides_the_catalogs():
    """--gpu-memory-bytes on a catalog accelerator is what the run fits against (it was ignored where the catalog
    gives a usable figure), on the CLI, in estimate and in a sweep alike."""
    rec = estimate(config_from_inputs(model="llama-3.1-8b", gpu="h100-sxm", gpu_memory_bytes=40e9))
    assert rec["gpu_memory_bytes"] == 40e9 and not rec["fits"]
    from core.sweep import Sweep, SweepSpec
    spec = SweepSpec.from_dict({"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpu_memory_bytes": [40e9, 80e9]})
    got = sorted(v for b in Sweep(spec) for v in b.column("gpu_memory_bytes").to_pylist())
    assert got == [40e9, 80e9]


@pytest.mark.parametrize("kw", CASES)
def test_max_micro_batch_is_the_boundary(kw):
    cfg = config_from_inputs(conventions="paper", **kw)
    b = max_micro_batch(cfg)
    if b:
        assert fits(cfg, micro_batch=b)
    assert not fits(cfg, micro_batch=b + 1)


@pytest.mark.parametrize("kw", CASES)
def test_min_gpus_is_the_boundary(kw):
    cfg = config_from_inputs(conventions="paper", **kw)
    for z in (1, 2, 3):
        g = min_gpus(cfg, z)
        mp = cfg.tp * cfg.pp
        if g is None:
            continue
        assert g % mp == 0 and fits(cfg, zero_stage=z, n_gpus=g)
        if g > mp:
            assert not fits(cfg, zero_stage=z, n_gpus=g - mp)


def test_min_gpus_zero0_cannot_shard():
    cfg = config_from_inputs(conventions="paper", model="llama-2-7b", n_gpus=8)
    assert min_gpus(cfg, 0) is None  # 7B · 16 bytes > 80 GB and stage 0 replicates it


def test_largest_model_of_a_shape_family():
    cfg = config_from_inputs(conventions="paper", model="llama-3.1-8b", n_gpus=8, zero_stage=3, flash_attention=True, seq_len=4096)
    L = max_n_layers(cfg)
    assert fits(cfg, n_layers=L) and not fits(cfg, n_layers=L + 1)
    n = max_n_params(cfg)
    assert n > 8e9
    ok = config_from_inputs(conventions="paper", n_params=n, n_gpus=8, zero_stage=3, flash_attention=True, seq_len=4096)
    bad = config_from_inputs(conventions="paper", n_params=n * 1.002, n_gpus=8, zero_stage=3, flash_attention=True, seq_len=4096)
    assert estimate(ok)["fits"] and not estimate(bad)["fits"]


def test_limits_record_names():
    lim = limits(config_from_inputs(conventions="paper", **CASES[0]))
    assert {"max_seq_len", "max_micro_batch", "min_gpus"} <= set(lim)


def test_advisor_names_term_and_remedy_that_fits():
    # the 1.24B exercise of CS336-style accounting at s=2048: activations doubled break the tight case
    cfg = config_from_inputs(conventions="paper", n_params=1.24e9, n_layers=16, d_model=2048, n_heads=32, vocab_size=128000,
                             seq_len=2048, gpu="custom", gpu_memory_bytes=24e9, peak_flops_per_s=165e12,
                             memory_bandwidth_bytes_per_s=1e12)
    adv = advise(cfg, margin=0.0)  # no margin: the plain fit of the exercise
    assert not adv["fits"]
    assert adv["best"]["change"] == {"flash_attention": True}  # free, and it removes the s×s matrices
    adv = advise(cfg)  # with the realistic margin, 16 bytes per parameter on a 24 GB card need more room
    assert adv["best"] is not None
    for o in adv["options"]:
        r = estimate(cfg.replace(**o["change"]))
        assert r["fits"] and r["headroom_bytes"] >= o["margin_bytes"]


def test_advisor_state_bound_suggests_sharding():
    cfg = config_from_inputs(conventions="paper", model="llama-2-7b", n_gpus=8, seq_len=1024, flash_attention=True)
    adv = advise(cfg)
    assert adv["binding"] == "state"
    assert adv["best"]["changes"][0] == "zero_stage"
    assert estimate(cfg.replace(**adv["best"]["change"]))["fits"]


def test_advisor_combines_when_one_change_is_not_enough():
    cfg = config_from_inputs(conventions="paper", model="llama-3.1-8b", seq_len=8192, n_gpus=8)
    adv = advise(cfg)
    assert len(adv["best"]["changes"]) >= 2
    assert estimate(cfg.replace(**adv["best"]["change"]))["fits"]


def test_advisor_quiet_when_it_fits():
    adv = advise(config_from_inputs(conventions="paper", model="llama-3.2-1b", seq_len=1024, flash_attention=True))
    assert adv["fits"] and adv["best"] is None


# ----- catalog ------------------------------------------------------------------------------------------------------
REFERENCE = {  # shared/reference/hardware.md: (bf16 TFLOP/s, memory GB, HBM TB/s)
    "h100-sxm": (989.5, 80, 3.35), "h100-pcie": (756, 80, 2.0), "h100-nvl": (835, 94, 3.9), "h200": (989, 141, 4.8),
    "b200": (2250, 180, 8.0), "gb200": (2500, 186, 8.0), "a100-80gb": (312, 80, 2.039), "a100-40gb": (312, 40, 1.555),
    "a100-pcie-80gb": (312, 80, 1.935), "mi300x": (1307, 192, 5.3), "mi325x": (1307, 256, 6.0),
    "l40s": (362, 48, 0.864), "l4": (121, 24, 0.300), "rtx-4090": (165, 24, 1.008), "rtx-3090": (71, 24, 0.936),
    "a10": (125, 24, 0.600), "v100-32gb": (125, 32, 0.900), "tpu-v5e": (197, 16, 0.82), "tpu-v5p": (459, 95, 2.76),
}


@pytest.mark.parametrize("name, ref", REFERENCE.items())
def test_catalog_matches_reference(name, ref):
    a = get_accelerator(name)
    assert a.peak_bf16_flops_per_s == ref[0] * 1e12
    assert a.memory_bytes == ref[1] * GB  # vendors state decimal GB
    assert a.memory_bandwidth_bytes_per_s == ref[2] * 1e12


def test_catalog_rows_have_sources_and_dated_prices():
    with open(ROOT / "data" / "accelerators.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["name"] for r in rows} == set(catalog())
    for r in rows:
        assert r["source"].strip() and r["price_source"].strip() and r["price_date"].strip(), r["name"]
        assert r["memory_unit"] in ("GB", "GiB")
        assert float(r["price_usd_per_gpu_hour"]) > 0


def test_80gb_is_not_80gib():
    """hardware.md 'Unit traps': 80 GB on the datasheet is 80e9 bytes = 74.5 GiB."""
    assert get_accelerator("h100-sxm").memory_bytes / GiB == pytest.approx(74.51, abs=0.01)


def test_fits_against_what_a_process_can_allocate():
    """Vendors' "80GB" of HBM is binary: PyTorch reports an H100 80GB's total capacity as 79.10-79.11 GiB (84.9e9 B;
    stas00/ml-engineering debug/pytorch.md, vllm-project/vllm#27508), which is what a run fits against; the vendor's
    80 GB (80e9 B) stays the catalog's memory_bytes. Every usable figure has its source and lies within a few per cent
    of the vendor's figure read in binary units (GDDR6 cards with ECC on, L4 and A10: 8-9 % below); without one, the
    vendor's figure is used."""
    h100 = get_accelerator("h100-sxm")
    assert h100.allocatable_bytes / GiB == pytest.approx(79.10, abs=0.005)
    rec = estimate(config_from_inputs(model="llama-3.1-8b", gpu="h100-sxm"))
    assert rec["gpu_memory_bytes"] == h100.allocatable_bytes == pytest.approx(84.93e9, rel=1e-3)
    for g in catalog().values():
        if math.isnan(g.usable_memory_bytes):
            assert g.allocatable_bytes == g.memory_bytes and not g.usable_source, g.name
            continue
        assert g.usable_source.strip(), g.name
        binary = g.memory_bytes / 1e9 * GiB if g.memory_unit == "GB" else g.memory_bytes
        assert 0.90 < g.usable_memory_bytes / binary <= 1.0, g.name  # GDDR6 with ECC (L4, A10): 0.91-0.93


def test_fp8_peak_missing_on_ampere_is_an_error():
    with pytest.raises(ValueError, match="fp8"):
        get_accelerator("a100-80gb").peak_flops_per_s("fp8")
    assert math.isnan(get_accelerator("a100-80gb").peak_fp8_flops_per_s)
