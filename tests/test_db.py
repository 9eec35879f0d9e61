"""The DuckDB layer: the locked database, the catalog, the app's queries (Pareto frontier on a hand-made table,
the others against plain pandas over the same rows), structured filters, hostile filter values, export."""
from __future__ import annotations

import csv
import json

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core import db
from core.db import Filter
from core.sweep import SweepSpec, code_version, run_sweep, to_table

SPEC = {"model": ["llama-3.1-8b", "llama-3.1-70b"], "seq_len": {"from": 2048, "to": 65536, "step": "pow2"},
        "n_gpus": [8, 64, 512], "tp": [1, 2, 8], "zero_stage": [1, 3], "recompute": ["none", "full"],
        "gpu": ["h100-sxm", "a100-80gb"], "tokens": 1e11}


@pytest.fixture(scope="module")
def sweep():
    con = db.connect()
    spec = SweepSpec.from_dict(SPEC)
    table = run_sweep(spec, con)
    df = to_table(spec).to_pandas()
    for c in df.columns:
        if isinstance(df[c].dtype, pd.CategoricalDtype):
            df[c] = df[c].astype(object)
    yield con, table, df
    con.close()


def _hand_made(con, rows: list[dict]) -> str:
    """A hand-made table registered like a sweep (its name is what the catalog expects)."""
    name = "sweep_" + "0123456789abcdef"
    t = pa.Table.from_pylist(rows)
    db.write_sweep(con, name, t.to_reader(), spec_json="{}", code_version="test",
                   stats=lambda: {"n_rows": len(rows), "n_valid": len(rows), "n_fit": 0, "seconds": 0.0})
    return name


# --- the database ---------------------------------------------------------------------------------------------------

def test_database_cannot_touch_files_or_change_its_configuration(tmp_path):
    secret = tmp_path / "some_local_file.csv"
    secret.write_text("marker\nSECRET-4711\n")
    con = db.connect()
    for sql in (f"SELECT * FROM read_csv('{secret}')", f"COPY (SELECT 1) TO '{tmp_path / 'out.csv'}'",
                f"ATTACH '{tmp_path / 'other.db'}'", "SET enable_external_access = true", "SET threads = 1",
                "INSTALL httpfs"):
        with pytest.raises(duckdb.Error):
            con.sql(sql).fetchall()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["some_local_file.csv"]


def test_catalog_records_each_sweep_and_reuses_it(sweep):
    con, table, df = sweep
    info = db.sweep_info(con, table)
    assert info["n_rows"] == len(df) and info["n_valid"] == int(df["valid"].sum())
    assert info["n_fit"] == int(df["fits"].sum()) and info["code_version"] == code_version()
    assert info["spec"] == SweepSpec.from_dict(SPEC).to_dict() and info["created"] is not None
    assert run_sweep(SweepSpec.from_dict(SPEC), con) == table  # same spec, same code: reused
    assert list(db.catalog(con)["id"]).count(table) == 1
    assert db.count(con, table) == len(df)


def test_connect_fixes_memory_limit_and_temp_directory(tmp_path):
    con = db.connect(memory_limit="64MB", temp_directory=tmp_path / "spill", threads=1)
    spec = SweepSpec.from_dict({"model": ["llama-3.1-8b", "gpt-3-1.3b"], "seq_len": {"from": 1, "to": 2000, "step": 1},
                                "n_gpus": [1, 2, 4, 8, 16, 32, 64, 128], "zero_stage": [0, 3]})
    table = run_sweep(spec, con)
    assert db.count(con, table) == spec.n_rows
    with con.cursor() as cur:
        got = cur.execute("SELECT current_setting('temp_directory'), current_setting('threads')").fetchone()
    assert got == (str(tmp_path / "spill"), 1)
    with pytest.raises(duckdb.Error):
        con.execute("SET memory_limit = '10GB'")
    con.close()


