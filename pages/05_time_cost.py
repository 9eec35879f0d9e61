"""Time & cost — days against dollars over accelerator types × counts (only where the run fits), MFU as a band,
the Pareto frontier highlighted and listed. URL keys: prefix `tc_`."""
import pandas as pd
import streamlit as st

from core.hardware import accelerator_names
from ui import charts as K, compute as C, explain as X, fmt, layout, pickers

pg = layout.start("time_cost", "How long, and how much?",
                  "Each point is one accelerator type × count on which the run fits, in that accelerator's colour "
                  "(the same on every page); with a given MFU the segment through it spans the MFU band; the black "
                  "line is the Pareto frontier — nothing is both faster and cheaper than its points — and the number "
                  "beside each of its points is its GPU count.")
sb = st.sidebar

sb.header("Model and run")
inputs = pickers.model_picker(pg, sb)
inputs.update(pickers.run_inputs(pg, sb))
mfu = round(inputs["mfu"] * 100)
mode = pg.select("MFU", ("predicted", "given"), "mfumode", "predicted", container=sb, radio=True,
                 help="predicted: each point's own predicted step (core/steptime.py) at the global batch below — more "
                      "GPUs mean fewer micro-batches each, so the frontier bends; given: the MFU above, with a band.")
predicted = mode == "predicted"
gbs = pg.integer("Global batch (sequences per step)", "gbs", 1024, 1, 1 << 24, container=sb,
                 help="Fixed across GPU counts; a count whose dp × micro-batch does not divide it is left out.")
lo, hi = 35, 55  # the band (given MFU only)
if not predicted:
    cols = sb.columns(2)
    lo = pg.integer("MFU band: low (%)", "mfu_lo", lo, 1, 100, container=cols[0])
    hi = pg.integer("MFU band: high (%)", "mfu_hi", hi, 1, 100, container=cols[1])
inputs["global_batch"] = gbs
if predicted:
    inputs["mfu"] = "auto"
sb.header("Setup")
inputs.update(pickers.recipe_picker(pg, sb, dtypes=False))
inputs.update(pickers.batch_inputs(pg, sb))
inputs.update(pickers.memory_savers(pg, sb, overhead=True))

DEFAULT_GPUS = ["h100-sxm", "h200", "b200", "a100-80gb", "mi300x"]
COUNTS = tuple(2 ** k for k in range(0, 17))
c1, c2 = st.columns([3, 2])
gpus = pg.multi("Accelerators", accelerator_names(), "accs", DEFAULT_GPUS, container=c1)
counts = pg.multi("GPU counts", COUNTS, "counts", [2 ** k for k in range(3, 13)], container=c2)
if lo > hi:
    layout.input_error(ValueError(f"mfu_lo: the band's low end ({lo}%) is above its high end ({hi}%)"))
    pg.stop()
if not gpus or not counts:
    layout.input_error(ValueError("gpus: choose at least one accelerator and one GPU count"))
    pg.stop()
cfg = layout.config_or_stop(pg, {**inputs, "gpu": gpus[0], "n_gpus": 1})
df = C.time_cost(cfg, tuple(gpus), tuple(sorted(counts)), lo / 100, hi / 100)
ok = df[df["fits"] & df["cost_usd"].notna()]
if ok.empty:
    st.warning("The run fits on none of these accelerator × count combinations. Try ZeRO-3, flash attention, "
               "recomputation or more GPUs.", icon=":material/block:")
else:
    layout.chart(K.time_cost(df), "tc_chart")
    st.caption(f"{fmt.inert(cfg.model.name)}, {fmt.count(cfg.tokens)} tokens at "
               + ("each point's predicted MFU (its own step at a global batch of "
                  f"{gbs:,} sequences), " if predicted else f"{mfu}% MFU (band {lo}–{hi}%), ") +
               f"{cfg.seq_len:,} × {cfg.micro_batch} per GPU, ZeRO-{cfg.zero_stage}. Prices: catalog on-demand "
               "$/GPU-hour (data/accelerators.csv, with dates). "
               f"{len(df) - len(ok)} combinations do not fit or have no price and are left out.")
st.subheader("Pareto frontier")
front = df[df["on_frontier"]].sort_values("days")
st.dataframe(pd.DataFrame({  # durations as text: '145.1 days', and hours under a day ('2.4 h', never '0.1')
    "accelerator": front["label"], "GPUs": front["n_gpus"],
    ("time" if predicted else f"time (MFU {mfu}%)"): [fmt.duration_days(d) for d in front["days"]],
    "MFU": [fmt.pct(x, 1) for x in front["mfu_frac"]],
    "cost (USD)": front["cost_usd"], "GPU-hours": front["gpu_hours"],
    f"band high ({hi}%)": [fmt.duration_days(d) for d in front["days_at_mfu_hi"]],
    f"band low ({lo}%)": [fmt.duration_days(d) for d in front["days_at_mfu_lo"]],
    "per GPU (GB)": front["total_bytes"] / 1e9}), hide_index=True, width="stretch",
    column_config={"GPUs": st.column_config.NumberColumn(format="%d"),
                   "cost (USD)": st.column_config.NumberColumn(format="dollar"),
                   "GPU-hours": st.column_config.NumberColumn(format="%,.0f"),
                   "per GPU (GB)": st.column_config.NumberColumn(format="%.1f")})
layout.download_csv("All points (CSV)", lambda: C.time_cost(cfg, tuple(gpus), tuple(sorted(counts)), lo / 100,
                                                            hi / 100), "time_cost.csv", "tc_dl")
st.markdown(X.WHY_TIME)
st.caption(X.WHY_MFU)
pg.finish()
