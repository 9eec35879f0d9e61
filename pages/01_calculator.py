"""Calculator — will it fit? Memory per GPU by part against the GPU's memory, FLOPs, days and cost, MFU
sensitivity, the advisor's cheapest changes (each applied with one click), and the per-tensor activation ledger. URL
keys: no prefix."""
import pandas as pd
import streamlit as st

from core.inputs import BY_NAME
from core.units import GB
from ui import advice, charts as K, compute as C, explain as X, fmt, layout, pickers, step_charts as SK

pg = layout.start("calculator", "Will it fit?",
                  "Per-GPU memory for one training setup, how long the run takes and what it costs — and what to "
                  "change when it does not fit. Every input is in the link: copy the address bar to share this view.")
sb = st.sidebar

sb.header("Model")
inputs = pickers.model_picker(pg, sb)
inputs.update(pickers.training_picker(pg, sb))
train_note = sb.empty()  # what trains, once the record is known
sb.header("Batch and recipe")
inputs.update(pickers.batch_inputs(pg, sb))
inputs.update(pickers.recipe_picker(pg, sb))
sb.header("Memory savers")
savers = sb.container()
c1, c2, c3 = sb.columns(3)  # below the savers: ZeRO stage, TP and PP side by side
inputs.update(pickers.memory_savers(pg, savers, zero_container=c1))
inputs["tp"] = pg.input("tp", c2)
inputs["pp"] = pg.input("pp", c3)
sb.header("Hardware")
inputs.update(pickers.gpu_picker(pg, sb))
inputs["n_gpus"] = pg.input("n_gpus", sb)
sb.header("Run")
inputs.update(pickers.run_inputs(pg, sb))
margin = pickers.margin_input(pg, sb)
inputs.update(pickers.rest(pg, sb))
unit = pg.select("Memory unit", ("GB", "GiB"), "unit", container=st, radio=True, help=fmt.UNIT_HELP)
cfg = layout.config_or_stop(pg, inputs)
rec = C.record(cfg)
m = cfg.model
pickers.training_caption(rec, train_note)
if rec["host_bytes"] > 0:
    st.info(f"Offloaded to host memory: {fmt.mem(rec['offloaded_bytes'], unit)} per GPU, "
            f"{fmt.mem(rec['host_bytes'], unit)} per node"
            + ("" if rec["host_fits"] else " — more than the host memory given"), icon=":material/memory:")

st.markdown(f"**{fmt.inert(m.name)}** ({fmt.count(rec['n_params'])} parameters) · {cfg.n_gpus:,} × "
            f"{cfg.gpu.label or cfg.gpu.name} · {cfg.seq_len:,} tokens × micro-batch {cfg.micro_batch} · "
            f"{inputs['recipe']} · {X.layout_phrase(cfg, rec)}"
            + (f"  \n{fmt.inert(m.shape_note, 600)}" if m.shape_note else ""))

kpis = X.kpis(cfg, rec, unit)
for col, k in zip(st.columns(3) + st.columns(3), kpis):
    with col:
        fits_kpi = k.label == "Fits?"
        st.metric(k.label, k.value, k.detail, delta_color="normal" if fits_kpi else "off",
                  delta_arrow="auto" if fits_kpi else "off", border=True)
        with st.popover("formula", icon=":material/function:", width="stretch"):
            st.markdown(k.formula)
st.caption(X.goodput_words(rec) + "  \n" + X.energy_words(cfg, rec))
if rec.get("achieved_mfu") is not None:
    st.info(f"Measured: MFU {fmt.pct(rec['achieved_mfu'], 1)}, HFU {fmt.pct(rec['achieved_hfu'], 1)} "
            "(achieved FLOP/s ÷ GPUs × peak; HFU counts recomputation).", icon=":material/speed:")

