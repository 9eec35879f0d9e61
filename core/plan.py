"""Layout search: every valid parallel layout of a model on N GPUs, ranked by predicted step time or cost (or the
high end of either's 80 % interval: OBJECTIVES).

`plan` builds one sweep (core/spec.py) whose axes are the layout choices — tensor, pipeline, context and expert
parallel degrees, interleaved virtual stages, micro-batch, ZeRO stage, recomputation and sequence parallelism —
around the fixed inputs (model, accelerator, sequence length, global batch, …), runs it on the sweep engine (the
same vectorised `evaluate` as one estimate, so every number equals `python -m core estimate` of that layout),
drops what the input rules refuse (a degree that does not divide, a global batch that is no multiple of
dp·micro_batch, …), keeps what fits with the headroom margin, and ranks the rest.

Candidate degrees: tp and cp powers of two up to 64 (tp ≤ n_heads), pp every divisor of n_gpus up to n_layers
(so 12 or 35 stages are tried where the GPU count allows), ep the powers of two dividing n_experts (MoE only),
virtual stages 1, 2, 4, 8, micro-batches 1, 2, 4, 8 (and the global batch's limit), ZeRO 0–3, the three
recomputation modes, sequence parallelism on and off (only with tp > 1).
"""
from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import profiles as PF
from . import record as R
from .model import ARCH_FIELDS, Model
from .spec import SweepSpec
from .sweep import to_table

# what a layout is ranked by: the predicted figure, or the high end of its 80 % interval (core/intervals.py), which
# is wider for a layout of a class no published run validates, so a planner who must not be surprised ranks the
# well-understood layouts up (the record column each reads, and its words for the help)
OBJECTIVE_KEYS = {"time": "predicted_step_time_s", "cost": "cost_usd",
                  "time_high": "predicted_step_time_high_s", "cost_high": "cost_high_usd"}
OBJECTIVE_WORDS = {"time": "the predicted step time", "cost": "the predicted cost of the run",
                   "time_high": "the high end of the step time's 80 % interval (wider off the validated region)",
                   "cost_high": "the high end of the cost's 80 % interval (wider off the validated region)"}
OBJECTIVES = tuple(OBJECTIVE_KEYS)
POW2 = (1, 2, 4, 8, 16, 32, 64)
MICRO_BATCHES = (1, 2, 4, 8)
VIRTUAL_STAGES = (1, 2, 4, 8)
LAYOUT = ("tp", "pp", "cp", "ep", "virtual_stages", "micro_batch", "zero_stage", "recompute", "sequence_parallel")
MAX_SPACE = 5_000_000  # layouts evaluated at most in one search (a few seconds on two cores)


