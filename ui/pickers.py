"""The shared input widgets every page uses, drawn from the input schema (core/inputs.py): the model, the accelerator,
the recipe, what trains, the memory savers, the batch, the run — and "All inputs", every other input of the schema.

Nothing here restates an input's default, bounds, label or URL key: `ui.state.Page.input(name)` draws an input from
its schema row (Input and its Widget). Each picker returns a piece of the flat input vocabulary of
`core.estimate.config_from_inputs` in the core's units (an input left to its default rule is simply not there), so a
page builds one frozen `Config` from the dict union — the same one the CLI builds from the same inputs.
"""
from __future__ import annotations

import streamlit as st

from core import inputs as I
from core import memory as M
from core import safejson
from core.advisor import DEFAULT_MARGIN
from core.estimate import CUSTOM_LINKS_FROM
from core.hardware import catalog
from core.model import ARCH_FIELDS, from_hf_config, get_preset, preset_info

from . import fmt
from .state import FOLLOW, Page, to_widget

SOURCES = ("preset", "architecture", "params", "hf-config")
SOURCE_HELP = ("Where the model comes from: **preset** (published shapes, data/models.csv), **architecture** "
               "(type the fields), **params** (only a parameter count; the activations use the nearest GPT-3 shape), "
               "**hf-config** (upload a Hugging Face config.json; it fills the architecture fields, which the link "
               "then carries).")
HF_MAX_BYTES = 1 << 20  # = server.maxUploadSize (1 MB in Streamlit's units, 2^20 bytes) in .streamlit/config.toml
DEFAULT_MODEL = "llama-3.1-8b"  # the preset a page shows first (a page choice, not an input default: model is optional)
# the architecture fields drawn first; the rest go under "More architecture fields"
ARCH_MAIN = ("n_layers", "d_model", "n_heads", "n_kv_heads", "d_ff", "vocab_size", "mlp", "norm")
# inputs a picker draws (so "All inputs" leaves them out): the model's and the custom accelerator's
MODEL_NAMES = ("model", "n_params", "hf_config", *ARCH_FIELDS)
CUSTOM_FIELDS = I.GPU_FIELDS


def arch_values(m) -> dict:
    """A model's architecture as widget key -> value (what the architecture fields show for it)."""
    return {I.BY_NAME[f].ui.key: to_widget(f, getattr(m, f)) for f in ARCH_FIELDS}


def model_picker(pg: Page, container=None, default: str = DEFAULT_MODEL, src_default: str = "preset",
                 arch_default: dict | None = None) -> dict:
    """Model inputs for `config_from_inputs`: {'model': preset} | architecture fields | {'n_params': N}.
    `arch_default` (model field names -> values) replaces the default preset's shape as the fields' defaults (a page
    that starts from a small model: the PyTorch check)."""
    c = container or st
    src_key = pg.key("src")

    def on_src():
        new = st.session_state.get(src_key)
        if new == "architecture":  # start the fields from the preset that was showing
            name = st.session_state.get(pg.key(I.BY_NAME["model"].ui.key), default)
            try:
                pg.set_values(arch_values(get_preset(name)))
            except ValueError:
                pass
    src = pg.select("Model from", SOURCES, "src", src_default, container=c, radio=True, help=SOURCE_HELP,
                    on_change=on_src)
    if src == "params":
        n = pg.input("n_params", c)
        if n is None:
            c.caption("Type the parameter count (billions).")
        return {} if n is None else {"n_params": n}
    if src == "architecture":
        if st.session_state.get(pg.key("hf_name")):
            c.caption(f"Fields from the uploaded {fmt.inert(st.session_state[pg.key('hf_name')], 80)}.")
        base = get_preset(default)
        start = {f: getattr(base, f) for f in ARCH_FIELDS}
        start.update(arch_default or {})
        return _arch_fields(pg, c, start)
    if src == "hf-config":
        _hf_upload(pg, c)
        c.caption("Until a config.json is uploaded, the preset below is used.")
    name = pg.input("model", c, default=default)
    info = preset_info(name)
    m = get_preset(name)
    c.caption(f"{info['label']} · {fmt.count(m.n_params)} parameters"
              + (f" ({fmt.count(m.n_active_params)} active)" if m.n_active_params != m.n_params else ""))
    return {"model": name}


