"""Load test of the app as a public link (issue 10): one `streamlit run app.py` on 127.0.0.1, many concurrent
sessions, the server's resident memory sampled from /proc. Not a test (nothing here runs under pytest).

    python bench/bench_load.py                    # 20 sessions, 5 of them ~1M-row sweeps; JSON to bench/out/load.json
    python bench/bench_load.py --write-results    # and replace the "## Load" section of bench/RESULTS.md
    python bench/bench_load.py --pytorch-link --app-dir DIR   # the PyTorch page's worst link, on the app in DIR
    python bench/bench_load.py --rss-ratio        # RSS a PyTorch measurement adds, 16 shapes (measure.RSS_...)
    python bench/bench_load.py --report --write-results   # the section again from bench/out/load.json
    python bench/bench_load.py --app-dir DIR --label "before (REV)"   # the same load on another checkout (git archive)

Sessions. Most are driven through Streamlit's agent API (`--server.enableAgentApi`, switched on for this server
alone, which listens on the loopback interface only): each agent session is an ordinary AppSession — the same
script runs, caches, DuckDB tables and memory as for a browser — whose snapshots give every element on the page, so
an error box (`st.error`) or an exception is counted exactly. Downloads are fetched by a real browser (headless
Debian chromium through Playwright, as in bench/harness.py), since the agent API cannot click a download: those
sessions count error boxes and exceptions in the page's DOM. The mix (`--sessions`, default 20):
  - `--big` (default 5) sessions open a distinct ~1M-row sweep link (912,384 rows; they differ by MFU, so each is
    its own table), click "Run the sweep" at once, then filter, regroup and narrow it;
  - `--browsers` (default 2) browser sessions open the first big sweep's link, run or wait for it, download its
    rows as Parquet, see the CSV offered only once a filter narrows the rows, and download that CSV;
  - the rest open every other page with links (Calculator, Fit map, Activations, Roofline, Time & cost, a small
    sweep, the PyTorch page with `pt_go=true`) and change a few inputs each.
Bounded: a fixed number of sessions and requests, each request at most `--request-timeout-s`, the whole run at most
`--deadline-s`; the server is stopped (by its pid) at the end whatever happens.

Measured: error boxes and exceptions (target 0), the server's peak RSS (VmHWM; target < 1.5 GB), its RSS before,
after the load and 20 s after the sessions are gone, and each session's wall time.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "bench" / "out"
RESULTS = ROOT / "bench" / "RESULTS.md"
GB = 1e9
MiB = 2**20
PEAK_TARGET_BYTES = 1.5 * GB
RETURN_TARGET_BYTES = 300e6  # issue 16: within 300 MB of the idle RSS five minutes after the sessions close
AGENT_SESSION_TTL_S = 60  # an agent session is closed after this long idle (a browser tab's session likewise:
#                           server.disconnectedSessionTTL in .streamlit/config.toml)

# a ~1M-row grid on the Sweeps page (its widgets' URL names): 4 models × 3 accelerators × 11 GPU counts × 9 sequence
# lengths × 4 micro-batches × 4 ZeRO stages × 3 recomputation modes × 2 flash × 4 TP × 2 recipes = 912,384 rows
BIG_SWEEP = {"sw_models": ["llama-3.1-8b", "llama-3.1-70b", "mistral-7b", "mixtral-8x7b"],
             "sw_accs": ["h100-sxm", "h200", "b200"], "sw_gmin": ["1"], "sw_gmax": ["1024"], "sw_smin": ["512"],
             "sw_smax": ["131072"], "sw_mbs": ["1", "2", "4", "8"], "sw_tpdeg": ["1", "2", "4", "8"],
             "sw_recipes": ["zero-16", "cs336-12"]}
BIG_ROWS = 912_384
# the other sessions: (page, link parameters, widget changes made one request each)
# issue 16 item 1's worst links: each must start no large work on its own (a button instead), add little memory
WORST_LINKS = [
    ("parallel_layout", {"pl_model": ["qwen3-235b-a22b"], "pl_gpus": ["65536"], "pl_gbs": ["65536"]}, []),
    ("parallel_layout", {"pl_src": ["architecture"], "pl_layers": ["1024"], "pl_dmodel": ["131072"],
                         "pl_heads": ["1024"], "pl_kv": ["1024"], "pl_dff": ["524288"], "pl_vocab": ["4194304"],
                         "pl_gpus": ["65536"], "pl_gbs": ["65536"]}, []),
    # 3 models × 2 accelerators × 11 GPU counts × 9 sequence lengths × 4 micro-batches × 4 ZeRO × 3 recompute × 2 flash
    # × 2 TP × 2 recipes = 228,096 rows: the probe's "200,000-row sweep from a link"
    ("sweeps", {"sw_models": ["llama-3.1-8b", "llama-3.1-70b", "mistral-7b"], "sw_accs": ["h100-sxm", "h200"],
                "sw_gmin": ["1"], "sw_gmax": ["1024"], "sw_smin": ["512"], "sw_smax": ["131072"],
                "sw_mbs": ["1", "2", "4", "8"], "sw_tpdeg": ["1", "2"], "sw_recipes": ["zero-16", "cs336-12"]}, []),
]
OTHERS = [
    ("calculator", {"gpus": ["64"], "zero": ["3"], "flash": ["true"], "rc": ["full"]},
     [{"seq": 8192}, {"mb": 2}, {"zero": 2}]),
    ("calculator", {"model": ["llama-3.1-70b"], "gpus": ["64"], "zero": ["3"], "flash": ["true"], "rc": ["full"]},
     [{"gpus": 128}, {"seq": 2048}, {"mb": 2}]),
    ("calculator", {"src": ["params"], "params": ["13"], "gpus": ["16"], "zero": ["3"]}, [{"gpus": 32}, {"seq": 2048}]),
    ("fit_map", {}, [{"fm_flash": True}, {"fm_zero": 2}]),
    ("fit_map", {"fm_gpus": ["32"]}, [{"fm_flash": False}]),
    ("activations", {}, [{"ac_mb": 2}, {"ac_gpus": 16}]),
    ("activations", {"ac_seq": ["8192"]}, [{"ac_mb": 4}]),
    ("roofline", {}, [{"rf_mb": 4}, {"rf_seq": 8192}]),
    ("roofline", {"rf_gpus": ["h200"]}, [{"rf_mb": 8}]),
    ("time_cost", {}, [{"tc_mfu": 40}, {"tc_mfu": 30}]),
    ("time_cost", {"tc_tokens": ["2000"]}, [{"tc_mfu": 45}]),
    ("sweeps", {}, [{"sw_f1c": "n_gpus"}, {"sw_f1v": "64"}, {"sw_by": ["gpu", "valid"]}, {"sw_fit": True}]),
    ("check_pytorch", {"pt_go": ["true"], "pt_layers": ["1"], "pt_seq": ["64"]}, [{"pt_mb": 2}]),
]
# the worst PyTorch link: 1.00 GiB kept by the page's own estimate, 59 MB → 1,990 MB on a fresh server
PT_WORST_LINK = {"pt_go": ["true"], "pt_src": ["architecture"], "pt_layers": ["2"], "pt_dmodel": ["32"],
                 "pt_heads": ["1"], "pt_kv": ["1"], "pt_dff": ["32"], "pt_vocab": ["32000"], "pt_seq": ["64"],
                 "pt_mb": ["128"]}


# --- the server ---------------------------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`streamlit run app.py` from `app_dir` on a free loopback port, with the agent API on (this process only)."""

    def __init__(self, app_dir: Path, wait_timeout_s: float, log_name: str = "server-load.log"):
        OUT.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(OUT / log_name, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(self.port), "--server.fileWatcherType", "none",
             "--browser.gatherUsageStats", "false", "--server.enableAgentApi", "true",
             "--server.agentWaitTimeout", str(int(wait_timeout_s)), "--server.agentMaxSessions", "100",
             "--server.agentSessionTTL", str(AGENT_SESSION_TTL_S)],
            cwd=app_dir, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while not self._healthy():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"streamlit did not start (exit status {self.proc.returncode}); see {self.log.name}")
            time.sleep(0.2)

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                return r.read() == b"ok"
        except OSError:
            return False

    def status(self, key: str) -> int:
        """VmRSS, VmHWM, … of the server process, in bytes."""
        with open(f"/proc/{self.proc.pid}/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
        raise KeyError(key)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        self.log.close()


class Sampler(threading.Thread):
    """The server's RSS every `every_s`, with time stamps (the peak itself is VmHWM, kept by the kernel)."""

    def __init__(self, server: Server, every_s: float = 0.1):
        super().__init__(daemon=True)
        self.server, self.every_s, self.samples, self.stop_flag = server, every_s, [], threading.Event()
        self.t0 = time.monotonic()

    def run(self) -> None:
        while not self.stop_flag.is_set():
            try:
                self.samples.append((time.monotonic() - self.t0, self.server.status("VmRSS")))
            except (OSError, KeyError):
                return
            self.stop_flag.wait(self.every_s)


# --- agent sessions -----------------------------------------------------------------------------------------------

class AgentSession:
    """One session through /_stcore/agent/interact: every response's tree is checked for error boxes and
    exceptions."""

    def __init__(self, server: Server, name: str, timeout_s: float):
        self.server, self.name, self.timeout_s = server, name, timeout_s
        self.session_id = None
        self.requests = 0
        self.errors: list[str] = []
        self.verdicts = 0
        self.seconds: list[float] = []

    def interact(self, **body) -> dict:
        if self.session_id:
            body["session_id"] = self.session_id
        req = urllib.request.Request(f"{self.server.url}/_stcore/agent/interact", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as r:
                snap = json.loads(r.read())
        except urllib.error.HTTPError as e:  # a refused request is an error of the run, with the server's words
            self.errors.append(f"HTTP {e.code}: {e.read()[:300].decode(errors='replace')}")
            raise
        finally:
            self.seconds.append(time.monotonic() - t0)
            self.requests += 1
        self.session_id = snap["session_id"]
        boxes = [n for n in _nodes(snap["tree"]) if n.get("type") in ("error", "exception")]
        # the Calculator's "Does not fit" verdict is drawn as an error box but answers the question: not a failure
        self.verdicts += sum(1 for n in boxes if _text(n).startswith("Does not fit"))
        self.errors += [f"{n['type']}: {_text(n)}" for n in boxes if not _text(n).startswith("Does not fit")]
        if snap["status"] != "ready" and not any(e.startswith("exception") for e in self.errors):
            self.errors.append(f"status {snap['status']}")
        return snap


def _nodes(node: dict):
    yield node
    for c in node.get("children", ()):
        yield from _nodes(c)


def _text(node: dict) -> str:
    p = node.get("props", {})
    return str(p.get("body") or p.get("message") or p.get("value") or p)[:300]


def big_sweeper(server, i: int, timeout_s: float, log: list) -> AgentSession:
    s = AgentSession(server, f"big-{i}", timeout_s)
    log.append(s)
    s.interact(page="sweeps", query_params={**BIG_SWEEP, "sw_mfu": [str(45 + 5 * i)]})
    snap = s.interact(trigger={"key": "sw_run"})
    rows = [n for n in _nodes(snap["tree"]) if n.get("type") == "metric" and n.get("props", {}).get("label") == "Rows"]
    if not rows or str(rows[0].get("props", {}).get("value")) != f"{BIG_ROWS:,}":
        s.errors.append(f"no {BIG_ROWS:,}-row result: {[_text(r) for r in rows]}")
    for change in ({"sw_f1c": "n_gpus", "sw_f1o": ">=", "sw_f1v": "64"}, {"sw_by": ["gpu", "recompute"]},
                   {"sw_fit": True}, {"sw_f2c": "model", "sw_f2v": "llama-3.1-8b"}, {"sw_by": ["model", "valid"]}):
        s.interact(widget_state=change)
    return s


def other(server, k: int, timeout_s: float, log: list) -> AgentSession:
    mix = WORST_LINKS + OTHERS  # the worst links first: every load has them
    page, params, changes = mix[k % len(mix)]
    s = AgentSession(server, f"{page}-{k}", timeout_s)
    log.append(s)
    s.interact(page=page, query_params=params)
    for change in changes:
        s.interact(widget_state=change)
    return s


# --- browser sessions (downloads) ---------------------------------------------------------------------------------

def browser_sessions(server, n: int, timeout_s: float, log: list, start: threading.Event) -> None:
    """`n` pages in one headless chromium: the first big sweep's link, its Parquet download, then a CSV once a filter
    narrows it below the CSV limit. Error boxes and exceptions are read from each page's DOM."""
    from urllib.parse import urlencode

    from bench.harness import SKIP_REASON, launch, sync_api, wait_for_app
    if SKIP_REASON:
        log.append({"name": "browsers", "skipped": SKIP_REASON})
        return
    link = f"{server.url}/sweeps?" + urlencode({**BIG_SWEEP, "sw_mfu": ["45"]}, doseq=True)
    with sync_api.sync_playwright() as p:
        browser = launch(p)
        try:
            ctx = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1800})
            pages = [ctx.new_page() for _ in range(n)]
            start.wait()
            results = []
            for i, page in enumerate(pages):
                r = {"name": f"browser-{i}", "errors": [], "downloads": {}, "requests": 0, "seconds": []}
                results.append(r)
                t0 = time.monotonic()
                page.goto(link)
                wait_for_app(page, timeout_s * 1000)
                run = page.get_by_role("button", name=f"Run the sweep ({BIG_ROWS:,} rows)")
                if run.count():
                    run.click()
                    page.wait_for_timeout(500)
                    wait_for_app(page, timeout_s * 1000)
                page.get_by_test_id("stDownloadButton").filter(has_text="Rows (Parquet)").wait_for(
                    timeout=timeout_s * 1000)
                r["csv_offered_unfiltered"] = page.get_by_test_id("stDownloadButton").filter(
                    has_text="Rows (CSV)").count() > 0
                with page.expect_download(timeout=timeout_s * 1000) as dl:
                    page.get_by_test_id("stDownloadButton").filter(has_text="Rows (Parquet)").click()
                data = Path(dl.value.path()).read_bytes()
                r["downloads"]["parquet_bytes"] = len(data)
                r["downloads"]["parquet_ok"] = data[:4] == b"PAR1"
                # narrow to one model and one GPU count (20,736 rows): the CSV is offered again
                for i, (column, value) in enumerate((("n_gpus", "64"), ("model", "llama-3.1-8b")), 1):
                    page.get_by_label(f"Value {i}").fill(value)
                    page.get_by_label(f"Value {i}").press("Enter")
                    wait_for_app(page, timeout_s * 1000)
                    _pick(page, f"Column {i}", column)
                    wait_for_app(page, timeout_s * 1000)
                csv = page.get_by_test_id("stDownloadButton").filter(has_text="Rows (CSV)")
                csv.wait_for(timeout=timeout_s * 1000)
                with page.expect_download(timeout=timeout_s * 1000) as dl:
                    csv.click()
                text = Path(dl.value.path()).read_bytes()
                r["downloads"]["csv_bytes"] = len(text)
                r["downloads"]["csv_ok"] = text.startswith(b"model,") or text.startswith(b"gpu,") or b"," in text[:50]
                r["seconds"].append(time.monotonic() - t0)
                r["errors"] += [f"error: {t[:200]}" for t in page.get_by_test_id("stAlertContentError").all_inner_texts()]
                r["errors"] += [f"exception: {t[:200]}" for t in page.get_by_test_id("stException").all_inner_texts()]
            ctx.close()
            log.extend(results)
        finally:
            browser.close()


