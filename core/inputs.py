"""The input vocabulary: every input's name, kind, choices, default, unit, bounds and one-line help, and the
validation rules as rows. The one owner of these facts (docs/architecture); everything else derives from here:

- `core.estimate.Config` (fields and defaults: the inputs whose `target` is "config"),
- `core.estimate.check` and the reason codes/texts (`RULES` → `REASONS`),
- the CLI's flags and their help (`core.cli`), the sweep grammar's types (`core.spec`), the DuckDB allow-lists
  (`core.db`), and the inputs table of docs/inputs.md (a test keeps it in step).

A new input is one `Input` row here plus the formula that reads it.

Targets: "model" inputs choose or shape the model (`core.model`), "gpu" inputs the accelerator
(`core.hardware`), "preset" inputs expand into other inputs (recipe → dtypes and optimizer; overhead → bytes and
fraction; explicit inputs win), "config" inputs are fields of `Config` and columns of `evaluate`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from . import energy as EN
from . import goodput as GP
from . import lowp as LP
from . import profiles as PF
from . import recompute as RC
from . import schedule as SC
from . import tables as T
from . import vec as VE
from .model import ARCH_FIELDS, ARCH_RULES

MAX_INT = 2**31 - 1  # bound on integer inputs: beyond it numpy's int32 columns overflow


@dataclass(frozen=True)
class Input:
    """One input of the vocabulary."""

    name: str
    kind: str  # "int" | "float" | "bool" | "choice" | "str"
    default: Any  # the value when not given (None: optional, or chosen elsewhere — help says by what)
    unit: str  # SI unit, "count", "fraction (0–1)", or "" for choices, flags and names
    help: str
    group: str  # CLI/doc section: model, architecture, accelerator, layout, recipe, activations, memory, run, measurement
    target: str = "config"  # "config" | "model" | "gpu" | "preset"
    choices: tuple = ()
    lo: float | None = None  # inclusive bounds checked when the input is read (CLI, spec, Config)
    hi: float | None = None
    auto: bool = False  # also accepts the word "auto" (mfu: take time from the predicted step)
    # a text input's parser (raises ValueError naming the field and the entry): the rules, sweeps and error messages
    # all check the text with it
    parse: Callable[[str], Any] | None = None
    # other names a choice accepts, mapped to the choice before any check (framework: a stack's name → its profile,
    # core/profiles.canonical); every entry point reads the value through it (canonical_inputs)
    canon: Callable[[Any], Any] | None = None
    ui: "Widget | None" = None  # how the app draws it (WIDGETS below); None: not a widget (hf_config: an upload)

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def describe(self) -> str:
        """One line for --help and the docs: meaning, unit or choices, default."""
        bits = [self.help]
        if self.auto:
            bits.append("or auto")
        if self.choices:
            bits.append("one of " + ", ".join(map(str, self.choices)))
        elif self.unit:
            bits.append(f"unit: {self.unit}")
        if self.default is not None:
            d = self.default
            bits.append(f"default: {str(d).lower() if isinstance(d, bool) else d}")
        return "; ".join(bits)


@dataclass(frozen=True)
class Widget:
    """How the app draws an input: its URL key (a page prepends its prefix), its label, and the widget's units and
    range — in the widget's units, `scale` core units each (tokens in billions: 1e9; a fraction in percent: 0.01).
    Bounds default to the input's own (`lo`, `hi`) divided by `scale`; a widget narrower than the input says so."""

    key: str
    label: str
    scale: float = 1.0
    lo: float | None = None
    hi: float | None = None
    step: float | None = None
    radio: bool = False  # a choice drawn as a horizontal radio (few options)
    multi: tuple = ()  # a "str" input drawn as a multiselect of these names, joined by commas
    help: str = ""  # the widget's help when it differs from the input's (the input's help otherwise)


