"""Property: the inspector's page actions give a page that parses as intended, or refuse.

"Make private" / "make world" (`InspectorApp.set_page_visibility`) and "edit"
(`InspectorApp.put_page`) are driven with random frontmatter: visibility keys in any case,
quoted, repeated, written across lines or in a flow mapping, next to ordinary keys, LF or
CRLF, over bodies with private facts-fence rows. Checked by parsing what was stored, never by
matching strings:

* an action either refuses (ActionError, with a message) or stores a page whose source parses
  to exactly the visibility the brain holds, and that is the one asked for (make private/world)
  or the one the text declares (edit; a private page edited without saying keeps private);
* nothing else the frontmatter says, and nothing of the body, changes on a visibility action;
* never any other exception.

`python -m benchmarks.privacy_fuzz` runs it long and records the figures.
"""

from __future__ import annotations

import itertools
import os
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memverbs.server.pages.markdown import PageFormatError, parse_page

EXAMPLES = int(os.environ.get("MEMVERBS_PRIVACY_FUZZ_EXAMPLES", "12")) * 4

_VIS_KEYS = ["visibility", "Visibility", "VISIBILITY", "'visibility'", '"Visibility"']
_VALUES = ["world", "private", "World", "PRIVATE", "'private'", '"world"']
_FM_LINE = st.one_of(
    st.builds(lambda k, v: f"{k}: {v}", st.sampled_from(_VIS_KEYS), st.sampled_from(_VALUES)),
    st.sampled_from([
        "title: Fuzzed", "type: person", "aliases: [Ali, 'A. B']", "tags: [x, y]", "summary: One line.",
        "visibility: >\n  private", "visibility:\n  world", "{visibility: private}", "meta: {visibility: world}",
        "# a comment", "links: {knows: [people/bob]}",
    ]),
)
_BODY = st.lists(st.sampled_from([
    "# Heading", "Some prose.", "<!-- facts -->", "<!-- /facts -->", "- [private] hidden row", "  continued",
    "- public row", "## Timeline", "- 2026-01-02: an event", "visibility: world", "---", "",
]), max_size=8)

_slugs = itertools.count()


class Tally:
    def __init__(self) -> None:
        self.cases = 0
        self.outcomes: Counter = Counter()


def _page(fm_lines: list[str], body_lines: list[str], nl: str, with_fm: bool) -> str:
    body = nl.join(body_lines) + nl
    if not with_fm:
        return body
    return f"---{nl}" + nl.join(line.replace("\n", nl) for line in fm_lines) + f"{nl}---{nl}" + body


def _stored(app, slug: str) -> tuple[str, str]:
    source = app.page_source(slug)
    assert source is not None
    return source, app.call("get_page", {"slug": slug})[1]["visibility"]


def check_action(app, tally: Tally, content: str, action: str, edit: str) -> None:
    from memverbs.ui.app import ActionError

    tally.cases += 1
    slug = f"fuzz/ui-{next(_slugs)}"
    try:
        app.put_page(slug, content)
    except ActionError:
        tally.outcomes["refused: not a page"] += 1
        return
    source, before_vis = _stored(app, slug)
    before = parse_page(source)
    try:
        if action == "edit":
            app.put_page(slug, edit)
        else:
            app.set_page_visibility(slug, action)
    except ActionError as exc:
        assert str(exc).strip(), "a refusal says why"
        tally.outcomes[f"{action}: refused"] += 1
        assert _stored(app, slug) == (source, before_vis), "a refusal writes nothing"
        return
    source, stored_vis = _stored(app, slug)
    after = parse_page(source)  # what is stored always parses
    if action == "edit":
        # The source says what the brain holds (no key: world), unless a private page's edit kept it
        # private without saying so and the key could not be added without changing its meaning.
        silent_private = after.visibility is None and stored_vis == "private"
        assert silent_private or (after.visibility or "world") == stored_vis, (source, stored_vis)
        try:
            declared = parse_page(edit).visibility
        except PageFormatError:  # put_page would have refused it
            raise AssertionError("an unparseable edit was stored") from None
        assert stored_vis == (declared or ("private" if before_vis == "private" else "world")), (edit, stored_vis)
    else:
        assert stored_vis == action and after.visibility == action, (source, action)
        keep = lambda fm: {k: v for k, v in fm.items() if str(k).strip().lower() != "visibility"}  # noqa: E731
        assert keep(after.frontmatter) == keep(before.frontmatter) and after.body == before.body, source
    tally.outcomes[f"{action}: ok"] += 1


def fuzz_actions(app, examples: int) -> Tally:
    tally = Tally()
    page = st.builds(_page, st.lists(_FM_LINE, max_size=5), _BODY, st.sampled_from(["\n", "\r\n"]), st.booleans())

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(page, st.sampled_from(["private", "world", "edit"]), page)
    def one(content, action, edit):
        check_action(app, tally, content, action, edit)

    one()
    return tally


def test_the_inspectors_page_actions_parse_as_intended_or_refuse(home):
    from memverbs.ui.app import InspectorApp

    app = InspectorApp()
    try:
        tally = fuzz_actions(app, EXAMPLES)
    finally:
        app.close()
    assert tally.cases == EXAMPLES
    assert tally.outcomes["private: ok"] and tally.outcomes["world: ok"] and tally.outcomes["edit: ok"], tally.outcomes


def test_make_private_over_a_repeated_or_recased_key_gives_a_private_page(home):
    """The cases the old line rewrite got wrong: it changed the first visibility line only."""
    from memverbs.ui.app import InspectorApp

    app = InspectorApp()
    try:
        for i, head in enumerate(["visibility: world\nvisibility: world", "Visibility: world\nvisibility: world",
                                  "title: T\n'visibility': world\nVISIBILITY: world"]):
            slug = f"notes/twice-{i}"
            app.put_page(slug, f"---\n{head}\n---\nBody.\n")
            app.set_page_visibility(slug, "private")
            source, stored = _stored(app, slug)
            assert stored == "private" and parse_page(source).visibility == "private", source
    finally:
        app.close()
