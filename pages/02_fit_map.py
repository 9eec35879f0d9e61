"""Fit map — where does it fit? Heatmaps of per-GPU memory / capacity over model size × GPU count and over
sequence length × micro-batch; a click opens the cell in the Calculator. URL keys: prefix `fm_`."""
import streamlit as st

from ui import charts as K, compute as C, explain as X, fmt, layout, pickers

goto = st.session_state.pop("_fm_goto", None)
if goto:  # a clicked cell (see open_cell): open it in the Calculator
    st.switch_page("pages/01_calculator.py", query_params=goto)
pg = layout.start("fit_map", "Where does it fit?",
                  "Colour = per-GPU total ÷ GPU memory (green fits with room, yellow is tight, red is over); ✕ marks "
                  "cells that do not fit; red without ✕ fits only tightly (over only with the allocator's "
                  "fragmentation counted); grey cells are invalid combinations. Hover for the numbers and the largest "
                  "term; **click a cell to open that configuration in the Calculator.**")
sb = st.sidebar

sb.header("Setup")
inputs = pickers.gpu_picker(pg, sb, price=False)
inputs.update(pickers.training_picker(pg, sb))
inputs.update(pickers.recipe_picker(pg, sb, dtypes=False))
inputs.update(pickers.batch_inputs(pg, sb))
inputs.update(pickers.memory_savers(pg, sb, overhead=True))
sb.header("One model (the second map)")
model_inputs = pickers.model_picker(pg, sb)
n_gpus = pg.input("n_gpus", sb)
inputs.update(pickers.rest(pg, sb))

COUNTS = tuple(2 ** k for k in range(0, 15))
SIZES = C.preset_sizes()
st.subheader("Model size × GPU count")
c1, c2 = st.columns([3, 2])
models = pg.multi("Models (presets, by size)", [n for n, _ in SIZES], "models",
                  [n for n, _ in SIZES], container=c1)
counts = pg.multi("GPU counts", COUNTS, "counts", COUNTS[:11], container=c2)
cfg = layout.config_or_stop(pg, {"model": pickers.DEFAULT_MODEL, **inputs})


def open_cell(chart_key: str, base: dict, fields: tuple):
    """on_select: remember the clicked cell's whole configuration (this page's inputs, the cell's values of
    `fields`) as Calculator parameters; the next run switches page."""
    sel = st.session_state.get(chart_key)
    cells = (sel or {}).get("selection", {}).get("cell") or []
    if cells:
        cell = {f: cells[0][f] for f in fields if f in cells[0]}
        st.session_state["_fm_goto"] = layout.calculator_link(pg, {**base, **cell})


search = pg.toggle("Best tensor × pipeline layout per cell (tp 1–8, pp 1–32)", "layouts", True,
                   help="On: each cell takes the layout with the lowest per-GPU memory over tp × pp (hover shows it), "
                        "so 70B and 405B show where they fit. Off: no tensor or pipeline parallelism.")
if models and counts:
    df = C.fit_models_by_gpus(cfg, tuple(sorted(models, key=[n for n, _ in SIZES].index)), tuple(sorted(counts)),
                              search)
    order = [n for n, _ in SIZES if n in models]
    layout.chart(K.fit_heatmap(df, "n_gpus", "model", "GPUs", "model (smallest at the top)", y_sort=order,
                               extra_tooltip=("label:N",) + (("tp:O", "pp:O") if search else ()),
                               select_fields=("tp", "pp") if search else ()),
                 "fm_models_chart", on_select=lambda: open_cell("fm_models_chart", inputs,
                                                                 ("model", "n_gpus") + (("tp", "pp") if search else ())),
                 selection_mode=["cell"])
    st.caption(f"Every preset at sequence length {cfg.seq_len:,}, micro-batch {cfg.micro_batch}, ZeRO-{cfg.zero_stage},"
               f" recompute {cfg.recompute}, flash {'on' if cfg.flash_attention else 'off'}, on "
               f"{cfg.gpu.label or cfg.gpu.name}"
               + (", each cell at its best tp × pp (hover for it)" if search else "") + ". At ZeRO-0 every GPU holds "
               "all the state divided by tp × pp only; ZeRO-3 divides all of it by the data-parallel degree too.")
    layout.download_csv("Heatmap data (CSV)", lambda: C.fit_models_by_gpus(cfg, tuple(order), tuple(sorted(counts)),
                                                                            search),
                        "fit_models_by_gpus.csv", "fm_dl_models")
else:
    st.info("Choose at least one model and one GPU count.")

st.subheader("Sequence length × micro-batch, one model")
SEQS = tuple(2 ** k for k in range(9, 19))
MBS = tuple(2 ** k for k in range(0, 7))
one = {**model_inputs, **inputs, "n_gpus": n_gpus}
cfg2 = layout.config_or_stop(pg, one)
df2 = C.fit_seq_by_batch(cfg2, SEQS, MBS)
with st.container():
    layout.chart(K.fit_heatmap(df2, "micro_batch", "seq_len", "micro-batch", "sequence length",
                               y_sort="descending"),
                 "fm_seq_chart", on_select=lambda: open_cell("fm_seq_chart", one, ("seq_len", "micro_batch")),
                 selection_mode=["cell"])
    st.caption(f"{fmt.inert(cfg2.model.name)} on {fmt.gpus(n_gpus)}. Activations grow linearly with the micro-batch and, without "
               "flash attention or recomputation, quadratically with the sequence length.")
    layout.download_csv("Heatmap data (CSV)", lambda: C.fit_seq_by_batch(cfg2, SEQS, MBS), "fit_seq_by_batch.csv",
                        "fm_dl_seq")
st.caption(X.WHY_S2)
pg.finish()
