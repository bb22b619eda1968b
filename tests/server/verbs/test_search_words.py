"""The world-view checks of page search answer exactly as splitting the text into words would.

Search re-reads each hit's world-safe text for an untrusted caller (did it match there, which line
is its snippet, how many terms it holds); those reads come from each text's words and lines, split
once and kept (server/verbs/page_text.py). These hold the kept forms to the plain definitions, on awkward text: prefixes of longer words, digits and `_` as word
characters, non-Latin letters, case folding, fences, frontmatter and odd line breaks.
"""

import random
import re

import pytest

from memverbs.server.names import collapse
from memverbs.server.pages.markdown import clip, fenced_body
from memverbs.server.terms import spaceless
from memverbs.server.verbs import search
from memverbs.server.verbs.page_text import Kept, holds, inside, page_text

_TERM = re.compile(r"\w+", re.UNICODE)
ALPHABET = [*"ab_ 1é²٣-.İΣς中文\t", "\n", "\r\n", "\u2028", "go", "going", "<!-- facts -->", "- [private] ", "# "]


def plain_snippet(text: str, words: list[str], limit: int = 300) -> str | None:
    best, best_hits = None, 0
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "<!--")):
            continue
        low = stripped.lower()
        hits = len(set(_TERM.findall(low)) & set(words)) + sum(1 for w in words if spaceless(w) and w in low)
        if hits > best_hits:
            best, best_hits = stripped, hits
    return clip(collapse(best), limit) if best else search._lead(text, limit)


# Texts with more line breaks and spaceless words, where lines and their words matter most.
LINES = [c for c in ALPHABET if c != "\t"] + ["\x0b", "\x0c", "\x1c", "\x85", "\r", "文字", "  ", "\n# go\n"]


def _texts(seed: int, n: int, alphabet: list[str] = ALPHABET) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(n)]


@pytest.mark.parametrize("seed", range(4))
def test_a_word_is_found_exactly_where_splitting_the_title_and_text_finds_it(seed):
    rng = random.Random(seed)
    texts = _texts(seed, 3000)
    for text, other in zip(texts, reversed(texts), strict=True):
        title = rng.choice([None, "", other[:8], "\u0391\u03a3", "\u03a3 go"])  # ΑΣ, Σ go
        low = f"{title or ''} {text}".lower()
        kept = page_text(text)
        for word in dict.fromkeys([*_TERM.findall(other.lower()), "go", "\u03c3", "\u03c2", "中文"]):
            assert holds(title, kept, word) is (word in set(_TERM.findall(low))), (title, text, word)
            assert inside(title, kept, word) is (word in low), (title, text, word)


@pytest.mark.parametrize("alphabet", [ALPHABET, LINES], ids=["any letters", "many lines"])
@pytest.mark.parametrize("seed", range(4))
def test_the_snippet_is_the_line_holding_the_most_terms(seed, alphabet):
    rng = random.Random(seed)
    texts = _texts(seed + 10, 600, alphabet)
    for text in texts:
        words = list(dict.fromkeys(_TERM.findall(rng.choice(texts).lower())))[:5]
        words += rng.choice([[], words[:1], ["文字"], ["字"]])  # a repeated term, spaceless ones
        assert search._snippet(text, words) == plain_snippet(text, words), (text, words)


@pytest.mark.parametrize("seed", range(4))
def test_the_world_body_is_the_fenced_body(seed):
    for text in _texts(seed + 20, 1500):
        for body in (text, "---\ntitle: t\n---\n" + text, text + "\n<!-- takes -->\nmine\n<!-- /takes -->\n"):
            assert search._world_body(body) == fenced_body(body, include_private=False), body


def test_kept_texts_are_bounded_by_the_characters_they_hold():
    built = []
    kept = Kept(lambda t: built.append(t) or len(t), chars=100)
    assert [kept("a" * 5), kept("a" * 5)] == [5, 5] and built == ["aaaaa"]  # the second is kept
    for n in range(10):
        kept(str(n) * 10)
    assert kept._chars <= 100 and "aaaaa" not in kept._held  # the oldest went first
    kept("c" * 11)  # longer than a tenth of the bound: built, never held
    assert "c" * 11 not in kept._held and kept("c" * 11) == 11 and built.count("c" * 11) == 2
