"""The sweep spec: a frozen, validated grid of inputs, its JSON and URL-token forms, and its size.

For each input name of the vocabulary (`core.inputs`: the names of `config_from_inputs`, the CLI flags and the
JSON record) a list of values, a scalar, or a `Range` — ``{"from": a, "to": b, "step": s}`` with `s` a positive
number (linear, both ends included), ``"pow2"`` (a, 2a, 4a, … ≤ b) or ``"log"`` (``"n"`` log-spaced points from a
to b, default 10; integer inputs are rounded and de-duplicated). `model` entries are preset names or raw parameter
counts (numbers); `n_params` adds raw counts to the same model axis, so presets and raw sizes mix. `hf_config` (a
file path) is not accepted. One more key, ``"drop_invalid": true``, drops invalid rows instead of flagging them.
The spec is validated on construction (unknown names, empty lists, duplicates, bad ranges, values or range ends
outside the schema's `lo`/`hi`, ranges of more than 10^12 values, more than `MAX_MODELS` models, unknown presets or
accelerators: `ValueError` naming the field), and round-trips through JSON (`to_json`/`from_json`, canonical: keys
sorted, compact; JSON from a user is bounded by `core.safejson`: size, nesting, finite numbers, no repeated key)
and a URL-safe token (`to_token`/`from_token`: canonical JSON → zlib → base64url, at most 1 MB inflated). `n_rows` is the
grid size, known from counts alone before anything is expanded or run; `table_name` is ``sweep_`` + 16 hex digits
of the SHA-256 of the canonical JSON. `check_rows` refuses a grid above a row cap and names the largest dimensions.

Pure grammar: no evaluation here (that is `core.sweep`).
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import zlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import inputs as I
from . import safejson
from .hardware import accelerator_names
from .model import preset_names

CHUNK_ROWS = 1 << 17  # rows the engine evaluates at once: ~100 MB of record columns, the sweet spot measured on 2 cores
MAX_ROWS = 50_000_000  # default row cap (a 10M-row grid takes seconds; 50M is minutes and several GB in DuckDB)
LOG_POINTS = 10  # a log range's points when "n" is not given
MAX_LOG_POINTS = 100_000
MAX_MODELS = 4_096  # presets and raw sizes on one model axis (each a label of the model column)
MAX_RANGE_VALUES = 10**12  # a range's values, counted before any row cap (beyond: surely a typo)
STEP_RULES = ("pow2", "log")
# every input a spec may name, in schema order (hf_config is a file path: not in a sweep)
INPUTS = tuple(n for n in I.NAMES if n != "hf_config")
# inputs present in every sweep table (the database queries group by them)
KEY_INPUTS = ("model", "gpu", "seq_len", "micro_batch", "n_gpus", "tp", "pp", "zero_stage", "recompute")


def _kind(name: str) -> str:
    """The input's kind in a spec: "model", "gpu", or its schema kind (core/inputs.py)."""
    if name in ("model", "gpu"):
        return name
    if name == "hf_config":
        raise ValueError("hf_config: not accepted in a sweep (it is a file path); give the architecture fields")
    if name not in INPUTS:
        raise ValueError(f"{name}: not an input; known inputs: {', '.join(sorted(INPUTS))}")
    return I.kind(name)


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
        return int(_bounded(name, v))
    if kind == "float":
        if v == "auto" and I.BY_NAME[name].auto:
            return "auto"
        if not _is_num(v) or not math.isfinite(v):
            raise ValueError(f"{name}: expected a finite number, got {v!r}")
        return float(_bounded(name, v))
    if kind == "bool":
        if not isinstance(v, (bool, np.bool_)):
            raise ValueError(f"{name}: expected true or false, got {v!r}")
        return bool(v)
    if kind == "choice":
        choices = I.BY_NAME[name].choices
        v = I.canonical(name, v)
        if v not in choices:
            raise ValueError(f"{name}: {v!r} is not one of {I.choices_text(name)}")
        return str(v)
    if kind == "model":
        if isinstance(v, str):
            if v not in preset_names():
                raise ValueError(f"model: unknown preset {v!r}; known: {', '.join(preset_names())} "
                                 "(or a raw parameter count as a number)")
            return v
        if not _is_num(v) or not math.isfinite(v) or v <= 0:
            raise ValueError(f"model: expected a preset name or a positive parameter count, got {v!r}")
        return float(_bounded("n_params", v, "model"))
    if kind == "str":  # a list of names (recompute_modules) or places (remat_custom): checked by its own parser
        if not isinstance(v, str):
            raise ValueError(f"{name}: expected text, got {v!r}")
        if I.BY_NAME[name].parse is not None:
            I.BY_NAME[name].parse(v)
        return v
    if not isinstance(v, str) or (v != "custom" and v not in accelerator_names()):
        raise ValueError(f"gpu: unknown accelerator {v!r}; known: {', '.join(accelerator_names())}, custom")
    return v


