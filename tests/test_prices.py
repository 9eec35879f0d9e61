"""Price tiers (issue 20 item 3): on-demand (the catalog's), reserved and spot (data/prices.csv, dated and sourced);
the user's own price wins; spot preemptions feed goodput."""
import csv
from pathlib import Path

import pytest

from core.estimate import config_from_inputs, estimate
from core.hardware import catalog, tier_prices

ROOT = Path(__file__).resolve().parent.parent
BASE = dict(model="llama-3.1-8b", n_gpus=64, seq_len=4096, mfu="auto")


def test_every_tier_price_is_dated_and_sourced():
    with open(ROOT / "data" / "prices.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and all(r["name"] in catalog() and r["tier"] in ("reserved", "spot") and r["date"] and r["source"]
                        and float(r["price_usd_per_gpu_hour"]) > 0 for r in rows)
    assert len({(r["name"], r["tier"]) for r in rows}) == len(rows)


@pytest.mark.parametrize("tier", ["reserved", "spot"])
def test_a_tier_prices_the_run_at_its_row(tier):
    on = estimate(config_from_inputs(**BASE))
    t = estimate(config_from_inputs(**BASE, price_tier=tier))
    want = tier_prices()[("h100-sxm", tier)][0]
    assert t["price_per_gpu_hour"] == want
    assert t["cost_usd"] == pytest.approx(on["cost_usd"] * want / on["price_per_gpu_hour"], rel=1e-9)
    own = estimate(config_from_inputs(**BASE, price_tier=tier, price_per_gpu_hour=9.0))
    assert own["price_per_gpu_hour"] == 9.0  # the user's own price wins


def test_spot_preemptions_lower_the_goodput():
    on = estimate(config_from_inputs(**BASE))
    spot = estimate(config_from_inputs(**BASE, price_tier="spot"))
    assert spot["goodput_frac"] < on["goodput_frac"]
    none = estimate(config_from_inputs(**BASE, price_tier="spot", preemption_rate_per_gpu_hour=0.0))
    assert none["goodput_frac"] == pytest.approx(on["goodput_frac"], rel=1e-12)


def test_a_tier_without_a_price_is_refused_by_name():
    with pytest.raises(ValueError, match="price_tier"):
        config_from_inputs(**{**BASE, "gpu": "l4"}, price_tier="reserved").columns()


def test_budget_at_spot_prices_buys_more():
    from core.budget import plan_budget
    on = plan_budget(usd=1e6, days=60, gpus=("h100-sxm",))
    spot = plan_budget(usd=1e6, days=60, gpus=("h100-sxm",), price_tier="spot")
    assert spot["best"]["n_params"] > on["best"]["n_params"]
    none = plan_budget(usd=1e6, days=60, gpus=("l4",), price_tier="spot")
    assert none["best"] is None and "spot" in none["left_out"]["l4"]
