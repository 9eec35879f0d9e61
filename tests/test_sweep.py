"""Sweeps: the spec (validation, JSON, URL token, row count), chunked evaluation equal to one-by-one estimates,
invalid rows with reasons, the row cap, and the CLI."""
from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pyarrow.parquet as pq
import pytest

import core.inputs as I
import core.sweep as S
from core.cli import main
from core.estimate import config_from_inputs, estimate
from core.sweep import Range, SweepSpec, check_rows, run_sweep, to_table

ISSUE_SPEC = {"model": ["llama-3.1-8b", "llama-3.1-70b"], "seq_len": {"from": 1024, "to": 131072, "step": "pow2"},
              "n_gpus": [8, 64, 512], "zero_stage": [1, 3], "recompute": ["none", "full"], "gpu": ["h100-sxm"]}

# Presets and a raw size, an architecture override that some heads counts refuse, layouts that do not divide or
# exceed the heads, a dtype one accelerator lacks, recipes (one clashing with master weights), overheads and a
# measured step time: every source of rows and reasons (13,824 rows; a seeded sample is compared one by one).
MIXED_SPEC = {"model": ["llama-3.1-8b", "mixtral-8x7b", 7e9], "n_heads": [32, 48], "seq_len": [512, 4096],
              "n_gpus": [8, 64], "tp": [1, 3, 64], "pp": [1, 2], "zero_stage": [0, 3],
              "recompute": ["none", "selective", "full"], "gpu": ["h100-sxm", "a100-80gb"],
              "compute_dtype": ["bf16", "fp8"], "recipe": ["zero-16", "fp32-16"], "master_weights": [True, False],
              "flash_attention": True, "micro_batch": 2, "overhead": "realistic", "step_time_s": 10.0,
              "global_batch": 256, "tokens": 2e11}
SAMPLE = 1500


def _inputs(spec: SweepSpec, combo) -> dict:
    inp = dict(zip(spec.names, combo))
    if not isinstance(inp.get("model", ""), str):
        inp["n_params"] = inp.pop("model")
    return inp


def _label(inp: dict) -> str:
    return inp["model"] if "model" in inp else S.build_model(n_params=inp["n_params"]).name


def _rows_by_inputs(spec: SweepSpec, table) -> dict:
    keys = [k for k in spec.names if k not in ("n_params",)]
    out = {}
    for r in table.to_pylist():
        out[tuple(r[k] for k in keys)] = r
    return out, keys


@pytest.fixture(scope="module")
def mixed():
    spec = SweepSpec.from_dict(MIXED_SPEC)
    return spec, to_table(spec, chunk_rows=5000)


# --- the spec -----------------------------------------------------------------------------------------------------

def test_issue_example_row_count_and_round_trips():
    spec = SweepSpec.from_dict(ISSUE_SPEC)
    assert spec.n_rows == 2 * 8 * 3 * 2 * 2 * 1
    assert spec.values("seq_len") == tuple(1024 * 2**i for i in range(8))
    assert SweepSpec.from_json(spec.to_json()) == spec
    assert SweepSpec.from_token(spec.to_token()) == spec
    assert spec.to_token().replace("-", "").replace("_", "").isalnum()  # URL-safe alphabet, no padding
    again = SweepSpec.from_json(json.dumps(dict(reversed(list(ISSUE_SPEC.items())))))
    assert again == spec and again.table_name == spec.table_name and again.to_json() == spec.to_json()
    assert spec.replace(n_gpus=[8]).table_name != spec.table_name
    assert hash(spec) == hash(again)


@pytest.mark.parametrize("rng, integer, expected", [
    (Range(1024, 131072, "pow2"), True, tuple(1024 * 2**i for i in range(8))),
    (Range(0.3, 0.6, 0.1), False, (0.3, 0.4, 0.5, 0.6)),
    (Range(1, 9, 4), True, (1, 5, 9)),
    (Range(1e9, 1e12, "log", 4), False, (1e9, 1e10, 1e11, 1e12)),
    (Range(1, 4, "log", 10), True, (1, 2, 3, 4)),  # rounded, duplicates dropped
    (Range(7, 7, 1), True, (7,)),
    (Range(1, 1e9, "log"), False, tuple(10.0**i for i in range(10))),  # 10 points unless "n" says
])
def test_ranges(rng, integer, expected):
    assert rng.values(integer) == expected
    assert rng.count(integer) == len(expected)