_GiB = "bytes (1 GiB = 2^30)"
INPUTS: tuple[Input, ...] = (
    # --- where the model comes from --------------------------------------------------------------------------------
    Input("model", "str", None, "", "preset name (python -m core list); or give n_params, hf_config, or the "
          "architecture fields", "model", "model"),
    Input("n_params", "float", None, "count (parameters)", "raw parameter count: state is priced from it, "
          "activations from a stand-in GPT-3 shape of that size", "model", "model", lo=1.0, hi=1e15),
    Input("hf_config", "str", None, "", "path to a local Hugging Face config.json", "model", "model"),
    # --- architecture (override a preset's field, or describe a model) ---------------------------------------------
    Input("n_layers", "int", None, "count", "transformer blocks", "architecture", "model", lo=1, hi=100_000),
    Input("d_model", "int", None, "count (hidden width)", "hidden size h", "architecture", "model", lo=1, hi=1 << 20),
    Input("n_heads", "int", None, "count", "attention heads a", "architecture", "model", lo=1, hi=1 << 16),
    Input("n_kv_heads", "int", None, "count", "key/value heads (GQA; = n_heads for multi-head attention)",
          "architecture", "model", lo=1, hi=1 << 16),
    Input("d_ff", "int", None, "count (MLP width)", "MLP hidden width (default 4·d_model)", "architecture", "model",
          lo=1, hi=1 << 22),
    Input("vocab_size", "int", None, "count (tokens)", "vocabulary size V", "architecture", "model", lo=1, hi=1 << 24),
    Input("mlp", "choice", None, "", "MLP kind: gelu (2 matrices), swiglu or geglu (gated, 3 matrices)", "architecture",
          "model", T.MLP_KINDS),
    Input("norm", "choice", None, "", "normalisation layer (nonparametric: LayerNorm without weight or bias, OLMo)", "architecture", "model", T.NORM_KINDS),
    Input("bias", "choice", None, "", "which linear layers carry biases", "architecture", "model", T.BIAS_KINDS),
    Input("dropout", "bool", None, "", "dropout layers present (their 1-byte masks are kept)", "architecture",
          "model"),
    Input("tied_embeddings", "bool", None, "", "LM head shares the input embedding", "architecture", "model"),
    Input("position", "choice", None, "", "position encoding", "architecture", "model", T.POSITION_KINDS),
    Input("max_position", "int", None, "count (tokens)", "rows of a learned position table", "architecture", "model",
          lo=0, hi=1 << 26),
    Input("n_experts", "int", None, "count", "MoE experts per layer (1 = dense)", "architecture", "model",
          lo=1, hi=1 << 16),
    Input("top_k", "int", None, "count", "MoE experts each token is routed to", "architecture", "model",
          lo=1, hi=1 << 16),
    Input("head_dim", "int", None, "count (per head)", "query/key width per head when it is not d_model/n_heads "
          "(Gemma, Qwen3, Mistral NeMo; MLA: nope + rope part); 0 = d_model/n_heads", "architecture", "model",
          lo=0, hi=1 << 16),
    Input("v_head_dim", "int", None, "count (per head)", "value width per head (MLA); 0 = head_dim", "architecture",
          "model", lo=0, hi=1 << 16),
    Input("attention", "choice", None, "", "attention kind: standard (MHA/GQA/MQA by n_kv_heads) or mla (DeepSeek "
          "multi-head latent attention)", "architecture", "model", T.ATTENTION_KINDS),
    Input("q_lora_rank", "int", None, "count", "MLA: query compression rank (0 = none)", "architecture", "model",
          lo=0, hi=1 << 20),
    Input("kv_lora_rank", "int", None, "count", "MLA: compressed key/value width", "architecture", "model",
          lo=0, hi=1 << 20),
    Input("qk_rope_head_dim", "int", None, "count (per head)", "MLA: the decoupled RoPE part of head_dim",
          "architecture", "model", lo=0, hi=1 << 16),
    Input("qk_norm", "choice", None, "", "RMSNorm on queries and keys: per_head (Qwen3, Gemma 3), full (OLMo 2)",
          "architecture", "model", T.QK_NORMS),
    Input("norms_per_layer", "int", None, "count", "norms per block: 2 (pre-norms), 4 (Gemma 2/3 post-norms too), "
          "1 (one norm for parallel attention and MLP, Falcon 7B)", "architecture", "model", lo=1, hi=4),
    Input("embedding_norm", "bool", None, "", "a LayerNorm after the embedding (BLOOM)", "architecture", "model"),
    Input("moe_d_ff", "int", None, "count (MLP width)", "routed expert width when it differs from d_ff "
          "(DeepSeek, Qwen MoE); 0 = d_ff", "architecture", "model", lo=0, hi=1 << 22),
    Input("n_shared_experts", "int", None, "count", "MoE experts every token also uses (DeepSeekMoE)",
          "architecture", "model", lo=0, hi=1 << 16),
    Input("shared_d_ff", "int", None, "count (MLP width)", "each shared expert's width; 0 = moe_d_ff",
          "architecture", "model", lo=0, hi=1 << 22),
    Input("shared_expert_gate", "bool", None, "", "a sigmoid gate on the shared expert (Qwen2-MoE)",
          "architecture", "model"),
    Input("n_dense_layers", "int", None, "count", "MoE: the first layers use a dense MLP of width d_ff "
          "(DeepSeek first_k_dense_replace)", "architecture", "model", lo=0, hi=100_000),
    Input("sliding_window", "int", None, "count (tokens)", "attention window (Mistral 7B v0.1, Gemma 2/3 local "
          "layers); 0 = none", "architecture", "model", lo=0, hi=MAX_INT),
    Input("global_every", "int", None, "count", "with a window: every k-th layer attends globally (Gemma 2: 2, "
          "Gemma 3: 6); 0 = every layer windowed", "architecture", "model", lo=0, hi=100_000),
    Input("n_mtp_layers", "int", None, "count", "multi-token prediction modules (DeepSeek-V3: 1): trained with the "
          "model, counted apart from n_params", "architecture", "model", lo=0, hi=64),
    Input("attention_sinks", "bool", None, "", "a learnable logit per head in the softmax's denominator (GPT-OSS): "
          "n_heads parameters per layer; flash kernels then compute windowed layers in full (core/steptime.py)",
          "architecture", "model"),
    Input("chunked_attention", "bool", None, "", "with a window: the sequence attends in block-diagonal causal chunks "
          "of sliding_window tokens (Llama 4's chunked attention), not a sliding band: a query sees the keys of its "
          "own chunk", "architecture", "model"),
    # hybrid Mamba-2 models (issue 19; core/model.py MAMBA_FIELDS): with mamba_layers = 0 the others are moot
    Input("mamba_layers", "int", None, "count", "layers with a Mamba-2 mixer (Nemotron-H, Falcon-H1, Granite 4); 0 = a "
          "transformer (every layer attention + MLP)", "architecture", "model", lo=0, hi=100_000),
    Input("attention_layers", "int", None, "count", "with mamba_layers > 0: layers with attention", "architecture",
          "model", lo=0, hi=100_000),
    Input("mlp_layers", "int", None, "count", "with mamba_layers > 0: layers with an MLP (or MoE) block",
          "architecture", "model", lo=0, hi=100_000),
    Input("mamba_heads", "int", None, "count", "Mamba-2 heads H; 0 = 2·d_model / mamba_head_dim (expand 2)",
          "architecture", "model", lo=0, hi=1 << 20),
    Input("mamba_head_dim", "int", None, "count (per head)", "Mamba-2 head width P; 0 = 64", "architecture", "model",
          lo=0, hi=1 << 16),
    Input("mamba_state", "int", None, "count (per channel)", "Mamba-2 state size N (d_state); 0 = 128",
          "architecture", "model", lo=0, hi=1 << 16),
    Input("mamba_groups", "int", None, "count", "Mamba-2 groups G sharing B and C (n_groups); 0 = 1", "architecture",
          "model", lo=0, hi=1 << 16),
    Input("mamba_conv", "int", None, "count (taps)", "Mamba-2 causal conv1d kernel K; 0 = 4", "architecture", "model",
          lo=0, hi=1024),
    Input("mamba_chunk", "int", None, "count (tokens)", "SSD chunk Q (chunk_size); 0 = 128", "architecture", "model",
          lo=0, hi=1 << 16),
    Input("mamba_norm", "bool", None, "", "the Mamba-2 mixer's gated RMSNorm before out_proj (Falcon-H1: none)",
          "architecture", "model"),
    Input("mamba_parallel", "bool", None, "", "the Mamba-2 mixer runs beside attention on the same normed input, "
          "in the same layers (Falcon-H1's parallel hybrid)", "architecture", "model"),
    # --- accelerator -------------------------------------------------------------------------------------------------
    Input("gpu", "str", "h100-sxm", "", "accelerator name (python -m core list), or 'custom' with "
          "peak_flops_per_s, gpu_memory_bytes and memory_bandwidth_bytes_per_s", "accelerator", "gpu"),
    Input("compute_dtype", "choice", "bf16", "", "dtype of the matmuls: picks the accelerator's peak",
          "accelerator", "config", T.COMPUTE_DTYPES),
    Input("peak_flops_per_s", "float", None, "FLOP/s", "override: the accelerator's dense peak for compute_dtype",
          "accelerator", "gpu", lo=1e6, hi=1e21),
    Input("gpu_memory_bytes", "float", None, "bytes (GB = 1e9)", "override: the memory a process can allocate on one "
          "accelerator (what a run fits against; the catalog's is the runtime's total capacity)",
          "accelerator", "gpu", lo=1e6, hi=1e15),
    Input("memory_bandwidth_bytes_per_s", "float", None, "bytes/s", "override: HBM bandwidth per accelerator",
          "accelerator", "gpu", lo=1e6, hi=1e16),
    Input("intra_node_bytes_per_s", "float", None, "bytes/s per GPU, one direction", "override: NVLink/xGMI "
          "bandwidth inside a node (default: the catalog's)", "accelerator", "gpu", lo=1e6, hi=1e15),
    Input("inter_node_bytes_per_s", "float", None, "bytes/s per GPU, one direction", "override: network (NIC) "
          "bandwidth between nodes, per GPU: the node's NICs together ÷ its GPUs (the catalog assumes one NIC a GPU "
          "on datacenter nodes, e.g. 8 × 400 Gb/s = 50 GB/s for H100; one 100 Gb/s NIC for 8 GPUs is 1.5625e9)",
          "accelerator", "gpu", lo=1e6, hi=1e15),
    # --- parallel layout and batch -------------------------------------------------------------------------------------
    Input("seq_len", "int", 4096, "count (tokens)", "sequence length s", "layout", lo=1, hi=MAX_INT),
    Input("micro_batch", "int", 1, "count (sequences)", "micro-batch b per GPU", "layout", lo=1, hi=MAX_INT),
    Input("document_tokens", "int", 0, "count (tokens)", "packed rows: the token-weighted mean length Σd²/Σd of the "
          "documents packed into one sequence, with attention kept inside each (document masking: flash-attn varlen, "
          "Transformer Engine THD, FlexAttention's document mask); attention's FLOPs and time follow the documents, "
          "as block-diagonal causal chunks (core/flops.document_window); 0 = each row is one document", "layout",
          lo=0, hi=MAX_INT),
    Input("n_gpus", "int", 8, "count", "accelerators in the job (default: one node of 8)", "layout", lo=1,
          hi=MAX_INT),
    Input("tp", "int", 1, "count", "tensor-parallel degree", "layout", lo=1, hi=MAX_INT),
    Input("pp", "int", 1, "count", "pipeline-parallel degree (stages)", "layout", lo=1, hi=MAX_INT),
    Input("virtual_stages", "int", 1, "count", "interleaved pipeline: model chunks per GPU (1 = plain 1F1B)",
          "layout", lo=1, hi=MAX_INT),
    Input("pp_schedule", "choice", "1f1b", "", "pipeline schedule: " + "; ".join(
          f"{k}: {w}" for k, w in SC.SCHEDULE_WORDS.items()) + " (the bubble, the activations in flight and the "
          "parameters each keeps: core/schedule.py; which a framework runs: data/frameworks.csv pp_schedules)",
          "layout", choices=SC.SCHEDULES),
    Input("zero_stage", "int", None, "", "ZeRO stage: 1 shards optimizer + master (Megatron's distributed optimizer), "
          "2 + gradients, 3 + weights (FSDP); by default the framework's (data/frameworks.csv default_zero_stage: "
          "megatron 1, fsdp 3, deepspeed 1, maxtext 3)",
          "layout", choices=(0, 1, 2, 3), lo=-MAX_INT, hi=MAX_INT),
    Input("sequence_parallel", "bool", False, "", "Megatron sequence parallelism with tensor parallelism (maxtext: "
          "always on with tp > 1, XLA splits its activations over the tensor axis)",
          "layout"),
    Input("cp", "int", 1, "count", "context-parallel degree: each GPU holds seq_len/cp tokens of a sequence "
          "(Llama 3 §3.3.2)", "layout", lo=1, hi=MAX_INT),
    Input("ep", "int", 1, "count", "expert-parallel degree: MoE experts split over ep ranks (Megatron-Core MoE "
          "parallel folding: drawn from the tp·cp·dp ranks of a pipeline stage)", "layout", lo=1, hi=MAX_INT),
    Input("etp", "int", 0, "count", "expert tensor-parallel degree (Megatron --expert-tensor-parallel-size): each "
          "expert's weights split over etp ranks; 0 = tp (Megatron's default)", "layout", lo=0, hi=MAX_INT),
    Input("moe_capacity_factor", "float", 0.0, "ratio", "MoE expert capacity ÷ the balanced share T·k/E (Megatron "
          "--moe-expert-capacity-factor): tokens beyond it are dropped; 0 = dropless", "layout", lo=0.0, hi=1024.0),
    Input("moe_load_imbalance", "float", 1.0, "ratio", "MoE routing: the busiest expert's tokens ÷ the balanced share "
          "(1 = balanced, as forced-balanced benchmarks route; it sets the expert GEMMs', the all-to-all's and the "
          "expert activations' size on the busiest rank, up to the capacity)", "layout", lo=1.0, hi=1024.0),
    Input("moe_pad_to_capacity", "bool", False, "", "MoE: every expert's input padded to the capacity (Megatron "
          "--moe-pad-expert-input-to-capacity): the experts compute capacity·T·k/E tokens each", "layout"),
    Input("moe_dispatcher", "choice", "alltoall", "", "MoE token dispatcher (Megatron --moe-token-dispatcher-type "
          "alltoall, or flex with --moe-flex-dispatcher-backend deepep | hybridep): across nodes DeepEP and HybridEP "
          "send a token once per destination node, where NVLink forwards it to that node's experts; NCCL's "
          "all-to-all sends every routed copy. einsum: GShard-style one-hot einsums dispatch to and combine from "
          "capacity buffers, grouped per sequence as MaxText's dense path groups them (sparse_matmul false): "
          "2·E·C·h FLOPs per token each, C = capacity_factor·S·k/E per sequence of S tokens, every buffer slot computed "
          "(padded to capacity); the masks' memory (b·S·E·C elements each) is not in the ledger. dense: every expert "
          "computes every token, weighted by the router's scores (0 where it was not chosen), as Hugging Face "
          "transformers' Llama 4 does (Llama4TextMoe: hidden_states.repeat(num_experts), torch.bmm over the experts; "
          "axolotl's linearized Llama 4 experts loop over every expert with every token): "
          "E/k × the routed experts' FLOPs, activations and copies, no expert parallelism", "layout",
          choices=T.MOE_DISPATCHERS),
    Input("pp_embedding_loss_slots", "bool", False, "", "pipeline split: the input embedding and the loss each "
          "take one layer's slot (Megatron --account-for-embedding-in-pipeline-split "
          "--account-for-loss-in-pipeline-split): ⌈(L + 2)/pp⌉ layers on the middle stages, one fewer on the first "
          "and last", "layout"),
    Input("pp_layout", "str", "", "", "pipeline split as Megatron-Core's --pipeline-model-parallel-layout: chunks "
          "separated by '|', each of E (embedding), t (decoder layer), m (MTP layer), L (loss and LM head), with "
          "'(…)*n' and 'x*n' repeats, chunk k on pipeline rank k mod pp (DeepSeek-V3 on 16 stages in Megatron-Bridge: "
          "'Etttt|(tttt|)*14tmL'); empty = ⌈n_layers/pp⌉ a stage", "layout", parse=SC.expand_layout),
    Input("moe_overlap", "bool", False, "", "MoE: the expert-parallel all-to-all of one micro-batch runs while "
          "another computes (Megatron --overlap-moe-expert-parallel-comm with --delay-wgrad-compute: the forward of "
          "one micro-batch and the backward of another scheduled together, 1F1B); the pipeline's warm-up and "
          "cool-down micro-batches stay exposed", "layout"),
    Input("dp_replicate", "int", 1, "count", "hybrid sharding (FSDP2 HSDP, ZeRO++ hpZ, MaxText dcn data axis): "
          "replicas of the sharded state; ZeRO shards over dp / dp_replicate ranks (torchtitan's "
          "data_parallel_replicate_degree)", "layout", lo=1, hi=MAX_INT),
    Input("dp_shard", "int", 0, "count", "hybrid sharding: ranks each replica shards over (torchtitan's "
          "data_parallel_shard_degree); dp_shard × dp_replicate = dp; 0 = dp / dp_replicate", "layout", lo=0,
          hi=MAX_INT),
    Input("gpus_per_node", "int", None, "count", "GPUs that share the fast intra-node link (default: the "
          "catalog's, e.g. 8 for a DGX/HGX node, 72 for GB200 NVL72); on a TPU, the chips of one ICI slice (default: "
          "the pod; a multi-slice run gives chips per slice, the slices talk over DCN)", "layout", lo=1, hi=MAX_INT),
    Input("global_batch", "int", None, "count (sequences)", "sequences per optimizer step: drives the predicted "
          "step (default: the smallest multiple of dp·micro_batch holding target_batch_tokens); with step_time_s a "
          "measured step gives the throughput", "layout", lo=1, hi=MAX_INT),
    Input("target_batch_tokens", "int", 4_194_304, "count (tokens)", "tokens per optimizer step the default global "
          "batch reaches: the smallest multiple of dp·micro_batch with at least this many tokens (2^22 ≈ 4M: Llama 3 "
          "starts at 4M tokens per step, §3.4.1; GPT-3 175B used 3.2M, Table 2.1); 0 = one micro-batch per "
          "data-parallel replica", "layout", lo=0, hi=MAX_INT),
    # --- framework (core/profiles.py, data/frameworks.csv) ----------------------------------------------------------
    Input("framework", "choice", "megatron", "", "the software stack that runs the step: " + PF.describe() + "; its "
          "profile sets fused or eager kernels, the attention kernel, overlap, host overhead and the layouts offered",
          "framework", choices=PF.FRAMEWORKS, canon=PF.canonical),
    Input("fp8_recipe", "choice", "none", "", "low-precision training as frameworks run it (data/lowp.csv): the linear "
          "layers' GEMMs at the fp8 (nvfp4: fp4) rate with their quantise / amax / transpose kernels and fp8 weight "
          "copies; attention core and LM head stay bf16. delayed | current (tensor-wise) | rowwise (torchao) | "
          "blockwise (DeepSeek-V3 1×128 / 128×128) | mxfp8 | nvfp4 (Blackwell). compute_dtype fp8 alone means delayed. "
          "MFU stays against compute_dtype's peak (bf16 by default, as published tables quote it)", "framework",
          choices=("none", "delayed", "current", "rowwise", "blockwise", "mxfp8", "nvfp4")),
    Input("fp8_param_gather", "bool", False, "", "gather parameters in fp8 (Megatron --fp8-param-gather): ZeRO-3 / "
          "distributed-optimizer gathers move 1 byte per parameter", "framework"),
    Input("fp8_attention", "bool", False, "", "attention core in fp8 under a low-precision recipe (Transformer Engine / "
          "Megatron --fp8-dot-product-attention: cuDNN's fp8 fused attention) at the fp8 peak × "
          f"{LP.FP8_ATTENTION_OVER_BF16:.2f} of bf16 attention's efficiency (FlashAttention-3 paper: fp8 "
          f"{LP.FA3_FP8_TFLOPS / 1e3:.1f} PFLOP/s against bf16 {LP.FA3_BF16_TFLOPS:.0f} TFLOP/s on H100); the saved "
          "attention tensors stay 16-bit in the ledger", "framework"),
    Input("bf16_first_layers", "int", 0, "count", "under a low-precision recipe, the first N transformer layers stay "
          "bf16 (Megatron --first-last-layers-bf16 --num-layers-at-start-in-bf16 N; Megatron-Bridge's "
          "bf16_with_fp8_current_scaling_mixed keeps 1 and 1): their linear GEMMs at the bf16 rate, no quantise "
          "kernels, no low-precision weight copies, their saved linear inputs 16-bit; with pp > 1 they sit on the "
          "first stage (its saved inputs count for the last stage's ledger too). Not modelled: their attention under "
          "fp8_attention and their parameters under fp8_param_gather stay the recipe's", "framework", lo=0,
          hi=MAX_INT),
    Input("bf16_last_layers", "int", 0, "count", "under a low-precision recipe, the last N transformer layers stay bf16 "
          "(Megatron --num-layers-at-end-in-bf16 N; Megatron-Bridge's NVFP4 recipes for Llama 3 8B and GPT-OSS 20B keep "
          "4); with pp > 1 they sit on the last stage", "framework", lo=0, hi=MAX_INT),
    Input("cuda_graphs", "choice", "none", "", "CUDA graphs (megatron): per_layer replays each layer's kernels from one "
          "launch (Megatron-Core --cuda-graph-impl local / transformer_engine, NeMo MCORE_CUDA_GRAPH): no kernel-launch "
          "host time; full_iteration captures the whole forward and backward (--cuda-graph-scope full_iteration, "
          "NeMo FULL_CUDA_GRAPH): nor the profile's per-step host time. Their memory (a few GB, Megatron-Bridge "
          "performance guide) is not counted", "framework", choices=("none", "per_layer", "full_iteration")),
    Input("compile", "bool", False, "", "torch.compile the layers (fsdp, deepspeed): Inductor fuses the elementwise "
          "work; megatron fuses by hand and maxtext always compiles, so it changes nothing there", "framework"),
    Input("attention_kernel", "choice", "auto", "", "the attention kernel: native (the chip's best: cuDNN / "
          "FlashAttention-3 class on Hopper and Blackwell, Transformer Engine, Pallas splash on TPU; PyTorch SDPA since "
          "torch 2.11 on sm90/sm100), fa2 (FlashAttention-2 class: PyTorch SDPA's flash backend before 2.11, "
          "flash-attn 2), flex (PyTorch FlexAttention: torchtitan's attn_type flex, NeMo AutoModel's attn flex; "
          "it skips the blocks a window masks, sinks or not), triton (FlashAttention in Triton, the "
          "FlashAttention-1-era kernel: llm-foundry's attn_impl "
          "triton, Megatron-DeepSpeed's --use-flash-attn-triton), auto (the framework's: megatron and maxtext native, "
          "fsdp and deepspeed fa2)", "framework", choices=T.ATTENTION_KERNELS),
    # --- recipe (model state) ------------------------------------------------------------------------------------------
    Input("recipe", "choice", "zero-16", "", "named recipe: sets weight_dtype, grad_dtype, master_weights, "
          "grad_accum_fp32 and optimizer unless given (bytes per parameter: python -m core list); the default's "
          "values are those inputs' own defaults", "recipe", "preset", tuple(T.RECIPES)),
    Input("optimizer", "choice", "adamw", "", "optimizer (its state bytes per parameter: core/tables.py)",
          "recipe", choices=T.OPTIMIZERS),
    Input("weight_dtype", "choice", "bf16", "", "dtype of the working weights", "recipe", choices=T.WEIGHT_DTYPES),
    Input("grad_dtype", "choice", "bf16", "", "dtype of the gradients (4 bytes, reduced in fp32, whatever this says "
          "where the fp32 parameter is the master: zero_convention fsdp or xla with an fp32 master)", "recipe",
          choices=T.WEIGHT_DTYPES),
    Input("master_weights", "bool", True, "", "keep an fp32 master copy of the weights (as 16-bit remainders of the "
          "bf16 weights under optimizer adamw_bf16: core/memory.master_bytes_per_param)", "recipe"),
    Input("grad_accum_fp32", "bool", False, "", "keep an fp32 gradient-accumulation buffer", "recipe"),
    Input("optimizer_in_backward", "bool", False, "", "step the optimizer inside the backward, each parameter as "
          "soon as its gradient is ready, and free that gradient (torchtune's optimizer_in_bwd; the frameworks that "
          "offer it: data/frameworks.csv): no gradient buffer is kept, only the largest parameter's gradient at a "
          "time; full training without gradient accumulation (the default global batch is then dp·micro_batch), "
          "no pipeline or expert parallelism, sharded (ZeRO-2/3) when data-parallel, no gradient clipping",
          "recipe"),
    Input("paged_optimizer", "bool", False, "", "a bitsandbytes paged optimizer (PagedAdamW, PagedAdamW8bit; Hugging "
          "Face optim paged_adamw_*; torchtune's single-device full fine-tunes): the moments live in CUDA unified "
          "memory, which the driver evicts to host memory when the device runs short (Dettmers et al. 2023, QLoRA "
          "§2), so they never make the run fail to fit; the share the device cannot hold is paged in for its update "
          "and out again every step, over the host link", "recipe"),
    Input("fp32_loss", "bool", False, "", "cross-entropy in fp32 (an fp32 copy of the logits is kept)", "recipe"),
    # --- what trains (issue 12) ------------------------------------------------------------------------------------
    Input("training", "choice", "full", "", "full: every parameter trains; lora: frozen base + rank-r adapters "
          "(Hu et al. 2021); qlora: LoRA on a 4-bit NF4 base with double quantization (Dettmers et al. 2023)",
          "fine-tuning", choices=T.TRAINING_MODES),
    Input("lora_rank", "int", 16, "count", "LoRA rank r: each adapted d_in×d_out matrix gets r·(d_in + d_out) "
          "trainable parameters (alpha only scales them: no bytes)", "fine-tuning", lo=1, hi=1 << 20),
    Input("lora_targets", "choice", "all", "", "which matrices carry adapters: qv (W_q, W_v: the LoRA paper), "
          "attention (q, k, v, o), all (also every MLP and expert matrix: QLoRA)", "fine-tuning",
          choices=T.LORA_TARGETS),
    Input("base_dtype", "choice", None, "", "storage of the frozen base under LoRA (nf4, int8: the blocks' linear "
          "weights quantised, the rest 16-bit); default: nf4 for qlora, else weight_dtype", "fine-tuning",
          choices=T.BASE_DTYPES),
    Input("double_quant", "bool", True, "", "NF4 with double quantization of its constants: 4.127 instead of 4.5 "
          "bits per base weight (QLoRA §3)", "fine-tuning"),
    Input("frozen_frac", "float", 0.0, "fraction (0–1)", "full training: the share of the parameters that is "
          "frozen (no gradients, optimizer state or master copy)", "fine-tuning", lo=-1e18, hi=1e18),
    # --- activations -----------------------------------------------------------------------------------------------------
    Input("recompute", "choice", "none", "", "activation recomputation: selective = the attention core "
          "(Korthikanti §5), full = keep only each layer's input", "activations", choices=T.RECOMPUTE_MODES),
    Input("recompute_modules", "str", "", "", "with recompute selective: Megatron's --recompute-modules, comma "
          "separated (" + ", ".join(RC.MODULE_NAMES) + "); empty = the framework's selective (Megatron core_attn, "
          "torchtitan per-op SAC, MaxText minimal)", "activations", parse=RC.parse_modules),
    Input("recompute_layers", "int", 0, "count", "with recompute full: recompute only K layers of each pipeline stage "
          "(Megatron --recompute-method block --recompute-num-layers K; per model chunk with virtual stages); 0 = "
          "every layer", "activations", lo=0, hi=MAX_INT),
    Input("remat_policy", "choice", "none", "", "MaxText's remat_policy (what each layer saves; the rest is "
          "recomputed); replaces recompute when given; none = not given", "activations", choices=RC.REMAT_NAMES),
    Input("remat_custom", "str", "", "", "with remat_policy custom: MaxText's per-tensor places, 'name=where' comma "
          "separated (where: " + ", ".join(RC.CUSTOM_WHERE) + "; names: " + ", ".join(RC.CUSTOM_NAMES) + "; MLA's, "
          "the indexer's and engram's are not modelled); unnamed ones as base.yml: decoder_layer_input device "
          "(never remat), the rest remat", "activations", parse=RC.parse_custom),
    Input("sac_saves_all_to_all", "bool", True, "", "with recompute selective under per-op SAC (the fsdp profile's "
          "selective: torchtitan) and expert parallelism: the save list keeps the MoE dispatch and combine "
          "all-to-alls' outputs, so the experts' tokens are kept as those outputs and the all-to-alls do not rerun "
          "in the backward (torchtitan since PR #1672, 2025-09-06, for DeepSeek-V3 and Llama 4, GPT-OSS from its "
          "enablement, every model since PR #2357, 2026-03-23); false: the all-to-alls rerun in the backward and "
          "their outputs are not kept (torchtitan's Qwen3 before 2026-03-23, DeepSeek-V3 before 2025-09-06)",
          "activations"),
    Input("distribute_saved_activations", "bool", False, "", "with recompute full: each tensor-parallel rank keeps "
          "1/tp of every checkpointed layer input and all-gathers it before the recompute (Megatron-LM "
          "--distribute-saved-activations, DeepSpeed activation checkpointing partition_activations, metaseq "
          "--distribute-checkpointed-activations); needs tp > 1, and Megatron refuses it with sequence parallelism, "
          "which splits the input already", "activations"),
    Input("activation_offload", "bool", False, "", "move the activations kept for the backward to host memory "
          "(Megatron --cpu-offloading, torchtitan/MaxText activation offload): transfers over the host link, "
          "overlapped with compute", "activations"),
    Input("activation_offload_layers", "int", 0, "count", "with activation_offload: only K of each pipeline stage's "
          "layers move their activations to the host (Megatron --cpu-offloading-num-layers K); 0 = every layer",
          "activations", lo=0, hi=MAX_INT),
    Input("chunked_loss", "bool", False, "", "the LM head and cross-entropy run in chunks of tokens and never "
          "hold the whole logits (Liger FusedLinearCrossEntropy, torchtitan/MaxText chunked loss): one 4,096-token "
          "chunk's logits are kept instead of s·b", "activations"),
    Input("act_fp8_store", "bool", False, "", "keep the MLP activation's input in fp8 for the backward (Megatron-Core "
          "activation_func_fp8_input_store, MLPerf's FP8_ACT): 1 byte per element of the gate/up output instead of "
          "the activation dtype's; needs a low-precision recipe", "activations"),
    Input("flash_attention", "bool", True, "", "flash attention (no s×s matrices stored)", "activations"),
    Input("profile", "choice", None, "", "the kernels the step runs: fused (Megatron, XLA, torch.compile, or "
          "Transformer Engine's / Liger's kernels under FSDP) or eager PyTorch (Hugging Face); it sets the tensors "
          "kept, the bytes the elementwise ops move and the kernels launched; default: the framework's",
          "activations", choices=T.PROFILES),
    # --- memory overhead ---------------------------------------------------------------------------------------------------
    Input("overhead", "choice", "realistic", "", "overhead preset: none, or realistic (1.5 GiB + 10 % "
          "fragmentation); sets overhead_fixed_bytes and fragmentation_frac unless given; the default's values are "
          "those inputs' own defaults", "memory", "preset", tuple(T.OVERHEADS)),
    Input("overhead_fixed_bytes", "float", T.OVERHEADS["realistic"].overhead_fixed_bytes, _GiB, "fixed memory per "
          "GPU (CUDA context, NCCL buffers; default: the realistic preset's); GPUs only: XLA on TPU plans HBM "
          "statically, with no CUDA context and no caching-allocator fragmentation", "memory", lo=-1e18, hi=1e18),
    Input("fragmentation_frac", "float", T.OVERHEADS["realistic"].fragmentation_frac, "fraction (0–1)", "allocator "
          "fragmentation as a share of the tensors allocated every step: activations, logits, gathered buffers "
          "(default: the realistic preset's); a risk, not a need: it moves the total, the headroom and the margins, "
          "while fits counts what the run allocates (a setup that fits only without it fits tightly)", "memory",
          lo=-1e18, hi=1e18),
    Input("offload", "choice", "none", "", "host (CPU) offload: optimizer = gradients, master copy and moments "
          "(ZeRO-Offload); optimizer_params = the weights too (ZeRO-Infinity, ZeRO-3)", "memory",
          choices=T.OFFLOAD_MODES),
    Input("host_memory_bytes", "float", None, "bytes per node (GB = 1e9)", "host memory a node offers for "
          "offloaded state (checked when given: host_fits)", "memory", lo=0.0, hi=1e18),
    Input("zero_convention", "choice", None, "", "how ZeRO's buffers are counted: paper (ZeRO Fig. 1, none), "
          "deepspeed (its estimators: full 16-bit grads at ZeRO-1/2, the largest gathered layer at ZeRO-3), fsdp "
          "(two gathered blocks + one block's gradients at ZeRO-3; the fp32 parameter is the master, fp32 grads), "
          "xla (MaxText: fp32 parameters as the master, fp32 grads, no buffers); default: the framework's "
          "(megatron paper, fsdp fsdp, deepspeed deepspeed, maxtext xla)", "memory",
          choices=T.ZERO_CONVENTION_NAMES),
    # --- run: FLOPs, time, cost ----------------------------------------------------------------------------------------------
    Input("attention_flops", "choice", "full", "", "how attention FLOPs count: full (12·L·h·s per token), causal "
          "(half), none (6N only)", "run", choices=T.ATTENTION_FLOPS),
    Input("mfu", "float", "auto", "fraction (0–1)", "model FLOPs utilisation for time and cost: auto (the default) "
          "takes them from the predicted step; a number overrides it", "run", lo=-1e18, hi=1e18, auto=True),
    Input("dp_overlap", "bool", None, "", "data-parallel communication overlaps the compute (PyTorch DDP/FSDP, "
          "Megatron --overlap-grad-reduce, DeepSpeed overlap_comm, XLA's scheduler); default: the framework's "
          "(DeepSpeed: ZeRO-3 only); a framework whose gradient all-reduce is exposed (maxtext: data/frameworks.csv "
          "grad_allreduce) overlaps only its ZeRO-3 gathers", "run"),
    Input("tp_overlap", "bool", None, "", "tensor-parallel communication overlaps the GEMMs (Megatron "
          "--tp-comm-overlap, torchtitan async TP: the forward's collectives only, data/frameworks.csv "
          "tp_overlap_scope; XLA collective matmul); default: the framework's (maxtext on, the others off)", "run"),
    Input("collective_latency_s", "float", None, "s", "fixed cost of one collective (default: the chip family's, "
          "data/efficiency.csv)", "run", lo=0.0, hi=1.0),
    Input("tokens", "float", 1e12, "count (tokens)", "training tokens", "run", lo=-1e18, hi=1e30),
    Input("price_per_gpu_hour", "float", None, "USD per GPU-hour", "price (default: the accelerator's catalog "
          "price)", "run", lo=0.0, hi=1e9),
    Input("price_tier", "choice", "on_demand", "", "which price: on_demand (the catalog's), reserved or spot "
          "(data/prices.csv, dated and sourced; spot adds preemptions to the failures); price_per_gpu_hour wins",
          "run", choices=("on_demand", "reserved", "spot")),
    Input("preemption_rate_per_gpu_hour", "float", 0.175 / (730 * 8), "1/GPU-hour", "spot preemptions per GPU-hour "
          "(default: AWS Spot Instance Advisor's 15–20 %-a-month band for p5, 8 GPUs per instance)", "run", lo=0.0,
          hi=1.0),
    Input("time_overhead_frac", "float", 0.0, "fraction", "extra wall time for checkpoints, restarts, evaluation",
          "run", lo=-1e18, hi=1e18),
    # --- failures, checkpoints, restarts (core/goodput.py) ------------------------------------------------------
    Input("failure_rate_per_gpu_hour", "float", GP.LLAMA3_FAILURE_RATE, "1/GPU-hour", "job interruptions per GPU-hour (default: "
          "Llama 3's 419 unexpected interruptions in 54 days on 16,384 H100, arXiv:2407.21783 §3.3.4); 0 = no failures",
          "run", lo=0.0, hi=1.0),
    Input("storage_bytes_per_s", "float", GP.LLAMA3_STORAGE_BYTES_PER_S, "bytes/s", "checkpoint write bandwidth of the storage (default: Llama "
          "3's Tectonic, 2 TB/s sustained)", "run", lo=1.0, hi=1e16),
    Input("restart_s", "float", GP.RESTART_S, "s", "time from a failure to training again, not counting lost work (default: "
          "5 min, Kokolis et al. 2024)", "run", lo=0.0, hi=1e7),
    Input("checkpoint_interval_s", "float", 0.0, "s", "compute time between checkpoints; 0 = Daly's optimum", "run",
          lo=0.0, hi=1e9),
    # --- energy and carbon (core/energy.py; defaults: the Llama papers' convention, Touvron et al. 2023 §6) ---------
    Input("gpu_power_w", "float", None, "W", "board power under load (default: the catalog's rated board power, "
          "data/accelerators.csv)", "run", lo=0.0, hi=1e5),
    Input("power_draw_frac", "float", 1.0, "fraction", "share of the board power drawn on average (1 = the rated figure, "
          "as the Llama papers count)", "run", lo=0.0, hi=2.0),
    Input("node_overhead_frac", "float", 0.0, "fraction", "the node's CPUs, memory, NICs and switches as a share of the "
          "GPUs' power (0: GPUs only, the Llama convention)", "run", lo=0.0, hi=10.0),
    Input("pue", "float", EN.LLAMA_PUE, "ratio", "power usage effectiveness of the data centre (1.1: Llama 1 §6)", "run",
          lo=1.0, hi=5.0),
    Input("carbon_kg_per_kwh", "float", EN.US_CARBON_KG_PER_KWH, "kg CO2e / kWh", "grid carbon intensity (0.385: the US national average "
          "the Llama papers use; world average 0.475, IEA 2019 via CodeCarbon)", "run", lo=0.0, hi=5.0),
    Input("conventions", "choice", "planner", "", "defaults: planner (what a run launches with: flash attention, ZeRO-1, "
          "the realistic overhead, 4M-token steps, time from the predicted step; the default) or paper (the published "
          "ledgers' conventions — no flash, ZeRO-0, no overhead, seq 2048 on 1 GPU, 50 % MFU — so their numbers "
          "reproduce); explicit inputs win over either", "run", "preset", tuple(T.CONVENTIONS)),
    # --- calibration (core/calibrate.py: --calibrate fits these to a user's measured runs) ----------------------------
    Input("efficiency_scale", "float", 1.0, "factor", "calibration: every kernel rate (GEMM, attention, HBM) and "
          "the host's work (launches, hooks, CPU optimizer) × this; 1 = the published constants; --calibrate fits it "
          "to your measured runs", "calibration", lo=0.05, hi=20.0),
    Input("network_scale", "float", 1.0, "factor", "calibration: every link's bandwidth (host link included) × this; "
          "1 = the catalog's; one measured run sets it equal to efficiency_scale",
          "calibration", lo=0.01, hi=100.0),
    Input("interval_low", "float", 0.0, "fraction", "calibration: the 80 % interval's lower bound on the step time "
          "as a ratio to the point (e.g. 0.93); 0 = the profile's, from its leave-one-source-out errors",
          "calibration", lo=0.0, hi=1.0),
    Input("interval_high", "float", 0.0, "fraction", "calibration: the interval's upper bound as a ratio (e.g. 1.08); "
          "0 = the profile's", "calibration", lo=0.0, hi=100.0),
    # --- measurement ---------------------------------------------------------------------------------------------------------
    Input("tokens_per_second", "float", None, "tokens/s (whole job)", "measured throughput: gives the achieved "
          "MFU and HFU", "measurement", lo=0.0, hi=1e18),
    Input("step_time_s", "float", None, "s", "measured time of one optimizer step (needs global_batch)",
          "measurement", lo=0.0, hi=1e12),
    Input("achieved_flops_per_s", "float", None, "FLOP/s per GPU", "measured hardware FLOP/s per GPU, "
          "recomputation included (what Megatron-LM logs as TFLOP/s per GPU): gives the throughput", "measurement",
          lo=0.0, hi=1e18),
)
# The app's widget for each input (`Widget`): URL key, label, units and range. The one owner of these facts: the
# pages draw an input by its name (`ui.state.Page.input`), and a test walks the UI for restated keys and defaults.
_B, _PCT, _G = 1e9, 0.01, 1e9
WIDGETS = {
    "model": Widget("model", "Preset"),
    "n_params": Widget("params", "Parameters (billions)", _B, lo=0.001, hi=1e6, step=1.0),
    "n_layers": Widget("layers", "layers"), "d_model": Widget("dmodel", "d_model (width)"),
    "n_heads": Widget("heads", "attention heads"), "n_kv_heads": Widget("kv", "KV heads (GQA; = heads for MHA)"),
    "d_ff": Widget("dff", "d_ff (MLP width)"), "vocab_size": Widget("vocab", "vocabulary"),
    "mlp": Widget("mlp", "MLP"), "norm": Widget("norm", "norm"), "bias": Widget("bias", "biases"),
    "dropout": Widget("drop", "dropout (masks kept for backward)"),
    "tied_embeddings": Widget("tied", "tied input/output embeddings"), "position": Widget("pos", "positions"),
    "max_position": Widget("maxpos", "max positions (learned table)"), "n_experts": Widget("experts", "experts (MoE)"),
    "top_k": Widget("topk", "experts per token"), "head_dim": Widget("hdim", "head_dim (0 = d_model / heads)"),
    "v_head_dim": Widget("vhdim", "value head_dim (0 = head_dim)"), "attention": Widget("attk", "attention kind"),
    "q_lora_rank": Widget("qrank", "MLA query rank"), "kv_lora_rank": Widget("kvrank", "MLA KV rank"),
    "qk_rope_head_dim": Widget("rope", "MLA RoPE head_dim"), "qk_norm": Widget("qkn", "QK-norm"),
    "norms_per_layer": Widget("npl", "norms per block"), "embedding_norm": Widget("embn", "embedding LayerNorm"),
    "moe_d_ff": Widget("moeff", "routed expert width (0 = d_ff)"),
    "n_shared_experts": Widget("shared", "shared experts"), "shared_d_ff": Widget("sharedff", "shared expert width"),
    "shared_expert_gate": Widget("sgate", "shared-expert gate"), "n_dense_layers": Widget("dense", "first dense layers"),
    "sliding_window": Widget("window", "sliding window (0 = none)"),
    "global_every": Widget("gevery", "every k-th layer global (0 = all windowed)"),
    "n_mtp_layers": Widget("mtp", "multi-token prediction modules"),
    "attention_sinks": Widget("sinks", "attention sinks"),
    "chunked_attention": Widget("chunked", "window as chunks (Llama 4)"),
    "mamba_layers": Widget("mamba", "Mamba-2 layers (0 = transformer)"),
    "attention_layers": Widget("attnl", "attention layers (hybrid)"), "mlp_layers": Widget("mlpl", "MLP layers (hybrid)"),
    "mamba_heads": Widget("mheads", "Mamba-2 heads (0 = 2·d_model/64)"),
    "mamba_head_dim": Widget("mhdim", "Mamba-2 head width (0 = 64)"),
    "mamba_state": Widget("mstate", "Mamba-2 state N (0 = 128)"), "mamba_groups": Widget("mgroups", "Mamba-2 groups (0 = 1)"),
    "mamba_conv": Widget("mconv", "Mamba-2 conv kernel (0 = 4)"), "mamba_chunk": Widget("mchunk", "SSD chunk (0 = 128)"),
    "mamba_norm": Widget("mnorm", "Mamba-2 gated norm"), "mamba_parallel": Widget("mpar", "Mamba-2 beside attention"),
    "gpu": Widget("gpu", "Accelerator"), "compute_dtype": Widget("cdt", "Compute dtype"),
    "peak_flops_per_s": Widget("c_tflops", "custom: dense TFLOP/s", 1e12, lo=0.001, hi=1e6),
    "gpu_memory_bytes": Widget("c_mem", "custom: allocatable memory (GB)", _G, lo=0.001, hi=1e5),
    "memory_bandwidth_bytes_per_s": Widget("c_bw", "custom: HBM TB/s", 1e12, lo=0.001, hi=1e4),
    "intra_node_bytes_per_s": Widget("c_intra", "intra-node GB/s per GPU (NVLink/xGMI)", _G, lo=0.001, hi=1e5),
    "inter_node_bytes_per_s": Widget("c_inter", "inter-node GB/s per GPU (NIC)", _G, lo=0.001, hi=1e5),
    "seq_len": Widget("seq", "Sequence length", step=1024), "micro_batch": Widget("mb", "Micro-batch"),
    "n_gpus": Widget("gpus", "GPUs"), "tp": Widget("tp", "TP"), "pp": Widget("pp", "PP"),
    "document_tokens": Widget("doctok", "Packed rows: mean document length (0 = unpacked)"),
    "virtual_stages": Widget("vs", "Interleaved virtual stages"), "pp_schedule": Widget("ppsched", "Pipeline schedule"),
    "zero_stage": Widget("zero", "ZeRO stage"),
    "sequence_parallel": Widget("sp", "Sequence parallelism (with TP)"), "cp": Widget("cp", "CP"),
    "ep": Widget("ep", "EP"), "etp": Widget("etp", "expert TP (0 = tp)"),
    "moe_capacity_factor": Widget("moecf", "MoE capacity factor (0 = dropless)", step=0.25),
    "moe_load_imbalance": Widget("moeimb", "MoE busiest expert ÷ mean (1 = balanced)", step=0.1),
    "moe_pad_to_capacity": Widget("moepad", "MoE pad to capacity"),
    "moe_overlap": Widget("moeov", "MoE all-to-all overlapped (1F1B)"),
    "moe_dispatcher": Widget("moedisp", "MoE dispatcher"),
    "pp_embedding_loss_slots": Widget("ppslots", "Embedding and loss take a pipeline slot each"),
    "pp_layout": Widget("pplayout", "Pipeline layout (Megatron's --pipeline-model-parallel-layout)"),
    "gpus_per_node": Widget("gpn", "GPUs per node (blank = catalog)"),
    "dp_replicate": Widget("dprep", "HSDP replicas (dp_replicate)"),
    "dp_shard": Widget("dpshard", "HSDP shard degree (0 = dp / replicas)"),
    "framework": Widget("fw", "Framework"),
    "compile": Widget("compile", "torch.compile (fsdp, deepspeed)"),
    "fp8_recipe": Widget("fp8r", "Low-precision recipe"), "fp8_param_gather": Widget("fp8pg", "fp8 parameter gather"),
    "fp8_attention": Widget("fp8at", "fp8 attention"),
    "bf16_first_layers": Widget("bf16f", "First layers kept in bf16"),
    "bf16_last_layers": Widget("bf16l", "Last layers kept in bf16"),
    "cuda_graphs": Widget("cgraph", "CUDA graphs (megatron)"),
    "act_fp8_store": Widget("actf8", "MLP activation input kept in fp8"),
    "attention_kernel": Widget("attk2", "Attention kernel"),
    "recompute_modules": Widget("rcmod", "Recompute modules (Megatron names; with selective)", multi=RC.MODULE_NAMES),
    "recompute_layers": Widget("rclay", "Recompute only K layers per stage (0 = all)"),
    "activation_offload_layers": Widget("aoffl", "Offload only K layers per stage (0 = all)"),
    "remat_policy": Widget("remat", "MaxText remat policy"),
    "remat_custom": Widget("rematc", "MaxText custom remat (name=" + "|".join(RC.CUSTOM_WHERE) + ", …)"),
    "sac_saves_all_to_all": Widget("sacata", "Per-op SAC saves the MoE all-to-alls"),
    "activation_offload": Widget("actoff", "Offload activations to host"),
    "distribute_saved_activations": Widget("rcdist", "Distribute checkpointed layer inputs over TP (full recompute)"),
    "chunked_loss": Widget("chunkce", "Chunked loss (logits never whole)"),
    "efficiency_scale": Widget("calfx", "Calibration: kernel-rate factor", step=0.01),
    "network_scale": Widget("calnet", "Calibration: link-bandwidth factor", step=0.01),
    "interval_low": Widget("callo", "Calibration: interval low (ratio; 0 = profile's)", step=0.01),
    "interval_high": Widget("calhi", "Calibration: interval high (ratio; 0 = profile's)", step=0.01),
    "global_batch": Widget("gbs", "Global batch (sequences; blank = ≥ target tokens per step)"),
    "target_batch_tokens": Widget("btok", "Target tokens per step (default global batch)"),
    "recipe": Widget("recipe", "Recipe (model-state bytes per parameter)"), "optimizer": Widget("opt", "Optimizer"),
    "weight_dtype": Widget("wdt", "weights dtype"), "grad_dtype": Widget("gdt", "gradients dtype"),
    "master_weights": Widget("master", "fp32 master copy"), "grad_accum_fp32": Widget("accum", "fp32 gradient buffer"),
    "optimizer_in_backward": Widget("optbwd", "Optimizer step inside the backward"),
    "paged_optimizer": Widget("paged", "Paged optimizer (bitsandbytes; moments spill to host)"),
    "fp32_loss": Widget("f32loss", "fp32 copy of the logits for the loss"),
    "training": Widget("train", "Training: full, or Fine-tune (LoRA/QLoRA)", radio=True),
    "lora_rank": Widget("rank", "LoRA rank r", hi=4096), "lora_targets": Widget("tgt", "Adapters on"),
    "base_dtype": Widget("bdt", "frozen base stored as"), "double_quant": Widget("dq", "NF4 double quantization"),
    "frozen_frac": Widget("frozen", "frozen share (%)", _PCT, lo=0.0, hi=99.999),
    "recompute": Widget("rc", "Activation recomputation", radio=True),
    "flash_attention": Widget("flash", "Flash attention (no s×s matrices stored)"),
    "profile": Widget("prof", "Kernels (fused / eager)"),
    "overhead": Widget("ovh", "Memory overhead"),
    "overhead_fixed_bytes": Widget("ovhgib", "fixed overhead (GiB)", 2.0**30, lo=0.0, hi=1e4),
    "fragmentation_frac": Widget("frag", "fragmentation (%)", _PCT, lo=0.0, hi=99.0),
    "offload": Widget("offl", "Offload to host memory"),
    "host_memory_bytes": Widget("hostgb", "Host memory per node (GB, optional)", _G, lo=0.0, hi=1e6),
    "zero_convention": Widget("zconv", "ZeRO buffers counted as"),
    "attention_flops": Widget("attn", "Attention FLOPs"),
    "mfu": Widget("mfu", "MFU override (%; blank = predicted)", _PCT, lo=0.1, hi=100.0),
    "dp_overlap": Widget("dpov", "Data-parallel reduction overlaps backward"),
    "tp_overlap": Widget("tpov", "Tensor-parallel communication overlaps GEMMs"),
    "collective_latency_s": Widget("lat", "Collective latency (µs; blank = catalog)", 1e-6, lo=0.0, hi=1e6),
    "tokens": Widget("tokens", "Tokens (billions)", _B, lo=0.0, hi=1e7, step=100.0),
    "price_per_gpu_hour": Widget("price", "Price per GPU-hour (USD; blank = catalog)", step=0.25, hi=1e4),
    "time_overhead_frac": Widget("tovh", "Time overhead (%)", _PCT, lo=0.0, hi=300.0),
    "gpu_power_w": Widget("gpuw", "GPU power (W, blank = catalog)"), "power_draw_frac": Widget("pdraw", "Power drawn (%)", _PCT, lo=0.0, hi=200.0),
    "node_overhead_frac": Widget("nodeovh", "Node overhead (%)", _PCT, lo=0.0, hi=1000.0),
    "failure_rate_per_gpu_hour": Widget("fail", "Failures per GPU-hour"),
    "storage_bytes_per_s": Widget("stor", "Checkpoint storage (bytes/s)"), "restart_s": Widget("restart", "Restart (s)"),
    "checkpoint_interval_s": Widget("ckpt", "Checkpoint every (s, 0 = optimal)"),
    "price_tier": Widget("tier", "Price tier"), "preemption_rate_per_gpu_hour": Widget("preempt", "Spot preemptions per GPU-hour"),
    "pue": Widget("pue", "PUE"), "carbon_kg_per_kwh": Widget("co2", "Grid carbon (kg CO2e/kWh)"),
    "conventions": Widget("conv", "Defaults", radio=True),
    "tokens_per_second": Widget("tps", "Measured tokens/s (whole job, optional)", hi=1e12),
    "step_time_s": Widget("step", "Measured step time (s, optional)", hi=1e6),
    "achieved_flops_per_s": Widget("aflops", "Measured TFLOP/s per GPU (optional)", 1e12, lo=0.0, hi=1e6),
}
INPUTS = tuple(dataclasses.replace(i, ui=WIDGETS.get(i.name)) for i in INPUTS)
BY_NAME = {i.name: i for i in INPUTS}