def _pick(page, label: str, option: str) -> None:
    """Choose `option` in the selectbox labelled `label` (typed: the list is long and drawn lazily)."""
    page.get_by_label(label).click()
    page.keyboard.type(option)
    page.keyboard.press("Enter")


# --- the load run -------------------------------------------------------------------------------------------------

def load(args) -> dict:
    server = Server(Path(args.app_dir), args.request_timeout_s)
    sampler = Sampler(server)
    log: list = []
    crashed: list[str] = []
    try:
        AgentSession(server, "warm", args.request_timeout_s).interact(page="")  # imports done: the idle baseline
        time.sleep(1.0)
        rss_idle = server.status("VmRSS")
        sampler.start()
        start = threading.Event()
        threads = []

        def guarded(fn, *a):
            start.wait()
            try:
                fn(*a)
            except Exception as e:  # noqa: BLE001 - a session that fails is reported, never hidden
                crashed.append(f"{fn.__name__}{a[1:2]}: {type(e).__name__}: {str(e)[:300]}")

        n_browsers = args.browsers
        n_others = args.sessions - args.big - n_browsers
        for i in range(args.big):
            threads.append(threading.Thread(target=guarded, args=(big_sweeper, server, i, args.request_timeout_s, log)))
        for k in range(n_others):
            threads.append(threading.Thread(target=guarded, args=(other, server, k, args.request_timeout_s, log)))
        if n_browsers:
            def browsers():
                try:
                    browser_sessions(server, n_browsers, args.request_timeout_s, log, start)
                except Exception as e:  # noqa: BLE001 - reported
                    crashed.append(f"browser_sessions: {type(e).__name__}: {str(e)[:500]}")
            threads.append(threading.Thread(target=browsers))
        for t in threads:
            t.start()
        t0 = time.monotonic()
        start.set()
        for t in threads:
            t.join(max(1.0, args.deadline_s - (time.monotonic() - t0)))
        wall = time.monotonic() - t0
        late = [t.name for t in threads if t.is_alive()]
        rss_after = server.status("VmRSS")
        time.sleep(20)  # sessions idle, downloads unreferenced: what the process keeps
        rss_later = server.status("VmRSS")
        peak = server.status("VmHWM")
        # the sessions close (agent sessions after AGENT_SESSION_TTL_S idle; the browser's context is closed):
        # what the server keeps `after_s` later
        t_end = time.monotonic()
        time.sleep(max(0.0, args.after_s - 20))
        rss_closed = server.status("VmRSS")
        closed_after_s = time.monotonic() - t_end + 20
    finally:
        sampler.stop_flag.set()
        server.stop()
    sessions = []
    for s in log:
        if isinstance(s, dict):
            sessions.append(s)
        else:
            sessions.append({"name": s.name, "requests": s.requests, "errors": s.errors, "verdicts": s.verdicts,
                             "seconds": round(sum(s.seconds), 2), "max_request_s": round(max(s.seconds or [0]), 2)})
    n_err = sum(len(s.get("errors", ())) for s in sessions)
    res = {"date": dt.date.today().isoformat(), "machine": _machine(), "app_dir": str(args.app_dir),
           "app_dir_label": args.app_label,
           "sessions": len(sessions), "requested_sessions": args.sessions, "big_sweeps": args.big,
           "browsers": args.browsers, "wall_s": round(wall, 1), "late_sessions": late, "crashed": crashed,
           "error_boxes_and_exceptions": n_err, "requests": sum(s.get("requests", 0) for s in sessions),
           "rss_idle_bytes": rss_idle, "peak_rss_bytes": peak, "rss_after_bytes": rss_after,
           "rss_20s_later_bytes": rss_later, "rss_closed_bytes": rss_closed, "closed_after_s": round(closed_after_s),
           "samples": len(sampler.samples), "per_session": sessions,
           "rss_timeline": [(round(t, 1), r) for t, r in sampler.samples[::10]]}
    res["returned"] = rss_closed - rss_idle <= RETURN_TARGET_BYTES
    res["ok"] = (not crashed and not late and n_err == 0 and peak < PEAK_TARGET_BYTES and res["returned"]
                 and len(sessions) >= args.sessions - (args.browsers if any(s.get("skipped") for s in sessions)
                                                       else 0))
    return res


