"""Issue 17: one question, one answer. The CLI's `estimate`, `plan` and `advise` and the app's pages give the same
memory, step, days and cost from their shared defaults; the shared inputs survive every page transition; a Fit map
or Sweeps cell and a layout row open the Calculator with identical numbers; every input's default, bounds and URL
key live in one file (core/inputs.py) — a walk of the UI finds none restated."""
from __future__ import annotations

import ast
import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core import inputs as I
from core.cli import main
from core.estimate import config_from_inputs, estimate
from ui import fmt
from ui.state import link_params

from rendered import rendered  # tests/rendered.py

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")


def cli_json(*argv) -> dict:
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(list(argv) + ["--json"]) == 0
    return json.loads(buf.getvalue())


def page(path: str, **qp) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    for k, v in qp.items():
        at.query_params[k] = v
    at.run()
    at.switch_page(path).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metrics(at: AppTest) -> dict:
    return {m.label: m.value for m in at.metric}


def flags(inputs: dict) -> list[str]:
    out = []
    for k, v in inputs.items():
        f = "--" + k.replace("_", "-")
        out += ([f] if v else ["--no-" + f[2:]]) if isinstance(v, bool) else [f, str(v)]
    return out


# configurations a planner asks about, each only as its question: every other input at its (shared) default
CASES = [
    {"model": "llama-3.1-8b"},
    {"model": "llama-3.1-70b", "n_gpus": 64, "tp": 8, "seq_len": 8192},
    {"model": "mixtral-8x7b", "n_gpus": 16, "zero_stage": 3, "gpu": "h200"},
    {"model": "llama-3.2-1b", "n_gpus": 1, "gpu": "rtx-4090", "seq_len": 2048},
]


@pytest.mark.parametrize("case", CASES, ids=[c["model"] for c in CASES])
def test_estimate_and_the_calculator_give_the_same_numbers(case):
    rec = cli_json("estimate", *flags(case))
    assert rec == {**rec, **{k: rec[k] for k in rec}}  # valid JSON record
    m = metrics(page("pages/01_calculator.py", **link_params(case)))
    assert m["Total per GPU"] == fmt.mem(rec["total_bytes"], "GB")
    assert m["Days"] == fmt.days(rec["time_s"]) and m["Cost"] == fmt.usd(rec["cost_usd"])
    assert m["Step"] == fmt.si(rec["predicted_step_time_s"], "s")
    assert rec["time_source"] == "predicted"  # one time figure, from the predicted step, by default


def test_plan_and_the_parallel_layout_page_give_the_same_best_layout():
    q = {"model": "llama-3.1-70b", "n_gpus": 64, "seq_len": 8192}
    res = cli_json("plan", *flags(q))
    best = res["strategies"][0]
    at = page("pages/08_parallel_layout.py", **link_params(q, "pl_"))
    from core.plan import layout_label
    assert any(rendered(x.value).startswith(f"**Best layout:** {layout_label(best)}") for x in at.markdown)
    m = metrics(at)
    assert m["Predicted step"] == fmt.si(best["predicted_step_time_s"], "s")
    assert m["Cost"] == fmt.usd(best["cost_usd"]) and m["Run"] == fmt.duration_days(best["days"])
    # and the layout opened in the Calculator shows that step and cost
    row = {k: best[k] for k in ("tp", "pp", "cp", "ep", "virtual_stages", "micro_batch", "zero_stage", "recompute",
                                "sequence_parallel")}
    cm = metrics(page("pages/01_calculator.py", **link_params({**q, **row, "global_batch": best["global_batch"]})))
    assert cm["Step"] == m["Predicted step"] and cm["Cost"] == m["Cost"]


def test_every_plan_row_opens_in_the_calculator_with_its_numbers():
    """`plan`'s rows carry the Calculator's address (as the Parallel layout page's rows do): opened, each shows the
    row's step and cost."""
    from urllib.parse import parse_qs
    res = cli_json("plan", "--model", "llama-3.1-8b", "--n-gpus", "16", "--seq-len", "8192", "--top", "3")
    assert len(res["strategies"]) == 3
    for r in res["strategies"][::2]:
        q = {k: v[0] for k, v in parse_qs(r["calculator"].partition("?")[2]).items()}
        assert r["calculator"].startswith("calculator?") and q["tp"] == str(r["tp"]) and q["zero"] == str(r["zero_stage"])
        m = metrics(page("pages/01_calculator.py", **q))
        assert m["Step"] == fmt.si(r["predicted_step_time_s"], "s") and m["Cost"] == fmt.usd(r["cost_usd"])