def canonical(name: str, value):
    """`value` of input `name` as its choices spell it (a framework's stack name → the profile; Input.canon), else
    unchanged."""
    i = BY_NAME.get(name)
    return i.canon(value) if i is not None and i.canon is not None else value


def canonical_inputs(d: dict) -> dict:
    """A dict of inputs with each value as its choices spell it (`canonical`): what every entry point applies first
    (the CLI through argparse, specs, config_from_inputs, plan, plan_budget, calibration runs, published runs)."""
    return {k: canonical(k, v) for k, v in d.items()}


def choices_text(name: str) -> str:
    """The choices of input `name` for an error message, with the other names it accepts (a framework's stacks)."""
    i = BY_NAME[name]
    text = ", ".join(map(str, i.choices))
    if i.canon is PF.canonical:
        text += "; or a stack's name: " + ", ".join(f"{k} ({v})" for k, v in PF.stack_names().items())
    return text
NAMES = tuple(BY_NAME)
CONFIG_FIELDS = tuple(i.name for i in INPUTS if i.target == "config")
MODEL_INPUTS = tuple(i.name for i in INPUTS if i.target == "model")
GPU_INPUTS = tuple(i.name for i in INPUTS if i.target == "gpu")  # gpu and its numeric overrides
GPU_FIELDS = tuple(n for n in GPU_INPUTS if n != "gpu")
CUSTOM_GPU_FIELDS = ("peak_flops_per_s", "gpu_memory_bytes", "memory_bandwidth_bytes_per_s")  # 'custom' needs them
# presets fill the inputs they set unless given, in this order (the specific ones first: an overhead preset given with
# --conventions paper keeps its bytes)
PRESET_INPUTS = {"recipe": {k: r.fields() for k, r in T.RECIPES.items()},
                 "overhead": {k: o.fields() for k, o in T.OVERHEADS.items()},
                 "conventions": {k: c.fields() for k, c in T.CONVENTIONS.items()}}
