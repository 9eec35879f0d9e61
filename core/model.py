"""Model description and parameter count.

A `Model` is built from architecture fields (or a preset from data/models.csv, or a Hugging Face
config.json, or a raw parameter count). The parameter count is derived from the fields as named
parts — embedding, position, attention, mlp, router, norms, lm_head — plus a total, and for
mixture-of-experts an active count (top_k of n_experts MLPs per token).

Symbols inside formulas: L, h, a, k, f, V = n_layers, d_model, n_heads, n_kv_heads, d_ff, vocab_size;
head dim = h / a; the K and V projections have k·h/a columns (GQA/MQA; k = a is multi-head).
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from .tables import BIAS_KINDS, MLP_KINDS, NORM_KINDS, POSITION_KINDS  # noqa: F401

DATA_DIR = Path(__file__).resolve().parent.parent / "data"

# Names of the architecture fields, in the CLI/JSON vocabulary.
ARCH_FIELDS = ("n_layers", "d_model", "n_heads", "n_kv_heads", "d_ff", "vocab_size", "mlp", "norm", "bias",
               "dropout", "tied_embeddings", "position", "max_position", "n_experts", "top_k")


def param_breakdown(n_layers, d_model, n_heads, n_kv_heads, d_ff, vocab_size, mlp="swiglu", norm="rmsnorm",
                    bias="none", tied_embeddings=False, position="rotary", max_position=0, n_experts=1, top_k=1,
                    dropout=None):
    """Parameter count as named parts (vectorised; arrays broadcast).

    Per layer (Vaswani et al. 2017 block; GQA as in Ainslie et al. 2023):
      attention = h·h (Q) + 2·h·(k·h/a) (K, V) + h·h (output) [+ h + 2k·h/a biases if bias ∈ {qkv, all}]
                  [+ h output bias if bias = all]
      mlp       = E · (2·h·f [+ f + h biases if bias = all])  for gelu (2 matrices)
                  E · 3·h·f                                   for swiglu (gate, up, down)
      router    = h·E when E > 1 (Mixtral)
      norms     = 2 per layer · (2h layernorm with bias | h rmsnorm)
    Whole model: embedding V·h, learned positions max_position·h, final norm, LM head V·h unless tied.
    `active` counts top_k of the E expert MLPs (the parameters one token touches).
    `dropout` is accepted (and ignored) so a model's whole field dict can be passed.
    Checked against GPT-3 175B = 174.6B (Brown et al. Table 2.1) and the presets' published counts.
    """
    L, h, a, k, f, V = (np.asarray(x, dtype=np.float64) for x in (n_layers, d_model, n_heads, n_kv_heads, d_ff,
                                                                      vocab_size))
    E = np.asarray(n_experts, dtype=np.float64)
    topk = np.asarray(top_k, dtype=np.float64)
    swiglu = np.asarray(mlp) == "swiglu"
    ln = np.asarray(norm) == "layernorm"
    bias = np.asarray(bias)
    qkv_bias = (bias == "qkv") | (bias == "all")
    all_bias = bias == "all"
    kv_dim = k * h / a

    attn = 2 * h * h + 2 * h * kv_dim + np.where(qkv_bias, h + 2 * kv_dim, 0.0) + np.where(all_bias, h, 0.0)
    one_mlp = np.where(swiglu, 3 * h * f, 2 * h * f + np.where(all_bias, f + h, 0.0))
    router = np.where(E > 1, h * E, 0.0)
    norm_per = np.where(ln, 2 * h, h)
    layer_norms = 2 * norm_per

    parts = {
        "embedding": V * h,
        "position": np.where(np.asarray(position) == "learned", np.asarray(max_position, dtype=np.float64) * h, 0.0),
        "attention": L * attn,
        "mlp": L * E * one_mlp,
        "router": L * router,
        "norms": L * layer_norms + norm_per,
        "lm_head": np.where(np.asarray(tied_embeddings, dtype=bool), 0.0, V * h),
    }
    total = sum(parts.values())
    active = total - L * (E - topk) * one_mlp
    return {**parts, "total": total, "active": active}


# GPT-like shapes used when only a parameter count is given (raw-N mode, as in seed 002's calculator):
# Brown et al. 2020 (GPT-3) Table 2.1 — n_layers, d_model, n_heads — with d_ff = 4h and vocab 50257.
GPT3_SHAPES = (
    ("gpt-3-small", 12, 768, 12), ("gpt-3-medium", 24, 1024, 16), ("gpt-3-large", 24, 1536, 16),
    ("gpt-3-xl", 24, 2048, 16), ("gpt-3-2.7b", 32, 2560, 32), ("gpt-3-6.7b", 32, 4096, 32),
    ("gpt-3-13b", 40, 5120, 40), ("gpt-3-175b", 96, 12288, 96),
)


@dataclass(frozen=True)
class Model:
    """A frozen, validated model description. `n_params_override` > 0 means raw-N mode:
    the state is priced from that count while activations use the (documented) shape fields."""

    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int = 0  # 0 -> same as n_heads
    d_ff: int = 0  # 0 -> 4·d_model
    vocab_size: int = 50257
    mlp: str = "gelu"
    norm: str = "layernorm"
    bias: str = "all"
    dropout: bool = True
    tied_embeddings: bool = True
    position: str = "learned"
    max_position: int = 2048
    n_experts: int = 1
    top_k: int = 1
    name: str = "custom"
    n_params_override: float = 0.0
    shape_note: str = ""

    def __post_init__(self):
        if self.n_kv_heads == 0:
            object.__setattr__(self, "n_kv_heads", self.n_heads)
        if self.d_ff == 0:
            object.__setattr__(self, "d_ff", 4 * self.d_model)
        for f in ("n_layers", "d_model", "n_heads", "n_kv_heads", "d_ff", "vocab_size", "n_experts", "top_k"):
            _check_int(f, getattr(self, f), minimum=1)
        _check_int("max_position", self.max_position, minimum=0)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model: {self.d_model} is not divisible by n_heads={self.n_heads}")
        if self.n_kv_heads > self.n_heads or self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_kv_heads: {self.n_kv_heads} must divide n_heads={self.n_heads}")
        if self.top_k > self.n_experts:
            raise ValueError(f"top_k: {self.top_k} exceeds n_experts={self.n_experts}")
        for f, allowed in (("mlp", MLP_KINDS), ("norm", NORM_KINDS), ("bias", BIAS_KINDS),
                           ("position", POSITION_KINDS)):
            if getattr(self, f) not in allowed:
                raise ValueError(f"{f}: {getattr(self, f)!r} is not one of {', '.join(allowed)}")
        for f in ("dropout", "tied_embeddings"):
            if not isinstance(getattr(self, f), (bool, np.bool_)):
                raise ValueError(f"{f}: expected true/false, got {getattr(self, f)!r}")
        if not isinstance(self.n_params_override, (int, float)) or not math.isfinite(self.n_params_override) \
                or self.n_params_override < 0:
            raise ValueError(f"n_params: must be a positive number, got {self.n_params_override!r}")

    def arch(self) -> dict:
        """The architecture fields as a dict (the CLI/JSON vocabulary)."""
        return {f: getattr(self, f) for f in ARCH_FIELDS}

    def params(self) -> dict:
        """Named parts + total + active, as Python floats."""
        return {k: float(v) for k, v in param_breakdown(**self.arch()).items()}

    @property
    def n_params(self) -> float:
        return self.n_params_override or self.params()["total"]

    @property
    def n_active_params(self) -> float:
        if self.n_params_override:
            return self.n_params_override
        return self.params()["active"]

    def with_overrides(self, **kw) -> "Model":
        """A copy with some architecture fields replaced (validated again)."""
        unknown = set(kw) - {f.name for f in fields(self)}
        if unknown:
            raise ValueError(f"{sorted(unknown)[0]}: not a model field; known: {', '.join(ARCH_FIELDS)}")
        # derived defaults follow their base field: multi-head attention stays multi-head when n_heads changes,
        # and a 4h MLP stays 4h when d_model changes (unless given explicitly)
        if "n_heads" in kw and "n_kv_heads" not in kw and self.n_kv_heads == self.n_heads:
            kw["n_kv_heads"] = kw["n_heads"]
        if "d_model" in kw and "d_ff" not in kw and self.d_ff == 4 * self.d_model:
            kw["d_ff"] = 4 * kw["d_model"]
        if any(k in ARCH_FIELDS for k in kw) and "name" not in kw:
            kw["name"] = f"{self.name} (modified)"
        new = replace(self, **kw)
        if new.n_params_override and any(k in ARCH_FIELDS for k in kw) and "shape_note" not in kw:
            changed = ", ".join(f"{k}={kw[k]}" for k in ARCH_FIELDS if k in kw)
            new = replace(new, shape_note=f"{self.shape_note}; overridden: {changed}")
        return new


def _check_int(name, v, minimum):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum or v > 2**31 - 1:
        raise ValueError(f"{name}: must be an integer from {minimum} to {2**31 - 1:,}, got {v!r}")


def _bool(s: str) -> bool:
    return s.strip().lower() in ("true", "1", "yes")


@lru_cache(maxsize=1)
def _preset_rows() -> dict[str, dict]:
    with open(DATA_DIR / "models.csv", newline="") as fh:
        return {r["name"]: r for r in csv.DictReader(fh)}


def preset_names() -> list[str]:
    return list(_preset_rows())


def preset_info(name: str) -> dict:
    """The catalog row (label, published counts, source) for a preset."""
    get_preset(name)
    return dict(_preset_rows()[name])


@lru_cache(maxsize=64)
def get_preset(name: str) -> Model:
    """A preset by name; an unknown name is an error listing the known ones."""
    rows = _preset_rows()
    if not isinstance(name, str) or name not in rows:
        raise ValueError(f"model: unknown preset {name!r}; known: {', '.join(rows)}")
    r = rows[name]
    ints = ("n_layers", "d_model", "n_heads", "n_kv_heads", "d_ff", "vocab_size", "max_position", "n_experts",
            "top_k")
    return Model(**{k: int(r[k]) for k in ints}, mlp=r["mlp"], norm=r["norm"], bias=r["bias"],
                 dropout=_bool(r["dropout"]), tied_embeddings=_bool(r["tied_embeddings"]), position=r["position"],
                 name=name)


def raw_model(n_params: float) -> Model:
    """Raw-N mode: only a parameter count. The activation shape is the GPT-3 Table 2.1 row whose
    own count is nearest in log space (GPT block: layernorm, GeLU 4h MLP, dropout, vocab 50257);
    the state is priced from `n_params` exactly. `shape_note` says which shape was picked."""
    if isinstance(n_params, bool) or not isinstance(n_params, (int, float)) or not math.isfinite(n_params) \
            or n_params <= 0:
        raise ValueError(f"n_params: must be a positive number, got {n_params!r}")
    best = None
    for label, L, h, a in GPT3_SHAPES:
        m = Model(n_layers=L, d_model=h, n_heads=a)
        d = abs(math.log(m.n_params / n_params))
        if best is None or d < best[0]:
            best = (d, label, m)
    _, label, m = best
    note = (f"raw N = {n_params:.4g}; activation shape from GPT-3 Table 2.1 '{label}' "
            f"(L={m.n_layers}, h={m.d_model}, a={m.n_heads}, d_ff=4h, vocab 50257)")
    return replace(m, name=raw_labels([n_params])[0], n_params_override=float(n_params), shape_note=note)


def raw_labels(counts) -> list[str]:
    """Labels of raw-N models shown together (a sweep's model column): "raw-" and the count to 3 significant digits
    (raw-7e+09, the name `raw_model` gives), with as many more digits as it takes to tell apart counts that would
    share a label (7e9, 7.001e9, 7.004e9 → raw-7e+09, raw-7.001e+09, raw-7.004e+09). Equal counts share one."""
    counts = [float(c) for c in counts]
    digits = [3] * len(counts)
    while True:
        labels = [f"{c:.{d}g}" for c, d in zip(counts, digits)]
        owners: dict = {}
        for i, text in enumerate(labels):
            owners.setdefault(text, set()).add(counts[i])
        clash = [i for i, text in enumerate(labels) if len(owners[text]) > 1 and digits[i] < 17]
        if not clash:
            return ["raw-" + text for text in labels]
        for i in clash:
            digits[i] += 1


HF_NAME_CHARS = 200  # a config's _name_or_path or file stem, as the model's label


def _short(v) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def from_hf_config(path_or_dict, bounds: dict | None = None) -> Model:
    """Build a Model from a Hugging Face config.json (a local file path or an already-parsed dict).

    Reads the Llama/Mistral/Qwen2/Mixtral (`num_hidden_layers`, `hidden_size`, `intermediate_size`,
    `num_key_value_heads`, `num_local_experts`, `num_experts_per_tok`) and GPT-2 style (`n_layer`, `n_embd`,
    `n_head`, `n_positions`) field names. No network access. A file is read through `core.safejson` (at most
    1 MiB, nesting bounded, finite numbers). `bounds` maps model fields (`d_model`, …) to inclusive (lo, hi)
    limits, for a caller whose inputs are narrower than the model's own 1 to 2^31−1 (an app's widgets); a value
    outside is refused with a message naming the config's field and the model's."""
    from . import safejson
    if isinstance(path_or_dict, dict):
        c = path_or_dict
        name = c.get("_name_or_path") or c.get("model_type") or "hf-config"
    elif not isinstance(path_or_dict, (str, Path)):
        raise ValueError(f"config: expected a path or a JSON object, got {type(path_or_dict).__name__}")
    else:
        p = Path(path_or_dict)
        c = safejson.loads(safejson.read(p, "config"), "config")  # bounded: size, nesting, finite numbers
        name = p.stem
    if not isinstance(c, dict):
        raise ValueError("config: a Hugging Face config.json must be a JSON object")
    name = str(name)[:HF_NAME_CHARS]

    def get(*keys, default=None):
        for k in keys:
            if k in c and c[k] is not None:
                return c[k]
        if default is None:
            raise ValueError(f"config: missing field {keys[0]!r} in the Hugging Face config")
        return default

    def geti(field, *keys, default=None):
        v = get(*keys, default=default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v != int(v):
            raise ValueError(f"config: field {keys[0]!r} must be an integer, got {_short(v)}")
        lo, hi = (bounds or {}).get(field, (0 if field == "max_position" else 1, 2**31 - 1))
        if not lo <= v <= hi:
            given = any(k in c and c[k] is not None for k in keys)
            what = f"field {keys[0]!r}" if given else f"{field} (derived: no {keys[0]!r} field)"
            raise ValueError(f"config: {what} = {int(v):,} is outside the {lo:,} to {hi:,} accepted for {field}")
        return int(v)

    def getf(*keys, default=None):
        v = get(*keys, default=default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"config: field {keys[0]!r} must be a number, got {_short(v)}")
        return float(v)

    mt = str(c.get("model_type", "")).lower()
    gpt2_like = mt in ("gpt2", "gpt_neo", "gptj", "opt") or "n_embd" in c
    act = str(get("hidden_act", "activation_function", default="gelu" if gpt2_like else "silu")).lower()
    h = geti("d_model", "hidden_size", "n_embd", "d_model")
    a = geti("n_heads", "num_attention_heads", "n_head")
    kw = dict(
        n_layers=geti("n_layers", "num_hidden_layers", "n_layer"),
        d_model=h,
        n_heads=a,
        n_kv_heads=geti("n_kv_heads", "num_key_value_heads", default=a),
        d_ff=geti("d_ff", "intermediate_size", "n_inner", "ffn_dim", default=4 * h),
        vocab_size=geti("vocab_size", "vocab_size"),
        mlp="gelu" if (gpt2_like or "gelu" in act) else "swiglu",
        norm="layernorm" if gpt2_like else "rmsnorm",
        bias="all" if gpt2_like else ("qkv" if mt.startswith("qwen2") or c.get("attention_bias") else "none"),
        dropout=getf("attention_dropout", "attn_pdrop", default=0.0) > 0,
        tied_embeddings=bool(get("tie_word_embeddings", default=gpt2_like)),
        position="learned" if gpt2_like else "rotary",
        max_position=geti("max_position", "max_position_embeddings", "n_positions", default=2048),
        n_experts=geti("n_experts", "num_local_experts", "num_experts", default=1),
        top_k=geti("top_k", "num_experts_per_tok", default=1),
        name=name,
    )
    if c.get("head_dim") not in (None, h // a):
        raise ValueError(f"config: head_dim={_short(c['head_dim'])} differs from hidden_size/num_attention_heads; "
                         "decoupled head dims are not supported")
    return Model(**kw)
