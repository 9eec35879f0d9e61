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

import dataclasses
import hashlib
import math
import queue
import threading
import time
from functools import lru_cache
from itertools import product
from pathlib import Path
from typing import Callable, Iterator

import duckdb
import numpy as np
import pyarrow as pa

from . import columnar as A
from . import grid as G
from . import inputs as I
from . import record as R
from .estimate import build_gpu, build_model, evaluate, model_columns, tiered_price
from .model import ARCH_FIELDS, Model, param_breakdown, raw_labels
from . import db
from . import profiles as PF
from .spec import CHUNK_ROWS, INPUTS, KEY_INPUTS, MAX_ROWS, Range, SweepSpec, _is_num, check_rows  # noqa: F401  (re-exports)

MAX_CHUNK_ROWS = 1 << 21  # ~1.6 GB of record columns at once: beyond it a chunk is a memory risk, not a speed-up
DEFAULT_GPU = I.BY_NAME["gpu"].default


def record_columns() -> tuple:
    """The record column names, in `evaluate`'s order (declared in core/record.py)."""
    return R.NAMES


# Model.__post_init__ and build_model's checks over arrays, in their order (the first failing one wins): the
# check, the fields its message names, the exact message (as the builders word it) and a generic one, used when
# a grid would otherwise carry more than MAX_BUILDER_REASONS distinct messages (tests/test_hardening_sweep.py
# holds these equal to the builders, message for message)
_INT_FIELDS = ("n_layers", "d_model", "n_heads", "n_kv_heads", "d_ff", "vocab_size", "n_experts", "top_k")
MAX_BUILDER_REASONS = 1_000  # distinct builder messages kept as reasons (the reason column's labels are int16)


class _Reasons(G.Reasons):
    """Reasons whose builder messages stop at MAX_BUILDER_REASONS distinct texts (codes are int16): a message
    beyond them is kept as its field and "refused by the builder" (the GPU axis' overrides; the model axis folds
    its own messages to generic ones first)."""

    def code(self, msg: str) -> int:
        if msg not in self.extra and len(self.extra) >= MAX_BUILDER_REASONS:
            msg = f"{msg.partition(':')[0][:60]}: refused by the builder (one of many such messages)"
        return super().code(msg)


def _model_checks(given_ints: list) -> list:
    """(test(cols) -> broken rows, fields of the message, exact(values) -> text, generic text), in build order."""
    checks = []
    for k in given_ints:  # build_model: the given integer fields
        lo = 0 if k == "max_position" else 1
        checks.append((lambda c, k=k, lo=lo: c[k] < lo, (k,), lambda v, k=k, lo=lo: f"{k}: must be an integer ≥ "
                       f"{lo}, got {v[0]}", f"{k}: must be an integer ≥ {lo}"))
    for k in _INT_FIELDS:  # Model.__post_init__ (a derived d_ff = 4·d_model can pass 2^31 − 1)
        checks.append((lambda c, k=k: (c[k] < 1) | (c[k] > 2**31 - 1), (k,),
                       lambda v, k=k: f"{k}: must be an integer from 1 to {2**31 - 1:,}, got {v[0]}",
                       f"{k}: must be an integer from 1 to {2**31 - 1:,}"))
    checks += [
        (lambda c: c["max_position"] < 0, ("max_position",),
         lambda v: f"max_position: must be an integer from 0 to {2**31 - 1:,}, got {v[0]}",
         f"max_position: must be an integer from 0 to {2**31 - 1:,}"),
        (lambda c: c["d_model"] % c["n_heads"] != 0, ("d_model", "n_heads"),
         lambda v: f"d_model: {v[0]} is not divisible by n_heads={v[1]}", "d_model: not divisible by n_heads"),
        (lambda c: (c["n_kv_heads"] > c["n_heads"]) | (c["n_heads"] % c["n_kv_heads"] != 0), ("n_kv_heads", "n_heads"),
         lambda v: f"n_kv_heads: {v[0]} must divide n_heads={v[1]}", "n_kv_heads: must divide n_heads"),
        (lambda c: c["top_k"] > c["n_experts"], ("top_k", "n_experts"),
         lambda v: f"top_k: {v[0]} exceeds n_experts={v[1]}", "top_k: exceeds n_experts"),
    ]
    return checks


