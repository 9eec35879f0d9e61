"""The sweep engine: a `SweepSpec` (core/spec.py) resolved into grid axes, evaluated chunk by chunk by the core's
one grid path (`core.grid`: the same vectorised `evaluate` as a single estimate), landed in DuckDB via Arrow.

Axes. Every input is one axis (`core.grid`); the model axis is model / n_params × architecture fields →
`build_model`, the accelerator axis gpu × compute_dtype × peak/memory/bandwidth overrides → `build_gpu`; the recipe
and overhead presets are lookups along their own axes, and explicit inputs win over them exactly as in
`config_from_inputs`; `tokens_per_second` from `step_time_s` and `global_batch` is broadcast arithmetic. Axes are
ordered by size, the largest innermost, and the grid is cut into chunks of at most `chunk_rows` rows along the
outer axes, so memory is bounded whatever the grid size; no Python loop runs per row.

Rows. A row is valid exactly when `config_from_inputs` accepts the same inputs. Invalid combinations are kept with
``valid = false`` and `reason` (the input rules' text, or the model/accelerator builder's message, e.g. "d_model:
1000 is not divisible by n_heads=32"), and every number of the record NULL; `binding` and `worst_stage` are NULL
too. NaN numbers of valid rows (no catalog price, no measured throughput) are NULL as well.

Output columns: the input columns — model and gpu (the spec's names, as dictionary strings), the key inputs
(`spec.KEY_INPUTS`, always, so the database queries can rely on them), and every other input named in the spec,
in schema order — then the record columns (`core.record.RECORD`, declared, in order). Types: integers int32,
numbers float64, flags bool, names dictionary<int16, string> (`core.columnar`). Row order follows the axis order
and is not part of the contract.

Streaming. `Sweep.batches` yields one Arrow record batch per chunk; a helper thread evaluates the next chunk while
the consumer writes the current one (NumPy and DuckDB release the GIL, so the two overlap on two cores), and
`progress(rows_done, rows_total)` runs on the consumer's thread. `Sweep.reader` wraps them as an Arrow stream,
which `run_sweep` materialises in one ``CREATE TABLE … AS SELECT`` (through `core.db`, the one DuckDB owner) and
`export_sweep` hands to DuckDB's COPY; both run DuckDB on a worker thread and relay progress to the caller's thread.
"""
from __future__ import annotations

import hashlib
import math
import queue
import threading
import time
from functools import lru_cache
from itertools import product
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pyarrow as pa

from . import columnar as A
from . import grid as G
from . import inputs as I
from . import record as R
from .estimate import build_gpu, build_model, evaluate
from .model import ARCH_FIELDS
from . import db
from .spec import INPUTS, KEY_INPUTS, MAX_ROWS, Range, SweepSpec, _is_num, check_rows  # noqa: F401  (re-exports)

CHUNK_ROWS = 1 << 17  # rows evaluated at once: ~100 MB of record columns, the sweet spot measured on 2 cores
DEFAULT_GPU = I.BY_NAME["gpu"].default


def record_columns() -> tuple:
    """The record column names, in `evaluate`'s order (declared in core/record.py)."""
    return R.NAMES


def _model_label(entry) -> str:
    if isinstance(entry, str):
        return entry
    return build_model(n_params=entry).name if entry is not None else "custom"


def _model_axis(spec: SweepSpec, reasons: G.Reasons) -> G.Axis:
    bases = list(spec.values("model")) + list(spec.values("n_params"))
    if not bases:
        bases = [None]
    arch_names = [k for k in ARCH_FIELDS if k in spec.names]
    combos = list(product(bases, *(spec.values(k) for k in arch_names)))
    models = []
    for base, *arch in combos:
        try:
            models.append(build_model(model=base if isinstance(base, str) else None,
                                      n_params=base if _is_num(base) else None, **dict(zip(arch_names, arch))))
        except ValueError as e:
            models.append(e)
    names = {b: _model_label(b) for b in bases}
    out = {k: G.out_values(k, [c[1 + j] for c in combos]) for j, k in enumerate(arch_names)}
    return G.model_axis(models, [names[c[0]] for c in combos], reasons, out)


