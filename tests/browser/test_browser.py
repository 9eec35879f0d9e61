"""The app in a real browser (Playwright + Debian chromium): deep links on a cold server, every page's charts drawn,
the sidebar's human titles, URL updates on a widget change, a chart click that opens the Calculator, and a CSV
download."""
from __future__ import annotations

import csv
import io
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from bench.harness import ARTIFACTS, VIEWPORT, nav, nav_link, sync_api, wait_for_app, wait_for_charts
from ui.explain import EXAMPLES
from ui.registry import HOME, NAV, PAGES, page as row

from .conftest import record_timing

expect = sync_api.expect if sync_api is not None else None
BUDGET_S = 3.0  # the target for "page with its charts drawn after navigation"; asserted with slack below


def query(page) -> dict:
    return {k: v[-1] for k, v in parse_qs(urlparse(page.url).query).items()}


def no_exception(page) -> None:
    expect(page.get_by_test_id("stException")).to_have_count(0)


def expect_navigation(page, current) -> None:
    """The sidebar lists every page by its registry title, in order, each linking to its old path; Streamlit's own
    list (file names such as "time cost") is not drawn; the tab carries the current page's title."""
    expect(nav(page)).to_be_visible()
    links = nav(page).get_by_test_id("stPageLink-NavLink")
    expect(links.get_by_test_id("stMarkdownContainer")).to_have_text([p.title for p in NAV])  # not the icon's name
    assert [links.nth(i).get_attribute("href") for i in range(len(NAV))] == [p.url_path for p in NAV]
    expect(page.get_by_test_id("stSidebarNav")).to_have_count(0)
    expect(page).to_have_title(f"{current.title} · Training planner")


# a deep link a server gets as its very first request: page id, parameters, heading, (role, label, value) it shows
COLD_LINKS = [
    ("fit_map", {"fm_zero": "2", "fm_seq": "8192", "fm_gpu": "h200"}, "Where does it fit?",
     [("combobox", "ZeRO stage", "2"), ("spinbutton", "Sequence length", "8192"), ("combobox", "Accelerator", "h200")]),
    ("calculator", {"model": "llama-3.1-70b", "gpus": "64", "zero": "2"}, "Will it fit?",  # not the default ZeRO-1
     [("combobox", "Preset", "llama-3.1-70b"), ("spinbutton", "GPUs", "64"), ("combobox", "ZeRO stage", "2")]),
    ("activations", {"ac_model": "llama-3.1-70b", "ac_smax": "65536", "ac_unit": "GiB"},
     "Activations against sequence length",
     [("combobox", "Preset", "llama-3.1-70b"), ("combobox", "Longest sequence", "65536")]),
]


@pytest.mark.parametrize("page_id,params,heading,shown", COLD_LINKS, ids=[c[0] for c in COLD_LINKS])
def test_cold_start_deep_link_to_a_sub_page(cold_server, page, page_id, params, heading, shown):
    """The first request a fresh server sees is a link to a sub-page with parameters (a shared link after a restart
    or a Community Cloud wake-up): that page, drawn with those inputs, under the human-titled navigation."""
    p = row(page_id)
    page.goto(f"{cold_server.url}/{p.url_path}?{urlencode(params)}")
    wait_for_app(page)
    wait_for_charts(page, p.charts)
    expect(page.get_by_role("heading", level=1)).to_contain_text(heading)
    for role, label, value in shown:
        expect(page.get_by_role(role, name=label, exact=True)).to_have_value(value)
    assert urlparse(page.url).path == f"/{p.url_path}" and params.items() <= query(page).items(), page.url
    expect_navigation(page, p)
    no_exception(page)


@pytest.mark.parametrize("p", PAGES, ids=[p.id for p in PAGES])
def test_every_page_draws_its_charts(server, warm_page, p):
    """Open each page by its address in a browser that has the app's assets cached: charts drawn, no exception, a
    screenshot, and the time from navigation to the last chart drawn."""
    page = warm_page
    t0 = time.perf_counter()
    page.goto(f"{server.url}/{p.url_path}")
    wait_for_app(page)
    wait_for_charts(page, p.charts)
    elapsed = time.perf_counter() - t0
    record_timing(f"goto {p.id}", elapsed)
    no_exception(page)
    expect_navigation(page, p)
    page.screenshot(path=str(ARTIFACTS / f"page-{p.id}.png"), full_page=True)
    # no timing assertion (issue 17): bench/bench_app.py measures draw times; this only records them


