"""The unauthenticated OAuth routes under random and adversarial requests, on a real `serve --http`.

Each example is one request to `/register`, `/authorize`, `/consent`, `/token` or `/revoke` (and the
metadata documents): a method, a form, JSON or raw bytes drawn from the fields each route reads and
a pool of hostile values (oversized text, NUL, lone surrogates, wrong types, forged credentials,
redirect URIs of every shape), from a source address of its own (X-Forwarded-For, which the server
trusts from loopback as it trusts a proxy there). Asserted after every answer: a status below 500,
no traceback, a bounded answer, nothing private. After the run: the server still answers, the
brain's OAuth tables are within their bounds (limits.py), `PRAGMA integrity_check` is clean.

Bounded in the default run; `MEMVERBS_FUZZ_EXAMPLES=N` runs longer, and `python -m benchmarks.fuzz`
runs it long and records its figures.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import Counter
from urllib.parse import urlencode

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oauth_support import CALLBACK, clean_env

from memverbs.server.oauth import limits

EXAMPLES = int(os.environ.get("MEMVERBS_FUZZ_EXAMPLES", "60"))
CANARY = "CANARY-7f3a-private"
ROUTES = ("/register", "/authorize", "/consent", "/token", "/revoke")
MAX_ANSWER_BYTES = 64 * 1024  # the consent page is the largest answer, a few KiB

HOSTILE = st.sampled_from([
    "", " ", "\x00", "\ud800", "\u2028", "x" * 5000, "x" * 20000, "../../etc/passwd", "'; DROP TABLE oauth_clients; --",
    "mva_" + "A" * 43, "mvr_" + "A" * 43, "mvc_" + "A" * 43, "mvq_" + "A" * 43, "none", "client_secret_post",
    "authorization_code", "refresh_token", "code", "S256", "plain", "read write", "surface:full admin", CALLBACK,
    "https://evil.example/cb", "javascript:alert(1)", "http://127.0.0.1:9/cb#frag", "approve", "deny", "<script>x</script>",
]) | st.text(max_size=60)  # never the canary: a request's own `state` comes back, as OAuth wants
FIELDS = st.sampled_from([
    "client_id", "client_secret", "grant_type", "code", "code_verifier", "redirect_uri", "refresh_token", "scope",
    "resource", "token", "token_type_hint", "request", "decision", "owner_secret", "surface", "response_type",
    "code_challenge", "code_challenge_method", "state", "unknown_field",
])
FORM = st.dictionaries(FIELDS, HOSTILE, max_size=8)
METADATA_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-2**40, 2**40) | HOSTILE,
    lambda inner: st.lists(inner, max_size=12) | st.dictionaries(HOSTILE, inner, max_size=4), max_leaves=20)
METADATA = st.dictionaries(st.sampled_from([
    "client_name", "redirect_uris", "token_endpoint_auth_method", "grant_types", "response_types", "scope", "contacts",
    "logo_uri", "client_uri", "jwks", "jwks_uri", "software_id", "software_version", "application_type", "extra"]),
    METADATA_VALUE, max_size=8)
RAW = st.binary(max_size=300) | st.sampled_from([b"{", b"[]", b"null", b"\xff\xfe", b"a=%ZZ&b", b"=" * 200])

REQUEST = st.one_of(
    st.tuples(st.just("POST"), st.sampled_from(ROUTES), st.just("form"), FORM),
    st.tuples(st.just("POST"), st.just("/register"), st.just("json"), METADATA),
    st.tuples(st.just("POST"), st.sampled_from(ROUTES), st.just("raw"), RAW),
    st.tuples(st.just("GET"), st.sampled_from(("/authorize", "/consent", "/.well-known/oauth-authorization-server",
                                               "/.well-known/oauth-protected-resource/mcp")), st.just("query"), FORM),
    st.tuples(st.sampled_from(("OPTIONS", "DELETE", "PUT")), st.sampled_from(ROUTES), st.just("form"), FORM),
)


class Tally:
    def __init__(self) -> None:
        self.calls = 0
        self.outcomes: Counter[str] = Counter()


def fuzz_oauth(home, examples: int) -> Tally:
    import httpx

    from benchmarks.http_load import RemoteServer
    from memverbs.server.oauth import owner
    from memverbs.server.runtime import Runtime

    runtime = Runtime(home)
    try:
        owner.set_password(runtime.brain(), "the owner password, long enough")
        runtime.local_dispatcher().call("put_page", {"slug": "secret/plan", "content": f"---\nvisibility: private\n---\n{CANARY}\n"})
    finally:
        runtime.close()
    tally = Tally()
    addresses = iter(range(10**9))
    with RemoteServer(home.root, env=clean_env(home.root)) as server, httpx.Client(timeout=30) as client:
        # one real client, so some forms name a client the server knows
        known = client.post(f"{server.base}/register", json={"redirect_uris": [CALLBACK],
                                                              "token_endpoint_auth_method": "none"}).json()["client_id"]

        @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(REQUEST, st.booleans())
        def one(request, as_known):
            method, path, kind, payload = request
            n = next(addresses)
            headers = {"X-Forwarded-For": f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}"}
            if kind in ("form", "query") and as_known:
                payload = {**payload, "client_id": known}
            text = {k: v.encode("utf-8", "surrogatepass").decode("utf-8", "replace") for k, v in payload.items()} \
                if kind in ("form", "query") else payload
            if kind == "json":
                body = json.dumps(payload, default=str).encode("utf-8", "surrogatepass")
                r = client.request(method, server.base + path, content=body, headers={**headers, "Content-Type": "application/json"})
            elif kind == "raw":
                r = client.request(method, server.base + path, content=payload,
                                   headers={**headers, "Content-Type": "application/x-www-form-urlencoded"})
            elif kind == "query":  # a URL the client library will send (it refuses one over 64 KiB itself)
                query = urlencode({k: v[:2000] for k, v in text.items()})
                r = client.request(method, f"{server.base}{path}?{query}", headers=headers)
            else:
                r = client.request(method, server.base + path, data=text, headers=headers)
            assert r.status_code < 500, (method, path, kind, r.status_code, r.text[:300])
            assert "Traceback" not in r.text and CANARY not in r.text
            assert len(r.content) <= MAX_ANSWER_BYTES
            tally.calls += 1
            tally.outcomes[f"{path} {r.status_code}"] += 1

        one()
        assert client.get(server.base + "/health").json()["status"] == "ok"
    with sqlite3.connect(home.root / "brain.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        clients, largest = db.execute("SELECT count(*), coalesce(max(length(metadata)), 0) FROM oauth_clients").fetchone()
        pending = db.execute("SELECT count(*) FROM oauth_tokens WHERE kind = 'request'").fetchone()[0]
    assert clients <= limits.MAX_CLIENTS and largest <= limits.REGISTRATION_BODY_BYTES
    assert pending <= limits.MAX_PENDING
    return tally


def test_fuzz_the_oauth_routes(home):
    tally = fuzz_oauth(home, EXAMPLES)
    assert tally.calls >= EXAMPLES
