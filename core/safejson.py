"""Bounded JSON for text that comes from a user: sweep specs and tokens, Hugging Face config.json files and uploads.

Python's `json` has no limits of its own: ``[`` × 200,000 raises RecursionError (a traceback, with file paths, in
a Streamlit page), a 10,000-digit integer raises an unrelated ValueError, ``NaN`` and ``1e999`` come back as
non-finite floats, a duplicated key silently keeps its last value, and a path such as ``/dev/zero`` reads forever.
`loads` and `read` bound all of them and raise `ValueError` whose text starts with the field (``spec: …``,
``config: …``), the core's convention for a message a page or the CLI shows as it is.

Nesting is measured before parsing, in one vectorised pass over the text with its string literals blanked out, so
no input can make the parser recurse beyond `MAX_DEPTH`.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np

MAX_BYTES = 1 << 20  # 1 MiB: a spec, a token's JSON or a config.json is a few KB
MAX_DEPTH = 32  # a spec nests 3 deep, a Hugging Face config 3-4 (rope_scaling, text_config)
MAX_NUMBER_CHARS = 100  # the longest number literal accepted (a float needs 25)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_OPEN = np.zeros(256, dtype=np.int8)
_OPEN[[ord("["), ord("{")]] = 1
_OPEN[[ord("]"), ord("}")]] = -1


def depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON text (brackets inside strings do not count). An
    unterminated string leaves its brackets counted, which can only overstate the depth."""
    bare = _STRING.sub('""', text).encode("utf-8", "replace")
    if not bare:
        return 0
    steps = _OPEN[np.frombuffer(bare, dtype=np.uint8)]
    return int(max(0, np.cumsum(steps, dtype=np.int64).max()))


def loads(text: str | bytes, field: str, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH):
    """Parse JSON text from a user, or raise ValueError naming `field`: larger than `max_bytes`, not UTF-8, nested
    deeper than `max_depth`, invalid, a non-finite or over-long number, or an object with a key given twice."""
    if isinstance(text, (bytes, bytearray)):
        if len(text) > max_bytes:
            raise ValueError(f"{field}: larger than {_size(max_bytes)}")
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise ValueError(f"{field}: not valid JSON (not UTF-8 text: {e.reason} at byte {e.start})") from None
    elif not isinstance(text, str):
        raise ValueError(f"{field}: expected JSON text, got {type(text).__name__}")
    elif len(text) > max_bytes or len(text.encode("utf-8", "replace")) > max_bytes:
        raise ValueError(f"{field}: larger than {_size(max_bytes)}")
    d = depth(text)
    if d > max_depth:
        raise ValueError(f"{field}: nested {d:,} levels deep; at most {max_depth} are accepted")
    try:
        return json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant,
                          object_pairs_hook=_object)
    except json.JSONDecodeError as e:
        raise ValueError(f"{field}: not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})") from None
    except _Refused as e:
        raise ValueError(f"{field}: {e}") from None
    except (RecursionError, ValueError) as e:  # not reachable after the checks above; never a traceback
        raise ValueError(f"{field}: not accepted as JSON ({type(e).__name__})") from None


def read(path: str | Path, field: str, max_bytes: int = MAX_BYTES) -> bytes:
    """At most `max_bytes` of a file (ValueError naming `field` if it is larger, or cannot be read): a device such
    as /dev/zero or a huge file costs one bounded read."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as e:
        raise ValueError(f"{field}: cannot read {str(path)[:200]!r}: {e.strerror or type(e).__name__}") from None
    if len(raw) > max_bytes:
        raise ValueError(f"{field}: {str(path)[:200]!r} is larger than {_size(max_bytes)}")
    return raw


class _Refused(Exception):
    pass


def _size(n: int) -> str:
    return f"{n // (1 << 20)} MiB" if n % (1 << 20) == 0 else f"{n:,} bytes"


def _int(s: str) -> int:
    if len(s) > MAX_NUMBER_CHARS:
        raise _Refused(f"a number of {len(s):,} digits is out of range")
    return int(s)


def _float(s: str) -> float:
    if len(s) > MAX_NUMBER_CHARS:
        raise _Refused(f"a number of {len(s):,} characters is out of range")
    v = float(s)
    if not math.isfinite(v):
        raise _Refused(f"the number {s} is out of range (beyond ±1.8e308)")
    return v


def _constant(s: str):
    raise _Refused(f"{s} is not a number JSON allows")


def _object(pairs: list) -> dict:
    out = {}
    for k, v in pairs:
        if k in out:
            raise _Refused(f"key {k[:100]!r} is given twice")
        out[k] = v
    return out