def _gpu_axis(spec: SweepSpec, reasons: G.Reasons) -> G.Axis:
    names = ["gpu", "compute_dtype"] + [k for k in I.GPU_FIELDS if k in spec.names]
    lists = [spec.values("gpu") or (DEFAULT_GPU,),
             spec.values("compute_dtype") or (I.BY_NAME["compute_dtype"].default,)]
    lists += [spec.values(k) for k in names[2:]]
    combos = list(product(*lists))
    gpus = []
    for gpu, dtype, *over in combos:
        try:
            gpus.append(build_gpu(gpu, **dict(zip(names[2:], over)), compute_dtype=dtype))
        except ValueError as e:
            gpus.append(e)
    out = {k: G.out_values(k, [c[1 + j] for c in combos]) for j, k in enumerate(names[1:])
           if k in spec.names and k not in ("peak_flops_per_s", "gpu_memory_bytes")}  # those two are record columns
    ax = G.gpu_axis(gpus, [c[0] for c in combos], [c[1] for c in combos], reasons,
                    price_given="price_per_gpu_hour" in spec.names, out_cols=out)
    ax.eval_cols["compute_dtype"] = np.array([c[1] for c in combos])
    return ax


def _defaults() -> dict:
    """The schema's defaults as `evaluate` inputs (optional inputs that default to None are left out)."""
    d = {n: I.BY_NAME[n].default for n in I.CONFIG_FIELDS if I.BY_NAME[n].default is not None}
    d["tokens_per_second"] = np.nan
    return d


def _axes(spec: SweepSpec, reasons: G.Reasons) -> list[G.Axis]:
    axes = [_model_axis(spec, reasons), _gpu_axis(spec, reasons)]
    done = set(I.MODEL_INPUTS) | set(I.GPU_INPUTS) | {"compute_dtype"} | set(I.PRESET_INPUTS)
    for name in I.PRESET_INPUTS:
        if name in spec.names:
            axes.append(G.lookup_axis(name, spec.values(name), set(spec.names)))
    defaults = _defaults()
    for name in INPUTS:
        if name in done:
            continue
        if name in spec.names:
            axes.append(G.plain_axis(name, spec.values(name)))
        elif name in KEY_INPUTS:
            axes.append(G.plain_axis(name, (defaults[name],)))
    return axes


