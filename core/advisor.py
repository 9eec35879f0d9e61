"""Advisor: when a setup does not fit, name the term that grew and the smallest change that makes it fit.

Remedies follow seed 000 ("Diagnosing the two limits") and seed 002's checklist: state → shard it (a higher
ZeRO stage, more GPUs) or drop the fp32 master copy; activations → flash attention, recomputation, a smaller
micro-batch or a shorter sequence; logits → split the vocabulary across tensor-parallel ranks or drop the fp32
loss copy. Each candidate changes one input; candidates are tried in order of what they cost the run (memory-only
changes first, then compute, then numerics, then money), and every one that fits is reported.
"""
from __future__ import annotations

from .estimate import Config, estimate
from .limits import max_micro_batch, max_seq_len, min_gpus

def _candidates(cfg: Config):
    if not cfg.flash_attention:
        yield ("flash_attention", {"flash_attention": True}, "activations",
               "flash attention stops storing the s×s attention matrices (no extra FLOPs)")
    for z in range(cfg.zero_stage + 1, 4):
        if cfg.n_gpus // (cfg.tp * cfg.pp) > 1:
            yield ("zero_stage", {"zero_stage": z}, "state",
                   f"ZeRO stage {z} shards {'optimizer' if z == 1 else 'optimizer + gradients' if z == 2 else 'all state'}"
                   " across data-parallel ranks (more communication)")
    if cfg.fp32_loss:
        yield ("fp32_loss", {"fp32_loss": False}, "logits", "compute the loss without an fp32 copy of the logits")
    if cfg.recompute == "none":
        yield ("recompute_selective", {"recompute": "selective"}, "activations",
               "selective recomputation recomputes the attention core (a few % more compute)")
    if cfg.micro_batch > 1:
        b = max_micro_batch(cfg)
        if b >= 1:
            yield ("micro_batch", {"micro_batch": b}, "activations",
                   f"micro-batch {cfg.micro_batch} → {b} (keep the global batch with gradient accumulation)")
    if cfg.master_weights:
        yield ("master_weights", {"master_weights": False}, "state",
               "drop the fp32 master copy (−4 bytes/param; bf16 cannot accumulate small updates, seed 000)")
    if cfg.recompute != "full":
        yield ("recompute_full", {"recompute": "full"}, "activations",
               "full recomputation keeps only each layer's input (+≈33% compute, seed 001)")
    for t in (2, 4, 8):
        if t > cfg.tp and cfg.model.n_heads % t == 0 and cfg.n_gpus % (t * cfg.pp) == 0:
            yield ("tp", {"tp": t}, "state",
                   f"tensor parallel {t} splits weights, activations and logits (needs fast intra-node links)")
            break
    g = min_gpus(cfg)
    if g is not None and g > cfg.n_gpus:
        yield ("n_gpus", {"n_gpus": g}, "state", f"{g} GPUs shard the state further at ZeRO stage {cfg.zero_stage}")
    # more GPUs together with a higher ZeRO stage: the only way out when state is replicated (stage 0 or one
    # data-parallel copy), where neither change helps alone
    best = None
    for z in range(max(cfg.zero_stage, 1), 4):
        gz = min_gpus(cfg, z)
        if gz is not None and (best is None or gz < best[0]):
            best = (gz, z)
    if best is not None and best[1] != cfg.zero_stage and best[0] > cfg.n_gpus:
        yield ("n_gpus_zero_stage", {"n_gpus": best[0], "zero_stage": best[1]}, "state",
               f"{best[0]} GPUs at ZeRO stage {best[1]} shard the state across data-parallel ranks")
    s = max_seq_len(cfg)
    if 0 < s < cfg.seq_len:
        yield ("seq_len", {"seq_len": s}, "activations", f"the longest sequence that fits is {s} tokens")


def advise(cfg: Config, max_steps: int = 4) -> dict:
    """Diagnosis and remedies. `fits` and `binding` come from the estimate; `remedies` lists every single change
    that makes the setup fit (with its new total), in the order tried; `best` is the first of them. When no single
    change is enough, `best` combines changes greedily (each step takes the candidate that lowers the per-GPU total
    most) until the setup fits, at most `max_steps` changes; `best` is None if even that fails."""
    rec = estimate(cfg)
    out = {"fits": rec["fits"], "binding": rec["binding"], "total_bytes": rec["total_bytes"],
           "gpu_memory_bytes": rec["gpu_memory_bytes"], "remedies": [], "best": None}
    if rec["fits"]:
        return out
    for name, change, term, why in _candidates(cfg):
        try:
            new = estimate(cfg.replace(**change))
        except ValueError:
            continue
        if new["fits"]:
            out["remedies"].append({"remedy": name, "change": change, "addresses": term, "why": why,
                                    "total_bytes": new["total_bytes"], "headroom_bytes": new["headroom_bytes"]})
    if out["remedies"]:
        r = out["remedies"][0]
        out["best"] = {"changes": [r["remedy"]], "change": dict(r["change"]), "total_bytes": r["total_bytes"],
                       "headroom_bytes": r["headroom_bytes"]}
        return out
    cur, steps, change = cfg, [], {}
    for _ in range(max_steps):
        best = None
        for name, ch, _term, _why in _candidates(cur):
            try:
                new_cfg = cur.replace(**ch)
                new = estimate(new_cfg)
            except ValueError:
                continue
            if best is None or new["total_bytes"] < best[2]["total_bytes"]:
                best = (name, ch, new, new_cfg)
        if best is None or best[2]["total_bytes"] >= estimate(cur)["total_bytes"]:
            break
        name, ch, new, cur = best
        steps.append(name)
        change.update(ch)
        if new["fits"]:
            out["best"] = {"changes": steps, "change": change, "total_bytes": new["total_bytes"],
                           "headroom_bytes": new["headroom_bytes"]}
            break
    return out
