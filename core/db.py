"""The one module that owns DuckDB: a locked-down database, sweep tables written via Arrow, a catalog, the
parameterised queries the app needs, structured user filters, and CSV/Parquet export by DuckDB's COPY.

Database. `connect(path=None)` opens an embedded database, in memory by default or in a file, with
``enable_external_access = false`` (no file, URL, ATTACH, INSTALL or Python-variable scan) and
``lock_configuration = true`` (no later SET can undo it). Sweep tables are written from an Arrow stream
registered on the cursor explicitly (`write_sweep`), materialised with ``CREATE TABLE … AS SELECT``, named by the
spec's hash (``sweep_`` + 16 hex digits), and recorded in the catalog table `sweep_catalog`
(id, spec JSON, code version, created, row counts, seconds) once complete. Every query runs on its own
`cursor()` (DuckDB 2 refuses a connection shared across threads) and returns a pandas DataFrame. With
`memory_limit`, an in-memory database offloads table blocks to its temp directory beyond it (`temp_directory`,
by default `.tmp/` under the working directory), so a 10M-row sweep does not need its ~3.5 GB resident. Row order in a
table is not kept (``preserve_insertion_order = false``: faster inserts); queries that need one say ORDER BY.

Trust. Identifiers are never taken from a caller as SQL: a table name must look like ``sweep_<16 hex>`` and be in
the catalog; a column must be one of that table's columns and of the sweep vocabulary (`allowed_columns`). User
filters are `Filter(column, op, value)` with `op` from `OPS`; values are type-checked against the column and
bound as ``?`` parameters, so a hostile value (quotes, semicolons, ``COPY … TO``, ``read_csv(…)``) is only ever
compared as data. And even SQL that got through could touch no file outside the temp directory: external access is
off and locked, but DuckDB still lets SQL write and attach files inside its temp directory, so the app gives it a
private one (`private_temp_directory`: mode 0700, new per process) with a bounded size (`max_temp_directory_size`).

Export without opening the database to files. COPY needs file access, which the main database never has. So
`export` runs the (parameterised) SELECT on the locked database and streams its result as an Arrow reader into a
second, empty DuckDB instance whose only permitted path is the destination (``allowed_paths = [path]``, then
external access off, configuration locked), which runs the fixed statement ``COPY (SELECT * FROM rows) TO ?``.
No user text reaches that instance as SQL, it holds no data of its own, and it can write that one file and
nothing else; both sides stream, so tables larger than memory export in bounded memory. `copy_to` is the same
writer for any Arrow stream (the CLI streams a sweep straight to a file with it, with no table at all). The file is
written under a hidden temporary name beside the target (``.<name>.<pid>-<hex>.tmp``) and renamed over it when
complete, so a killed export never leaves a truncated file under the final name; the temporary files of writers
that died (this writer's and `core.columnar.write_parquet`'s ``.<name>.<pid>.tmp``) are removed by the next export
to the same name (`remove_stale_temps`).

Datasets on disk (`core.distributed`) are read without giving DuckDB any file access: DuckDB's
``allowed_directories`` (and ``allowed_paths``) permit writing as much as reading — ``COPY … TO`` and ``ATTACH``
into an allowed directory succeed, and ``COPY … (USE_TMP_FILE false)`` overwrites an allowed file — so a dataset
connection (`connect(allowed_directories=…)`, a `DatasetConnection`) keeps DuckDB locked with external access off
like every other, and hands it each dataset as a pyarrow Dataset over the dataset's files, listed explicitly
(never a glob of the dataset's own name), read by pyarrow. A dataset's view is named ``dataset_<16 hex>`` from a
hash of its resolved path and its manifest — a namespace no app sweep (``sweep_<hash of spec>``) can share, and
never the manifest's own ``table`` field — so two datasets, or a dataset and an app sweep, never see each other's
rows. Messages name the dataset (its directory's name), never a server path.
"""
from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import json
import os
import math
import re
import secrets
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from . import record as R
from . import safejson
from .spec import INPUTS as _INPUTS  # the inputs a sweep table can carry

if TYPE_CHECKING:
    import pandas as pd

CATALOG = "sweep_catalog"
OPS = ("=", "!=", "<", "<=", ">", ">=", "in", "between")
MAX_IN_VALUES = 10_000
MAX_LIMIT = 10_000_000
FORMATS = ("csv", "parquet")
_SWEEP_RE = re.compile(r"^sweep_[0-9a-f]{16}$")  # a table written here (write_sweep): the spec's hash
DATASET_PREFIX = "dataset_"  # a dataset read in place (open_dataset): a hash of its path, never the spec's
_DATASET_RE = re.compile(r"dataset_[0-9a-f]{16}")
_TABLE_RE = re.compile(r"^(?:sweep|dataset)_[0-9a-f]{16}$")
_TMP_RE = re.compile(r"^tmp_sweep_[0-9a-f]{16}_[0-9a-f]{8}$")  # a table being written (write_sweep)
_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT",
            "FLOAT", "DOUBLE", "DECIMAL")
# the record's categorical columns, allowed as group keys besides the inputs
CATEGORICAL_RECORD = R.CATEGORICAL


