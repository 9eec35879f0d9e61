"""Per-op SAC with or without the MoE all-to-alls in its save list (input `sac_saves_all_to_all`, core/recompute.py
OP_SAC_MOE): torchtitan's save list has held all_to_all_single since PR #1672 (2025-09-06) for DeepSeek-V3 and Llama 4,
and for every model since PR #2357 (2026-03-23); Qwen3's list had none before. Without it the backward keeps neither
the dispatched nor the combined tokens and reruns both all-to-alls."""
import subprocess
import sys

import pytest

from core import memory as M
from core import validation as V
from core.estimate import config_from_inputs, estimate

# the xiao-hu/torchtitan fork's EP 8 run of Qwen3-30B-A3B on 8 H200 (data/published_runs_moe.csv): printed peak
# 115.41 GiB reserved
BASE = dict(model="qwen3-30b-a3b", gpu="h200", n_gpus=8, framework="fsdp", zero_stage=3, tp=1, ep=8,
            micro_batch=6, global_batch=48, seq_len=8192, recompute="selective", compile=True, mfu="auto")


def _rec(**kw):
    return estimate(config_from_inputs(**{**BASE, **kw}))


def test_without_it_the_gathered_tokens_are_not_kept():
    """Per layer, exactly the dispatched tokens (expert_inputs) and the combined ones (expert_outputs) of the layer
    ledger go (every layer of Qwen3-30B-A3B is an MoE layer)."""
    saved, rerun = _rec(), _rec(sac_saves_all_to_all=False)
    led = M.ledger(config_from_inputs(**BASE).columns())
    gone = float(led["expert_inputs"]) + float(led["expert_outputs"])
    assert gone > 0
    assert saved["activations_per_layer_bytes"] - rerun["activations_per_layer_bytes"] == pytest.approx(gone, rel=1e-9)
    assert rerun["total_bytes"] < saved["total_bytes"]


def test_without_it_the_backward_reruns_dispatch_and_combine():
    """The forward's two all-to-alls and the backward's two, plus the two the recompute reruns: 6/4 of the
    all-to-all time, and never a shorter step."""
    saved, rerun = _rec(), _rec(sac_saves_all_to_all=False)
    assert rerun["ep_comm_s"] == pytest.approx(1.5 * saved["ep_comm_s"], rel=1e-9)
    assert rerun["predicted_step_time_s"] > saved["predicted_step_time_s"]


def test_at_ep_1_nothing_more_reruns():
    """At ep 1 per-op SAC reruns no all-to-all and no expert-TP gather (etp = tp 4 here): the expert-parallel time is
    what it is without recompute."""
    one = dict(ep=1, tp=4, micro_batch=2, global_batch=4)
    assert _rec(**one)["ep_comm_s"] > 0
    assert _rec(**one)["ep_comm_s"] == pytest.approx(_rec(**one, recompute="none")["ep_comm_s"], rel=1e-12)


def test_without_it_a_layer_keeps_what_it_keeps_at_ep_1():
    """At ep 1 the tokens reach the experts by a gather, which per-op SAC reruns: the layer keeps the same as with
    expert parallelism and no all-to-all in the save list."""
    assert _rec(ep=1)["activations_per_layer_bytes"] == pytest.approx(
        _rec(sac_saves_all_to_all=False)["activations_per_layer_bytes"], rel=1e-12)
    assert _rec(ep=1)["activations_per_layer_bytes"] < _rec()["activations_per_layer_bytes"]


@pytest.mark.parametrize("over,why", [
    (dict(recompute="full"), "recompute selective"),
    (dict(ep=1), "ep > 1"),
    (dict(framework="megatron", zero_stage=1), "op_sac"),
])
def test_false_is_refused_where_there_is_no_all_to_all_output_to_save(over, why):
    with pytest.raises(ValueError, match=r"^sac_saves_all_to_all: false applies to recompute selective under per-op "
                                         r"SAC \(a profile whose selective is op_sac: fsdp\)"):
        _rec(**over, sac_saves_all_to_all=False)


def test_the_published_runs_that_state_it_fit():
    """Five rows state it: the fork's four selective runs, which fit with it (printed peaks 115-117 GiB of 139.8)
    and not without (178-301 GiB), and torchtitan PR #1610's DeepSeek-V3 16B, predicted not to fit either way
    (tests/test_recipes.py MOE_NOT_FIT)."""
    runs = [r for r in V.read("data/published_runs_moe.csv") if r.inputs.get("sac_saves_all_to_all") is False]
    assert len(runs) == 5
    for r in runs:
        if r.id.startswith("xhtt-"):
            assert estimate(config_from_inputs(**{**r.inputs, "mfu": "auto"}))["fits"], r.id
            assert not estimate(config_from_inputs(**{**r.inputs, "mfu": "auto", "sac_saves_all_to_all": True}))[
                "fits"], r.id


def test_the_cli_takes_it_and_names_the_field_when_refused():
    args = [sys.executable, "-m", "core", "estimate", "--model", "qwen3-30b-a3b", "--gpu", "h200", "--n-gpus", "8",
            "--framework", "torchtitan", "--zero-stage", "3", "--ep", "8", "--micro-batch", "6", "--global-batch", "48",
            "--seq-len", "8192", "--recompute", "selective", "--no-sac-saves-all-to-all"]
    ok = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run(args + ["--recompute", "full"], capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "sac_saves_all_to_all" in bad.stderr and "Traceback" not in bad.stderr
