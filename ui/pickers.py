"""The shared input widgets every page uses: the model picker, the accelerator picker, the training-recipe picker.

Each returns a piece of the flat input vocabulary of `core.estimate.config_from_inputs` (so the page builds one
frozen `Config` from the dict union) and draws its widgets through a `ui.state.Page`, so every value is in the URL.
"""
from __future__ import annotations

import streamlit as st

from core import memory as M
from core import safejson
from core.tables import COMPUTE_DTYPES, OPTIMIZERS_TABLE, OVERHEADS, WEIGHT_DTYPES
from core.hardware import accelerator_names, catalog
from core.model import ARCH_DEFAULTS, from_hf_config, get_preset, preset_info, preset_names

from . import fmt
from .state import Page

DEFAULT_MODEL = "llama-3.1-8b"
DEFAULT_GPU = "h100-sxm"
# One set of defaults for every page of the app: memory savers a planner would switch on first and the realistic
# overhead, so a page's first view is a run that could launch. The CLI keeps the schema's defaults (core/inputs.py:
# no flash, ZeRO-0, no overhead), which reproduce the published numbers; the landing page's examples pin those.
APP_DEFAULTS = {"flash_attention": True, "zero_stage": 3, "overhead": "realistic", "recompute": "none",
                "seq_len": 4096, "micro_batch": 1, "n_gpus": 8, "mfu_pct": 50, "tokens_b": 1000.0}
SOURCES = ("preset", "architecture", "params", "hf-config")
SOURCE_HELP = ("Where the model comes from: **preset** (published shapes, data/models.csv), **architecture** "
               "(type the fields), **params** (only a parameter count; the activations use the nearest GPT-3 shape), "
               "**hf-config** (upload a Hugging Face config.json; it fills the architecture fields, which the link "
               "then carries).")
MLP = ("swiglu", "gelu", "geglu")
NORM = ("rmsnorm", "layernorm", "nonparametric")
BIAS = ("none", "qkv", "all")
POSITION = ("rotary", "learned", "alibi", "none")
HF_MAX_BYTES = 1 << 20  # = server.maxUploadSize (1 MB in Streamlit's units, 2^20 bytes) in .streamlit/config.toml

# Architecture fields: URL name -> (core field, label, lo, hi)
ARCH_INTS = {
    "layers": ("n_layers", "layers", 1, 1024),
    "dmodel": ("d_model", "d_model (width)", 1, 1 << 17),
    "heads": ("n_heads", "attention heads", 1, 1024),
    "kv": ("n_kv_heads", "KV heads (GQA; = heads for MHA)", 1, 1024),
    "dff": ("d_ff", "d_ff (MLP width)", 1, 1 << 19),
    "vocab": ("vocab_size", "vocabulary", 1, 1 << 22),
}
ARCH_MORE_INTS = {
    "maxpos": ("max_position", "max positions (learned table)", 0, 1 << 22),
    "experts": ("n_experts", "experts (MoE)", 1, 1024),
    "topk": ("top_k", "experts per token", 1, 1024),
}


MODEL_NAMES = ("src", "model", "params", *ARCH_INTS, *ARCH_MORE_INTS, "mlp", "norm", "bias", "drop", "tied", "pos")


def arch_values(m) -> dict:
    """A model's architecture as URL-name -> value (for filling the fields)."""
    v = {name: int(getattr(m, f)) for name, (f, *_rest) in {**ARCH_INTS, **ARCH_MORE_INTS}.items()}
    v.update(mlp=m.mlp, norm=m.norm, bias=m.bias, drop=bool(m.dropout), tied=bool(m.tied_embeddings),
             pos=m.position)
    return v