def test_advise_and_the_calculator_offer_the_same_best_change():
    q = {"model": "llama-3.1-8b", "seq_len": 32768, "n_gpus": 8}
    adv = cli_json("advise", *flags(q))
    at = page("pages/01_calculator.py", **link_params(q))
    shown = [rendered(x.value) for x in at.markdown if x.value.startswith("**1. ")]
    assert adv["best"] is not None and shown and shown[0].startswith(f"**1. {adv['best']['what']}**")


def test_sweeps_use_the_same_defaults_as_a_point():
    from core.spec import SweepSpec
    from core.sweep import to_table
    row = to_table(SweepSpec.from_dict({"model": "llama-3.1-8b"})).to_pylist()[0]
    rec = estimate(config_from_inputs(model="llama-3.1-8b"))
    for k in ("total_bytes", "predicted_step_time_s", "days", "cost_usd", "global_batch"):
        assert row[k] == pytest.approx(rec[k], rel=1e-12), k
    assert row["time_source"] == "predicted"


# --- one state across pages -------------------------------------------------------------------------------------
CHOSEN = {"model": "llama-3.1-70b", "gpu": "h200", "n_gpus": 32, "seq_len": 8192, "zero_stage": 3, "tp": 4,
          "recipe": "megatron-18", "global_batch": 256, "framework": "fsdp"}
# every page but the Calculator, from the registry (a new page is in this test the day it is registered)
PAGES = {p.file: p.prefix for p in __import__("ui.registry", fromlist=["x"]).PAGES if p.prefix}


@pytest.mark.parametrize("path,prefix", list(PAGES.items()), ids=list(PAGES))
def test_shared_inputs_survive_a_page_transition(path, prefix):
    """Chosen on the Calculator (by its link), carried through the sidebar (no link) to another page and back: every
    input the other page draws shows the chosen value there, and the Calculator shows them all again after."""
    at = page("pages/01_calculator.py", **link_params(CHOSEN))
    before = metrics(at)
    at.query_params.clear()
    at.switch_page(path).run()
    assert not at.exception
    keys = {w.key: w.value for kind in ("selectbox", "number_input", "toggle", "radio") for w in at.get(kind)
            if getattr(w, "key", None)}
    for name, v in CHOSEN.items():
        k = prefix + I.BY_NAME[name].ui.key
        if k in keys and not (name == "model" and path.endswith("check_pytorch.py")):
            assert str(keys[k]) == str(link_params({name: v})[I.BY_NAME[name].ui.key]), (path, name, keys[k])
    at.query_params.clear()
    at.switch_page("pages/01_calculator.py").run()
    assert metrics(at) == before


def test_a_fit_map_cell_opens_the_calculator_with_identical_numbers():
    fm = page("pages/02_fit_map.py")
    df = __import__("ui.compute", fromlist=["x"]).fit_models_by_gpus
    # the cell a click would pick: the page's own configuration with the cell's model, GPUs, tp and pp
    from ui import compute as C, layout
    cfg = C.build_config({"model": "llama-3.1-8b"})
    cells = df(cfg, ("llama-3.1-70b",), (16,), True)
    cell = cells.iloc[0]
    fm.session_state["_fm_goto"] = {**link_params({"model": "llama-3.1-70b", "n_gpus": 16, "tp": int(cell["tp"]),
                                                   "pp": int(cell["pp"])}), "src": "preset"}
    fm.run()
    assert fm.title[0].value == "Will it fit?"
    assert metrics(fm)["Total per GPU"] == fmt.mem(float(cell["total_bytes"]), "GB")
    assert layout.calculator_link  # the page's builder (used by the click) is the same function


