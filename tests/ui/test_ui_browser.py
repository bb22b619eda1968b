"""`memverbs ui` in a real browser: Debian's Chromium driven by selenium, against a real
`memverbs ui` process on loopback, with other `memverbs` processes writing to the same brain.

One browser and one inspector per module. Screenshots of each view are kept under
tests/artifacts/ui/ (gitignored). Without chromium + chromedriver the module skips, unless
MEMVERBS_REQUIRE_BROWSER=1 (CI), where it fails.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from helpers import init_home

CHROMIUM = os.environ.get("MEMVERBS_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("MEMVERBS_CHROMEDRIVER", "/usr/bin/chromedriver")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "ui"
WAIT_S = 15  # generous on a loaded 2-core machine; the feed polls every 0.5 s

REQUIRED = os.environ.get("MEMVERBS_REQUIRE_BROWSER") == "1"
if not REQUIRED:
    pytest.importorskip("selenium")
from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
    if REQUIRED:
        raise RuntimeError(f"MEMVERBS_REQUIRE_BROWSER=1 but {CHROMIUM} or {CHROMEDRIVER} is missing: apt-get install chromium chromium-driver")
    pytest.skip("no chromium/chromedriver (apt-get install chromium chromium-driver)", allow_module_level=True)


def _memverbs() -> list[str]:
    exe = shutil.which("memverbs")
    return [exe] if exe else [sys.executable, "-m", "memverbs"]


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("ui") / "home"
    init_home(root)
    e = dict(os.environ)
    e["MEMVERBS_HOME"] = str(root)
    for var in ("MEMVERBS_SOURCE", "MEMVERBS_MCP_SURFACE", "MEMVERBS_MCP_FORCE_SURFACE", "NO_COLOR"):
        e.pop(var, None)
    return e


def cli(env: dict, *args: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*_memverbs(), *args], env=env, input=stdin, capture_output=True, text=True, timeout=60, cwd=cwd)


@pytest.fixture(scope="module")
def seeded(env) -> dict:
    assert cli(env, "remember", "Alice prefers tabs over spaces", "--entity", "people/alice-example",
               "--provenance", "claude").returncode == 0
    assert cli(env, "remember", "Alice's door code is 4711", "--entity", "people/alice-example",
               "--visibility", "private", "--provenance", "codex").returncode == 0
    page = ("---\ntype: person\n---\n# Alice Example\n\nWorks with [[people/bob-example]] on the parser.\n\n"
            "<!-- facts -->\n- [private] salary: confidential\n- likes tea\n<!-- /facts -->\n")
    assert cli(env, "put-page", "people/alice-example", "-", stdin=page).returncode == 0
    return {"slug": "people/alice-example"}


def _start_inspector(env: dict):
    proc = subprocess.Popen([*_memverbs(), "ui", "--no-open", "--port", "0"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.startswith("memverbs ui: http://127.0.0.1:"), line + proc.stderr.read() if proc.poll() is not None else line
    return proc, line.split(": ", 1)[1].strip()


@pytest.fixture(scope="module")
def inspector(env, seeded):
    """The inspector the browser uses (its URL's token is redeemed once, by the browser)."""
    proc, url = _start_inspector(env)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def gate_inspector(env, seeded):
    """An inspector of its own, for tests that spend its URL's token over plain HTTP."""
    proc, url = _start_inspector(env)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def browser(inspector):
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1200,1000"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.get(inspector)  # the token in the URL becomes a cookie
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()


def base(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def shot(driver, name: str) -> None:
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def wait_for(driver, predicate, what: str):
    # An element found just before the page navigates goes stale: look again rather than fail.
    wait = WebDriverWait(driver, WAIT_S, poll_frequency=0.1, ignored_exceptions=(StaleElementReferenceException,))
    return wait.until(lambda d: predicate(d), message=what)


def open_actions(row) -> None:
    """A fact row keeps its actions behind an Actions disclosure (open on the fact's own page)."""
    disclosure = row.find_elements(By.CSS_SELECTOR, "details.acts")
    if disclosure and disclosure[0].get_attribute("open") is None:
        disclosure[0].find_element(By.TAG_NAME, "summary").click()


def confirm(driver) -> None:
    """Click the confirmation page's yes, once it is there (the click is retried if the page moved)."""
    wait_for(driver, lambda d: d.find_element(By.ID, "confirm-yes").click() or True, "no confirmation asked")


# -- the gate -------------------------------------------------------------------------------


def _request(url: str, path: str, *, method: str = "GET", headers: dict | None = None, body: str | None = None):
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    conn.request(method, path, body=body, headers=headers or {})
    res = conn.getresponse()
    return res.status, res.getheader("Set-Cookie"), res.read().decode()


def test_a_request_without_the_token_is_refused(gate_inspector):
    inspector = gate_inspector
    token = inspector.split("token=", 1)[1]
    for path in ("/timeline", "/api/feed", "/entity/people/alice-example", "/static/ui.js", "/timeline?token=wrong" + token):
        status, cookie, text = _request(inspector, path)
        assert status == 403, path
        assert cookie is None and "door code" not in text
    # with the token: a cookie, then the page
    status, cookie, _ = _request(inspector, f"/?token={token}")
    assert status == 303 and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    jar = cookie.split(";", 1)[0]
    assert _request(inspector, "/timeline", headers={"Cookie": jar})[0] == 200
    # a cookie for another inspector (another port) does not open this one
    assert _request(inspector, "/timeline", headers={"Cookie": "memverbs_ui_1=" + token + "x"})[0] == 403
    # another Host (DNS rebinding) or a cross-site POST is refused even with the cookie
    assert _request(inspector, "/timeline", headers={"Cookie": jar, "Host": "evil.example:80"})[0] == 403
    form = "id=1&reason=x&confirmed=yes"
    ctype = {"Content-Type": "application/x-www-form-urlencoded"}
    assert _request(inspector, "/forget", method="POST", body=form, headers={"Cookie": jar, **ctype})[0] == 403
    assert _request(inspector, "/forget", method="POST", body=form,
                    headers={"Cookie": jar, "Origin": "http://evil.example", **ctype})[0] == 403


def test_the_url_token_opens_the_inspector_once(gate_inspector):
    """The printed URL's token is redeemed by its first load: a copy seen since (in `ps` while the
    browser starts, in a browser's history) opens nothing, and the token is not the cookie either."""
    inspector = gate_inspector
    parts = urlsplit(inspector)
    token = inspector.split("token=", 1)[1]
    status, cookie, _ = _request(inspector, f"/?token={token}")
    assert status == 303 and cookie
    jar = cookie.split(";", 1)[0]
    assert token not in jar  # the session is a secret of its own
    for path in (f"/?token={token}", f"/timeline?token={token}", f"/api/feed?token={token}"):
        status, again, text = _request(inspector, path)
        assert (status, again) == (403, None), path
        assert "has been used" in text and "door code" not in text
    # Nor does the token work as the cookie's value.
    assert _request(inspector, "/timeline", headers={"Cookie": f"memverbs_ui_{parts.port}={token}"})[0] == 403
    # The browser that redeemed it keeps its session; the first URL again there only cleans the address bar.
    assert _request(inspector, "/timeline", headers={"Cookie": jar})[0] == 200
    status, again, _ = _request(inspector, f"/?token={token}", headers={"Cookie": jar})
    assert (status, again) == (303, None)


def test_a_second_browser_cannot_reuse_the_first_ones_link(browser, inspector):
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    browser.get(inspector)  # the link again in the browser that redeemed it: the timeline, the token gone
    assert browser.title.startswith("Timeline") and "token=" not in browser.current_url
    opts = Options()
    opts.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        opts.add_argument(flag)
    other = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    try:
        other.get(inspector)  # e.g. the URL copied from `ps` or the first browser's history
        text = other.find_element(By.TAG_NAME, "body").text
        assert "has been used" in text and "door code" not in text
        other.get(base(inspector) + "/timeline")
        assert "door code" not in other.page_source and "needs its token" in other.page_source
    finally:
        other.quit()


# -- views ----------------------------------------------------------------------------------


def test_a_bad_time_filter_is_said_not_ignored(browser, inspector):
    browser.get(base(inspector) + "/timeline?since=the+day+before")
    alert = browser.find_element(By.CSS_SELECTOR, "[role=alert]")
    assert 'since: "the day before" is not a time' in alert.text and "7d" in alert.text
    assert browser.find_elements(By.CSS_SELECTOR, "#feed li.fact")  # the rest of the view still shows


def test_the_timeline_opens_and_marks_private_material(browser, inspector):
    browser.get(base(inspector) + "/timeline")
    assert browser.title.startswith("Timeline")
    private = [li for li in browser.find_elements(By.CSS_SELECTOR, "#feed li.fact") if "door code" in li.text]
    assert private and "private" in private[0].find_element(By.CSS_SELECTOR, ".badge-private").text
    public = [li for li in browser.find_elements(By.CSS_SELECTOR, "#feed li.fact") if "tabs over spaces" in li.text]
    assert public and not public[0].find_elements(By.CSS_SELECTOR, ".badge-private")
    shot(browser, "timeline")


def test_a_fact_remembered_by_another_process_appears_live(browser, inspector, env):
    browser.get(base(inspector) + "/timeline")
    text = f"Bob reviews parser changes {time.time_ns()}"
    assert cli(env, "remember", text, "--entity", "people/bob-example", "--provenance", "grok").returncode == 0
    row = wait_for(browser, lambda d: [li for li in d.find_elements(By.CSS_SELECTOR, "#feed li.fact") if text in li.text],
                   "the new fact never reached the open timeline")
    first = browser.find_element(By.CSS_SELECTOR, "#feed li.fact")
    assert text in first.text and row
    shot(browser, "timeline-live")


def test_forget_from_the_ui_and_recall_agrees(browser, inspector, env):
    text = f"Alice uses vim {time.time_ns()}"
    done = cli(env, "remember", text, "--entity", "people/alice-example", "--provenance", "claude", "--json")
    fact_id = json.loads(done.stdout)["id"]
    browser.get(base(inspector) + "/entity/people/alice-example")
    row = browser.find_element(By.CSS_SELECTOR, f'li[data-fact-id="{fact_id}"]')
    open_actions(row)
    row.find_element(By.NAME, "reason").send_keys("wrong: she uses emacs")
    row.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    question = wait_for(browser, lambda d: d.find_elements(By.ID, "question"), "no confirmation asked")
    assert f"#{fact_id}" in question[0].text
    shot(browser, "forget-confirm")
    browser.find_element(By.ID, "confirm-yes").click()
    flash = wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".flash"), "no outcome shown")
    assert f"fact #{fact_id} forgotten" in flash[0].text
    assert "/entity/people/alice-example" in browser.current_url  # back where it was asked from
    forgotten = browser.find_element(By.CSS_SELECTOR, f'li[data-fact-id="{fact_id}"]')
    assert "forgotten" in forgotten.text and "wrong: she uses emacs" in forgotten.text
    recalled = json.loads(cli(env, "recall", "--entity", "people/alice-example", "--json").stdout)
    assert fact_id not in [f["fact_id"] for f in recalled["facts"]]
    history = json.loads(cli(env, "history", fact_id, "--json").stdout)
    assert not history["active"] and any("emacs" in ev["detail"] for ev in history["events"] if ev["event"] == "expired")
    browser.get(base(inspector) + f"/fact/{fact_id}")
    assert "wrong: she uses emacs" in browser.find_element(By.TAG_NAME, "main").text
    assert browser.find_elements(By.CSS_SELECTOR, f'li[data-fact-id="{fact_id}"] form[action="/restore"]')