class Sweep:
    """A spec resolved into axes, ready to evaluate chunk by chunk. Counts (`rows`, `valid`, `fits`) grow as
    batches are produced."""

    def __init__(self, spec: SweepSpec, chunk_rows: int = CHUNK_ROWS, max_rows: int = MAX_ROWS):
        check_rows(spec, max_rows)
        if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
            raise ValueError(f"chunk_rows: must be a positive integer, got {chunk_rows!r}")
        self.spec, self.chunk_rows = spec, chunk_rows
        self._reasons = G.Reasons()
        axes = _axes(spec, self._reasons)
        self.axes = sorted(axes, key=lambda a: a.size)  # largest innermost: long inner loops in NumPy
        self.n_rows = math.prod(a.size for a in self.axes)
        self.reasons = self._reasons.texts
        in_names = [n for ax in axes for n in ax.out_cols]
        self.input_names = sorted(in_names, key=INPUTS.index)
        self.schema = pa.schema([A.input_field(n) for n in self.input_names]
                                + [A.record_field(n) for n in R.NAMES if n not in self.input_names])
        self._dicts = {"reason": A.strings(self.reasons),
                       **{c.name: A.strings(c.labels) for c in R.RECORD if c.kind == "label"}}
        self.rows = self.valid = self.fits = 0
        self._defaults = _defaults()

    def batch(self, sl: list[slice]) -> pa.RecordBatch:
        cols, shape, parts, bad = G.box(self._defaults, self.axes, sl)
        with np.errstate(all="ignore"):
            out = evaluate(**cols)
        extra = {"parts": parts, "bad": bad}
        rows = math.prod(shape)
        valid = G.flat(out["valid"], shape)
        bad = extra["bad"]
        if bad is not None:
            bad = G.flat(bad, shape)
            valid = valid & (bad == 0)
        arrays = []
        for name in self.input_names:
            v = extra["parts"][name]
            if isinstance(v, tuple):
                arrays.append(A.dictionary(G.flat(v[0], shape), A.strings(v[1])))
            else:
                flat = G.flat(v, shape)
                arrays.append(A.bools(flat) if flat.dtype == bool else A.arr(flat, self.schema.field(name).type))
        for f in self.schema:
            name = f.name
            if name in self.input_names:
                continue
            if name == "valid":
                arrays.append(A.bools(valid))
            elif name == "fits":
                fits = G.flat(out["fits"], shape) & valid
                self.fits += int(np.count_nonzero(fits))
                arrays.append(A.bools(fits))
            elif name == "reason":
                arrays.append(A.dictionary(self._reason_codes(out, valid, bad, shape), self._dicts["reason"]))
            elif name == "binding":
                arrays.append(A.dictionary(_binding_codes(out, shape), self._dicts[name], valid))
            elif name == "worst_stage":
                last = G.flat(np.asarray(out["worst_stage"]) == "last", shape)
                arrays.append(A.dictionary(last.astype(np.int16), self._dicts[name], valid))
            elif R.BY_NAME[name].kind == "int":
                arrays.append(A.arr(G.flat(out[name], shape).astype(np.int32), pa.int32(), valid))
            else:
                v = np.ascontiguousarray(G.flat(out[name], shape), dtype=np.float64)
                ok = ~np.isnan(v)  # invalid rows are NaN already (evaluate); builder refusals are not
                arrays.append(A.arr(v, pa.float64(), ok & valid if bad is not None else ok))
        self.rows += rows
        self.valid += int(np.count_nonzero(valid))
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        if self.spec.drop_invalid and not valid.all():
            batch = batch.filter(A.bools(valid))
        return batch

    def _reason_codes(self, out, valid, bad, shape) -> np.ndarray:
        if valid.all():
            return np.zeros(valid.size, dtype=np.int16)
        code = G.flat(out["reason_code"], shape).astype(np.int16)
        if bad is not None:
            code = np.where(bad > 0, bad, code).astype(np.int16)
        return code

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        for sl in G.chunks([a.size for a in self.axes], self.chunk_rows):
            yield self.batch(sl)

    def batches(self, progress: Callable[[int, int], None] | None = None, prefetch: int = 1
                ) -> Iterator[pa.RecordBatch]:
        """The whole grid as record batches; `progress(rows_done, rows_total)` after each batch, on the thread
        that consumes them.

        With `prefetch` > 0 a helper thread evaluates up to that many chunks ahead while the consumer (a DuckDB
        insert, a COPY) works, so evaluation and writing overlap on two cores (NumPy and DuckDB release the GIL;
        one chunk ahead measured best on 2 cores).
        An error in the helper is raised in the consumer; a consumer that stops early stops the helper."""
        if prefetch <= 0:
            for b in self:
                if progress is not None:
                    progress(self.rows, self.n_rows)
                yield b
            return
        q: queue.Queue = queue.Queue(maxsize=prefetch)
        stop = threading.Event()

        def put(item) -> bool:
            while not stop.is_set():
                try:
                    q.put(item, timeout=0.05)
                    return True
                except queue.Full:
                    continue
            return False

        def produce():
            try:
                for b in self:
                    if not put(("batch", b, self.rows)):
                        return
                put(("end", None, self.rows))
            except BaseException as e:  # handed to the consumer, raised there
                put(("error", e, self.rows))

        helper = threading.Thread(target=produce, name="sweep-evaluate", daemon=True)
        helper.start()
        try:
            while True:
                kind, item, done = q.get()
                if kind == "end":
                    return
                if kind == "error":
                    raise item
                if progress is not None:
                    progress(done, self.n_rows)
                yield item
        finally:
            stop.set()
            helper.join()

    def reader(self, progress: Callable[[int, int], None] | None = None, prefetch: int = 1
               ) -> pa.RecordBatchReader:
        """`batches` as an Arrow stream (for DuckDB's COPY; `progress` then runs on DuckDB's thread)."""
        return pa.RecordBatchReader.from_batches(self.schema, self.batches(progress, prefetch))


def _binding_codes(out: dict, shape) -> np.ndarray:
    """Index into BINDING of the largest term, as `evaluate` chooses it (first of equal maxima)."""
    terms = [G.flat(out[k], shape) for k in ("state_bytes", "activations_bytes", "logits_bytes", "overhead_bytes")]
    code = np.zeros(terms[0].size, dtype=np.int16)
    best = terms[0]
    for i, t in enumerate(terms[1:], 1):
        gt = t > best
        code[gt] = i
        best = np.where(gt, t, best)
    return code


# ---------------------------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------------------------

