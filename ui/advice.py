"""The advisor's changes as Calculator inputs (URL keys from the schema, core/inputs.py), so one click applies an
option; the words come from the core (`core.advisor.describe`), the same the CLI prints."""
from __future__ import annotations

from core import advisor
from core import inputs as I

from .state import to_widget

# every knob the advisor turns is an input with a widget on the Calculator: it may propose all of them there, and its
# answer is the command line's (`python -m core advise`)
CALCULATOR_KNOBS = tuple(k for k in advisor.KNOBS if I.BY_NAME[k].ui is not None)


def widget_values(change: dict) -> dict:
    """{'zero_stage': 1} -> {'zero': 1} (the widgets' keys and units); names without a widget are dropped."""
    out = {}
    for k, v in change.items():
        if k not in I.BY_NAME or I.BY_NAME[k].ui is None:
            continue
        if isinstance(v, bool) and k in I.PRESET_FIELDS["recipe"]:  # drawn "(from the preset)" / on / off
            v = "on" if v else "off"
        out[I.BY_NAME[k].ui.key] = to_widget(k, v)
    return out


def describe(change: dict, cfg=None) -> str:
    """'flash attention on + ZeRO stage 2' (core.advisor.describe)."""
    return advisor.describe(change, cfg)
