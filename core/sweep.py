"""Sweeps: a frozen grid spec, evaluated in chunks by the core's vectorised `evaluate`, landed in DuckDB via Arrow.

Spec (`SweepSpec`). For each input name of the core (the flat vocabulary of `config_from_inputs`, the CLI flags
and the JSON record) a list of values, a scalar, or a `Range` — ``{"from": a, "to": b, "step": s}`` with `s` a
positive number (linear, both ends included), ``"pow2"`` (a, 2a, 4a, … ≤ b) or ``"log"`` (``"n"`` log-spaced
points from a to b, default 10; integer inputs are rounded and de-duplicated). `model` entries are preset names
or raw parameter counts (numbers); `n_params` adds raw counts to the same model axis, so presets and raw sizes
mix. `hf_config` (a file path) is not accepted. One more key, ``"drop_invalid": true``, drops invalid rows
instead of flagging them. The spec is validated on construction (unknown names, empty lists, duplicates, bad
ranges, unknown presets or accelerators: `ValueError` naming the field), and round-trips through JSON
(`to_json`/`from_json`, canonical: keys sorted, compact) and a URL-safe token (`to_token`/`from_token`: canonical
JSON → zlib → base64url). `n_rows` is the grid size, known from counts alone before anything is expanded or run;
`table_name` is ``sweep_`` + 16 hex digits of the SHA-256 of the canonical JSON.

Evaluation. Every input is one axis of a broadcast grid (NumPy shapes (k1,1,…), (1,k2,…), …), so each term of
`evaluate` is computed on the product of only the axes it depends on; the full grid size is reached only by the
final record columns. Axes are ordered by size, the largest innermost (long inner loops), and the grid is cut
into chunks of at most `chunk_rows` rows along the outer axes, so memory is bounded whatever the grid size; no
Python loop runs per row. Inputs that resolve through Python objects form compound axes, one position per
combination: the model axis (model / n_params × architecture fields → `build_model`), the accelerator axis
(gpu × compute_dtype × peak/memory/bandwidth overrides → `build_gpu`, peak for the dtype, catalog price); the
recipe and overhead presets are lookups along their own axes, and explicit inputs win over them exactly as in
`config_from_inputs`; `tokens_per_second` from `step_time_s` and `global_batch` is broadcast arithmetic.

Rows. A row is valid exactly when `config_from_inputs` accepts the same inputs. Invalid combinations are kept
with ``valid = false`` and `reason` (the core's `REASONS` text, or the model/accelerator builder's message, e.g.
"d_model: 1000 is not divisible by n_heads=32"), and every number of the record NULL; `binding` and `worst_stage`
are NULL too. NaN numbers of valid rows (no catalog price, no measured throughput) are NULL as well.

Output columns: the input columns — model and gpu (the spec's names, as dictionary strings), the key inputs
seq_len, micro_batch, n_gpus, tp, pp, zero_stage and recompute (always, so the database queries can rely on
them), and every other input named in the spec — then the record columns of `evaluate` in its order (n_params,
peak_flops_per_s and gpu_memory_bytes are record columns). Types: integers int32, numbers float64, flags bool,
names dictionary<int16, string>. Row order follows the axis order (not the spec's) and is not part of the contract.

Streaming. `Sweep.batches` yields one Arrow record batch per chunk; a helper thread evaluates the next chunk
while the consumer writes the current one (NumPy and DuckDB release the GIL, so the two overlap on two cores:
1M rows into DuckDB 0.33 s with it, 0.68 s without), and `progress(rows_done, rows_total)` runs on the consumer's
thread. `Sweep.reader` wraps them as an Arrow stream, which `run_sweep` materialises in one
``CREATE TABLE … AS SELECT`` and `export_sweep` hands to DuckDB's COPY. DuckDB pulls the stream on its own
threads; those two run it on a worker thread and relay progress, so their callback still runs on the caller's
thread (a Streamlit script may draw a progress bar from it).

Guard rail: `check_rows(spec, max_rows)` (run first by every entry point; default cap `MAX_ROWS`) refuses a grid
larger than the cap and names the largest dimensions to shrink.

Entry points: `Sweep` / `iter_batches` (Arrow record batches), `to_table` (small grids), `run_sweep` (into DuckDB
through `core.db`, which owns the database), `export_sweep` (streamed straight to CSV/Parquet by DuckDB's COPY)
and the CLI ``python -m core sweep --spec spec.json --out x.parquet|x.csv|x.duckdb``.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import queue
import sys
import threading
import time
import zlib
from dataclasses import dataclass, fields
from functools import lru_cache
from itertools import product
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pyarrow as pa

from . import memory as M
from .cli import BOOL_INPUTS, CHOICE_INPUTS, FLOAT_INPUTS, INT_INPUTS
from .estimate import BINDING, GPU_FIELDS, REASONS, Config, build_gpu, build_model, evaluate, peak_or_nan
from .hardware import accelerator_names
from .model import ARCH_FIELDS, preset_names

MAX_ROWS = 50_000_000  # default row cap (a 10M-row grid takes seconds; 50M is minutes and several GB in DuckDB)
CHUNK_ROWS = 1 << 17  # rows evaluated at once: ~100 MB of record columns, the sweet spot measured on 2 cores
LOG_POINTS = 10  # a log range's points when "n" is not given
MAX_LOG_POINTS = 100_000

MODEL_INPUTS = ("model", "n_params") + ARCH_FIELDS
GPU_INPUTS = ("gpu", "compute_dtype") + GPU_FIELDS
RECIPE_FIELDS = ("weight_dtype", "grad_dtype", "master_weights", "grad_accum_fp32", "optimizer")
# Inputs present in every sweep table (the database queries group by them).
KEY_INPUTS = ("model", "gpu", "seq_len", "micro_batch", "n_gpus", "tp", "pp", "zero_stage", "recompute")
INPUTS = ("model", "gpu") + INT_INPUTS + FLOAT_INPUTS + tuple(CHOICE_INPUTS) + BOOL_INPUTS
STEP_RULES = ("pow2", "log")
DEFAULT_GPU = "h100-sxm"  # as in config_from_inputs


def _kind(name: str) -> str:
    if name in ("model", "gpu"):
        return name
    if name in INT_INPUTS:
        return "int"
    if name in FLOAT_INPUTS:
        return "float"
    if name in CHOICE_INPUTS:
        return "choice"
    if name in BOOL_INPUTS:
        return "bool"
    if name == "hf_config":
        raise ValueError("hf_config: not accepted in a sweep (it is a file path); give the architecture fields")
    raise ValueError(f"{name}: not an input; known inputs: {', '.join(sorted(INPUTS))}")


def _is_num(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _value(name: str, v):
    """One list entry, checked and normalised (ints as int, numbers as float)."""
    kind = _kind(name)
    if kind == "int":
        if not _is_num(v) or not math.isfinite(v) or float(v) != int(v):
            raise ValueError(f"{name}: expected an integer, got {v!r}")
        if abs(int(v)) >= 2**31:
            raise ValueError(f"{name}: {v!r} is out of range (|value| < 2**31)")
        return int(v)
    if kind == "float":
        if not _is_num(v) or not math.isfinite(v):
            raise ValueError(f"{name}: expected a finite number, got {v!r}")
        return float(v)
    if kind == "bool":
        if not isinstance(v, (bool, np.bool_)):
            raise ValueError(f"{name}: expected true or false, got {v!r}")
        return bool(v)
    if kind == "choice":
        if v not in CHOICE_INPUTS[name]:
            raise ValueError(f"{name}: {v!r} is not one of {', '.join(CHOICE_INPUTS[name])}")
        return str(v)
    if kind == "model":
        if isinstance(v, str):
            if v not in preset_names():
                raise ValueError(f"model: unknown preset {v!r}; known: {', '.join(preset_names())} "
                                 "(or a raw parameter count as a number)")
            return v
        if not _is_num(v) or not math.isfinite(v) or v <= 0:
            raise ValueError(f"model: expected a preset name or a positive parameter count, got {v!r}")
        return float(v)
    if not isinstance(v, str) or (v != "custom" and v not in accelerator_names()):
        raise ValueError(f"gpu: unknown accelerator {v!r}; known: {', '.join(accelerator_names())}, custom")
    return v


def _sig(x: float) -> float:
    """Round to 12 significant digits: 0.3 + 3·0.1 is 0.6, not 0.6000000000000001."""
    return float(f"{x:.12g}")


@dataclass(frozen=True)
class Range:
    """Values from `start` to `stop`: `step` a positive number (linear, both ends included), "pow2" (start, 2·start,
    4·start, … ≤ stop) or "log" (`n` log-spaced points, both ends included)."""

    start: float
    stop: float
    step: float | str
    n: int | None = None

    def check(self, name: str) -> "Range":
        kind = _kind(name)
        if kind not in ("int", "float"):
            raise ValueError(f"{name}: a range needs a numeric input; give a list of values")
        for label, v in (("from", self.start), ("to", self.stop)):
            if not _is_num(v) or not math.isfinite(v):
                raise ValueError(f"{name}: range '{label}' must be a finite number, got {v!r}")
        if self.start > self.stop:
            raise ValueError(f"{name}: range 'from' {self.start} is above 'to' {self.stop}")
        if isinstance(self.step, str):
            if self.step not in STEP_RULES:
                raise ValueError(f"{name}: range step must be a positive number, 'pow2' or 'log', got {self.step!r}")
            if self.start <= 0:
                raise ValueError(f"{name}: a {self.step} range needs 'from' > 0, got {self.start}")
        elif not _is_num(self.step) or not math.isfinite(self.step) or self.step <= 0:
            raise ValueError(f"{name}: range step must be a positive number, 'pow2' or 'log', got {self.step!r}")
        elif kind == "float" and self.step < 1e-9 * max(abs(self.start), abs(self.stop)):
            raise ValueError(f"{name}: range step {self.step} is too fine for values near {self.stop}")
        if self.step == "log":
            if self.n is not None and (isinstance(self.n, bool) or not isinstance(self.n, int)
                                       or not 2 <= self.n <= MAX_LOG_POINTS):
                raise ValueError(f"{name}: 'n' (log-spaced points) must be an integer from 2 to {MAX_LOG_POINTS}")
        elif self.n is not None:
            raise ValueError(f"{name}: 'n' is only for a log range")
        if kind == "int":
            ints = (self.start, self.stop) + ((self.step,) if _is_num(self.step) else ())
            if any(float(v) != int(v) for v in ints):
                raise ValueError(f"{name}: an integer input needs integer range bounds and step")
            if max(abs(self.start), abs(self.stop)) >= 2**31:
                raise ValueError(f"{name}: range is out of range (|value| < 2**31)")
        return self

    def count(self, integer: bool = False) -> int:
        """Number of values, without expanding a linear or pow2 range (a log range, at most MAX_LOG_POINTS, is
        expanded: rounding can merge neighbours)."""
        if self.step == "pow2":
            return int(math.floor(math.log2(self.stop / self.start) + 1e-9)) + 1
        if self.step == "log":
            return len(self.values(integer))
        return int(math.floor((self.stop - self.start) / self.step + 1e-9)) + 1

    def values(self, integer: bool = False) -> tuple:
        """The values, as ints for an integer input; a log range drops neighbours that rounding merged. (A linear
        range's step is at least 1e-9 of its values, so rounding to 12 digits never merges two.)"""
        return _range_values(self.start, self.stop, self.step, self.n, integer)

    def to_dict(self) -> dict:
        d = {"from": _num_json(self.start), "to": _num_json(self.stop),
             "step": self.step if isinstance(self.step, str) else _num_json(self.step)}
        if self.n is not None:
            d["n"] = self.n
        return d


@lru_cache(maxsize=256)
def _range_values(a, b, step, n, integer: bool) -> tuple:
    if step == "log":
        n = n or LOG_POINTS
        vals = [a * (b / a) ** (i / (n - 1)) for i in range(n)]
    elif step == "pow2":
        vals = [a * 2**i for i in range(Range(a, b, step).count())]
    else:
        vals = [a + i * step for i in range(Range(a, b, step).count())]
    if integer:
        vals = [int(round(v)) for v in vals]
    else:
        vals = [_sig(v) for v in vals]
    return tuple(dict.fromkeys(vals)) if step == "log" else tuple(vals)


def _num_json(v):
    return int(v) if _is_num(v) and float(v) == int(v) and abs(v) < 2**53 else v


def _parse_entry(name: str, v):
    """A spec entry → a tuple of normalised values or a checked Range."""
    if isinstance(v, Range):
        return v.check(name)
    if isinstance(v, dict):
        extra = set(v) - {"from", "to", "step", "n"}
        if extra or not {"from", "to", "step"} <= set(v):
            raise ValueError(f"{name}: a range is {{\"from\": a, \"to\": b, \"step\": number | \"pow2\" | \"log\"}} "
                             f"(and \"n\" for log); got keys {sorted(v)}")
        return Range(v["from"], v["to"], v["step"], v.get("n")).check(name)
    vals = list(v) if isinstance(v, (list, tuple)) else [v]
    if not vals:
        raise ValueError(f"{name}: empty list of values")
    out = tuple(_value(name, x) for x in vals)
    seen = set()
    for x in out:
        key = (type(x) is str, x)
        if key in seen:
            raise ValueError(f"{name}: duplicate value {x!r}")
        seen.add(key)
    return out


@dataclass(frozen=True)
class SweepSpec:
    """A frozen, validated sweep grid: `inputs` is a tuple of (input name, values tuple | Range), sorted by name.
    Build it with `SweepSpec.from_dict` / `from_json` / `from_token`; it is hashable and compares by content."""

    inputs: tuple
    drop_invalid: bool = False

    def __post_init__(self):
        entries = dict(self.inputs) if not isinstance(self.inputs, dict) else dict(self.inputs)
        if len(entries) != len(tuple(self.inputs)):
            raise ValueError("spec: an input is given twice")
        norm = tuple(sorted((str(k), _parse_entry(str(k), v)) for k, v in entries.items()))
        object.__setattr__(self, "inputs", norm)
        if not isinstance(self.drop_invalid, (bool, np.bool_)):
            raise ValueError(f"drop_invalid: expected true or false, got {self.drop_invalid!r}")
        object.__setattr__(self, "drop_invalid", bool(self.drop_invalid))
        names = set(self.names)
        if not ({"model", "n_params"} & names or {"n_layers", "d_model", "n_heads"} <= names):
            raise ValueError("model: give model (presets or raw counts), n_params, or n_layers, d_model and n_heads")
        if "custom" in self._list("gpu"):
            missing = [k for k in GPU_FIELDS if k not in names]
            if missing:
                raise ValueError(f"gpu: a custom accelerator needs {', '.join(missing)}")
        if "tokens_per_second" in names and "step_time_s" in names:
            raise ValueError("tokens_per_second: give either tokens_per_second or step_time_s with global_batch")
        if ("step_time_s" in names) != ("global_batch" in names):
            raise ValueError("step_time_s: needs global_batch (sequences per step) too, and vice versa")
        # Config refuses these outright (not as a combination), so a sweep does too
        for name, low, strict in (("price_per_gpu_hour", 0, False), ("tokens_per_second", 0, False),
                                  ("global_batch", 0, False), ("step_time_s", 0, True)):
            if name in names:
                lo = self._min(name)
                if lo < low or (strict and lo <= low):
                    raise ValueError(f"{name}: must be {'>' if strict else '≥'} {low}, got {lo}")

    # --- reading ------------------------------------------------------------------------------------------------
    @property
    def names(self) -> tuple:
        return tuple(k for k, _ in self.inputs)

    def _entry(self, name):
        return dict(self.inputs).get(name)

    def _list(self, name) -> tuple:
        e = self._entry(name)
        return () if e is None or isinstance(e, Range) else e

    def _min(self, name) -> float:
        e = self._entry(name)
        return e.start if isinstance(e, Range) else min(e)

    def values(self, name: str) -> tuple:
        """The expanded values of one input (empty if the spec does not name it)."""
        e = self._entry(name)
        if e is None:
            return ()
        return e.values(_kind(name) == "int") if isinstance(e, Range) else e

    def count(self, name: str) -> int:
        e = self._entry(name)
        if e is None:
            return 1
        return e.count(_kind(name) == "int") if isinstance(e, Range) else len(e)

    @property
    def shape(self) -> dict:
        """Values per grid dimension, in the spec's (sorted) order; `n_rows` is their product. Raw counts in
        `n_params` join the `model` dimension (presets and raw sizes are one axis), so they are counted there."""
        shape = {k: self.count(k) for k in self.names if k != "n_params"}
        if "n_params" in self.names:
            shape["model"] = len(self.values("model")) + self.count("n_params")
        return shape

    @property
    def n_rows(self) -> int:
        return math.prod(self.shape.values())

    # --- serialisation ------------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        d = {}
        for k, e in self.inputs:
            if isinstance(e, Range):
                d[k] = e.to_dict()
            else:
                vals = [_num_json(x) if isinstance(x, float) else x for x in e]
                d[k] = vals[0] if len(vals) == 1 else vals
        if self.drop_invalid:
            d["drop_invalid"] = True
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "SweepSpec":
        if not isinstance(d, dict):
            raise ValueError(f"spec: expected a JSON object of input names, got {type(d).__name__}")
        d = dict(d)
        drop = d.pop("drop_invalid", False)
        for k in d:
            if not isinstance(k, str):
                raise ValueError(f"spec: input names are strings, got {k!r}")
            _kind(k)
        return cls(tuple(d.items()), drop_invalid=drop)

    def to_json(self) -> str:
        """Canonical JSON: keys sorted, no spaces; equal specs give equal text."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> "SweepSpec":
        try:
            d = json.loads(text)
        except (json.JSONDecodeError, TypeError) as e:
            raise ValueError(f"spec: not valid JSON: {e}") from None
        return cls.from_dict(d)

    def to_token(self) -> str:
        """A compact URL-safe string: canonical JSON → zlib → base64url without padding."""
        raw = zlib.compress(self.to_json().encode(), 9)
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    @classmethod
    def from_token(cls, token: str) -> "SweepSpec":
        if not isinstance(token, str) or not token or len(token) > 20_000:
            raise ValueError("token: expected a non-empty sweep token")
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            d = zlib.decompressobj()
            text = d.decompress(raw, 1_000_000)
            if d.unconsumed_tail or not d.eof:
                raise ValueError("truncated or too large")
            text = text.decode("utf-8")
        except (binascii.Error, zlib.error, UnicodeDecodeError, ValueError) as e:
            raise ValueError(f"token: not a sweep token ({e})") from None
        return cls.from_json(text)

    @property
    def table_name(self) -> str:
        """sweep_ + 16 hex digits of the SHA-256 of the canonical JSON."""
        return "sweep_" + hashlib.sha256(self.to_json().encode()).hexdigest()[:16]

    def replace(self, **kw) -> "SweepSpec":
        """A copy with some inputs replaced (a value, list, dict range or Range; None removes it), or drop_invalid."""
        d = dict(self.inputs)
        drop = kw.pop("drop_invalid", self.drop_invalid)
        for k, v in kw.items():
            if v is None:
                d.pop(k, None)
            else:
                _kind(k)
                d[k] = v
        return SweepSpec(tuple(d.items()), drop_invalid=drop)


def check_rows(spec: SweepSpec, max_rows: int = MAX_ROWS) -> int:
    """The row count, or `ValueError` naming the largest dimensions when it exceeds `max_rows`."""
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
        raise ValueError(f"max_rows: must be an integer ≥ 1, got {max_rows!r}")
    n = spec.n_rows
    if n > max_rows:
        dims = sorted(((k, c) for k, c in spec.shape.items() if c > 1), key=lambda kc: -kc[1])
        grid = " × ".join(f"{k} {c}" for k, c in dims)
        biggest = ", ".join(f"{k} ({c} values)" for k, c in dims[:3])
        raise ValueError(f"sweep: {n:,} rows ({grid}) exceed the row cap of {max_rows:,}; "
                         f"shrink the largest dimensions — {biggest} — or raise the cap (--max-rows)")
    return n


# ---------------------------------------------------------------------------------------------------------------
# Axes: every input a 1-D axis; compound axes for the model and the accelerator
# ---------------------------------------------------------------------------------------------------------------

@dataclass
class _Axis:
    """One grid axis: `eval_cols` feed `evaluate`, `out_cols` become table columns (values, or (codes, labels) for
    strings), `bad` holds a reason code per position (0 = fine) for combinations a builder refused."""

    name: str
    size: int
    eval_cols: dict
    out_cols: dict
    bad: np.ndarray | None = None


def _labels(values) -> tuple[np.ndarray, list]:
    labels = list(dict.fromkeys(values))
    index = {v: i for i, v in enumerate(labels)}
    return np.array([index[v] for v in values], dtype=np.int16), labels


def _model_label(entry) -> str:
    if isinstance(entry, str):
        return entry
    return build_model(n_params=entry).name if entry is not None else "custom"


def _model_axis(spec: SweepSpec, extra_reasons: list) -> _Axis:
    bases = list(spec.values("model")) + list(spec.values("n_params"))
    if not bases:
        bases = [None]
    arch_names = [k for k in ARCH_FIELDS if k in spec.names]
    combos = list(product(bases, *(spec.values(k) for k in arch_names)))
    rows, bad = [], np.zeros(len(combos), dtype=np.int16)
    fallback = None
    for i, (base, *arch) in enumerate(combos):
        kw = dict(zip(arch_names, arch))
        try:
            m = build_model(model=base if isinstance(base, str) else None,
                            n_params=base if _is_num(base) else None, **kw)
            fallback = fallback or m
        except ValueError as e:
            bad[i] = _reason_code(str(e), extra_reasons)
            m = None
        rows.append(m)
    fallback = fallback or build_model(model="gpt-3-1.3b")
    rows = [m or fallback for m in rows]
    eval_cols = {f: np.array([getattr(m, f) for m in rows]) for f in ARCH_FIELDS}
    eval_cols["n_params"] = np.array([m.n_params for m in rows], dtype=np.float64)
    eval_cols["n_active_params"] = np.array([m.n_active_params for m in rows], dtype=np.float64)
    names = {b: _model_label(b) for b in bases}
    out_cols = {"model": _labels([names[c[0]] for c in combos])}
    for j, k in enumerate(arch_names):
        out_cols[k] = _out_values(k, [c[1 + j] for c in combos])
    return _Axis("model", len(combos), eval_cols, out_cols, bad if bad.any() else None)


def _gpu_axis(spec: SweepSpec, extra_reasons: list) -> _Axis:
    names = ["gpu", "compute_dtype"] + [k for k in GPU_FIELDS if k in spec.names]
    lists = [spec.values("gpu") or (DEFAULT_GPU,), spec.values("compute_dtype") or (Config.compute_dtype,)]
    lists += [spec.values(k) for k in names[2:]]
    combos = list(product(*lists))
    peak, mem, price = (np.full(len(combos), np.nan) for _ in range(3))
    bad = np.zeros(len(combos), dtype=np.int16)
    for i, (gpu, dtype, *over) in enumerate(combos):
        try:
            acc = build_gpu(gpu, **dict(zip(names[2:], over)), compute_dtype=dtype)
        except ValueError as e:
            bad[i] = _reason_code(str(e), extra_reasons)
            continue
        peak[i] = peak_or_nan(acc, dtype)
        mem[i], price[i] = acc.memory_bytes, acc.price_usd_per_gpu_hour
    mem[bad > 0], peak[bad > 0] = 1.0, 1.0  # placeholders; the rows are flagged invalid
    eval_cols = {"peak_flops_per_s": peak, "gpu_memory_bytes": mem}
    if "price_per_gpu_hour" not in spec.names:
        eval_cols["price_per_gpu_hour"] = price
    out_cols = {"gpu": _labels([c[0] for c in combos])}
    for j, k in enumerate(names[1:]):
        if k in spec.names and k not in ("peak_flops_per_s", "gpu_memory_bytes"):  # those two are record columns
            out_cols[k] = _out_values(k, [c[1 + j] for c in combos])
    return _Axis("gpu", len(combos), eval_cols, out_cols, bad if bad.any() else None)


def _reason_code(msg: str, extra_reasons: list) -> int:
    if msg not in extra_reasons:
        extra_reasons.append(msg)
    return len(REASONS) + extra_reasons.index(msg)


def _out_values(name: str, values):
    kind = _kind(name)
    if kind in ("choice", "model", "gpu"):
        return _labels([str(v) for v in values])
    if kind == "int":
        return np.array(values, dtype=np.int32)
    if kind == "bool":
        return np.array(values, dtype=bool)
    return np.array(values, dtype=np.float64)


def _eval_values(name: str, values) -> np.ndarray:
    kind = _kind(name)
    if kind == "int":
        return np.array(values, dtype=np.int64)
    if kind == "bool":
        return np.array(values, dtype=bool)
    if kind == "float":
        return np.array(values, dtype=np.float64)
    return np.array(values)


def _lookup_axis(spec: SweepSpec, name: str, table: dict) -> _Axis:
    """recipe / overhead: the preset's fields along this axis, except those the spec gives itself (as
    `config_from_inputs` does: explicit inputs win)."""
    vals = spec.values(name)
    eval_cols = {f: _eval_values(f, [table[v][f] for v in vals]) for f in table[vals[0]] if f not in spec.names}
    return _Axis(name, len(vals), eval_cols, {name: _out_values(name, vals)})


def _recipe_table() -> dict:
    return {name: dict(zip(RECIPE_FIELDS, r)) for name, r in M.RECIPES.items()}


def _overhead_table() -> dict:
    return {"none": {"overhead_fixed_bytes": Config.overhead_fixed_bytes,
                     "fragmentation_frac": Config.fragmentation_frac},
            "realistic": {"overhead_fixed_bytes": M.REALISTIC_OVERHEAD_BYTES,
                          "fragmentation_frac": M.REALISTIC_FRAGMENTATION_FRAC}}


def _defaults() -> dict:
    """Config's defaults as evaluate inputs (optional inputs that default to None are left out)."""
    d = {f.name: f.default for f in fields(Config) if f.name not in ("model", "gpu") and f.default is not None}
    d["tokens_per_second"] = np.nan
    return d


