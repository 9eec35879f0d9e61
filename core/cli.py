"""Command line: `python -m core estimate|limits|roofline|advise|list` (and `sweep`, `measure` where those modules
register themselves). Flags are the input names with dashes; `--json` prints one JSON object whose keys are the
same names with underscores. Bad input prints `error: <field>: <reason>` and exits 2 — never a traceback."""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from pathlib import Path

import numpy as np

from . import inputs as I
from . import memory as M
from . import profiles as PF
from . import schedule as SC
from .record import STEP_PART_WORDS, STEP_PARTS, TOTAL_PARTS
from .spec import CHUNK_ROWS, MAX_ROWS
from . import plan as PLAN
from .advisor import DEFAULT_MARGIN as ADV_DEFAULT_MARGIN
from .tables import DTYPE_BYTES
from .units import GB, GiB, fmt_bytes, fmt_count, fmt_duration, fmt_si, parse_number


# --- argument types: each error names the flag -------------------------------------------------------------------
def _margin(text: str):
    """--margin: 'realistic' or a fraction of GPU memory (core.advisor.check_margin); errors name the flag."""
    from .advisor import check_margin
    try:
        return check_margin("realistic" if text.strip().lower() == "realistic" else text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _num(name: str, integer: bool = False):
    """A number for flag `name`: finite, an integer where the schema says so, within the schema's bounds."""
    inp = I.BY_NAME.get(name)

    def conv(text: str):
        if inp is not None and inp.auto and text.strip().lower() == "auto":
            return "auto"
        try:
            v = parse_number(text, name)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"{name}: must be finite, got {text!r}")
        if inp is not None and inp.choices and v not in inp.choices:
            raise argparse.ArgumentTypeError(f"{name}: must be one of {', '.join(map(str, inp.choices))}, "
                                             f"got {text!r}")
        if inp is not None and ((inp.lo is not None and v < inp.lo) or (inp.hi is not None and v > inp.hi)):
            raise argparse.ArgumentTypeError(f"{name}: must be from {inp.lo:g} to {inp.hi:g}"
                                             f"{f' ({inp.unit})' if inp.unit else ''}, got {text!r}")
        if integer:
            if v != int(v):
                raise argparse.ArgumentTypeError(f"{name}: expected an integer, got {text!r}")
            return int(v)
        return v
    return conv


def _whole(name: str, lo: int = 0, hi: int = I.MAX_INT):
    """A whole number for a flag that is not an input (--top, --max-rows, …): ASCII digits, lo ≤ value ≤ hi."""
    def conv(text: str) -> int:
        try:
            v = parse_number(text, name)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        if not math.isfinite(v) or v != int(v) or not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{name}: must be a whole number from {lo:,} to {hi:,}, got {text!r}")
        return int(v)
    return conv


def _nonneg(name: str):
    """A finite number ≥ 0 for a flag that is not an input (--margin-gb)."""
    def conv(text: str) -> float:
        try:
            v = parse_number(text, name)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        if not math.isfinite(v) or v < 0:
            raise argparse.ArgumentTypeError(f"{name}: must be a finite number ≥ 0, got {text!r}")
        return v
    return conv


# the flat vocabulary, by kind (derived from core/inputs.py)
INT_INPUTS = I.names_of("int")
FLOAT_INPUTS = I.names_of("float")
CHOICE_INPUTS = {i.name: i.choices for i in I.INPUTS if i.kind == "choice"}
BOOL_INPUTS = I.names_of("bool")
STR_INPUTS = I.names_of("str")
ALL_INPUTS = I.NAMES
GROUP_TITLES = {"model": "model (one of: a preset, a raw count, a config.json, or the architecture fields)",
                "architecture": "architecture (override a preset's field, or describe a model)",
                "accelerator": "accelerator", "layout": "parallel layout and batch", "recipe": "recipe (model state)",
                "activations": "activations", "memory": "memory overhead", "run": "run: FLOPs, time, cost",
                "measurement": "a measurement (gives the achieved MFU)"}


def add_input_flags(p: argparse.ArgumentParser, groups: tuple = I.GROUPS, only: tuple | None = None) -> None:
    """The schema's inputs of `groups` (of those, only the names in `only` when given) as flags, each with its
    meaning, unit or choices and default. Defaults are None here so only given flags reach `config_from_inputs`
    (which applies the schema's defaults)."""
    for group in groups:
        g = p.add_argument_group(GROUP_TITLES.get(group, group))
        for inp in (i for i in I.INPUTS if i.group == group and (only is None or i.name in only)):
            kw = {"default": None, "help": inp.describe().replace("%", "%%")}
            if inp.kind in ("int", "float"):
                kw["type"] = _num(inp.name, inp.kind == "int")
                kw["metavar"] = "N" if inp.kind == "int" else ("X|auto" if inp.auto else "X")
            elif inp.kind == "choice":
                kw["choices"] = inp.choices
                if inp.canon is not None:  # argparse converts before it checks the choices
                    kw["type"] = inp.canon
            elif inp.kind == "bool":
                kw["action"] = argparse.BooleanOptionalAction
            else:
                kw["metavar"] = "NAME" if inp.name != "hf_config" else "PATH"
            g.add_argument(inp.flag, **kw)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def add_calibrate_flag(p) -> None:
    p.add_argument("--calibrate", metavar="FILE", help="a JSON list of your own measured runs (planner inputs with "
                   "step_time_s and global_batch, or tokens_per_s), of the same framework and accelerator: refits the "
                   "kernel and link factors (efficiency_scale, network_scale) and the interval to yours "
                   "(core/calibrate.py)")


def inputs_from_args(args) -> dict:
    """The given flags as inputs; with --calibrate FILE, the calibration's inputs (core/calibrate.py) under them (a
    flag given explicitly wins). The calibration must be of the same framework and accelerator as the question."""
    inputs = {k: getattr(args, k) for k in ALL_INPUTS if getattr(args, k, None) is not None}
    path = getattr(args, "calibrate", None)
    if path:
        from . import calibrate as CAL
        cal = CAL.fit(CAL.read(path))
        want = {"framework": inputs.get("framework", I.BY_NAME["framework"].default),
                "gpu": inputs.get("gpu", I.BY_NAME["gpu"].default)}
        for k, have in (("framework", cal["framework"]), ("gpu", cal["gpu"])):
            if str(want[k]) != str(have):
                raise ValueError(f"calibrate: the measured runs are {k} {have}, this question is {k} {want[k]}; "
                                 f"calibrate with runs of the same framework and accelerator")
        args.calibration = cal
        inputs = {**cal["inputs"], **inputs}
    return inputs