def connect(path: str | Path | None = None, threads: int | None = None, memory_limit: str | None = None,
            temp_directory: str | Path | None = None, max_temp_directory_size: str | None = None,
            allowed_directories: tuple = (), return_memory: bool = False):
    """An embedded database (in memory, or the file `path`) with external access disabled and the configuration
    locked, and the catalog table created. `threads`, `memory_limit` (e.g. "1GB"), `temp_directory` (where
    blocks beyond the limit go; DuckDB's default is `.tmp` under the working directory) and
    `max_temp_directory_size` (DuckDB's default: 90 % of the free disk) are fixed here, before the lock.

    External access off still leaves the temp directory open to SQL (COPY … TO, ATTACH inside it): give the app a
    private one (`private_temp_directory`). Tables an interrupted run left half-written (``tmp_sweep_…``) are
    dropped here: nothing else can be using a database that is being opened.

    `allowed_directories`: the directories sweep datasets may be opened from (`open_dataset`). Given, the result is
    a `DatasetConnection` over the same locked database: DuckDB itself still may touch no file (its own
    `allowed_directories` would let SQL write there too), and the datasets reach it through pyarrow, read-only.

    `return_memory` (a long-running server): DuckDB's allocator (jemalloc on Linux) gives freed memory back to the
    system from background threads, and flushes after any task that peaked above 32 MiB or freed more than 64 MiB
    at once (DuckDB's defaults: no background threads, 128 MiB, 512 MiB — memory a dropped table held stays with
    the process). The two thresholds are chosen (a quarter and an eighth of the defaults), not fitted: the load
    benchmark measured their effect (bench/RESULTS.md "Load": +307 → +212 MB after the sessions closed). DuckDB 2.0 settings allocator_background_threads, allocator_flush_threshold,
    allocator_bulk_deallocation_flush_threshold (duckdb.org/docs/2.0/internals/jemalloc)."""
    config = {"enable_external_access": False, "autoinstall_known_extensions": False,
              "autoload_known_extensions": False, "preserve_insertion_order": False, "lock_configuration": True}
    if threads is not None:
        config["threads"] = int(threads)
    if memory_limit is not None:
        config["memory_limit"] = str(memory_limit)
    if temp_directory is not None:
        config["temp_directory"] = str(temp_directory)
    if max_temp_directory_size is not None:
        config["max_temp_directory_size"] = str(max_temp_directory_size)
    if return_memory:
        config.update(allocator_background_threads=True, allocator_flush_threshold="32MiB",
                      allocator_bulk_deallocation_flush_threshold="64MiB")
    roots = tuple(Path(d).resolve() for d in allowed_directories)
    try:
        con = duckdb.connect(str(path) if path is not None else ":memory:", config=config)
        with con.cursor() as cur:
            cur.execute(f"""CREATE TABLE IF NOT EXISTS {CATALOG} (
                id VARCHAR PRIMARY KEY, spec VARCHAR NOT NULL, code_version VARCHAR NOT NULL,
                created TIMESTAMP NOT NULL, n_rows BIGINT NOT NULL, n_valid BIGINT NOT NULL, n_fit BIGINT NOT NULL,
                seconds DOUBLE)""")
            for (old,) in cur.execute("SELECT table_name FROM duckdb_tables() WHERE starts_with(table_name, ?)",
                                      ["tmp_sweep_"]).fetchall():
                if _TMP_RE.match(old):
                    cur.execute(f'DROP TABLE IF EXISTS "{old}"')
    except duckdb.Error as e:  # a bad memory_limit, a file that is not a DuckDB database, an unwritable path, ...
        field = "memory_limit" if "memory" in str(e).lower() and memory_limit is not None else "database"
        raise ValueError(f"{field}: DuckDB refused it: {_first_line(e)}") from None
    return DatasetConnection(con, roots) if roots else con


def private_temp_directory(prefix: str = "planner-duckdb-") -> Path:
    """A new directory only this process's user can enter (mode 0700, `tempfile.mkdtemp`), for DuckDB's spill
    files: the one place SQL on a locked connection could still write, so nobody else's, and removed at exit."""
    d = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, d, True)
    return d


def _first_line(e: BaseException) -> str:
    """DuckDB's message for a person: its first line, without the Python traceback DuckDB appends when a
    registered stream failed (``Detail: Python exception: Traceback …``), at most 300 characters."""
    lines = str(e).strip().splitlines()
    text = lines[0] if lines else type(e).__name__
    return text.split(" Detail: Python exception")[0].split("Traceback (most recent call last)")[0].strip()[:300]


# ---------------------------------------------------------------------------------------------------------------
# Writing sweeps; the catalog
# ---------------------------------------------------------------------------------------------------------------

def _check_name(name: str, pattern=_TABLE_RE) -> str:
    if not isinstance(name, str) or not pattern.match(name):
        what = "sweep_" if pattern is _SWEEP_RE else "sweep_ or dataset_"
        raise ValueError(f"table: {name!r} is not a sweep table name ({what} and 16 hex digits)")
    return name


def write_sweep(con, name: str, reader, spec_json: str, code_version: str, stats, lock=None) -> None:
    """Materialise an Arrow stream (RecordBatchReader) as table `name`, replacing one of that name only once the
    new one is complete, and record it in the catalog. One ``CREATE TABLE … AS SELECT`` over the stream into a
    table of its own (``tmp_sweep_…``): DuckDB pulls batches on its own threads (twice as fast as appending batch
    by batch) and, being one auto-committed statement, may move finished blocks to its temp directory beyond
    `memory_limit` (appends inside an explicit transaction all stay resident). `stats()` is called after the data
    is in and gives n_rows, n_valid, n_fit and seconds. Then one transaction drops the old table, renames the new
    one and replaces the catalog row, so a reader sees the old sweep or the new one, never neither; a failure or an
    interrupt (Ctrl-C) before it leaves the old table and its catalog row as they were. `lock` (a context manager,
    e.g. the app's store lock) is held around that transaction, so swaps and evictions never interleave. Only a
    ``sweep_`` name: ``dataset_`` names belong to datasets read in place (`open_dataset`)."""
    _check_name(name, _SWEEP_RE)
    json.loads(spec_json)  # a malformed spec is a bug upstream; fail before writing
    tmp = f"tmp_{name}_{secrets.token_hex(4)}"
    with con.cursor() as cur:
        try:
            cur.register("sweep_stream", reader)
            cur.execute(f'CREATE TABLE "{tmp}" AS SELECT * FROM sweep_stream')
            cur.unregister("sweep_stream")
            s = stats()
            with lock if lock is not None else contextlib.nullcontext():
                cur.execute("BEGIN TRANSACTION")
                try:
                    cur.execute(f'DROP TABLE IF EXISTS "{name}"')
                    cur.execute(f'ALTER TABLE "{tmp}" RENAME TO "{name}"')
                    cur.execute(f"DELETE FROM {CATALOG} WHERE id = ?", [name])
                    cur.execute(f"INSERT INTO {CATALOG} VALUES (?, ?, ?, now()::TIMESTAMP, ?, ?, ?, ?)",
                                [name, spec_json, code_version, int(s["n_rows"]), int(s["n_valid"]),
                                 int(s["n_fit"]), float(s["seconds"])])
                    cur.execute("COMMIT")
                except BaseException:
                    cur.execute("ROLLBACK")
                    raise
        except BaseException:
            try:
                cur.execute(f'DROP TABLE IF EXISTS "{tmp}"')
            except duckdb.Error:  # the connection itself failed; connect() drops leftovers next time
                pass
            raise


