"""One grid path: `evaluate` over a product of axes, for the app's in-memory grids and the sweep engine alike.

Every input is one axis of a broadcast grid (NumPy shapes (k1,1,…), (1,k2,…), …), so each term of `evaluate` is
computed on the product of only the axes it depends on; the full size is reached only by the record columns.
Inputs that resolve through Python objects form compound axes, one position per combination: the model axis
(model → columns via `estimate.model_columns`) and the accelerator axis (accelerator × compute dtype → columns via
`estimate.gpu_columns`). A builder's refusal (a model shape or an accelerator the core rejects) flags its positions
with a reason code beyond the input rules' (`Reasons`), so the row is invalid with that message.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np

from . import inputs as I
from .estimate import evaluate, gpu_columns, model_columns
from .hardware import Accelerator
from .model import Model


class Reasons:
    """Reason texts: the input rules' (`inputs.REASONS`), then builder messages met along the way."""

    def __init__(self):
        self.extra: list[str] = []

    def code(self, msg: str) -> int:
        if msg not in self.extra:
            self.extra.append(msg)
        return len(I.REASONS) + self.extra.index(msg)

    @property
    def texts(self) -> tuple:
        return tuple(I.REASONS) + tuple(self.extra)


@dataclass
class Axis:
    """One grid axis: `eval_cols` feed `evaluate`, `out_cols` become output columns (values, or (codes, labels) for
    strings), `bad` holds a reason code per position (0 = fine) for combinations a builder refused."""

    name: str
    size: int
    eval_cols: dict
    out_cols: dict
    bad: np.ndarray | None = None


def labels(values) -> tuple[np.ndarray, list]:
    """(codes, labels) for a list of strings: labels in first-seen order."""
    uniq = list(dict.fromkeys(values))
    index = {v: i for i, v in enumerate(uniq)}
    return np.array([index[v] for v in values], dtype=np.int16), uniq


def out_values(name: str, values):
    """An input's values as an output column: labels for names and choices, int32, bool or float64."""
    kind = I.kind(name)
    if kind in ("choice", "str"):
        return labels([str(v) for v in values])
    if kind == "int":
        return np.array(values, dtype=np.int32)
    if kind == "bool":
        return np.array(values, dtype=bool)
    return np.array(values, dtype=np.float64)


def eval_values(name: str, values) -> np.ndarray:
    """An input's values as an `evaluate` column."""
    kind = I.kind(name)
    dtype = {"int": np.int64, "bool": bool, "float": np.float64}.get(kind)
    return np.array(values, dtype=dtype) if dtype else np.array(values)


def plain_axis(name: str, values: Sequence) -> Axis:
    """An input of `evaluate` taken as it is (an input that accepts "auto" — mfu — also sets `<name>_auto`;
    its output column holds NaN where the value is auto, and `time_source` says so)."""
    if I.BY_NAME[name].auto:
        auto = np.array([v == "auto" for v in values], dtype=bool)
        nums = np.array([np.nan if v == "auto" else float(v) for v in values], dtype=np.float64)
        return Axis(name, len(values), {name: nums, f"{name}_auto": auto}, {name: nums})
    return Axis(name, len(values), {name: eval_values(name, values)}, {name: out_values(name, values)})


def lookup_axis(name: str, values: Sequence, given: set) -> Axis:
    """A preset input (recipe, overhead): the preset's fields along this axis, except those given explicitly
    (as `config_from_inputs`: explicit inputs win)."""
    table = I.PRESET_INPUTS[name]
    fields = [f for f in I.PRESET_FIELDS[name] if f not in given]  # a preset that leaves a field: the schema default
    eval_cols = {}
    for f in fields:
        vals = [table[v].get(f, I.BY_NAME[f].default) for v in values]
        if I.BY_NAME[f].auto:  # mfu: "auto" along this axis sets mfu_auto
            eval_cols[f] = np.array([np.nan if x == "auto" else float(x) for x in vals], dtype=np.float64)
            eval_cols[f"{f}_auto"] = np.array([x == "auto" for x in vals], dtype=bool)
        else:
            eval_cols[f] = eval_values(f, vals)
    return Axis(name, len(values), eval_cols, {name: out_values(name, values)})


def model_axis(models: Sequence[Model | ValueError], names: Sequence[str], reasons: Reasons,
               out_cols: dict | None = None) -> Axis:
    """Models (or the ValueError their builder raised) → the model axis; `names` label the positions."""
    ok = [m for m in models if isinstance(m, Model)]
    fallback = ok[0] if ok else Model(n_layers=1, d_model=1, n_heads=1)  # placeholder; such rows are flagged
    bad = np.array([0 if isinstance(m, Model) else reasons.code(str(m)) for m in models], dtype=np.int16)
    cols = [model_columns(m if isinstance(m, Model) else fallback) for m in models]
    eval_cols = {k: np.array([c[k] for c in cols]) for k in cols[0]}
    eval_cols["n_params"] = eval_cols["n_params"].astype(np.float64)
    eval_cols["n_active_params"] = eval_cols["n_active_params"].astype(np.float64)
    return Axis("model", len(models), eval_cols, {"model": labels(list(names)), **(out_cols or {})},
                bad if bad.any() else None)