def _model_axis(spec: SweepSpec, reasons: G.Reasons) -> G.Axis:
    """The model axis, vectorised: every combination of the model entries (presets, raw counts) and the spec's
    architecture fields, as `build_model` would build it — a preset's or raw shape's fields overridden by the
    given ones, n_kv_heads following n_heads and d_ff following 4·d_model where the base did (`with_overrides`),
    the builders' checks over arrays with their messages, n_params by the one vectorised `param_breakdown`. The
    fields broadcast over the combinations' grid (base × each given field), so only the sums reach full size and
    a model axis of a million combinations costs what any axis does (a build per combination: 10k a second)."""
    bases = list(spec.values("model")) + list(spec.values("n_params")) or [None]
    arch_names = [k for k in ARCH_FIELDS if k in spec.names]
    lists = [spec.values(k) for k in arch_names]
    # a dimension of the combinations' grid per field with several values; one-valued fields broadcast (NumPy holds
    # at most 32 dimensions, and an architecture described field by field names all 32 fields)
    multi = [k for k, v in zip(arch_names, lists) if len(v) > 1]
    dim_of = {k: 1 + j for j, k in enumerate(multi)}
    shape = (len(bases), *(len(lists[arch_names.index(k)]) for k in multi))
    base_models = [None if b is None else build_model(model=b) if isinstance(b, str) else build_model(n_params=b)
                   for b in bases]
    defaults = {f.name: f.default for f in dataclasses.fields(Model)}

    def along(values, dim: int | None) -> np.ndarray:  # values along one dimension of the grid (None: one value)
        a = np.asarray(values)
        return a.reshape([-1 if d == dim else 1 for d in range(len(shape))])

    def per_base(fn) -> np.ndarray:
        return along([fn(m) for m in base_models], 0)

    cols = {f: along(lists[arch_names.index(f)], dim_of.get(f)) if f in arch_names
            else per_base(lambda m, f=f: defaults[f] if m is None else getattr(m, f)) for f in ARCH_FIELDS}
    # derived fields follow their base field where the base's did (Model: 0 means "follow"; with_overrides: keep
    # multi-head attention multi-head, and a 4h MLP 4h): then they are n_heads and 4·d_model, given or the base's
    if "n_kv_heads" not in arch_names:
        cols["n_kv_heads"] = np.where(per_base(lambda m: m is None or m.n_kv_heads == m.n_heads), cols["n_heads"],
                                      cols["n_kv_heads"])
    if "d_ff" not in arch_names:
        cols["d_ff"] = np.where(per_base(lambda m: m is None or m.d_ff == 4 * m.d_model),
                                4 * cols["d_model"].astype(np.int64), cols["d_ff"])
    for f in _INT_FIELDS + ("max_position",):
        cols[f] = cols[f].astype(np.int64)
    with np.errstate(all="ignore"):  # refused shapes (a zero divisor) give NaN here; their rows are replaced
        parts = param_breakdown(**cols)
    raw = per_base(lambda m: m is not None and bool(m.n_params_override))
    override = per_base(lambda m: 0.0 if m is None else float(m.n_params_override))
    cols["n_params"] = np.where(raw, override, parts["total"]).astype(np.float64)
    cols["n_active_params"] = np.where(raw, override, parts["active"]).astype(np.float64)
    bad = _model_refusals(cols, arch_names, shape, reasons)
    eval_cols = {k: G.flat(v, shape) for k, v in cols.items()}
    if bad.any():  # refused rows take the first good row's columns (placeholders; the rows are flagged invalid)
        first = int(np.argmin(bad)) if (bad == 0).any() else None
        for k, v in eval_cols.items():
            fill = v[first] if first is not None else model_columns(Model(n_layers=1, d_model=1, n_heads=1))[k]
            eval_cols[k] = np.where(bad == 0, v, fill)
    raw_names = iter(raw_labels([x for x in bases if _is_num(x)]))
    names = [x if isinstance(x, str) else next(raw_names) if x is not None else "custom" for x in bases]
    labels = list(dict.fromkeys(names))
    out = {"model": (G.flat(along([labels.index(x) for x in names], 0).astype(np.int16), shape), labels)}
    for j, k in enumerate(arch_names):
        v = G.out_values(k, lists[j])
        out[k] = ((G.flat(along(v[0], dim_of.get(k)), shape), v[1]) if isinstance(v, tuple)
                  else G.flat(along(v, dim_of.get(k)), shape))
    return G.Axis("model", math.prod(shape), eval_cols, out, bad if bad.any() else None)


