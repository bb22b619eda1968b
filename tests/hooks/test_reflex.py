"""The per-prompt reflex in real cold hook processes: both ways a prompt is answered — the lean launcher's
fast path (nothing else changed: its own connection) and the runner (the console script, and any prompt
that comes with a change) — must say the same thing, and never what they may not."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import payloads
import pytest
from helpers import ROOMY_DEADLINE, Client, installed_hook_command, page
from hypothesis import given, settings
from hypothesis import strategies as st

from memverbs.hooks.events import Harness
from memverbs.installers.base import Options
from memverbs.server.home import Home
from memverbs.server.runtime import Runtime
from memverbs.server.timeparse import iso
from memverbs.server.verbs import pointers
from memverbs.server.verbs.render import HEADER, NAMED_SECTION

QUIET = "Good morning! Let me grab a coffee first."


@pytest.fixture(params=["fast path", "runner"])
def way(request):
    return request.param


@pytest.fixture
def prompt(way, env, memverbs_cmd, home):
    """Send one prompt of a session through the chosen way; (stdout's context or "", the hook's log code)."""

    def send(text: str, *, session: str = "reflex-1", harness: str = "claude", extra_env: dict | None = None,
             moment: str = "heartbeat", event: str = "UserPromptSubmit") -> tuple[str, str]:
        payload = {**payloads.CLAUDE_PROMPT, "session_id": session, "hook_event_name": event, "prompt": text}
        run_env = {**env, **(extra_env or {})}
        if way == "fast path" and moment == "heartbeat":
            command = f"{installed_hook_command(Options(Harness(harness), env=run_env), moment)} --deadline-ms 20000"
            argv = ["/bin/sh", "-c", command]
        else:
            argv = [*memverbs_cmd, "hook", moment, "--harness", harness, *ROOMY_DEADLINE]
        proc = subprocess.run(argv, input=json.dumps(payload), capture_output=True, text=True, env=run_env, timeout=30)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        code = log_lines(home)[-1]["code"]
        if not proc.stdout.strip():
            return "", code
        if proc.stdout.lstrip().startswith("{"):
            return json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"], code
        return proc.stdout, code

    return send


def log_lines(home) -> list[dict]:
    return [json.loads(line) for line in (home.logs / "hooks.jsonl").read_text().splitlines()]


def settle(prompt, session: str = "reflex-1", **kw) -> None:
    """A first wake (the cursor), then prompts naming nothing until delta's in-flight lag has passed."""
    for _ in range(40):
        _, code = prompt(QUIET, session=session, **kw)
        if code == "unchanged":
            return
        time.sleep(0.25)
    raise AssertionError("the session never settled")


def seed(local: Client) -> None:
    page(local, "companies/widget-co", "Widget Co", type="company", summary="Seed-stage widget marketplace.")
    page(local, "companies/kelpforge", "Kelpforge", type="company", summary="Marine robotics; the round closes in March.")
    page(local, "people/yuki-quincewood", "Yuki Quincewood", type="person", aliases=["yuki"], summary="Founder of Orchardbyte.")
    page(local, "people/yuki-pemberlake", "Yuki Pemberlake", type="person", aliases=["yuki"], summary="Founder of Frostpetal.")
    page(local, "people/soren-hartwhistle", "Soren Hartwhistle", type="person", summary="Founder of Kelpforge.")
    local.ok("remember", fact="Soren worries the pricing model undercuts gross margin", provenance="chat",
             entity="people/soren-hartwhistle")
    local.ok("remember", fact="Soren prefers async updates over standing calls", provenance="chat",
             entity="people/soren-hartwhistle")
    local.ok("remember", fact="Soren's private number is 555-0100 for pricing calls", provenance="chat",
             entity="people/soren-hartwhistle", visibility="private")


