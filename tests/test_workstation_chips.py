"""Catalog rows for the workstation and cloud cards fine-tuners rent (data/accelerators.csv, added 2026-12-07 with
their sources in the rows): A40, L40, RTX 6000 Ada, GeForce RTX 5090, AWS's A10G. Figures checked against their own
derivations (SMs × clock × tensor FLOPs per SM per clock, the datasheets' dense rates), and every card answers a
planner's question."""
import pytest

from core.estimate import config_from_inputs, estimate
from core.hardware import catalog

NEW = ("a40", "l40", "rtx-6000-ada", "rtx-5090", "a10g")


@pytest.mark.parametrize("name, sms, mhz, flops_per_sm_clock", [
    ("a40", 84, 1740, 1024),          # full-rate FP32 accumulate (data-centre GA102; NVIDIA A40 datasheet 149.7)
    ("l40", 142, 2490, 512),          # half-rate FP32 accumulate (NVIDIA L40 datasheet 181.05)
    ("rtx-6000-ada", 142, 2505, 1024),  # full rate assumed, as the RTX A6000 measures (the row says so)
    ("rtx-5090", 170, 2407, 512),     # GeForce: FP32 accumulate at half the FP16-accumulate rate (209.5)
    ("a10g", 80, 1695, 512),          # derived: no NVIDIA datasheet; half rate measured (69.47 TFLOP/s matmul)
])
def test_the_dense_bf16_rate_is_sms_times_clock(name, sms, mhz, flops_per_sm_clock):
    assert catalog()[name].peak_bf16_flops_per_s == pytest.approx(sms * mhz * 1e6 * flops_per_sm_clock, rel=0.002)


def test_families_and_links():
    cat = catalog()
    assert {cat[n].family for n in ("a40", "a10g")} == {"ampere"}
    assert {cat[n].family for n in ("l40", "rtx-6000-ada")} == {"ada"}
    # GeForce Blackwell (sm_120) has no tcgen05 or tensor memory: FlashAttention-2-class kernels, not the B200's FA4
    assert cat["rtx-5090"].family == "blackwell-geforce" and cat["rtx-5090"].native_fa2
    assert cat["rtx-5090"].host_link_bytes_per_s == 63e9  # PCIe Gen5 x16, one direction
    # AWS G5: up to 100 Gbps per instance of 8 A10G
    assert cat["a10g"].inter_node_bytes_per_s == pytest.approx(100e9 / 8 / 8)
    assert all(cat[n].sm_count > 0 and cat[n].price_usd_per_gpu_hour > 0 for n in NEW)


@pytest.mark.parametrize("name", NEW)
def test_each_card_answers_a_fine_tuning_question(name):
    rec = estimate(config_from_inputs(model="llama-3.1-8b", gpu=name, framework="fsdp", n_gpus=1, gpus_per_node=1,
                                      zero_stage=0, training="qlora", micro_batch=1, global_batch=8, seq_len=2048,
                                      recompute="full"))
    assert rec["fits"] and rec["predicted_step_time_s"] > 0
    assert rec["predicted_step_time_low_s"] <= rec["predicted_step_time_s"] <= rec["predicted_step_time_high_s"]
