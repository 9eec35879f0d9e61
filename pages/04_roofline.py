"""Roofline — compute- or memory-bound? Log-log rooflines with ridge points for one or more accelerators, a model's
ops at a chosen tokens-per-step as points, and three textbook examples (CS336 lecture 2). URL keys: prefix `rf_`."""
import streamlit as st

from core.hardware import accelerator_names
from ui import charts as K, compute as C, explain as X, fmt, layout, pickers

pg = layout.start("roofline", "Compute-bound or memory-bound?",
                  "Attainable FLOP/s = min(peak, intensity × bandwidth) (Williams et al. 2009). Points are the forward "
                  "ops of one layer at the chosen tokens per step, placed on the first accelerator's roof; diamonds "
                  "mark each accelerator's ridge point.")
sb = st.sidebar

sb.header("Accelerators")
gpus = pg.multi("Accelerators (the first one places the ops)", accelerator_names() + ["custom"], "accs",
                ["h100-sxm", "a100-80gb", "b200"], container=sb)
dtype = pg.select("dtype", C.ROOFLINE_DTYPES, "dtype", container=sb, radio=True)
custom = None
if "custom" in gpus:
    c = pickers.custom_accelerator_fields(pg, sb, memory=False, links=False)
    custom = ("custom", c["peak_flops_per_s"], c["memory_bandwidth_bytes_per_s"])
sb.header("Model and tokens per step")
model_inputs = pickers.model_picker(pg, sb)
inputs = pickers.batch_inputs(pg, sb)
seeds = pg.toggle("Show three textbook examples (matmul, matrix-vector, ReLU; CS336 lecture 2)", "seeds", True,
                  container=sb)

rows, skipped = C.roof_rows(tuple(gpus), dtype, custom)
if skipped:
    st.info(f"No {dtype} peak in the catalog for: {', '.join(skipped)} (left out).", icon=":material/info:")
if not rows:
    layout.input_error(ValueError(f"gpus: choose at least one accelerator with a {dtype} peak"))
    pg.stop()
cfg = layout.config_or_stop(pg, {**model_inputs, **inputs})
roofs, ridges = C.roof_curves(tuple(rows), dtype)
ops = C.roofline_ops(tuple(sorted(model_inputs.items())), cfg.seq_len, cfg.micro_batch, dtype, rows[0], seeds)
layout.chart(K.roofline(roofs, ridges, ops), "rf_chart")
st.markdown(X.WHY_ROOFLINE)
st.subheader(f"Ops on {rows[0][0]} at {cfg.seq_len * cfg.micro_batch:,} tokens per step "
             f"({fmt.inert(cfg.model.name)})")
table, config = fmt.table(ops, {"n": ("#", None), "label": ("op", None), "flops": ("FLOPs", "GFLOP"),
                                "bytes_moved": ("bytes moved", "MB"), "arithmetic_intensity": ("intensity", "FLOP/B"),
                                "attainable_flops_per_s": ("attainable", "TFLOP/s"), "time_s": ("time", "µs"),
                                "bound": ("bound by", None)})
st.dataframe(table, hide_index=True, width="stretch", column_config=config)
c1, c2, c3 = st.columns(3)
layout.download_csv("Ops (CSV)", lambda: ops, "roofline_ops.csv", "rf_dl_ops", where=c1)
layout.download_csv("Ridge points (CSV)", lambda: ridges, "roofline_ridges.csv", "rf_dl_ridges", where=c2)
layout.download_csv("Roof lines (CSV)", lambda: roofs, "roofline_roofs.csv", "rf_dl_roofs", where=c3)
pg.finish()
