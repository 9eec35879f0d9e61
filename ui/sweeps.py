"""The Sweeps page's access to `core.sweep` and `core.db`: one DuckDB database per process (`st.cache_resource`)
whose tables belong to one `core.sweep.SweepStore`, every query on its own cursor (inside `core.db`), bounded caches
of aggregated results, structured filters parsed from the page's text fields, and bounded downloads built on click.

Sweep tables are named by the spec's hash, so everyone who opens the same link reads (or, after a restart,
re-runs) the same table. The store runs one large sweep at a time (`RUNNING_ROWS`; others queue, their pages say
so), keeps at most `ROWS_KEPT` rows in `MAX_TABLES` tables, and never drops a table a session is showing (a lease,
renewed on every rerun, ending with the session or after `LEASE_S` unused); when the shown tables leave no room a
new sweep is refused in words. The database spills beyond `MEMORY_LIMIT` to a private temporary directory (mode
0700, at most `TEMP_LIMIT`), the only place SQL on it could write. Every DuckDB error reaches the page as a
ValueError ("database: …"), shown as a message, never a traceback.
"""
from __future__ import annotations

import functools
import math
import tempfile
import threading
from pathlib import Path
from typing import Callable

import duckdb
import pandas as pd
import streamlit as st

from core import db
from core import sweep as S
from core.units import is_ascii_number

from . import fmt
from .work import spill_prefix

CAP_ROWS = 1_000_000  # the app's row cap per sweep (71 columns; ~0.3 GB once DuckDB spills it); the CLI has none
RUNNING_ROWS = CAP_ROWS  # rows evaluated at once across sessions: one large sweep at a time, small ones beside it
ROWS_KEPT = 6_000_000  # rows kept in the process's database: measured, 400 MB resident + 1.8 GB spilled to disk
MAX_TABLES = 48        # tables kept; the least recently shown unleased ones are dropped first
MEMORY_LIMIT = "400MB"  # DuckDB's resident share of a 1-2.7 GB container (bench/RESULTS.md: load test)
CHUNK_ROWS = 1 << 15  # rows evaluated at once per run: ~200 MB less at the peak than the CLI's 1 << 17, ~20 % slower
TEMP_LIMIT = "3GB"  # the spill directory's bound, ~1.7× what ROWS_KEPT spills (DuckDB's default: 90 % of the disk)
LEASE_S = 1800.0  # a shown table is kept at least this long after its session's last rerun (while it is connected)
WAIT_S = 120.0  # the longest a run waits for others before it is refused ("busy: …")
CSV_MAX_ROWS = 50_000  # CSV downloads are built in memory (~700 bytes a row, 35 MB): beyond this, Parquet is offered
EXPORT_BATCH_ROWS = 1 << 14  # rows per Arrow batch into the file writer: a 912k-row Parquet peaks +150 MB, not +450
DOWNLOAD_WAIT_S = 60.0  # downloads are built one at a time; a click waits at most this long for its turn
VOCABULARY = tuple(sorted(set(S.INPUTS) | set(S.record_columns())))
OPS = db.OPS
SUMMARY_ROWS = 5_000  # groups shown and cached per summary (grouping by every input can give one group per row)
GROUP_KEYS = ("model", "gpu", "n_gpus", "seq_len", "micro_batch", "zero_stage", "recompute", "flash_attention", "tp",
              "recipe", "binding", "fits", "valid")
_DOWNLOADS = threading.BoundedSemaphore(1)


def _safe(fn):
    """DuckDB errors as ValueError("database: …"): the page shows them as a message, never a traceback."""
    @functools.wraps(fn)
    def wrapper(*args, **kw):
        try:
            return fn(*args, **kw)
        except duckdb.Error as e:
            raise ValueError(f"database: {type(e).__name__}: {db._first_line(e)}") from None
    return wrapper


def _alive(session: str) -> bool:
    """Whether a Streamlit session is still connected (a lease of a closed tab ends at once)."""
    try:
        from streamlit.runtime import Runtime
        return Runtime.instance().is_active_session(session) if Runtime.exists() else True
    except Exception:  # no runtime (AppTest, bare mode) or an internal change: only the lease's age counts
        return True


def session_id() -> str:
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "no-session"


