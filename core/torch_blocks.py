"""PyTorch side of the measurement (`core.measure`): a transformer block and a small whole model built from a
core `Model`, a recorder of the tensors autograd keeps for backward, and FLOP counting.

Imported only by `core.measure`, and only when torch is installed (it is an optional extra,
requirements-measure.txt); nothing else in `core` imports torch.

How a saved tensor gets its ledger name (core/memory.py `LEDGER_TENSORS`):
- the block's forward marks the tensors it produces with their ledger name (`mark("q", q)`); a saved tensor whose
  storage was marked takes that name. Marks are per storage and split a storage shared by several marked views
  (the GPT block's fused QKV output holds q, k and v) by the bytes of each view;
- tensors made inside an op (layernorm's mean and rstd, flash attention's log-sum-exp, a CPU `F.dropout`'s scale
  tensor) are named by the innermost module that declares `internal_name`;
- anything else is reported unnamed, with the op that saved it, never dropped.
Bytes are counted per storage, once (a saved view keeps its whole storage alive); parameters and buffers are
excluded. The saving op is the outermost torch function running when autograd packed the tensor
(`TorchFunctionMode`), or the name of our own autograd Function / checkpoint.

Implementations (`impl`, the ledger's `profile`):
- 'eager': what plain PyTorch / Hugging Face code keeps: transformers' LlamaRMSNorm (x.float(), pow, mean, rsqrt,
  multiply, cast, weight multiply), SiLU(gate) * up as two ops;
- 'fused': the save sets of fused kernels (Apex/Liger/Transformer Engine style RMSNorm keeps the 16-bit input
  and the fp32 rstd; fused SwiGLU keeps gate and up and recomputes SiLU), written as autograd Functions.
LayerNorm is `F.layer_norm` (one native op) in both; GeLU is `F.gelu`.
Dropout ('native'): `torch.native_dropout`, which keeps a 1-byte bool mask on CPU and CUDA (what the seeds count);
'functional': `F.dropout`, which on CPU keeps a 2-byte scale tensor instead (CUDA dispatches to native_dropout).
"""
from __future__ import annotations

import contextlib
import functools
import math
import threading
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode
from torch.utils.checkpoint import checkpoint
from torch.utils.flop_counter import FlopCounterMode, flop_registry, sdpa_backward_flop_count, sdpa_flop_count

# ---------------------------------------------------------------------------------------------------------------
# Recording what autograd keeps
# ---------------------------------------------------------------------------------------------------------------

_REC: "SavedRecorder | None" = None  # the active recorder (only during a recorded forward)
_OPS: list[str] = []  # names of the ops running now, outermost first


def mark(name: str, t: torch.Tensor) -> None:
    """Name the storage of `t` (a ledger tensor name, or a measured-only name such as 'norm1_input_fp32')."""
    if _REC is not None:
        _REC.mark(name, t)


@contextlib.contextmanager
def op_name(name: str):
    """Name the op for tensors saved inside (our autograd Functions and checkpoint, which no torch function sees)."""
    _OPS.append(name)
    try:
        yield
    finally:
        _OPS.pop()


