"""Energy and carbon of a run (issue 20): what the GPUs draw over the run's GPU-hours, with the node and the data
centre around them, times the grid's carbon intensity.

    energy_kwh = GPU-hours × board power (kW) × power_draw_frac × (1 + node_overhead_frac) × PUE
    co2e_kg    = energy_kwh × carbon_kg_per_kwh

Defaults are the convention Meta's Llama papers state (Llama 1, Touvron et al. 2023, arXiv:2302.13971 §6: "Wh =
GPU-h × (GPU power consumption) × PUE, where we set the Power Usage Effectiveness (PUE) at 1.1 … the US national
average carbon intensity factor of 0.385 kg CO2 eq/KWh"): the board power at its rated figure (data/accelerators.csv
`board_power_w`; Llama 2 Table 2 and the Llama 3.1 model card use 400 W for A100-80GB and 700 W for H100), no node
overhead (CPUs, NICs, switches: give node_overhead_frac for them), PUE 1.1, 0.385 kg CO2e/kWh.
"""
from __future__ import annotations

import numpy as np

LLAMA_PUE = 1.1  # Llama 1 §6
US_CARBON_KG_PER_KWH = 0.385  # the US national average, Llama 1 §6


def energy_and_carbon(gpu_hours, board_power_w, power_draw_frac=1.0, node_overhead_frac=0.0, pue=LLAMA_PUE,
                      carbon_kg_per_kwh=US_CARBON_KG_PER_KWH) -> dict:
    """{"energy_kwh", "co2e_kg"} (vectorised; NaN where the board power is unknown)."""
    kwh = (np.asarray(gpu_hours, dtype=np.float64) * np.asarray(board_power_w, dtype=np.float64) / 1000.0
           * np.asarray(power_draw_frac, dtype=np.float64) * (1.0 + np.asarray(node_overhead_frac, dtype=np.float64))
           * np.asarray(pue, dtype=np.float64))
    return {"energy_kwh": kwh, "co2e_kg": kwh * np.asarray(carbon_kg_per_kwh, dtype=np.float64)}
