"""Regressions from an independent review of the first full build: each test pins one bug that
was found and fixed (its docstring says what the fixed behaviour is and what went wrong before).
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from helpers import page

# -- 1. wire contract -----------------------------------------------------------------------


@pytest.mark.parametrize("limit", [float("inf"), float("nan")])
def test_recall_non_finite_limit_is_not_internal(remote, limit):
    """recall {limit: 1e400} (JSON 1e400 parses to inf in json.loads and pydantic alike).

    Expected: §5.1 — a non-integer limit means the default 50; success.
    Actual: `internal` ("cannot convert float infinity to integer") from recall_limit's int(value).
    """
    body, is_error = remote("recall", limit=limit)
    assert not is_error, body


@pytest.mark.parametrize("ttl", ["9999999d", "99999999999999999999d"])
def test_remember_out_of_range_ttl_is_invalid_params(remote, ttl):
    """remember {ttl: "9999999d"}.

    Expected: a caller mistake → invalid_params with a suggestion (DESIGN §4.8).
    Actual: `internal` ("date value out of range" from iso(); "Python int too large to convert
    to SQLite INTEGER" for a longer number).
    """
    body = remote.err("remember", fact="f", provenance="p", ttl=ttl)
    assert body["error"] == "invalid_params", body


def test_timestamps_before_year_1000_keep_four_digit_years(remote):
    """delta {since: "0001-01-01T00:00:00Z"}.

    Expected: §4.2 toISOString form `YYYY-...`: "0001-01-01T00:00:00.000Z".
    Actual: "1-01-01T00:00:00.000Z" — timeparse.iso uses strftime("%Y"), which glibc does not pad.
    (Same for remember's valid_until with ttl "0001-01-01".)
    """
    assert remote.ok("delta", since="0001-01-01T00:00:00Z")["since"] == "0001-01-01T00:00:00.000Z"


def test_delta_facts_overflow_drains_when_following_next_cursor(local, remote):
    """51 facts recorded after the cursor and no page changes; a stateless client follows next_cursor.

    Expected (B4: "nothing recorded after the cursor is lost"): repeated calls eventually deliver
    all 51 and has_more goes false.
    Actual: every call returns the same 50 NEWEST facts, has_more:true and an unchanged next_cursor,
    so the oldest fact is never delivered and a client looping on has_more never terminates
    (with a session_id the cursor never advances either: no pages + has_more = no advance).
    """
    for i in range(51):
        local.ok("remember", fact=f"overflow fact {i}", provenance="p")
    seen: set[str] = set()
    cursor = {"since": "1970-01-01T00:00:00Z", "slug": ""}
    for _ in range(5):
        body = remote.ok("delta", since=cursor["since"], since_slug=cursor["slug"])
        seen |= {f["fact"] for f in body["facts"]}
        cursor = body["next_cursor"]
        if not body["has_more"]:
            break
    assert len(seen) == 51 and not body["has_more"]


def test_delta_session_cursor_does_not_skip_budget_dropped_facts(local, remote):
    """Session wake where the budget fits the page but not the fact recorded before it.

    Expected: at-least-once — the fact dropped by the budget (has_more:true) comes on the next wake.
    Actual: the cursor advances to the delivered page's updated_at, which is after the fact's
    created_at, so the next wake (facts: created_at > cursor) never delivers it: silently lost.
    """
    remote.ok("delta", session_id="s")  # first wake: establishes the cursor
    local.ok("remember", fact="FACT-DROPPED-BY-BUDGET", provenance="p")
    time.sleep(0.01)
    page(local, "notes/p", "P")  # cost estimate_tokens("P notes/p") == 3
    first = remote.ok("delta", session_id="s", budget_tokens=3)
    assert [p["slug"] for p in first["pages"]] == ["notes/p"] and first["facts"] == [] and first["has_more"]
    second = remote.ok("delta", session_id="s")
    assert "FACT-DROPPED-BY-BUDGET" in [f["fact"] for f in second["facts"]], second


def test_recall_grep_filters_before_budget_packing(local, remote):
    """recall {grep, budget_tokens}: §5.1 lists grep among the facts arm's rules ("limit ..., grep
    filters after that") and the budget packs the arm's facts afterwards.

    Expected: the one matching short fact fits budget 10 → total 1, and budget_used counts only it.
    Actual: packing runs first over the unfiltered facts; the newest (non-matching, 100-token) fact
    stops the prefix, then grep empties the list: total 0, dropped_count 2 — a budget can be spent
    on facts that are never returned.
    """
    local.ok("remember", fact="needle short", provenance="p")
    local.ok("remember", fact="x" * 400, provenance="p")
    body = remote.ok("recall", grep="needle", budget_tokens=10)
    assert body["total"] == 1 and body["budget_used"] == 3, body


def test_text_fact_lines_carry_a_date_and_no_bare_number():
    """render's fact line: the reference ended each one in an unexplained `(<confidence to 2 decimals>)`
    and gave no date; memverbs writes the fact's absolute date and its kind where the kind matters."""
    from memverbs.server.verbs.render import fact_line

    assert fact_line({"fact": "f", "entity_slug": None, "confidence": 0.125, "valid_from": "2026-12-01T09:00:00.000Z",
                      "kind": "fact"}) == "- 2026-12-01: f"


# -- 2. privacy -----------------------------------------------------------------------------


def test_remote_card_edges_do_not_reveal_private_pages(local, remote):
    """A private page links to a world page; a remote caller asks for the world page's card.

    Expected: private pages are hidden from every MCP caller (docs/pages.md, §4.5) — no edge, no count.
    Actual: card.edges has {direction:"in", slug:"projects/secret-xyz"} and backlink_count 1
    (links.edges_in / backlink_count have no visibility join; context_pack/delta cards too).
    """
    page(local, "people/alice", "Alice", body="Alice is public.")
    page(local, "projects/secret-xyz", "Secret XYZ", visibility="private", body="Works with [[people/alice]].")
    card = remote.ok("entity", name="people/alice")["card"]
    assert "secret-xyz" not in json.dumps(card) and card["backlink_count"] == 0, card


@pytest.mark.parametrize("name", ["Codename", "Secret XYZ", "zed"])
def test_remote_entity_resolution_does_not_reveal_private_slugs(local, remote, name):
    """remember/recall `entity` resolution (§4.3) for a remote caller runs with allow_private=True.

    Expected: a remote caller cannot learn a private page's slug; resolution falls through to
    slugify (e.g. "codename", "secret-xyz", "zed").
    Actual: the alias "Codename", the title "Secret XYZ" and the bare token "zed" (people/zed-* prefix)
    resolve to the private pages, and remember echoes their slugs in `entity_slug`.
    """
    page(local, "projects/secret-xyz", "Secret XYZ", visibility="private", aliases=["Codename"])
    page(local, "people/zed-private-person", "Zed P", visibility="private")
    slug = remote.ok("remember", fact="f", provenance="p", entity=name)["entity_slug"]
    assert slug not in ("projects/secret-xyz", "people/zed-private-person"), slug


def test_deleted_page_links_do_not_show_as_edges(local, remote):
    """docs/pages.md: "Delete is soft: the page disappears from every read".

    Expected: after deleting people/bob, Alice's card has no edge from bob and backlink_count 0.
    Actual: delete_page keeps bob's rows in `links`, so the card still lists people/bob (direction
    "in") and counts it.
    """
    page(local, "people/alice", "Alice", body="Alice.")
    page(local, "people/bob", "Bob", body="Knows [[people/alice]].")
    local.ok("delete_page", slug="people/bob")
    card = remote.ok("entity", name="people/alice")["card"]
    assert card["edges"] == [] and card["backlink_count"] == 0, card


def test_private_fence_marker_is_not_case_sensitive(local, remote):
    """A facts-fence row written `- [Private] ...` (capital P).

    Expected (fail closed): treated as private, like `[private]` — not in a remote summary/get_page.
    Actual: the marker match is case-sensitive, so the row is world text: the remote card summary is
    "[Private] CARL-SECRET ..." and get_page shows it. (Continuation lines of a `[private]` row
    leak the same way.)
    """
    page(local, "people/carl", "Carl", body="<!-- facts -->\n- [Private] CARL-SECRET is here.\n<!-- /facts -->\nCarl.\n")
    assert "CARL-SECRET" not in json.dumps(remote.ok("entity", name="people/carl"))
    assert "CARL-SECRET" not in remote.ok("get_page", slug="people/carl")["body"]


# -- 3. hooks -------------------------------------------------------------------------------


@pytest.fixture
def hook(memverbs_cmd, env, local):
    local.ok("remember", fact="Alice likes tea — 東京", provenance="chat", entity="people/alice")

    def run(*args, extra_env=None, close_stdout=False):
        argv = [*memverbs_cmd, "hook", *args]
        if close_stdout:
            argv = ["sh", "-c", 'exec "$@" >&-', "sh", *argv]
        return subprocess.run(
            argv,
            input=json.dumps({"session_id": f"s-{time.monotonic_ns()}"}),
            stdout=None if close_stdout else subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**env, **(extra_env or {})},
            timeout=30,
        )

    return run


def test_hook_huge_deadline_does_not_crash(hook):
    """memverbs hook session-start --deadline-ms 100000000000000000000.

    Expected: exit 0, nothing on stderr (falls back to a sane deadline).
    Actual: OverflowError traceback from signal.setitimer (called outside the fail-open try), exit 1.
    """
    proc = hook("session-start", "--harness", "plain", "--deadline-ms", "100000000000000000000")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr


def test_hook_unencodable_stdout_does_not_crash(hook):
    """stdout whose encoding cannot hold the pack (PYTHONIOENCODING=ascii; on Windows a pipe uses the
    ANSI code page, so CJK fact text hits this there).

    Expected: exit 0, no traceback.
    Actual: UnicodeEncodeError traceback from sys.stdout.write (only OSError is caught), exit 1.
    """
    proc = hook("session-start", "--harness", "plain", extra_env={"PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr


def test_hook_with_closed_stdout_does_not_crash(hook):
    """The harness runs the hook with fd 1 closed (sys.stdout is None).

    Expected: exit 0, no traceback.
    Actual: AttributeError: 'NoneType' object has no attribute 'write' (only OSError is caught), exit 1.
    """
    proc = hook("session-start", "--harness", "claude", close_stdout=True)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr


# -- 4. installers --------------------------------------------------------------------------


def test_install_into_an_empty_container_keeps_its_comment():
    """opencode.jsonc with `"mcp": { // add servers here }`: install inserts our member.

    Expected: only our member is added; the user's comment stays (and uninstall restores the bytes).
    Actual: JsonDoc._insert replaces everything between the braces, deleting the comment;
    uninstall (`_cut(only=True)`) likewise wipes comments in a container we leave empty.
    """
    from memverbs.installers.jsonc import JsonDoc

    original = '{\n  "mcp": {\n    // add servers here\n  }\n}\n'
    doc = JsonDoc(original)
    doc.set(["mcp", "memverbs"], {"type": "local"})
    assert "// add servers here" in doc.text
    doc.delete(["mcp", "memverbs"])
    assert doc.text == original


def test_install_and_uninstall_keep_crlf_line_endings(tmp_path):
    """A CRLF settings file (Windows editors), JsonEntry apply + revert.

    Expected: bytes outside our entry unchanged; after uninstall the file is byte-identical.
    Actual: files.read_text opens in universal-newline mode and atomic_write writes "\\n", so every
    line of the user's file is rewritten to LF on install and stays LF after uninstall.
    """
    from memverbs.installers.json_steps import JsonEntry
    from memverbs.installers.steps import Context

    path = tmp_path / "settings.json"
    original = b'{\r\n  "model": "x"\r\n}\r\n'
    path.write_bytes(original)
    record = JsonEntry(path, ["mcpServers", "memverbs"], {"command": "m"}, owned=lambda v: True).apply(
        Context(backups=tmp_path / "bk")
    )
    assert path.read_bytes().startswith(b'{\r\n')
    JsonEntry.revert(record, Context(backups=tmp_path / "bk"))
    assert path.read_bytes() == original


def test_uninstall_keeps_the_users_own_empty_hook_containers(tmp_path):
    """settings.json already had `"hooks": {"SessionStart": []}`; install appends our group, uninstall removes it.

    Expected: the file is byte-identical to before install.
    Actual: JsonArrayItem.revert deletes every container left empty — including the user's own
    SessionStart array and hooks object — leaving `{}`.
    """
    from memverbs.installers.json_steps import JsonArrayItem
    from memverbs.installers.steps import Context

    path = tmp_path / "settings.json"
    original = '{\n  "hooks": {\n    "SessionStart": []\n  }\n}\n'
    path.write_text(original)
    fingerprint = lambda v: isinstance(v, dict) and v.get("ours") is True  # noqa: E731
    record = JsonArrayItem(path, ["hooks", "SessionStart"], {"ours": True}, fingerprint).apply(Context(backups=tmp_path / "bk"))
    JsonArrayItem.revert(record, Context(backups=tmp_path / "bk"), fingerprint)
    assert path.read_text() == original