def _arch_fields(pg: Page, c, start: dict) -> dict:
    """Every architecture field of the schema (its widget), defaulting to `start` (a model's own fields)."""
    out = {}
    cols = c.columns(2)
    for j, f in enumerate(ARCH_MAIN):
        out[f] = pg.input(f, cols[j % 2], default=start[f])
    with c.expander("More architecture fields"):
        for f in ARCH_FIELDS:
            if f not in ARCH_MAIN:
                out[f] = pg.input(f, default=start[f])
    return out


def hf_model(raw: bytes):
    """A Model from the bytes of an uploaded Hugging Face config.json, parsed locally and bounded (core.safejson:
    size, nesting, finite numbers) and read exactly as the CLI's `--hf-config` reads a file (`from_hf_config`, then
    the schema's bounds by name: `core.estimate.build_model`): the app's import equals the CLI's, and the fields it
    fills are every architecture field the schema has. ValueError names the config's field."""
    from core.estimate import _within_bounds
    data = safejson.loads(raw, "config", max_bytes=HF_MAX_BYTES)
    if not isinstance(data, dict):  # from_hf_config reads anything else as a file path
        raise ValueError("config: a Hugging Face config.json must be a JSON object")
    return _within_bounds(from_hf_config(data))


def _hf_upload(pg: Page, c) -> None:
    up_key, err_key = pg.key("hf_file"), pg.key("hf_error")

    def on_upload():
        f = st.session_state.get(up_key)
        st.session_state[err_key] = None
        if f is None:
            return
        try:
            m = hf_model(f.getvalue())
        except ValueError as e:
            st.session_state[err_key] = str(e)
            return
        st.session_state[pg.key("hf_name")] = f.name
        pg.set_values({**arch_values(m), "src": "architecture"})
    c.file_uploader("Hugging Face config.json", type=["json"], key=up_key, on_change=on_upload,
                    max_upload_size=HF_MAX_BYTES >> 20,
                    help="Read locally; nothing is downloaded. The fields it fills are what the link carries. "
                         f"At most {HF_MAX_BYTES >> 20} MiB.")
    if st.session_state.get(err_key):  # a refused upload shows no numbers: not the previous model's, not a preset's
        c.error(f"**config.json** — {fmt.inert(st.session_state[err_key], 600)}")
        st.error("The uploaded config.json was refused (the reason is in the sidebar): upload another, or choose "
                 "another model source.", icon=":material/block:")
        pg.stop()


def custom_accelerator_fields(pg: Page, container=None, *, memory: bool = True, links: bool = True) -> dict:
    """A custom accelerator's numbers (peak for the compute dtype, memory, HBM bandwidth, the two links), each
    starting from the `CUSTOM_LINKS_FROM` catalog row's (core/estimate.py)."""
    c = container or st
    g = catalog()[CUSTOM_LINKS_FROM]
    start = {"peak_flops_per_s": g.peak_bf16_flops_per_s, "gpu_memory_bytes": g.allocatable_bytes,
             "memory_bandwidth_bytes_per_s": g.memory_bandwidth_bytes_per_s,
             "intra_node_bytes_per_s": g.intra_node_bytes_per_s, "inter_node_bytes_per_s": g.inter_node_bytes_per_s}
    names = [n for n in CUSTOM_FIELDS if (memory or n != "gpu_memory_bytes")
             and (links or n not in ("intra_node_bytes_per_s", "inter_node_bytes_per_s"))]
    cols = c.columns(2)
    out = {}
    for j, n in enumerate(names):
        v = pg.input(n, cols[j % 2], default=start[n])
        out[n] = start[n] if v is None else v
    return out


