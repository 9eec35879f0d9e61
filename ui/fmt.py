"""Display formatting: SI quantities to text, with the memory unit always named (GB = 10⁹ bytes, GiB = 2³⁰ bytes).
Thin layer over `core.units` so the CLI and the app print numbers the same way."""
from __future__ import annotations

import math

from core.units import GB, SECONDS_PER_DAY, GiB, fmt_bytes, fmt_count, fmt_duration, fmt_si

UNIT_HELP = "GB = 10⁹ bytes (datasheets, the ZeRO paper, CS336); GiB = 2³⁰ bytes (what PyTorch prints as 'GB')."


_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
# GFM's literal autolinks (``www.x``, ``http://x``, ``a@b.c``) are found in the text after escapes are resolved,
# so an escape does not stop them: an invisible WORD JOINER (U+2060) before each of these characters does (the
# patterns need ``www.``, ``http:`` and ``x@`` adjacent)
_BREAK_AUTOLINK = frozenset(".:@/")
_WORD_JOINER = "\u2060"
INERT_MAX_CHARS = 200  # an echoed name or value longer than this is cut (a link can carry kilobytes)


def inert(text, max_chars: int = INERT_MAX_CHARS) -> str:
    """User-supplied text (a link's parameter name or value, an uploaded file's field, a filter, a dataset name) as
    markdown that renders as exactly that text and nothing else: every ASCII punctuation character is
    backslash-escaped (CommonMark §2.4 allows it for all of them), so no image, link, emphasis, code span, HTML,
    emoji or colour directive (``:…:``, ``:red[…]``) or maths (``$``) can form, and an invisible word joiner goes
    before every ``.``, ``:``, ``@`` and ``/`` so no literal autolink (``www.``, ``http:``, ``a@b``) can either; line breaks, tabs and other control or format characters become spaces (no block structure:
    lists, headings, tables); at most `max_chars` characters (then "…"). The one renderer of user text in messages:
    every page's notes and errors pass user values through it. Never put its result inside a code span (escapes do
    not apply there)."""
    s = str(text)
    if len(s) > max_chars:
        s = s[: max_chars - 1] + "…"
    out = []
    for ch in s:
        if ch in _BREAK_AUTOLINK:  # escapes are resolved before GFM's literal autolinks are found: break them too
            out.append(_WORD_JOINER + "\\" + ch)
        elif ch in _PUNCTUATION:
            out.append("\\" + ch)
        elif not ch.isprintable() or ch in "\u2028\u2029":
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def _bad(x) -> bool:
    return x is None or (isinstance(x, float) and not math.isfinite(x))


def mem(n: float, unit: str = "GB") -> str:
    """'12.34 GB' or '11.49 GiB'."""
    return fmt_bytes(n, unit)


def both_bytes(n: float, first: str = "GB") -> str:
    """'80.00 GB (74.51 GiB)' — both units, the chosen one first."""
    if _bad(n):
        return "—"
    other = "GiB" if first == "GB" else "GB"
    return f"{fmt_bytes(n, first)} ({fmt_bytes(n, other)})"


def si(x: float, unit: str = "", digits: int = 3) -> str:
    return fmt_si(x, unit, digits)


def flops(x: float) -> str:
    """FLOP totals in scientific notation: '5.14e22 FLOPs'."""
    return "—" if _bad(x) else f"{x:.3g} FLOPs".replace("e+", "e")


def count(n: float) -> str:
    """Parameter/token counts: '8.03 B', '405 B', '1.4 T' (core.units.fmt_count, as the CLI prints them)."""
    return fmt_count(n)


def days(seconds: float) -> str:
    """A duration: '145.1 days', '2.4 h' under a day, '—' when unknown."""
    return fmt_duration(seconds)


def duration_days(n_days: float) -> str:
    """A duration given in days (a sweep's `days` column), written as `days` writes it."""
    return "—" if _bad(n_days) else fmt_duration(n_days * SECONDS_PER_DAY)


