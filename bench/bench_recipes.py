"""Issue 19's checks as tables (not a test): each published BF16/FP8 pair's speed-up against the predicted one, and
each published MoE run of data/published_runs_moe.csv and hybrid run of data/published_runs_hybrid.csv (out of sample:
no fit reads them) against its prediction.

    python bench/bench_recipes.py            # print Markdown
    python bench/bench_recipes.py --write    # also replace the "MoE and low precision" section of bench/RESULTS.md
"""
import argparse
import datetime as dt
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import test_recipes as TR  # noqa: E402  (the pairs and their sources live with their test)
from core import validation as V  # noqa: E402


def _runs_table(L: list, name: str) -> list:
    """Append a row per published run of data/`name` (measured / predicted step, fits) to L; return the ratios."""
    qs = []
    for r in V.read(ROOT / "data" / name):
        q, rec = TR._moe(r)
        qs.append(q)
        L.append(f"| {r.id} | {r.gpu} | {q:.2f} | {'yes' if rec['fits'] else 'NO'} |")
    return qs


def main(write: bool) -> str:
    L = ["## MoE and low precision", "",
         f"Command: `python bench/bench_recipes.py --write` · date: {dt.date.today().isoformat()}", "",
         "Published BF16 → FP8 speed-ups (fp8 tokens/s ÷ bf16 tokens/s of the same table, layout and model) against "
         "the predicted step ratio with the recipe the source states (`--fp8-recipe`); no constant is fitted to them.",
         "", "| bf16 run | recipe | published | predicted | error | source |", "|---|---|---|---|---|---|"]
    errs = []
    for base, recipe, pub, src in TR.FP8_PAIRS:
        pred = TR._speedup(base, recipe)
        errs.append(abs(pred / pub - 1))
        L.append(f"| {base} | {recipe} | {pub:.2f} | {pred:.2f} | {pred / pub - 1:+.1%} | {src} |")
    within = sum(e <= 0.10 for e in errs)
    L += ["", f"{within} of {len(errs)} pairs within 10 % (median error {statistics.median(errs):.1%}). The misses: "
          "torchtitan's rowwise rows run slower than BF16 (0.81–1.00) where torchao's own rowwise rows run faster "
          "(1.04–1.10) on the same hardware — one recipe, two sources that disagree; the August 2024 405B pair (1.62) "
          "changed more than the precision.", "",
          "Published MoE runs (BF16, Megatron-Core; data/published_runs_moe.csv), measured / predicted step:", "",
          "| run | gpu | measured / predicted | fits |", "|---|---|---|---|"]
    qs = _runs_table(L, "published_runs_moe.csv")
    ok = sum(abs(q - 1) <= 0.15 for q in qs)
    L += ["", f"{ok} of {len(qs)} within 15 % (median |error| {statistics.median(abs(q - 1) for q in qs):.1%}) — "
          "the target (every MoE run within 15 %) is not met. The token permutation is a step term (data/kernels.csv "
          "`permute`: the alltoall dispatcher's permute, chunk sort and their reverses, 16 bytes per element of each "
          "routed copy; derived, not fitted). GPT-OSS 120B (24 rows) runs 1.24–1.5× slower than predicted on every GPU "
          "generation (64-wide heads with sinks, 128 small experts with top-4 routing). The Megatron-MoE-ModelZoo rows "
          "are read with the FLOP convention of their code (Megatron-LM counts half the attention matrix since "
          "2025-03-06) and, where the table prints it, the step time: three of the five 4K H100 rows are within 15 %, "
          "the long-context ones (16K–128K, context parallel) 0.60–0.90 of the prediction (0.57–0.73 with the attention "
          "rates before this round: core/steptime.attention_length_factor narrows the gap, the rest is not found). Load imbalance and capacity are inputs, but these benchmarks route "
          "forced-balanced and dropless: imbalance 1. Four runs are predicted not to fit (GPT-OSS on H100 at "
          "micro-batch 4, pp 4; DeepSeek-V3 on GB200 and Qwen3 on GB300 with vp 4–12; Qwen3 on 256 H100 at pp 32, vp "
          "3): the in-flight activations of interleaved schedules (Megatron's warm-up count) and what DeepEP / "
          "Megatron free are the likely gaps. Fragmentation is now counted on the per-step tensors only "
          "(core/memory.overhead_bytes), which made four GPT-OSS B200 rows, DeepSeek-V3 on GB300 and two Qwen3 H100 rows fit (a "
          "third, 'FSDP On', is now read as ZeRO-3: Megatron-FSDP).", "",
          "Published hybrid Mamba-2 runs (Nemotron 3 Nano 30B-A3B, FP8 / MXFP8, Megatron-Bridge; "
          "data/published_runs_hybrid.csv), measured / predicted step:", "",
          "| run | gpu | measured / predicted | fits |", "|---|---|---|---|"]
    hq = _runs_table(L, "published_runs_hybrid.csv")
    L += ["", f"{sum(abs(q - 1) <= 0.15 for q in hq)} of {len(hq)} within 15 %. Its 23 MoE layers of 128 experts "
          "1,856 wide with top-6 routing are the fine-grained MoE the GPT-OSS rows miss the same way (1.2–1.4×); the "
          "Mamba-2 mixers (in_proj/out_proj GEMMs, the SSD core at the attention kernel's rate: no published SSD "
          "kernel efficiency) are a quarter of the active parameters. The H100 run is predicted not to fit at 80 GB: the "
          "FP8 weight copies and the MoE tensors at micro-batch 1, 8K are counted as Transformer Engine and a dropless "
          "dispatcher keep them; what Megatron frees early is not in the ledger.", ""]
    text = "\n".join(L) + "\n"
    if write:
        sys.path.insert(0, str(ROOT / "bench"))
        from results import write_section
        write_section("MoE and low precision", text)
    return text


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true")
    print(main(ap.parse_args().write))
