"""Unit constants and the one place where SI quantities become human text.

Inside the core every quantity is SI: bytes, FLOPs, FLOP/s, bytes/s, seconds, dollars.
Memory is shown either decimal (GB = 1e9 bytes, as datasheets and the ZeRO paper use) or
binary (GiB = 2**30 bytes, as PyTorch logs print it); the label always says which.
"""
from __future__ import annotations

import math
import re

GB = 1e9  # decimal gigabyte (datasheets, seeds, ZeRO paper)
GiB = 2.0**30  # binary gibibyte (PyTorch "GB")
MB = 1e6
TB = 1e12
TFLOP = 1e12
SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86400.0

# A number as people type it in a flag, a link or a filter: ASCII only. Python's float() and int() also read other
# scripts' digits (Arabic-Indic '٤٠٩٦', full-width '４０９６'), which nobody means as a setting; they are refused.
_NUMBER = re.compile(r"^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$", re.ASCII)


def is_ascii_number(text) -> bool:
    """Whether `text` is a plain ASCII decimal number (optional sign, digits, point, exponent): what every parser of
    user text accepts as a number (Python's float() and int() also read other scripts' digits: '٤٠٩٦' is 4096)."""
    return isinstance(text, str) and bool(_NUMBER.match(text))


def parse_number(text: str, field: str) -> float:
    """`text` as a float when it is a plain ASCII decimal number (optional sign, digits, point, exponent); else
    ValueError naming `field` ("inf", "nan", other scripts' digits, thousands separators are not numbers here)."""
    if not is_ascii_number(text):
        shown = text if isinstance(text, str) and len(text) <= 40 else f"{str(text)[:39]}…"
        raise ValueError(f"{field}: expected a number (ASCII digits), got {shown!r}")
    return float(text)


def fmt_bytes(n: float, unit: str = "GB") -> str:
    """'12.3 GB' (1e9) or '11.5 GiB' (2^30)."""
    if n is None or (isinstance(n, float) and math.isnan(n)):
        return "—"
    if unit == "GiB":
        return f"{n / GiB:,.2f} GiB"
    if unit == "MB":
        return f"{n / MB:,.1f} MB"
    return f"{n / GB:,.2f} GB"


def fmt_si(x: float, unit: str = "", digits: int = 3) -> str:
    """Engineering notation: SI prefixes up to exa, scientific notation above 1e21.

    FLOP totals are conventionally written in scientific notation; rates use prefixes.
    """
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if x == 0:
        return f"0 {unit}".strip()
    prefixes = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, ""),
                (1e-3, "m"), (1e-6, "µ"), (1e-9, "n")]
    ax = abs(x)
    if ax >= 1e21:
        return f"{x:.{digits - 1}e} {unit}".strip()
    for scale, p in prefixes:
        if ax >= scale:
            return f"{x / scale:.{digits}g} {p}{unit}".strip()
    return f"{x:.{digits - 1}e} {unit}".strip()


def fmt_count(n: float) -> str:
    """Parameter and token counts: '8.03 B', '405 B', '1.4 T', '16.4 k' (B = billion, T = trillion)."""
    if n is None or (isinstance(n, float) and not math.isfinite(n)):
        return "—"
    for scale, p in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= scale:
            return f"{n / scale:,.3g} {p}"
    return f"{n:,.0f}"


def fmt_duration(seconds: float) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "—"
    days = seconds / SECONDS_PER_DAY
    if days >= 1:
        return f"{days:,.1f} days"
    hours = seconds / SECONDS_PER_HOUR
    if hours >= 1:
        return f"{hours:,.1f} h"
    return f"{seconds:,.1f} s"
