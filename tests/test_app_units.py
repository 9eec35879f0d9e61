"""The app's pure pieces on their own: URL value parsing, chart builders (through `chart.to_dict()`), the cached
grid wrappers against the scalar estimate, the Pareto mask, the advisor's widget mapping, sweep filters, and the
shared pickers under `AppTest.from_function`."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st_
from streamlit.testing.v1 import AppTest

from core.estimate import config_from_inputs, estimate
from ui import advice, charts as K, compute as C
from ui.state import Spec, to_param

CFG = C.build_config({"model": "llama-3.1-8b", "n_gpus": 8, "seq_len": 4096, "conventions": "paper"})


# --- URL values -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec,raw,expected", [
    (Spec("seq", "int", 4096, lo=1, hi=1 << 21), ["8192"], 8192),
    (Spec("seq", "int", 4096, lo=1, hi=1 << 21), ["8192.0"], 8192),
    (Spec("mfu", "float", 0.5, lo=0, hi=1), ["0.45"], 0.45),
    (Spec("zero", "choice", 0, options=(0, 1, 2, 3)), ["3"], 3),
    (Spec("zero", "choice", 0, options=(0, 1, 2, 3)), ["03"], 3),
    (Spec("gpu", "choice", "h100-sxm", options=("h100-sxm", "h200")), ["h200"], "h200"),
    (Spec("flash", "bool", False), ["TRUE"], True),
    (Spec("accs", "multi", [], options=("a", "b")), ["a", "b"], ["a", "b"]),
    (Spec("accs", "multi", ["a"], options=("a", "b")), [""], []),  # `?accs=`: an emptied selection
    (Spec("accs", "multi", ["a"], options=("a", "b")), [], []),
    (Spec("accs", "multi", [], options=("a", "b")), ["b", "a", "b"], ["b", "a"]),  # repeated once, as the widget
    (Spec("n", "multi", [], options=(1, 2)), ["2", "", "2.0"], [2]),
    (Spec("v", "text", "", hi=5), ["abc"], "abc"),
])
def test_spec_parses_what_the_widget_takes(spec, raw, expected):
    assert spec.parse(raw) == expected


@pytest.mark.parametrize("spec,raw,reason", [
    (Spec("seq", "int", 1, lo=1, hi=100), ["abc"], "not a number"),
    (Spec("seq", "int", 1, lo=1, hi=100), ["1e400"], "finite"),
    (Spec("seq", "int", 1, lo=1, hi=100), ["nan"], "not a number"),
    (Spec("seq", "int", 1, lo=1, hi=100), ["٤"], "ASCII digits"),
    (Spec("seq", "int", 1, lo=1, hi=100), ["7.5"], "whole number"),
    (Spec("seq", "int", 1, lo=1, hi=100), ["500"], "between 1 and 100"),
    (Spec("zero", "choice", 0, options=(0, 1)), ["7"], "not one of"),
    (Spec("gpu", "choice", "a", options=("a",)), ["<script>"], "not one of"),
    (Spec("flash", "bool", False), ["yes"], "true or false"),
    (Spec("accs", "multi", [], options=("a",)), ["a", "zz"], "not one of"),
    (Spec("v", "text", "", hi=5), ["toolong"], "longer than"),
    (Spec("v", "text", "", hi=50), ["a\x00b"], "control characters"),
])
def test_spec_names_why_it_refuses(spec, raw, reason):
    with pytest.raises(ValueError, match=reason):
        spec.parse(raw)


@settings(max_examples=200, deadline=None)
@given(st_.lists(st_.text(max_size=50), min_size=1, max_size=3))
def test_spec_parse_only_ever_raises_value_error(raw):
    for spec in (Spec("a", "int", 1, lo=1, hi=10), Spec("b", "float", 1.0, lo=0, hi=1e6),
                 Spec("c", "choice", 1, options=(1, 2)), Spec("d", "bool", False),
                 Spec("e", "multi", [], options=("x",)), Spec("f", "text", "", hi=20)):
        try:
            v = spec.parse(raw)
        except ValueError:
            continue
        assert spec.accepts(v)


def test_to_param_writes_what_bind_writes():
    assert to_param(True) == "true" and to_param(3) == "3" and to_param(["a", "b"]) == ["a", "b"]
    assert float(to_param(0.45)) == 0.45


# --- compute ----------------------------------------------------------------------------------------------------
def test_grid_equals_the_scalar_estimate_point_by_point():
    """The vectorised grid (one evaluate call) and the scalar estimate agree on every cell (style item 7)."""
    df = C.fit_models_by_gpus(CFG, ("llama-3.2-1b", "llama-3.1-70b", "mixtral-8x7b"), (1, 8, 64))
    for r in df.itertuples():
        rec = estimate(C.build_config({"model": r.model, "n_gpus": r.n_gpus, "seq_len": 4096, "conventions": "paper"}))
        assert r.total_bytes == pytest.approx(rec["total_bytes"], rel=1e-12)
        assert r.fits == rec["fits"] and r.binding == rec["binding"]


def test_memory_parts_sum_to_the_total():
    rec = C.record(CFG)
    parts = C.memory_parts(rec)
    assert parts["bytes"].sum() == pytest.approx(rec["total_bytes"], rel=1e-12)
    assert parts["end_bytes"].iloc[-1] == pytest.approx(rec["total_bytes"], rel=1e-12)


def test_quadratic_crossover_is_korthikanti_34h_over_5a():
    """GPT block (Korthikanti Eq. 1): sbh·34 = 5as²b at s = 34h/(5a); 870.4 for the seeds' 7B (h=4096, a=32)."""
    cfg = C.build_config({"model": "gpt-3-6.7b"})
    assert C.quadratic_crossover(cfg) == pytest.approx(34 * 4096 / (5 * 32))
    no_dropout = C.build_config({"model": "gpt-3-6.7b", "dropout": False})  # softmax kept, masks gone: 2as²b
    assert C.quadratic_crossover(no_dropout) > C.quadratic_crossover(cfg)
    parts = C.block_parts(cfg, (512, 1024, 2048))
    quad = parts[parts["part"].str.contains("s²")].set_index("seq_len")["bytes_per_layer"]
    assert quad[2048] == pytest.approx(4 * quad[1024]) and quad[1024] == pytest.approx(4 * quad[512])