def _machine() -> str:
    import streamlit
    return (f"{platform.machine()}, {os.cpu_count()} CPUs, {os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') / GB:.0f} GB, "
            f"Python {platform.python_version()}, streamlit {streamlit.__version__}")


# --- the PyTorch page's worst link, and the RSS a measurement adds ------------------------------------------------

def pytorch_link(args) -> dict:
    """Server RSS before and after a fresh session opens the issue's worst PyTorch link (no click), and — where the
    page has a Run button — after a click on the largest link-shaped measurement the cap allows."""
    server = Server(Path(args.app_dir), 300, log_name="server-pytorch.log")
    out = {"app_dir": str(args.app_dir), "link": PT_WORST_LINK}
    try:
        AgentSession(server, "warm", 300).interact(page="")
        time.sleep(1.0)
        out["rss_before_bytes"] = server.status("VmRSS")
        s = AgentSession(server, "worst-link", 300)
        t0 = time.monotonic()
        snap = s.interact(page="check_pytorch", query_params=PT_WORST_LINK)
        out["seconds"] = round(time.monotonic() - t0, 1)
        out["rss_after_bytes"] = server.status("VmRSS")
        out["peak_bytes"] = server.status("VmHWM")
        out["page_says"] = [_text(n)[:200] for n in _nodes(snap["tree"]) if n.get("type") in ("error", "exception")]
        out["measured"] = any(n.get("type") == "metric" for n in _nodes(snap["tree"]))
        # the largest batch of the same shape the cap allows, clicked: what a visitor can still make it add
        mb = _largest_allowed_batch(Path(args.app_dir))
        c = AgentSession(server, "worst-click", 300)
        snap = c.interact(page="check_pytorch", query_params={**PT_WORST_LINK, "pt_mb": [str(mb)]})
        if mb and any(a.get("key") == "pt_run" for a in snap.get("actions", ())):  # a page with a Run button
            rss0, hwm0 = server.status("VmRSS"), server.status("VmHWM")
            snap = c.interact(trigger={"key": "pt_run"})
            out["click"] = {"micro_batch": mb, "rss_before_bytes": rss0, "peak_before_bytes": hwm0,
                            "peak_after_bytes": server.status("VmHWM"), "rss_after_bytes": server.status("VmRSS"),
                            "measured": any(n.get("type") == "metric" for n in _nodes(snap["tree"])),
                            "errors": c.errors}
    finally:
        server.stop()
    return out


