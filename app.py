"""Landing page of the training-run planner (file-based multipage app: the other pages are pages/NN_name.py)."""
import streamlit as st

from ui import compute as _warm, explain as X, layout  # noqa: F401  (compute: import pandas/altair/core now,
#                                                       so the first page a visitor opens from here starts faster)

layout.setup("Home", ":material/memory:")
st.title("Training planner")
st.markdown("**Will this training run fit, how long will it take, what will it cost, which limit binds — and what "
            "do I change?** Pick a model, a recipe and the hardware; every page answers in seconds, every input is "
            "in the link (copy the address bar to share exactly what you see), and every chart's numbers download "
            "as CSV.")

st.subheader("Pages")
layout.page_links()

st.subheader("Start from the seeds' examples")
st.page_link("pages/01_calculator.py", label="The seeds' 7B on one 80 GB H100: it does not fit — the optimizer state "
             "alone crosses the line", icon=":material/block:",
             query_params={"model": "gpt-3-6.7b", "gpus": "1", "seq": "512"})
st.page_link("pages/01_calculator.py", label="A 1.24B fine-tune on a 24 GB GPU at 1,024 tokens: it fits, tightly",
             icon=":material/check_circle:",
             query_params={"model": "llama-3.2-1b", "gpus": "1", "seq": "1024", "gpu": "rtx-4090"})
st.page_link("pages/01_calculator.py", label="70B on 15T tokens, 1,024 H100s at 50% MFU: ≈145 days (CS336's ≈144)",
             icon=":material/schedule:",
             query_params={"model": "llama-3.1-70b", "gpus": "1024", "tokens": "15000", "zero": "3",
                           "flash": "true", "attn": "none"})

st.subheader("The three ideas behind the numbers")
st.markdown(X.WHY_16)
st.markdown(X.WHY_S2)
st.markdown(X.WHY_MFU)
st.caption("Memory is shown in GB (10⁹ bytes, as datasheets and the ZeRO paper count) or GiB (2³⁰ bytes, what "
           "PyTorch prints as 'GB'); every label says which. " + X.SOURCES)
