"""The words beside the numbers: short explanations of the ideas behind them (with their published sources), for every
KPI of the Calculator its formula with this configuration's numbers substituted, and the advisor's answer in words."""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from core import intervals as IV
from core import memory as M
from core import schedule as SC
from core.estimate import Config
from core.inputs import INPUTS
from core.limits import LIMIT_WORDS
from core.record import BINDING_WORDS, fit_status

from . import fmt

WHY_16 = (
    "**Why 16 bytes per parameter.** Mixed-precision AdamW keeps bf16 weights (2) and gradients (2) plus two fp32 "
    "moments (4 + 4): 12 bytes, the count CS336 uses. Most large runs also keep an fp32 master copy of the weights "
    "(+4 = 16, the ZeRO paper's count), because bf16 keeps only 8 significant bits: near 1.0 the next number is "
    "1.0078, so adding 0.001 to a bf16 weight leaves it unchanged. The weights you think of as “the model” are 2 of "
    "those 16 bytes — a 7B model needs ≈112 GB before a single activation is stored."
)
WHY_S2 = (
    "**Why the s² term.** Per layer a GPT block keeps ≈ s·b·h·(34 + 5·a·s/h) bytes for its backward pass "
    "(Korthikanti et al. 2022, Eq. 1): the 34·sbh part is the inputs of the linear layers, norms, activation and "
    "dropout; the 5·a·s²·b part is the attention scores and their softmax — one s×s matrix per head. It grows with "
    "the square of the sequence length and dominates at long context. Flash attention never stores it (it keeps a "
    "log-sum-exp per row and recomputes the scores); selective recomputation recomputes it; full recomputation keeps "
    "only each layer's input (2·sbh) for ≈33% more compute."
)
WHY_MFU = (
    "**What MFU means.** Model FLOPs utilisation = the model's own FLOPs per second ÷ (GPUs × peak). Communication, "
    "waiting for memory and recomputation all lower it; recomputation does not count as useful. 50% is a good "
    "planning number for a well-tuned dense run (CS336 calls ≥50% “quite good”), 35–50% is typical at scale, and "
    "halving the MFU doubles the calendar."
)
WHY_ROOFLINE = (
    "**Compute- or memory-bound.** An op's arithmetic intensity is FLOPs per byte moved. Below the ridge "
    "(peak ÷ bandwidth; ≈295 FLOP/B on an H100) it waits for memory; above it, for arithmetic. Large matmuls are "
    "compute-bound (1024³ in bf16: ≈341 FLOP/B); a matrix-vector product (≈1 FLOP/B) and elementwise ops such as "
    "ReLU (0.25 FLOP/B) are memory-bound — which is why decoding one token at a time is memory-bound and fused "
    "kernels help."
)
WHY_TIME = (
    "**Time and cost.** time = 6·N·D (+ attention) ÷ (GPUs × peak × MFU); cost = GPU-hours × price. More GPUs shorten "
    "the calendar at the same GPU-hours (if MFU holds), so cost stays flat while days fall — until the run no longer "
    "fits or MFU drops. The band shows the spread between a low and a high MFU."
)
SOURCES = (
    "Sources: CS336 lecture 2 (12 bytes/param, MFU, arithmetic intensity, the 70B/15T example); Rajbhandari et al. "
    "2020, ZeRO §3.1 (16 bytes/param) and Fig. 1 (stages); Korthikanti et al. 2022, arXiv:2205.05198 §4–5 "
    "(activations, recomputation); PaLM App. B (attention FLOPs); Dao et al. 2022 (flash attention)."
)


@dataclass(frozen=True)
class Kpi:
    label: str
    value: str
    detail: str  # one line under the value
    formula: str  # markdown: formula with numbers, and the source


def _band(rec: dict, kind: str) -> str:
    """' · 80 %: a – b' for a KPI at the predicted step (a typed MFU has no interval)."""
    if rec.get("time_source") != "predicted" or rec.get("days_low") is None:
        return ""
    if kind == "days":
        return f" · 80 %: {fmt.duration_days(rec['days_low'])} – {fmt.duration_days(rec['days_high'])}"
    if rec.get("cost_low_usd") is None or rec.get("cost_usd") is None:
        return ""
    return f" · 80 %: {fmt.usd(rec['cost_low_usd'])} – {fmt.usd(rec['cost_high_usd'])}"


