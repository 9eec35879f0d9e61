"""URL-bound inputs: every input of every page lives in the page's URL, so a copied link reproduces the view.

Each page creates one `Page` at the top (`Page("calculator", prefix="")`) and draws its inputs through the page's
widget helpers (`pg.select`, `pg.integer`, `pg.number`, `pg.toggle`, `pg.multi`). A helper

- binds the widget to the URL (`bind="query-params"`, key = page prefix + name; no `format_func`, so the URL
  holds the option itself),
- records a `Spec` of what the widget accepts, so the parameters a link arrived with can be checked: a value the
  widget cannot take (malformed, out of range, an unknown option, hostile text) falls back to the default and a
  visible note names the parameter, the reason and the value used — never a traceback,
- carries shared inputs (the model, the accelerator, the sequence length, ...) from one page to the next inside a
  session: on entering a page without a link (the sidebar), a shared input starts from the value last chosen on any
  page — chosen meaning changed by the user, set from code, or supplied by a link, never a default left alone.

A page entered with any of its own parameters in the URL (a shared link, a landing-page example, a fit-map cell,
browser Back) is entered through a link, and the link is authoritative: every input of that page the URL does not
name starts from its default — whatever this session last had there — and nothing is carried in. A link reproduces
exactly what its sender saw.

Streamlit writes a value set from code into the URL only when its widget was drawn in an earlier run (1.67,
`SessionState.register_widget`), so values set before their widget was ever drawn (carried inputs, an uploaded
config.json copied into the architecture fields) are written to the URL here once the widget has drawn them.

Keys are the public URL names: short, unique per page (pages bind different keys, because a key bound on the page
being left is filtered out of a link to another page and cannot be passed to `st.switch_page`), and stable.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import streamlit as st
from streamlit.errors import StreamlitAPIException

from core import inputs as I
from core.inputs import link_params, to_param, to_widget  # noqa: F401  (the one owner: core/inputs.py)
from core.units import is_ascii_number

from .fmt import inert

RESERVED = {"embed", "embed_options"}
# Names whose value follows the user from page to page within a session (the key on each page is prefix + name):
# every input of the schema (core/inputs.py WIDGETS: model, accelerator, GPUs, sequence, global batch, layout,
# recipe, …), where the model comes from, and the memory unit.
SHARED = {w.key for w in I.WIDGETS.values()} | {"src", "unit"}
FOLLOW = "(preset)"  # the option of an input a preset sets (recipe → dtypes): not given, the preset decides
BY_RULE = "(default)"  # the option of a choice whose default is a rule (base_dtype: nf4 under qlora, else weights')
_ALL_KEYS: set[str] = set()  # every key any page has bound in this process (to tell "another page's" from unknown)
_PAGE_KEYS: dict[str, set[str]] = {}  # page id -> the keys that page has bound in this process
_PREFIXES: set[str] = set()  # the key prefixes of the pages created in this process
# session keys a page keeps beside its widgets, cleared with them when a link enters the page
_PAGE_EXTRAS = ("hf_name", "hf_error")


@dataclass(frozen=True)
class Spec:
    """What one URL-bound widget accepts. `parse` mirrors the widget: it returns the value the widget would take
    from the URL text, or raises ValueError with the reason it cannot."""

    key: str
    kind: str  # choice | int | float | bool | multi | text (hi = max length)
    default: Any = None
    options: tuple = ()
    lo: float | None = None
    hi: float | None = None
    canon: Callable | None = None  # other names the input accepts (core/inputs.Input.canon: a framework's stacks)

    def parse(self, raw: Sequence[str]) -> Any:
        if self.kind == "multi":  # as the widget reads it: empty values dropped (`?k=` is an empty selection),
            raw = [r for r in raw if r != ""]  # repeated values once
            bad = [r for r in raw if self._option(r) is None]
            if bad:
                raise ValueError(f"{_short(bad[0])!s} is not one of {_opts(self.options)}")
            out: list = []
            for r in raw:
                o = self._option(r)
                if not any(_same(o, x) for x in out):
                    out.append(o)
            return out
        text = raw[-1] if raw else ""
        if self.kind == "choice":
            v = self._option(self.canon(text) if self.canon is not None else text)
            if v is None:
                raise ValueError(f"not one of {_opts(self.options)}")
            return v
        if self.kind == "bool":
            if text.lower() not in ("true", "false"):
                raise ValueError("must be true or false")
            return text.lower() == "true"
        if self.kind == "text":
            if self.hi is not None and len(text) > self.hi:
                raise ValueError(f"longer than {self.hi:g} characters")
            if not text.isprintable():
                raise ValueError("contains control characters")
            return text
        if not is_ascii_number(text):
            raise ValueError("not a number (ASCII digits)")
        try:
            x = float(text)
        except (ValueError, OverflowError):
            raise ValueError("not a number") from None
        if not math.isfinite(x):
            raise ValueError("must be a finite number")
        if self.kind == "int" and x != int(x):
            raise ValueError("must be a whole number")
        if (self.lo is not None and x < self.lo) or (self.hi is not None and x > self.hi):
            raise ValueError(f"must be between {_num(self.lo)} and {_num(self.hi)}")
        return int(x) if self.kind == "int" else x

    def accepts(self, value: Any) -> bool:
        try:
            if self.kind == "multi":
                return isinstance(value, list) and all(v in self.options for v in value)
            if self.kind == "choice":
                return value in self.options
            if self.kind == "bool":
                return isinstance(value, bool)
            if self.kind == "text":
                return isinstance(value, str) and (self.hi is None or len(value) <= self.hi)
            if value is None:
                return self.default is None  # an empty box: accepted where the input may be left unset
            if isinstance(value, bool):
                return False
            x = float(value)
            return math.isfinite(x) and (self.lo is None or x >= self.lo) and (self.hi is None or x <= self.hi) \
                and (self.kind != "int" or x == int(x))
        except (TypeError, ValueError):
            return False

    def _option(self, text: str):
        for o in self.options:
            if str(o) == text:
                return o
        if self.options and all(isinstance(o, int) and not isinstance(o, bool) for o in self.options) \
                and is_ascii_number(text):
            try:
                x = float(text)
            except ValueError:
                return None
            for o in self.options:
                if x == o:
                    return o
        return None


def _short(x: Any, n: int = 40) -> str:
    s = str(x)
    s = "".join(c if c.isprintable() else "?" for c in s)
    return s if len(s) <= n else s[: n - 1] + "…"


def _opts(options: tuple) -> str:
    shown = ", ".join(str(o) for o in options[:8])
    return shown + (", …" if len(options) > 8 else "")


def _num(x) -> str:
    if x is None:
        return "—"
    if float(x).is_integer() and abs(x) < 1e16:
        return f"{int(x):,}"
    return f"{x:g}"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        try:
            return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
        except (TypeError, ValueError):
            return False
    return a == b


@dataclass
class Page:
    """One run of one page: its URL-bound inputs, the notes about the link's parameters, and the carried values.

    `page_id` names the page in session state; `prefix` is prepended to every input name to form its URL key.
    """

    page_id: str
    prefix: str = ""
    specs: dict[str, Spec] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)  # input name -> value drawn this run

    def __post_init__(self):
        ss = st.session_state
        self.entry = ss.get("_ui_page") != self.page_id
        self.fresh_session = "_ui_page" not in ss
        ss["_ui_page"] = self.page_id
        _PREFIXES.add(self.prefix)
        self._carry: dict = ss.setdefault("_ui_carry", {})
        self._last: dict = ss.setdefault("_ui_last", {})  # key -> the value drawn in this session's last run
        self._keys: set = ss.setdefault("_ui_keys", {}).setdefault(self.page_id, set())  # bound in this session
        self.link = False  # entered through a link: the URL alone sets this page's inputs
        if self.entry:
            ss["_ui_url"] = {k: st.query_params.get_all(k) for k in st.query_params if k.lower() not in RESERVED}
            ss["_ui_notes"] = []
            self.link = any(self._owns(k) for k in ss["_ui_url"])
        # values set from code (carried on entry, or by a callback) whose widget draws them for the first time:
        # Streamlit does not put those in the URL, so `_widget` does once it has drawn them
        self._to_url: dict = ss.setdefault("_ui_to_url", {}).setdefault(self.page_id, {})
        self._url: dict = ss["_ui_url"]
        self._notes: list = ss["_ui_notes"]
        if self.link:
            self._reset_for_link()
        self._note_box = st.empty()
        self._show_notes()

    def _owns(self, k: str) -> bool:
        """Whether URL parameter `k` is an input of this page: one it has bound in this process, or — before it
        has run here — one with its prefix and no other page's."""
        if k in _PAGE_KEYS.get(self.page_id, ()) or k in self._keys:
            return True
        if k in _ALL_KEYS:
            return False
        longer = [p for p in _PREFIXES if p != self.prefix and p.startswith(self.prefix)]
        return k.startswith(self.prefix) and not any(k.startswith(p) for p in longer)

    def _reset_for_link(self) -> None:
        """Entered through a link: forget what this session last had in the inputs the URL does not name, so they
        start from their defaults (a deleted key makes its widget take its default), and write nothing pending."""
        ss = st.session_state
        extras = [self.key(n) for n in _PAGE_EXTRAS] if self._keys else []  # only a page with inputs has extras
        for k in list(self._keys) + extras:
            if k not in self._url:
                if k in ss:
                    del ss[k]
                self._last.pop(k, None)
        self._to_url.clear()

    # --- the widget helpers ---------------------------------------------------------------------------------
    def key(self, name: str) -> str:
        return self.prefix + name

    def select(self, label: str, options: Sequence, name: str, default=None, *, container=None, radio=False,
               help: str | None = None, on_change: Callable | None = None, canon: Callable | None = None) -> Any:
        """A selectbox (or horizontal radio) over plain options (the option itself is the URL value; `canon` maps the
        other names a link may give to an option)."""
        options = tuple(options)
        default = options[0] if default is None else default
        spec = Spec(self.key(name), "choice", default, options, canon=canon)
        c = container or st

        def draw(k):
            fn = c.radio if radio else c.selectbox
            kw = dict(horizontal=True) if radio else {}
            return fn(label, options, index=options.index(default), key=k, bind="query-params", help=help,
                      on_change=on_change, **kw)
        return self._widget(name, spec, draw)

    def integer(self, label: str, name: str, default: int | None, lo: int, hi: int, *, step: int = 1,
                container=None, help: str | None = None) -> int | None:
        """An integer input; `default=None` gives an empty box that means "not set"."""
        spec = Spec(self.key(name), "int", None if default is None else int(default), lo=lo, hi=hi)
        c = container or st
        return self._widget(name, spec, lambda k: c.number_input(
            label, min_value=int(lo), max_value=int(hi), value=None if default is None else int(default),
            step=int(step), key=k, bind="query-params", help=help))

    # --- inputs of the schema, drawn from their rows (core/inputs.py: Input and its Widget) -----------------
    def input(self, name: str, container=None, *, follow: str | None = None, options: Sequence | None = None,
              help: str | None = None, on_change: Callable | None = None, label: str | None = None,
              default: Any = None) -> Any:
        """Draw the schema input `name` with its URL key, label, range, step and default (core/inputs.py), and return
        its value in the core's units — or None when left to its default rule (an empty box: mfu → predicted,
        global_batch → the target tokens per step; "(from the preset)" for an input a preset sets, `follow` naming
        the preset). `options` narrows a choice's list (a page that offers fewer); `default` (core units) is for the
        inputs whose default is data, not a schema fact — a preset's own architecture fields, the catalog row a custom
        accelerator starts from; nothing else is restated."""
        i = I.BY_NAME[name]
        w = i.ui
        lab = label or w.label
        hlp = help or w.help or i.describe()
        c = container
        if i.kind == "choice" or (i.kind == "int" and i.choices) or name in ("gpu", "model"):
            opts = tuple(options if options is not None else i.choices if i.choices else _names(name))
            if follow or (i.default is None and default is None):  # a preset or a default rule decides
                first = FOLLOW if follow else BY_RULE
                v = self.select(lab, (first,) + opts, w.key, first, container=c, help=hlp, radio=w.radio,
                                on_change=on_change)
                return None if v == first else v
            start = default if default is not None else i.default
            start = start if start in opts else opts[0]
            return self.select(lab, opts, w.key, start, container=c, help=hlp, radio=w.radio, on_change=on_change,
                               canon=i.canon)
        if i.kind == "str" and w.multi:  # a list of names (recompute_modules): a multiselect, joined by commas
            start = default if default is not None else i.default
            picked = self.multi(lab, w.multi, w.key, [n for n in str(start or "").split(",") if n in w.multi],
                                container=c, help=hlp)
            return ",".join(picked)
        if i.kind == "str":  # free text (remat_custom's 'name=where, ...'): the rules check it
            start = default if default is not None else i.default
            return self.text(lab, w.key, str(start or ""), max_chars=400, container=c, help=hlp)
        if i.kind == "bool":
            if follow or (i.default is None and default is None):  # a preset or a default rule decides
                first = FOLLOW if follow else BY_RULE
                v = self.select(lab, (first, "on", "off"), w.key, first, container=c, help=hlp)
                return None if v == first else v == "on"
            if follow:
                v = self.select(lab, (FOLLOW, "on", "off"), w.key, FOLLOW, container=c, help=hlp)
                return None if v == FOLLOW else v == "on"
            return self.toggle(lab, w.key, bool(i.default if default is None else default), container=c, help=hlp)
        lo, hi = widget_bounds(i)
        start = i.default if default is None else default
        default = None if follow or start is None or start == "auto" else start / w.scale
        if i.kind == "int" and w.scale == 1:
            v = self.integer(lab, w.key, None if default is None else int(default), int(lo), int(hi),
                             step=int(w.step or 1), container=c, help=hlp)
            return None if v is None else int(v)
        v = self.number(lab, w.key, default, lo, hi, step=w.step, container=c, help=hlp)
        if v is None:
            return None
        x = v * w.scale
        return int(round(x)) if i.kind == "int" else x

    def widget_value(self, name: str):
        """The value the widget of schema input `name` shows on this page (widget units), or None."""
        return self.values.get(I.BY_NAME[name].ui.key)

    def number(self, label: str, name: str, default: float | None, lo: float, hi: float, *, step: float | None = None,
               container=None, help: str | None = None) -> float | None:
        """A float input; `default=None` gives an empty box that means "not set"."""
        spec = Spec(self.key(name), "float", None if default is None else float(default), lo=lo, hi=hi)
        c = container or st

        def draw(k):
            return c.number_input(label, min_value=float(lo), max_value=float(hi),
                                  value=None if default is None else float(default),
                                  step=None if step is None else float(step), key=k,
                                  bind="query-params", help=help)
        return self._widget(name, spec, draw)

    def toggle(self, label: str, name: str, default: bool = False, *, container=None, help: str | None = None) -> bool:
        spec = Spec(self.key(name), "bool", bool(default))
        c = container or st
        return self._widget(name, spec, lambda k: c.toggle(label, value=bool(default), key=k, bind="query-params",
                                                           help=help))

    def text(self, label: str, name: str, default: str = "", *, max_chars: int = 200, container=None,
             help: str | None = None, placeholder: str | None = None) -> str:
        spec = Spec(self.key(name), "text", default, hi=max_chars)
        c = container or st
        return self._widget(name, spec, lambda k: c.text_input(label, value=default, max_chars=max_chars, key=k,
                                                               bind="query-params", help=help,
                                                               placeholder=placeholder))

    def multi(self, label: str, options: Sequence, name: str, default: Sequence = (), *, container=None,
              help: str | None = None, max_selections: int | None = None) -> list:
        options = tuple(options)
        spec = Spec(self.key(name), "multi", list(default), options)
        c = container or st
        return self._widget(name, spec, lambda k: c.multiselect(label, options, default=list(default), key=k,
                                                                bind="query-params", help=help,
                                                                max_selections=max_selections))

    def _register(self, k: str) -> None:
        _ALL_KEYS.add(k)
        _PAGE_KEYS.setdefault(self.page_id, set()).add(k)
        self._keys.add(k)

    def _widget(self, name: str, spec: Spec, draw: Callable[[str], Any]) -> Any:
        k = spec.key
        self.specs[k] = spec
        self._register(k)
        ss = st.session_state
        if self.entry and not self.link and name in SHARED and k not in self._url and name in self._carry:
            v = self._carry[name]
            if spec.accepts(v):  # also when it equals this page's default: it may replace an older value here
                ss[k] = v
                if not _same(v, spec.default):
                    self._to_url[k] = v
        bad = self._precheck(spec)
        value = draw(k)
        if k in self._to_url:
            if _same(self._to_url.pop(k), value) and not _same(value, spec.default):
                _write_url(k, value)
        from_url = self.entry and k in self._url
        if from_url:
            self._check_url_value(spec, value, bad)
        if name in SHARED:
            # carry a choice: a value the user (or code) changed since the last run, one a link supplied, or one
            # that differs from this page's default; a default left alone is no choice and keeps the carried value
            changed = k in self._last and not _same(self._last[k], value)
            if changed or (from_url and bad is None) or not _same(value, spec.default):
                self._carry[name] = value
            elif self.link:  # the link shows this page's default here: that is what follows to the next page
                self._carry.pop(name, None)
        self._last[k] = value
        self.values[name] = value
        return value

    def _precheck(self, spec: Spec) -> ValueError | None:
        """On entry, a URL value the widget cannot take is kept from it (some values crash Streamlit's own parser,
        e.g. 1e400 for an integer) and returned, to be named in the note."""
        if self.entry and spec.key in self._url:
            try:
                v = spec.parse(self._url[spec.key])
            except ValueError as e:
                _drop_param(spec.key)
                return e
            raw = self._url[spec.key]
            if spec.canon is not None and raw and str(v) != raw[-1]:  # another name of an option (a framework's
                _drop_param(spec.key)  # stack): the widget takes the option, and the URL shows the option's name
                st.session_state[spec.key] = v
                self._to_url[spec.key] = v
        return None

    def expander(self, label: str, name: str, *, container=None):
        """An expander whose open state is in the URL and reruns the page, so its content can be computed only when
        it is open (`if exp.open:`)."""
        k = self.key(name)
        spec = Spec(k, "bool", False)
        self.specs[k] = spec
        self._register(k)
        bad = self._precheck(spec)
        exp = (container or st).expander(label, key=k, on_change="rerun", bind="query-params")
        if self.entry and k in self._url:
            self._check_url_value(spec, bool(exp.open), bad)
        return exp

    def calculator_params(self, drop: Sequence[str] = (), **overrides) -> dict[str, str | list[str]]:
        """This page's shared inputs (less `drop`, plus overrides) as Calculator URL parameters, for opening a
        configuration in the Calculator (whose keys are the bare input names)."""
        vals = {k: v for k, v in self.values.items() if k in SHARED and k not in drop}
        vals.update(overrides)
        return {k: to_param(v) for k, v in vals.items() if v is not None}

    # --- programmatic changes (callbacks) -------------------------------------------------------------------
    def set_values(self, values: dict[str, Any]) -> None:
        """Set inputs by name from a callback; the URL follows once their widgets are drawn."""
        ss = st.session_state
        for name, v in values.items():
            ss[self.key(name)] = v
            self._to_url[self.key(name)] = v

    # --- notes about the link's parameters ------------------------------------------------------------------
    def _check_url_value(self, spec: Spec, value: Any, bad: ValueError | None) -> None:
        raw = self._url.get(spec.key, [])
        if bad is not None:
            self.note(f"{inert(spec.key)}={inert(_short(raw[-1] if raw else ''))}: {inert(bad)}; using "
                      f"{inert(_short(_show(value)))}")
            return
        parsed = spec.parse(raw)
        if spec.kind == "multi":
            ok = list(parsed) == list(value or [])
        else:
            ok = _same(parsed, value)
        if not ok:
            self.note(f"{inert(spec.key)}={inert(_short(raw[-1] if raw else ''))} could not be applied; "
                      f"using {inert(_short(_show(value)))}")

    def note(self, text: str) -> None:
        """A note about the link's parameters, as markdown: every user-supplied part already `inert`."""
        if text not in self._notes:
            self._notes.append(text)
            self._show_notes()

    def _show_notes(self) -> None:
        if self._notes:
            self._note_box.warning("Some link parameters were not used (the defaults stand in for them):\n\n"
                                   + "\n".join(f"- {n}" for n in self._notes), icon=":material/link_off:")

    def _unknown_params(self) -> None:
        if not self.entry:
            return
        for k in self._url:
            if k in self.specs:
                continue
            if k in _ALL_KEYS and not self.fresh_session:
                continue  # a parameter of the page just left, still in the URL during the switch
            self.note(f"{inert(_short(k, 30))} is not an input of this page (with these settings); ignored")

    # --- end of the run ---------------------------------------------------------------------------------------
    def finish(self) -> None:
        """Call at the end of the page (also on the error path, before `st.stop`)."""
        self._unknown_params()

    def stop(self) -> None:
        self.finish()
        st.stop()