def test_a_fit_map_click_carries_the_cells_best_layout():
    """A point selection returns only the fields it projects: the models × GPUs map's selection must project the
    cell's best tp and pp, or a click opens the Calculator at tp 1 while the tooltip said tp 4 (issue 17)."""
    from ui import charts as K, compute as C
    cfg = C.build_config({"model": "llama-3.1-8b"})
    df = C.fit_models_by_gpus(cfg, ("llama-3.1-70b",), (16,), True)
    spec = K.fit_heatmap(df, "n_gpus", "model", "GPUs", "model", extra_tooltip=("tp:O", "pp:O"),
                         select_fields=("tp", "pp")).to_dict()
    params = spec.get("params", []) + [p for layer in spec["layer"] for p in layer.get("params", [])]
    assert params and set(params[0]["select"]["fields"]) == {"n_gpus", "model", "tp", "pp"}
    src = (ROOT / "pages" / "02_fit_map.py").read_text()
    assert 'select_fields=("tp", "pp") if search' in src  # the page asks for them whenever cells carry a layout


def test_a_sweeps_cell_opens_its_best_row_with_identical_numbers():
    from ui import sweeps as W
    at = page("pages/06_sweeps.py", sw_models="llama-3.1-8b", sw_gmin="8", sw_gmax="16")
    table = next(t for t in W.db.catalog(W.database())["id"])
    row = W.best_row(table, (), "llama-3.1-8b", 8)
    want = estimate(config_from_inputs(**row))
    cm = metrics(page("pages/01_calculator.py", **link_params(row)))
    assert cm["Total per GPU"] == fmt.mem(want["total_bytes"], "GB") and cm["Days"] == fmt.days(want["time_s"])


# --- one owner per fact -------------------------------------------------------------------------------------------
def _ui_sources():
    for d in ("ui", "pages"):
        for p in sorted((ROOT / d).glob("*.py")):
            yield p
    yield ROOT / "app.py"


HELPERS = {"select", "integer", "number", "toggle", "text", "multi"}


def test_no_ui_file_restates_a_schema_key_or_draws_an_input_by_hand():
    """Every schema input's URL key appears in core/inputs.py only: no string constant of the UI equals one (the
    pages pass input *names* to `Page.input`), and no hand-drawn widget (`pg.select`, `pg.integer`, …) binds one."""
    keys = {w.key for w in I.WIDGETS.values()}
    names = set(I.NAMES)
    bad = []
    for p in _ui_sources():
        tree = ast.parse(p.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in HELPERS:
                args = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                if any(a in keys for a in args[1:3]):
                    bad.append(f"{p.name}:{node.lineno} draws schema key {args[1:3]} by hand")
            # a restated vocabulary: a dict, set, tuple or list literal with two or more URL keys (a lone word such
            # as the activation mode "flash" or the memory part "master" is not one)
            items = node.keys if isinstance(node, ast.Dict) else node.elts if isinstance(
                node, (ast.Set, ast.Tuple, ast.List)) else []
            found = [x.value for x in items if isinstance(x, ast.Constant) and isinstance(x.value, str)
                     and x.value in keys - names]
            if len(found) >= 2:
                bad.append(f"{p.name}:{node.lineno} restates URL keys {found}")
    assert not bad, bad


def test_no_ui_file_restates_a_schema_default():
    """The defaults a planner launches with (seq 4096, 8 GPUs, ZeRO-1, flash, the realistic overhead, 4M tokens per
    step, 1T tokens) are the schema's: no page passes one as a widget default."""
    facts = {I.BY_NAME[n].default for n in ("seq_len", "n_gpus", "target_batch_tokens")} | {1e12, 1000.0}
    bad = []
    for p in _ui_sources():
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.keyword) and node.arg in ("default", "seq_default", "default_b") and \
                    isinstance(node.value, ast.Constant) and node.value.value in facts:
                bad.append(f"{p.name}:{node.value.lineno} default={node.value.value!r}")
    assert not bad, bad