def test_restore_from_the_ui_and_recall_agrees(browser, inspector, env):
    text = f"Alice reviews on Fridays {time.time_ns()}"
    fact_id = json.loads(cli(env, "remember", text, "--entity", "people/alice-example", "--provenance", "claude",
                             "--json").stdout)["id"]
    assert cli(env, "forget", fact_id, "--reason", "thought she stopped").returncode == 0
    browser.get(base(inspector) + f"/fact/{fact_id}")
    row = browser.find_element(By.CSS_SELECTOR, f'li[data-fact-id="{fact_id}"]')
    row.find_element(By.CSS_SELECTOR, "form[action='/restore'] input[name=reason]").send_keys("she still does")
    row.find_element(By.CSS_SELECTOR, "form[action='/restore'] button").click()
    question = wait_for(browser, lambda d: d.find_elements(By.ID, "question"), "no confirmation asked")
    assert f"Restore fact #{fact_id}?" in question[0].text
    shot(browser, "restore-confirm")
    confirm(browser)
    flash = wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".flash"), "no outcome shown")
    assert f"fact #{fact_id} restored" in flash[0].text
    assert f"/fact/{fact_id}" in browser.current_url
    trail = browser.find_element(By.CSS_SELECTOR, "ol.trail").text
    assert "thought she stopped" in trail and "she still does" in trail and "memverbs ui" in trail
    shot(browser, "fact-restored")
    recalled = json.loads(cli(env, "recall", "--entity", "people/alice-example", "--json").stdout)
    assert fact_id in [f["fact_id"] for f in recalled["facts"]]
    events = json.loads(cli(env, "history", fact_id, "--json").stdout)["events"]
    assert [e["event"] for e in events] == ["remembered", "expired", "restored"]


def test_a_superseded_or_active_fact_refuses_restore_with_its_reason(browser, inspector, env):
    fact_id = json.loads(cli(env, "remember", f"Alice is active {time.time_ns()}", "--entity", "people/alice-example",
                             "--provenance", "claude", "--json").stdout)["id"]
    # An active fact offers no restore; a forged form is refused with the rule's code, nothing written.
    browser.get(base(inspector) + f"/fact/{fact_id}")
    assert not browser.find_elements(By.CSS_SELECTOR, "form[action='/restore']")
    browser.execute_script(
        "const f = document.createElement('form'); f.method = 'post'; f.action = '/restore';"
        "for (const [k, v] of [['id', arguments[0]], ['reason', 'forged'], ['confirmed', 'yes']]) {"
        "  const i = document.createElement('input'); i.type = 'hidden'; i.name = k; i.value = v; f.appendChild(i); }"
        "document.body.appendChild(f); f.submit();", fact_id)
    error = wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "main .error"), "the refusal is not shown")
    assert "[not_forgotten]" in error[0].text
    events = json.loads(cli(env, "history", fact_id, "--json").stdout)["events"]
    assert [e["event"] for e in events] == ["remembered"]


def test_a_restore_and_a_visibility_change_by_another_process_reach_the_open_timeline(browser, inspector, env):
    text = f"Bob pairs on Tuesdays {time.time_ns()}"
    fact_id = json.loads(cli(env, "remember", text, "--entity", "people/bob-example", "--provenance", "grok",
                             "--json").stdout)["id"]
    assert cli(env, "forget", fact_id, "--reason", "not any more").returncode == 0
    browser.get(base(inspector) + "/timeline")
    row_css = f'#feed li[data-fact-id="{fact_id}"]'
    assert "forgotten" in browser.find_element(By.CSS_SELECTOR, row_css).text
    assert cli(env, "fact-visibility", fact_id, "private", "--reason", "his calendar").returncode == 0
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, f"{row_css}.is-private .badge-private"),
             "the visibility change never reached the open timeline")
    assert cli(env, "restore-fact", fact_id, "--reason", "he still does").returncode == 0
    wait_for(browser, lambda d: "forgotten" not in d.find_element(By.CSS_SELECTOR, row_css).text,
             "the restore never reached the open timeline")
    assert browser.find_element(By.CSS_SELECTOR, "#feed li.fact").get_attribute("data-fact-id") == fact_id  # on top


