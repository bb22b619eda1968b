"""OAuth on a real `serve --http`: the metadata documents, the 401 and 403 challenges, and every refusal.

Each refusal must be the RFC's error and must leak nothing: no credential is
echoed, no token is issued, and a replay ends what it could have stolen.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import httpx
import pytest
from helpers import init_home
from oauth_support import CALLBACK, Client, approval_code, clean_env, pkce, query

from benchmarks.http_load import HEADERS, RemoteServer, call_body, make_token


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return init_home(tmp_path_factory.mktemp("oauth") / "home").root


@pytest.fixture(scope="module")
def server(home):
    with RemoteServer(home, env=clean_env(home)) as srv:
        yield srv
        assert srv.stop() == 0, srv.stderr()


@pytest.fixture
def code(memverbs_cmd, home):
    return lambda: approval_code(memverbs_cmd, home)


def mcp(server, token: str, tool: str, **arguments) -> httpx.Response:
    return httpx.post(server.url, json=call_body(1, tool, arguments),
                      headers={**HEADERS, "Authorization": f"Bearer {token}"}, timeout=30)


def tool_result(response: httpx.Response) -> dict:
    assert response.status_code == 200, response.text
    return json.loads(response.json()["result"]["content"][0]["text"])


def error_of(response: httpx.Response) -> str:
    assert response.headers["cache-control"] == "no-store", response.headers
    return response.json()["error"]


def db(home: Path) -> sqlite3.Connection:
    return sqlite3.connect(home / "brain.db")


# -- discovery ------------------------------------------------------------------------------------


def test_the_metadata_documents_carry_the_rfcs_required_fields(server):
    prm = httpx.get(f"{server.base}/.well-known/oauth-protected-resource/mcp", timeout=30).json()
    # RFC 9728 §2: `resource` is required; MCP requires `authorization_servers`
    assert prm["resource"] == server.url and prm["authorization_servers"] == [server.base]
    assert {"read", "write"} <= set(prm["scopes_supported"]) and prm["bearer_methods_supported"] == ["header"]
    assert httpx.get(f"{server.base}/.well-known/oauth-protected-resource", timeout=30).json() == prm
    asm = httpx.get(f"{server.base}/.well-known/oauth-authorization-server", timeout=30).json()
    # RFC 8414 §2: issuer, authorization_endpoint, token_endpoint, response_types_supported are required;
    # §3.3: the issuer is the identifier the metadata was fetched for, exactly
    assert asm["issuer"] == server.base
    assert asm["authorization_endpoint"] == f"{server.base}/authorize" and asm["token_endpoint"] == f"{server.base}/token"
    assert asm["response_types_supported"] == ["code"]
    assert asm["code_challenge_methods_supported"] == ["S256"]  # PKCE, S256 only
    assert asm["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert asm["registration_endpoint"] == f"{server.base}/register" and asm["revocation_endpoint"] == f"{server.base}/revoke"
    assert asm["authorization_response_iss_parameter_supported"] is True  # RFC 9207
    assert "none" in asm["token_endpoint_auth_methods_supported"]
    for url in (asm["issuer"], *(v for k, v in asm.items() if k.endswith("_endpoint"))):
        assert "#" not in url and "?" not in url


def test_a_401_points_at_the_resource_metadata_and_static_tokens_keep_working(server, home):
    refused = httpx.post(server.url, json=call_body(1, "recall", {}), headers=HEADERS, timeout=30)
    challenge = refused.headers["www-authenticate"]
    assert refused.status_code == 401 and challenge.startswith('Bearer realm="memverbs"')
    assert f'resource_metadata="{server.base}/.well-known/oauth-protected-resource/mcp"' in challenge
    wrong = httpx.post(server.url, json=call_body(1, "recall", {}), headers={**HEADERS, "Authorization": "Bearer mva_" + "x" * 43})
    assert wrong.status_code == 401 and 'error="invalid_token"' in wrong.headers["www-authenticate"]
    static = make_token(home, "static-beside-oauth")
    assert tool_result(mcp(server, static, "whoami"))["client_id"] == "token:static-beside-oauth"


# -- the grant ------------------------------------------------------------------------------------


def test_an_oauth_client_is_a_remote_caller_on_its_own_lane(server, home, code):
    client = Client.register(server.base, name="lane test")
    token = client.tokens(code())["access_token"]
    me = tool_result(mcp(server, token, "whoami"))
    assert me["client_id"] == f"oauth:{client.client_id}"
    assert tool_result(mcp(server, token, "delta", session_id="s1"))["protocol_version"] == 1
    lanes = {r[0] for r in db(home).execute("SELECT client_id FROM session_cursors WHERE session_id = 's1'")}
    assert lanes == {f"oauth:{client.client_id}"}
    events = [json.loads(line) for line in (home / "integrations" / "memory-verbs" / "usage.jsonl").read_text().splitlines()]
    assert any(e.get("client_id") == f"oauth:{client.client_id}" and e["remote"] is True for e in events)


def test_the_owner_grants_less_than_asked_never_more(server, code):
    client = Client.register(server.base)
    granted = client.tokens(code(), scope="read surface:starter", scopes=("read", "write"), surface="full")
    assert granted["scope"] == "read surface:starter"  # write was not asked: ticking it adds nothing; full is capped
    listed = httpx.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                        headers={**HEADERS, "Authorization": f"Bearer {granted['access_token']}"}, timeout=30).json()
    names = {t["name"] for t in listed["result"]["tools"]}
    assert "whoami" in names and "delete_page" not in names and "remember" in names


def test_a_missing_scope_is_403_insufficient_scope_naming_it(server, code):
    client = Client.register(server.base)
    reader = client.tokens(code(), scopes=("read",))
    assert reader["scope"] == "read surface:full"
    refused = mcp(server, reader["access_token"], "remember", fact="x", provenance="p")
    challenge = refused.headers["www-authenticate"]
    assert refused.status_code == 403 and 'error="insufficient_scope"' in challenge and 'scope="write"' in challenge
    assert "resource_metadata=" in challenge and refused.json()["error"] == "insufficient_scope"
    assert tool_result(mcp(server, reader["access_token"], "recall"))["protocol_version"] == 1
    # a tool the grant cannot see is unknown_tool, exactly as for any caller: nothing about it leaks
    narrow = Client.register(server.base).tokens(code(), scopes=("read",), surface="verbs")
    assert tool_result(mcp(server, narrow["access_token"], "put_page", slug="a/b", content="# b\n"))["error"] == "unknown_tool"


def test_the_consent_page_names_the_client_and_refuses_a_wrong_login(server):
    client = Client.register(server.base, name="<b>Evil</b> Corp")
    challenge = pkce()[1]
    asked = client.authorize(challenge)
    page = httpx.get(asked.headers["location"], timeout=30)
    assert page.status_code == 200 and "&lt;b&gt;Evil&lt;/b&gt; Corp" in page.text and "<b>Evil</b>" not in page.text
    assert page.headers["x-frame-options"] == "DENY" and "frame-ancestors 'none'" in page.headers["content-security-policy"]
    for attempt in range(5):
        wrong = client.consent(asked.headers["location"], "not-the-code")
        if attempt < 4:
            assert wrong.status_code == 401 and "not right" in wrong.text
    # the fifth wrong login ends the request: the client hears access_denied, with its state and our iss
    assert wrong.status_code == 303
    assert query(wrong.headers["location"]) == {"error": "access_denied", "state": "st-1", "iss": server.base}
    assert httpx.get(asked.headers["location"], timeout=30).status_code == 400  # spent


def test_deny_sends_access_denied(server):
    client = Client.register(server.base)
    asked = client.authorize(pkce()[1])
    denied = client.consent(asked.headers["location"], "", decision="deny")
    assert query(denied.headers["location"]) == {"error": "access_denied", "state": "st-1", "iss": server.base}


# -- refusals -------------------------------------------------------------------------------------


def test_pkce_wrong_or_missing_verifier(server, code):
    client = Client.register(server.base)
    challenge = pkce()[1]
    issued = client.code(code(), challenge)
    wrong = client.exchange(issued, pkce()[0])
    assert wrong.status_code == 400 and error_of(wrong) == "invalid_grant" and issued not in wrong.text
    missing = client.exchange(issued, None)
    assert missing.status_code == 400 and error_of(missing) == "invalid_request"
    assert "access_token" not in wrong.text + missing.text
    # only S256: a plain challenge is refused at /authorize
    plain = client.authorize(challenge, code_challenge_method="plain")
    assert plain.status_code == 302 and query(plain.headers["location"])["error"] == "invalid_request"


def test_a_reused_code_is_refused_and_ends_what_it_issued(server, code):
    client = Client.register(server.base)
    verifier, challenge = pkce()
    issued = client.code(code(), challenge)
    first = client.exchange(issued, verifier)
    assert first.status_code == 200
    again = client.exchange(issued, verifier)
    assert again.status_code == 400 and error_of(again) == "invalid_grant" and "access_token" not in again.text
    # the replay revoked the tokens the code had already bought
    assert mcp(server, first.json()["access_token"], "recall").status_code == 401
    assert error_of(client.refresh(first.json()["refresh_token"])) == "invalid_grant"


def test_an_expired_code_is_refused(server, home, code):
    client = Client.register(server.base)
    verifier, challenge = pkce()
    issued = client.code(code(), challenge)
    with db(home) as conn:
        conn.execute("UPDATE oauth_tokens SET expires_at = 1 WHERE kind = 'code' AND id = (SELECT max(id) FROM oauth_tokens "
                     "WHERE kind = 'code')")
    expired = client.exchange(issued, verifier)
    assert expired.status_code == 400 and error_of(expired) == "invalid_grant" and "expired" in expired.text


def test_a_redirect_uri_not_registered(server):
    client = Client.register(server.base)
    other = Client(server.base, client.client_id, "http://127.0.0.1:9/elsewhere")
    refused = other.authorize(pkce()[1])
    # never redirected to the unregistered URI: answered here
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_request" and "location" not in refused.headers
    # registration itself accepts only loopback and the known connector callbacks by default
    evil = httpx.post(f"{server.base}/register", json={"redirect_uris": ["https://evil.example/cb"],
                                                      "token_endpoint_auth_method": "none"}, timeout=30)
    assert evil.status_code == 400 and evil.json()["error"] == "invalid_redirect_uri"
    for known in ("https://claude.ai/api/mcp/auth_callback", "https://chatgpt.com/connector_platform_oauth_redirect"):
        ok = httpx.post(f"{server.base}/register", json={"redirect_uris": [known], "client_name": "connector"}, timeout=30)
        assert ok.status_code == 201, ok.text


def test_a_token_for_another_resource(server, home, code):
    client = Client.register(server.base)
    asked = client.authorize(pkce()[1], resource="https://other.example/mcp")
    assert asked.status_code == 302
    assert query(asked.headers["location"]) == {"error": "invalid_target", "error_description": query(asked.headers["location"])["error_description"],
                                                "state": "st-1", "iss": server.base}
    verifier, challenge = pkce()
    issued = client.code(code(), challenge)
    other = client.exchange(issued, verifier, resource="https://other.example/mcp")
    assert other.status_code == 400 and error_of(other) == "invalid_target"
    # a token issued for this server's URL is refused by a server with another public URL on the same brain
    token = client.tokens(code())["access_token"]
    with RemoteServer(home, "--public-url", "http://127.0.0.1:1/mcp", env=clean_env(home)) as elsewhere:
        refused = mcp(elsewhere, token, "recall")
        assert refused.status_code == 401 and 'error="invalid_token"' in refused.headers["www-authenticate"]
    assert mcp(server, token, "recall").status_code == 200


def test_a_refresh_token_after_rotation_ends_the_family(server, code):
    client = Client.register(server.base)
    first = client.tokens(code())
    rotated = client.refresh(first["refresh_token"])
    assert rotated.status_code == 200 and rotated.json()["refresh_token"] != first["refresh_token"]
    replay = client.refresh(first["refresh_token"])
    assert replay.status_code == 400 and error_of(replay) == "invalid_grant" and "access_token" not in replay.text
    # a rotated token presented again is theft or a bug: everything issued from that authorization ends
    assert mcp(server, rotated.json()["access_token"], "recall").status_code == 401
    assert error_of(client.refresh(rotated.json()["refresh_token"])) == "invalid_grant"


def test_scope_escalation(server, code):
    client = Client.register(server.base)
    unknown = client.authorize(pkce()[1], scope="read admin")
    assert query(unknown.headers["location"])["error"] == "invalid_scope"
    reader = client.tokens(code(), scopes=("read",))
    wider = client.refresh(reader["refresh_token"], scope="read write")
    assert wider.status_code == 400 and error_of(wider) == "invalid_scope"
    surface = client.refresh(reader["refresh_token"], scope="read surface:full")  # what it holds: fine
    assert surface.status_code == 200 and surface.json()["scope"] == "read surface:full"


def test_a_revoked_client_is_refused_at_its_next_request(server, home, code, memverbs_cmd):
    client = Client.register(server.base, name="soon revoked")
    held = client.tokens(code())
    assert mcp(server, held["access_token"], "recall").status_code == 200
    listed = subprocess.run([*memverbs_cmd, "auth", "clients", "--json"], env=clean_env(home), capture_output=True,
                            text=True, timeout=60)
    row = next(r for r in json.loads(listed.stdout) if r["client_id"] == client.client_id)
    assert (row["name"], row["scopes"], row["surface"], row["redirect_uris"]) == ("soon revoked", "read,write", "full", [CALLBACK])
    assert row["last_used_at"] is not None
    revoke = subprocess.run([*memverbs_cmd, "auth", "clients", "--revoke", client.client_id], env=clean_env(home),
                            capture_output=True, text=True, timeout=60)
    assert revoke.returncode == 0, revoke.stderr
    assert mcp(server, held["access_token"], "recall").status_code == 401
    refused = client.refresh(held["refresh_token"])
    assert refused.status_code == 401 and refused.json()["error"] == "invalid_client"
    again = client.authorize(pkce()[1])
    assert again.status_code == 400 and again.json()["error"] == "invalid_request"


def test_revocation_endpoint(server, code):
    client = Client.register(server.base)
    held = client.tokens(code())
    # (the SDK's revocation handler wants `client_secret` present, empty for a public client)
    done = httpx.post(f"{server.base}/revoke", data={"client_id": client.client_id, "token": held["refresh_token"],
                                                       "token_type_hint": "refresh_token", "client_secret": ""}, timeout=30)
    assert done.status_code == 200
    assert mcp(server, held["access_token"], "recall").status_code == 401  # RFC 7009 §2.1: the whole grant


def test_private_memory_never_reaches_an_oauth_caller(server, home, code):
    from helpers import Client as Local

    from memverbs.server.home import Home
    from memverbs.server.runtime import Runtime

    runtime = Runtime(Home(home))
    local = Local(runtime.local_dispatcher())
    local.ok("remember", fact="OAUTH-PRIV-SENTINEL pin", provenance="t", entity="people/oauthy", visibility="private")
    local.ok("remember", fact="world fact about oauthy", provenance="t", entity="people/oauthy")
    local.ok("put_page", slug="notes/oauth-hidden", content="---\ntitle: OAUTH-PRIV-PAGE\nvisibility: private\n---\n# x\n")
    runtime.close()
    token = Client.register(server.base).tokens(code())["access_token"]
    seen = ""
    for tool, arguments in (("recall", {"entity": "people/oauthy"}), ("recall", {"query": "OAUTH-PRIV-SENTINEL"}),
                            ("entity", {"name": "people/oauthy"}), ("search", {"query": "OAUTH-PRIV-PAGE"}),
                            ("get_page", {"slug": "notes/oauth-hidden"}), ("list_pages", {}),
                            ("context_pack", {"entities": "people/oauthy", "include_private": True})):
        text = mcp(server, token, tool, **arguments).text
        assert "OAUTH-PRIV" not in text, (tool, text)
        seen += text
    assert "world fact about oauthy" in seen


def test_oauth_is_served_only_where_its_issuer_can_be_trusted():
    from memverbs.server.oauth.server import configure
    from memverbs.server.settings import Settings

    here = "http://127.0.0.1:3131/mcp"
    config, _ = configure(None, "full", "default", "", here)
    assert (config.issuer, config.resource, config.registration) == ("http://127.0.0.1:3131", here, "known")
    behind, _ = configure(None, "verbs", "default", "https://brain.example.com/mcp/", "http://0.0.0.0:3131/mcp")
    assert (behind.issuer, behind.resource, behind.ceiling) == ("https://brain.example.com", "https://brain.example.com/mcp", "verbs")
    plain, why = configure(None, "full", "default", "", "http://10.0.0.5:3131/mcp")
    assert plain is None and "plain http" in why and "--public-url" in why
    off, why = configure(Settings(oauth={"enabled": False}), "full", "default", "", here)
    assert off is None and "oauth.enabled" in why