def _largest_allowed_batch(app_dir: Path) -> int:
    """The largest micro-batch of the worst link's shape that the app in `app_dir` lets a click measure (0: the
    app has no such cap)."""
    code = """
from core import measure
from core.estimate import config_from_inputs
if not hasattr(measure, "RSS_PER_ESTIMATED_BYTE"):
    print(0); raise SystemExit
kw = dict(n_layers=2, d_model=32, n_heads=1, n_kv_heads=1, d_ff=32, vocab_size=32000, seq_len=64, mlp="swiglu",
          norm="rmsnorm", position="rotary", dropout=False, tied_embeddings=False, profile="fused")
best = 0
for mb in range(1, 129):
    try:
        measure.check_size(config_from_inputs(**kw, micro_batch=mb))
        best = mb
    except ValueError:
        break
print(best)
"""
    r = subprocess.run([sys.executable, "-c", code], cwd=app_dir, capture_output=True, text=True, timeout=120)
    return int(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else 0


RATIO_SHAPES = {  # where each term of measurement_cost dominates (logits, s×s scores, activations, weights)
    "logits (the issue's link)": dict(n_layers=2, d_model=32, n_heads=1, n_kv_heads=1, d_ff=32, vocab_size=32000,
                                      seq_len=64, micro_batch=128),
    "logits, fp32 loss": dict(n_layers=2, d_model=32, n_heads=1, d_ff=32, vocab_size=32000, seq_len=64,
                              micro_batch=64, fp32_loss=True),
    "scores (math attention)": dict(n_layers=2, d_model=64, n_heads=16, d_ff=128, vocab_size=1000, seq_len=1024,
                                    micro_batch=2),
    "scores, eager": dict(n_layers=2, d_model=64, n_heads=16, d_ff=128, vocab_size=1000, seq_len=1024, micro_batch=2,
                          profile="eager"),
    "activations, flash": dict(n_layers=8, d_model=256, n_heads=4, d_ff=688, vocab_size=1000, seq_len=512,
                               micro_batch=8, flash_attention=True),
    "activations, GPT eager": dict(n_layers=4, d_model=256, n_heads=4, vocab_size=1000, seq_len=512, micro_batch=8,
                                   profile="eager", mlp="gelu", norm="layernorm", position="learned", dropout=True,
                                   tied_embeddings=True, max_position=2048),
    "weights": dict(n_layers=8, d_model=1024, n_heads=8, d_ff=4096, vocab_size=1000, seq_len=8, micro_batch=1),
    "recompute full": dict(n_layers=4, d_model=256, n_heads=4, d_ff=688, vocab_size=8000, seq_len=512,
                           micro_batch=8, recompute="full"),
    "flash, wide MLP": dict(n_layers=4, d_model=256, n_heads=4, d_ff=2048, vocab_size=1000, seq_len=512,
                            micro_batch=8, flash_attention=True),
    "flash, long sequence": dict(n_layers=2, d_model=128, n_heads=2, d_ff=344, vocab_size=1000, seq_len=4096,
                                 micro_batch=4, flash_attention=True),
    "flash, GQA, selective": dict(n_layers=4, d_model=512, n_heads=8, n_kv_heads=2, d_ff=1376, vocab_size=1000,
                                  seq_len=512, micro_batch=4, flash_attention=True, recompute="selective"),
    "flash, eager": dict(n_layers=4, d_model=256, n_heads=4, d_ff=688, vocab_size=1000, seq_len=512, micro_batch=8,
                         flash_attention=True, profile="eager"),
    "math, MLP-heavy": dict(n_layers=4, d_model=256, n_heads=4, d_ff=2048, vocab_size=1000, seq_len=256,
                            micro_batch=8),
    "large batch, tiny model": dict(n_layers=1, d_model=64, n_heads=1, d_ff=64, vocab_size=1000, seq_len=64,
                                    micro_batch=512, flash_attention=True),
    "page default": dict(n_layers=2, d_model=256, n_heads=4, n_kv_heads=4, d_ff=688, vocab_size=1000, seq_len=256,
                         micro_batch=1),
    "page default, whole model off": dict(n_layers=2, d_model=256, n_heads=4, d_ff=688, vocab_size=1000,
                                          seq_len=256, micro_batch=1, _whole=False),
}
_LLAMA_LIKE = dict(mlp="swiglu", norm="rmsnorm", position="rotary", dropout=False, tied_embeddings=False)
_PROBE = """
import json, sys
from core.estimate import config_from_inputs
from core import measure
import torch
def status(key):
    return int(next(l for l in open('/proc/self/status') if l.startswith(key)).split()[1]) * 1024
torch.set_num_threads(2)
kw = json.loads(sys.argv[1])
whole = kw.pop("_whole", True)
measure.compare(config_from_inputs(n_layers=1, d_model=32, n_heads=1, vocab_size=64, seq_len=16), cap=None)
cfg = config_from_inputs(**kw)
before = status('VmRSS')
measure.compare(cfg, cap=None, whole_model=whole)
cost = measure.measurement_cost(cfg)
print(json.dumps({"added_bytes": status('VmHWM') - before, "bytes": cost["bytes"], "rss_bytes": cost["rss_bytes"]}))
"""


def rss_ratio(args) -> dict:
    """RSS each shape's `compare` adds (VmHWM − VmRSS before, its own process) against measurement_cost's bytes."""
    rows = {}
    for name, kw in RATIO_SHAPES.items():
        shape = {**_LLAMA_LIKE, **kw}
        r = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(shape)], cwd=ROOT, capture_output=True,
                           text=True, timeout=600)
        if r.returncode:
            rows[name] = {"error": r.stderr[-500:]}
            continue
        d = json.loads(r.stdout.strip().splitlines()[-1])
        rows[name] = {**d, "ratio": d["added_bytes"] / d["bytes"], "within_bound": d["added_bytes"] <= d["rss_bytes"]}
        print(f"{name:32s} kept {d['bytes'] / MiB:8.1f} MiB  added {d['added_bytes'] / MiB:8.1f} MiB  "
              f"ratio {rows[name]['ratio']:.2f}  bound {d['rss_bytes'] / MiB:8.1f} MiB", flush=True)
    return rows