def interval_words(rec: dict) -> str:
    """The 80 % interval of the predicted step, in words, with where it comes from (core/intervals.py)."""
    return (f"80 % interval: step {fmt.si(rec['predicted_step_time_low_s'], 's')} – "
            f"{fmt.si(rec['predicted_step_time_high_s'], 's')}, MFU {fmt.pct(rec['predicted_mfu_low'], 1)} – "
            f"{fmt.pct(rec['predicted_mfu_high'], 1)}: the 10th–90th percentile of the framework profile's "
            "leave-one-source-out errors on published runs, widened to cover 80 % of a source it was not built from "
            "(bench/fit_profiles.py, data/fitted.csv), or of your calibration's")


def goodput_words(rec: dict) -> str:
    """The run with failures, checkpoints and restarts beside the ideal one (core/goodput.py)."""
    return (f"With failures, checkpoints and restarts: goodput {fmt.pct(rec['goodput_frac'], 1)} → "
            f"{fmt.duration_days(rec['days_with_failures'])}, {rec['gpu_hours_with_failures']:,.0f} GPU-hours, "
            f"{fmt.usd(rec['cost_with_failures_usd'])} (Daly 2006's optimal checkpoint interval "
            f"{fmt.si(rec['checkpoint_interval_s'], 's')}; failure rate from Llama 3's 419 interruptions in 54 days on "
            "16,384 H100 unless given under All inputs → run).")


def energy_words(cfg, rec: dict) -> str:
    """The run's energy and carbon in one line, with the convention (core/energy.py)."""
    import math
    e = rec.get("energy_kwh")
    if e is None or not math.isfinite(e):
        return ("Energy and carbon: no board power for this accelerator in the catalog — give the GPU power under "
                "All inputs → run.")
    w = cfg.gpu_power_w or cfg.gpu.board_power_w
    return (f"Energy {e / 1e3:,.1f} MWh, {rec['co2e_kg'] / 1e3:,.1f} t CO2e (location-based): GPU-hours × {w:g} W × "
            f"{cfg.power_draw_frac:g} drawn × (1 + {cfg.node_overhead_frac:g} node) × PUE {cfg.pue:g} × "
            f"{cfg.carbon_kg_per_kwh:g} kg CO2e/kWh — the Llama papers' convention (core/energy.py).")


def calibration_words(cal: dict) -> str:
    from core.calibrate import describe
    return describe(cal)


NOT_VALIDATED = (f"Not validated: {IV.NOT_VALIDATED}. Published runs of a validated class (core/intervals.py) are "
                 "the safer plan.")


def layout_phrase(cfg: Config, rec: dict) -> str:
    """'ZeRO-z, tp=…, pp=…, dp=…' and the pipeline schedule where it is not 1F1B: how the app names a layout."""
    return f"ZeRO-{cfg.zero_stage}, tp={cfg.tp}, pp={cfg.pp}, dp={rec['dp']}" + SC.label(cfg.pp_schedule)


