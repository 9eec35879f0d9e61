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
          "recipe": "megatron-18", "global_batch": 256}
PAGES = {"pages/02_fit_map.py": "fm_", "pages/03_activations.py": "ac_", "pages/05_time_cost.py": "tc_",
         "pages/08_parallel_layout.py": "pl_", "pages/07_check_pytorch.py": "pt_", "pages/04_roofline.py": "rf_"}


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


def test_every_schema_input_is_reachable_from_the_calculator():
    """Each input has a widget on the Calculator: its own, a picker's, or the "All inputs" expander (the model's
    and the custom accelerator's fields in their pickers' modes)."""
    from ui.pickers import CUSTOM_FIELDS, MODEL_NAMES
    at = page("pages/01_calculator.py")
    drawn = {getattr(w, "key", None) for kind in ("selectbox", "number_input", "toggle", "radio", "multiselect")
             for w in at.get(kind)}
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
