"""The advisor's changes as Calculator inputs (URL names), so one click applies an option; the words come from the
core (`core.advisor.describe`), the same the CLI prints."""
from __future__ import annotations

from core import advisor

# advisor change key -> (Calculator input name, how the value maps to the widget)
TO_WIDGET = {
    "flash_attention": ("flash", bool),
    "zero_stage": ("zero", int),
    "fp32_loss": ("f32loss", bool),
    "recompute": ("rc", str),
    "micro_batch": ("mb", int),
    "master_weights": ("master", lambda v: "yes" if v else "no"),
    "tp": ("tp", int),
    "n_gpus": ("gpus", int),
    "seq_len": ("seq", int),
    "global_batch": ("gbs", int),
}
# the knobs the Calculator can apply (the advisor proposes nothing else there)
CALCULATOR_KNOBS = tuple(k for k in advisor.KNOBS if k in TO_WIDGET)


def widget_values(change: dict) -> dict:
    """{'zero_stage': 1} -> {'zero': 1}; unknown keys are dropped."""
    out = {}
    for k, v in change.items():
        if k in TO_WIDGET:
            name, conv = TO_WIDGET[k]
            out[name] = conv(v)
    return out


def describe(change: dict, cfg=None) -> str:
    """'flash attention on + ZeRO stage 2' (core.advisor.describe)."""
    return advisor.describe(change, cfg)
