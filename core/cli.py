"""Command line: `python -m core estimate|limits|roofline|advise|list` (and `sweep`, `measure` where those modules
register themselves). Flags are the input names with dashes; `--json` prints one JSON object whose keys are the
same names with underscores. Bad input prints `error: <field>: <reason>` and exits 2 — never a traceback."""
from __future__ import annotations

import argparse
import importlib
import json
import math
import sys

import numpy as np

from . import estimate as E
from . import memory as M
from . import model as MODEL
from .units import DTYPE_BYTES, GB, GiB, fmt_bytes, fmt_duration, fmt_si


# --- argument types: each error names the flag -------------------------------------------------------------------
def _num(name: str, integer: bool = False):
    def conv(text: str):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name}: expected a number, got {text!r}") from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"{name}: must be finite, got {text!r}")
        if integer:
            if v != int(v):
                raise argparse.ArgumentTypeError(f"{name}: expected an integer, got {text!r}")
            return int(v)
        return v
    return conv


INT_INPUTS = ("n_layers", "d_model", "n_heads", "n_kv_heads", "d_ff", "vocab_size", "max_position", "n_experts",
              "top_k", "seq_len", "micro_batch", "n_gpus", "tp", "pp", "virtual_stages", "zero_stage", "global_batch")
FLOAT_INPUTS = ("n_params", "mfu", "tokens", "price_per_gpu_hour", "tokens_per_second", "step_time_s",
                "overhead_fixed_bytes", "fragmentation_frac", "time_overhead_frac", "peak_flops_per_s",
                "gpu_memory_bytes", "memory_bandwidth_bytes_per_s")
CHOICE_INPUTS = {  # each list lives with the code that interprets it
    "mlp": MODEL.MLP_KINDS, "norm": MODEL.NORM_KINDS, "bias": MODEL.BIAS_KINDS, "position": MODEL.POSITION_KINDS,
    **{k: v for k, v in E._CHOICES.items()}, "recipe": tuple(M.RECIPES), "overhead": E.OVERHEAD_CHOICES,
}
BOOL_INPUTS = ("dropout", "tied_embeddings", "sequence_parallel", "flash_attention", "master_weights",
               "grad_accum_fp32", "fp32_loss")
STR_INPUTS = ("model", "gpu", "hf_config")
ALL_INPUTS = STR_INPUTS + INT_INPUTS + FLOAT_INPUTS + tuple(CHOICE_INPUTS) + BOOL_INPUTS


def add_input_flags(p: argparse.ArgumentParser) -> None:
    """Every estimate input as a flag; defaults are None so only given flags reach `config_from_inputs`."""
    g = p.add_argument_group("model")
    g.add_argument("--model", help="preset name (see `python -m core list`)")
    g.add_argument("--hf-config", help="path to a local Hugging Face config.json")
    for name in INT_INPUTS + FLOAT_INPUTS:
        p.add_argument("--" + name.replace("_", "-"), type=_num(name, name in INT_INPUTS), default=None)
    for name, choices in CHOICE_INPUTS.items():
        p.add_argument("--" + name.replace("_", "-"), choices=choices, default=None)
    for name in BOOL_INPUTS:
        p.add_argument("--" + name.replace("_", "-"), action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--gpu", help="accelerator name, or 'custom' with --peak-flops-per-s, --gpu-memory-bytes, "
                                 "--memory-bandwidth-bytes-per-s")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def inputs_from_args(args) -> dict:
    return {k: getattr(args, k) for k in ALL_INPUTS if getattr(args, k, None) is not None}


def _jsonable(x):
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (np.floating, float)):
        return None if not math.isfinite(float(x)) else float(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.bool_,)):
        return bool(x)
    return x


def emit_json(obj) -> None:
    print(json.dumps(_jsonable(obj), indent=2, ensure_ascii=False, allow_nan=False))


