"""Chart builders for the predicted step (core/steptime.py): a stacked bar of the step's parts per layout, and a
TP × PP heatmap of the best predicted MFU. Pure builders: tidy DataFrame in, alt.Chart out; SI columns."""
from __future__ import annotations

import altair as alt
import pandas as pd

from core.record import STEP_PART_COLOURS, STEP_PART_WORDS, STEP_PARTS

PART_COLORS = STEP_PART_COLOURS  # one owner: core/steptime.py TERMS
PART_LABELS = {k: k[:-2].replace("_", " ") for k in STEP_PARTS}


def step_parts_long(df: pd.DataFrame, label: str = "layout") -> pd.DataFrame:
    """One row per (layout, part) with seconds; parts that are zero for every layout left out (legend = drawn)."""
    rows = [{"layout": r[label], "rank": i, "part": PART_LABELS[k], "what": STEP_PART_WORDS[k], "seconds": r[k]}
            for i, (_, r) in enumerate(df.iterrows()) for k in STEP_PARTS]
    long = pd.DataFrame(rows)
    drawn = long.groupby("part")["seconds"].transform("max") > 0
    return long[drawn].reset_index(drop=True)


def step_breakdown(long: pd.DataFrame) -> alt.Chart:
    """Horizontal stacked bars: one per layout (best on top), segments = the step's parts in seconds."""
    parts = [PART_LABELS[k] for k in STEP_PARTS if PART_LABELS[k] in set(long["part"])]
    colors = [PART_COLORS[k] for k in STEP_PARTS if PART_LABELS[k] in set(long["part"])]
    return alt.Chart(long).mark_bar().encode(
        y=alt.Y("layout:N", sort=alt.SortField("rank"), title=None),
        x=alt.X("sum(seconds):Q", title="predicted step time (s)"),
        color=alt.Color("part:N", scale=alt.Scale(domain=parts, range=colors), title="part of the step",
                        sort=parts),
        order=alt.Order("part_index:Q"),
        tooltip=["layout:N", "part:N", alt.Tooltip("seconds:Q", format=".3g"), "what:N"],
    ).transform_calculate(part_index=f"indexof({parts!r}, datum.part)").properties(height=alt.Step(22))


def tp_pp_heatmap(df: pd.DataFrame) -> alt.LayerChart:
    """Best predicted MFU for each tensor × pipeline degree (over every other choice); empty cells: none fits."""
    base = alt.Chart(df).encode(x=alt.X("tp:O", title="tensor parallel (tp)"),
                                y=alt.Y("pp:O", title="pipeline parallel (pp)", sort="descending"))
    heat = base.mark_rect().encode(
        color=alt.Color("predicted_mfu:Q", title="best predicted MFU", scale=alt.Scale(scheme="viridis"),
                        legend=alt.Legend(format=".0%")),
        tooltip=["tp:O", "pp:O", alt.Tooltip("predicted_mfu:Q", format=".1%", title="predicted MFU"),
                 alt.Tooltip("predicted_step_time_s:Q", format=".3g", title="step (s)")])
    text = base.mark_text(fontSize=11).encode(text=alt.Text("predicted_mfu:Q", format=".0%"),
                                              color=alt.value("white"))
    return (heat + text).properties(height=320)
