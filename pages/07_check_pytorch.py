"""Check against PyTorch — the per-tensor activation ledger and the FLOP counts next to what a real PyTorch model
keeps for backward and executes (core.measure; torch is an optional extra). URL keys: prefix `pt_`.

A measurement runs real matmuls on this server, so it runs only on a click (a link alone never starts one), one at
a time in the process (`measure.APP_RUN_LOCK`: others wait, then are told), within `measure.APP_CPU_CAP` (FLOPs, and resident memory
bounded from the measured RSS of past runs). Its result stays on the page while the inputs do not change."""
import pandas as pd
import streamlit as st

from core import measure
from ui import charts as K, compute as C, fmt, layout, pickers

pg = layout.start("check_pytorch", "Check against PyTorch",
                  "Measured, not assumed: the configuration's transformer block (and a small whole model) is built "
                  "in PyTorch in bf16 on this server's CPU; autograd's saved tensors are set next to the ledger, "
                  "tensor by tensor, and FlopCounterMode's count next to 6·N + 12·L·h·s.")
sb = st.sidebar
START = measure.APP_START_SHAPE  # a CPU-sized block (core/measure.py)
sb.header("Model (small: this runs on a CPU)")
inputs = pickers.model_picker(pg, sb, src_default="architecture",
                              arch_default={k: v for k, v in START.items() if k != "seq_len"})
cols = sb.columns(2)
inputs["seq_len"] = pg.input("seq_len", cols[0], default=START["seq_len"])
inputs["micro_batch"] = pg.input("micro_batch", cols[1])
inputs.update(pickers.memory_savers(pg, sb, zero=False))
inputs["profile"] = pg.input("profile", sb)
dropout_impl = pg.select("Dropout", measure.DROPOUT_IMPLS, "dimpl", container=sb,
                         help="native: 1-byte masks (what CUDA keeps); functional: F.dropout, 2-byte on CPU.")
whole = pg.toggle("Also the whole model (embeddings, L blocks, LM head, loss)", "whole", True, container=sb)
cfg = layout.config_or_stop(pg, inputs)

if not measure.torch_available():
    st.info(f"PyTorch is not installed on this server, so only the prediction is shown. {measure.INSTALL_HINT}",
            icon=":material/info:")
try:
    measure.check_size(cfg)
except ValueError as e:
    layout.input_error(e)
    pg.stop()
cost = measure.measurement_cost(cfg)
st.caption(f"This measurement: ≈{cost['flops']:.2g} FLOPs and at most ≈{fmt.mem(cost['rss_bytes'], 'MB')} of memory "
           f"(measured bound: {measure.RSS_PER_ESTIMATED_BYTE:g}× the ≈{fmt.mem(cost['bytes'], 'MB')} of tensors it "
           f"keeps, plus {measure.RSS_FIXED_BYTES >> 20} MiB; this server's cap: {measure.APP_CPU_CAP.max_flops:.0g} "
           f"FLOPs, {fmt.mem(measure.APP_CPU_CAP.max_bytes, 'MB')}; MB = 10⁶ bytes).")
key = (cfg, dropout_impl, whole)
shown = st.session_state.get("check_pytorch_result")
res = shown[1] if shown is not None and shown[0] == key else None
if res is None and measure.torch_available() and st.button(
        "Run the PyTorch measurement (a few seconds)", type="primary", key="pt_run",
        help="Runs on a click only (never from a link): one measurement at a time on this server."):
    lock = measure.APP_RUN_LOCK  # one PyTorch run at a time in this process, whatever the number of visitors
    with st.spinner("Measuring with PyTorch…"):
        if lock.acquire(timeout=measure.APP_WAIT_S):
            try:
                res = C.measured(cfg, dropout_impl, whole)
                st.session_state["check_pytorch_result"] = (key, res)
            except ValueError as e:
                layout.input_error(e)
                pg.stop()
            finally:
                lock.release()
        else:
            st.warning("Another visitor's PyTorch measurement is running (one at a time on this server); click "
                       "again in a moment.", icon=":material/hourglass_top:")
pred = C.ledger(cfg)
if res is None:
    st.subheader("Predicted ledger (one layer)")
    layout.chart(K.ledger_bars(pred, cfg.model.n_layers), "pt_pred")
    layout.download_csv("Predicted ledger (CSV)", lambda: C.ledger(cfg), "predicted_ledger.csv", "pt_dl_pred")
    pg.finish()
    st.stop()

rows = pd.DataFrame(res["rows"])
t = res["totals"]
c = st.columns(3)
c[0].metric("One layer: ledger", fmt.mem(t["predicted_bytes"], "MB"), border=True)
c[1].metric("One layer: PyTorch kept", fmt.mem(t["measured_bytes"], "MB"), f"ratio {t['ratio']:.3f}",
            delta_color="off", delta_arrow="off", border=True)
if res["model_totals"]:
    mt = res["model_totals"]
    c[2].metric("Whole model: PyTorch / predicted", f"{mt['ratio']:.3f}",
                f"{fmt.mem(mt['measured_bytes'], 'MB')} vs {fmt.mem(mt['predicted_bytes'], 'MB')}",
                delta_color="off", delta_arrow="off", border=True)
st.subheader(f"Per tensor, one layer (recompute = {res['recompute']})")
layout.chart(K.predicted_vs_measured(rows), "pt_rows")
st.dataframe(rows.drop(columns=["ledger"]), hide_index=True, width="stretch")
layout.download_csv("Per-tensor comparison (CSV)", lambda: rows.drop(columns=["ledger"]), "ledger_vs_pytorch.csv",
                    "pt_dl_rows")
st.subheader("Recomputation modes and FLOPs")
r1, r2 = st.columns(2)
r1.dataframe(pd.DataFrame(res["recompute_modes"]), hide_index=True, width="stretch")
r2.dataframe(pd.DataFrame(res["flops"]), hide_index=True, width="stretch")
st.subheader("Notes")
st.markdown("\n".join(f"- {n}" for n in res["notes"]))
st.caption(f"torch {res['torch_version']} on {res['device']}; profile {res['profile']}, dropout {res['dropout_impl']}.")
pg.finish()