def catalog(con) -> pd.DataFrame:
    """Every sweep in the database: id, spec (JSON), code_version, created, n_rows, n_valid, n_fit, seconds."""
    with con.cursor() as cur:
        return cur.execute(f"SELECT * FROM {CATALOG} ORDER BY created").df()


def sweep_info(con, table: str) -> dict:
    """The catalog row of one sweep, as a dict (spec parsed); `ValueError` if it is not there."""
    _check_name(table)
    with con.cursor() as cur:
        rows = cur.execute(f"SELECT * FROM {CATALOG} WHERE id = ?", [table]).df().to_dict("records")
    if not rows:
        raise ValueError(f"table: no sweep {table!r} in this database")
    info = rows[0]
    info["spec"] = json.loads(info["spec"])
    return info


def has_sweep(con, table: str, code_version: str | None = None) -> bool:
    """Whether the sweep table and its catalog row exist (for `code_version`, when given)."""
    _check_name(table)
    with con.cursor() as cur:
        row = cur.execute(f"SELECT code_version FROM {CATALOG} WHERE id = ?", [table]).fetchall()
        exists = cur.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [table]).fetchone()[0]
        exists += cur.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ?", [table]).fetchone()[0]
    return bool(row) and bool(exists) and (code_version is None or row[0][0] == code_version)


def drop_sweep(con, table: str) -> None:
    """Remove a sweep table and its catalog row, in one transaction (callers that share a database serialise
    this with `write_sweep`'s swap: `core.sweep.SweepStore`)."""
    _check_name(table)
    with con.cursor() as cur:
        cur.execute("BEGIN TRANSACTION")
        try:
            cur.execute(f"DELETE FROM {CATALOG} WHERE id = ?", [table])
            is_view = cur.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ?", [table]).fetchone()[0]
            cur.execute(f'DROP {"VIEW" if is_view else "TABLE"} IF EXISTS "{table}"')  # a view: open_dataset
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise


# ---------------------------------------------------------------------------------------------------------------
# Allow-lists and structured filters
# ---------------------------------------------------------------------------------------------------------------

def _vocabulary() -> set:
    """Every column name a sweep table may have: the inputs (core/inputs.py) and the record (core/record.py)."""
    return set(_INPUTS) | set(R.NAMES)


def allowed_columns(con, table: str) -> dict:
    """Column name → DuckDB type, for the columns of a catalogued sweep table that belong to the vocabulary."""
    _check_name(table)
    with con.cursor() as cur:
        known = cur.execute(f"SELECT count(*) FROM {CATALOG} WHERE id = ?", [table]).fetchone()[0]
        if not known:
            raise ValueError(f"table: no sweep {table!r} in this database")
        cols = cur.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ? "
                           "ORDER BY column_index", [table]).fetchall()
    vocab = _vocabulary()
    return {c: t for c, t in cols if c in vocab}


def input_columns(con, table: str) -> list:
    """The input columns of a sweep table (the ones summaries group by)."""
    return [c for c in allowed_columns(con, table) if c in _INPUTS]


def _col(name, cols: dict) -> str:
    if not isinstance(name, str) or name not in cols:
        raise ValueError(f"column: {name!r} is not a column of this sweep; allowed: {', '.join(cols)}")
    return f'"{name}"'


# the whole numbers each integer type holds, and the largest magnitude of a FLOAT (a value beyond either cannot be
# bound against the column: DuckDB would refuse it with a conversion error instead of a message naming the column)
INT_RANGES = {"TINYINT": (-2 ** 7, 2 ** 7 - 1), "SMALLINT": (-2 ** 15, 2 ** 15 - 1),
              "INTEGER": (-2 ** 31, 2 ** 31 - 1), "BIGINT": (-2 ** 63, 2 ** 63 - 1),
              "HUGEINT": (-2 ** 127, 2 ** 127 - 1), "UTINYINT": (0, 2 ** 8 - 1), "USMALLINT": (0, 2 ** 16 - 1),
              "UINTEGER": (0, 2 ** 32 - 1), "UBIGINT": (0, 2 ** 64 - 1)}
FLOAT_MAX = 3.4028234663852886e38


def value_problem(value, sql_type: str) -> str | None:
    """Why `value` cannot be compared with a column of `sql_type` (None when it can): true/false only for BOOLEAN;
    for an integer type a whole number within the type's range; for FLOAT and DOUBLE a finite number within the
    type's range; text for the rest. The reason reads after the column's name ("seq_len: …")."""
    base = sql_type.split("(")[0]
    if base == "BOOLEAN":
        return None if isinstance(value, bool) else "must be true or false"
    if base in _NUMERIC:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"must be a number ({sql_type})"
        if isinstance(value, float) and not math.isfinite(value):
            return f"must be a finite number ({sql_type})"
        if base in INT_RANGES:
            lo, hi = INT_RANGES[base]
            if isinstance(value, float) and not value.is_integer():
                return f"must be a whole number ({sql_type})"
            if not lo <= value <= hi:
                return f"does not fit the column ({sql_type} holds whole numbers from {lo:,} to {hi:,})"
            return None
        try:
            magnitude = abs(float(value))
        except OverflowError:  # an int beyond any double
            magnitude = math.inf
        limit = FLOAT_MAX if base == "FLOAT" else 1.7976931348623157e308
        if magnitude > limit:
            return f"does not fit the column ({sql_type} holds numbers up to about {limit:.3g} in size)"
        return None
    return None if isinstance(value, str) else f"must be text ({sql_type})"


