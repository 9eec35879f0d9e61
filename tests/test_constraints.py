"""Constraints on the layout search (issue 20 item 1): plan --max-days / --max-usd / --max-gpus answer "cheapest
under D days" and "fastest under $X" directly; each answer respects its constraint, relaxing it never makes the answer
worse, and what is left out is said in words."""
from pathlib import Path

import pytest

from core.cli import main
from core.plan import plan

BASE = dict(model="llama-3.1-8b", seq_len=4096, global_batch=256, tokens=2e11)
COUNTS = (8, 16, 32, 64)


def _best(objective, **kw):
    res = plan(BASE, COUNTS, objective, top=3, **kw)
    return res, (res["strategies"][0] if res["strategies"] else None)


@pytest.mark.parametrize("days", [5.0, 10.0])
def test_cheapest_under_a_deadline(days):
    res, best = _best("cost", max_days=days)
    assert best is not None
    assert all(s["days_with_failures"] <= days for s in res["strategies"])
    _, looser = _best("cost", max_days=days * 2)
    assert looser["cost_with_failures_usd"] <= best["cost_with_failures_usd"] * (1 + 1e-9)


def test_fastest_under_a_budget():
    _, free = _best("time")
    _, cheapest = _best("cost")
    cap = cheapest["cost_with_failures_usd"] * 1.01  # a budget only the cheapest layouts meet
    assert cap < free["cost_with_failures_usd"]
    res, best = _best("time", max_usd=cap)
    assert best is not None and all(s["cost_with_failures_usd"] <= cap for s in res["strategies"])
    assert best["predicted_step_time_s"] >= free["predicted_step_time_s"]
    _, looser = _best("time", max_usd=cap * 1.5)
    assert looser["predicted_step_time_s"] <= best["predicted_step_time_s"] * (1 + 1e-9)


def test_impossible_constraints_say_why(capsys):
    assert main(["plan", "--model", "llama-3.1-8b", "--n-gpus", "8", "--max-days", "0.001"]) == 0
    out = capsys.readouterr().out
    assert "0 within the constraints" in out and "take more than 0.001 days" in out and "relax" in out


def test_max_gpus_searches_whole_nodes(capsys):
    assert main(["plan", "--model", "llama-3.1-8b", "--max-gpus", "40", "--top", "50", "--json"]) == 0
    import json
    out = json.loads(capsys.readouterr().out)
    assert {s["n_gpus"] for s in out["strategies"]} <= {8, 16, 32, 40}
    assert main(["plan", "--model", "llama-3.1-8b", "--n-gpus", "64", "--max-gpus", "32"]) == 2
    assert "max_gpus" in capsys.readouterr().err


@pytest.mark.parametrize("flag,value", [("--max-days", "0"), ("--max-usd", "-1")])
def test_bad_constraints_are_refused_by_name(capsys, flag, value):
    assert main(["plan", "--model", "llama-3.1-8b", "--n-gpus", "8", flag, value]) == 2
    assert flag[2:].replace("-", "_") in capsys.readouterr().err


def test_time_and_cost_answers_under_constraints_and_relaxing_never_hurts():
    """The Time & cost page's equivalents (ui/compute.constrained_answers over the page's points)."""
    from core.estimate import config_from_inputs
    from ui import compute as C
    cfg = config_from_inputs(model="llama-3.1-8b", tokens=1e12, mfu="auto")
    df = C.time_cost(cfg, ("h100-sxm", "b200", "a100-80gb"), (8, 16, 32, 64, 128, 256))
    tight = C.constrained_answers(df, 20.0, None)
    loose = C.constrained_answers(df, 40.0, None)
    assert tight["n"] and all(r["days_with_failures"] <= 20.0 for r in tight["cheapest"] + tight["fastest"])
    assert loose["cheapest"][0]["cost_with_failures_usd"] <= tight["cheapest"][0]["cost_with_failures_usd"]
    cap = C.constrained_answers(df, None, tight["cheapest"][0]["cost_with_failures_usd"] * 1.5)
    more = C.constrained_answers(df, None, tight["cheapest"][0]["cost_with_failures_usd"] * 3)
    assert more["fastest"][0]["days_with_failures"] <= cap["fastest"][0]["days_with_failures"]
    assert C.constrained_answers(df, 1e-4, None)["n"] == 0


def test_time_and_cost_page_shows_the_constrained_answer():
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"), default_timeout=60)
    at.query_params["tc_maxd"] = "30"
    at.run()
    at.switch_page("pages/05_time_cost.py").run()
    assert not at.exception
    assert any("Cheapest within the constraints" in s.value for s in at.success)