def kpis(cfg: Config, rec: dict, unit: str = "GB") -> list[Kpi]:
    m, g = cfg.model, cfg.gpu
    L, h, s = m.n_layers, m.d_model, cfg.seq_len
    N = rec["n_active_params"]
    D = cfg.tokens
    tot, cap = rec["total_bytes"], rec["gpu_memory_bytes"]
    parts = " + ".join(f"{k[:-6]} {fmt.mem(rec[k], unit)}" for k in
                       ("weights_bytes", "grads_bytes", "grad_accum_bytes", "optimizer_bytes", "master_bytes",
                        "activations_bytes", "logits_bytes", "overhead_bytes") if rec[k] > 0)
    sh = layout_phrase(cfg, rec)
    scale = {"full": "", "causal": " × ½ (causal)", "none": " × 0 (not counted)"}[cfg.attention_flops]
    price = rec["price_per_gpu_hour"]
    price_text = "no price (type one in the sidebar)" if price != price else f"${price:,.2f}"
    if cfg.price_per_gpu_hour is not None:
        price_src = f"your input (${cfg.price_per_gpu_hour:,.2f})"
    elif g.price_date:
        price_src = f"catalog {g.price_date}, {g.price_source}"
    else:
        price_src = "none: this accelerator has no catalog price"
    out = [
        Kpi("Total per GPU", fmt.mem(tot, unit), f"= {fmt.mem(tot, 'GiB' if unit == 'GB' else 'GB')}",
            f"total = state + activations + logits + overhead\n\n= {parts}\n\n= **{fmt.both_bytes(tot, unit)}** "
            f"per GPU ({sh}).\n\nState per GPU: each part ÷ tp·pp, then ZeRO divides optimizer + master (stage ≥1), "
            "gradients (≥2) and weights (3) by the data-parallel degree — ZeRO §5, Fig. 1. Activations: the "
            "per-tensor ledger below × layers held by the busiest pipeline stage (Korthikanti et al. 2022 §4). "
            "Sources: CS336 lecture 2 (bytes per parameter); Rajbhandari et al. 2020 (ZeRO); Korthikanti et al. "
            "2022 (activations)."),
        Kpi("Fits?", {"fits": "yes", "fits tightly": "tightly", "does not fit": "no"}[
            str(fit_status(rec["fits"], rec["headroom_bytes"]))],
            f"{'+' if rec['headroom_bytes'] >= 0 else ''}{fmt.mem(rec['headroom_bytes'], unit)} headroom",
            "fits ⇔ what the run allocates ≤ GPU memory: total − the allocator's fragmentation "
            f"({fmt.mem(rec['fragmentation_bytes'], unit)}), a risk expandable segments avoid, not a need; "
            "tightly where the total with it exceeds the GPU"
            f"\n\n{fmt.both_bytes(tot, unit)} vs {fmt.both_bytes(cap, unit)} "
            f"({g.label or g.name}: {fmt.mem(g.memory_bytes, g.memory_unit)} as the vendor states it"
            + (f"; {fmt.mem(cap, 'GiB')} a process can allocate, as the runtime reports it: {g.usable_source}"
               if cap != g.memory_bytes else "") + ").\n\n"
            f"headroom = {fmt.mem(cap, unit)} − {fmt.mem(tot, unit)} = **{fmt.mem(rec['headroom_bytes'], unit)}**; "
            f"largest term: {BINDING_WORDS[rec['binding']]}. Source: {g.source or 'user input'}."),
        Kpi("Training FLOPs", fmt.flops(rec["train_flops"]), f"6ND = {fmt.flops(rec['train_flops_6nd'])}",
            f"FLOPs per token = 6·N + 12·L·h·s{scale}\n\n= 6 × {fmt.count(N)} + 12 × {L} × {h} × {s:,}{scale} "
            f"= {fmt.si(rec['flops_per_token'], 'FLOPs')}\n\ntotal = per token × D = × {fmt.count(D)} tokens = "
            f"**{fmt.flops(rec['train_flops'])}** (6ND alone: {fmt.flops(rec['train_flops_6nd'])}).\n\n"
            "6N: 2N forward + 4N backward (N = active parameters for MoE); 12·L·h·s: the attention score and value "
            "matmuls, forward + backward. Sources: Kaplan et al. 2020 (6N); PaLM (Chowdhery et al. 2022) App. B "
            "(attention, as in nanoGPT's estimate_mfu)."),
        Kpi("Days", fmt.days(rec["time_s"]), f"at {fmt.pct(_mfu(cfg, rec), 1)} MFU{_time_basis(rec)} on "
            f"{fmt.gpus(cfg.n_gpus)}" + _band(rec, "days"),
            f"time = FLOPs ÷ (GPUs × peak × MFU) × (1 + overhead)\n\n= {fmt.flops(rec['train_flops'])} ÷ "
            f"({cfg.n_gpus:,} × {fmt.si(rec['peak_flops_per_s'], 'FLOP/s')} × {_mfu(cfg, rec):.3f}) × "
            f"(1 + {cfg.time_overhead_frac:g}) = **{fmt.days(rec['time_s'])}**\n\n{_TIME_WORDS[rec['time_source']]}"
            f"\n\nPeak: {cfg.compute_dtype} dense, no sparsity. Recomputation's extra FLOPs are not model FLOPs: they "
            "show up as a lower MFU. Source: CS336 lecture 2 (70B on 15T tokens, 1,024 H100s, 50% → ≈144 days)."),
        Kpi("Cost", fmt.usd(rec["cost_usd"]), f"{rec['gpu_hours']:,.0f} GPU-hours" + _band(rec, "cost"),
            f"cost = GPU-hours × price = time × GPUs ÷ 3600 × price\n\n= {rec['gpu_hours']:,.0f} GPU-h × "
            f"{price_text} = **{fmt.usd(rec['cost_usd'])}**\n\nPrice: {price_src}."),
        Kpi("Token budget", fmt.count(D) + " tokens", f"{fmt.count(rec['tokens_per_param'])} tokens per parameter",
            f"D = {D:,.0f} tokens; N = {fmt.count(rec['n_params'])} parameters → {rec['tokens_per_param']:,.1f} "
            "tokens per parameter "
            "(Chinchilla-optimal is ≈20; many modern runs train far longer for cheaper serving). Price per "
            f"GPU-hour: {price_text}."),
    ]
    return out


