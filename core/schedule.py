"""The pipeline schedule, in one place: the bubble, the stage-to-stage sends, and how many micro-batches' activations
the busiest stage holds. Vectorised. p = pp (stages), v = virtual_stages (model chunks per GPU), m = micro-batches
per replica per step.

- 1F1B (v = 1) and the interleaved 1F1B schedule (v > 1) of Narayanan et al. 2021 (arXiv:2104.04473) §2.2: the
  bubble is (p − 1)/v micro-batch times of the critical stage; each micro-batch crosses 2·v stage boundaries
  (activations forward, their gradients backward) per GPU.
- Activations in flight (Korthikanti et al. 2022 §4.2.3, Eq. 5; Megatron's num_warmup_microbatches): the first
  stage holds p micro-batches of its L/p layers — L layers' worth — and the interleaved schedule
  (p − 1)·2 + (v − 1)·p + 1 chunks of L/(p·v) layers = L · (1 + (p − 1)/(p·v)) layers' worth, but never more than
  the m micro-batches a step has (m < p: only m are ever in flight).
- Unpaired micro-batches: a schedule that runs one micro-batch's forward beside another's backward (Megatron-Core's
  combined 1F1B, --overlap-moe-expert-parallel-comm) pairs them only in the steady phase; the first stage's warm-up
  forwards and cool-down backwards run alone. The overlap adds one warm-up chunk on the interleaved schedule.
- The warm-up count is `warmup_chunks`, the one owner of Megatron's num_warmup_microbatches
  (megatron/core/pipeline_parallel/schedules.py @d98e8a6, l.957-970): p − r − 1 micro-batches for 1F1B,
  (p − r − 1)·2 + (v − 1)·p chunks interleaved, + 1 with the overlap.
- Other schedules (`pp_schedule`, SCHEDULES): the zero-bubble schedules of Qi et al. 2024 (arXiv:2401.10241), which
  split the backward into B (input gradients) and W (weight gradients) and move the Ws into the bubble, and
  DeepSeek's bidirectional DualPipe and its V-shaped half, DualPipeV (deepseek-ai/DualPipe README @3da1bbe). Each
  names its bubble (`bubble_time`, in F, B and W: one micro-batch's forward, input-gradient and weight-gradient
  times on the critical stage), the micro-batches' activations its busiest rank holds (`schedule_held`) and the
  parameters it keeps (`both_ends`, `TWO_STAGES`).
"""
from __future__ import annotations

from functools import lru_cache
from types import MappingProxyType

import numpy as np


# pp_schedule: the pipeline schedules the planner can time, their meaning and where each comes from
SCHEDULES = ("1f1b", "zb1p", "zb2p", "dualpipe", "dualpipev")
SCHEDULE_WORDS = MappingProxyType({
    "1f1b": "1F1B; interleaved 1F1B with virtual_stages > 1 (Narayanan et al. 2021 §2.2)",
    "zb1p": "zero bubble at 1F1B's activation memory (ZB-H1 / ZB-1p, Qi et al. 2024 Table 2, §5.1)",
    "zb2p": "zero bubble with up to 2p − 1 micro-batches in flight (ZB-H2 / ZB-2p, Qi et al. 2024 Table 2, §5.1)",
    "dualpipe": "DeepSeek's bidirectional DualPipe: two pipeline stages per GPU, both directions' micro-batches "
                "(DeepSeek-V3 report §3.2.1, Table 2)",
    "dualpipev": "DualPipeV, DualPipe cut in half: a V of two chunks per GPU (virtual_stages 2; deepseek-ai/DualPipe "
                 "README)",
})
# schedules whose first rank also holds the pipeline's last chunk (the LM head and the loss): DualPipe's rank r runs
# stages r and p − 1 − r, DualPipeV's V puts chunks r and 2p − 1 − r on rank r
BOTH_ENDS = ("dualpipe", "dualpipev")
# schedules whose GPUs keep two whole stages: DualPipe ("Parameter Per Device 2×", README table; "DualPipe requires
# keeping two copies of the model parameters", DeepSeek-V3 §3.2.1); DualPipeV's 2× is two chunks of half a stage
# each, the planner's virtual_stages 2
TWO_STAGES = ("dualpipe",)


