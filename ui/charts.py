"""Chart builders: `(tidy DataFrame, ...) -> alt.Chart`, pure (no Streamlit), tested through `chart.to_dict()`.

Data columns keep their SI names (`total_bytes`, `attainable_flops_per_s`, `cost_usd`); only titles, formats and
`transform_calculate` expressions convert for display. The ledger parts have one colour each on every page
(`PART_COLORS`), and red is kept for "over capacity". Encodings are channel objects (`alt.X(...)`,
`alt.ColorValue(..., condition=...)`), never shorthand strings or `alt.condition`/`alt.value`: those go through
Altair's schema lookup and cost milliseconds each, on every rerun.
"""
from __future__ import annotations

import math

import altair as alt
import pandas as pd

from core.hardware import accelerator_names
from core.record import BINDING_WORDS
from core.units import GB, GiB

# One colour per ledger part, everywhere (weights/gradients/optimizer/master/activations/logits/overhead).
PART_COLORS = {
    "weights": "#1f77b4",
    "grads": "#ff7f0e",
    "grad_accum": "#ffbb78",
    "optimizer": "#2ca02c",
    "master": "#98df8a",
    "param_buffer": "#17becf",
    "lowp_weights": "#bcbd22",
    "activations": "#9467bd",
    "logits": "#8c564b",
    "overhead": "#7f7f7f",
}
PART_TITLES = {
    "weights": "weights", "grads": "gradients", "grad_accum": "fp32 grad accumulation", "optimizer": "optimizer",
    "master": "fp32 master", "param_buffer": "gathered-parameter buffers",
    "lowp_weights": "fp8 / fp4 weight copies", "activations": "activations",
    "logits": "logits", "overhead": "overhead",
}
OVER = "#d62728"  # over capacity
OK = "#2b8a3e"
CAPACITY = "#222222"
MODE_COLORS = {"none": "#d62728", "selective": "#ff7f0e", "flash": "#1f77b4", "full": "#2ca02c"}
MODE_DASH = {"none": [1, 0], "selective": [8, 4], "flash": [1, 0], "full": [1, 0]}
# One colour per accelerator on every page (Roofline, Time & cost, ...): the catalog's order (data/accelerators.csv)
# against a fixed palette — Tableau 10 first (the catalog's first rows are the chips most often compared), then ten
# more — so a chip keeps its colour whatever else is selected, and the legend lists only what is drawn.
GPU_PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
               "#bab0ac", "#a0cbe8", "#ffbe7d", "#8cd17d", "#86bcb6", "#f1ce63", "#d4a6c8", "#d7b5a6", "#79706e",
               "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#1f78b4", "#33a02c",
               "#fb9a99", "#cab2d6", "#b15928")
CUSTOM_GPU_COLOR = "#222222"


def _extra_color(i: int) -> str:
    """A colour for the i-th row beyond the palette: hues a golden angle apart, mid lightness (distinct, stable)."""
    import colorsys
    r, g, b = colorsys.hls_to_rgb((i * 0.381966) % 1.0, 0.45, 0.55)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def gpu_colors() -> dict[str, str]:
    """Accelerator name -> colour, fixed: the catalog's i-th row takes the palette's i-th colour (rows beyond the
    palette get generated hues, never a repeat); a user-typed 'custom' accelerator is near-black."""
    names = accelerator_names()
    colors = {n: GPU_PALETTE[i] if i < len(GPU_PALETTE) else _extra_color(i) for i, n in enumerate(names)}
    return {**colors, "custom": CUSTOM_GPU_COLOR}


def gpu_scale(drawn) -> alt.Scale:
    """The colour scale of the accelerators drawn (in catalog order): their fixed colours, nothing else."""
    colors = gpu_colors()
    domain = [n for n in colors if n in set(drawn)] + sorted(set(drawn) - set(colors))
    return alt.Scale(domain=domain, range=[colors.get(n, CUSTOM_GPU_COLOR) for n in domain])