# --- subcommands --------------------------------------------------------------------------------------------------
def cmd_estimate(args) -> int:
    from .estimate import activation_ledger, config_from_inputs, estimate
    cfg = config_from_inputs(**inputs_from_args(args))
    rec = estimate(cfg)
    params = cfg.model.params()
    ledger = activation_ledger(cfg)
    if args.json:
        emit_json({**rec, "inputs": _config_inputs(cfg), "params_breakdown": params,
                   "activation_ledger": ledger, "model_note": cfg.model.shape_note})
        return 0
    print(render_estimate(cfg, rec, params, ledger))
    return 0


def _config_inputs(cfg) -> dict:
    from dataclasses import asdict
    d = {k: v for k, v in asdict(cfg).items() if k not in ("model", "gpu")}
    d.update(cfg.model.arch())
    d["model"] = cfg.model.name
    d["gpu"] = cfg.gpu.name
    if d["price_per_gpu_hour"] is None:
        d["price_per_gpu_hour"] = cfg.gpu.price_usd_per_gpu_hour
    return d


def render_estimate(cfg, rec, params, ledger) -> str:
    m, g = cfg.model, cfg.gpu
    L = []
    L.append(f"model {m.name}: {rec['n_params'] / 1e9:.3f}B parameters"
             + (f" ({rec['n_active_params'] / 1e9:.3f}B active)" if rec["n_active_params"] != rec["n_params"] else ""))
    if m.shape_note:
        L.append(f"  {m.shape_note}")
    L.append(f"gpu {g.name}: {fmt_bytes(g.memory_bytes)} ({fmt_bytes(g.memory_bytes, 'GiB')}), "
             f"{fmt_si(rec['peak_flops_per_s'], 'FLOP/s')} {cfg.compute_dtype} peak; {cfg.n_gpus} GPUs, tp={cfg.tp} "
             f"pp={cfg.pp} dp={rec['dp']} ZeRO-{cfg.zero_stage}")
    L.append("")
    L.append("memory per GPU                 GB (1e9)     GiB (2^30)")
    for k in ("weights_bytes", "grads_bytes", "grad_accum_bytes", "optimizer_bytes", "master_bytes",
              "activations_bytes", "logits_bytes", "overhead_bytes"):
        L.append(f"  {k[:-6]:<26}{rec[k] / GB:>10.3f}   {rec[k] / GiB:>10.3f}")
    L.append(f"  {'total':<26}{rec['total_bytes'] / GB:>10.3f}   {rec['total_bytes'] / GiB:>10.3f}")
    L.append(f"  {'gpu memory':<26}{rec['gpu_memory_bytes'] / GB:>10.3f}   {rec['gpu_memory_bytes'] / GiB:>10.3f}")
    L.append(f"  fits: {'yes' if rec['fits'] else 'NO'}; headroom {fmt_bytes(rec['headroom_bytes'])}; "
             f"largest term: {rec['binding']}")
    L.append(f"  activations per layer {fmt_bytes(rec['activations_per_layer_bytes'])} (recompute={cfg.recompute}, "
             f"flash={'on' if cfg.flash_attention else 'off'})")
    L.append("")
    L.append("activation ledger, one layer (bytes kept for backward)")
    for r in ledger:
        L.append(f"  {r['tensor']:<22}{r['bytes'] / 1e6:>12.1f} MB   kept by {r['kept_by']}")
    L.append("")
    L.append(f"compute: {fmt_si(rec['flops_per_token'], 'FLOPs')}/token (6N = {fmt_si(6 * rec['n_active_params'], 'FLOPs')}"
             f" + attention {fmt_si(rec['attention_flops_per_token'], 'FLOPs')}, attention_flops={cfg.attention_flops})")
    L.append(f"  train FLOPs {rec['train_flops']:.3e} for {cfg.tokens:.3g} tokens (6ND = {rec['train_flops_6nd']:.3e})")
    cost = (f"${rec['cost_usd']:,.0f}" if math.isfinite(rec["cost_usd"])
            else "cost — (no price for this accelerator: give --price-per-gpu-hour)")
    L.append(f"  at MFU {cfg.mfu:.0%}: {fmt_duration(rec['time_s'])}, {rec['gpu_hours']:,.0f} GPU-hours, {cost}")
    if rec.get("achieved_mfu") is not None:
        L.append(f"  measured: MFU {rec['achieved_mfu']:.1%}, HFU {rec['achieved_hfu']:.1%}")
    return "\n".join(L)