# ---------------------------------------------------------------------------------------------------------------
# The limits of one setup, in words
# ---------------------------------------------------------------------------------------------------------------

def _mfu(cfg: Config, rec: dict) -> float:
    """The MFU the run's time uses: the given one, the predicted step's (mfu auto) or the measured one."""
    return {"mfu": cfg.mfu, "predicted": rec["predicted_mfu"], "measured": rec["achieved_mfu"]}[rec["time_source"]]


def _time_basis(rec: dict) -> str:
    return {"mfu": " (your override)", "predicted": " (predicted step)", "measured": " (measured)"}[rec["time_source"]]


_TIME_WORDS = {
    "predicted": "MFU from the predicted step (core/steptime.py) at this layout and global batch: the one time figure "
                 "every page, sweep and `python -m core` command uses unless an MFU is typed.",
    "mfu": "MFU: your override, typed under Run; it replaces the predicted step's (clear it to go back).",
    "measured": "MFU from the measured throughput you gave.",
}


NOT_FIT = "does not fit"


def no_fit_reason(rec: dict, unit: str = "GB") -> str:
    """Why not even the smallest value of a limit fits: what the GPU's memory already holds without activations."""
    state, cap = rec["state_bytes"], rec["gpu_memory_bytes"]
    if state >= cap:
        return f"the model state alone ({fmt.mem(state, unit)} per GPU) exceeds the GPU's {fmt.mem(cap, unit)}"
    return (f"the model state ({fmt.mem(state, unit)} per GPU), logits and overhead leave no room in "
            f"{fmt.mem(cap, unit)}")


def no_fit_short(rec: dict, unit: str = "GB") -> str:
    """The reason in a few words, for a card: 'state 6,494 GB > 85 GB'."""
    d = 1e9 if unit == "GB" else 2**30
    cap = f"{rec['gpu_memory_bytes'] / d:,.0f} {unit}"
    if rec["state_bytes"] >= rec["gpu_memory_bytes"]:
        return f"state {rec['state_bytes'] / d:,.0f} {unit} > {cap}"
    return f"state + overhead fill {cap}"


def _gpus_reason(z: int, rec: dict, unit: str) -> str:
    if z == 0:
        return f"{NOT_FIT}: ZeRO-0 keeps a full copy of the state on every GPU ({fmt.mem(rec['state_bytes'], unit)})"
    return f"{NOT_FIT} at any count: what ZeRO-{z} does not shard (activations, logits, overhead) exceeds the GPU"