def _model_refusals(cols: dict, arch_names: list, shape: tuple, reasons: G.Reasons) -> np.ndarray:
    """Reason code per combination, flat (0: the builders accept it): the first failing check's exact message, or
    its generic one when the exact messages would be more than MAX_BUILDER_REASONS."""
    given_ints = [k for k in arch_names if k in _INT_FIELDS + ("max_position",)]
    checks = _model_checks(given_ints)
    which = np.zeros(shape, dtype=np.int16)
    with np.errstate(all="ignore"):  # a zero divisor is refused by an earlier check, which wins
        for i in range(len(checks) - 1, -1, -1):  # last to first: the first failing check wins
            which = np.where(checks[i][0](cols), np.int16(i + 1), which)
    which = G.flat(which, shape)
    bad = np.zeros(which.size, dtype=np.int16)
    if not which.any():
        return bad
    groups = []
    for i in np.unique(which[which > 0]):
        rows = np.nonzero(which == i)[0]
        _test, fields, exact, generic = checks[i - 1]
        vals = np.stack([G.flat(cols[f], shape)[rows] for f in fields], axis=1)
        vals, inverse = np.unique(vals, axis=0, return_inverse=True)
        groups.append((rows, vals, inverse.reshape(-1), exact, generic))
    distinct = sum(len(g[1]) for g in groups)
    for rows, vals, inverse, exact, generic in groups:
        if distinct <= MAX_BUILDER_REASONS:
            codes = np.array([reasons.code(exact([int(x) for x in v])) for v in vals], dtype=np.int16)
            bad[rows] = codes[inverse]
        else:
            bad[rows] = reasons.code(generic)
    return bad


def _gpu_axis(spec: SweepSpec, reasons: G.Reasons) -> G.Axis:
    names = ["gpu", "compute_dtype"] + [k for k in I.GPU_FIELDS if k in spec.names]
    lists = [spec.values("gpu") or (DEFAULT_GPU,),
             spec.values("compute_dtype") or (I.BY_NAME["compute_dtype"].default,)]
    lists += [spec.values(k) for k in names[2:]]
    combos = list(product(*lists))
    # a price tier (reserved, spot: data/prices.csv) sets each catalog accelerator's price (estimate.tiered_price, as for
    # one estimate); a sweep takes one tier (several would cross the accelerator axis)
    tiers = spec.values("price_tier") or (I.BY_NAME["price_tier"].default,)
    if len(tiers) > 1 and "price_per_gpu_hour" not in spec.names:
        raise ValueError("price_tier: a sweep takes one tier (or sweep price_per_gpu_hour instead)")
    tier = tiers[0]
    gpus, prices = [], []
    for gpu, dtype, *over in combos:
        try:
            g = build_gpu(gpu, **dict(zip(names[2:], over)), compute_dtype=dtype)
            price = None if "price_per_gpu_hour" in spec.names else tiered_price(gpu, tier)
            gpus.append(g)
            prices.append(price)
        except ValueError as e:
            gpus.append(e)
            prices.append(None)
    out = {k: G.out_values(k, [c[1 + j] for c in combos]) for j, k in enumerate(names[1:])
           if k in spec.names and k not in ("peak_flops_per_s", "gpu_memory_bytes")}  # those two are record columns
    ax = G.gpu_axis(gpus, [c[0] for c in combos], [c[1] for c in combos], reasons,
                    price_given="price_per_gpu_hour" in spec.names, out_cols=out,
                    given=set(spec.names) - set(I.GPU_FIELDS), prices=prices)  # GPU_FIELDS: in the accelerator
    ax.eval_cols["compute_dtype"] = np.array([c[1] for c in combos])
    return ax


def _defaults() -> dict:
    """The schema's defaults as `evaluate` inputs (optional inputs that default to None are left out)."""
    d = {n: I.BY_NAME[n].default for n in I.CONFIG_FIELDS if I.BY_NAME[n].default is not None}
    d["tokens_per_second"] = np.nan
    d["mfu_auto"] = d.get("mfu") == "auto"  # the schema's default: time from the predicted step
    if d["mfu_auto"]:
        d["mfu"] = np.nan
    return d