def print_calibration(args) -> None:
    if getattr(args, "calibration", None):
        from .calibrate import describe
        print(describe(args.calibration) + "\n")


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
    warn_margin(rec)
    if args.json:
        emit_json({**rec, "inputs": _config_inputs(cfg), "params_breakdown": params,
                   "activation_ledger": ledger, "model_note": cfg.model.shape_note,
                   "calibration": getattr(args, "calibration", None)})
        return 0
    print_calibration(args)
    print(render_estimate(cfg, rec, params, ledger))
    return 0


def fit_words(rec: dict) -> str:
    """The fit verdict: yes; tightly (what the run allocates fits, the fragmentation counted would not:
    core/memory.fragmentation_bytes); or NO."""
    from .record import fit_status
    status = str(fit_status(rec["fits"], rec["headroom_bytes"]))
    if status != "fits tightly":
        return "yes" if status == "fits" else "NO"
    return (f"tightly: what it allocates fits with {fmt_bytes(rec['fragmentation_bytes'] + rec['headroom_bytes'])} "
            f"to spare, less than the {fmt_bytes(rec['fragmentation_bytes'])} of allocator fragmentation counted "
            "(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True avoids most of it)")


def warn_margin(rec: dict) -> None:
    """A warning on stderr when the setup fits with less headroom than the advisor's default margin."""
    from .advisor import describe_margin, margin_bytes
    need = float(margin_bytes(rec))
    if rec["valid"] and rec["fits"] and rec["headroom_bytes"] < need:
        print(f"warning: headroom {fmt_bytes(rec['headroom_bytes'])} is below the margin {fmt_bytes(need)} "
              f"({describe_margin()}): a real run may not fit; see `python -m core advise`", file=sys.stderr)


def _config_inputs(cfg) -> dict:
    d = {k: getattr(cfg, k) for k in I.CONFIG_FIELDS}
    d.update(cfg.model.arch())
    d["model"] = cfg.model.name
    d["gpu"] = cfg.gpu.name
    if d["price_per_gpu_hour"] is None:
        d["price_per_gpu_hour"] = cfg.gpu.price_usd_per_gpu_hour
    return d


def _schedule(cfg) -> str:
    """The virtual stages and the pipeline schedule where they are not plain 1F1B (core/schedule.label)."""
    return (f" v={cfg.virtual_stages}" if cfg.virtual_stages > 1 else "") + SC.label(cfg.pp_schedule)


def _replicas(cfg, rec) -> str:
    """' (R replicas × S shards)' where hybrid sharding splits the data-parallel ranks."""
    rep = int(cfg.dp_replicate or 1)
    return f" ({rep} replicas × {int(rec['dp']) // rep} shards)" if rep > 1 else ""


def _convention(cfg) -> str:
    """The ZeRO accounting the row uses (the framework's unless given) and, where the fp32 parameter is the master,
    what that means for the state (core/tables.py ZERO_CONVENTIONS)."""
    name = cfg.zero_convention or str(PF.zero_convention(cfg.framework))
    master = bool(M.fp32_param_master(name, cfg.master_weights, cfg.optimizer, cfg.weight_dtype))
    return f", {cfg.framework} ({name} convention" + (": the fp32 parameter is the master, grads fp32)" if master
                                                      else ")")


def render_estimate(cfg, rec, params, ledger) -> str:
    m, g = cfg.model, cfg.gpu
    L = []
    L.append(f"model {m.name}: {rec['n_params'] / 1e9:.3f}B parameters"
             + (f" ({rec['n_active_params'] / 1e9:.3f}B active)" if rec["n_active_params"] != rec["n_params"] else ""))
    if m.shape_note:
        L.append(f"  {m.shape_note}")
    usable = (f", {fmt_bytes(g.allocatable_bytes, 'GiB')} allocatable" if g.allocatable_bytes != g.memory_bytes
              else "")
    said = "as you typed it" if g.usable_source == "user input" or g.name == "custom" else "as the vendor states it"
    L.append(f"gpu {g.name}: {fmt_bytes(g.memory_bytes)} ({fmt_bytes(g.memory_bytes, 'GiB')}) {said}"
             f"{usable}, "
             f"{fmt_si(rec['peak_flops_per_s'], 'FLOP/s')} {cfg.compute_dtype} peak; {cfg.n_gpus} GPUs, tp={cfg.tp} "
             f"pp={cfg.pp}{_schedule(cfg)} dp={rec['dp']}{_replicas(cfg, rec)} ZeRO-{cfg.zero_stage}{_convention(cfg)}")
    if g.name == "custom" and g.note:
        L.append(f"  note: {g.note}")
    L.append("")
    L.append("memory per GPU                 GB (1e9)     GiB (2^30)")
    for k in TOTAL_PARTS:
        L.append(f"  {k[:-6]:<26}{rec[k] / GB:>10.3f}   {rec[k] / GiB:>10.3f}")
    L.append(f"  {'total':<26}{rec['total_bytes'] / GB:>10.3f}   {rec['total_bytes'] / GiB:>10.3f}")
    L.append(f"  {'gpu memory':<26}{rec['gpu_memory_bytes'] / GB:>10.3f}   {rec['gpu_memory_bytes'] / GiB:>10.3f}")
    if rec["offloaded_bytes"] > 0:
        paged = (f", of it a paged optimizer's moments {fmt_bytes(rec['paged_out_bytes'])}"
                 if rec["paged_out_bytes"] > 0 else "")
        L.append(f"  {'on the host (not in total)':<26}{rec['offloaded_bytes'] / GB:>10.3f}   "
                 f"{rec['offloaded_bytes'] / GiB:>10.3f}{paged}")
    L.append(f"  fits: {fit_words(rec)}; headroom {fmt_bytes(rec['headroom_bytes'])}; largest term: {rec['binding']}")
    L.append(f"  activations per layer {fmt_bytes(rec['activations_per_layer_bytes'])} (recompute={cfg.recompute}, "
             f"flash={'on' if cfg.flash_attention else 'off'})")
    L.append("")
    from .estimate import recomputes_whole
    what = ("the working set rebuilt in its backward; full recompute keeps only the layer input" if recomputes_whole(cfg)
            else "bytes kept for backward")
    L.append((f"activation ledger, one MoE layer ({what}; the {cfg.model.n_dense_layers} dense layers' differs)"
              if cfg.model.n_dense_layers and cfg.model.n_experts > 1 else f"activation ledger, one layer ({what})")
             if not cfg.model.mamba_layers else
             f"activation ledger, the average layer of {cfg.model.n_layers} ({cfg.model.attention_layers} attention, "
             f"{cfg.model.mamba_layers} Mamba-2, {cfg.model.mlp_layers} MLP; each unit × its share of layers; {what})")
    for r in ledger:
        L.append(f"  {r['tensor']:<22}{r['bytes'] / 1e6:>12.1f} MB   kept by {r['kept_by']}")
    L.append("")
    L.append(f"compute: {fmt_si(rec['flops_per_token'], 'FLOPs')}/token (6N = {fmt_si(6 * rec['n_active_params'], 'FLOPs')}"
             f" + attention {fmt_si(rec['attention_flops_per_token'], 'FLOPs')}, attention_flops={cfg.attention_flops})")
    L.append(f"  train FLOPs {rec['train_flops']:.3e} for {cfg.tokens:.3g} tokens (6ND = {rec['train_flops_6nd']:.3e})")
    cost = (f"${rec['cost_usd']:,.0f}" if math.isfinite(rec["cost_usd"])
            else "cost — (no price for this accelerator: give --price-per-gpu-hour)")
    basis = {"mfu": f"at MFU {cfg.mfu:.0%}" if cfg.mfu != "auto" else "", "predicted": "at the predicted step",
             "measured": "at the measured throughput"}[rec["time_source"]]
    L.append(f"  {basis}: {fmt_duration(rec['time_s'])}, {rec['gpu_hours']:,.0f} GPU-hours, {cost}")
    if rec.get("goodput_frac") is not None:
        cf = rec.get("cost_with_failures_usd")
        L.append(f"  with failures, checkpoints and restarts (goodput {rec['goodput_frac']:.1%}; a checkpoint every "
                 f"{fmt_si(rec['checkpoint_interval_s'], 's')}, {fmt_si(rec['checkpoint_write_s'], 's')} to write; "
                 f"core/goodput.py): {fmt_duration(rec['days_with_failures'] * 86400)}, "
                 f"{rec['gpu_hours_with_failures']:,.0f} GPU-hours"
                 + (f", ${cf:,.0f}" if cf is not None and math.isfinite(cf) else ""))
    if rec.get("energy_kwh") is not None and math.isfinite(rec["energy_kwh"]):
        L.append(f"  energy {rec['energy_kwh'] / 1e3:,.1f} MWh, {rec['co2e_kg'] / 1e3:,.1f} t CO2e (location-based; "
                 f"GPU-hours × {cfg.gpu_power_w or cfg.gpu.board_power_w:g} W × PUE {cfg.pue:g} × "
                 f"{cfg.carbon_kg_per_kwh:g} kg/kWh; core/energy.py)")
    else:
        L.append("  energy: — (no board power for this accelerator in the catalog: give --gpu-power-w)")
    if rec.get("achieved_mfu") is not None:
        L.append(f"  measured: MFU {rec['achieved_mfu']:.1%}, HFU {rec['achieved_hfu']:.1%}")
    L += ["", render_step(rec)]
    return "\n".join(L)


