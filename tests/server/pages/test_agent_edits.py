"""An agent's `put_page` over MCP changes only what the agent changed: the frontmatter keys it did not
touch keep their bytes (comments, flow lists, quoting, dates), whatever YAML it rebuilt the page
with (server/pages/frontmatter_merge.py; docs/protocol.md, "Agent edits keep the file")."""

from __future__ import annotations

import json

import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from markdown_notes import line, notes
from vaults import write

from memverbs.server.pages.frontmatter_merge import merged_source, shown
from memverbs.server.pages.markdown import PageFormatError, parse_page

NOTE = """---
# my note's own comment
title: Dana Smith
aliases: [Dana, "D. Smith"]   # flow, quoted
updated: 2026-11-30T10:15:00
status: open  # or done
tags:
  - people
  - billing
# where she works
links: {works_at: companies/acme}
---
# Dana Smith

Owns billing.
"""


def rebuilt(text: str, change=None, body=None) -> str:
    """What an agent sends: get_page's values (JSON: dates as text), one change, dumped as PyYAML does."""
    page = parse_page(text)
    values = json.loads(json.dumps(page.frontmatter, default=str))
    if change is not None:
        change(values)
    head = "---\n" + yaml.safe_dump(values, sort_keys=False, allow_unicode=True) + "---\n" if values else ""
    return head + (page.body if body is None else body)


def test_an_agent_changing_one_line_of_the_body_keeps_every_byte_of_the_frontmatter():
    sent = rebuilt(NOTE, body=parse_page(NOTE).body.replace("Owns billing.", "Owns billing and invoicing."))
    assert merged_source(NOTE, sent) == NOTE.replace("Owns billing.", "Owns billing and invoicing.")


def test_a_changed_key_keeps_its_line_and_comment_and_a_dropped_or_added_key_is_the_agents():
    def change(values):
        values["status"] = "done"
        values["owner"] = "people/me"
        del values["tags"]

    merged = merged_source(NOTE, rebuilt(NOTE, change))
    assert "status: done  # or done\n" in merged  # the comment after the value stays with it
    assert "tags:" not in merged and merged.index("owner: people/me") > merged.index("links:")
    for kept in ("# my note's own comment\n", 'aliases: [Dana, "D. Smith"]   # flow, quoted\n', "updated: 2026-11-30T10:15:00\n",
                 "# where she works\n", "links: {works_at: companies/acme}\n"):
        assert kept in merged
    assert shown(parse_page(merged).frontmatter) == shown(parse_page(rebuilt(NOTE, change)).frontmatter)


def test_the_files_line_endings_and_an_unmergeable_source():
    crlf = NOTE.replace("\n", "\r\n")
    sent = rebuilt(crlf).replace("\r\n", "\n").replace("Owns billing.", "Owns all of billing.")
    assert merged_source(crlf, sent) == crlf.replace("Owns billing.", "Owns all of billing.")
    twice = "---\ntitle: A\ntitle: B\n---\nBody.\n"  # a repeated key: no way to tell which line is meant
    assert merged_source(twice, "---\ntitle: B\n---\nBody, edited.\n") == "---\ntitle: B\n---\nBody, edited.\n"
    flow = "---\n{title: A, tags: [x]}\n---\nBody.\n"
    assert merged_source(flow, "---\ntitle: A\ntags: [x]\n---\nNew.\n") == "---\ntitle: A\ntags: [x]\n---\nNew.\n"


