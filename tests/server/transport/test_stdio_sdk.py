"""The real `memverbs serve` driven by the official MCP client: shapes, envelopes, conformance."""

import json

import anyio
import pytest

from memverbs.server.conformance.connect import connect
from memverbs.server.conformance.runner import run
from memverbs.server.protocol.schemas import ERROR_SCHEMA, RESPONSE_SCHEMAS, validate


def with_endpoint(target, env, body):
    async def main():
        async with connect(target, env=env) as endpoint:
            return await body(endpoint)

    return anyio.run(main)


def serve_cmd(memverbs_cmd, surface):
    return " ".join([*memverbs_cmd, "serve", "--surface", surface])


@pytest.mark.parametrize(("surface", "passed", "skipped"), [("full", 27, 1), ("starter", 27, 1), ("verbs", 25, 3)])
def test_conformance_cases_pass(memverbs_cmd, env, surface, passed, skipped):
    report = with_endpoint(serve_cmd(memverbs_cmd, surface), env, lambda ep: run(ep.list_tools, ep.call_tool))
    failures = [r for r in report["results"] if r["status"] == "fail"]
    assert failures == []
    assert (report["passed"], report["failed"], report["skipped"]) == (passed, 0, skipped)


def test_conformance_with_synthesize_passes_on_unavailable(memverbs_cmd, env):
    report = with_endpoint(serve_cmd(memverbs_cmd, "full"), env, lambda ep: run(ep.list_tools, ep.call_tool, synthesize=True))
    assert (report["passed"], report["failed"], report["skipped"]) == (28, 0, 0)


CALLS = [
    ("remember", {"fact": "shape fact", "provenance": "p", "entity": "people/shape", "ttl": "1d", "kind": "event"}),
    ("remember", {"fact": "shape fact", "provenance": "p", "entity": "people/shape", "ttl": "1d", "kind": "event"}),
    ("recall", {}),
    ("recall", {"entity": "people/shape", "budget_tokens": 50, "include_expired": True, "grep": "shape", "limit": 5}),
    ("recall", {"query": "shape person", "budget_tokens": 0.5}),
    ("recall", {"supersessions": True, "include_pending": True}),
    ("entity", {"name": "people/shape"}),
    ("entity", {"name": "Shape"}),
    ("entity", {"name": "nobody at all"}),
    ("context_pack", {"entities": "people/shape,Shape,nobody", "budget_tokens": 40, "session_id": "s"}),
    ("context_pack", {"entities": "people/shape", "since": "2020-01-01"}),
    ("delta", {"session_id": "sdk-session"}),
    ("delta", {"session_id": "sdk-session", "entities": "people/shape"}),
    ("delta", {"since": "1970-01-01T00:00:00Z", "since_slug": "a", "budget_tokens": 3}),
    ("forget", {"id": "1", "reason": "shape"}),
]

ERRORS = [
    ("remember", {"fact": "x", "provenance": "p", "kind": "nope"}, "invalid_params"),
    ("remember", {"fact": "x", "provenance": "  "}, "provenance_required"),
    ("remember", {"fact": "x", "provenance": "p", "ttl": "PT5M"}, "invalid_params"),
    ("remember", {"fact": "x", "provenance": "p", "ttl": "soonish"}, "invalid_params"),
    ("entity", {"name": ""}, "invalid_params"),
    ("entity", {}, "invalid_params"),
    ("forget", {"id": 5}, "invalid_params"),
    ("forget", {"id": "nope"}, "not_found"),
    ("recall", {"since": "garbage"}, "invalid_params"),
    ("recall", {"limit": "5"}, "invalid_params"),
    ("synthesize", {"question": "q"}, "unavailable"),
    ("synthesize", {"question": "q", "until": "later"}, "invalid_params"),
    ("context_pack", {"entities": ["a", "b"]}, "invalid_params"),
    ("context_pack", {"entities": "a", "since": "nope"}, "invalid_params"),
    ("delta", {}, "invalid_params"),
    ("delta", {"since": "nope"}, "invalid_params"),
]


def test_every_verb_response_matches_its_schema(memverbs_cmd, env):
    async def body(ep):
        await ep.call_tool("put_page", {"slug": "people/shape", "content": "---\ntitle: Shape\n---\nShape person page."})
        out = []
        for name, params in CALLS:
            out.append((name, params, *await ep.call_tool(name, params)))
        return out

    for name, params, text, is_error in with_endpoint(serve_cmd(memverbs_cmd, "full"), env, body):
        assert not is_error, (name, params, text)
        problems = validate(json.loads(text), RESPONSE_SCHEMAS[name])
        assert problems == [], (name, params, problems)


def test_every_error_is_an_enumerated_envelope_with_a_fix(memverbs_cmd, env):
    async def body(ep):
        return [(name, code, *await ep.call_tool(name, params)) for name, params, code in ERRORS]

    for name, code, text, is_error in with_endpoint(serve_cmd(memverbs_cmd, "verbs"), env, body):
        envelope = json.loads(text)
        assert is_error, (name, envelope)
        assert envelope["error"] == code, (name, envelope)
        assert validate(envelope, ERROR_SCHEMA) == []
        assert envelope["suggestion"].strip() and envelope["protocol_version"] == 1
