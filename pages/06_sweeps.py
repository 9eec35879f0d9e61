"""Sweeps — build a grid of configurations, see its size, run it into DuckDB with a progress bar, filter with
structured filters, summarise, chart the aggregated fit region and Pareto frontier, download CSV and Parquet. The
spec is the page's inputs, so a link reproduces the sweep. URL keys: prefix `sw_`."""
import json

import streamlit as st

from core import memory as M
from core.hardware import accelerator_names
from core.work import sweep_work
from ui import charts as K, compute as C, fmt, layout, pickers, sweeps as W, work

goto = st.session_state.pop("_sw_goto", None)
if goto:  # a clicked fit-region cell (see open_region_cell): open it in the Calculator
    st.switch_page("pages/01_calculator.py", query_params=goto)
pg = layout.start("sweeps", "Sweep a grid",
                  "Every combination of the values below is one configuration, evaluated by the same vectorised "
                  "core as the Calculator and stored in DuckDB. A small sweep runs as soon as the page opens (so a "
                  "shared link shows the same sweep); a larger one on a click, in this server's queue. Filters are "
                  "structured (column, operator, value): no SQL is typed.")
sb = st.sidebar
POW2 = tuple(2 ** k for k in range(0, 21))
SEQS = tuple(2 ** k for k in range(7, 22))
SIZES = [n for n, _ in C.preset_sizes()]

names = W.dataset_names()  # datasets in the server's directory (PLANNER_DATASETS); none: the feature is off
source = pg.select("Source", ("grid", "dataset"), "src", "grid", container=sb, radio=True,
                   help="grid: build a sweep here; dataset: open a sweep computed with "
                        "`python -m core sweep --engine dask`, read in place") if names else "grid"
if source == "dataset":
    # a link's dataset, read before the widget (which would fall back to the first name): an unknown one is an
    # error naming it, never another dataset's rows shown under the link
    asked = st.query_params.get_all("sw_ds")[-1:] if pg.entry else []
    ds = pg.select("Dataset", tuple(names), "ds", names[0], container=sb)
    if asked and asked[0] not in names:
        layout.input_error(ValueError(f"dataset: no complete dataset named {asked[0][:80]!r} on this server; "
                                      "choose one in the sidebar"))
        pg.stop()
    try:
        table = W.open_dataset(ds)
    except ValueError as e:
        layout.input_error(e)
        pg.stop()
    st.markdown(f"**Dataset {fmt.inert(ds)}** · table `{table}` · read in place from Parquet (pyarrow and DuckDB, "
                "partition pruning on model and accelerator)")