def test_change_a_facts_visibility_and_see_the_private_marker_change(browser, inspector, env):
    text = f"Alice's new desk is by the window {time.time_ns()}"
    fact_id = json.loads(cli(env, "remember", text, "--entity", "people/alice-example", "--provenance", "claude",
                             "--json").stdout)["id"]
    row_css = f'li[data-fact-id="{fact_id}"]'
    browser.get(base(inspector) + "/entity/people/alice-example")
    assert not browser.find_elements(By.CSS_SELECTOR, f"{row_css} .badge-private")
    # Narrowing asks nothing.
    open_actions(browser.find_element(By.CSS_SELECTOR, row_css))
    browser.find_element(By.CSS_SELECTOR, f"{row_css} button.make-private").click()
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, f"{row_css}.is-private .badge-private"),
             "the fact is not marked private")
    assert f"fact #{fact_id} is private now" in browser.find_element(By.CSS_SELECTOR, ".flash").text
    assert "/entity/people/alice-example" in browser.current_url
    shot(browser, "fact-private")
    recalled = json.loads(cli(env, "recall", "--entity", "people/alice-example", "--json").stdout)
    assert [f["visibility"] for f in recalled["facts"] if f["fact_id"] == fact_id] == ["private"]
    # Widening asks first, saying who will see it.
    open_actions(browser.find_element(By.CSS_SELECTOR, row_css))
    browser.find_element(By.CSS_SELECTOR, f"{row_css} button.make-world").click()
    question = wait_for(browser, lambda d: d.find_elements(By.ID, "question"), "no confirmation asked")
    assert f"Make fact #{fact_id} world?" in question[0].text and "Every MCP caller" in question[0].text
    shot(browser, "fact-widen-confirm")
    confirm(browser)
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, f"{row_css} button.make-private"), "the fact did not widen")
    assert not browser.find_elements(By.CSS_SELECTOR, f"{row_css} .badge-private")
    recalled = json.loads(cli(env, "recall", "--entity", "people/alice-example", "--json").stdout)
    assert [f["visibility"] for f in recalled["facts"] if f["fact_id"] == fact_id] == ["world"]
    events = json.loads(cli(env, "history", fact_id, "--json").stdout)["events"]
    assert [e["detail"].split(":")[0] for e in events if e["event"] == "visibility"] == ["world → private", "private → world"]


def test_the_entity_view_shows_the_card_facts_and_private_marks(browser, inspector):
    browser.get(base(inspector) + "/entity/people/alice-example")
    main = browser.find_element(By.TAG_NAME, "main").text
    assert "Card (as an agent sees it)" in main and "Alice Example" in main
    private = [li for li in browser.find_elements(By.CSS_SELECTOR, "li.fact.is-private") if "door code" in li.text]
    assert private
    assert "references people/bob-example" in main  # the page's wikilink is an edge
    shot(browser, "entity")


def test_entities_are_listed_searchable_and_paged(browser, inspector):
    browser.get(base(inspector) + "/entities")
    slugs = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "tbody td:first-child a")]
    assert "people/alice-example" in slugs and "people/bob-example" in slugs  # bob has facts but no page
    box = browser.find_element(By.NAME, "q")
    box.send_keys("bob")
    box.submit()
    wait_for(browser, lambda d: "q=bob" in d.current_url, "search did not submit")
    slugs = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "tbody td:first-child a")]
    assert slugs == ["people/bob-example"]
    shot(browser, "entities")


def test_the_page_renders_wikilinks_and_privacy_fences(browser, inspector):
    browser.get(base(inspector) + "/page/people/alice-example")
    link = browser.find_element(By.CSS_SELECTOR, "a.wikilink")
    # Bob has facts and no page: the link is unresolved, to what is filed under his name.
    assert link.get_attribute("href").endswith("/entity/people/bob-example") and "unresolved" in link.get_attribute("class")
    assert "no page people/bob-example yet" in link.get_attribute("title")
    fenced = browser.find_element(By.CSS_SELECTOR, ".fence-facts li.private")
    assert "salary" in fenced.text and "private" in fenced.find_element(By.CSS_SELECTOR, ".badge-private").text
    shot(browser, "page")


@pytest.mark.parametrize("harness", ["claude", "plain"])
def test_the_pack_preview_shows_what_the_model_reads_and_the_hooks_output(browser, inspector, env, harness):
    browser.get(base(inspector) + f"/pack?harness={harness}")
    shown = browser.find_element(By.ID, "pack-output").get_attribute("textContent")
    raw = browser.find_element(By.ID, "hook-output").get_attribute("textContent")
    payload = json.dumps({"session_id": f"ui-test-fresh-{harness}", "hook_event_name": "SessionStart", "source": "startup"})
    hook = cli(env, "hook", "session-start", "--harness", harness, "--deadline-ms", "20000", stdin=payload)
    assert hook.returncode == 0
    assert raw and raw == hook.stdout.rstrip("\n")
    # The text the model reads, not escaped JSON: for Claude Code that is the hook's additionalContext.
    model_reads = json.loads(raw)["hookSpecificOutput"]["additionalContext"] if harness == "claude" else raw
    assert shown == model_reads and shown.startswith("<!-- retrieved brain context")
    assert "Alice Example" in shown and "door code" not in shown  # the hook's pack is world-only
    assert "budget:" in browser.find_element(By.TAG_NAME, "main").text
    shot(browser, f"pack-{harness}")


def test_the_pack_preview_chooses_a_project_by_its_working_directory(browser, inspector, env, tmp_path):
    repo = tmp_path / "orbit"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "remote", "add", "origin", "git@github.com:acme/orbit.git"], cwd=repo, check=True)
    assert cli(env, "remember", "Orbit launches on the 3rd", "--provenance", "ui test", cwd=repo).returncode == 0
    browser.get(base(inspector) + "/pack")
    field = browser.find_element(By.NAME, "cwd")
    field.clear()
    field.send_keys(str(repo))
    field.submit()
    wait_for(browser, lambda d: "cwd=" in d.current_url, "the preview did not submit")
    shown = browser.find_element(By.ID, "pack-output").get_attribute("textContent")
    assert "Project: orbit (`projects/orbit`)" in shown and "Orbit launches on the 3rd" in shown
    assert "project projects/orbit" in browser.find_element(By.TAG_NAME, "main").text
    payload = json.dumps({"session_id": "ui-test-orbit", "hook_event_name": "SessionStart", "cwd": str(repo)})
    hook = cli(env, "hook", "session-start", "--harness", "plain", "--deadline-ms", "20000", stdin=payload)
    assert shown == hook.stdout.rstrip("\n")  # the same pack the hook gives a session started there
    shot(browser, "pack-project")


def test_search_shows_evidence_labels(browser, inspector):
    browser.get(base(inspector) + "/search?q=parser")
    labels = [b.text for b in browser.find_elements(By.CSS_SELECTOR, ".badge-evidence")]
    assert labels and all(labels)
    shot(browser, "search")