def _axes(spec: SweepSpec, extra_reasons: list) -> list[_Axis]:
    axes = [_model_axis(spec, extra_reasons), _gpu_axis(spec, extra_reasons)]
    done = set(MODEL_INPUTS) | set(GPU_INPUTS)
    if "recipe" in spec.names:
        axes.append(_lookup_axis(spec, "recipe", _recipe_table()))
    if "overhead" in spec.names:
        axes.append(_lookup_axis(spec, "overhead", _overhead_table()))
    done |= {"recipe", "overhead"}
    defaults = _defaults()
    for name in INPUTS:
        if name in done:
            continue
        if name in spec.names:
            vals = spec.values(name)
        elif name in KEY_INPUTS:
            vals = (defaults[name],)
        else:
            continue
        axes.append(_Axis(name, len(vals), {name: _eval_values(name, vals)}, {name: _out_values(name, vals)}))
    return axes


# ---------------------------------------------------------------------------------------------------------------
# Chunked evaluation
# ---------------------------------------------------------------------------------------------------------------

def _chunks(sizes: list[int], chunk_rows: int) -> Iterator[list[slice]]:
    """Boxes of the grid, in C order, of at most `chunk_rows` rows (at least one row): the trailing axes whole,
    one axis sliced, the leading axes one position at a time."""
    n = len(sizes)
    inner, j = 1, n
    while j > 0 and inner * sizes[j - 1] <= chunk_rows:
        j -= 1
        inner *= sizes[j]
    if j == 0:
        yield [slice(None)] * n
        return
    step = max(1, chunk_rows // inner)
    for prefix in np.ndindex(*sizes[:j - 1]):
        for start in range(0, sizes[j - 1], step):
            yield ([slice(i, i + 1) for i in prefix] + [slice(start, min(start + step, sizes[j - 1]))]
                   + [slice(None)] * (n - j))


_INT_RECORD = ("dp",)
_DICT_RECORD = {"reason": None, "binding": BINDING, "worst_stage": ("first", "last")}


@lru_cache(maxsize=1)
def record_columns() -> tuple:
    """The record column names of `evaluate`, in its order (the integer `reason_code` is stored as `reason`)."""
    cfg = Config(model=build_model(model="gpt-3-1.3b"), gpu=build_gpu(DEFAULT_GPU))
    return tuple(k for k in evaluate(**cfg.columns()) if k != "reason_code")


def _dict_type():
    return pa.dictionary(pa.int16(), pa.string())


def _input_field(name: str) -> pa.Field:
    kind = _kind(name)
    t = {"int": pa.int32(), "float": pa.float64(), "bool": pa.bool_()}.get(kind, _dict_type())
    return pa.field(name, t, nullable=False)


def _record_field(name: str) -> pa.Field:
    if name in ("valid", "fits"):
        return pa.field(name, pa.bool_(), nullable=False)
    if name == "reason":
        return pa.field(name, _dict_type(), nullable=False)
    if name in _DICT_RECORD:
        return pa.field(name, _dict_type())
    if name in _INT_RECORD:
        return pa.field(name, pa.int32())
    return pa.field(name, pa.float64())


def _bitmap(mask: np.ndarray):
    """A validity buffer from a bool array (None when every row is valid)."""
    if mask.all():
        return None, 0
    return pa.py_buffer(np.packbits(mask, bitorder="little")), int(mask.size - np.count_nonzero(mask))


# Arrow arrays are built from their buffers: zero-copy for numbers, and `pa.array` would import pandas (0.3 s
# of start-up the CLI does not need).

def _arr(values: np.ndarray, typ: pa.DataType, valid: np.ndarray | None = None) -> pa.Array:
    """A numeric Arrow array over a NumPy array (of the matching dtype), NULL where `valid` is false."""
    values = np.ascontiguousarray(values)
    buf, nulls = _bitmap(valid) if valid is not None else (None, 0)
    return pa.Array.from_buffers(typ, values.size, [buf, pa.py_buffer(values)], nulls)


def _bools(values: np.ndarray) -> pa.Array:
    values = np.asarray(values, dtype=bool)
    return pa.Array.from_buffers(pa.bool_(), values.size, [None, pa.py_buffer(np.packbits(values, bitorder="little"))])


def _strings(labels) -> pa.Array:
    data = [str(x).encode() for x in labels]
    offsets = np.zeros(len(data) + 1, dtype=np.int32)
    np.cumsum([len(d) for d in data], out=offsets[1:])
    return pa.Array.from_buffers(pa.string(), len(data), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))])


