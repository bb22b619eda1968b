"""The shapes of an operation definition: a tool's name, params and metadata.

Kept apart from the tables themselves (verb_defs, page_defs) so each reads
as plain data.
"""

from __future__ import annotations

from memverbs.server.record import Frozen

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start
if TYPE_CHECKING:
    from typing import Literal

    ParamType = Literal["string", "number", "boolean", "object", "array"]
    Scope = Literal["read", "write"]


class Param(Frozen):
    __slots__ = ("default", "description", "enum", "items", "name", "required", "type")
    name: str
    type: ParamType
    description: str
    required: bool
    enum: tuple[str, ...] | None
    default: object
    items: dict | None

    def __init__(self, name: str, type: ParamType, description: str = "", required: bool = False,  # noqa: A002 - the schema's word
                 enum: tuple[str, ...] | None = None, default: object = None, items: dict | None = None) -> None:
        super().__init__(name=name, type=type, description=description, required=required, enum=enum,
                         default=default, items=items)

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


class Operation(Frozen):
    __slots__ = ("annotations", "description", "handler", "mutating", "name", "params", "scope", "tags", "verb")
    name: str
    description: str
    params: tuple[Param, ...]
    scope: Scope
    mutating: bool
    annotations: dict | None
    verb: bool
    # The module under server/ that holds the handler, imported on first call.
    handler: str
    tags: tuple[str, ...]

    def __init__(self, name: str, description: str, params: tuple[Param, ...], scope: Scope, mutating: bool,
                 annotations: dict | None = None, verb: bool = False, handler: str = "", tags: tuple[str, ...] = ()) -> None:
        super().__init__(name=name, description=description, params=params, scope=scope, mutating=mutating,
                         annotations=annotations, verb=verb, handler=handler, tags=tags)

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
