"""What a planner sees at a glance (issue 11): one set of app defaults on every page, invalid inputs refused by name,
charts whose colours and legends match what is drawn, readable ticks and labels, words without internal jargon, CLI
output with units, and a README whose commands work as written."""
from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from core.record import BINDING_WORDS
from ui import charts as K, compute as C, explain as X, pickers

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")


def run_page(page: str, **qp) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    for k, v in qp.items():
        at.query_params[k] = v
    at.run()
    return at.switch_page(page).run() if page != "app.py" else at


def _widget(at, kind: str, key: str):
    return next(w for w in at.get(kind) if getattr(w, "key", None) == key)


# --- defaults ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("page,prefix,flash", [("pages/01_calculator.py", "", True), ("pages/02_fit_map.py", "fm_", True),
                                               ("pages/03_activations.py", "ac_", False),
                                               ("pages/05_time_cost.py", "tc_", True)])
def test_one_set_of_app_defaults_on_every_page(page, prefix, flash):
    """Every page starts from the schema's defaults (core/inputs.py), the command line's too (issue 17)."""
    from core.inputs import BY_NAME
    at = run_page(page)
    assert not at.exception
    # the ZeRO stage's default is a rule: the framework's own stage (megatron's 1 here, as the command line gives)
    from ui.state import BY_RULE
    assert BY_NAME["zero_stage"].default is None
    assert _widget(at, "selectbox", prefix + "zero").value == BY_RULE
    assert _widget(at, "selectbox", prefix + "ovh").value == BY_NAME["overhead"].default == "realistic"
    if flash:  # the Activations page draws every activation mode, so it has no flash switch
        assert _widget(at, "toggle", prefix + "flash").value is BY_NAME["flash_attention"].default is True


@pytest.mark.parametrize("fw,stage", [("megatron", 1), ("fsdp", 3), ("deepspeed", 1), ("maxtext", 3)])
def test_choosing_a_framework_alone_runs_at_its_own_zero_stage(fw, stage):
    """FSDP runs no ZeRO-1 and MaxText neither: a question that names only the framework gets the framework's own
    stage (data/frameworks.csv default_zero_stage), on the page as on the command line, not a refusal."""
    from core.estimate import config_from_inputs
    at = run_page("pages/01_calculator.py", fw=fw)
    assert not at.exception and not at.error
    assert any(f"ZeRO-{stage}, tp=1" in m.value for m in at.markdown)
    assert config_from_inputs(model="llama-3.1-8b", framework=fw).zero_stage == stage


def test_the_first_view_is_a_run_that_could_launch():
    at = run_page("pages/01_calculator.py")
    assert next(m.value for m in at.metric if m.label == "Fits?") == "yes"
    assert not at.error and not [w for w in at.warning if "margin" in w.value]


def test_mfu_zero_is_refused_by_name_not_reverted():
    at = run_page("pages/01_calculator.py", mfu="0")
    assert not at.exception
    assert _widget(at, "number_input", "mfu").value is None  # below the widget's 0.1 %: the note says so
    assert any("mfu=0" in w.value and "must be between" in w.value for w in at.warning)


def test_low_headroom_is_a_visible_warning_with_options():
    ex = X.EXAMPLES[1]  # the 1.24B on a 24 GB card: fits, only just
    at = run_page("pages/01_calculator.py", **ex.link)
    assert any("less than the margin" in w.value for w in at.warning)
    assert at.button(key="apply_best") is not None


# --- charts --------------------------------------------------------------------------------------------------------
def _layers(chart) -> list[dict]:
    out, todo = [], [chart.to_dict()]
    while todo:
        d = todo.pop(0)
        if "layer" in d:
            todo = d["layer"] + todo
        else:
            out.append(d)
    return out


def test_memory_bar_overflow_keeps_the_legend_colours_and_lists_only_drawn_parts():
    cfg = C.build_config({"model": "llama-3.1-8b", "n_gpus": 8, "seq_len": 8192, "conventions": "paper"})  # 304 GB
    assert C.record(cfg)["total_bytes"] > 80e9
    parts = C.memory_parts(C.record(cfg))
    layers = _layers(K.memory_bar(parts))
    domain = layers[0]["encoding"]["color"]["scale"]["domain"]
    assert "grad_accum" not in domain and "overhead" not in domain  # zero-size parts are not in the legend
    fills = [l for l in layers if isinstance(l.get("mark"), dict) and l["mark"].get("type") == "bar"]
    overflow = [l for l in fills if l["mark"].get("stroke") == K.OVER]
    assert overflow and all(l["mark"].get("fillOpacity") == 0 for l in overflow)  # outlined, never re-shaded
    assert any("over by" in str(l.get("encoding", {}).get("text", "")) for l in layers)  # and by how much


