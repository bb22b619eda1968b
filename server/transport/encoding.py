"""A tool call's outcome as an MCP CallToolResult, shared by the SDK server and the stdio wire.

A verb's body travels as one pretty-printed JSON text block (indent 2) in
`content[0]`; `isError` is absent on success and true on error; there is no
`structuredContent` and no `outputSchema` (PROTOCOL.md §2). Unknown-parameter
warnings add a second text block and `_meta.warnings`, as the reference does.
Keys come in the SDK's order (its models are alphabetical: `_meta`, `content`,
`isError`; `text`, `type`), so the stdio wire's bytes equal the SDK's.
No SDK import here: the stdio wire answers with it and never loads the SDK.
"""

from __future__ import annotations

import json
from typing import Any

from memverbs.server.dispatch import Outcome


def encode(outcome: Outcome) -> dict[str, Any]:
    content = [{"text": json.dumps(outcome.body, indent=2, ensure_ascii=False), "type": "text"}]
    if outcome.warnings:
        content.append({"text": "\n".join(outcome.warnings), "type": "text"})
    result: dict[str, Any] = {}
    if outcome.meta:
        result["_meta"] = outcome.meta
    result["content"] = content
    if outcome.is_error:
        result["isError"] = True
    return result