# --- report -------------------------------------------------------------------------------------------------------

def markdown(res: dict) -> str:
    L = ["## Load", "",
         f"`python bench/bench_load.py` ({res['date']}; {res['machine']}; the machine is shared with other sessions). "
         "One `streamlit run app.py` on 127.0.0.1; sessions through the agent API (ordinary AppSessions: same "
         "script, caches, DuckDB and memory as a browser's) and headless chromium for the downloads. Targets "
         "(issue 10): 20 concurrent sessions, 5 of them ~1M-row sweeps run at once; 0 error boxes, 0 exceptions; "
         "peak server RSS under 1.5 GB; issue 16: within 300 MB of the idle RSS five minutes after the sessions "
         "close. 'before (REV)' is the same load on `git archive REV` (the code before the issue's work), served "
         "with `--app-dir`; 'after (REV)' on that commit's tree. Between 27d1d03 and b0bb402 only the app's DuckDB "
         "connections changed (`core.db.connect(return_memory=True)`: jemalloc background threads, flush "
         "thresholds 32/64 MiB): what stayed after the sessions closed fell from +307 to +212 MB.", ""]
    loads = res.get("loads", {})
    if loads:
        labels = list(loads)
        L += ["| measure | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels)]

        def row(name, fn):
            L.append(f"| {name} | " + " | ".join(fn(loads[k]) for k in labels) + " |")
        row("app served", lambda r: f"`{r['app_dir_label']}`" if r.get("app_dir_label") else "")
        row("sessions at once", lambda r: f"{r['sessions']} ({r['big_sweeps']} × {BIG_ROWS:,}-row sweeps clicked at "
                                          f"once, {r['browsers']} in chromium)")
        row("requests (agent API)", lambda r: f"{r['requests']}")
        row("**error boxes + exceptions**", lambda r: f"**{r['error_boxes_and_exceptions']}**")
        row("sessions failed or late", lambda r: f"{len(r['crashed']) + len(r['late_sessions'])}")
        row("server RSS idle (imports done)", lambda r: f"{r['rss_idle_bytes'] / 1e6:,.0f} MB")
        row("**peak server RSS (VmHWM)**", lambda r: f"**{r['peak_rss_bytes'] / 1e6:,.0f} MB**")
        row("server RSS when the last session finished", lambda r: f"{r['rss_after_bytes'] / 1e6:,.0f} MB")
        row("server RSS 20 s later", lambda r: f"{r['rss_20s_later_bytes'] / 1e6:,.0f} MB")
        row("**server RSS after the sessions closed** (time after the load)",
            lambda r: (f"**{r['rss_closed_bytes'] / 1e6:,.0f} MB** ({r['closed_after_s']} s; "
                       f"{(r['rss_closed_bytes'] - r['rss_idle_bytes']) / 1e6:+,.0f} MB vs idle)")
            if "rss_closed_bytes" in r else "not measured")
        row("wall time", lambda r: f"{r['wall_s']:.0f} s")
        row("big-sweep sessions: seconds each (open, run, 5 changes)",
            lambda r: ", ".join(f"{s['seconds']:.0f}" for s in r["per_session"] if s["name"].startswith("big-")))

        def downloads(r):
            out = []
            for s in r["per_session"]:
                d = s.get("downloads") or {}
                if d:
                    out.append(f"{d.get('parquet_bytes', 0) / 1e6:.1f} MB Parquet, {d.get('csv_bytes', 0) / 1e6:.1f} MB "
                               f"CSV (CSV offered unfiltered: {'yes' if s.get('csv_offered_unfiltered') else 'no'})")
            return "; ".join(out) or "—"
        row("browser downloads (all rows as Parquet; 20,736 rows as CSV)", downloads)
        row("verdict (0 errors, peak < 1.5 GB, within 300 MB of idle after closing)",
            lambda r: "met" if r["ok"] else "NOT met")
        L += ["", "How it holds: the five ~1M-row sweeps are clicked at once; the store (`core.sweep.SweepStore`) runs "
              "them one at a time (`ui.sweeps.RUNNING_ROWS` = 1M rows evaluated at once) while their pages say "
              "\"Queued: N other sweeps first…\", small sweeps run beside them, and each session's shown table is "
              "leased, so no eviction drops it (before: \"no sweep … in this database\"). DuckDB keeps 400 MB resident "
              "and spills the rest of the ~5M kept rows to its private temporary directory; runs evaluate 32k-row "
              "chunks and exports stream 16k-row batches. What stays resident after the load (~0.8 GB) is DuckDB's "
              "buffer pool and the Python heap of 20 idle sessions. The Parquet file is about twice the size it was at 0d1033b because "
              "the sweep table now carries the step-time, interval, goodput and energy columns added since (the "
              "export's batch size does not change it); a CSV is offered only up to 50,000 rows."]
        errs = [(k, e) for k in labels for s in loads[k]["per_session"] for e in s.get("errors", ())]
        if errs:
            L += ["", "Error boxes seen (first 5): " + "; ".join(f"{k}: {e[:120]}" for k, e in errs[:5])]
    pt = res.get("pytorch_link")
    if pt:
        L += _heading("The PyTorch page's worst link (issue 10, item 2)",
                      "The issue's link (`/check_pytorch?pt_go=true&pt_src=architecture&pt_layers=2&pt_dmodel=32"
                      "&pt_heads=1&pt_kv=1&pt_dff=32&pt_vocab=32000&pt_seq=64&pt_mb=128`) opened by one fresh session "
                      "on a fresh server, no click; RSS of the server process.",
                      ("code", "RSS before", "RSS after", "peak", "added", "what the page did"))
        for label, r in pt.items():
            added = r["rss_after_bytes"] - r["rss_before_bytes"]
            did = "measured (from the link alone)" if r["measured"] else ("refused: " + r["page_says"][0][:90]
                                                                         if r["page_says"] else "nothing")
            L.append(f"| {label} | {r['rss_before_bytes'] / 1e6:,.0f} MB | {r['rss_after_bytes'] / 1e6:,.0f} MB | "
                     f"{r['peak_bytes'] / 1e6:,.0f} MB | {added / 1e6:+,.0f} MB | {did} |")
            c = r.get("click")
            if c:
                L.append(f"| {label}, a click on the largest batch the cap allows (pt_mb={c['micro_batch']}) | "
                         f"{c['rss_before_bytes'] / 1e6:,.0f} MB | {c['rss_after_bytes'] / 1e6:,.0f} MB | "
                         f"{c['peak_after_bytes'] / 1e6:,.0f} MB | "
                         f"{(c['peak_after_bytes'] - c['rss_before_bytes']) / 1e6:+,.0f} MB (peak) | "
                         f"{'measured' if c['measured'] else 'not measured'} |")
    rr = res.get("rss_ratio")
    if rr:
        L += _heading("RSS a PyTorch measurement adds, against the bytes it keeps (`core.measure` cap)",
                      "`python bench/bench_load.py --rss-ratio`: each shape's `compare` in a fresh process (torch 2.13 "
                      "CPU, 2 threads); added = peak RSS (VmHWM) − RSS before, against "
                      "`measurement_cost(cfg)['bytes']`. The cap bounds 4 × bytes + 64 MiB "
                      "(`measure.RSS_PER_ESTIMATED_BYTE`, `RSS_FIXED_BYTES`).",
                      ("shape", "kept (MiB)", "RSS added (MiB)", "ratio", "bound (MiB)", "within"))
        for name, r in rr.items():
            if "error" in r:
                L.append(f"| {name} | — | — | — | — | error |")
                continue
            L.append(f"| {name} | {r['bytes'] / MiB:,.1f} | {r['added_bytes'] / MiB:,.1f} | {r['ratio']:.2f} | "
                     f"{r['rss_bytes'] / MiB:,.1f} | {'yes' if r['within_bound'] else 'NO'} |")
    L += ["", "Raw numbers: `bench/out/load.json`.", ""]
    return "\n".join(L)


def _heading(title: str, intro: str, columns: tuple) -> list:
    """A subsection's first lines: its title, one paragraph, a table header (the first column left-aligned)."""
    return ["", f"### {title}", "", intro, "", "| " + " | ".join(columns) + " |",
            "|---|" + "---:|" * (len(columns) - 2) + "---|"]


def write_results(md: str) -> None:
    """Replace the `## Load` section of bench/RESULTS.md (bench/results.py)."""
    from bench.results import write_section as replace
    replace("Load", md)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--big", type=int, default=5, help="sessions that run a ~1M-row sweep at once")
    ap.add_argument("--browsers", type=int, default=2, help="sessions in headless chromium (downloads)")
    ap.add_argument("--app-dir", default=str(ROOT), help="the app to serve (default: this checkout)")
    ap.add_argument("--request-timeout-s", type=float, default=240.0)
    ap.add_argument("--deadline-s", type=float, default=480.0)
    ap.add_argument("--after-s", type=float, default=300.0, help="how long after the load the server's RSS is read "
                                                                "again (the sessions closed meanwhile)")
    ap.add_argument("--pytorch-link", action="store_true", help="only the PyTorch page's worst link")
    ap.add_argument("--label", default="after", help="the run's label in the results (e.g. before, after)")
    ap.add_argument("--app-label", default="", help="what --app-dir holds, for the results (e.g. a commit)")
    ap.add_argument("--rss-ratio", action="store_true", help="only the RSS a PyTorch measurement adds")
    ap.add_argument("--report", action="store_true", help="only print (and with --write-results write) the "
                                                          "section from bench/out/load.json")
    ap.add_argument("--write-results", action="store_true")
    args = ap.parse_args(argv)
    if not 1 <= args.sessions <= 50 or not 0 <= args.big + args.browsers <= args.sessions:
        ap.error("--sessions: 1 to 50, and at least --big + --browsers")
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "load.json"
    res = json.loads(path.read_text()) if path.exists() else {}
    res.update(date=dt.date.today().isoformat(), machine=_machine())
    if args.report:
        ok = True
    elif args.pytorch_link:
        res.setdefault("pytorch_link", {})[args.label] = pytorch_link(args)
        ok = True
    elif args.rss_ratio:
        res["rss_ratio"] = rss_ratio(args)
        ok = all(r.get("within_bound") for r in res["rss_ratio"].values())
    else:
        run = load(args)
        res.setdefault("loads", {})[args.label] = run
        ok = run["ok"]
    path.write_text(json.dumps(res, indent=1))
    md = markdown(res)
    print(md)
    if args.write_results:
        write_results(md)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
