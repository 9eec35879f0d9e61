"""Issue 16 item 3 in a real browser: a hostile link or upload renders as inert text on every page — no `<img>`, no
`<a>` pointing to a host the app does not serve, no code span broken out of, no colour or emoji directive. Each page
gets a link whose parameter values *and* names carry markdown (images, links, autolinks, e-mail autolinks, HTML,
backticks, directives), for the inputs it binds (so its note echoes them) and for names it does not have."""
from __future__ import annotations

import json
from urllib.parse import urlencode, urlparse

import pytest

from bench.harness import sync_api, wait_for_app
from ui.registry import NAV

EVIL = "evil.example"
HOSTILE = [
    f"![x](http://{EVIL}/i.png)",
    f"[click](http://{EVIL}/a)",
    f"<img src=http://{EVIL}/h.png>",
    f"www.{EVIL}",
    f"mail@{EVIL}",
    "`a` ``b`` :red[big] :material/home: $x^2$ **bold**",
]
# inputs most pages bind (with the page's prefix): a value each cannot take, so the page's note echoes it
KEYS = ("model", "gpu", "seq", "src", "gpus", "mb", "zero", "unit")


def hostile_link(prefix: str) -> str:
    params = []
    for i, key in enumerate(KEYS):
        params.append((prefix + key, HOSTILE[i % len(HOSTILE)]))
    for i, v in enumerate(HOSTILE):  # names that are no input anywhere, echoed as "not an input of this page"
        params.append((f"{prefix}{v}", str(i)))
    return urlencode(params)


def foreign(page, base: str) -> list[str]:
    """Image sources and link targets in the page that point to another host than the app's."""
    host = urlparse(base).hostname
    out = []
    for sel, attr in (("img", "src"), ("a", "href"), ("image", "href"), ("iframe", "src")):
        loc = page.locator(sel)
        for i in range(loc.count()):
            url = loc.nth(i).get_attribute(attr) or ""
            u = urlparse(url)
            if u.scheme in ("", "data", "blob") and not u.netloc:
                continue  # relative, inline
            if u.hostname == host:
                continue
            if u.scheme == "mailto" or EVIL in url:
                out.append(f"<{sel} {attr}={url}>")
            elif u.hostname and u.hostname.endswith(("streamlit.io", "streamlit.app")):
                continue  # Streamlit's own chrome (menu links), not page content
            else:
                out.append(f"<{sel} {attr}={url}>")
    return out


@pytest.mark.parametrize("p", NAV, ids=[p.id for p in NAV])
def test_a_hostile_link_renders_inert_text(server, page, p):
    page.goto(f"{server.url}/{p.url_path}?{hostile_link(p.prefix)}")
    wait_for_app(page)
    assert foreign(page, server.url) == []
    # the echoed markdown is there as text: the note (or an error box) shows the characters themselves
    body = page.locator("[data-testid='stMain']").inner_text().replace("\u2060", "")  # ui.fmt.inert's word joiners
    if p.id != "home":
        assert EVIL in body and ("![x](" in body or "[click](" in body or "<img src=" in body)
    assert page.locator("[data-testid='stMain'] strong:has-text('bold')").count() == 0  # no **bold** from a link
    assert page.locator(f"[data-testid='stMain'] code:has-text('{EVIL}')").count() == 0
    sync_api.expect(page.get_by_test_id("stException")).to_have_count(0)


def test_a_hostile_config_upload_renders_inert_text(server, page, tmp_path):
    """An uploaded config.json whose fields carry markdown: the error box shows them as text."""
    bad = tmp_path / f"![x](http:{EVIL}).json"
    bad.write_text(json.dumps({"model_type": f"![x](http://{EVIL}/i.png) [a](http://{EVIL}/) `x`",
                               "hidden_size": 1}))
    page.goto(f"{server.url}/calculator?src=hf-config")
    wait_for_app(page)
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(bad))
    wait_for_app(page)
    page.wait_for_timeout(500)
    wait_for_app(page)
    assert foreign(page, server.url) == []
    errors = page.get_by_test_id("stAlertContentError")
    sync_api.expect(errors.first).to_contain_text("model_type")
    assert f"![x](http://{EVIL}/i.png)" in errors.first.inner_text().replace("\u2060", "")
