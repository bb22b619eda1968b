"""docs/tools.md, rendered from the registry so the tool reference cannot drift.

    python -m memverbs.server.protocol.docgen > docs/tools.md

tests/test_docs.py fails when the committed file differs from this output.
"""

from __future__ import annotations

from memverbs.server.protocol.registry import OPERATIONS
from memverbs.server.protocol.surfaces import SURFACES, allowed


def render() -> str:
    out = [
        "# MCP tools",
        "",
        "Generated from the protocol registry (`python -m memverbs.server.protocol.docgen > docs/tools.md`).",
        "Every tool answers with one pretty-printed JSON text block; errors are the v1 envelope",
        "`{error, message, suggestion, [detail], protocol_version}` with `isError: true`.",
        "",
        "| tool | " + " | ".join(SURFACES) + " | scope |",
        "|---|" + "---|" * len(SURFACES) + "---|",
    ]
    for op in OPERATIONS:
        marks = " | ".join("✓" if op.name in allowed(s) else "" for s in SURFACES)
        out.append(f"| `{op.name}` | {marks} | {op.scope} |")
    for op in OPERATIONS:
        out += ["", f"## `{op.name}`", "", op.description, ""]
        if op.params:
            out += ["| param | type | required | notes |", "|---|---|---|---|"]
            for p in op.params:
                notes = p.description
                if p.enum:
                    notes += f" One of: {', '.join(p.enum)}."
                if p.default is not None:
                    notes += f" Default: `{p.default}`."
                out.append(f"| `{p.name}` | {p.type} | {'yes' if p.required else 'no'} | {notes} |")
        else:
            out.append("No parameters.")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(render(), end="")  # noqa: T201 - the script's output is the document