@dataclass(frozen=True)
class Filter:
    """One user condition: `column` (checked against the table's allow-list when used), `op` from `OPS`, and
    `value` — a scalar; a list for "in"; a (low, high) pair for "between". Values are always bound parameters."""

    column: str
    op: str
    value: object

    def __post_init__(self):
        if not isinstance(self.column, str):
            raise ValueError(f"column: expected a column name, got {self.column!r}")
        if self.op not in OPS:
            raise ValueError(f"{self.column}: operator {self.op!r} is not one of {', '.join(OPS)}")
        v = self.value
        if self.op == "in":
            if isinstance(v, (str, bytes)) or not isinstance(v, (list, tuple)) or not 0 < len(v) <= MAX_IN_VALUES:
                raise ValueError(f"{self.column}: 'in' needs a list of 1 to {MAX_IN_VALUES} values")
            object.__setattr__(self, "value", tuple(v))
        elif self.op == "between":
            if not isinstance(v, (list, tuple)) or len(v) != 2:
                raise ValueError(f"{self.column}: 'between' needs a (low, high) pair")
            object.__setattr__(self, "value", tuple(v))
        values = self.value if self.op in ("in", "between") else (self.value,)
        for x in values:
            if not isinstance(x, (str, bool, int, float)):
                raise ValueError(f"{self.column}: a filter value must be a string, number or true/false, "
                                 f"got {type(x).__name__}")

    @classmethod
    def from_dict(cls, d: dict) -> "Filter":
        """From {"column": …, "op": …, "value": …} (a URL or JSON form)."""
        if not isinstance(d, dict) or set(d) != {"column", "op", "value"}:
            raise ValueError("filter: expected an object with column, op and value")
        return cls(d["column"], d["op"], d["value"])


def where(filters, cols: dict) -> tuple[str, list]:
    """A WHERE condition and its parameters from Filters; columns from `cols` (an allow-list: name → SQL type),
    values type-checked against their column and bound as `?`."""
    parts, params = [], []
    for f in filters or ():
        if not isinstance(f, Filter):
            f = Filter.from_dict(f) if isinstance(f, dict) else Filter(*f)
        ident = _col(f.column, cols)
        values = f.value if f.op in ("in", "between") else (f.value,)
        for x in values:
            problem = value_problem(x, cols[f.column])
            if problem is not None:
                raise ValueError(f"{f.column}: {_short(x)} {problem}")
        if f.op == "in":
            parts.append(f"{ident} IN ({', '.join('?' * len(values))})")
        elif f.op == "between":
            parts.append(f"{ident} BETWEEN ? AND ?")
        else:
            parts.append(f"{ident} {f.op} ?")
        params.extend(values)
    return (" AND ".join(parts) if parts else "TRUE"), params


def _short(x) -> str:
    """A filter value for a message: its repr, at most 60 characters (a value can be a 500-character text)."""
    text = repr(x)
    return text if len(text) <= 60 else text[:59] + "…"


def _keys(by, cols: dict, allowed=None) -> list:
    by = [by] if isinstance(by, str) else list(by)
    if not by:
        raise ValueError("by: give at least one column")
    for k in by:
        _col(k, cols)
        if allowed is not None and k not in allowed:
            raise ValueError(f"by: {k!r} cannot be a group key; allowed: {', '.join(allowed)}")
    if len(set(by)) != len(by):
        raise ValueError("by: a column is named twice")
    return by


def _q(names) -> str:
    return ", ".join(f'"{n}"' for n in names)


def _df(con, sql: str, params: list) -> pd.DataFrame:
    with con.cursor() as cur:
        return cur.execute(sql, params).df()


def _limit(limit) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 0 < limit <= MAX_LIMIT:
        raise ValueError(f"limit: must be an integer from 1 to {MAX_LIMIT:,}")
    return limit


def _group_keys(cols) -> tuple:
    return tuple(c for c in cols if c in _INPUTS or c in CATEGORICAL_RECORD)


# ---------------------------------------------------------------------------------------------------------------
# Queries the app needs
# ---------------------------------------------------------------------------------------------------------------

def query(con, table: str, filters=(), columns=None, limit: int = 10_000, order_by=None) -> pd.DataFrame:
    """Rows of a sweep matching `filters`: `columns` (default all), ordered by `order_by` (columns; a leading "-"
    sorts descending), at most `limit` rows."""
    cols = allowed_columns(con, table)
    select = _q(_keys(columns, cols)) if columns is not None else _q(cols)
    cond, params = where(filters, cols)
    order = _order(order_by, cols)
    return _df(con, f'SELECT {select} FROM "{table}" WHERE {cond}{order} LIMIT {_limit(limit)}', params)


def _order(order_by, cols) -> str:
    if not order_by:
        return ""
    terms = []
    for o in [order_by] if isinstance(order_by, str) else order_by:
        desc = isinstance(o, str) and o.startswith("-")
        name = o[1:] if desc else o
        terms.append(f"{_col(name, cols)} {'DESC' if desc else 'ASC'} NULLS LAST")
    return " ORDER BY " + ", ".join(terms)


def count(con, table: str, filters=()) -> int:
    """How many rows match `filters`."""
    cols = allowed_columns(con, table)
    cond, params = where(filters, cols)
    with con.cursor() as cur:
        return int(cur.execute(f'SELECT count(*) FROM "{table}" WHERE {cond}', params).fetchone()[0])


def fit_region(con, table: str, filters=(), cell=("model", "n_gpus", "seq_len")) -> pd.DataFrame:
    """One row per cell (default model × n_gpus × seq_len) over the valid configurations in it: n_configs, n_fit,
    fits (any configuration fits), headroom_bytes (the best: largest), binding (the largest memory term of that
    best configuration), total_bytes (the smallest)."""
    cols = allowed_columns(con, table)
    keys = _keys(cell, cols, _group_keys(cols))
    cond, params = where(filters, cols)
    k = _q(keys)
    return _df(con, f"""
        SELECT {k}, count(*) AS n_configs, count(*) FILTER (WHERE fits) AS n_fit, bool_or(fits) AS fits,
               max(headroom_bytes) AS headroom_bytes, arg_max(binding, headroom_bytes) AS binding,
               min(total_bytes) AS total_bytes
        FROM "{table}" WHERE valid AND {cond} GROUP BY {k} ORDER BY {k}""", params)


_DETAIL = ("gpu", "n_gpus", "tp", "pp", "zero_stage", "micro_batch", "recompute", "seq_len", "dp", "total_bytes",
           "headroom_bytes", "binding", "days", "cost_usd")