def iter_batches(spec: SweepSpec, chunk_rows: int = CHUNK_ROWS, max_rows: int = MAX_ROWS) -> Iterator[pa.RecordBatch]:
    """The grid as Arrow record batches of at most `chunk_rows` rows (the cap is checked first)."""
    return iter(Sweep(spec, chunk_rows, max_rows))


def to_table(spec: SweepSpec, chunk_rows: int = CHUNK_ROWS, max_rows: int = MAX_ROWS) -> pa.Table:
    """The whole grid as one Arrow table (small grids: tests, previews)."""
    sw = Sweep(spec, chunk_rows, max_rows)
    return pa.Table.from_batches(list(sw), schema=sw.schema)


def code_version() -> str:
    """A hash of the core's source and data files: results change only when this does."""
    return _code_version()


@lru_cache(maxsize=1)
def _code_version() -> str:
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for p in sorted(root.glob("*.py")) + sorted((root.parent / "data").glob("*.csv")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return "core-" + h.hexdigest()[:12]


class _Cancelled(Exception):
    pass


def _write(sw: Sweep, write: Callable, progress: Callable[[int, int], None] | None):
    """Run `write(reader)` (DuckDB consuming the sweep's stream on its own threads) on a worker thread while this
    thread relays progress, so `progress` is always called on the caller's thread (a Streamlit script's, say).
    An error in the worker is raised here; an error in `progress` (or an interrupt) cancels the write first."""
    events: queue.Queue = queue.Queue()
    cancel = threading.Event()
    result: dict = {}

    def relay(done, total):
        if cancel.is_set():
            raise _Cancelled("cancelled")
        events.put((done, total))

    def work():
        try:
            result["value"] = write(sw.reader(relay))
        except BaseException as e:  # raised on the caller's thread below
            result["error"] = e
        finally:
            events.put(None)

    worker = threading.Thread(target=work, name="sweep-write", daemon=True)
    worker.start()
    try:
        while (ev := events.get()) is not None:
            if progress is not None:
                progress(*ev)
    except BaseException:
        cancel.set()
        while events.get() is not None:  # let the write fail and clean up before the caller goes on
            pass
        worker.join()
        raise
    worker.join()
    if "error" in result:
        raise result["error"]
    return result.get("value")


def run_sweep(spec: SweepSpec, con, progress: Callable[[int, int], None] | None = None,
              drop_invalid: bool | None = None, chunk_rows: int = CHUNK_ROWS, max_rows: int = MAX_ROWS,
              replace: bool = False) -> str:
    """Evaluate `spec` into a table of the DuckDB connection `con` (from `core.db.connect`) and record it in the
    catalog; returns the table name. A table already there for the same spec and code version is reused unless
    `replace`. `drop_invalid` overrides the spec's (and so the table name). `progress(rows_done, rows_total)` is
    called on the caller's thread after each chunk."""
    if drop_invalid is not None:
        spec = spec.replace(drop_invalid=drop_invalid)
    sw = Sweep(spec, chunk_rows, max_rows)
    name = spec.table_name
    if not replace and db.has_sweep(con, name, code_version()):
        return name
    t0 = time.perf_counter()
    _write(sw, lambda reader: db.write_sweep(
        con, name, reader, spec_json=spec.to_json(), code_version=code_version(),
        stats=lambda: {"n_rows": sw.rows if not spec.drop_invalid else sw.valid, "n_valid": sw.valid,
                       "n_fit": sw.fits, "seconds": time.perf_counter() - t0}), progress)
    return name


def export_sweep(spec: SweepSpec, path: str | Path, fmt: str | None = None,
                 progress: Callable[[int, int], None] | None = None, chunk_rows: int = CHUNK_ROWS,
                 max_rows: int = MAX_ROWS) -> dict:
    """Evaluate `spec` straight into a CSV or Parquet file, streamed through DuckDB's COPY (memory stays bounded);
    returns the counts: rows (in the grid), written, valid, fits, seconds. `progress` as in `run_sweep`."""
    sw = Sweep(spec, chunk_rows, max_rows)
    t0 = time.perf_counter()
    written = _write(sw, lambda reader: db.copy_to(reader, path, fmt), progress)
    return {"rows": sw.rows, "written": written, "valid": sw.valid, "fits": sw.fits,
            "seconds": time.perf_counter() - t0}
