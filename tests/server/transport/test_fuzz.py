"""The whole surface under random and adversarial input, over real stdio and real HTTP.

Every tool on the full surface is called with arguments drawn from its schema
and from a pool of hostile values (lone surrogates, line separators, NUL,
huge and non-finite numbers, deep nesting, wrong types, unknown keys), and
raw malformed frames are mixed in. Asserted after every reply: it arrived, it
is a JSON-RPC reply to that request, an error is an enumerated code (never
`internal`) or a standard JSON-RPC code, and no private text appears in it
(the brain holds private facts and pages carrying a canary). After the run:
the server still answers, and `PRAGMA integrity_check` is clean.

Bounded in the default run; `MEMVERBS_FUZZ_EXAMPLES=N` runs longer, and
`python -m benchmarks.fuzz` runs it long and records its figures.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rawmcp import RawMcp

from memverbs.server.errors import ERROR_CODES
from memverbs.server.protocol.surfaces import tool_defs
from memverbs.server.runtime import Runtime

CANARY = "CANARY-7f3a-private"
EXAMPLES = int(os.environ.get("MEMVERBS_FUZZ_EXAMPLES", "60"))
JSONRPC_CODES = {-32700, -32600, -32601, -32602}
TOOLS = tool_defs("full")
NAMES = [t["name"] for t in TOOLS]

HOSTILE_TEXT = st.sampled_from([
    "", " ", "\ud800", "a\udfffb", "\u2028\u2029\u0085", "\r\n\r", "\x00", "people/" + "x" * 5000, "../../etc/passwd",
    "people/alice", "Alice", "people/secret", "Secret", "secret", "1", "2", "3", "'; DROP TABLE facts; --", "%s%n", "😀", "\u202e", "CANARY", "<!-- facts -->", "---\nvisibility: world\n---",
]) | st.text(max_size=40)
PLAUSIBLE_TEXT = st.sampled_from([
    "people/alice", "people/bob", "projects/fuzz", "Alice", "a fact about alice", "2026-01-01", "2020-01-01T00:00:00Z",
    "1d", "7d", "fuzz", "session-1", "# Title\n\nSome body text about [[people/alice]].", "alice, bob",
])
HOSTILE = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False, allow_infinity=False) | HOSTILE_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(HOSTILE_TEXT, inner, max_size=3),
    max_leaves=8,
)


def _value_for(prop: dict):
    """Mostly a value of the declared type (so calls get past validation into the verbs), sometimes anything."""
    kind = prop.get("type")
    if "enum" in prop:
        typed = st.sampled_from(prop["enum"])
    else:
        typed = {"string": PLAUSIBLE_TEXT | PLAUSIBLE_TEXT | HOSTILE_TEXT, "number": st.integers(-5, 10**6) | st.floats(allow_nan=False, allow_infinity=False),
                 "boolean": st.booleans(), "array": st.lists(HOSTILE_TEXT, max_size=3),
                 "object": st.dictionaries(HOSTILE_TEXT, HOSTILE, max_size=2)}.get(kind, HOSTILE)
    return st.one_of(typed, typed, typed, HOSTILE)


def _arguments(tool: dict):
    schema = tool["inputSchema"]
    props, required = schema.get("properties", {}), set(schema.get("required", ()))
    fixed = st.fixed_dictionaries({k: _value_for(v) for k, v in props.items() if k in required},
                                  optional={k: _value_for(v) for k, v in props.items() if k not in required})
    extra = st.dictionaries(HOSTILE_TEXT, HOSTILE, max_size=2) | st.just({})
    return st.tuples(fixed, extra).map(lambda pair: {**pair[1], **pair[0]})


CALL = st.sampled_from(TOOLS).flatmap(
    lambda t: st.tuples(st.just(t["name"]), st.one_of(_arguments(t), _arguments(t), _arguments(t), HOSTILE)))
RAW_FRAMES = st.sampled_from([
    b"not json", b"{", b"[]", b"[1]", b"null", b'"x"', b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":NaN}',
    b'{"jsonrpc":"2.0","id":"\\udc00","method":"ping"}', b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","arguments":{"limit":1e999}}}',
    b"[" * 5000 + b"]" * 5000, b'{"jsonrpc":"2.0","id":{},"method":"ping"}', b"\xc3\x28",
])


def seed_private(home) -> None:
    runtime = Runtime(home)
    local = runtime.local_dispatcher()
    for args in (
        {"fact": f"private note {CANARY}", "provenance": "fuzz", "entity": "people/alice", "visibility": "private"},
        {"fact": f"another {CANARY} secret", "provenance": "fuzz", "visibility": "private"},
        {"fact": "Alice works on the fuzz project", "provenance": "fuzz", "entity": "people/alice"},
    ):
        assert not local.call("remember", args).is_error
    pages = [
        ("people/alice", f"---\ntitle: Alice\n---\nAlice is public.\n\n<!-- facts -->\n- Alice likes tea\n- [private] {CANARY} in a fence\n"
         f"  continued {CANARY}\n<!-- /facts -->\n"),
        ("people/secret", f"---\ntitle: Secret\nvisibility: private\n---\nThe secret page {CANARY}.\n"),
    ]
    for slug, content in pages:
        outcome = local.call("put_page", {"slug": slug, "content": content})
        assert not outcome.is_error, outcome.body
    runtime.close()


class Tally:
    def __init__(self) -> None:
        self.outcomes: Counter = Counter()
        self.calls = 0

    def check(self, line: bytes, expect_id) -> None:
        assert CANARY.encode() not in line, line[:400]
        reply = json.loads(line)
        assert reply["jsonrpc"] == "2.0"
        if expect_id is not None:
            assert reply["id"] == expect_id
        self.calls += 1
        if "error" in reply:
            assert reply["error"]["code"] in JSONRPC_CODES, reply
            self.outcomes[f"jsonrpc {reply['error']['code']}"] += 1
            return
        result = reply["result"]
        text = result["content"][0]["text"]
        if result.get("isError"):
            code = json.loads(text)["error"]
            assert code in ERROR_CODES and code != "internal", text
            self.outcomes[code] += 1
        else:
            self.outcomes["ok"] += 1


def fuzz_stdio(memverbs_cmd, env, home, examples: int) -> Tally:
    seed_private(home)
    peer = RawMcp([*memverbs_cmd, "serve", "--surface", "full"], env)
    peer.handshake()
    tally = Tally()
    counter = iter(range(10**9))

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.one_of(CALL.map(lambda c: ("call", c)), RAW_FRAMES.map(lambda f: ("raw", f))))
    def one(item):
        kind, payload = item
        if kind == "raw":
            tally.check(peer.frame(payload), None)
            return
        msg_id = next(counter)
        name, arguments = payload
        msg = {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
        tally.check(peer.frame(json.dumps(msg).encode(), msg_id), msg_id)

    try:
        one()
        assert peer.send("ping")["result"] == {}
    finally:
        peer.close()
    assert peer.proc.returncode == 0
    with sqlite3.connect(home.root / "brain.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    return tally


def test_fuzz_the_full_surface_over_stdio(memverbs_cmd, env, home):
    tally = fuzz_stdio(memverbs_cmd, env, home, EXAMPLES)
    assert tally.calls >= EXAMPLES and "internal" not in tally.outcomes


HTTP_JSONRPC_STATUS = {200, 400, 404, 413, 422}


def fuzz_http(home, examples: int) -> Tally:
    import httpx

    from benchmarks.http_load import HEADERS, RemoteServer, make_token

    seed_private(home)
    token = make_token(home.root, "fuzz")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVERBS_")}
    tally = Tally()
    counter = iter(range(10**9))
    with RemoteServer(home.root, env=env) as server, httpx.Client(timeout=30) as client:
        headers = {**HEADERS, "Authorization": f"Bearer {token}"}

        @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(st.one_of(CALL.map(lambda c: ("call", c)), RAW_FRAMES.map(lambda f: ("raw", f))))
        def one(item):
            kind, payload = item
            if kind == "raw":
                r = client.post(server.url, content=payload, headers=headers)
                assert r.status_code < 500, (payload[:80], r.status_code, r.text[:300])
                assert CANARY not in r.text
                tally.calls += 1
                tally.outcomes[f"http {r.status_code}"] += 1
                return
            msg_id = next(counter)
            name, arguments = payload
            body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "tools/call",
                               "params": {"name": name, "arguments": arguments}})
            r = client.post(server.url, content=body.encode("utf-8", "surrogatepass"), headers=headers)
            assert r.status_code < 500, (body[:200], r.status_code, r.text[:300])
            if r.status_code != 200:
                assert CANARY not in r.text
                tally.calls += 1
                tally.outcomes[f"http {r.status_code}"] += 1
                return
            tally.check(r.content, msg_id)

        one()
        assert client.get(server.base + "/health").json()["status"] == "ok"
    with sqlite3.connect(home.root / "brain.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    return tally


def test_fuzz_the_full_surface_over_http(home):
    tally = fuzz_http(home, EXAMPLES)
    assert tally.calls >= EXAMPLES and "internal" not in tally.outcomes