def test_sidebar_navigation_draws_each_page(server, warm_page):
    """The same, navigating with the sidebar links (no page load)."""
    page = warm_page
    page.goto(f"{server.url}/{PAGES[0].url_path}")
    wait_for_app(page)
    for p in PAGES[1:] + (HOME,):
        t0 = time.perf_counter()
        nav_link(page, p.title).click()
        page.wait_for_url(lambda u: urlparse(u).path == f"/{p.url_path}", timeout=15_000)
        wait_for_app(page)
        wait_for_charts(page, p.charts)
        elapsed = time.perf_counter() - t0
        record_timing(f"nav {p.id}", elapsed)
        no_exception(page)
        expect_navigation(page, p)
        # no timing assertion (issue 17: draw times are measured in bench/bench_app.py, not asserted on a shared
        # machine); the time is recorded for the artifacts


def test_landing_page(server, page):
    page.goto(server.url)
    wait_for_app(page)
    expect(page.get_by_role("heading", level=1)).to_contain_text("Training planner")
    expect_navigation(page, HOME)
    no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "page-home.png"), full_page=True)


def test_widget_change_updates_the_url_and_the_link_reproduces_it(server, page, chromium):
    page.goto(f"{server.url}/calculator")
    wait_for_app(page)
    gpus = page.get_by_role("spinbutton", name="GPUs", exact=True)
    gpus.fill("64")
    gpus.press("Enter")
    wait_for_app(page)
    page.get_by_test_id("stRadio").filter(has_text="Memory unit").get_by_text("GiB").click()
    wait_for_app(page)
    page.wait_for_url(lambda u: "gpus=64" in u and "unit=GiB" in u, timeout=10_000)
    total = page.get_by_test_id("stMetric").filter(has_text="Total per GPU").inner_text()
    assert "GiB" in total

    other = chromium.new_context(viewport=VIEWPORT).new_page()  # a colleague opening it
    other.goto(page.url)
    wait_for_app(other)
    assert other.get_by_test_id("stMetric").filter(has_text="Total per GPU").inner_text() == total
    other.context.close()


def test_applying_the_advisors_change_updates_the_url(server, page):
    page.goto(f"{server.url}/calculator?seq=8192&flash=false&zero=0")  # the app's defaults fit
    wait_for_app(page)
    page.get_by_role("button", name="Apply this change").click()
    # the best change (flash attention + ZeRO-3) sets the app's defaults, which leave the URL
    page.wait_for_url(lambda u: "zero=0" not in u and "flash=false" not in u, timeout=10_000)
    wait_for_app(page)
    expect(page.get_by_test_id("stMetric").filter(has_text="Fits?")).to_contain_text("yes")


def test_bad_link_parameters_show_a_note(server, page):
    page.goto(f"{server.url}/calculator?seq=abc&gpus=1e400&zero=7")
    wait_for_app(page)
    note = page.get_by_test_id("stAlert").filter(has_text="link parameters were not used")
    expect(note).to_contain_text("seq=abc")
    expect(note).to_contain_text("zero=7")
    no_exception(page)


def test_download_delivers_the_chart_csv(server, page):
    page.goto(f"{server.url}/calculator")
    wait_for_app(page)
    with page.expect_download() as dl:
        page.get_by_test_id("stDownloadButton").filter(has_text="Bar data (CSV)").click()
    text = Path(dl.value.path()).read_text()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == ["part", "bytes", "start_bytes", "end_bytes", "gpu_memory_bytes",
                            "fragmentation_bytes"]
    assert {r["part"] for r in rows} >= {"weights", "grads", "optimizer", "master", "activations", "logits"}


def test_sweep_downloads_csv_and_parquet(server, page):
    page.goto(f"{server.url}/sweeps?sw_models=llama-3.1-8b&sw_fit=true")
    wait_for_app(page)
    wait_for_charts(page, 2)
    with page.expect_download() as dl:
        page.get_by_test_id("stDownloadButton").filter(has_text="Rows (CSV)").click()
    rows = list(csv.DictReader(io.StringIO(Path(dl.value.path()).read_text())))
    assert rows and {"model", "gpu", "n_gpus", "seq_len", "fits", "total_bytes", "days", "cost_usd"} <= set(rows[0])
    assert {r["model"] for r in rows} == {"llama-3.1-8b"} and {r["fits"] for r in rows} == {"true"}
    with page.expect_download() as dl:
        page.get_by_test_id("stDownloadButton").filter(has_text="Rows (Parquet)").click()
    data = Path(dl.value.path()).read_bytes()
    assert data[:4] == b"PAR1"
    import pyarrow.parquet as pq
    assert pq.read_table(io.BytesIO(data)).num_rows == len(rows)