def _dict(codes: np.ndarray, labels: pa.Array, valid: np.ndarray | None = None) -> pa.Array:
    return pa.DictionaryArray.from_arrays(_arr(codes.astype(np.int16, copy=False), pa.int16(), valid), labels)


def _flat(v, shape) -> np.ndarray:
    v = np.asarray(v)
    if v.shape == shape and v.flags.c_contiguous:
        return v.reshape(-1)
    return np.broadcast_to(v, shape).ravel()


class Sweep:
    """A spec resolved into axes, ready to evaluate chunk by chunk. Counts (`rows`, `valid`, `fits`) grow as
    batches are produced."""

    def __init__(self, spec: SweepSpec, chunk_rows: int = CHUNK_ROWS, max_rows: int = MAX_ROWS):
        check_rows(spec, max_rows)
        if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
            raise ValueError(f"chunk_rows: must be a positive integer, got {chunk_rows!r}")
        self.spec, self.chunk_rows = spec, chunk_rows
        self.extra_reasons: list[str] = []
        axes = _axes(spec, self.extra_reasons)
        self.axes = sorted(axes, key=lambda a: a.size)  # largest innermost: long inner loops in NumPy
        self.n_rows = math.prod(a.size for a in self.axes)
        self.reasons = tuple(REASONS) + tuple(self.extra_reasons)
        in_names = [n for ax in axes for n in ax.out_cols]
        self.input_names = sorted(in_names, key=INPUTS.index)
        self.schema = pa.schema([_input_field(n) for n in self.input_names]
                                + [_record_field(n) for n in record_columns() if n not in self.input_names])
        self._dicts = {"reason": _strings(self.reasons), **{k: _strings(v) for k, v in _DICT_RECORD.items() if v}}
        self.rows = self.valid = self.fits = 0
        self._defaults = _defaults()

    def _columns(self, sl: list[slice]) -> tuple[dict, tuple, dict]:
        n = len(self.axes)
        cols = dict(self._defaults)
        shape, parts, bad = [], {}, {}
        for i, (ax, s) in enumerate(zip(self.axes, sl)):
            k_here = len(range(ax.size)[s])
            shape.append(k_here)
            ax_shape = [1] * n
            ax_shape[i] = k_here
            for k, v in ax.eval_cols.items():
                cols[k] = v[s].reshape(ax_shape)
            for k, v in ax.out_cols.items():
                parts[k] = (v[0][s].reshape(ax_shape), v[1]) if isinstance(v, tuple) else v[s].reshape(ax_shape)
            if ax.bad is not None:
                bad[ax.name] = ax.bad[s].reshape(ax_shape)
        if "step_time_s" in cols:  # measured throughput, as Config.measured_tokens_per_second
            cols["tokens_per_second"] = cols["global_batch"] * cols["seq_len"] / cols["step_time_s"]
        # the model is built before the accelerator, and both before Config's own checks: the first refusal wins
        first_bad = None
        for k in ("gpu", "model"):
            if k in bad:
                first_bad = bad[k] if first_bad is None else np.where(bad[k] > 0, bad[k], first_bad)
        return cols, tuple(shape), {"parts": parts, "bad": first_bad}

    def batch(self, sl: list[slice]) -> pa.RecordBatch:
        cols, shape, extra = self._columns(sl)
        with np.errstate(all="ignore"):
            out = evaluate(**cols)
        rows = math.prod(shape)
        valid = _flat(out["valid"], shape)
        bad = extra["bad"]
        if bad is not None:
            bad = _flat(bad, shape)
            valid = valid & (bad == 0)
        arrays = []
        for name in self.input_names:
            v = extra["parts"][name]
            if isinstance(v, tuple):
                arrays.append(_dict(_flat(v[0], shape), _strings(v[1])))
            else:
                flat = _flat(v, shape)
                arrays.append(_bools(flat) if flat.dtype == bool else _arr(flat, self.schema.field(name).type))
        for f in self.schema:
            name = f.name
            if name in self.input_names:
                continue
            if name == "valid":
                arrays.append(_bools(valid))
            elif name == "fits":
                fits = _flat(out["fits"], shape) & valid
                self.fits += int(np.count_nonzero(fits))
                arrays.append(_bools(fits))
            elif name == "reason":
                arrays.append(_dict(self._reason_codes(out, valid, bad, shape), self._dicts["reason"]))
            elif name == "binding":
                arrays.append(_dict(_binding_codes(out, shape), self._dicts[name], valid))
            elif name == "worst_stage":
                last = _flat(np.asarray(out["worst_stage"]) == "last", shape)
                arrays.append(_dict(last.astype(np.int16), self._dicts[name], valid))
            elif name in _INT_RECORD:
                arrays.append(_arr(_flat(out[name], shape).astype(np.int32), pa.int32(), valid))
            else:
                v = np.ascontiguousarray(_flat(out[name], shape), dtype=np.float64)
                ok = ~np.isnan(v)  # invalid rows are NaN already (evaluate); builder refusals are not
                arrays.append(_arr(v, pa.float64(), ok & valid if bad is not None else ok))
        self.rows += rows
        self.valid += int(np.count_nonzero(valid))
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        if self.spec.drop_invalid and not valid.all():
            batch = batch.filter(_bools(valid))
        return batch

    def _reason_codes(self, out, valid, bad, shape) -> np.ndarray:
        if valid.all():
            return np.zeros(valid.size, dtype=np.int16)
        code = _flat(out["reason_code"], shape).astype(np.int16)
        if bad is not None:
            code = np.where(bad > 0, bad, code).astype(np.int16)
        return code

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        for sl in _chunks([a.size for a in self.axes], self.chunk_rows):
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
    terms = [_flat(out[k], shape) for k in ("state_bytes", "activations_bytes", "logits_bytes", "overhead_bytes")]
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
    from . import db
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
    from . import db
    sw = Sweep(spec, chunk_rows, max_rows)
    t0 = time.perf_counter()
    written = _write(sw, lambda reader: db.copy_to(reader, path, fmt), progress)
    return {"rows": sw.rows, "written": written, "valid": sw.valid, "fits": sw.fits,
            "seconds": time.perf_counter() - t0}