def _axes(spec: SweepSpec, reasons: G.Reasons) -> list[G.Axis]:
    axes = [_model_axis(spec, reasons), _gpu_axis(spec, reasons)]
    done = set(I.MODEL_INPUTS) | set(I.GPU_INPUTS) | {"compute_dtype"} | set(I.PRESET_INPUTS)
    for name in I.PRESET_INPUTS:
        if name in spec.names:
            axes.append(G.lookup_axis(name, spec.values(name), set(spec.names)))
    defaults = _defaults()
    scalars = []  # one-valued inputs: one axis of size 1 between them (NumPy broadcasts at most 32 dimensions)
    for name in INPUTS:
        if name in done:
            continue
        if name in spec.names:
            ax = G.plain_axis(name, spec.values(name))
            if name == "framework" and "zero_stage" not in spec.names:  # each framework at its own ZeRO stage
                z = G.plain_axis("zero_stage", [int(v) for v in PF.default_zero_stage(list(spec.values(name)))])
                ax = G.Axis(name, ax.size, {**ax.eval_cols, **z.eval_cols}, {**ax.out_cols, **z.out_cols})
        elif name == "zero_stage":  # not swept: the framework's own stage (Config's rule); a swept framework's axis
            if "framework" in spec.names:  # carries it (the branch above)
                continue
            ax = G.plain_axis(name, (int(PF.default_zero_stage(I.BY_NAME["framework"].default)),))
        elif name in KEY_INPUTS:
            ax = G.plain_axis(name, (defaults[name],))
        else:
            continue
        (scalars if ax.size == 1 else axes).append(ax)
    if scalars:
        axes.append(G.Axis("scalars", 1, {k: v for a in scalars for k, v in a.eval_cols.items()},
                           {k: v for a in scalars for k, v in a.out_cols.items()}))
    return axes


class Sweep:
    """A spec resolved into axes, ready to evaluate chunk by chunk. Counts (`rows`, `valid`, `fits`) grow as
    batches are produced."""

    def __init__(self, spec: SweepSpec, chunk_rows: int = CHUNK_ROWS, max_rows: int = MAX_ROWS):
        check_rows(spec, max_rows)
        if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or not 1 <= chunk_rows <= MAX_CHUNK_ROWS:
            raise ValueError(f"chunk_rows: must be an integer from 1 to {MAX_CHUNK_ROWS:,}, got {chunk_rows!r}")
        self.spec, self.chunk_rows = spec, chunk_rows
        self._reasons = _Reasons()
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
            # invalid rows become nulls below (not NaN first); label columns come as codes into their labels
            out = evaluate(**cols, _nan_invalid=False, _label_codes=True)
        extra = {"parts": parts, "bad": bad}
        rows = math.prod(shape)
        valid = G.flat(out["valid"], shape)
        bad = extra["bad"]
        if bad is not None:
            bad = G.flat(bad, shape)
            valid = valid & (bad == 0)
        arrays = []
        bits = A.bitmap(valid)  # the validity buffer the nullable columns share (unless one has NaNs of its own)
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
            elif R.BY_NAME[name].kind == "bool":  # any other flag: false where the row is invalid
                arrays.append(A.bools(G.flat(out[name], shape) & valid))
            elif R.BY_NAME[name].kind == "label":  # a fixed-label column: evaluate's codes into its declared labels
                arrays.append(A.dictionary(G.flat(out[name], shape), self._dicts[name], bits=bits))
            elif R.BY_NAME[name].kind == "int":
                arrays.append(A.arr(G.flat(out[name], shape).astype(np.int32), pa.int32(), bits=bits))
            else:
                raw = np.asarray(out[name], dtype=np.float64)
                # null: invalid, or NaN; a maximum that is a number proves the column has no NaN (one reduction,
                # no mask, over the values a broadcast column holds, not their copies)
                nan = raw.size > 0 and np.isnan(np.maximum.reduce(G.held(raw), axis=None))
                v = np.ascontiguousarray(G.flat(raw, shape))
                arrays.append(A.arr(v, pa.float64(), ~np.isnan(v) & valid) if nan else A.arr(v, pa.float64(), bits=bits))
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
              replace: bool = False, lock=None) -> str:
    """Evaluate `spec` into a table of the DuckDB connection `con` (from `core.db.connect`) and record it in the
    catalog; returns the table name. A table already there for the same spec and code version is reused unless
    `replace`; a replaced table stays whole until the new one is complete (an interrupted run keeps it:
    `db.write_sweep`). `drop_invalid` overrides the spec's (and so the table name). `progress(rows_done,
    rows_total)` is called on the caller's thread after each chunk. `lock` is held around the final swap (see
    `SweepStore`)."""
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
                       "n_fit": sw.fits, "seconds": time.perf_counter() - t0}, lock=lock), progress)
    return name