def _brute_pareto(days, cost, ok):
    idx = [i for i in range(len(days)) if ok[i]]
    return np.array([ok[i] and not any((days[j] <= days[i] and cost[j] <= cost[i])
                                       and (days[j] < days[i] or cost[j] < cost[i]) for j in idx)
                     for i in range(len(days))])


@settings(max_examples=100, deadline=None)
@given(st_.lists(st_.tuples(st_.integers(1, 20), st_.integers(1, 20), st_.booleans()), min_size=1, max_size=30))
def test_pareto_mask_matches_brute_force(points):
    days = np.array([p[0] for p in points], float)
    cost = np.array([p[1] for p in points], float)
    ok = np.array([p[2] for p in points])
    got = C.pareto_mask(days, cost, ok)
    want = _brute_pareto(days, cost, ok)
    # ties (same days and cost) keep one representative: compare the frontier's (days, cost) sets
    assert {(d, c) for d, c, g in zip(days, cost, got) if g} == {(d, c) for d, c, w in zip(days, cost, want) if w}


def test_time_cost_keeps_only_fitting_points_on_the_frontier():
    df = C.time_cost(CFG.replace(zero_stage=3, flash_attention=True, mfu="auto"), ("h100-sxm", "a100-80gb"),
                     (8, 64, 512))
    assert df["on_frontier"].any() and (df.loc[df["on_frontier"], "fits"]).all()
    ok = df[df["valid"]]  # one time figure: each point at its own predicted step
    assert (ok["time_source"] == "predicted").all() and np.allclose(ok["mfu_frac"], ok["predicted_mfu"])


