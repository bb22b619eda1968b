"""The CLI in a person's words: wire errors told in command terms (counts with the right plural are
server/plural.py's), and the wire's labels (evidence, fields) as a person reads them.

The MCP wire keeps the contract's messages (agents and tests read them verbatim); this is the one
place the CLI turns them into what a person at a terminal types: commands instead of tool names,
flags instead of params, no field paths (`facts[].fact_id`) or codes (`[needs_intent]`).
"""

from __future__ import annotations

import re

from memverbs.server.protocol.registry import OPERATIONS, Operation, Param

# search's evidence labels (server/protocol/schemas.py EVIDENCE), as the CLI prints them.
EVIDENCE = {
    "alias_hit": "alias",
    "exact_title_match": "title",
    "high_vector_match": "meaning",
    "keyword_exact": "keyword",
    "weak_semantic": "weak meaning",
}


def evidence(label: str) -> str:
    return EVIDENCE.get(label, label.replace("_", " "))


# -- wire errors in CLI terms ---------------------------------------------------------------

_TOOL_NAMES = sorted((op.name for op in OPERATIONS if "_" in op.name), key=len, reverse=True)


def cli_terms(text: str, op: Operation | None = None) -> str:
    """A wire message in the CLI's words: `list_pages` → `list-pages`, since: "x" → --since "x".

    Any param name with an underscore, in backticks or as `name: value` is a flag wherever it
    appears; a plain word (date, ttl) only where it names the called tool's own param: before a
    quoted value, at the start of the message, or followed by is / must / takes.
    """
    if not text:
        return text
    for name in _TOOL_NAMES:
        text = re.sub(rf"\b{name}\b", name.replace("_", "-"), text)
    params = {p.name for o in OPERATIONS for p in o.params}
    own = {p.name for p in op.params if p is not positional(op)} if op is not None else set()
    for name in sorted(params, key=len, reverse=True):
        flag = "--" + name.replace("_", "-")
        text = re.sub(rf"`{name}`", f"`{flag}`", text)
        text = re.sub(rf"(?<![\w-]){name}: (?=[\"\d])", f"{flag} ", text)
        if "_" in name:
            text = re.sub(rf"(?<![\w-]){name}\b", flag, text)
        elif name in own:
            text = re.sub(rf"(?<![\w-]){name}(?= \")", flag, text)
            text = re.sub(rf"^{name}\b", flag, text)
            text = re.sub(rf"(?<![\w-]){name}(?= (?:is|must|takes)\b)", flag, text)
    return text


def positional(op: Operation) -> Param | None:
    """The param the CLI takes as a positional argument (the first required one): not a flag."""
    return next((p for p in op.params if p.required), None)


# Whole wire phrases a person would misread, in the CLI's words (matched before the names are renamed).
_PHRASES = (
    # forget's not_found hint names the wire's field path and the tools.
    (re.compile(r"Ids come from remember/recall \(facts\[\]\.fact_id\)\. recall the entity first to find the right fact; "
                r"page slugs are not fact ids\."),
     "Fact ids are the #numbers `memverbs recall` shows (`memverbs recall NAME` lists an entity's facts); "
     "page slugs are not fact ids."),
    (re.compile(r"\b(\w+) must be a non-empty string\."), r"\1 must not be empty."),
)
_FIELD_PATH = re.compile(r"\s*\((?:[a-z_]+\[\]\.)+[a-z_]+\)|\b(?:[a-z_]+\[\]\.)+(?=[a-z_]+\b)")


def for_people(text: str, op: Operation | None = None) -> str:
    """A wire message or suggestion as the CLI prints it (the wire's own text is unchanged)."""
    if not text:
        return text
    for pattern, words in _PHRASES:
        text = pattern.sub(words, text)
    text = _FIELD_PATH.sub("", text)
    first = positional(op) if op is not None else None
    if first is not None:
        name, metavar = first.name, first.name.upper()
        # The positional argument has no flag: `fact: "x"` in an example is just "x", and the
        # message names it as its usage line does (FACT).
        text = re.sub(rf"(?<![\w-]){name}: (?=\")", "", text)
        text = re.sub(rf"^{name}\b(?= (?:must|is)\b)", metavar, text)
    return cli_terms(text, op)


def wire_error(body: dict, op: Operation | None = None) -> tuple[str, str | None]:
    """An error envelope's message and suggestion, for `output.fail`."""
    return for_people(body.get("message") or "failed", op), for_people(body.get("suggestion") or "", op) or None