class _OpTracker(TorchFunctionMode):
    """Keeps the name of the outermost torch function running (nested calls do not re-enter a mode)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        _OPS.append(getattr(func, "__name__", str(func)))
        try:
            return func(*args, **(kwargs or {}))
        finally:
            _OPS.pop()


def _ptr(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


class SavedRecorder:
    """Records every tensor autograd saves for backward during a forward pass (`saved_tensors_hooks`), once per
    storage, with the module and op that saved it; parameters and buffers are excluded."""

    def __init__(self, module: nn.Module):
        self.module = module
        self.excluded = {_ptr(p) for p in module.parameters()} | {_ptr(b) for b in module.buffers()}
        self.saved: dict[int, dict] = {}  # storage ptr → record (holds the storage)
        self.marks: dict[int, dict[str, dict]] = {}  # storage ptr → name → {bytes, layer}
        self._mark_refs: dict[int, object] = {}  # keep a marked storage alive until its block's forward ends
        self._stack: list[tuple[str, nn.Module]] = []
        self._handles = []

    # -- module context ------------------------------------------------------------------------------------------
    def _pre(self, name):
        def hook(mod, args):
            self._stack.append((name, mod))
        return hook

    def _post(self, name):
        def hook(mod, args, out):
            while self._stack and self._stack[-1][0] != name:  # a checkpointed forward may unwind unevenly
                self._stack.pop()
            if self._stack:
                self._stack.pop()
            if isinstance(mod, Block):  # release this block's marked tensors that nobody saved
                for p in [p for p in self._mark_refs if p not in self.saved and mod.layer in (
                        m["layer"] for m in self.marks[p].values())]:
                    del self._mark_refs[p]
                    del self.marks[p]
        return hook

    def _layer(self):
        for _, mod in reversed(self._stack):
            if isinstance(mod, Block):
                return mod.layer
        return None

    # -- marks and packing ---------------------------------------------------------------------------------------
    def mark(self, name: str, t: torch.Tensor) -> None:
        p = _ptr(t)
        if p in self.excluded or p == 0:
            return
        names = self.marks.setdefault(p, {})
        if name not in names:
            names[name] = {"bytes": t.numel() * t.element_size(), "layer": self._layer()}
            self._mark_refs.setdefault(p, t.untyped_storage())

    def pack(self, t: torch.Tensor):
        p = _ptr(t)
        if p in self.excluded or p == 0:
            return t
        op = _OPS[-1] if _OPS else "autograd"
        rec = self.saved.get(p)
        if rec is None:
            internal = None
            for _, mod in reversed(self._stack):
                fn = getattr(mod, "internal_name", None)
                if fn is not None:
                    internal = fn(t)
                    if internal:
                        break
            self.saved[p] = {
                "storage": t.untyped_storage(), "bytes": t.untyped_storage().nbytes(), "dtype": str(t.dtype)[6:],
                "shape": tuple(t.shape), "ops": [op], "module": self._stack[-1][0] if self._stack else "",
                "layer": self._layer(), "internal": internal,
            }
        elif op not in rec["ops"]:
            rec["ops"].append(op)
        return t

    @contextlib.contextmanager
    def recording(self):
        global _REC
        for name, mod in self.module.named_modules():
            self._handles.append(mod.register_forward_pre_hook(self._pre(name)))
            self._handles.append(mod.register_forward_hook(self._post(name)))
        _REC = self
        try:
            with torch.autograd.graph.saved_tensors_hooks(self.pack, lambda t: t), _OpTracker():
                yield self
        finally:
            _REC = None
            for h in self._handles:
                h.remove()
            self._handles.clear()
            self._stack.clear()
            self._mark_refs.clear()

    def records(self) -> list[dict]:
        """One row per (storage, name): bytes of a storage shared by several marked views are split by the bytes
        of each view; what no mark covers is a row of its own (name None, or the internal name)."""
        out = []
        for p, rec in self.saved.items():
            base = {k: rec[k] for k in ("dtype", "shape", "module")}
            base["saved_by"] = ",".join(rec["ops"])
            names = self.marks.get(p, {})
            total = rec["bytes"]
            marked = sum(m["bytes"] for m in names.values())
            scale = min(1.0, total / marked) if marked else 0.0
            for n, m in names.items():
                out.append({**base, "name": n, "layer": m["layer"], "bytes": m["bytes"] * scale})
            rest = total - marked * scale
            if rest > 0:
                out.append({**base, "name": rec["internal"], "layer": rec["layer"], "bytes": float(rest)})
        return out


# ---------------------------------------------------------------------------------------------------------------
# FLOPs
# ---------------------------------------------------------------------------------------------------------------

def _cpu_flash_fwd(query, key, value, *args, out_shape=None, **kwargs) -> int:
    return sdpa_flop_count(query, key, value)


def _cpu_flash_bwd(grad_out, query, key, value, *args, out_shape=None, **kwargs) -> int:
    return sdpa_backward_flop_count(grad_out, query, key, value)


_CPU_FLASH = (torch.ops.aten._scaled_dot_product_flash_attention_for_cpu,
              torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward)
# torch 2.13's FlopCounterMode has no formula for the CPU flash-attention ops and counts them as 0; we register
# torch's own SDPA formulas (full s×s, causality ignored: the core's 'full' convention) where it has none.
MISSING_FLOP_FORMULAS = tuple(str(op) for op in _CPU_FLASH if op not in flop_registry)
_CUSTOM_FLOPS = {op: fn for op, fn in zip(_CPU_FLASH, (_cpu_flash_fwd, _cpu_flash_bwd)) if op not in flop_registry}


def flop_counter() -> FlopCounterMode:
    return FlopCounterMode(display=False, custom_mapping=_CUSTOM_FLOPS)


def flops_by_op(counter: FlopCounterMode) -> dict[str, int]:
    return {str(k): int(v) for k, v in counter.get_flop_counts().get("Global", {}).items()}


# ---------------------------------------------------------------------------------------------------------------
# The modules
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Spec:
    """What to build: a core `Model`'s architecture fields plus how (implementation, dropout, attention)."""

    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    d_ff: int
    vocab_size: int
    mlp: str
    norm: str
    bias: str
    dropout: bool
    tied_embeddings: bool
    position: str
    max_position: int
    flash_attention: bool
    impl: str = "eager"  # 'eager' | 'fused' (the ledger's profile)
    dropout_impl: str = "native"  # 'native' | 'functional'
    dropout_p: float = 0.1
    fp32_loss: bool = False
    # issue 12 (defaults: the classic block)
    head_dim: int = 0  # 0: d_model / n_heads
    v_head_dim: int = 0  # 0: head_dim
    attention: str = "standard"  # standard | mla
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    qk_norm: str = "none"  # none | per_head | full
    norms_per_layer: int = 2  # 1 (one norm, attention and MLP in parallel), 2, 4 (post-norms)
    lora_rank: int = 0  # 0: every weight trains; > 0: frozen base + LoRA adapters on `lora_targets`
    lora_targets: str = "all"  # qv | attention | all
    # mixture of experts (defaults: a dense MLP); see `MoE`
    n_experts: int = 1
    top_k: int = 1
    moe_d_ff: int = 0  # 0: d_ff
    n_shared_experts: int = 0
    shared_d_ff: int = 0  # 0: moe_d_ff
    shared_expert_gate: bool = False

    @property
    def hd(self) -> int:
        return self.head_dim or self.d_model // self.n_heads

    @property
    def vd(self) -> int:
        return self.v_head_dim or self.hd

    def adapted(self, group: str) -> bool:
        """Whether a matrix group carries LoRA adapters: q, k, v, o, kv (MLA's KV projections), mlp."""
        if not self.lora_rank:
            return False
        if self.lora_targets == "qv":
            return group in ("q", "v", "kv")
        return group != "mlp" or self.lora_targets == "all"


