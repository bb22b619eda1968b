"""The `<private>` rule: what a person marks private never leaves the transcript.

A person types the tag the way they type anything, so the rule is about what a reader would take
for a private marker, and it fails closed:

* the tag's name is `private` (or `secret`, `confidential`, `sensitive`, `redact`, `redacted`,
  `off-the-record`, `no-memory`, `do-not-remember`), in any case, with an optional suffix
  (`<private-notes>`), with spaces, attributes or line breaks inside the brackets
  (`< private >`, `<private reason="health">`, `<private\n>`), or HTML-escaped (`&lt;private&gt;`);
* from an opening tag to its matching close is dropped; nested tags count, and the outermost
  pair wins (`<private>a <private>b</private> c</private>` drops all of it);
* a self-closing tag (`<private/>`) opens a block, as does an opening tag never closed: the rest
  of that text is dropped;
* a closing tag with no opening before it ends a block that began in an earlier message (a block
  split across two messages): everything before it is dropped.

`strip_private` applies the rule to one text (one message, one command, one output); it is linear
in the text's length.
"""

from __future__ import annotations

import re

_NAMES = r"(?:private|secret|confidential|sensitive|redact(?:ed)?|off[-_ ]?the[-_ ]?record|no[-_ ]?mem(?:ory)?|do[-_ ]?not[-_ ]?remember)"
# One tag: `<`, optional `/`, the name (and a `-notes`-style suffix), anything up to `>`; or its
# HTML-escaped twin. Group `close` is the slash of a closing tag, `self` the slash of a self-closing one.
_TAG = re.compile(
    rf"(?:<|&lt;)\s*(?P<close>/)?\s*{_NAMES}(?:[-_:.][\w-]*)?\b(?:[^<>&]|&(?!gt;|lt;)){{0,200}}?(?P<self>/)?\s*(?:>|&gt;)",
    re.IGNORECASE,
)


def strip_private(text: str) -> str:
    """`text` without what it marks private (the module's rule)."""
    if not text or ("<" not in text and "&lt;" not in text):
        return text
    out: list[str] = []
    depth, kept_from = 0, 0
    for m in _TAG.finditer(text):
        if m.group("close"):
            if depth == 0:
                out.clear()  # a block that began before this text: all of it so far is inside
                kept_from = m.end()
                continue
            depth -= 1
            if depth == 0:
                kept_from = m.end()
            continue
        if depth == 0:
            out.append(text[kept_from : m.start()])
        depth += 1
    if depth == 0:
        out.append(text[kept_from:])
    return "".join(out)


def has_private(text: str) -> bool:
    """True when `text` holds any private marker (open, close or self-closing)."""
    return bool(text) and _TAG.search(text) is not None