def test_counts_known_without_expanding():
    spec = SweepSpec.from_dict({"model": "llama-3.1-8b", "seq_len": {"from": 1, "to": 2_000_000_000, "step": 1},
                                "n_gpus": {"from": 1, "to": 1000, "step": 1}})
    assert spec.n_rows == 2 * 10**12  # counted, never built
    with pytest.raises(ValueError, match="seq_len"):
        check_rows(spec)


@pytest.mark.parametrize("spec, field", [
    ({"model": "llama-3.1-8b", "seq_length": [1]}, "seq_length"),
    ({"model": "llama-3.1-8b", "seq_len": []}, "seq_len"),
    ({"model": "llama-3.1-8b", "seq_len": [1024, 1024]}, "seq_len"),
    ({"model": "llama-3.1-8b", "seq_len": [1024.5]}, "seq_len"),
    ({"model": "llama-3.1-8b", "seq_len": ["1024"]}, "seq_len"),
    ({"model": "llama-3.1-8b", "seq_len": {"from": 4096, "to": 1024, "step": "pow2"}}, "seq_len"),
    ({"model": "llama-3.1-8b", "seq_len": {"from": 0, "to": 1024, "step": "pow2"}}, "seq_len"),
    ({"model": "llama-3.1-8b", "seq_len": {"from": 1, "to": 1024, "step": 0}}, "seq_len"),
    ({"model": "llama-3.1-8b", "seq_len": {"from": 1, "to": 1024, "step": 1.5}}, "seq_len"),
    ({"model": "llama-3.1-8b", "seq_len": {"from": 1, "to": 1024, "step": "log", "n": 1}}, "seq_len"),
    ({"model": "llama-3.1-8b", "seq_len": {"from": 1, "to": 1024}}, "seq_len"),
    ({"model": "llama-3.1-8b", "mfu": {"from": 0.5, "to": 0.6, "step": 1e-12}}, "mfu"),
    ({"model": "llama-3.1-8b", "mfu": {"from": 0.5, "to": 0.6, "step": 0.1, "n": 3}}, "mfu"),
    ({"model": "llama-3.1-8b", "recompute": {"from": 1, "to": 2, "step": 1}}, "recompute"),
    ({"model": "llama-3.1-8b", "recompute": ["sometimes"]}, "recompute"),
    ({"model": "llama-3.1-8b", "flash_attention": [1]}, "flash_attention"),
    ({"model": ["llama-9"]}, "model"),
    ({"model": [-5]}, "model"),
    ({"model": "llama-3.1-8b", "gpu": ["h900"]}, "gpu"),
    ({"model": "llama-3.1-8b", "gpu": "custom"}, "gpu"),
    ({"model": "llama-3.1-8b", "hf_config": "config.json"}, "hf_config"),
    ({"seq_len": 1024}, "model"),
    ({"model": "llama-3.1-8b", "step_time_s": 1.0}, "step_time_s"),
    ({"model": "llama-3.1-8b", "step_time_s": 0.0, "global_batch": 8}, "step_time_s"),
    ({"model": "llama-3.1-8b", "price_per_gpu_hour": [-1.0]}, "price_per_gpu_hour"),
    ({"model": "llama-3.1-8b", "drop_invalid": "yes"}, "drop_invalid"),
])
def test_invalid_specs_name_the_field(spec, field):
    with pytest.raises(ValueError, match=rf"^{field}:"):
        SweepSpec.from_dict(spec)


@pytest.mark.parametrize("token", ["", "!!!", "abc", "eJzLSM3JyVcozy_KSQEAGgQEXQ", "e" * 30000, None])
def test_malformed_tokens_are_refused(token):
    with pytest.raises(ValueError, match="^(token|spec|model)"):
        SweepSpec.from_token(token)