def _best_per_group(con, table, filters, by, order: str, value: str, alias: str) -> pd.DataFrame:
    """For each group of `by` (over valid rows): the first fitting row under `order` (NULL when none fits)."""
    cols = allowed_columns(con, table)
    keys = _keys(by, cols, _group_keys(cols))
    cond, params = where(filters, cols)
    detail = [c for c in _DETAIL if c in cols and c not in keys and c != value]
    k = _q(keys)
    join = " AND ".join(f'c."{x}" IS NOT DISTINCT FROM b."{x}"' for x in keys)
    return _df(con, f"""
        WITH cells AS (SELECT DISTINCT {k} FROM "{table}" WHERE valid AND {cond}),
             best AS (SELECT {k}, "{value}" AS {alias}, {_q(detail)} FROM "{table}" WHERE fits AND {cond}
                      QUALIFY row_number() OVER (PARTITION BY {k} ORDER BY {order}) = 1)
        SELECT {', '.join(f'c."{x}"' for x in keys)}, b.{alias}, {', '.join(f'b."{x}"' for x in detail)}
        FROM cells c LEFT JOIN best b ON {join} ORDER BY {', '.join(f'c."{x}"' for x in keys)}""", params + params)


def min_gpus(con, table: str, filters=(), by=("model", "seq_len", "zero_stage")) -> pd.DataFrame:
    """The fewest GPUs that fit, per group (default model × seq_len × zero_stage), with the configuration that does
    it (most headroom among the ties); min_gpus is NULL where nothing in the sweep fits."""
    return _best_per_group(con, table, filters, by, '"n_gpus" ASC, "headroom_bytes" DESC', "n_gpus", "min_gpus")


def max_seq_len(con, table: str, filters=(), by=("model", "n_gpus")) -> pd.DataFrame:
    """The largest sequence length that fits, per group (default model × n_gpus), with the configuration that does
    it (most headroom among the ties); max_seq_len is NULL where nothing fits."""
    return _best_per_group(con, table, filters, by, '"seq_len" DESC, "headroom_bytes" DESC', "seq_len",
                           "max_seq_len")


def pareto(con, table: str, filters=(), by=("model",)) -> pd.DataFrame:
    """The cost-vs-days frontier per group (default per model) across accelerators, GPU counts and every other
    input: among configurations that fit and have a cost, the rows no other row beats on both days and cost
    (for each deadline, the lowest cost). Sorted by days."""
    cols = allowed_columns(con, table)
    keys = _keys(by, cols, _group_keys(cols)) if by else []
    cond, params = where(filters, cols)
    detail = [c for c in _DETAIL if c in cols and c not in keys and c not in ("days", "cost_usd")]
    part = f"PARTITION BY {_q(keys)} " if keys else ""
    k = f"{_q(keys)}, " if keys else ""
    # two stages, so the window sorts far fewer and narrower rows (DuckDB's window operator does not spill): the
    # cheapest configuration per (group, days), then the running minimum of cost over days within the group
    pack = ", ".join(f"{_q([c])} := {_q([c])}" for c in detail)
    return _df(con, f"""
        WITH ok AS (SELECT {k}"days", "cost_usd", {_q(detail)} FROM "{table}"
                    WHERE fits AND "cost_usd" IS NOT NULL AND "days" IS NOT NULL AND {cond}),
             agg AS (SELECT {k}"days", min("cost_usd") AS "cost_usd",
                            arg_min(struct_pack({pack}), "cost_usd") AS d
                     FROM ok GROUP BY {k}"days"),
             run AS (SELECT *, min("cost_usd") OVER ({part}ORDER BY "days", "cost_usd"
                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_min FROM agg)
        SELECT {k}"days", "cost_usd", {", ".join(f'd.{_q([c])} AS {_q([c])}' for c in detail)} FROM run
        WHERE prev_min IS NULL OR "cost_usd" < prev_min ORDER BY {k}"days", "cost_usd"
        """, params)


def activations_vs_seq(con, table: str, filters=(), by=("model", "recompute")) -> pd.DataFrame:
    """Activation memory per GPU against sequence length, per group (default model × recompute mode), over the
    valid rows matching `filters` (fix the other inputs with filters for one line per group): the smallest and
    largest activations_bytes at each seq_len, and how many configurations."""
    cols = allowed_columns(con, table)
    keys = _keys(by, cols, _group_keys(cols))
    cond, params = where(filters, cols)
    k = _q(keys)
    return _df(con, f"""
        SELECT {k}, "seq_len", min("activations_bytes") AS activations_bytes,
               max("activations_bytes") AS activations_bytes_max, count(*) AS n_configs
        FROM "{table}" WHERE valid AND {cond} GROUP BY {k}, "seq_len" ORDER BY {k}, "seq_len"
        """, params)


def summarise(con, table: str, by, filters=()) -> pd.DataFrame:
    """Counts and bests per value of any input column (or several; also valid, fits, reason, binding, dp): rows,
    valid, fit, smallest total_bytes and largest headroom among valid rows, lowest cost and fewest days among
    the rows that fit."""
    cols = allowed_columns(con, table)
    keys = _keys(by, cols, _group_keys(cols))
    cond, params = where(filters, cols)
    k = _q(keys)
    return _df(con, f"""
        SELECT {k}, count(*) AS n_rows, count(*) FILTER (WHERE valid) AS n_valid,
               count(*) FILTER (WHERE fits) AS n_fit, min(total_bytes) AS min_total_bytes,
               max(headroom_bytes) AS max_headroom_bytes, min(cost_usd) FILTER (WHERE fits) AS min_cost_usd,
               min(days) FILTER (WHERE fits) AS min_days
        FROM "{table}" WHERE {cond} GROUP BY {k} ORDER BY {k}""", params)


# ---------------------------------------------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------------------------------------------

