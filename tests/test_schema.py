"""The schema refactor's guarantees (issue 8): one owner of the input vocabulary and of the record, no import
cycle in core/, CLI help from the schema, docs in step with it."""
import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core import inputs as I
from core import record as R
from core.cli import build_parser
from core.estimate import Config, config_from_inputs, evaluate
from core.tables import OPTIMIZERS_TABLE, RECIPES

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "core"


def _imports(path: Path) -> set:
    """core modules imported anywhere in a file (module level and inside functions)."""
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                if node.module:
                    out.add(node.module.split(".")[0])
                else:
                    out.update(a.name for a in node.names)
            elif node.module and node.module.startswith("core."):
                out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[1] for a in node.names if a.name.startswith("core."))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module":
            out.add("<importlib>")
    return out


def _graph() -> dict:
    mods = {p.stem: p for p in CORE.glob("*.py") if p.stem not in ("__init__", "__main__")}
    return {m: {d for d in _imports(p) if d in mods or d == "<importlib>"} for m, p in mods.items()}


def test_core_has_no_import_cycle():
    g = _graph()
    assert all("<importlib>" not in deps for deps in g.values()), "core loads modules by name; import them"
    state = {}

    def visit(m, path):
        state[m] = "open"
        for d in sorted(g[m]):
            if state.get(d) == "open":
                pytest.fail("import cycle: " + " -> ".join(path + [m, d]))
            if d not in state:
                visit(d, path + [m])
        state[m] = "done"

    for m in sorted(g):
        if m not in state:
            visit(m, [])


def test_cycle_finder_finds_a_cycle(tmp_path, monkeypatch):
    """The walker is not vacuous: a function-level import back into a module is seen."""
    (tmp_path / "a.py").write_text("from . import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from .a import x\n")
    assert _imports(tmp_path / "b.py") == {"a"} and _imports(tmp_path / "a.py") == {"b"}


def test_no_core_module_imports_the_cli_or_the_ui():
    for m, deps in _graph().items():
        if m not in ("cli", "__main__"):
            assert "cli" not in deps, f"core/{m}.py imports the CLI"
    for p in CORE.glob("*.py"):
        tree = ast.parse(p.read_text())
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for n in names:
                assert n.split(".")[0] not in ("streamlit", "altair", "ui"), f"core/{p.name} imports {n}"


def test_every_input_has_help_with_a_unit_or_choices():
    for i in I.INPUTS:
        assert i.help and len(i.help) > 8, i.name
        if i.kind in ("int", "float"):
            assert i.unit or i.choices, f"{i.name}: a number needs a unit"
        if i.kind == "choice":
            assert i.choices, i.name
        assert i.group in I.GROUPS


@pytest.mark.parametrize("command", ["estimate", "limits", "advise"])
def test_help_of_each_subcommand_shows_every_input(command):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    text = " ".join(sub.format_help().split())
    for i in I.INPUTS:
        assert i.flag in text, i.name
        assert " ".join(i.describe().split())[:40] in text, i.name


def test_help_runs_as_a_process():
    out = subprocess.run([sys.executable, "-m", "core", "estimate", "--help"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0 and "unit: count (tokens)" in out.stdout and "default: 4096" in out.stdout


def test_config_fields_and_defaults_come_from_the_schema():
    from dataclasses import MISSING, fields
    fs = {f.name: f for f in fields(Config)}
    assert list(fs)[2:] == list(I.CONFIG_FIELDS)
    for n in I.CONFIG_FIELDS:
        assert fs[n].default == I.BY_NAME[n].default, n
    assert fs["model"].default is MISSING


def test_rules_are_rows_and_reasons_derive_from_them():
    assert I.REASONS[0] == "" and len(I.REASONS) == len(I.RULES) + 1
    for code, rule in enumerate(I.RULES, 1):
        assert I.REASONS[code] == f"{rule.field}: {rule.message}"
    cols = config_from_inputs(model="gpt-3-1.3b", tp=2, n_gpus=2).columns()
    cols["tp"] = 3  # breaks "tp·pp does not divide n_gpus" (the first rule it breaks)
    assert I.REASONS[int(I.check(cols))].startswith("tp·pp: does not divide n_gpus")


def test_evaluate_returns_exactly_the_declared_record():
    out = evaluate(**config_from_inputs(model="llama-3.1-8b").columns())
    assert tuple(k for k in out if k != "reason_code") == R.NAMES


@pytest.mark.parametrize("model,kw", [("llama-3.1-8b", {}), ("gpt-3-175b", dict(tp=8, pp=8, n_gpus=512,
                                                                              zero_stage=1, overhead="realistic")),
                                      ("mixtral-8x7b", dict(recompute="full", recipe="playbook-20"))])
def test_memory_parts_sum_to_their_totals(model, kw):
    out = evaluate(**config_from_inputs(model=model, **kw).columns())
    assert np.isclose(sum(out[k] for k in R.STATE_PARTS), out["state_bytes"], rtol=1e-12)
    assert np.isclose(sum(out[k] for k in R.TOTAL_PARTS), out["total_bytes"], rtol=1e-12)


def test_recipes_and_optimizers_are_tables_with_sources():
    assert {r.name: r for r in RECIPES.values()} == RECIPES
    assert all(r.source for r in RECIPES.values()) and all(o.source for o in OPTIMIZERS_TABLE.values())
    assert set(I.BY_NAME["optimizer"].choices) == set(OPTIMIZERS_TABLE)


def test_docs_inputs_table_is_generated_from_the_schema():
    from core.docs import inputs_markdown
    assert (ROOT / "docs" / "inputs.md").read_text() == inputs_markdown(), \
        "docs/inputs.md is stale: run python -m core.docs"
