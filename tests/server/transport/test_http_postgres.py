"""Two `memverbs serve --http` processes ("two hosts") on one Postgres brain.

Writes through one are read through the other, a token minted once works on
both, and a delta session's cursor lives in the brain, so it moves the same
whichever process answers.
"""

from __future__ import annotations

import json

import httpx
import pytest

from benchmarks.http_load import HEADERS, RemoteServer, call_body, make_token


@pytest.fixture
def brain_backend() -> str:
    return "postgres"


def call(server, token: str, tool: str, **arguments) -> dict:
    response = httpx.post(
        server.url, json=call_body(1, tool, arguments), headers={**HEADERS, "Authorization": f"Bearer {token}"}, timeout=30
    )
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert not result.get("isError"), result
    return json.loads(result["content"][0]["text"])


def test_two_servers_share_one_postgres_brain(home, env):
    token = make_token(home.root, "team")
    with RemoteServer(home.root, env=env) as a, RemoteServer(home.root, env=env) as b:
        assert a.url != b.url
        first = call(a, token, "delta", session_id="laptop")  # the session's cursor is set through A
        assert first["facts"] == []
        written = call(b, token, "remember", fact="Deploys freeze on Fridays", provenance="standup", entity="teams/infra")
        assert written["status"] == "inserted"
        # The same fact through A is a duplicate of B's: one brain, one dedup.
        again = call(a, token, "remember", fact="Deploys freeze on Fridays", provenance="standup", entity="teams/infra")
        assert (again["status"], again["id"]) == ("duplicate", written["id"])
        assert [f["fact"] for f in call(a, token, "recall", entity="teams/infra")["facts"]] == ["Deploys freeze on Fridays"]
        # The cursor set through A is read through B: a session B had never seen would be a first
        # wake (nothing delivered); instead B delivers what changed since A's call.
        moved = call(b, token, "delta", session_id="laptop")
        assert [f["fact"] for f in moved["facts"]] == ["Deploys freeze on Fridays"]
        assert call(b, token, "delta", session_id="never-seen")["facts"] == []
        # A revocation made once is seen by both.
        from memverbs.server.runtime import Runtime
        from memverbs.server.timeparse import now_ms

        rt = Runtime(home)
        assert rt.brain().revoke_token("team", now_ms()) == 1
        rt.close()
        for server in (a, b):
            denied = httpx.post(server.url, json=call_body(1, "recall", {}), headers={**HEADERS, "Authorization": f"Bearer {token}"})
            assert denied.status_code == 401


def test_eight_writers_over_two_servers_lose_nothing_and_dedup_once(home, env):
    """The benchmark's writers (benchmarks/two_hosts.py) with a fixed count instead of a clock: 8 clients
    split over two servers, then the brain is counted — exactly the acknowledged facts, none twice — and
    each server reads what was written through the other. Then all 8 send one same fact at once: one
    insert, seven duplicates of it, whichever server each went through."""
    from concurrent.futures import ThreadPoolExecutor

    from benchmarks.two_hosts import CLIENTS, WARMUP_CALLS, run_writers, verify

    token = make_token(home.root, "writers")
    per_client = WARMUP_CALLS + 9
    with RemoteServer(home.root, env=env) as a, RemoteServer(home.root, env=env) as b:
        wrote = run_writers([a.url, b.url], token, 300.0, "t-run", cap=per_client)
        assert wrote["errors"] == []
        assert len(wrote["acked"]) == CLIENTS * per_client
        counted = verify(home.root, "t-run", wrote["acked"])
        assert (counted["stored"], counted["lost"], counted["duplicated"]) == (CLIENTS * per_client, 0, 0)
        # people/target-person-0 got client 0's first fact through A and client 7's second through B:
        # each server recalls both
        for server in (a, b):
            seen = call(server, token, "recall", entity="people/target-person-0")
            assert {"t-run client 0 fact 0: deploy window moved", "t-run client 7 fact 1: deploy window moved"} <= {
                f["fact"] for f in seen["facts"]}, seen

        def same(i: int) -> dict:
            return call((a, b)[i % 2], token, "remember", fact="The release train leaves on Tuesdays",
                        provenance="standup", entity="teams/release")

        with ThreadPoolExecutor(CLIENTS) as pool:
            results = list(pool.map(same, range(CLIENTS)))
    assert sorted(r["status"] for r in results) == ["duplicate"] * (CLIENTS - 1) + ["inserted"]
    assert len({r["id"] for r in results}) == 1
