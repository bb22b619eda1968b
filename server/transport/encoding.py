"""A tool call's outcome as an MCP CallToolResult, shared by the SDK server and the stdio front.

A verb's body travels as one pretty-printed JSON text block (indent 2) in
`content[0]`; `isError` is absent on success and true on error; there is no
`structuredContent` and no `outputSchema` (PROTOCOL.md §2). Unknown-parameter
warnings add a second text block and `_meta.warnings`, as the reference does.
No SDK import here: the front answers with it before the SDK is loaded.
"""

from __future__ import annotations

import json
from typing import Any

from memverbs.server.dispatch import Outcome


def encode(outcome: Outcome) -> dict[str, Any]:
    content = [{"type": "text", "text": json.dumps(outcome.body, indent=2, ensure_ascii=False)}]
    if outcome.warnings:
        content.append({"type": "text", "text": "\n".join(outcome.warnings)})
    result: dict[str, Any] = {"content": content}
    if outcome.is_error:
        result["isError"] = True
    if outcome.meta:
        result["_meta"] = outcome.meta
    return result
