"""Speed of the app: every page's first run and a widget change on the Calculator under AppTest (in-process, this
machine), and — with --browser — a page with its charts drawn in headless Debian chromium after navigation.

    python bench/bench_app.py                 # AppTest timings; JSON to bench/out/app.json
    python bench/bench_app.py --browser       # also the real-browser timings
    python bench/bench_app.py --browser --write-results   # and replace the "## App" section of bench/RESULTS.md
    (cd OTHER && python /path/to/bench/bench_app.py --label before)   # the same on another checkout, then --write-results

"First run" is a new session opening the page (AppTest: the entrypoint, then `switch_page`), timed around the
page's run only. It is measured twice: with every st.cache_data/st.cache_resource cleared before each sample
("cold cache": the first visitor after a restart, modules already imported) and with caches warm (a page someone
opened before). The process's one-time imports are reported separately. Targets (the issue): first run ≤ 1.5 s,
Calculator widget change ≤ 250 ms (medians), page with charts drawn ≤ 3 s after navigation in the browser.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = Path(__import__("os").environ.get("BENCH_OUT", ROOT / "bench" / "out"))  # BENCH_OUT: another checkout's run
from ui import registry  # noqa: E402  (after the path insert)

PAGES = [p.file for p in registry.NAV]
# Calculator widget changes, cycled: (kind, key, values)
CHANGES = [("number_input", "gpus", [16, 32, 64, 8]), ("number_input", "seq", [8192, 2048, 4096]),
           ("selectbox", "zero", [1, 2, 3, 0]), ("toggle", "flash", [True, False]), ("number_input", "mb", [2, 4, 1]),
           ("radio", "rc", ["selective", "full", "none"]), ("selectbox", "gpu", ["h200", "b200", "h100-sxm"])]


def _apptest():
    """AppTest, with one script cache for the process as the server has (`Runtime` keeps one `ScriptCache`, so it
    compiles each page once): AppTest makes a new cache for every run and so recompiles the entrypoint and the page
    on each rerun (~90 ms of a Calculator rerun measured here), which a visitor never waits for."""
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import AppTest, app_test, local_script_runner
    shared = ScriptCache()
    for mod in (app_test, local_script_runner):
        if hasattr(mod, "ScriptCache"):
            mod.ScriptCache = lambda: shared
    return AppTest


def first_runs(repeats: int, cold: bool) -> dict:
    import streamlit as st
    AppTest = _apptest()
    out = {}
    for page in PAGES:
        samples = []
        for _ in range(repeats):
            if cold:
                st.cache_data.clear()
                st.cache_resource.clear()
            at = AppTest.from_file(str(ROOT / registry.HOME.file), default_timeout=60)
            if page == registry.HOME.file:
                t0 = time.perf_counter()
                at.run()
            else:
                at.run()
                t0 = time.perf_counter()
                at.switch_page(page).run()
            samples.append(time.perf_counter() - t0)
            assert not at.exception, (page, at.exception)
        out[page] = {"median_s": statistics.median(samples), "max_s": max(samples), "n": len(samples)}
    return out


def widget_changes(n: int) -> dict:
    AppTest = _apptest()
    at = AppTest.from_file(str(ROOT / registry.HOME.file), default_timeout=60)
    at.run()
    at.switch_page(registry.page("calculator").file).run()
    samples, per_kind = [], {}
    for i in range(n):
        kind, key, values = CHANGES[i % len(CHANGES)]
        widget = next(w for w in at.get(kind) if getattr(w, "key", None) == key)
        widget.set_value(values[(i // len(CHANGES)) % len(values)])
        t0 = time.perf_counter()
        at.run()
        dt = time.perf_counter() - t0
        assert not at.exception, at.exception
        samples.append(dt)
        per_kind.setdefault(key, []).append(dt)
    return {"median_s": statistics.median(samples), "p90_s": sorted(samples)[int(0.9 * (len(samples) - 1))],
            "n": n, "by_widget_median_s": {k: statistics.median(v) for k, v in per_kind.items()}}


def browser(repeats: int) -> dict:
    from bench.harness import SKIP_REASON, VIEWPORT, Server, launch, nav_link, sync_api, wait_for_app, wait_for_charts
    if SKIP_REASON:
        return {"skipped": SKIP_REASON}
    server = Server("bench")
    res: dict = {"goto": {}, "nav": {}, "cold_first_page_s": None}
    calc = registry.page("calculator")
    try:
        with sync_api.sync_playwright() as p:
            b = launch(p)
            # a cold server and a cold browser: the first thing anyone sees after a restart (a deep link)
            ctx = b.new_context(viewport=VIEWPORT)
            page = ctx.new_page()
            t0 = time.perf_counter()
            page.goto(f"{server.url}/{calc.url_path}?gpus=64&zero=3")
            wait_for_app(page)
            wait_for_charts(page, calc.charts)
            res["cold_first_page_s"] = time.perf_counter() - t0
            samples: dict = {}
            nav: dict = {}
            for r in range(repeats):
                for pg in registry.PAGES:  # open by address (assets cached, as after the first page)
                    t0 = time.perf_counter()
                    page.goto(f"{server.url}/{pg.url_path}?{_bust(pg, r)}")
                    wait_for_app(page)
                    wait_for_charts(page, pg.charts)
                    samples.setdefault(pg.id, []).append(time.perf_counter() - t0)
                for pg in registry.PAGES[:-1]:  # the sidebar's links (no page load), from the last page opened above
                    t0 = time.perf_counter()
                    nav_link(page, pg.title).click()
                    page.wait_for_url(f"**/{pg.url_path}*", timeout=15_000)
                    wait_for_app(page)
                    wait_for_charts(page, pg.charts)
                    nav.setdefault(pg.id, []).append(time.perf_counter() - t0)
            res["goto"] = {k: statistics.median(v) for k, v in samples.items()}
            res["nav"] = {k: statistics.median(v) for k, v in nav.items()}
            b.close()
    finally:
        server.stop()
    return res


# per page, an input whose value changes each repeat so the page's own caches miss (a new configuration each time);
# a page not named here is timed with its default inputs (its caches warm after the first repeat)
BUST = {"calculator": "gpus", "fit_map": "gpus", "activations": "gpus", "roofline": "mb", "time_cost": "mfu",
        "sweeps": "mfu", "check_pytorch": "seq"}


def _bust(pg: registry.PageInfo, r: int) -> str:
    name = BUST.get(pg.id)
    return f"{pg.prefix}{name}={[16, 32, 48, 24, 40][r % 5]}" if name else ""


def markdown(res: dict) -> str:
    L = ["## App", "",
         f"`python bench/bench_app.py{' --browser' if res.get('browser') else ''} --write-results` on this machine ("
         + res["machine"] + f", {res.get('date', 'date not recorded')}). Medians. Targets: first run ≤ 1.5 s, "
         "Calculator widget change ≤ 250 ms" + (", page with charts drawn ≤ 3 s after navigation" if res.get("browser")
                                                else "") + ".", "",
         "### First run of each page (AppTest: a new session opens the page)", "",
         "| page | cold cache (s) | warm cache (s) |", "|---|---:|---:|"]
    for page in PAGES:
        c, w = res["first_run_cold"][page], res["first_run_warm"][page]
        L.append(f"| `{page}` | {c['median_s']:.3f} | {w['median_s']:.3f} |")
    L += ["", f"Process start (imports of streamlit, pandas, altair, duckdb, core, ui; once per server process): "
          f"{res['imports_s']:.2f} s.", "",
          "### Calculator: a widget change (AppTest rerun)", "",
          f"Median **{res['widget_change']['median_s'] * 1000:.0f} ms** over {res['widget_change']['n']} changes "
          f"(p90 {res['widget_change']['p90_s'] * 1000:.0f} ms); by widget: "
          + ", ".join(f"`{k}` {v * 1000:.0f} ms" for k, v in res["widget_change"]["by_widget_median_s"].items())
          + "."]
    br = res.get("browser")
    if br and "skipped" not in br:
        L += ["", "### Browser: page with its charts drawn (headless Debian chromium, software rendering)", "",
              "Time from navigation to the last Vega chart drawn, with a configuration the server has not cached. "
              "'address' opens the page by its URL (the app's assets already cached by the browser); 'sidebar' "
              "clicks the page's link.", "",
              "| page | address (s) | sidebar (s) |", "|---|---:|---:|"]
        for pg in registry.PAGES:
            nav = br["nav"].get(pg.id)
            L.append(f"| {pg.title} | {br['goto'][pg.id]:.2f} | {'—' if nav is None else f'{nav:.2f}'} |")
        L += ["", f"Cold start — a fresh server and a fresh browser opening a deep link to the Calculator (server "
              f"imports, the browser loading Streamlit's JavaScript, the first run): {br['cold_first_page_s']:.2f} s."]
    elif br:
        L += ["", f"Browser timings skipped: {br['skipped']}."]
    runs = res.get("runs") or {}
    if len(runs) > 1:  # the same measurement on other checkouts (--label), side by side
        labels = list(runs)
        L += ["", "### Before and after (the same script on each checkout: `--label`, `--app-dir`)", "",
              "| page: first run, cold cache (s) | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels)]
        for page in PAGES:
            L.append(f"| `{page}` | " + " | ".join(
                f"{runs[k]['first_run_cold'][page]['median_s']:.3f}" if page in runs[k]["first_run_cold"] else "—"
                for k in labels) + " |")
        L.append("| **Calculator widget change, median (ms)** | " + " | ".join(
            f"**{runs[k]['widget_change']['median_s'] * 1000:.0f}**" for k in labels) + " |")
    L += ["", "Raw numbers: `bench/out/app.json`.", ""]
    return "\n".join(L)


def write_results(md: str) -> None:
    """Replace the `## App` section of bench/RESULTS.md (bench/results.py)."""
    from bench.results import write_section as replace
    replace("App", md)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--changes", type=int, default=28)
    ap.add_argument("--browser", action="store_true")
    ap.add_argument("--write-results", action="store_true")
    ap.add_argument("--label", default="after", help="this run's label in bench/out/app.json (before, after, …)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    import altair, duckdb, pandas, streamlit  # noqa: F401,E401
    import ui.charts, ui.compute, ui.pickers, ui.sweeps  # noqa: F401,E401
    res = {"machine": f"{platform.machine()}, {__import__('os').cpu_count()} CPUs, Python "
                      f"{platform.python_version()}, streamlit {streamlit.__version__}",
           "imports_s": time.perf_counter() - t0, "date": __import__("datetime").date.today().isoformat()}
    first_runs(1, cold=True)  # warm the interpreter (bytecode, lazy imports inside pages)
    res["first_run_cold"] = first_runs(args.repeats, cold=True)
    res["first_run_warm"] = first_runs(args.repeats, cold=False)
    res["widget_change"] = widget_changes(args.changes)
    if args.browser:
        res["browser"] = browser(max(1, args.repeats // 2))
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "app.json"
    old = json.loads(path.read_text()) if path.exists() else {}
    res["runs"] = {**old.get("runs", {}), args.label: {k: res[k] for k in ("first_run_cold", "widget_change")}}
    path.write_text(json.dumps(res, indent=2))
    md = markdown(res)
    print(md)
    if args.write_results:
        write_results(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
