"""The unauthenticated OAuth routes stay cheap: small bodies refused from their head, bounded registrations,
bounded pending authorizations, a login limit no new request resets, hashing off the brain's workers,
and RFC 7009 revocation for public clients.

The server runs in this process (oauth_support.InProcessServer) on a real loopback socket, so a test
can shrink a limit; X-Forwarded-For stands for other source addresses (uvicorn trusts it from loopback,
as it trusts a reverse proxy on the same machine).
"""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest
from oauth_support import CALLBACK, Client, InProcessServer, pkce, query

from benchmarks.http_load import HEADERS, call_body, make_token
from memverbs.server.oauth import consent, limits, owner
from memverbs.server.timeparse import now_ms

ROUTES = ("/register", "/token", "/consent", "/revoke", "/authorize")


@pytest.fixture
def server(runtime):
    with InProcessServer(runtime) as srv:
        yield srv


def head_only(port: int, path: str, declared: int) -> bytes:
    """A POST that declares `declared` bytes and sends none of them: the answer must not wait for the body."""
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            f"Content-Length: {declared}\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(head)
        return s.recv(65536)


def port_of(server: InProcessServer) -> int:
    return int(server.base.rsplit(":", 1)[1])


# -- bodies -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ROUTES)
def test_a_body_declared_over_the_routes_cap_is_refused_from_its_head(server, path):
    answer = head_only(port_of(server), path, 5 * 1024 * 1024)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    answer = head_only(port_of(server), path, limits.body_limit(path) + 1)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


@pytest.mark.parametrize("path", ROUTES)
def test_a_chunked_body_past_the_routes_cap_is_refused_as_it_comes(server, path):
    def chunks():
        for _ in range(64):
            yield b"x" * 1024

    refused = httpx.post(f"{server.base}{path}", content=chunks(), headers={"Content-Type": "application/json"}, timeout=10)
    assert refused.status_code == 413, refused.text


# -- registration -----------------------------------------------------------------------------------


def register(server, body: dict, address: str = "127.0.0.1") -> httpx.Response:
    return httpx.post(f"{server.base}/register", json=body, headers={"X-Forwarded-For": address}, timeout=10)


@pytest.mark.parametrize(("field", "value"), [
    ("client_name", "n" * 201),
    ("redirect_uris", [f"{CALLBACK}/{i}" for i in range(11)]),
    ("redirect_uris", [CALLBACK + "/" + "p" * 2000]),
    ("contacts", ["a@example.com"] * 6),
    ("software_id", "s" * 201),
    ("logo_uri", "https://example.com/" + "l" * 2000),
    ("jwks", {"keys": [{"k": "x" * 5000}]}),
])
def test_every_registered_field_is_bounded(server, runtime, field, value):
    body = {"client_name": "bounded", "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none", field: value}
    refused = register(server, body)
    assert refused.status_code in (400, 413) and refused.json()["error"] in ("invalid_client_metadata", "payload_too_large")
    assert runtime.brain().oauth_clients() == []
    assert register(server, {"client_name": "n" * 200, "redirect_uris": [CALLBACK] * 10,
                             "token_endpoint_auth_method": "none"}).status_code == 201


def test_registrations_are_paced_per_address_and_overall(server, runtime):
    server.oauth.paces.by_route["/register"] = (limits.Pace(3, 3600), limits.Pace(5, 3600))
    body = {"redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none"}
    assert [register(server, body, "10.0.0.1").status_code for _ in range(4)] == [201, 201, 201, 429]
    refused = register(server, body, "10.0.0.1")
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 0
    assert refused.json()["error"] == "temporarily_unavailable"
    # other addresses go on until the overall pace is spent, which no number of addresses escapes
    assert [register(server, body, f"10.0.1.{i}").status_code for i in range(4)] == [201, 201, 429, 429]
    assert len(runtime.brain().oauth_clients()) == 5