def test_time_cost_recommends_no_setup_that_fits_only_tightly():
    """Llama 3.1 8B on 8 GPUs at 8,307 tokens (selective, realistic overhead): on an H100 what it allocates fits, the
    total with the allocator's fragmentation does not — tight: not on the frontier, and said so; the H200 is."""
    cfg = config_from_inputs(model="llama-3.1-8b", n_gpus=8, recompute="selective", seq_len=8307, mfu="auto")
    df = C.time_cost(cfg, ("h100-sxm", "h200"), (8,))
    h100, h200 = (df[df["gpu"] == g].iloc[0] for g in ("h100-sxm", "h200"))
    assert h100["tight"] and not h100["fits"] and not h100["on_frontier"]
    assert h200["fits"] and h200["on_frontier"]
    assert "fit only tightly" in C.left_out_words(df[~df["fits"]])


# --- charts -------------------------------------------------------------------------------------------------------
def _layers(chart) -> list[dict]:
    d = chart.to_dict()
    return d.get("layer", [d])


def test_memory_bar_turns_red_when_over_capacity():
    over = C.memory_parts(C.record(CFG))  # 182 GB on 80 GB
    fits = C.memory_parts(C.record(CFG.replace(zero_stage=3)))
    marks = [ly["mark"] for ly in _layers(K.memory_bar(over))]
    assert any(m.get("color") == K.OVER and m["type"] == "rule" for m in marks)
    assert sum(m["type"] == "bar" for m in marks) == 2  # the parts and the red overflow band
    marks = [ly["mark"] for ly in _layers(K.memory_bar(fits, "GiB"))]
    assert all(m.get("color") != K.OVER for m in marks) and sum(m["type"] == "bar" for m in marks) == 1
    d = K.memory_bar(fits, "GiB").to_dict()
    assert "2³⁰" in d["layer"][0]["encoding"]["x"]["title"]


def test_part_colours_are_the_same_everywhere():
    parts = C.memory_parts(C.record(CFG))
    enc = _layers(K.memory_bar(parts))[0]["encoding"]["color"]["scale"]
    drawn = [p for p in K.PART_COLORS if p in set(parts.loc[parts["bytes"] > 0, "part"])]
    assert enc["domain"] == drawn and enc["range"] == [K.PART_COLORS[p] for p in drawn]  # the legend = what is drawn


def test_fit_heatmap_selects_cells_and_marks_misfits():
    df = C.fit_seq_by_batch(CFG, (1024, 8192), (1, 4))
    d = K.fit_heatmap(df, "micro_batch", "seq_len", "micro-batch", "sequence length").to_dict()
    _rect, text = d["layer"]
    assert d["params"][0]["name"] == "cell" and d["params"][0]["select"]["fields"] == ["micro_batch", "seq_len"]
    assert text["mark"]["text"] == "✕" and "!datum.fits" in str(text["transform"])


def test_activation_curves_use_a_log2_axis_and_both_baselines():
    d = K.activation_curves(C.activation_curves(CFG, (512, 1024, 2048)), 80e9, 1e10, "GB", 2000.0).to_dict()
    lines = d["layer"][0]["layer"][0]  # the modes' layers share one colour scale
    assert lines["encoding"]["x"]["scale"] == {"type": "log", "base": 2}
    assert "GPU memory" in str(d) and "model state" in str(d) and "2,000" in str(d)


def test_roofline_is_log_log_with_ridges():
    roofs, ridges = C.roof_curves((("h100", 989.5e12, 3.35e12),), "bf16")
    assert ridges["ridge_intensity"].iloc[0] == pytest.approx(295.4, rel=1e-3)  # seed 000: ≈295
    ops = C.roofline_ops((("model", "llama-3.1-8b"),), 1024, 1, "bf16", ("h100", 989.5e12, 3.35e12))
    seeds = ops.set_index("op")["arithmetic_intensity"]
    assert seeds["seed_matmul"] == pytest.approx(341.3, rel=1e-3) and seeds["seed_relu"] == pytest.approx(0.25)
    d = K.roofline(roofs, ridges, ops).to_dict()
    assert all(ly["encoding"]["x"]["scale"]["type"] == "log" for ly in d["layer"] if "x" in ly.get("encoding", {}))