def test_no_ui_file_restates_a_schema_bound_or_default_value():
    """No widget in the UI is given, as a literal, a value that is some schema input's default or bound (beyond the
    trivial 0, 1, 2): bounds and defaults are read from core/inputs.py, never typed again."""
    trivial = {0, 1, 2, 0.0, 1.0, ""}
    facts = {}
    for i in I.INPUTS:
        for attr in ("default", "lo", "hi"):
            v = getattr(i, attr, None)
            if isinstance(v, (int, float, str)) and not isinstance(v, bool) and v not in trivial:
                facts.setdefault(v, []).append(f"{i.name}.{attr}")
    kw = ("default", "lo", "hi", "min_value", "max_value", "value", "seq_default", "default_b")
    bad = [f"{p.name}:{node.value.lineno} {node.arg}={node.value.value!r} (= {', '.join(facts[node.value.value])})"
           for p in _ui_sources() for node in ast.walk(ast.parse(p.read_text()))
           if isinstance(node, ast.keyword) and node.arg in kw and isinstance(node.value, ast.Constant)
           and not isinstance(node.value.value, bool) and node.value.value in facts]
    assert not bad, bad


def test_every_schema_input_is_reachable_from_the_calculator():
    """Each input has a widget on the Calculator: its own, a picker's, or the "All inputs" expander (the model's
    and the custom accelerator's fields in their pickers' modes)."""
    from ui.pickers import CUSTOM_FIELDS, MODEL_NAMES
    at = page("pages/01_calculator.py")
    drawn = {getattr(w, "key", None) for kind in ("selectbox", "number_input", "toggle", "radio", "multiselect",
                                                  "text_input") for w in at.get(kind)}
    missing = [i.name for i in I.INPUTS if i.ui is not None and i.ui.key not in drawn
               and i.name not in MODEL_NAMES and i.name not in CUSTOM_FIELDS]
    assert not missing, missing
    arch = page("pages/01_calculator.py", src="architecture")
    drawn = {getattr(w, "key", None) for kind in ("selectbox", "number_input", "toggle") for w in arch.get(kind)}
    from core.model import ARCH_FIELDS
    assert {I.BY_NAME[f].ui.key for f in ARCH_FIELDS} <= drawn
    custom = page("pages/01_calculator.py", gpu="custom")
    drawn = {getattr(w, "key", None) for w in custom.get("number_input")}
    assert {I.BY_NAME[f].ui.key for f in CUSTOM_FIELDS} <= drawn


def test_paper_conventions_in_the_app_set_the_widgets():
    """The app's equivalent of --conventions paper: choosing it sets the widgets its preset fills; the page then
    shows what `estimate --conventions paper` prints."""
    at = page("pages/01_calculator.py")
    at.radio(key="conv").set_value("paper").run()
    assert not at.exception
    rec = cli_json("estimate", "--model", "llama-3.1-8b", "--conventions", "paper")
    m = metrics(at)
    assert m["Total per GPU"] == fmt.mem(rec["total_bytes"], "GB") and m["Days"] == fmt.days(rec["time_s"])


def test_a_refused_upload_shows_no_numbers():
    """Issue 17: a refused config.json must not leave the previous model's (or a preset's) numbers on screen."""
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["src"] = "hf-config"
    at.run()
    at.switch_page("pages/01_calculator.py").run()
    assert metrics(at)  # before any upload: the preset's numbers, said so
    at.session_state["hf_error"] = "d_model: must be from 1 to 1,048,576, got 1,073,741,824"
    at.run()
    assert not at.exception and not metrics(at)
    assert any("config.json" in rendered(e.value) and "d_model: must be" in rendered(e.value) for e in at.error)


def test_a_sliding_window_config_is_read_by_the_app_as_by_the_cli():
    """A Mistral-7B config.json (sliding_window 4096) is accepted by the app exactly as the CLI reads it."""
    from core.estimate import build_model
    from ui.pickers import hf_model
    cfg = {"model_type": "mistral", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
           "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000, "hidden_act": "silu",
           "sliding_window": 4096, "max_position_embeddings": 32768, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
           "tie_word_embeddings": False}
    m = hf_model(json.dumps(cfg).encode())
    assert m == build_model(hf_config=cfg) and m.sliding_window == 4096
    assert m.n_params == 7_241_732_096  # Mistral 7B's count (Jiang et al. 2023; the checkpoint's tensors)


# --- plan: identical results merged, the advisor's margin kept, help grouped like estimate's ---------------------
def test_plan_merges_identical_results_into_one_row_naming_the_others():
    """On one GPU the ZeRO stages shard nothing: their results are identical and are one row that names them."""
    res = cli_json("plan", "--model", "llama-3.2-1b", "--n-gpus", "1", "--top", "5")
    first = res["strategies"][0]
    assert first["zero_stage"] == 0 and len(first["equivalents"]) == 3
    assert all(e.endswith(("ZeRO-1", "ZeRO-2", "ZeRO-3")) for e in first["equivalents"])
    shown = [(r["predicted_step_time_s"], r["total_bytes"]) for r in res["strategies"]]
    assert len(set(shown)) == len(shown)  # no two listed rows show the same result