def gpu_picker(pg: Page, container=None, price: bool = True) -> dict:
    """Accelerator inputs: {'gpu': name} or {'gpu': 'custom', its numbers}; plus a price override."""
    c = container or st
    gpu = pg.input("gpu", c,
                   help="data/accelerators.csv: dense peak (no sparsity), memory, bandwidth and price, each row with "
                        "its source. 'custom' takes your own numbers.")
    out: dict = {"gpu": gpu}
    if gpu == "custom":
        out.update(custom_accelerator_fields(pg, c))
        c.caption("Custom accelerator: the memory a process can allocate, in GB (10⁹ bytes), the dense peak for the "
                  "compute dtype, HBM "
                  f"bandwidth and links (starting from the {catalog()[CUSTOM_LINKS_FROM].label}).")
    else:
        g = catalog()[gpu]
        c.caption(f"{g.label}: {fmt.both_bytes(g.memory_bytes)} as the vendor states it"
                  + (f" ({fmt.both_bytes(g.allocatable_bytes)} a process can allocate)"
                     if g.allocatable_bytes != g.memory_bytes else "")
                  + f", {fmt.si(g.peak_bf16_flops_per_s, 'FLOP/s')} bf16, "
                  f"{fmt.si(g.memory_bandwidth_bytes_per_s, 'B/s')}, "
                  + (f"${g.price_usd_per_gpu_hour:.2f}/GPU-hour ({g.price_date})"
                     if g.price_usd_per_gpu_hour == g.price_usd_per_gpu_hour else "no catalog price"))
    if price:
        p = pg.input("price_per_gpu_hour", c)
        if p is not None:
            out["price_per_gpu_hour"] = p
    return out


RECIPE_HELP = {name: f"{M.RECIPE_BYTES[name]} B/param: {r.source}" for name, r in M.RECIPES.items()}


def recipe_picker(pg: Page, container=None, dtypes: bool = True) -> dict:
    """Training recipe: bytes per parameter (12/16/18/20), optimizer, compute dtype, and dtype overrides (each
    "(from the preset)" unless chosen: the recipe decides)."""
    c = container or st
    recipe = pg.input("recipe", c, help="\n\n".join(f"**{k}** — {v}" for k, v in RECIPE_HELP.items()))
    c.caption(RECIPE_HELP[recipe])
    cols = c.columns(2)
    out = {"recipe": recipe, "compute_dtype": pg.input("compute_dtype", cols[1])}
    opt = pg.input("optimizer", cols[0], follow="recipe")
    if opt is not None:
        out["optimizer"] = opt
    if dtypes:
        with c.expander("Dtypes (override the recipe)"):
            for n in ("weight_dtype", "grad_dtype", "master_weights", "grad_accum_fp32"):
                v = pg.input(n, follow="recipe")
                if v is not None:
                    out[n] = v
    return out


def training_picker(pg: Page, container=None) -> dict:
    """What trains: full, or fine-tune with LoRA / QLoRA (rank and target matrices)."""
    c = container or st
    out: dict = {"training": pg.input("training", c)}
    if out["training"] != "full":
        cols = c.columns(2)
        out["lora_rank"] = pg.input("lora_rank", cols[0])
        out["lora_targets"] = pg.input("lora_targets", cols[1])
    return out


def training_caption(rec: dict, c=None) -> None:
    """What trains in a record, in words (under the training picker)."""
    (c or st).caption(f"Trains {fmt.count(rec['n_trainable_params'])} of {fmt.count(rec['n_params'])} parameters"
                      + (f" ({rec['n_trainable_params'] / rec['n_params']:.2%})"
                         if rec["n_trainable_params"] < rec["n_params"] else "")
                      + (f"; MTP modules {fmt.count(rec['n_mtp_params'])} more" if rec.get("n_mtp_params") else "")
                      + ".")


def memory_savers(pg: Page, container=None, *, recompute: bool = True, flash: bool = True, zero: bool = True,
                  overhead: bool = False, zero_container=None) -> dict:
    """Recomputation, flash attention, ZeRO stage and the memory overhead preset; `zero_container` places the ZeRO
    stage elsewhere (the Calculator's row with TP and PP)."""
    c = container or st
    out = {}
    if recompute:
        out["recompute"] = pg.input("recompute", c)
    if flash:
        out["flash_attention"] = pg.input("flash_attention", c)
    if zero:
        out["zero_stage"] = pg.input("zero_stage", zero_container or c)
    if overhead:
        out["overhead"] = pg.input("overhead", c)
    return out


