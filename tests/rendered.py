"""What a markdown message shows (AppTest gives an element's markdown source): `ui.fmt.inert`'s backslash escapes and
word joiners removed, so tests read the text a visitor reads."""
from __future__ import annotations

import re


def rendered(md: str) -> str:
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", md.replace("\u2060", ""))