def export_sweep(spec: SweepSpec, path: str | Path, fmt: str | None = None,
                 progress: Callable[[int, int], None] | None = None, chunk_rows: int = CHUNK_ROWS,
                 max_rows: int = MAX_ROWS) -> dict:
    """Evaluate `spec` straight into a CSV or Parquet file, streamed (memory stays bounded): Parquet through
    pyarrow's writer (`columnar.write_parquet`, 3-6× faster than DuckDB's COPY on these tables), CSV through
    DuckDB's COPY (`db.copy_to`). Both write a hidden temporary file beside `path` and rename it over `path` when
    complete, so an interrupted or killed export (Ctrl-C, SIGKILL) never leaves a truncated file under the name,
    and a previous file stays as it was; the temporary files killed exports left beside `path` are removed first
    (`db.remove_stale_temps`). Returns the counts: rows (in the grid), written, valid, fits, seconds. `progress` as
    in `run_sweep`."""
    sw = Sweep(spec, chunk_rows, max_rows)
    t0 = time.perf_counter()
    if db.output_format(path, fmt) == "parquet":
        target = db.checked_output(path)
        db.remove_stale_temps(target)
        written = _write(sw, lambda reader: A.write_parquet(reader, target), progress)
    else:
        written = _write(sw, lambda reader: db.copy_to(reader, path, fmt), progress)
    return {"rows": sw.rows, "written": written, "valid": sw.valid, "fits": sw.fits,
            "seconds": time.perf_counter() - t0}


# ---------------------------------------------------------------------------------------------------------------
# One owner of a shared database's sweep tables (the app's process)
# ---------------------------------------------------------------------------------------------------------------