PRESET_FIELDS = {name: tuple(dict.fromkeys(k for row in t.values() for k in row)) for name, t in PRESET_INPUTS.items()}
GROUPS = tuple(dict.fromkeys(i.group for i in INPUTS))

assert set(MODEL_INPUTS) == {"model", "n_params", "hf_config", *ARCH_FIELDS}
# a preset input's default is the preset whose values are its fields' own defaults (so not applying it changes nothing)
assert all(PRESET_INPUTS[n][BY_NAME[n].default] == {f: BY_NAME[f].default for f in PRESET_INPUTS[n][BY_NAME[n].default]}
           for n in PRESET_INPUTS)
assert set(WIDGETS) == set(NAMES) - {"hf_config"}, set(NAMES) ^ set(WIDGETS)  # every input has a widget
assert len({w.key for w in WIDGETS.values()}) == len(WIDGETS)  # keys unique


def kind(name: str) -> str:
    """The input's kind; an unknown name is an error listing the known ones."""
    try:
        return BY_NAME[name].kind
    except KeyError:
        raise ValueError(f"{name}: not an input; known inputs: {', '.join(sorted(NAMES))}") from None


def names_of(*kinds: str) -> tuple:
    return tuple(i.name for i in INPUTS if i.kind in kinds)


# ---------------------------------------------------------------------------------------------------------------------
# Validation rules, vectorised: a row per rule (field, message, test). `test(g)` gets a column getter and returns a
# boolean array, True where the rule is broken. Reason code = 1 + the rule's index; the first failing rule wins.
# ---------------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rule:
    field: str
    message: str
    test: Callable | None  # None: set by `evaluate`, which alone knows the value (see MEASURED_ABOVE_PEAK)

    @property
    def text(self) -> str:
        return f"{self.field}: {self.message}"