# ---------------------------------------------------------------------------------------------------------------
# CLI: python -m core sweep --spec spec.json --out results.parquet|.csv|.duckdb
# ---------------------------------------------------------------------------------------------------------------

class _Bar:
    """A one-line progress bar on stderr, shown only when the sweep takes more than a moment."""

    def __init__(self, stream=None, after_s: float = 0.5):
        self.stream = stream or sys.stderr
        self.t0, self.after_s, self.shown = time.perf_counter(), after_s, False

    def __call__(self, done: int, total: int) -> None:
        dt = time.perf_counter() - self.t0
        if dt < self.after_s and done < total:
            return
        if not self.shown and done >= total:
            return  # finished before the bar was needed
        frac = done / total if total else 1.0
        bar = "#" * int(30 * frac)
        self.stream.write(f"\r[{bar:<30}] {frac:6.1%}  {done:,}/{total:,} rows  {dt:5.1f} s")
        self.shown = True
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()


def _load_spec(text: str) -> SweepSpec:
    if text.lstrip().startswith("{"):
        return SweepSpec.from_json(text)
    p = Path(text)
    if p.suffix == "" and not p.exists() and len(text) > 8:
        return SweepSpec.from_token(text)
    try:
        return SweepSpec.from_json(p.read_text())
    except OSError as e:
        raise ValueError(f"spec: cannot read {text!r}: {e.strerror}") from None