def _drop_param(key: str) -> None:
    """Remove a parameter from the URL before its widget reads it (possible while the widget is unbound).

    Streamlit 1.67 seeds a bound widget from the URL as it was when the page loaded
    (`QueryParams._initial_query_params`), and an integer `number_input` parses "1e400" to infinity and then raises
    an uncaught OverflowError (`number_input.deserialize`: `int(val)`), so the value is removed from that snapshot
    too. No public API reaches it; if a later Streamlit moves it, only the URL copy is removed."""
    try:
        del st.query_params[key]
    except (KeyError, StreamlitAPIException):
        pass
    try:
        from streamlit.runtime.state.session_state_proxy import get_session_state
        with get_session_state().query_params() as qp:
            qp._initial_query_params.pop(key, None)
    except (ImportError, AttributeError, TypeError):
        pass


def _write_url(key: str, value: Any) -> None:
    """Put a bound widget's value in the URL. Streamlit 1.67 does this itself when code sets the value of a widget
    drawn in an earlier run, but not for a widget drawn for the first time with a value set from code (a value
    carried from another page, or fields filled from an uploaded config.json) — and `st.query_params` refuses to
    write a bound key. This uses the same call Streamlit uses to correct a clamped URL value."""
    try:
        from streamlit.runtime.state.session_state_proxy import get_session_state
        with get_session_state().query_params() as qp:
            qp.set_corrected_value(key, to_param(value),
                                   "string_array_value" if isinstance(value, (list, tuple)) else "string_value")
    except (ImportError, AttributeError, TypeError):
        pass


def _show(v: Any) -> str:
    """A widget value for a note: lists joined, booleans on/off, whole numbers with thousands separators."""
    if isinstance(v, list):
        return ", ".join(_show(x) for x in v) or "(none)"
    if v is None:
        return "(empty)"
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, (int, float)):
        return _num(v) if math.isfinite(v) else str(v)
    return str(v)


def _names(name: str) -> tuple:
    """The options of the two named inputs: catalog accelerators (+ custom), presets."""
    if name == "gpu":
        from core.hardware import accelerator_names
        return tuple(accelerator_names()) + ("custom",)
    from core.model import preset_names
    return tuple(preset_names())


def widget_bounds(i) -> tuple[float, float]:
    """A schema input's widget range in widget units: the Widget's own, else the input's bounds ÷ scale (within
    what a number widget holds)."""
    w = i.ui
    lo = w.lo if w.lo is not None else (i.lo / w.scale if i.lo is not None else 0.0)
    hi = w.hi if w.hi is not None else (i.hi / w.scale if i.hi is not None else 1e15)
    return max(lo, -1e15), min(hi, 1e15)