else:
    sb.header("Grid")
    models = pg.multi("Models", SIZES, "models", ["llama-3.1-8b", "llama-3.1-70b"], container=sb)
    accs = pg.multi("Accelerators", accelerator_names(), "accs", ["h100-sxm"], container=sb)
    c1, c2 = sb.columns(2)
    gmin = pg.select("GPUs from", POW2, "gmin", 8, container=c1)
    gmax = pg.select("GPUs to (×2 steps)", POW2, "gmax", 1024, container=c2)
    smin = pg.select("Sequence from", SEQS, "smin", 2048, container=c1)
    smax = pg.select("Sequence to (×2)", SEQS, "smax", 32768, container=c2)
    mbs = pg.multi("Micro-batches", POW2[:8], "mbs", [1, 2, 4], container=sb)
    zeros = pg.multi("ZeRO stages", (0, 1, 2, 3), "zeros", [0, 1, 2, 3], container=sb)
    rcs = pg.multi("Recomputation", M.RECOMPUTE_MODES, "rcs", list(M.RECOMPUTE_MODES), container=sb)
    flash = pg.multi("Flash attention", ("off", "on"), "flashes", ["off", "on"], container=sb)
    tps = pg.multi("Tensor parallel", C.FIT_TP, "tpdeg", [1], container=sb)
    recipes = pg.multi("Recipes", tuple(M.RECIPES), "recipes", ["zero-16"], container=sb)
    run = pickers.run_inputs(pg, sb)
    drop = pg.toggle("Drop invalid combinations", "dropinv", False, container=sb)
    # every other input, as every page has it: a scalar of the spec (the grid's axes above are the sweep's own)
    scalars = pickers.rest(pg, sb, skip=("gpu", "n_gpus", "seq_len", "micro_batch", "zero_stage", "recompute",
                                         "flash_attention", "tp", "recipe", "tokens", "mfu"))

    fields = {"models": models, "accelerators": accs, "micro-batches": mbs, "ZeRO stages": zeros,
              "recomputation": rcs, "flash attention": flash, "tensor parallel": tps, "recipes": recipes}
    empty = [k for k, v in fields.items() if not v]
    if empty:
        layout.input_error(ValueError(f"{empty[0]}: choose at least one value"))
        pg.stop()
    try:
        if gmin > gmax or smin > smax:
            raise ValueError(f"{'n_gpus' if gmin > gmax else 'seq_len'}: the range's start is above its end")
        spec = W.spec_from_inputs({
            "model": models, "gpu": accs, "n_gpus": {"from": gmin, "to": gmax, "step": "pow2"},
            "seq_len": {"from": smin, "to": smax, "step": "pow2"}, "micro_batch": mbs, "zero_stage": zeros,
            "recompute": rcs, "flash_attention": [f == "on" for f in flash], "tp": tps, "recipe": recipes,
            **run, **scalars, "drop_invalid": drop})
    except ValueError as e:
        layout.input_error(e)
        pg.stop()

    n = spec.n_rows
    dims = " × ".join(f"{k} {c}" for k, c in spec.shape.items() if c > 1)
    st.markdown(f"**{n:,} configurations** ({dims}) · table `{spec.table_name}`")
    if n > W.CAP_ROWS:
        layout.input_error(ValueError(f"sweep: {n:,} rows exceed this app's cap of {W.CAP_ROWS:,}; shrink the largest "
                                      "dimension, or run it with the CLI (python -m core sweep --spec …)"))
        pg.stop()

    go = W.ready(spec) or work.admit(sweep_work(n), "sw_run", "Run the sweep")
    if not go:
        st.caption("The link already holds this spec: whoever opens it runs the same sweep.")
        pg.stop()
    bar = st.empty()  # the run's progress, or its place in the queue (one large sweep runs at a time on this server)
    try:
        table = W.run(spec, progress=lambda done, total: bar.progress(
                          min(done / max(total, 1), 1.0), text=f"Evaluating… {done:,} of {total:,} rows"),
                      waiting=lambda ahead: bar.progress(0.0, text=f"Queued: {ahead} other sweep"
                                                                    f"{'s' if ahead != 1 else ''} first…"))
    except ValueError as e:  # busy (no room beside the sweeps others are viewing, or waited too long), database
        bar.empty()
        layout.input_error(e)
        pg.stop()
    bar.empty()


def open_region_cell(table: str, fkey: tuple) -> None:
    """on_select of the fit region: the clicked cell's best row (fits first, most headroom) as Calculator
    parameters; the next run switches page."""
    sel = st.session_state.get("sw_region")
    cells = (sel or {}).get("selection", {}).get("cell") or []
    if cells and "model" in cells[0] and "n_gpus" in cells[0]:
        row = W.best_row(table, fkey, cells[0]["model"], int(cells[0]["n_gpus"]))
        if row:
            st.session_state["_sw_goto"] = layout.calculator_link(pg, row)