def gpu_axis(gpus: Sequence[Accelerator | ValueError], names: Sequence[str], dtypes: Sequence[str],
             reasons: Reasons, price_given: bool = False, out_cols: dict | None = None, given: set = frozenset(),
             prices: Sequence[float | None] | None = None) -> Axis:
    """Accelerators (or their builder's ValueError) with their compute dtypes → the accelerator axis: every
    column of `estimate.gpu_columns` (peak for the dtype, memory, price, the step-time constants), except the
    inputs in `given` (their own axes win) and the price when `price_given`; `prices`: each accelerator's price
    where it is not the catalog's (a price tier's, data/prices.csv)."""
    n = len(gpus)
    bad = np.zeros(n, dtype=np.int16)
    ok = next((g for g in gpus if isinstance(g, Accelerator)), None)
    rows = []
    for i, (g, dtype) in enumerate(zip(gpus, dtypes)):
        if not isinstance(g, Accelerator):
            bad[i] = reasons.code(str(g))
        base = g if isinstance(g, Accelerator) else (ok or Accelerator("placeholder", 1.0, 1.0, 1.0))
        rows.append(gpu_columns(base, dtype if isinstance(g, Accelerator) else "bf16",
                                None if prices is None else prices[i]))
    skip = set(given) | ({"price_per_gpu_hour"} if price_given else set())
    eval_cols = {k: np.array([r[k] for r in rows], dtype=np.float64) for k in rows[0] if k not in skip}
    return Axis("gpu", n, eval_cols, {"gpu": labels(list(names)), **(out_cols or {})}, bad if bad.any() else None)


def chunks(sizes: list[int], chunk_rows: int) -> Iterator[list[slice]]:
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


def box(base: dict, axes: Sequence[Axis], sl: Sequence[slice] | None = None) -> tuple[dict, tuple, dict, object]:
    """The `evaluate` columns of one box of the grid: `base` scalars overridden by each axis' slice, shaped to
    broadcast. Returns (columns, shape, output parts, first builder refusal per row or None)."""
    n = len(axes)
    sl = sl or [slice(None)] * n
    cols = dict(base)
    shape, parts, bad = [], {}, {}
    for i, (ax, s) in enumerate(zip(axes, sl)):
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
    # the model is built before the accelerator, and both before the input rules: the first refusal wins
    first_bad = None
    for k in ("gpu", "model"):
        if k in bad:
            first_bad = bad[k] if first_bad is None else np.where(bad[k] > 0, bad[k], first_bad)
    return cols, tuple(shape), parts, first_bad


def held(v: np.ndarray) -> np.ndarray:
    """The values a broadcast view holds: its first index along every axis of stride 0 (a view, no copy; a 0-d
    array as it is)."""
    return v[tuple(slice(0, 1) if st == 0 else slice(None) for st in v.strides)] if v.ndim else v


def flat(v, shape) -> np.ndarray:
    """A broadcastable column as a flat array of the box's rows."""
    v = np.asarray(v)
    if v.shape == shape and v.flags.c_contiguous:
        return v.reshape(-1)
    return np.broadcast_to(v, shape).copy().reshape(-1)  # copy() of the view: ~1.5× faster than its ravel()


def evaluate_box(base: dict, axes: Sequence[Axis], sl: Sequence[slice] | None = None,
                 reasons: Reasons | None = None, evaluate_fn: Callable = evaluate) -> tuple[dict, tuple, dict]:
    """`evaluate` over one box of the grid. Returns (record columns, shape, output parts); rows a builder refused
    are invalid with its reason (their `reason_code` points into `reasons.texts`)."""
    cols, shape, parts, bad = box(base, axes, sl)
    with np.errstate(all="ignore"):
        out = evaluate_fn(**cols)
    if bad is not None:
        code = np.where(bad > 0, bad, out["reason_code"])
        out["reason_code"] = np.broadcast_to(code, np.broadcast_shapes(np.shape(code), shape))
        out["valid"] = out["valid"] & (bad == 0)
        if reasons is not None:
            out["reason"] = np.asarray(reasons.texts, dtype=object)[out["reason_code"]]
        for k, v in out.items():
            if k not in ("valid", "reason", "reason_code") and np.asarray(v).dtype.kind == "f":
                out[k] = np.where(out["valid"], v, np.nan)
            elif k == "fits":
                out[k] = out[k] & out["valid"]
    return out, shape, parts


def pareto_mask(time_s, cost, ok) -> np.ndarray:
    """The Pareto front of a small frame (the app's grids): True where no other admissible point is at least as
    fast and as cheap with one strictly better. Tables in DuckDB use the SQL form (`core.db.pareto`)."""
    time_s, cost = np.asarray(time_s, dtype=np.float64), np.asarray(cost, dtype=np.float64)
    ok = np.asarray(ok, dtype=bool) & np.isfinite(time_s) & np.isfinite(cost)
    idx = np.where(ok)[0]
    order = idx[np.lexsort((cost[idx], time_s[idx]))]
    mask = np.zeros(len(time_s), dtype=bool)
    best = np.inf
    for i in order:  # sorted by time then cost: a point is on the front when it is cheaper than every faster one
        if cost[i] < best:
            mask[i] = True
            best = cost[i]
    return mask