def cmd_limits(args) -> int:
    from .estimate import config_from_inputs
    from .limits import limits
    cfg = config_from_inputs(**inputs_from_args(args))
    lim = limits(cfg)
    if args.json:
        emit_json({**lim, "inputs": _config_inputs(cfg)})
        return 0
    for k, v in lim.items():
        print(f"{k:<18} {'does not fit at any count' if v is None else (f'{v:.4g}' if isinstance(v, float) else v)}")
    return 0


def cmd_advise(args) -> int:
    from .advisor import advise
    from .estimate import config_from_inputs
    cfg = config_from_inputs(**inputs_from_args(args))
    adv = advise(cfg)
    if args.json:
        emit_json(adv)
        return 0
    if adv["fits"]:
        print(f"fits: {fmt_bytes(adv['total_bytes'])} of {fmt_bytes(adv['gpu_memory_bytes'])}")
        return 0
    print(f"does not fit: {fmt_bytes(adv['total_bytes'])} > {fmt_bytes(adv['gpu_memory_bytes'])}; "
          f"largest term: {adv['binding']}")
    for r in adv["remedies"]:
        print(f"  {r['remedy']:<20} → {fmt_bytes(r['total_bytes'])}: {r['why']}")
    if adv["best"]:
        print(f"smallest change: {adv['best']['change']} → {fmt_bytes(adv['best']['total_bytes'])}")
    else:
        print("no combination of up to 4 changes fits")
    return 0


def cmd_roofline(args) -> int:
    from . import roofline as R
    from .estimate import build_gpu, build_model
    dtype = args.dtype
    gpu = build_gpu(args.gpu or "h100-sxm", args.peak_flops_per_s, args.gpu_memory_bytes,
                    args.memory_bandwidth_bytes_per_s, compute_dtype=dtype)
    peak = gpu.peak_flops_per_s(dtype)
    p = DTYPE_BYTES[dtype]
    rows = []
    if args.op and args.model:
        raise ValueError("op: give either --op (with --m/--n/--k) or --model (with --seq-len, --micro-batch)")
    if args.op:
        needed = ("m", "k") + (("n",) if args.op == "matmul" else ())
        for k in needed:
            v = getattr(args, k)
            if v is None or v < 1:
                raise ValueError(f"{k}: --op {args.op} needs --{k} ≥ 1")
        if args.op != "matmul" and args.n is not None:
            raise ValueError(f"n: --op {args.op} takes --m and --k only")
        if args.op == "matmul":
            fl, by = R.matmul_cost(args.m, args.n, args.k, p)
        elif args.op == "matvec":
            fl, by = R.matvec_cost(args.m, args.k, p)
        else:
            fl, by = R.elementwise_cost(args.m, args.k, p)
        rows.append((args.op, fl, by))
    else:
        if not args.model:
            raise ValueError("op: give --op matmul|matvec|elementwise, or --model with --seq-len and --micro-batch")
        s = 2048 if args.seq_len is None else args.seq_len
        b = 1 if args.micro_batch is None else args.micro_batch
        if s < 1:
            raise ValueError(f"seq_len: must be ≥ 1, got {s}")
        if b < 1:
            raise ValueError(f"micro_batch: must be ≥ 1, got {b}")
        m = build_model(args.model)
        for name, fl, by in R.layer_ops(s, b, m.d_model, m.n_heads, m.n_kv_heads, m.d_ff, m.mlp, p):
            rows.append((name, fl, by))
    out = []
    for name, fl, by in rows:
        r = R.roofline(fl, by, peak, gpu.memory_bandwidth_bytes_per_s)
        out.append({"op": name, "dtype": dtype, "gpu": gpu.name,
                    **{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()}})
    if args.json:
        emit_json(out[0] if len(out) == 1 else {"gpu": gpu.name, "ops": out})
        return 0
    print(f"{gpu.name}: peak {fmt_si(peak, 'FLOP/s')} ({dtype}), bandwidth {fmt_si(gpu.memory_bandwidth_bytes_per_s, 'B/s')}, "
          f"ridge {out[0]['ridge_intensity']:.1f} FLOPs/byte")
    print(f"  {'op':<16}{'FLOPs':>12}{'bytes':>12}{'intensity':>12}{'attainable':>16}{'time':>12}  bound")
    for r in out:
        print(f"  {r['op']:<16}{r['flops']:>12.3g}{r['bytes_moved']:>12.3g}{r['arithmetic_intensity']:>12.3g}"
              f"{fmt_si(r['attainable_flops_per_s'], 'FLOP/s'):>16}{fmt_si(r['time_s'], 's'):>12}  {r['bound']}")
    return 0