@st.cache_resource(show_spinner=False, max_entries=1, on_release=lambda res: res[0].close())
def _database(version: str):
    """The process's database (in memory, external access off and locked — core.db.connect; spilling to a private
    temporary directory) and the store that owns its tables."""
    con = db.connect(threads=2, memory_limit=MEMORY_LIMIT, temp_directory=db.private_temp_directory(spill_prefix()),
                     max_temp_directory_size=TEMP_LIMIT, return_memory=True)
    store = S.SweepStore(con, max_rows=ROWS_KEPT, max_tables=MAX_TABLES, max_running_rows=RUNNING_ROWS,
                         max_rows_per_sweep=CAP_ROWS, lease_s=LEASE_S, wait_s=WAIT_S, alive=_alive,
                         chunk_rows=CHUNK_ROWS)
    return con, store


def database():
    return _database(S.code_version())[0]


def store() -> S.SweepStore:
    return _database(S.code_version())[1]


# ---------------------------------------------------------------------------------------------------------------
# Datasets on disk (python -m core sweep --engine dask): read in place, from one server-configured directory
# ---------------------------------------------------------------------------------------------------------------

DATASETS_ENV = "PLANNER_DATASETS"  # the directory of datasets this server may open (off when unset)


def datasets_root() -> Path | None:
    """The server's dataset directory: the environment variable PLANNER_DATASETS, else the Streamlit secret
    `datasets_dir`; None (the feature is off) when neither is set or it is no directory. Never from a visitor."""
    import os
    root = os.environ.get(DATASETS_ENV)
    if not root:
        try:
            root = st.secrets.get("datasets_dir")
        except Exception:  # no secrets file: the feature is off
            root = None
    if not root or not Path(root).is_dir():
        return None
    return Path(root).resolve()


def dataset_names() -> list[str]:
    """Complete datasets (a manifest) directly under the server's directory, by name (`core.db.list_datasets`:
    hidden staging directories and links leading outside are none)."""
    root = datasets_root()
    return db.list_datasets(root) if root is not None else []


@st.cache_resource(show_spinner=False, max_entries=1, on_release=lambda con: con.close())
def _dataset_database(root: str, version: str) -> db.DatasetConnection:
    """The process's dataset connection (`core.db.connect(allowed_directories=…)`): DuckDB with external access off
    and locked — it can write no file, the datasets directory included — reading the datasets under `root` through
    pyarrow, spilling to a private temporary directory like the sweeps' database. Its tables are ``dataset_…``
    views only, so it never holds, and `_con` never sends it, an app sweep's ``sweep_…`` table."""
    return db.connect(threads=2, memory_limit=MEMORY_LIMIT, temp_directory=db.private_temp_directory(spill_prefix()),
                      max_temp_directory_size=TEMP_LIMIT, allowed_directories=(root,),
                      return_memory=True)


def open_dataset(name: str) -> str:
    """A dataset picked by name from `dataset_names()` (a visitor never types a path), opened on the dataset
    connection; returns its view's name (``dataset_<hash of its resolved path and manifest>``) for the page's
    queries. An unknown name is an error naming it; no message holds a server path (`core.db.open_dataset` names
    the dataset only). Messages are plain text: the page shows them with `layout.input_error`, which makes them
    inert."""
    root = datasets_root()
    if root is None:
        raise ValueError("dataset: this server has no dataset directory")
    if not isinstance(name, str) or name not in dataset_names():
        raise ValueError(f"dataset: no complete dataset named {str(name)[:80]!r} on this server")
    con = _dataset_database(str(root), S.code_version())
    return _safe(db.open_dataset)(con, root / name)


def _con(table: str):
    """The connection that holds `table`, from its name alone: a ``dataset_…`` view is on the dataset connection,
    anything else (``sweep_…``) in the sweeps' database. Nothing a dataset holds can route a name elsewhere, so no
    dataset can stand in for an app sweep."""
    if isinstance(table, str) and table.startswith(db.DATASET_PREFIX):
        root = datasets_root()
        if root is None:
            raise ValueError("dataset: this server has no dataset directory")
        return _dataset_database(str(root), S.code_version())
    return database()


def spec_from_inputs(d: dict) -> S.SweepSpec:
    """A validated spec; ValueError names the field."""
    return S.SweepSpec.from_dict(d)


def ready(spec: S.SweepSpec) -> bool:
    return store().ready(spec)


