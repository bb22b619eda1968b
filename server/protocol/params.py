"""The parameter pipeline every tool call runs before its handler.

1. optional params given as null (any type) or "" (string params) count as absent;
2. declared params are validated in declaration order, first failure wins, with
   the reference's exact messages;
3. undeclared keys (other than `_meta` and `dry_run`) are accepted with a warning,
   or rejected when strict mode is on.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from memverbs.server.errors import VerbError, invalid
from memverbs.server.protocol.model import Operation
from memverbs.server.record import Record

PASSTHROUGH = frozenset({"_meta", "dry_run"})

_TYPE_WORDS = {
    "string": "a string",
    "number": "a number",
    "boolean": "a boolean",
    "object": "an object",
    "array": "an array",
}


class Checked(Record):
    """Arguments after the pipeline: what the handler sees, plus warnings for the caller."""

    __slots__ = ("params", "unknown")
    params: dict
    unknown: list[tuple[str, str | None]]  # (key, nearest declared name)

    def __init__(self, params: dict, unknown: list[tuple[str, str | None]] | None = None) -> None:
        super().__init__(params=params, unknown=[] if unknown is None else unknown)

    def warning_lines(self) -> list[str]:
        lines = []
        for key, near in self.unknown:
            hint = f' — did you mean "{near}"?' if near else ""
            lines.append(
                f'warning: unknown parameter "{key}" ignored{hint}. A future release rejects unknown parameters.'
            )
        return lines

    def warnings_meta(self) -> list[dict]:
        out = []
        for key, near in self.unknown:
            item: dict = {"code": "unknown_param", "param": key}
            if near:
                item["suggestion"] = near
            out.append(item)
        return out


def check(op: Operation, arguments: dict | None, *, strict: bool = False) -> Checked:
    args = dict(arguments or {})
    _encodable(args)
    declared = {p.name: p for p in op.params}
    for p in op.params:
        if p.required or p.name not in args:
            continue
        value = args[p.name]
        if value is None or (p.type == "string" and value == ""):
            del args[p.name]
    for p in op.params:
        value = args.get(p.name)
        if p.required and value is None:
            raise invalid(f"Missing required parameter: {p.name}")
        if p.name not in args:
            continue
        if not _is_type(value, p.type):
            raise invalid(f'Parameter "{p.name}" must be {_TYPE_WORDS[p.type]}')
        if p.enum is not None and isinstance(value, str) and value not in p.enum:
            raise invalid(f'Parameter "{p.name}" must be one of: {", ".join(p.enum)}')
    unknown = [(k, nearest(k, declared)) for k in args if k not in declared and k not in PASSTHROUGH]
    if unknown and strict:
        hints = " ".join(
            f'Unknown parameter "{k}"' + (f' — did you mean "{near}"?' if near else " — remove it.") for k, near in unknown
        )
        raise VerbError(
            "invalid_params",
            f"{len(unknown)} unknown parameter(s) not declared in the {op.name} tool schema "
            "(mcp.strict_params=reject). See suggestion for the submitted name(s).",
            hints,
        )
    for k, _ in unknown:
        del args[k]
    return Checked(params=args, unknown=unknown)


def _encodable(args: dict) -> None:
    """Every key and string is valid Unicode text: a lone surrogate cannot be stored, searched or sent back."""
    stack: list[tuple[str, object]] = list(args.items())
    while stack:
        where, value = stack.pop()
        texts = [where] + ([value] if isinstance(value, str) else [])
        if isinstance(value, dict):
            stack.extend((f"{where}.{k}" if isinstance(k, str) else where, v) for k, v in value.items())
            texts += [k for k in value if isinstance(k, str)]
        elif isinstance(value, list):
            stack.extend((where, v) for v in value)
        for text in texts:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                name = where.encode("utf-8", "replace").decode()
                raise VerbError(
                    "invalid_params",
                    f'Parameter "{name}" contains a lone UTF-16 surrogate (\\u{ord(text[_first_bad(text)]):04x}), '
                    "which is not valid Unicode text.",
                    "The text was cut in the middle of a character (an emoji or other non-BMP character split in two). "
                    "Send the whole character as a surrogate pair or as UTF-8, or drop it.",
                ) from None


def _first_bad(text: str) -> int:
    return next(i for i, ch in enumerate(text) if 0xD800 <= ord(ch) <= 0xDFFF)


def _is_type(value: object, type_: str) -> bool:
    if type_ == "string":
        return isinstance(value, str)
    if type_ == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if type_ == "boolean":
        return isinstance(value, bool)
    if type_ == "object":
        return isinstance(value, dict)
    if type_ == "array":
        return isinstance(value, list)
    return False


def nearest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate within edit distance 3 of `name`, ties broken lexicographically."""
    best: tuple[int, str] | None = None
    for cand in sorted(candidates):
        d = levenshtein(name, cand)
        if d <= 3 and (best is None or d < best[0]):
            best = (d, cand)
    return best[1] if best else None


def levenshtein(a: str, b: str) -> int:
    if a == b:
        return 0
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def budget(value: object) -> int | None:
    """budget_tokens: a finite number > 0, floored; anything else means no budget."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or value <= 0:
        return None
    return math.floor(value)
