"""Sweeps on Dask (core/distributed.py): a LocalCluster of 2 worker processes on loopback writes the same rows as
the in-process engine into a hive-partitioned Parquet dataset; a killed worker still yields a complete dataset; an
interrupted run keeps the previous dataset whole and the next run replaces it; a reader keeps the generation it
opened."""
import json
import os
import sys
import threading
import types

import pytest

distributed = pytest.importorskip("distributed", reason="the optional Dask extra (requirements-scale.txt)")
import pyarrow.dataset as pds  # noqa: E402

from core import distributed as D  # noqa: E402
from core.spec import SweepSpec  # noqa: E402
from core.sweep import to_table  # noqa: E402

SPEC = SweepSpec.from_dict({"model": ["llama-3.1-8b", "mixtral-8x7b", 7e9], "gpu": ["h100-sxm", "a100-80gb"],
                            "n_gpus": [8, 64, 512], "tp": [1, 2, 3], "seq_len": {"from": 1024, "to": 32768,
                                                                                 "step": "pow2"},
                            "zero_stage": [0, 1, 3], "recompute": ["none", "full"], "global_batch": 512})


@pytest.fixture(scope="module")
def client():
    # Worker processes are spawned, and a spawned child re-imports the parent's __main__; earlier tests (Streamlit's
    # AppTest.from_function) leave a script module there that cannot be re-imported. A bare __main__ for the
    # cluster's lifetime (the nanny respawns killed workers) keeps the workers independent of test order.
    real_main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=":0")
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()
        sys.modules["__main__"] = real_main


def _rows(table) -> list:
    cols = sorted(table.column_names)
    d = {k: table.column(k).to_pylist() for k in cols}
    rows = [tuple(d[k][i] for k in cols) for i in range(table.num_rows)]
    return sorted(rows, key=repr)


def _dataset(path):
    return pds.dataset(path, format="parquet", partitioning="hive").to_table()


def test_dataset_equals_the_in_process_sweep(client, tmp_path):
    out = tmp_path / "ds"
    m = D.run(SPEC, out, client, task_rows=300)
    got = _dataset(out)
    want = to_table(SPEC)
    want = want.cast(want.schema)  # as written: model and gpu become the partitions' strings
    want_rows = {k: [str(x) if k in D.PARTITIONS else x for x in want.column(k).to_pylist()]
                 for k in want.column_names}
    got_rows = {k: got.column(k).to_pylist() for k in got.column_names}
    assert set(got_rows) == set(want_rows) and got.num_rows == want.num_rows == SPEC.n_rows
    key = sorted(want_rows)
    as_rows = lambda d: sorted(zip(*(map(repr, d[k]) for k in key)))  # noqa: E731
    assert as_rows(got_rows) == as_rows(want_rows)
    manifest = json.loads((out / D.MANIFEST).read_text())
    assert manifest == m and m["rows"] == m["written"] == SPEC.n_rows
    assert m["valid"] == sum(want.column("valid").to_pylist()) and m["tasks"] > 2
    assert {c["name"] for c in m["columns"]} == set(want.column_names)
    assert all(c["unit"] is not None and c["meaning"] for c in m["columns"])
    assert any(p.name.startswith("model=") for p in out.iterdir())


def test_a_killed_worker_still_yields_a_complete_dataset(client, tmp_path):
    out = tmp_path / "ds"
    killed = threading.Event()

    def kill_one(done, total):
        if not killed.is_set() and done > 0:
            killed.set()
            worker = sorted(client.scheduler_info()["workers"])[0]
            try:
                client.run(os._exit, 1, workers=[worker])  # the nanny restarts it; its tasks run again
            except Exception:  # the worker dies before it answers
                pass

    m = D.run(SPEC, out, client, task_rows=400, progress=kill_one)
    assert killed.is_set()
    assert _dataset(out).num_rows == SPEC.n_rows == m["written"]


def test_an_interrupted_run_keeps_the_previous_dataset_and_the_next_run_replaces_it(client, tmp_path):
    """A run interrupted mid-way (Ctrl-C in the driver) leaves the previous complete dataset where it was: listed,
    its manifest and every row; nothing of the interrupted run is visible. The next run swaps its own in."""
    from core import db
    out = tmp_path / "ds"
    D.run(SPEC, out, client, task_rows=5000)
    before = _rows(_dataset(out))

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        D.run(SPEC.replace(n_gpus=[8, 64]), out, client, task_rows=400, progress=stop)
    assert db.list_datasets(tmp_path) == ["ds"]
    assert D.read_manifest(out)["written"] == SPEC.n_rows and _rows(_dataset(out)) == before
    client.cancel(list(client.futures))
    small = SPEC.replace(n_gpus=[8, 64])
    D.run(small, out, client, task_rows=5000)
    assert D.read_manifest(out)["written"] == _dataset(out).num_rows == small.n_rows
    hidden = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("."))
    assert len(hidden) == 2, hidden  # the generation shown and the one it replaced (kept for its readers)