def test_health_shows_doctor_checks_and_usage_charts(browser, inspector, env):
    from memverbs.server.home import Home
    from memverbs.server.usage import record

    log = Home(Path(env["MEMVERBS_HOME"])).usage_log
    for verb, ok, ms in (("recall", True, 12), ("recall", True, 30), ("remember", False, 5)):
        record(log, brain_id="b", verb=verb, surface="full", remote=False, ok=ok, latency_ms=ms, source_id="default", result=None)
    browser.get(base(inspector) + "/health")
    checks = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "tbody th[scope=row]")]
    assert "brain" in checks and "config" in checks
    charts = {svg.get_attribute("aria-label") for svg in browser.find_elements(By.CSS_SELECTOR, "figure.chart svg")}
    assert "calls per verb: recall 2, remember 1" in charts
    assert "average latency per verb (ms): recall 21, remember 5" in charts
    assert "errors per verb: recall 0, remember 1" in charts
    over_time = browser.find_element(By.CSS_SELECTOR, "#latency-over-time svg").get_attribute("aria-label")
    # Logged just now, so bucketed by hour; each verb's median in its hour.
    assert re.fullmatch(r"median latency per verb per hour \(ms\): recall (\d\d-\d\d \d\dh \d+(, )?)+; "
                        r"remember \d\d-\d\d \d\dh 5", over_time), over_time
    # One hour each: a dot per verb, no line (a line joins only neighbouring buckets with calls).
    assert len(browser.find_elements(By.CSS_SELECTOR, "#latency-over-time circle")) == 2
    assert browser.find_elements(By.CSS_SELECTOR, "#latency-over-time polyline") == []
    shot(browser, "health")


def test_health_charts_each_verbs_latency_over_days(browser, inspector, env):
    from memverbs.server.home import Home

    log = Home(Path(env["MEMVERBS_HOME"])).usage_log
    log.parent.mkdir(parents=True, exist_ok=True)  # run alone, no call has been logged yet
    lines = [
        {"ts": f"2026-10-{day:02d}T09:00:00.000Z", "verb": verb, "ok": True, "latency_ms": ms, "surface": "full"}
        for day in range(1, 15) for verb, ms in (("recall", 20 + day), ("entity", 5 + day % 4), ("delta", 3))
    ]
    with log.open("a", encoding="utf-8") as out:
        out.writelines(json.dumps(line) + "\n" for line in lines)
    browser.get(base(inspector) + "/health")
    figure = browser.find_element(By.ID, "latency-over-time")
    label = figure.find_element(By.TAG_NAME, "svg").get_attribute("aria-label")
    assert label.startswith("median latency per verb per day (ms): delta 10-01 3,")
    assert "recall 10-01 21, 10-02 22" in label
    lines = [p.find_element(By.TAG_NAME, "title").get_attribute("textContent") for p in figure.find_elements(By.TAG_NAME, "polyline")]
    assert sorted(lines) == ["delta", "entity", "recall"]  # 14 days in a row each; remember, logged only today, is a dot
    browser.execute_script("arguments[0].scrollIntoView()", figure)
    figure.screenshot(str(ARTIFACTS / "health-latency-over-time.png"))


def test_edit_a_page_and_change_its_visibility(browser, inspector, env):
    slug = "projects/ui-edit-example"
    assert cli(env, "put-page", slug, "-", stdin="# UI edit example\n\nFirst draft.\n").returncode == 0
    browser.get(base(inspector) + f"/edit/{slug}")
    area = browser.find_element(By.ID, "source")
    assert "First draft." in area.get_attribute("value")
    area.clear()
    area.send_keys("# UI edit example\n\nSecond draft, edited in the inspector.\n")
    browser.find_element(By.CSS_SELECTOR, ".editor button[type=submit]").click()
    wait_for(browser, lambda d: "Second draft" in d.find_element(By.TAG_NAME, "article").text, "the edit did not show")
    raw = cli(env, "get-page", slug, "--raw").stdout
    assert "Second draft, edited in the inspector." in raw
    # make it private: confirmation, then no MCP caller reads it
    browser.find_element(By.XPATH, "//button[text()='Make private']").click()
    confirm(browser)
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".page-meta .badge-private"), "the page is not marked private")
    listed = json.loads(cli(env, "list-pages", "--visibility", "private", "--format", "json").stdout)
    assert slug in [p["slug"] for p in listed]
    shot(browser, "page-private")


def test_move_facts_from_the_ui(browser, inspector, env):
    assert cli(env, "remember", "Carol owns the release", "--entity", "carol", "--provenance", "claude").returncode == 0
    browser.get(base(inspector) + "/entity/carol")
    form = browser.find_element(By.CSS_SELECTOR, "form[action='/move']")
    form.find_element(By.NAME, "to").send_keys("people/carol-example")
    form.find_element(By.NAME, "reason").send_keys("filed under a bare name")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    confirm(browser)
    wait_for(browser, lambda d: "moved 1 fact from carol" in d.find_element(By.TAG_NAME, "main").text, "no move reported")
    recalled = json.loads(cli(env, "recall", "--entity", "people/carol-example", "--json").stdout)
    assert [f["fact"] for f in recalled["facts"]] == ["Carol owns the release"]


def test_phone_width_keeps_the_navigation_usable(browser, inspector):
    browser.set_window_size(390, 844)
    try:
        browser.get(base(inspector) + "/timeline")
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= 390 + 1  # nothing forces a sideways scroll
        nav = browser.find_elements(By.CSS_SELECTOR, "header nav a")
        assert len(nav) == 7 and all(a.is_displayed() for a in nav)
        shot(browser, "timeline-phone")
    finally:
        browser.set_window_size(1200, 1000)


UNLABELLED = """
return [...document.querySelectorAll('input:not([type=hidden]), select, textarea, button')]
  .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.textContent.trim())
  .map(el => el.outerHTML);
"""


def test_every_control_has_a_label_and_focus_reaches_it(browser, inspector):
    for view in ("/timeline", "/entities", "/entity/people/alice-example", "/page/people/alice-example",
                 "/edit/people/alice-example", "/pack", "/search?q=alice", "/access", "/health"):
        browser.get(base(inspector) + view)
        assert browser.execute_script(UNLABELLED) == [], view
    # the keyboard reaches the first control after the skip link and the navigation
    browser.get(base(inspector) + "/timeline")
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
    assert browser.switch_to.active_element.text == "Skip to content"
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    assert browser.current_url.endswith("#main")
    browser.get(base(inspector) + "/entities")  # a search view starts in its search box
    assert browser.switch_to.active_element.get_attribute("name") == "q"


# -- the inspector as a product: live lane, ordering, 404s, the card, keyboard, themes --------------


def test_a_fresh_load_announces_nothing_new(browser, inspector):
    """The live lane polls from the newest change shown: reading that change again is not news."""
    browser.get(base(inspector) + "/timeline")
    time.sleep(2.5)  # several polls
    status = browser.find_element(By.ID, "live-status").text
    assert "new change" not in status, status
    assert browser.find_elements(By.CSS_SELECTOR, "#feed li.fresh") == []


def test_the_timeline_shows_the_change_that_orders_each_row(browser, inspector, env):
    """Ordered by each fact's latest change, each row shows that change and its moment: a fact
    forgotten after a newer one was remembered sits above it, saying "forgotten" and when."""
    older = json.loads(cli(env, "remember", f"Older fact {time.time_ns()}", "--entity", "topics/ordering-example",
                           "--provenance", "claude", "--json").stdout)["id"]
    newer = json.loads(cli(env, "remember", f"Newer fact {time.time_ns()}", "--entity", "topics/ordering-example",
                           "--provenance", "claude", "--json").stdout)["id"]
    assert cli(env, "forget", older, "--reason", "ordering test").returncode == 0
    expired = next(ev["at"] for ev in json.loads(cli(env, "history", older, "--json").stdout)["events"] if ev["event"] == "expired")
    browser.get(base(inspector) + "/timeline?entity=topics/ordering-example")
    rows = browser.find_elements(By.CSS_SELECTOR, "#feed li.fact")
    assert [r.get_attribute("data-fact-id") for r in rows] == [older, newer]
    assert rows[0].find_element(By.CSS_SELECTOR, ".change").text == "forgotten"
    assert rows[0].find_element(By.CSS_SELECTOR, "time").get_attribute("datetime") == expired
    assert rows[1].find_element(By.CSS_SELECTOR, ".change").text == "remembered"


