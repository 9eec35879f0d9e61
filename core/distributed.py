"""Sweeps past one process: a spec's grid cut into tasks that Dask (`dask.distributed`) runs on its workers, each
writing Parquet files into one hive-partitioned dataset (`model=…/gpu=…/part-….parquet`) that DuckDB and the app
read in place (`core.db.open_dataset`).

The driver never materialises the grid: it walks the same chunk boxes as the in-process engine (`core.grid.chunks`
over the axes of `core.sweep.Sweep`) and submits one task per box of about `chunk_rows` rows. A task rebuilds the
`Sweep` from the spec's JSON on its worker (cached per process), evaluates its box with the same vectorised
`evaluate` and writes its rows. Task ids name the files, so a retried task (Dask retries a failed task; a lost
worker's tasks are rerun) overwrites its own files and never duplicates rows.

A dataset is complete exactly when `_manifest.json` exists: the driver removes the old manifest and the old files
before the first task runs, and writes the manifest (spec, code version, row counts, column schema with units)
after the last task finished. An interrupted run (Ctrl-C, a failed task past its retries) leaves no manifest; the
next run with the same output replaces the directory's dataset. Tasks write into a staging directory of their run
(`.run-<id>/`, skipped by readers), swapped in for the old partitions once every task finished, so a task of an
interrupted run that still finishes late can never add rows to a later run's dataset.

Dask is an optional extra (requirements-scale.txt); nothing else in the product imports it.
"""
from __future__ import annotations

import datetime as dt
import json
import shutil
import time
import uuid
from functools import lru_cache
from pathlib import Path
from typing import Callable

from . import grid as G
from . import inputs as I
from . import record as R
from .spec import SweepSpec

MANIFEST = "_manifest.json"
PARTITIONS = ("model", "gpu")
TASK_ROWS = 1 << 20  # rows per task: ~0.5 GB of record columns on the worker while it is written
MAX_ROWS_DASK = 20_000_000_000  # the spec's row cap under Dask (the in-process engine keeps core.spec.MAX_ROWS)
RETRIES = 3
INSTALL_HINT = "Dask is an optional extra: pip install -r requirements-scale.txt"


def _dask():
    try:
        from dask import distributed
    except ImportError as e:
        raise ValueError(f"engine: dask is not installed ({e}). {INSTALL_HINT}") from None
    return distributed


@lru_cache(maxsize=4)
def _sweep(spec_json: str, max_rows: int):
    from .sweep import Sweep
    return Sweep(SweepSpec.from_json(spec_json), max_rows=max_rows)


def run_task(spec_json: str, max_rows: int, task_id: int, sl: list, out_dir: str) -> dict:
    """One task, on a worker: evaluate the box `sl` of the grid and write its rows as hive-partitioned Parquet
    files model=<m>/gpu=<g>/part-<task_id>-<n>.parquet (a rerun of the same task overwrites them). Each file is
    written by `pq.write_table` on the task's own thread — single-threaded, so Dask's workers are the only
    parallelism (the dataset writer's thread pools took ~1.5 cores per worker and 2 workers on 2 cores then
    gained only 1.35×)."""
    from urllib.parse import quote

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    sw = _sweep(spec_json, max_rows)
    valid0, fits0 = sw.valid, sw.fits
    batch = sw.batch([slice(*s) for s in sl])
    table = pa.Table.from_batches([batch])
    cols = [table.column(n).combine_chunks() for n in PARTITIONS]
    codes = [c.indices.to_numpy(zero_copy_only=False) for c in cols]
    rest = table.drop_columns(list(PARTITIONS))
    pairs = np.unique(np.stack(codes, axis=1), axis=0)
    for j, (mi, gi) in enumerate(pairs):
        mask = (codes[0] == mi) & (codes[1] == gi)
        part = Path(out_dir) / f"model={quote(str(cols[0].dictionary[mi]), safe='')}" \
            / f"gpu={quote(str(cols[1].dictionary[gi]), safe='')}"
        part.mkdir(parents=True, exist_ok=True)
        rows = rest if len(pairs) == 1 else rest.filter(pa.array(mask))  # a box is mostly one model and accelerator
        pq.write_table(rows, part / f"part-{task_id:07d}-{j}.parquet", compression="snappy", row_group_size=1 << 20)
    return {"task": task_id, "rows": batch.num_rows, "valid": sw.valid - valid0, "fits": sw.fits - fits0}