@pytest.fixture(scope="module")
def seeded_home(tmp_path_factory, empty_sqlite_home) -> Path:
    """A home holding `seed`'s pages and facts, written once per module and then left past delta's
    in-flight lag, so a session's first wake reports none of them as changed. Each test copies it:
    one wait for the module instead of one for every test."""
    root = tmp_path_factory.mktemp("reflex-seed") / "home"
    shutil.copytree(empty_sqlite_home, root)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMVERBS_HOME", str(root))
        mp.delenv("MEMVERBS_BRAIN__URL", raising=False)
        rt = Runtime(Home(root))
        try:
            seed(Client(rt.local_dispatcher()))
        finally:
            rt.close()
    time.sleep(2.2)
    return root


@pytest.fixture
def home_template(seeded_home) -> Path:
    return seeded_home  # the conftest's `home` copies it for each test


@pytest.fixture
def brain(local):
    return local


def test_a_prompt_that_names_nothing_gets_nothing(brain, prompt, home):
    settle(prompt)
    assert prompt("Let's write some code. Nothing fancy, just cleanup.") == ("", "unchanged")


def test_a_named_entity_gets_its_pointer_and_the_facts_the_prompt_is_about(brain, prompt):
    settle(prompt)
    text, code = prompt("What did Soren Hartwhistle say about pricing?")
    assert code == "reflex"  # nothing else changed: answered on a plain connection either way
    assert text.startswith(HEADER) and f"## {NAMED_SECTION}" in text
    assert "**Soren Hartwhistle** → `people/soren-hartwhistle` — Founder of Kelpforge." in text
    assert "pricing model undercuts gross margin" in text
    assert "async updates" not in text  # not what the prompt asks about
    assert "555-0100" not in text  # a private fact, however related


def test_a_re_mention_is_not_news_and_only_the_new_name_beside_it_is(brain, prompt):
    settle(prompt)
    first, _ = prompt("How is Widget Co doing?")
    assert "`companies/widget-co`" in first
    assert prompt("And Widget Co's hiring?") == ("", "unchanged")
    both, _ = prompt("Compare Widget Co with Kelpforge.")
    assert "`companies/kelpforge`" in both and "companies/widget-co" not in both
    # Another session has not been told.
    settle(prompt, session="reflex-2")
    again, _ = prompt("How is Widget Co doing?", session="reflex-2")
    assert "`companies/widget-co`" in again


def test_a_changed_page_is_news_again_in_one_message_with_the_change(brain, prompt, local):
    settle(prompt)
    assert "`companies/widget-co`" in prompt("How is Widget Co doing?")[0]
    page(local, "companies/widget-co", "Widget Co", type="company", summary="Series A widget marketplace.")
    text, code = prompt("Widget Co again: what changed?")
    assert code == "ok" and text.count(HEADER) == 1, text  # the delta and the pointer: one block
    assert "## Pages changed" in text and f"## {NAMED_SECTION}" in text and "Series A widget marketplace." in text


def test_a_name_two_pages_share_is_never_guessed(brain, prompt):
    settle(prompt)
    assert prompt("Ping Yuki about the offsite agenda.") == ("", "unchanged")
    text, _ = prompt("Sorry, I meant Yuki Quincewood.")
    assert "`people/yuki-quincewood`" in text and "pemberlake" not in text


def test_nothing_comes_from_another_source(brain, prompt, local, runtime):
    from memverbs.server.brain.base import PageDraft

    draft = PageDraft(slug="companies/acme-example", title="Acme Example", type="company", body="", frontmatter={},
                      summary="Team-brain-only company.", visibility="world", aliases=[], links=[], timeline=[], markdown="")
    runtime.brain().save_page("teambrain", draft.slug, lambda _: draft, 1)
    settle(prompt)
    assert prompt("Anything on Acme Example in here?") == ("", "unchanged")
    settle(prompt, session="team", extra_env={"MEMVERBS_SOURCE": "teambrain"})
    text, _ = prompt("Anything on Acme Example in here?", session="team", extra_env={"MEMVERBS_SOURCE": "teambrain"})
    assert "`companies/acme-example`" in text
    assert "soren" not in text.lower()