def _bounded(name: str, v, field: str | None = None, what: str = ""):
    """`v` within the input's schema bounds (core/inputs.py `lo`/`hi`, as the CLI checks them), else ValueError."""
    inp = I.BY_NAME.get(name)
    if inp is not None and ((inp.lo is not None and v < inp.lo) or (inp.hi is not None and v > inp.hi)):
        raise ValueError(f"{field or name}: {what}{v!r} is outside the accepted {inp.lo:g} to {inp.hi:g}")
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
            _bounded(name, v, what=f"range '{label}' ")
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
        n = self._count_float()
        if not n <= MAX_RANGE_VALUES:
            raise ValueError(f"{name}: the range has {'too many' if n == n else 'uncountably many'} values "
                             f"(more than {MAX_RANGE_VALUES:.0e}); widen the step")
        return self

    def _count_float(self) -> float:
        """The number of values of a linear or pow2 range as a float (inf when it overflows); log ranges are
        bounded by MAX_LOG_POINTS."""
        if self.step == "log":
            return float(self.n or LOG_POINTS)
        with np.errstate(over="ignore"):
            if self.step == "pow2":
                ratio = self.stop / self.start
                span = math.log2(ratio) if math.isfinite(ratio) else math.log2(self.stop) - math.log2(self.start)
            else:
                span = (self.stop - self.start) / self.step
        return math.floor(span + 1e-9) + 1.0 if math.isfinite(span) else math.inf

    def count(self, integer: bool = False) -> int:
        """Number of values, without expanding a linear or pow2 range (a log range, at most MAX_LOG_POINTS, is
        expanded: rounding can merge neighbours)."""
        if self.step == "log":
            return len(self.values(integer))
        return int(self._count_float())

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
        vals = [math.ldexp(a, i) for i in range(Range(a, b, step).count())]  # a·2^i, exact (from 5e-324 too)
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
    for given, x in zip(vals, out):
        key = (type(x) is str, x)
        if key in seen:
            raise ValueError(f"{name}: duplicate value {x!r}" + (f" ({given!r} is {x!r})" if given != x else ""))
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
        n_models = self.count("model") * ("model" in names) + self.count("n_params") * ("n_params" in names)
        if n_models > MAX_MODELS:
            raise ValueError(f"model: {n_models:,} presets and raw sizes; at most {MAX_MODELS:,} in one sweep "
                             "(vary an architecture field instead)")
        if not ({"model", "n_params"} & names or {"n_layers", "d_model", "n_heads"} <= names):
            raise ValueError("model: give model (presets or raw counts), n_params, or n_layers, d_model and n_heads")
        if "custom" in self._list("gpu"):
            missing = [k for k in I.CUSTOM_GPU_FIELDS if k not in names]
            if missing:
                raise ValueError(f"gpu: a custom accelerator needs {', '.join(missing)}")
        if "tokens_per_second" in names and "step_time_s" in names:
            raise ValueError("tokens_per_second: give either tokens_per_second or step_time_s with global_batch")
        if "step_time_s" in names and "global_batch" not in names:
            raise ValueError("step_time_s: needs global_batch (sequences per step) too")
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
    def from_json(cls, text: str | bytes) -> "SweepSpec":
        """From JSON text (bounded: size, depth, finite numbers — core/safejson.py)."""
        return cls.from_dict(safejson.loads(text, "spec"))

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
