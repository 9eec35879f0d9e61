"""Issue 10, "Safe to host publicly": the app's probes, one per numbered reproducer (the core's and the CLI's are
in tests/test_hardening.py). Under AppTest, in-process; the load test with real concurrent sessions and the
server's memory is bench/bench_load.py (bench/RESULTS.md)."""
from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import duckdb
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from rendered import rendered  # tests/rendered.py (pytest puts tests/ on the path)

from core import db, measure
from test_app import run_page  # the entrypoint first, then the page, with the link's parameters

ROOT = Path(__file__).resolve().parent.parent
CONFIG = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
NESTED = ("[" * 200_000 + "]" * 200_000).encode()
# the issue's link: a measurement of 1.00 GiB kept that took a fresh server from 59 MB to 1,990 MB, with no click
WORST_LINK = {"pt_go": "true", "pt_src": "architecture", "pt_layers": "2", "pt_dmodel": "32", "pt_heads": "1",
              "pt_kv": "1", "pt_dff": "32", "pt_vocab": "32000", "pt_seq": "64", "pt_mb": "128"}
# a Sweeps link that runs on opening: 195,840 rows, more than a CSV download takes
BIG_SWEEP = {"sw_models": ["llama-3.1-8b", "llama-3.1-70b", "mistral-7b", "mixtral-8x7b"], "sw_gmin": "1",
             "sw_gmax": "65536", "sw_smin": "128", "sw_smax": "2097152", "sw_mbs": ["1", "2", "4", "8"],
             "sw_tpdeg": ["1", "2"]}


def errors(at: AppTest) -> str:
    return rendered("\n".join(e.value for e in at.error))


@pytest.fixture
def fresh_caches():
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()


# --- 1: no traceback, no server path, for any uncaught exception; uploads bounded ------------------------------------

def test_1_config_hides_error_details_and_bounds_uploads():
    from ui.pickers import HF_MAX_BYTES
    assert CONFIG["client"]["showErrorDetails"] in ("type", "none")
    assert CONFIG["server"]["maxUploadSize"] == 1 and HF_MAX_BYTES == 1 << 20  # Streamlit's MB is 2^20 bytes


def _crash():
    import json as j
    j.loads("[" * 100_000 + "]" * 100_000)  # what an unbounded parser did with the issue's upload


def test_1_an_uncaught_exception_shows_no_message_trace_or_path():
    at = AppTest.from_function(_crash, default_timeout=30).run()
    (exc,) = at.exception
    assert "RecursionError" not in exc.message and "/" not in exc.message and not list(exc.stack_trace)


def test_1_the_issue_upload_is_a_message_naming_the_file():
    from ui.pickers import hf_model
    with pytest.raises(ValueError, match="^config: nested 200,000 levels deep"):
        hf_model(NESTED)
    with pytest.raises(ValueError, match="^config: larger than 1 MiB"):
        hf_model(b" " * (50 << 20))


def test_1_4_the_uploader_accepts_what_the_page_accepts():
    at = run_page("pages/01_calculator.py", src="hf-config")
    (up,) = at.get("file_uploader")
    assert up.proto.max_upload_size_mb == 1


# --- 2: the PyTorch check runs on a click only, one at a time, within a cap set from measured RSS ---------------------

@pytest.fixture
def compare_calls(monkeypatch, fresh_caches):
    calls = []
    real = measure.compare_isolated  # what the page runs: `compare` in a capped child process

    def recording(cfg, **kw):
        calls.append(cfg)
        return real(cfg, **kw)
    monkeypatch.setattr(measure, "compare_isolated", recording)
    return calls


def test_2_the_issue_link_measures_nothing(compare_calls):
    at = run_page("pages/07_check_pytorch.py", **WORST_LINK)
    assert not at.exception and not compare_calls and not at.metric
    assert "**size**" in errors(at)  # and a click could not run it either: 4× 1.00 GiB is over the cap


def test_2_a_link_with_go_waits_for_a_click_then_keeps_the_result(compare_calls):
    pytest.importorskip("torch")
    at = run_page("pages/07_check_pytorch.py", pt_go="true", pt_layers="1", pt_seq="32")
    assert not at.exception and not compare_calls and not at.metric
    at.button(key="pt_run").click().run()
    assert not at.exception and len(compare_calls) == 1 and at.metric
    at.run()  # a rerun with the same inputs still shows it, without measuring again
    assert len(compare_calls) == 1 and at.metric and not at.button