class LoRALinear(nn.Module):
    """A frozen linear layer with a LoRA adapter (Hu et al. 2021; PEFT's LoraLayer with lora_dropout 0):
    base(x) + B(A(x))·α/r. A keeps x for its gradient (the base, frozen, keeps none); B keeps A(x), r wide."""

    def __init__(self, d_in: int, d_out: int, bias: bool, rank: int):
        super().__init__()
        self.base = nn.Linear(d_in, d_out, bias=bias)
        self.lora_A = nn.Linear(d_in, rank, bias=False)
        self.lora_B = nn.Linear(rank, d_out, bias=False)
        self.scaling = 2.0  # α/r: a constant factor, nothing kept

    def forward(self, x):
        a = self.lora_A(x)
        mark("lora_hidden", a)
        return self.base(x) + self.lora_B(a) * self.scaling


def _linear(spec: Spec, d_in: int, d_out: int, bias: bool, group: str) -> nn.Module:
    return LoRALinear(d_in, d_out, bias, spec.lora_rank) if spec.adapted(group) else nn.Linear(d_in, d_out, bias=bias)


class _FusedRMSNorm(torch.autograd.Function):
    """RMSNorm with a fused kernel's save set: the 16-bit input and the fp32 rstd per row."""

    @staticmethod
    def forward(ctx, x, weight, eps):
        xf = x.float()
        rstd = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(x, weight, rstd)
        return (xf * rstd).to(x.dtype) * weight

    @staticmethod
    def backward(ctx, grad):
        x, weight, rstd = ctx.saved_tensors
        xn = x.float() * rstd
        g = grad.float()
        grad_w = (g * xn).sum(dim=tuple(range(g.dim() - 1))).to(weight.dtype)
        gxn = g * weight.float()
        grad_x = rstd * (gxn - xn * (gxn * xn).mean(-1, keepdim=True))
        return grad_x.to(x.dtype), grad_w, None


class _FusedSwiGLU(torch.autograd.Function):
    """SiLU(gate) ⊙ up with a fused kernel's save set: gate and up; SiLU is recomputed in backward."""

    @staticmethod
    def forward(ctx, gate, up):
        ctx.save_for_backward(gate, up)
        return F.silu(gate) * up

    @staticmethod
    def backward(ctx, grad):
        gate, up = ctx.saved_tensors
        g, gf, uf = grad.float(), gate.float(), up.float()
        sig = torch.sigmoid(gf)
        grad_up = g * gf * sig
        grad_gate = g * uf * sig * (1 + gf * (1 - sig))
        return grad_gate.to(gate.dtype), grad_up.to(up.dtype)


class _FusedGeGLU(torch.autograd.Function):
    """GeLU(gate) ⊙ up (tanh approximation, Gemma) with a fused kernel's save set: gate and up."""

    @staticmethod
    def forward(ctx, gate, up):
        ctx.save_for_backward(gate, up)
        return F.gelu(gate, approximate="tanh") * up

    @staticmethod
    def backward(ctx, grad):
        gate, up = ctx.saved_tensors
        with torch.enable_grad():
            gf = gate.float().detach().requires_grad_(True)
            act = F.gelu(gf, approximate="tanh")
            (d_act,) = torch.autograd.grad(act, gf, grad.float() * up.float())
        return d_act.to(gate.dtype), (grad.float() * act.detach()).to(up.dtype)


class Norm(nn.Module):
    """LayerNorm (`F.layer_norm`) or RMSNorm (eager Hugging Face style, or fused). `prefix` is the ledger's
    'norm1' / 'norm2' (or 'final_norm')."""

    def __init__(self, kind: str, d_model: int, impl: str, prefix: str, eps: float = 1e-5):
        super().__init__()
        self.kind, self.impl, self.prefix, self.eps = kind, impl, prefix, eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model)) if kind == "layernorm" else None

    def internal_name(self, t):
        return f"{self.prefix}_stats" if t.dim() and t.shape[-1] == 1 else None

    def forward(self, x):
        mark(f"{self.prefix}_input", x)
        if self.kind == "layernorm":
            return F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps)
        if self.impl == "fused":
            with op_name("fused_rms_norm"):
                return _FusedRMSNorm.apply(x, self.weight, self.eps)
        # transformers' LlamaRMSNorm.forward, op for op
        xf = x.to(torch.float32)
        mark(f"{self.prefix}_input_fp32", xf)
        variance = xf.pow(2).mean(-1, keepdim=True)
        rstd = torch.rsqrt(variance + self.eps)
        mark(f"{self.prefix}_stats", rstd)
        xn = (xf * rstd).to(x.dtype)
        mark(f"{self.prefix}_normalized", xn)
        return self.weight * xn