@pytest.mark.parametrize("chart,keys", [(0, {"model", "gpus"}), (1, {"seq", "mb"})])
def test_clicking_a_fit_map_cell_opens_it_in_the_calculator(server, page, chart, keys):
    page.goto(f"{server.url}/fit_map?fm_zero=2")  # not the default (1), which a URL does not carry
    wait_for_app(page)
    wait_for_charts(page, 2)
    heat = page.get_by_test_id("stVegaLiteChart").nth(chart)
    heat.scroll_into_view_if_needed()  # the second map sits below the first, whose height grows with the presets
    cells = heat.locator("g.mark-rect path")
    box = cells.nth(cells.count() // 2 + 1).bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_url("**/calculator?**", timeout=15_000)
    wait_for_app(page)
    q = query(page)
    assert keys & set(q) and q.get("zero") == "2", page.url
    expect(page.get_by_role("heading", level=1)).to_contain_text("Will it fit?")
    no_exception(page)


def test_the_model_follows_to_the_next_page(server, page):
    page.goto(f"{server.url}/calculator?model=llama-3.1-70b")
    wait_for_app(page)
    nav_link(page, "Activations").click()
    wait_for_app(page)
    page.wait_for_url("**/activations?**ac_model=llama-3.1-70b**", timeout=15_000)
    no_exception(page)


def test_an_uploaded_config_json_fills_the_fields_and_the_link(server, page, tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text('{"model_type": "llama", "num_hidden_layers": 6, "hidden_size": 768, "num_attention_heads": 12, '
                   '"num_key_value_heads": 4, "intermediate_size": 2048, "vocab_size": 32000, "hidden_act": "silu"}')
    page.goto(f"{server.url}/calculator?src=hf-config")
    wait_for_app(page)
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(cfg))
    page.wait_for_url(lambda u: "layers=6" in u and "src=architecture" in u, timeout=15_000)
    wait_for_app(page)
    q = query(page)
    assert q["dmodel"] == "768" and q["heads"] == "12" and q["kv"] == "4"
    expect(page.get_by_role("spinbutton", name="layers")).to_have_value("6")
    no_exception(page)


def test_a_landing_link_opens_its_own_view_whatever_the_session_had(server, page):
    """The review's case, clicked: a session that set tp, recomputation and MFU on the Calculator goes Home and
    follows "7B on one 80 GB H100…": the URL is exactly the link's, the other inputs are at their defaults, and the page
    shows the advertised "does not fit" — not an error from the leftover tp=2 on 1 GPU."""
    page.goto(f"{server.url}/calculator?tp=2&rc=full&mfu=30")
    wait_for_app(page)
    nav_link(page, "Home").click()
    page.wait_for_url(lambda u: urlparse(u).path in ("", "/"), timeout=15_000)
    wait_for_app(page)
    page.get_by_test_id("stPageLink").filter(has_text=EXAMPLES[0].label).click()
    page.wait_for_url("**/calculator?**", timeout=15_000)
    wait_for_app(page)
    page.wait_for_timeout(300)
    assert query(page) == EXAMPLES[0].link, page.url
    expect(page.get_by_test_id("stAlert").filter(has_text="Does not fit")).to_have_count(1)
    expect(page.get_by_test_id("stMetric").filter(has_text="Fits?")).to_contain_text("no")
    expect(page.get_by_role("spinbutton", name="TP")).to_have_value("1")
    no_exception(page)


def test_an_emptied_multiselect_link_opens_empty(server, page, chromium):
    page.goto(f"{server.url}/fit_map")
    wait_for_app(page)
    page.get_by_test_id("stMultiSelect").filter(has_text="GPU counts").get_by_role("button", name="Clear all").click()
    page.wait_for_url(lambda u: "fm_counts=" in u, timeout=10_000)
    wait_for_app(page)
    other = chromium.new_context(viewport=VIEWPORT).new_page()
    other.goto(page.url)
    wait_for_app(other)
    expect(other.get_by_test_id("stAlert")).to_have_count(1)
    expect(other.get_by_test_id("stAlert")).to_contain_text("Choose at least one model and one GPU count")
    other.context.close()
