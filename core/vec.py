"""Vectorised helpers shared by the formulas (a leaf module: NumPy only).

A formula's string and small integer columns hold a few values each: the broadcast grid (core/grid.py) gives every
input its own axis, so a choice column is a 0-d array or a handful of entries. NumPy's set routines sort their
operands and cost 20–30 µs a call whatever the size; the sweep engine makes ~45 such calls per chunk.
"""
from __future__ import annotations

import numpy as np

SMALL = 64  # up to this many entries a Python set test is faster than np.isin's sort (measured: 1 µs against 20 µs)


def isin(x, names) -> np.ndarray:
    """`np.isin(x, names)` (a boolean array of x's shape): each value of x is one of `names`, a collection of names
    or numbers (a tuple, list, set or array; not a bare string). Values compare as Python's `in` compares them (1.0
    is 1; NumPy strings are str), as np.isin does for the columns the core passes."""
    x = np.asarray(x)
    if x.size > SMALL:
        return np.isin(x, list(names))
    s = frozenset(names.tolist() if isinstance(names, np.ndarray) else names)
    try:
        if x.ndim == 0:
            return np.asarray(x.item() in s)
        return np.fromiter((v in s for v in x.reshape(-1).tolist()), dtype=bool, count=x.size).reshape(x.shape)
    except TypeError:  # an object column holding arrays (validation's hand-built columns): NumPy's own comparison
        return np.isin(x, list(names))