def bubble_time(schedule, pp, virtual_stages, micro_batches, t_mb, t_f, t_w, t_compute=None) -> np.ndarray:
    """Seconds a step's pipeline idles, from one micro-batch's time t_mb on the critical stage (its exposed
    communication included), its forward's compute t_f and its weight-gradient GEMMs t_w (B, the input gradients,
    is the rest: t_mb − t_f − t_w); `t_compute` is the micro-batch's compute alone (t_mb when not given):
    - 1f1b: (p − 1)/v · t_mb (Narayanan et al. 2021 §2.2);
    - zb1p: (p − 1)(F + B) − (min(m, p) − 1)·W: ZB-H1's (p − 1)(F + B − W) from p micro-batches on (Qi et al.
      2024 Table 2), and with m ≤ p their Appendix H's (m + p − 1)(F + B) + W − m(F + B + W);
    - zb2p: the same with min(m, 2p − 1), at least 0: ZB-H2's (p − 1)(F + B − 2W) from 2p − 1 on (Table 2), and
      between p and 2p − 1 micro-batches a straight line between the two (an interpolation no source gives). The
      paper's automatic search (ZB-2p) finds less (Table 5: below 1 % of the step in 11 of 12 settings): this is
      the handcrafted schedule's bubble at the same memory, the conservative end;
    - dualpipe: (p/2 − 1)(F&B + B − 3W) with B the full backward and F&B = F + B, compute alone (DualPipe overlaps
      each chunk's communication with the paired chunk's compute; DeepSeek-V3 Table 2, §3.2.1);
    - dualpipev: the same over 2p stages of half a GPU's work each: (p − 1)(F&B + B − 3W)/2 (README table)."""
    sched = np.asarray(schedule)
    one = bubble_share(pp, virtual_stages) * np.asarray(t_mb, dtype=np.float64)
    if not np.any(sched != "1f1b"):  # the usual case: a sweep's chunk of 1F1B rows skips the other schedules
        return one
    p = np.maximum(np.asarray(pp, dtype=np.float64), 1.0)
    m = np.maximum(np.asarray(micro_batches, dtype=np.float64), 1.0)
    t, f, w = (np.asarray(x, dtype=np.float64) for x in (t_mb, t_f, t_w))
    tc = t if t_compute is None else np.asarray(t_compute, dtype=np.float64)
    fb = np.maximum(t - w, 0.0)  # F + B (input gradients)
    zb1 = np.maximum((p - 1.0) * fb - (np.minimum(m, p) - 1.0) * w, 0.0)
    zb2 = np.maximum((p - 1.0) * fb - (np.minimum(m, 2.0 * p - 1.0) - 1.0) * w, 0.0)
    pair = np.maximum(2.0 * tc - f - 3.0 * w, 0.0)  # F&B + B − 3W with F&B = F + B, B = t_c − F
    dual = np.maximum(p / 2.0 - 1.0, 0.0) * pair
    dualv = (p - 1.0) * pair / 2.0
    return np.select([sched == "zb1p", sched == "zb2p", sched == "dualpipe", sched == "dualpipev"],
                     [zb1, zb2, dual, dualv], one)


def schedule_held(schedule, pp, default_held) -> np.ndarray:
    """Micro-batches' worth of a stage's activations a pipeline rank holds at its peak under each schedule other than
    1F1B (whose count, Megatron's warm-up + 1, is `default_held`), the same on every rank:
    - zb1p p and zb2p 2p − 1: Qi et al. 2024 §2.3 give worker i (from 1) (p − i + 1)·M_B + (i − 1)·M_W under ZB-H1
      and (2p − 2i + 1)·M_B + (2i − 2)·M_W under ZB-H2, M_W (what W keeps) below M_B (Table 1): the first worker's
      p and 2p − 1 are every worker's bound, which the planner counts (the paper's Table 4 memory: ZB-1p 1-2 GB above
      1F1B on every setting; ZB-2p's search may keep up to 2p, §5.1, where ZB-H2 keeps 2p − 1);
    - dualpipe p + 1 stages' (DeepSeek-V3 Table 2, 'Activation PP + 1'); dualpipev 2p + 1 chunks of half a stage,
      p + 1/2 (README table, over its 2p stages)."""
    sched = np.asarray(schedule)
    if not np.any(sched != "1f1b"):
        return default_held
    p = np.maximum(np.asarray(pp, dtype=np.float64), 1.0)
    return np.select([sched == "zb1p", sched == "zb2p", sched == "dualpipe", sched == "dualpipev"],
                     [p, 2.0 * p - 1.0, p + 1.0, p + 0.5], default_held)