def results() -> None:
    meta = W.info(table)
    c = st.columns(4)
    c[0].metric("Rows", f"{meta['n_rows']:,}", border=True)
    c[1].metric("Valid", f"{meta['n_valid']:,}", border=True)
    c[2].metric("Fit", f"{meta['n_fit']:,}", border=True)
    c[3].metric("Evaluated in", f"{meta['seconds']:.2f} s", border=True)

    st.subheader("Filter")
    cols = W.columns(table)
    filters = []
    fcols = st.columns([3, 2, 4])
    for i in (1, 2, 3):
        col = pg.select(f"Column {i}", ("",) + W.VOCABULARY, f"f{i}c", "", container=fcols[0])
        op = pg.select(f"Operator {i}", W.OPS, f"f{i}o", "=", container=fcols[1])
        val = pg.text(f"Value {i}", f"f{i}v", "", max_chars=500, container=fcols[2],
                      placeholder="a number, text, true/false; a,b,c for in; low,high for between")
        if col and not val.strip():  # being filled in: not applied yet, and no error box for it
            fcols[2].caption(f"Filter {i} applies once it has a value.")
        elif col:
            try:
                filters.append(W.parse_filter(col, op, val, cols))
            except ValueError as e:
                layout.input_error(ValueError(f"filter {i} ({col}): {layout.split_error(e)[1]}"))
    only_fit = pg.toggle("Only configurations that fit", "fit", False)
    if only_fit:
        filters.append(W.parse_filter("fits", "=", "true", cols))
    fkey = W.filter_key(filters)
    matching = W.count(table, fkey)
    st.caption(f"{matching:,} of {meta['n_rows']:,} rows match.")

    st.subheader("Fit region (model × GPU count)")
    region = W.fit_region(table, fkey)
    if region.empty:
        st.info("No valid rows match the filters.")
    else:
        # a cell opens its best configuration (most headroom) in the Calculator, with every input of that row
        layout.chart(K.sweep_fit_heatmap(region), "sw_region", on_select=lambda: open_region_cell(table, fkey),
                     selection_mode=["cell"])
        layout.download_csv("Fit region (CSV)", lambda: W.fit_region(table, fkey), "sweep_fit_region.csv",
                            "sw_dl_region")
        st.caption("Aggregated in DuckDB (core.db.fit_region): each cell summarises every configuration of that model "
                   "and GPU count that matches the filters; the colour is the share that fits (the best headroom "
                   "when every configuration fits).")

    st.subheader("Summary")
    by = pg.multi("Group by", [c for c in W.GROUP_KEYS if c in cols], "by", ["model", "zero_stage"])
    if by:
        summary, n_groups = W.summarise(table, tuple(by), fkey)
        st.dataframe(W.summary_table(summary), hide_index=True, width="stretch")
        if n_groups > len(summary):
            st.warning(f"Showing the first {len(summary):,} of {n_groups:,} groups (in group order): group by fewer "
                       "columns, or filter, to see the rest.", icon=":material/content_cut:")
        st.caption("Memory over the valid configurations of each group; cost and days over those that fit. — : "
                   "none does (or, for cost, none has a price).")
        layout.download_csv("Summary (CSV)", lambda: W.summarise(table, tuple(by), fkey)[0], "sweep_summary.csv",
                            "sw_dl_summary")

    st.subheader("Pareto frontier per model (days against cost)")
    front = W.pareto(table, fkey)
    if front.empty:
        st.info("Nothing that fits and has a price matches the filters.")
    else:
        layout.chart(K.pareto_models(front), "sw_pareto")
        shown, config = fmt.record_table(front)
        st.dataframe(shown, column_config=config, hide_index=True, width="stretch")
        layout.download_csv("Frontier (CSV)", lambda: W.pareto(table, fkey), "sweep_pareto.csv", "sw_dl_pareto")

    st.subheader("Rows")
    shown, config = fmt.record_table(W.rows(table, fkey))
    st.dataframe(shown, column_config=config, hide_index=True, width="stretch")
    st.caption("The 200 best-fitting matching rows (fits first, most headroom first). Downloads hold every matching "
               "row, written by DuckDB.")
    d1, d2, d3 = st.columns(3)
    if W.csv_allowed(matching):
        layout.download("Rows (CSV)", lambda: W.export_bytes(table, fkey, "csv"), f"{table}.csv", "text/csv",
                        "sw_dl_csv", where=d1)
    else:  # a CSV is built whole in memory: bounded, and Parquet (a tenth of the size) carries every row
        d1.caption(f"CSV is offered up to {W.CSV_MAX_ROWS:,} rows and {matching:,} match: filter further, or take "
                   "the Parquet file, which holds them all.")
    layout.download("Rows (Parquet)", lambda: W.export_bytes(table, fkey, "parquet"), f"{table}.parquet",
                    "application/vnd.apache.parquet", "sw_dl_parquet", where=d2)
    spec_json = json.dumps(W.info(table)["spec"], sort_keys=True, separators=(",", ":"))
    layout.download("Spec (JSON, for python -m core sweep)", spec_json, f"{table}.json", "application/json",
                    "sw_dl_spec", where=d3)
    if source == "grid":
        st.caption(fmt.UNIT_HELP)
        with st.expander("Spec token (for python -m core sweep --spec …)"):
            st.code(spec.to_token(), wrap_lines=True)
    else:
        st.caption(fmt.UNIT_HELP)


try:
    results()
except ValueError as e:  # e.g. the table was dropped to make room while this page was open: run it again
    layout.input_error(e)
pg.finish()