def run(spec: S.SweepSpec, progress: Callable[[int, int], None] | None = None,
        waiting: Callable[[int], None] | None = None) -> str:
    """The spec's table for this session: evaluated into the database if it is not there (queued behind other
    sessions' runs; `waiting(runs_ahead)` meanwhile), and leased to the session so no eviction drops it while it
    is shown. ValueError: over CAP_ROWS, "busy: …", "database: …"."""
    return store().ensure(spec, session_id(), progress=progress, waiting=waiting)


@_safe
def info(table: str) -> dict:
    return db.sweep_info(_con(table), table)


@_safe
def columns(table: str) -> dict:
    return db.allowed_columns(_con(table), table)


def parse_filter(column: str, op: str, text: str, cols: dict) -> db.Filter:
    """A structured filter from the page's fields: the value text parsed by the column's type; a list
    (comma-separated) for 'in', two values for 'between'. A value the column's type cannot hold (a fraction or a
    number beyond the range of an integer column, 1e300 for INTEGER) is refused here, by column name, rather than
    reaching DuckDB as a conversion error. ValueError names the column (plain text: the page's error box makes it
    inert)."""
    if column not in cols:
        raise ValueError(f"{column}: not a column of this sweep")
    sql_type = cols[column].split("(")[0]
    parts = [p.strip() for p in text.split(",")] if op in ("in", "between") else [text.strip()]
    if any(p == "" for p in parts):
        raise ValueError(f"{column}: give a value" + (" list, comma-separated" if op in ("in", "between") else ""))

    def conv(p: str):
        shown = repr(p) if len(p) <= 40 else repr(p[:39] + "…")
        if sql_type == "BOOLEAN":
            if p.lower() not in ("true", "false"):
                raise ValueError(f"{column}: {shown} is not true or false")
            return p.lower() == "true"
        if sql_type not in db.INT_RANGES and sql_type not in ("FLOAT", "DOUBLE", "DECIMAL"):
            return p  # text (VARCHAR, an ENUM): compared as data
        if not is_ascii_number(p):
            raise ValueError(f"{column}: {shown} is not a number (ASCII digits)")
        try:
            x = int(p) if sql_type in db.INT_RANGES and p.lstrip("+-").isdigit() and len(p) <= 50 else float(p)
        except (ValueError, OverflowError):
            raise ValueError(f"{column}: {shown} is not a number") from None
        if isinstance(x, float) and not math.isfinite(x):
            raise ValueError(f"{column}: {shown} is not a finite number")
        if sql_type in db.INT_RANGES and isinstance(x, float) and x.is_integer() and abs(x) < 2 ** 128:
            x = int(x)
        problem = db.value_problem(x, cols[column])
        if problem is not None:
            raise ValueError(f"{column}: {shown} {problem}")
        return x
    values = [conv(p) for p in parts]
    if op == "between" and len(values) != 2:
        raise ValueError(f"{column}: 'between' needs two values, low,high")
    value = values if op in ("in", "between") else values[0]
    return db.Filter(column, op, value)


def _key(filters) -> tuple:
    return tuple((f.column, f.op, f.value if not isinstance(f.value, list) else tuple(f.value)) for f in filters)


@st.cache_data(max_entries=128, max_size="16MB", ttl=1800, show_spinner=False)
@_safe
def count(table: str, filters: tuple) -> int:
    return db.count(_con(table), table, _filters(filters))


@st.cache_data(max_entries=64, max_size="64MB", ttl=1800, show_spinner=False)
@_safe
def summarise(table: str, by: tuple, filters: tuple, limit: int = SUMMARY_ROWS) -> tuple[pd.DataFrame, int]:
    """The first `limit` groups of `core.db.summarise` (in group order) and how many groups there are in all; only
    the kept groups are cached."""
    df = db.summarise(_con(table), table, list(by), _filters(filters))
    return df.head(limit).reset_index(drop=True), len(df)


