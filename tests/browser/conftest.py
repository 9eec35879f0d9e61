"""Real-browser fixtures: `streamlit run app.py` on a free localhost port, driven by Playwright (pip) with Debian's
chromium (no browser download). Everything here skips cleanly when playwright or chromium is missing.

Screenshots and timings go to test-artifacts/ (gitignored). The waiting follows Streamlit's own e2e suite
(e2e_playwright/conftest.py::wait_for_app_run): connected, script not running, no skeletons — plus, for pages with
charts, every Vega view drawn."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

try:
    from playwright import sync_api
except ImportError:  # pragma: no cover - depends on the environment
    sync_api = None

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


def _chromium() -> str | None:
    """$CHROMIUM if set (and only it), else Debian's chromium."""
    if os.environ.get("CHROMIUM"):
        cands = [os.environ["CHROMIUM"]]
    else:
        cands = [shutil.which("chromium"), "/usr/bin/chromium", "/usr/lib/chromium/chromium"]
    return next((c for c in cands if c and Path(c).exists()), None)


CHROMIUM = _chromium()
SKIP_REASON = ("playwright is not installed (requirements-dev.txt)" if sync_api is None else
               "Debian chromium is not installed (apt-get install -y chromium)" if CHROMIUM is None else None)


def pytest_collection_modifyitems(config, items):
    """Skip every browser test, cleanly, when playwright or chromium is missing."""
    if SKIP_REASON:
        here = Path(__file__).parent
        for item in items:
            if here in Path(str(item.fspath)).parents:
                item.add_marker(pytest.mark.skip(reason=SKIP_REASON))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One `streamlit run app.py` process on a free port; `url` is its base address."""

    def __init__(self, name: str):
        ARTIFACTS.mkdir(exist_ok=True)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(ARTIFACTS / f"server-{name}.log", "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.port", str(self.port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
             "--browser.gatherUsageStats", "false"],
            cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {self.proc.returncode}; see {self.log.name}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.read() == b"ok":
                        return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("streamlit did not become healthy within 60 s")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


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
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield b
        b.close()


@pytest.fixture()
def page(chromium):
    ctx = chromium.new_context(viewport={"width": 1400, "height": 1800}, accept_downloads=True)
    pg = ctx.new_page()
    yield pg
    ctx.close()


@pytest.fixture(scope="session")
def warm_page(chromium, server):
    """One browser context for a tour of the pages (its HTTP cache warm, as a user's is after the first page); the
    landing page is opened first so the server's first-session imports are not charged to a page."""
    ctx = chromium.new_context(viewport={"width": 1400, "height": 1800}, accept_downloads=True)
    pg = ctx.new_page()
    pg.goto(server.url)
    wait_for_app(pg)
    yield pg
    ctx.close()


def wait_for_app(page, timeout: float = 30_000) -> None:
    page.wait_for_timeout(150)
    page.locator("[data-testid='stApp'][data-test-connection-state='CONNECTED']").wait_for(state="attached",
                                                                                            timeout=timeout)
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(state="attached",
                                                                                         timeout=timeout)
    sync_api.expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=timeout)


def wait_for_charts(page, n: int, timeout: float = 30_000) -> None:
    """At least `n` Vega charts, each with its view drawn (an SVG with marks or a canvas)."""
    charts = page.get_by_test_id("stVegaLiteChart")
    deadline = time.monotonic() + timeout / 1000
    while time.monotonic() < deadline:
        if charts.count() >= n and page.locator(
                "[data-testid='stVegaLiteChart'] :is(svg.marks, canvas.marks)").count() >= n:
            return
        page.wait_for_timeout(50)
    raise AssertionError(f"expected {n} drawn charts, found {charts.count()}")


def record_timing(name: str, seconds: float) -> None:
    path = ARTIFACTS / "browser_timings.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data[name] = round(seconds, 3)
    path.write_text(json.dumps(data, indent=2, sort_keys=True))
