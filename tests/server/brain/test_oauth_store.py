"""The OAuth store on every backend: clients, credentials spent exactly once, families, owner secrets.

The HTTP tests (tests/server/transport/test_oauth*.py) run the protocol on SQLite; these
pin the store's promises on SQLite and Postgres alike, so a `serve --http` on a Postgres
brain behaves the same.
"""

from __future__ import annotations

import pytest

from memverbs.server.oauth import credentials, owner

NOW = 1_800_000_000_000


@pytest.fixture
def brain(runtime):
    return runtime.brain()


def item(ref: int, kind: str, value: str, family: int | None = None, **extra) -> dict:
    return {"client_ref": ref, "kind": kind, "token_hash": credentials.digest(value), "family": family, "scopes": "read",
            "surface": "verbs", "source_id": "default", "resource": "https://b.example/mcp", "expires_at": NOW + 60_000,
            **extra}


def client(brain, client_id: str = "c-1") -> int:
    return brain.oauth_add_client(client_id=client_id, name="Claude", metadata='{"redirect_uris": []}', secret_hash=None,
                                  lane=credentials.lane_for(client_id), now=NOW)


def test_a_credential_is_found_by_hash_with_its_client_and_spent_once(brain):
    ref = client(brain)
    [code_id] = brain.oauth_exchange(None, [item(ref, "code", "mvc_x", redirect_uri="http://127.0.0.1:9/cb")], NOW)
    row = brain.oauth_credential("code", credentials.digest("mvc_x"))
    assert (row["id"], row["family"], row["client_id"], row["lane"], row["name"]) == (code_id, code_id, "c-1", "oauth:c-1", "Claude")
    assert row["redirect_uri"] == "http://127.0.0.1:9/cb" and row["revoked_at"] is None
    assert brain.oauth_credential("access", credentials.digest("mvc_x")) is None  # kinds never mix
    pair = brain.oauth_exchange(code_id, [item(ref, "access", "mva_1", code_id), item(ref, "refresh", "mvr_1", code_id)], NOW + 1)
    assert pair is not None and len(pair) == 2
    assert brain.oauth_exchange(code_id, [item(ref, "access", "mva_2", code_id)], NOW + 2) is None  # spent: nothing issued
    assert brain.oauth_credential("access", credentials.digest("mva_2")) is None
    assert brain.oauth_credential("code", credentials.digest("mvc_x"))["revoked_at"] == NOW + 1
    grant = credentials.grant_from(brain.oauth_credential("access", credentials.digest("mva_1")))
    assert (grant.client_id, grant.scopes, grant.surface, grant.kind, grant.token_id) == ("oauth:c-1", frozenset({"read"}), "verbs", "oauth", ref)
    assert grant.caller().remote is True and grant.caller().client_id == "oauth:c-1"


def test_a_family_and_a_client_are_revoked_with_everything_they_hold(brain):
    ref, other = client(brain), client(brain, "c-2")
    [code_id] = brain.oauth_exchange(None, [item(ref, "code", "mvc_a")], NOW)
    brain.oauth_exchange(code_id, [item(ref, "access", "mva_a", code_id), item(ref, "refresh", "mvr_a", code_id)], NOW)
    brain.oauth_exchange(None, [item(other, "access", "mva_b")], NOW)
    assert brain.oauth_revoke_family(code_id, NOW + 5) == 2
    assert brain.oauth_credential("access", credentials.digest("mva_a"))["revoked_at"] == NOW + 5
    assert [g["client_ref"] for g in brain.oauth_live_grants(NOW)] == [other]
    assert brain.oauth_revoke_client(other, NOW + 6) == 1 and brain.oauth_revoke_client(other, NOW + 7) == 0
    assert brain.oauth_credential("access", credentials.digest("mva_b"))["client_revoked_at"] == NOW + 6
    assert brain.oauth_client("c-2") is None and [c["client_id"] for c in brain.oauth_clients()] == ["c-1"]
    assert len(brain.oauth_clients(include_revoked=True)) == 2


def test_failed_logins_count_and_last_use_is_kept_to_the_minute(brain):
    ref = client(brain)
    [req] = brain.oauth_exchange(None, [item(ref, "request", "mvq_1")], NOW)
    assert [brain.oauth_failed_attempt(req) for _ in range(3)] == [1, 2, 3]
    brain.oauth_touch_client(ref, None, NOW)
    brain.oauth_touch_client(ref, NOW, NOW + 1000)  # within the minute: not written
    assert brain.oauth_client("c-1")["last_used_at"] == NOW


def test_owner_secrets_codes_work_once_and_a_new_password_replaces_the_old(brain):
    code = owner.new_approval_code(brain)
    assert len(code) == 14 and owner.has_login(brain)
    assert owner.check(brain, code.lower().replace("-", " ")) is True  # typed loosely: still the code
    assert owner.check(brain, code) is False  # once
    owner.set_password(brain, "first password here")
    owner.set_password(brain, "second password here")
    assert owner.check(brain, "second password here") and not owner.check(brain, "first password here")
    stored = brain.oauth_owner_secrets("password", NOW)
    assert len(stored) == 1 and stored[0]["secret_hash"].startswith("scrypt$") and "second" not in stored[0]["secret_hash"]
    assert brain.oauth_clear_owner_secrets("password", NOW) == 1 and not owner.has_login(brain)


def test_expired_credentials_are_forgotten(brain):
    ref = client(brain)
    brain.oauth_exchange(None, [item(ref, "code", "mvc_old", expires_at=NOW - 10), item(ref, "refresh", "mvr_new")], NOW)
    assert brain.oauth_forget_expired(NOW) == 1
    assert brain.oauth_credential("code", credentials.digest("mvc_old")) is None
    assert brain.oauth_credential("refresh", credentials.digest("mvr_new")) is not None