def model_picker(pg: Page, container=None, default: str = DEFAULT_MODEL, src_default: str = "preset",
                 arch_default: dict | None = None) -> dict:
    """Model inputs for `config_from_inputs`: {'model': preset} | architecture fields | {'n_params': N}.
    `arch_default` (URL names -> values) replaces the default preset's shape as the fields' defaults."""
    c = container or st
    src_key = pg.key("src")

    def on_src():
        new = st.session_state.get(src_key)
        if new == "architecture":  # start the fields from the preset that was showing
            name = st.session_state.get(pg.key("model"), default)
            try:
                pg.set_values(arch_values(get_preset(name)))
            except ValueError:
                pass
    src = pg.select("Model from", SOURCES, "src", src_default, container=c, radio=True, help=SOURCE_HELP,
                    on_change=on_src)
    if src == "params":
        n = pg.number("Parameters (billions)", "params", 7.0, 0.001, 1e6, step=1.0, container=c,
                      help="Raw-N mode: the state is priced from this count; the activations use the GPT-3 "
                           "(Brown et al. 2020, Table 2.1) shape nearest in size.")
        return {"n_params": float(n if n is not None else 7.0) * 1e9}
    if src == "architecture":
        if st.session_state.get(pg.key("hf_name")):
            c.caption(f"Fields from the uploaded {fmt.inert(st.session_state[pg.key('hf_name')], 80)}.")
        return _arch_fields(pg, c, {**arch_values(get_preset(default)), **(arch_default or {})})
    if src == "hf-config":
        _hf_upload(pg, c)
        c.caption("Until a config.json is uploaded, the preset below is used.")
    names = preset_names()
    name = pg.select("Preset", names, "model", default, container=c,
                     help="Published architectures (data/models.csv, each row with its source).")
    info = preset_info(name)
    m = get_preset(name)
    c.caption(f"{info['label']} · {fmt.count(m.n_params)} parameters"
              + (f" ({fmt.count(m.n_active_params)} active)" if m.n_active_params != m.n_params else ""))
    return {"model": name}


def _arch_fields(pg: Page, c, b: dict) -> dict:
    out = {}
    cols = c.columns(2)
    for i, (name, (field, label, lo, hi)) in enumerate(ARCH_INTS.items()):
        out[field] = pg.integer(label, name, b[name], lo, hi, container=cols[i % 2])
    out["mlp"] = pg.select("MLP", MLP, "mlp", b["mlp"], container=cols[0])
    out["norm"] = pg.select("norm", NORM, "norm", b["norm"], container=cols[1])
    with c.expander("More architecture fields"):
        out["bias"] = pg.select("biases", BIAS, "bias", b["bias"])
        out["position"] = pg.select("positions", POSITION, "pos", b["pos"])
        for name, (field, label, lo, hi) in ARCH_MORE_INTS.items():
            out[field] = pg.integer(label, name, b[name], lo, hi)
        out["dropout"] = pg.toggle("dropout (masks kept for backward)", "drop", b["drop"])
        out["tied_embeddings"] = pg.toggle("tied input/output embeddings", "tied", b["tied"])
    return out


# what the architecture fields accept (model field -> (lo, hi)); an upload beyond them is refused, not clamped
FIELD_BOUNDS = {field: (lo, hi) for field, _label, lo, hi in {**ARCH_INTS, **ARCH_MORE_INTS}.values()}


def hf_model(raw: bytes):
    """A Model from the bytes of an uploaded Hugging Face config.json, parsed locally and bounded (core.safejson:
    size, nesting, finite numbers), with every field within what this page's architecture fields accept (so the
    fields show the upload, not their defaults). ValueError names the config's field."""
    data = safejson.loads(raw, "config", max_bytes=HF_MAX_BYTES)
    if not isinstance(data, dict):  # from_hf_config reads anything else as a file path
        raise ValueError("config: a Hugging Face config.json must be a JSON object")
    m = from_hf_config(data, bounds=FIELD_BOUNDS)
    extra = {k: getattr(m, k) for k, off in ARCH_DEFAULTS.items() if getattr(m, k) != off}
    if extra:  # the architecture fields below cannot carry them: refuse rather than count another model
        raise ValueError("config: this model needs fields the app's architecture inputs do not have ("
                         + ", ".join(f"{k}={v}" for k, v in extra.items()) + "); choose its preset if there is one, "
                         "or run python -m core estimate --hf-config with the file")
    return m


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
    if st.session_state.get(err_key):
        c.error(f"**config.json** — {fmt.inert(st.session_state[err_key], 600)}")


CUSTOM_START = DEFAULT_GPU  # a custom accelerator's fields start from this catalog row's numbers