def summary_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary for display: memory in GB, cost and duration as text, and "—" where no row of the group fits
    (DuckDB's NULL) rather than "None"."""
    gb = lambda x: "—" if pd.isna(x) else f"{x / 1e9:,.1f}"  # noqa: E731
    out = summary.drop(columns=["min_total_bytes", "max_headroom_bytes", "min_cost_usd", "min_days"])
    # counts keep their own names when a group key has the short one (grouping by valid: "valid" is the key)
    counts = {"n_rows": "rows", "n_valid": "valid", "n_fit": "fit"}
    out = out.rename(columns={k: v if v not in summary.columns else f"{v} rows" for k, v in counts.items()})
    out["smallest per GPU (GB)"] = [gb(x) for x in summary["min_total_bytes"]]
    out["best headroom (GB)"] = [gb(x) for x in summary["max_headroom_bytes"]]
    out["lowest cost"] = [fmt.usd(None if pd.isna(x) else float(x)) for x in summary["min_cost_usd"]]
    out["fewest days"] = [fmt.duration_days(None if pd.isna(x) else float(x)) for x in summary["min_days"]]
    return out


@st.cache_data(max_entries=128, max_size="16MB", ttl=1800, show_spinner=False)
@_safe
def fit_region(table: str, filters: tuple) -> pd.DataFrame:
    df = db.fit_region(_con(table), table, _filters(filters), cell=("model", "n_gpus"))
    df["fit_frac"] = df["n_fit"] / df["n_configs"]
    return df


@st.cache_data(max_entries=128, max_size="16MB", ttl=1800, show_spinner=False)
@_safe
def pareto(table: str, filters: tuple) -> pd.DataFrame:
    return db.pareto(_con(table), table, _filters(filters), by=("model",))


@st.cache_data(max_entries=128, max_size="16MB", ttl=1800, show_spinner=False)
@_safe
def rows(table: str, filters: tuple, limit: int = 200) -> pd.DataFrame:
    return db.query(_con(table), table, _filters(filters), limit=limit,
                    order_by=["-fits", "-headroom_bytes"])


def _filters(key: tuple) -> list:
    return [db.Filter(c, o, list(v) if isinstance(v, tuple) else v) for c, o, v in key]


def filter_key(filters: list) -> tuple:
    return _key(filters)


def csv_allowed(n_rows: int) -> bool:
    """Whether a CSV of `n_rows` rows is offered (CSV is built whole in memory; Parquet is ~10× smaller)."""
    return n_rows <= CSV_MAX_ROWS


def export_bytes(table: str, filters: tuple, fmt: str) -> bytes:
    """The filtered rows as CSV or Parquet, written by DuckDB's COPY into a temporary directory and read back
    (called on click, on Streamlit's download thread). Bounded: one download is built at a time in the process,
    a CSV only up to CSV_MAX_ROWS rows (the page offers Parquet beyond), a Parquet file holds at most a sweep
    (CAP_ROWS rows). A refusal comes back as a short text file saying why (a download thread cannot show a
    message on the page)."""
    try:
        if not _DOWNLOADS.acquire(timeout=DOWNLOAD_WAIT_S):
            raise ValueError("busy: other downloads are being built; click again in a moment")
        try:
            return _export(table, filters, fmt)
        finally:
            _DOWNLOADS.release()
    except ValueError as e:
        return f"No file: {e}\n".encode()


@_safe
def _export(table: str, filters: tuple, fmt: str) -> bytes:
    n_rows = db.count(_con(table), table, _filters(filters))
    if fmt == "csv" and not csv_allowed(n_rows):
        raise ValueError(f"rows: a CSV is offered up to {CSV_MAX_ROWS:,} rows; filter further, or take Parquet")
    if n_rows > CAP_ROWS:  # a dataset on disk can hold billions of rows: a download is at most one app sweep
        raise ValueError(f"rows: a download holds at most {CAP_ROWS:,} rows ({n_rows:,} match); filter further")
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"{table}.{fmt}"
        db.export(_con(table), table, path, fmt, filters=_filters(filters), batch_rows=EXPORT_BATCH_ROWS)
        return path.read_bytes()


def best_row(table: str, filters: tuple, model: str, n_gpus: int) -> dict | None:
    """The best configuration of one fit-region cell (fits first, most headroom) as the flat inputs of
    `config_from_inputs` (the row's input columns, None dropped): what the Calculator opens for the cell."""
    f = list(_filters(filters)) + [db.Filter("model", "=", model), db.Filter("n_gpus", "=", int(n_gpus))]
    con = _con(table)
    cols = _safe(db.allowed_columns)(con, table)
    named = set(info(table)["spec"]) | set(S.KEY_INPUTS)  # the sweep's inputs (n_params, … are record columns too)
    inputs = [c for c in cols if c in named and c not in ("hf_config", "drop_invalid")]
    df = _safe(db.query)(con, table, f, columns=inputs, limit=1, order_by=["-fits", "-headroom_bytes"])
    if df.empty:
        return None
    row = {k: (v.item() if hasattr(v, "item") else v) for k, v in df.iloc[0].to_dict().items()}
    return {k: v for k, v in row.items() if v is not None and v == v}