def _divisors(n: int, limit: int) -> tuple:
    small = [d for d in range(1, int(math.isqrt(n)) + 1) if n % d == 0]
    return tuple(sorted({d for d in small + [n // d for d in small] if d <= limit}))


def search_space(m: Model, n_gpus_list: tuple, seq_len: int, global_batch: int) -> dict:
    """The candidate values of each layout input for model `m` (module docstring)."""
    if not n_gpus_list:
        raise ValueError("n_gpus: give at least one GPU count")
    tps = tuple(t for t in POW2 if t <= m.n_heads and m.n_heads % t == 0)
    pps = tuple(sorted(set().union(*(_divisors(n, m.n_layers) for n in n_gpus_list))))
    cps = tuple(c for c in POW2 if seq_len % c == 0 and c <= max(n_gpus_list))
    eps = tuple(e for e in POW2 if m.n_experts % e == 0) if m.n_experts > 1 else (1,)
    mbs = tuple(b for b in MICRO_BATCHES if b <= global_batch)
    return {"tp": tps, "pp": pps, "cp": cps, "ep": eps, "virtual_stages": VIRTUAL_STAGES, "micro_batch": mbs,
            "zero_stage": (0, 1, 2, 3), "recompute": ("none", "selective", "full"),
            "sequence_parallel": (False, True)}


PLAN_CHUNK_ROWS = 1 << 15  # layouts evaluated at once: ~25 MB of record columns, whatever the search's size
KEEP_PER_CHUNK = 8  # candidates kept per chunk per layout listed (room for the equivalents merged away)


def plan_spec(inputs: dict, n_gpus: tuple, fixed: dict | None = None) -> SweepSpec:
    """The search as a sweep spec (layout axes around the fixed inputs), validated: its `n_rows` is the number of
    layouts the search evaluates, known before anything runs (a page prices its work with it)."""
    from .estimate import build_model
    from .inputs import canonical_inputs
    inputs = canonical_inputs({k: v for k, v in inputs.items() if v is not None})
    if "hf_config" in inputs:
        raise ValueError("hf_config: the layout search takes a preset or the architecture fields")
    m = build_model(inputs.get("model"), inputs.get("n_params"), **{k: inputs[k] for k in ARCH_FIELDS if k in inputs})
    n_list = tuple(int(n) for n in n_gpus)
    from .inputs import BY_NAME as _B
    seq = int(inputs.get("seq_len", _B["seq_len"].default))
    gbs = inputs.get("global_batch")
    if gbs is None:  # the default rule (core.estimate.default_global_batch) at the finest data parallelism, so every
        # layout runs the same global batch: the smallest multiple of n_gpus with target_batch_tokens tokens
        from .estimate import default_global_batch
        from .inputs import BY_NAME
        target = inputs.get("target_batch_tokens", BY_NAME["target_batch_tokens"].default)
        if inputs.get("optimizer_in_backward"):  # no accumulation: one sequence per GPU of the least common multiple
            # of the GPU counts, so every count has layouts with dp·micro_batch equal to it (pure data parallelism at
            # micro-batch lcm/n among them)
            gbs = math.lcm(*n_list)
        else:
            gbs = int(default_global_batch(n_list[0], 1, seq, target))
    space = search_space(m, n_list, seq, int(gbs))
    for k, v in (fixed or {}).items():
        if k not in LAYOUT:
            raise ValueError(f"{k}: not a layout input; layout inputs: {', '.join(LAYOUT)}")
        space[k] = (v,)
    spec_d = {"mfu": "auto", **{k: v for k, v in inputs.items() if k not in LAYOUT and k != "n_gpus"}}
    spec_d.update(space)
    spec_d["n_gpus"] = list(n_list)
    spec_d["global_batch"] = int(gbs)
    spec = SweepSpec.from_dict({**spec_d, "drop_invalid": False})
    if spec.n_rows > MAX_SPACE:
        raise ValueError(f"n_gpus: {spec.n_rows:,} layouts to search (limit {MAX_SPACE:,}); pin some layout inputs")
    return spec


def plan(inputs: dict, n_gpus: tuple, objective: str = "time", top: int = 10, margin="realistic",
         fixed: dict | None = None, progress=None, chunk_rows: int = PLAN_CHUNK_ROWS, max_days=None,
         max_usd=None) -> dict:
    """Rank the layouts of `inputs` (the flat vocabulary: model or architecture fields, gpu, seq_len,
    global_batch, …) on each GPU count of `n_gpus`. `fixed` pins some layout inputs (e.g. {"tp": 8}).

    The candidates stream through in chunks of `chunk_rows` layouts (memory is bounded by the chunk, not by the
    search: a 5M-layout search holds ~25 MB of records at a time); each chunk keeps its best few, and the kept
    ones are ranked at the end. Layouts whose results are identical as shown (`_same_result`: the same GPUs, step
    and cost within 0.05 %, memory within 0.2 %: e.g. no recomputation and selective recomputation with flash attention, which
    keeps no scores either way) are one row, the simplest first, naming the others in `equivalents`.

    `margin` is the headroom every layout keeps free, as the advisor's (`core.advisor.margin_bytes`: "realistic" —
    the realistic overhead where not counted, at least 5 % of GPU memory — or a fraction of GPU memory).

    Returns {"strategies": [record, …] best first (each with "equivalents": [layout words, …]), "searched":
    layouts evaluated, "valid": layouts the rules accept, "fit": layouts that fit with the margin, "by_tp_pp"}.
    When the rules accept none, ValueError names the reason most of them broke (a pinned `--tp 3` on 32 heads:
    "tp: does not divide n_heads"), never an empty "none fits"."""
    from .sweep import Sweep
    from .inputs import BY_NAME, canonical_inputs
    inputs = canonical_inputs(inputs)
    for name, v in (("max_days", max_days), ("max_usd", max_usd)):
        if v is not None and not (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                                  and v > 0):
            raise ValueError(f"{name}: must be a positive number, got {v!r}")
    if objective not in OBJECTIVES:
        raise ValueError(f"objective: {objective!r} is not one of {', '.join(OBJECTIVES)}")
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= 1000:
        raise ValueError(f"top: must be an integer from 1 to 1000, got {top!r}")
    from .advisor import MARGIN_COLUMNS, check_margin, margin_bytes
    margin = check_margin(margin)  # the advisor's margin: the same headroom kept everywhere
    spec = plan_spec(inputs, n_gpus, fixed)
    problem = _fixed_input_problem(inputs, int(n_gpus[0]))
    if problem:
        raise ValueError(problem)
    sw = Sweep(spec, chunk_rows=chunk_rows, max_rows=MAX_SPACE)
    key = OBJECTIVE_KEYS[objective]
    keep = top * KEEP_PER_CHUNK
    pool: list[pa.Table] = []
    pooled = valid = fit = over_days = over_usd = 0
    reason_counts: dict[str, int] = {}
    priced = False
    by_tp_pp: dict = {}
    best_v = None
    for batch in sw.batches(progress=progress, prefetch=0):
        col = lambda k: batch.column(k).to_numpy(zero_copy_only=False)  # noqa: E731
        # sequence parallelism means nothing without tp, interleaving nothing without pp: one of each pair
        # (and where the framework always splits activations over tp, only the rows that say so: maxtext)
        sp = col("sequence_parallel")
        real = ((~sp | (col("tp") > 1)) & ((col("virtual_stages") == 1) | (col("pp") > 1))
                & (sp == PF.sequence_parallel_used(inputs.get("framework", BY_NAME["framework"].default), col("tp"),
                                                   sp)))
        ok_rule = col("valid") & real
        valid += int(ok_rule.sum())
        bad = real & ~col("valid")
        if bad.any():
            reasons = _reasons(batch, bad)
            for r, k in reasons.items():
                reason_counts[r] = reason_counts.get(r, 0) + k
        headroom = np.nan_to_num(col("headroom_bytes"), nan=-1.0)
        need = margin_bytes({k: np.nan_to_num(col(k)) for k in MARGIN_COLUMNS}, margin)
        ok = ok_rule & col("fits") & (headroom >= need)
        # the planner's constraints (issue 20): the run with failures within the deadline and the budget
        if max_days is not None:
            late = ok & ~(np.nan_to_num(col("days_with_failures"), nan=np.inf) <= max_days)
            over_days += int(late.sum())
            ok = ok & ~late
        if max_usd is not None:
            dear = ok & ~(np.nan_to_num(col("cost_with_failures_usd"), nan=np.inf) <= max_usd)
            over_usd += int(dear.sum())
            ok = ok & ~dear
        n_ok = int(ok.sum())
        if not n_ok:
            continue
        fit += n_ok
        vals = col(key)
        priced = priced or bool(np.any(np.isfinite(vals[ok])))
        _best_by_tp_pp(by_tp_pp, col("tp")[ok], col("pp")[ok], col("predicted_mfu")[ok],
                       col("predicted_step_time_s")[ok])
        vidx = np.nonzero(ok & col("validated").astype(bool))[0]
        if len(vidx):  # the best layout of a validated class, kept apart (the top may hold none)
            j = vidx[_rank(lambda k: col(k)[vidx], key)[0]]
            cand = pa.Table.from_batches([batch]).take(pa.array([j], type=pa.int64()))
            if best_v is None:
                best_v = cand
            else:
                both = pa.concat_tables([best_v, cand])
                best_v = both.take(pa.array(_rank(lambda k: both.column(k).to_numpy(zero_copy_only=False), key)[:1],
                                            type=pa.int64()))
        idx = np.nonzero(ok)[0]
        order = _rank(lambda k: col(k)[idx], key)[:keep]
        pool.append(pa.Table.from_batches([batch]).take(pa.array(idx[order], type=pa.int64())))
        pooled += len(order)
        if pooled > 4 * keep:  # compact the pool: its best `keep` are all the next chunks can be compared with
            t = pa.concat_tables(pool)
            tcol = lambda k: t.column(k).to_numpy(zero_copy_only=False)  # noqa: E731
            pool, pooled = [t.take(pa.array(_rank(tcol, key)[:keep], type=pa.int64()))], keep
    if valid == 0:
        raise ValueError(_refusal(reason_counts, spec.n_rows, fixed or {}))
    if objective.startswith("cost") and fit and not priced:
        raise ValueError("objective: no price for this accelerator; give price_per_gpu_hour or rank by "
                         + objective.replace("cost", "time"))
    strategies = []
    best_validated = None  # the fastest (cheapest) layout of a class published runs validate (core/intervals.py)
    if pool:
        t = pa.concat_tables(pool)
        tcol = lambda k: t.column(k).to_numpy(zero_copy_only=False)  # noqa: E731
        rows = t.take(pa.array(_rank(tcol, key), type=pa.int64())).to_pylist()
        keep_cols = ("model", "gpu", "n_gpus", *LAYOUT, *R.NAMES)
        if best_v is not None:
            r = best_v.to_pylist()[0]
            best_validated = {k: r[k] for k in keep_cols if k in r}
        for r in rows:
            twin = next((k for k in strategies if _same_result(k, r, key)), None)
            if twin is not None:
                twin["equivalents"].append(layout_label(r))
                continue
            if len(strategies) == top:
                continue
            s_ = {k: r[k] for k in keep_cols if k in r}
            s_["equivalents"] = []
            strategies.append(s_)
    return {"strategies": strategies, "best_validated": best_validated, "searched": spec.n_rows,
            "constraints": {"max_days": max_days, "max_usd": max_usd}, "over_days": over_days, "over_usd": over_usd, "valid": valid, "fit": fit,
            "global_batch": int(dict(spec.inputs)["global_batch"][0]),
            "objective": objective, "space": {k: list(v) for k, v in spec.to_dict().items()
                                              if k in LAYOUT and isinstance(v, list)},
            "by_tp_pp": [{"tp": int(tp), "pp": int(pp), "predicted_mfu": float(v[0]),
                          "predicted_step_time_s": float(v[1])} for (tp, pp), v in sorted(by_tp_pp.items())]}


def _fixed_input_problem(inputs: dict, n_gpus: int) -> str | None:
    """What `estimate` refuses in the inputs the search does not vary (a LoRA rank above the layer width, a frozen
    share that leaves no parameter), checked once at the simplest layout (one GPU of each parallel kind) before the
    search: the rules give each layout only its first failing reason, so a layout reason would otherwise hide it.
    A refusal that names a layout input, the GPU count or the batch is left to the search."""
    from .estimate import config_from_inputs, estimate
    trial = {k: v for k, v in inputs.items() if k not in LAYOUT and k not in ("n_gpus", "global_batch")}
    try:
        estimate(config_from_inputs(**trial, n_gpus=n_gpus))
    except ValueError as e:
        field = str(e).partition(":")[0]
        names = set(field.replace("·", " ").replace("/", " ").split())
        if not names & {*LAYOUT, "n_gpus", "global_batch", "etp", "pp_layout"}:  # a layout is checked per layout
            return str(e)
    return None


def _refusal(counts: dict, searched: int, fixed: dict) -> str:
    """Why no layout is valid: the reason most layouts broke, preferring one that names a pinned input (the pin is
    what the user can change), with the pins."""
    if not counts:
        return "n_gpus: no layout to search"
    def names_pin(text: str) -> bool:
        field = text.partition(":")[0]
        return any(k in field.replace("·", " ").split() for k in fixed)
    pinned = {r: n for r, n in counts.items() if names_pin(r)}
    # the reason about the pin alone ("tp: …") before one about a product with it ("tp·pp: …"), then the most often
    reason, n = max((pinned or counts).items(), key=lambda kv: (kv[0].partition(":")[0] in fixed, kv[1]))
    pins = ", ".join(f"{k}={v}" for k, v in fixed.items())
    return (f"{reason} — the input rules refuse all {searched:,} layouts searched ({n:,} for this reason"
            + (f"; pinned: {pins}" if pins else "") + ")")


def _reasons(batch: pa.RecordBatch, mask: np.ndarray) -> dict:
    """Counts of the reason texts of the rows in `mask` (the reason column is dictionary-encoded)."""
    arr = batch.column("reason")
    codes = arr.indices.to_numpy(zero_copy_only=False)[mask]
    labels = arr.dictionary.to_pylist()
    u, n = np.unique(codes, return_counts=True)
    return {labels[int(c)]: int(k) for c, k in zip(u, n)}


def _rank(col, key: str) -> np.ndarray:
    """The order of rows (a column getter) best first: `key` (rounded to 4 significant digits), then ties to the
    simpler layout: lower ZeRO stage, less recomputation, no interleaving, smaller tp, pp, cp, no sequence
    parallelism, larger micro-batch."""
    main = np.nan_to_num(col(key).astype(np.float64), nan=np.inf)
    if not len(main):
        return np.array([], dtype=np.int64)
    rc = np.select([col("recompute") == "none", col("recompute") == "selective"], [0, 1], 2)
    keys = (-col("micro_batch"), col("sequence_parallel").astype(int), col("cp"), col("pp"), col("tp"),
            col("virtual_stages"), rc, col("zero_stage"), _significant(main, 4))
    return np.lexsort(keys)


SAME_STEP_FRAC, SAME_BYTES_FRAC = 5e-4, 2e-3  # "identical as shown": 4 significant digits of step, 3 of memory


def _same_result(a: dict, b: dict, key: str = "predicted_step_time_s") -> bool:
    """Whether two layouts give the same result as shown: the same GPUs, step, cost and the ranked column `key` (an
    interval's high end under time_high / cost_high) within SAME_STEP_FRAC and per-GPU memory within
    SAME_BYTES_FRAC."""
    def close(k, frac):
        x, y = a.get(k), b.get(k)
        if x is None or y is None:
            return x is None and y is None
        return abs(x - y) <= frac * max(abs(x), abs(y), 1e-30)
    return (a["n_gpus"] == b["n_gpus"] and close("predicted_step_time_s", SAME_STEP_FRAC)
            and close("cost_usd", SAME_STEP_FRAC) and close(key, SAME_STEP_FRAC)
            and close("total_bytes", SAME_BYTES_FRAC))


def _sig_round(x, digits: int = 4):
    """A result rounded for "identical" (`digits` significant digits; None stays None)."""
    if x is None or not isinstance(x, (int, float)) or not math.isfinite(x):
        return x
    return float(_significant(np.asarray([float(x)]), digits)[0])


def _significant(x: np.ndarray, digits: int) -> np.ndarray:
    """`x` rounded to `digits` significant digits, vectorised (inf stays inf)."""
    finite = np.isfinite(x) & (x != 0)
    scale = 10.0 ** (np.floor(np.log10(np.abs(np.where(finite, x, 1.0)))) - (digits - 1))
    return np.where(finite, np.round(x / scale) * scale, x)


def layout_label(r) -> str:
    """'tp8 sp pp4 v2 cp2 dp16 mb1 ZeRO-1 selective': a layout in one line (cp, ep, v and recomputation only when
    they are not the plain choice)."""
    bits = [f"tp{r['tp']}" + (" sp" if r["sequence_parallel"] else ""), f"pp{r['pp']}"]
    if r["virtual_stages"] > 1:
        bits.append(f"v{r['virtual_stages']}")
    bits += [f"{k}{r[k]}" for k in ("cp", "ep") if r[k] > 1]
    bits += [f"dp{r['dp']}", f"mb{r['micro_batch']}", f"ZeRO-{r['zero_stage']}"]
    if r["recompute"] != "none":
        bits.append(r["recompute"])
    return " ".join(bits)


def _best_by_tp_pp(best: dict, tp, pp, mfu, step) -> None:
    """Update `best` ((tp, pp) -> (predicted MFU, its step)) with the best MFU of each (tp, pp) among these rows."""
    mfu = np.nan_to_num(np.asarray(mfu, dtype=np.float64), nan=-1.0)
    order = np.lexsort((-mfu, pp, tp))  # within each (tp, pp), highest MFU first
    first = np.ones(len(order), dtype=bool)
    first[1:] = (tp[order][1:] != tp[order][:-1]) | (pp[order][1:] != pp[order][:-1])
    for i in order[first]:
        k = (int(tp[i]), int(pp[i]))
        if k not in best or mfu[i] > best[k][0]:
            best[k] = (float(mfu[i]), float(step[i]))
