"""Surgical edits of JSON and JSONC files: change our entry, leave every other byte alone.

A harness's config belongs to its user: their comments, key order, indentation
and foreign entries must survive our install and uninstall byte for byte. So
instead of load-modify-dump, `JsonDoc` parses the text into values *with their
spans* (comments and trailing commas allowed, as JSONC has them) and edits the
text at those spans: replace one member's value, insert one member or array
item in the file's own indentation and line ending, or cut one out with its
comma. Comments inside a container survive both: an entry goes in right after the
opening brace, and cutting the only entry takes just its own span. Each edit
re-parses, so the document is always valid after it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memverbs.installers.files import newline_of
from memverbs.server.errors import MemverbsError

_WS = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.DOTALL)
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}


def _skip_ws(text: str, pos: int) -> int:
    """Where the whitespace and comments at `pos` end (`_WS` matches the empty string too)."""
    m = _WS.match(text, pos)
    assert m is not None, "_WS matches the empty string"
    return m.end()


class JsonEditError(MemverbsError, ValueError):
    """The text is not JSON/JSONC we can edit safely; `where` is line:column."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(f"{message}{f' at {where}' if where else ''}")


@dataclass
class Node:
    start: int
    end: int
    value: object
    # objects: key -> (key_start, value Node); arrays: element Nodes
    members: dict[str, tuple[int, Node]] = field(default_factory=dict)
    items: list[Node] = field(default_factory=list)
    kind: str = "scalar"  # object | array | scalar


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def where(self, pos: int | None = None) -> str:
        pos = self.pos if pos is None else pos
        line = self.text.count("\n", 0, pos) + 1
        col = pos - (self.text.rfind("\n", 0, pos) + 1) + 1
        return f"line {line}, column {col}"

    def skip(self) -> None:
        self.pos = _skip_ws(self.text, self.pos)

    def document(self) -> Node:
        self.skip()
        node = self.value()
        self.skip()
        if self.pos != len(self.text):
            raise JsonEditError("unexpected text after the document", self.where())
        return node

    def value(self) -> Node:
        self.skip()
        if self.pos >= len(self.text):
            raise JsonEditError("unexpected end of file", self.where())
        ch = self.text[self.pos]
        if ch == "{":
            return self.obj()
        if ch == "[":
            return self.arr()
        if ch == '"':
            start = self.pos
            value = self.string()
            return Node(start, self.pos, value)
        for word, val in _LITERALS.items():
            if self.text.startswith(word, self.pos):
                start = self.pos
                self.pos += len(word)
                return Node(start, self.pos, val)
        m = _NUMBER.match(self.text, self.pos)
        if m:
            self.pos = m.end()
            return Node(m.start(), m.end(), json.loads(m.group()))
        raise JsonEditError(f"unexpected character {ch!r}", self.where())

    def string(self) -> str:
        start = self.pos
        i = start + 1
        while i < len(self.text):
            c = self.text[i]
            if c == "\\":
                i += 2
                continue
            if c == '"':
                self.pos = i + 1
                try:
                    return json.loads(self.text[start : i + 1])
                except ValueError as exc:
                    raise JsonEditError("invalid string", self.where(start)) from exc
            if c == "\n":
                break
            i += 1
        raise JsonEditError("unterminated string", self.where(start))

    def obj(self) -> Node:
        value: dict[str, object] = {}
        node = Node(self.pos, self.pos, value, kind="object")
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith("}", self.pos):
                self.pos += 1
                break
            if not self.text.startswith('"', self.pos):
                raise JsonEditError("expected a quoted key", self.where())
            key_start = self.pos
            key = self.string()
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise JsonEditError("expected ':'", self.where())
            self.pos += 1
            child = self.value()
            if key in node.members:
                raise JsonEditError(f"duplicate key {key!r}", self.where(key_start))
            node.members[key] = (key_start, child)
            value[key] = child.value
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith("}", self.pos):
                raise JsonEditError("expected ',' or '}'", self.where())
        node.end = self.pos
        return node

    def arr(self) -> Node:
        value: list[object] = []
        node = Node(self.pos, self.pos, value, kind="array")
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith("]", self.pos):
                self.pos += 1
                break
            child = self.value()
            node.items.append(child)
            value.append(child.value)
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith("]", self.pos):
                raise JsonEditError("expected ',' or ']'", self.where())
        node.end = self.pos
        return node