def render_step(rec) -> str:
    """The predicted step: its parts, their sum, and the MFU/HFU and throughput it implies."""
    if rec.get("predicted_step_time_s") is None:
        return "predicted step: —"
    L = [f"predicted step (global batch {rec['global_batch']:,} sequences, {rec['micro_batches']:g} micro-batches per "
         f"data-parallel replica, dp={rec['dp']}): {fmt_si(rec['predicted_step_time_s'], 's')}"]
    for k in STEP_PARTS:
        if rec[k] > 0:
            L.append(f"  {k[:-2]:<14}{fmt_si(rec[k], 's'):>12}  {rec[k] / rec['predicted_step_time_s']:6.1%}   "
                     f"{STEP_PART_WORDS[k]}")
    L.append(f"  predicted MFU {rec['predicted_mfu']:.1%}, HFU {rec['predicted_hfu']:.1%}, "
             f"{rec['predicted_tokens_per_s']:,.0f} tokens/s for the whole job, "
             f"{rec['model_tflops_per_gpu']:,.0f} model TFLOP/s per GPU"
             + (f"; {rec['predicted_mfu_lowp']:.1%} of the low-precision peak"
                if rec.get("predicted_mfu_lowp") is not None and rec.get("lowp_weights_bytes") else ""))
    L.append("  " + render_interval(rec))
    return "\n".join(L)


def render_interval(rec) -> str:
    """The 80 % interval of the step (and the MFU, days and cost that follow), and whether published runs of the
    layout's class validate it (core/intervals.py)."""
    lo, hi = rec.get("predicted_step_time_low_s"), rec.get("predicted_step_time_high_s")
    if lo is None or hi is None:
        return "80 % interval: —"
    s = (f"80 % interval: step {fmt_si(lo, 's')} – {fmt_si(hi, 's')}, MFU {rec['predicted_mfu_low']:.1%} – "
         f"{rec['predicted_mfu_high']:.1%}")
    if rec.get("days_low") is not None and rec.get("time_source") == "predicted":
        s += f", {rec['days_low']:,.2f} – {rec['days_high']:,.2f} days"
        if rec.get("cost_low_usd") is not None:
            s += f", ${rec['cost_low_usd']:,.0f} – ${rec['cost_high_usd']:,.0f}"
    if not rec.get("validated"):
        from .intervals import NOT_VALIDATED
        s += "\n  not validated: " + NOT_VALIDATED
    return s


def cmd_budget(args) -> int:
    from .budget import plan_budget
    extra = {k: getattr(args, k) for k in ("framework", "seq_len", "price_per_gpu_hour", "price_tier")
             if getattr(args, k) is not None}
    res = plan_budget(usd=args.usd, gpu_hours=args.gpu_hours, days=args.days, gpus=args.gpu,
                      tokens_per_param=args.tokens_per_param, **extra)
    if args.json:
        emit_json(res)
        return 0
    b = res["budget"]
    what = f"${b['usd']:,.0f}" if b["usd"] is not None else f"{b['gpu_hours']:,.0f} GPU-hours"
    L = [f"budget {what} within {b['days']:g} days" + ("" if b["deadline_given"] else " (default deadline; --days)")
         + (f", {b['tokens_per_param']:g} tokens per parameter" if b["tokens_per_param"] else
            ", Chinchilla's compute-optimal model (Hoffmann et al. 2022 Approach 3, core/scaling.py; its law trains "
            "~60 tokens per parameter at these budgets, Approaches 1–2 ~20: --tokens-per-param 20)")]

    def line(o):
        lay = ", ".join(f"{k} {v}" for k, v in o["layout"].items())
        cost = f"${o['cost_with_failures_usd']:,.0f}" if o["cost_with_failures_usd"] == o["cost_with_failures_usd"] else "—"
        return (f"{o['n_params'] / 1e9:,.1f}B parameters on {o['tokens'] / 1e12:,.2f}T tokens "
                f"({o['tokens_per_param']:.0f}/param, loss {o['loss']:.3f}) — {o['n_gpus']:,} × {o['gpu']} ({lay}), "
                f"MFU {o['predicted_mfu']:.1%}, goodput {o['goodput_frac']:.1%}: {o['days_with_failures']:.1f} days "
                f"with failures (80 % up to {o['days_high_with_failures']:.1f}), {cost}"
                + ("" if o["validated"] else "  [layout not validated]"))
    if res["best"] is None:
        L.append("  no accelerator meets the deadline with this budget")
    else:
        L += ["best:", "  " + line(res["best"])]
        if res["alternatives"]:
            L += ["alternatives:"] + ["  " + line(o) for o in res["alternatives"]]
    if res["left_out"]:
        L += ["left out:"] + [f"  {k}: {v}" for k, v in res["left_out"].items()]
    print("\n".join(L))
    return 0


