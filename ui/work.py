"""Work a link may start, and memory that comes back (issue 16 items 1 and 2).

Admission. A page that evaluates many rows (the Parallel layout page's search, the Sweeps page's sweep) asks
`admit(work, key)` first, with the work's estimate (`core.work`: rows, bytes, seconds). Work that a link alone may
start — within `LINK_JOB_S` seconds and `LINK_JOB_BYTES` bytes, and within the visitor's budget of `LINK_BUDGET_S`
seconds of such work per session — runs at once; anything larger shows what it would run and a button, and runs on
the click. Either way it runs in the same queue as the sweeps (`core.sweep.SweepStore.run_work`/`ensure`), so a
server never evaluates more than one large job at a time whatever the number of visitors or links.

Memory. A janitor thread (one per process) returns memory once the sessions that used it are gone: every
`JANITOR_TICK_S` it ends the leases of closed sessions and drops the sweep tables nobody has shown for `IDLE_DROP_S`
(DuckDB frees their blocks and spill files), clears the data caches when no session is connected, and asks the
C allocator to return freed pages (`malloc_trim`). The caches themselves are bounded in bytes (`max_size` on each,
`server.maxCacheDataSize` for all of them together in .streamlit/config.toml). Spill directories that a killed server
left behind (named with its pid) are removed when the next one starts.
"""
from __future__ import annotations

import ctypes
import gc
import os
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path

import streamlit as st

from core.work import Work


LINK_JOB_S = 1.0  # the most estimated seconds one job may take when a link starts it alone
LINK_JOB_BYTES = 100e6  # … and the most bytes it may hold at its peak
LINK_BUDGET_S = 4.0  # estimated seconds of link-started work one visitor (session) may use; then every job waits
JANITOR_TICK_S = 20.0
IDLE_DROP_S = 60.0  # a sweep table nobody has shown for this long, and no lease holds, is dropped
SPILL_PREFIX = "planner-duckdb-"


def admit(work: Work, key: str, label: str, container=None) -> bool:
    """Whether to run `work` now: True when a link may start it on its own (within the per-job bounds and the
    visitor's budget, which it then spends), or when the visitor clicked its button; otherwise the page shows the
    estimate and a button (keyed `key`) and this returns False (the page stops or shows what it has)."""
    ss = st.session_state
    used = ss.setdefault("_work_used_s", 0.0)
    small = work.seconds <= LINK_JOB_S and work.peak_bytes <= LINK_JOB_BYTES
    if small and used + work.seconds <= LINK_BUDGET_S:
        ss["_work_used_s"] = used + work.seconds
        return True
    c = container or st
    why = ("larger than what a link starts on its own" if not small else
           f"this visit has used its {LINK_BUDGET_S:g} s of work that starts without a click")
    c.info(f"This {work.what} is {work.words()} — {why}. It runs in this server's queue when you click.",
           icon=":material/pending:")
    return c.button(f"{label} ({work.rows:,} {'layouts' if work.what == 'layout search' else 'rows'})",
                    type="primary", key=key)


# ---------------------------------------------------------------------------------------------------------------
# The janitor
# ---------------------------------------------------------------------------------------------------------------

def _active_sessions() -> int | None:
    """Connected sessions of this server (None when there is no runtime: AppTest, bare mode)."""
    try:
        from streamlit.runtime import Runtime
        if not Runtime.exists():
            return None
        return int(Runtime.instance()._session_mgr.num_active_sessions())
    except Exception:  # an internal change: the janitor then only trims tables
        return None


def release_memory() -> None:
    """Collect garbage and return freed heap pages to the system (glibc `malloc_trim`; a no-op elsewhere)."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def janitor_tick(store, clear_caches) -> dict:
    """One round: trim idle tables; with no session connected, clear the data caches; return memory."""
    dropped = store.trim(IDLE_DROP_S) if store is not None else 0
    active = _active_sessions()
    cleared = False
    if active == 0:
        clear_caches()
        cleared = True
    release_memory()
    return {"dropped": dropped, "active": active, "cleared": cleared}


@st.cache_resource(show_spinner=False, max_entries=1)
def start_janitor(version: str, _store) -> threading.Thread:
    """The process's janitor thread (daemon), started once; first it removes spill directories of dead servers.
    `_store()` gives the sweeps' store (ui.sweeps.store)."""
    sweep_stale_spill_dirs()

    def loop():
        while True:
            time.sleep(JANITOR_TICK_S)
            try:
                janitor_tick(_store(), st.cache_data.clear)
            except Exception:  # the janitor must never take the server down; the next tick tries again
                pass
    t = threading.Thread(target=loop, name="planner-janitor", daemon=True)
    t.start()
    return t


def spill_prefix() -> str:
    """The prefix of this process's private DuckDB spill directories (`core.db.private_temp_directory`)."""
    return f"{SPILL_PREFIX}{os.getpid()}-"


def sweep_stale_spill_dirs(root: str | Path | None = None) -> int:
    """Remove spill directories (`planner-duckdb-<pid>-…`) whose server process is gone (a killed server's
    `atexit` never ran); returns how many were removed."""
    root = Path(root or tempfile.gettempdir())
    n = 0
    for d in root.glob(f"{SPILL_PREFIX}*"):
        m = re.match(rf"^{SPILL_PREFIX}(\d+)-", d.name)
        if not m or not d.is_dir() or int(m.group(1)) == os.getpid():
            continue
        try:
            os.kill(int(m.group(1)), 0)
            continue  # that server is alive
        except ProcessLookupError:
            pass
        except PermissionError:
            continue  # another user's live process
        shutil.rmtree(d, ignore_errors=True)
        n += 1
    return n