def cmd_sweep(args) -> int:
    spec = _load_spec(args.spec)
    if args.drop_invalid:
        spec = spec.replace(drop_invalid=True)
    out = Path(args.out)
    fmt = out.suffix.lower().lstrip(".")
    if fmt not in ("parquet", "csv", "duckdb"):
        raise ValueError(f"out: the file must end in .parquet, .csv or .duckdb, got {args.out!r}")
    n = check_rows(spec, args.max_rows)
    bar = None if args.quiet else _Bar()
    t0 = time.perf_counter()
    if fmt == "duckdb":
        from . import db
        con = db.connect(out, memory_limit=args.memory_limit)
        try:
            table = run_sweep(spec, con, progress=bar, chunk_rows=args.chunk_rows, max_rows=args.max_rows,
                              replace=True)
            info = db.sweep_info(con, table)
        finally:
            con.close()
        stats = {"rows": n, "written": info["n_rows"], "valid": info["n_valid"], "fits": info["n_fit"]}
    else:
        stats = export_sweep(spec, out, fmt, progress=bar, chunk_rows=args.chunk_rows, max_rows=args.max_rows)
        table = spec.table_name
    dt = time.perf_counter() - t0
    summary = {"rows": stats["rows"], "written": stats["written"], "valid": stats["valid"], "fits": stats["fits"],
               "seconds": round(dt, 3), "rows_per_s": round(stats["rows"] / dt) if dt > 0 else None,
               "out": str(out), "table": table}
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{summary['rows']:,} rows ({summary['written']:,} written), {summary['valid']:,} valid, "
              f"{summary['fits']:,} fit, {dt:.2f} s ({summary['rows_per_s'] or 0:,} rows/s) → {out}"
              + (f" (table {table})" if fmt == "duckdb" else ""))
    return 0


def register_cli(sub) -> None:
    sp = sub.add_parser("sweep", help="evaluate a grid of configurations into Parquet, CSV or DuckDB",
                        description="Evaluate every combination of a sweep spec (a JSON object of input names → "
                                    "list | scalar | {from, to, step}) with the vectorised core.")
    sp.add_argument("--spec", required=True, help="spec JSON file, inline JSON, or a sweep token")
    sp.add_argument("--out", required=True, help="results.parquet, results.csv or results.duckdb")
    sp.add_argument("--max-rows", type=int, default=MAX_ROWS, help=f"row cap (default {MAX_ROWS:,})")
    sp.add_argument("--chunk-rows", type=int, default=CHUNK_ROWS, help=f"rows per chunk (default {CHUNK_ROWS:,})")
    sp.add_argument("--drop-invalid", action="store_true", help="leave invalid combinations out")
    sp.add_argument("--memory-limit", default="1GB", help="DuckDB memory limit for a .duckdb output (default 1GB)")
    sp.add_argument("--quiet", action="store_true", help="no progress bar")
    sp.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    sp.set_defaults(func=cmd_sweep)
