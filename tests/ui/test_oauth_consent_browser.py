"""The OAuth consent page in a real browser: Debian's Chromium driven by selenium against a real
`serve --http`, the way the owner approves claude.ai or ChatGPT.

The client's callback is a small HTTP server on loopback, so the browser really lands
on it with the code. Skips without chromium + chromedriver unless MEMVERBS_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import http.server
import os
import threading
from pathlib import Path
from typing import ClassVar
from urllib.parse import urlencode, urlsplit

import httpx
import pytest
from helpers import init_home
from oauth_support import Client, approval_code, clean_env, pkce, query

from benchmarks.http_load import HEADERS, RemoteServer, call_body

CHROMIUM = os.environ.get("MEMVERBS_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("MEMVERBS_CHROMEDRIVER", "/usr/bin/chromedriver")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "ui"
REQUIRED = os.environ.get("MEMVERBS_REQUIRE_BROWSER") == "1"
if not REQUIRED:
    pytest.importorskip("selenium")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
    if REQUIRED:
        raise RuntimeError(f"MEMVERBS_REQUIRE_BROWSER=1 but {CHROMIUM} or {CHROMEDRIVER} is missing")
    pytest.skip("no chromium/chromedriver (apt-get install chromium chromium-driver)", allow_module_level=True)


class Callback(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self):
        Callback.hits.append(self.path)
        body = b"<!doctype html><title>connected</title><p id=done>connected</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="module")
def callback():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Callback)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/callback"
    httpd.shutdown()


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return init_home(tmp_path_factory.mktemp("consent") / "home").root


@pytest.fixture(scope="module")
def server(home):
    with RemoteServer(home, env=clean_env(home)) as srv:
        yield srv


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=900,900"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()


def test_the_owner_approves_a_narrower_grant_in_the_browser(server, home, memverbs_cmd, browser, callback):
    client = Client.register(server.base, name="Claude (browser test)", redirect_uri=callback)
    verifier, challenge = pkce()
    params = {"response_type": "code", "client_id": client.client_id, "redirect_uri": callback, "state": "xyz",
              "code_challenge": challenge, "code_challenge_method": "S256", "resource": server.url}
    browser.get(f"{server.base}/authorize?{urlencode(params)}")
    wait = WebDriverWait(browser, 15)
    wait.until(lambda d: d.find_elements(By.ID, "client-name"))
    assert browser.find_element(By.ID, "client-name").text == "Claude (browser test)"
    assert browser.find_element(By.ID, "redirect-host").text == callback.rsplit("/", 1)[0]
    boxes = {b.get_attribute("value"): b for b in browser.find_elements(By.NAME, "scope")}
    assert set(boxes) == {"read", "write"} and all(b.is_selected() for b in boxes.values())
    surface = Select(browser.find_element(By.ID, "surface"))
    assert [o.get_attribute("value") for o in surface.options] == ["verbs", "starter", "full"]
    browser.save_screenshot(str(ARTIFACTS / "oauth-consent.png"))

    # a wrong login first: the page says so and stays
    browser.find_element(By.ID, "owner_secret").send_keys("WRONG-CODE")
    browser.find_element(By.ID, "approve").click()
    wait.until(lambda d: d.find_elements(By.ID, "error"))
    assert "not right" in browser.find_element(By.ID, "error").text and not Callback.hits

    # the owner grants read only, on the verbs surface, with a code from `memverbs auth approve`
    browser.find_element(By.CSS_SELECTOR, "input[name=scope][value=write]").click()
    Select(browser.find_element(By.ID, "surface")).select_by_value("verbs")
    browser.find_element(By.ID, "owner_secret").send_keys(approval_code(memverbs_cmd, home))
    browser.find_element(By.ID, "approve").click()
    wait.until(lambda d: d.find_elements(By.ID, "done"))
    got = query(next(h for h in Callback.hits if h.startswith("/callback?")))  # (the browser also asks for a favicon)
    assert got["state"] == "xyz" and got["iss"] == server.base

    tokens = client.exchange(got["code"], verifier)
    assert tokens.status_code == 200 and tokens.json()["scope"] == "read surface:verbs"
    token = tokens.json()["access_token"]
    auth = {**HEADERS, "Authorization": f"Bearer {token}"}
    listed = httpx.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}, headers=auth).json()
    assert "whoami" not in {t["name"] for t in listed["result"]["tools"]}  # verbs only
    refused = httpx.post(server.url, json=call_body(1, "remember", {"fact": "x", "provenance": "p"}), headers=auth)
    assert refused.status_code == 403 and 'scope="write"' in refused.headers["www-authenticate"]


def test_the_inspector_shows_clients_and_revokes_one(server, home, memverbs_cmd, browser):
    import subprocess

    client = Client.register(server.base, name="Inspector-listed client")
    token = client.tokens(approval_code(memverbs_cmd, home))["access_token"]
    auth = {**HEADERS, "Authorization": f"Bearer {token}"}
    assert httpx.post(server.url, json=call_body(1, "recall", {}), headers=auth).status_code == 200
    proc = subprocess.Popen([*memverbs_cmd, "ui", "--no-open", "--port", "0"], env=clean_env(home), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split(": ", 1)[1].strip()
        browser.get(url)  # the token in the URL becomes a cookie
        parts = urlsplit(url)
        browser.get(f"{parts.scheme}://{parts.netloc}/access")
        wait = WebDriverWait(browser, 15)
        wait.until(lambda d: d.find_elements(By.ID, "oauth-clients"))
        row = next(r for r in browser.find_elements(By.CSS_SELECTOR, "tr.oauth-client") if "Inspector-listed client" in r.text)
        assert client.client_id in row.text and "read,write / full" in row.text
        browser.save_screenshot(str(ARTIFACTS / "inspector-access.png"))
        row.find_element(By.TAG_NAME, "button").click()
        wait.until(lambda d: d.find_elements(By.ID, "confirm-yes"))
        browser.find_element(By.ID, "confirm-yes").click()
        wait.until(lambda d: "revoked" in d.page_source)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert httpx.post(server.url, json=call_body(1, "recall", {}), headers=auth).status_code == 401  # at the next request
