"""Time & cost — days against dollars over accelerator types × counts (only where the run fits), each point at its own
predicted step (or your MFU override), the Pareto frontier highlighted and listed. URL keys: prefix `tc_`."""
import pandas as pd
import streamlit as st

from core.hardware import accelerator_names
from ui import charts as K, compute as C, explain as X, fmt, layout, pickers

pg = layout.start("time_cost", "How long, and how much?",
                  "Each point is one accelerator type × count on which the run fits, in that accelerator's colour "
                  "(the same on every page), at its own predicted step: more GPUs at the same global batch mean fewer "
                  "micro-batches each, so the frontier bends. The black line is the Pareto frontier — nothing is "
                  "both faster and cheaper than its points — and the number beside each of its points is its GPU "
                  "count.")
sb = st.sidebar

sb.header("Model and run")
inputs = pickers.model_picker(pg, sb)
inputs.update(pickers.run_inputs(pg, sb))
sb.header("Setup")
inputs.update(pickers.recipe_picker(pg, sb, dtypes=False))
inputs.update(pickers.batch_inputs(pg, sb))
inputs.update(pickers.memory_savers(pg, sb, overhead=True))
inputs.update(pickers.rest(pg, sb, skip=("gpu", "n_gpus")))  # the accelerators and counts are this page's axes

DEFAULT_GPUS = ["h100-sxm", "h200", "b200", "a100-80gb", "mi300x"]
c1, c2 = st.columns([3, 2])
gpus = pg.multi("Accelerators", accelerator_names(), "accs", DEFAULT_GPUS, container=c1)
counts = pg.multi("GPU counts", C.TIME_COST_COUNTS, "counts", [2 ** k for k in range(3, 13)], container=c2)
if not gpus or not counts:
    layout.input_error(ValueError("gpus: choose at least one accelerator and one GPU count"))
    pg.stop()
c3, c4 = st.columns(2)
max_days = pg.number("At most … days (with failures; blank = any)", "maxd", None, 0.01, 1e5, container=c3)
max_usd = pg.number("At most … USD (with failures; blank = any)", "maxusd", None, 1.0, 1e12, container=c4)
cfg = layout.config_or_stop(pg, {**inputs, "gpu": gpus[0]})
df = C.time_cost(cfg, tuple(gpus), tuple(sorted(counts)))
ok = df[df["fits"] & df["cost_usd"].notna()]
override = cfg.mfu != "auto"
if ok.empty:
    st.warning("The run fits on none of these accelerator × count combinations. Try ZeRO-3, recomputation or more "
               "GPUs.", icon=":material/block:")
else:
    layout.chart(K.time_cost(df), "tc_chart")
    left = df[~(df["fits"] & df["cost_usd"].notna())]
    st.caption(f"{fmt.inert(cfg.model.name)}, {fmt.count(cfg.tokens)} tokens at "
               + (f"your MFU override of {fmt.pct(cfg.mfu, 1)}, " if override else
                  "each point's predicted MFU (its own step), ")
               + f"{cfg.seq_len:,} × {cfg.micro_batch} per GPU, ZeRO-{cfg.zero_stage}. Prices: catalog on-demand "
               "$/GPU-hour (data/accelerators.csv, with dates). "
               + (f"{len(left)} combinations are left out: " + C.left_out_words(left) + "." if len(left) else ""))
if max_days is not None or max_usd is not None:
    ans = C.constrained_answers(df, max_days, max_usd)
    words = ([f"{ans['late']} take more than {max_days:g} days"] if max_days is not None else []) + \
        ([f"{ans['dear']} cost more than {fmt.usd(max_usd)}"] if max_usd is not None else [])
    if ans["n"] == 0:
        st.warning("No accelerator × count meets the constraints (" + "; ".join(words) + "): relax them or add "
                   "accelerators and counts.", icon=":material/block:")
    else:
        ch, fa = ans["cheapest"][0], ans["fastest"][0]
        st.success(f"**Cheapest within the constraints:** {fmt.inert(ch['label'])} × {ch['n_gpus']:,}, "
                   f"{fmt.usd(ch['cost_with_failures_usd'])}, {fmt.duration_days(ch['days_with_failures'])}.  \n"
                   f"**Fastest within them:** {fmt.inert(fa['label'])} × {fa['n_gpus']:,}, "
                   f"{fmt.duration_days(fa['days_with_failures'])}, {fmt.usd(fa['cost_with_failures_usd'])} "
                   f"(with failures, checkpoints and restarts; left out: " + "; ".join(words) + ").",
                   icon=":material/check:")
st.subheader("Pareto frontier")
front = df[df["on_frontier"]].sort_values("days")
table = pd.DataFrame({  # durations as text: '145.1 days', and hours under a day ('2.4 h', never '0.1')
    "accelerator": front["label"], "GPUs": front["n_gpus"],
    "time": [fmt.duration_days(d) for d in front["days"]],
    "MFU": [fmt.pct(x, 1) for x in front["mfu_frac"]],
    "cost (USD)": front["cost_usd"], "GPU-hours": front["gpu_hours"],
    "per GPU (GB)": front["total_bytes"] / 1e9})
cols = st.columns([4, 1])
cols[0].dataframe(table, hide_index=True, width="stretch",
                  column_config={"GPUs": st.column_config.NumberColumn(format="%d"),
                                 "cost (USD)": st.column_config.NumberColumn(format="dollar"),
                                 "GPU-hours": st.column_config.NumberColumn(format="%,.0f"),
                                 "per GPU (GB)": st.column_config.NumberColumn(format="%.1f")})
with cols[1]:
    for r in front.head(8).itertuples():  # every frontier point opens in the Calculator with its configuration
        st.page_link("pages/01_calculator.py", label=f"{r.label}, {r.n_gpus:,} GPUs", icon=":material/calculate:",
                     query_params=layout.calculator_link(pg, {**inputs, "gpu": r.gpu, "n_gpus": int(r.n_gpus)}))
layout.download_csv("All points (CSV)", lambda: C.time_cost(cfg, tuple(gpus), tuple(sorted(counts))),
                    "time_cost.csv", "tc_dl")
st.markdown(X.WHY_TIME)
st.caption(X.WHY_MFU)
pg.finish()
