"""`memverbs protocol`: the machine-readable spec, generated from the live definitions.

The same registry objects serve tools/list, so the document and the wire cannot drift
(a test compares them).
"""

from __future__ import annotations

from memverbs.server.errors import PROTOCOL_VERSION
from memverbs.server.protocol.registry import BY_NAME, VERB_NAMES
from memverbs.server.protocol.schemas import ERROR_SCHEMA, RESPONSE_SCHEMAS

VERSIONING_POLICY = (
    "additive-forever: v1 field names and semantics never change; new optional fields/params may be added; "
    "breaking changes require MEMORY_VERBS_v2 (expected never)"
)


def spec_document() -> dict:
    verbs = {}
    for name in VERB_NAMES:
        op = BY_NAME[name]
        verbs[name] = {
            "description": op.description,
            "input_schema": op.input_schema(),
            "annotations": dict(op.annotations or {}),
            "response_schema": RESPONSE_SCHEMAS[name],
        }
    return {
        "protocol": "MEMORY_VERBS",
        "protocol_version": PROTOCOL_VERSION,
        "versioning_policy": VERSIONING_POLICY,
        "verbs": verbs,
        "error_schema": ERROR_SCHEMA,
    }


def spec_summary() -> str:
    lines = [
        f"MEMORY_VERBS v{PROTOCOL_VERSION} — seven memory verbs over MCP, self-describing envelopes, "
        "enumerated errors with a fix.",
        "",
    ]
    for name in VERB_NAMES:
        op = BY_NAME[name]
        params = ", ".join(p.name if p.required else f"{p.name}?" for p in op.params)
        first = op.description.removeprefix("MEMORY VERB (v1): ")
        if first.startswith("["):
            first = first.split("] ", 1)[1].removeprefix("MEMORY VERB (v1): ")
        sentence = first.split(". ")[0].rstrip(".") + "."
        lines.append(f"  {name}({params})")
        lines.append(f"      {sentence}")
    lines += [
        "",
        "Machine-readable: memverbs protocol --json   Certify an endpoint: memverbs protocol conformance [--target URL|CMD]",
        "Usage statistics: memverbs protocol stats   The contract: memverbs docs protocol",
    ]
    return "\n".join(lines)