def cmd_limits(args) -> int:
    from .estimate import config_from_inputs
    from .limits import LIMIT_WORDS, limits
    cfg = config_from_inputs(**inputs_from_args(args))
    lim = limits(cfg)
    if args.json:
        emit_json({**lim, "inputs": _config_inputs(cfg)})
        return 0
    print(f"limits of {cfg.model.name} on {cfg.n_gpus:,} × {cfg.gpu.name} "
          f"({fmt_bytes(cfg.gpu.allocatable_bytes, 'GiB')} allocatable each), ZeRO-{cfg.zero_stage}, tp={cfg.tp}, "
          f"pp={cfg.pp}; each changes one input and keeps the others; a limit keeps the counted overhead free")
    for k, v in lim.items():
        label, unit = LIMIT_WORDS[k]
        if k == "min_gpus":
            label = f"fewest GPUs (ZeRO-{cfg.zero_stage}, as given)"
        if v is None:
            text = ("no GPT-3 shape takes this tp and pp" if k == "max_n_params" else
                    "does not fit at any count (ZeRO-0 keeps a full copy of the state on every GPU)"
                    if k.endswith("zero0") or (k == "min_gpus" and cfg.zero_stage == 0)
                    else "does not fit at any count")
        elif not v:
            text = "does not fit (not even the smallest value)"
        elif k == "max_n_params":
            text = f"{fmt_count(v)} {unit}"
        else:
            text = f"{v:,} {unit}"
        print(f"  {label:<34} {text}")
    return 0


def cmd_advise(args) -> int:
    from .advisor import advise
    from .estimate import config_from_inputs
    cfg = config_from_inputs(**inputs_from_args(args))
    adv = advise(cfg, margin=args.margin)
    if args.json:
        emit_json({**adv, "calibration": getattr(args, "calibration", None)})
        return 0
    print_calibration(args)
    print(render_advice(adv))
    return 0


def render_advice(adv: dict) -> str:
    """The advisor's answer in words: the diagnosis, the margin, then the ranked options with their cost."""
    from .record import BINDING_WORDS
    tot, cap, head, margin = adv["total_bytes"], adv["gpu_memory_bytes"], adv["headroom_bytes"], adv["margin_bytes"]
    L = []
    if adv["fits_with_margin"]:
        L.append(f"fits: {fmt_bytes(tot)} of {fmt_bytes(cap)} per GPU, headroom {fmt_bytes(head)} "
                 f"(margin {fmt_bytes(margin)}: {adv['margin_words']}); nothing to change")
        return "\n".join(L)
    verdict = ("does not fit" if not adv["fits"] else "fits tightly (only without the allocator's fragmentation counted)"
               if head < 0 else "fits, but with less headroom than the margin")
    L.append(f"{verdict}: {fmt_bytes(tot)} per GPU of {fmt_bytes(cap)} (headroom {fmt_bytes(head)}); "
             f"largest term: {BINDING_WORDS[adv['binding']]}")
    L.append(f"margin kept by every option: {fmt_bytes(margin)} now ({adv['margin_words']})")
    cur = adv.get("current")
    if cur:
        L.append(f"as it is (predicted step): step {fmt_si(cur['predicted_step_time_s'], 's')}, MFU "
                 f"{cur['predicted_mfu']:.1%}, {cur['gpu_hours']:,.0f} GPU-hours, {fmt_duration(cur['days'] * 86400)}")
    if not adv["options"]:
        L.append("no option within the knobs fits with the margin; see `python -m core limits` for the fewest GPUs "
                 "per ZeRO stage")
        return "\n".join(L)
    L.append("")
    L.append("options: the best of each kind of fix — the same GPUs; more GPUs in whole nodes (fewest first); the "
             "same GPUs with a shorter sequence (longest first) — each with its cost = GPU-hours of the run at the "
             "predicted step:")
    for i, o in enumerate(adv["options"], 1):
        cost = "" if o["cost_usd"] != o["cost_usd"] else f", ${o['cost_usd']:,.0f}"
        delta = "" if o["gpu_hours_change_frac"] != o["gpu_hours_change_frac"] else \
            f" ({o['gpu_hours_change_frac']:+.0%} vs as it is)"
        L.append(f"  {i}. [{o['tier']}] {o['what']}")
        L.append(f"     {fmt_bytes(o['total_bytes'])} per GPU, headroom {fmt_bytes(o['headroom_bytes'])} ≥ margin "
                 f"{fmt_bytes(o['margin_bytes'])}; step {fmt_si(o['predicted_step_time_s'], 's')}, MFU "
                 f"{o['predicted_mfu']:.1%}, {o['gpu_hours']:,.0f} GPU-hours{delta}, "
                 f"{fmt_duration(o['days'] * 86400)} on {o['n_gpus']:,} GPUs{cost}")
    b = adv["best"]
    L.append("")
    L.append(f"best: {b['what']}  →  add: {change_flags(b['change'])}")
    return "\n".join(L)


def change_flags(change: dict) -> str:
    """{'flash_attention': True, 'zero_stage': 2} -> '--flash-attention --zero-stage 2'."""
    words = []
    for k, v in change.items():
        flag = "--" + k.replace("_", "-")
        words.append((flag if v else "--no-" + flag[2:]) if isinstance(v, bool) else f"{flag} {v}")
    return " ".join(words)


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


