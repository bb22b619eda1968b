"""forget: expire with an audit trail, idempotent, not_found for anything else."""

import pytest


def test_forget_then_again(local):
    fid = local.ok("remember", fact="x", provenance="p")["id"]
    assert local.ok("forget", id=fid, reason="  wrong  ") == {"id": fid, "expired": True, "reason": "wrong", "protocol_version": 1}
    assert local.ok("forget", id=fid) == {"id": fid, "expired": False, "reason": None, "protocol_version": 1}


def test_audit_reason_is_stored_never_deleted(local, runtime):
    fid = local.ok("remember", fact="x", provenance="p")["id"]
    local.ok("forget", id=fid)
    row = runtime.brain().fact(int(fid))
    assert row["expired_at"] is not None and row["expiry_reason"] == "forgotten"
    facts = local.ok("recall", include_expired=True)["facts"]
    assert [f["fact_id"] for f in facts] == [fid] and facts[0]["expired_at"] is not None
    assert local.ok("recall")["facts"] == []


@pytest.mark.parametrize("bad", ["999999999", "abc", "0", "-1", "1.5", "people/alice", "   "])
def test_not_found(remote, bad):
    err = remote.err("forget", id=bad)
    assert err["error"] == "not_found" and err["suggestion"].strip()
    assert err["message"] == f'No fact with id "{bad.strip() if bad.strip() else bad}".'


def test_js_number_forms_are_ids(local):
    local.ok("remember", fact="x", provenance="p")
    assert local.ok("forget", id="1e0")["expired"] is True
    assert local.ok("forget", id="0x1")["expired"] is False


def test_private_fact_is_not_found_for_remote(local, remote):
    fid = local.ok("remember", fact="secret", provenance="p", visibility="private")["id"]
    hidden = remote.err("forget", id=fid)
    missing = remote.err("forget", id="987654")
    assert hidden["error"] == missing["error"] == "not_found"
    assert hidden["suggestion"] == missing["suggestion"]  # indistinguishable from a missing id
    assert local.ok("forget", id=fid)["expired"] is True


def test_other_source_is_not_found(runtime, monkeypatch, local):
    fid = local.ok("remember", fact="x", provenance="p")["id"]
    monkeypatch.setenv("MEMVERBS_SOURCE", "other")
    from helpers import Client

    from memverbs.server.runtime import Runtime

    other = Runtime(runtime.home)
    try:
        err = Client(other.mcp_dispatcher("full")).err("forget", id=fid)
        assert err["error"] == "not_found"
    finally:
        other.close()
