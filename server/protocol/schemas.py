"""RESPONSE_SCHEMAS and ERROR_SCHEMA: the frozen v1 response shapes.

A JSON-Schema subset (type — possibly a union list —, required, properties,
enum, const, items). `protocol --json` ships them and the conformance runner
validates live responses against them with `validate()` below, which mirrors
the reference validator: non-strict (unknown keys allowed), stops descending
on a type mismatch, skips enum checks for null.
"""

from __future__ import annotations

from memverbs.server.errors import ERROR_CODES
from memverbs.server.protocol.verb_defs import KINDS

EVIDENCE = ["alias_hit", "exact_title_match", "high_vector_match", "keyword_exact", "weak_semantic"]
CREATE_SAFETY = ["exists", "probable", "unknown"]
REMEMBER_STATUS = ["inserted", "duplicate", "superseded"]
SYNTHESIS_STATUS = ["ok", "empty_answer", "not_json", "no_llm", "model_unusable", "llm_error", "extractive_fallback"]
THREAD_KIND = ["commitment", "recent_event"]

_PV = {"type": "integer", "const": 1}
_STR_OR_NULL = {"type": ["string", "null"]}
_BUDGET = {
    "budget_tokens": {"type": "integer"},
    "budget_used": {"type": "integer"},
    "dropped_count": {"type": "integer"},
}
_THREAD = {
    "type": "object",
    "required": ["kind", "text"],
    "properties": {"kind": {"type": "string", "enum": THREAD_KIND}, "text": {"type": "string"}, "date": _STR_OR_NULL},
}
_SEARCH_RESULT = {
    "type": "object",
    "required": ["slug", "title", "evidence", "create_safety", "provenance"],
    "properties": {
        "slug": {"type": "string"},
        "title": _STR_OR_NULL,
        "chunk": _STR_OR_NULL,
        "evidence": {"type": "string", "enum": EVIDENCE},
        "create_safety": {"type": "string", "enum": CREATE_SAFETY},
        "provenance": {"type": "string"},
    },
}