class _Bar:
    """A one-line progress bar on stderr, shown only when the sweep takes more than a moment."""

    def __init__(self, stream=None, after_s: float = 0.5):
        self.stream = stream or sys.stderr
        self.t0, self.after_s, self.shown, self.ended = time.perf_counter(), after_s, False, False

    def __call__(self, done: int, total: int) -> None:
        dt = time.perf_counter() - self.t0
        if dt < self.after_s and done < total:
            return
        if not self.shown and done >= total:
            return  # finished before the bar was needed
        frac = done / total if total else 1.0
        bar = "#" * int(30 * frac)
        self.stream.write(f"\r[{bar:<30}] {frac:6.1%}  {done:,}/{total:,} rows  {dt:5.1f} s")
        self.shown = True
        if done >= total:
            self.stream.write("\n")
            self.ended = True
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line if a run stopped part-way (an error or Ctrl-C prints on a line of its own)."""
        if self.shown and not self.ended:
            self.stream.write("\n")
            self.stream.flush()
            self.ended = True


_TOKEN_CHARS = re.compile(r"^[A-Za-z0-9_-]{9,}$")


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file() or Path(text).exists()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte: not a file
        return False


def _load_spec(text: str):
    """--spec: inline JSON, a sweep token (a URL-safe string; the app shows one), or a file (at most 1 MiB).
    Every reading is bounded (core/safejson.py); errors name the field."""
    from . import safejson
    from .spec import SweepSpec
    if text.lstrip().startswith("{"):
        return SweepSpec.from_json(text)
    if _TOKEN_CHARS.match(text) and not _is_file(text):
        return SweepSpec.from_token(text)
    if len(text) > 4096:
        raise ValueError(f"spec: neither JSON, a sweep token nor a file name ({len(text):,} characters)")
    return SweepSpec.from_json(safejson.read(text, "spec"))


def cmd_sweep(args) -> int:
    from .spec import check_rows
    from .sweep import export_sweep, run_sweep
    spec = _load_spec(args.spec)
    if args.drop_invalid:
        spec = spec.replace(drop_invalid=True)
    if args.engine == "dask":
        return _sweep_on_dask(spec, args)
    if args.workers is not None or args.scheduler is not None:
        raise ValueError("engine: --workers and --scheduler need --engine dask")
    out = Path(args.out)
    fmt = out.suffix.lower().lstrip(".")
    if fmt not in ("parquet", "csv", "duckdb"):
        raise ValueError(f"out: the file must end in .parquet, .csv or .duckdb, got {args.out[:200]!r}")
    if _is_file(args.out) and out.is_dir():
        raise ValueError(f"out: {args.out[:200]!r} is a folder; give a file name")
    if not _is_file(str(out.parent) or "."):
        raise ValueError(f"out: folder {str(out.parent)[:200]!r} does not exist")
    n = check_rows(spec, args.max_rows)
    bar = None if args.quiet else _Bar()
    t0 = time.perf_counter()
    try:
        if fmt == "duckdb":
            from . import db
            con = db.connect(out, memory_limit=args.memory_limit)
            try:
                # replace=True: a new table is swapped in only when complete (Ctrl-C keeps the previous one)
                table = run_sweep(spec, con, progress=bar, chunk_rows=args.chunk_rows, max_rows=args.max_rows,
                                  replace=True)
                info = db.sweep_info(con, table)
            finally:
                con.close()
            stats = {"rows": n, "written": info["n_rows"], "valid": info["n_valid"], "fits": info["n_fit"]}
        else:
            stats = export_sweep(spec, out, fmt, progress=bar, chunk_rows=args.chunk_rows, max_rows=args.max_rows)
            table = spec.table_name
    finally:
        if bar is not None:
            bar.close()
    dt = time.perf_counter() - t0
    summary = {"rows": stats["rows"], "written": stats["written"], "valid": stats["valid"], "fits": stats["fits"],
               "seconds": round(dt, 3), "rows_per_s": round(stats["rows"] / dt) if dt > 0 else None,
               "out": str(out), "table": table}
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{summary['rows']:,} rows ({summary['written']:,} written), {summary['valid']:,} valid, "
              f"{summary['fits']:,} fit, {dt:.2f} s ({summary['rows_per_s'] or 0:,} rows/s) → {out}"
              + (f" (table {table})" if fmt == "duckdb" else ""))
    return 0


def _sweep_on_dask(spec, args) -> int:
    """`sweep --engine dask`: a hive-partitioned Parquet dataset in the directory --out (core/distributed.py)."""
    from . import distributed as D
    if args.workers is not None and args.scheduler is not None:
        raise ValueError("workers: give either --workers (a local cluster) or --scheduler (an existing one)")
    if args.workers is not None and not 1 <= args.workers <= 1024:
        raise ValueError(f"workers: must be from 1 to 1,024, got {args.workers}")
    out = Path(args.out)
    if out.suffix.lower() in (".parquet", ".csv", ".duckdb"):
        raise ValueError(f"out: --engine dask writes a dataset directory, not a {out.suffix} file; give a folder")
    max_rows = args.max_rows if args.max_rows != MAX_ROWS else D.MAX_ROWS_DASK
    bar = None if args.quiet else _Bar()
    try:
        m = D.run(spec, out, workers=args.workers, scheduler=args.scheduler, max_rows=max_rows, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    summary = {k: m[k] for k in ("rows", "written", "valid", "fits", "tasks", "seconds")}
    summary.update(rows_per_s=round(m["rows"] / m["seconds"]) if m["seconds"] else None, out=str(out),
                   table=m["table"])
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{m['rows']:,} rows in {m['tasks']} tasks, {m['valid']:,} valid, {m['fits']:,} fit, "
              f"{m['seconds']:.2f} s ({summary['rows_per_s'] or 0:,} rows/s) → {out}/ (manifest last: "
              f"{out / D.MANIFEST})")
    return 0


def cmd_measure(args) -> int:
    from .estimate import config_from_inputs
    from .measure import CLI_CPU_CAP, compare, render
    cfg = config_from_inputs(**inputs_from_args(args))
    cap = None if args.no_cap else CLI_CPU_CAP
    res = compare(cfg, device=args.device, dropout_impl=args.dropout_impl, whole_model=not args.block_only,
                  cap=cap, seed=args.seed)
    if args.json:
        emit_json(res)
    else:
        print(render(res))
    return 0


def _gpu_counts(text: str) -> tuple:
    out = []
    for part in text.split(","):
        try:
            x = parse_number(part, "n_gpus")
            if x != int(x):
                raise ValueError
            v = int(x)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"n_gpus: expected whole numbers separated by commas, got {text!r}") from None
        if not 1 <= v <= I.MAX_INT:
            raise argparse.ArgumentTypeError(f"n_gpus: must be from 1 to {I.MAX_INT:,}, got {v}")
        out.append(v)
    return tuple(dict.fromkeys(out))


def cmd_plan(args) -> int:
    from .plan import LAYOUT, plan
    inputs = {k: v for k, v in inputs_from_args(args).items() if k != "n_gpus"}
    fixed = {k: inputs.pop(k) for k in LAYOUT if k in inputs}
    counts = _plan_counts(args, inputs)
    t0 = time.perf_counter()
    res = plan(inputs, counts, args.objective, args.top, args.margin, fixed, max_days=args.max_days,
               max_usd=args.max_usd)
    res["seconds"] = round(time.perf_counter() - t0, 3)
    res["calibration"] = getattr(args, "calibration", None)
    for r in res["strategies"]:  # each row opens in the app's Calculator, as the Parallel layout page's rows do
        r["calculator"] = I.calculator_query({**inputs, **fixed, **{k: r[k] for k in LAYOUT}, "n_gpus": r["n_gpus"],
                                              "global_batch": res["global_batch"]})
    if args.json:
        emit_json(res)
        return 0
    print_calibration(args)
    print(render_plan(res))
    return 0


def _same_layout(a, b) -> bool:
    from .plan import LAYOUT
    return all(a.get(k) == b.get(k) for k in LAYOUT) and a.get("n_gpus") == b.get("n_gpus")


def _plan_counts(args, inputs) -> tuple:
    """The GPU counts to search: --n-gpus (capped by --max-gpus), or whole nodes up to --max-gpus."""
    if args.n_gpus is None and args.max_gpus is None:
        raise ValueError("n_gpus: give --n-gpus (or --max-gpus for whole nodes up to a count)")
    if args.n_gpus is not None:
        counts = tuple(n for n in args.n_gpus if args.max_gpus is None or n <= args.max_gpus)
        if not counts:
            raise ValueError(f"max_gpus: every --n-gpus count is above {args.max_gpus:,}")
        return counts
    from .hardware import get_accelerator
    gpn = int(inputs.get("gpus_per_node") or get_accelerator(inputs.get("gpu", I.BY_NAME["gpu"].default)).gpus_per_node)
    gpn = max(1, min(gpn, 8))
    if args.max_gpus < gpn:
        return (args.max_gpus,)
    out, k = [], 1
    while k * gpn <= args.max_gpus:
        out.append(k * gpn)
        k *= 2
    top = args.max_gpus // gpn * gpn
    return tuple(sorted(set(out + [top])))


def render_plan(res: dict) -> str:
    cons = res.get("constraints") or {}
    constrained = cons.get("max_days") is not None or cons.get("max_usd") is not None
    fit_all = res["fit"] + res.get("over_days", 0) + res.get("over_usd", 0)
    L = [f"{res['searched']:,} layouts searched, {res['valid']:,} valid, {fit_all:,} fit"
         + (f", {res['fit']:,} within the constraints" if constrained else "")
         + f" ({res['seconds']:.2f} s); best {len(res['strategies'])} by {res['objective']}:"]
    words = []
    if cons.get("max_days") is not None:
        words.append(f"{res['over_days']:,} that fit take more than {cons['max_days']:g} days with failures")
    if cons.get("max_usd") is not None:
        words.append(f"{res['over_usd']:,} that fit cost more than ${cons['max_usd']:,.0f} with failures (or have "
                     "no price)")
    if words:
        L.insert(1, "  left out by the constraints (the run with failures, checkpoints and restarts; the days and cost "
                    "columns are without them): " + "; ".join(words))
    high_cost = res["objective"] == "cost_high"
    if not res["strategies"]:
        if words:
            return "\n".join(L[:2]) + "\n  none within the constraints: relax --max-days / --max-usd, or add GPUs"
        return L[0] + "\n  none fits: add GPUs, shorten the sequence, or lower the margin"
    L.append(f"  {'#':>2} {'GPUs':>6} {'tp':>3} {'pp':>3} {'cp':>3} {'ep':>3} {'v':>2} {'mb':>3} {'ZeRO':>4} "
             f"{'recompute':>9} {'sp':>3} {'dp':>5} {'step':>9} {'80 % interval':>19} {'MFU':>6} {'GB/GPU':>7} "
             f"{'days':>8} {'cost, 80 % high' if high_cost else 'cost':>15}  validated")
    for i, r in enumerate(res["strategies"], 1):
        c_key = "cost_high_usd" if high_cost else "cost_usd"  # under cost_high the column ranked by
        cost = f"${r[c_key]:,.0f}" if r.get(c_key) is not None else "—"
        L.append(f"  {i:>2} {r['n_gpus']:>6} {r['tp']:>3} {r['pp']:>3} {r['cp']:>3} {r['ep']:>3} "
                 f"{r['virtual_stages']:>2} {r['micro_batch']:>3} {r['zero_stage']:>4} {r['recompute']:>9} "
                 f"{'on' if r['sequence_parallel'] else 'off':>3} {r['dp']:>5} "
                 f"{fmt_si(r['predicted_step_time_s'], 's'):>9} "
                 f"{fmt_si(r['predicted_step_time_low_s'], 's') + '–' + fmt_si(r['predicted_step_time_high_s'], 's'):>19} "
                 f"{r['predicted_mfu']:>6.1%} {r['total_bytes'] / GB:>7.1f} {r['days']:>8.2f} {cost:>15}  "
                 f"{'yes' if r.get('validated') else 'NO'}")
        if r.get("equivalents"):
            L.append(f"       the same result: {'; '.join(r['equivalents'])}")
    if all(r.get("calculator") for r in res["strategies"]):
        L += ["", "each row in the Calculator (after the app's address, e.g. http://localhost:8501/):"]
        L += [f"  {i:>2} {r['calculator']}" for i, r in enumerate(res["strategies"], 1)]
    best = res["strategies"][0]
    bv = res.get("best_validated")
    if not best.get("validated"):
        if bv:
            rank = next((i for i, r in enumerate(res["strategies"], 1) if _same_layout(r, bv)), None)
            from .plan import layout_label
            where = f"#{rank} above" if rank else f"{layout_label(bv)}, not in the top {len(res['strategies'])}"
            L += ["", f"the best layout is of a class no published run validates (its interval is widened); the best "
                      f"validated layout: {where}, step {fmt_si(bv['predicted_step_time_s'], 's')} "
                      f"({fmt_si(bv['predicted_step_time_low_s'], 's')}–{fmt_si(bv['predicted_step_time_high_s'], 's')}"
                      f"), MFU {bv['predicted_mfu']:.1%}"]
        else:
            L += ["", "no layout found is of a class published runs validate: every interval is widened"]
    L += ["", "best layout, step breakdown:", render_step(best)]
    return "\n".join(L)


MEASURE_GROUPS = ("model", "architecture", "layout", "recipe", "fine-tuning", "activations")
# what a PyTorch measurement reads (core/measure.py): the model, one micro-batch of one sequence length, the activation
# choices and the loss copy; a CUDA step also keeps the fp32 master copy. No price, MFU, GPU count or layout.
MEASURE_INPUTS = ("model", "n_params", "hf_config", *(i.name for i in I.INPUTS if i.group == "architecture"),
                  "seq_len", "micro_batch", "recompute", "flash_attention", "profile", "fp32_loss", "master_weights",
                  "training", "lora_rank", "lora_targets")  # a LoRA/QLoRA block is measured too (issue 12)


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error: `error: <field>: <reason>` and where the help is, exit status 2 — not the
    whole usage block (60 lines for `estimate`) before the one line that matters."""

    def error(self, message: str):
        # our argument types name their field already ("seq_len: …"): drop argparse's "argument --seq-len: "
        message = re.sub(r"^argument --[\w-]+(?:/--[\w-]+)?: (?=[\w·/]+: )", "", message)
        m = re.match(r"argument --([\w-]+): invalid choice: ", message)
        if m and m.group(1).replace("-", "_") in I.BY_NAME:  # the other names it accepts too (a framework's stacks)
            message = f"{m.group(1).replace('-', '_')}: {message[m.end():].split(' (choose')[0]} is not one of " \
                      f"{I.choices_text(m.group(1).replace('-', '_'))}"
        self.exit(2, f"error: {message}\n(see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m core", description="Training memory, time, cost and roofline planner")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, fn, helptext in (("estimate", cmd_estimate, "memory ledger, FLOPs, time and cost of one setup"),
                               ("limits", cmd_limits, "largest seq len / micro-batch / model, fewest GPUs"),
                               ("advise", cmd_advise, "what to change when it does not fit")):
        sp = sub.add_parser(name, help=helptext, description=helptext)
        add_input_flags(sp)
        add_calibrate_flag(sp)
        sp.set_defaults(func=fn)
        if name == "advise":
            from .advisor import MARGIN_HELP
            sp.add_argument("--margin", type=_margin, default=ADV_DEFAULT_MARGIN, metavar="realistic|FRACTION",
                            help=MARGIN_HELP.replace("%", "%%"))
    sp = sub.add_parser("budget", help="from dollars (or GPU-hours) and a deadline: the compute-optimal model, "
                        "tokens, accelerator, GPU count and layout", description="Budget-first planning (core/budget.py):"
                        " Chinchilla's compute-optimal model and tokens (or --tokens-per-param) for what the budget buys "
                        "on each accelerator at the predicted MFU and goodput, within the deadline; ranked by Chinchilla's "
                        "predicted loss, with three alternatives.")
    sp.add_argument("--usd", type=_num("usd"), metavar="X", help="budget in US dollars")
    sp.add_argument("--gpu-hours", type=_num("gpu_hours"), metavar="X", help="budget in GPU-hours (instead of --usd)")
    sp.add_argument("--days", type=_num("days"), metavar="D", help="deadline in days (with failures; default 90)")
    sp.add_argument("--gpu", type=lambda v: [x for x in v.split(",") if x], metavar="NAME[,NAME…]",
                    help="accelerators to consider (default: every catalog accelerator with a price)")
    sp.add_argument("--tokens-per-param", type=_num("tokens_per_param"), metavar="R",
                    help="train R tokens per parameter instead of Chinchilla's optimum (over-training)")
    for k in ("framework", "seq_len", "price_per_gpu_hour", "price_tier"):
        inp = I.BY_NAME[k]
        kw = ({"choices": inp.choices, **({"type": inp.canon} if inp.canon else {})} if inp.kind == "choice"
              else {"type": _num(k, inp.kind == "int")})
        sp.add_argument(inp.flag, default=None, help=inp.describe().replace("%", "%%"), **kw)
    sp.add_argument("--json", action="store_true", help="print one JSON object")
    sp.set_defaults(func=cmd_budget)
    sp = sub.add_parser("roofline", help="arithmetic intensity and attainable FLOP/s",
                        usage="python -m core roofline [--gpu NAME] (--op matmul|matvec|elementwise --m M [--n N] "
                              "--k K | --model NAME [--seq-len S] [--micro-batch B]) [--dtype DTYPE] [--json]")
    sp.add_argument("--gpu", default="h100-sxm", help="accelerator name (default: h100-sxm), or 'custom' with the "
                                                      "three numbers below")
    sp.add_argument("--op", choices=("matmul", "matvec", "elementwise"), help="one operation of the given sizes")
    for k, what in (("m", "rows (matmul: M of an M×K by K×N product)"), ("n", "columns of the result (matmul)"),
                    ("k", "inner dimension (matmul, matvec) or columns (elementwise)")):
        sp.add_argument("--" + k, type=_num(k, True), metavar="N", help=f"{what}; count, 1 to 2^31−1")
    sp.add_argument("--dtype", choices=tuple(DTYPE_BYTES), default="bf16", help="element dtype (default: bf16)")
    sp.add_argument("--model", help="preset name: every op of one of its layers")
    sp.add_argument("--seq-len", type=_num("seq_len", True), metavar="N", help="tokens per sequence (default 2048)")
    sp.add_argument("--micro-batch", type=_num("micro_batch", True), metavar="N", help="sequences (default 1)")
    for k in ("peak_flops_per_s", "gpu_memory_bytes", "memory_bandwidth_bytes_per_s"):
        sp.add_argument("--" + k.replace("_", "-"), type=_num(k), metavar="X", help=I.BY_NAME[k].describe())
    sp.add_argument("--json", action="store_true", help="print one JSON object")
    sp.set_defaults(func=cmd_roofline)
    sp = sub.add_parser("plan", help="search the parallel layouts of a model on N GPUs, ranked by step time or cost",
                        description="Every valid layout (tp × pp × cp × ep × virtual stages × micro-batch × ZeRO × "
                                    "recomputation × sequence parallelism) of the model on the GPUs, evaluated by the "
                                    "vectorised core; keeps what fits with the margin (overhead 'realistic' unless "
                                    "given) and prints the best. A layout flag (--tp 8, --zero-stage 1, …) pins it.")
    add_input_flags(sp, tuple(g for g in I.GROUPS if g != "measurement"))
    add_calibrate_flag(sp)
    for a in sp._actions:
        if a.dest == "n_gpus":
            a.type, a.metavar = _gpu_counts, "N[,N…]"
            a.help = ("GPU count, or several separated by commas (each is searched); required unless --max-gpus "
                      "gives the whole nodes to search")
    sp.add_argument("--objective", choices=PLAN.OBJECTIVES, default="time",
                    help=("rank by " + "; ".join(f"{k}: {v}" for k, v in PLAN.OBJECTIVE_WORDS.items())
                          + " (default: time)").replace("%", "%%"))
    sp.add_argument("--top", type=_whole("top", 1, 1000), default=10, help="layouts to print (default 10)")
    sp.add_argument("--max-days", type=_num("max_days"), metavar="D", help="only layouts whose run, with failures "
                    "and restarts, takes at most D days as predicted (the point, not the interval's high end; with "
                    "--objective cost: the cheapest under D days)")
    sp.add_argument("--max-usd", type=_num("max_usd"), metavar="X", help="only layouts whose run, with failures, costs "
                    "at most X dollars as predicted (the point; with --objective time: the fastest under $X)")
    sp.add_argument("--max-gpus", type=_whole("max_gpus", 1, I.MAX_INT), metavar="N", help="search whole nodes up to N "
                    "GPUs (1, 2, 4, … nodes and N rounded down to a node) instead of --n-gpus; with --n-gpus, drop "
                    "counts above N")
    from .advisor import MARGIN_HELP
    sp.add_argument("--margin", type=_margin, default=ADV_DEFAULT_MARGIN, metavar="realistic|FRACTION",
                    help=MARGIN_HELP.replace("%", "%%") + " (the same margin as advise)")
    sp.set_defaults(func=cmd_plan)
    sp = sub.add_parser("list", help="every preset, accelerator and recipe name")
    sp.add_argument("--json", action="store_true", help="print one JSON object")
    sp.set_defaults(func=cmd_list)

    sp = sub.add_parser("sweep", help="evaluate a grid of configurations into Parquet, CSV or DuckDB",
                        description="Evaluate every combination of a sweep spec (a JSON object of input names → "
                                    "list | scalar | {from, to, step}) with the vectorised core.")
    sp.add_argument("--spec", required=True, help="spec JSON file, inline JSON, or a sweep token")
    sp.add_argument("--out", required=True, help="results.parquet, results.csv or results.duckdb; with --engine dask "
                                                 "a folder for the dataset")
    sp.add_argument("--engine", choices=("local", "dask"), default="local",
                    help="local: this process (default); dask: tasks on a Dask cluster writing a hive-partitioned "
                         "Parquet dataset (optional extra: pip install -r requirements-scale.txt)")
    sp.add_argument("--workers", type=_whole("workers", 1, 1024), help="with --engine dask: start a local cluster of this many worker "
                                                "processes (default 2)")
    sp.add_argument("--scheduler", help="with --engine dask: the address of a running Dask scheduler, e.g. "
                                        "tcp://10.0.0.5:8786")
    sp.add_argument("--max-rows", type=_whole("max_rows", 1, 10**15), default=MAX_ROWS, help=f"row cap (default {MAX_ROWS:,})")
    sp.add_argument("--chunk-rows", type=_whole("chunk_rows", 1), default=CHUNK_ROWS,
                    help=f"rows per chunk (default {CHUNK_ROWS:,})")
    sp.add_argument("--drop-invalid", action="store_true", help="leave invalid combinations out")
    sp.add_argument("--memory-limit", default="1GB", help="DuckDB memory limit for a .duckdb output (default 1GB)")
    sp.add_argument("--quiet", action="store_true", help="no progress bar")
    sp.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    sp.set_defaults(func=cmd_sweep)

    sp = sub.add_parser("measure", help="check the activation ledger and FLOPs against a real PyTorch model",
                        description="Builds the configuration's block and a small whole model in PyTorch (bf16), "
                                    "runs them and prints predicted vs measured bytes kept for backward and FLOPs. "
                                    "Needs PyTorch (requirements-measure.txt; the README gives the CPU-only "
                                    "install line).")
    add_input_flags(sp, MEASURE_GROUPS, only=MEASURE_INPUTS)
    sp.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                    help="cuda also reports max_memory_allocated of a full training step (default: cpu)")
    sp.add_argument("--dropout-impl", choices=("native", "functional"), default="native",
                    help="native: torch.native_dropout, 1-byte masks; functional: F.dropout (2-byte on CPU)")
    sp.add_argument("--block-only", action="store_true", help="skip the whole model")
    sp.add_argument("--no-cap", action="store_true", help="lift the CPU size cap")
    sp.add_argument("--seed", type=_whole("seed"), default=0, help="random seed (default 0)")
    sp.set_defaults(func=cmd_measure)
    return p


