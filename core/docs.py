"""docs/inputs.md, generated from the schemas: `python -m core.docs` rewrites it (a test keeps it in step)."""
from __future__ import annotations

from pathlib import Path

from . import inputs as I
from . import record as R

OUT = Path(__file__).resolve().parent.parent / "docs" / "inputs.md"


def _cell(x) -> str:
    return str(x).replace("|", "\\|")


def inputs_markdown() -> str:
    L = ["# Inputs and record columns", "",
         "Generated from `core/inputs.py` (inputs, validation rules) and `core/record.py` (output columns) by "
         "`python -m core.docs`; do not edit by hand. CLI flags are the names with dashes (`--seq-len`).", ""]
    for group in I.GROUPS:
        L += [f"## Inputs: {group}", "", "| name | kind | unit or choices | default | meaning |", "|---|---|---|---|---|"]
        for i in (i for i in I.INPUTS if i.group == group):
            what = ", ".join(map(str, i.choices)) if i.choices else i.unit
            default = "" if i.default is None else i.default
            L.append(f"| `{i.name}` | {i.kind} | {_cell(what)} | {_cell(default)} | {_cell(i.help)} |")
        L.append("")
    L += ["## Validation rules (first failing rule wins)", "", "| code | field | rule |", "|---|---|---|"]
    L += [f"| {n} | `{r.field}` | {_cell(r.message)} |" for n, r in enumerate(I.RULES, 1)]
    L += ["", "## Record columns", "", "| name | kind | unit | meaning |", "|---|---|---|---|"]
    L += [f"| `{c.name}` | {c.kind} | {_cell(c.unit)} | {_cell(c.meaning)} |" for c in R.RECORD]
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    OUT.write_text(inputs_markdown())
    print(f"wrote {OUT}")