class Dropout(nn.Module):
    """Dropout whose kept mask is the ledger tensor `ledger_name`."""

    def __init__(self, p: float, impl: str, ledger_name: str):
        super().__init__()
        self.p, self.impl, self.ledger_name = p, impl, ledger_name

    def internal_name(self, t):
        return self.ledger_name

    def forward(self, x):
        if self.impl == "native":
            out, mask = torch.native_dropout(x, self.p, True)
            mark(self.ledger_name, mask)
            return out
        return F.dropout(x, self.p, True)


def _rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class AttnCore(nn.Module):
    """softmax(QKᵀ/√d)·V with attention dropout: what selective recomputation recomputes. q: (b, a, s, d);
    k, v: (b, k, s, d). Math path: explicit matmul/softmax/dropout with query heads grouped by their KV head (no
    copies of K/V for GQA). Flash path: `F.scaled_dot_product_attention` (CPU: its flash kernel, which has no
    dropout: attention dropout is left out there; a flash kernel regenerates its mask, keeping nothing)."""

    def __init__(self, spec: Spec, seq_len: int):
        super().__init__()
        self.spec = spec
        self.scale = 1.0 / math.sqrt(spec.hd)
        if not spec.flash_attention:
            self.register_buffer("causal", torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1), persistent=False)
        self.attn_drop = Dropout(spec.dropout_p, spec.dropout_impl, "softmax_dropout_mask") if spec.dropout else None

    def internal_name(self, t):
        return "softmax_lse" if t.dtype == torch.float32 and t.dim() == 3 else None

    def forward(self, q, k, v):
        b, a, s, d = q.shape
        kv = k.shape[1]
        dv = v.shape[-1]
        if self.spec.flash_attention:
            p = self.spec.dropout_p if (self.spec.dropout and q.is_cuda) else 0.0
            o = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True, enable_gqa=kv != a)
            mark("attn_output", o)
            return o
        r = a // kv
        scores = torch.matmul(q.reshape(b, kv, r * s, d), k.transpose(-1, -2)) * self.scale
        scores = scores.view(b, a, s, s).masked_fill(self.causal[:s, :s], float("-inf"))
        probs = F.softmax(scores, dim=-1)
        mark("softmax_output", probs)
        if self.attn_drop is not None:
            probs = self.attn_drop(probs)
            mark("dropout_output", probs)
        return torch.matmul(probs.view(b, kv, r * s, s), v).view(b, a, s, dv)


class Attention(nn.Module):
    """Projections around `AttnCore`. Learned positions (GPT): one fused QKV projection split into views.
    Rotary (Llama): separate q/k/v projections, RoPE from cached cos/sin buffers, GQA with n_kv_heads."""

    def __init__(self, spec: Spec, seq_len: int, selective: bool):
        super().__init__()
        h, a, kv = spec.d_model, spec.n_heads, spec.n_kv_heads
        self.spec, self.d, self.dv, self.selective = spec, spec.hd, spec.vd, selective
        qkv_bias, out_bias = spec.bias in ("qkv", "all"), spec.bias == "all"
        kv_dim = kv * self.d
        self.rotary = spec.position == "rotary"
        if self.rotary:
            self.q_proj = _linear(spec, h, a * self.d, qkv_bias, "q")
            self.k_proj = _linear(spec, h, kv_dim, qkv_bias, "k")
            self.v_proj = _linear(spec, h, kv * self.dv, qkv_bias, "v")
            self.cos, self.sin = _rope_tables(self.d, seq_len)
        else:
            self.qkv = nn.Linear(h, a * self.d + kv_dim + kv * self.dv, bias=qkv_bias)
        self.o_proj = _linear(spec, a * self.dv, h, out_bias, "o")
        if spec.qk_norm != "none":  # RMSNorm on q and k: over each head (Qwen3, Gemma 3) or the projection (OLMo 2)
            per_head = spec.qk_norm == "per_head"
            self.q_norm = Norm("rmsnorm", self.d if per_head else a * self.d, spec.impl, "qk_norm")
            self.k_norm = Norm("rmsnorm", self.d if per_head else kv_dim, spec.impl, "qk_norm")
        self.core = AttnCore(spec, seq_len)

    def forward(self, x):
        b, s, h = x.shape
        a, kv, d = self.spec.n_heads, self.spec.n_kv_heads, self.d
        flash = self.spec.flash_attention
        qk_norm = self.spec.qk_norm
        if self.rotary:
            q, k = self.q_proj(x), self.k_proj(x)
            if qk_norm == "full":
                q, k = self.q_norm(q), self.k_norm(k)
            q, k = q.view(b, s, a, d), k.view(b, s, kv, d)
            if qk_norm == "per_head":
                q, k = self.q_norm(q), self.k_norm(k)
            q, k = q.transpose(1, 2), k.transpose(1, 2)
            v = self.v_proj(x).view(b, s, kv, self.dv).transpose(1, 2)
            if not flash:  # the math path's matmuls want (b, heads, s, d) contiguous
                q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
            cos, sin = self.cos[:s], self.sin[:s]
            q = q * cos + _rotate_half(q) * sin
            k = k * cos + _rotate_half(k) * sin
        else:
            q, k, v = self.qkv(x).split((a * d, kv * d, kv * self.dv), dim=-1)
            q, k = (t.view(b, s, -1, d).transpose(1, 2) for t in (q, k))
            v = v.view(b, s, -1, self.dv).transpose(1, 2)
            if not flash:
                q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        mark("q", q)
        mark("k", k)
        mark("v", v)
        return self.o_proj(_attend(self, q, k, v))