def _session(url: str) -> dict:
    token = url.split("token=", 1)[1]
    status, cookie, _ = _request(url, f"/?token={token}")
    assert status == 303
    return {"Cookie": cookie.split(";", 1)[0]}


def test_missing_things_answer_404(gate_inspector, env):
    jar = _session(gate_inspector)
    assert cli(env, "put-page", "topics/gone-example", "-", stdin="# Gone\n\nsoon\n").returncode == 0
    assert cli(env, "delete-page", "topics/gone-example").returncode == 0
    for path, said in (("/entity/nobody/here-example", "Nothing is filed under nobody/here-example"),
                       ("/page/topics/gone-example", "was deleted"),
                       ("/entity/topics/gone-example", "Nothing is filed under topics/gone-example"),
                       ("/fact/987654", "no such fact"),
                       ("/no-such-view", "no such view")):
        status, _, text = _request(gate_inspector, path, headers=jar)
        assert status == 404, path
        assert said in text, path
    # A wikilink to a page never written leads to the entity view, which says 404 when nothing is there.
    status, _, _ = _request(gate_inspector, "/page/nobody/here-example", headers=jar)
    assert status == 303
    assert _request(gate_inspector, "/entity/people/alice-example", headers=jar)[0] == 200
    assert _request(gate_inspector, "/entity/people/bob-example", headers=jar)[0] == 200  # facts, no page


def test_a_page_in_another_script_is_served_at_its_url_encoded_path(gate_inspector, env):
    jar = _session(gate_inspector)
    assert cli(env, "put-page", "メモ/日本", "-", stdin="# 日本\n\nSee [[メモ/東京]] and [x](メモ/東京.md).\n").returncode == 0
    assert cli(env, "put-page", "メモ/東京", "-", stdin="# 東京\n").returncode == 0
    status, _, text = _request(gate_inspector, "/page/" + quote("メモ/日本", safe="/"), headers=jar)
    assert status == 200 and "日本" in text
    assert text.count('href="/page/' + quote("メモ/東京", safe="/") + '"') == 2
    assert _request(gate_inspector, "/entity/" + quote("メモ/日本", safe="/"), headers=jar)[0] == 200


def test_the_entity_view_draws_the_card_once_with_aliases_as_written(browser, inspector, env):
    page = ("---\ntype: person\naliases: [DanaK, \"Dana Kowalski\"]\n---\n# Dana Example\n\n"
            "Leads [[projects/billing-example]].\n\n- [ ] write the RFC\n- [x] ship v1\n")
    assert cli(env, "put-page", "people/dana-example", "-", stdin=page).returncode == 0
    browser.get(base(inspector) + "/entity/people/dana-example")
    card = browser.find_element(By.CSS_SELECTOR, "section.card")
    assert [c.text for c in card.find_elements(By.CSS_SELECTOR, ".chip")] == ["Dana Kowalski", "DanaK"]
    main = browser.find_element(By.TAG_NAME, "main").text
    assert main.count("references projects/billing-example") == 1  # the edge, once
    browser.get(base(inspector) + "/entity/people/alice-example")
    assert browser.find_element(By.TAG_NAME, "main").text.count("references people/bob-example") == 1
    shot(browser, "entity-card")


def test_tasks_render_as_checkboxes_and_a_list_title_as_its_items(browser, inspector, env):
    page = "---\ntitle: [closed]\n---\nStatus.\n\n- [ ] write the RFC\n- [x] ship v1\n"
    assert cli(env, "put-page", "topics/status-example", "-", stdin=page).returncode == 0
    browser.get(base(inspector) + "/page/topics/status-example")
    assert browser.find_element(By.TAG_NAME, "h1").text == "closed"
    tasks = browser.find_elements(By.CSS_SELECTOR, "article li.task")
    assert [t.find_element(By.CSS_SELECTOR, ".task-text").text for t in tasks] == ["write the RFC", "ship v1"]
    assert [t.get_attribute("class") for t in tasks] == ["task", "task task-done"]
    assert "[ ]" not in browser.find_element(By.TAG_NAME, "article").text
    assert [t.get_attribute("textContent") for t in browser.find_elements(By.CSS_SELECTOR, "article li.task .sr")] == ["to do:", "done:"]


def test_search_shows_snippets_with_the_query_marked(browser, inspector):
    browser.get(base(inspector) + "/search?q=parser")
    hit = next(li for li in browser.find_elements(By.CSS_SELECTOR, "li.hit") if "people/alice-example" in li.text)
    snippet = hit.find_element(By.CSS_SELECTOR, ".snippet")
    assert "Works with" in snippet.text and [m.text for m in snippet.find_elements(By.TAG_NAME, "mark")] == ["parser"]


def test_the_keyboard_moves_searches_and_goes(browser, inspector, env):
    for name in ("carol", "dave"):  # rows to move between, whichever tests ran before
        assert cli(env, "remember", f"{name} reviews the parser", "--entity", f"people/{name}-kb-example",
                   "--provenance", "claude").returncode == 0

    def press(*keys: str) -> None:
        for key in keys:
            ActionChains(browser).send_keys(key).perform()

    browser.get(base(inspector) + "/entities")
    browser.find_element(By.TAG_NAME, "h1").click()  # out of the search box the view starts in
    press("j", "j")
    rows = browser.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert "kb-current" in rows[1].get_attribute("class")
    assert browser.switch_to.active_element == rows[1].find_element(By.CSS_SELECTOR, "a.primary")
    press("k")
    assert "kb-current" in rows[0].get_attribute("class")
    press("o")
    wait_for(browser, lambda d: "/entity/" in d.current_url, "o did not open the row")
    press("/")
    wait_for(browser, lambda d: d.current_url.endswith("/search"), "/ did not go to search")
    assert browser.switch_to.active_element.get_attribute("name") == "q"
    browser.find_element(By.TAG_NAME, "h1").click()
    press("?")
    assert browser.find_element(By.ID, "keys").get_attribute("open") is not None
    assert "next / previous row" in browser.find_element(By.ID, "keys").text
    shot(browser, "keyboard-help")
    press(Keys.ESCAPE)
    press("g", "h")
    wait_for(browser, lambda d: d.current_url.endswith("/health"), "g h did not go to health")


def _background(browser) -> str:
    return browser.execute_script("return getComputedStyle(document.body).backgroundColor")


LIGHT_BG, DARK_BG = "rgb(247, 247, 245)", "rgb(18, 19, 22)"


def test_the_theme_follows_the_system_and_the_toggle_overrides_it(browser, inspector):
    browser.get(base(inspector) + "/timeline")
    browser.execute_script("localStorage.removeItem('memverbs-theme')")
    try:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        browser.get(base(inspector) + "/timeline")
        assert _background(browser) == DARK_BG
        toggle = browser.find_element(By.ID, "theme-toggle")
        assert toggle.get_attribute("aria-label") == "Switch to the light theme"
        toggle.click()
        assert _background(browser) == LIGHT_BG
        browser.get(base(inspector) + "/entities")  # remembered
        assert _background(browser) == LIGHT_BG
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "light"}]})
        browser.find_element(By.TAG_NAME, "h1").click()
        ActionChains(browser).send_keys("t").perform()
        assert _background(browser) == DARK_BG
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        browser.execute_script("localStorage.removeItem('memverbs-theme')")


GALLERY = os.environ.get("MEMVERBS_UI_GALLERY")  # a directory (docs/ui) to keep the screenshots in

