"""The real-browser harness shared by the browser tests (tests/browser/conftest.py) and the benchmark
(bench/bench_app.py): `streamlit run app.py` on a free localhost port, Playwright (pip) driving Debian's chromium (no
browser download), and the waits for a page to be ready. It lives here, not under tests/, so that the benchmark does
not import the test suite.

The waiting follows Streamlit's own e2e suite (e2e_playwright/conftest.py::wait_for_app_run): connected, script not
running, no skeletons — plus, for pages with charts, every Vega view drawn. Server logs go to test-artifacts/
(gitignored)."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from ui.registry import NAV_KEY

try:
    from playwright import sync_api
except ImportError:  # pragma: no cover - depends on the environment
    sync_api = None

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
VIEWPORT = {"width": 1400, "height": 1800}


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


def launch(playwright):
    """Headless Debian chromium from a started `sync_playwright()`."""
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True)


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


def nav(page):
    """The sidebar's page list (ui.layout.setup)."""
    return page.get_by_test_id("stSidebar").locator(f".st-key-{NAV_KEY}")


def nav_link(page, title: str):
    """The sidebar link labelled `title` (a registry title: "Fit map", "Home"; the icon is aria-hidden)."""
    return nav(page).get_by_role("link", name=title, exact=True)