def _pos_int(x):
    return (x < 1) | (x != np.floor(x))


def expert_tp(etp, tp):
    """The expert tensor-parallel degree in force: `etp`, or tp where it is 0 (Megatron-Core's default: each expert
    split as the dense layers are). The one reading of the input's "0 = tp"."""
    e = np.asarray(etp, dtype=np.float64)
    return np.where(e >= 1, e, np.asarray(tp, dtype=np.float64))


def _opt(g, k, default):
    try:
        return g(k)
    except KeyError:  # a caller's hand-built columns without the accelerator's low-precision fields
        return np.asarray(default)


# layers kept in bf16 need a recipe other than delayed scaling: Megatron-Core's get_fp8_context asserts "Delayed scaling
# does not support first / last layer in BF16" (entering and leaving the fp8 context per layer breaks its amax
# reduction; megatron/core/fp8_utils.py, as AMD-AGI/Primus carries it @fd1eeabb l.246-251)
_BF16_LAYERS_NEED = ("needs a low-precision recipe other than delayed scaling (fp8_recipe current, rowwise, blockwise, "
                     "mxfp8 or nvfp4; compute_dtype fp8 alone is delayed): Megatron-Core asserts delayed scaling does "
                     "not take layers kept in bf16")


def _lowp_unsupported(g):
    from .hardware import family_names
    r = g("fp8_recipe")
    if not np.any(r != "none"):
        return np.zeros(np.shape(r), dtype=bool)
    names = np.asarray(("",) + family_names(), dtype=object)
    idx = np.clip(np.asarray(_opt(g, "family_index", -1.0), dtype=np.float64).astype(np.int64) + 1, 0, len(names) - 1)
    peak = np.where(LP.is_fp4(r), _opt(g, "peak_fp4_flops_per_s", np.nan), _opt(g, "peak_fp8_flops_per_s", np.nan))
    return (r != "none") & (~LP.supported(r, names[idx]) | ~(np.asarray(peak, dtype=np.float64) > 0))


def _on_tpu(g):
    from .hardware import family_names
    return np.asarray(_opt(g, "family_index", -1.0), dtype=np.float64) == float(family_names().index("tpu"))


def _div(a, b):
    return np.mod(a, np.maximum(b, 1)) != 0


def _micro_batches(g):
    """Micro-batches per data-parallel replica per step (core/schedule.micro_batches)."""
    return SC.micro_batches(g("global_batch_used"), g("n_gpus"), g("tp"), g("pp"), g("cp"), g("micro_batch"))


