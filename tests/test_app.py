"""The app under AppTest (in-process, no browser): the page registry matches pages/ and draws the sidebar; every page
renders with defaults and with edge inputs; interactions by widget key change the outputs; URL parameters seed the
widgets; random and hostile parameter values never raise and are named in a visible note. What AppTest cannot see
(the URL after a change, drawn charts, clicks on charts, downloads) is in tests/browser/."""
from __future__ import annotations

import json
import re
import string
from pathlib import Path
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st_
from streamlit.testing.v1 import AppTest

from rendered import rendered  # tests/rendered.py (pytest puts tests/ on the path)

from ui import registry

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / registry.HOME.file)
ROW = {p.file: p for p in registry.PAGES}
PAGES = list(ROW)
HOSTILE = ["", "abc", "-1", "0", "1e400", "nan", "inf", "-inf", "1.5", "9" * 400, "true", "None", "[]", "{}",
           "<script>alert(1)</script>", "'; DROP TABLE sweep_catalog; --", "../../etc/passwd", "\x00", "😀",
           "%00", "1,2", "0x10", "1_000", " 4096 ", "COPY (SELECT 1) TO '/tmp/x'"]


def run_page(page: str, **qp) -> AppTest:
    """The entrypoint first (as a browser session does), then the page, with `qp` in the URL."""
    at = AppTest.from_file(APP, default_timeout=30)
    for k, v in qp.items():
        at.query_params[k] = v
    at.run()
    return at.switch_page(page).run()


def notes(at: AppTest) -> str:
    """The notes about a link's parameters (other warnings, such as low headroom, are verdicts, not notes)."""
    return rendered("\n".join(w.value for w in at.warning if "link parameters" in w.value))


def errors(at: AppTest) -> str:
    """Input errors: the ones that name a field (`**field** — reason`), not verdicts such as "does not fit"."""
    return rendered("\n".join(e.value for e in at.error if e.value.startswith("**")))


def charts(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_registry_has_a_row_for_every_page_file_and_a_file_for_every_row():
    files = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "pages").glob("*.py"))
    unlisted, missing = sorted(set(files) - set(PAGES)), sorted(set(PAGES) - set(files))
    assert not unlisted and not missing, f"files with no row in ui/registry.py: {unlisted}; rows naming a missing " \
                                         f"file: {missing}"
    assert (ROOT / registry.HOME.file).is_file()
    assert PAGES == files, "rows in the order of the files (Streamlit's order for pages/)"
    for attr, rows in (("id", registry.NAV), ("title", registry.NAV), ("prefix", registry.PAGES)):  # Home binds none
        values = [getattr(p, attr) for p in rows]
        assert len(set(values)) == len(values), f"two pages share a {attr}"


@pytest.mark.parametrize("page", PAGES)
def test_page_starts_with_its_own_row(page):
    """The id a page passes to layout.start is its registry id (hence its URL prefix and its title)."""
    m = re.search(r'layout\.start\("(\w+)"', (ROOT / page).read_text())
    assert m and m.group(1) == ROW[page].id, page


def test_landing_page_links_every_page():
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert not at.exception
    text = " ".join(str(e.proto) for e in at.main.get("page_link"))
    for page in PAGES:
        assert f'page: "{ROW[page].url_path}"' in text, page


@pytest.mark.parametrize("page", [registry.HOME.file] + PAGES)
def test_sidebar_lists_every_page_by_its_title(page):
    """ui.layout draws the page list (Streamlit's own, with file names, is hidden in .streamlit/config.toml)."""
    at = AppTest.from_file(APP, default_timeout=30).run()
    if page != registry.HOME.file:
        at.switch_page(page).run()
    assert not at.exception
    links = at.sidebar.get("page_link")
    assert [(ln.proto.label, ln.proto.page) for ln in links[:len(registry.NAV)]] == \
        [(p.title, p.url_path) for p in registry.NAV]


@pytest.mark.parametrize("page", PAGES)
def test_page_renders_with_defaults(page):
    at = run_page(page)
    assert not at.exception, at.exception
    assert not errors(at)
    assert not notes(at)
    assert len(at.title) == 1
    assert len(charts(at)) == ROW[page].charts, "the registry's chart count is what the browser tests wait for"