def _gpu_colors(chart) -> dict:
    for layer in _layers(chart):
        scale = layer.get("encoding", {}).get("color", {}).get("scale", {})
        if scale.get("domain") and layer["encoding"]["color"].get("field") == "gpu":
            return dict(zip(scale["domain"], scale["range"]))
    raise AssertionError("no accelerator colour scale")


def test_an_accelerator_keeps_its_colour_whatever_is_selected():
    def roof(names, dtype="bf16"):
        rows, _ = C.roof_rows(tuple(names), dtype, None)
        return _gpu_colors(K.roofline(*C.roof_curves(tuple(rows), dtype)))
    a, b, c = roof(["h100-sxm", "a100-80gb", "b200"]), roof(["b200", "h200"]), roof(["h200", "b200"], "fp8")
    cfg = C.build_config({"model": "llama-3.1-8b", "flash_attention": True, "zero_stage": 3, "n_gpus": 1})
    tc = _gpu_colors(K.time_cost(C.time_cost(cfg, ("mi300x", "b200", "h100-sxm"), (64, 128))))
    for m in (b, c, tc):
        for name, colour in m.items():
            for other in (a, b, c, tc):
                assert other.get(name, colour) == colour, name
    assert set(b) == {"b200", "h200"}  # the legend lists what is drawn
    assert len(set(K.gpu_colors().values())) == len(K.gpu_colors())  # no two accelerators share a colour
    beyond = {K._extra_color(i) for i in range(len(K.GPU_PALETTE), len(K.GPU_PALETTE) + 100)}
    assert len(beyond) == 100 and not beyond & set(K.GPU_PALETTE)  # a growing catalog never repeats one


def test_sequence_ticks_read_as_powers_of_two():
    curves = K.activation_curves(C.activation_curves(C.build_config({"model": "llama-3.1-8b"}), (1024, 131072)),
                                 80e9, 1e10)
    assert K.POW2_LABEL in str(curves.to_dict())
    heat = K.fit_heatmap(C.fit_seq_by_batch(C.build_config({"model": "llama-3.1-8b", "n_gpus": 8}), (1024, 8192), (1,)),
                         "micro_batch", "seq_len", "micro-batch", "sequence length")
    assert K.POW2_LABEL in str(heat.to_dict())
    roof = K.roofline(*C.roof_curves((("h100-sxm", 989.5e12, 3.35e12),), "bf16")).to_dict()
    assert "'~s'" not in str(roof) and "\"~s\"" not in str(roof)  # no "10m TFLOP/s"


def test_pow2_label_expression_reads_1k_128k_1m():
    """The Vega expression, evaluated by hand for the three branches (it only uses `format` and arithmetic)."""
    def label(v):
        return f"{v / 1048576:g}M" if v >= 1048576 else f"{v / 1024:g}K" if v >= 1024 else f"{v:g}"
    assert [label(v) for v in (512, 1024, 131072, 1048576)] == ["512", "1K", "128K", "1M"]
    assert "1048576" in K.POW2_LABEL and "1024" in K.POW2_LABEL and "'K'" in K.POW2_LABEL and "'M'" in K.POW2_LABEL


def test_roofline_labels_of_overlapping_points_merge():
    ops = pd.DataFrame({"n": [1, 6, 7, 12], "arithmetic_intensity": [1540.0, 1370.0, 1790.0, 0.25],
                        "attainable_flops_per_s": [989e12, 989e12, 989e12, 0.8e12]})
    texts = sorted(K._label_clusters(ops)["text"])
    assert texts == ["1, 6, 7", "12"]


def test_frontier_points_carry_their_gpu_count():
    cfg = C.build_config({"model": "llama-3.1-8b", "flash_attention": True, "zero_stage": 3, "n_gpus": 1})
    df = C.time_cost(cfg, ("h100-sxm", "b200"), (8, 64, 512))
    layers = _layers(K.time_cost(df))
    text = [l for l in layers if (l.get("mark") or {}).get("type") == "text"]
    assert len(text) == 2 and all(t["encoding"]["text"]["field"] == "n_gpus" for t in text)


def test_selective_is_drawn_on_top_of_flash():
    df = C.activation_curves(C.build_config({"model": "llama-3.1-8b"}), (1024, 4096))
    modes = K.activation_curves(df, 80e9, 1e10).to_dict()["layer"][0]["layer"]
    assert "selective" in str(modes[-1]["transform"]) and "!=" not in str(modes[-1]["transform"])