def _dp(g):
    """The rules' data-parallel degree ⌊n_gpus / (tp·pp·cp)⌋ (0 where the layout exceeds the GPUs: another rule
    refuses that; core/schedule.dp_degree, for valid rows, is at least 1)."""
    return np.floor(g("n_gpus") / np.maximum(g("tp") * g("pp") * g("cp"), 1))


def _parses(name):
    """Whether a text parses with input `name`'s own parser (Input.parse)."""
    def ok(text) -> bool:
        try:
            BY_NAME[name].parse(text)
            return True
        except ValueError:
            return False
    return ok


def _in_bwd(g):
    return np.asarray(_opt(g, "optimizer_in_backward", False), dtype=bool)


def _paged(g):
    return np.asarray(_opt(g, "paged_optimizer", False), dtype=bool)


def _is(g, name, value):
    return np.asarray(g(name)) == value


def _has_layout(g):
    """Rows that give a pipeline layout (pp_layout not empty)."""
    lay = np.asarray(g("pp_layout"), dtype=object)
    if lay.ndim == 0:
        return np.asarray(bool(lay.item()))
    return lay.astype(bool)


def _layout_mismatch(g):
    """Rows whose pp_layout does not fit their pp, virtual stages, layers and MTP layers (core/schedule.layout_ranks;
    a layout whose chunks are no multiple of pp is refused there, by name)."""
    has = _has_layout(g)
    if not np.any(has):
        return has
    arrs = np.broadcast_arrays(np.asarray(g("pp_layout"), dtype=object), has, g("pp"), g("virtual_stages"),
                               g("n_layers"), np.nan_to_num(np.asarray(g("n_mtp_layers"), dtype=np.float64)))
    shape = arrs[0].shape
    lay, hs, pp, v, L, mtp = (np.ravel(x) for x in arrs)
    bad = np.zeros(lay.shape, dtype=bool)
    for i in np.flatnonzero(hs & (pp > 1)):
        try:
            r = SC.layout_ranks(str(lay[i]), int(pp[i]))
        except ValueError:  # its chunks are no multiple of pp (or its text is malformed: refused by name already)
            bad[i] = True
            continue
        bad[i] = (r["chunks"] != pp[i] * max(v[i], 1) or r["decoder"] != L[i] or not r["ends"]
                  or r["mtp"] not in (0, mtp[i]) or not r["mtp_last"])
    return bad.reshape(shape)


def lora_width(g):
    """The narrowest dimension of the matrices `lora_targets` adapts (min over d_in, d_out): W_q and W_v for qv; W_k
    and W_o too for attention; every MLP and expert matrix too for all (MLA's low-rank projections are not looked
    at: their d_model side bounds them here)."""
    h = np.asarray(g("d_model"), dtype=np.float64)
    hd = _hd(g)
    vd = np.where(g("v_head_dim") > 0, g("v_head_dim"), hd)
    kv = np.where(_is(g, "attention", "mla"), g("n_heads"), g("n_kv_heads"))
    qv = np.minimum(np.minimum(h, g("n_heads") * hd), kv * vd)
    att = np.minimum(qv, np.minimum(kv * hd, g("n_heads") * vd))
    fe = np.where(g("moe_d_ff") > 0, g("moe_d_ff"), g("d_ff"))
    mlp = np.minimum(att, np.where(g("n_experts") > 1, np.minimum(g("d_ff"), fe), g("d_ff")))
    t = np.asarray(g("lora_targets"))
    return np.where(t == "qv", qv, np.where(t == "attention", att, mlp))


def _map_unique(x, fn):
    """fn over the unique values of a column (string columns: a few distinct values), as a boolean array."""
    x = np.asarray(x, dtype=object)
    if x.ndim == 0:
        return np.asarray(bool(fn(x.item())))
    u, inv = np.unique(x.astype(str), return_inverse=True)
    return np.asarray([bool(fn(v)) for v in u])[inv].reshape(x.shape)


def _mamba(g) -> dict:
    from .model import mamba_dims
    return mamba_dims(g("d_model"), g("mamba_heads"), g("mamba_head_dim"), g("mamba_state"), g("mamba_groups"),
                      g("mamba_conv"), g("mamba_chunk"))


def _bad_hybrid_counts(g):
    """The scalar rule of model.arch_problem over arrays: each count ≤ n_layers, the mixers (one per layer unless
    parallel) fit in the layers, and every layer has a mixer or an MLP."""
    L, la, lm, lf = g("n_layers"), g("attention_layers"), g("mamba_layers"), g("mlp_layers")
    mixers = np.where(g("mamba_parallel").astype(bool), np.maximum(la, lm), la + lm)
    return (np.maximum(np.maximum(la, lm), lf) > L) | (mixers > L) | (mixers + lf < L)


def _bad_mamba_shape(g):
    m = _mamba(g)
    return (np.mod(m["H"], np.maximum(m["G"], 1)) != 0) | (m["H"] != np.floor(m["H"]))


def _mamba_tp(g):
    m = _mamba(g)
    return _div(m["H"], g("tp") * g("cp")) | _div(m["G"], g("tp") * g("cp"))


def _hd(g):
    """head_dim as used (d_model / n_heads where 0)."""
    return np.where(g("head_dim") > 0, g("head_dim"), g("d_model") / np.maximum(g("n_heads"), 1))


