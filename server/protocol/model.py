"""The shapes of an operation definition: a tool's name, params and metadata.

Kept apart from the tables themselves (verb_defs, page_defs) so each reads
as plain data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ParamType = Literal["string", "number", "boolean", "object", "array"]
Scope = Literal["read", "write"]


@dataclass(frozen=True)
class Param:
    name: str
    type: ParamType
    description: str = ""
    required: bool = False
    enum: tuple[str, ...] | None = None
    default: object = None
    items: dict | None = None

    def schema(self) -> dict:
        # Key order is part of the snapshot: type, description, enum, default, items.
        out: dict = {"type": self.type}
        if self.description:
            out["description"] = self.description
        if self.enum is not None:
            out["enum"] = list(self.enum)
        if self.default is not None:
            out["default"] = self.default
        if self.items is not None:
            out["items"] = self.items
        return out


@dataclass(frozen=True)
class Operation:
    name: str
    description: str
    params: tuple[Param, ...]
    scope: Scope
    mutating: bool
    annotations: dict | None = None
    verb: bool = False
    # The module under server/ that holds the handler, imported on first call.
    handler: str = ""
    tags: tuple[str, ...] = field(default=())

    def input_schema(self) -> dict:
        return {
            "type": "object",
            "properties": {p.name: p.schema() for p in self.params},
            "required": [p.name for p in self.params if p.required],
        }

    def tool_def(self) -> dict:
        tool: dict = {"name": self.name, "description": self.description, "inputSchema": self.input_schema()}
        if self.annotations is not None:
            tool["annotations"] = dict(self.annotations)
        return tool