def _fmt(path: Path, fmt: str | None) -> str:
    fmt = (fmt or path.suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        raise ValueError(f"format: {fmt!r} is not one of {', '.join(FORMATS)} (from the file suffix or fmt)")
    return fmt


def output_format(path: str | Path, fmt: str | None = None) -> str:
    """csv or parquet, from `fmt` or the file's suffix; ValueError naming `out` otherwise."""
    return _fmt(Path(path), fmt)


def checked_output(path: str | Path) -> Path:
    """The output path resolved, after the checks every writer makes: a usable path, an existing folder, not a
    folder itself. ValueError naming `out` otherwise."""
    try:
        path = Path(path).resolve()
        parent_ok = path.parent.is_dir()
    except (OSError, RuntimeError) as e:  # a name too long, a symlink loop
        raise ValueError(f"out: {str(path)[:200]!r} is not a usable path ({type(e).__name__})") from None
    if not parent_ok:
        raise ValueError(f"out: folder {str(path.parent)[:200]!r} does not exist")
    if path.is_dir():
        raise ValueError(f"out: {str(path)[:200]!r} is a folder; give a file name")
    if not os.access(path.parent, os.W_OK):
        raise ValueError(f"out: cannot write in {str(path.parent)[:200]!r}")
    return path


_STALE_RE = r"^\.{name}\.(\d+)(?:-[0-9a-f]+)?\.tmp$"  # .<name>.<pid>.tmp (columnar) or .<name>.<pid>-<hex>.tmp


def pid_alive(pid: int) -> bool:
    """Whether a process `pid` runs on this machine (another user's counts: it exists)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # none, or a number no process can have
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale_temps(path: str | Path) -> list[str]:
    """Remove the temporary files that killed writers left beside `path` (``.<name>.<pid>.tmp`` and
    ``.<name>.<pid>-<hex>.tmp``, the names `copy_to` and `core.columnar.write_parquet` write under) whose process is
    gone; a live writer's (this process's included) is kept. Returns the names removed. Called by every export
    before it writes, so a SIGKILLed export's 40-50 MB leftovers last only until the next export to that name."""
    path = Path(path)
    pattern = re.compile(_STALE_RE.format(name=re.escape(path.name)))
    removed = []
    try:
        entries = list(path.parent.iterdir())
    except OSError:
        return removed
    for p in entries:
        m = pattern.match(p.name)
        if m is None or pid_alive(int(m.group(1))):
            continue
        try:
            p.unlink()
            removed.append(p.name)
        except OSError:  # gone already (another export cleaned it), or not ours to remove
            pass
    return removed


def temp_beside(path: Path) -> Path:
    """A hidden temporary name beside `path`, unique to this process and call: ``.<name>.<pid>-<hex>.tmp``."""
    return path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")


def copy_to(reader, path: str | Path, fmt: str | None = None) -> int:
    """Write an Arrow stream (RecordBatchReader) to CSV (with a header) or Parquet with DuckDB's COPY, streaming,
    from a throwaway DuckDB instance that may write one hidden temporary file beside `path` and nothing else; the
    file is renamed over `path` when complete (a killed or failed export leaves `path` as it was, and no truncated
    file under its name). Returns the rows written."""
    path = checked_output(path)
    fmt = _fmt(path, fmt)
    remove_stale_temps(path)
    tmp = temp_beside(path)
    # one thread: the stream is produced by one (Python) thread anyway, and more writers only contend for it
    # (10M rows to Parquet: 11 s with one thread, 24-29 s with two, on 2 cores)
    config = {"threads": 1, "autoinstall_known_extensions": False, "autoload_known_extensions": False}
    try:
        with duckdb.connect(config=config) as exp:
            exp.execute("SET allowed_paths = ?", [[str(tmp)]])
            exp.execute("SET enable_external_access = false")
            exp.execute("SET lock_configuration = true")
            exp.register("rows", reader)
            options = "FORMAT csv, HEADER true" if fmt == "csv" else "FORMAT parquet"
            try:  # the temporary name is new: COPY writes it in place (no tmp_ twin of its own)
                n = exp.execute(f"COPY (SELECT * FROM rows) TO ? ({options}, USE_TMP_FILE false)",
                                [str(tmp)]).fetchone()[0]
            except duckdb.IOException as e:  # unwritable folder, disk full, a read-only file system
                raise ValueError(f"out: cannot write {str(path)[:200]!r}: "
                                 f"{_first_line(e).replace(str(tmp), path.name)}") from None
        os.replace(tmp, path)  # the complete file appears under its name in one step
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return int(n)


def export(con, table: str, path: str | Path, fmt: str | None = None, filters=(), columns=None,
           order_by=None, batch_rows: int = 1 << 17) -> int:
    """Write a whole sweep, or the rows matching `filters` (and only `columns`), to CSV or Parquet by DuckDB's COPY,
    streamed (tables larger than memory too); returns the rows written. See the module notes for why the file is
    written by a second, single-path DuckDB instance."""
    cols = allowed_columns(con, table)
    select = _q(_keys(columns, cols)) if columns is not None else _q(cols)
    cond, params = where(filters, cols)
    sql = f'SELECT {select} FROM "{table}" WHERE {cond}{_order(order_by, cols)}'
    with con.cursor() as cur:
        reader = cur.sql(sql, params=params).to_arrow_reader(batch_rows)
        try:
            return copy_to(reader, path, fmt)
        except duckdb.Error as e:  # the stream failed (a dataset's file): its path becomes the dataset's name
            redact = getattr(con, "redact", None)
            if redact is None:
                raise
            raise duckdb.Error(redact(_first_line(e))) from None


# ---------------------------------------------------------------------------------------------------------------
# Sweep datasets on disk (core/distributed.py): read in place, read-only
# ---------------------------------------------------------------------------------------------------------------

MANIFEST = "_manifest.json"  # a dataset is complete when its directory holds this (core/distributed.py writes it last)
PARTITIONS = ("model", "gpu")  # its hive partition columns: one directory level each, model=…/gpu=…/*.parquet
MAX_MANIFEST_BYTES = 1 << 22  # a manifest is ~30 KB (spec, counts, one line per column)
MAX_OPEN_DATASETS = 32  # datasets registered per dataset connection; the least recently opened is forgotten first