def custom_accelerator_fields(pg: Page, container=None, *, memory: bool = True, prefix_label: str = "",
                              links: bool = True) -> dict:
    """A custom accelerator's numbers (typed in TFLOP/s, GB and TB/s; returned in SI as `config_from_inputs` takes
    them), starting from the `CUSTOM_START` catalog row. The peak is the dense peak of the compute dtype."""
    c = container or st
    g = catalog()[CUSTOM_START]
    start = {"c_tflops": g.peak_bf16_flops_per_s / 1e12, "c_mem": g.memory_bytes / 1e9,
             "c_bw": g.memory_bandwidth_bytes_per_s / 1e12}
    cols = c.columns(3 if memory else 2)
    t = pg.number(f"{prefix_label}dense TFLOP/s", "c_tflops", start["c_tflops"], 0.001, 1e6, container=cols[0],
                  help="Dense peak (no sparsity) for the compute dtype, in 10¹² FLOP/s.")
    out = {"peak_flops_per_s": (t or start["c_tflops"]) * 1e12}
    if memory:
        mem = pg.number(f"{prefix_label}memory (GB)", "c_mem", start["c_mem"], 0.001, 1e5, container=cols[1])
        out["gpu_memory_bytes"] = (mem or start["c_mem"]) * 1e9
    bw = pg.number(f"{prefix_label}TB/s", "c_bw", start["c_bw"], 0.001, 1e4, container=cols[-1],
                   help="HBM bandwidth, 10¹² bytes/s.")
    out["memory_bandwidth_bytes_per_s"] = (bw or start["c_bw"]) * 1e12
    if links:  # the predicted step needs both links (core.estimate.build_gpu defaults them, with a note)
        lc = c.columns(2)
        intra = pg.number(f"{prefix_label}intra-node GB/s", "c_intra", g.intra_node_bytes_per_s / 1e9, 0.001, 1e5,
                          container=lc[0], help="NVLink/xGMI bandwidth per GPU, one direction, 10⁹ bytes/s.")
        inter = pg.number(f"{prefix_label}inter-node GB/s", "c_inter", g.inter_node_bytes_per_s / 1e9, 0.001, 1e5,
                          container=lc[1], help="Network (NIC) bandwidth per GPU, one direction, 10⁹ bytes/s.")
        out["intra_node_bytes_per_s"] = (intra or g.intra_node_bytes_per_s / 1e9) * 1e9
        out["inter_node_bytes_per_s"] = (inter or g.inter_node_bytes_per_s / 1e9) * 1e9
    return out


def gpu_picker(pg: Page, container=None, default: str = DEFAULT_GPU, price: bool = True) -> dict:
    """Accelerator inputs: {'gpu': name} or {'gpu': 'custom', peak, memory, bandwidth}; plus a price override."""
    c = container or st
    names = accelerator_names() + ["custom"]
    gpu = pg.select("Accelerator", names, "gpu", default, container=c,
                    help="data/accelerators.csv: dense peak (no sparsity), memory, bandwidth and price, each row "
                         "with its source. 'custom' takes your own numbers.")
    out: dict = {"gpu": gpu}
    if gpu == "custom":
        out.update(custom_accelerator_fields(pg, c))
        c.caption("Custom accelerator: memory in GB (10⁹ bytes), the dense peak for the compute dtype, HBM "
                  f"bandwidth (starting from the {catalog()[CUSTOM_START].label}).")
    else:
        g = catalog()[gpu]
        c.caption(f"{g.label}: {fmt.both_bytes(g.memory_bytes)}, {fmt.si(g.peak_bf16_flops_per_s, 'FLOP/s')} bf16, "
                  f"{fmt.si(g.memory_bandwidth_bytes_per_s, 'B/s')}, "
                  + (f"${g.price_usd_per_gpu_hour:.2f}/GPU-hour ({g.price_date})"
                     if g.price_usd_per_gpu_hour == g.price_usd_per_gpu_hour else "no catalog price"))
    if price:
        p = pg.number("Price per GPU-hour (USD; blank = catalog)", "price", None, 0.0, 1e4, step=0.25, container=c)
        if p is not None:
            out["price_per_gpu_hour"] = float(p)
    return out


RECIPE_HELP = {name: f"{M.RECIPE_BYTES[name]} B/param: {r.source}" for name, r in M.RECIPES.items()}
OPTIMIZER_HELP = "; ".join(f"{o.name}: {o.source}" + ("" if o.bytes_per_param != o.bytes_per_param
                                                    else f" ({o.bytes_per_param:g} B/param)")
                           for o in OPTIMIZERS_TABLE.values()) + "."