def test_plan_keeps_the_advisors_headroom_margin():
    from core.advisor import DEFAULT_MARGIN, MARGIN_COLUMNS, margin_bytes
    res = cli_json("plan", "--model", "llama-3.1-70b", "--n-gpus", "64", "--top", "10")
    for r in res["strategies"]:
        need = margin_bytes({k: r[k] for k in MARGIN_COLUMNS}, DEFAULT_MARGIN)
        assert r["gpu_memory_bytes"] - r["total_bytes"] >= float(need) > 0


def test_plan_help_is_grouped_like_estimate_help():
    import subprocess
    import sys

    def groups(cmd):
        out = subprocess.run([sys.executable, "-m", "core", cmd, "--help"], capture_output=True, text=True,
                             cwd=ROOT, check=True).stdout
        return [ln for ln in out.splitlines() if ln and not ln.startswith(" ") and ln.endswith(":")]
    est, pl = groups("estimate"), groups("plan")
    assert pl == [g for g in est if g in pl] and len(pl) >= 10  # the same groups, in the same order


def test_time_and_cost_and_plan_by_cost_agree_on_the_cheapest_run():
    """Time & cost prices the default layout on each count; `plan --objective cost` searches every layout: for the
    README's 7B case they agree within 1 % (the search may find a layout a little cheaper, never a dearer one)."""
    res = cli_json("plan", "--model", "llama-2-7b", "--n-gpus", "8", "--objective", "cost", "--top", "1")
    best = res["strategies"][0]["cost_usd"]
    rec = estimate(config_from_inputs(model="llama-2-7b", n_gpus=8))
    assert best <= rec["cost_usd"] * (1 + 1e-9) and rec["cost_usd"] == pytest.approx(best, rel=0.01)


def test_the_zero_stage_help_names_each_frameworks_own_stage_as_the_data_does():
    """The --zero-stage help spells out each framework's default for the reader; data/frameworks.csv owns the fact,
    so the help must say what the data says (a change there fails here until the help follows)."""
    from core import profiles as PF
    words = I.BY_NAME["zero_stage"].help
    for fw in PF.FRAMEWORKS:
        assert f"{fw} {int(PF.default_zero_stage(fw))}" in words, fw


@pytest.mark.parametrize("fw,stage", [("megatron", 1), ("fsdp", 3), ("deepspeed", 1), ("maxtext", 3)])
def test_a_framework_without_a_zero_stage_runs_at_its_own_in_the_cli_and_a_sweep(fw, stage):
    """The ZeRO stage's default is the framework's (data/frameworks.csv default_zero_stage): the CLI, the schema's
    config and a sweep that names the framework but no stage give the same stage and the same step."""
    from core.spec import SweepSpec
    from core.sweep import to_table
    rec = cli_json("estimate", "--model", "llama-3.1-8b", "--n-gpus", "8", "--framework", fw)
    cfg = config_from_inputs(model="llama-3.1-8b", n_gpus=8, framework=fw)
    assert cfg.zero_stage == stage
    assert rec["predicted_step_time_s"] == pytest.approx(estimate(cfg)["predicted_step_time_s"], rel=1e-12)
    assert rec["state_bytes"] == pytest.approx(estimate(cfg)["state_bytes"], rel=1e-12)  # sharded as the stage says
    t = to_table(SweepSpec.from_dict({"model": ["llama-3.1-8b"], "n_gpus": [8], "framework": sorted({fw, "fsdp"})}))
    row = next(r for r in t.to_pylist() if r["framework"] == fw)
    assert row["zero_stage"] == stage
    assert row["predicted_step_time_s"] == pytest.approx(rec["predicted_step_time_s"], rel=1e-9)
    # a stage the framework does not run is still refused by name when given
    with pytest.raises(ValueError, match="zero_stage"):
        config_from_inputs(model="llama-3.1-8b", n_gpus=8, framework="fsdp", zero_stage=1)
