"""YAML frontmatter read with limits, so a hostile page costs milliseconds to refuse.

A page's frontmatter comes from whoever wrote the page: an MCP caller, a file in a synced
folder. YAML's anchors and aliases let 470 bytes name a tree of millions of nodes (the
"billion laughs"): PyYAML builds it cheaply by sharing, but the brain stores the frontmatter
as JSON, where every shared branch is written out again. So the document is first composed
into nodes (libyaml, no Python objects yet) and measured as it would be written out:
nodes, characters and depth after every alias is expanded, each node measured once. Only a
document within every limit is turned into Python values. A recursive alias (`&a [*a]`) has
no written-out form at all and is refused too.

The limits sit far above any real frontmatter (a few dozen keys, lists of aliases and tags)
and far below what would hurt.
"""

from __future__ import annotations

import math

from memverbs.server.errors import MemverbsError

MAX_CHARS = 256 * 1024  # the frontmatter's own text
MAX_NODES = 50_000  # scalars, lists and mappings, aliases expanded
MAX_EXPANDED_CHARS = 1024 * 1024  # characters of every scalar, aliases expanded
MAX_DEPTH = 32  # lists and mappings inside each other


class FrontmatterRefused(MemverbsError, ValueError):
    """The frontmatter is over a limit, or holds a value that is no data (a date that is no date, an
    integer of thousands of digits, an infinite number); the message says which. The page parser turns
    it into a format error, so the caller gets invalid_params."""


def load(text: str) -> object:
    """The YAML document in `text` as Python values (the safe subset), or FrontmatterRefused.
    Invalid YAML raises yaml.YAMLError as yaml.safe_load would."""
    import yaml  # noqa: PLC0415 - only writing a page parses YAML; cards (the hook path) never do

    if len(text) > MAX_CHARS:
        raise FrontmatterRefused(f"frontmatter is {len(text):,} characters; the limit is {MAX_CHARS:,}")
    # libyaml's loader when PyYAML has it: the same safe subset, ~20x faster (an import reads thousands)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:  # the pure-Python composer on a deeply nested document
            raise FrontmatterRefused(f"frontmatter nests deeper than {MAX_DEPTH} levels") from None
        if node is None:
            return None
        _measure(node)
        try:
            data = loader.construct_document(node)
        except (ValueError, OverflowError, TypeError) as exc:  # 2024-13-45, an int of 5,000 digits
            raise FrontmatterRefused(f"frontmatter has a value that is no data: {str(exc).split(';')[0]}") from None
        _refuse_non_finite(data)
        return data
    finally:
        loader.dispose()


def _refuse_non_finite(data: object) -> None:
    """.inf and .nan are YAML but not JSON, which is how the brain stores a frontmatter (the limits above bound this walk)."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            raise FrontmatterRefused(f"frontmatter has a number that is not finite ({value}); write it as text in quotes")
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, (list, tuple, set)):
            stack.extend(value)


def _measure(root: object) -> None:
    """Walk the node graph once (iteratively: no recursion limit to trip), adding up each node's
    written-out size from its children's; refuse at the first limit passed."""
    from yaml.nodes import CollectionNode, MappingNode, ScalarNode  # noqa: PLC0415

    size: dict[int, tuple[int, int, int]] = {}  # id(node) -> (nodes, chars, depth), aliases expanded
    on_path: set[int] = set()
    stack: list[tuple[object, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in size:
            continue
        if isinstance(node, ScalarNode):
            size[key] = (1, len(node.value), 0)
            continue
        if not isinstance(node, CollectionNode):
            raise FrontmatterRefused(f"frontmatter holds a YAML node memverbs cannot read ({type(node).__name__})")
        children = [c for pair in node.value for c in pair] if isinstance(node, MappingNode) else list(node.value)
        if not children_done:
            if key in on_path:
                raise FrontmatterRefused("frontmatter has an alias that refers to itself (&a [*a]): it has no end")
            on_path.add(key)
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in size)
            continue
        on_path.discard(key)
        measured = [size[id(c)] for c in children]
        nodes = 1 + sum(m[0] for m in measured)
        chars = sum(m[1] for m in measured)
        depth = 1 + max((m[2] for m in measured), default=0)
        if nodes > MAX_NODES:
            raise FrontmatterRefused(f"frontmatter expands to over {MAX_NODES:,} values (through its aliases); the limit is {MAX_NODES:,}")
        if chars > MAX_EXPANDED_CHARS:
            raise FrontmatterRefused(f"frontmatter expands to over {MAX_EXPANDED_CHARS:,} characters (through its aliases)")
        if depth > MAX_DEPTH:
            raise FrontmatterRefused(f"frontmatter nests deeper than {MAX_DEPTH} levels")
        size[key] = (nodes, chars, depth)