def both_ends(schedule, pp) -> np.ndarray:
    """True where the first pipeline rank also holds the last chunk, its LM head and loss (BOTH_ENDS), pp > 1."""
    return np.isin(np.asarray(schedule), BOTH_ENDS) & (np.asarray(pp) > 1)


def label(schedule) -> str:
    """How a layout's summary names its schedule: nothing for 1F1B, else ' (<name> schedule)' (the CLI, the app)."""
    return "" if str(schedule) == "1f1b" else f" ({schedule} schedule)"


def bubble_share(pp, virtual_stages) -> np.ndarray:
    """Micro-batch times the pipeline idles per step, as a multiple of one micro-batch: (p − 1)/v."""
    p = np.maximum(np.asarray(pp, dtype=np.float64), 1.0)
    v = np.maximum(np.asarray(virtual_stages, dtype=np.float64), 1.0)
    return (p - 1.0) / v


def sends_per_micro_batch(virtual_stages) -> np.ndarray:
    """Stage-boundary crossings per micro-batch on one GPU: 2·v (forward activations and backward gradients)."""
    return 2.0 * np.maximum(np.asarray(virtual_stages, dtype=np.float64), 1.0)


def warmup_chunks(pp, virtual_stages, rank=0, overlap=False) -> np.ndarray:
    """Megatron's num_warmup_microbatches on pipeline rank r (module docstring): micro-batches for 1F1B (v = 1),
    model chunks of 1/v micro-batch interleaved (v > 1), one more chunk there with the all-to-all overlap."""
    p = np.maximum(np.asarray(pp, dtype=np.float64), 1.0)
    v = np.maximum(np.asarray(virtual_stages, dtype=np.float64), 1.0)
    r = np.minimum(np.asarray(rank, dtype=np.float64), p - 1.0)
    inter = (p - r - 1.0) * 2.0 + (v - 1.0) * p + np.asarray(overlap, dtype=np.float64)
    return np.where(v > 1, inter, p - r - 1.0)


def in_flight_of_rank(stage_layers, pp, virtual_stages, rank, micro_batches=None, overlap=False,
                      schedule="1f1b") -> np.ndarray:
    """Layers' worth of one micro-batch's activations pipeline rank r holds at its peak, for a rank of
    `stage_layers` layers: the warm-up and the one computing — (p − r) micro-batches for 1F1B; interleaved
    warmup_chunks + 1 chunks of stage_layers/v, i.e. stage_layers · (p + (p − 1 − 2r)/v) without the overlap; with
    never more than the step's m micro-batches (Megatron caps the warm-up at the step's m·v chunks:
    schedules.py `num_warmup_microbatches = min(num_warmup_microbatches, total_num_microbatches)`), so with fewer
    micro-batches than stages (m < p) min(p − r, m) for 1F1B, and m interleaved (which Megatron runs only with
    m ≥ p: schedules.py refuses fewer). Another `schedule` holds its own count (`schedule_held`), capped at m
    alike."""
    n = np.asarray(stage_layers, dtype=np.float64)
    p = np.maximum(np.asarray(pp, dtype=np.float64), 1.0)
    v = np.maximum(np.asarray(virtual_stages, dtype=np.float64), 1.0)
    held = (warmup_chunks(pp, virtual_stages, rank, overlap) + 1.0) / np.where(v > 1, v, 1.0)  # micro-batches' worth
    held = schedule_held(schedule, pp, held)
    if micro_batches is None:
        return n * held
    m = np.maximum(np.asarray(micro_batches, dtype=np.float64), 1.0)
    return n * np.minimum(held, m)