def test_charts_stay_light():
    """Every default chart ships far fewer than ~10k rows."""
    sizes = [len(C.fit_models_by_gpus(CFG, tuple(n for n, _ in C.preset_sizes()), tuple(2 ** k for k in range(15)))),
             len(C.activation_curves(CFG, tuple(2 ** k for k in range(6, 23)))),
             len(C.roof_curves((("a", 1e15, 1e12),) * 20, "bf16")[0])]
    assert max(sizes) < 10_000


# --- advisor mapping, sweep filters ----------------------------------------------------------------------------------
def test_advisor_changes_map_to_calculator_inputs():
    assert advice.widget_values({"zero_stage": 3, "flash_attention": True, "master_weights": False}) == \
        {"zero": 3, "flash": True, "master": "off"}
    assert advice.describe({"n_gpus": 64, "recompute": "full"}) == "full recomputation + 64 GPUs"
    assert advice.widget_values({"global_batch": 16, "micro_batch": 1}) == {"gbs": 16, "mb": 1}


def test_sweep_filters_are_typed_by_column():
    from ui.sweeps import parse_filter
    cols = {"model": "VARCHAR", "n_gpus": "INTEGER", "fits": "BOOLEAN", "days": "DOUBLE"}
    assert parse_filter("n_gpus", "in", "8, 16", cols).value == (8, 16)
    assert parse_filter("days", "between", "1,2.5", cols).value == (1.0, 2.5)
    assert parse_filter("fits", "=", "TRUE", cols).value is True
    assert parse_filter("model", "=", "x'; DROP TABLE t; --", cols).value == "x'; DROP TABLE t; --"
    for col, op, text, msg in (("n_gpus", "=", "abc", "not a number"), ("days", "=", "inf", "not a number"),
                               ("fits", "=", "maybe", "true or false"), ("nope", "=", "1", "not a column"),
                               ("days", "between", "1", "two values"), ("model", "=", "", "give a value")):
        with pytest.raises(ValueError, match=msg):
            parse_filter(col, op, text, cols)


# --- the shared pickers, on their own -------------------------------------------------------------------------------
def _picker_app():
    import streamlit as st

    from ui import pickers
    from ui.state import Page
    pg = Page("picker_test", prefix="t_")
    out = {**pickers.model_picker(pg), **pickers.gpu_picker(pg), **pickers.recipe_picker(pg)}
    st.json(out)
    pg.finish()


def _picked(**qp) -> dict:
    at = AppTest.from_function(_picker_app, default_timeout=30)
    for k, v in qp.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at.json[0].value if isinstance(at.json[0].value, dict) else __import__("json").loads(at.json[0].value)


def test_pickers_return_the_input_vocabulary():
    assert _picked() == {"model": "llama-3.1-8b", "gpu": "h100-sxm", "recipe": "zero-16", "compute_dtype": "bf16"}
    got = _picked(t_src="params", t_params="13", t_gpu="custom", t_c_mem="24", t_price="1.5", t_master="off",
                  t_recipe="cs336-12")
    assert got["n_params"] == 13e9 and got["gpu"] == "custom" and got["gpu_memory_bytes"] == 24e9
    assert got["price_per_gpu_hour"] == 1.5 and got["master_weights"] is False and got["recipe"] == "cs336-12"
    got = _picked(t_src="architecture", t_layers="4", t_mlp="gelu")
    assert got["n_layers"] == 4 and got["mlp"] == "gelu" and got["d_model"] == 4096
    C.build_config(got)  # a valid model


