"""Sweeps past one process: a spec's grid cut into tasks that Dask (`dask.distributed`) runs on its workers, each
writing Parquet files into one hive-partitioned dataset (`model=…/gpu=…/part-….parquet`) that DuckDB and the app
read in place (`core.db.open_dataset`).

The driver never materialises the grid: it walks the same chunk boxes as the in-process engine (`core.grid.chunks`
over the axes of `core.sweep.Sweep`) and submits one task per box of about `chunk_rows` rows. A task rebuilds the
`Sweep` from the spec's JSON on its worker (cached per process), evaluates its box with the same vectorised
`evaluate` and writes its rows. Task ids name the files, so a retried task (Dask retries a failed task; a lost
worker's tasks are rerun) overwrites its own files and never duplicates rows.

Replacing a dataset is atomic. The dataset directory `out` is a symbolic link to one generation, a hidden directory
beside it (``.<name>.run-<id>/``, the link relative, so it holds wherever the storage is mounted). A run writes a new
generation beside the one `out` shows, its manifest last, and only then swaps it in: one rename of a new link over
`out`. At every instant a reader of `out` (the app, DuckDB or pyarrow globbing `out/model=*/…`) finds the old
complete dataset or the new complete one, never a mix and never none; an interrupted run (Ctrl-C, SIGKILL of the
driver, a task failed past its retries) leaves the old one listed and whole. File names carry the run's id, so a
path a reader globbed before a swap names no file of the new generation (it fails rather than mixing rows), and the
generation swapped out stays until the next run into `out` starts, for readers that listed its files. An `out` left
by older code as a plain directory of partitions is swapped for the link in one `renameat2(RENAME_EXCHANGE)` where
the file system has it (Linux), else by two renames.

Leftovers are removed on the next run. A run holds an exclusive lock (`fcntl.flock`, released by the kernel when
its driver dies, even by SIGKILL) on ``.<name>.run-<id>.lock`` while it writes; the next run into `out` removes every
generation that `out` does not show and no live run holds — the staging directories of dead runs and the one its
predecessor swapped out. A task of a dead run that still finishes late writes only into its own run's directory,
never into a dataset.

Dask is an optional extra (requirements-scale.txt); nothing else in the product imports it.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import time
import uuid
from functools import lru_cache
from pathlib import Path
from typing import Callable

from . import grid as G
from . import inputs as I
from . import record as R
from .db import MANIFEST, PARTITIONS
from .spec import SweepSpec

TASK_ROWS = 1 << 20  # rows per task: ~0.5 GB of record columns on the worker while it is written
MAX_ROWS_DASK = 20_000_000_000  # the spec's row cap under Dask (the in-process engine keeps core.spec.MAX_ROWS)
RETRIES = 3
CONNECT_TIMEOUT_S = 5.0  # a scheduler that does not answer in this long is refused (distributed's default: 30 s)
INSTALL_HINT = "Dask is an optional extra: pip install -r requirements-scale.txt"
_LEGACY = re.compile(r"^(?:_manifest\.json(?:\.tmp)?|model=.*|\.run-[0-9a-f]{12})$")  # a dataset of older code


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


def run_task(spec_json: str, max_rows: int, task_id: int, sl: list, out_dir: str, run_id: str = "") -> dict:
    """One task, on a worker: evaluate the box `sl` of the grid and write its rows as hive-partitioned Parquet
    files model=<m>/gpu=<g>/part-<run_id>-<task_id>-<n>.parquet (a rerun of the same task overwrites them). Each file is
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
        model_dir = Path(out_dir) / f"model={quote(str(cols[0].dictionary[mi]), safe='')}"
        part = model_dir / f"gpu={quote(str(cols[1].dictionary[gi]), safe='')}"
        try:  # never the run's own directory: once the driver removed it (interrupted), a late task writes nothing
            model_dir.mkdir(exist_ok=True)
            part.mkdir(exist_ok=True)
        except FileNotFoundError:
            return {"task": task_id, "rows": 0, "valid": 0, "fits": 0, "gone": True}
        rows = rest if len(pairs) == 1 else rest.filter(pa.array(mask))  # a box is mostly one model and accelerator
        name = f"part-{run_id}-{task_id:07d}-{j}.parquet" if run_id else f"part-{task_id:07d}-{j}.parquet"
        pq.write_table(rows, part / name, compression="snappy", row_group_size=1 << 20)
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


def _staging(out: Path, run_id: str) -> Path:
    return out.parent / f".{out.name}.run-{run_id}"


def _lock_path(out: Path, run_id: str) -> Path:
    return out.parent / f".{out.name}.run-{run_id}.lock"