RULES: tuple[Rule, ...] = (
    Rule("n_gpus", "must be ≥ 1", lambda g: g("n_gpus") < 1),
    Rule("tp", "must be an integer ≥ 1", lambda g: _pos_int(g("tp"))),
    Rule("pp", "must be an integer ≥ 1", lambda g: _pos_int(g("pp"))),
    Rule("tp·pp", "does not divide n_gpus", lambda g: _div(g("n_gpus"), g("tp") * g("pp"))),
    Rule("tp", "larger than n_heads", lambda g: g("tp") > g("n_heads")),
    Rule("tp", "does not divide n_heads", lambda g: _div(g("n_heads"), g("tp"))),
    Rule("pp", "larger than n_layers", lambda g: g("pp") > g("n_layers")),
    Rule("seq_len", "must be ≥ 1", lambda g: g("seq_len") < 1),
    Rule("micro_batch", "must be ≥ 1", lambda g: g("micro_batch") < 1),
    Rule("mfu", "must be in (0, 1] or auto", lambda g: ~((g("mfu") > 0) & (g("mfu") <= 1)) & ~g("mfu_auto")),
    Rule("zero_stage", "must be 0, 1, 2 or 3", lambda g: ~VE.isin(g("zero_stage"), (0, 1, 2, 3))),
    Rule("master_weights", "the weights are already fp32; an fp32 master copy would duplicate them (fp32 parameters "
         "trained in bf16, as MaxText's float32 weights: weight_dtype bf16 with the master, which zero_convention "
         "fsdp or xla counts as the fp32 parameter itself)",
         lambda g: (g("weight_dtype") == "fp32") & g("master_weights").astype(bool)),
    Rule("compute_dtype", "this accelerator has no peak for that dtype", lambda g: ~(g("peak_flops_per_s") > 0)),
    Rule("recompute", "must be none, selective or full", lambda g: ~VE.isin(g("recompute"), T.RECOMPUTE_MODES)),
    Rule("optimizer", "unknown optimizer", lambda g: ~VE.isin(g("optimizer"), T.OPTIMIZERS)),
    Rule("weight_dtype/grad_dtype", "unknown dtype",
         lambda g: ~(VE.isin(g("weight_dtype"), T.STATE_DTYPES) & VE.isin(g("grad_dtype"), T.STATE_DTYPES))),
    Rule("attention_flops", "must be none, full or causal",
         lambda g: ~VE.isin(g("attention_flops"), T.ATTENTION_FLOPS)),
    Rule("d_model", "not divisible by n_heads", lambda g: _div(g("d_model"), g("n_heads"))),
    Rule("n_kv_heads", "must divide n_heads",
         lambda g: (g("n_kv_heads") > g("n_heads")) | _div(g("n_heads"), g("n_kv_heads"))),
    Rule("virtual_stages", "must be an integer ≥ 1", lambda g: g("virtual_stages") < 1),
    Rule("profile", "must be fused or eager", lambda g: ~VE.isin(g("profile"), T.PROFILES)),
    Rule("tokens", "must be between 0 and 1e18", lambda g: (g("tokens") < 0) | (g("tokens") > 1e18)),
    Rule("price_per_gpu_hour", "must be ≥ 0", lambda g: g("price_per_gpu_hour") < 0),
    Rule("time_overhead_frac", "must be ≥ 0", lambda g: g("time_overhead_frac") < 0),
    Rule("overhead", "fixed bytes must be ≥ 0 and fragmentation_frac in [0, 1)",
         lambda g: (g("overhead_fixed_bytes") < 0) | (g("fragmentation_frac") < 0) | (g("fragmentation_frac") >= 1)),
    Rule("d_ff", "not divisible by tp", lambda g: _div(g("d_ff"), g("tp"))),
    Rule("virtual_stages", "more than the layers of one pipeline stage",  # a layout's own chunks: checked below
         lambda g: (g("virtual_stages") > np.ceil(g("n_layers") / np.maximum(g("pp"), 1))) & ~_has_layout(g)),
    Rule("cp", "tp·pp·cp does not divide n_gpus", lambda g: _pos_int(g("cp")) | _div(g("n_gpus"),
                                                                                  g("tp") * g("pp") * g("cp"))),
    Rule("cp", "does not divide seq_len", lambda g: _div(g("seq_len"), g("cp"))),
    Rule("ep", "must divide n_experts, and ep·etp the ranks of a pipeline stage (n_gpus / pp: Megatron-Core's "
         "expert groups fold over tp·cp·dp)",
         lambda g: _pos_int(g("ep")) | _div(g("n_experts"), g("ep"))
         | _div(np.floor(g("n_gpus") / np.maximum(g("pp"), 1)),
                g("ep") * expert_tp(g("etp"), g("tp")))),
    Rule("moe_load_imbalance", "must be ≥ 1 (the busiest expert's tokens ÷ the balanced share)",
         lambda g: ~(g("moe_load_imbalance") >= 1)),
    Rule("moe_capacity_factor", "must be ≥ 0 (0 = dropless)", lambda g: ~(g("moe_capacity_factor") >= 0)),
    Rule("etp", "must be a count (0 = tp)", lambda g: (g("etp") < 0) | (g("etp") != np.floor(g("etp")))),
    Rule("global_batch", "must be a multiple of dp·micro_batch (dp = n_gpus / (tp·pp·cp))",
         lambda g: _div(g("global_batch_used"), _dp(g) * g("micro_batch")) | (g("global_batch_used") < 1)),
    Rule("gpus_per_node", "must be ≥ 1", lambda g: g("gpus_per_node") < 1),
    Rule("measurement", "the measured throughput would need more than 100 % of the accelerator's peak (check it, "
         "the GPU count or the GPU)", None),
    # --- issue 12: architecture fields (the scalar forms are model.arch_problem) and training modes -------------------
    Rule(*ARCH_RULES["mla_only"], lambda g: ~_is(g, "attention", "mla") & (
        (g("q_lora_rank") > 0) | (g("kv_lora_rank") > 0) | (g("qk_rope_head_dim") > 0))),
    Rule(*ARCH_RULES["kv_rank"], lambda g: _is(g, "attention", "mla") & (g("kv_lora_rank") < 1)),
    Rule(*ARCH_RULES["rope"], lambda g: _is(g, "attention", "mla") & (g("qk_rope_head_dim") >= _hd(g))),
    Rule(*ARCH_RULES["mla_qk_norm"], lambda g: _is(g, "attention", "mla") & ~_is(g, "qk_norm", "none")),
    Rule(*ARCH_RULES["norms"], lambda g: ~VE.isin(g("norms_per_layer"), T.NORMS_PER_LAYER)),
    Rule(*ARCH_RULES["shared"], lambda g: (g("shared_expert_gate").astype(bool) | (g("shared_d_ff") > 0))
         & (g("n_shared_experts") < 1)),
    Rule(*ARCH_RULES["window"], lambda g: (g("global_every") > 0) & (g("sliding_window") <= 0)),
    Rule(*ARCH_RULES["hybrid_counts"], lambda g: (g("mamba_layers") > 0) & _bad_hybrid_counts(g)),
    Rule(*ARCH_RULES["mamba_shape"], lambda g: (g("mamba_layers") > 0) & _bad_mamba_shape(g)),
    Rule(*ARCH_RULES["mamba_parallel"], lambda g: (g("mamba_layers") > 0) & g("mamba_parallel").astype(bool)
         & (g("attention_layers") < g("mamba_layers"))),
    Rule("mamba_heads", "Mamba-2 heads and groups must divide by tp·cp (Megatron-Core splits both over the TP ranks, "
         "and over the CP ranks for the SSD: ssm/mamba_context_parallel.py)",
         lambda g: (g("mamba_layers") > 0) & _mamba_tp(g)),
    Rule("moe_d_ff", "not divisible by tp", lambda g: (g("n_experts") > 1) & _div(g("moe_d_ff"), g("tp"))),
    Rule("training", "must be full, lora or qlora", lambda g: ~VE.isin(g("training"), T.TRAINING_MODES)),
    Rule("lora_rank", "must be an integer ≥ 1", lambda g: _pos_int(g("lora_rank"))),
    Rule("base_dtype", "qlora stores its base in nf4; int8 and nf4 bases are for lora/qlora",
         lambda g: (_is(g, "training", "qlora") & ~_is(g, "base_dtype", "nf4"))
         | (_is(g, "training", "full") & VE.isin(g("base_dtype"), ("int8", "nf4")))
         | ~VE.isin(g("base_dtype"), T.BASE_DTYPES)),
    Rule("frozen_frac", "must be in [0, 1), and 0 under lora/qlora (their base is frozen whole)",
         lambda g: ~((g("frozen_frac") >= 0) & (g("frozen_frac") < 1))
         | (~_is(g, "training", "full") & (g("frozen_frac") != 0))),
    Rule("frozen_frac", "leaves less than one trainable parameter (1 − frozen_frac) · n_params < 1",
         lambda g: _is(g, "training", "full") & ((1.0 - g("frozen_frac")) * g("n_params") < 1.0)),
    Rule("lora_rank", "above the narrowest width of the matrices it adapts (a rank beyond min(d_in, d_out) "
         "is not low-rank)", lambda g: ~_is(g, "training", "full") & (g("lora_rank") > lora_width(g))),
    Rule("optimizer", "adafactor with lora/qlora is not modelled", lambda g: _is(g, "optimizer", "adafactor")
         & ~_is(g, "training", "full")),
    Rule("offload", "optimizer_params needs ZeRO-3 (DeepSpeed offload_param)",
         lambda g: ~VE.isin(g("offload"), T.OFFLOAD_MODES) | (_is(g, "offload", "optimizer_params")
                                                             & (g("zero_stage") != 3))),
    Rule("zero_convention", "must be " + ", ".join(T.ZERO_CONVENTION_NAMES[:-1]) + " or " + T.ZERO_CONVENTION_NAMES[-1],
         lambda g: ~VE.isin(g("zero_convention"), T.ZERO_CONVENTION_NAMES)),
    Rule("host_memory_bytes", "must be ≥ 0", lambda g: g("host_memory_bytes") < 0),
    # --- issue 18: the framework, recomputation as frameworks name it, hybrid sharding, calibration -------------
    Rule("framework", "must be one of " + ", ".join(PF.FRAMEWORKS), lambda g: ~VE.isin(g("framework"), PF.FRAMEWORKS)),
    Rule("zero_stage", "the framework does not run this ZeRO stage (megatron 0-3, fsdp 0, 2 or 3, deepspeed 0-3, "
         "maxtext 0 or 3)", lambda g: ~PF.supports_zero(g("framework"), g("zero_stage"))),
    Rule("tp", "the framework runs Hugging Face-style models without tensor parallelism (deepspeed): tp must be 1",
         lambda g: (g("tp") > 1) & ~PF.supports(g("framework"), "tp")),
    Rule("virtual_stages", "the framework has no interleaved pipeline schedule (deepspeed): virtual_stages must be 1",
         lambda g: (g("virtual_stages") > 1) & ~PF.supports(g("framework"), "vp")),
    Rule("recompute_modules", "unknown module name (known: " + ", ".join(RC.MODULE_NAMES) + ")",
         lambda g: ~_map_unique(g("recompute_modules"), _parses("recompute_modules"))),
    Rule("recompute_modules", "needs recompute selective (as Megatron's --recompute-modules)",
         lambda g: (_map_unique(g("recompute_modules"), lambda x: bool(str(x).strip())))
         & ~_is(g, "recompute", "selective")),
    Rule("recompute_layers", "needs recompute full (Megatron's block method)",
         lambda g: (g("recompute_layers") > 0) & ~_is(g, "recompute", "full")),
    Rule("sac_saves_all_to_all", "false applies to recompute selective under per-op SAC (a profile whose selective "
         "is op_sac: " + PF.offered_by("selective", "op_sac") + ") of an MoE model with ep > 1: only there is an "
         "all-to-all output to save or not",
         lambda g: ~np.asarray(_opt(g, "sac_saves_all_to_all", True), dtype=bool)
         & ~(_is(g, "recompute", "selective") & (np.asarray(PF.word(g("framework"), "selective")) == "op_sac")
             & (g("ep") > 1))),  # (ep > 1 needs an MoE model: the ep rule)
    Rule("profile", "eager contradicts compile (torch.compile fuses the elementwise kernels: give one of them)",
         lambda g: _is(g, "profile", "eager") & _is(g, "compile", True)),
    Rule("distribute_saved_activations", "needs recompute full (Megatron: 'only applicable to full recompute "
         "granularity')", lambda g: _is(g, "distribute_saved_activations", True) & ~_is(g, "recompute", "full")),
    Rule("distribute_saved_activations", "needs tp > 1 (Megatron: 'can distribute recomputed activations only "
         "across tensor model parallel groups')",
         lambda g: _is(g, "distribute_saved_activations", True) & ~(g("tp") > 1)),
    Rule("distribute_saved_activations", "must be false with sequence_parallel (Megatron refuses both: sequence "
         "parallelism splits the layer input already)",
         lambda g: _is(g, "distribute_saved_activations", True) & _is(g, "sequence_parallel", True)),
    Rule("pp_embedding_loss_slots", "needs pp > 1 (the slots are in the pipeline split)",
         lambda g: _is(g, "pp_embedding_loss_slots", True) & ~(g("pp") > 1)),
    Rule("pp_embedding_loss_slots", "n_layers + 2 must be divisible by pp × virtual_stages (Megatron's split with the "
         "embedding and loss slots)",
         lambda g: _is(g, "pp_embedding_loss_slots", True) & (g("pp") > 1)
         & _div(g("n_layers") + 2, g("pp") * np.maximum(g("virtual_stages"), 1))),
    Rule("pp_layout", "needs pp > 1 and framework megatron (Megatron-Core's --pipeline-model-parallel-layout)",
         lambda g: _has_layout(g) & ~((g("pp") > 1) & _is(g, "framework", "megatron"))),
    Rule("pp_layout", "with embedding/loss slots: give one of them (the layout places the embedding and the loss)",
         lambda g: _has_layout(g) & _is(g, "pp_embedding_loss_slots", True)),
    Rule("pp_layout", "its chunks must be pp × virtual_stages, its decoder layers (t) n_layers, its MTP layers (m) "
         "none or n_mtp_layers and in the last chunk beside the loss (where the model runs them), with the embedding "
         "(E) once in the first chunk and the loss (L) once in the last",
         lambda g: _layout_mismatch(g)),
    Rule("moe_overlap", "needs an MoE model with ep > 1",
         lambda g: _is(g, "moe_overlap", True) & ~((g("n_experts") > 1) & (g("ep") > 1))),
    Rule("moe_overlap", "needs pp = 1, virtual_stages > 1 (Megatron's combined 1F1B runs on the interleaved "
         "schedule) or a DualPipe schedule (which pairs a forward and a backward chunk by design), and no full "
         "recompute",
         lambda g: _is(g, "moe_overlap", True) & (((g("pp") > 1) & ~(g("virtual_stages") > 1)
                                                   & ~VE.isin(g("pp_schedule"), SC.BOTH_ENDS))
                                                  | _is(g, "recompute", "full"))),
    Rule("document_tokens", "must be ≥ 0 and at most seq_len (a document longer than the row is not packed)",
         lambda g: (g("document_tokens") < 0) | (g("document_tokens") > g("seq_len"))),
    Rule("document_tokens", "FlashAttention in Triton (attention_kernel triton) has no variable-length path: it "
         "computes the whole row (give 0)",
         lambda g: (g("document_tokens") > 0) & (g("document_tokens") < g("seq_len"))
         & _is(g, "attention_kernel", "triton")),
    Rule("document_tokens", "needs flash_attention (a dense mask computes every score of the row: give 0)",
         lambda g: (g("document_tokens") > 0) & (g("document_tokens") < g("seq_len"))
         & ~np.asarray(g("flash_attention"), dtype=bool)),
    Rule("pp_schedule", "the framework does not run this pipeline schedule (data/frameworks.csv pp_schedules: megatron "
         "1f1b zb1p zb2p dualpipe, fsdp 1f1b dualpipev, deepspeed and maxtext 1f1b)",
         lambda g: ~PF.supports_schedule(g("framework"), g("pp_schedule"))),
    Rule("pp_schedule", "a schedule other than 1f1b needs pp > 1",
         lambda g: ~_is(g, "pp_schedule", "1f1b") & ~(g("pp") > 1)),
    Rule("pp_schedule", "zb1p, zb2p and dualpipe run one model chunk per GPU (virtual_stages 1); dualpipev a V of two "
         "(virtual_stages 2)",
         lambda g: (VE.isin(g("pp_schedule"), ("zb1p", "zb2p", "dualpipe")) & (g("virtual_stages") != 1))
         | (_is(g, "pp_schedule", "dualpipev") & (g("virtual_stages") != 2))),
    Rule("pp_schedule", "dualpipe needs an even pp (deepseek-ai/DualPipe dualpipe.py l.332 @3da1bbe)",
         lambda g: _is(g, "pp_schedule", "dualpipe") & ((g("pp") % 2) != 0)),
    Rule("pp_schedule", "DualPipe and DualPipeV need at least 2 × pp micro-batches per step, an even number for "
         "DualPipe (global_batch / (data-parallel ranks × micro_batch), the given one or the one target_batch_tokens "
         "sets: give a global batch that meets it; dualpipe.py l.333, dualpipev.py l.318)",
         lambda g: VE.isin(g("pp_schedule"), SC.BOTH_ENDS) & (g("global_batch_used") >= 1)
         & ~np.asarray(g("batch_steady"), dtype=bool) & (
             (_micro_batches(g) < 2 * g("pp"))
             | (_is(g, "pp_schedule", "dualpipe") & (np.round(_micro_batches(g)) % 2 != 0)))),
    Rule("pp_schedule", "a pipeline layout (pp_layout) is Megatron-Core's, for its 1F1B schedules",
         lambda g: _has_layout(g) & ~_is(g, "pp_schedule", "1f1b")),
    Rule("pp_schedule", "DualPipe and DualPipeV place the embedding and the loss on the first rank themselves: "
         "pp_embedding_loss_slots is Megatron's 1F1B split",
         lambda g: VE.isin(g("pp_schedule"), SC.BOTH_ENDS) & _is(g, "pp_embedding_loss_slots", True)),
    Rule("moe_dispatcher", "deepep and hybridep need an MoE model with ep > 1",
         lambda g: VE.isin(g("moe_dispatcher"), T.NODE_DEDUP_DISPATCHERS)
         & ~((g("n_experts") > 1) & (g("ep") > 1))),
    Rule("moe_dispatcher", "dense runs every expert on every token of its rank (its capacity is E/k whatever "
         "moe_capacity_factor says): it needs an MoE model and ep 1",
         lambda g: _is(g, "moe_dispatcher", "dense") & ~((g("n_experts") > 1) & (g("ep") == 1))),
    Rule("moe_dispatcher", "dense is how Hugging Face transformers models run some MoE layers (Llama 4): the "
         "framework's own MoE layer routes (dense is offered by: "
         + PF.offered_by("moe_dense") + "; data/frameworks.csv)",
         lambda g: _is(g, "moe_dispatcher", "dense") & (PF.word(g("framework"), "moe_dense") != "offered")),
    Rule("moe_dispatcher", "einsum dispatches to capacity buffers: it needs an MoE model and moe_capacity_factor > 0",
         lambda g: _is(g, "moe_dispatcher", "einsum") & ~((g("n_experts") > 1) & (g("moe_capacity_factor") > 0))),
    Rule("activation_offload_layers", "needs activation_offload (Megatron's --cpu-offloading)",
         lambda g: (g("activation_offload_layers") > 0) & ~_is(g, "activation_offload", True)),
    Rule("activation_offload_layers", "more than a pipeline stage's layers (⌈n_layers / pp⌉)",  # a layout's: its own
         lambda g: (g("activation_offload_layers") > np.ceil(g("n_layers") / np.maximum(g("pp"), 1)))
         & ~_has_layout(g)),
    Rule("remat_policy", "give either remat_policy (MaxText) or recompute, not both",
         lambda g: ~_is(g, "remat_policy", "none") & ~_is(g, "recompute", "none")),
    Rule("remat_policy", "unknown policy", lambda g: ~VE.isin(g("remat_policy"), RC.REMAT_NAMES)),
    Rule("dp_replicate", "must divide the data-parallel degree dp = n_gpus / (tp·pp·cp)",
         lambda g: _pos_int(g("dp_replicate")) | _div(_dp(g), g("dp_replicate"))),
    Rule("dp_shard", "dp_shard × dp_replicate must equal dp = n_gpus / (tp·pp·cp) (or give 0)",
         lambda g: (g("dp_shard") > 0) & (g("dp_shard") * g("dp_replicate") != _dp(g))),
    Rule("failure_rate_per_gpu_hour", "must be from 0 to 1 per GPU-hour",
         lambda g: (g("failure_rate_per_gpu_hour") < 0) | (g("failure_rate_per_gpu_hour") > 1)),
    Rule("storage_bytes_per_s", "must be positive",
         lambda g: ~(g("storage_bytes_per_s") > 0)),
    Rule("restart_s", "must be 0 or more seconds", lambda g: g("restart_s") < 0),
    Rule("checkpoint_interval_s", "must be 0 (optimal) or more seconds", lambda g: g("checkpoint_interval_s") < 0),
    Rule("preemption_rate_per_gpu_hour", "must be from 0 to 1 per GPU-hour",
         lambda g: (g("preemption_rate_per_gpu_hour") < 0) | (g("preemption_rate_per_gpu_hour") > 1)),
    Rule("pue", "must be at least 1 (a data centre draws at least its IT power) and at most 5",
         lambda g: (g("pue") < 1.0) | (g("pue") > 5.0)),
    Rule("carbon_kg_per_kwh", "must be from 0 to 5 kg CO2e per kWh",
         lambda g: (g("carbon_kg_per_kwh") < 0) | (g("carbon_kg_per_kwh") > 5.0)),
    Rule("power_draw_frac", "must be from 0 to 2 (a share of the board power)",
         lambda g: (g("power_draw_frac") < 0) | (g("power_draw_frac") > 2.0)),
    Rule("node_overhead_frac", "must be from 0 to 10 (a share of the GPUs' power)",
         lambda g: (g("node_overhead_frac") < 0) | (g("node_overhead_frac") > 10.0)),
    Rule("fp8_recipe", "the accelerator has no peak for the recipe's dtype (fp8; nvfp4: fp4), or its family does "
         "not run the recipe (mxfp8 and nvfp4 need Blackwell's block-scaled tensor cores)",
         lambda g: _lowp_unsupported(g)),
    Rule("cuda_graphs", "only the megatron profile captures CUDA graphs (Megatron-Core --cuda-graph-impl), on GPUs, and "
         "not with activation offload (Megatron-Bridge's CUDA graphs guide: graphs do not combine with CPU activation "
         "offloading)",
         lambda g: (np.asarray(_opt(g, "cuda_graphs", "none")) != "none")
         & (~_is(g, "framework", "megatron") | _is(g, "activation_offload", True)
            | _on_tpu(g))),
    Rule("act_fp8_store", "needs a low-precision recipe (fp8_recipe or compute_dtype fp8) and the megatron profile "
         "(it is Megatron-Core's activation_func_fp8_input_store)",
         lambda g: np.asarray(_opt(g, "act_fp8_store", False), dtype=bool)
         & ((LP.effective(g("fp8_recipe"), g("compute_dtype")) == "none") | ~_is(g, "framework", "megatron"))),
    *(Rule(k, _BF16_LAYERS_NEED, lambda g, k=k: (np.asarray(_opt(g, k, 0)) > 0)
           & VE.isin(LP.effective(g("fp8_recipe"), g("compute_dtype")), ("none", "delayed")))
      for k in ("bf16_first_layers", "bf16_last_layers")),
    Rule("bf16_last_layers", "bf16_first_layers + bf16_last_layers must be fewer than n_layers (with every layer in "
         "bf16, say fp8_recipe none)",
         lambda g: (np.asarray(_opt(g, "bf16_first_layers", 0)) + np.asarray(_opt(g, "bf16_last_layers", 0))
                    >= g("n_layers")) & (np.asarray(_opt(g, "bf16_first_layers", 0))
                                         + np.asarray(_opt(g, "bf16_last_layers", 0)) > 0)),
    Rule("fp8_attention", "needs a low-precision recipe (fp8_recipe or compute_dtype fp8), flash attention with the "
         "native kernel (cuDNN / Transformer Engine: FlashAttention-2, fsdp's and deepspeed's auto, FlexAttention and "
         "the Triton kernel have no fp8 path) "
         "and an accelerator with an fp8 peak",
         lambda g: np.asarray(_opt(g, "fp8_attention", False), dtype=bool)
         & ((LP.effective(g("fp8_recipe"), g("compute_dtype")) == "none")
            | ~np.asarray(g("flash_attention"), dtype=bool) | PF.runs_fa2(g("framework"), g("attention_kernel"))
            | ~(np.asarray(_opt(g, "peak_fp8_flops_per_s", np.nan), dtype=np.float64) > 0))),
    Rule("offload", "the framework does not offload the optimizer to the host (maxtext)",
         lambda g: ~_is(g, "offload", "none") & ~(PF.number(g("framework"), "cpu_optimizer_params_per_s_per_node") > 0)),
    Rule("attention_kernel", "must be one of " + ", ".join(T.ATTENTION_KERNELS),
         lambda g: ~VE.isin(g("attention_kernel"), T.ATTENTION_KERNELS)),
    Rule("attention_kernel", ", ".join(T.GPU_ATTENTION_KERNELS) + " are GPU kernels: on a TPU the attention runs "
         "XLA's own (auto or native)", lambda g: VE.isin(g("attention_kernel"), T.GPU_ATTENTION_KERNELS) & _on_tpu(g)),
    Rule("attention_kernel", "flex and triton are flash kernels: they need flash_attention",
         lambda g: VE.isin(g("attention_kernel"), ("flex", "triton")) & ~np.asarray(g("flash_attention"), dtype=bool)),
    Rule("interval_low", "must be 0 (the profile's) or ≤ 1 ≤ interval_high",
         lambda g: ((g("interval_low") > 0) | (g("interval_high") > 0))
         & ~((g("interval_low") > 0) & (g("interval_low") <= 1) & (g("interval_high") >= 1))),
    Rule("time_s", "the run's time overflows (a throughput near zero or too many tokens): check tokens_per_second, "
         "step_time_s, achieved_flops_per_s, mfu and tokens", None),
    Rule("failure_rate_per_gpu_hour", "failures this frequent (or checkpoints this slow) leave no useful work: "
         "goodput 0 (check failure_rate_per_gpu_hour, preemption_rate_per_gpu_hour, storage_bytes_per_s, restart_s)",
         None),
    Rule("remat_custom", "each entry is name=" + "|".join(RC.CUSTOM_WHERE) + " with one of MaxText's checkpoint "
         "names the planner models (see the input's help), each name once",
         lambda g: ~_map_unique(_opt(g, "remat_custom", ""), _parses("remat_custom"))),
    Rule("remat_custom", "needs remat_policy custom (MaxText reads the per-tensor places only then)",
         lambda g: _map_unique(_opt(g, "remat_custom", ""), lambda x: bool(str(x).strip()))
         & ~_is(g, "remat_policy", "custom")),
    Rule("paged_optimizer", "the framework does not take a bitsandbytes paged optimizer (offered by: "
         + PF.offered_by("paged_optimizer")
         + "; data/frameworks.csv)",
         lambda g: _paged(g) & (PF.word(g("framework"), "paged_optimizer") != "offered")),
    Rule("paged_optimizer", "keeps the moments on the GPU and pages them: it does not combine with offload (the "
         "moments are on the host already)",
         lambda g: _paged(g) & ~_is(g, "offload", "none")),
    Rule("paged_optimizer", "bitsandbytes' paged optimizers page CUDA (or HIP) unified memory: GPUs only, not TPUs",
         lambda g: _paged(g) & _on_tpu(g)),
    Rule("optimizer_in_backward", "the framework does not step the optimizer inside the backward (offered by: "
         + PF.offered_by("optimizer_in_backward")
         + "; data/frameworks.csv)",
         lambda g: _in_bwd(g) & (PF.word(g("framework"), "optimizer_in_backward") != "offered")),
    Rule("optimizer_in_backward", "steps each parameter once per backward, so it takes no gradient accumulation: "
         "global_batch must equal dp·micro_batch (torchtune refuses gradient_accumulation_steps > 1 with it)",
         lambda g: _in_bwd(g) & (_micro_batches(g) > 1)),
    Rule("optimizer_in_backward", "runs without pipeline or expert parallelism (torchtitan's early_step_in_backward "
         "refused both; torchtune has neither), with full training (torchtune's LoRA recipes do not offer it) and "
         "without an fp32 gradient-accumulation buffer (nothing to accumulate)",
         lambda g: _in_bwd(g) & ((g("pp") > 1) | (g("ep") > 1) | ~_is(g, "training", "full")
                                 | np.asarray(g("grad_accum_fp32"), dtype=bool))),
    Rule("optimizer_in_backward", "with data parallelism it needs ZeRO-2 or 3 (torchtune's distributed recipe shards "
         "with FSDP2; DDP's and ZeRO-1's gradient buckets hold the whole gradient)",
         lambda g: _in_bwd(g) & (g("zero_stage") < 2) & (_dp(g) > 1)),
)
REASONS = ("",) + tuple(r.text for r in RULES)
MEASURED_ABOVE_PEAK = 1 + next(i for i, r in enumerate(RULES) if r.test is None and r.field == "measurement")
TIME_OVERFLOW = 1 + next(i for i, r in enumerate(RULES) if r.test is None and r.field == "time_s")
NO_GOODPUT = 1 + next(i for i, r in enumerate(RULES) if r.test is None and r.field == "failure_rate_per_gpu_hour")


