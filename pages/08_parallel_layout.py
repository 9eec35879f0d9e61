"""Parallel layout — how should this run be laid out on N GPUs? Every valid tensor × pipeline × context × expert
parallel layout (with virtual stages, micro-batch, ZeRO stage, recomputation and sequence parallelism) ranked by the
predicted step time or the run's cost, or the high end of either's 80 % interval (core/plan.py OBJECTIVES,
core/steptime.py); each row opens in the Calculator."""
import pandas as pd
import streamlit as st

from core.plan import LAYOUT, OBJECTIVE_WORDS, OBJECTIVES, layout_label
from ui import compute as C, explain as X, fmt, layout, pickers, step_charts as SK, work

pg = layout.start("parallel_layout", "How should I lay this run out?",
                  "Every layout of the model on the GPUs that the rules accept and that fits with the advisor's "
                  "headroom margin, ranked by the predicted step (or the run's cost, or the high end of either's 80 % "
                  "interval: Rank by) — kernels at measured achievable rates, exposed "
                  "communication on the links the groups use, the pipeline bubble and the optimizer step. Sources for "
                  "every constant: data/accelerators.csv and data/efficiency.csv.")
sb = st.sidebar
sb.header("Model")
inputs = pickers.model_picker(pg, sb)
sb.header("Hardware and batch")
inputs.update(pickers.gpu_picker(pg, sb))
cols = sb.columns(2)
n_gpus = pg.input("n_gpus", cols[0])
gbs = pg.input("global_batch", cols[1])
inputs.update(pickers.batch_inputs(pg, sb, mb=False))
inputs["tokens"] = pg.input("tokens", sb)
objective = pg.select("Rank by", OBJECTIVES, "obj", "time", container=sb, radio=True,
                      help="; ".join(f"{k}: {v}" for k, v in OBJECTIVE_WORDS.items()))
top = pg.integer("Layouts to list", "top", 10, 1, 100, container=sb)
inputs.update(pickers.rest(pg, sb, skip=LAYOUT + ("mfu",)))  # the layout is what this page searches
if gbs is not None:
    inputs["global_batch"] = gbs

key = tuple(sorted(inputs.items()))
try:
    cost = C.plan_work(key, (n_gpus,))  # what the search costs, before it runs: a link alone starts a small one
    if not work.admit(cost, "pl_run", "Search the layouts"):
        pg.stop()
    res = C.plan_layouts(key, (n_gpus,), objective, top)
except ValueError as e:
    layout.input_error(e)
    pg.stop()
best = res["top"]
st.caption(f"{res['searched']:,} layouts searched · {res['valid']:,} valid · {res['fit']:,} fit with the margin · "
           f"global batch {res['global_batch']:,} sequences.")
if best.empty:
    st.warning(f"No layout fits on {n_gpus:,} GPUs with this global batch: more GPUs, a shorter sequence, or a global "
               "batch that is a multiple of more data-parallel degrees.", icon=":material/block:")
    pg.stop()
b = best.iloc[0]
st.markdown(f"**Best layout:** {fmt.inert(layout_label(b))}"
            + (f" (the same result: {fmt.inert('; '.join(b['equivalents']))})" if len(b["equivalents"]) else ""))
k = st.columns(5)
k[0].metric("Predicted step", fmt.si(b["predicted_step_time_s"], "s"), border=True,
            help=X.interval_words(b))
k[1].metric("Predicted MFU", fmt.pct(b["predicted_mfu"], 1), border=True,
            help="model FLOPs per second ÷ (GPUs × peak)")
k[2].metric("Tokens/s (whole job)", fmt.count(b["predicted_tokens_per_s"]), border=True)
k[3].metric("Run", fmt.duration_days(b["days"]), border=True,
            help=f"{fmt.count(inputs['tokens'])} tokens at the predicted step")
k[4].metric("Cost", fmt.usd(b["cost_usd"]), border=True, help="GPU-hours × the catalog's (or your) price")
st.caption(X.interval_words(b) + f"; run {fmt.duration_days(b['days_low'])} – {fmt.duration_days(b['days_high'])}"
           + (f", {fmt.usd(b['cost_low_usd'])} – {fmt.usd(b['cost_high_usd'])}" if pd.notna(b["cost_low_usd"])
              else ""))
if not b["validated"]:
    bv = res.get("best_validated")
    st.warning(X.NOT_VALIDATED + (f" The best layout of a validated class: **{fmt.inert(layout_label(bv))}**, step "
                                  f"{fmt.si(bv['predicted_step_time_s'], 's')} (80 %: up to "
                                  f"{fmt.si(bv['predicted_step_time_high_s'], 's')}), MFU "
                                  f"{fmt.pct(bv['predicted_mfu'], 1)}."
                                  if bv else " No layout found is of a validated class."), icon=":material/help:")

st.subheader("Where the step goes, best layouts first")
layout.chart(SK.step_breakdown(SK.step_parts_long(best)), "pl_breakdown")
shown, config = fmt.record_table(best[["layout", "predicted_step_time_s", "predicted_step_time_low_s",
                                       "predicted_step_time_high_s", "validated", "predicted_mfu",
                                       "predicted_tokens_per_s", "total_bytes", "headroom_bytes", "days", "cost_usd",
                                       "cost_low_usd", "cost_high_usd"]])  # units: core/record.py
st.dataframe(shown, column_config=config, hide_index=True, width="stretch")
st.markdown("**Open a layout in the Calculator** (its whole configuration):")
for i, r in enumerate(best.itertuples(), 1):
    row = {k: getattr(r, k) for k in LAYOUT}
    st.page_link("pages/01_calculator.py", label=f"{i}. {layout_label(r._asdict())}", icon=":material/calculate:",
                 query_params=layout.calculator_link(pg, {**inputs, **row, "n_gpus": n_gpus,
                                                          "global_batch": int(r.global_batch)}))
st.subheader("Best predicted MFU for each tensor × pipeline degree")
layout.chart(SK.tp_pp_heatmap(res["by_tp_pp"]), "pl_heat")
layout.download_csv("Ranked layouts (CSV)", lambda: best, "parallel_layout.csv", "pl_dl")
st.caption("Memory in GB (10⁹ bytes). The step's parts: compute and recompute kernels, exposed tensor/context/"
           "expert/data-parallel communication, the pipeline bubble (pp − 1)/v of a micro-batch, stage-to-stage "
           "sends and the optimizer step — docs/formulas.md gives each with its source.")
pg.finish()