def dp_degree(n_gpus, tp, pp, cp) -> np.ndarray:
    """Data-parallel replicas: d = ⌊n/(tp·pp·cp)⌋, at least 1."""
    f = lambda x: np.asarray(x, dtype=np.float64)  # noqa: E731
    return np.maximum(np.floor(f(n_gpus) / (f(tp) * f(pp) * f(cp))), 1.0)


def micro_batches(global_batch, n_gpus, tp, pp, cp, micro_batch) -> np.ndarray:
    """Micro-batches per data-parallel replica per step: m = global_batch / (d·b), at least 1."""
    return np.maximum(np.asarray(global_batch, dtype=np.float64)
                      / (dp_degree(n_gpus, tp, pp, cp) * np.asarray(micro_batch, dtype=np.float64)), 1.0)


def stage_layers(n_layers, pp, embedding_loss_slots=False, layout="") -> dict:
    """Transformer layers per pipeline stage: ⌈L/p⌉ on every stage (the busiest), or with the embedding and the loss
    each taking one layer's slot in the split (Megatron --account-for-embedding-in-pipeline-split
    --account-for-loss-in-pipeline-split): ⌈(L + 2)/p⌉ on the middle stages and one fewer on the first and last; or
    as a custom layout places them (`layout`, Megatron's --pipeline-model-parallel-layout: `layout_ranks`). Returns
    the decoder layers of the first rank, of the last (beside the LM head and the loss), of the busiest (`most`;
    `middle` the same), of the rank after the first whose activations in flight peak (`peak`, on rank `peak_rank`: the
    second with slots, a full stage one micro-batch fewer in flight), and `slots`: whether the split is uneven (slots
    or a layout)."""
    L = np.asarray(n_layers, dtype=np.float64)
    p = np.maximum(np.asarray(pp, dtype=np.float64), 1.0)
    slots = np.asarray(embedding_loss_slots, dtype=bool) & (p > 1)
    mid = np.where(slots, np.ceil((L + 2.0) / p), np.ceil(L / p))
    end = np.where(slots, mid - 1.0, mid)
    mid = np.where(slots & (p == 2), end, mid)  # two stages: no middle one, both hold a layer fewer
    out = {"first": end, "middle": mid, "last": end, "most": mid, "peak": mid,
           "peak_rank": np.ones_like(mid), "slots": slots}
    lay = np.asarray(layout, dtype=object)
    if not lay.any():  # the usual case: no layout anywhere (a sweep's chunk of empty texts included)
        return out
    lay, p, _ = np.broadcast_arrays(lay, p, L)
    got = {k: np.broadcast_to(v, lay.shape).astype(np.float64 if k != "slots" else bool).copy()
           for k, v in out.items()}
    for text in {x for x in lay.ravel().tolist() if x}:
        for pv in np.unique(p[lay == text]):
            sel = (lay == text) & (p == pv) & (pv > 1)
            if not sel.any():
                continue
            try:
                r = layout_ranks(text, int(pv))
            except ValueError:  # a row the rules refuse (its chunks no multiple of pp): the even split stands
                continue
            for k in ("first", "last", "most", "peak", "peak_rank"):
                got[k][sel] = r[k]
            got["middle"][sel] = r["most"]
            got["slots"][sel] = True
    return got


# Megatron-Core's pipeline layout (--pipeline-model-parallel-layout; megatron/core/transformer/
# pipeline_parallel_layer_layout.py @d98e8a6, parse_str_to_list): chunks in order separated by '|', each a run of E
# (embedding), t (decoder layer), m (multi-token-prediction layer), L (loss: final norm, LM head, cross-entropy);
# ',' is cosmetic, '(…)*n' and 'x*n' repeat; chunk k runs on pipeline rank k mod pp (virtual stage k // pp)
LAYOUT_CHARS = "EtmL"