def _edge_params(at: AppTest, page: str, end: str) -> dict:
    """Every number input of the page at its minimum or maximum, every select at its last option."""
    qp = {}
    for w in at.number_input:
        has, lim = (w.proto.has_max, w.proto.max) if end == "max" else (w.proto.has_min, w.proto.min)
        if w.key and has:
            qp[w.key] = str(int(lim) if float(lim).is_integer() else lim)
    for w in at.selectbox:
        if w.key and end == "max":
            qp[w.key] = str(w.options[-1])
    return qp


@pytest.mark.parametrize("end", ["min", "max"])
@pytest.mark.parametrize("page", PAGES)
def test_page_survives_edge_inputs(page, end):
    at = run_page(page)
    qp = _edge_params(at, page, end)
    at2 = run_page(page, **qp)
    assert not at2.exception, (qp, at2.exception)
    # extreme combinations may be invalid setups: then an error names a field instead of a traceback
    for e in at2.error:
        assert "**" in e.value, e.value


def test_calculator_seeds_from_url():
    at = run_page("pages/01_calculator.py", model="llama-3.1-70b", gpus="64", zero="3", flash="true",
                  seq="8192", rc="selective", unit="GiB", gpu="h200")
    assert not at.exception
    assert at.selectbox(key="model").value == "llama-3.1-70b"
    assert at.number_input(key="gpus").value == 64
    assert at.selectbox(key="zero").value == 3
    assert at.toggle(key="flash").value is True
    assert at.number_input(key="seq").value == 8192
    assert at.radio(key="rc").value == "selective"
    assert at.selectbox(key="gpu").value == "h200"
    assert "GiB" in metric(at, "Total per GPU")
    assert not notes(at)


@pytest.mark.parametrize("page,qp,key,value", [
    ("pages/02_fit_map.py", {"fm_zero": "1", "fm_seq": "2048"}, "fm_zero", 1),
    ("pages/03_activations.py", {"ac_model": "gpt-3-6.7b", "ac_smax": "65536"}, "ac_model", "gpt-3-6.7b"),
    ("pages/04_roofline.py", {"rf_dtype": "fp8", "rf_accs": ["h100-sxm", "h200"]}, "rf_accs", ["h100-sxm", "h200"]),
    ("pages/05_time_cost.py", {"tc_mfu": "40", "tc_accs": "a100-80gb"}, "tc_mfu", 40),
])
def test_other_pages_seed_from_url(page, qp, key, value):
    at = run_page(page, **qp)
    assert not at.exception
    widget = next(w for w in at.get(_kind(at, key)) if getattr(w, "key", None) == key)
    assert widget.value == value
    assert not notes(at)


def _kind(at: AppTest, key: str) -> str:
    for kind in ("selectbox", "number_input", "radio", "toggle", "multiselect", "slider"):
        if any(getattr(w, "key", None) == key for w in at.get(kind)):
            return kind
    raise AssertionError(f"no widget {key}")


def test_calculator_interactions_change_outputs():
    at = run_page("pages/01_calculator.py")
    total = metric(at, "Total per GPU")
    days = metric(at, "Days")
    at.selectbox(key="zero").set_value(3).run()  # the default is ZeRO-1 (core/inputs.py)
    assert metric(at, "Total per GPU") != total and metric(at, "Fits?") == "yes"
    at.number_input(key="gpus").set_value(64).run()
    assert metric(at, "Days") != days
    acts = metric(at, "Total per GPU")
    at.toggle(key="flash").set_value(False).run()  # the app's default is on
    assert metric(at, "Total per GPU") != acts
    at.radio(key="unit").set_value("GiB").run()
    assert "GiB" in metric(at, "Total per GPU")
    assert not at.exception


@pytest.mark.parametrize("page,kind,key,value", [
    ("pages/02_fit_map.py", "selectbox", "fm_zero", 3),
    ("pages/02_fit_map.py", "toggle", "fm_flash", False),  # the app default is on
    ("pages/03_activations.py", "selectbox", "ac_smax", 16384),
    ("pages/03_activations.py", "number_input", "ac_mb", 4),
    ("pages/04_roofline.py", "radio", "rf_dtype", "fp8"),
    ("pages/04_roofline.py", "number_input", "rf_seq", 512),
    ("pages/05_time_cost.py", "number_input", "tc_gbs", 256),
    ("pages/06_sweeps.py", "multiselect", "sw_zeros", [3]),
    ("pages/07_check_pytorch.py", "number_input", "pt_seq", 128),
])
def test_a_widget_change_redraws_the_charts(page, kind, key, value):
    at = run_page(page)
    before = [c.proto.SerializeToString() for c in at.get("vega_lite_chart")]
    widget = next(w for w in at.get(kind) if getattr(w, "key", None) == key)
    widget.set_value(value).run()
    assert not at.exception and not errors(at)
    after = [c.proto.SerializeToString() for c in at.get("vega_lite_chart")]
    assert after and after != before


