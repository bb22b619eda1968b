"""The inspector draws a page's links where the brain resolved them (memverbs/ui/links.py): each link
to a page goes to the page its stored link names, a link to no page is drawn unresolved (to what is
filed under the key the brain stored), and a file a note embeds is an attachment, never a link."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import unquote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memverbs.ui import markdown
from memverbs.ui.links import PageLinks

MEETING = """---
title: Billing sync
---
# Billing sync

With [[People/Dana Smith|Dana]], [[Dana Smith]] (by title), [[dj]] (by alias) and [[dana-smith]] (by file name).
Notes: [the spec](../specs/billing%20v2.md), [[Nobody Yet]], ![[arch diagram.png]], [the PDF](spec.pdf), ![chart](img/q3.png),
[a site](https://example.com/x), [bad](javascript:alert(1)) and `[[not a link]]`.

1. First step
2. Second step
"""


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.anchors: list[dict] = []
        self.spans: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.anchors.append(dict(attrs))
        elif tag == "span":
            self.spans.append(dict(attrs).get("class") or "")


def drawn(html: str) -> _Anchors:
    seen = _Anchors()
    seen.feed(html)
    return seen


def stored(runtime, slug: str) -> list[str]:
    return [r["to_slug"] for r in runtime.brain().page_links(runtime.source, slug, allow_private=True, private_rows=True)
            if r["link_source"] == "markdown"]


def test_a_meeting_notes_links_go_where_the_brain_resolved_them(local, runtime):
    local.ok("put_page", slug="people/dana-smith", content="---\ntitle: Dana Smith\naliases: [dj]\n---\n# Dana Smith\n")
    local.ok("put_page", slug="specs/billing-v2", content="# Billing v2\n")
    local.ok("put_page", slug="notes/billing-sync", content=MEETING)
    brain, source = runtime.brain(), runtime.source
    html = markdown.render(brain.page(source, "notes/billing-sync")["body"], PageLinks(brain, source, "notes/billing-sync",
                                                                                        private_page=False))
    seen = drawn(html)
    pages = [a["href"] for a in seen.anchors if "page" in a.get("class", "").split()]
    assert pages == ["/page/people/dana-smith"] * 4 + ["/page/specs/billing-v2"]
    assert {to for to in stored(runtime, "notes/billing-sync") if brain.page(source, to)} == {"people/dana-smith", "specs/billing-v2"}
    [unresolved] = [a for a in seen.anchors if "unresolved" in a.get("class", "")]
    assert unresolved["href"] == "/entity/nobody-yet" and "nobody-yet" in stored(runtime, "notes/billing-sync")
    assert seen.spans.count("attachment") == 3 and "arch diagram.png" in html and "!arch" not in html
    assert [a["href"] for a in seen.anchors if a.get("class") == "external"] == ["https://example.com/x"]
    assert not any("javascript" in a["href"] for a in seen.anchors) and "<code>[[not a link]]</code>" in html
    assert '<ol start="1"><li>First step</li><li>Second step</li></ol>' in html


NAMES = st.sampled_from(["People/Dana Smith", "Dana Smith", "dj", "dana-smith", "people/dana-smith", "Sam", "people/sam-lee",
                         "Sam Lee", "projects/atlas", "Atlas", "atlas", "billing rewrite", "Nobody Yet", "notes/todo",
                         "../people/sam-lee", "Todo", "日本", "notes/日本"])
FORMS = st.sampled_from(["[[{}]]", "[[{}|label]]", "[[{}#Heading]]", "![[{}]]", "[label]({}.md)", "[label](./{})"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(links=st.lists(st.tuples(FORMS, NAMES), min_size=1, max_size=8), private=st.booleans())
def test_every_link_is_drawn_as_its_stored_link(local, runtime, links, private):
    """Whatever names a body uses, the pages its links are drawn to are exactly the live pages its
    stored links name, and its unresolved ones exactly the keys stored for the rest."""
    for slug, title, extra in (("people/dana-smith", "Dana Smith", "aliases: [dj]\n"), ("people/sam-lee", "Sam Lee", ""),
                               ("projects/atlas", "Atlas", "aliases: [billing rewrite]\n"), ("notes/日本", "日本", "")):
        local.ok("put_page", slug=slug, content=f"---\ntitle: {title}\n{extra}---\n# {title}\n")
    body = "# Note\n\n" + " and ".join(form.format(name.replace(" ", "%20") if "(" in form else name) for form, name in links) + "\n"
    visibility = "private" if private else "world"
    local.ok("put_page", slug="notes/fuzz", content=f"---\nvisibility: {visibility}\n---\n{body}")
    brain, source = runtime.brain(), runtime.source
    html = markdown.render(brain.page(source, "notes/fuzz")["body"], PageLinks(brain, source, "notes/fuzz", private_page=private))
    seen = drawn(html)
    kept = stored(runtime, "notes/fuzz")
    to_pages = {a["href"] for a in seen.anchors if "page" in a.get("class", "").split()}
    assert to_pages == {markdown.page_href(to) for to in kept if brain.page(source, to) is not None}
    unresolved = {re.sub(r"^/(entity|edit)/", "", a["href"]) for a in seen.anchors if "unresolved" in a.get("class", "")}
    assert {unquote(u) for u in unresolved} == {to for to in kept if brain.page(source, to) is None}