def test_file_database_persists_and_failed_writes_leave_nothing(tmp_path):
    path = tmp_path / "s.duckdb"
    con = db.connect(path)
    spec = SweepSpec.from_dict({"model": "gpt-3-1.3b", "n_gpus": [1, 2, 4]})
    table = run_sweep(spec, con)
    con.close()
    con = db.connect(path)
    assert db.sweep_info(con, table)["n_rows"] == 3 and db.count(con, table) == 3

    def failing():
        yield to_table(spec).to_batches()[0]
        raise RuntimeError("disk on fire")
    other = "sweep_" + "f" * 16
    reader = pa.RecordBatchReader.from_batches(to_table(spec).schema, failing())
    with pytest.raises(Exception, match="disk on fire"):
        db.write_sweep(con, other, reader, "{}", "test", stats=lambda: {})
    assert not db.has_sweep(con, other) and len(db.catalog(con)) == 1
    con.close()


# --- queries --------------------------------------------------------------------------------------------------------

def test_pareto_frontier_on_a_hand_made_table():
    con = db.connect()
    base = {"model": "m", "gpu": "g", "n_gpus": 8, "valid": True, "fits": True}
    points = [(0.5, 200.0), (1.0, 100.0), (2.0, 90.0), (2.0, 80.0), (3.0, 85.0), (4.0, 50.0), (5.0, 50.0),
              (6.0, 60.0)]
    rows = [{**base, "days": d, "cost_usd": c} for d, c in points]
    rows += [{**base, "fits": False, "days": 0.1, "cost_usd": 1.0},  # cheapest and fastest, but does not fit
             {**base, "days": 0.2, "cost_usd": None},  # no price
             {**base, "model": "other", "days": 9.0, "cost_usd": 90.0}]  # its own frontier
    table = _hand_made(con, rows)
    got = db.pareto(con, table)
    assert list(zip(got["model"], got["days"], got["cost_usd"])) == [
        ("m", 0.5, 200.0), ("m", 1.0, 100.0), ("m", 2.0, 80.0), ("m", 4.0, 50.0), ("other", 9.0, 90.0)]
    one = db.pareto(con, table, by=())  # one frontier across models
    assert list(one["days"]) == [0.5, 1.0, 2.0, 4.0]


def test_pareto_has_no_dominated_rows(sweep):
    con, table, df = sweep
    front = db.pareto(con, table)
    ok = df[df["fits"] & df["cost_usd"].notna()]
    for model, f in front.groupby("model"):
        rest = ok[ok["model"] == model]
        for d, c in zip(f["days"], f["cost_usd"]):
            better = rest[(rest["days"] <= d) & (rest["cost_usd"] <= c) & ((rest["days"] < d) | (rest["cost_usd"] < c))]
            assert better.empty
        # and every non-dominated (days, cost) point is on it
        pts = rest.sort_values(["days", "cost_usd"])
        expect = pts[pts["cost_usd"] < pts["cost_usd"].cummin().shift(fill_value=np.inf)]
        assert list(f["days"]) == list(expect["days"])


def test_min_gpus_and_max_seq_len_match_pandas(sweep):
    con, table, df = sweep
    fit = df[df["fits"]]
    got = db.min_gpus(con, table).set_index(["model", "seq_len", "zero_stage"])
    want = fit.groupby(["model", "seq_len", "zero_stage"])["n_gpus"].min()
    cells = df[df["valid"]].groupby(["model", "seq_len", "zero_stage"]).size()
    assert len(got) == len(cells)
    for key in cells.index:
        assert (pd.isna(got.loc[key, "min_gpus"]) if key not in want.index else got.loc[key, "min_gpus"] == want[key])
    got = db.max_seq_len(con, table, filters=[Filter("zero_stage", "=", 3)]).set_index(["model", "n_gpus"])
    want = fit[fit["zero_stage"] == 3].groupby(["model", "n_gpus"])["seq_len"].max()
    for key, v in want.items():
        assert got.loc[key, "max_seq_len"] == v
    row = got.dropna().iloc[0]
    assert row["headroom_bytes"] >= 0 and row["binding"] in ("state", "activations", "logits", "overhead")


