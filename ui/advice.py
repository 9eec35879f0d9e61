"""The advisor's changes in words, and as Calculator inputs (URL names) so one click applies them."""
from __future__ import annotations

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
}


def widget_values(change: dict) -> dict:
    """{'zero_stage': 1} -> {'zero': 1}; unknown keys are dropped."""
    out = {}
    for k, v in change.items():
        if k in TO_WIDGET:
            name, conv = TO_WIDGET[k]
            out[name] = conv(v)
    return out


def describe(change: dict) -> str:
    words = []
    for k, v in change.items():
        if k == "flash_attention":
            words.append("turn on flash attention" if v else "turn off flash attention")
        elif k == "zero_stage":
            words.append(f"ZeRO stage {v}")
        elif k == "fp32_loss":
            words.append("compute the loss without an fp32 logits copy")
        elif k == "recompute":
            words.append(f"{v} recomputation")
        elif k == "micro_batch":
            words.append(f"micro-batch {v}")
        elif k == "master_weights":
            words.append("drop the fp32 master copy" if not v else "keep an fp32 master copy")
        elif k == "tp":
            words.append(f"tensor parallel {v}")
        elif k == "n_gpus":
            words.append(f"{v:,} GPUs")
        elif k == "seq_len":
            words.append(f"sequence length {v:,}")
        else:
            words.append(f"{k} = {v}")
    return " + ".join(words)
