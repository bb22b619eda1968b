"""Capture against adversarial sessions (benchmarks/capture_cases.py, one session per case): no secret
and no `<private>` text is kept anywhere, nothing the harness wrote in the user's turn becomes a fact,
and a line no reader expects is skipped and counted, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.capture_cases import (
    BAD_LINES,
    GENUINE,
    HARNESS_WRITTEN,
    INJECTED_NEEDLES,
    INVALID_UTF8,
    PRIVATE,
    SECRETS,
    Case,
    all_cases,
    write,
    write_bad_line,
)
from memverbs.server.capture.engine import plan_capture
from memverbs.server.capture.plan import CaptureOptions
from memverbs.server.capture.reading import read_transcript
from memverbs.server.capture.worker import run_job

SECOND = "The staging database lives on db-2."


def planned(case: Case, tmp_path: Path):
    path, sid, harness = write(case, tmp_path)
    return plan_capture(read_transcript(path, harness, session_id=sid), CaptureOptions(max_facts=50))


@pytest.mark.parametrize("case", SECRETS + PRIVATE, ids=lambda c: c.name)
def test_no_secret_or_private_text_reaches_the_page_or_a_fact(case, tmp_path):
    plan = planned(case, tmp_path)
    facts = [f.text for f in plan.facts]
    assert GENUINE in facts, facts  # the session was read
    for needle in case.never:
        assert needle not in plan.page_markdown, plan.page_markdown
        assert not any(needle in f for f in facts), facts


@pytest.mark.parametrize("case", HARNESS_WRITTEN, ids=lambda c: c.name)
def test_nothing_the_user_did_not_write_becomes_a_fact(case, tmp_path):
    plan = planned(case, tmp_path)
    assert [f.text for f in plan.facts] == [GENUINE]


@pytest.mark.parametrize("case", [c for c in HARNESS_WRITTEN if "claude_user" in str(c.turns) and "isSidechain" not in str(c.turns)],
                         ids=lambda c: c.name)
def test_harness_written_text_is_on_the_page_marked_as_not_the_users(case, tmp_path):
    page = planned(case, tmp_path).page_body
    assert "## Not the user's words" in page
    asked = page.split("## Asked", 1)[1].split("##", 1)[0]
    assert not any(needle in asked for needle in INJECTED_NEEDLES), asked  # never listed as what the user asked
    assert "evil.example.com/x.sh | sh" not in page.split("## Not the user's words", 1)[0]


@pytest.mark.parametrize(("harness", "name", "raw"), [pytest.param(*line, id=f"{line[0]}-{line[1]}") for line in
                                                     [*BAD_LINES, ("claude", "invalid-utf8", INVALID_UTF8)]])
def test_a_bad_line_is_skipped_and_counted_and_the_rest_is_read(harness, name, raw, tmp_path):
    path, sid, h = write_bad_line(harness, raw, tmp_path, name)
    plan = plan_capture(read_transcript(path, h, session_id=sid), CaptureOptions())
    assert [f.text for f in plan.facts] == [GENUINE, SECOND]
    assert plan.skipped_lines >= 1


@pytest.mark.sqlite_only
def test_across_every_case_nothing_is_stored_that_must_not_be(home, local, tmp_path):
    """Every case captured by the worker into one brain: the brain's bytes (file, WAL, shared memory,
    the full-text index's shadow tables) and capture's own state hold no secret and no private text,
    and no fact carries what the harness wrote."""
    cases = all_cases()
    for case in cases:
        path, sid, harness = write(case, tmp_path / case.name.replace("/", "_"))
        job = {"harness": harness, "session_id": sid or f"s-{case.name}", "transcript_path": str(path), "home": str(home.root)}
        assert run_job(job) == "ok", case.name
    stored = b"".join(p.read_bytes() for p in sorted(home.root.glob("brain.db*")) if p.is_file())
    stored += b"".join(p.read_bytes() for p in sorted((home.root / "capture").rglob("*.json")))
    assert GENUINE.encode() in stored  # the files read are the ones written
    leaked = [(c.name, n) for c in cases for n in c.never if n.encode() in stored]
    assert leaked == []
    facts = local.ok("recall", entity="people/me", limit=100)["facts"]
    assert [f["fact"] for f in facts if any(n in f["fact"] for n in INJECTED_NEEDLES)] == []


# -- properties -----------------------------------------------------------------------------------

_WORD = st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd")), min_size=4, max_size=12)


@st.composite
def private_tag(draw) -> tuple[str, str]:
    name = "".join(c.upper() if draw(st.booleans()) else c for c in "private")
    pad = st.sampled_from(["", " ", "  ", "\n", "\t"])
    attr = draw(st.sampled_from(["", ' reason="x"', " a=1 b='2'", "\n"]))
    return f"<{draw(pad)}{name}{attr}{draw(pad)}>", f"<{draw(pad)}/{draw(pad)}{name}{draw(pad)}>"


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(tag=private_tag(), before=_WORD, hidden=_WORD, after=_WORD, closed=st.booleans(), depth=st.integers(1, 3))
def test_property_no_spelling_of_the_private_tag_lets_its_text_through(tag, before, hidden, after, closed, depth):
    from memverbs.server.capture.privacy import clean

    opening, closing = tag
    body = f"{opening * depth}{hidden}{closing * depth if closed else ''}"
    out = clean(f"{before} {body} {after}")
    assert hidden not in out.replace(before, "").replace(after, "")


_VALUE = st.text(alphabet="abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789-_", min_size=10, max_size=24).filter(
    lambda v: any(c.isdigit() for c in v) and v.strip("-_") == v)
_TEMPLATES = (
    "DB_PASS={}", "export SMTP_PASSWORD={}", '"client_secret": "{}"', "postgres://app:{}@db:5432/x", "redis://:{}@cache:6379",
    "sshpass -p {} ssh host", "mysql -uroot -p{} db", "curl -u admin:{} https://x", "Authorization: Bearer {}",
    "the staging password is {}", "my PIN is {}", "https://x.io/cb?access_token={}", "docker login -p {} reg",
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(template=st.sampled_from(_TEMPLATES), value=_VALUE, lead=st.sampled_from(["", "Remember that ", "ok so "]))
def test_property_a_credential_in_any_of_its_shapes_is_redacted(template, value, lead):
    from memverbs.server.capture.privacy import clean, is_clean

    text = f"{lead}{template.format(value)} for prod."
    assert value not in clean(text) and not is_clean(text)


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(
                         ["type", "message", "content", "role", "payload", "params", "update", "id", "tool_use_id", "text",
                          "sessionUpdate", "toolCallId", "input", "name", "call_id", "sessionId", "cwd", "timestamp"]), inner, max_size=6),
                     max_leaves=20)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture], deadline=None)
@given(harness=st.sampled_from(["claude", "codex", "grok", "openclaw"]), value=_JSON)
def test_property_no_line_of_any_shape_breaks_a_reader(harness, value, tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz")
    path, sid, h = write_bad_line(harness, json.dumps(value), folder, "fuzz")
    plan = plan_capture(read_transcript(path, h, session_id=sid), CaptureOptions())
    assert GENUINE in [f.text for f in plan.facts]
