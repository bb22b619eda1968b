"""A unified diff as HTML: the one rendering the page-history and conflicts views share.

Each line keeps its `+`, `-` or space in the text (the change reads without colour too) and is
coloured by its class (`add`, `del`, `hunk`), with the theme's good and bad colours, which keep
4.5:1 on the panels in both themes.
"""

from __future__ import annotations

import difflib
from html import escape

MAX_LINES = 400  # a diff longer than this is cut, said so: both texts are on the page in full


def unified(old: str, new: str, old_name: str, new_name: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=old_name, tofile=new_name))


def diff_html(diff: str, *, label: str) -> str:
    """`diff` (unified) as a labelled <pre>; an empty diff says the texts are the same."""
    if not diff:
        return '<p class="note">No difference: the two texts are the same.</p>'
    lines = diff.splitlines()
    out = []
    for line in lines[:MAX_LINES]:
        kind = ("head" if line.startswith(("+++", "---")) else "hunk" if line.startswith("@@")
                else "add" if line.startswith("+") else "del" if line.startswith("-") else "same")
        out.append(f'<span class="d-{kind}">{escape(line)}</span>')
    cut = (f'<p class="note">… {len(lines) - MAX_LINES} more lines of the diff; both texts are below in full.</p>'
           if len(lines) > MAX_LINES else "")
    return f'<pre class="diff" aria-label="{escape(label)}">' + "\n".join(out) + "</pre>" + cut
