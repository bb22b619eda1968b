"""Dispatch: surfaces fail closed, unknown tools, scope, and faults become `unavailable`."""

import pytest
from helpers import Client

from memverbs.server.context import Caller
from memverbs.server.dispatch import Dispatcher
from memverbs.server.errors import BrainError
from memverbs.server.protocol.surfaces import SURFACES, allowed, tool_defs

VERBS = ["remember", "entity", "synthesize", "forget", "recall", "context_pack", "delta"]


def test_surfaces_are_strictly_monotonic():
    verbs, starter, full = (allowed(s) for s in SURFACES)
    assert verbs < starter < full
    assert [t["name"] for t in tool_defs("verbs")] == VERBS


def test_hidden_tool_is_byte_identical_to_unknown(runtime):
    verbs_only = runtime.mcp_dispatcher("verbs")
    hidden = verbs_only.call("put_page", {"slug": "a", "content": "x"})
    missing = verbs_only.call("put_pagex", {})
    assert hidden.is_error and missing.is_error
    assert hidden.body == {"error": "unknown_tool", "message": "Unknown tool: put_page"}
    assert missing.body == {"error": "unknown_tool", "message": "Unknown tool: put_pagex"}
    full = runtime.mcp_dispatcher("full").call("put_pagex", {})
    assert full.body["suggestion"] == 'Did you mean "put_page"?'


def test_did_you_mean_only_from_the_visible_surface(runtime):
    body = runtime.mcp_dispatcher("verbs").call("recal", {}).body
    assert body == {"error": "unknown_tool", "message": "Unknown tool: recal", "suggestion": 'Did you mean "recall"?'}


def test_scope_denied_envelope(runtime):
    reader = Client(runtime.mcp_dispatcher("full", Caller.mcp("default", "ci-bot", frozenset({"read"}))))
    err = reader.err("remember", fact="x", provenance="p")
    assert err["error"] == "scope_denied" and err["protocol_version"] == 1 and err["suggestion"].strip()
    assert reader.ok("recall")["total"] == 0


def test_missing_brain_is_unavailable_with_fix(tmp_path):
    def no_brain():
        raise BrainError("no brain at /x/brain.db", "Run `memverbs init` to create one.")

    client = Client(Dispatcher(Caller.mcp("default"), "full", no_brain))
    err = client.err("recall")
    assert err["error"] == "unavailable" and err["suggestion"] == "Run `memverbs init` to create one."
    assert "no brain" in err["message"] and err["protocol_version"] == 1
    # validation still comes first: a caller's mistake is named as such
    assert client.err("remember", fact="x")["error"] == "invalid_params"


def test_a_bug_is_internal_not_a_crash(runtime, monkeypatch):
    from memverbs.server import dispatch

    def broken(ctx, params):
        raise RuntimeError("boom")

    monkeypatch.setitem(dispatch._handlers, "whoami", broken)
    err = Client(runtime.mcp_dispatcher("full")).err("whoami")
    assert err["error"] == "internal" and err["message"] == "boom" and "memverbs doctor" in err["suggestion"]


def test_arguments_must_be_an_object(runtime):
    outcome = runtime.mcp_dispatcher("full").call("recall", ["x"])
    assert outcome.is_error and outcome.body["error"] == "invalid_params"


def test_strict_params_reject(runtime, home):
    home.config_path.write_text('[mcp]\nstrict_params = "reject"\n')
    from memverbs.server.runtime import Runtime

    strict = Runtime(home)
    try:
        err = Client(strict.mcp_dispatcher("full")).err("recall", entty="x")
        assert err["error"] == "invalid_params" and "strict_params=reject" in err["message"]
    finally:
        strict.close()


@pytest.mark.parametrize("surface", SURFACES)
def test_every_listed_tool_dispatches(runtime, surface):
    d = runtime.mcp_dispatcher(surface)
    for tool in tool_defs(surface):
        outcome = d.call(tool["name"], {})
        assert outcome.body.get("error") != "unknown_tool", tool["name"]
        assert outcome.body.get("error") != "internal", (tool["name"], outcome.body)


@pytest.mark.sqlite_only
def test_locked_brain_is_unavailable_and_loses_nothing(home, monkeypatch):
    import sqlite3

    from memverbs.server.runtime import Runtime

    monkeypatch.setenv("MEMVERBS_BRAIN__BUSY_TIMEOUT_MS", "200")
    rt = Runtime(home)
    client = Client(rt.mcp_dispatcher("full"))
    client.ok("remember", fact="before the lock", provenance="p")
    holder = sqlite3.connect(home.root / "brain.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holding a long write
    try:
        err = client.err("remember", fact="during the lock", provenance="p")
        assert err["error"] == "unavailable" and "locked" in err["message"] and err["suggestion"].strip()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert client.ok("remember", fact="after the lock", provenance="p")["status"] == "inserted"
    assert [f["fact"] for f in client.ok("recall")["facts"]] == ["after the lock", "before the lock"]
    rt.close()
