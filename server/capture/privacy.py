"""What never leaves a transcript: `<private>` blocks and secrets.

`clean(text)` is the one gate every captured text passes before it can be stored or sent (the
session page, each fact, a title, the capture state on disk, the optional LLM pass's digest): it
drops what the text marks private first (private.py: any case, spaces, attributes, nesting,
unclosed, split across messages), then replaces each secret secrets.py finds with
`[redacted:<class>]`.

`is_clean(text)` says whether a text can be a fact: a sentence that needed anything redacted, or
that held a private marker, is never kept ("the token is [redacted]" is no use to anyone, and a
half-private sentence is not the user's whole statement).
"""

from __future__ import annotations

import re

from memverbs.server.capture.private import has_private, strip_private
from memverbs.server.capture.secrets import Span, detector_spans, our_spans

MARK = "[redacted:{}]"
_MARKED = re.compile(r"\[redacted:[a-z0-9-]+\]")

__all__ = ["MARK", "clean", "is_clean", "strip_private"]


def clean(text: str) -> str:
    """`text` without its private blocks and with every secret redacted."""
    if not text:
        return text
    text = _scrub(strip_private(text))
    spans = [s for s in (*our_spans(text), *detector_spans(text)) if not _MARKED.fullmatch(text[s[0] : s[1]])]
    return _redact(text, spans)


def is_clean(text: str) -> bool:
    """True when `clean` would change nothing and nothing was redacted before it."""
    return not _MARKED.search(text) and not has_private(text) and clean(text) == text


def _scrub(text: str) -> str:
    """A lone surrogate (a broken emoji in a transcript) cannot be stored as UTF-8: it becomes U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _redact(text: str, spans: list[Span]) -> str:
    if not spans:
        return text
    spans.sort(key=lambda s: (s[0], -s[1]))
    merged: list[list] = []
    for start, end, kind in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end, kind])
    out, last = [], 0
    for start, end, kind in merged:
        out.append(text[last:start])
        out.append(MARK.format(kind))
        last = end
    out.append(text[last:])
    return "".join(out)