def _boxes(axes, task_rows: int):
    for sl in G.chunks([a.size for a in axes], task_rows):
        yield [(s.start, s.stop) for s in sl]


def schema_doc(spec: SweepSpec, sw) -> list:
    """Each column of the dataset: name, Arrow type, unit and meaning (from core/inputs.py and core/record.py)."""
    out = []
    for f in sw.schema:
        if f.name in I.BY_NAME:
            i = I.BY_NAME[f.name]
            unit, meaning = i.unit, i.help
        else:
            c = R.BY_NAME[f.name]
            unit, meaning = c.unit, c.meaning
        typ = "string (hive partition)" if f.name in PARTITIONS else str(f.type)
        out.append({"name": f.name, "type": typ, "unit": unit, "meaning": meaning})
    return out


def run(spec: SweepSpec, out_dir: str | Path, client=None, *, workers: int | None = None,
        scheduler: str | None = None, task_rows: int = TASK_ROWS, max_rows: int = MAX_ROWS_DASK,
        progress: Callable[[int, int], None] | None = None) -> dict:
    """Evaluate `spec` on Dask into the dataset directory `out_dir`; returns the manifest. Give a `client`, a
    `scheduler` address, or a number of local `workers` (a LocalCluster of that many processes on this machine)."""
    from .spec import check_rows
    from .sweep import Sweep, code_version

    distributed = _dask()
    if isinstance(task_rows, bool) or not isinstance(task_rows, int) or task_rows < 1:
        raise ValueError(f"task_rows: must be a positive integer, got {task_rows!r}")
    n = check_rows(spec, max_rows)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"out: {str(out)!r} exists and is not a directory")
    sw = Sweep(spec, max_rows=max_rows)  # the driver's copy: axes and schema only, nothing evaluated
    own = None
    if client is None:
        if scheduler:
            client = own = distributed.Client(scheduler)
        else:
            cluster = distributed.LocalCluster(n_workers=workers or 2, threads_per_worker=1, processes=True,
                                               host="127.0.0.1", dashboard_address=":0")
            client = own = distributed.Client(cluster)
    t0 = time.perf_counter()
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / MANIFEST).unlink(missing_ok=True)  # from here the directory holds no complete dataset
        for p in out.glob(".run-*"):  # what interrupted runs left (their late tasks may still write there)
            shutil.rmtree(p, ignore_errors=True)
        staging = out / f".run-{uuid.uuid4().hex[:12]}"  # this run's tasks write here; readers skip dot-dirs
        spec_json = spec.to_json()
        futures = [client.submit(run_task, spec_json, max_rows, i, box, str(staging), retries=RETRIES, pure=False,
                                 key=f"sweep-task-{staging.name}-{i}")
                   for i, box in enumerate(_boxes(sw.axes, task_rows))]
        done_rows = valid = fits = 0
        for fut in distributed.as_completed(futures):
            r = fut.result()
            done_rows += r["rows"]
            valid += r["valid"]
            fits += r["fits"]
            if progress is not None:
                progress(done_rows, n)
        for p in out.iterdir():  # swap the finished partitions in for the old ones
            if p.is_dir() and "=" in p.name:
                shutil.rmtree(p)
        if staging.exists():
            for p in staging.iterdir():
                p.replace(out / p.name)
            staging.rmdir()
        manifest = {"spec": json.loads(spec_json), "table": spec.table_name, "code_version": code_version(),
                    "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                    "rows": n, "written": done_rows, "valid": valid, "fits": fits, "tasks": len(futures),
                    "partitioning": {"flavor": "hive", "columns": list(PARTITIONS)},
                    "seconds": round(time.perf_counter() - t0, 3), "columns": schema_doc(spec, sw)}
        tmp = out / (MANIFEST + ".tmp")
        tmp.write_text(json.dumps(manifest, indent=1))
        tmp.replace(out / MANIFEST)  # the manifest appears whole, last
        return manifest
    except BaseException:
        client.cancel(futures if "futures" in locals() else [])
        raise
    finally:
        if own is not None:
            cluster = getattr(own, "cluster", None)
            own.close()
            if cluster is not None:
                cluster.close()


def read_manifest(out_dir: str | Path) -> dict:
    """The manifest of a complete dataset; ValueError when the directory holds none (incomplete or not a dataset)."""
    p = Path(out_dir) / MANIFEST
    if not p.is_file():
        raise ValueError(f"dataset: {str(out_dir)!r} has no {MANIFEST}: not a complete sweep dataset")
    return json.loads(p.read_text())
