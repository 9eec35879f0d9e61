"""Hosting probe, items 5, 6 and part of 7: datasets and exports are replaced atomically, datasets opened in the app
are isolated from each other and from app sweeps, and the dataset connection can write nothing.

5. An export killed mid-write (SIGKILL) leaves no file under its final name (and a previous file as it was); the
   next export removes the leftovers. A Dask sweep interrupted (SIGINT to the driver) or with its driver killed
   (SIGKILL) leaves the previous dataset listed and whole; the next run removes what the dead run left.
6. A dataset's view is named by its path, never by its manifest: two datasets crafted to name one table, or an app
   sweep's, never see each other's rows; a name with glob characters reads only its own files; an unknown `sw_ds`
   is an error naming it; a link out of the directory is refused by name, with no server path; the dataset
   connection cannot COPY (or ATTACH, or overwrite) anything in the datasets directory.
7. An unreachable Dask scheduler is refused within seconds, naming `scheduler`; a filter value the column's type
   cannot hold (``seq_len in 1e300,2``) is a clear error naming the column, not DuckDB's.
"""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow.dataset as pds
import pytest

from core import db
from core import distributed as D
from core.spec import SweepSpec
from core.sweep import Sweep, run_sweep

ROOT = Path(__file__).resolve().parent.parent
SMALL = SweepSpec.from_dict({"model": ["llama-3.1-8b"], "gpu": ["h100-sxm", "a100-80gb"], "n_gpus": [8, 16, 32],
                             "seq_len": [2048, 4096]})  # 12 rows
OTHER = SweepSpec.from_dict({"model": ["llama-3.1-8b", "mistral-7b"], "gpu": ["h100-sxm"], "n_gpus": [8, 64, 512],
                             "seq_len": [1024, 2048, 4096, 8192, 16384]})  # 30 rows


def write_dataset(path: Path, spec: SweepSpec, **manifest) -> Path:
    """A complete dataset as `core.distributed` lays it out (one task's files, then the manifest), without Dask;
    `manifest` overrides fields of the manifest (a crafted `table`, say)."""
    path.mkdir(parents=True)
    sw = Sweep(spec)
    r = D.run_task(spec.to_json(), D.MAX_ROWS_DASK, 0, [(0, a.size) for a in sw.axes], str(path), "0123456789ab")
    m = {"spec": json.loads(spec.to_json()), "table": spec.table_name, "code_version": "test", "rows": spec.n_rows,
         "written": r["rows"], "valid": r["valid"], "fits": r["fits"], "seconds": 0.01,
         "columns": D.schema_doc(spec, sw)}
    m.update(manifest)
    (path / db.MANIFEST).write_text(json.dumps(m))
    return path


def visible(md: str) -> str:
    """The text a visitor reads in a markdown message: `ui.fmt.inert`'s backslash escapes and word joiners gone."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", md.replace("\u2060", ""))


def snapshot(root: Path) -> dict:
    """Every file under `root` (links not followed) with its bytes: what "nothing was written" compares."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --- 6: isolation -------------------------------------------------------------------------------------------------

def test_datasets_crafted_to_name_one_table_never_see_each_others_rows(tmp_path):
    """Both manifests name the table of an app sweep: each dataset still reads only its own rows, under a name of
    its own in a namespace no app sweep can have, and the app sweep keeps its rows."""
    app = db.connect()
    app_table = run_sweep(OTHER, app)
    a = write_dataset(tmp_path / "a", SMALL, table=app_table)
    b = write_dataset(tmp_path / "b", OTHER, table=app_table)
    con = db.connect(allowed_directories=(tmp_path,))
    na, nb = db.open_dataset(con, a), db.open_dataset(con, b)
    assert len({na, nb, app_table}) == 3 and na.startswith("dataset_") and nb.startswith("dataset_")
    assert db.count(con, na) == SMALL.n_rows and db.count(con, nb) == OTHER.n_rows
    assert db.count(app, app_table) == OTHER.n_rows
    assert set(db.query(con, na, columns=["model"])["model"]) == {"llama-3.1-8b"}
    assert db.sweep_info(con, na)["n_rows"] == SMALL.n_rows
    with pytest.raises(ValueError, match="^table: no sweep"):  # the app's name means nothing on this connection
        db.count(con, app_table)
    with pytest.raises(ValueError, match="^table"):  # and a dataset's view can never be written over
        db.write_sweep(app, na, None, "{}", "x", stats=dict)