def _link_path(out: Path, run_id: str) -> Path:
    return out.parent / f".{out.name}.link-{run_id}"


def _shown(out: Path) -> str | None:
    """The generation `out` shows (the name its link points to), or None when `out` is no link of ours."""
    if not out.is_symlink():
        return None
    target = os.readlink(out)
    return target if re.fullmatch(rf"\.{re.escape(out.name)}\.run-[0-9a-f]{{12}}", target) else None


def _lock(path: Path):
    """An exclusive lock on `path` (created), or None when another process holds it. The kernel drops it when the
    holder exits, however it exits; on NFS, Linux maps it to a lock the server keeps."""
    import fcntl
    fh = open(path, "a+")
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        return None
    return fh


def remove_leftovers(out: str | Path) -> list[str]:
    """Remove what earlier runs into `out` left beside it and no live run holds: their staging directories (a run
    interrupted, or its driver killed), their half-made links, and the generation the last swap replaced. The
    generation `out` shows is kept, and so is everything of a run whose driver still holds its lock. Returns the
    names removed. Called by `run` before it writes."""
    out = Path(os.path.abspath(out))
    shown = _shown(out)
    pattern = re.compile(rf"^\.{re.escape(out.name)}\.(?:run|link)-([0-9a-f]{{12}}|legacy-[0-9a-f]{{12}})(\.lock)?$")
    runs: dict[str, list[Path]] = {}
    try:
        entries = list(out.parent.iterdir())
    except OSError:
        return []
    for p in entries:
        m = pattern.match(p.name)
        if m is not None and p.name != shown:
            runs.setdefault(m.group(1), []).append(p)
    removed = []
    for run_id, paths in sorted(runs.items()):
        lock = _lock_path(out, run_id)
        held = _lock(lock) if lock.exists() else None
        if lock.exists() and held is None:
            continue  # a live run's
        try:
            if _shown(out) in {p.name for p in paths}:  # swapped in since `shown` was read (a concurrent run)
                continue
            for p in sorted(paths, key=lambda q: q.name.endswith(".lock")):  # the lock last
                if p.is_symlink() or p.is_file():
                    p.unlink(missing_ok=True)
                elif p.is_dir():
                    shutil.rmtree(p, ignore_errors=True)
                removed.append(p.name)
        finally:
            if held is not None:
                held.close()
    return removed


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux `renameat2(RENAME_EXCHANGE)`); False where the system or the file
    system cannot."""
    import ctypes
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return fn(at_fdcwd, os.fsencode(str(a)), at_fdcwd, os.fsencode(str(b)), rename_exchange) == 0


def _swap_in(out: Path, run_id: str) -> None:
    """Make `out` show this run's generation: a new relative link renamed over `out` (one atomic step). A plain
    directory at `out` (older code's dataset, or an empty folder) is exchanged with the link in one step where
    the file system can (else moved aside first) and becomes a retired generation, removed by the next run."""
    link = _link_path(out, run_id)
    link.unlink(missing_ok=True)
    os.symlink(_staging(out, run_id).name, link)
    if out.is_symlink() or not out.exists():
        os.replace(link, out)
        return
    retired = out.parent / f".{out.name}.run-legacy-{uuid.uuid4().hex[:12]}"
    if _exchange(link, out):
        os.replace(link, retired)  # `link` now names the old directory
    else:
        os.replace(out, retired)
        os.replace(link, out)


def _target(out_dir: str | Path) -> Path:
    """The dataset path to write: absolute (workers elsewhere see the same path on shared storage), a link of
    someone else's followed (their storage is where the dataset goes); ValueError naming `out` when it is a file
    or a folder holding anything but a dataset."""
    out = Path(os.path.abspath(out_dir))
    for _ in range(40):  # follow someone else's links one at a time, stopping at one of ours
        if not out.is_symlink() or _shown(out) is not None:
            break
        out = Path(os.path.abspath(out.parent / os.readlink(out)))
    if out.exists() and not out.is_dir():
        raise ValueError(f"out: {str(out)!r} exists and is not a directory")
    if out.is_dir() and not out.is_symlink():
        alien = [p.name for p in out.iterdir() if not _LEGACY.match(p.name)]
        if alien:
            raise ValueError(f"out: {str(out)!r} is a folder holding other files ({alien[0][:60]!r}…), not a sweep "
                             "dataset; give a new folder's name or a dataset's")
    return out


def _client(distributed, workers: int | None, scheduler: str | None):
    """A client of `scheduler` (refused by name within CONNECT_TIMEOUT_S when nothing answers there) or of a new
    LocalCluster of `workers` processes on loopback."""
    if scheduler:
        try:
            return distributed.Client(scheduler, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError, ValueError) as e:
            why = str(e).splitlines()[0][:200] if isinstance(e, ValueError) else "no scheduler answered there"
            raise ValueError(f"scheduler: cannot connect to {scheduler[:200]!r} within {CONNECT_TIMEOUT_S:g} s: "
                             f"{why}") from None
    cluster = distributed.LocalCluster(n_workers=workers or 2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=":0")
    return distributed.Client(cluster)


def run(spec: SweepSpec, out_dir: str | Path, client=None, *, workers: int | None = None,
        scheduler: str | None = None, task_rows: int = TASK_ROWS, max_rows: int = MAX_ROWS_DASK,
        progress: Callable[[int, int], None] | None = None) -> dict:
    """Evaluate `spec` on Dask into the dataset `out_dir`, replacing the dataset there only once the new one is
    complete (see the module notes); returns the manifest. Give a `client`, a `scheduler` address, or a number of
    local `workers` (a LocalCluster of that many processes on this machine)."""
    from .spec import check_rows
    from .sweep import Sweep, code_version

    distributed = _dask()
    if isinstance(task_rows, bool) or not isinstance(task_rows, int) or task_rows < 1:
        raise ValueError(f"task_rows: must be a positive integer, got {task_rows!r}")
    n = check_rows(spec, max_rows)
    out = _target(out_dir)
    sw = Sweep(spec, max_rows=max_rows)  # the driver's copy: axes and schema only, nothing evaluated
    out.parent.mkdir(parents=True, exist_ok=True)
    run_id = uuid.uuid4().hex[:12]
    lock = _lock(_lock_path(out, run_id))  # held until this run ends: the next run leaves a live run's files alone
    staging = _staging(out, run_id)
    own = None  # a client made here is closed here; a caller's stays open
    futures: list = []
    t0 = time.perf_counter()
    try:
        remove_leftovers(out)
        staging.mkdir()
        if client is None:
            client = own = _client(distributed, workers, scheduler)
        spec_json = spec.to_json()
        futures = [client.submit(run_task, spec_json, max_rows, i, box, str(staging), run_id, retries=RETRIES,
                                 pure=False, key=f"sweep-task-{run_id}-{i}")
                   for i, box in enumerate(_boxes(sw.axes, task_rows))]
        done_rows = valid = fits = 0
        for fut in distributed.as_completed(futures):
            r = fut.result()
            done_rows += r["rows"]
            valid += r["valid"]
            fits += r["fits"]
            if progress is not None:
                progress(done_rows, n)
        manifest = {"spec": json.loads(spec_json), "table": spec.table_name, "code_version": code_version(),
                    "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "run": run_id,
                    "rows": n, "written": done_rows, "valid": valid, "fits": fits, "tasks": len(futures),
                    "partitioning": {"flavor": "hive", "columns": list(PARTITIONS)},
                    "seconds": round(time.perf_counter() - t0, 3), "columns": schema_doc(spec, sw)}
        tmp = staging / (MANIFEST + ".tmp")
        tmp.write_text(json.dumps(manifest, indent=1))
        tmp.replace(staging / MANIFEST)  # the generation is complete ...
        _swap_in(out, run_id)  # ... and only then is it what `out` shows
        return manifest
    except BaseException:
        if client is not None and futures:
            client.cancel(futures)
        _close(own)  # a cluster of ours stops before its tasks' directory goes (they would make it again)
        own = None
        if _shown(out) != staging.name:  # never swapped in, so no reader has it; a caller's cluster may still
            shutil.rmtree(staging, ignore_errors=True)  # write late into it: the next run removes that
            _link_path(out, run_id).unlink(missing_ok=True)
        raise
    finally:
        _lock_path(out, run_id).unlink(missing_ok=True)  # this run is over: its generation is shown or gone
        if lock is not None:
            lock.close()
        _close(own)


def _close(client) -> None:
    """Close a client made by `_client`, and its LocalCluster if it has one."""
    if client is None:
        return
    cluster = getattr(client, "cluster", None)
    client.close()
    if cluster is not None:
        cluster.close()


def read_manifest(out_dir: str | Path) -> dict:
    """The manifest of a complete dataset; ValueError when the directory holds none (incomplete or not a dataset)."""
    p = Path(out_dir) / MANIFEST
    if not p.is_file():
        raise ValueError(f"dataset: {str(out_dir)!r} has no {MANIFEST}: not a complete sweep dataset")
    return json.loads(p.read_text())
