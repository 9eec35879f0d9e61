"""Issue 18: where a framework's own memory figure is published for a run, the ledger within 5 % of it.

stas00/ml-engineering insights/when-to-upgrade-gpus/README.md ("Does the bigger GPU unlock configs…"): Llama-3.1-8B,
DeepSpeed ZeRO-3, Liger-Kernel, activation checkpointing, CPU AdamW offload, micro-batch 1 on 8 H200; peak
`max_memory_reserved` (worst rank) per sequence length, in GiB. The ledger, with DeepSpeed's gradient reduce bucket
(5e8 elements), is 9 % low from 64K tokens and 32 % low at 8K (the source's 12.6 GiB floor of ZeRO-3 shards and
buffers is ~7.7 GiB here; what `max_memory_reserved` holds beyond the allocations is not in the ledger): strict xfails,
so that a ledger that closes the gap shows.

pytorch/torchtune README 'optimization flags' table (Llama 3.2 3B, one A100, batch 2 × 4,096 packed tokens;
data/published_runs.csv ttune-3b-a100-*), 'Peak Memory Active' per row — each technique on top of the previous one,
LoRA and QLoRA without the optimizer step in the backward (input optimizer_in_backward) and 8-bit AdamW.
"""
import re

import pytest

from core.estimate import config_from_inputs, estimate
from core.validation import runs

GiB = 2**30

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


# torchtune's table: 'Peak Memory Active' (PyTorch's peak of allocated tensors: no CUDA context, no fragmentation),
# against the ledger's allocations, total − overhead
TABLE = {r.id: r for r in runs("fsdp") if r.id.startswith("ttune-3b-a100-")}
# rows where the ledger misses the printed peak by more than 5 %, with why (strict: a ledger that closes one shows)
TABLE_MISSES = {
    # the ledger adds every part at once; without the step in the backward the real peak never holds all gradients
    # and all activations together (the gradients grow as the backward frees the activations)
    "ttune-3b-a100-ac": "+5.3 %: the ledger sums gradients and activations that never coexist",
    # no recomputation: the ledger's eager activations run 10–11 % under the printed peak
    "ttune-3b-a100-packed": "-10.1 %: eager activations without recomputation under-counted",
    "ttune-3b-a100-compile": "-11.4 %: compiled activations without recomputation under-counted",
    # torchtune's CEWithChunkedOutputLoss keeps every bf16 logits chunk and upcasts one at a time
    # (torchtune/modules/loss/ce_chunked_output_loss.py @bd2a0fc7), where the ledger's chunked_loss keeps one 4,096-
    # token chunk (Liger's fused loss): 0.98 GiB of logits missing at the in-backward rows' early-backward peak
    "ttune-3b-a100-optbwd": "-9.2 %: torchtune's chunked loss keeps every bf16 chunk; the ledger keeps one",
    "ttune-3b-a100-actoffload": "-9.4 %: as optbwd",
    "ttune-3b-a100-adamw8bit": "-21.7 %: as optbwd, and 3.8 GiB more unexplained (the README builds every row "
                               "but LoRA/QLoRA on the previous one, so the step is in the backward here too)",
    "ttune-3b-a100-lora": "-8.5 %",
    "ttune-3b-a100-qlora": "-14.5 %: QLoRA's dequantised weights in flight",
}


def _printed_peak(run) -> float:
    return float(re.search(r"Peak Memory Active ([0-9.]+) GiB", run.note).group(1))


@pytest.mark.parametrize("rid", [pytest.param(i, marks=[pytest.mark.xfail(strict=True, reason=TABLE_MISSES[i])]
                                              if i in TABLE_MISSES else []) for i in sorted(TABLE)])
def test_torchtune_table_peak_within_5_percent(rid):
    run = TABLE[rid]
    rec = estimate(config_from_inputs(**{**run.inputs, "mfu": "auto"}))
    assert (rec["total_bytes"] - rec["overhead_bytes"]) / GiB == pytest.approx(_printed_peak(run), rel=0.05)


def test_torchtune_table_is_the_published_one_and_the_in_backward_rows_say_so():
    assert {i: _printed_peak(r) for i, r in TABLE.items()} == {
        "ttune-3b-a100-packed": 60.0, "ttune-3b-a100-compile": 51.0, "ttune-3b-a100-chunkce": 42.9,
        "ttune-3b-a100-ac": 24.9, "ttune-3b-a100-optbwd": 23.1, "ttune-3b-a100-actoffload": 21.8,
        "ttune-3b-a100-adamw8bit": 17.6, "ttune-3b-a100-lora": 8.5, "ttune-3b-a100-qlora": 4.6}
    on = {i for i, r in TABLE.items() if r.inputs.get("optimizer_in_backward")}
    assert on == {"ttune-3b-a100-optbwd", "ttune-3b-a100-actoffload", "ttune-3b-a100-adamw8bit"}


def test_every_torchtune_row_within_25_percent():
    """A looser bound every row meets: the table's whole spread is −22 % to +5 % (TABLE_MISSES)."""
    for run in TABLE.values():
        rec = estimate(config_from_inputs(**{**run.inputs, "mfu": "auto"}))
        assert (rec["total_bytes"] - rec["overhead_bytes"]) / GiB == pytest.approx(_printed_peak(run), rel=0.25)