def test_a_crafted_dataset_cannot_replace_a_visitors_app_sweep(tmp_path, monkeypatch):
    """The probe's case: one visitor opens a dataset whose manifest names the table of the page's default grid;
    another visitor's default grid still shows its own sweep's rows."""
    from test_app import metric, run_page
    monkeypatch.delenv("PLANNER_DATASETS", raising=False)
    at = run_page("pages/06_sweeps.py")
    assert not at.exception
    table = next(m for md in at.markdown for m in re.findall(r"sweep_[0-9a-f]{16}", md.value))
    rows = metric(at, "Rows")
    crafted = SweepSpec.from_json((ROOT / "examples" / "sweep.json").read_text())  # 17,280 rows
    write_dataset(tmp_path / "crafted", crafted, table=table)
    monkeypatch.setenv("PLANNER_DATASETS", str(tmp_path))
    at = run_page("pages/06_sweeps.py", sw_src="dataset", sw_ds="crafted")
    assert not at.exception and metric(at, "Rows") == f"{crafted.n_rows:,}"
    at = run_page("pages/06_sweeps.py")  # someone else's default grid, in the same process
    assert not at.exception and metric(at, "Rows") == rows != f"{crafted.n_rows:,}"
    assert table in " ".join(md.value for md in at.markdown)


def test_a_dataset_named_with_glob_characters_reads_only_its_own_files(tmp_path):
    write_dataset(tmp_path / "all*", SMALL)
    write_dataset(tmp_path / "allbig", OTHER)
    write_dataset(tmp_path / "all[b]ig", SMALL)
    assert db.list_datasets(tmp_path) == ["all*", "all[b]ig", "allbig"]
    con = db.connect(allowed_directories=(tmp_path,))
    assert db.count(con, db.open_dataset(con, tmp_path / "all*")) == SMALL.n_rows
    assert db.count(con, db.open_dataset(con, tmp_path / "all[b]ig")) == SMALL.n_rows
    assert db.count(con, db.open_dataset(con, tmp_path / "allbig")) == OTHER.n_rows


def test_an_unknown_sw_ds_is_an_error_naming_it_not_the_first_dataset(tmp_path, monkeypatch):
    from test_app import errors, run_page
    write_dataset(tmp_path / "grid-a", SMALL)
    monkeypatch.setenv("PLANNER_DATASETS", str(tmp_path))
    at = run_page("pages/06_sweeps.py", sw_src="dataset", sw_ds="no*such")
    assert not at.exception
    assert "no complete dataset named 'no*such'" in visible(errors(at))
    assert not at.metric  # no rows of grid-a shown under the link's name
    at = run_page("pages/06_sweeps.py", sw_src="dataset", sw_ds="grid-a")
    assert not at.exception and not errors(at) and at.metric


def test_the_dataset_connection_cannot_write_into_the_datasets_directory(tmp_path):
    """DuckDB's allowed_directories would permit COPY … TO (and ATTACH) inside the directory; the dataset connection
    gives DuckDB no file access at all, so every write is refused and nothing on disk changes."""
    ds = write_dataset(tmp_path / "ds", SMALL)
    part = next(ds.glob("model=*/gpu=*/*.parquet"))
    con = db.connect(allowed_directories=(tmp_path,))
    name = db.open_dataset(con, ds)
    before = snapshot(tmp_path)
    for sql in (f"COPY (SELECT 1 AS x) TO '{tmp_path}/x.csv'",
                f"COPY (SELECT * FROM \"{name}\") TO '{ds}/model=x/part.parquet' (FORMAT parquet)",
                f"COPY (SELECT 42 AS x) TO '{part}' (FORMAT parquet, USE_TMP_FILE false)",
                f"ATTACH '{tmp_path}/evil.duckdb' AS evil", f"SELECT * FROM read_parquet('{part}')",
                "SET enable_external_access = true", f"SET allowed_directories = ['{tmp_path}/']"):
        with pytest.raises(duckdb.Error):
            with con.cursor() as cur:
                cur.execute(sql)
        with pytest.raises(duckdb.Error):
            con.execute(sql)
    assert snapshot(tmp_path) == before
    assert db.count(con, name) == SMALL.n_rows  # and it still reads