RESPONSE_SCHEMAS: dict[str, dict] = {
    "recall": {
        "type": "object",
        "required": ["facts", "total", "protocol_version"],
        "properties": {
            "facts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id", "fact", "kind", "fact_id", "provenance"],
                    "properties": {
                        "id": {"type": "integer"},
                        "fact": {"type": "string"},
                        "kind": {"type": "string", "enum": list(KINDS)},
                        "fact_id": {"type": "string"},
                        "provenance": {"type": "string"},
                        "entity_slug": _STR_OR_NULL,
                        "valid_until": _STR_OR_NULL,
                        "visibility": {"type": "string", "enum": ["private", "world"]},
                    },
                },
            },
            "total": {"type": "integer"},
            "pending_consolidation_count": {"type": "integer"},
            "protocol_version": _PV,
            "results": {"type": "array", "items": _SEARCH_RESULT},
            "search_degraded": {"type": "string"},
            **_BUDGET,
        },
    },
    "remember": {
        "type": "object",
        "required": ["id", "status", "status_text", "entity_slug", "valid_until", "protocol_version"],
        "properties": {
            "id": {"type": "string"},
            "status": {"type": "string", "enum": REMEMBER_STATUS},
            "status_text": {"type": "string"},
            "entity_slug": _STR_OR_NULL,
            "valid_until": _STR_OR_NULL,
            "degraded_dedup": {"type": "boolean"},
            "protocol_version": _PV,
        },
    },
    "entity": {
        "type": "object",
        "required": ["protocol_version", "found", "latency_ms"],
        "properties": {
            "protocol_version": _PV,
            "found": {"type": "boolean"},
            "latency_ms": {"type": "integer"},
            "card": {
                "type": "object",
                "required": [
                    "entity",
                    "aka",
                    "summary",
                    "last_touched",
                    "open_threads",
                    "edges",
                    "backlink_count",
                    "active_fact_count",
                ],
                "properties": {
                    "entity": {
                        "type": "object",
                        "required": ["slug", "title", "type"],
                        "properties": {"slug": {"type": "string"}, "title": {"type": "string"}, "type": _STR_OR_NULL},
                    },
                    "aka": {"type": "array", "items": {"type": "string"}},
                    "summary": {"type": "string"},
                    "last_touched": {
                        "type": "object",
                        "required": ["updated_at", "last_retrieved_at", "last_timeline_date"],
                        "properties": {
                            "updated_at": _STR_OR_NULL,
                            "last_retrieved_at": _STR_OR_NULL,
                            "last_timeline_date": _STR_OR_NULL,
                        },
                    },
                    "open_threads": {"type": "array", "items": _THREAD},
                    "edges": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["type", "direction", "slug"],
                            "properties": {
                                "type": {"type": "string"},
                                "direction": {"type": "string", "enum": ["out", "in"]},
                                "slug": {"type": "string"},
                                "context": _STR_OR_NULL,
                            },
                        },
                    },
                    "backlink_count": {"type": "integer"},
                    "active_fact_count": {"type": "integer"},
                },
            },
            "suggestions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["slug", "title", "create_safety"],
                    "properties": {
                        "slug": {"type": "string"},
                        "title": {"type": "string"},
                        "create_safety": {"type": "string", "enum": CREATE_SAFETY},
                    },
                },
            },
        },
    },
    "synthesize": {
        "type": "object",
        "required": ["answer", "sources", "cost", "protocol_version"],
        "properties": {
            "answer": {"type": "string"},
            "sources": {"type": "array", "items": {"type": "string"}},
            "gaps": {"type": "array", "items": {"type": "string"}},
            "cost": {
                "type": "object",
                "required": ["model", "input_tokens", "output_tokens", "usd_estimate"],
                "properties": {
                    "model": {"type": "string"},
                    "input_tokens": {"type": ["integer", "null"]},
                    "output_tokens": {"type": ["integer", "null"]},
                    "usd_estimate": {"type": ["number", "null"]},
                },
            },
            "synthesis_status": {"type": "string", "enum": SYNTHESIS_STATUS},
            "pages_gathered": {"type": "integer"},
            "takes_gathered": {"type": "integer"},
            "warnings": {"type": "array", "items": {"type": "string"}},
            "protocol_version": _PV,
        },
    },
    "forget": {
        "type": "object",
        "required": ["id", "expired", "reason", "protocol_version"],
        "properties": {
            "id": {"type": "string"},
            "expired": {"type": "boolean"},
            "reason": _STR_OR_NULL,
            "protocol_version": _PV,
        },
    },
    "context_pack": {
        "type": "object",
        "required": ["protocol_version", "entities", "cards", "open_threads", "facts"],
        "properties": {
            "protocol_version": _PV,
            "entities": {"type": "array", "items": {"type": "string"}},
            "cards": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["slug", "title", "summary", "open_threads"],
                    "properties": {
                        "slug": {"type": "string"},
                        "title": {"type": "string"},
                        "type": _STR_OR_NULL,
                        "summary": {"type": "string"},
                        "open_threads": {"type": "array", "items": _THREAD},
                        "backlink_count": {"type": "integer"},
                    },
                },
            },
            "open_threads": {"type": "array", "items": _THREAD},
            "facts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["fact", "kind"],
                    "properties": {
                        "fact": {"type": "string"},
                        "kind": {"type": "string"},
                        "entity_slug": _STR_OR_NULL,
                        "valid_from": {"type": "string"},
                        "context": _STR_OR_NULL,
                        "confidence": {"type": "number"},
                    },
                },
            },
            "text": {"type": "string"},
            "degraded_reason": {"type": "string"},
            **_BUDGET,
        },
    },
    "delta": {
        "type": "object",
        "required": ["protocol_version", "since", "pages", "facts", "threads"],
        "properties": {
            "protocol_version": _PV,
            "since": {"type": "string"},
            "pages": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["slug", "title", "updated_at"],
                    "properties": {
                        "slug": {"type": "string"},
                        "source_id": {"type": "string"},
                        "title": {"type": "string"},
                        "updated_at": {"type": "string"},
                    },
                },
            },
            "facts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["fact", "kind"],
                    "properties": {"fact": {"type": "string"}, "kind": {"type": "string"}, "confidence": {"type": "number"}},
                },
            },
            "threads": {"type": "array", "items": _THREAD},
            "text": {"type": "string"},
            "has_more": {"type": "boolean"},
            "next_cursor": {
                "type": "object",
                "required": ["since", "slug"],
                "properties": {"since": {"type": "string"}, "slug": {"type": "string"}},
            },
            # Additive (docs/protocol.md): how far delivery is at-least-once, and how to de-duplicate.
            "redelivery": {
                "type": "object",
                "required": ["after", "window_ms", "dedupe_by"],
                "properties": {
                    "after": {"type": "string"},
                    "window_ms": {"type": "integer"},
                    "dedupe_by": {"type": "object"},
                },
            },
            "degraded_reason": {"type": "string"},
            **_BUDGET,
        },
    },
}

ERROR_SCHEMA: dict = {
    "type": "object",
    "required": ["error", "message"],
    "properties": {
        "error": {"type": "string", "enum": list(ERROR_CODES)},
        "message": {"type": "string"},
        "suggestion": {"type": "string"},
        "detail": {"type": "string"},
        "protocol_version": _PV,
    },
}

_PY_TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


def validate(value: object, schema: dict, path: str = "$") -> list[str]:
    """Errors of `value` against `schema` (empty when valid), reference semantics."""
    errors: list[str] = []
    types = schema.get("type")
    if types is not None:
        allowed = types if isinstance(types, list) else [types]
        if not any(_PY_TYPES[t](value) for t in allowed):
            return [f"{path}: expected {'|'.join(allowed)}, got {_type_name(value)}"]
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: expected const {schema['const']!r}, got {value!r}")
    if "enum" in schema and value is not None and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} not in enum {schema['enum']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}: missing required key {key!r}")
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                errors.extend(validate(value[key], sub, f"{path}.{key}"))
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            errors.extend(validate(item, schema["items"], f"{path}[{i}]"))
    return errors


def _type_name(value: object) -> str:
    for name, check in _PY_TYPES.items():
        if name != "number" and check(value):
            return name
    return "number" if _PY_TYPES["number"](value) else type(value).__name__