MAYA = """---
type: person
aliases: [Maya, "M. Chen"]
---
# Maya Chen

Staff engineer on [[projects/atlas]]; reviews every schema change. Pairs with [[people/sam-ortiz]].

## Working with Maya
- Prefers written proposals over meetings
- Reviews asynchronously, usually within a day

## This week
- [x] Sign off the billing schema
- [ ] Review the rollout plan for **Atlas**

<!-- facts -->
- [private] Her 1:1 is moving to Thursdays
- Owns the on-call rota for billing
<!-- /facts -->

## Timeline
- 2026-10-02: Joined the Atlas team
- 2026-11-18: Led the billing schema review
"""

ATLAS = """---
type: project
aliases: [Atlas, billing rewrite]
---
# Atlas: the billing rewrite

Moves invoicing off the monolith. Owner: [[people/maya-chen]]; the plan is in [[Billing sync|the sync notes]].

![[atlas architecture.png]]

## Decisions
1. Ship behind the `billing_v2` flag
2. Postgres only; no second datastore
"""

# A synced vault as people keep one: a person under a folder, meeting notes that link her by path and
# alias, embed a diagram and name a page nobody wrote yet, and a note in another script.
VAULT = {
    "People/Dana Smith.md": "---\n# people I work with\naliases: [Dana, \"D. Smith\"]\nupdated: 2026-11-30T10:15:00\n---\n"
                            "# Dana Smith\n\nRuns invoicing. Works with [[people/maya-chen|Maya]].\n",
    "Billing sync.md": "# Billing sync\n\nWith [[People/Dana Smith|Dana]] and [[Maya]]; see ![[arch diagram.png]] and "
                       "[the spec](specs/billing%20spec.pdf). Next: [[Nobody Yet]] writes the runbook; [[日本]] has the Tokyo notes.\n\n"
                       "## Timeline\n- 2026-11-20: Kick-off with [[People/Dana Smith|Dana]]\n",
    "日本.md": "# 日本\n\nTokyo office notes, for [[Billing sync]].\n",
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A brain that looks like a few weeks of real use, for the screenshots: people, a project,
    facts of every kind, one forgotten, one private, one made private later, and a usage log."""
    from memverbs.server.brain.fact_edits import local_actor
    from memverbs.server.home import Home
    from memverbs.server.runtime import Runtime
    from memverbs.server.timeparse import now_ms

    root = tmp_path_factory.mktemp("demo") / "home"
    init_home(root)
    runtime = Runtime(Home(root))
    try:
        call = runtime.local_dispatcher().call
        for slug, page in (("people/maya-chen", MAYA), ("projects/atlas", ATLAS)):
            assert not call("put_page", {"slug": slug, "content": page}).is_error
        # An earlier draft of Atlas, replaced: the page's history has a version to show.
        assert not call("put_page", {"slug": "projects/atlas", "content": ATLAS.replace("Postgres only", "Postgres and Redis")}).is_error
        assert not call("put_page", {"slug": "projects/atlas", "content": ATLAS}).is_error
        ids = {}
        for key, fact, kind, entity, who, vis in (
            ("flag", "Atlas ships behind the billing_v2 flag", "commitment", "projects/atlas", "claude", "world"),
            ("leave", "Maya is on leave 10-14 November", "event", "people/maya-chen", "claude", "world"),
            ("async", "Maya prefers async reviews over meetings", "preference", "people/maya-chen", "codex", "world"),
            ("freeze", "Deploys freeze on Fridays after 15:00", "fact", "projects/atlas", "claude", "world"),
            ("secret", "The staging database password rotates monthly", "fact", "projects/atlas", "codex", "private"),
            ("sam", "Sam owns the invoice PDF renderer", "fact", "people/sam-ortiz", "grok", "world"),
            ("pg", "Postgres 16 is the only datastore for Atlas", "belief", "projects/atlas", "claude", "world"),
            ("tz", "Maya works from Lisbon (UTC+0)", "fact", "people/maya-chen", "opencode", "world"),
        ):
            body = call("remember", {"fact": fact, "kind": kind, "entity": entity, "provenance": who, "visibility": vis}).body
            ids[key] = int(body["id"])
        assert not call("forget", {"id": str(ids["leave"]), "reason": "the dates moved to December"}).is_error
        runtime.brain().set_fact_visibility(runtime.source, ids["tz"], "private", widen=False, reason="personal detail",
                                            actor=local_actor("memverbs ui"), now=now_ms())
    finally:
        runtime.close()
    log = Home(root).usage_log
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8") as out:
        for day in range(1, 15):
            for verb, base_ms, calls in (("recall", 18, 6), ("entity", 6, 3), ("remember", 9, 2), ("context_pack", 25, 1)):
                for n in range(calls + day % 3):
                    ms = base_ms + (day * 7 + n * 5) % 11
                    out.write(json.dumps({"ts": f"2026-11-{day:02d}T{9 + n:02d}:00:00.000Z", "verb": verb, "ok": (day + n) % 17 != 0,
                                          "latency_ms": ms, "surface": "full"}) + "\n")
    e = dict(os.environ)
    e["MEMVERBS_HOME"] = str(root)
    for var in ("MEMVERBS_SOURCE", "MEMVERBS_MCP_SURFACE", "MEMVERBS_MCP_FORCE_SURFACE", "NO_COLOR"):
        e.pop(var, None)
    # A synced note an agent and its user both changed: an open conflict.
    notes = root.parent / "notes"
    notes.mkdir()
    (notes / "Rollout.md").write_text("# Rollout\n\n- Canary on Monday\n- Everyone by Friday\n")
    for rel, text in VAULT.items():
        (notes / rel).parent.mkdir(parents=True, exist_ok=True)
        (notes / rel).write_text(text)
    (notes / "arch diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    assert cli(e, "put-page", "topics/old-plan", "-", stdin="# Old plan\n\nReplaced by [[projects/atlas]].\n").returncode == 0
    assert cli(e, "delete-page", "topics/old-plan").returncode == 0
    assert cli(e, "sync", str(notes), "--prefix", "notes").returncode == 0
    assert cli(e, "put-page", "notes/rollout", "-", stdin="# Rollout\n\n- Canary on Tuesday\n- Everyone by Friday\n").returncode == 0
    (notes / "Rollout.md").write_text("# Rollout\n\n- Canary on Monday, 10% of traffic\n- Everyone by Friday\n")
    assert cli(e, "sync", str(notes), "--prefix", "notes").returncode == 0
    proc, url = _start_inspector(e)
    yield {"url": url, "ids": ids}
    proc.terminate()
    proc.wait(timeout=10)


def test_every_view_in_both_themes_and_at_phone_width(browser, demo):
    """Every view, light and dark, desktop and phone: nothing scrolls sideways, the theme holds,
    and a screenshot of each (kept in docs/ui with MEMVERBS_UI_GALLERY=docs/ui)."""
    browser.get(demo["url"])  # this inspector's own session
    home = base(demo["url"])
    fact_id = demo["ids"]["async"]
    views = {
        "timeline": "/timeline", "entities": "/entities", "entity": "/entity/people/maya-chen",
        "page": "/page/people/maya-chen", "edit": "/edit/projects/atlas", "fact": f"/fact/{demo['ids']['tz']}",
        "pack": "/pack", "search": "/search?q=maya+reviews", "health": "/health", "access": "/access",
        "history": "/history/projects/atlas?v=2", "conflicts": "/conflicts", "conflict": "/conflict/1",
        "not-found": "/entity/people/nobody-example", "confirm": None,
    }
    out = Path(GALLERY) if GALLERY else ARTIFACTS / "gallery"
    out.mkdir(parents=True, exist_ok=True)
    try:
        for theme in ("light", "dark"):
            browser.get(home + "/timeline")
            browser.execute_script("localStorage.setItem('memverbs-theme', arguments[0])", theme)
            for device, (width, height) in (("desktop", (1280, 860)), ("phone", (390, 844))):
                browser.set_window_size(width, height)
                for name, path in views.items():
                    if path is None:  # the confirmation an action asks first
                        browser.get(home + "/entity/people/maya-chen")
                        browser.execute_script(
                            "const f = document.createElement('form'); f.method = 'post'; f.action = '/forget';"
                            "for (const [k, v] of [['id', arguments[0]], ['reason', 'she changed her mind']]) {"
                            "  const i = document.createElement('input'); i.type = 'hidden'; i.name = k; i.value = v; f.appendChild(i); }"
                            "document.body.appendChild(f); f.submit();", fact_id)
                        wait_for(browser, lambda d: d.find_elements(By.ID, "question"), "no confirmation asked")
                    else:
                        browser.get(home + path)
                    assert _background(browser) == (LIGHT_BG if theme == "light" else DARK_BG), (name, theme)
                    inner = browser.execute_script("return window.innerWidth")
                    assert browser.execute_script("return document.documentElement.scrollWidth") <= inner, (name, device)
                    browser.save_screenshot(str(out / f"{name}-{theme}-{device}.png"))
    finally:
        browser.set_window_size(1200, 1000)
        browser.execute_script("localStorage.removeItem('memverbs-theme')")


def test_the_timeline_is_paged_in_order(browser, inspector, env):
    from memverbs.server.home import Home
    from memverbs.server.runtime import Runtime

    runtime = Runtime(Home(Path(env["MEMVERBS_HOME"])))
    try:
        dispatcher = runtime.local_dispatcher()
        for i in range(61):
            outcome = dispatcher.call("remember", {"fact": f"paging fact {i}", "entity": "topics/paging-example", "provenance": "t"})
            assert not outcome.is_error
    finally:
        runtime.close()
    browser.get(base(inspector) + "/timeline?entity=topics/paging-example")
    seen: list[int] = []
    pages = 0
    while True:
        pages += 1
        ids = [int(li.get_attribute("data-fact-id")) for li in browser.find_elements(By.CSS_SELECTOR, "#feed li.fact")]
        assert 0 < len(ids) <= 50
        seen += ids
        older = browser.find_elements(By.CSS_SELECTOR, "a[rel=next]")
        if not older:
            break
        older[0].click()
        wait_for(browser, lambda d: "before=" in d.current_url, "the older page did not open")
    assert pages == 2 and len(seen) == 61 and seen == sorted(seen, reverse=True)  # each fact once, newest first
    assert browser.find_elements(By.CSS_SELECTOR, "a[rel=prev]") and "older changes" in browser.find_element(By.ID, "live-status").text


# -- page history and sync conflicts ------------------------------------------------------------


def test_a_pages_history_lists_versions_with_a_diff_and_restores_one(browser, inspector, env):
    slug = "projects/history-example"
    texts = [f"# History example\n\nDraft {n}: {word}.\n" for n, word in ((1, "apples"), (2, "pears"), (3, "plums"))]
    for text in texts:
        assert cli(env, "put-page", slug, "-", stdin=text).returncode == 0
    browser.get(base(inspector) + f"/page/{slug}")
    browser.find_element(By.LINK_TEXT, "History").click()
    wait_for(browser, lambda d: d.current_url.endswith(f"/history/{slug}"), "the history did not open")
    rows = browser.find_elements(By.CSS_SELECTOR, "table.history tbody tr")
    assert [r.find_element(By.CSS_SELECTOR, "a.primary").text for r in rows] == ["version 2", "version 1"]
    for row, text in zip(rows, (texts[1], texts[0]), strict=True):  # who replaced it, and its size
        assert row.find_element(By.CSS_SELECTOR, "td[data-label=by]").text == "local", row.text
        assert row.find_element(By.CSS_SELECTOR, "td[data-label=bytes]").text == str(len(text.encode())), row.text
    rows[1].find_element(By.CSS_SELECTOR, "a.primary").click()
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "pre.diff"), "no diff shown")
    assert [s.text for s in browser.find_elements(By.CSS_SELECTOR, "pre.diff .d-del")][-1] == "-Draft 3: plums."
    assert [s.text for s in browser.find_elements(By.CSS_SELECTOR, "pre.diff .d-add")][-1] == "+Draft 1: apples."
    shot(browser, "history-version")
    browser.find_element(By.XPATH, "//button[text()='Restore version 1']").click()
    confirm(browser)
    wait_for(browser, lambda d: "restored projects/history-example to version 1" in d.find_element(By.TAG_NAME, "main").text,
             "no restore reported")
    assert cli(env, "get-page", slug, "--raw").stdout == texts[0]
    listed = json.loads(cli(env, "page-history", slug, "--json").stdout)["versions"]
    assert [v["version"] for v in listed] == [3, 2, 1]  # the text the restore replaced is kept in turn


def test_history_answers_404_for_what_is_not_there(gate_inspector, env):
    jar = _session(gate_inspector)
    assert cli(env, "put-page", "projects/one-version-example", "-", stdin="# One\n").returncode == 0
    for path in ("/history/nobody/here-example", "/history/projects/one-version-example?v=7",
                 "/history/projects/one-version-example?v=x", "/conflict/424242", "/conflict/abc"):
        status, _, text = _request(gate_inspector, path, headers=jar)
        assert status == 404, path
    status, _, text = _request(gate_inspector, "/history/projects/one-version-example", headers=jar)
    assert status == 200 and "No earlier versions" in text


def _conflict(env, tmp_path, name: str) -> tuple:
    """A synced note both sides changed: the file won, the brain's version is kept as a conflict."""
    root = tmp_path / name
    root.mkdir()
    note = root / "plan.md"
    note.write_text("# Plan\n\nShip in May.\n")
    assert cli(env, "sync", str(root), "--prefix", name).returncode == 0
    assert cli(env, "put-page", f"{name}/plan", "-", stdin="# Plan\n\nShip in June, says the agent.\n").returncode == 0
    note.write_text("# Plan\n\nShip in May, says the user.\n")
    assert cli(env, "sync", str(root), "--prefix", name).returncode == 0
    [c] = [c for f in json.loads(cli(env, "sync", "--status", "--json").stdout)["folders"] for c in f["conflicts"]
           if c["slug"] == f"{name}/plan"]
    return note, c["id"]


def test_conflicts_are_listed_with_both_sides_and_settled_as_sync_resolve_does(browser, inspector, env, tmp_path):
    note, cid = _conflict(env, tmp_path, "team")
    browser.get(base(inspector) + "/timeline")
    browser.find_element(By.TAG_NAME, "h1").click()
    for key in ("g", "c"):  # the view's key
        ActionChains(browser).send_keys(key).perform()
    wait_for(browser, lambda d: d.current_url.endswith("/conflicts"), "g c did not go to the conflicts")
    row = next(r for r in browser.find_elements(By.CSS_SELECTOR, "table.conflicts tbody tr") if "team/plan" in r.text)
    assert "plan.md" in row.text
    row.find_element(By.CSS_SELECTOR, "a.primary").click()
    wait_for(browser, lambda d: d.current_url.endswith(f"/conflict/{cid}"), "the conflict did not open")
    diff = browser.find_element(By.CSS_SELECTOR, "pre.diff")
    assert [s.text for s in diff.find_elements(By.CSS_SELECTOR, ".d-del")][-1] == "-Ship in June, says the agent."
    assert [s.text for s in diff.find_elements(By.CSS_SELECTOR, ".d-add")][-1] == "+Ship in May, says the user."
    shot(browser, "conflict")
    browser.find_element(By.XPATH, "//button[text()=\"Keep the brain's\"]").click()
    confirm(browser)
    wait_for(browser, lambda d: f"settled #{cid}" in d.find_element(By.TAG_NAME, "main").text, "no settle reported")
    assert note.read_text() == "# Plan\n\nShip in June, says the agent.\n"  # into the file too
    assert "says the agent" in cli(env, "get-page", "team/plan", "--raw").stdout
    assert cid not in [c["id"] for f in json.loads(cli(env, "sync", "--status", "--json").stdout)["folders"] for c in f["conflicts"]]
    browser.get(base(inspector) + f"/conflict/{cid}")
    assert "no open conflict" in browser.find_element(By.TAG_NAME, "main").text


def test_keeping_both_from_the_inspector_writes_the_markers(browser, inspector, env, tmp_path):
    note, cid = _conflict(env, tmp_path, "both")
    browser.get(base(inspector) + f"/conflict/{cid}")
    browser.find_element(By.XPATH, "//button[text()='Keep both']").click()
    confirm(browser)
    wait_for(browser, lambda d: f"settled #{cid}" in d.find_element(By.TAG_NAME, "main").text, "no settle reported")
    text = note.read_text()
    assert "<<<<<<< file\nShip in May, says the user.\n" in text and "Ship in June, says the agent.\n>>>>>>> brain\n" in text


def test_a_settle_that_cannot_be_done_is_refused_with_its_reason(gate_inspector, env):
    jar = _session(gate_inspector)
    origin = base(gate_inspector)
    status, _, text = _request(gate_inspector, "/resolve", method="POST", body="id=999999&keep=brain&confirmed=yes",
                               headers={**jar, "Origin": origin, "Content-Type": "application/x-www-form-urlencoded"})
    assert status == 422 and "no open conflict" in text
    # Without the inspector's own origin, nothing is settled (as every inspector write).
    status, _, _ = _request(gate_inspector, "/resolve", method="POST", body="id=1&keep=brain&confirmed=yes",
                            headers={**jar, "Content-Type": "application/x-www-form-urlencoded"})
    assert status == 403


# -- every link goes somewhere; every view says what to do next ------------------------------------

# The views a person reaches from the top navigation and a search; the crawl finds the rest.
START = ("/timeline", "/entities", "/pack", "/search?q=dana", "/search?q=billing", "/conflicts", "/access", "/health")
_STATUSES = """
const done = arguments[arguments.length - 1];
Promise.all(arguments[0].map(u => fetch(u, {credentials: 'same-origin'}).then(r => r.status, () => 0))).then(done);
"""


def crawl(browser, home: str, limit: int = 400) -> tuple[dict[str, int], dict[str, str], int]:
    """Open every view reachable from START by its links (GET, this inspector only), and ask the browser
    for the status of every link on each: (status by link, the page each was found on, views opened)."""
    browser.set_script_timeout(120)
    status: dict[str, int] = {}
    found_on: dict[str, str] = {}
    queue = [home + path for path in START]
    seen = set(queue)
    opened = 0
    while queue and opened < limit:
        url = queue.pop(0)
        browser.get(url)
        opened += 1
        assert "Internal error" not in browser.title, url
        text = browser.find_element(By.TAG_NAME, "body").text
        assert "!arch diagram" not in text and "Traceback" not in text, url
        hrefs = browser.execute_script("return [...document.querySelectorAll('a[href]')].map(a => a.href)")
        own = sorted({h.split("#", 1)[0] for h in hrefs if h.startswith(home + "/")} - set(status))
        for h, code in zip(own, browser.execute_async_script(_STATUSES, own), strict=True):
            status[h] = code
            found_on[h] = url
            path = urlsplit(h).path
            if code == 200 and not path.startswith(("/static/", "/api/")) and h not in seen:
                seen.add(h)
                queue.append(h)
    return status, found_on, opened


def test_every_link_on_every_view_of_a_lived_in_brain_leads_somewhere(browser, demo):
    """A brain with people, projects, a synced vault (links by path, title and alias, an embed, a page no
    one wrote yet, a note in another script), a deleted page and a conflict: every same-origin link of
    every view answers, and each goes where the brain resolved it."""
    browser.get(demo["url"])  # this inspector's own session
    home = base(demo["url"])
    status, found_on, opened = crawl(browser, home)
    dead = {h: (code, found_on[h]) for h, code in status.items() if code != 200}
    assert not dead, dead
    assert opened >= 45 and len(status) >= 45, (opened, len(status))  # the views of every entity, page, fact and version
    # The meeting notes' links: Dana by path and alias, the page nobody wrote yet, the embed.
    browser.get(home + "/page/notes/billing-sync")
    links = {a.text: a for a in browser.find_elements(By.CSS_SELECTOR, "article a.wikilink")}
    assert links["Dana"].get_attribute("href") == home + "/page/notes/people/dana-smith"
    assert links["Maya"].get_attribute("href") == home + "/page/people/maya-chen"
    assert "unresolved" in links["Nobody Yet"].get_attribute("class")
    assert links["Nobody Yet"].get_attribute("href") == home + "/entity/nobody-yet"
    assert links["日本"].get_attribute("href") == home + "/page/" + quote("notes/日本", safe="/")
    attachments = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "article .attachment")]
    assert attachments == ["📎 arch diagram.png", "📎 the spec"]
    # …and where a link that names no page leads says what links there, rather than that nothing does.
    browser.get(home + "/entity/nobody-yet")
    assert "notes/billing-sync" in browser.find_element(By.TAG_NAME, "main").text
    # The favicon is the inspector's own.
    assert status.get(home + "/static/favicon.svg") is None or status[home + "/static/favicon.svg"] == 200
    icon = browser.find_element(By.CSS_SELECTOR, "link[rel=icon]").get_attribute("href")
    assert browser.execute_async_script(_STATUSES, [icon, home + "/favicon.ico"]) == [200, 200]