class DatasetConnection:
    """A database that reads sweep datasets in place and can write no file. DuckDB is locked exactly as
    `connect` leaves it (external access off: no read_parquet, COPY, ATTACH or INSTALL on any path; only its private
    temp directory is writable); each dataset opened (`open_dataset`) becomes a pyarrow Dataset over its files,
    listed one by one, which pyarrow reads and DuckDB scans with projection, filter and partition pruning pushed
    down. A cursor registers the datasets its statement names (``dataset_<16 hex>`` in the SQL or its parameters)
    as views on itself: registration is per cursor in DuckDB, and per statement keeps it to the ~1 ms of the one
    dataset a query reads. Only datasets inside `roots` open; DuckDB errors come back with the datasets' paths
    replaced by their names. Same surface as a DuckDB connection for this module's functions: `cursor()` (a
    context manager), `execute`, `sql`, `close`."""

    def __init__(self, con, roots):
        self._con, self.roots = con, tuple(roots)
        self._lock = threading.Lock()  # the open datasets' table
        self._opening = threading.Lock()  # one open at a time: listing, catalog row, registration
        self._open: dict[str, tuple] = {}  # view name -> (pyarrow dataset, resolved directory, name), oldest first

    # --- the DuckDB surface ------------------------------------------------------------------------------------
    def cursor(self) -> "_DatasetCursor":
        return _DatasetCursor(self._con.cursor(), self)

    def execute(self, query: str, params=None) -> "_DatasetCursor":
        return self.cursor().execute(query, params)

    def sql(self, query: str, params=None):
        return self.cursor().sql(query, params=params)

    def close(self) -> None:
        self._con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- datasets ------------------------------------------------------------------------------------------------
    def dataset(self, name: str):
        """The pyarrow Dataset behind view `name`, or None."""
        with self._lock:
            entry = self._open.get(name)
        return entry[0] if entry is not None else None

    def redact(self, text: str) -> str:
        """`text` with every open dataset's directory replaced by its name and the roots by a phrase: DuckDB and
        pyarrow name the file they failed on, and a visitor must never see a server path."""
        with self._lock:
            pairs = [(str(real), label) for _, real, label in self._open.values()]
        pairs += [(str(r), "the dataset directory") for r in self.roots]
        for path, label in sorted(pairs, key=lambda pl: -len(pl[0])):
            text = text.replace(path, label)
        return text

    def open(self, path: str | Path) -> str:
        """Register the complete dataset at `path` (inside one of `roots`) and catalogue it; returns its view's name.
        See `open_dataset`."""
        p = Path(path)
        label = p.name or "dataset"  # what every message says: the dataset's name, never where it is
        try:
            real = p.resolve(strict=True)
        except (OSError, RuntimeError):  # missing, a loop of links, a name too long
            raise ValueError(f"dataset: {label}: not found") from None
        if not any(real == r or real.is_relative_to(r) for r in self.roots):
            raise ValueError(f"dataset: {label}: refused: it leads outside the dataset directory (a symbolic link)")
        raw = _manifest_bytes(real, label)
        name = DATASET_PREFIX + hashlib.sha256(os.fsencode(str(real)) + b"\0" + raw).hexdigest()[:16]
        with self._opening:
            with self._lock:
                if name in self._open:
                    self._open[name] = self._open.pop(name)  # most recently opened last
                    return name
            info = _manifest_info(raw, label)
            dset = _arrow_dataset(real, label)
            with self._con.cursor() as cur:
                try:
                    cur.execute("BEGIN TRANSACTION")
                    cur.execute(f"DELETE FROM {CATALOG} WHERE id = ?", [name])
                    cur.execute(f"INSERT INTO {CATALOG} VALUES (?, ?, ?, now()::TIMESTAMP, ?, ?, ?, ?)",
                                [name, info["spec"], info["code_version"], info["written"], info["valid"],
                                 info["fits"], info["seconds"]])
                    cur.execute("COMMIT")
                except duckdb.Error as e:
                    cur.execute("ROLLBACK")
                    raise ValueError(f"dataset: {label}: cannot be catalogued: {_first_line(e)}") from None
            with self._lock:
                self._open[name] = (dset, real, label)
                forget = list(self._open)[:-MAX_OPEN_DATASETS]
                for old in forget:
                    del self._open[old]
            if forget:
                with self._con.cursor() as cur:
                    cur.execute(f"DELETE FROM {CATALOG} WHERE id IN ({', '.join('?' * len(forget))})", forget)
        return name


class _DatasetCursor:
    """A DuckDB cursor of a `DatasetConnection`: registers the datasets a statement names before running it, and
    re-raises DuckDB's errors with the datasets' paths replaced by their names (`DatasetConnection.redact`)."""

    def __init__(self, cur, owner: DatasetConnection):
        self._cur, self._owner, self._seen = cur, owner, set()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._cur.close()

    def close(self) -> None:
        self._cur.close()

    def _prepare(self, query: str, params) -> None:
        names = set(_DATASET_RE.findall(query))
        for x in params or ():
            if isinstance(x, str):
                names.update(_DATASET_RE.findall(x))
        for name in sorted(names - self._seen):
            dset = self._owner.dataset(name)
            if dset is not None:
                self._cur.register(name, dset)
            self._seen.add(name)

    @contextlib.contextmanager
    def _redacting(self):
        try:
            yield
        except duckdb.Error as e:
            text = self._owner.redact(str(e))
            if text == str(e):
                raise
            try:
                err = type(e)(text)
            except Exception:  # an exception type that cannot be built from a message
                err = duckdb.Error(text)
            raise err from None

    def execute(self, query: str, params=None) -> "_DatasetCursor":
        self._prepare(query, params)
        with self._redacting():
            self._cur.execute(query, params) if params else self._cur.execute(query)
        return self

    def sql(self, query: str, params=None):
        self._prepare(query, params)
        with self._redacting():
            return self._cur.sql(query, params=params)

    def df(self):
        with self._redacting():
            return self._cur.df()

    def fetchone(self):
        with self._redacting():
            return self._cur.fetchone()

    def fetchall(self):
        with self._redacting():
            return self._cur.fetchall()

    def __getattr__(self, attr):
        return getattr(self._cur, attr)


def _manifest_bytes(real: Path, label: str) -> bytes:
    path = real / MANIFEST
    if not real.is_dir() or not path.is_file():
        raise ValueError(f"dataset: {label}: not a complete sweep dataset (no {MANIFEST})")
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_MANIFEST_BYTES + 1)
    except OSError as e:
        raise ValueError(f"dataset: {label}: its manifest cannot be read ({e.strerror or type(e).__name__})") from None
    if len(raw) > MAX_MANIFEST_BYTES:
        raise ValueError(f"dataset: {label}: its manifest is larger than {MAX_MANIFEST_BYTES >> 20} MiB")
    return raw