def test_uploaded_hf_config_becomes_a_model():
    import json

    from ui.pickers import arch_values, hf_model
    cfg = {"model_type": "llama", "num_hidden_layers": 4, "hidden_size": 512, "num_attention_heads": 8,
           "num_key_value_heads": 2, "intermediate_size": 1376, "vocab_size": 32000, "hidden_act": "silu"}
    m = hf_model(json.dumps(cfg).encode())
    assert arch_values(m)["layers"] == 4 and arch_values(m)["kv"] == 2 and m.mlp == "swiglu"
    for raw, msg in ((b"\xff\xfe", "not valid JSON"), (b"[1, 2]", "JSON object"), (b"{}", "missing field"),
                     (b" " * (2 << 20), "larger than")):
        with pytest.raises(ValueError, match=msg):
            hf_model(raw)


# --- review fixes: core formulas used, not re-derived; display helpers ------------------------------------------
def test_crossover_and_block_parts_come_from_the_core():
    """The s* and the ledger groups are core.memory's (MoE tensors included), with the model's experts."""
    from core import memory as M
    cfg = C.build_config({"model": "mixtral-8x7b", "seq_len": 4096, "n_gpus": 8})
    m = cfg.model
    want = M.quadratic_crossover_seq_len(cfg.micro_batch, m.d_model, m.n_heads, m.n_kv_heads, m.d_ff, m.mlp, m.norm,
                                         m.dropout, cfg.tp, cfg.sequence_parallel, cfg.resolved_profile,
                                         n_experts=m.n_experts, top_k=m.top_k)
    assert C.quadratic_crossover(cfg) == pytest.approx(float(want))
    parts = C.block_parts(cfg, (1024, 2048))
    assert "MoE routing" in set(parts["part"]) and set(parts["part"]) <= set(M.LEDGER_GROUPS)
    eager = C.build_config({"model": "llama-3.1-8b", "profile": "eager"})
    norms = C.block_parts(eager, (1024,)).set_index("part")["bytes_per_layer"]["norms"]
    fused = C.block_parts(eager.replace(profile="fused"), (1024,)).set_index("part")["bytes_per_layer"]["norms"]
    assert norms > fused  # the eager norm tensors (upcast, normalized) are counted


def test_roofline_ridge_is_the_cores():
    from core import roofline as R
    _roofs, ridges = C.roof_curves((("x", 2e15, 4e12),), "fp8")
    assert ridges["ridge_intensity"].iloc[0] == pytest.approx(float(R.roofline(1.0, 1.0, 2e15, 4e12)
                                                                   ["ridge_intensity"]))


def test_mfu_sensitivity_includes_the_chosen_mfu():
    df = C.mfu_sensitivity(CFG.replace(mfu=0.33))
    assert 0.33 in set(df["mfu_frac"]) and df["mfu_frac"].is_monotonic_increasing
    d = K.mfu_days(df, 0.33).to_dict()
    assert "0.33" in str(d["layer"][0]["encoding"]["color"])  # the chosen bar is the highlighted one


def test_pareto_mask_agrees_with_core_db_pareto():
    """The Time & cost page marks its frontier in memory (`pareto_mask`); the Sweeps page asks DuckDB
    (`core.db.pareto`). Same question, same tie rule: on one sweep both pick the same (days, cost) points."""
    from core import db
    from core.sweep import SweepSpec, run_sweep
    spec = SweepSpec.from_dict({"model": ["llama-3.1-8b"], "gpu": ["h100-sxm", "a100-80gb", "h200"],
                                "n_gpus": [8, 16, 64, 256], "mfu": [0.4, 0.5], "zero_stage": 3,
                                "flash_attention": True})
    con = db.connect()
    try:
        table = run_sweep(spec, con)
        rows = db.query(con, table, columns=["days", "cost_usd", "fits"])
        front = db.pareto(con, table, by=())
    finally:
        con.close()
    days, cost = rows["days"].to_numpy(float), rows["cost_usd"].to_numpy(float)
    mask = C.pareto_mask(days, cost, rows["fits"].to_numpy(bool))
    assert {(d, c) for d, c, k in zip(days, cost, mask) if k} == set(zip(front["days"], front["cost_usd"]))