def gpus(n: int) -> str:
    """'1 GPU', '1,024 GPUs'."""
    return f"{n:,} GPU" + ("" if n == 1 else "s")


def usd(x: float) -> str:
    if _bad(x):
        return "—"
    if abs(x) >= 1e6:
        return f"${x / 1e6:,.2f} M"
    return f"${x:,.0f}"


def pct(frac: float, digits: int = 0) -> str:
    return "—" if _bad(frac) else f"{frac * 100:.{digits}f}%"


# Table columns in human units: display unit -> (SI units per display unit, Streamlit number format)
DISPLAY_UNITS = {
    "GB": (GB, "%.1f"), "GiB": (GiB, "%.1f"), "MB": (1e6, "%.1f"), "GFLOP": (1e9, "%.3g"), "TFLOP/s": (1e12, "%.1f"),
    "FLOP/B": (1.0, "%.3g"), "µs": (1e-6, "%.1f"), "ms": (1e-3, "%.1f"), "s": (1.0, "%.3g"), "USD": (1.0, "dollar"),
    "GPU-hours": (1.0, "localized"), "%": (0.01, "%.1f"), "count": (1.0, "localized"),
}


def table(df, columns: dict):
    """A frame for `st.dataframe` in human units: `columns` maps a source column (SI) to (title, display unit or
    None); returns (frame with the columns renamed 'title (unit)' and converted, its column_config). Sorting stays
    numeric (the values are numbers, only the format is human)."""
    import streamlit as st
    out, config = {}, {}
    for col, (title, unit) in columns.items():
        if unit is None:
            out[title] = df[col].to_numpy()
            continue
        per, form = DISPLAY_UNITS[unit]
        name = title if unit in ("USD", "count", "percent", "days", "GPU-hours", "FLOPs") else f"{title} ({unit})"
        name = f"{title} (GPU-hours)" if unit == "GPU-hours" and "hour" not in title else name
        out[name] = df[col].to_numpy() if unit == "count" else df[col].to_numpy(dtype=float) / per
        config[name] = st.column_config.NumberColumn(name, format=form)
    import pandas as pd
    return pd.DataFrame(out), config


# a record or input column's unit (core/record.py, core/inputs.py) -> its display unit in tables
_UNIT_DISPLAY = {"bytes": "GB", "FLOP/s": "TFLOP/s", "s": "s", "days": "days", "GPU-hours": "GPU-hours",
                 "USD": "USD", "USD per GPU-hour": "USD", "fraction": "percent", "count": "count",
                 "tokens/s": "count", "FLOPs": "FLOPs"}
DISPLAY_UNITS.update({"days": (1.0, "%.1f"), "percent": (1.0, "percent"), "FLOPs": (1.0, "%.3e")})


def record_table(df):
    """`table` for a frame of record and input columns (a sweep's rows, its frontier): each column's display unit
    and title come from its declaration (core/record.py, core/inputs.py) — bytes as GB, FLOP/s as TFLOP/s, USD as
    dollars, fractions as percent, counts with separators; other columns pass through."""
    from core import inputs as I, record as R
    spec = {}
    for col in df.columns:
        decl = R.BY_NAME.get(col) or I.BY_NAME.get(col)
        unit = getattr(decl, "unit", "") or ""
        key = next((k for k in _UNIT_DISPLAY if unit == k or unit.startswith(k + " ")), None)
        kind = getattr(decl, "kind", "")
        if key is None or kind not in ("float", "int") or not _numeric(df[col]):
            spec[col] = (col, None)
            continue
        shown = _UNIT_DISPLAY[key]
        title = col
        for suffix in ("_flops_per_s", "_bytes", "_usd", "_frac", "_s"):
            if col.endswith(suffix) and shown not in ("count", "percent"):
                title = col.removesuffix(suffix)
                break
        spec[col] = (title, shown)
    return table(df, spec)


def _numeric(s) -> bool:
    return s.dtype.kind in "iuf"


def gb_value(n: float, unit: str) -> float:
    return n / (GB if unit == "GB" else GiB)
