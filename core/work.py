"""What a piece of work will cost before it runs: rows evaluated, bytes held, seconds taken (issue 16 item 1).

A server that shares one process between visitors decides from these estimates which work a link may start on its
own (a page opened from a shared link) and which waits for a click: the bound is on what the work costs, not on each
input's range (65,536 GPUs is a fine input; a 900k-layout search started by a link alone is not). The constants are
measurements on the machine the app is developed on (2 cores; bench/RESULTS.md, "Load" and "Step time"), rounded to
the slow side; an estimate is a planning figure for admission, not a promise.

- Layout search (`core.plan.plan`): streams its candidates in `plan.PLAN_CHUNK_ROWS` chunks, so its memory is the
  chunk's working set whatever the search's size, and its time is layouts / PLAN_LAYOUTS_PER_S (measured 340k–1.0M
  layouts/s for dense to MoE models; 405B on 16,384 GPUs: 131,712 layouts in 0.39 s).
- Sweep into the app's database (`core.sweep.SweepStore`): rows / SWEEP_ROWS_PER_S to evaluate and insert (app
  chunks of 32k rows; the CLI's 2.07M rows/s into DuckDB, ~20 % slower in app chunks, halved again for a shared
  server), and SWEEP_BYTES_PER_ROW kept per row in DuckDB (resident or spilled: 6M rows of 71 columns took 400 MB
  resident + 1.8 GB spilled, ~370 bytes a row) plus the chunk's working set while it runs.
"""
from __future__ import annotations

from dataclasses import dataclass

PLAN_LAYOUTS_PER_S = 300_000.0  # the slow end of the measured 340k–1.0M layouts/s (core.plan streaming)
SWEEP_ROWS_PER_S = 600_000.0  # evaluate + insert into the app's DuckDB, shared 2-core server (see the docstring)
SWEEP_BYTES_PER_ROW = 370.0  # DuckDB's bytes per kept sweep row (resident or spilled)
CHUNK_RECORD_BYTES = 32_768 * 100 * 8 * 3  # one 32k-row chunk: ~100 float64 record columns, ×3 for temporaries


@dataclass(frozen=True)
class Work:
    """An estimate: what runs (`what`), how many rows, the bytes it holds at its peak (kept + working set), the
    bytes it keeps afterwards, and the seconds it takes."""

    what: str
    rows: int
    peak_bytes: float
    kept_bytes: float
    seconds: float

    def words(self) -> str:
        """'131,712 layouts, ≈0.4 s, ≈79 MB at its peak' (MB = 10⁶ bytes)."""
        unit = "layouts" if self.what == "layout search" else "rows"
        return (f"{self.rows:,} {unit}, ≈{self.seconds:.1f} s, ≈{self.peak_bytes / 1e6:,.0f} MB at its peak"
                + (f", {self.kept_bytes / 1e6:,.0f} MB kept" if self.kept_bytes else ""))


def plan_work(n_layouts: int) -> Work:
    """A layout search over `n_layouts` candidates (`core.plan.plan_spec(...).n_rows`)."""
    n = int(n_layouts)
    return Work("layout search", n, float(min(n, 32_768) / 32_768 * CHUNK_RECORD_BYTES), 0.0,
                n / PLAN_LAYOUTS_PER_S)


def sweep_work(n_rows: int) -> Work:
    """A sweep of `n_rows` evaluated into the app's database."""
    n = int(n_rows)
    kept = n * SWEEP_BYTES_PER_ROW
    return Work("sweep", n, kept + min(n, 32_768) / 32_768 * CHUNK_RECORD_BYTES, kept, n / SWEEP_ROWS_PER_S)
