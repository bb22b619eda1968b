"""The injectable text, line by line: dates, kinds, plain names, no bare numbers, the project named once."""

from memverbs.server.verbs.render import EXPAND_HINT, fact_line, plain, render_pack, thread_line


def fact(text, kind="fact", entity=None, day="2026-12-01"):
    return {"fact": text, "kind": kind, "entity_slug": entity, "valid_from": f"{day}T09:30:00.000Z", "context": None,
            "confidence": 0.8734}


def test_links_read_as_plain_names():
    assert plain("Works with [[people/alice-example|Alice]] at [[companies/acme]].") == "Works with Alice at acme."
    assert plain("See [Acme](companies/acme.md) and [[projects/app#Plan]].") == "See Acme and app."
    assert plain("a [bracket] stays") == "a [bracket] stays"


def test_fact_lines_are_dated_and_labelled_where_the_kind_matters():
    assert fact_line(fact("The deploy freeze starts Friday", "commitment", "projects/app")) == (
        "- 2026-12-01 commitment: The deploy freeze starts Friday [projects/app]")
    assert fact_line(fact("We chose Postgres", entity="projects/app"), "projects/app") == "- 2026-12-01: We chose Postgres"
    assert fact_line(fact("Likes [[people/bob|Bob]]", "preference", "people/alice")) == (
        "- 2026-12-01 preference: Likes Bob [people/alice]")
    assert thread_line({"kind": "recent_event", "text": "Shipped v2", "date": "2026-11-30"}) == "- 2026-11-30 event: Shipped v2"
    assert thread_line({"kind": "commitment", "text": "Send the deck", "date": None}) == "- commitment: Send the deck"


def test_pack_names_its_project_once_and_ends_with_how_to_expand():
    text = render_pack(
        [{"slug": "projects/app", "title": "App", "summary": "Billing, see [[people/bob|Bob]].", "open_threads": []}],
        [{"kind": "commitment", "text": "Ship the importer", "date": "2026-11-28T10:00:00.000Z"}],
        [fact("Ship the importer", "commitment", "projects/app"), fact("We chose Postgres", entity="projects/app"),
         fact("Bob reviews", entity="people/bob")],
        project=("app", "projects/app"),
    )
    lines = text.split("\n")
    assert lines[1] == "Project: app (`projects/app`)"
    assert "- **App** → `projects/app` — Billing, see Bob." in lines
    assert "- 2026-11-28 commitment: Ship the importer" in lines and text.count("Ship the importer") == 1
    assert "- 2026-12-01: We chose Postgres" in lines and "- 2026-12-01: Bob reviews [people/bob]" in lines
    assert lines[-1] == EXPAND_HINT
    assert "get_page" not in text and "0.87" not in text and "[[" not in text