def test_a_private_page_is_never_pointed_to(brain, prompt, local):
    page(local, "people/secret-agent", "Secret Agent", type="person", visibility="private", summary="Top secret.")
    settle(prompt)
    assert prompt("Did Secret Agent call back?") == ("", "unchanged")


def test_the_setting_and_the_kill_switch_turn_it_off(brain, prompt, home):
    settle(prompt)
    assert prompt("How is Kelpforge?", extra_env={"MEMVERBS_REFLEX": "off"}) == ("", "unchanged")
    home.config_path.write_text("[hooks]\nreflex = false\n")
    assert prompt("How is Kelpforge?") == ("", "unchanged")
    home.config_path.write_text("[hooks]\nreflex = true\n")
    assert "`companies/kelpforge`" in prompt("How is Kelpforge?")[0]


def test_grok_keeps_the_pointers_for_its_next_post_tool_use(brain, prompt, home):
    """Grok drops what a prompt hook prints: the pointer waits for the PostToolUse that reaches its model."""
    settle(prompt, harness="grok")
    assert prompt("How is Kelpforge?", harness="grok") == ("", "unchanged")
    text, _ = prompt("", harness="grok", moment="post-tool", event="PostToolUse")  # the session's pack, and the pointer
    assert text.count(HEADER) == 1 and "## Standing entities" in text and "`companies/kelpforge`" in text, text
    assert prompt("How is Kelpforge now?", harness="grok") == ("", "unchanged")  # given: not kept again


def test_the_prompt_is_never_stored_or_logged(brain, prompt, home):
    settle(prompt)
    marker = "zq" + os.urandom(6).hex()
    for text in (f"{marker} and Kelpforge", f"Widget Co {marker}", f"{marker} nothing here"):
        prompt(text)
    for root, _, files in os.walk(home.root):
        for name in files:
            with open(os.path.join(root, name), "rb") as fh:
                assert marker.encode() not in fh.read(), os.path.join(root, name)


@settings(max_examples=200, deadline=None)
@given(ms=st.integers(min_value=0, max_value=253402300799999))
def test_the_reflexs_own_time_format_is_timeparses(ms):
    assert pointers.iso(ms) == iso(ms)


def test_a_page_whose_card_the_pack_showed_is_not_pointed_to_until_it_changes(brain, prompt, env, memverbs_cmd, local):
    payload = {**payloads.CLAUDE_SESSION_START, "session_id": "reflex-1"}
    started = subprocess.run([*memverbs_cmd, "hook", "session-start", "--harness", "claude", *ROOMY_DEADLINE],
                             input=json.dumps(payload), capture_output=True, text=True, env=env, timeout=30)
    assert "`people/soren-hartwhistle`" in started.stdout  # a recent entity: its card leads the pack
    settle(prompt)
    assert prompt("What did Soren Hartwhistle say about pricing?") == ("", "unchanged")
    # Its new fact comes with the next prompt, as the delta's: the pack's card and that fact are all there is.
    local.ok("remember", fact="Soren agreed to a pricing review in April", provenance="chat", entity="people/soren-hartwhistle")
    text, _ = prompt("And Soren Hartwhistle on pricing now?")
    assert "pricing review in April [people/soren-hartwhistle]" in text and NAMED_SECTION not in text


def test_an_entity_with_facts_and_no_page_gets_a_pointer_with_its_fact(brain, prompt, local):
    local.ok("remember", fact="Bob owns the billing service since May", provenance="chat", entity="people/bob-marsh")
    time.sleep(2.2)
    settle(prompt)
    text, _ = prompt("who is bob marsh again?")
    assert "**bob-marsh** → `people/bob-marsh`" in text and "Bob owns the billing service since May" in text
