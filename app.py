"""Landing page of the training-run planner (file-based multipage app: the other pages are pages/NN_name.py)."""
import streamlit as st

from ui.state import Page
from ui import compute as _warm  # noqa: F401  (import pandas/altair/core now, so the first page a visitor opens from
#                                                here starts faster)
from ui import explain as X, layout, registry

layout.setup(registry.HOME)
Page(registry.HOME.id)  # so that a page opened from here is entered again (a link's parameters then set all its inputs)
st.title("Training planner")
st.markdown("**Will this training run fit, how long will it take, what will it cost, which limit binds — and what "
            "do I change?** Pick a model, a recipe and the hardware; every page answers in seconds, every input is "
            "in the link (copy the address bar to share exactly what you see), and every chart's numbers download "
            "as CSV.")

st.subheader("Pages")
layout.page_links()

st.subheader("Start from a published example")
for ex in X.EXAMPLES:  # each link sets the Calculator's inputs; the ones it does not name start from their defaults
    st.page_link(registry.page("calculator").file, label=ex.label, icon=ex.icon, query_params=ex.link)
    st.caption(ex.detail)

st.subheader("The three ideas behind the numbers")
st.markdown(X.WHY_16)
st.markdown(X.WHY_S2)
st.markdown(X.WHY_MFU)
st.caption("Memory is shown in GB (10⁹ bytes, as datasheets and the ZeRO paper count) or GiB (2³⁰ bytes, what "
           "PyTorch prints as 'GB'); every label says which. " + X.SOURCES)