# Sequence lengths are powers of two: ticks read 1K, 128K, 1M (2^10, 2^17, 2^20 tokens), never "131.072k".
POW2_LABEL = ("datum.value >= 1048576 ? format(datum.value / 1048576, '~g') + 'M' : datum.value >= 1024 ? "
              "format(datum.value / 1024, '~g') + 'K' : format(datum.value, '~g')")
UNITS = {"GB": GB, "GiB": GiB}
HEIGHT = 320


def tips(*fields: str) -> list:
    """Tooltips from "field:type" strings, as channel objects (Altair parses a shorthand string in ~5 ms, an
    object in ~0.04 ms; a chart with a dozen such strings costs a widget change 50 ms)."""
    return [alt.Tooltip(f) for f in fields]


def _unit(unit: str) -> float:
    if unit not in UNITS:
        raise ValueError(f"unit: must be GB or GiB, got {unit!r}")
    return UNITS[unit]


def part_scale() -> alt.Scale:
    return alt.Scale(domain=list(PART_COLORS), range=list(PART_COLORS.values()))


def memory_bar(parts: pd.DataFrame, unit: str = "GB") -> alt.LayerChart:
    """One horizontal stacked bar of the per-GPU total by part, the GPU-memory line, and — when the total crosses
    it — the overflow outlined in red (the segments keep their legend colours). The legend lists the parts drawn.
    `parts` is `ui.compute.memory_parts(record)`."""
    d = _unit(unit)
    df = parts[parts["bytes"] > 0].copy()
    df["title"] = df["part"].map(PART_TITLES)
    drawn = [p for p in PART_COLORS if p in set(df["part"])]
    cap = float(parts["gpu_memory_bytes"].iloc[0])
    total = float(parts["end_bytes"].iloc[-1])
    over = total > cap
    frag = float(parts["fragmentation_bytes"].iloc[0]) if "fragmentation_bytes" in parts else 0.0
    tight = over and total - frag <= cap  # fits only without the allocator's fragmentation (core/memory.py)
    x = alt.X("start:Q", title=f"memory per GPU ({unit}, {'10⁹' if unit == 'GB' else '2³⁰'} bytes)",
              scale=alt.Scale(domain=[0, max(cap, total) * 1.05 / d], nice=False))
    bars = alt.Chart(df).transform_calculate(
        start=f"datum.start_bytes / {d}", end=f"datum.end_bytes / {d}", size=f"datum.bytes / {d}",
    ).mark_bar(stroke="white", strokeWidth=1).encode(
        x=x, x2=alt.X2("end"),
        y=ROW_Y,
        color=alt.Color("part:N", scale=alt.Scale(domain=drawn, range=[PART_COLORS[p] for p in drawn]), title="part",
                        legend=alt.Legend(orient="top", direction="horizontal", columns=8, title=None,
                                          labelExpr=_part_label_expr())),
        order=alt.Order("start_bytes:Q"),
        tooltip=[alt.Tooltip("title:N", title="part"), alt.Tooltip("size:Q", title=unit, format=",.2f"),
                 alt.Tooltip("bytes:Q", title="bytes", format=",.0f")],
    ).transform_calculate(row="'per GPU'")
    cap_df = pd.DataFrame({"gpu_memory_bytes": [cap], "total_bytes": [total]})
    rule = alt.Chart(cap_df).transform_calculate(cap=f"datum.gpu_memory_bytes / {d}").mark_rule(
        color=OVER if over else CAPACITY, strokeWidth=3, strokeDash=[6, 3]).encode(
        x=alt.X("cap:Q"), tooltip=[alt.Tooltip("cap:Q", title=f"GPU memory ({unit})", format=",.2f")])
    label = alt.Chart(cap_df).transform_calculate(cap=f"datum.gpu_memory_bytes / {d}").mark_text(
        align="left" if over else "right", baseline="middle", dx=5 if over else -5, fontWeight="bold",
        color=OVER if over else CAPACITY).encode(  # over capacity: the words sit above the overflow
        x=alt.X("cap:Q"), y=alt.YValue(6), text=alt.TextValue(
            f"GPU memory {cap / d:,.1f} {unit}"
            + (f" — fits tightly: over by {(total - cap) / d:,.1f} {unit} only with the allocator's fragmentation"
               if tight else f" — over by {(total - cap) / d:,.1f} {unit}" if over else "")))
    layers = [bars]
    if over:  # an outline, not a fill: the parts beyond the line keep the colours the legend gives them
        band = alt.Chart(cap_df).transform_calculate(
            cap=f"datum.gpu_memory_bytes / {d}", tot=f"datum.total_bytes / {d}", row="'per GPU'").mark_bar(
            fillOpacity=0, stroke=OVER, strokeWidth=3, strokeDash=[4, 2]).encode(
            x=alt.X("cap:Q"), x2=alt.X2("tot"), y=ROW_Y,
            tooltip=[alt.Tooltip("tot:Q", title=f"total ({unit})", format=",.2f")])
        layers.append(band)
    layers += [rule, label]
    return alt.layer(*layers).properties(height=190)