def limit_rows(lim: dict, cfg: Config, rec: dict, unit: str = "GB") -> list[dict]:
    """`core.limits.limits` as labelled rows with units (core.limits.LIMIT_WORDS); where nothing fits (the core's
    0, or None for a GPU count) the row says why."""
    def row(k: str, label: str | None = None) -> tuple[str, str]:
        v = lim[k]
        name, what = LIMIT_WORDS[k]
        name = (label or name)[:1].upper() + (label or name)[1:]
        if k.startswith("min_gpus"):
            z = cfg.zero_stage if k == "min_gpus" else int(k[-1])
            return name, _gpus_reason(z, rec, unit) if v is None else fmt.gpus(v)
        if k == "max_n_params":
            if v is None:
                return name, "no GPT-3 shape takes this tp and pp"
            return name, f"{NOT_FIT}: not even the smallest GPT-3 shape" if not v else f"{fmt.count(v)} {what}"
        return name, f"{NOT_FIT}: {no_fit_reason(rec, unit)}" if not v else f"{v:,} {what}"
    rows = [row("max_seq_len"), row("max_micro_batch"),
            row("min_gpus", f"fewest GPUs (this setup, ZeRO-{cfg.zero_stage})")]
    rows += [row(f"min_gpus_zero{z}") for z in range(4) if z != cfg.zero_stage]
    rows += [row("max_n_layers"), row("max_n_params")]
    return [{"limit": a, "that fits": b} for a, b in rows]


def fewest_gpus_by_stage(lim: dict) -> str:
    """'ZeRO-0: does not fit, …, ZeRO-3: 5 GPUs'."""
    return ", ".join(f"ZeRO-{z}: " + (NOT_FIT if lim[f"min_gpus_zero{z}"] is None else fmt.gpus(lim[f"min_gpus_zero{z}"]))
                     for z in range(4))


# ---------------------------------------------------------------------------------------------------------------
# The advisor's answer in words (core.advisor)
# ---------------------------------------------------------------------------------------------------------------

TIME_OVERHEAD_HELP = ("Extra wall time for failures, restarts, checkpoints and evaluation; a budget of 10–30% is a "
                      "common rule of thumb for large runs.")


def margin_value(choice: str):
    """The margin widget's value ('realistic' or a percentage) as core.advisor takes it."""
    return choice if choice == "realistic" else float(choice) / 100


def does_not_fit(adv: dict, unit: str = "GB") -> str:
    return (f"Does not fit: {fmt.both_bytes(adv['total_bytes'], unit)} per GPU > "
            f"{fmt.both_bytes(adv['gpu_memory_bytes'], unit)}. Largest term: **{adv['binding_words']}**.")


def low_headroom(adv: dict, unit: str = "GB") -> str:
    if adv["headroom_bytes"] < 0:
        return (f"Fits tightly: what the run allocates fits, but not with the allocator fragmentation counted "
                f"({fmt.both_bytes(adv['total_bytes'], unit)} per GPU with it, headroom "
                f"{fmt.mem(adv['headroom_bytes'], unit)}). It runs if fragmentation stays low "
                "(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True); the options below keep the margin "
                f"{fmt.mem(adv['margin_bytes'], unit)} free ({adv['margin_words']}).")
    return (f"Fits, but only just: headroom {fmt.mem(adv['headroom_bytes'], unit)} is less than the margin "
            f"{fmt.mem(adv['margin_bytes'], unit)} ({adv['margin_words']}). A real run may run out of memory; the "
            "options below keep the margin free.")


def options_heading(adv: dict) -> str:
    cur = adv.get("current") or {}
    base = (f" As it is, the predicted step gives {fmt.duration_days(cur['days'])} and "
            f"{cur['gpu_hours']:,.0f} GPU-hours." if cur else "")
    return (f"**The {len(adv['options'])} cheapest changes that fit with the margin**, ranked: the same GPUs first, "
            "then more GPUs (whole nodes, the fewest first), then a shorter sequence (the longest first); then by the "
            f"run's GPU-hours at the predicted step (core/steptime.py).{base}")


def option_line(o: dict, unit: str = "GB") -> str:
    """One option's trade-off: memory and headroom against the margin, the predicted step, and what the run costs."""
    delta = o["gpu_hours_change_frac"]
    change = "" if delta != delta else f" ({delta:+.0%} GPU-hours vs as it is)"
    return (f"{fmt.mem(o['total_bytes'], unit)} per GPU · headroom {fmt.mem(o['headroom_bytes'], unit)} "
            f"(margin {fmt.mem(o['margin_bytes'], unit)}) · step {fmt.si(o['predicted_step_time_s'], 's')}, "
            f"MFU {fmt.pct(o['predicted_mfu'], 1)} · {fmt.duration_days(o['days'])} on {fmt.gpus(o['n_gpus'])}, "
            f"{o['gpu_hours']:,.0f} GPU-hours{change}, {fmt.usd(o['cost_usd'])}")


