"""In a real browser, an accelerator has one colour on every page: the Roofline's and the Time & cost page's legends
(as Vega drew them) give each accelerator the same colour, whatever else is selected, in whatever order, whatever the
dtype — and the colour the chart builders fix for it (ui.charts.gpu_colors)."""
from __future__ import annotations

from urllib.parse import urlencode

from bench.harness import ARTIFACTS, wait_for_app, wait_for_charts
from ui import charts as K

# every legend entry of every chart on the page: (label, the colour of its symbol)
LEGEND_JS = """() => {
  const out = [];
  for (const entry of document.querySelectorAll("[data-testid='stVegaLiteChart'] .role-legend-entry")) {
    const labels = [...entry.querySelectorAll('.role-legend-label text')].map(t => t.textContent);
    const symbols = [...entry.querySelectorAll('.role-legend-symbol path')]
      .map(p => p.getAttribute('stroke') && p.getAttribute('stroke') !== 'transparent' ? p.getAttribute('stroke')
                                                                                     : p.getAttribute('fill'));
    labels.forEach((l, i) => out.push([l, symbols[i]]));
  }
  return out;
}"""


def legend_colours(page, url: str, charts: int, shot: str) -> dict:
    page.goto(url)
    wait_for_app(page)
    wait_for_charts(page, charts)
    page.screenshot(path=str(ARTIFACTS / shot), full_page=True)
    names = set(K.gpu_colors())
    return {label: (colour or "").lower() for label, colour in page.evaluate(LEGEND_JS) if label in names}


def test_accelerator_colours_match_on_roofline_and_time_cost(server, page):
    views = {
        "roofline": legend_colours(page, f"{server.url}/roofline?" + urlencode(
            {"rf_accs": ["h100-sxm", "a100-80gb", "b200", "h200"]}, doseq=True), 1, "colors-roofline.png"),
        "roofline fp8, other order": legend_colours(page, f"{server.url}/roofline?" + urlencode(
            {"rf_accs": ["b200", "h200", "h100-sxm"], "rf_dtype": "fp8"}, doseq=True), 1, "colors-roofline-fp8.png"),
        "time & cost": legend_colours(page, f"{server.url}/time_cost?" + urlencode(
            {"tc_accs": ["mi300x", "b200", "h100-sxm", "a100-80gb"]}, doseq=True), 1, "colors-time_cost.png"),
    }
    for where, colours in views.items():
        assert len(colours) >= 3, (where, colours)
    fixed = {k: v.lower() for k, v in K.gpu_colors().items()}
    for where, colours in views.items():
        for name, colour in colours.items():
            assert colour == fixed[name], (where, name, colour, fixed[name])
    # the same accelerator on both pages: h100-sxm, b200 and a100-80gb are drawn on each
    shared = set(views["roofline"]) & set(views["time & cost"])
    assert {"h100-sxm", "b200", "a100-80gb"} <= shared
    assert all(views["roofline"][n] == views["time & cost"][n] for n in shared)
    assert len(set(views["time & cost"].values())) == len(views["time & cost"])  # distinct colours
