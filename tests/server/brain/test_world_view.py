"""The world view in SQL is the world view in Python: `memverbs_world_body(body)` answers what
`markdown.without_private_rows(body)` does, on both backends.

SQLite calls the Python function itself; Postgres runs a PL/pgSQL twin of it (postgres_schema.WORLD_SEARCH),
so the twin is held to the original over bodies built from what the rule reads: fence markers in every
spelling Python's pattern accepts (any case, KELVIN SIGN and LONG S, Unicode whitespace inside), rows
starting `[private]` in any case after `-`, `*`, `+` or spaces, continuation lines, and every line
boundary and whitespace character Python knows.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memverbs.server.pages.markdown import without_private_rows

PIECES = st.sampled_from([
    "<!-- facts -->", "<!--FACTS-->", "<!--\u00a0facts\u2003-->", "<!-- /facts -->", "<!--/Facts -->", "<!-- takes -->",
    "<!-- ta\u212aes -->", "<!-- fact\u017f -->", "<!-- //facts -->", "x <!-- facts --> y", "<!-- facts --><!-- /facts -->",
    "- [private] secret", "* [PRIVATE] secret", "+[Private]secret", "   - [private] indented", "-- [pRiVaTe] x",
    "- [private]", "- [privat] no", "[private] bare", "- [pr\u0130vate] no", "  continuation", "\tcontinued",
    "\u00a0nbsp start", "\x1fus start", "plain text", "- open row", "", "   ",
])
ENDS = st.sampled_from(["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", ""])
BODIES = st.lists(st.tuples(PIECES, ENDS), max_size=14).map(lambda parts: "".join(p + e for p, e in parts))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=BODIES)
def test_the_sql_world_body_is_the_python_one(runtime, body):
    assert runtime.brain().one("SELECT memverbs_world_body(?)", (body,))[0] == without_private_rows(body)


def test_a_page_without_a_private_row_is_its_own_world_view(runtime):
    body = "# Page\nprivate is a word here, [private] only inside a line\n<!-- facts -->\n- row\n<!-- /facts -->\n"
    assert runtime.brain().one("SELECT memverbs_world_body(?)", (body,))[0] == body == without_private_rows(body)