def test_calculator_advisor_applies_its_change():
    at = run_page("pages/01_calculator.py", seq="8192", flash="false", zero="0")  # the app's defaults fit
    assert metric(at, "Fits?") == "no"
    assert any("cheapest changes that fit" in m.value for m in at.markdown)
    at.button(key="apply_best").click().run()
    assert not at.exception
    assert metric(at, "Fits?") == "yes"


def test_calculator_invalid_setup_names_the_field():
    at = run_page("pages/01_calculator.py", tp="3")
    assert not at.exception
    assert "**tp" in errors(at)  # "tp·pp — does not divide n_gpus"
    assert len(at.sidebar.number_input) > 0  # the inputs stay on screen to fix it


def test_calculator_model_sources():
    at = run_page("pages/01_calculator.py", src="params", params="70")
    assert not at.exception and not errors(at)
    assert at.number_input(key="params").value == 70.0
    assert any("GPT-3 Table 2.1" in rendered(m.value) for m in at.markdown)  # the raw-N shape note
    at = run_page("pages/01_calculator.py", src="architecture", layers="4", dmodel="512", heads="8", kv="8",
                  dff="2048", vocab="1000")
    assert not at.exception and not errors(at)
    at = run_page("pages/01_calculator.py", src="architecture", dmodel="1000", heads="32")
    assert "**d_model**" in errors(at)


def test_switching_to_architecture_starts_from_the_preset():
    at = run_page("pages/01_calculator.py", model="llama-3.1-70b")
    at.radio(key="src").set_value("architecture").run()
    assert not at.exception
    assert at.number_input(key="layers").value == 80
    assert at.number_input(key="dmodel").value == 8192


def test_bad_url_values_fall_back_with_a_note():
    at = run_page("pages/01_calculator.py", seq="abc", zero="7", gpus="1e400", model="gpt-9", junk="1")
    assert not at.exception
    text = notes(at)
    for k in ("seq=abc", "zero=7", "gpus=", "model=gpt-9", "junk"):
        assert k in text, (k, text)
    assert at.number_input(key="seq").value == 4096


def test_model_choice_carries_to_the_next_page():
    at = run_page("pages/01_calculator.py", model="llama-3.1-70b", seq="8192")
    at.switch_page("pages/03_activations.py").run()
    assert not at.exception
    assert at.selectbox(key="ac_model").value == "llama-3.1-70b"
    at.switch_page("pages/04_roofline.py").run()
    assert at.number_input(key="rf_seq").value == 8192


def test_fit_map_cell_opens_calculator():
    """The chart's on_select stores the clicked cell as Calculator parameters; the next run switches page."""
    at = run_page("pages/02_fit_map.py", fm_zero="3")
    at.session_state["_fm_goto"] = {"model": "llama-3.1-70b", "gpus": "64", "src": "preset", "zero": "3"}
    at.run()
    assert not at.exception
    assert at.title[0].value == "Will it fit?"
    assert at.selectbox(key="model").value == "llama-3.1-70b"
    assert at.number_input(key="gpus").value == 64


def test_sweeps_spec_filters_and_summary():
    at = run_page("pages/06_sweeps.py", sw_models=["llama-3.1-8b", "llama-3.1-70b"], sw_zeros=["1", "3"])
    assert not at.exception and not errors(at)
    rows = metric(at, "Rows")
    assert rows == f"{2 * 8 * 5 * 3 * 2 * 3 * 2:,}"  # models × GPUs 8..1024 × seq 2k..32k × mb × zero × rc × flash
    matching = next(c.value for c in at.caption if "rows match" in c.value)
    at.selectbox(key="sw_f1c").set_value("model").run()
    at.text_input(key="sw_f1v").set_value("llama-3.1-8b").run()
    assert not at.exception and not errors(at)
    assert next(c.value for c in at.caption if "rows match" in c.value) != matching
    at.text_input(key="sw_f1v").set_value("'; DROP TABLE sweep_catalog; --").run()  # only ever compared as data
    assert not at.exception
    assert next(c.value for c in at.caption if "rows match" in c.value).startswith("0 of")
    at.selectbox(key="sw_f2c").set_value("seq_len").run()
    at.text_input(key="sw_f2v").set_value("abc").run()
    assert "seq_len" in errors(at) and "not a number" in errors(at)