def test_registrations_are_capped_and_unused_ones_forgotten(server, runtime, monkeypatch):
    monkeypatch.setattr(limits, "MAX_CLIENTS", 3)
    body = {"redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none"}
    assert [register(server, body, f"10.0.2.{i}").status_code for i in range(4)] == [201, 201, 201, 503]
    # a day later, registrations nobody finished are forgotten: room again
    with runtime.brain().write() as db:
        db.execute("UPDATE oauth_clients SET created_at = ?", (now_ms() - 2 * limits.UNUSED_CLIENT_TTL_S * 1000,))
    assert register(server, body, "10.0.2.9").status_code == 201
    assert len(runtime.brain().oauth_clients()) == 1


def test_a_used_registration_is_never_forgotten(server, runtime):
    client = Client.register(server.base)
    client.tokens(server.approval_code())
    with runtime.brain().write() as db:
        db.execute("UPDATE oauth_clients SET created_at = 1")
    Client.register(server.base)
    assert client.client_id in {r["client_id"] for r in runtime.brain().oauth_clients()}


# -- pending authorizations -----------------------------------------------------------------------------


def test_pending_authorizations_are_bounded_per_client(server, monkeypatch):
    monkeypatch.setattr(limits, "MAX_PENDING_PER_CLIENT", 3)
    client = Client.register(server.base)
    answers = [client.authorize(pkce()[1]) for _ in range(4)]
    assert [a.headers["location"].startswith(f"{server.base}/consent") for a in answers] == [True, True, True, False]
    assert query(answers[-1].headers["location"])["error"] == "temporarily_unavailable"
    # another client is not held up by this one
    assert Client.register(server.base).authorize(pkce()[1]).headers["location"].startswith(f"{server.base}/consent")


def test_pending_authorizations_are_bounded_overall(server, monkeypatch):
    monkeypatch.setattr(limits, "MAX_PENDING", 2)
    first, second = Client.register(server.base), Client.register(server.base)
    assert first.authorize(pkce()[1]).headers["location"].startswith(f"{server.base}/consent")
    assert second.authorize(pkce()[1]).headers["location"].startswith(f"{server.base}/consent")
    assert query(first.authorize(pkce()[1]).headers["location"])["error"] == "temporarily_unavailable"


def test_an_expired_authorization_is_swept_at_expiry(server, runtime):
    client = Client.register(server.base)
    for _ in range(3):
        client.authorize(pkce()[1])
    with runtime.brain().write() as db:
        db.execute("UPDATE oauth_tokens SET expires_at = ? WHERE kind = 'request'", (now_ms() - 1000,))
    client.authorize(pkce()[1])
    kinds = [r[0] for r in runtime.brain().query("SELECT kind FROM oauth_tokens")]
    assert kinds == ["request"]  # the three expired a second ago are gone, not kept for a day


# -- the owner's login ----------------------------------------------------------------------------------


def wrong_login(server, client: Client) -> httpx.Response:
    """A wrong password on a fresh consent request of `client`."""
    asked = client.authorize(pkce()[1])
    return client.consent(asked.headers["location"], "not the owner password")


def patient(server) -> None:
    """Backoffs long enough that no test waits them out, however slow the machine."""
    server.oauth.consent.logins.per_client.base_s = server.oauth.consent.logins.overall.base_s = 600.0


def test_the_login_limit_holds_across_new_requests(server, runtime):
    patient(server)
    owner.set_password(runtime.brain(), "the owner password, long")
    client = Client.register(server.base)
    statuses = [wrong_login(server, client).status_code for _ in range(7)]
    # each new consent request used to start the count again; now the client's failures carry over
    assert statuses[:5] == [401] * 5 and statuses[5:] == [429, 429], statuses
    locked = wrong_login(server, client)
    assert locked.status_code == 429 and int(locked.headers["retry-after"]) >= 1 and "approval code" in locked.text
    # the owner is not locked out: an approval code is checked at once
    asked = client.authorize(pkce()[1])
    approved = client.consent(asked.headers["location"], server.approval_code())
    assert approved.status_code == 303 and "code" in query(approved.headers["location"])


def test_the_login_limit_holds_across_clients(server, runtime):
    patient(server)
    owner.set_password(runtime.brain(), "the owner password, long")
    statuses = [wrong_login(server, Client.register(server.base)).status_code for _ in range(12)]
    assert statuses[:10] == [401] * 10 and statuses[10:] == [429, 429], statuses