parts = C.memory_parts(rec)
st.subheader("Memory per GPU")
layout.chart(K.memory_bar(parts, unit), "calc_bar")
c1, c2 = st.columns([3, 1])
c1.caption(X.WHY_16)
layout.download_csv("Bar data (CSV)", lambda: C.memory_parts(rec), "memory_per_gpu.csv", "dl_bar", where=c2)

adv = C.advice(cfg, X.margin_value(margin), advice.CALCULATOR_KNOBS)
if not adv["fits_with_margin"]:
    if rec["fits"]:
        st.warning(X.low_headroom(adv, unit), icon=":material/warning:")
    else:
        st.error(X.does_not_fit(adv, unit), icon=":material/block:")
    if adv["options"]:
        st.markdown(X.options_heading(adv))
        for i, o in enumerate(adv["options"]):
            b1, b2 = st.columns([5, 1], vertical_alignment="center")
            with b1.container(border=True):
                st.markdown(f"**{i + 1}. {o['what']}** · _{o['tier']}_  \n{X.option_line(o, unit)}")
            b2.button("Apply this change" if i == 0 else "Apply", on_click=pg.set_values,
                      args=(advice.widget_values(o["change"]),), key="apply_best" if i == 0 else f"apply_opt_{i + 1}",
                      type="primary" if i == 0 else "secondary")
    else:
        st.warning("No option within this page's inputs fits with the margin. Fewest GPUs by ZeRO stage: "
                   f"{X.fewest_gpus_by_stage(C.limits(cfg))}.", icon=":material/lightbulb:")

left, right = st.columns(2)
with left:
    st.subheader("MFU sensitivity")
    sens = C.mfu_sensitivity(cfg)
    layout.chart(K.mfu_days(sens, C.current_mfu(cfg)), "calc_mfu")
    st.caption(X.WHY_MFU)
    layout.download_csv("MFU data (CSV)", lambda: C.mfu_sensitivity(cfg), "mfu_sensitivity.csv", "dl_mfu")
with right:
    st.subheader("Activation ledger (one layer)" if not m.mamba_layers else
                 "Activation ledger (the average layer: each unit × its share of layers)")
    led = C.ledger(cfg)
    layout.chart(K.ledger_bars(led, m.n_layers), "calc_ledger")
    layout.download_csv("Ledger (CSV)", lambda: C.ledger(cfg), "activation_ledger.csv", "dl_ledger")

st.subheader("Predicted step")
st.caption(f"The step-time model for this layout (global batch {rec['global_batch']:,} sequences, "
           f"{rec['micro_batches']:g} micro-batches per replica): kernels at measured achievable rates, exposed "
           "communication on the links each group uses, the pipeline bubble and the optimizer step "
           "(core/steptime.py; every constant's source in data/accelerators.csv and data/efficiency.csv).")
s1, s2, s3 = st.columns(3)
s1.metric("Step", fmt.si(rec["predicted_step_time_s"], "s"), border=True)
s2.metric("Predicted MFU", fmt.pct(rec["predicted_mfu"], 1), border=True,
          help="model FLOPs per second of the predicted step ÷ (GPUs × peak); HFU "
               f"{fmt.pct(rec['predicted_hfu'], 1)} counts recomputation")
s3.metric("Tokens/s (whole job)", fmt.count(rec["predicted_tokens_per_s"]), border=True)
st.caption(X.interval_words(rec))
if not rec["validated"]:
    st.warning(X.NOT_VALIDATED, icon=":material/help:")
if rec["time_source"] == "mfu":  # one time figure: a typed MFU replaces the predicted step's, visibly
    st.info(f"Days and cost use your MFU override ({fmt.pct(cfg.mfu, 1)}) instead of the predicted "
            f"{fmt.pct(rec['predicted_mfu'], 1)}: the step above is the model's, shown for comparison only. Clear the "
            "MFU box to go back to the predicted step.", icon=":material/tune:")