# ---------------------------------------------------------------------------------------------------------------
# The same inputs on the command line
# ---------------------------------------------------------------------------------------------------------------

CLI = "python -m core estimate"
CLI_DEFAULTS = {i.name: i.default for i in INPUTS if i.default is not None}  # the schema's (core/inputs.py): the app's


def cli_command(inputs: dict) -> str:
    """`python -m core estimate …` for the flat inputs of `config_from_inputs`: every input that differs from the
    schema's default (the CLI's and the app's alike) as a flag, so the command prints the numbers this page shows."""
    base = dict(CLI_DEFAULTS)
    if inputs.get("recipe") in M.RECIPES:  # the recipe sets these unless they are given
        base.update(M.RECIPES[inputs["recipe"]].fields())
    words = [CLI]
    for k, v in inputs.items():
        if v is None or (k in base and _eq(v, base[k])):
            continue
        flag = "--" + k.replace("_", "-")
        if isinstance(v, bool):
            words.append(flag if v else "--no-" + flag[2:])
        elif isinstance(v, float):
            words += [flag, f"{v:.12g}"]
        else:
            words += [flag, shlex.quote(str(v))]
    return " ".join(words)


def _eq(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or (isinstance(a, bool) and isinstance(b, bool) and a == b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return a == b


# ---------------------------------------------------------------------------------------------------------------
# The landing page's examples: each link's parameters and what its label claims (tests/test_app.py opens each one
# and checks the claim against the page it opens)
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Example:
    label: str  # the link: short enough for one line
    icon: str
    params: dict  # the inputs (core units); the conventions the published number uses are pinned in them
    fits: bool  # the verdict the label states
    claims: dict = field(default_factory=dict)  # record field -> the value the label or detail quotes (±1%)
    detail: str = ""  # one line under the link: the numbers and where they come from

    @property
    def link(self) -> dict:
        """The Calculator's URL parameters for `params` (ui.state.link_params: the schema's keys and units)."""
        from .state import link_params
        return link_params(self.params)


# the published ledgers count no memory overhead and no memory savers unless they say so, and a given 50 % MFU:
# each link pins those inputs (core units here; `ui.state.link_params` writes them as the Calculator's parameters)
_AS_PUBLISHED = {"flash_attention": False, "zero_stage": 0, "overhead": "none", "mfu": 0.5}
EXAMPLES = (
    Example("7B on one 80 GB H100: does not fit", ":material/block:",
            {"model": "gpt-3-6.7b", "n_gpus": 1, "seq_len": 512, **_AS_PUBLISHED}, fits=False,
            claims={"state_bytes": 107e9, "total_bytes": 110e9},
            detail="Weights, gradients, Adam moments and the fp32 master copy (16 bytes per parameter: CS336 lecture "
                   "2, the ZeRO paper) already need ≈107 GB; 110 GB with the activations of 512 tokens."),
    Example("1.24B fine-tune on a 24 GB GPU: fits, only just", ":material/check_circle:",
            {"model": "llama-3.2-1b", "n_gpus": 1, "seq_len": 1536, "gpu": "rtx-4090", "tokens": 1e9,
             **_AS_PUBLISHED}, fits=True, claims={"total_bytes": 24.45e9, "days": 1.12},
            detail="≈24.5 GB at 1,536 tokens (Llama 3.2 1B on an RTX 4090, 25.4 GB allocatable), and 1B tokens take "
                   "≈1.1 days at 50% MFU — with less headroom than a real run needs, which the page warns about."),
    Example("70B on 15T tokens and 1,024 H100s: ≈145 days", ":material/schedule:",
            {"model": "llama-3.1-70b", "n_gpus": 1024, "tokens": 15e12, "zero_stage": 3, "recompute": "full",
             "flash_attention": True, "attention_flops": "none", "overhead": "none", "mfu": 0.5}, fits=True,
            claims={"days": 145.0},
            detail="At 50% MFU with ZeRO-3 and full recomputation, counting 6ND FLOPs as CS336 lecture 2 does "
                   "(its estimate: ≈144 days)."),
)
