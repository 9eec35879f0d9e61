"""Budget — start from dollars and a deadline: the compute-optimal model and tokens (Chinchilla), the accelerator, GPU
count and layout that spend the budget within the deadline, with failures counted (core/budget.py). URL keys: prefix
`bu_`."""
import streamlit as st

from core.hardware import accelerator_names
from ui import charts as K, compute as C, fmt, layout

pg = layout.start("budget", "What does my budget train?",
                  "For each accelerator: the GPU-hours the budget buys, the compute they deliver at the run's own "
                  "predicted MFU and goodput, Chinchilla's compute-optimal model and tokens for it (Hoffmann et al. "
                  "2022, or your tokens per parameter), and the GPU count and layout that finish within the deadline — "
                  "ranked by Chinchilla's predicted loss (the same as `python -m core budget`).")
sb = st.sidebar
sb.header("Budget")
usd = pg.number("Budget (USD)", "usd", 2e6, 1e3, 1e10, step=1e5, container=sb)
days = pg.number("Deadline (days, with failures)", "days", 60.0, 0.1, 3650.0, step=1.0, container=sb)
tpp = pg.number("Tokens per parameter (blank = Chinchilla's optimum)", "tpp", None, 1.0, 10_000.0, container=sb)
gpus = pg.multi("Accelerators (none = every one with a price)", accelerator_names(), "accs", [], container=sb)
if usd is None or days is None:
    layout.input_error(ValueError("usd: give a budget and a deadline"))
    pg.stop()
try:
    res = C.budget(float(usd), float(days), tuple(gpus), tpp)
except ValueError as e:
    layout.input_error(e)
    pg.stop()

best = res["best"]
if best is None:
    st.warning(f"No accelerator trains a model with {fmt.usd(usd)} within {days:g} days. Raise the budget or the "
               "deadline.", icon=":material/block:")
else:
    st.markdown(f"**Best:** {best['n_params'] / 1e9:,.1f}B parameters on {best['tokens'] / 1e12:,.2f}T tokens, "
                f"{best['n_gpus']:,} × {fmt.inert(best['gpu'])}")
    k = st.columns(5)
    k[0].metric("Parameters", f"{best['n_params'] / 1e9:,.1f} B", border=True)
    k[1].metric("Tokens", f"{best['tokens'] / 1e12:,.2f} T", f"{best['tokens_per_param']:.0f} per parameter",
                delta_color="off", delta_arrow="off", border=True)
    k[2].metric("GPUs", f"{best['n_gpus']:,} × {best['gpu']}", border=True)
    k[3].metric("Days with failures", f"{best['days_with_failures']:,.1f}",
                f"80 %: up to {best['days_high_with_failures']:,.1f}", delta_color="off", delta_arrow="off",
                border=True)
    k[4].metric("Cost with failures", fmt.usd(best["cost_with_failures_usd"]), border=True)
    if not best["validated"]:
        st.caption("The layout is of a class or chip no published run validates: its interval is widened "
                   "(core/intervals.py).")
    df = C.budget_table(res)
    layout.chart(K.budget_options(df), "bu_chart")
    st.dataframe(df, hide_index=True, width="stretch",
                 column_config={"cost with failures (USD)": st.column_config.NumberColumn(format="dollar"),
                                "MFU": st.column_config.NumberColumn(format="percent"),
                                "goodput": st.column_config.NumberColumn(format="percent")})
    shape = {**best["shape"], "gpu": best["gpu"], "n_gpus": best["n_gpus"], "tokens": best["tokens"],
             **best["layout"]}
    st.page_link("pages/01_calculator.py", label="Open the best answer in the Calculator", icon=":material/calculate:",
                 query_params=layout.calculator_link(pg, shape))
    layout.download_csv("Options (CSV)", lambda: df, "budget_options.csv", "bu_dl")
if res["left_out"]:
    with st.expander(f"Left out ({len(res['left_out'])})"):
        st.markdown("\n".join(f"- **{fmt.inert(k)}**: {fmt.inert(v)}" for k, v in res["left_out"].items()))
st.caption("Chinchilla's Approach 3 with its unrounded coefficients (core/scaling.py) trains about 60 tokens per "
           "parameter at these budgets; its Approaches 1 and 2 about 20 — give 20 above for those. The model is a "
           "Llama-3-style dense shape of that size; failures at Llama 3's published rate (core/goodput.py).")
pg.finish()
