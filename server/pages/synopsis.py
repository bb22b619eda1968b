"""A page's synopsis and its world view: what a card, a search hit or a pointer may show of a page.

The card's one-line summary (`safe_summary`: the frontmatter summary, else the first prose sentence
outside the fences) and the body with the takes fence and the private facts-fence rows removed for
an untrusted reader (`fenced_body`). Apart from the Markdown reader (markdown.py, which re-exports
them), so a hook that only needs a page's synopsis does not pay for the whole parser's imports.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memverbs.server.names import collapse

_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_FENCE = re.compile(r"<!--\s*(/?)(takes|facts)\s*-->", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
SUMMARY_MAX = 160


def frontmatter_block(content: str) -> str:
    """The frontmatter lines of `content`, delimiters included ('' when it has none)."""
    m = _FRONTMATTER.match(content)
    return m.group(0) if m else ""


def safe_summary(body: str, frontmatter_summary: str | None, *, include_private: bool) -> str:
    """The card synopsis: frontmatter summary, else the first prose sentence outside the fences."""
    if frontmatter_summary:
        return clip(collapse(frontmatter_summary))
    for line in fenced_body(body, include_private=include_private).splitlines():
        text = line.strip()
        if not text or text.startswith(("#", "<!--", "---", "```")):
            continue
        text = re.sub(r"^[-*+>]\s+", "", text)
        text = re.sub(r"^\[private\]\s*", "", text, flags=re.IGNORECASE)
        if not text:
            continue
        sentence = _SENTENCE_END.split(text, maxsplit=1)[0]
        return clip(collapse(sentence))
    return ""


def _classified(body: str, *, keepends: bool = False) -> Iterator[tuple[str, str | None, bool]]:
    """Each line with the fence it is in and whether it belongs to a private facts row.

    A private row starts `- [private]` (any case) inside the facts fence; its indented
    continuation lines are private too.
    """
    fence: str | None = None
    private_row = False
    for line in body.splitlines(keepends=keepends):
        m = _FENCE.search(line)
        if m:
            fence = None if m.group(1) else m.group(2).lower()
            private_row = False
            yield line, None, False
            continue
        if fence == "facts":
            stripped = line.strip()
            if stripped.lstrip("-*+ ").lower().startswith("[private]"):
                private_row = True
            elif stripped and not line[:1].isspace():
                private_row = False  # a new row (or prose) at the fence's own level
        else:
            private_row = False
        yield line, fence, private_row


def fenced_body(body: str, *, include_private: bool) -> str:
    """The body with the takes fence removed and private facts-fence rows removed for untrusted readers."""
    body = body[len(frontmatter_block(body)) :]  # a second `---` block in a body is cut, never parsed: its YAML may be anything
    out: list[str] = []
    for line, fence, private in _classified(body):
        if fence is None and _FENCE.search(line):
            continue
        if fence == "takes" or (private and not include_private):
            continue
        out.append(line)
    return "\n".join(out)


def clip(text: str, limit: int = SUMMARY_MAX) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
