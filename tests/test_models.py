"""Parameter counts: presets reproduce their published counts; the breakdown sums to its total; HF config import."""
from __future__ import annotations

import json

import pytest

from core.model import Model, from_hf_config, get_preset, param_breakdown, preset_info, preset_names, raw_model

# (preset, published total, published active, relative tolerance, where the published number comes from)
PUBLISHED = [
    ("gpt-3-175b", 174.6e9, None, 5e-4, "Brown et al. 2020 Table 2.1 / exact count 174.6B"),
    ("llama-2-7b", 6.74e9, None, 1e-3, "Llama 2 HF card 6.74B"),
    ("llama-2-13b", 13.0e9, None, 2e-3, "Llama 2 HF card 13.0B"),
    ("llama-2-70b", 69.0e9, None, 1e-3, "Llama 2 HF card 69.0B"),
    ("llama-3.1-8b", 8.03e9, None, 1e-3, "Llama 3.1 card 8.03B"),
    ("llama-3.1-70b", 70.6e9, None, 1e-3, "Llama 3.1 card 70.6B"),
    ("llama-3.1-405b", 405.9e9, None, 1e-3, "Llama 3.1 card 405.9B"),
    ("llama-3.2-1b", 1.24e9, None, 4e-3, "Llama 3.2 card 1.24B (1.2358B rounds to 1.24)"),
    ("llama-3.2-3b", 3.21e9, None, 1e-3, "Llama 3.2 card 3.21B"),
    ("mistral-7b", 7.24e9, None, 1e-3, "Mistral 7B 7.24B"),
    ("mixtral-8x7b", 46.7e9, 12.9e9, 2e-3, "Mixtral paper: 46.7B total, 12.9B active"),
    ("qwen2.5-7b", 7.62e9, None, 1e-3, "Qwen2.5 report 7.62B"),
    ("qwen2.5-72b", 72.7e9, None, 1e-3, "Qwen2.5 report 72.7B"),
    # the seeds' GPT-style sizes: GPT-3 Table 2.1 names, rounded to 2 figures by the paper
    ("gpt-3-6.7b", 6.7e9, None, 0.01, "GPT-3 Table 2.1 6.7B (seeds' 7B shape)"),
    ("gpt-3-2.7b", 2.7e9, None, 0.02, "GPT-3 Table 2.1 2.7B"),
    ("gpt-3-1.3b", 1.3e9, None, 0.015, "GPT-3 Table 2.1 1.3B (seed 002's 1.3B)"),
    ("gpt-3-13b", 13e9, None, 0.012, "GPT-3 Table 2.1 13B (d_model 5120 for 40 heads, see data/models.csv)"),
]


@pytest.mark.parametrize("name, total, active, tol, src", PUBLISHED, ids=[p[0] for p in PUBLISHED])
def test_preset_reproduces_published_count(name, total, active, tol, src):
    p = get_preset(name).params()
    assert p["total"] == pytest.approx(total, rel=tol), src
    if active:
        assert p["active"] == pytest.approx(active, rel=tol), src
    assert float(preset_info(name)["published_params"]) == total


def test_every_preset_is_tested():
    from test_architectures import PUBLISHED as NEWER  # the presets of issue 12, tested there
    from test_hybrid import PUBLISHED as HYBRID  # the hybrid Mamba-2 presets of issue 19, tested there
    from test_recipes import PUBLISHED as NEWEST  # the presets of issue 19, tested there
    assert {p[0] for p in PUBLISHED} | {p[0] for p in NEWER} | {p[0] for p in NEWEST} | {p[0] for p in HYBRID} \
        == set(preset_names())


def test_gpt3_175b_exact():
    """The exact count of the GPT-3 175B shape (96 layers, 12288 wide, 50257 vocab, 2048 positions, tied)."""
    assert get_preset("gpt-3-175b").params()["total"] == 174_604_259_328


@pytest.mark.parametrize("name", preset_names())
def test_parts_sum_to_total(name):
    p = get_preset(name).params()
    parts = {k: v for k, v in p.items() if k not in ("total", "active")}
    assert sum(parts.values()) == p["total"]
    assert p["active"] <= p["total"]


