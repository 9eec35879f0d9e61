"""Page furniture shared by every page: page config, input errors, downloads, chart rendering."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

import pandas as pd
import streamlit as st

from .state import Page

ROOT = Path(__file__).resolve().parent.parent
PAGES = {
    "calculator": ("pages/01_calculator.py", "Calculator", ":material/calculate:",
                   "Will it fit? Memory per GPU, time, cost, and the smallest change when it does not fit."),
    "fit_map": ("pages/02_fit_map.py", "Fit map", ":material/grid_view:",
                "Heatmaps of the fit region: model size × GPU count, sequence length × micro-batch."),
    "activations": ("pages/03_activations.py", "Activations", ":material/show_chart:",
                    "Activation memory against sequence length: recomputation modes, the s² term."),
    "roofline": ("pages/04_roofline.py", "Roofline", ":material/speed:",
                 "Compute- or memory-bound? A model's ops on the roofline of one or more accelerators."),
    "time_cost": ("pages/05_time_cost.py", "Time & cost", ":material/payments:",
                  "Days against dollars over accelerators × counts, with the Pareto frontier."),
    "sweeps": ("pages/06_sweeps.py", "Sweeps", ":material/table_view:",
               "Build a sweep, run it into DuckDB, filter, summarise and download it."),
    "check_pytorch": ("pages/07_check_pytorch.py", "Check against PyTorch", ":material/science:",
                      "The activation ledger and FLOP counts set against a real PyTorch model (optional torch)."),
}


def setup(title: str, icon: str = ":material/memory:") -> None:
    st.set_page_config(page_title=f"{title} · Training planner", page_icon=icon, layout="wide")


def start(page_id: str, heading: str, caption: str, prefix: str = "") -> Page:
    """Page config, the URL-bound input state, the title and the one-line explanation of a page."""
    _path, title, icon, _blurb = PAGES[page_id]
    setup(title, icon)
    pg = Page(page_id, prefix=prefix)
    st.title(heading)
    st.caption(caption)
    return pg


# a field name: one identifier-like word (`tp·pp`, `n_gpus`, `weight_dtype/grad_dtype`), or two words (`ZeRO
# stages`, `filter 1`), optionally with the column in parentheses (`filter 1 (n_gpus)`) — never a sentence
_FIELD = re.compile(r"^[\w·/.\-]+(?: [\w·/.\-]+)?(?: \([\w·/.\-]+\))?$")


def split_error(e: ValueError) -> tuple[str, str]:
    """'field: reason' (the core's convention) -> (field, reason); 'input' when the text before ': ' is no field."""
    msg = str(e)
    field, sep, reason = msg.partition(": ")
    if not sep or not _FIELD.match(field.strip()):
        return "input", msg
    return field.strip(), reason.strip()


def input_error(e: ValueError, where=None) -> None:
    field, reason = split_error(e)
    (where or st).error(f"**{field}** — {reason}", icon=":material/error:")


def config_or_stop(pg: Page, inputs: dict):
    """Build the Config, or show the error naming the field and stop the page (inputs stay on screen)."""
    from .compute import build_config
    try:
        return build_config(inputs)
    except ValueError as e:
        input_error(e)
        pg.stop()


def download(label: str, data: Callable[[], bytes] | bytes | str, file_name: str, mime: str, key: str,
             where=None) -> None:
    """A download button whose file is built only on click when `data` is a callable (no rerun either way)."""
    (where or st).download_button(label, data=data, file_name=file_name, mime=mime, on_click="ignore", key=key,
                                  icon=":material/download:")


def download_csv(label: str, make: Callable[[], pd.DataFrame], file_name: str, key: str, where=None) -> None:
    """A download button whose CSV is built only on click (data=callable, no rerun)."""
    download(label, lambda: make().to_csv(index=False).encode("utf-8"), file_name, "text/csv", key, where)


def chart(ch, key: str, where=None, **kw):
    """Draw an Altair chart at full width with a stable key (charts with `on_select` must keep their identity)."""
    return (where or st).altair_chart(ch, key=key, width="stretch", **kw)


def page_links(current: str | None = None, where=None) -> None:
    w = where or st
    for pid, (path, title, icon, blurb) in PAGES.items():
        if pid == current or not (ROOT / path).exists():
            continue
        w.page_link(path, label=f"**{title}** — {blurb}", icon=icon)