def _rope_tables(d: int, seq_len: int):
    """cos and sin buffers of rotary embeddings over d dimensions (constants: nothing is kept for them)."""
    inv = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    ang = torch.outer(torch.arange(seq_len, dtype=torch.float32), inv)
    ang = torch.cat((ang, ang), dim=-1)
    return nn.Buffer(ang.cos(), persistent=False), nn.Buffer(ang.sin(), persistent=False)


def _attend(attn: nn.Module, q, k, v):
    """The attention core (checkpointed under selective recomputation) and its output as (b, s, a·d_v)."""
    if attn.selective:
        with op_name("checkpoint(attention core)"):
            o = checkpoint(attn.core, q, k, v, use_reentrant=False)
    else:
        o = attn.core(q, k, v)
    b, _, s, _ = o.shape
    o = o.transpose(1, 2).reshape(b, s, -1)
    mark("attn_output", o)
    return o


class MLAttention(nn.Module):
    """Multi-head latent attention (DeepSeek-V2 §2.1, as transformers' DeepseekV3Attention): the query through a
    rank-r_q latent (RMSNorm between), keys and values from one r_kv-wide latent (RMSNorm, then the up-projection to
    a heads of nope + value dims) and a single d_r-wide RoPE key shared by the heads. Math path only on CPU: SDPA's
    CPU flash kernel wants one head dim for q, k and v (it falls back to fp32 math otherwise). The latent is made
    contiguous before its norm (a fused norm kernel reads contiguous rows) and the values before the core (so the
    saved values do not keep the keys' half of the up-projection alive)."""

    def __init__(self, spec: Spec, seq_len: int, selective: bool):
        super().__init__()
        h, a = spec.d_model, spec.n_heads
        self.spec, self.selective = spec, selective
        d, dv, dr = spec.hd, spec.vd, spec.qk_rope_head_dim
        self.d, self.dv, self.dr, self.dn = d, dv, dr, d - dr
        qr, kvr = spec.q_lora_rank, spec.kv_lora_rank
        if qr:
            self.q_a = _linear(spec, h, qr, False, "q")
            self.q_a_norm = Norm("rmsnorm", qr, spec.impl, "mla_q")
            self.q_b = _linear(spec, qr, a * d, False, "q")
        else:
            self.q_proj = _linear(spec, h, a * d, False, "q")
        self.kv_a = _linear(spec, h, kvr + dr, False, "kv")
        self.kv_a_norm = Norm("rmsnorm", kvr, spec.impl, "mla_kv")
        self.kv_b = _linear(spec, kvr, a * (self.dn + dv), False, "kv")
        self.o_proj = _linear(spec, a * dv, h, False, "o")
        self.cos, self.sin = _rope_tables(dr, seq_len)
        self.core = AttnCore(spec, seq_len)

    def _rope(self, t):
        s = t.shape[-2]
        return t * self.cos[:s] + _rotate_half(t) * self.sin[:s]

    def forward(self, x):
        b, s, _ = x.shape
        a, kvr = self.spec.n_heads, self.spec.kv_lora_rank
        if self.spec.q_lora_rank:
            qn = self.q_a_norm(self.q_a(x))
            mark("mla_latents_normed", qn)
            q = self.q_b(qn)
        else:
            q = self.q_proj(x)
        q_nope, q_rot = q.view(b, s, a, self.d).transpose(1, 2).split((self.dn, self.dr), dim=-1)
        c_kv, k_rot = self.kv_a(x).split((kvr, self.dr), dim=-1)
        kvn = self.kv_a_norm(c_kv.contiguous())
        mark("mla_latents_normed", kvn)
        k_nope, v = self.kv_b(kvn).view(b, s, a, self.dn + self.dv).transpose(1, 2).split((self.dn, self.dv), dim=-1)
        k_rot = self._rope(k_rot.view(b, 1, s, self.dr))
        q = torch.cat((q_nope, self._rope(q_rot)), dim=-1)
        k = torch.cat((k_nope, k_rot.expand(b, a, s, self.dr)), dim=-1)
        v = v.contiguous()
        mark("q", q)
        mark("k", k)
        mark("v", v)
        return self.o_proj(_attend(self, q, k, v))


class MLP(nn.Module):
    """The MLP (GeLU, SwiGLU, GeGLU), `d_ff` wide (default spec.d_ff). `name`: one ledger name for every tensor it
    marks (an MoE's shared experts are the ledger's single entry 'shared_experts')."""

    def __init__(self, spec: Spec, d_ff: int = 0, name: str | None = None):
        super().__init__()
        h, f = spec.d_model, d_ff or spec.d_ff
        self.spec, self.name = spec, name
        bias = spec.bias == "all"
        if spec.mlp in ("swiglu", "geglu"):
            self.gate = _linear(spec, h, f, bias, "mlp")
            self.up = _linear(spec, h, f, bias, "mlp")
            self.down = _linear(spec, f, h, bias, "mlp")
        else:
            self.fc1 = _linear(spec, h, f, bias, "mlp")
            self.fc2 = _linear(spec, f, h, bias, "mlp")

    def _mark(self, name: str, t: torch.Tensor) -> None:
        mark(self.name or name, t)

    def forward(self, x):
        if self.spec.mlp == "gelu":
            z = self.fc1(x)
            self._mark("gelu_input", z)
            y = F.gelu(z)
            self._mark("mlp_hidden", y)
            return self.fc2(y)
        g, u = self.gate(x), self.up(x)
        self._mark("gate", g)
        self._mark("up", u)
        geglu = self.spec.mlp == "geglu"
        if self.spec.impl == "fused":
            with op_name("fused_geglu" if geglu else "fused_swiglu"):
                y = (_FusedGeGLU if geglu else _FusedSwiGLU).apply(g, u)
        else:
            act = F.gelu(g, approximate="tanh") if geglu else F.silu(g)
            self._mark("silu_output", act)  # the ledger's entry for the gate's activation output (SiLU or GeLU)
            y = act * u
        self._mark("mlp_hidden", y)
        return self.down(y)