def test_llama2_7b_parts_exact():
    """Llama 2 7B by hand: embedding 32000·4096; per layer 4·4096² attention + 3·4096·11008 MLP + 2·4096 norms."""
    p = get_preset("llama-2-7b").params()
    assert p["embedding"] == 32000 * 4096 == p["lm_head"]
    assert p["attention"] == 32 * 4 * 4096**2
    assert p["mlp"] == 32 * 3 * 4096 * 11008
    assert p["norms"] == 32 * 2 * 4096 + 4096
    assert p["total"] == 6_738_415_616


def test_vectorised_breakdown_matches_scalar():
    names = ["llama-2-7b", "mixtral-8x7b", "gpt-3-175b"]
    ms = [get_preset(n) for n in names]
    cols = {k: [m.arch()[k] for m in ms] for k in ms[0].arch()}
    vec = param_breakdown(**cols)
    for i, m in enumerate(ms):
        assert vec["total"][i] == m.params()["total"]


def test_raw_mode_names_its_shape():
    m = raw_model(7e9)
    assert m.n_params == 7e9 and "gpt-3-6.7b" in m.shape_note
    assert raw_model(1.3e9).n_layers == 24 and raw_model(175e9).d_model == 12288


def test_hf_config_llama(tmp_path):
    cfg = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
           "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256, "hidden_act": "silu",
           "max_position_embeddings": 131072, "tie_word_embeddings": False, "attention_dropout": 0.0}
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    m = from_hf_config(p)
    assert m.params()["total"] == get_preset("llama-3.1-8b").params()["total"]
    assert m.mlp == "swiglu" and m.norm == "rmsnorm" and not m.dropout


def test_hf_config_mixtral_and_qwen_and_gpt2():
    mix = from_hf_config({"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336,
                          "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
                          "vocab_size": 32000, "num_local_experts": 8, "num_experts_per_tok": 2})
    assert mix.params()["total"] == get_preset("mixtral-8x7b").params()["total"]
    qwen = from_hf_config({"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
                           "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4,
                           "vocab_size": 152064, "tie_word_embeddings": False})
    assert qwen.params()["total"] == get_preset("qwen2.5-7b").params()["total"]
    gpt2 = from_hf_config({"model_type": "gpt2", "n_embd": 768, "n_head": 12, "n_layer": 12, "vocab_size": 50257,
                           "n_positions": 1024})
    assert gpt2.params()["total"] == 124_439_808  # GPT-2 small incl. its 1024·768 position table


@pytest.mark.parametrize("bad, field", [
    ({"hidden_size": 4096}, "config"),
    ("not json", "config"),
])
def test_hf_config_errors_name_the_field(tmp_path, bad, field):
    p = tmp_path / "c.json"
    p.write_text(bad if isinstance(bad, str) else json.dumps(bad))
    with pytest.raises(ValueError, match=field):
        from_hf_config(p)


@pytest.mark.parametrize("bad", [[1, 2], 3, None, {"hidden_size": "abc", "num_attention_heads": 8},
                                 {"hidden_size": 64, "num_attention_heads": 0, "num_hidden_layers": 2,
                                  "vocab_size": 10}])
def test_hf_config_wrong_type_is_a_value_error(bad):
    with pytest.raises(ValueError, match="config"):
        from_hf_config(bad)


def test_overrides_keep_derived_defaults():
    m = get_preset("gpt-3-1.3b").with_overrides(n_heads=32)
    assert m.n_kv_heads == 32  # stays multi-head
    g = get_preset("llama-3.1-8b").with_overrides(n_heads=16)
    assert g.n_kv_heads == 8  # GQA stays as given


@pytest.mark.parametrize("kw, field", [
    (dict(n_layers=2, d_model=100, n_heads=3), "d_model"),
    (dict(n_layers=2, d_model=64, n_heads=8, n_kv_heads=3), "n_kv_heads"),
    (dict(n_layers=0, d_model=64, n_heads=8), "n_layers"),
    (dict(n_layers=2, d_model=-64, n_heads=8), "d_model"),
    (dict(n_layers=2, d_model=64, n_heads=8, mlp="relu"), "mlp"),
    (dict(n_layers=2, d_model=64, n_heads=8, n_experts=2, top_k=3), "top_k"),
    (dict(n_layers="2", d_model=64, n_heads=8), "n_layers"),
    (dict(n_layers=2.5, d_model=64, n_heads=8), "n_layers"),
])
def test_model_validation(kw, field):
    with pytest.raises(ValueError, match=field):
        Model(**kw)


def test_unknown_preset_lists_known():
    with pytest.raises(ValueError, match="llama-3.1-8b"):
        get_preset("llama-9")
