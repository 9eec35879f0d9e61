"""Measured, not assumed: the activation ledger and the FLOP counts checked against a real PyTorch model.

From a core `Config` this builds the same transformer block (and a small whole model: embeddings, L blocks, final
norm, LM head, cross-entropy) in PyTorch, in bf16 on CPU (or CUDA), runs it, and sets what autograd keeps for
backward next to `memory.layer_ledger`, tensor by tensor, and the FLOPs `FlopCounterMode` counts next to
`flops.py`. torch is an optional extra (requirements-measure.txt); this module imports it only when it measures,
so the rest of the product, and `python -m core measure --help`, work without it.

Conventions (decided here, stated in every result's notes):
- Bytes kept: every tensor autograd saves during one forward (`saved_tensors_hooks`), counted once per storage
  (a saved view keeps its whole storage alive), parameters and buffers excluded (core/torch_blocks.py).
- The implementation measured is the configuration's ledger `profile`: 'eager' builds plain PyTorch / Hugging
  Face code (LlamaRMSNorm, SiLU then multiply), 'fused' the save sets of fused RMSNorm / SwiGLU kernels.
- Dropout masks: `torch.native_dropout` (1-byte bool masks, what CUDA's `F.dropout` keeps and the seeds count);
  `dropout_impl='functional'` uses `F.dropout`, which on CPU keeps a 2-byte scale tensor instead.
- One unsharded replica: tp = pp = 1 whatever the configuration says; the ledger is evaluated at tp = 1.
- FLOPs: FlopCounterMode counts matmuls and attention (2 FLOPs per multiply-add), nothing elementwise. A whole
  model's training FLOPs are compared with the core's 6·N + 12·L·h·s per token (flops.py, attention 'full')
  where N excludes the tables read by a gather rather than a matmul: the position table and, when the LM head is
  not tied, the input embedding (a tied table is counted once, as the LM head). Norms and biases stay in N;
  the counter does not see them (a fraction 1/(2h)-ish of N, well under 1% at h ≥ 256).
"""
from __future__ import annotations

import importlib.util
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import flops as F
from . import memory as M
from .estimate import Config, estimate
from .model import lora_params, param_breakdown
from .units import GiB

INSTALL_HINT = ("PyTorch is an optional extra: pip install -r requirements-measure.txt (torch==2.13.0, CPU build; "
                "where no local wheel exists add --extra-index-url https://download.pytorch.org/whl/cpu so pip does "
                "not pull a CUDA build)")
install_hint = INSTALL_HINT
TORCH_VERSION = "2.13.0"  # the version requirements-measure.txt pins and the findings below were measured with
DEVICES = ("cpu", "cuda")
DROPOUT_IMPLS = ("native", "functional")


def torch_available() -> bool:
    """Whether torch can be imported here (without importing it)."""
    return importlib.util.find_spec("torch") is not None


def _torch_blocks():
    if not torch_available():
        raise ValueError(f"torch: not installed. {INSTALL_HINT}")
    try:
        from . import torch_blocks
    except ImportError as e:  # installed but broken (e.g. a CUDA build without its libraries)
        raise ValueError(f"torch: cannot be imported ({e}). {INSTALL_HINT}") from None
    return torch_blocks


# ---------------------------------------------------------------------------------------------------------------
# Size cap: the measurement runs real matmuls on a CPU
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SizeCap:
    """Largest measurement allowed: FLOPs of all its runs together, and the resident memory (RSS) it may add to
    the process — bounded from the bytes it keeps by the measured ratio below, not by those bytes alone."""

    max_flops: float
    max_bytes: float  # resident memory the measurement may add (see RSS_PER_ESTIMATED_BYTE)
    where: str


# Resident memory a measurement adds, measured: peak RSS (ru_maxrss) less RSS before `compare`, torch 2.13 CPU,
# 2 threads, 16 shapes where the logits, the s×s scores, activations (flash and math, both profiles, every
# recompute mode) or the weights dominate (bench/RESULTS.md, "PyTorch page"). It was 0.9× to 3.3× the bytes
# `measurement_cost` counts (what the largest run keeps: backward's activation gradients, the loss's fp32 copies
# and flash's workspace come on top), and ~40 MiB at any size. So the bound is 4× those bytes plus 64 MiB.
RSS_PER_ESTIMATED_BYTE = 4.0
RSS_FIXED_BYTES = 64 * 2**20
# The app's Streamlit server: a shared CPU; a measurement may add 512 MiB (one at a time: pages/07), and 1e11
# FLOPs is seconds in bf16 on a recent core. Before, 1 GiB of *kept* bytes was allowed, and a link of 1.00 GiB
# kept added 1.55 GiB (a fresh server: 59 MB → 1,990 MB).
APP_CPU_CAP = SizeCap(max_flops=1e11, max_bytes=512 * 2**20, where="the app's CPU server")
# The CLI on a workstation CPU (~0.2 TFLOP/s bf16 on two AVX-512 cores): a couple of minutes at most.
CLI_CPU_CAP = SizeCap(max_flops=3e13, max_bytes=16.0 * GiB, where="this CPU (--no-cap lifts it)")
# One measurement at a time in a process that serves many visitors (the app): the cap above is per measurement.
APP_RUN_LOCK = threading.Lock()
APP_WAIT_S = 30.0  # how long a click waits for another visitor's measurement before it is told to try again


# The shape the app's PyTorch page starts from: a block small enough to measure in seconds on a shared CPU (well
# within APP_CPU_CAP), with every tensor kind of the ledger present.
APP_START_SHAPE = {"n_layers": 2, "d_model": 256, "n_heads": 4, "n_kv_heads": 4, "d_ff": 688, "vocab_size": 1000,
                   "max_position": 2048, "seq_len": 256}


# A measurement for the app runs in a child process (`compare_isolated`): the server never imports torch (its first
# import alone added ~210 MB of RSS, measured with torch 2.13 CPU: VmRSS 14 → 223 MB), and the child's data segment
# is capped (RLIMIT_DATA, which counts heap and anonymous mappings) at what importing torch takes plus the
# measurement's own bound — so a click's peak is bounded by the cap, first import included, and the memory comes
# back whole when the child exits.
TORCH_IMPORT_BYTES = 384 * 2**20  # RLIMIT_DATA room for `import torch` + core.torch_blocks (measured VmData ~240 MB)
ISOLATED_TIMEOUT_S = 120.0


def isolated_limit_bytes(cfg: Config, cap: SizeCap = APP_CPU_CAP) -> int:
    """The child's data-segment limit: torch's import, then the measurement's own bound (`measurement_cost`)
    capped by `cap` (which `check_size` already enforces before anything runs)."""
    return int(TORCH_IMPORT_BYTES + min(measurement_cost(cfg)["rss_bytes"], cap.max_bytes))