class JsonDoc:
    def __init__(self, text: str) -> None:
        self.text = text if text.strip() else "{}\n"
        self.root = _Parser(self.text).document()
        if self.root.kind != "object":
            raise JsonEditError("the top level is not an object")

    @property
    def data(self) -> dict:
        return self.root.value  # type: ignore[return-value]

    # -- lookups ---------------------------------------------------------------

    def node(self, path: Sequence[str | int]) -> Node | None:
        node = self.root
        for part in path:
            if isinstance(part, int):
                if node.kind != "array" or part >= len(node.items):
                    return None
                node = node.items[part]
            else:
                if node.kind != "object" or part not in node.members:
                    return None
                node = node.members[part][1]
        return node

    def get(self, path: Sequence[str | int], default: object = None) -> Any:
        node = self.node(path)
        return default if node is None else node.value

    # -- edits -------------------------------------------------------------------

    def set(self, path: list[str], value: object) -> None:
        """Set the member at `path`, creating missing parent objects in place."""
        parent = self._object_at(path[:-1])
        key = path[-1]
        if key in parent.members:
            child = parent.members[key][1]
            self._splice(child.start, child.end, self._render(value, self._indent_at(parent.members[key][0])))
        else:
            self._insert(parent, f"{json.dumps(key, ensure_ascii=False)}: ", value)

    def delete(self, path: list[str]) -> bool:
        parent = self.node(path[:-1])
        if parent is None or parent.kind != "object" or path[-1] not in parent.members:
            return False
        key_start, child = parent.members[path[-1]]
        self._cut(parent, key_start, child.end, last=list(parent.members)[-1] == path[-1], only=len(parent.members) == 1)
        return True

    def append(self, path: list[str], item: object) -> None:
        """Append to the array at `path`, creating it (and its parents) when missing."""
        node = self.node(path)
        if node is None:
            self.set(path, [item])
            return
        if node.kind != "array":
            raise JsonEditError(f"{'.'.join(map(str, path))} is not an array")
        self._insert(node, "", item)

    def remove_items(self, path: list[str], predicate: Callable[[Any], bool]) -> int:
        """Remove the items of the array at `path` for which predicate(value) holds."""
        removed = 0
        while True:
            node = self.node(path)
            if node is None or node.kind != "array":
                return removed
            hit = next((i for i, item in enumerate(node.items) if predicate(item.value)), None)
            if hit is None:
                return removed
            item = node.items[hit]
            self._cut(node, item.start, item.end, last=hit == len(node.items) - 1, only=len(node.items) == 1)
            removed += 1

    # -- text surgery --------------------------------------------------------------

    def _object_at(self, path: list[str]) -> Node:
        for depth in range(len(path) + 1):
            node = self.node(path[:depth])
            if node is None:
                self.set(path[:depth], {})
            elif node.kind != "object":
                raise JsonEditError(f"{'.'.join(path[:depth])} is not an object")
        node = self.node(path)
        assert node is not None, "created above"
        return node

    def _splice(self, start: int, end: int, replacement: str) -> None:
        self.text = self.text[:start] + replacement + self.text[end:]
        self.root = _Parser(self.text).document()

    def _newline(self) -> str:
        return newline_of(self.text)

    def _unit(self) -> str:
        m = re.search(r"\n([ \t]+)\S", self.text)
        return m.group(1) if m else "  "

    def _indent_at(self, pos: int) -> str:
        line_start = self.text.rfind("\n", 0, pos) + 1
        rest = self.text[line_start:]
        return rest[: len(rest) - len(rest.lstrip(" \t"))]

    def _render(self, value: object, indent: str) -> str:
        unit = self._unit()
        text = json.dumps(value, indent=len(unit.expandtabs(4)) if "\t" not in unit else "\t", ensure_ascii=False)
        return text.replace("\n", self._newline() + indent)

    def _insert(self, container: Node, prefix: str, value: object) -> None:
        children = (
            [(ks, n) for ks, n in container.members.values()] if container.kind == "object" else [(n.start, n) for n in container.items]
        )
        close = container.end - 1
        if children:
            first_start, _ = children[0]
            _, last = children[-1]
            multiline = "\n" in self.text[container.start : first_start]
            indent = self._indent_at(first_start) if multiline else ""
            after = _skip_ws(self.text, last.end)
            trailing_comma = self.text.startswith(",", after)
            sep = self._newline() + indent if multiline else " "
            entry = prefix + self._render(value, indent)
            if trailing_comma:
                self._splice(after + 1, after + 1, f"{sep}{entry},")
            else:
                self._splice(last.end, last.end, f",{sep}{entry}")
            return
        nl = self._newline()
        outer = self._indent_at(container.start)
        inner = outer + self._unit()
        entry = f"{nl}{inner}{prefix}{self._render(value, inner)}"
        if self.text[container.start + 1 : close].strip():
            # Comments only ("{ // add servers here }"): they stay, after our entry.
            self._splice(container.start + 1, container.start + 1, entry)
        else:
            self._splice(container.start + 1, close, f"{entry}{nl}{outer}")

    def _cut(self, container: Node, start: int, end: int, *, last: bool, only: bool) -> None:
        """Remove one entry with its separating comma; whole lines go when the entry had its own."""
        if only:
            inside, close = container.start + 1, container.end - 1
            after = _skip_ws(self.text, end)
            comma = after if self.text.startswith(",", after) else None
            tail = self.text[end:close] if comma is None else self.text[end:comma] + self.text[comma + 1 : close]
            rest = self.text[inside:start] + tail
            if not rest.strip():
                self._splice(inside, close, "")  # nothing else in it: back to "{}" / "[]"
                return
            # The user's comments share the container: cut just the entry (and its trailing
            # comma), with the line break and indentation in front of it that _insert put there.
            line_break = self.text.rfind("\n", inside, start)
            if line_break >= 0 and not self.text[line_break:start].strip():
                start = line_break - 1 if line_break > inside and self.text[line_break - 1] == "\r" else line_break
            if comma is None:
                self._splice(start, end, "")
            else:
                self._splice(start, comma + 1, self.text[end:comma])
            return
        if not last:
            after = _skip_ws(self.text, end)  # the comma that follows this entry
            cut_from, cut_to = start, after + 1
        else:
            # The last entry: take the comma that precedes it (after the previous entry's value).
            prev_end = max(
                (n.end for n in self._children(container) if n.end <= start),
                default=container.start + 1,
            )
            comma = _skip_ws(self.text, prev_end)
            cut_from, cut_to = comma, end
            trailing = _skip_ws(self.text, end)
            if self.text.startswith(",", trailing):
                # It has a trailing comma of its own (JSONC): keep the one before, take this one.
                cut_from, cut_to = comma + 1, trailing + 1
        line_start = self.text.rfind("\n", 0, cut_from) + 1
        line_end = self.text.find("\n", cut_to)
        line_end = len(self.text) if line_end < 0 else line_end
        own_lines = not self.text[line_start:cut_from].strip() and not self.text[cut_to:line_end].strip()
        if own_lines and not last:
            cut_from, cut_to = line_start, min(line_end + 1, len(self.text))
        self._splice(cut_from, cut_to, "")

    @staticmethod
    def _children(container: Node) -> list[Node]:
        return [n for _, n in container.members.values()] if container.kind == "object" else container.items
