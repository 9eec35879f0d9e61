"""Display formatting: SI quantities to text, with the memory unit always named (GB = 10⁹ bytes, GiB = 2³⁰ bytes).
Thin layer over `core.units` so the CLI and the app print numbers the same way."""
from __future__ import annotations

import math

from core.units import GB, SECONDS_PER_DAY, GiB, fmt_bytes, fmt_duration, fmt_si

UNIT_HELP = "GB = 10⁹ bytes (datasheets, the ZeRO paper, the seeds); GiB = 2³⁰ bytes (what PyTorch prints as 'GB')."


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
    """Parameter/token counts: '8.03 B', '405 B', '1.4 T'."""
    if _bad(n):
        return "—"
    for scale, p in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= scale:
            return f"{n / scale:,.3g} {p}"
    return f"{n:,.0f}"


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


def gb_value(n: float, unit: str) -> float:
    return n / (GB if unit == "GB" else GiB)