MARGINS = (DEFAULT_MARGIN, "5", "10", "20")  # the advisor's margin: its default, or % of GPU memory


def margin_input(pg: Page, container=None) -> str:
    """The headroom the advice keeps free: 'realistic' or a percentage of GPU memory (URL values as shown)."""
    from core.advisor import describe_margin
    return pg.select("Advice keeps this headroom free (% of GPU memory)", MARGINS, "margin", DEFAULT_MARGIN,
                     container=container, help=f"{DEFAULT_MARGIN}: {describe_margin(DEFAULT_MARGIN)}. A number: that "
                                               "percentage of the GPU's memory. Every suggested change keeps it free.")


def batch_inputs(pg: Page, container=None, *, seq: bool = True, mb: bool = True) -> dict:
    """Sequence length and micro-batch, side by side."""
    c = container or st
    out = {}
    cols = c.columns(2)
    if seq:
        out["seq_len"] = pg.input("seq_len", cols[0])
    if mb:
        out["micro_batch"] = pg.input("micro_batch", cols[1])
    return out


def run_inputs(pg: Page, container=None) -> dict:
    """The token budget and the MFU override (blank: time from the predicted step)."""
    c = container or st
    cols = c.columns(2)
    out = {"tokens": pg.input("tokens", cols[0])}
    mfu = pg.input("mfu", cols[1])
    if mfu is not None:
        out["mfu"] = mfu
    return out


# inputs "All inputs" never draws: the model's and the accelerator's (their pickers do), the preset-set fields
# (their preset's picker decides unless its own widget is used there), the upload
_NOT_IN_REST = set(MODEL_NAMES) | {"gpu"}


def rest(pg: Page, container=None, skip: tuple = ()) -> dict:
    """"All inputs": every schema input this page has not drawn (nor `skip`), grouped as the CLI's --help groups
    them, each from its schema row; returns the ones given (an empty box or "(from the preset)" gives nothing).
    Every page that evaluates a configuration has it, so any input set on one page applies on every page (and the
    link carries it). The `conventions` choice sets the other widgets to its values when it changes."""
    c = container or st
    drawn = set(pg.values)
    todo = [i for i in I.INPUTS if i.ui is not None and i.name not in _NOT_IN_REST and i.name not in skip
            and i.ui.key not in drawn]
    out: dict = {}
    with c.expander("All inputs (every input of the command line)"):
        st.caption("Each input as `python -m core estimate --help` lists it; an empty box or "
                   f"“{FOLLOW}” leaves it to its default rule or preset.")
        for group in I.GROUPS:
            rows = [i for i in todo if i.group == group]
            if not rows:
                continue
            st.markdown(f"**{fmt.inert(group)}**")
            for i in rows:
                if i.name == "conventions":
                    v = pg.input(i.name, on_change=lambda: _apply_conventions(pg))
                    continue  # applied to the widgets by its callback; the widgets' values are what is given
                follow = ("recipe" if i.name in I.PRESET_FIELDS["recipe"] else
                          "overhead" if i.name in I.PRESET_FIELDS["overhead"] else None)
                v = pg.input(i.name, follow=follow)
                if v is not None and not _is_default(i, v):  # given: only what differs from the schema default
                    out[i.name] = v
    return out


def _is_default(i, v) -> bool:
    d = i.default
    if isinstance(v, bool) or isinstance(d, bool):
        return v is d or v == d
    if isinstance(v, (int, float)) and isinstance(d, (int, float)):
        return float(v) == float(d)
    return v == d


def _apply_conventions(pg: Page) -> None:
    """The `conventions` widget changed: set every widget its preset fills to the preset's value (planner: the
    schema defaults), as the advisor's Apply does."""
    name = st.session_state.get(pg.key(I.BY_NAME["conventions"].ui.key))
    table = I.PRESET_INPUTS["conventions"].get(name, {})
    values = {}
    for f in I.PRESET_FIELDS["conventions"]:
        v = table.get(f, I.BY_NAME[f].default)
        values[I.BY_NAME[f].ui.key] = None if v == "auto" else to_widget(f, v)
    pg.set_values(values)
