"""An agent's whole-page write merged into the page's source, so the file keeps what it did not change.

An MCP client reads a page with `get_page` — its frontmatter as JSON values, comments and YAML
styles gone, `2026-11-30T10:15:00` shown as `2026-11-30 10:15:00` — and writes it back with
`put_page`, the whole page rebuilt from those values. Taken as it comes, that write would strip a
synced note's comments, turn its flow lists into block lists and drop the `T` from its dates.
So `put_page` from an MCP caller goes through `merged_source`:

* a top-level key whose value the agent did not change (as get_page shows values: a date equals
  its text) keeps its lines exactly as the source writes them: quoting, flow or block style,
  comments on the line, dates;
* a key it changed is written as the agent wrote it — on a line of its own, the source's way of
  writing the key and a trailing comment are kept around the new value;
* a key it dropped goes, a key it added goes last; comment lines between keys stay where they are;
* the body is the agent's, in the source's line endings (a source written in `\\r\\n` gets its new lines so).

The merge is checked by parsing it back: it must mean exactly what the agent's text means (every
frontmatter value as get_page would show it, the same body), or the agent's text is stored as it
came. docs/protocol.md, "Agent edits keep the file".
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from memverbs.server.pages.synopsis import FRONTMATTER

if TYPE_CHECKING:
    import yaml

_STR = "tag:yaml.org,2002:str"


class _Pair:
    """One top-level `key: value` of a frontmatter block: its text span and its value node."""

    __slots__ = ("end", "key", "start", "value")

    def __init__(self, key: str, start: int, end: int, value: yaml.Node) -> None:
        self.key, self.start, self.end, self.value = key, start, end, value


def shown(value: object) -> str:
    """A frontmatter value as get_page shows it (JSON, dates as text): how "unchanged" is judged."""
    try:
        return json.dumps(value, default=str, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):  # keys of mixed types cannot be sorted: compare as written
        return json.dumps(value, default=str, ensure_ascii=False)


def merged_source(old: str, new: str) -> str:
    """`new` (a whole page an agent wrote) with what it left unchanged written as `old` (the page's
    stored source) writes it; `new` itself when the two cannot be merged safely."""
    from memverbs.server.pages.markdown import PageFormatError, parse_page  # noqa: PLC0415 - it imports nothing of ours back

    nl = "\r\n" if "\r\n" in old and "\n" not in old.replace("\r\n", "") else "\n"
    if nl == "\r\n":
        new = re.sub(r"(?<!\r)\n", "\r\n", new)  # the agent's plain newlines, in the file's line endings
    m_old, m_new = FRONTMATTER.match(old), FRONTMATTER.match(new)
    if m_old is None:
        return new
    # No frontmatter from the agent: the source's says nothing either (comments only), or the agent dropped it.
    new_inner, new_body = (m_new.group(1), new[m_new.end() :]) if m_new is not None else ("", new)
    old_pairs, new_pairs = _pairs(m_old.group(1)), _pairs(new_inner)
    if old_pairs is None or new_pairs is None or (m_new is None and old_pairs):
        return new
    try:
        old_values, new_values = _values(m_old.group(1)), _values(new_inner)
    except Exception:  # noqa: BLE001 - whatever the YAML library raises: the agent's text stands
        return new
    if old_values is None or new_values is None or set(old_values) != set(old_pairs) or set(new_values) != set(new_pairs):
        return new
    inner = _merged_inner(m_old.group(1), new_inner, old_pairs, new_pairs, old_values, new_values, nl)
    candidate = old[: m_old.start(1)] + inner + old[m_old.end(1) : m_old.end()] + new_body
    try:
        want, got = parse_page(new), parse_page(candidate)
    except PageFormatError:
        return new
    if shown(got.frontmatter) != shown(want.frontmatter) or got.body.replace("\r\n", "\n") != want.body.replace("\r\n", "\n"):
        return new
    return candidate


def _merged_inner(old: str, new: str, old_pairs: dict[str, _Pair], new_pairs: dict[str, _Pair],
                  old_values: dict, new_values: dict, nl: str) -> str:
    out: list[str] = []
    pos = 0
    for key, pair in old_pairs.items():
        out.append(old[pos : pair.start])  # comment and blank lines between keys stay
        pos = pair.end
        if key not in new_values:
            continue
        if shown(old_values[key]) == shown(new_values[key]):
            out.append(old[pair.start : pair.end])
        else:
            out.append(_changed(old, pair, new, new_pairs[key], nl))
    out.append(old[pos:])
    added = [_own_line(new[p.start : p.end], nl) for key, p in new_pairs.items() if key not in old_values]
    text = "".join(out)
    if added:
        text = _own_line(text, nl) if text.strip() else ""
        text += "".join(added)
    return text[: -len(nl)] if text.endswith(nl) else text.rstrip("\r\n")


def _changed(old: str, pair: _Pair, new: str, new_pair: _Pair, nl: str) -> str:
    """The agent's new value for a key, on the source's line when both are one line: the key as the
    source writes it and what follows the value there (a comment) are kept."""
    import yaml  # noqa: PLC0415

    old_value, new_value = pair.value, new_pair.value
    text = new[new_value.start_mark.index : new_value.end_mark.index]
    one_line = "\n" not in old[pair.start : pair.end].rstrip("\r\n") and "\n" not in new[new_pair.start : new_pair.end].rstrip("\r\n")
    empty = isinstance(old_value, yaml.ScalarNode) and old_value.start_mark.index == old_value.end_mark.index
    if one_line and not empty and text and "\r" not in text:
        return old[pair.start : old_value.start_mark.index] + text + old[old_value.end_mark.index : pair.end]
    return _own_line(new[new_pair.start : new_pair.end], nl)


def _own_line(text: str, nl: str) -> str:
    """`text` in the `nl` line endings, ending with one."""
    text = text.replace("\r\n", "\n").replace("\n", nl)
    return text if text.endswith(nl) else text + nl


def _pairs(inner: str) -> dict[str, _Pair] | None:
    """The block's top-level keys in order, each with its span: from the start of the key's line to the
    end of the line its value ends on. None when the block is not a plain mapping of string keys."""
    import yaml  # noqa: PLC0415 - only a write over MCP merges

    if not inner.strip():
        return {}
    try:
        root = yaml.compose(inner, Loader=yaml.SafeLoader)  # character offsets (libyaml's are not)
    except yaml.YAMLError:
        return None
    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        return None
    pairs: dict[str, _Pair] = {}
    for key, value in root.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag != _STR or key.value in pairs:
            return None
        start = inner.rfind("\n", 0, key.start_mark.index) + 1
        if inner[start : key.start_mark.index].strip():
            return None
        pairs[key.value] = _Pair(key.value, start, _line_end(inner, _last_index(value)), value)
    return pairs


def _last_index(node: yaml.Node) -> int:
    """Where a value's last token ends: a block collection's own end mark is the next key's start,
    past any comment lines between them, which belong to no key."""
    import yaml  # noqa: PLC0415

    if isinstance(node, yaml.SequenceNode) and not node.flow_style and node.value:
        return _last_index(node.value[-1])
    if isinstance(node, yaml.MappingNode) and not node.flow_style and node.value:
        return _last_index(node.value[-1][1])
    return int(node.end_mark.index)


def _line_end(text: str, index: int) -> int:
    """The index just past the end of the line holding `index - 1` (its newline included)."""
    cut = text.find("\n", max(index - 1, 0))
    return len(text) if cut < 0 else cut + 1


def _values(inner: str) -> dict[str, Any] | None:
    from memverbs.server.pages import bounded_yaml  # noqa: PLC0415

    data = bounded_yaml.load(inner) if inner.strip() else {}
    if data is None:
        return {}
    return data if isinstance(data, dict) and all(isinstance(k, str) for k in data) else None
