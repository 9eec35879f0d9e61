"""Activations vs sequence length — per-GPU memory per recomputation mode, per part of the block, the capacity line,
the model-state baseline and where the s² term overtakes the linear ones. URL keys: prefix `ac_`."""
import streamlit as st

from ui import charts as K, compute as C, explain as X, fmt, layout, pickers

pg = layout.start("activations", "Activations against sequence length",
                  "What the backward pass keeps, as the context grows: one curve per activation mode (none, selective "
                  "recomputation, flash attention, full recomputation), the GPU's memory and the model state it sits "
                  "on.")
sb = st.sidebar

sb.header("Model")
inputs = pickers.model_picker(pg, sb)
sb.header("Setup")
inputs.update(pickers.gpu_picker(pg, sb, price=False))
inputs.update(pickers.recipe_picker(pg, sb, dtypes=False))
inputs.update(pickers.batch_inputs(pg, sb, seq=False))
inputs.update(pickers.memory_savers(pg, sb, recompute=False, flash=False, overhead=True))
inputs["n_gpus"] = pg.input("n_gpus", sb)
# the sequence length is this page's axis and the recomputation modes its curves: the rest as every page has them
# (less what only full recomputation may set, which the curves choose)
inputs.update(pickers.rest(pg, sb, skip=("seq_len", "recompute", "flash_attention", "recompute_layers",
                                         "distribute_saved_activations")))
POW2 = tuple(2 ** k for k in range(6, 23))
c1, c2, c3 = st.columns([1, 1, 1])
smin = pg.select("Shortest sequence", POW2, "smin", 256, container=c1)
smax = pg.select("Longest sequence", POW2, "smax", 131072, container=c2)
unit = pg.select("Memory unit", ("GB", "GiB"), "unit", container=c3, radio=True, help=fmt.UNIT_HELP)
if smin >= smax:
    layout.input_error(ValueError(f"smax: the longest sequence ({smax:,}) must exceed the shortest ({smin:,})"))
    pg.stop()
cfg = layout.config_or_stop(pg, inputs)
seqs = tuple(s for s in POW2 if smin <= s <= smax)
rec = C.record(cfg)
cross = C.quadratic_crossover(cfg)

st.subheader("Memory per GPU by activation mode")
curves = C.activation_curves(cfg, seqs)
layout.chart(K.activation_curves(curves, rec["gpu_memory_bytes"], rec["state_bytes"], unit, cross), "ac_curves")
lim = C.max_seq_by_mode(cfg)
cols = st.columns(len(lim))
for col, row in zip(cols, lim.itertuples()):  # a mode where nothing fits says why (the state leaves no room)
    col.metric(f"longest (tokens) — {row.mode}", f"{row.max_seq_len:,}" if row.max_seq_len else X.NOT_FIT,
               None if row.max_seq_len else X.no_fit_short(rec, unit), delta_color="off", delta_arrow="off",
               border=True, help="Solved by bisection over the estimate (core.limits.max_seq_len).")
if not lim["max_seq_len"].all():
    st.caption(f"Does not fit at any length: {X.no_fit_reason(rec, unit)}. More GPUs at ZeRO-3, tensor or pipeline "
               "parallelism shrink the state per GPU (see the Calculator's advice).")
layout.download_csv("Curves (CSV)", lambda: C.activation_curves(cfg, seqs), "activations_vs_seq.csv", "ac_dl_curves")

st.subheader("One layer, by part of the block")
parts = C.block_parts(cfg, seqs)
layout.chart(K.block_parts(parts, cross), "ac_parts")
if cross == cross:
    st.markdown(f"The attention scores (∝ s², one s×s matrix per head) overtake all the linear terms together at "
                f"**s\\* ≈ {cross:,.0f}** tokens for this block ({fmt.inert(cfg.model.name)}: its own norms, MLP, KV heads and "
                "dropout). For reference, the GPT block of Korthikanti et al. (Eq. 1) crosses at s\\* = 34·h/(5·a). "
                "Beyond s\\*, flash attention or selective recomputation removes most of the activation memory.")
else:
    st.markdown("This block stores no s×s tensor, so nothing grows quadratically.")
layout.download_csv("Parts (CSV)", lambda: C.block_parts(cfg, seqs), "activations_by_part.csv", "ac_dl_parts")
st.caption(X.WHY_S2)
st.caption(f"Model {fmt.inert(cfg.model.name)}, micro-batch {cfg.micro_batch}, ZeRO-{cfg.zero_stage} on {cfg.n_gpus:,} × "
           f"{cfg.gpu.label or cfg.gpu.name}; model state {fmt.both_bytes(rec['state_bytes'], unit)} per GPU. "
           "Per-GPU memory = state + activations + logits (+ overhead).")
pg.finish()