def test_malformed_json_is_refused():
    for text in ("{", "[1, 2]", '{"model": "llama-3.1-8b", "seq_len": NaN}'):
        with pytest.raises(ValueError):
            SweepSpec.from_json(text)


# --- evaluation -----------------------------------------------------------------------------------------------------

def test_row_count_matches_spec_and_chunking_does_not_change_rows(mixed):
    spec, table = mixed
    assert table.num_rows == spec.n_rows
    issue = SweepSpec.from_dict(ISSUE_SPEC)
    small = to_table(issue, chunk_rows=7)  # many chunks: leading axes fixed, one axis sliced
    assert small.num_rows == issue.n_rows
    assert small.to_pylist() == to_table(issue).to_pylist()


def test_sweep_equals_one_by_one_estimates(mixed):
    """Every row equals `estimate(config_from_inputs(...))` of its inputs, to the bit; rows that
    `config_from_inputs` refuses are invalid, with the message's reason and NULL numbers."""
    spec, table = mixed
    rows, keys = _rows_by_inputs(spec, table)
    assert len(rows) == spec.n_rows  # the input columns identify every row
    n_valid = n_invalid = 0
    reasons = set()
    combos = list(itertools.product(*(spec.values(k) for k in spec.names)))
    pick = np.random.default_rng(0).choice(len(combos), SAMPLE, replace=False)
    for combo in (combos[i] for i in pick):
        inp = _inputs(spec, combo)
        r = rows[tuple(_label(inp) if k == "model" else inp[k] for k in keys)]
        try:
            cfg = config_from_inputs(**inp)
        except ValueError as e:
            n_invalid += 1
            assert not r["valid"] and not r["fits"] and r["reason"] and str(e).startswith(r["reason"])
            assert r["total_bytes"] is None and r["cost_usd"] is None and r["binding"] is None
            reasons.add(r["reason"])
            continue
        n_valid += 1
        assert r["valid"] and r["reason"] == ""
        for k, v in estimate(cfg).items():
            if k in ("model", "gpu"):
                continue
            if v is None or (isinstance(v, float) and math.isnan(v)):
                assert r[k] is None, k
            else:
                assert r[k] == v, (k, r[k], v)
    assert n_valid > 100 and n_invalid > 100
    assert {"tp·pp: does not divide n_gpus", "tp: larger than n_heads",
            "compute_dtype: this accelerator has no peak for that dtype",
            next(r.text for r in I.RULES if r.field == "master_weights"),
            "d_model: 4096 is not divisible by n_heads=48"} <= reasons


def test_binding_counts_the_gathered_buffers_with_the_state():
    """The sweep's binding is evaluate's: the gathered-parameter buffers count with the state (core/record.BINDING).
    A 405B FSDP row on 4,096 GPUs whose state alone (1.6 GB) is below its overhead (4.4 GB) but whose state and
    buffers (26.8 GB) are the largest group is 'state' in the sweep as in the estimate (the sweep once re-derived
    the binding from the state alone and said 'overhead')."""
    inp = dict(model="llama-3.1-405b", n_gpus=4096, seq_len=512, micro_batch=1, zero_stage=3, recompute="full",
               framework="fsdp")
    rec = estimate(config_from_inputs(**inp))
    assert rec["binding"] == "state"
    assert rec["state_bytes"] < rec["overhead_bytes"] < rec["state_bytes"] + rec["param_buffer_bytes"]
    row = to_table(SweepSpec.from_dict(inp)).to_pylist()[0]
    assert (row["binding"], row["worst_stage"], row["time_source"]) == (rec["binding"], rec["worst_stage"],
                                                                          rec["time_source"])


def test_invalid_rows_carry_a_reason(mixed):
    _, table = mixed
    for r in table.to_pylist():
        assert r["valid"] == (r["reason"] == "")


def test_drop_invalid_keeps_only_valid_rows(mixed):
    spec, table = mixed
    dropped = to_table(spec.replace(drop_invalid=True), chunk_rows=3000)
    n_valid = sum(table.column("valid").to_pylist())
    assert dropped.num_rows == n_valid and all(dropped.column("valid").to_pylist())