def cmd_list(args) -> int:
    from .hardware import catalog
    from .model import preset_info, preset_names
    models = {n: preset_info(n) for n in preset_names()}
    gpus = {n: a.label for n, a in catalog().items()}
    if args.json:
        emit_json({"models": list(models), "gpus": list(gpus), "recipes": list(M.RECIPES)})
        return 0
    print("models:")
    for n, r in models.items():
        print(f"  {n:<18} {r['label']}")
    print("gpus:")
    for n, label in gpus.items():
        print(f"  {n:<18} {label}")
    print("recipes:")
    for n, bpp in M.RECIPE_BYTES.items():
        print(f"  {n:<18} {bpp} bytes/param with AdamW")
    return 0


# Modules that add their own subcommand with `register_cli(subparsers)`.
PLUGINS = ("core.sweep", "core.measure")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m core", description="Training memory, time, cost and roofline planner")
    sub = p.add_subparsers(dest="command", required=True)
    for name, fn, helptext in (("estimate", cmd_estimate, "memory ledger, FLOPs, time and cost of one setup"),
                               ("limits", cmd_limits, "largest seq len / micro-batch / model, fewest GPUs"),
                               ("advise", cmd_advise, "what to change when it does not fit")):
        sp = sub.add_parser(name, help=helptext)
        add_input_flags(sp)
        sp.set_defaults(func=fn)
    sp = sub.add_parser("roofline", help="arithmetic intensity and attainable FLOP/s")
    sp.add_argument("--gpu", default="h100-sxm")
    sp.add_argument("--op", choices=("matmul", "matvec", "elementwise"))
    for k in ("m", "n", "k"):
        sp.add_argument("--" + k, type=_num(k, True))
    sp.add_argument("--dtype", choices=("bf16", "fp16", "fp8", "fp32"), default="bf16")
    sp.add_argument("--model")
    sp.add_argument("--seq-len", type=_num("seq_len", True))
    sp.add_argument("--micro-batch", type=_num("micro_batch", True))
    for k in ("peak_flops_per_s", "gpu_memory_bytes", "memory_bandwidth_bytes_per_s"):
        sp.add_argument("--" + k.replace("_", "-"), type=_num(k))
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(func=cmd_roofline)
    sp = sub.add_parser("list", help="every preset, accelerator and recipe name")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(func=cmd_list)
    for mod in PLUGINS:
        try:
            m = importlib.import_module(mod)
        except ImportError:
            continue
        if hasattr(m, "register_cli"):
            m.register_cli(sub)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head`
        sys.stderr.close()
        return 0