def test_fit_region_activations_and_summaries_match_pandas(sweep):
    con, table, df = sweep
    valid = df[df["valid"]]
    fr = db.fit_region(con, table).set_index(["model", "n_gpus", "seq_len"])
    g = valid.groupby(["model", "n_gpus", "seq_len"])
    assert (fr["n_configs"] == g.size()).all() and (fr["n_fit"] == g["fits"].sum()).all()
    assert np.allclose(fr["headroom_bytes"], g["headroom_bytes"].max())
    best = valid.loc[g["headroom_bytes"].idxmax()].set_index(["model", "n_gpus", "seq_len"])["binding"]
    assert (fr["binding"] == best).all()
    act = db.activations_vs_seq(con, table, filters=[Filter("n_gpus", "=", 8), Filter("tp", "=", 1)])
    sub = valid[(valid["n_gpus"] == 8) & (valid["tp"] == 1)].groupby(["model", "recompute", "seq_len"])
    assert np.allclose(act.set_index(["model", "recompute", "seq_len"])["activations_bytes"],
                       sub["activations_bytes"].min())
    for by in ("gpu", ["model", "recompute"], "reason", "tp"):
        s = db.summarise(con, table, by)
        assert s["n_rows"].sum() == len(df) and s["n_valid"].sum() == df["valid"].sum()
    s = db.summarise(con, table, "gpu", filters=[Filter("fits", "=", True)]).set_index("gpu")
    assert np.isclose(s.loc["h100-sxm", "min_cost_usd"], df[df["fits"] & (df["gpu"] == "h100-sxm")]["cost_usd"].min())


def test_query_filters_order_and_limit(sweep):
    con, table, df = sweep
    f = [Filter("model", "in", ["llama-3.1-8b"]), Filter("seq_len", "between", (4096, 16384)),
         Filter("recompute", "!=", "none"), Filter("fits", "=", True), Filter("headroom_bytes", ">", 1e9)]
    got = db.query(con, table, f, columns=["model", "seq_len", "headroom_bytes"], order_by=["-headroom_bytes"],
                   limit=50)
    want = df[(df["model"] == "llama-3.1-8b") & df["seq_len"].between(4096, 16384) & (df["recompute"] != "none")
              & df["fits"] & (df["headroom_bytes"] > 1e9)]
    assert list(got.columns) == ["model", "seq_len", "headroom_bytes"]
    assert len(got) == min(50, len(want)) and got["headroom_bytes"].is_monotonic_decreasing
    assert got["headroom_bytes"].iloc[0] == want["headroom_bytes"].max()
    assert db.count(con, table, f) == len(want)


@pytest.mark.parametrize("call", [
    lambda con, t: db.query(con, t, [Filter("no_such_column", "=", 1)]),
    lambda con, t: db.query(con, t, [Filter("seq_len", "=", "2048")]),  # a string for a number
    lambda con, t: db.query(con, t, [Filter("fits", "=", 1)]),  # a number for a flag
    lambda con, t: db.query(con, t, columns=['model"; DROP TABLE sweep_catalog; --']),
    lambda con, t: db.query(con, t, order_by=["seq_len DESC; --"]),
    lambda con, t: db.query(con, t, limit=0),
    lambda con, t: db.summarise(con, t, "total_bytes"),  # not a group key
    lambda con, t: db.fit_region(con, t, cell=()),
    lambda con, t: db.query(con, "sweep_catalog", []),
    lambda con, t: db.query(con, t.replace("sweep_", "sweep_f"), []),
    lambda con, t: Filter("seq_len", "LIKE", "%"),
    lambda con, t: Filter("seq_len", "in", "2048"),
    lambda con, t: Filter("seq_len", "between", (1,)),
    lambda con, t: Filter("seq_len", "=", [1]),
])
def test_bad_identifiers_and_values_are_refused(sweep, call):
    con, table, _ = sweep
    with pytest.raises(ValueError):
        call(con, table)


# --- hostile values -------------------------------------------------------------------------------------------------