class MoE(nn.Module):
    """A mixture-of-experts MLP: dropless top-k routing as Mixtral's reference implementation (Hugging Face
    MixtralSparseMoeBlock) does it, and optional shared experts (DeepSeekMoE / Qwen2-MoE) applied to every token.

    router linear (h → E, no bias) → softmax in fp32 → top-k → weights renormalised to sum 1 and cast to 16 bits →
    per expert: its tokens gathered by index (`x[idx]`), the expert's MLP (spec.mlp, moe_d_ff wide), the output
    multiplied by the token's routing weight and scattered back with `index_add_`. Shared experts: one MLP E_s·f_s
    wide (DeepSeek-V2 builds them so), its output times sigmoid(gate(x)) when `shared_expert_gate` (Qwen2-MoE).
    Marks: 'router_probs' (the fp32 softmax), 'expert_inputs' (each expert's gathered tokens), the expert MLP's
    own ledger names (gate, up, silu_output, mlp_hidden: top_k copies in all), 'expert_outputs' (each expert's
    output, kept by the routing-weight multiply) and 'shared_experts' (every tensor of the shared MLP and gate).
    Kept but in no ledger entry, named here so a comparison can show them: the top-k indices ('moe_topk_indices',
    int64), the renormalisation's operands ('moe_topk_probs', fp32 top-k probabilities, and 'moe_topk_sum', their
    fp32 sum), each expert's token and slot indices ('moe_expert_index', 'moe_expert_slot', int64),
    its 16-bit routing weights ('moe_routing_weights') and its weighted output, which `index_add_` keeps
    ('moe_weighted_outputs', top_k·2sbh in all). The renormalisation is written out of place: Mixtral's in-place
    `/=` keeps a same-sized copy of the top-k probabilities instead (autograd clones the original self)."""

    def __init__(self, spec: Spec):
        super().__init__()
        h, E = spec.d_model, spec.n_experts
        self.spec, self.top_k = spec, spec.top_k
        fe = spec.moe_d_ff or spec.d_ff
        self.router = nn.Linear(h, E, bias=False)
        self.experts = nn.ModuleList(MLP(spec, fe) for _ in range(E))
        self.shared = None
        if spec.n_shared_experts:
            fs = spec.shared_d_ff or fe
            self.shared = MLP(spec, spec.n_shared_experts * fs, "shared_experts")
            self.shared_gate = nn.Linear(h, 1, bias=False) if spec.shared_expert_gate else None

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])  # a view of the block's mlp_input
        probs = F.softmax(self.router(x), dim=-1, dtype=torch.float32)
        mark("router_probs", probs)
        w, chosen = torch.topk(probs, self.top_k, dim=-1)
        mark("moe_topk_indices", chosen)
        mark("moe_topk_probs", w)
        total = w.sum(dim=-1, keepdim=True)
        mark("moe_topk_sum", total)
        w = (w / total).to(x.dtype)
        out = torch.zeros_like(x)
        hit = F.one_hot(chosen, self.spec.n_experts).permute(2, 1, 0)  # (expert, slot, token)
        for e, expert in enumerate(self.experts):
            slot, tok = torch.where(hit[e])
            if tok.numel() == 0:
                continue
            mark("moe_expert_index", tok)  # tok and slot: two views of one int64 storage (nonzero's output)
            mark("moe_expert_slot", slot)
            xe = x[tok]
            mark("expert_inputs", xe)
            ye = expert(xe)
            mark("expert_outputs", ye)
            we = w[tok, slot, None]
            mark("moe_routing_weights", we)
            yw = ye * we
            mark("moe_weighted_outputs", yw)  # index_add_ keeps its source (its derivative formula reads source.dim())
            out.index_add_(0, tok, yw)
        if self.shared is not None:
            ys = self.shared(x)
            if self.shared_gate is not None:
                mark("shared_experts", ys)
                g = torch.sigmoid(self.shared_gate(x))
                mark("shared_experts", g)
                ys = g * ys
            out = out + ys
        return out.view(shape)