def _manifest_info(raw: bytes, label: str) -> dict:
    """What the catalog records of a dataset, from its manifest (its spec and counts; its `table` is ignored: a
    dataset's view is named by its path)."""
    try:
        m = safejson.loads(raw, "manifest")
    except ValueError as e:
        raise ValueError(f"dataset: {label}: unreadable manifest ({str(e).partition(': ')[2]})") from None

    def count(key):
        v = m.get(key, 0)
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2 ** 63:
            raise ValueError(f"dataset: {label}: unreadable manifest ({key} is not a count)")
        return v

    if not isinstance(m, dict) or not isinstance(m.get("spec"), dict):
        raise ValueError(f"dataset: {label}: unreadable manifest (no spec)")
    seconds = m.get("seconds", 0.0)
    return {"spec": json.dumps(m["spec"], sort_keys=True, separators=(",", ":")),
            "code_version": str(m.get("code_version", ""))[:100], "written": count("written"),
            "valid": count("valid"), "fits": count("fits"),
            "seconds": float(seconds) if isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
            and math.isfinite(seconds) else 0.0}


def _hidden(p: Path) -> bool:
    return p.name.startswith((".", "_"))  # staging, temporary and metadata files: pyarrow's own rule


def _dataset_files(real: Path, label: str) -> list[str]:
    """Every Parquet file of the dataset at `real`, listed level by level (``model=…/gpu=…/*.parquet``; hidden
    entries skipped): its own name is never a glob pattern, so ``all*`` reads its own files and no ``allbig``'s. A
    symbolic link inside is refused (it could lead to another dataset's or any file)."""
    levels = [[real]]
    for col in PARTITIONS:
        nxt = []
        for d in levels[-1]:
            for p in sorted(d.iterdir()):
                if _hidden(p) or not p.name.startswith(col + "="):
                    continue
                if p.is_symlink() or not p.is_dir():
                    raise ValueError(f"dataset: {label}: refused: a partition is a symbolic link or no folder")
                nxt.append(p)
        levels.append(nxt)
    files = []
    for d in levels[-1]:
        for p in sorted(d.iterdir()):
            if _hidden(p) or p.suffix != ".parquet":
                continue
            if p.is_symlink() or not p.is_file():
                raise ValueError(f"dataset: {label}: refused: a data file is a symbolic link or no file")
            files.append(str(p))
    if not files:
        raise ValueError(f"dataset: {label}: holds no Parquet files")
    return files


SCAN_BATCH_ROWS = 32_768  # rows per batch pyarrow hands DuckDB (its default: 131,072)


@functools.lru_cache(maxsize=1)
def _lean_dataset_class():
    """A pyarrow FileSystemDataset whose scans read ahead little: DuckDB asks a Dataset for `scanner(columns=,
    filter=)`, and with pyarrow's defaults (131,072-row batches, 16 batches and 4 files ahead) the Sweeps page's
    widest query (every column of a 10M-row dataset, top 200; 400 MB DuckDB limit, 2 cores) peaked at ~830 MB
    resident in 3.7 s, against ~630 MB in 1.5-2.2 s with these. DuckDB's own Parquet reader took ~200 MB and 1-1.4 s
    for it, but DuckDB cannot be let read a directory without being let write there."""
    import pyarrow.dataset as pds

    class LeanDataset(pds.FileSystemDataset):
        def scanner(self, *args, **kw):
            kw.setdefault("batch_size", SCAN_BATCH_ROWS)
            kw.setdefault("batch_readahead", 2)
            kw.setdefault("fragment_readahead", 1)
            return super().scanner(*args, **kw)

    return LeanDataset


def _arrow_dataset(real: Path, label: str):
    """A pyarrow Dataset over the dataset's listed files, `PARTITIONS` as string columns from the directory names."""
    import pyarrow as pa
    import pyarrow.dataset as pds
    try:
        files = _dataset_files(real, label)
    except OSError as e:
        raise ValueError(f"dataset: {label}: cannot be listed ({e.strerror or type(e).__name__})") from None
    part = pds.partitioning(pa.schema([(c, pa.string()) for c in PARTITIONS]), flavor="hive")
    try:
        found = pds.dataset(files, format="parquet", partitioning=part, partition_base_dir=str(real))
        dset = _lean_dataset_class()(list(found.get_fragments()), found.schema, found.format, found.filesystem)
    except (pa.ArrowException, OSError, ValueError) as e:
        raise ValueError(f"dataset: {label}: cannot be read as Parquet ({type(e).__name__})") from None
    names = dset.schema.names
    if len(set(names)) != len(names):
        raise ValueError(f"dataset: {label}: refused: a column is named twice (a file has a partition column)")
    return dset


def open_dataset(con: DatasetConnection, path: str | Path) -> str:
    """Register a complete sweep dataset (a directory with `_manifest.json`, hive-partitioned Parquet) on a
    dataset connection (`connect(allowed_directories=…)`, which it must lie inside) as the view
    ``dataset_<16 hex>`` and catalogue it, so every query here (fit region, min GPUs, max sequence, Pareto, filters,
    export) runs on it in place; filters on `model` and `gpu` prune partitions. The name hashes the dataset's
    resolved path (a symbolic link followed: one generation of a dataset, `core.distributed`) and its manifest, so a
    rerun that swapped a new generation in gets a new name, and no cache keyed by the name serves the old rows;
    the manifest's own `table` is never used. The files are listed now: a reader keeps the generation it opened
    even after a new one is swapped in. Returns the view's name; ValueError ("dataset: <name>: …") otherwise."""
    if not isinstance(con, DatasetConnection):
        raise ValueError("dataset: open it on a dataset connection: connect(allowed_directories=(its folder,))")
    return con.open(path)


def list_datasets(root: str | Path) -> list[str]:
    """Names of the complete datasets (a directory, or a link to one inside `root`, with a manifest) directly
    under `root`, sorted; hidden entries (a run's staging directory, ``.<name>.run-…``) are not datasets."""
    r = Path(root)
    if not r.is_dir():
        return []
    top = r.resolve()
    names = []
    for p in r.iterdir():
        if _hidden(p):
            continue
        try:
            real = p.resolve(strict=True)
            if real != top and real.is_relative_to(top) and real.is_dir() and (real / MANIFEST).is_file():
                names.append(p.name)
        except (OSError, RuntimeError):  # a broken link, a loop
            continue
    return sorted(names)