def reason_text(code) -> np.ndarray:
    """Reason codes → text (vectorised)."""
    return np.asarray(REASONS, dtype=object)[np.asarray(code, dtype=np.int64)]


def check(c: dict) -> np.ndarray:
    """Reason code per row (0 = valid); the first failing rule wins. `c` holds `evaluate`'s input columns."""
    def g(k):
        return np.asarray(c[k])
    broken = [(i + 1, r.test(g)) for i, r in enumerate(RULES) if r.test is not None]
    # a rule no row breaks leaves the codes as they are (sweeps: most rules), so the codes take the shape of the
    # rules that some row breaks (a broadcast column: `evaluate` spreads it over the grid with the rest)
    hit = [(i, b) for i, b in broken if np.any(b)]
    code = np.zeros(np.broadcast_shapes(*(np.shape(b) for _, b in hit)), dtype=np.int64)
    for i, b in reversed(hit):  # last to first so the first failing rule wins
        code = np.where(b, i, code)
    return code


# ---------------------------------------------------------------------------------------------------------------
# Links: the app's URL parameters for a configuration (the widgets' keys and units above)
# ---------------------------------------------------------------------------------------------------------------

def to_param(v: Any) -> str | list[str]:
    """A widget value as URL text (what `bind="query-params"` writes)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return [to_param(x) for x in v]
    if isinstance(v, float):
        return repr(v)
    return str(v)


def to_widget(name: str, value: Any) -> Any:
    """A core value of schema input `name` as its widget shows it (÷ scale; bools as on/off where a preset
    follows is not involved)."""
    i = BY_NAME[name]
    if value is None or isinstance(value, (bool, str)) or i.kind in ("choice", "bool", "str"):
        return value
    x = value / i.ui.scale
    return int(round(x)) if i.kind == "int" and i.ui.scale == 1 else float(x)


def link_params(inputs: dict, prefix: str = "") -> dict[str, str | list[str]]:
    """URL parameters of a page (keys prefix + widget key) that set the schema inputs `inputs` (core units): how a
    Fit map or Sweeps cell or a layout row opens in the Calculator with its whole configuration."""
    out = {}
    for name, v in inputs.items():
        if v is None or name not in BY_NAME or BY_NAME[name].ui is None:
            continue
        out[prefix + BY_NAME[name].ui.key] = to_param(to_widget(name, v))
    return out


def calculator_params(inputs: dict) -> dict[str, str | list[str]]:
    """The Calculator's URL parameters for a whole configuration in core units: every schema input it names, and
    where the model comes from (`src`). A Fit map or Sweeps cell and a layout row (the page's or `plan`'s) open in
    the Calculator with them, and show the same numbers there."""
    from .model import ARCH_FIELDS
    q = link_params(inputs)
    src = ("params" if "n_params" in inputs else "preset" if "model" in inputs
           else "architecture" if any(k in inputs for k in ARCH_FIELDS) else None)
    if src:
        q["src"] = src
    return q


def calculator_query(inputs: dict) -> str:
    """`calculator_params` as the Calculator's address relative to the app's ("calculator?model=…&tp=…")."""
    from urllib.parse import urlencode
    return "calculator?" + urlencode(calculator_params(inputs), doseq=True)