def test_sweeps_over_the_auto_size_wait_for_a_click():
    at = run_page("pages/06_sweeps.py", sw_models=["llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b"],
                  sw_accs=["h100-sxm", "h200", "b200"], sw_gmin="1", sw_gmax="65536", sw_smin="512",
                  sw_smax="131072", sw_mbs=["1", "2", "4", "8"], sw_tpdeg=["1", "2"])  # 264,384 rows
    assert not at.exception
    assert any(b.key == "sw_run" for b in at.button)
    assert not at.get("vega_lite_chart")


def test_check_against_pytorch_measures_when_asked():
    pytest.importorskip("torch")
    at = run_page("pages/07_check_pytorch.py")  # a link alone never starts a measurement (issue 10): a click does
    at.button(key="pt_run").click().run()
    assert not at.exception and not errors(at)
    assert metric(at, "One layer: ledger") == metric(at, "One layer: PyTorch kept")
    at = run_page("pages/07_check_pytorch.py", pt_src="preset", pt_model="llama-3.1-70b")
    assert "**size**" in errors(at)  # over the CPU cap: named, not run


def test_downloads_present_on_every_chart_page():
    for page in (p for p in PAGES if ROW[p].charts):
        at = run_page(page)
        assert len(at.get("download_button")) >= 1, page


NAMES = ["model", "gpus", "seq", "zero", "flash", "unit", "rc", "recipe", "tp", "price", "src", "params", "layers",
         "mfu", "tokens", "accs", "counts", "models", "smax", "f1c", "f1v", "go", "x", "embed", "_ui_page"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st_.sampled_from(PAGES),
       st_.dictionaries(st_.sampled_from(NAMES), st_.one_of(st_.sampled_from(HOSTILE),
                                                            st_.text(string.printable + "äΩ😀", max_size=30),
                                                            st_.lists(st_.sampled_from(HOSTILE), max_size=3)),
                        max_size=6))
def test_fuzzed_link_parameters_never_raise(page, params):
    qp = {(n if n in ("embed", "_ui_page", "x") else ROW[page].prefix + n): v for n, v in params.items()}
    at = run_page(page, **qp)
    assert not at.exception, (page, qp, at.exception)


@pytest.mark.parametrize("page", PAGES)
def test_hostile_values_on_every_key_never_raise(page):
    at = run_page(page)
    keys = [w.key for kind in ("selectbox", "number_input", "radio", "toggle", "multiselect")
            for w in at.get(kind) if getattr(w, "key", None)]
    for i in range(0, len(HOSTILE), 9):  # three URLs, each key with a different hostile value
        qp = {k: HOSTILE[(i + j) % len(HOSTILE)] for j, k in enumerate(keys)}
        at2 = run_page(page, **qp)
        assert not at2.exception, (page, qp, at2.exception)


# --- links are authoritative; carried values survive; the landing page's claims hold ------------------------------
def _code(at: AppTest) -> str:
    return next(c.value for c in at.code if c.value.startswith("python -m core estimate"))


def _follow_link(at: AppTest, page: str, params: dict) -> AppTest:
    """What a link does in the browser: the URL becomes the link's parameters, then the page runs."""
    at.query_params = dict(params)
    return at.switch_page(page).run()