def main(argv=None) -> int:
    """Run one subcommand. A user's error is one line on stderr, `error: <field>: <reason>`, and exit status 2 —
    never a traceback: ValueError (the core's messages name the field), unreadable or unwritable files (OSError),
    DuckDB's refusals, numbers or nesting beyond what Python or NumPy hold (OverflowError, RecursionError), input
    too large for memory (MemoryError). Ctrl-C stops with status 130 and one line; a closed pipe (`| head`) is not
    an error."""
    parser = build_parser()
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as e:  # --help (0) or a flag's error (2), already printed in one line by _Parser
            return int(e.code or 0) if not isinstance(e.code, str) else 2
        for k in ("m", "n", "k"):  # roofline dimensions: counts up to 2^31 − 1, as their help says
            v = getattr(args, k, None) if getattr(args, "command", None) == "roofline" else None
            if v is not None and not 1 <= v <= I.MAX_INT:
                raise ValueError(f"{k}: must be a count from 1 to 2^31−1, got {v:.4g}")
        return args.func(args) or 0
    except ValueError as e:
        return _fail(str(e))
    except KeyboardInterrupt:
        print("interrupted (Ctrl-C)", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head`
        sys.stderr.close()
        return 0
    except OSError as e:
        where = f" {str(e.filename)[:200]!r}" if getattr(e, "filename", None) else ""
        return _fail(f"file:{where} {e.strerror or type(e).__name__}")
    except (OverflowError, RecursionError, MemoryError) as e:
        what = {"OverflowError": "a number is too large to compute with",
                "RecursionError": "the input is nested too deeply",
                "MemoryError": "the input is too large for this machine's memory"}[type(e).__name__]
        return _fail(f"input: {what} ({type(e).__name__}); give smaller values")
    except Exception as e:
        if type(e).__module__.lstrip("_").split(".")[0] == "duckdb":  # _duckdb; not imported: --help stays light
            first = (str(e).strip().splitlines() or [""])[0].split(" Detail: Python exception")[0]
            return _fail(f"database: {type(e).__name__}: {first[:300]}")
        raise


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2
