"""Markdown notes as people write them, for property tests of what memverbs writes into them: a
frontmatter with comments, flow and block lists, quoting and dates (date-times with their `T`), a
body with a timeline, in `\\n` or `\\r\\n` line endings."""

from __future__ import annotations

from hypothesis import strategies as st

word = st.text(alphabet="abcdefghijklmnopqrstuvwxyzé日 ", min_size=1, max_size=10).filter(lambda t: t.strip())
line = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")) | st.sampled_from("-#[]:*`'\"é"),
               max_size=30)
date = st.builds(lambda m, d: f"2025-{m:02d}-{d:02d}", st.integers(1, 12), st.integers(1, 28))


@st.composite
def notes(draw, *, stamps: bool = False):
    """A note; with `stamps`, its frontmatter may also hold a date-time, a quoted scalar and a comment
    at the end of a line (what an agent's rewrite must not reformat)."""
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    fm: list[str] = []
    if draw(st.booleans()):
        fm.append("# a comment")
    if draw(st.booleans()):
        fm.append(f"title: {draw(st.sampled_from(['Plain', 'Quoted: yes', 'Été']))!r}")
    if draw(st.booleans()):
        fm.append("created: 2024-03-01")
    style = draw(st.sampled_from(["none", "flow", "block", "scalar", "empty"]))
    if style == "flow":
        fm.append("aliases: [One, 'two: x']")
    elif style == "block":
        fm += ["aliases:", "  - One", "  - \"two\""]
    elif style == "scalar":
        fm.append("aliases: One")
    elif style == "empty":
        fm.append("aliases: []")
    if draw(st.booleans()):
        fm += ["tags:", "- x", "- y"]
    if draw(st.booleans()):
        fm += ["links:", "  related: [b]"]
    if stamps:
        if draw(st.booleans()):
            fm.append("updated: 2026-11-30T10:15:00")
        if draw(st.booleans()):
            fm.append('status: "open"   # or done')
        if draw(st.booleans()):
            fm += ["# people", "owner: {name: Dana, team: billing}"]
    body = [draw(line) for _ in range(draw(st.integers(0, 3)))]
    if draw(st.booleans()):
        body += ["", "## Timeline", f"- {draw(date)}: {draw(word).strip()}"]
        if draw(st.booleans()):
            body += ["", "## After", draw(line)]
    text = nl.join(body) + (nl if draw(st.booleans()) and body else "")
    if fm or draw(st.booleans()):
        text = "---" + nl + nl.join(fm) + (nl if fm else "") + "---" + nl + text
    return text