def compare_isolated(cfg: Config, *, dropout_impl: str = "native", whole_model: bool = True,
                     cap: SizeCap = APP_CPU_CAP, seed: int = 0, timeout_s: float = ISOLATED_TIMEOUT_S) -> dict:
    """`compare` on the CPU in a child process whose memory is capped (`isolated_limit_bytes`): the caller's
    process imports no torch and keeps no measurement memory. ValueError: over the cap (checked first, here),
    torch missing, the child over its memory limit or its time, or any error the measurement names."""
    import pickle
    import subprocess
    import sys
    if not torch_available():
        raise ValueError(f"torch: not installed. {INSTALL_HINT}")
    check_size(cfg, cap)
    limit = isolated_limit_bytes(cfg, cap)
    payload = pickle.dumps({"cfg": cfg, "dropout_impl": dropout_impl, "whole_model": whole_model, "seed": seed,
                            "limit": limit, "cap": cap})
    root = str(Path(__file__).resolve().parent.parent)
    try:
        done = subprocess.run([sys.executable, "-c", "from core.measure import _isolated_main; _isolated_main()"],
                              input=payload, capture_output=True, timeout=timeout_s, cwd=root,
                              env={**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2")})
    except subprocess.TimeoutExpired:
        raise ValueError(f"size: the measurement took longer than {timeout_s:.0f} s and was stopped; make it "
                         "smaller") from None
    if done.returncode == 0:
        out = pickle.loads(done.stdout)
        if isinstance(out, dict) and "error" in out and len(out) == 1:
            raise ValueError(out["error"])
        return out
    err = done.stderr.decode(errors="replace")
    tail = err.strip().splitlines()[-1:] or [""]
    out_of_memory = ("MemoryError", "bad_alloc", "Cannot allocate memory", "failed to map segment",
                     "can't allocate memory", "DefaultCPUAllocator", "out of memory")
    low = err.lower()
    if any(w in err for w in out_of_memory) or "memory" in low or "alloc" in low or done.returncode < 0 \
            or done.returncode in (134, 137, 139):
        # killed by a signal (SIGSEGV/SIGABRT/SIGKILL) under the data-segment cap: an allocation that failed
        raise ValueError(f"size: the measurement needed more than its {limit / 2**20:,.0f} MiB limit (torch's "
                         "import and this measurement's bound) and was stopped; make it smaller")
    raise ValueError(f"torch: the measurement process failed ({tail[0][:200] or f'exit status {done.returncode}'})")


def _isolated_main() -> None:
    """The child of `compare_isolated`: cap the data segment first, then import torch and measure; the result (or
    the ValueError's message) goes back pickled on stdout."""
    import pickle
    import resource
    import sys
    job = pickle.loads(sys.stdin.buffer.read())
    resource.setrlimit(resource.RLIMIT_DATA, (job["limit"], job["limit"]))
    try:  # the parent checked that torch is installed: failing to import it (or our blocks) here is the cap
        import torch  # noqa: F401
        from . import torch_blocks  # noqa: F401
    except Exception:  # whatever the import raises under the cap (ImportError, MemoryError, OSError, SystemError…)
        sys.stdout.buffer.write(pickle.dumps({"error": (
            f"size: the measurement needed more than its {job['limit'] / 2**20:,.0f} MiB limit (torch's import and "
            "this measurement's bound) and was stopped; make it smaller")}))
        return
    try:
        res = compare(job["cfg"], dropout_impl=job["dropout_impl"], whole_model=job["whole_model"], cap=job["cap"],
                      seed=job["seed"])
    except ValueError as e:
        res = {"error": str(e)}
    sys.stdout.buffer.write(pickle.dumps(res))


def block_forward_flops(seq_len, micro_batch, d_model, n_heads, n_kv_heads, d_ff, mlp="gelu", **arch):
    """Forward FLOPs of one block's matmuls: 2·b·s·(2h² + 2h·kv + n·h·f) + 4·b·s²·h, with kv = k·h/a and n = 2
    (GeLU) or 3 (SwiGLU, GeGLU) MLP matrices (vectorised). For the GPT block (kv = h, f = 4h) this is Narayanan et
    al. 2021 §5.1's 24·b·s·h² + 4·b·s²·h. Attention counted over the full s×s (the core's 'full' convention).
    `arch`: the issue-12 fields (head dims, MLA, QK-norm): the projections' weights are then `model.attention_parts`'
    without their norms and biases, and the attention 2·b·s²·a·(d_h + d_v)."""
    from .model import GATED_MLPS, attention_parts, head_dims
    s, b, h, a, k, f = (np.asarray(x, dtype=np.float64) for x in (seq_len, micro_batch, d_model, n_heads, n_kv_heads,
                                                                      d_ff))
    n_mlp = np.where(np.isin(np.asarray(mlp), GATED_MLPS), 3.0, 2.0)
    if not arch:
        weights = 2 * h * h + 2 * h * (k * h / a) + n_mlp * h * f
        return 2 * b * s * weights + 4 * b * s * s * h
    p = attention_parts(d_model, n_heads, n_kv_heads, **{**arch, "bias": "none"})
    hd, vd = head_dims(d_model, n_heads, arch.get("head_dim", 0), arch.get("v_head_dim", 0))
    weights = p["params"] - p["norms"] + n_mlp * h * f
    return 2 * b * s * weights + 2 * b * s * s * a * (hd + vd)


def _block_arch(m) -> dict:
    """A model's fields that `block_forward_flops` and `model.attention_parts` read beyond the classic ones."""
    return {k: getattr(m, k) for k in ("head_dim", "v_head_dim", "attention", "q_lora_rank", "kv_lora_rank",
                                       "qk_rope_head_dim", "qk_norm", "norm")}


def block_step_flops(cfg: Config) -> tuple[float, float]:
    """One block's (forward, forward + backward) matmul FLOPs: backward = 2 × forward when everything trains; under
    LoRA the frozen weights get no weight gradient (their backward = 1 × forward, the attention core still 2 ×) and
    the adapters add 2·b·s·A forward and twice that backward (`flops.matmul_flops_per_token`)."""
    from .model import lora_params
    m = cfg.model
    s, b = cfg.seq_len, cfg.micro_batch
    fwd = float(block_forward_flops(s, b, m.d_model, m.n_heads, m.n_kv_heads, m.d_ff, m.mlp, **_block_arch(m)))
    if cfg.training == "full":
        return fwd, 3.0 * fwd
    one = {**m.arch(), "n_layers": 1}
    adapters = float(lora_params(cfg.lora_rank, cfg.lora_targets, **one))
    hd = m.head_dim or m.d_model / m.n_heads
    attn = 2.0 * b * s * s * m.n_heads * (hd + (m.v_head_dim or hd))
    return fwd + 2 * b * s * adapters, 2 * (fwd - attn) + 3 * attn + 6 * b * s * adapters


def checkpoint_rerun_flops(recompute, seq_len, micro_batch, d_model, n_heads, n_kv_heads, d_ff, mlp="gelu",
                           flash_attention=False, dropout=True, **arch):
    """FLOPs `torch.utils.checkpoint` (non-reentrant) runs again in one block's backward (vectorised). It stops
    as soon as every tensor backward needs is rebuilt, so the last ops of the checkpointed region that keep
    nothing are not rerun. full: the block's forward, less the last MLP projection (2·b·s·f·h) when no dropout
    mask follows it. selective: the math path reruns QKᵀ only (2·b·s²·h: the AV product's inputs are rebuilt
    before it would run); flash reruns its one SDPA op (4·b·s²·h). The core's `hardware_flops_per_token` instead
    adds the blocks' whole forward (no LM head or embeddings) for full, and the attention forward (4·b·s²·h) for
    selective."""
    rec = np.asarray(recompute)
    s, b, h, f = (np.asarray(x, dtype=np.float64) for x in (seq_len, micro_batch, d_model, d_ff))
    sel = np.where(np.asarray(flash_attention, dtype=bool), 4.0, 2.0) * b * s * s * h
    full = block_forward_flops(seq_len, micro_batch, d_model, n_heads, n_kv_heads, d_ff, mlp, **arch) - np.where(
        np.asarray(dropout, dtype=bool), 0.0, 2 * b * s * f * h)
    return np.select([rec == "full", rec == "selective"], [full, sel], 0.0 * full)


def flop_params(cfg: Config) -> float:
    """N for the FLOP comparison: the active parameters of the shape that is built (`param_breakdown`; in raw-N
    mode the documented shape, not the raw count) without the tables read by a gather (position table; input
    embedding when the LM head is untied). See the module docstring."""
    m = cfg.model
    parts = param_breakdown(**m.arch())
    gathered = float(parts["position"]) + (0.0 if m.tied_embeddings else float(parts["embedding"]))
    return float(parts["active"]) - gathered


def measurement_cost(cfg: Config) -> dict:
    """Rough cost of `compare(cfg)`: FLOPs of all runs (the whole model's training step, three block runs), bytes
    of the largest (the whole model: bf16 weights and gradients, kept activations, logits and their gradient, and
    the s×s scores of the math path), and rss_bytes, the resident memory it may add (the measured bound:
    RSS_PER_ESTIMATED_BYTE × bytes + RSS_FIXED_BYTES)."""
    m = cfg.model
    s, b = cfg.seq_len, cfg.micro_batch
    fpt = F.model_flops_per_token(flop_params(cfg), m.n_layers, m.d_model, s, "full")
    model_flops = float(F.hardware_flops_per_token(fpt, F.attention_flops_per_token(m.n_layers, m.d_model, s),
                                                   cfg.recompute, 6.0 * m.vocab_size * m.d_model)) * s * b
    block = float(block_forward_flops(s, b, m.d_model, m.n_heads, m.n_kv_heads, m.d_ff, m.mlp))
    flops = model_flops + block * (3 + 3 + 4)  # none, selective, full (full runs the forward again)
    led = M.ledger(cfg.columns(), recompute="none", tp=1, sequence_parallel=False, n_experts=1, top_k=1)
    acts = m.n_layers * sum(float(v) for v in led.values())
    logits = float(M.logits_bytes(s, b, m.vocab_size, 1, cfg.fp32_loss))
    scores = 0.0 if cfg.flash_attention else 3 * 2.0 * m.n_heads * s * s * b
    kept = 4.0 * float(m.params()["total"]) + acts + 2 * logits + scores
    return {"flops": flops, "bytes": kept, "rss_bytes": RSS_PER_ESTIMATED_BYTE * kept + RSS_FIXED_BYTES}


def check_size(cfg: Config, cap: SizeCap = APP_CPU_CAP) -> None:
    """Raise ValueError, naming what to shrink, when `compare(cfg)` would exceed `cap`."""
    cost = measurement_cost(cfg)
    what = "n_layers, seq_len, micro_batch, d_model or vocab_size"
    if cost["flops"] > cap.max_flops:
        raise ValueError(f"size: this measurement needs ≈{cost['flops']:.2g} FLOPs, over the {cap.max_flops:.2g} "
                         f"allowed on {cap.where}; make it smaller ({what})")
    if cost["rss_bytes"] > cap.max_bytes:
        raise ValueError(f"size: this measurement may take ≈{cost['rss_bytes'] / GiB:.2f} GiB of memory (measured: "
                         f"up to {RSS_PER_ESTIMATED_BYTE:g}× the {cost['bytes'] / GiB:.2f} GiB of tensors it keeps), "
                         f"over the {cap.max_bytes / GiB:.2f} GiB allowed on {cap.where}; make it smaller ({what})")


# ---------------------------------------------------------------------------------------------------------------
# Predicted vs measured
# ---------------------------------------------------------------------------------------------------------------

# Tensors of the whole model outside the per-layer ledger: (name, what). 'logits' is the core's `logits_bytes`.
MODEL_TENSORS = (
    ("input_ids", "token ids (int64), kept by the embedding's backward"),
    ("position_ids", "position ids (int64) of the learned position table"),
    ("embedding_dropout_mask", "dropout mask on the embeddings"),
    ("final_norm_input", "input of the final norm"),
    ("final_norm_input_fp32", "fp32 copy of the final norm's input (eager RMSNorm)"),
    ("final_norm_stats", "per-row statistics of the final norm"),
    ("final_norm_normalized", "16-bit normalised copy (eager RMSNorm)"),
    ("lm_head_input", "input of the LM head (final norm output)"),
    ("logits", "what cross-entropy keeps: its log-softmax output, V wide (core: logits_bytes)"),
    ("targets", "target ids (int64), kept by the loss"),
    ("loss_total_weight", "the loss's normaliser (a scalar)"),
)
_MODEL_NAMES = tuple(n for n, _ in MODEL_TENSORS)
_LEDGER_INDEX = {n: i for i, n in enumerate(M.LEDGER_NAMES)}


def ledger_names_for(measured_name: str | None) -> tuple[str, ...]:
    """The ledger tensors a measured tensor stands for: itself, or for the fp32 copy an eager RMSNorm keeps,
    normN_input + normN_upcast (core/memory.py `layer_ledger`)."""
    if measured_name in _LEDGER_INDEX:
        return (measured_name,)
    for p in ("norm1", "norm2"):
        if measured_name == f"{p}_input_fp32":
            return (f"{p}_input", f"{p}_upcast")
    return _GROUPED.get(measured_name, ())


# measured tensors that the ledger counts within one entry (issue 12): the QK-norms', the MLA latents' norms' and
# Gemma's post-norms' inputs, fp32 copies, statistics and normalised copies
_GROUPED = {
    "qk_norm_input_fp32": ("qk_norm_input",), "qk_norm_normalized": ("qk_norm_input",),
    **{f"mla_{w}_input": ("mla_latents",) for w in ("q", "kv")},
    **{f"mla_{w}_input_fp32": ("mla_latents",) for w in ("q", "kv")},
    **{f"mla_{w}_stats": ("mla_latent_stats",) for w in ("q", "kv")},
    **{f"mla_{w}_normalized": ("mla_latents_normed",) for w in ("q", "kv")},
    **{f"post_norm_{k}": ("post_norms",) for k in ("input", "input_fp32", "stats", "normalized")},
    # the routing's bookkeeping of the transformers-style MoE (the eager profile's moe_routing_indices)
    **{k: ("moe_routing_indices",) for k in ("moe_topk_indices", "moe_topk_probs", "moe_topk_sum", "moe_expert_index",
                                             "moe_expert_slot", "moe_routing_weights")},
}
# measured MoE tensors only the eager profile's ledger counts (the fused profile models Megatron-Core's dispatcher,
# whose own index maps are not measured): under the fused profile they stay 'unmatched', as MOE_UNLEDGERED lists them
_EAGER_MOE = ("moe_routing_indices", "moe_weighted_outputs")


def predicted_layer(cfg: Config, recompute: str) -> dict[str, float]:
    """The ledger of one layer as kept after the forward, on one unsharded replica (tp = 1): `layer_ledger`
    under `recompute`; full recomputation keeps only the layer input (norm1_input, 2sbh)."""
    led = M.ledger(cfg.columns(), recompute="none" if recompute == "full" else recompute, tp=1,
                   sequence_parallel=False, n_experts=1, top_k=1)
    led = {k: float(v) for k, v in led.items()}
    if recompute == "full":
        return {k: (v if k == "norm1_input" else 0.0) for k, v in led.items()}
    return led


def _ratio(measured, predicted):
    if predicted is None or predicted == 0:
        return None
    return measured / predicted


def build_rows(records: list[dict], predicted: dict[str, float], n_layers: int = 1,
               model_predicted: dict[str, float] | None = None) -> list[dict]:
    """Rows {tensor, ledger, predicted_bytes, measured_bytes, ratio, saved_by, dtype, kind}: one per ledger tensor
    (or group of ledger tensors one measured tensor stands for), summed over `n_layers`; then the whole model's
    own tensors (kind 'model'; predicted only for 'logits'); then every unnamed saved tensor (kind 'unmatched',
    predicted None). Tensors predicted and measured as 0 are left out."""
    model_predicted = model_predicted or {}
    rows: dict[str, dict] = {}

    def row(key, ledger, kind, predicted_bytes):
        if key not in rows:
            rows[key] = {"tensor": key, "ledger": list(ledger), "predicted_bytes": predicted_bytes,
                         "measured_bytes": 0.0, "ratio": None, "saved_by": [], "dtype": [], "kind": kind}
        return rows[key]

    for r in records:
        led = ledger_names_for(r["name"])
        if led and set(led) <= set(_EAGER_MOE) and not any(predicted.get(n, 0.0) for n in led):
            led = ()
        if led:
            rw = row("+".join(led), led, "ledger", n_layers * sum(predicted.get(n, 0.0) for n in led))
        elif r["name"] in _MODEL_NAMES:
            rw = row(r["name"], (), "model", model_predicted.get(r["name"]))
        else:
            where = re.sub(r"^blocks\.\d+\.?", "", r["module"]) or ("block" if r["layer"] is not None else "model")
            label = r["name"] or f"{r['saved_by']} {r['dtype']}{list(r['shape'])}"
            rw = row(f"unmatched: {label} in {where}", (), "unmatched", None)
        rw["measured_bytes"] += float(r["bytes"])
        for op in r["saved_by"].split(","):
            if op not in rw["saved_by"]:
                rw["saved_by"].append(op)
        if r["dtype"] not in rw["dtype"]:
            rw["dtype"].append(r["dtype"])
    covered = {n for rw in rows.values() for n in rw["ledger"]}
    for n, v in predicted.items():  # predicted but never saved
        if v > 0 and n not in covered:
            row(n, (n,), "ledger", n_layers * v)
    for n, v in model_predicted.items():
        if v and n not in rows:
            row(n, (), "model", v)

    def order(rw):
        if rw["kind"] == "ledger":
            return (0, _LEDGER_INDEX[rw["ledger"][0]], "")
        if rw["kind"] == "model":
            return (1, _MODEL_NAMES.index(rw["tensor"]), "")
        return (2, 0, rw["tensor"])

    out = []
    for rw in sorted(rows.values(), key=order):
        rw["ratio"] = _ratio(rw["measured_bytes"], rw["predicted_bytes"])
        rw["saved_by"] = ",".join(rw["saved_by"])
        rw["dtype"] = ",".join(rw["dtype"])
        out.append(rw)
    return out


def totals(rows: list[dict]) -> dict:
    """Predicted total (the ledger's rows), measured total (every saved byte), their ratio, and the measured bytes
    the ledger has no row for (whole-model tensors other than the logits, and unmatched tensors)."""
    pred = sum(r["predicted_bytes"] or 0.0 for r in rows)
    meas = sum(r["measured_bytes"] for r in rows)
    outside = sum(r["measured_bytes"] for r in rows if r["predicted_bytes"] is None)
    return {"predicted_bytes": pred, "measured_bytes": meas, "ratio": _ratio(meas, pred),
            "not_in_ledger_bytes": outside}


def _flop_row(name, predicted, measured, note=""):
    return {"quantity": name, "predicted_flops": float(predicted), "measured_flops": float(measured),
            "ratio": _ratio(float(measured), float(predicted)), "note": note}


def spec_from_config(cfg: Config, dropout_impl: str = "native"):
    """The torch_blocks.Spec for a configuration (the measured implementation is the ledger profile)."""
    tb = _torch_blocks()
    m = cfg.model
    if m.n_experts > 1:
        raise ValueError("n_experts: the measurement builds dense blocks only (mixture-of-experts is not built)")
    if m.mamba_layers:
        raise ValueError("mamba_layers: the measurement builds transformer blocks only (a Mamba-2 mixer is not built)")
    if m.mlp == "relu2":
        raise ValueError("mlp: the measurement builds gelu, swiglu and geglu MLPs (squared ReLU is not built)")
    if dropout_impl not in DROPOUT_IMPLS:
        raise ValueError(f"dropout_impl: {dropout_impl!r} is not one of {', '.join(DROPOUT_IMPLS)}")
    if m.attention == "mla" and cfg.flash_attention:
        raise ValueError("flash_attention: MLA's value width differs from its query/key width, and PyTorch's CPU "
                         "flash kernel then falls back to fp32 math; measure MLA with flash_attention off")
    if m.embedding_norm:
        raise ValueError("embedding_norm: the measured model has no embedding LayerNorm (its parameters are counted, "
                         "its input is outside the per-layer ledger)")
    lora = cfg.training in ("lora", "qlora")
    if lora and m.position == "learned":
        raise ValueError("training: LoRA is measured on the rotary block (separate q, k, v projections); the learned-"
                         "position block fuses q, k and v into one matrix, which LoRA would adapt as one")
    return tb.Spec(n_layers=m.n_layers, d_model=m.d_model, n_heads=m.n_heads, n_kv_heads=m.n_kv_heads, d_ff=m.d_ff,
                   vocab_size=m.vocab_size, mlp=m.mlp, norm=m.norm, bias=m.bias, dropout=bool(m.dropout),
                   tied_embeddings=bool(m.tied_embeddings), position=m.position, max_position=m.max_position,
                   flash_attention=bool(cfg.flash_attention), impl=cfg.resolved_profile, dropout_impl=dropout_impl,
                   fp32_loss=bool(cfg.fp32_loss), head_dim=m.head_dim, v_head_dim=m.v_head_dim,
                   attention=m.attention, q_lora_rank=m.q_lora_rank, kv_lora_rank=m.kv_lora_rank,
                   qk_rope_head_dim=m.qk_rope_head_dim, qk_norm=m.qk_norm, norms_per_layer=m.norms_per_layer,
                   lora_rank=cfg.lora_rank if lora else 0, lora_targets=cfg.lora_targets)


def predicted_block_state(cfg: Config) -> dict:
    """The model state of one block as the ledger prices it (`memory.state_bytes`) for what the measurement builds:
    bf16 weights and gradients, an fp32 master copy and AdamW's two fp32 moments for what trains — every block
    parameter, or under LoRA/QLoRA the adapters (`model.lora_params`) with the base frozen (measured in bf16: a
    CPU cannot run bitsandbytes' NF4, whose bytes per weight are `tables.BASE_FORMATS`)."""
    from .model import lora_params, norm_params
    m = cfg.model
    one = {**m.arch(), "n_layers": 1, "vocab_size": 0, "tied_embeddings": True, "embedding_norm": False,
           "position": "rotary", "n_mtp_layers": 0}
    block = float(param_breakdown(**one)["total"] - norm_params(m.d_model, m.norm))
    lora = cfg.training in ("lora", "qlora")
    adapters = float(lora_params(cfg.lora_rank, cfg.lora_targets, **one)) if lora else 0.0
    parts = M.state_bytes(block, "bf16", "bf16", True, False, "adamw", stage_params=block,
                          trainable_params=0.0 if lora else block, adapter_params=adapters)
    return {"trainable_params": adapters if lora else block, "frozen_params": block if lora else 0.0,
            **{k: float(v) for k, v in parts.items()}}


STATE_ROWS = (("trainable_params", "parameters that train (count)"), ("weights_bytes", "weights (bf16), frozen ones too"),
              ("grads_bytes", "gradients (bf16)"), ("master_bytes", "fp32 master copy"),
              ("optimizer_bytes", "AdamW moments (fp32)"))


def state_rows(measured: dict, predicted: dict) -> list[dict]:
    """One block's state, predicted (`predicted_block_state`) against measured (`torch_blocks.state_of`)."""
    got = {**measured, "weights_bytes": measured["weights_bytes"] + measured["frozen_bytes"]}
    return [{"quantity": k, "what": w, "predicted": predicted[k], "measured": got[k],
             "ratio": _ratio(got[k], predicted[k])} for k, w in STATE_ROWS]


def compare(cfg: Config, *, device: str = "cpu", dropout_impl: str = "native", whole_model: bool = True,
            cap: SizeCap | None = APP_CPU_CAP, seed: int = 0) -> dict:
    """Build the configuration's block and whole model in PyTorch, run them, and compare with the core.

    Returns a dict (plain Python values):
      rows          one block (one layer) under cfg.recompute: [{tensor, ledger, predicted_bytes, measured_bytes,
                    ratio, saved_by, dtype, kind}], see `build_rows`; `totals` their sums
      recompute     one block's totals with recompute none / selective / full
      model_rows, model_totals   the whole model (L layers summed, plus embeddings, final norm, LM head, loss);
                    predicted = L · ledger + logits_bytes; None when whole_model is False
      flops         [{quantity, predicted_flops, measured_flops, ratio, note}]
      cuda_step     device 'cuda' only: max_memory_allocated of one training step vs the estimate's total
      notes         every convention and every difference found, in words
      shape, device, torch_version, profile, dropout_impl, recompute
    Raises ValueError (torch missing, size over `cap` on CPU, unsupported model) with a message naming the field.
    """
    if device not in DEVICES:
        raise ValueError(f"device: {device!r} is not one of {', '.join(DEVICES)}")
    spec = spec_from_config(cfg, dropout_impl)
    tb = _torch_blocks()
    import torch
    if device == "cpu" and cap is not None:
        check_size(cfg, cap)
    m = cfg.model
    s, b, L, h = cfg.seq_len, cfg.micro_batch, m.n_layers, m.d_model
    notes = _notes(cfg, device, dropout_impl, tb, whole_model)
    if not torch.__version__.startswith(TORCH_VERSION):
        notes.append(f"This is torch {torch.__version__}; the traps named here were found with {TORCH_VERSION} "
                     "(requirements-measure.txt) and may differ.")

    # --- one block, three recompute modes ----------------------------------------------------------------------
    block_runs = {rc: tb.measure_block(spec, s, b, rc, device, seed) for rc in M.RECOMPUTE_MODES}
    rows = build_rows(block_runs[cfg.recompute]["records"], predicted_layer(cfg, cfg.recompute))
    recompute = []
    for rc, run in block_runs.items():
        t = totals(build_rows(run["records"], predicted_layer(cfg, rc)))
        recompute.append({"recompute": rc, **t})

    # --- FLOPs ---------------------------------------------------------------------------------------------------
    fwd_pred, fb_pred = block_step_flops(cfg)
    none = block_runs["none"]
    lora = cfg.training != "full"
    flops = [_flop_row("block forward", fwd_pred, none["forward_flops"],
                       "2·b·s·(block matmul weights) + 4·b·s²·h" + (" + adapters" if lora else "")),
             _flop_row("block forward + backward", fb_pred, none["forward_flops"] + none["backward_flops"],
                       ("frozen weights: no weight gradients" if lora else "backward = 2 × forward")
                       + (" (flash: see notes)" if cfg.flash_attention else ""))]
    width = float(F.attention_width(h, m.n_heads, m.head_dim, m.v_head_dim))
    attn_fwd = 4.0 * b * s * s * width
    for rc, extra, what in (("selective", attn_fwd, "+ attention forward (core)"), ("full", fwd_pred, "+ forward")):
        run = block_runs[rc]
        rerun = float(checkpoint_rerun_flops(rc, s, b, h, m.n_heads, m.n_kv_heads, m.d_ff, m.mlp,
                                             cfg.flash_attention, m.dropout, **_block_arch(m)))
        flops.append(_flop_row(f"block forward + backward, recompute {rc}", fb_pred + extra,
                               run["forward_flops"] + run["backward_flops"],
                               f"{what}; checkpoint reruns {rerun:.4g}"))

    model_rows = model_totals = None
    if whole_model:
        run = tb.measure_model(spec, s, b, cfg.recompute, device, seed)
        logits = float(M.logits_bytes(s, b, m.vocab_size, 1, cfg.fp32_loss))
        model_rows = build_rows(run["records"], predicted_layer(cfg, cfg.recompute), L, {"logits": logits})
        model_totals = totals(model_rows)
        n = flop_params(cfg)
        attn = float(F.attention_flops_per_token(L, h, s, "full", attn_width=width))
        adapters = float(lora_params(cfg.lora_rank, cfg.lora_targets, **m.arch())) if lora else 0.0
        fpt = float(F.matmul_flops_per_token(n, 0.0 if lora else n, adapters)) + attn
        # N here has no gathered tables, so what recomputation does not rerun is the LM head's matmul alone
        rerun_tok = 2.0 * (n - m.vocab_size * h) + 2.0 * adapters + attn / 3.0 if lora else None
        hw = float(F.hardware_flops_per_token(fpt, attn, cfg.recompute, 6.0 * m.vocab_size * h, rerun_tok))
        tokens = s * b
        flops.append(_flop_row("model forward", (2.0 * (n + adapters) + attn / 3.0) * tokens, run["forward_flops"],
                               f"(2·N + 4·L·h·s) per token, N = {n:.4g} (no gathered tables)"
                               + (f" + {adapters:.4g} adapter parameters" if lora else "")))
        flops.append(_flop_row("model training step", hw * tokens, run["forward_flops"] + run["backward_flops"],
                               f"core: (6·N + 12·L·h·s) per token × {tokens} tokens"
                               + ("" if cfg.recompute == "none"
                                  else f", hardware FLOPs with recompute={cfg.recompute}")))
        if cfg.recompute != "none":
            rerun = L * float(checkpoint_rerun_flops(cfg.recompute, s, b, h, m.n_heads, m.n_kv_heads, m.d_ff, m.mlp,
                                                     cfg.flash_attention, m.dropout, **_block_arch(m)))
            flops.append(_flop_row("model training step, what checkpoint reruns", fpt * tokens + rerun,
                                   run["forward_flops"] + run["backward_flops"],
                                   "6·N + 12·L·h·s per token + the blocks' rerun only (no LM head, no embeddings)"))
        raw = float(F.hardware_flops_per_token(
            F.model_flops_per_token(m.n_active_params, L, h, s, "full", attn_width=width), attn, cfg.recompute,
            F.outside_blocks_flops_per_token(m.vocab_size, h, m.tied_embeddings, m.position, m.max_position))) * tokens
        if abs(raw - hw * tokens) > 0.001 * raw and not lora:
            flops.append(_flop_row("model training step, core's N as is", raw,
                                   run["forward_flops"] + run["backward_flops"],
                                   "6·n_active_params counts gathered embedding tables as if they were matmuls"))

    cuda_step = None
    if device == "cuda":
        cuda_step = _cuda_step(cfg, spec, tb, seed)

    return {
        "model": m.name, "device": device, "torch_version": str(torch.__version__), "profile": cfg.resolved_profile,
        "dropout_impl": dropout_impl, "recompute": cfg.recompute, "flash_attention": cfg.flash_attention,
        "shape": {"n_layers": L, "d_model": h, "n_heads": m.n_heads, "n_kv_heads": m.n_kv_heads, "d_ff": m.d_ff,
                  "vocab_size": m.vocab_size, "seq_len": s, "micro_batch": b, "mlp": m.mlp, "norm": m.norm,
                  "position": m.position, "dropout": m.dropout},
        "rows": rows, "totals": totals(rows), "recompute_modes": recompute,
        "state": state_rows(block_runs["none"]["state"], predicted_block_state(cfg)),
        "model_rows": model_rows, "model_totals": model_totals,
        "flops": flops, "cuda_step": cuda_step, "notes": notes,
    }


def _cuda_step(cfg: Config, spec, tb, seed: int) -> dict:
    """One full training step on CUDA: max_memory_allocated against the estimate's total per GPU for the same
    setup on one GPU (bf16 weights and gradients, AdamW fp32 moments, fp32 master copy if cfg.master_weights)."""
    one = cfg.replace(n_gpus=1, tp=1, pp=1, virtual_stages=1, zero_stage=0, sequence_parallel=False,
                      weight_dtype="bf16", grad_dtype="bf16", grad_accum_fp32=False, optimizer="adamw",
                      overhead_fixed_bytes=0.0, fragmentation_frac=0.0)
    rec = estimate(one)
    got = tb.cuda_train_step(spec, cfg.seq_len, cfg.micro_batch, cfg.recompute, bool(cfg.master_weights), seed)
    pred = rec["total_bytes"]
    return {**got, "predicted_total_bytes": pred, "predicted_state_bytes": rec["state_bytes"],
            "predicted_activations_bytes": rec["activations_bytes"], "predicted_logits_bytes": rec["logits_bytes"],
            "ratio": _ratio(got["max_memory_allocated_bytes"], pred),
            "note": "max_memory_allocated excludes the CUDA context; the step's transients (logits gradient, "
                    "the optimizer's per-parameter fp32 temporaries) are in it, the estimate has no term for them"}


def _notes(cfg: Config, device: str, dropout_impl: str, tb, whole_model: bool = True) -> list[str]:
    m = cfg.model
    n = [f"Measured on one unsharded replica in bf16 on {device} with PyTorch; the ledger at tp = 1"
         + (f" (the configuration's tp={cfg.tp}, pp={cfg.pp}, ZeRO-{cfg.zero_stage} are not built)"
            if (cfg.tp, cfg.pp, cfg.zero_stage) != (1, 1, 0) else "") + "."]
    if m.shape_note:
        n.append(f"Built from the documented shape: {m.shape_note}.")
    parts = {"fused": [], "eager": []}
    if m.norm == "rmsnorm":
        parts["fused"].append("RMSNorm keeps its 16-bit input and fp32 rstd")
        parts["eager"].append("LlamaRMSNorm keeps an fp32 copy of its input and a 16-bit normalised copy (ledger "
                              "normN_input + normN_upcast, normN_normalized)")
    if m.mlp == "swiglu":
        parts["fused"].append("SwiGLU keeps gate and up and recomputes SiLU")
        parts["eager"].append("SiLU(gate) is kept for the multiply (silu_output)")
    how = {"fused": "fused kernels' save sets, written as autograd Functions",
           "eager": "plain PyTorch / Hugging Face ops"}[cfg.resolved_profile]
    n.append(f"Implementation '{cfg.resolved_profile}' (the ledger's profile): {how}"
             + (": " + "; ".join(parts[cfg.resolved_profile]) if parts[cfg.resolved_profile] else
                " (LayerNorm and GeLU are single native ops in both profiles)") + ".")
    if m.norm == "layernorm":
        n.append("LayerNorm also keeps its mean and rstd per row; Korthikanti's sbh(34 + 5as/h) (profile 'fused') "
                 "counts no statistics, 'eager' counts them in fp32 (8sb per norm). F.layer_norm on CPU keeps them "
                 "in the input dtype (bf16, 4sb per norm); CUDA keeps fp32.")
    if m.dropout:
        if dropout_impl == "native":
            n.append("Dropout masks: torch.native_dropout, 1-byte bool masks (what CUDA's F.dropout keeps and the "
                     "seeds count). F.dropout on CPU keeps a 2-byte scale tensor instead (dropout_impl='functional').")
        elif device == "cpu":
            n.append("Dropout: F.dropout on CPU keeps its mask as a 2-byte bf16 scale tensor, so mask rows measure 2× "
                     "the ledger's 1-byte masks (CUDA and torch.native_dropout keep 1-byte bool masks).")
        if cfg.flash_attention and device == "cpu":
            n.append("Attention dropout is left out with flash attention on CPU: the CPU flash kernel has no dropout, "
                     "and SDPA with dropout_p > 0 falls back to a math path that upcasts to fp32 and keeps s×s "
                     "matrices. A flash kernel regenerates its mask from the RNG state, so the ledger counts none.")
    if cfg.flash_attention:
        if tb.MISSING_FLOP_FORMULAS and device == "cpu":
            n.append("FLOPs: this torch's FlopCounterMode has no formula for "
                     + ", ".join(tb.MISSING_FLOP_FORMULAS) + " and would count it as 0; torch's own SDPA formulas "
                     "are registered for it here.")
        n.append("FLOPs: torch's SDPA backward formula counts five s×s matmuls (flash recomputes QKᵀ), so attention "
                 "backward is 2.5× its forward where the core's 12·L·h·s assumes 2×: measured training FLOPs exceed "
                 "the core by 2·L·h·s per token.")
    if m.mlp == "swiglu" or m.position == "rotary":
        n.append("Non-flash GQA groups query heads by their KV head (no copies of K/V); Hugging Face's eager "
                 "attention repeats K/V to all heads first (repeat_kv), which keeps a-head copies instead.")
    if cfg.recompute == "full":
        n.append("Full recomputation: what the forward keeps is each block's input (2sbh); the estimate also adds "
                 "the recompute peak (one layer's working set during its backward), which is not a saved tensor.")
    if cfg.recompute != "none":
        n.append("Hardware FLOPs with recomputation: the core adds the blocks' forward (full; not the LM head or "
                 "embeddings) or the attention forward (selective); torch.utils.checkpoint reruns only the checkpointed "
                 "blocks, and stops "
                 "once backward's saved tensors are rebuilt (selective, math path: QKᵀ but not the AV product; full "
                 "without dropout: not the last MLP projection). The row 'what checkpoint reruns' counts that.")
    if cfg.fp32_loss:
        n.append("fp32 loss: logits_bytes counts the bf16 logits and their fp32 copy (6sbV, both alive at the loss); "
                 "autograd keeps only the fp32 log-softmax (4sbV).")
    if cfg.training != "full":
        n.append(f"{cfg.training.upper()}: the base is frozen and rank-{cfg.lora_rank} adapters (PEFT's LoraLayer, "
                 f"lora_dropout 0) train on '{cfg.lora_targets}'; a frozen linear layer keeps no input, each adapter "
                 "keeps its r-wide intermediate (lora_hidden); the whole model's embedding output is made to require "
                 "grad, as PEFT's enable_input_require_grads does.")
    if cfg.training == "qlora":
        n.append("QLoRA is measured with a bf16 base: a CPU cannot run bitsandbytes' NF4 kernels. Its activations are "
                 "the same (bitsandbytes' MatMul4Bit saves only the quantised weight, no input); its base weights are "
                 "priced at NF4's bytes per weight in the estimate, not here.")
    if m.attention == "mla":
        n.append("MLA (transformers' DeepseekV3Attention): the KV latent is made contiguous before its norm and the "
                 "values before the attention core, so neither saved tensor keeps a wider storage alive.")
    if m.head_dim or m.qk_norm != "none" or m.norms_per_layer != 2 or m.mlp == "geglu":
        n.append("Issue-12 block fields built as in their models: head_dim (q, k, v, O widths), QK-norm (RMSNorm per "
                 "head or over the projection), Gemma's post-norms (4 norms) or one norm for a parallel block, GeGLU.")
    if m.sliding_window:
        n.append("Sliding window: not built (SDPA has no window); a flash kernel keeps the same LSE and O with or "
                 "without one, and the math path masks a full s×s, so the bytes are the same.")
    if whole_model:
        n.append("Whole model: the ledger counts per-layer tensors and the logits; token ids, the final norm's and "
                 "the LM head's inputs are kept too and shown as model rows. FLOPs: N excludes gathered tables "
                 "(position table; input embedding when untied); norms and biases are in N but not matmuls.")
    return n


# ---------------------------------------------------------------------------------------------------------------
# Command line: python -m core measure
# ---------------------------------------------------------------------------------------------------------------

def _mb(x):
    return "—" if x is None else f"{x / 1e6:,.3f} MB"


def _rt(x):
    return "—" if x is None else f"{x:.3f}"


def render(res: dict) -> str:
    sh = res["shape"]
    out = [f"measure {res['model']}: L={sh['n_layers']} h={sh['d_model']} a={sh['n_heads']} k={sh['n_kv_heads']} "
           f"f={sh['d_ff']} V={sh['vocab_size']} s={sh['seq_len']} b={sh['micro_batch']} ({sh['mlp']}, {sh['norm']}, "
           f"{sh['position']}, dropout {'on' if sh['dropout'] else 'off'}, "
           f"flash {'on' if res['flash_attention'] else 'off'})",
           f"  PyTorch {res['torch_version']} on {res['device']}, bf16; implementation = ledger profile "
           f"'{res['profile']}'; recompute {res['recompute']}; bytes in MB (1e6)", ""]

    def table(title, rows, tot):
        out.append(title)
        out.append(f"  {'tensor':<44}{'predicted':>15}{'measured':>15}{'ratio':>8}  saved by")
        for r in rows:
            out.append(f"  {r['tensor'][:44]:<44}{_mb(r['predicted_bytes']):>15}{_mb(r['measured_bytes']):>15}"
                       f"{_rt(r['ratio']):>8}  {r['saved_by']}")
        out.append(f"  {'total':<44}{_mb(tot['predicted_bytes']):>15}{_mb(tot['measured_bytes']):>15}"
                   f"{_rt(tot['ratio']):>8}  ({_mb(tot['not_in_ledger_bytes'])} not in the ledger)")
        out.append("")

    table("one block: bytes kept for backward", res["rows"], res["totals"])
    out.append("one block: model state after a step (bf16 weights and grads, fp32 master and AdamW moments)")
    for r in res.get("state") or ():
        out.append(f"  {r['what'][:44]:<44}{r['predicted']:>15,.0f}{r['measured']:>15,.0f}{_rt(r['ratio']):>8}")
    out.append("")
    out.append("one block by recompute mode")
    for r in res["recompute_modes"]:
        out.append(f"  {r['recompute']:<44}{_mb(r['predicted_bytes']):>15}{_mb(r['measured_bytes']):>15}"
                   f"{_rt(r['ratio']):>8}")
    out.append("")
    if res["model_rows"] is not None:
        table(f"whole model ({sh['n_layers']} layers, embeddings, final norm, LM head, loss)", res["model_rows"],
              res["model_totals"])
    out.append("FLOPs")
    out.append(f"  {'quantity':<44}{'predicted':>15}{'measured':>15}{'ratio':>8}")
    for r in res["flops"]:
        out.append(f"  {r['quantity']:<44}{r['predicted_flops']:>15.4e}{r['measured_flops']:>15.4e}"
                   f"{_rt(r['ratio']):>8}  {r['note']}")
    out.append("")
    c = res.get("cuda_step")
    if c:
        out.append(f"CUDA training step on {c['device_name']}: max_memory_allocated "
                   f"{c['max_memory_allocated_bytes'] / GiB:.3f} GiB vs the estimate's total "
                   f"{c['predicted_total_bytes'] / GiB:.3f} GiB (ratio {_rt(c['ratio'])})")
        out.append(f"  {c['note']}")
        out.append("")
    out.append("notes")
    for x in res["notes"]:
        out.append(f"  - {x}")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------------------------
# Mixture of experts: one MoE block (`compare` itself builds dense blocks only)
# ---------------------------------------------------------------------------------------------------------------

# What PyTorch keeps in a Mixtral-style MoE layer (torch_blocks.MoE) beyond the routed experts' tensors, with its
# bytes per layer (T = s·b tokens, k = top_k): measured, torch 2.13 CPU. The eager profile's ledger counts them
# (moe_routing_indices, moe_weighted_outputs: core/memory.py); the fused profile's does not (Megatron-Core's
# dispatcher keeps other, unmeasured maps), so there they remain unmatched.
MOE_UNLEDGERED = (
    ("moe_topk_indices", "top-k expert indices, int64, kept by topk's backward", "8·T·k"),
    ("moe_topk_probs", "fp32 top-k probabilities, kept by the renormalising division", "4·T·k"),
    ("moe_topk_sum", "their fp32 sum per token, kept by the same division", "4·T"),
    ("moe_expert_index", "each expert's token indices (int64), kept by the gather and index_add_", "8·T·k"),
    ("moe_expert_slot", "each expert's slot indices (int64), kept by the routing-weight gather", "8·T·k"),
    ("moe_routing_weights", "each expert's 16-bit routing weights, kept by the weight multiply", "2·T·k"),
    ("moe_weighted_outputs", "each expert's weighted output, kept by index_add_ (its derivative reads source.dim())",
     "2·T·k·h"),
)


def moe_unledgered_bytes(seq_len: int, micro_batch: int, d_model: int, top_k: int) -> dict[str, float]:
    """Bytes per MoE layer of each tensor in `MOE_UNLEDGERED` (16-bit activations)."""
    T, k, h = float(seq_len * micro_batch), float(top_k), float(d_model)
    return {"moe_topk_indices": 8 * T * k, "moe_topk_probs": 4 * T * k, "moe_topk_sum": 4 * T,
            "moe_expert_index": 8 * T * k, "moe_expert_slot": 8 * T * k, "moe_routing_weights": 2 * T * k,
            "moe_weighted_outputs": 2 * T * k * h}


def moe_spec_from_config(cfg: Config, dropout_impl: str = "native"):
    """The torch_blocks.Spec of an MoE configuration's MoE layer: the dense block's spec (`spec_from_config`) with
    the routed experts (n_experts, top_k, moe_d_ff) and shared experts (n_shared_experts, shared_d_ff,
    shared_expert_gate). LoRA on experts is not built."""
    import dataclasses
    m = cfg.model
    if m.n_experts <= 1:
        raise ValueError("n_experts: this measures a mixture-of-experts layer; the configuration is dense (use compare)")
    if cfg.training != "full":
        raise ValueError("training: the MoE measurement builds fully trained experts (LoRA on experts is not built)")
    spec = spec_from_config(cfg.replace(n_experts=1, top_k=1), dropout_impl)
    return dataclasses.replace(spec, n_experts=int(m.n_experts), top_k=int(m.top_k), moe_d_ff=int(m.moe_d_ff),
                               n_shared_experts=int(m.n_shared_experts), shared_d_ff=int(m.shared_d_ff),
                               shared_expert_gate=bool(m.shared_expert_gate))


def predicted_moe_layer(cfg: Config, recompute: str) -> dict[str, float]:
    """The ledger of one MoE layer (`layer_ledger` with the configuration's experts) at tp = 1 under `recompute`;
    full recomputation keeps only the layer input."""
    # the measured block (core/torch_blocks.py) weighs the experts' outputs as Mixtral's reference does, so they are
    # kept whatever the framework's own multiply (data/frameworks.csv moe_probs)
    led = M.ledger(cfg.columns(), recompute="none" if recompute == "full" else recompute, tp=1,
                   sequence_parallel=False, moe_probs="output")
    led = {k: float(v) for k, v in led.items()}
    if recompute == "full":
        return {k: (v if k == "norm1_input" else 0.0) for k, v in led.items()}
    return led


def compare_moe_block(cfg: Config, *, device: str = "cpu", dropout_impl: str = "native",
                      cap: SizeCap | None = APP_CPU_CAP, seed: int = 0) -> dict:
    """Build one MoE layer of the configuration in PyTorch (torch_blocks.MoE: Mixtral's dropless top-k routing,
    optional shared experts), run it under recompute none / selective / full, and set what autograd keeps next to
    the ledger, tensor by tensor (`build_rows`: the tensors in `MOE_UNLEDGERED` come out as 'unmatched' rows).
    Returns {rows, totals, recompute_modes, unledgered_predicted, notes, shape}. No FLOPs, no whole model."""
    if device not in DEVICES:
        raise ValueError(f"device: {device!r} is not one of {', '.join(DEVICES)}")
    spec = moe_spec_from_config(cfg, dropout_impl)
    tb = _torch_blocks()
    if device == "cpu" and cap is not None:
        check_size(cfg, cap)
    m = cfg.model
    s, b = cfg.seq_len, cfg.micro_batch
    runs = {rc: tb.measure_block(spec, s, b, rc, device, seed) for rc in M.RECOMPUTE_MODES}
    rows = build_rows(runs[cfg.recompute]["records"], predicted_moe_layer(cfg, cfg.recompute))
    modes = [{"recompute": rc, **totals(build_rows(run["records"], predicted_moe_layer(cfg, rc)))}
             for rc, run in runs.items()]
    notes = [f"One MoE layer in bf16 on {device}, the ledger at tp = 1: routing as Mixtral's reference "
             "(router → fp32 softmax → top-k → renormalise → gather per expert → expert MLP → weight → index_add_)"
             + (", shared experts on every token" if m.n_shared_experts else "")
             + (" times sigmoid(gate(x))" if m.shared_expert_gate else "") + ".",
             "Kept by PyTorch, in no ledger entry: " + "; ".join(f"{n} ({f})" for n, _, f in MOE_UNLEDGERED)
             + ", with T = s·b tokens and k = top_k. The largest, index_add_'s copy of the weighted expert outputs "
               "(2·T·k·h), is as large as expert_outputs."]
    return {"model": m.name, "device": device, "profile": cfg.resolved_profile, "recompute": cfg.recompute,
            "shape": {"d_model": m.d_model, "n_experts": m.n_experts, "top_k": m.top_k,
                      "moe_d_ff": m.moe_d_ff or m.d_ff, "n_shared_experts": m.n_shared_experts,
                      "seq_len": s, "micro_batch": b},
            "rows": rows, "totals": totals(rows), "recompute_modes": modes,
            "unledgered_predicted": moe_unledgered_bytes(s, b, m.d_model, m.top_k) if cfg.recompute != "full"
            else {}, "notes": notes}