def test_presets_and_raw_sizes_share_the_model_axis():
    spec = SweepSpec.from_dict({"model": ["llama-3.1-8b", 3e9], "n_params": {"from": 1e9, "to": 1e11, "step": "log",
                                                                           "n": 3}, "seq_len": [1024, 2048]})
    assert spec.shape == {"model": 5, "seq_len": 2} and spec.n_rows == 10
    t = to_table(spec)
    assert t.num_rows == 10
    assert sorted(set(t.column("model").to_pylist())) == ["llama-3.1-8b", "raw-1e+09", "raw-1e+10", "raw-1e+11",
                                                          "raw-3e+09"]
    raw = [r for r in t.to_pylist() if r["model"] == "raw-1e+10" and r["seq_len"] == 1024][0]
    assert raw["total_bytes"] == estimate(config_from_inputs(n_params=1e10, seq_len=1024))["total_bytes"]


def test_key_inputs_are_columns_even_when_fixed():
    t = to_table(SweepSpec.from_dict({"model": "gpt-3-1.3b", "tokens": [1e9, 2e9]}))
    for k in S.KEY_INPUTS:
        assert k in t.column_names
    assert t.column("gpu").to_pylist() == ["h100-sxm"] * 2
    assert t.column("seq_len").to_pylist() == [4096] * 2  # the schema default (core/inputs.py)


def test_measured_throughput_from_step_time():
    spec = SweepSpec.from_dict({"model": "llama-3.1-8b", "seq_len": [2048, 4096], "step_time_s": [1.5, 3.0],
                                "global_batch": 256, "n_gpus": 64})
    for r in to_table(spec).to_pylist():
        one = estimate(config_from_inputs(model="llama-3.1-8b", seq_len=r["seq_len"], n_gpus=64,
                                          step_time_s=r["step_time_s"], global_batch=256))
        assert r["achieved_mfu"] == one["achieved_mfu"] and r["achieved_hfu"] == one["achieved_hfu"]


def test_run_sweep_reports_progress_on_the_callers_thread():
    import threading

    from core import db
    spec = SweepSpec.from_dict(ISSUE_SPEC)
    seen = []
    con = db.connect()
    run_sweep(spec, con, progress=lambda d, t: seen.append((d, t, threading.current_thread())), chunk_rows=40)
    assert seen[-1][:2] == (spec.n_rows, spec.n_rows) and len(seen) > 1
    assert {th for *_, th in seen} == {threading.current_thread()}

    def boom(done, total):
        raise KeyError("stop")
    with pytest.raises(KeyError):  # a failing callback stops the run: nothing half-written, the previous table kept
        run_sweep(spec, con, progress=boom, replace=True, chunk_rows=40)
    assert db.has_sweep(con, spec.table_name) and db.count(con, spec.table_name) == spec.n_rows
    assert db.catalog(con)["id"].tolist() == [spec.table_name]
    assert not con.sql("SELECT * FROM duckdb_tables() WHERE table_name LIKE 'tmp_%'").fetchall()
    assert run_sweep(spec, con) == spec.table_name and db.count(con, spec.table_name) == spec.n_rows
    con.close()


def test_progress_is_reported_up_to_the_total():
    spec = SweepSpec.from_dict(ISSUE_SPEC)
    seen = []
    sw = S.Sweep(spec, chunk_rows=50)
    for _ in sw.reader(lambda done, total: seen.append((done, total))):
        pass
    assert seen[-1] == (spec.n_rows, spec.n_rows)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and len(seen) > 1


# --- the row cap ----------------------------------------------------------------------------------------------------