def test_a_reader_that_listed_the_old_files_keeps_reading_them_until_the_next_run(client, tmp_path):
    """Readers that globbed the old partitions: a dataset opened before a swap keeps its generation's files (its
    rows, unchanged) after a new run swapped in, and reopening gives the new one under a new name; the generation
    swapped out is removed by the run after."""
    from core import db
    out = tmp_path / "ds"
    D.run(SPEC, out, client, task_rows=5000)
    con = db.connect(allowed_directories=(tmp_path,))
    old = db.open_dataset(con, out)
    globbed = sorted(out.glob("model=*/gpu=*/*.parquet"))
    small = SPEC.replace(n_gpus=[8])
    D.run(small, out, client, task_rows=5000)
    assert db.count(con, old) == SPEC.n_rows  # the generation it opened, still whole
    new = db.open_dataset(con, out)
    assert new != old and db.count(con, new) == small.n_rows
    assert not any(p.exists() for p in globbed)  # an old path names no file of the new generation: never mixed
    D.run(small, out, client, task_rows=5000)
    assert sum(1 for p in tmp_path.iterdir() if p.name.startswith(".ds.run-")) == 2


def test_a_dataset_of_older_code_is_swapped_for_the_link_and_a_foreign_folder_is_refused(client, tmp_path):
    """`out` as a plain directory of partitions (older code's layout, with a staging leftover) is exchanged for
    the generation link in one step and retired, then removed by the next run; a folder holding anything else is
    refused by name, untouched."""
    from core import db
    out = tmp_path / "ds"
    D.run(SPEC, out, client, task_rows=5000)
    old = out.resolve()
    out.unlink()
    old.rename(out)  # as older code left it: the partitions and the manifest in `out` itself
    (out / ".run-0123456789ab").mkdir()
    small = SPEC.replace(n_gpus=[8])
    D.run(small, out, client, task_rows=5000)
    assert out.is_symlink() and db.list_datasets(tmp_path) == ["ds"]
    assert _dataset(out).num_rows == small.n_rows
    assert any(p.name.startswith(".ds.run-legacy-") for p in tmp_path.iterdir())
    D.run(small, out, client, task_rows=5000)
    assert not any(p.name.startswith(".ds.run-legacy-") for p in tmp_path.iterdir())
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(ValueError, match="^out: .* is a folder holding other files"):
        D.run(small, mine, client)
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]


def test_bad_output_is_refused_by_name(client, tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ValueError, match="^out"):
        D.run(SPEC, f, client)
    with pytest.raises(ValueError, match="^task_rows"):
        D.run(SPEC, tmp_path / "d", client, task_rows=0)


def test_duckdb_reads_the_dataset_in_place_with_every_query(client, tmp_path):
    """core.db.open_dataset: the queries on the dataset equal the same queries on the in-process table, filters on
    the partition columns prune, and the connection reads nothing outside the allowed directory."""
    from core import db
    from core.sweep import run_sweep
    out = tmp_path / "ds"
    D.run(SPEC, out, client, task_rows=2000)
    con = db.connect(allowed_directories=(out,))
    name = db.open_dataset(con, out)
    mem = db.connect()
    table = run_sweep(SPEC, mem)
    assert name.startswith("dataset_") and name != table  # named by its path, never by its manifest's table
    f = [db.Filter("model", "=", "llama-3.1-8b"), db.Filter("gpu", "=", "h100-sxm")]
    assert db.count(con, name) == db.count(mem, table) == SPEC.n_rows
    assert db.count(con, name, f) == db.count(mem, table, f) > 0
    for q in (db.fit_region, db.pareto, db.min_gpus, db.max_seq_len):
        a, b = q(con, name), q(mem, table)
        # the best row of a group: any of equal best rows may stand, so compare the groups and their best values
        keys = {db.pareto: ["model", "days", "cost_usd"], db.min_gpus: list(a.columns[:4]),
                db.max_seq_len: list(a.columns[:3])}.get(q, list(a.columns))
        a = a[keys].sort_values(keys[:3]).reset_index(drop=True)
        b = b[keys].sort_values(keys[:3]).reset_index(drop=True)
        assert a.astype(str).equals(b.astype(str)), q.__name__
    with pytest.raises(Exception, match="Permission|disabled"):
        con.execute("SELECT * FROM read_csv('/etc/passwd')")
    assert db.list_datasets(tmp_path) == ["ds"]
    (out / D.MANIFEST).unlink()
    with pytest.raises(ValueError, match="^dataset"):
        db.open_dataset(con, out)


def test_the_sweeps_page_opens_a_server_dataset_by_name(client, tmp_path, monkeypatch):
    """With PLANNER_DATASETS set, the Sweeps page lists the complete datasets there and opens one by name (a visitor
    never types a path); unset, the choice is not offered."""
    from tests.test_app import errors, run_page
    D.run(SPEC, tmp_path / "grid-a", client, task_rows=5000)
    (tmp_path / "half").mkdir()  # no manifest: not offered
    monkeypatch.setenv("PLANNER_DATASETS", str(tmp_path))
    at = run_page("pages/06_sweeps.py", sw_src="dataset", sw_ds="grid-a")
    assert not at.exception and not errors(at)
    assert at.selectbox(key="sw_ds").options == ["grid-a"]
    assert next(m.value for m in at.metric if m.label == "Rows") == f"{SPEC.n_rows:,}"
    monkeypatch.delenv("PLANNER_DATASETS")
    at = run_page("pages/06_sweeps.py")
    assert not at.exception and not any(getattr(w, "key", None) == "sw_src" for w in at.radio)