with st.expander("Calibrate with your own measured step", icon=":material/straighten:"):
    st.caption("Ran this configuration (same framework and accelerator)? Give its measured seconds per optimizer step: "
               "the kernel rates are refitted to it (efficiency_scale) and every prediction — other layouts, sizes, "
               "GPU counts, on every page and in shared links — uses it, with the interval one measured run justifies "
               "(core/calibrate.py). The CLI's --calibrate takes several runs.")
    c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
    step_in = BY_NAME["step_time_s"]  # the measured step's bounds are the schema's (core/inputs.py)
    c1.number_input("Measured step time (s)", min_value=max(step_in.lo, 1e-6), max_value=step_in.hi, value=None,
                    key="cal_step_s", format="%.4g")

    def _calibrate():
        try:
            cal = C.calibration(inputs, st.session_state["cal_step_s"], rec["global_batch"])
        except ValueError as e:
            st.session_state["cal_error"] = str(e)
            return
        st.session_state["cal_report"] = cal
        pg.set_values(advice.widget_values(cal["inputs"]))
    c2.button("Calibrate", on_click=_calibrate, disabled=st.session_state.get("cal_step_s") is None, key="cal_go")
    if st.session_state.get("cal_error"):
        layout.input_error(ValueError(st.session_state.pop("cal_error")))
    if st.session_state.get("cal_report"):
        st.success(fmt.inert(X.calibration_words(st.session_state["cal_report"]), 2000), icon=":material/check:")
step_df = pd.DataFrame([{**rec, "layout": "this layout"}])
layout.chart(SK.step_breakdown(SK.step_parts_long(step_df)), "calc_step")
st.dataframe(C.step_table(rec), hide_index=True, width="stretch",
             column_config={"seconds": st.column_config.NumberColumn(format="%.4g"),
                            "share_frac": st.column_config.ProgressColumn("share", format="percent", min_value=0,
                                                                          max_value=1)})

st.caption(X.WHY_S2)
st.dataframe(led.assign(mb_per_layer=led["bytes_per_layer"] / 1e6)[
    ["tensor", "mb_per_layer", "share_frac", "what", "kept_by"]], hide_index=True, width="stretch",
    column_config={"mb_per_layer": st.column_config.NumberColumn("MB per layer (10⁶ B)", format="%.1f"),
                   "share_frac": st.column_config.ProgressColumn("share", format="percent", min_value=0,
                                                                 max_value=1)})
st.caption(f"Per layer on one GPU under recompute = {cfg.recompute}"
           + (" (full recomputation: the working set rebuilt during one layer's backward)"
              if cfg.recompute == "full" else "")
           + f"; all {m.n_layers} layers hold {fmt.mem(rec['activations_bytes'], unit)} per GPU.")

with pg.expander("Parameters by part and the limits of this setup (longest sequence, largest micro-batch, fewest "
                 "GPUs per ZeRO stage, largest model)", "lim") as exp:
    if exp.open:
        p1, p2 = st.columns(2)
        params = pd.DataFrame([{"part": k, "parameters": v} for k, v in m.params().items()])
        p1.dataframe(params, hide_index=True, width="stretch",
                     column_config={"parameters": st.column_config.NumberColumn(format="%,.0f")})
        p2.dataframe(pd.DataFrame(X.limit_rows(C.limits(cfg), cfg, rec, unit)), hide_index=True, width="stretch")
        p2.caption("Each limit changes one input and keeps the others; solved by bisection over the estimate "
                   "(core.limits): per-GPU memory grows with sequence length, micro-batch and depth, and falls with "
                   "the data-parallel degree. The largest model is searched over the GPT-3 shapes (Brown et al. "
                   "2020, Table 2.1).")

st.subheader("The same numbers from the command line")
st.code(X.cli_command(inputs), language="bash", wrap_lines=True)
st.caption("Every input that differs from the defaults is a flag; the command line and this app share one set of "
           "defaults (core/inputs.py), so the command prints these numbers. Add `--json` for every record field.")
st.caption(X.SOURCES)
pg.finish()
