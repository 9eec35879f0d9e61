"""Parallel layout — how should this run be laid out on N GPUs? Every valid tensor × pipeline × context × expert
parallel layout (with virtual stages, micro-batch, ZeRO stage, recomputation and sequence parallelism) ranked by the
predicted step time (core/plan.py, core/steptime.py)."""
import streamlit as st

from core.plan import layout_label
from ui import compute as C, fmt, layout, pickers, step_charts as SK, work

pg = layout.start("parallel_layout", "How should I lay this run out?",
                  "Every layout of the model on the GPUs that the rules accept and that fits (with the realistic "
                  "overhead: 1.5 GiB + 10 %), ranked by the predicted step — kernels at measured achievable rates, "
                  "exposed communication on the links the groups use, the pipeline bubble and the optimizer step. "
                  "Sources for every constant: data/accelerators.csv and data/efficiency.csv.")
sb = st.sidebar
sb.header("Model")
inputs = pickers.model_picker(pg, sb)
sb.header("Hardware and batch")
inputs.update(pickers.gpu_picker(pg, sb))
cols = sb.columns(2)
n_gpus = pg.integer("GPUs", "gpus", 64, 1, 1 << 20, container=cols[0])
gbs = pg.integer("Global batch (sequences)", "gbs", 512, 1, 1 << 24, container=cols[1],
                 help="Sequences per optimizer step: fixed, so more data-parallel replicas mean fewer micro-batches "
                      "each (a bigger pipeline bubble, less backward to hide the gradient reduction behind).")
cols = sb.columns(2)
seq = pg.integer("Sequence length", "seq", 8192, 1, 1 << 21, step=1024, container=cols[0])
tokens = pickers.tokens_input(pg, cols[1], default_b=1000.0, lo_b=0.001)
flash = pg.toggle("Flash attention", "flash", True, container=sb)
objective = pg.select("Rank by", ("time", "cost"), "obj", "time", container=sb, radio=True,
                      help="time: predicted step; cost: GPU-hours × price for the token budget")
top = pg.integer("Layouts to list", "top", 10, 1, 100, container=sb)

inputs.update(seq_len=seq, global_batch=gbs, flash_attention=flash, tokens=tokens,
              overhead="realistic")
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
st.caption(f"{res['searched']:,} layouts searched · {res['valid']:,} valid · {res['fit']:,} fit.")
if best.empty:
    st.warning(f"No layout fits on {n_gpus:,} GPUs with this global batch: more GPUs, a shorter sequence, or a global "
               "batch that is a multiple of more data-parallel degrees.", icon=":material/block:")
    pg.stop()
b = best.iloc[0]
k1, k2, k3, k4 = st.columns(4)
k1.metric("Best layout", layout_label(b))
k2.metric("Predicted step", fmt.si(b["predicted_step_time_s"], "s"))
k3.metric("Predicted MFU", fmt.pct(b["predicted_mfu"], 1), help="model FLOPs per second ÷ (GPUs × peak)")
k4.metric("Run", fmt.duration_days(b["days"]), help=f"{fmt.count(inputs['tokens'])} tokens at the predicted step")

st.subheader("Where the step goes, best layouts first")
layout.chart(SK.step_breakdown(SK.step_parts_long(best)), "pl_breakdown")
shown, config = fmt.record_table(best[["layout", "predicted_step_time_s", "predicted_mfu", "total_bytes",
                                       "headroom_bytes", "days", "cost_usd"]])  # units from core/record.py
st.dataframe(shown, column_config=config, hide_index=True, width="stretch")
st.subheader("Best predicted MFU for each tensor × pipeline degree")
layout.chart(SK.tp_pp_heatmap(res["by_tp_pp"]), "pl_heat")
layout.download_csv("Ranked layouts (CSV)", lambda: best, "parallel_layout.csv", "pl_dl")
st.caption("Memory in GB (10⁹ bytes). The step's parts: compute and recompute kernels, exposed tensor/context/"
           "expert/data-parallel communication, the pipeline bubble (pp − 1)/v of a micro-batch, stage-to-stage "
           "sends and the optimizer step — docs/formulas.md gives each with its source.")
pg.finish()
