"""Issue 18: where a framework's own memory figure is published for a run, the ledger within 5 % of it.

stas00/ml-engineering insights/when-to-upgrade-gpus/README.md ("Does the bigger GPU unlock configs…"): Llama-3.1-8B,
DeepSpeed ZeRO-3, Liger-Kernel, activation checkpointing, CPU AdamW offload, micro-batch 1 on 8 H200; peak
`max_memory_reserved` (worst rank) per sequence length, in GiB. The ledger, with DeepSpeed's gradient reduce bucket
(5e8 elements), is 9 % low from 64K tokens and 32 % low at 8K (the source's 12.6 GiB floor of ZeRO-3 shards and
buffers is ~7.7 GiB here; what `max_memory_reserved` holds beyond the allocations is not in the ledger): strict xfails,
so that a ledger that closes the gap shows.
"""
import pytest

from core.estimate import config_from_inputs, estimate
from core.validation import runs

PEAK_GIB = {8192: 16.3, 32768: 25.8, 65536: 37.5, 131072: 66.5, 196608: 95.7, 262144: 124.5}
RUNS = {r.inputs["seq_len"]: r for r in runs("deepspeed")
        if r.group == "ml-engineering GPU upgrade" and r.gpu == "h200" and r.inputs["seq_len"] in PEAK_GIB
        and r.inputs.get("offload") not in (None, "none")}


@pytest.mark.parametrize("seq", sorted(PEAK_GIB))
@pytest.mark.xfail(strict=True, reason="the ledger is 9–32 % below this published peak (module docstring)")
def test_ledger_within_5_percent_of_the_published_peak(seq):
    run = RUNS[seq]
    rec = estimate(config_from_inputs(**{**run.inputs, "mfu": "auto"}))
    assert rec["total_bytes"] / 2**30 == pytest.approx(PEAK_GIB[seq], rel=0.05)


def test_the_series_is_the_published_one():
    assert sorted(RUNS) == sorted(PEAK_GIB)