def test_row_cap_stops_an_oversized_spec_before_evaluating(monkeypatch):
    def boom(**_):
        raise AssertionError("evaluate ran")
    monkeypatch.setattr(S, "evaluate", boom)
    spec = SweepSpec.from_dict({"model": "llama-3.1-8b", "seq_len": {"from": 1, "to": 100000, "step": 1},
                                "n_gpus": {"from": 1, "to": 1000, "step": 1}, "tp": [1, 2]})
    with pytest.raises(ValueError) as e:
        run_sweep(spec, con=None, max_rows=1_000_000)
    msg = str(e.value)
    assert msg.startswith("sweep: 200,000,000 rows") and "seq_len (100000 values)" in msg and "n_gpus" in msg
    with pytest.raises(ValueError, match="row cap"):
        list(S.iter_batches(spec))  # the default cap too


# --- CLI ------------------------------------------------------------------------------------------------------------

def test_cli_sweep_to_parquet_csv_and_duckdb(tmp_path, capsys):
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(ISSUE_SPEC))
    n = SweepSpec.from_dict(ISSUE_SPEC).n_rows
    out = tmp_path / "x.parquet"
    assert main(["sweep", "--spec", str(spec_path), "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["rows"] == n == pq.read_table(out).num_rows
    assert 0 < summary["fits"] <= summary["valid"] <= n
    assert main(["sweep", "--spec", SweepSpec.from_dict(ISSUE_SPEC).to_token(), "--out", str(tmp_path / "x.csv")]) == 0
    text = capsys.readouterr().out
    assert f"{n:,} rows" in text and "valid" in text and "fit" in text
    assert len((tmp_path / "x.csv").read_text().splitlines()) == n + 1
    assert main(["sweep", "--spec", json.dumps(ISSUE_SPEC), "--out", str(tmp_path / "x.duckdb"), "--quiet"]) == 0
    from core import db
    con = db.connect(tmp_path / "x.duckdb")
    info = db.sweep_info(con, SweepSpec.from_dict(ISSUE_SPEC).table_name)
    assert info["n_rows"] == n and info["spec"] == SweepSpec.from_dict(ISSUE_SPEC).to_dict()
    con.close()


@pytest.mark.parametrize("spec, out, msg", [
    ('{"model": "llama-9"}', "x.parquet", "error: model: unknown preset"),
    ('{"model": "llama-3.1-8b", "seq_len": {"from": 1, "to": 1e7, "step": 1}}', "x.parquet",
     "error: sweep: 10,000,000"),
    ('{"model": "llama-3.1-8b"}', "x.json", "error: out:"),
    ("missing.json", "x.parquet", "error: spec: cannot read"),
    ('{"model": ', "x.parquet", "error: spec: not valid JSON"),
])
def test_cli_errors_exit_2_without_traceback(tmp_path, capsys, spec, out, msg):
    assert main(["sweep", "--spec", spec, "--out", str(tmp_path / out), "--max-rows", "1000000"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(msg) and "Traceback" not in err


def test_arrow_schema_has_explicit_types():
    t = to_table(SweepSpec.from_dict(ISSUE_SPEC))
    types = {f.name: str(f.type) for f in t.schema}
    assert types["seq_len"] == "int32" and types["total_bytes"] == "double" and types["fits"] == "bool"
    assert types["model"].startswith("dictionary<values=string, indices=int16")
    assert np.isnan(t.column("achieved_mfu").to_numpy(zero_copy_only=False)).all()  # NULL: nothing measured
    assert t.column("achieved_mfu").null_count == t.num_rows


def test_benchmark_grids_have_their_sizes():
    from pathlib import Path
    bench = Path(__file__).resolve().parent.parent / "bench"
    sizes = {"sweep_1m.json": 1_000_000, "sweep_10m.json": 10_000_000, "sweep_peer_500.json": 500}
    for name, n in sizes.items():
        assert SweepSpec.from_json((bench / name).read_text()).n_rows == n


# --- property: any small grid equals its configurations one by one ------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from core.hardware import accelerator_names  # noqa: E402
from core.model import preset_names  # noqa: E402


def _some(values, k=2):
    return st.lists(st.sampled_from(values), min_size=1, max_size=k, unique=True)


@st.composite
def small_specs(draw):
    spec = {"model": draw(st.lists(st.one_of(st.sampled_from(preset_names()),
                                             st.floats(1e8, 1e12).map(lambda x: float(f"{x:.3g}"))),
                                   min_size=1, max_size=2, unique_by=lambda v: (type(v), v)))}
    optional = {
        "seq_len": _some([1, 2, 512, 4096, 32768]), "micro_batch": _some([1, 3, 8]),
        "n_gpus": _some([1, 6, 8, 64]), "tp": _some([1, 2, 3, 8, 128]), "pp": _some([1, 2, 5]),
        "virtual_stages": _some([1, 2]), "zero_stage": _some([0, 1, 2, 3]),
        "recompute": _some(["none", "selective", "full"]), "flash_attention": _some([False, True]),
        "sequence_parallel": _some([False, True]), "gpu": _some(accelerator_names()),
        "compute_dtype": _some(["bf16", "fp8", "fp32"]), "recipe": _some(["zero-16", "fp32-16", "cs336-12"]),
        "optimizer": _some(["adamw", "adafactor", "sgd"]), "overhead": _some(["none", "realistic"]),
        "mfu": _some([0.3, 0.5]), "attention_flops": _some(["none", "causal"]), "fp32_loss": _some([True]),
        "n_kv_heads": _some([1, 8]), "price_per_gpu_hour": _some([0.0, 2.5]),
    }
    for k in draw(st.lists(st.sampled_from(sorted(optional)), max_size=6, unique=True)):
        spec[k] = draw(optional[k])
    return SweepSpec.from_dict(spec)


@settings(max_examples=60, deadline=None)
@given(small_specs())
def test_any_small_grid_equals_one_by_one(spec):
    if spec.n_rows > 64:
        spec = spec.replace(**{k: spec.values(k)[:1] for k, c in spec.shape.items() if c > 1 and k != "model"})
    table = to_table(spec, chunk_rows=5)
    assert table.num_rows == spec.n_rows
    rows, keys = _rows_by_inputs(spec, table)
    for combo in itertools.product(*(spec.values(k) for k in spec.names)):
        inp = _inputs(spec, combo)
        r = rows[tuple(_label(inp) if k == "model" else inp[k] for k in keys)]
        try:
            cfg = config_from_inputs(**inp)
        except ValueError as e:
            assert not r["valid"] and str(e).startswith(r["reason"]) and r["total_bytes"] is None
            continue
        assert r["valid"], r["reason"]
        for k, v in estimate(cfg).items():
            if k in ("model", "gpu"):
                continue
            assert r[k] == (None if v is None or (isinstance(v, float) and math.isnan(v)) else v), k


def test_largest_of_four_is_argmax_first_of_equal_maxima():
    """evaluate's binding (core/estimate._largest_of_four) is np.argmax over the four groups, ties to the first, on
    broadcast shapes and many ties (small integers)."""
    from core.estimate import _largest_of_four
    rng = np.random.default_rng(1)
    for shapes in (((500,),) * 4, ((20, 1), (1, 25), (20, 25), (1, 1))):
        a = [rng.integers(0, 3, size=sh).astype(float) for sh in shapes]
        want = np.argmax(np.stack(np.broadcast_arrays(*a)), axis=0)
        got = _largest_of_four(*a)
        assert got.dtype == np.int16 and np.array_equal(got, want)


def test_the_nan_check_reads_a_broadcast_columns_held_values():
    """core/grid.held: a stride-0 axis repeats one stored value, so the maximum over the held values is NaN exactly
    when the broadcast column holds a NaN; a 0-d array stays as it is."""
    import numpy as np
    from core import grid as G
    base = np.array([[1.0], [np.nan], [3.0]])
    v = np.broadcast_to(base, (3, 5))
    assert G.held(v).shape == (3, 1) and np.shares_memory(G.held(v), base)
    assert np.isnan(np.maximum.reduce(G.held(v), axis=None)) and np.isnan(np.maximum.reduce(v, axis=None))
    ok = np.broadcast_to(np.arange(4.0), (6, 4))
    assert G.held(ok).shape == (1, 4) and np.maximum.reduce(G.held(ok), axis=None) == 3.0
    assert G.held(np.array(2.0)).shape == () and G.held(np.arange(3.0)).shape == (3,)