def test_the_apps_dataset_connection_is_the_read_only_one(tmp_path, monkeypatch):
    import streamlit as st

    from ui import sweeps as W
    write_dataset(tmp_path / "ds", SMALL)
    monkeypatch.setenv("PLANNER_DATASETS", str(tmp_path))
    st.cache_resource.clear()
    try:
        table = W.open_dataset("ds")
        con = W._con(table)
        assert isinstance(con, db.DatasetConnection) and W._con(SMALL.table_name) is not con
        before = snapshot(tmp_path)
        with pytest.raises(duckdb.Error):
            con.execute(f"COPY (SELECT * FROM \"{table}\") TO '{tmp_path}/ds/stolen.csv'")
        assert snapshot(tmp_path) == before
        with pytest.raises(ValueError, match="no complete dataset named"):
            W.open_dataset("../ds")
    finally:
        st.cache_resource.clear()


def test_a_link_out_of_the_directory_is_refused_by_name_with_no_server_path(tmp_path):
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir()
    write_dataset(elsewhere / "secret", OTHER)
    (root / "evil").symlink_to(elsewhere / "secret")
    inner = write_dataset(root / "inner", SMALL)
    (inner / "model=stolen").symlink_to(next((elsewhere / "secret").glob("model=*")))
    assert db.list_datasets(root) == ["inner"]  # a link leading outside is not offered
    con = db.connect(allowed_directories=(root,))
    for name, why in (("evil", "leads outside the dataset directory"), ("inner", "symbolic link")):
        with pytest.raises(ValueError) as e:
            db.open_dataset(con, root / name)
        msg = str(e.value)
        assert msg.startswith(f"dataset: {name}: ") and why in msg and str(tmp_path) not in msg and "/" not in msg


def test_a_damaged_dataset_is_reported_without_a_server_path(tmp_path):
    ds = write_dataset(tmp_path / "ds", OTHER)
    con = db.connect(allowed_directories=(tmp_path,))
    name = db.open_dataset(con, ds)
    for p in ds.glob("model=*/gpu=*/*.parquet"):
        p.write_bytes(b"not parquet")
    with pytest.raises(duckdb.Error) as e:
        db.count(con, name, [db.Filter("fits", "=", True)])
    assert str(tmp_path) not in str(e.value) and "ds" in str(e.value)
    with pytest.raises(ValueError) as e:  # opened afresh: refused by name
        con2 = db.connect(allowed_directories=(tmp_path,))
        db.open_dataset(con2, ds)
    assert str(e.value).startswith("dataset: ds: ") and str(tmp_path) not in str(e.value)


# --- 7: filters the column's type cannot hold -----------------------------------------------------------------------

def test_a_filter_value_beyond_the_columns_type_is_refused_by_column_name():
    from ui.sweeps import parse_filter
    cols = {"seq_len": "INTEGER", "n_params": "BIGINT", "days": "DOUBLE", "fits": "BOOLEAN", "model": "VARCHAR"}
    for col, op, text, msg in (
            ("seq_len", "in", "1e300,2", r"^seq_len: '1e300' does not fit the column \(INTEGER holds whole numbers"),
            ("seq_len", "=", "2147483648", "does not fit the column"),
            ("seq_len", "between", "-2147483649,1", "does not fit the column"),
            ("seq_len", "=", "8.5", r"^seq_len: '8\.5' must be a whole number"),
            ("n_params", "=", "9223372036854775808", r"^n_params: '9223372036854775808' does not fit"),
            ("n_params", "<", "1" + "0" * 80, "does not fit the column"),
            ("days", "=", "1e400", "not a finite number")):
        with pytest.raises(ValueError, match=msg):
            parse_filter(col, op, text, cols)
    assert parse_filter("seq_len", "in", "2147483647, -2147483648", cols).value == (2147483647, -2147483648)
    assert parse_filter("n_params", "=", "9223372036854775807", cols).value == 2 ** 63 - 1
    assert parse_filter("seq_len", "=", "4096.0", cols).value == 4096
    assert parse_filter("days", "<", "1e300", cols).value == 1e300


