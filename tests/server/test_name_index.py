"""The name index's rules, on plain values: which pages a text names, and what it leaves alone."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from memverbs.server import name_index as ni
from memverbs.server.common_words import COMMON_WORDS

PAGES = [
    ("people/alice-example", "Alice Example", "person", ["alice"]),
    ("people/charlie-example", "Charlie Example", "person", []),
    ("companies/widget-co", "Widget Co", "company", []),
    ("people/yuki-quincewood", "Yuki Quincewood", "person", ["yuki"]),
    ("people/yuki-pemberlake", "Yuki Pemberlake", "person", ["yuki"]),
    ("people/mireille-coppersmith", "Mireille Coppersmith", "person", ["mireille"]),
    ("people/vada-tavenner", "Vada Tavenner", "person", []),
    ("concepts/monday-review", "Monday Review", "concept", []),
    ("concepts/search", "Search", "concept", []),
    ("people/grace-hopper", "Grace Hopper", "person", ["grace"]),
    ("people/saoirse-oakhurst", "Saoirse Oakhurst", "person", ["saoirse"]),
    ("places/tokyo-notes", "東京メモ", "note", []),
    ("people/zoe-kravitz", "Zoë Kravitz", "person", []),
    ("companies/tidecraft-systems", "Tidecraft Systems", "company", []),
    ("projects/memverbs", "memverbs", "project", []),
]


def index(pages=PAGES) -> dict[str, list[tuple]]:
    rows: dict[str, list[tuple]] = {}
    for slug, title, type_, aliases in pages:
        for key, how in ni.page_names(title, slug, type_, aliases):
            rows.setdefault(key, []).append((key, slug, how, type_, title))
    return rows


INDEX = index()


def lookup(keys):
    return [row for key in keys for row in INDEX.get(key, [])]


def named(text: str) -> list[str]:
    return ni.find(text, lookup).slugs


def test_keys_fold_case_accents_possessives_and_separators():
    assert ni.key_of("Alice  Example") == "alice example"
    assert ni.key_of("Zoë's") == "zoe"
    assert ni.key_of("people/alice-example") == "people alice example"
    assert ni.key_of("O’Brien") == "o'brien"
    assert ni.key_of("Widget Co.") == "widget co"


def test_a_page_is_indexed_by_title_aliases_slug_and_a_persons_first_and_last_name():
    assert dict(ni.page_names("Alice Example", "people/alice-example", "person", ["Ally"])) == {
        "alice example": "title", "ally": "alias", "alice": "part", "example": "part"}
    # A company's words are not names of their own; the slug read as words only when it says something new.
    assert dict(ni.page_names("Widget Co", "companies/widget-co", "company", [])) == {"widget co": "title"}
    assert dict(ni.page_names("Q3 plan", "notes/roadmap", None, [])) == {"q3 plan": "title", "roadmap": "slug"}
    # A declared name outranks a derived one for the same key.
    assert dict(ni.page_names("Alice Example", "people/alice-example", "person", ["alice"]))["alice"] == "alias"
    # Longer than a text is ever read for: not stored.
    assert ni.page_names("one two three four five six seven", "notes/long", None, []) == [("long", "slug")]


def test_titles_aliases_possessives_and_lowercase_mentions_name_pages():
    assert named("What did Alice Example say about the Widget Co deal?") == ["people/alice-example", "companies/widget-co"]
    assert named("remind me what saoirse said about the round") == ["people/saoirse-oakhurst"]
    assert named("Is Tidecraft Systems' round closed? And Alice's deck?") == ["companies/tidecraft-systems",
                                                                             "people/alice-example"]
    assert named("zoe kravitz called") == ["people/zoe-kravitz"]
    assert named("see people/alice-example for it") == ["people/alice-example"]
    assert named("the memverbs hooks") == ["projects/memverbs"]


def test_the_longest_name_wins_and_each_page_is_named_once():
    found = ni.find("Alice Example and Alice met Charlie Example", lookup)
    assert [(m.slug, m.how, m.start) for m in found.mentions] == [("people/alice-example", "title", 0),
                                                                 ("people/charlie-example", "title", 28)]


def test_a_first_name_counts_only_when_one_person_has_it():
    assert named("Vada called") == ["people/vada-tavenner"]  # the first name of one person
    assert named("Tavenner called") == ["people/vada-tavenner"]
    found = ni.find("Ping Yuki about the offsite agenda.", lookup)
    assert found.mentions == ()
    assert [(a.text, a.slugs) for a in found.ambiguous] == [("Yuki", ("people/yuki-pemberlake", "people/yuki-quincewood"))]
    # Named plainly too: the short name is no longer a question.
    found = ni.find("I meant Yuki Quincewood. Yuki is the founder.", lookup)
    assert found.slugs == ["people/yuki-quincewood"] and found.ambiguous == ()


def test_a_surname_shared_by_two_people_names_neither():
    assert named("Example called") == []
    assert ni.find("did Kravitz and Example talk", lookup).slugs == ["people/zoe-kravitz"]


def test_someone_elses_full_name_is_not_a_mention_of_a_namesake():
    assert named("Did Mireille Coppersmither reach out yet?") == []
    assert named("Did Priya Tavenner reach out?") == []
    assert named("Did Mireille reach out?") == ["people/mireille-coppersmith"]
    # A capitalised everyday word beside the name is no other name.
    assert named("Did Mireille Monday reach out?") == ["people/mireille-coppersmith"]


def test_an_everyday_word_names_a_page_only_capitalised_inside_a_sentence():
    assert named("the search is slow") == []
    assert named("Search is slow") == []  # a sentence's first word: its capital says nothing
    assert named("the Search page is slow") == ["concepts/search"]
    assert named("grace period is over") == []
    assert named("ask Grace about it") == ["people/grace-hopper"]
    assert named("Monday again. Let me grab a coffee first.") == []
    assert named("the monday review moved") == []
    assert named("the Monday Review moved") == ["concepts/monday-review"]
    numbered = index([("people/target-person-3", "Target Person 3", "person", [])])
    look = lambda keys: [r for k in keys for r in numbered.get(k, [])]  # noqa: E731
    assert ni.find("What did Target Person 3 say?", look).slugs == ["people/target-person-3"]
    assert ni.find("the target person 3 is late", look).slugs == []


def test_fenced_code_is_not_read():
    assert named("look:\n```\nAlice Example = 1\n```\nnothing else") == []
    assert named("```\nunclosed Alice Example") == []


def test_names_are_found_inside_text_written_without_spaces():
    found = ni.find("東京メモについて教えて", lookup)
    assert [(m.slug, m.text) for m in found.mentions] == [("places/tokyo-notes", "東京メモ")]


def test_mentions_carry_what_the_text_said_and_where():
    text = "ping alice's team"
    (m,) = ni.find(text, lookup).mentions
    assert (m.slug, m.title, m.type, m.how) == ("people/alice-example", "Alice Example", "person", "alias")
    assert text[m.start : m.end] == m.text == "alice's"


def test_a_texts_candidate_keys_are_bounded_by_the_text_not_the_brain():
    words = " ".join(f"w{i}" for i in range(5_000))
    scanned = ni.scan(words)
    assert len(scanned.words) == ni.MAX_TOKENS
    assert len(scanned.keys) <= ni.MAX_TOKENS * ni.MAX_NAME_WORDS
    assert ni.find("", lookup).mentions == () and ni.scan("").keys == ()


def test_a_lookup_with_no_rows_names_nothing():
    assert ni.find("Alice Example", lambda keys: []).mentions == ()


# -- properties ------------------------------------------------------------------------------------

FILLER = sorted(w for w in COMMON_WORDS if w.isalpha())
NAME_WORD = st.text(alphabet=string.ascii_lowercase, min_size=4, max_size=10).filter(lambda w: w not in COMMON_WORDS)


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=300))
def test_any_text_names_only_pages_the_lookup_answered_each_once(text):
    found = ni.find(text, lookup)
    slugs = found.slugs
    assert len(slugs) == len(set(slugs))
    assert set(slugs) <= {slug for rows in INDEX.values() for _, slug, *_ in rows}
    for m in found.mentions:
        assert text[m.start : m.end] == m.text


@settings(max_examples=150, deadline=None)
@given(name=st.lists(NAME_WORD, min_size=1, max_size=3), before=st.lists(st.sampled_from(FILLER), max_size=8),
       after=st.lists(st.sampled_from(FILLER), max_size=8), capital=st.booleans())
def test_a_distinctive_title_among_everyday_words_is_found(name, before, after, capital):
    title = " ".join(w.capitalize() if capital else w for w in name)
    rows = index([("notes/x", title, "note", [])])
    text = " ".join([*before, title, *after]) + "."
    found = ni.find(text, lambda keys: [r for k in keys for r in rows.get(k, [])])
    assert found.slugs == ["notes/x"]


@settings(max_examples=100, deadline=None)
@given(words=st.lists(st.sampled_from(FILLER), min_size=1, max_size=20))
def test_lowercase_everyday_words_never_name_a_page_titled_with_one(words):
    rows = index([(f"concepts/{w}", w.capitalize(), "concept", []) for w in FILLER[:200]])
    found = ni.find(" ".join(words), lambda keys: [r for k in keys for r in rows.get(k, [])])
    assert found.mentions == ()
