"""Calibration from a user's own run (core/calibrate.py) through the CLI's --calibrate, and the interval and the
validated flag in the CLI's text and in `plan` (issue 18 items 7 and 8)."""
import json

import pytest

from core import calibrate as CAL
from core.cli import main
from core.estimate import config_from_inputs, estimate
from core.plan import plan

RUN = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "framework": "fsdp", "zero_stage": 3, "n_gpus": 8,
       "seq_len": 8192, "global_batch": 64}


def _step(**over):
    return estimate(config_from_inputs(**{**RUN, "mfu": "auto", **over}))["predicted_step_time_s"]


def _write(tmp_path, runs, name="runs.json"):
    p = tmp_path / name
    p.write_text(json.dumps(runs))
    return str(p)


def test_one_run_calibration_reproduces_it_and_carries_to_other_layouts(tmp_path, capsys):
    measured = 1.2 * _step()  # a run 20 % slower than predicted
    cal = CAL.fit([{**RUN, "step_time_s": measured}])
    assert cal["inputs"]["efficiency_scale"] < 1.0
    assert _step(**cal["inputs"]) == pytest.approx(measured, rel=0.02)
    # one run fits one factor on kernels, host work and links together: a different size on more GPUs, and a run
    # bound by the CPU optimizer, are slower by the same factor
    other = dict(model="llama-3.1-70b", n_gpus=64, global_batch=256)
    assert _step(**other, **cal["inputs"]) / _step(**other) == pytest.approx(1.2, rel=0.02)
    assert _step(offload="optimizer", **cal["inputs"]) / _step(offload="optimizer") == pytest.approx(1.2, rel=0.02)
    assert cal["inputs"]["efficiency_scale"] == cal["inputs"]["network_scale"]
    path = _write(tmp_path, [{**RUN, "step_time_s": measured}])
    assert main(["estimate", "--model", "llama-3.1-70b", "--framework", "fsdp", "--zero-stage", "3", "--n-gpus", "64",
                 "--global-batch", "256", "--seq-len", "8192", "--calibrate", path, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["calibration"]["inputs"] == cal["inputs"]
    assert out["predicted_step_time_s"] == pytest.approx(_step(**other, **cal["inputs"]), rel=1e-9)
    lo, hi = cal["inputs"]["interval_low"], cal["inputs"]["interval_high"]
    assert out["predicted_step_time_low_s"] <= lo * out["predicted_step_time_s"] * (1 + 1e-9)
    assert out["predicted_step_time_high_s"] >= hi * out["predicted_step_time_s"] * (1 - 1e-9)


def test_three_runs_give_the_users_own_interval(tmp_path):
    runs = [{**RUN, "n_gpus": n, "global_batch": 8 * n, "step_time_s": f * _step(n_gpus=n, global_batch=8 * n)}
            for n, f in ((8, 1.10), (16, 1.12), (32, 1.14))]
    cal = CAL.fit(runs)
    assert "leave-one-run-out" in cal["basis"]
    assert cal["inputs"]["interval_low"] <= CAL.CAL_FLOOR[0] and cal["inputs"]["interval_high"] >= CAL.CAL_FLOOR[1]
    assert all(r == pytest.approx(1.0, abs=0.03) for r in cal["ratios"])


@pytest.mark.parametrize("runs,flags,words", [
    ([{**RUN, "step_time_s": 10.0}], ["--model", "llama-3.1-8b"], "framework fsdp"),  # megatron question
    ([{**RUN, "step_time_s": 1e-4}], ["--framework", "fsdp", "--zero-stage", "3"], "implies an MFU"),
    ([{**RUN}], [], "exactly one of step_time_s, tokens_per_s"),
    ([{**RUN, "step_time_s": 10.0, "global_batch": None}], [], "needs global_batch"),
    ([{**RUN, "step_time_s": 10.0}, {**RUN, "gpu": "a100-80gb", "step_time_s": 10.0}], [], "same gpu"),
    ({"step_time_s": 1.0}, [], "expected a JSON list"),
])
def test_bad_calibration_is_refused_by_name(tmp_path, capsys, runs, flags, words):
    path = _write(tmp_path, runs)
    assert main(["estimate", *flags, "--calibrate", path]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: calibrate:") and words in err and "Traceback" not in err


def test_unreadable_calibration_file(tmp_path, capsys):
    p = tmp_path / "x.json"
    p.write_text("{not json")
    assert main(["estimate", "--calibrate", str(p)]) == 2
    assert "calibrate: cannot read x.json" in capsys.readouterr().err


def test_estimate_text_shows_the_interval_and_the_flag(capsys):
    assert main(["estimate", "--model", "llama-3.1-70b", "--n-gpus", "64", "--zero-stage", "3"]) == 0
    out = capsys.readouterr().out
    assert "80 % interval: step" in out and "not validated" in out


def test_plan_flags_unvalidated_layouts_and_names_the_best_validated(capsys):
    """Llama-3.1-70B on 64 H100 (global batch 512 × 8,192; issue 18): the fastest predicted layout (ZeRO-3 at tp 1)
    is of a class no published run validates; the best validated one is Megatron-style at an MFU where published
    70B-class runs on H100 land (42–54 %)."""
    res = plan(dict(model="llama-3.1-70b", global_batch=512, seq_len=8192), (64,), top=5)
    assert not res["strategies"][0]["validated"]
    bv = res["best_validated"]
    assert bv["validated"] and bv["tp"] > 1
    assert 0.42 <= bv["predicted_mfu"] <= 0.54
    assert main(["plan", "--model", "llama-3.1-70b", "--n-gpus", "64", "--global-batch", "512", "--seq-len", "8192",
                 "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "80 % interval" in out and " NO" in out and "best validated layout" in out