@pytest.mark.parametrize("i", range(3))
def test_landing_examples_open_what_they_claim(i):
    """Each landing-page example opens the Calculator with its parameters and the page shows the verdict its
    label states; the numbers the label quotes match the record of the inputs shown (via the page's CLI line)."""
    import shlex

    from core.cli import build_parser, inputs_from_args
    from core.estimate import config_from_inputs, estimate
    from ui.explain import EXAMPLES
    ex = EXAMPLES[i]
    at = run_page("pages/01_calculator.py", **ex.link)
    assert not at.exception and not errors(at) and not notes(at)
    assert metric(at, "Fits?") == ("yes" if ex.fits else "no"), ex.label
    assert ("Does not fit" in " ".join(e.value for e in at.error)) == (not ex.fits)
    rec = estimate(config_from_inputs(**inputs_from_args(build_parser().parse_args(shlex.split(_code(at))[3:]))))
    assert rec["fits"] == ex.fits
    for field, value in ex.claims.items():
        assert rec[field] == pytest.approx(value, rel=0.01), (ex.label, field, rec[field])
    home = AppTest.from_file(APP, default_timeout=30).run()  # and the landing page links exactly these parameters
    assert any(p.proto.label == ex.label and p.proto.query_string == urlencode(ex.link)
               for p in home.get("page_link"))


def test_a_link_resets_what_it_does_not_name():
    """The review's case: /calculator?tp=2&rc=full&mfu=30, then Home, then "The seeds' 7B…": the link's view
    (tp 1, no recomputation, 50% MFU), not the session's leftovers — and its advertised verdict, not an error."""
    from ui.explain import EXAMPLES
    at = run_page("pages/01_calculator.py", tp="2", rc="full", mfu="30", gpu="h200")
    assert at.number_input(key="tp").value == 2
    at = _follow_link(at, "app.py", {})
    at = _follow_link(at, "pages/01_calculator.py", EXAMPLES[0].link)
    assert not at.exception and not errors(at)
    assert at.number_input(key="tp").value == 1 and at.radio(key="rc").value == "none"
    assert at.number_input(key="mfu").value == 50 and at.selectbox(key="gpu").value == "h100-sxm"
    assert at.selectbox(key="model").value == "gpt-3-6.7b" and metric(at, "Fits?") == "no"
    assert set(at.query_params) == set(EXAMPLES[0].link)


def test_a_link_skips_the_carry():
    at = run_page("pages/02_fit_map.py", fm_gpu="b200", fm_zero="1")
    at = _follow_link(at, "pages/01_calculator.py", {"model": "llama-3.1-70b"})
    from ui.state import BY_RULE  # the defaults: the catalog's first choice, the framework's own ZeRO stage
    assert at.selectbox(key="gpu").value == "h100-sxm" and at.selectbox(key="zero").value == BY_RULE


def test_fit_map_cell_link_is_the_cells_view():
    """A clicked cell opens the Calculator with the fit map's inputs; Calculator inputs left over from earlier in
    the session (here the MFU and TP) start from their defaults."""
    at = run_page("pages/01_calculator.py", mfu="30", tp="2", gpus="16")
    at.query_params = {}
    at.switch_page("pages/02_fit_map.py").run()
    at.session_state["_fm_goto"] = {"model": "llama-3.1-70b", "gpus": "64", "src": "preset", "zero": "3"}
    at.run()
    assert not at.exception and at.title[0].value == "Will it fit?"
    assert at.number_input(key="mfu").value is None and at.number_input(key="tp").value == 1  # defaults: predicted
    assert at.number_input(key="gpus").value == 64 and at.selectbox(key="zero").value == 3


def test_sidebar_navigation_still_carries_and_keeps_the_page():
    """Without a link (the sidebar: no parameters) a page keeps what it had and takes the carried inputs."""
    at = run_page("pages/01_calculator.py", tp="2", gpus="16", model="llama-3.1-70b")
    at.query_params = {}
    at.switch_page("pages/03_activations.py").run()
    at.selectbox(key="ac_model").set_value("llama-3.1-405b").run()
    at.query_params = {}
    at.switch_page("pages/01_calculator.py").run()
    assert at.number_input(key="tp").value == 2 and at.selectbox(key="model").value == "llama-3.1-405b"


def test_a_carried_value_survives_a_page_whose_default_it_equals():
    """seq 256 chosen on the Calculator is the PyTorch page's default: passing through there keeps it for the
    Roofline (default 4096); a flash choice survives the Sweeps page (whose flash input is `sw_flashes`)."""
    at = run_page("pages/01_calculator.py", seq="256", flash="true")
    for page in ("pages/07_check_pytorch.py", "pages/06_sweeps.py", "pages/04_roofline.py"):
        at.query_params = {}
        at.switch_page(page).run()
        assert not at.exception
    assert at.number_input(key="rf_seq").value == 256
    at.query_params = {}
    at.switch_page("pages/02_fit_map.py").run()
    assert at.toggle(key="fm_flash").value is True