KEYS = st.sampled_from(["title", "created", "aliases", "tags", "links", "updated", "status", "owner", "summary"])
EDITS = st.one_of(
    st.tuples(st.just("body"), line),
    st.tuples(st.just("set"), KEYS, st.one_of(st.text(max_size=12), st.lists(st.text(max_size=6), max_size=3), st.integers())),
    st.tuples(st.just("drop"), KEYS),
    st.tuples(st.just("none")),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(note=notes(stamps=True), edits=st.lists(EDITS, max_size=3))
def test_what_the_agent_did_not_change_keeps_its_bytes(note, edits):
    try:
        page = parse_page(note)
    except PageFormatError:
        assume(False)
        return
    touched: set[str] = set()
    body = page.body

    def change(values):
        nonlocal body
        for edit in edits:
            if edit[0] == "body":
                body = body + edit[1] + "\n"
            elif edit[0] == "set":
                values[edit[1]] = edit[2]
                touched.add(edit[1])
            elif edit[0] == "drop" and edit[1] in values:
                del values[edit[1]]
                touched.add(edit[1])

    sent = rebuilt(note, change)
    sent = sent[: len(sent) - len(page.body)] + body
    try:
        wanted = parse_page(sent)
    except PageFormatError:
        assume(False)
        return
    merged = merged_source(note, sent)
    if all(edit[0] == "none" for edit in edits):
        assert merged == note  # get_page's values sent back unchanged: the source, byte for byte
    got = parse_page(merged)
    # It means exactly what the agent sent…
    assert shown(got.frontmatter) == shown(wanted.frontmatter)
    assert got.body.replace("\r\n", "\n") == wanted.body.replace("\r\n", "\n")
    # …in the note's line endings…
    if "\r\n" in note and "\n" not in note.replace("\r\n", ""):
        assert "\n" not in merged.replace("\r\n", "")
    # …and every frontmatter line of a key it did not touch, and every comment line, is still there.
    head = note[: len(note) - len(page.body)]
    keep = _key_lines(head, exclude=touched) + [ln for ln in head.splitlines() if ln.lstrip().startswith("#")]
    out = merged.splitlines()
    assert all(ln in out for ln in keep), (keep, merged)


def _key_lines(head: str, exclude: set[str]) -> list[str]:
    """The lines of each top-level key's entry (its own line and the indented or `- ` lines under it)."""
    out: list[str] = []
    current = None
    for ln in head.splitlines()[1:-1]:
        if ln and not ln[0].isspace() and not ln.startswith(("- ", "#")):
            current = ln.split(":", 1)[0].strip("'\"")
        if current is not None and current not in exclude and not ln.lstrip().startswith("#"):
            out.append(ln)
    return out


# -- over the wire, and into a synced note --------------------------------------------------------


def test_an_mcp_put_page_keeps_the_source_and_a_trusted_write_is_taken_as_written(local, remote, runtime):
    local.ok("put_page", slug="people/dana-smith", content=NOTE)
    shown_to_agent = remote.ok("get_page", slug="people/dana-smith")
    assert shown_to_agent["frontmatter"]["updated"] == "2026-11-30 10:15:00"  # the wire, as frozen
    values = shown_to_agent["frontmatter"]
    sent = "---\n" + yaml.safe_dump(values, sort_keys=False) + "---\n" + shown_to_agent["body"].replace("Owns billing.", "Owns invoicing.")
    assert remote.ok("put_page", slug="people/dana-smith", content=sent)["status"] == "updated"
    assert local.ok("get_page", slug="people/dana-smith")["body"].endswith("Owns invoicing.\n")
    assert _source(runtime, "people/dana-smith") == NOTE.replace("Owns billing.", "Owns invoicing.")
    # The CLI, the inspector and a synced file write the page as they give it: their text is the user's.
    local.ok("put_page", slug="people/dana-smith", content=sent)
    assert _source(runtime, "people/dana-smith") == sent


def _source(runtime, slug: str) -> str:
    return runtime.brain().page(runtime.source, slug)["markdown"]


def test_an_agent_editing_a_synced_note_changes_only_its_line_in_the_file(tmp_path, remote, capsys):
    from memverbs.cli.main import main

    root = tmp_path / "vault"
    write(root / "People" / "Dana Smith.md", NOTE)
    assert main(["sync", str(root), "--prefix", "notes"]) == 0
    page = remote.ok("get_page", slug="notes/people/dana-smith")
    sent = ("---\n" + yaml.safe_dump(page["frontmatter"], sort_keys=False) + "---\n"
            + page["body"].replace("Owns billing.", "Owns billing; hands invoicing to Sam."))
    remote.ok("put_page", slug="notes/people/dana-smith", content=sent)
    assert main(["sync", str(root), "--prefix", "notes"]) == 0  # the write-back
    assert (root / "People" / "Dana Smith.md").read_text() == NOTE.replace("Owns billing.", "Owns billing; hands invoicing to Sam.")