def expand_layout(text: str) -> list:
    """A pipeline layout's chunks as strings of E/t/m/L, repetitions expanded (Megatron's grammar, above); a malformed
    text is an error naming pp_layout and the reason."""
    s = str(text).replace(",", "").replace(" ", "")

    def seq(i, depth):  # from s[i] to the ')' closing this depth (or the end): the expanded text and where it stopped
        out = []
        while i < len(s):
            ch = s[i]
            if ch == ")":
                if depth == 0:
                    raise ValueError(f"pp_layout: unbalanced ')' in {text!r}")
                return "".join(out), i
            if ch == "(":
                unit, i = seq(i + 1, depth + 1)
                i += 1  # the ')' seq stopped at
            elif ch in LAYOUT_CHARS or ch == "|":
                unit, i = ch, i + 1
            else:
                raise ValueError(f"pp_layout: {ch!r} is not one of E (embedding), t (decoder layer), m (MTP layer), "
                                 f"L (loss), '|' (next chunk), '(…)*n' or 'x*n' (repeat) in {text!r}")
            if i < len(s) and s[i] == "*":
                j = i + 1
                while j < len(s) and s[j].isdigit():
                    j += 1
                if j == i + 1:
                    raise ValueError(f"pp_layout: '*' needs a count in {text!r}")
                unit, i = unit * int(s[i + 1:j]), j
            out.append(unit)
        if depth > 0:
            raise ValueError(f"pp_layout: unbalanced '(' in {text!r}")
        return "".join(out), i

    return seq(0, 0)[0].split("|")


@lru_cache(maxsize=256)
def layout_ranks(text: str, pp: int) -> dict:
    """What a layout puts on each pipeline rank (chunk k on rank k mod pp): decoder layers of the first rank, the
    second, the last and the busiest (`most`), the rank after the first whose activations in flight peak
    (`peak_rank`, with `peak` layers), and of the whole layout (`decoder`), its chunks, MTP layers, and
    whether the embedding sits in the first chunk, the loss in the last and the MTP layers with it (`mtp_last`; read
    only, shared by the cache). A layout whose chunks are not a multiple of pp is an error naming pp_layout."""
    chunks = expand_layout(text)
    if len(chunks) % pp:
        raise ValueError(f"pp_layout: {len(chunks)} chunks is not a multiple of pp ({pp}): chunk k runs on pipeline "
                         f"rank k mod pp")
    per_rank = [sum(c.count("t") for c in chunks[r::pp]) for r in range(pp)]
    joined = "".join(chunks)
    # the rank other than the first whose activations in flight peak: its layers × the chunks it holds at once
    # (warmup_chunks + 1 of its v, equal chunks assumed; a step with fewer micro-batches caps them alike)
    v = len(chunks) // pp
    held = [per_rank[r] * (float(warmup_chunks(pp, v, r)) + 1.0) for r in range(pp)]
    peak = max(range(1, pp), key=held.__getitem__) if pp > 1 else 0
    return MappingProxyType({
        "first": per_rank[0], "second": per_rank[min(1, pp - 1)], "last": per_rank[-1], "most": max(per_rank),
        "peak": per_rank[peak], "peak_rank": peak,
        "decoder": joined.count("t"), "chunks": len(chunks), "mtp": joined.count("m"),
        "mtp_last": joined.count("m") == chunks[-1].count("m"),
        "ends": joined.count("E") == chunks[0].count("E") == 1 and joined.count("L") == chunks[-1].count("L") == 1})


def unpaired_micro_batches(pp, virtual_stages, micro_batches) -> np.ndarray:
    """Micro-batches' worth of the first stage's forwards and backwards that no other micro-batch's work runs beside,
    under Megatron's combined 1F1B (--overlap-moe-expert-parallel-comm; which needs pp = 1 or virtual stages):
    interleaved ((p − 1)·2 + (v − 1)·p + 1)/v (schedules.py adds one warm-up chunk when the overlap is on), without a
    pipeline the first forward and the last backward (1), 1F1B p − 1; at least 1, never more than the step's m."""
    v = np.maximum(np.asarray(virtual_stages, dtype=np.float64), 1.0)
    m = np.maximum(np.asarray(micro_batches, dtype=np.float64), 1.0)
    warm = warmup_chunks(pp, virtual_stages, 0, overlap=True) / np.where(v > 1, v, 1.0)
    return np.minimum(np.maximum(warm, 1.0), m)