def test_sweep_fit_region_says_something_when_every_configuration_fits():
    df = pd.DataFrame({"model": ["a", "a"], "n_gpus": [8, 16], "n_fit": [4, 4], "n_configs": [4, 4],
                       "fit_frac": [1.0, 1.0], "headroom_bytes": [10e9, 40e9], "total_bytes": [70e9, 40e9],
                       "binding": ["state", "state"]})
    assert "head_gb" in str(K.sweep_fit_heatmap(df).to_dict()["layer"][0]["encoding"]["color"])
    df.loc[0, "n_fit"], df.loc[0, "fit_frac"] = 2, 0.5
    assert "fit_frac" in str(K.sweep_fit_heatmap(df).to_dict()["layer"][0]["encoding"]["color"])


def test_record_tables_show_units():
    from ui import fmt
    df = pd.DataFrame({"model": ["m"], "n_gpus": [8], "total_bytes": [16057258112.0], "cost_usd": [987368.5346],
                       "days": [1.25], "mfu": [0.5]})
    table, config = fmt.record_table(df)
    assert list(table.columns) == ["model", "n_gpus", "total (GB)", "cost", "days", "mfu"]
    assert table["total (GB)"].iloc[0] == pytest.approx(16.057, rel=1e-3)
    assert config["cost"]["type_config"]["format"] == "dollar" and config["mfu"]["type_config"]["format"] == "percent"


# --- words ---------------------------------------------------------------------------------------------------------
def _visible_text(at) -> str:
    parts = [e.value for kind in ("markdown", "caption", "title", "header", "subheader", "info", "warning", "error",
                                  "success") for e in at.get(kind)]
    parts += [p.proto.label for p in at.get("page_link")]
    parts += [w.label for kind in ("toggle", "selectbox", "number_input", "radio", "multiselect") for w in at.get(kind)]
    parts += [m.label + " " + str(m.value) for m in at.metric]
    return "\n".join(parts)


@pytest.mark.parametrize("page", ["app.py", "pages/01_calculator.py", "pages/02_fit_map.py", "pages/03_activations.py",
                                  "pages/04_roofline.py", "pages/05_time_cost.py"])
def test_no_internal_jargon_on_screen(page):
    text = _visible_text(run_page(page)).lower()
    assert not re.search(r"\bseeds?\b", text), re.search(r".{60}\bseeds?\b.{60}", text, re.S)


def test_the_largest_term_is_said_in_words():
    cfg = C.build_config({"model": "llama-3.1-8b", "n_gpus": 1})
    rec = C.record(cfg)
    fits = next(k for k in X.kpis(cfg, rec) if k.label == "Fits?")
    assert BINDING_WORDS[rec["binding"]] in fits.formula


def test_landing_examples_fit_on_one_line_and_pin_their_conventions():
    for ex in X.EXAMPLES:
        assert len(ex.label) <= 60 and ex.detail
        assert ex.params.get("overhead") == "none" and "flash_attention" in ex.params and "zero_stage" in ex.params
        assert "mfu" in ex.params  # their numbers quote a given MFU


# --- the command line ----------------------------------------------------------------------------------------------
def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_limits_print_units():
    out = _cli("limits", "--model", "llama-2-7b", "--n-gpus", "8", "--zero-stage", "3", "--flash-attention").stdout
    assert re.search(r"longest sequence\s+[\d,]+ tokens", out) and re.search(r"largest micro-batch\s+\d+ sequences", out)
    assert re.search(r"fewest GPUs at ZeRO-3\s+\d+ GPUs?", out) and re.search(r"\d B parameters", out)
    assert "ZeRO-0 keeps a full copy" in out


def test_measure_help_lists_only_what_a_measurement_reads():
    out = _cli("measure", "--help").stdout
    for flag in ("--price-per-gpu-hour", "--mfu", "--n-gpus", "--tokens", "--tp", "--global-batch", "--gpu "):
        assert flag not in out, flag
    for flag in ("--model", "--seq-len", "--micro-batch", "--recompute", "--flash-attention"):
        assert flag in out, flag
    assert "optional extra: PyTorch is an optional extra" not in out


def test_roofline_usage_shows_both_forms():
    usage = _cli("roofline", "--help").stdout.split("\n\n")[0]
    assert "--op" in usage and "--model" in usage and "--gpu" in usage


# --- the README ----------------------------------------------------------------------------------------------------
def test_readme_has_a_venv_step_the_cpu_torch_line_and_a_sweep_spec_that_exists(tmp_path):
    readme = (ROOT / "README.md").read_text()
    assert "python3 -m venv .venv && . .venv/bin/activate" in readme
    assert "pip install -r requirements-measure.txt --extra-index-url https://download.pytorch.org/whl/cpu" in readme
    line = next(x for x in readme.splitlines() if x.startswith("python -m core sweep"))
    args = shlex.split(line.split("#")[0])[3:]
    spec = args[args.index("--spec") + 1]
    assert (ROOT / spec).is_file()
    args[args.index("--out") + 1] = str(tmp_path / "results.parquet")
    out = _cli(*args, "--quiet")
    assert out.returncode == 0 and "valid" in out.stdout, out.stderr
