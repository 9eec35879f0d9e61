"""Issue 16 item 7: every input the core cannot honour is refused by name — in `plan` as in `estimate`, ranks and
fractions bounded by what they mean, overflowing results refused, config.json fields the import cannot express named,
numbers ASCII, a custom accelerator's link bandwidths taken or defaulted with a note. Each case of the probe's list
is a clear error (one line, the field first, exit status 2), never a plausible wrong number."""
from __future__ import annotations

import json
import warnings

import pytest

from core.cli import main
from core.estimate import config_from_inputs, estimate
from core.model import from_hf_config
from core.plan import plan
from core.units import parse_number

from test_one_answer import page  # the one AppTest opener (tests/ is on the path, as for rendered)


def cli(capsys, *argv) -> tuple[int, str, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning (overflow) is a failure too
        rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def refused(capsys, starts: str, *argv) -> str:
    rc, out, err = cli(capsys, *argv)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2, (out, err)
    assert lines and lines[0].startswith(starts), err
    assert len(lines) <= 2 and (len(lines) == 1 or lines[1].endswith("--help`)")), err
    assert "Traceback" not in err and out == ""
    return lines[0]


PLAN = ("plan", "--model", "llama-3.1-8b", "--n-gpus", "8", "--global-batch", "64")


def test_plan_refuses_a_zero_stage_that_does_not_exist(capsys):
    refused(capsys, "error: zero_stage: must be one of 0, 1, 2, 3", *PLAN, "--zero-stage", "5")


@pytest.mark.parametrize("flag, value, field", [("--pp", "1000", "tp·pp"), ("--tp", "3", "tp·pp")])
def test_plan_names_the_pinned_input_no_layout_can_take(capsys, flag, value, field):
    line = refused(capsys, f"error: {field}: ", *PLAN, flag, value)
    assert f"pinned: {flag[2:]}={value}" in line and "refuse all" in line


def test_plan_pinned_tp_on_a_model_whose_heads_it_does_not_divide():
    with pytest.raises(ValueError, match=r"^tp: does not divide n_heads .*pinned: tp=3"):
        plan({"model": "llama-3.1-8b", "global_batch": 64}, (12,), fixed={"tp": 3})


def test_lora_rank_is_bounded_by_the_width_of_what_it_adapts(capsys):
    line = refused(capsys, "error: lora_rank: above the narrowest width", "estimate", "--model", "llama-3.1-8b",
                   "--training", "lora", "--lora-rank", "1048576")
    assert "lora_rank=1,048,576" in line and "1,024 wide" in line  # Llama-3.1-8B's W_v: 8 KV heads × 128
    rec = estimate(config_from_inputs(model="llama-3.1-8b", training="lora", lora_rank=1024, lora_targets="all"))
    assert rec["valid"] and rec["n_trainable_params"] < rec["n_params"]


def test_a_frozen_share_must_leave_a_trainable_parameter(capsys):
    refused(capsys, "error: frozen_frac: leaves less than one trainable parameter", "estimate", "--model",
            "llama-3.1-8b", "--frozen-frac", "0.9999999999")


def test_a_throughput_near_zero_is_an_error_not_inf_hours(capsys):
    refused(capsys, "error: time_s: the run's time overflows", "estimate", "--model", "llama-3.1-8b",
            "--tokens-per-second", "1e-300")


def test_an_achieved_flops_above_the_peak_says_so_in_flops(capsys):
    line = refused(capsys, "error: measurement: the measured throughput would need more than 100 %", "estimate",
                   "--model", "llama-3.1-8b", "--achieved-flops-per-s", "1e18")
    assert "achieved_flops_per_s 1e+18 FLOP/s per GPU is above" in line
    assert "nan" not in line and "989.5 TFLOP/s" in line


def test_a_llama_config_with_experts_is_refused_by_the_field(tmp_path, capsys):
    p = tmp_path / "config.json"
    p.write_text(json.dumps({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
                             "num_hidden_layers": 32, "vocab_size": 32000, "intermediate_size": 14336,
                             "num_local_experts": 8, "num_experts_per_tok": 2}))
    refused(capsys, "error: config: field 'num_local_experts' = 8 is not read for model_type 'llama'", "estimate",
            "--hf-config", str(p))
    # "off" values of a structural field are no model change: a dense config that says num_local_experts 1 loads
    cfg = json.loads(p.read_text())
    cfg.update(num_local_experts=1, num_experts_per_tok=1)
    assert from_hf_config(cfg).n_experts == 1


@pytest.mark.parametrize("text", ["٤٠٩٦", "４０９６", "4096\u0660", "1_024", "inf", "nan"])
def test_numbers_are_ascii(capsys, text):
    refused(capsys, "error: seq_len: expected a number (ASCII digits)", "estimate", "--seq-len", text)
    with pytest.raises(ValueError, match="^x: expected a number"):
        parse_number(text, "x")


def test_gpu_counts_are_ascii_too(capsys):
    refused(capsys, "error: n_gpus: expected whole numbers", *PLAN[:3], "--n-gpus", "٨", "--global-batch", "64")


def test_custom_accelerator_plans_with_defaulted_links_and_says_so(capsys):
    custom = ("--gpu", "custom", "--peak-flops-per-s", "1e15", "--gpu-memory-bytes", "8e10",
              "--memory-bandwidth-bytes-per-s", "3e12")
    rc, out, _ = cli(capsys, *PLAN, *custom)
    assert rc == 0 and "layouts searched" in out and " fit " in out
    rc, out, _ = cli(capsys, "estimate", "--model", "llama-3.1-8b", "--mfu", "auto", *custom)
    assert rc == 0 and "link bandwidths not given" in out and "h100-sxm" in out
    # typed links are taken, and change the predicted step of a layout that communicates
    base = dict(model="llama-3.1-8b", gpu="custom", peak_flops_per_s=1e15, gpu_memory_bytes=8e10,
                memory_bandwidth_bytes_per_s=3e12, n_gpus=16, zero_stage=3, mfu="auto", global_batch=16)
    slow = estimate(config_from_inputs(**base, inter_node_bytes_per_s=1e9))
    fast = estimate(config_from_inputs(**base))
    assert slow["dp_comm_s"] > fast["dp_comm_s"] > 0


def test_a_range_error_is_one_line_and_a_pointer(capsys):
    rc, out, err = cli(capsys, "estimate", "--seq-len", "0")
    assert rc == 2 and err.splitlines() == ["error: seq_len: must be from 1 to 2.14748e+09 (count (tokens)), got '0'",
                                            "(see `python -m core estimate --help`)"]


@pytest.mark.parametrize("flag,value,field", [("--lora-rank", "1048576", "lora_rank"),
                                              ("--frozen-frac", "0.9999999999", "frozen_frac")])
def test_plan_names_a_fixed_input_it_cannot_honour_not_a_layout_reason(capsys, flag, value, field):
    """The search gives each layout only its first failing reason, so `plan` checks the inputs it does not vary
    first: the LoRA rank or the frozen share is named, not 'tp·pp: does not divide n_gpus'."""
    extra = ("--training", "lora") if field == "lora_rank" else ()
    line = refused(capsys, f"error: {field}: ", *PLAN, *extra, flag, value)
    assert "tp·pp" not in line


@pytest.mark.parametrize("text", ["٤٠٩٦", "２０４８", "४०९६"])
def test_link_values_and_filters_are_ascii_numbers(text):
    from ui.state import Spec
    from ui.sweeps import parse_filter
    with pytest.raises(ValueError, match="ASCII digits"):
        Spec("seq", "int", 4096, lo=1, hi=10**7).parse([text])
    with pytest.raises(ValueError, match="^seq_len: .* is not a number \\(ASCII digits\\)"):
        parse_filter("seq_len", "in", f"{text},2048", {"seq_len": "INTEGER"})
    assert Spec("seq", "int", 4096, lo=1, hi=10**7).parse(["2048"]) == 2048


def test_a_link_with_a_non_ascii_number_sets_nothing_and_says_so():
    at = page("pages/01_calculator.py", seq="٢٠٤٨")
    notes = " ".join(x.value for x in [*at.warning, *at.info, *at.error, *at.caption, *at.markdown])
    assert "seq" in notes and "ASCII" in notes
    assert 2048 not in [w.value for w in at.number_input]


def test_a_large_layout_link_waits_for_its_button():
    """Issue 16 item 1 on the Parallel layout page: the worst link of the probe (a 235B MoE on 65,536 GPUs) shows the
    search's estimate and a button, and runs no search until the click."""
    at = page("pages/08_parallel_layout.py", pl_model="qwen3-235b-a22b", pl_gpus="65536", pl_gbs="65536")
    info = " ".join(x.value for x in at.info)
    assert "layout search" in info and "click" in info
    assert [b for b in at.button if b.key == "pl_run"]
    assert not [m for m in at.metric if m.label == "Predicted step"]  # nothing ran


def test_a_visitors_link_budget_is_spent_then_small_searches_wait(monkeypatch):
    from ui import work
    monkeypatch.setattr(work, "LINK_BUDGET_S", 0.0)  # a visitor who has used the budget already
    at = page("pages/08_parallel_layout.py", pl_model="llama-3.2-1b", pl_gpus="8")
    assert any("used its" in x.value for x in at.info)
    assert not [m for m in at.metric if m.label == "Predicted step"]


def test_the_custom_accelerator_ranks_layouts_on_the_parallel_layoutpage():
    at = page("pages/08_parallel_layout.py", pl_model="llama-3.2-1b", pl_gpu="custom", pl_gpus="8")
    assert not at.error, [e.value for e in at.error]
    assert [m for m in at.metric if m.label == "Predicted step"]