def test_an_empty_brain_says_what_to_do_next_in_every_view(browser, tmp_path):
    root = tmp_path / "empty-home"
    init_home(root)
    e = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
    e["MEMVERBS_HOME"] = str(root)
    proc, url = _start_inspector(e)
    try:
        browser.get(url)
        home = base(url)
        for path in ("/timeline", "/entities", "/pack"):
            browser.get(home + path)
            empty = browser.find_element(By.CSS_SELECTOR, "main .empty")
            assert "memverbs install claude" in empty.text and "memverbs remember" in empty.text, path
        browser.get(home + "/entities")
        assert "0–0" not in browser.find_element(By.TAG_NAME, "main").text
        browser.get(home + "/pack")
        main = browser.find_element(By.TAG_NAME, "main").text
        assert "standing entities: none (asked for too, nothing filed under it yet: people/me)" in main
        assert not browser.find_elements(By.CSS_SELECTOR, "a[href='/entity/people/me']")
        assert browser.find_element(By.ID, "pack-output").tag_name == "div"  # no empty box
        for path, said in (("/search?q=anything", "no pages yet"), ("/health", "memverbs install claude"),
                           ("/conflicts", "No open conflicts"), ("/access", "No OAuth clients")):
            browser.get(home + path)
            assert said in browser.find_element(By.TAG_NAME, "main").text, path
        status, _, _ = crawl(browser, home, limit=60)
        assert not {h: c for h, c in status.items() if c != 200}
        out = Path(GALLERY) if GALLERY else ARTIFACTS / "gallery"
        out.mkdir(parents=True, exist_ok=True)
        for theme in ("light", "dark"):  # the gallery's `empty` view: a new brain's timeline
            browser.execute_script("localStorage.setItem('memverbs-theme', arguments[0])", theme)
            for device, (width, height) in (("desktop", (1280, 860)), ("phone", (390, 844))):
                browser.set_window_size(width, height)
                browser.get(home + "/timeline")
                assert browser.execute_script("return document.documentElement.scrollWidth") <= browser.execute_script(
                    "return window.innerWidth"), device
                browser.save_screenshot(str(out / f"empty-{theme}-{device}.png"))
    finally:
        browser.set_window_size(1200, 1000)
        browser.execute_script("localStorage.removeItem('memverbs-theme')")
        proc.terminate()
        proc.wait(timeout=10)