def test_the_core_refuses_out_of_range_filter_values_too():
    con = db.connect()
    table = run_sweep(SMALL, con)
    for f in (db.Filter("seq_len", "in", [10 ** 300, 2]), db.Filter("seq_len", "=", 1e300),
              db.Filter("n_gpus", ">", 2 ** 31), db.Filter("days", "<", 10 ** 400)):
        with pytest.raises(ValueError, match=f"^{f.column}: .*(does not fit the column|must be)"):
            db.count(con, table, [f])
    assert db.count(con, table, [db.Filter("seq_len", "in", [2048, 2 ** 31 - 1])]) == SMALL.n_rows // 2


def test_the_sweeps_page_shows_the_1e300_filter_as_a_clear_error():
    from test_app import errors, run_page
    at = run_page("pages/06_sweeps.py", sw_f1c="seq_len", sw_f1o="in", sw_f1v="1e300,2")
    assert not at.exception
    text = visible(errors(at))
    assert "filter 1 (seq_len)" in text and "'1e300' does not fit the column (INTEGER" in text
    assert "database" not in text and "Conversion" not in text and "Error" not in text


# --- 5: exports are replaced atomically -----------------------------------------------------------------------------

def _start_cli(*argv) -> subprocess.Popen:
    """`python -m core …` in a session of its own (so its Dask workers can be killed with it), its output to
    /dev/null: no pipe a surviving child could hold open."""
    return subprocess.Popen([sys.executable, "-m", "core", *argv], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def _wait_for(what, timeout_s: float = 60.0, proc: subprocess.Popen | None = None):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        got = what()
        if got:
            return got
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the process ended first, status {proc.returncode}")
        time.sleep(0.02)
    pytest.fail("timed out waiting")


def _kill(proc: subprocess.Popen, sig=signal.SIGKILL) -> int:
    """`sig` to the process we started, then SIGKILL to its own session (Dask's worker processes), and its status."""
    os.kill(proc.pid, sig)
    try:
        rc = proc.wait(timeout=60)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return rc


@pytest.mark.parametrize("suffix, spec", [("csv", "bench/sweep_1m.json"), ("parquet", "bench/sweep_10m.json")])
def test_a_killed_export_leaves_no_file_under_its_name_and_the_next_run_removes_the_leftovers(tmp_path, suffix,
                                                                                                 spec):
    out = tmp_path / f"x.{suffix}"
    temps = lambda: [p for p in tmp_path.iterdir() if p.name.startswith(f".x.{suffix}.") and  # noqa: E731
                     p.name.endswith(".tmp") and p.stat().st_size > 0]
    proc = _start_cli("sweep", "--spec", spec, "--out", str(out), "--quiet")
    _wait_for(temps, proc=proc)
    assert _kill(proc) == -signal.SIGKILL
    assert not out.exists() and temps()  # nothing under the final name; the dead writer's temporary file
    small = json.dumps(SMALL.to_dict())
    done = subprocess.run([sys.executable, "-m", "core", "sweep", "--spec", small, "--out", str(out), "--quiet"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]  # the leftovers are gone
    complete = out.read_bytes()
    proc = _start_cli("sweep", "--spec", spec, "--out", str(out), "--quiet")  # a kill over a previous file
    _wait_for(temps, proc=proc)
    _kill(proc)
    assert out.read_bytes() == complete


def test_copy_to_writes_beside_the_target_and_renames(tmp_path):
    import pyarrow as pa
    out = tmp_path / "t.csv"
    (tmp_path / f".t.csv.{2 ** 22 + 12345}-deadbeef.tmp").write_text("a killed writer's")  # no such process
    (tmp_path / f".t.csv.{os.getpid()}.tmp").write_text("a live writer's (ours)")
    table = pa.table({"x": [1, 2, 3]})
    assert db.copy_to(pa.RecordBatchReader.from_batches(table.schema, table.to_batches()), out) == 3
    assert out.read_text().splitlines() == ["x", "1", "2", "3"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".t.csv.{os.getpid()}.tmp", "t.csv"]

    def failing():
        yield table.to_batches()[0]
        raise RuntimeError("the stream broke")
    with pytest.raises(Exception):
        db.copy_to(pa.RecordBatchReader.from_batches(table.schema, failing()), out)
    assert out.read_text().splitlines() == ["x", "1", "2", "3"]  # the previous file, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".t.csv.{os.getpid()}.tmp", "t.csv"]


# --- 5: Dask datasets are replaced atomically; 7: an unreachable scheduler --------------------------------------------

def _dataset_rows(path: Path) -> list:
    t = pds.dataset(path, format="parquet", partitioning="hive").to_table()
    cols = sorted(t.column_names)
    return sorted(zip(*(map(repr, t.column(c).to_pylist()) for c in cols)))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_an_interrupted_or_killed_dask_driver_keeps_the_previous_dataset(tmp_path, monkeypatch, sig):
    pytest.importorskip("distributed", reason="the optional Dask extra (requirements-scale.txt)")
    from ui import sweeps as W
    monkeypatch.setenv("PLANNER_DATASETS", str(tmp_path))
    out = tmp_path / "ds"
    dask = ("--engine", "dask", "--workers", "1", "--quiet")
    first = subprocess.run([sys.executable, "-m", "core", "sweep", "--spec", "examples/sweep.json", "--out",
                            str(out), *dask], cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert first.returncode == 0, first.stderr
    before = _dataset_rows(out)
    manifest = D.read_manifest(out)
    shown = out.resolve().name  # the generation `out` shows

    def staged_parts():  # files the new run has written so far, beside the dataset
        return [p for p in tmp_path.glob(".ds.run-*/model=*/gpu=*/*.parquet") if p.parts[-4] != shown]
    proc = _start_cli("sweep", "--spec", "bench/sweep_10m.json", "--out", str(out), *dask)
    _wait_for(staged_parts, timeout_s=120, proc=proc)
    rc = _kill(proc, sig)
    assert rc == (130 if sig == signal.SIGINT else -signal.SIGKILL)
    assert db.list_datasets(tmp_path) == W.dataset_names() == ["ds"]
    assert D.read_manifest(out) == manifest and _dataset_rows(out) == before
    con = db.connect(allowed_directories=(tmp_path,))
    assert db.count(con, db.open_dataset(con, out)) == manifest["written"] == 17_280
    dead = {p.name for p in tmp_path.iterdir() if p.name.startswith(".")} - {shown}
    if sig == signal.SIGINT:  # the driver removed its own staging directory on the way out
        assert not dead
    else:  # a SIGKILLed driver could not: its staging directory and lock stay until the next run
        assert any(n.endswith(".lock") for n in dead) and any(not n.endswith(".lock") for n in dead)
    again = subprocess.run([sys.executable, "-m", "core", "sweep", "--spec", json.dumps(SMALL.to_dict()), "--out",
                            str(out), *dask], cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert again.returncode == 0, again.stderr
    assert D.read_manifest(out)["written"] == SMALL.n_rows
    left = {p.name for p in tmp_path.iterdir()}
    assert not (left & dead)  # the dead run's leftovers are removed


def test_an_unreachable_scheduler_is_refused_within_seconds_by_name(tmp_path):
    pytest.importorskip("distributed", reason="the optional Dask extra (requirements-scale.txt)")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = subprocess.run([sys.executable, "-m", "core", "sweep", "--spec", json.dumps(SMALL.to_dict()), "--out",
                        str(tmp_path / "ds"), "--engine", "dask", "--scheduler", f"tcp://127.0.0.1:{port}",
                        "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    # (no timing assertion, issue 17: the refusal names the short connect timeout it waited, CONNECT_TIMEOUT_S)
    assert r.returncode == 2 and f"within {D.CONNECT_TIMEOUT_S:g} s" in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert lines[0].startswith(f"error: scheduler: cannot connect to 'tcp://127.0.0.1:{port}' within"), r.stderr
    assert "OSError" not in r.stderr and "Traceback" not in r.stderr
    assert not list(tmp_path.iterdir())  # nothing written, nothing left
    r = subprocess.run([sys.executable, "-m", "core", "sweep", "--spec", json.dumps(SMALL.to_dict()), "--out",
                        str(tmp_path / "ds"), "--engine", "dask", "--scheduler", "nonsense", "--quiet"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.startswith("error: scheduler: cannot connect to 'nonsense'"), r.stderr
    assert "missing port" in r.stderr and not list(tmp_path.iterdir())
