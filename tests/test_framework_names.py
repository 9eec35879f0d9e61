"""The framework input accepts the name of a stack a profile stands for (data/frameworks.csv `stacks`): `--framework
torchtitan` is the fsdp profile's question, and gives the fsdp profile's answer in the CLI, specs and Config alike;
a name that is neither a profile nor a stack is refused by name, with the list of both."""
import json
import shutil

import pytest

from core import cli
from core import profiles as PF
from core.estimate import config_from_inputs, estimate
from core.spec import SweepSpec


def test_each_profile_stands_for_its_labels_stacks():
    names = PF.stack_names()
    assert {names[s] for s in ("megatron-lm", "megatron-bridge", "megatron-deepspeed")} == {"megatron"}
    assert {names[s] for s in ("torchtitan", "llm-foundry", "olmo-core", "fms-fsdp")} == {"fsdp"}
    assert {names[s] for s in ("axlearn", "levanter", "paxml")} == {"maxtext"}
    # names that run on more than one profile's engine are not stacks of any: Accelerate and HF Trainer (FSDP or
    # DeepSpeed), Primus (Megatron-LM, TorchTitan or MaxText), NeMo and NeMo AutoModel (Megatron and FSDP2), and
    # 'jax' and 'xla' (a library, and a compiler PyTorch/XLA shares)
    assert not {"accelerate", "hf-trainer", "primus", "nemo", "automodel", "jax", "xla"} & set(names)
    # the help is the profiles' own labels and stacks (one place: data/frameworks.csv)
    for p in PF.profiles().values():
        assert p.label in PF.describe() and all(s in PF.describe() for s in p.stacks)


@pytest.mark.parametrize("stack", ["TorchTitan", "Megatron-Bridge", "AXLearn", "deepspeed-zero", " Megatron "])
def test_a_stack_name_is_its_profile_everywhere(stack, capsys):
    fw = PF.stack_names().get(stack.strip().lower(), stack.strip().lower())
    base = dict(model="llama-3.1-8b", gpu="h100-sxm", n_gpus=8, zero_stage=3 if fw != "megatron" else 1)
    assert config_from_inputs(**base, framework=stack).framework == fw
    want = estimate(config_from_inputs(**base, framework=fw))
    got = estimate(config_from_inputs(**base, framework=stack))
    assert got["predicted_step_time_s"] == want["predicted_step_time_s"] and got["total_bytes"] == want["total_bytes"]
    # the CLI: the same record as the profile's own name
    args = ["estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--n-gpus", "8", "--zero-stage",
            str(base["zero_stage"]), "--json"]
    assert cli.main(args + ["--framework", stack]) == 0
    a = json.loads(capsys.readouterr().out)
    assert cli.main(args + ["--framework", fw]) == 0
    b = json.loads(capsys.readouterr().out)
    assert a == b
    # a sweep's spec keeps the profile's name
    assert SweepSpec.from_dict({"model": "llama-3.1-8b", "framework": [stack], "n_gpus": 8}).to_dict()[
        "framework"] in (fw, [fw])


def test_an_unknown_framework_is_refused_by_name_with_both_lists(capsys):
    with pytest.raises(ValueError, match=r"framework: 'pytorch' is not one of megatron, fsdp, deepspeed, maxtext; "
                                         r"or a stack's name: .*torchtitan \(fsdp\)"):
        config_from_inputs(model="llama-3.1-8b", framework="pytorch")
    with pytest.raises(ValueError, match=r"framework: 'accelerate' is not one of .*megatron-bridge \(megatron\)"):
        SweepSpec.from_dict({"model": "llama-3.1-8b", "framework": ["fsdp", "accelerate"]})
    assert cli.main(["estimate", "--model", "llama-3.1-8b", "--framework", "pytorch"]) == 2
    err = capsys.readouterr().err
    assert "framework: 'pytorch' is not one of megatron, fsdp, deepspeed, maxtext; or a stack's name:" in err
    assert "Traceback" not in err


def test_a_stack_named_twice_is_refused_when_the_data_is_read(tmp_path, monkeypatch):
    for f in ("frameworks.csv", "fitted.csv"):
        shutil.copy(PF.DATA_DIR / f, tmp_path / f)
    with open(tmp_path / "frameworks.csv", "a", newline="") as fh:
        fh.write('deepspeed,stacks,deepspeed-zero torchtitan,"a test: torchtitan is fsdp\'s already"\n')
    monkeypatch.setattr(PF, "DATA_DIR", tmp_path)
    PF.profiles.cache_clear()
    PF.fitted_rows.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"deepspeed stacks: 'torchtitan' is already a stack of fsdp"):
            PF.profiles()
    finally:
        monkeypatch.undo()
        PF.profiles.cache_clear()
        PF.fitted_rows.cache_clear()
    assert PF.stack_names()["torchtitan"] == "fsdp"


def test_every_entry_point_reads_a_stack_as_its_profile(tmp_path):
    """The Python entry points too (review of be861d9): plan, plan_budget, calibration runs, Config.replace."""
    from core.budget import plan_budget
    from core.calibrate import check
    from core.plan import plan
    a = plan({"model": "llama-3.1-8b", "framework": "axlearn"}, (16,), top=3)
    b = plan({"model": "llama-3.1-8b", "framework": "maxtext"}, (16,), top=3)
    assert (a["valid"], a["fit"], a["strategies"]) == (b["valid"], b["fit"], b["strategies"])
    x = plan_budget(usd=2e4, gpus=["rtx-4090"], framework="torchtitan")
    y = plan_budget(usd=2e4, gpus=["rtx-4090"], framework="fsdp")
    assert x["best"] is not None and x["best"] == y["best"]
    runs = check([{"model": "llama-3.1-8b", "framework": "torchtitan", "n_gpus": 8, "step_time_s": 1.0,
                   "global_batch": 8},
                  {"model": "llama-3.1-8b", "framework": "FSDP", "n_gpus": 8, "step_time_s": 2.0, "global_batch": 16}])
    assert {r["framework"] for r in runs} == {"fsdp"}
    cfg = config_from_inputs(model="llama-3.1-8b", zero_stage=3).replace(framework="TorchTitan")
    assert cfg.framework == "fsdp"


def test_published_runs_name_their_profile_not_a_stack(tmp_path):
    """The fits group runs by profile name: a data row that says 'torchtitan' is refused when read."""
    from core import validation as V
    src = (V.DATA).read_text().splitlines(keepends=True)
    bad = tmp_path / "runs.csv"
    bad.write_text(src[0] + src[1].replace(",megatron,", ",megatron-lm,", 1))
    with pytest.raises(ValueError, match=r"framework 'megatron-lm' is not one of megatron, fsdp, deepspeed, maxtext"):
        V.read(bad)


def test_a_link_may_name_a_stack(capsys):
    """The app: ?fw=TorchTitan opens the fsdp profile with no note, and gives the numbers ?fw=fsdp gives."""
    from test_app import notes, run_page
    at = run_page("pages/01_calculator.py", fw="TorchTitan", zero="3")
    assert not at.exception and not notes(at)
    assert [s.value for s in at.selectbox if s.label == "Framework"] == ["fsdp"]
    again = run_page("pages/01_calculator.py", fw="fsdp", zero="3")
    assert [m.value for m in at.metric] == [m.value for m in again.metric]