class Block(nn.Module):
    """Pre-norm transformer block: x + drop(attn(norm1(x))), then + drop(mlp(norm2(·)))."""

    def __init__(self, spec: Spec, seq_len: int, layer: int = 0, selective: bool = False):
        super().__init__()
        self.layer, self.npl = layer, spec.norms_per_layer
        self.norm1 = Norm(spec.norm, spec.d_model, spec.impl, "norm1")
        self.attn = (MLAttention if spec.attention == "mla" else Attention)(spec, seq_len, selective)
        if self.npl > 1:
            self.norm2 = Norm(spec.norm, spec.d_model, spec.impl, "norm2")
        if self.npl == 4:  # Gemma 2/3: a norm after each sublayer too
            self.post_attn_norm = Norm(spec.norm, spec.d_model, spec.impl, "post_norm")
            self.post_mlp_norm = Norm(spec.norm, spec.d_model, spec.impl, "post_norm")
        self.mlp = MoE(spec) if spec.n_experts > 1 else MLP(spec)
        drop = spec.dropout
        self.attn_drop = Dropout(spec.dropout_p, spec.dropout_impl, "attn_dropout_mask") if drop else None
        self.mlp_drop = Dropout(spec.dropout_p, spec.dropout_impl, "mlp_dropout_mask") if drop else None
        if spec.lora_rank:  # LoRA: the base is frozen, only the adapters train
            for name, p in self.named_parameters():
                p.requires_grad_(".lora_" in name)

    def forward(self, x):
        y = self.norm1(x)
        mark("qkv_input", y)
        a = self.attn(y)
        if self.npl == 4:
            a = self.post_attn_norm(a)
        if self.attn_drop is not None:
            a = self.attn_drop(a)
        if self.npl == 1:  # one norm, attention and MLP in parallel (Falcon 7B): the MLP reads y too
            m = self.mlp(y)
            if self.mlp_drop is not None:
                m = self.mlp_drop(m)
            return x + a + m
        x = x + a
        y = self.norm2(x)
        mark("mlp_input", y)
        y = self.mlp(y)
        if self.npl == 4:
            y = self.post_mlp_norm(y)
        if self.mlp_drop is not None:
            y = self.mlp_drop(y)
        return x + y


class Loss(nn.Module):
    """Cross-entropy over the vocabulary; its log-softmax output is the ledger's 'logits'."""

    def __init__(self, fp32: bool):
        super().__init__()
        self.fp32 = fp32

    def internal_name(self, t):
        if t.dim() == 2 and t.is_floating_point():
            return "logits"  # the log-softmax output cross-entropy keeps
        return "loss_total_weight" if t.dim() == 0 else None

    def forward(self, logits, targets):
        if self.fp32:
            logits = logits.float()
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


class TinyLM(nn.Module):
    """Embeddings (+ learned positions, + embedding dropout), L blocks, final norm, LM head, cross-entropy."""

    def __init__(self, spec: Spec, seq_len: int, recompute: str = "none"):
        super().__init__()
        self.spec, self.recompute = spec, recompute
        self.tok = nn.Embedding(spec.vocab_size, spec.d_model)
        self.pos = nn.Embedding(max(spec.max_position, seq_len), spec.d_model) if spec.position == "learned" else None
        self.emb_drop = Dropout(spec.dropout_p, spec.dropout_impl, "embedding_dropout_mask") if spec.dropout else None
        self.blocks = nn.ModuleList(Block(spec, seq_len, i, recompute == "selective") for i in range(spec.n_layers))
        self.final_norm = Norm(spec.norm, spec.d_model, spec.impl, "final_norm")
        self.lm_head = None if spec.tied_embeddings else nn.Linear(spec.d_model, spec.vocab_size, bias=False)
        self.loss = Loss(spec.fp32_loss)
        if spec.lora_rank:  # LoRA: only the blocks' adapters train (embeddings, final norm and head frozen)
            for name, p in self.named_parameters():
                p.requires_grad_(".lora_" in name)

    def forward(self, ids, targets):
        mark("input_ids", ids)
        mark("targets", targets)
        x = self.tok(ids)
        if self.spec.lora_rank:  # PEFT's enable_input_require_grads: every block's input requires grad
            x.requires_grad_(True)
        if self.pos is not None:
            pos = torch.arange(ids.shape[1], device=ids.device)
            mark("position_ids", pos)
            x = x + self.pos(pos)
        if self.emb_drop is not None:
            x = self.emb_drop(x)
        for blk in self.blocks:
            if self.recompute == "full":
                with op_name("checkpoint(block)"):
                    x = checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        x = self.final_norm(x)
        mark("lm_head_input", x)
        w = self.tok.weight if self.lm_head is None else self.lm_head.weight
        return self.loss(F.linear(x, w), targets)


# ---------------------------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------------------------

DTYPE = torch.bfloat16
_LOCK = threading.Lock()  # one measurement at a time per process (the recorder and torch's global module hooks)


def _serialised(fn):
    @functools.wraps(fn)
    def run(*args, **kwargs):
        with _LOCK:
            return fn(*args, **kwargs)
    return run


def _device(device: str) -> torch.device:
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device: CUDA is not available on this machine (torch.cuda.is_available() is False)")
    return torch.device(device)