class SweepStore:
    """The one owner of the sweep tables of a database that many callers share (the app's sessions): every run,
    lease and eviction goes through it. Thread-safe.

    Runs. `ensure(spec, session)` returns the spec's table, evaluating it first if it is not there. Runs start in
    arrival order while the rows being evaluated stay within `max_running_rows` (a run larger than that runs
    alone): a queue, with `waiting(runs_ahead)` called on the caller's thread about twice a second while it waits,
    at most `wait_s`, after which it is refused with ValueError("busy: …"). The same spec runs once: a second
    caller waits for the first and reads its table.

    Leases. A session shows one table at a time, under a lease that `ensure` takes and `hold` renews: a leased
    table is never dropped. A lease ends when its session shows another table, calls `release`, is no longer
    `alive(session)`, or has not renewed it for `lease_s` seconds.

    Room. At most `max_tables` tables and `max_rows` rows are kept, runs under way included; room for a run is
    made by dropping the least recently shown tables that no lease holds. When leased tables alone leave no room,
    the run is refused (ValueError "busy: …") rather than taking a table from under someone.

    Errors. Every DuckDB error comes out as ValueError("database: …"); drops and the swap that publishes a new
    table are serialised (no "Conflict on tuple deletion" between sessions evicting the same table).

    `chunk_rows` is the runs' chunk (smaller than the CLI's: a server's peak memory matters more than its speed)."""

    WAIT_TICK_S = 0.5

    def __init__(self, con, *, max_rows: int, max_tables: int, max_running_rows: int, max_rows_per_sweep: int,
                 lease_s: float = 1800.0, wait_s: float = 120.0, alive: Callable[[str], bool] | None = None,
                 chunk_rows: int = CHUNK_ROWS):
        self.con, self.chunk_rows = con, int(chunk_rows)
        self.max_rows, self.max_tables, self.max_running_rows = int(max_rows), int(max_tables), int(max_running_rows)
        self.max_rows_per_sweep = int(max_rows_per_sweep)
        if self.max_rows_per_sweep > self.max_rows:
            raise ValueError("max_rows_per_sweep: must not exceed max_rows (such a sweep could never be kept)")
        self.lease_s, self.wait_s, self.alive = float(lease_s), float(wait_s), alive
        self._cond = threading.Condition()
        self._swap = threading.Lock()  # DuckDB catalog changes: the swap publishing a table, and drops
        self._tables: dict[str, dict] = {}  # kept: table -> {"rows", "used" (monotonic), "version"}
        self._leases: dict[str, tuple[str, float]] = {}  # session -> (table, renewed at)
        self._running: dict[str, int] = {}  # table being evaluated -> rows reserved
        self._queue: list = []  # tickets of runs waiting to start, in arrival order
        for r in self._db(db.catalog, con).to_dict("records"):
            self._tables[r["id"]] = {"rows": int(r["n_rows"]), "used": 0.0, "version": r["code_version"]}

    # --- reading ---------------------------------------------------------------------------------------------------
    def ready(self, spec: SweepSpec) -> bool:
        """Whether the spec's table is kept and complete (for this code version)."""
        with self._cond:
            t = self._tables.get(spec.table_name)
            return t is not None and t["version"] == code_version() and spec.table_name not in self._running

    def hold(self, session: str, table: str) -> bool:
        """Renew `session`'s lease on `table` (ending its lease on any other); False if the table is not kept."""
        with self._cond:
            if table not in self._tables or table in self._running:
                return False
            self._lease(session, table)
            return True

    def release(self, session: str) -> None:
        with self._cond:
            self._leases.pop(session, None)

    def stats(self) -> dict:
        """Tables and rows kept, leases, runs under way and waiting (for the page and the load test)."""
        with self._cond:
            return {"tables": len(self._tables), "rows": sum(t["rows"] for t in self._tables.values()),
                    "leases": len(self._leases), "running": len(self._running), "queued": len(self._queue)}

    # --- running ---------------------------------------------------------------------------------------------------
    def ensure(self, spec: SweepSpec, session: str, progress: Callable[[int, int], None] | None = None,
               waiting: Callable[[int], None] | None = None) -> str:
        """The spec's table, kept and leased to `session`; evaluated first (queued behind other runs) if it is not
        there. ValueError: a spec over `max_rows_per_sweep`, "busy: …" (no room, or waited `wait_s`), or
        "database: …"."""
        n = check_rows(spec, self.max_rows_per_sweep)
        name = spec.table_name
        if self._admit(name, n, session, waiting, table=True):
            return name
        ok = False
        try:
            self._db(run_sweep, spec, self.con, progress=progress, max_rows=self.max_rows_per_sweep, replace=True,
                     lock=self._swap, chunk_rows=self.chunk_rows)
            rows = int(self._db(db.sweep_info, self.con, name)["n_rows"])
            ok = True
        finally:
            with self._cond:
                self._running.pop(name, None)
                if ok:
                    self._tables[name] = {"rows": rows, "used": time.monotonic(), "version": code_version()}
                    self._lease(session, name)
                self._cond.notify_all()
        return name

    def run_work(self, rows: int, session: str, fn: Callable[[], object],
                 waiting: Callable[[int], None] | None = None):
        """Run `fn()` (work that is not a sweep table: a layout search) in the same queue as the sweeps, counting
        `rows` against `max_running_rows` while it runs; returns what `fn` returns. ValueError "busy: …" after
        `wait_s` in the queue."""
        key = f"work:{id(fn)}:{time.monotonic_ns()}"
        self._admit(key, max(int(rows), 1), session, waiting, table=False)
        try:
            return fn()
        finally:
            with self._cond:
                self._running.pop(key, None)
                self._cond.notify_all()

    def trim(self, idle_s: float, keep_rows: int = 0) -> int:
        """Drop the tables no lease holds that have not been shown for `idle_s` seconds (leases of closed sessions
        end first), least recently shown first, keeping at most `keep_rows` rows of such tables: memory comes back
        once the sessions that held a table are gone. Returns the number of tables dropped."""
        dropped = 0
        with self._cond:
            self._expire()
            held = {t for t, _ in self._leases.values()}
            now = time.monotonic()
            idle = sorted((t for t, info in self._tables.items() if t not in held and t not in self._running
                           and now - info["used"] >= idle_s), key=lambda t: self._tables[t]["used"])
            kept = sum(self._tables[t]["rows"] for t in idle)
            for t in idle:
                if kept <= keep_rows:
                    break
                with self._swap:
                    self._db(db.drop_sweep, self.con, t)
                kept -= self._tables.pop(t)["rows"]
                dropped += 1
        return dropped

    def _admit(self, name: str, n: int, session: str, waiting, table: bool) -> bool:
        """Wait for `name`'s turn in the queue (arrival order, `max_running_rows`), then reserve its rows in
        `_running`. A table already kept returns True at once (leased to `session`); otherwise False once the rows
        are reserved (the caller runs the work and pops `_running[name]`)."""
        deadline = time.monotonic() + self.wait_s
        ticket = object()
        queued = False
        try:
            while True:
                with self._cond:
                    if table and self._ready(name):
                        self._lease(session, name)
                        return True
                    if name not in self._running:
                        if not queued:
                            self._queue.append(ticket)
                            queued = True
                        if self._queue[0] is ticket and self._can_start(n):
                            if table:
                                self._make_room(name, n, session)
                            self._queue.remove(ticket)
                            queued = False
                            self._running[name] = n
                            self._cond.notify_all()
                            return False
                    ahead = (self._queue.index(ticket) if queued else 0) + len(self._running)
                    if time.monotonic() >= deadline:
                        raise ValueError(f"busy: {ahead} other run{'s' if ahead != 1 else ''} (sweeps, layout "
                                         f"searches) ran or waited ahead of this one for {self.wait_s:.0f} s; try "
                                         "again in a minute")
                    self._cond.wait(self.WAIT_TICK_S)
                if waiting is not None:  # outside the lock: a page's progress text (which may stop the script)
                    waiting(ahead)
        finally:
            if queued:
                with self._cond:
                    self._queue.remove(ticket)
                    self._cond.notify_all()

    # --- under the lock --------------------------------------------------------------------------------------------
    def _ready(self, name: str) -> bool:
        t = self._tables.get(name)
        return t is not None and t["version"] == code_version() and name not in self._running

    def _lease(self, session: str, table: str) -> None:
        now = time.monotonic()
        self._leases[session] = (table, now)
        self._tables[table]["used"] = now

    def _can_start(self, n: int) -> bool:
        running = sum(self._running.values())
        return not self._running or running + n <= self.max_running_rows

    def _expire(self) -> None:
        now = time.monotonic()
        for session, (_table, renewed) in list(self._leases.items()):
            gone = self.alive is not None and not self.alive(session)
            if gone or now - renewed > self.lease_s:
                del self._leases[session]

    def _make_room(self, name: str, n: int, session: str) -> None:
        """Drop unleased tables, least recently shown first, until `n` more rows (for `name`) fit. The asking
        session's own lease does not count: it is moving to `name`."""
        self._expire()
        held = {t for s, (t, _) in self._leases.items() if s != session}

        def full() -> bool:
            kept = [t for t in self._tables if t != name]  # a stale table of the same name is replaced
            rows = sum(self._tables[t]["rows"] for t in kept) + sum(self._running.values())
            return rows + n > self.max_rows or len(kept) + len(self._running) + 1 > self.max_tables

        while full():
            free = sorted((t for t in self._tables if t not in held and t != name),
                          key=lambda t: self._tables[t]["used"])
            if not free:
                rows = sum(self._tables[t]["rows"] for t in held if t in self._tables)
                raise ValueError(f"busy: the server is keeping {len(held)} sweeps ({rows:,} rows) that visitors are "
                                 f"viewing, and this one ({n:,} rows) does not fit beside them; try again in a few "
                                 "minutes, or run it with the CLI (python -m core sweep)")
            with self._swap:
                self._db(db.drop_sweep, self.con, free[0])
            del self._tables[free[0]]

    @staticmethod
    def _db(fn, *args, **kw):
        try:
            return fn(*args, **kw)
        except duckdb.Error as e:
            raise ValueError(f"database: {type(e).__name__}: {db._first_line(e)}") from None
