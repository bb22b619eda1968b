"""The world-view checks of page search answer exactly as splitting the text into words would.

Search re-reads each hit's world-safe text for an untrusted caller (did it match there, and which
line is its snippet); those reads find words without splitting whole pages. These hold the fast
forms to the plain definitions, on awkward text: prefixes of longer words, digits and `_` as word
characters, non-Latin letters, case folding, fences, frontmatter and odd line breaks.
"""

import random
import re

import pytest

from memverbs.server.names import collapse
from memverbs.server.pages.markdown import clip, fenced_body
from memverbs.server.terms import spaceless
from memverbs.server.verbs import search

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


def _texts(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40))) for _ in range(n)]


@pytest.mark.parametrize("seed", range(4))
def test_a_word_is_found_exactly_where_splitting_the_text_finds_it(seed):
    texts = _texts(seed, 3000)
    for text, other in zip(texts, reversed(texts), strict=True):
        low = text.lower()
        for word in dict.fromkeys(_TERM.findall(other.lower())):
            assert search._has_word(low, word) is (word in set(_TERM.findall(low))), (low, word)


def test_a_word_character_is_what_the_regex_calls_one():
    sample = [*map(chr, range(0x3400)), "中", "_", "٣", "²", "\u00ad", "\U0001d7ce"]
    assert [c for c in sample if search._wordy(c) is not bool(re.match(r"\w", c))] == []


@pytest.mark.parametrize("seed", range(4))
def test_the_snippet_is_the_line_holding_the_most_terms(seed):
    rng = random.Random(seed)
    texts = _texts(seed + 10, 600)
    for text in texts:
        words = list(dict.fromkeys(_TERM.findall(rng.choice(texts).lower())))[:5]
        assert search._snippet(text, words) == plain_snippet(text, words), (text, words)


@pytest.mark.parametrize("seed", range(4))
def test_the_world_body_is_the_fenced_body(seed):
    for text in _texts(seed + 20, 1500):
        for body in (text, "---\ntitle: t\n---\n" + text, text + "\n<!-- takes -->\nmine\n<!-- /takes -->\n"):
            assert search._world_body(body) == fenced_body(body, include_private=False), body