def test_2_one_measurement_at_a_time(compare_calls, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.setattr(measure, "APP_WAIT_S", 0.05)
    at = run_page("pages/07_check_pytorch.py", pt_layers="1", pt_seq="32")
    with measure.APP_RUN_LOCK:  # another visitor's measurement
        at.button(key="pt_run").click().run()
    assert not at.exception and not compare_calls and "one at a time" in at.warning[0].value


def test_2_cap_bounds_the_resident_memory_a_measurement_adds():
    """The cap is 4× the bytes `measurement_cost` counts + 64 MiB, from RSS measured on 16 shapes (bench/RESULTS.md).
    Re-measured here on the issue's shape (logits) and the worst ratio found (flash, long sequence)."""
    pytest.importorskip("torch")
    shapes = [dict(n_layers=2, d_model=32, n_heads=1, n_kv_heads=1, d_ff=32, vocab_size=32000, seq_len=64,
                   micro_batch=32, mlp="swiglu", norm="rmsnorm", position="rotary", dropout=False,
                   tied_embeddings=False),
              dict(n_layers=2, d_model=128, n_heads=2, d_ff=344, vocab_size=1000, seq_len=1024, micro_batch=4,
                   mlp="swiglu", norm="rmsnorm", position="rotary", dropout=False, tied_embeddings=False,
                   flash_attention=True)]
    for kw in shapes:
        out = subprocess.run([sys.executable, "-c", _RSS_PROBE, json.dumps(kw)], cwd=ROOT, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        r = json.loads(out.stdout.strip().splitlines()[-1])
        assert r["added_bytes"] <= r["rss_bytes"], r
        assert r["added_bytes"] > 0.25 * r["bytes"], r  # the probe sees the run (not a vacuous bound)


# VmHWM, the peak of this process image: ru_maxrss would carry the parent's peak over exec (Linux keeps it)
_RSS_PROBE = """
import json, sys
from core.estimate import config_from_inputs
from core import measure
import torch
def status(key):
    return int(next(l for l in open('/proc/self/status') if l.startswith(key)).split()[1]) * 1024
torch.set_num_threads(2)
measure.compare(config_from_inputs(n_layers=1, d_model=32, n_heads=1, vocab_size=64, seq_len=16), cap=None)
cfg = config_from_inputs(**json.loads(sys.argv[1]))
before = status('VmRSS')
measure.compare(cfg, cap=None)
peak = status('VmHWM')
cost = measure.measurement_cost(cfg)
print(json.dumps({"added_bytes": peak - before, "rss_bytes": cost["rss_bytes"], "bytes": cost["bytes"]}))
"""


# --- 3: the Sweeps page with a busy or failing database: a message, never a traceback ---------------------------------

def test_3_a_refused_run_and_a_database_error_are_messages(monkeypatch, fresh_caches):
    from ui import sweeps as W

    def busy(*a, **k):
        raise ValueError("busy: the server is keeping 3 sweeps (3,000,000 rows) that visitors are viewing")
    monkeypatch.setattr(W.S.SweepStore, "ensure", busy)
    at = run_page("pages/06_sweeps.py")
    assert not at.exception and "**busy**" in errors(at)
    monkeypatch.undo()

    def conflict(*a, **k):
        raise duckdb.TransactionException("TransactionContext Error: Conflict on tuple deletion!")
    monkeypatch.setattr(db, "count", conflict)
    at = run_page("pages/06_sweeps.py")
    assert not at.exception and "**database**" in errors(at) and "Conflict" in errors(at)


# --- 4: downloads bounded ---------------------------------------------------------------------------------------------

def test_4_csv_over_the_row_limit_offers_parquet(fresh_caches):
    from ui import sweeps as W
    at = run_page("pages/06_sweeps.py", **BIG_SWEEP)
    assert not at.exception and not errors(at) and not at.get("download_button")  # too big to start from a link
    at.button(key="sw_run").click().run()
    assert not at.exception and not errors(at)
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Rows (Parquet)" in labels and "Rows (CSV)" not in labels
    assert any(f"CSV is offered up to {W.CSV_MAX_ROWS:,} rows and 195,840 match" in c.value for c in at.caption)
    table = next(t for t in W.db.catalog(W.database())["id"] if W.info(t)["n_rows"] == 195_840)
    assert W.export_bytes(table, (), "csv").startswith(f"No file: rows: a CSV is offered up to {W.CSV_MAX_ROWS:,}"
                                                       .encode())
    assert W.export_bytes(table, (), "parquet")[:4] == b"PAR1"
    small = (("model", "=", "llama-3.1-8b"), ("n_gpus", "=", 8))
    assert W.export_bytes(table, small, "csv").startswith(b"model,")
    at.selectbox(key="sw_f1c").set_value("n_gpus").run()
    at.text_input(key="sw_f1v").set_value("8").run()  # 11,520 rows match: a CSV again
    assert "Rows (CSV)" in [b.proto.label for b in at.get("download_button")] and not at.exception


# --- 7: grouping by `valid`; an upload beyond the fields' limits ----------------------------------------------------

def test_7_grouping_by_valid_keeps_every_result(fresh_caches):
    at = run_page("pages/06_sweeps.py", sw_by="valid")
    assert not at.exception and not errors(at)
    summary = at.dataframe[0].value
    assert {"valid", "valid rows", "rows", "fit"} <= set(summary.columns)
    labels = [b.proto.label for b in at.get("download_button")]
    assert {"Summary (CSV)", "Rows (CSV)", "Rows (Parquet)"} <= set(labels) and len(at.get("vega_lite_chart")) == 2


def test_7_an_upload_beyond_the_fields_is_refused_by_name_and_one_within_fills_them():
    """The app reads an upload as the CLI reads --hf-config: the schema's bounds by name (core/inputs.py), the
    fields it fills every architecture field the schema has (issue 17: the app's import equals the CLI's)."""
    from core.estimate import build_model
    from core.inputs import BY_NAME
    from ui.pickers import arch_values, hf_model
    big = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 2**30, "num_attention_heads": 8,
           "intermediate_size": 64, "vocab_size": 1000}
    with pytest.raises(ValueError, match=r"^d_model: must be from 1 to 1,048,576"):
        hf_model(json.dumps(big).encode())
    ok = {**big, "hidden_size": 4096, "num_hidden_layers": 48, "num_key_value_heads": 2, "vocab_size": 128256}
    m = hf_model(json.dumps(ok).encode())
    v = arch_values(m)
    assert (v["layers"], v["dmodel"], v["kv"], v["vocab"]) == (48, 4096, 2, 128256)
    assert m == build_model(hf_config=ok)  # the CLI's reading
    for f in ("n_layers", "d_model", "n_kv_heads", "vocab_size"):
        assert BY_NAME[f].lo <= getattr(m, f) <= BY_NAME[f].hi


# --- 8: the app's database: a private spill directory, and no user text ever reaches SQL -----------------------------

def test_8_the_apps_database_spills_privately_and_cannot_write_outside(fresh_caches, tmp_path):
    from ui import sweeps as W
    con = W.database()
    spill = Path(con.execute("SELECT current_setting('temp_directory')").fetchone()[0])
    assert spill.name.startswith("planner-duckdb-") and oct(spill.stat().st_mode & 0o777) == "0o700"
    assert con.execute("SELECT current_setting('max_temp_directory_size')").fetchone()[0] == "2.7 GiB"  # TEMP_LIMIT 3GB
    with con.cursor() as cur:
        for sql in (f"COPY sweep_catalog TO '{tmp_path}/x.csv'", f"ATTACH '{tmp_path}/evil.db' AS e",
                    "SELECT * FROM read_csv('/etc/passwd')", "SET temp_directory = '/tmp'"):
            with pytest.raises(duckdb.Error):
                cur.execute(sql)
    assert not list(tmp_path.iterdir())


class _Recording:
    """A DuckDB connection or cursor that logs every SQL text it is given."""

    def __init__(self, real, log):
        self._real, self._log = real, log

    def cursor(self):
        return _Recording(self._real.cursor(), self._log)

    def execute(self, sql, *a, **k):
        self._log.append(sql)
        return self._real.execute(sql, *a, **k)

    def sql(self, sql, *a, **k):
        self._log.append(sql)
        return self._real.sql(sql, *a, **k)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._real.close()

    def __getattr__(self, name):
        return getattr(self._real, name)


HOSTILE = "x'); COPY sweep_catalog TO '/tmp/pwned.csv'; --"


def test_8_no_user_text_reaches_sql(monkeypatch, fresh_caches):
    """Every SQL text the Sweeps page sends, with hostile values in its filters and its link: none holds them
    (values are bound parameters; identifiers come from the table's allow-list or our own hash)."""
    log = []
    real = db.connect
    monkeypatch.setattr(db, "connect", lambda *a, **k: _Recording(real(*a, **k), log))
    at = run_page("pages/06_sweeps.py", sw_f1c="model", sw_f1v=HOSTILE, sw_f2c=HOSTILE, sw_f2v="1",
                  sw_by=["model", HOSTILE])
    at.selectbox(key="sw_f3c").set_value("gpu").run()
    at.text_input(key="sw_f3v").set_value(HOSTILE).run()
    at.selectbox(key="sw_f3o").set_value("in").run()
    assert not at.exception and log
    assert not [s for s in log if "pwned" in s or "COPY" in s.upper()]
    assert not Path("/tmp/pwned.csv").exists()


def test_8_only_core_db_executes_sql():
    import ast
    sources = [ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "ui").glob("*.py"),
               *(p for p in (ROOT / "core").glob("*.py") if p.name != "db.py")]
    calls = [(p.name, n.lineno) for p in sources for n in ast.walk(ast.parse(p.read_text()))
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr in ("execute", "executemany", "sql", "query_df", "from_query")]
    assert not calls, calls
