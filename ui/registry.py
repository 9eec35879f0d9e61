"""The app's pages, as data: one row per page. The sidebar, the landing page's list, the tests (AppTest and browser)
and the benchmark all read this tuple, so adding a page takes two files: `pages/NN_name.py` and its row here.

A page's id is its file name without the `NN_` order prefix; it is also its URL path (`pages/02_fit_map.py` is
served at `/fit_map`: Streamlit's file-based navigation, kept so that shared links keep working) and the name the
page passes to `ui.layout.start`. The landing page, `app.py`, is served at `/`.

Plain data, no Streamlit import: the benchmark and the browser harness read it without loading the app."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the key of the sidebar container holding the page links (ui.layout draws it; the browser harness finds it by the
# CSS class Streamlit gives a keyed container, `st-key-<key>`)
NAV_KEY = "page_nav"


@dataclass(frozen=True)
class PageInfo:
    file: str  # from the repository root, as st.page_link, st.switch_page and AppTest name a page
    title: str  # the sidebar's label, the browser tab's title and the landing page's link
    icon: str
    prefix: str  # every URL key of the page starts with it (ui.state.Page); "" for the Calculator and Home
    charts: int  # Altair charts the page draws with its default inputs (the tests and the benchmark wait for them)
    blurb: str  # one line on the landing page

    @property
    def id(self) -> str:
        """`fit_map` for pages/02_fit_map.py; `home` for the entrypoint."""
        return re.sub(r"^\d+_", "", Path(self.file).stem) if self.file.startswith("pages/") else "home"

    @property
    def url_path(self) -> str:
        """The path after the server's address: "" for the landing page, the id for the others."""
        return self.id if self.file.startswith("pages/") else ""


HOME = PageInfo("app.py", "Home", ":material/home:", "", 0,
                "What the planner answers, published examples to start from, and the three ideas behind the numbers.")
PAGES = (
    PageInfo("pages/01_calculator.py", "Calculator", ":material/calculate:", "", 4,
             "Will it fit? Memory per GPU, time, cost, and the cheapest changes when it does not fit."),
    PageInfo("pages/02_fit_map.py", "Fit map", ":material/grid_view:", "fm_", 2,
             "Heatmaps of the fit region: model size × GPU count, sequence length × micro-batch."),
    PageInfo("pages/03_activations.py", "Activations", ":material/show_chart:", "ac_", 2,
             "Activation memory against sequence length: recomputation modes, the s² term."),
    PageInfo("pages/04_roofline.py", "Roofline", ":material/speed:", "rf_", 1,
             "Compute- or memory-bound? A model's ops on the roofline of one or more accelerators."),
    PageInfo("pages/05_time_cost.py", "Time & cost", ":material/payments:", "tc_", 1,
             "Days against dollars over accelerators × counts, with the Pareto frontier."),
    PageInfo("pages/06_sweeps.py", "Sweeps", ":material/table_view:", "sw_", 2,
             "Build a sweep, run it into DuckDB, filter, summarise and download it."),
    PageInfo("pages/07_check_pytorch.py", "Check against PyTorch", ":material/science:", "pt_", 1,
             "The activation ledger and FLOP counts set against a real PyTorch model (optional torch)."),
    PageInfo("pages/08_parallel_layout.py", "Parallel layout", ":material/account_tree:", "pl_", 2,
             "How to lay a run out on N GPUs: every tp × pp × cp × ep layout ranked by its predicted step."),
    PageInfo("pages/09_budget.py", "Budget", ":material/savings:", "bu_", 1,
             "Start from dollars and a deadline: the compute-optimal model, tokens, accelerator and GPU count."),
)
NAV = (HOME,) + PAGES  # the sidebar, in this order
_BY_ID = {p.id: p for p in NAV}


def page(page_id: str) -> PageInfo:
    """The row of a page by its id (`calculator`, `fit_map`, …, `home`)."""
    return _BY_ID[page_id]