def recipe_picker(pg: Page, container=None, default: str = "zero-16", dtypes: bool = True) -> dict:
    """Training recipe: bytes per parameter (12/16/18/20), optimizer, compute dtype, and dtype overrides."""
    c = container or st
    recipe = pg.select("Recipe (model-state bytes per parameter)", tuple(M.RECIPES), "recipe", default, container=c,
                       help="\n\n".join(f"**{k}** — {v}" for k, v in RECIPE_HELP.items()))
    c.caption(RECIPE_HELP[recipe])
    cols = c.columns(2)
    opt = pg.select("Optimizer", M.OPTIMIZERS, "opt", "adamw", container=cols[0],
                    help=OPTIMIZER_HELP)
    cdt = pg.select("Compute dtype", COMPUTE_DTYPES, "cdt", "bf16", container=cols[1],
                    help="Selects the accelerator's dense peak used for time (fp8 doubles it on Hopper).")
    out = {"recipe": recipe, "optimizer": opt, "compute_dtype": cdt}
    if dtypes:
        with c.expander("Dtypes (override the recipe)"):
            wdt = pg.select("weights", ("recipe",) + WEIGHT_DTYPES, "wdt")
            gdt = pg.select("gradients", ("recipe",) + WEIGHT_DTYPES, "gdt")
            master = pg.select("fp32 master copy", ("recipe", "yes", "no"), "master")
            accum = pg.select("fp32 gradient accumulation buffer", ("recipe", "yes", "no"), "accum")
        if wdt != "recipe":
            out["weight_dtype"] = wdt
        if gdt != "recipe":
            out["grad_dtype"] = gdt
        if master != "recipe":
            out["master_weights"] = master == "yes"
        if accum != "recipe":
            out["grad_accum_fp32"] = accum == "yes"
    return out


TRAINING_HELP = ("**full**: every parameter trains. **Fine-tune (LoRA/QLoRA)**: **lora** freezes the base (no "
                 "gradients or optimizer state for it) and trains rank-r adapters (Hu et al. 2021); **qlora** does "
                 "the same on a base stored in 4-bit NF4 with double quantization, 0.516 bytes per weight (Dettmers "
                 "et al. 2023). The recipe's dtypes and optimizer apply to what trains.")
TARGETS_HELP = ("Which matrices carry adapters: qv (W_q and W_v, the LoRA paper), attention (q, k, v, o), all "
                "(every linear layer of the blocks, experts included: QLoRA's choice).")


def training_picker(pg: Page, container=None) -> dict:
    """What trains: full, or fine-tune with LoRA / QLoRA (rank and target matrices), as `config_from_inputs`
    inputs (training, lora_rank, lora_targets)."""
    c = container or st
    mode = pg.select("Training: full, or Fine-tune (LoRA/QLoRA)", ("full", "lora", "qlora"), "train", "full",
                     container=c, radio=True, help=TRAINING_HELP)
    out: dict = {"training": mode}
    if mode != "full":
        cols = c.columns(2)
        out["lora_rank"] = pg.integer("LoRA rank r", "rank", 16, 1, 4096, container=cols[0],
                                      help="Each adapted d_in×d_out matrix gets r·(d_in + d_out) trainable parameters.")
        out["lora_targets"] = pg.select("Adapters on", ("all", "attention", "qv"), "tgt", "all", container=cols[1],
                                        help=TARGETS_HELP)
    return out


def training_caption(rec: dict, c=None) -> None:
    """What trains in a record, in words (under the training picker)."""
    (c or st).caption(f"Trains {fmt.count(rec['n_trainable_params'])} of {fmt.count(rec['n_params'])} parameters"
                      + (f" ({rec['n_trainable_params'] / rec['n_params']:.2%})"
                         if rec["n_trainable_params"] < rec["n_params"] else "")
                      + (f"; MTP modules {fmt.count(rec['n_mtp_params'])} more" if rec.get("n_mtp_params") else "")
                      + ".")


RECOMPUTE_HELP = ("selective: recompute the attention core (Korthikanti §5); full: keep only each layer's input "
                  "(+≈33% compute).")
FLASH_LABEL = "Flash attention (no s×s matrices stored)"
ZERO_HELP = "1: shard optimizer + master; 2: + gradients; 3: + weights (= FSDP)."