def test_cli_command_reproduces_the_page_inputs():
    """The Calculator's `python -m core estimate …` line parses back, through the CLI's own parser, to the same
    Config; inputs at the CLI's defaults are left out."""
    import shlex

    from core.cli import build_parser, inputs_from_args
    from ui.explain import cli_command
    cases = [
        {"model": "llama-3.1-8b", "seq_len": 4096, "micro_batch": 1, "recipe": "zero-16", "optimizer": "adamw",
         "compute_dtype": "bf16", "recompute": "none", "flash_attention": False, "zero_stage": 0, "tp": 1, "pp": 1,
         "gpu": "h100-sxm", "n_gpus": 8, "tokens": 1e12, "mfu": 0.5, "attention_flops": "full", "overhead": "none",
         "fp32_loss": False, "sequence_parallel": False, "profile": "fused", "virtual_stages": 1,
         "time_overhead_frac": 0.0},
        {"model": "llama-3.1-70b", "seq_len": 8192, "recipe": "cs336-12", "optimizer": "adamw", "master_weights": True,
         "recompute": "full", "flash_attention": True, "zero_stage": 3, "n_gpus": 1024, "tokens": 1.5e13,
         "mfu": 0.37, "attention_flops": "none", "overhead": "realistic", "price_per_gpu_hour": 2.5,
         "time_overhead_frac": 0.1, "tokens_per_second": 1.2e6},
        {"n_layers": 4, "d_model": 512, "n_heads": 8, "n_kv_heads": 2, "d_ff": 1376, "vocab_size": 1000,
         "mlp": "gelu", "norm": "layernorm", "bias": "all", "position": "learned", "max_position": 2048,
         "n_experts": 1, "top_k": 1, "dropout": True, "tied_embeddings": False, "gpu": "custom",
         "peak_flops_per_s": 1.2e15, "gpu_memory_bytes": 24e9, "memory_bandwidth_bytes_per_s": 1e12,
         "compute_dtype": "fp8", "weight_dtype": "fp32", "master_weights": False},
        {"n_params": 13e9, "gpu": "a100-80gb", "n_gpus": 1},
    ]
    parser = build_parser()
    for inputs in cases:
        cmd = cli_command(inputs)
        words = shlex.split(cmd)
        assert words[:4] == ["python", "-m", "core", "estimate"], cmd
        args = parser.parse_args(words[3:])
        assert C.build_config(inputs_from_args(args)) == C.build_config(inputs), cmd
    # the app and the CLI share their defaults: a default-valued input is no flag
    assert "--seq-len" not in cli_command(cases[0]) and "--n-gpus" not in cli_command(cases[0])
    assert "--recompute" not in cli_command(cases[0]) and "--tp" not in cli_command(cases[0])
    assert "--mfu 0.5" in cli_command(cases[0]) and "--no-flash-attention" in cli_command(cases[0])  # not defaults
    assert "--no-master-weights" in cli_command(cases[2]) and "--flash-attention" not in cli_command(cases[1])


def test_limit_rows_read_as_words():
    from ui.explain import limit_rows
    lim = {"max_seq_len": 0, "max_micro_batch": 3, "min_gpus": None, "min_gpus_zero0": None, "min_gpus_zero1": None,
           "min_gpus_zero2": 11, "min_gpus_zero3": 1, "max_n_layers": 12, "max_n_params": 18.67e9}
    cfg = C.build_config({"model": "llama-3.1-8b", "conventions": "paper"})
    rows = {r["limit"]: r["that fits"] for r in limit_rows(lim, cfg, C.record(cfg))}
    assert rows["Longest sequence"].startswith("does not fit: the model state alone")  # the reason, with the bytes
    assert rows["Largest micro-batch"] == "3 sequences"
    assert rows["Fewest GPUs (this setup, ZeRO-0)"].startswith("does not fit: ZeRO-0 keeps a full copy")
    assert rows["Fewest GPUs at ZeRO-3"] == "1 GPU"
    assert rows["Fewest GPUs at ZeRO-2"] == "11 GPUs" and rows["Largest model (GPT-3 shapes)"] == "18.7 B parameters"
    assert all("_" not in k for k in rows)  # labels, not record keys