def test_hostile_filter_values_are_plain_values(sweep, tmp_path):
    con, table, df = sweep
    secret = tmp_path / "some_local_file.csv"
    secret.write_text("model\nSECRET-4711\n")
    pwned = tmp_path / "pwned.csv"
    hostile = [
        "x'; COPY sweep_catalog TO '" + str(pwned) + "'; --",
        "' OR 1=1 --",
        "llama-3.1-8b' OR '1'='1",
        "read_csv('" + str(secret) + "')",
        "'; SELECT * FROM read_csv('some_local_file.csv'); --",
        '"; DROP TABLE sweep_catalog; --',
        "llama-3.1-8b; COPY (SELECT * FROM " + table + ") TO '" + str(pwned) + "'",
    ]
    before = db.catalog(con)
    for v in hostile:
        for f in ([Filter("model", "=", v)], [Filter("model", "in", [v, "also'bad"])],
                  [Filter("reason", "between", (v, v))], [Filter("gpu", "!=", v), Filter("model", "=", v)]):
            assert db.query(con, table, f).empty
            assert db.count(con, table, f) == 0
            assert db.summarise(con, table, "model", f).empty
        out = tmp_path / "export.csv"
        assert db.export(con, table, out, filters=[Filter("model", "=", v)]) == 0
        assert out.read_text().startswith("model,") and len(out.read_text().splitlines()) == 1
    assert db.count(con, table, [Filter("model", "!=", hostile[1])]) == len(df)  # compared as data, all rows differ
    assert not pwned.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.csv", "some_local_file.csv"]
    pd.testing.assert_frame_equal(db.catalog(con), before)


# --- export ---------------------------------------------------------------------------------------------------------

def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    keys = ["model", "gpu", "seq_len", "n_gpus", "tp", "zero_stage", "recompute"]
    return df.sort_values(keys).reset_index(drop=True)


def test_parquet_and_csv_round_trip_the_table(sweep, tmp_path):
    con, table, _ = sweep
    whole = _sorted(db.query(con, table, limit=db.MAX_LIMIT))
    assert db.export(con, table, tmp_path / "all.parquet") == len(whole)
    back = _sorted(pq.read_table(tmp_path / "all.parquet").to_pandas())
    pd.testing.assert_frame_equal(back, whole, check_dtype=False)
    assert db.export(con, table, tmp_path / "all.csv") == len(whole)
    back = _sorted(pd.read_csv(tmp_path / "all.csv"))
    back["reason"] = back["reason"].astype(object).where(back["reason"].notna(), "")  # "" and NULL look alike
    pd.testing.assert_frame_equal(back, whole.astype({"reason": object}), check_dtype=False, rtol=0, atol=0)


def test_filtered_export_writes_only_the_matching_rows(sweep, tmp_path):
    con, table, df = sweep
    f = [Filter("fits", "=", True), Filter("gpu", "=", "h100-sxm")]
    n = db.export(con, table, tmp_path / "fit.csv", filters=f, columns=["model", "n_gpus", "cost_usd"])
    with open(tmp_path / "fit.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert n == len(rows) == int((df["fits"] & (df["gpu"] == "h100-sxm")).sum())
    assert set(rows[0]) == {"model", "n_gpus", "cost_usd"}
    n = db.export(con, table, tmp_path / "top.parquet", filters=f, columns=["n_gpus", "headroom_bytes"],
                  order_by=["-headroom_bytes"])
    head = pq.read_table(tmp_path / "top.parquet").column("headroom_bytes").to_pylist()
    assert len(head) == n and head == sorted(head, reverse=True)
    assert db.input_columns(con, table)[:3] == ["model", "gpu", "seq_len"] and "total_bytes" not in db.input_columns(
        con, table)
    with pytest.raises(ValueError, match="format"):
        db.export(con, table, tmp_path / "x.json")
    with pytest.raises(ValueError, match="folder"):
        db.export(con, table, tmp_path / "missing" / "x.csv")


def test_export_sweep_streams_without_a_table(tmp_path):
    from core.sweep import export_sweep
    spec = SweepSpec.from_dict(SPEC)
    stats = export_sweep(spec, tmp_path / "s.parquet", chunk_rows=100)
    t = pq.read_table(tmp_path / "s.parquet")
    assert stats["rows"] == stats["written"] == t.num_rows == spec.n_rows
    assert stats["valid"] == sum(t.column("valid").to_pylist())
    json.dumps(stats)
