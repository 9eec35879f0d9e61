"""Real-browser fixtures over bench/harness.py (the server, chromium and the waits, shared with the benchmark).
Everything here skips cleanly when playwright or chromium is missing. Screenshots and timings go to test-artifacts/
(gitignored)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.harness import ARTIFACTS, SKIP_REASON, VIEWPORT, Server, launch, sync_api, wait_for_app


def pytest_collection_modifyitems(config, items):
    """Skip every browser test, cleanly, when playwright or chromium is missing."""
    if SKIP_REASON:
        here = Path(__file__).parent
        for item in items:
            if here in Path(str(item.fspath)).parents:
                item.add_marker(pytest.mark.skip(reason=SKIP_REASON))


@pytest.fixture(scope="session")
def server():
    s = Server("shared")
    yield s
    s.stop()


@pytest.fixture()
def cold_server():
    """A server nobody has opened yet: its first request is the test's."""
    s = Server("cold")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def chromium():
    with sync_api.sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


@pytest.fixture()
def page(chromium):
    ctx = chromium.new_context(viewport=VIEWPORT, accept_downloads=True)
    pg = ctx.new_page()
    yield pg
    ctx.close()


@pytest.fixture(scope="session")
def warm_page(chromium, server):
    """One browser context for a tour of the pages (its HTTP cache warm, as a user's is after the first page); the
    landing page is opened first so the server's first-session imports are not charged to a page."""
    ctx = chromium.new_context(viewport=VIEWPORT, accept_downloads=True)
    pg = ctx.new_page()
    pg.goto(server.url)
    wait_for_app(pg)
    yield pg
    ctx.close()


def record_timing(name: str, seconds: float) -> None:
    path = ARTIFACTS / "browser_timings.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data[name] = round(seconds, 3)
    path.write_text(json.dumps(data, indent=2, sort_keys=True))