def test_an_emptied_multiselect_survives_the_link():
    at = run_page("pages/02_fit_map.py", fm_counts="")
    assert not at.exception and not notes(at)
    assert at.multiselect(key="fm_counts").value == []
    assert any("at least one" in i.value for i in at.info)
    at = run_page("pages/05_time_cost.py", tc_accs=["h200", "h200", "b200"])
    assert at.multiselect(key="tc_accs").value == ["h200", "b200"] and not notes(at)


def test_notes_write_numbers_and_flags_for_people():
    at = run_page("pages/01_calculator.py", seq="9999999999", flash="maybe")
    text = notes(at)
    assert "2,147,483,647" in text and "using 4,096" in text and "using on" in text, text  # the schema's bound
    assert "e+06" not in text and "False" not in text


def test_sweep_filter_errors_name_the_filter_and_column():
    at = run_page("pages/06_sweeps.py", sw_models="llama-3.1-8b", sw_f1c="n_gpus", sw_f1v="abc")
    assert "**filter 1 (n_gpus)** — " in errors(at) and "not a number" in errors(at)


def test_time_cost_frontier_writes_durations_not_fractions_of_days():
    at = run_page("pages/05_time_cost.py", tc_counts=["1024", "4096"], tc_accs=["b200", "h200"], tc_mfu="50")
    assert not at.exception and not errors(at)
    assert any("override" in c.value for c in at.caption)
    times = at.dataframe[0].value["time"]
    assert len(times) and all(t.endswith((" h", " days")) for t in times), list(times)


def test_time_cost_predicted_mode_takes_each_points_own_step():
    """The one time figure: each point's time comes from its own predicted step at the default global batch rule
    (the smallest multiple of dp × micro-batch with 4M tokens), so the frontier is not just the largest count; a
    global batch too small for a count leaves that count out, said in words."""
    at = run_page("pages/05_time_cost.py", tc_counts=["8", "64", "1024", "4096"], tc_accs=["b200"])
    assert not at.exception and not errors(at)
    front = at.dataframe[0].value
    assert "MFU" in front and "time" in front and len(front) >= 2
    at = run_page("pages/05_time_cost.py", tc_counts=["8", "64", "4096"], tc_accs=["b200"], tc_gbs="1024")
    assert 4096 not in set(at.dataframe[0].value["GPUs"])
    assert any("global_batch: must be a multiple" in c.value for c in at.caption)


def test_parallel_layout_page_ranks_by_the_intervals_high_end_from_a_link():
    """The page's "Rank by" offers core/plan.OBJECTIVES: a link with obj=time_high is taken as it is (no note) and
    ranks as `plan --objective time_high` does."""
    from core.plan import plan
    at = run_page("pages/08_parallel_layout.py", pl_model="llama-3.1-70b", pl_gpus="64", pl_gbs="512",
                  pl_seq="8192", pl_obj="time_high")
    assert not at.exception and not errors(at) and not notes(at)
    best = plan(dict(model="llama-3.1-70b", gpu="h100-sxm", seq_len=8192, global_batch=512), (64,), "time_high",
                top=1)["strategies"][0]
    shown = next(m.value for m in at.markdown if m.value.startswith("**Best layout:**"))
    assert f"tp{best['tp']}" in shown and f"pp{best['pp']}" in shown


def test_parallel_layout_page_ranks_layouts_and_reproduces_from_its_link():
    at = run_page("pages/08_parallel_layout.py", pl_model="llama-3.1-70b", pl_gpus="64", pl_gbs="256",
                  pl_seq="4096")
    assert not at.exception and not errors(at)
    metrics = {m.label: m.value for m in at.metric}
    assert any(m.value.startswith("**Best layout:** tp") for m in at.markdown) and metrics["Predicted step"].endswith("s")
    assert {"Predicted MFU", "Tokens/s (whole job)", "Run", "Cost"} <= set(metrics)
    again = run_page("pages/08_parallel_layout.py", pl_model="llama-3.1-70b", pl_gpus="64", pl_gbs="256",
                     pl_seq="4096")
    assert {m.label: m.value for m in again.metric} == metrics
