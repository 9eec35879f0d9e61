"""The Sweeps page's access to `core.sweep` and `core.db`: one DuckDB database per process (`st.cache_resource`),
every query on its own cursor (inside `core.db`), bounded caches of aggregated results, structured filters parsed
from the page's text fields, and downloads built on click in a temporary directory.

Sweep tables are named by the spec's hash, so everyone who opens the same link reads (or, after a restart,
re-runs) the same table; the newest sweeps are kept up to `ROWS_KEPT` rows and `MAX_TABLES` tables, the oldest
dropped first (a page whose table was dropped runs it again).
"""
from __future__ import annotations

import tempfile
import threading
from collections import defaultdict
from pathlib import Path
from typing import Callable

import pandas as pd
import streamlit as st

from core import db
from core import sweep as S

from . import fmt

AUTO_ROWS = 200_000  # sweeps up to this size run as soon as the page (or a shared link) opens: ~1 s
CAP_ROWS = 1_000_000  # the app's row cap per sweep (≈380 bytes a row in DuckDB: ~0.4 GB); the CLI has none
ROWS_KEPT = 2_000_000  # sweeps kept in the process's database, in rows (~0.8 GB, under MEMORY_LIMIT so nothing
MAX_TABLES = 12        # spills to DuckDB's temp directory); the oldest are dropped first
MEMORY_LIMIT = "1GB"
VOCABULARY = tuple(sorted(set(S.INPUTS) | set(S.record_columns())))
OPS = db.OPS
SUMMARY_ROWS = 5_000  # groups shown and cached per summary (grouping by every input can give one group per row)
GROUP_KEYS = ("model", "gpu", "n_gpus", "seq_len", "micro_batch", "zero_stage", "recompute", "flash_attention", "tp",
              "recipe", "binding", "fits", "valid")


@st.cache_resource(show_spinner=False, max_entries=1, on_release=lambda res: res[0].close())
def _database(version: str):
    """The process's database (in memory, external access off and locked — core.db.connect) and its run locks."""
    spill = Path(tempfile.gettempdir()) / "planner-duckdb"  # never the working directory (Community Cloud)
    return db.connect(threads=2, memory_limit=MEMORY_LIMIT, temp_directory=spill), defaultdict(threading.Lock)


def database():
    return _database(S.code_version())[0]


def spec_from_inputs(d: dict) -> S.SweepSpec:
    """A validated spec; ValueError names the field."""
    return S.SweepSpec.from_dict(d)


def ready(spec: S.SweepSpec) -> bool:
    return db.has_sweep(database(), spec.table_name, S.code_version())


def run(spec: S.SweepSpec, progress: Callable[[int, int], None] | None = None) -> str:
    """Evaluate the spec into the database (once per spec: a second session waits for the first), then drop the
    oldest sweeps beyond MAX_TABLES. Returns the table name."""
    con, locks = _database(S.code_version())
    S.check_rows(spec, CAP_ROWS)
    with locks[spec.table_name]:
        name = S.run_sweep(spec, con, progress=progress)
    cat = db.catalog(con).sort_values("created", ascending=False)
    kept = cat["n_rows"].cumsum()
    for i, (old, rows_so_far) in enumerate(zip(cat["id"], kept)):
        if old != name and (i >= MAX_TABLES or rows_so_far > ROWS_KEPT):
            db.drop_sweep(con, old)
    return name


def info(table: str) -> dict:
    return db.sweep_info(database(), table)


def columns(table: str) -> dict:
    return db.allowed_columns(database(), table)