def memory_savers(pg: Page, container=None, *, recompute: bool = True, flash: bool = True, zero: bool = True,
                  overhead: bool = False, zero_container=None) -> dict:
    """Recomputation, flash attention, ZeRO stage and the memory overhead (the Calculator's names, so they carry
    between pages), with the app's defaults (`APP_DEFAULTS`); `zero_container` places the ZeRO stage elsewhere (the
    Calculator's row with TP and PP)."""
    c = container or st
    zero_default, flash_default = APP_DEFAULTS["zero_stage"], APP_DEFAULTS["flash_attention"]
    out = {}
    if recompute:
        out["recompute"] = pg.select("Activation recomputation", M.RECOMPUTE_MODES, "rc", container=c, radio=True,
                                     help=RECOMPUTE_HELP)
    if flash:
        out["flash_attention"] = pg.toggle(FLASH_LABEL, "flash", flash_default, container=c)
    if zero:
        out["zero_stage"] = pg.select("ZeRO stage", (0, 1, 2, 3), "zero", zero_default,
                                      container=zero_container or c, help=ZERO_HELP)
    if overhead:
        out["overhead"] = overhead_input(pg, c)
    return out


OVERHEAD_HELP = ("realistic (the app's default): 1.5 GiB CUDA context + NCCL buffers and 10% allocator fragmentation "
                 "(core/tables.py); none: what the published ledgers count (CS336, ZeRO, Korthikanti et al.), so "
                 "their numbers reproduce.")


def overhead_input(pg: Page, container=None) -> str:
    """The memory overhead preset (core/tables.py OVERHEADS), realistic by default."""
    return pg.select("Memory overhead", tuple(OVERHEADS), "ovh", APP_DEFAULTS["overhead"], container=container,
                     help=OVERHEAD_HELP)


MARGINS = ("realistic", "5", "10", "20")  # the advisor's margin: core.advisor's "realistic", or % of GPU memory


def margin_input(pg: Page, container=None) -> str:
    """The headroom the advice keeps free: 'realistic' or a percentage of GPU memory (URL values as shown)."""
    from core.advisor import describe_margin
    return pg.select("Advice keeps this headroom free (% of GPU memory)", MARGINS, "margin", "realistic",
                     container=container, help=f"realistic: {describe_margin('realistic')}. A number: that "
                                               "percentage of the GPU's memory. Every suggested change keeps it free.")


def batch_inputs(pg: Page, container=None, *, seq_default: int = APP_DEFAULTS["seq_len"], seq: bool = True,
                 mb: bool = True) -> dict:
    """Sequence length and micro-batch, side by side."""
    c = container or st
    out = {}
    cols = c.columns(2)
    if seq:
        out["seq_len"] = pg.integer("Sequence length", "seq", seq_default, 1, 1 << 21, step=1024, container=cols[0],
                                    help="Tokens per sequence s.")
    if mb:
        out["micro_batch"] = pg.integer("Micro-batch", "mb", 1, 1, 4096, container=cols[1],
                                        help="Sequences per GPU per step (the global batch comes from accumulation).")
    return out


def run_inputs(pg: Page, container=None) -> dict:
    """Token budget (typed in billions) and MFU (typed in percent), returned in the core's units."""
    c = container or st
    cols = c.columns(2)
    tokens = tokens_input(pg, cols[0])
    # the widget takes 0 (and the core refuses it by name): a value the widget clamped would revert silently
    mfu_pct = pg.integer("MFU (%)", "mfu", APP_DEFAULTS["mfu_pct"], 0, 100, container=cols[1],
                         help="Model FLOPs utilisation: the fraction of peak that goes into the model's own FLOPs "
                              "(more than 0, at most 100).")
    return {"tokens": tokens, "mfu": mfu_pct / 100}


def tokens_input(pg: Page, container=None, default_b: float | None = None, lo_b: float = 0.0) -> float:
    """The token budget, typed in billions, returned in tokens."""
    tokens_b = pg.number("Tokens (billions)", "tokens", APP_DEFAULTS["tokens_b"] if default_b is None else default_b,
                         lo_b, 1e7, step=100.0, container=container or st,
                         help="Training tokens D (Chinchilla: ≈20 per parameter; CS336's 70B example: 15,000).")
    return (tokens_b or 0.0) * 1e9