@_serialised
def measure_block(spec: Spec, seq_len: int, micro_batch: int, recompute: str = "none", device: str = "cpu",
                  seed: int = 0) -> dict:
    """One block, input (b, s, h) requiring grad: saved tensors of one forward, FLOPs of forward and backward.
    recompute 'full' wraps the block in `torch.utils.checkpoint`, 'selective' the attention core."""
    dev = _device(device)
    torch.manual_seed(seed)
    block = Block(spec, seq_len, 0, recompute == "selective").to(dev, DTYPE)
    x = torch.randn(micro_batch, seq_len, spec.d_model, device=dev, dtype=DTYPE, requires_grad=True)
    rec = SavedRecorder(block)
    fwd, bwd = flop_counter(), flop_counter()
    with rec.recording(), fwd:
        if recompute == "full":
            with op_name("checkpoint(block)"):
                y = checkpoint(block, x, use_reentrant=False)
        else:
            y = block(x)
    with bwd:
        y.backward(torch.randn_like(y))
    return {"records": rec.records(), "forward_flops": fwd.get_total_flops(),
            "backward_flops": bwd.get_total_flops(), "flops_by_op": {**flops_by_op(fwd), **{
                k + " (backward)": v for k, v in flops_by_op(bwd).items()}}, "state": state_of(block)}


def state_of(module: nn.Module) -> dict:
    """The model state a training step holds for `module`, measured after its backward: parameters that train and
    their bytes, frozen parameters' bytes, the gradients that exist, and what a mixed-precision AdamW step creates
    for the trainable ones (an fp32 master copy, and torch.optim.AdamW's two fp32 moments on it)."""
    train = [p for p in module.parameters() if p.requires_grad]
    frozen = [p for p in module.parameters() if not p.requires_grad]
    nbytes = lambda ts: float(sum(t.numel() * t.element_size() for t in ts))  # noqa: E731
    master = [p.detach().float().clone().requires_grad_(True) for p in train]
    for m, p in zip(master, train):
        m.grad = p.grad.float() if p.grad is not None else torch.zeros_like(m)
    opt = torch.optim.AdamW(master, lr=1e-4) if master else None
    if opt is not None:
        opt.step()
    moments = [t for st in (opt.state.values() if opt else ()) for t in st.values()
               if torch.is_tensor(t) and t.numel() > 1]
    return {"trainable_params": float(sum(p.numel() for p in train)), "weights_bytes": nbytes(train),
            "frozen_params": float(sum(p.numel() for p in frozen)), "frozen_bytes": nbytes(frozen),
            "grads_bytes": nbytes([p.grad for p in module.parameters() if p.grad is not None]),
            "master_bytes": nbytes(master), "optimizer_bytes": nbytes(moments)}


@_serialised
def measure_model(spec: Spec, seq_len: int, micro_batch: int, recompute: str = "none", device: str = "cpu",
                  seed: int = 0) -> dict:
    """The whole model on random token ids: saved tensors of one forward, FLOPs of forward and backward."""
    dev = _device(device)
    torch.manual_seed(seed)
    model = TinyLM(spec, seq_len, recompute).to(dev, DTYPE)
    ids = torch.randint(0, spec.vocab_size, (micro_batch, seq_len), device=dev)
    targets = torch.randint(0, spec.vocab_size, (micro_batch, seq_len), device=dev)
    rec = SavedRecorder(model)
    fwd, bwd = flop_counter(), flop_counter()
    with rec.recording(), fwd:
        loss = model(ids, targets)
    with bwd:
        loss.backward()
    return {"records": rec.records(), "forward_flops": fwd.get_total_flops(),
            "backward_flops": bwd.get_total_flops(), "flops_by_op": flops_by_op(fwd),
            "loss": float(loss.detach())}


@_serialised
def cuda_train_step(spec: Spec, seq_len: int, micro_batch: int, recompute: str = "none",
                    master_weights: bool = True, seed: int = 0) -> dict:
    """`torch.cuda.max_memory_allocated` over one full training step (forward, backward, AdamW step) of the whole
    model: bf16 weights and gradients, fp32 moments, an fp32 master copy if `master_weights` (the core's
    'zero-16' recipe; without it 'cs336-12'). No recorder, no FLOP counter: nothing of ours is kept alive."""
    dev = _device("cuda")
    torch.manual_seed(seed)
    model = TinyLM(spec, seq_len, recompute).to(dev, DTYPE)
    params = [p for p in model.parameters() if p.requires_grad]  # LoRA: the adapters
    m = [torch.zeros_like(p, dtype=torch.float32) for p in params]
    v = [torch.zeros_like(p, dtype=torch.float32) for p in params]
    master = [p.detach().float() for p in params] if master_weights else None
    ids = torch.randint(0, spec.vocab_size, (micro_batch, seq_len), device=dev)
    targets = torch.randint(0, spec.vocab_size, (micro_batch, seq_len), device=dev)
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    loss = model(ids, targets)
    after_forward = torch.cuda.memory_allocated()
    loss.backward()
    lr, b1, b2, eps, wd = 1e-4, 0.9, 0.95, 1e-8, 0.1
    with torch.no_grad():
        for i, p in enumerate(params):
            g = p.grad.float()
            m[i].mul_(b1).add_(g, alpha=1 - b1)
            v[i].mul_(b2).addcmul_(g, g, value=1 - b2)
            w = master[i] if master is not None else p.detach().float()
            w.mul_(1 - lr * wd).addcdiv_(m[i], v[i].sqrt().add_(eps), value=-lr / (1 - b1))
            p.copy_(w)
            p.grad = None
    torch.cuda.synchronize()
    return {"max_memory_allocated_bytes": float(torch.cuda.max_memory_allocated()),
            "state_before_step_bytes": float(before), "after_forward_bytes": float(after_forward),
            "device_name": torch.cuda.get_device_name(), "loss": float(loss.detach())}