def test_display_helpers():
    from ui import fmt
    from ui.layout import split_error
    from ui.state import _num, _show
    assert fmt.gpus(1) == "1 GPU" and fmt.gpus(1024) == "1,024 GPUs"
    assert fmt.duration_days(145.06) == "145.1 days" and fmt.duration_days(0.1) == "2.4 h"
    assert fmt.duration_days(float("nan")) == "—"
    assert _num(2097152.0) == "2,097,152" and _num(0.5) == "0.5" and _show(False) == "off" and _show(True) == "on"
    assert _show(4096) == "4,096" and _show([True, False]) == "on, off"
    assert split_error(ValueError("filter 1 (n_gpus): 'x' is not a number")) == ("filter 1 (n_gpus)",
                                                                                 "'x' is not a number")
    assert split_error(ValueError("ZeRO stages: choose at least one value"))[0] == "ZeRO stages"
    assert split_error(ValueError("Something went wrong here: details"))[0] == "input"


def test_summary_is_bounded_and_says_so():
    """Grouping a sweep by many columns can give a group per row: the summary keeps `limit` groups (only those
    are cached), says how many there are, and shows "—" (not None) where nothing fits."""
    from core.sweep import SweepSpec
    from ui import sweeps as W
    spec = SweepSpec.from_dict({"model": ["llama-3.1-8b", "llama-3.1-405b"], "n_gpus": [1, 2, 4, 8],
                                "seq_len": [1024, 2048]})
    W.run(spec)
    df, n = W.summarise(spec.table_name, ("model", "n_gpus", "seq_len"), (), limit=5)
    assert len(df) == 5 and n == 16
    shown = W.summary_table(W.summarise(spec.table_name, ("model",), ())[0]).set_index("model")
    assert shown.loc["llama-3.1-405b", "lowest cost"] == "—" and shown.loc["llama-3.1-405b", "fewest days"] == "—"
    assert "None" not in shown.to_string()


def _internals_app():
    import inspect

    import streamlit as st
    from streamlit.runtime.state.session_state_proxy import get_session_state
    with get_session_state().query_params() as qp:  # the access path of ui.state._drop_param and _write_url
        st.write(type(qp._initial_query_params).__name__)
        st.write(",".join(list(inspect.signature(qp.set_corrected_value).parameters)))


def test_streamlit_internals_that_ui_state_relies_on_exist():
    """ui.state reaches two Streamlit internals (no public API does what it needs) and swallows their absence so
    a page never breaks; this test makes an upgrade that moves them fail loudly instead."""
    at = AppTest.from_function(_internals_app, default_timeout=30).run()
    assert not at.exception, at.exception
    assert [m.value for m in at.markdown] == ["dict", "param_key,value,value_type"]


def test_capacity_label_keeps_a_decimal():
    """An H100's allocatable 79.10 GiB (data/accelerators.csv usable_gib) keeps its decimal on the bar."""
    assert "GPU memory 79.1 GiB" in str(K.memory_bar(C.memory_parts(C.record(CFG)), "GiB").to_dict())


def test_every_pages_charts_are_valid_vega_lite():
    """ui.layout.chart converts without Altair's schema validation (a fifth of a rerun): every chart every page draws
    with its defaults is validated here instead, against the Vega-Lite schema Altair ships."""
    import json

    from altair.utils.schemapi import validate_jsonschema
    from altair.vegalite.v6.schema import core as SC
    from streamlit.testing.v1 import AppTest

    from ui import registry
    schema = SC.load_schema()
    n = 0
    for p in registry.NAV:
        at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=120)
        at.run()
        if p.file != "app.py":
            at.switch_page(p.file).run()
        assert not at.exception, (p.file, [e.value for e in at.exception])
        for el in at.get("vega_lite_chart"):
            validate_jsonschema(json.loads(el.proto.spec), schema, rootschema=schema)
            n += 1
    assert n >= 15  # the pages' charts, drawn with their defaults
