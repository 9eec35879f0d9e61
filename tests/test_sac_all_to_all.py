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
    and not without, and torchtitan PR #1610's DeepSeek-V3 16B (printed 78 GiB of 95), which fits since the MoE
    layer drops what per-op SAC does not save (test_an_moe_layer_keeps_the_outputs_of_the_save_list_alone)."""
    runs = [r for r in V.read("data/published_runs_moe.csv") if r.inputs.get("sac_saves_all_to_all") is False]
    assert len(runs) == 5
    for r in runs:
        assert estimate(config_from_inputs(**{**r.inputs, "mfu": "auto"}))["fits"], r.id
        if r.id.startswith("xhtt-"):
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


def test_an_moe_layer_keeps_the_outputs_of_the_save_list_alone():
    """torchtitan's per-op SAC keeps a layer's input and the outputs of the ops in its save list, nothing else
    (activation_checkpoint.py _get_default_save_ops @b5bcd76): in a Qwen3-30B-A3B layer the queries (wq, the first mm),
    the values (wv, the third) and SDPA's output; the router's mm is forced to recompute, the experts' torch._grouped_mm
    is not in the list, and neither is the routing-weight multiply or the residual add the second norm reads. So with
    the all-to-alls not saved (as at ep 1) a layer keeps x, q, v and O, T·(h + a·d_h + k·d_h + a·d_h)·2 bytes, plus the
    fp32 statistics and router probabilities (under 4 % here)."""
    T, h, q, kv = 6 * 8192, 2048, 32 * 128, 4 * 128
    x_q_v_o = 2.0 * T * (h + q + kv + q)
    rec = _rec(sac_saves_all_to_all=False)
    assert rec["activations_per_layer_bytes"] == pytest.approx(x_q_v_o, rel=0.04)
    assert rec["activations_per_layer_bytes"] > x_q_v_o


def test_a_shared_expert_keeps_its_two_saved_mms():
    """With a shared expert (DeepSeek-V3 16B, as torchtitan PR #1610 ran it, eager) the shared FeedForward's w1 (the
    fifth mm) and w2 (the seventh) are saved and w3 reruns: one of the four d_ff-wide tensors eager PyTorch keeps,
    and w2's h-wide output, which the ledger counts where a dense layer's stands (norm2_input)."""
    run = next(r for r in V.read("data/published_runs_moe.csv") if r.id == "tt-pr1610-dsv3-16b-h100-8g-ep8-sdpa")
    c = config_from_inputs(**{**run.inputs, "mfu": "auto"})
    from core.estimate import recompute_policy
    drop = recompute_policy(c.columns(), 1.0)["drop"]
    assert float(drop["shared_experts"]) == 0.75 and float(drop.get("norm2_input", 0.0)) == 0.0
    assert float(drop["moe_weighted_outputs"]) == 1.0
    T, fs = 8 * 4096, 2 * 1408
    assert float(M.ledger(c.columns())["shared_experts"]) * 0.25 == pytest.approx(2.0 * T * fs, rel=1e-12)
    # without shared experts the residual add's output is not kept in an MoE layer
    assert float(recompute_policy(config_from_inputs(**BASE).columns(), 1.0)["drop"]["norm2_input"]) == 1.0


def test_a_shared_expert_reruns_only_its_unsaved_mms():
    """The time side of the same save list: the backward reruns the routed experts' GEMMs whole and of the shared
    expert only w3 (half of its input GEMMs); where the mm count shifts (MLA with a query down-projection, `no_w2`) w1
    and w2 rerun (half of the input GEMMs and the output GEMM). Megatron's shared_experts module reruns the shared
    experts' forward (before, their GEMMs were in mlp_in with the routed experts' and the module cost no time)."""
    from core import recompute as RC
    rerun = lambda no_w2, **kw: RC.columns(kw.get("r", "selective"), kw.get("m", ""), "none", kw.get("s", "op_sac"),
                                           1.0, local=False, no_w2=no_w2)["rerun"]
    sac, shifted = rerun(False), rerun(True)
    assert (float(sac["mlp_in"]), float(sac["mlp_out"])) == (1.0, 1.0)
    assert (float(sac["shared_in"]), float(sac["shared_out"])) == (0.5, 0.0)
    assert (float(shifted["shared_in"]), float(shifted["shared_out"])) == (0.5, 1.0)
    mod = rerun(False, m="shared_experts", s="core_attn")
    assert (float(mod["shared_in"]), float(mod["shared_out"]), float(mod["mlp_in"])) == (1.0, 1.0, 0.0)
    whole = rerun(False, m="moe", s="core_attn")  # the whole MoE layer: the shared experts with the routed ones
    assert float(whole["shared_in"]) == float(whole["mlp_in"]) == 1.0
    # in the step: adding the module to PR #1610's DeepSeek-V3 16B under Megatron's names costs recompute time
    run = next(r for r in V.read("data/published_runs_moe.csv") if r.id == "tt-pr1610-dsv3-16b-h100-8g-ep8-sdpa")
    base = {**{k: v for k, v in run.inputs.items() if k != "sac_saves_all_to_all"}, "framework": "megatron",
            "recompute": "selective", "mfu": "auto"}
    t = lambda mods: float(estimate(config_from_inputs(**base, recompute_modules=mods))["recompute_s"])
    assert t("layernorm,moe_act,shared_experts") > t("layernorm,moe_act") > 0.0
    # where dense and MoE layers mix (half of each: Llama 4 Maverick's pattern) the shared experts' components count
    # over the MoE layers alone whatever the unit's scope (the step model's shared_in is their average over the
    # layers already): not moe_share² of them
    half = lambda m, s: RC.columns("selective", m, "none", s, 0.5, local=False, no_w2=False)["rerun"]
    assert float(half("shared_experts", "core_attn")["shared_in"]) == 1.0
    assert float(half("", "op_sac")["shared_in"]) == 0.5 and float(half("mlp", "core_attn")["shared_in"]) == 0.0


def test_per_op_sac_reruns_less_of_the_shared_expert_in_the_step(monkeypatch):
    """The step reads the save list's shares: PR #1610's row under per-op SAC reruns less than it would rerunning its
    shared experts with the routed ones (the default a unit without its own `shared` takes), by the saved w1 and w2;
    and on DeepSeek-V3 (MLA with a query down-projection: the shifted count, `no_w2`) more than where w2 were saved."""
    import dataclasses
    from core import recompute as RC
    run = next(r for r in V.read("data/published_runs_moe.csv") if r.id == "tt-pr1610-dsv3-16b-h100-8g-ep8-sdpa")
    rec = lambda **kw: float(estimate(config_from_inputs(**{**run.inputs, "mfu": "auto", **kw}))["recompute_s"])
    saved = rec()
    op_sac, moe_unit = RC.SELECTIVE_DEFAULTS["op_sac"]
    monkeypatch.setitem(RC.SELECTIVE_DEFAULTS, "op_sac", (op_sac, dataclasses.replace(moe_unit, shared=None)))
    assert rec() > saved * 1.02
    monkeypatch.undo()
    dsv3 = dict(model="deepseek-v3", gpu="h100-sxm", n_gpus=256, ep=8, pp=16, framework="fsdp", zero_stage=3,
                micro_batch=1, seq_len=4096, global_batch=256, recompute="selective", mfu="auto")
    shifted = float(estimate(config_from_inputs(**dsv3))["recompute_s"])
    monkeypatch.setattr(RC, "shared_w2_not_saved", lambda *a, **k: False)
    assert float(estimate(config_from_inputs(**dsv3))["recompute_s"]) < shifted


# torchtitan's printed `memory:` (max reserved, GiB) of the per-op SAC MoE rows that print one, and the ledger's total
# (with its fragmentation allowance) within 15 % of each; before the routing-weight multiply, the residual add and
# three of the shared expert's four tensors were dropped the ledger read +6 % to +41 % (tt-pr1610: 110 GiB of 89)
PRINTED_RESERVED_GIB = {
    "pith79-tt-qwen3-30b-a3b-b200-fsdp8-mbs8-s8192": 141.79,
    "tt-pr1610-dsv3-16b-h100-8g-ep8-sdpa": 78.14,
    "tt-pr2679-qwen3-30b-a3b-h100-8g-ep8-compile": 78.57,
    "xhtt-h200-qwen3-30b-a3b-ep8-lbs6-s8k-sac-compile": 115.41,
}


@pytest.mark.parametrize("rid", sorted(PRINTED_RESERVED_GIB))
def test_the_printed_peaks_of_per_op_sac_moe_runs(rid):
    run = next(r for r in V.read("data/published_runs_moe.csv") if r.id == rid)
    assert f"{PRINTED_RESERVED_GIB[rid]:.2f}" in run.note.replace(",", "")
    rec = estimate(config_from_inputs(**{**run.inputs, "mfu": "auto"}))
    assert rec["total_bytes"] / 2**30 == pytest.approx(PRINTED_RESERVED_GIB[rid], rel=0.15)


def test_saving_the_all_to_alls_costs_what_pr_1672_printed():
    """torchtitan PR #1672's own logs (DeepSeek-V3 16B, EP 4, H100 80 GB): 'memory: 70.02GiB' at step 10 without
    all_to_all_single in the save list, 74.53 GiB with it (and the device-to-host _to_copy, a few bytes): +4.51 GiB.
    Their timestamps give 4,096 tokens per rank and step (9 steps in 45.9 s at 803 tokens/s per rank; 52.1 s at 708
    before), so the layout is one sequence of 4,096 per rank; the GPU count is not printed (it sets the state, not the
    difference). The ledger's difference, the two all-to-alls' outputs of 26 MoE layers, within 25 % of it."""
    run = next(r for r in V.read("data/published_runs_moe.csv") if r.id == "tt-pr1610-dsv3-16b-h100-8g-ep8-sdpa")
    kw = {**run.inputs, "mfu": "auto", "gpu": "h100-sxm", "ep": 4, "micro_batch": 1, "global_batch": 8}
    saved, rerun = (estimate(config_from_inputs(**{**kw, "sac_saves_all_to_all": s})) for s in (True, False))
    assert (saved["total_bytes"] - rerun["total_bytes"]) / 2**30 == pytest.approx(74.53 - 70.02, rel=0.25)