def test_a_lockout_is_charged_before_the_check_so_a_burst_gets_one_guess():
    logins = limits.Logins()
    for _ in range(5):
        assert logins.admit("c") == 0.0
    assert logins.admit("c") > 0  # the sixth waits, before any of the five has even answered
    logins.succeeded("c")  # the owner's success clears it
    assert logins.admit("c") == 0.0


def test_the_owners_password_still_approves_after_the_backoff(server, runtime, monkeypatch):
    monkeypatch.setattr(limits.Backoff, "wait", lambda self, key, now=None: 0.0)
    owner.set_password(runtime.brain(), "the owner password, long")
    client = Client.register(server.base)
    asked = client.authorize(pkce()[1])
    assert client.consent(asked.headers["location"], "the owner password, long").status_code == 303


def test_password_hashing_never_takes_a_brain_worker(runtime, monkeypatch):
    """With one brain worker, a password check that hangs must not hold it: an authenticated call is answered."""
    release = threading.Event()
    started = threading.Event()

    def slow(secret, hashes):
        started.set()
        release.wait(20)
        return False

    monkeypatch.setattr(owner, "password_ok", slow)
    owner.set_password(runtime.brain(), "the owner password, long")
    token = make_token(runtime.home.root, "beside-the-storm")
    with InProcessServer(runtime, workers=1) as server:
        client = Client.register(server.base)
        asked = client.authorize(pkce()[1])
        guessing = threading.Thread(target=client.consent, args=(asked.headers["location"], "a guess"), daemon=True)
        guessing.start()
        assert started.wait(10)
        try:
            t0 = time.monotonic()
            answer = httpx.post(server.url, json=call_body(1, "whoami", {}),
                                headers={**HEADERS, "Authorization": f"Bearer {token}"}, timeout=5)
            assert answer.status_code == 200 and time.monotonic() - t0 < 5
        finally:
            release.set()
            guessing.join(10)
    assert consent.HASH_WORKERS == 1


# -- revocation (RFC 7009) --------------------------------------------------------------------------------


def test_a_public_client_revokes_with_its_client_id_alone(server):
    client = Client.register(server.base)
    held = client.tokens(server.approval_code())
    done = httpx.post(f"{server.base}/revoke", data={"token": held["access_token"], "client_id": client.client_id}, timeout=10)
    assert done.status_code == 200 and done.headers["cache-control"] == "no-store"
    refused = httpx.post(server.url, json=call_body(1, "whoami", {}),
                         headers={**HEADERS, "Authorization": f"Bearer {held['access_token']}"}, timeout=10)
    assert refused.status_code == 401
    assert client.refresh(held["refresh_token"]).json()["error"] == "invalid_grant"  # the whole grant ends (§2.1)


def test_revocation_answers_200_for_what_it_does_not_know_and_refuses_what_is_not_a_client(server):
    client = Client.register(server.base)
    other = Client.register(server.base)
    held = client.tokens(server.approval_code())
    unknown = httpx.post(f"{server.base}/revoke", data={"token": "mva_" + "x" * 43, "client_id": client.client_id,
                                                        "token_type_hint": "something_else"}, timeout=10)
    assert unknown.status_code == 200
    # another client's token: 200 (§2.2), and the token lives on
    assert httpx.post(f"{server.base}/revoke", data={"token": held["access_token"], "client_id": other.client_id},
                      timeout=10).status_code == 200
    assert client.refresh(held["refresh_token"]).status_code == 200
    no_client = httpx.post(f"{server.base}/revoke", data={"token": held["access_token"], "client_id": "nobody"}, timeout=10)
    assert no_client.status_code == 401 and no_client.json()["error"] == "invalid_client"
    no_token = httpx.post(f"{server.base}/revoke", data={"client_id": client.client_id}, timeout=10)
    assert no_token.status_code == 400 and no_token.json()["error"] == "invalid_request"


def test_a_huge_request_line_is_refused_not_served(server):
    """A query string no client library would send (100 KB): refused by the HTTP layer, never a 5xx."""
    head = f"GET /authorize?client_id={'x' * 100_000} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    with socket.create_connection(("127.0.0.1", port_of(server)), timeout=5) as s:
        s.sendall(head)
        answer = s.recv(65536)
    assert answer == b"" or answer.startswith((b"HTTP/1.1 4",)), answer[:100]
