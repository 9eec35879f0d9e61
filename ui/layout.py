"""Page furniture shared by every page: page config, input errors, downloads, chart rendering."""
from __future__ import annotations

import functools
import re
from typing import Callable

import pandas as pd
import streamlit as st

from core.inputs import calculator_params
from core.sweep import code_version

from . import registry, sweeps, work
from .fmt import inert
from .state import Page


def setup(page: registry.PageInfo) -> None:
    """Page config and the sidebar's page links, with the registry's titles. Streamlit's own page list (file names)
    is hidden by `client.showSidebarNavigation = false`; the pages stay in pages/, served at their old paths."""
    st.set_page_config(page_title=f"{page.title} · Training planner", page_icon=page.icon, layout="wide")
    with st.sidebar.container(key=registry.NAV_KEY):
        for p in registry.NAV:
            st.page_link(p.file, label=p.title, icon=p.icon)


def start(page_id: str, heading: str, caption: str) -> Page:
    """Page config, the URL-bound input state, the title and the one-line explanation of a page."""
    page = registry.page(page_id)
    setup(page)
    work.start_janitor(code_version(), sweeps.store)  # once per process: memory comes back (ui/work.py)
    st.sidebar.divider()  # between the page list and the page's own inputs
    pg = Page(page.id, prefix=page.prefix)
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
    """An input's error box: the field in bold, the reason after it — both inert (`fmt.inert`): a message may
    echo a link's value, an upload's field or a filter, and none of it may render as markdown."""
    field, reason = split_error(e)
    (where or st).error(f"**{inert(field)}** — {inert(reason, 600)}", icon=":material/error:")


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
    """Draw an Altair chart at full width with a stable key (charts with `on_select` must keep their identity).

    Streamlit converts the chart with `to_dict()`, which validates it against the Vega-Lite JSON schema: a fifth of
    a Calculator rerun (bench/RESULTS.md "App"). The charts are built by ui/charts.py alone and every builder is
    validated by the tests (tests/test_app_units.py converts each with validation), so a page converts without it."""
    object.__setattr__(ch, "to_dict", functools.partial(type(ch).to_dict, ch, validate=False))
    return (where or st).altair_chart(ch, key=key, width="stretch", **kw)


def page_links(where=None) -> None:
    """Every page but Home, with its blurb (the landing page's list)."""
    w = where or st
    for p in registry.PAGES:
        w.page_link(p.file, label=f"**{p.title}** — {p.blurb}", icon=p.icon)


def calculator_link(pg: Page, inputs: dict) -> dict:
    """The Calculator's URL parameters for a whole configuration (the flat inputs, core units): every schema input
    it names, where the model comes from, and this page's memory unit. A Fit map or Sweeps cell and a layout row
    open in the Calculator with it, and show the same numbers there."""
    out = calculator_params(inputs)
    unit = pg.values.get("unit")
    if unit:
        out["unit"] = unit
    return out