ROW_Y = alt.Y("row:N", axis=None, scale=alt.Scale(paddingInner=0.2, paddingOuter=0.3))


def _part_label_expr() -> str:
    cases = " : ".join(f"datum.value == '{k}' ? '{v}'" for k, v in PART_TITLES.items())
    return f"{cases} : datum.value"


def mfu_days(df: pd.DataFrame, current_frac: float) -> alt.LayerChart:
    """Days at each MFU (bars), the chosen MFU highlighted. `df` from `ui.compute.mfu_sensitivity`."""
    base = alt.Chart(df).transform_calculate(mfu_pct="round(datum.mfu_frac * 100)")
    bars = base.mark_bar().encode(
        x=alt.X("mfu_pct:O", title="MFU (%)", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("days:Q", title="days"),
        color=alt.ColorValue("#9fb8d8", condition={"test": f"abs(datum.mfu_frac - {current_frac}) < 1e-9",
                                                   "value": "#1f6feb"}),
        tooltip=[alt.Tooltip("mfu_pct:O", title="MFU %"), alt.Tooltip("days:Q", format=",.1f"),
                 alt.Tooltip("cost_usd:Q", title="cost (USD)", format="$,.0f")],
    )
    text = base.mark_text(dy=-6, fontSize=11).encode(x=alt.X("mfu_pct:O"), y=alt.Y("days:Q"),
                                                     text=alt.Text("days:Q", format=",.0f"))
    return alt.layer(bars, text).properties(height=220)


def ledger_bars(df: pd.DataFrame, n_layers: int) -> alt.Chart:
    """Which tensor eats the memory: bytes per layer by tensor, largest first."""
    return alt.Chart(df).transform_calculate(mb="datum.bytes_per_layer / 1e6").mark_bar(
        color=PART_COLORS["activations"]).encode(
        x=alt.X("mb:Q", title="MB per layer (10⁶ bytes)"),
        y=alt.Y("tensor:N", sort="-x", title=None, axis=alt.Axis(labelOverlap=False)),
        tooltip=tips("tensor:N", "what:N", "kept_by:N") + [alt.Tooltip("mb:Q", title="MB per layer", format=",.1f"),
                 alt.Tooltip("share_frac:Q", title="share", format=".1%")],
    ).properties(height=90 + 22 * len(df), title=f"one layer of {n_layers}")


FIT_SCALE = alt.Scale(domain=[0, 0.5, 0.9, 1.0, 1.5, 3.0],
                      range=["#e8f3ea", "#a6d9b0", "#f4e79a", "#f6b26b", "#e06666", "#990000"], clamp=True)


def fit_heatmap(df: pd.DataFrame, x: str, y: str, x_title: str, y_title: str, *, y_sort=None,
                select: str | None = "cell", extra_tooltip: tuple = (), select_fields: tuple = ()) -> alt.LayerChart:
    """Fit region: colour = per-GPU total / capacity (clamped at 3), ✕ on cells that do not fit, tooltips with the
    numbers and the binding term. With `select`, a click selects the cell's (x, y) and `select_fields` (a point
    selection returns only the fields it projects: a cell's best tp and pp must be named to come back)."""
    base = alt.Chart(df).transform_calculate(
        total_gb=f"datum.total_bytes / {GB}", cap_gb=f"datum.gpu_memory_bytes / {GB}",
        pct="datum.fill_frac", binding_words=_binding_words_expr(),
    )
    tooltip = tips(*extra_tooltip) + [
        alt.Tooltip(f"{x}:O", title=x_title), alt.Tooltip(f"{y}:N", title=y_title),
        alt.Tooltip("status:N", title="status"), alt.Tooltip("pct:Q", title="per-GPU / capacity", format=".0%"),
        alt.Tooltip("total_gb:Q", title="per GPU (GB)", format=",.1f"),
        alt.Tooltip("cap_gb:Q", title="capacity (GB)", format=",.0f"),
        alt.Tooltip("binding_words:N", title="largest term"), alt.Tooltip("reason:N", title="invalid because"),
    ]
    xe = alt.X(f"{x}:O", title=x_title, axis=alt.Axis(labelAngle=0, **_pow2_labels(x)))
    ye = alt.Y(f"{y}:O", title=y_title, sort=y_sort, axis=alt.Axis(labelOverlap=False, **_pow2_labels(y)))
    rect = base.mark_rect(stroke="white", strokeWidth=1).encode(
        x=xe, y=ye,
        color=alt.Color("fill_frac:Q", scale=FIT_SCALE, title="per-GPU total / capacity",
                        legend=alt.Legend(format=".0%"), condition={"test": "!datum.valid", "value": "#dddddd"}),
        tooltip=tooltip,
    )
    if select:
        pick = alt.selection_point(name=select, fields=[x, y, *select_fields], on="click", clear=False)
        rect = rect.add_params(pick).encode(
            opacity=alt.OpacityValue(0.85, condition={"param": select, "value": 1.0, "empty": True}))
    marks = base.transform_filter("datum.valid && !datum.fits").mark_text(
        text="✕", fontSize=13, fontWeight="bold", color="#5a0000").encode(x=xe, y=ye, tooltip=tooltip)
    return alt.layer(rect, marks).properties(height=max(220, 26 * df[y].nunique()))


def _pow2_labels(field: str) -> dict:
    """Axis options for a sequence-length axis (1K, 128K); none for other fields."""
    return {"labelExpr": POW2_LABEL} if field == "seq_len" else {}


def _binding_words_expr() -> str:
    """A Vega expression: the binding group's name -> what it is in words (core/record.py BINDING_WORDS)."""
    cases = " : ".join(f"datum.binding == '{k}' ? '{v}'" for k, v in BINDING_WORDS.items())
    return f"{cases} : datum.binding"


def _log2_x(title: str, field: str = "seq_len") -> alt.X:
    return alt.X(f"{field}:Q", title=title, scale=alt.Scale(type="log", base=2),
                 axis=alt.Axis(values=[2 ** k for k in range(6, 24)], labelExpr=POW2_LABEL))


def activation_curves(df: pd.DataFrame, capacity_bytes: float, state_bytes: float, unit: str = "GB",
                      crossover: float | None = None) -> alt.LayerChart:
    """Per-GPU memory against sequence length (log₂ x, log y), one curve per activation mode, with the GPU
    capacity and the model-state baseline as horizontal rules. Selective recomputation and flash attention keep
    almost the same bytes, so flash is drawn wide and pale underneath and selective dashed on top: both stay
    visible."""
    d = _unit(unit)
    data = df[df["valid"]].copy()
    color = alt.Color("mode:N", scale=alt.Scale(domain=list(MODE_COLORS), range=list(MODE_COLORS.values())),
                      title="activations", sort=list(MODE_COLORS))
    enc = dict(
        x=_log2_x("sequence length (tokens, log₂)"),
        y=alt.Y("v:Q", title=f"memory per GPU ({unit}, log)", scale=alt.Scale(type="log")),
        color=color,
        strokeDash=alt.StrokeDash("mode:N", scale=alt.Scale(domain=list(MODE_DASH), range=list(MODE_DASH.values())),
                                  legend=None),
        tooltip=[alt.Tooltip("mode:N"), alt.Tooltip("seq_len:Q", format=","),
                 alt.Tooltip("v:Q", title=unit, format=",.2f"), alt.Tooltip("fits:N")],
    )
    base = alt.Chart(data).transform_calculate(v=f"datum.total_bytes / {d}")
    under = base.transform_filter("datum.mode != 'selective'").mark_line(point=True).encode(
        strokeWidth=alt.StrokeWidthValue(2, condition={"test": "datum.mode == 'flash'", "value": 6}),
        opacity=alt.OpacityValue(1.0, condition={"test": "datum.mode == 'flash'", "value": 0.45}), **enc)
    top = base.transform_filter("datum.mode == 'selective'").mark_line(point=True, strokeWidth=2).encode(**enc)
    rules = pd.DataFrame({"what": ["GPU memory", "model state"], "bytes": [capacity_bytes, state_bytes]})
    rule = alt.Chart(rules).transform_calculate(v=f"datum.bytes / {d}").mark_rule(strokeDash=[6, 3]).encode(
        y=alt.Y("v:Q"), color=alt.Color("what:N", scale=alt.Scale(domain=["GPU memory", "model state"],
                                                            range=[CAPACITY, PART_COLORS["optimizer"]]),
                                 title="baseline"),
        tooltip=[alt.Tooltip("what:N"), alt.Tooltip("v:Q", title=unit, format=",.2f")])
    layers = [alt.layer(under, top), rule]  # the two mode layers share one colour scale and one legend
    if crossover is not None and crossover == crossover:
        layers.append(_crossover_rule(crossover))
    return alt.layer(*layers).resolve_scale(color="independent").properties(height=HEIGHT)


def _crossover_rule(s: float) -> alt.LayerChart:
    c = pd.DataFrame({"seq_len": [s], "label": [f"s² term = linear terms at s ≈ {s:,.0f} tokens"]})
    rule = alt.Chart(c).mark_rule(color="#555", strokeDash=[2, 2]).encode(x=alt.X("seq_len:Q"),
                                                                           tooltip=[alt.Tooltip("label:N")])
    text = alt.Chart(c).mark_text(align="left", dx=4, dy=-120, color="#555", fontSize=11).encode(
        x=alt.X("seq_len:Q"), text=alt.Text("label:N"))
    return alt.layer(rule, text)


def block_parts(df: pd.DataFrame, crossover: float | None = None) -> alt.LayerChart:
    """One layer's activation bytes by part of the block against sequence length (log₂ x, log y); the s² part
    overtakes the linear ones at `crossover`."""
    lines = alt.Chart(df).transform_calculate(mb="datum.bytes_per_layer / 1e6").mark_line(point=True).encode(
        x=_log2_x("sequence length (tokens, log₂)"),
        y=alt.Y("mb:Q", title="MB per layer (10⁶ bytes, log)", scale=alt.Scale(type="log")),
        color=alt.Color("part:N", title="part of the block"),
        strokeDash=alt.StrokeDashValue([4, 2], condition={"test": "indexof(datum.part, 's²') >= 0",
                                                          "value": [1, 0]}),
        tooltip=[alt.Tooltip("part:N"), alt.Tooltip("seq_len:Q", format=","),
                 alt.Tooltip("mb:Q", title="MB", format=",.1f")],
    )
    layers = [lines]
    if crossover is not None and crossover == crossover:
        layers.append(_crossover_rule(crossover))
    return alt.layer(*layers).properties(height=HEIGHT)


def _label_clusters(ops: pd.DataFrame, near_decades: float = 0.18) -> pd.DataFrame:
    """One label per group of ops drawn on top of each other: points closer than `near_decades` on both log axes
    share one text, '1, 6, 7', at the group's first point (labels of points a few pixels apart overlapped)."""
    pts = ops.assign(lx=[math.log10(v) for v in ops["arithmetic_intensity"]],
                     ly=[math.log10(max(v, 1e-30)) for v in ops["attainable_flops_per_s"]]).sort_values(["lx", "ly"])
    groups: list[list] = []
    for r in pts.itertuples():
        g = next((g for g in groups if abs(g[0].lx - r.lx) < near_decades and abs(g[0].ly - r.ly) < near_decades), None)
        (g.append(r) if g is not None else groups.append([r]))
    return pd.DataFrame([{"arithmetic_intensity": g[0].arithmetic_intensity,
                          "attainable_flops_per_s": g[0].attainable_flops_per_s,
                          "text": ", ".join(str(r.n) for r in sorted(g, key=lambda r: r.n))} for g in groups])


def roofline(roofs: pd.DataFrame, ridges: pd.DataFrame, ops: pd.DataFrame | None = None) -> alt.LayerChart:
    """Log-log roofline: one roof per accelerator (its fixed colour), ridge points labelled, ops as points on the
    first roof, numbered (ops drawn on top of each other share one label)."""
    x = alt.X("arithmetic_intensity:Q", title="arithmetic intensity (FLOPs per byte moved, log)",
              scale=alt.Scale(type="log"), axis=alt.Axis(format=",~g"))
    y = alt.Y("tflops:Q", title="attainable TFLOP/s (10¹² FLOP/s, log)", scale=alt.Scale(type="log"),
              axis=alt.Axis(format=",~g"))
    color = alt.Color("gpu:N", title="accelerator", scale=gpu_scale(roofs["gpu"].unique()))
    roof = alt.Chart(roofs).transform_calculate(tflops="datum.attainable_flops_per_s / 1e12").mark_line().encode(
        x=x, y=y, color=color, tooltip=[alt.Tooltip("gpu:N"), alt.Tooltip("arithmetic_intensity:Q", format=",.3g"),
                                        alt.Tooltip("tflops:Q", title="TFLOP/s", format=",.1f")])
    rid = alt.Chart(ridges).transform_calculate(
        tflops="datum.peak_flops_per_s / 1e12", arithmetic_intensity="datum.ridge_intensity",
        label="'ridge ' + format(datum.ridge_intensity, ',.0f') + ' FLOP/B'")
    ridge_pts = rid.mark_point(shape="diamond", size=90, filled=True).encode(
        x=x, y=y, color=color, tooltip=[alt.Tooltip("gpu:N"),
                                        alt.Tooltip("ridge_intensity:Q", format=",.1f", title="ridge"),
                                        alt.Tooltip("tflops:Q", title="peak TFLOP/s", format=",.1f")])
    ridge_txt = rid.mark_text(align="right", dx=-8, dy=-8, fontSize=11).encode(x=x, y=y, text=alt.Text("label:N"),
                                                                                  color=color)
    layers = [roof, ridge_pts, ridge_txt]
    if ops is not None and len(ops):
        pts = alt.Chart(ops).transform_calculate(tflops="datum.attainable_flops_per_s / 1e12").mark_point(
            filled=True, size=80, color="#222").encode(
            x=x, y=y, shape=alt.Shape("kind:N", title="op", scale=alt.Scale(domain=["model", "seed"],
                                                                              range=["circle", "triangle-up"]),
                                      legend=alt.Legend(labelExpr="datum.value == 'seed' ? 'textbook example' : "
                                                                  "'this model (one layer)'")),
            tooltip=tips("n:Q", "label:N") + [
                     alt.Tooltip("arithmetic_intensity:Q", title="FLOP/B", format=",.3g"),
                     alt.Tooltip("tflops:Q", title="attainable TFLOP/s", format=",.1f"), alt.Tooltip("bound:N"),
                     alt.Tooltip("time_s:Q", title="time (s)", format=".3g")])
        txt = alt.Chart(_label_clusters(ops)).transform_calculate(
            tflops="datum.attainable_flops_per_s / 1e12").mark_text(
            align="left", dx=7, dy=10, fontSize=11, fontWeight="bold", color="#333").encode(
            x=x, y=y, text=alt.Text("text:N"))
        layers += [pts, txt]
    return alt.layer(*layers).properties(height=420)


def time_cost(df: pd.DataFrame) -> alt.LayerChart:
    """Days against cost (log-log) per accelerator × count that fits, each accelerator in its fixed colour; the Pareto
    frontier as a line through the circled points, each labelled with its GPU count (the caption says so)."""
    ok = df[df["fits"] & df["cost_usd"].notna() & df["days"].notna()].copy()
    x = alt.X("days:Q", title="days (log)", scale=alt.Scale(type="log"), axis=alt.Axis(format=",~g"))
    y = alt.Y("cost_usd:Q", title="cost (USD, log)", scale=alt.Scale(type="log"), axis=alt.Axis(format="$,~s"))
    color = alt.Color("gpu:N", title="accelerator", scale=gpu_scale(ok["gpu"].unique()))
    tooltip = tips("label:N") + [
        alt.Tooltip("n_gpus:Q", title="GPUs", format=","), alt.Tooltip("days:Q", format=",.1f"),
        alt.Tooltip("cost_usd:Q", title="cost (USD)", format="$,.0f"),
        alt.Tooltip("mfu_frac:Q", title="MFU", format=".1%"),
        alt.Tooltip("on_frontier:N", title="on the frontier")]
    tooltip += [alt.Tooltip("days_low:Q", title="days, 80 % low", format=",.1f"),
                alt.Tooltip("days_high:Q", title="days, 80 % high", format=",.1f"),
                alt.Tooltip("validated:N", title="validated by published runs")]
    pts = alt.Chart(ok).mark_circle(size=60).encode(x=x, y=y, color=color, tooltip=tooltip)
    # each point's 80 % interval (core/intervals.py): days and cost move together, along the point's diagonal
    band = alt.Chart(ok[ok["days_low"].notna()]).mark_rule(strokeWidth=2, opacity=0.35).encode(
        x=alt.X("days_low:Q", scale=alt.Scale(type="log")), x2="days_high:Q",
        y=alt.Y("cost_low_usd:Q", scale=alt.Scale(type="log")), y2="cost_high_usd:Q", color=color)
    front = ok[ok["on_frontier"]].sort_values("days")
    line = alt.Chart(front).mark_line(color="#111", strokeWidth=1.5).encode(x=x, y=y, order=alt.Order("days:Q"))
    ring = alt.Chart(front).mark_point(size=180, color="#111", strokeWidth=2).encode(x=x, y=y, tooltip=tooltip)
    # each frontier point's GPU count, alternately above and below the line (neighbours are often a few pixels apart)
    counts = [alt.Chart(front.iloc[k::2]).mark_text(fontSize=11, fontWeight="bold", color="#111", dy=dy).encode(
        x=x, y=y, text=alt.Text("n_gpus:Q", format=",")) for k, dy in ((0, -14), (1, 16))]
    return alt.layer(band, pts, line, ring, *counts).properties(height=420)


def sweep_fit_heatmap(df: pd.DataFrame) -> alt.LayerChart:
    """Sweep fit region, aggregated in DuckDB to one cell per model × GPU count: colour = share of the cell's
    configurations that fit (the best headroom when every one fits), ✕ where none does; tooltip with the best
    configuration's headroom and binding term."""
    base = alt.Chart(df).transform_calculate(head_gb=f"datum.headroom_bytes / {GB}",
                                             total_gb=f"datum.total_bytes / {GB}")
    xe = alt.X("n_gpus:O", title="GPUs", axis=alt.Axis(labelAngle=0))
    ye = alt.Y("model:N", title="model", axis=alt.Axis(labelOverlap=False))
    tooltip = tips("model:N", "n_gpus:O") + [alt.Tooltip("n_fit:Q", title="configurations that fit"),
            alt.Tooltip("n_configs:Q", title="configurations"),
            alt.Tooltip("fit_frac:Q", title="share that fits", format=".0%"),
            alt.Tooltip("head_gb:Q", title="best headroom (GB)", format=",.1f"),
            alt.Tooltip("total_gb:Q", title="smallest per-GPU total (GB)", format=",.1f"),
            alt.Tooltip("binding:N", title="largest term (best)")]
    if len(df) and bool((df["n_fit"] == df["n_configs"]).all()):
        # every configuration in every cell fits (e.g. the rows are filtered to those that fit): the share would be
        # 100 % everywhere and say nothing, so the colour shows the best headroom instead
        color = alt.Color("head_gb:Q", title=["best headroom (GB)", "(every one here fits)"],
                          scale=alt.Scale(scheme="greens", zero=True), legend=alt.Legend(format=",.0f"))
    else:
        color = alt.Color("fit_frac:Q", title="share that fits",
                          scale=alt.Scale(domain=[0, 1], scheme="redyellowgreen"), legend=alt.Legend(format=".0%"))
    pick = alt.selection_point(name="cell", fields=["model", "n_gpus"], on="click", clear=False)
    rect = base.mark_rect(stroke="white", strokeWidth=1).encode(x=xe, y=ye, tooltip=tooltip, color=color).add_params(
        pick)  # a click opens the cell's best configuration in the Calculator (pages/06_sweeps.py)
    none = base.transform_filter("datum.n_fit == 0").mark_text(text="✕", fontSize=13, fontWeight="bold",
                                                                color="#5a0000").encode(x=xe, y=ye, tooltip=tooltip)
    return alt.layer(rect, none).properties(height=max(200, 28 * df["model"].nunique()))


def pareto_models(df: pd.DataFrame) -> alt.LayerChart:
    """Pareto frontier per model (days against cost, log-log), each model's frontier as a line."""
    x = alt.X("days:Q", title="days (log)", scale=alt.Scale(type="log"), axis=alt.Axis(format=",~g"))
    y = alt.Y("cost_usd:Q", title="cost (USD, log)", scale=alt.Scale(type="log"), axis=alt.Axis(format="$,~s"))
    tooltip = tips("model:N", "gpu:N", "n_gpus:Q", "zero_stage:Q", "micro_batch:Q", "recompute:N") + [
        alt.Tooltip("days:Q", format=",.1f"), alt.Tooltip("cost_usd:Q", format="$,.0f")]
    line = alt.Chart(df).mark_line(point=True).encode(x=x, y=y, color=alt.Color("model:N"),
                                                      order=alt.Order("days:Q"), tooltip=tooltip)
    return line.properties(height=320)


def predicted_vs_measured(rows: pd.DataFrame) -> alt.Chart:
    """Bytes per tensor, the core's ledger against what PyTorch's autograd kept (grouped bars)."""
    long = rows.melt(id_vars=["tensor"], value_vars=["predicted_bytes", "measured_bytes"], var_name="source",
                     value_name="bytes")
    long["source"] = long["source"].map({"predicted_bytes": "ledger (core)", "measured_bytes": "PyTorch"})
    return alt.Chart(long).transform_calculate(mb="datum.bytes / 1e6").mark_bar().encode(
        y=alt.Y("tensor:N", title=None, sort=list(rows["tensor"]), axis=alt.Axis(labelOverlap=False)),
        yOffset=alt.YOffset("source:N"),
        x=alt.X("mb:Q", title="MB (10⁶ bytes)"),
        color=alt.Color("source:N", scale=alt.Scale(domain=["ledger (core)", "PyTorch"],
                                                    range=[PART_COLORS["activations"], "#444444"]), title=None),
        tooltip=tips("tensor:N", "source:N") + [alt.Tooltip("mb:Q", title="MB", format=",.3f")],
    ).properties(height=90 + 26 * len(rows))


def budget_options(df: pd.DataFrame) -> alt.Chart:
    """Model size each accelerator's share of the budget trains (bars, best first), in the accelerator's colour."""
    color = alt.Color("accelerator:N", scale=gpu_scale(df["accelerator"].unique()), legend=None)
    return alt.Chart(df).mark_bar().encode(
        y=alt.Y("accelerator:N", sort=list(df["accelerator"]), title=None),
        x=alt.X("parameters (B):Q", title="compute-optimal parameters (billions)"), color=color,
        tooltip=[alt.Tooltip("accelerator:N"), alt.Tooltip("GPUs:Q", format=","),
                 alt.Tooltip("parameters (B):Q", format=",.1f"), alt.Tooltip("tokens (T):Q", format=",.2f"),
                 alt.Tooltip("days with failures:Q", format=",.1f"),
                 alt.Tooltip("cost with failures (USD):Q", format="$,.0f")]).properties(height=60 + 36 * len(df))
