"""The Budget page in a real browser (issue 20): a changed budget reaches the URL, and that link shows a colleague
the same answer."""
from __future__ import annotations

from bench.harness import VIEWPORT, sync_api, wait_for_app, wait_for_charts
from ui.registry import page as row

expect = sync_api.expect if sync_api is not None else None


def _answer(p) -> list[str]:
    return [p.get_by_test_id("stMetric").filter(has_text=t).inner_text()
            for t in ("Parameters", "GPUs", "Days with failures", "Cost with failures")]


def test_budget_page_link_reproduces_the_view(server, page, chromium):
    page.goto(f"{server.url}/budget?bu_accs=h100-sxm&bu_accs=b200")
    wait_for_app(page)
    wait_for_charts(page, row("budget").charts)
    usd = page.get_by_role("spinbutton", name="Budget (USD)", exact=True)
    usd.fill("500000")
    usd.press("Enter")
    wait_for_app(page)
    page.wait_for_url(lambda u: "bu_usd=500000" in u, timeout=10_000)
    wait_for_charts(page, row("budget").charts)
    shown = _answer(page)
    assert "$500,000" in shown[3]  # the budget is spent, not exceeded
    expect(page.get_by_test_id("stException")).to_have_count(0)

    other = chromium.new_context(viewport=VIEWPORT).new_page()  # a colleague opening the link
    other.goto(page.url)
    wait_for_app(other)
    wait_for_charts(other, row("budget").charts)
    assert _answer(other) == shown
    other.context.close()