def parse_filter(column: str, op: str, text: str, cols: dict) -> db.Filter:
    """A structured filter from the page's fields: the value text parsed by the column's type; a list
    (comma-separated) for 'in', two values for 'between'. ValueError names the column."""
    if column not in cols:
        raise ValueError(f"{column}: not a column of this sweep")
    sql_type = cols[column].split("(")[0]
    parts = [p.strip() for p in text.split(",")] if op in ("in", "between") else [text.strip()]
    if any(p == "" for p in parts):
        raise ValueError(f"{column}: give a value" + (" list, comma-separated" if op in ("in", "between") else ""))

    def conv(p: str):
        if sql_type == "BOOLEAN":
            if p.lower() not in ("true", "false"):
                raise ValueError(f"{column}: {p!r} is not true or false")
            return p.lower() == "true"
        if sql_type in ("VARCHAR",):
            return p
        try:
            x = float(p)
        except ValueError:
            raise ValueError(f"{column}: {p!r} is not a number") from None
        if x != x or x in (float("inf"), float("-inf")):
            raise ValueError(f"{column}: {p!r} is not a finite number")
        return int(x) if sql_type in ("INTEGER", "BIGINT", "SMALLINT", "TINYINT") and x == int(x) else x
    values = [conv(p) for p in parts]
    if op == "between" and len(values) != 2:
        raise ValueError(f"{column}: 'between' needs two values, low,high")
    value = values if op in ("in", "between") else values[0]
    return db.Filter(column, op, value)


def _key(filters) -> tuple:
    return tuple((f.column, f.op, f.value if not isinstance(f.value, list) else tuple(f.value)) for f in filters)


@st.cache_data(max_entries=128, show_spinner=False)
def count(table: str, filters: tuple) -> int:
    return db.count(database(), table, _filters(filters))


@st.cache_data(max_entries=64, max_size="64MB", show_spinner=False)
def summarise(table: str, by: tuple, filters: tuple, limit: int = SUMMARY_ROWS) -> tuple[pd.DataFrame, int]:
    """The first `limit` groups of `core.db.summarise` (in group order) and how many groups there are in all; only
    the kept groups are cached."""
    df = db.summarise(database(), table, list(by), _filters(filters))
    return df.head(limit).reset_index(drop=True), len(df)


def summary_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary for display: memory in GB, cost and duration as text, and "—" where no row of the group fits
    (DuckDB's NULL) rather than "None"."""
    gb = lambda x: "—" if pd.isna(x) else f"{x / 1e9:,.1f}"  # noqa: E731
    out = summary.drop(columns=["min_total_bytes", "max_headroom_bytes", "min_cost_usd", "min_days"])
    out = out.rename(columns={"n_rows": "rows", "n_valid": "valid", "n_fit": "fit"})
    out["smallest per GPU (GB)"] = [gb(x) for x in summary["min_total_bytes"]]
    out["best headroom (GB)"] = [gb(x) for x in summary["max_headroom_bytes"]]
    out["lowest cost"] = [fmt.usd(None if pd.isna(x) else float(x)) for x in summary["min_cost_usd"]]
    out["fewest days"] = [fmt.duration_days(None if pd.isna(x) else float(x)) for x in summary["min_days"]]
    return out


@st.cache_data(max_entries=128, show_spinner=False)
def fit_region(table: str, filters: tuple) -> pd.DataFrame:
    df = db.fit_region(database(), table, _filters(filters), cell=("model", "n_gpus"))
    df["fit_frac"] = df["n_fit"] / df["n_configs"]
    return df


@st.cache_data(max_entries=128, show_spinner=False)
def pareto(table: str, filters: tuple) -> pd.DataFrame:
    return db.pareto(database(), table, _filters(filters), by=("model",))


@st.cache_data(max_entries=128, show_spinner=False)
def rows(table: str, filters: tuple, limit: int = 200) -> pd.DataFrame:
    return db.query(database(), table, _filters(filters), limit=limit,
                    order_by=["-fits", "-headroom_bytes"])


def _filters(key: tuple) -> list:
    return [db.Filter(c, o, list(v) if isinstance(v, tuple) else v) for c, o, v in key]


def filter_key(filters: list) -> tuple:
    return _key(filters)


def export_bytes(table: str, filters: tuple, fmt: str) -> bytes:
    """The filtered rows as CSV or Parquet, written by DuckDB's COPY into a temporary directory and read back
    (called on click, on Streamlit's download thread)."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"{table}.{fmt}"
        db.export(database(), table, path, fmt, filters=_filters(filters))
        return path.read_bytes()
