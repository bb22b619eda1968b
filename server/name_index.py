"""The name index: which entities a text names.

The one home of that question. The per-prompt reflex (hooks/reflex.py) asks it of every prompt, on
the hook's cheap path; capture asks it with a whole brain open, to file what a session said under
the entities it names. Both get the same answer from the same rules.

**What names a page** (`page_names`): its title ("Alice Example"), each alias ("alice"), its slug's
last segment read as words (`people/alice-example` → "alice example"), and for a person (type
`person`, or a slug under `people/`) the title's first and last word ("alice", "example"). An
entity with facts and no page is named by its slug read as words (`slug_key`). Each is
stored as a key (`key_of`): NFKC, case-folded, accents dropped from Latin, Greek and Cyrillic letters
(server/terms.py's `fold`), split into words (runs of letters and digits, inner apostrophes kept, a
final possessive `'s` dropped), joined by single spaces. Declared names (title, alias) outrank the
derived ones (slug, first or last name).

**Where it lives**: the table `entity_names` (source_id, name_key, slug, how), keyed on (source_id,
name_key, slug). It is written in each page write's own transaction (server/brain/names_store.py:
every save, alias, rename and delete), filled for the pages already there by the schema step
`0025_entity_names`, and rebuilt after a backup is restored; `migrate` copies it. A text is looked
up in one statement: its candidate keys (`Scan.keys`: every run of up to MAX_NAME_WORDS words, of at
most MAX_TOKENS words) through the primary key. Its cost grows with the text, never with the brain.
An in-memory automaton (Aho-Corasick) would match as fast, but a hook is a new process per prompt:
it would be loaded, or rebuilt, from the whole brain every time.

**What counts as naming** (`resolve`):
* The longest name wins: "Alice Example" is one mention, not also "Alice".
* A name two pages share is ambiguous, never a guess: it is reported in `Named.ambiguous` (unless
  one of its pages is named plainly elsewhere in the text), never as a mention. A declared name
  (title or alias) outranks a derived one; a first or last name counts only when no other page of
  the source has that key at all.
* A one-word name that is also an everyday word (server/common_words.py), or of two letters or
  fewer, counts only capitalised inside a sentence ("ask Grace", not "grace period", not "Search
  is slow" at a sentence's start); a longer name counts in any case ("saoirse", "widget co") unless
  every word of it is everyday.
* A person's one-word name right beside another capitalised word that names nothing is someone
  else's name ("Mireille Coppersmither", "Priya Tavenner"): not a mention.
* Fenced code blocks are not read: identifiers are not mentions.
* A word run in a script written without spaces (Chinese, Japanese, Thai, …) is searched for names
  inside it (every piece of 2–MAX_SPACELESS characters).

**The API** (stable; plain values, no brain needed to match):
* `key_of(name) -> str` — the key a name is stored and looked up under.
* `page_names(title, slug, type_, aliases) -> list[(key, how)]` — what a page is indexed under.
* `scan(text) -> Scan` — the text's words; `Scan.keys` the candidate keys to look up.
* `resolve(scan, rows) -> Named` — `rows` are the index's rows for those keys:
  `(name_key, slug, how, type, title)`, only pages the caller may see.
* `find(text, lookup) -> Named` — both steps; `lookup(keys)` returns the rows.
  With a brain open, `Brain.named_in(source, text, allow_private=…)` asks it of the brain's index
  (brain/names_store.py): this module imports nothing of the brain's.
* `Named.mentions`: `Mention(slug, title, type, how, text, start, end)` in text order, one per page;
  `Named.ambiguous`: `Ambiguous(text, start, end, slugs)`.
* `named_sql(keys_condition)`: the lookup's SQL, one text for both backends and the hook's own
  connection (`keys_condition`: the dialect's `n.name_key IN (…)`; parameters: source, the keys,
  then allow_private twice). A row of an entity with facts and no page has no type and no title.

Imports only what a hook already has loaded (`re`), plus small modules of its own (`unicodedata` only for a
text that is not plain ASCII).
"""

from __future__ import annotations

import re

from memverbs.server.common_words import COMMON_WORDS
from memverbs.server.record import Frozen
from memverbs.server.terms import STOP_WORDS, fold, spaceless

# Not `typing.TYPE_CHECKING`: the hook's cheap path imports this module, and typing would cost it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

TITLE, ALIAS, SLUG, PART = "title", "alias", "slug", "part"
# Declared names (0) outrank derived ones: the slug (1), then a person's first or last name (2).
_RANK = {TITLE: 0, ALIAS: 0, SLUG: 1, PART: 2}
MAX_NAME_WORDS = 6  # a longer name is not stored (it could never be found)
MAX_KEY_CHARS = 200
MAX_TOKENS = 1_000  # a text's first 1,000 words are read (a prompt; pasted logs go on past that)
MAX_TEXT_CHARS = 20_000
MAX_SPACELESS = 12  # the longest name looked for inside a run of a script written without spaces
PERSON_TYPES = frozenset({"person"})
PERSON_PREFIX = "people/"

_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
# What may stand between two words of one name: spaces, and the joiners of names and slugs.
_JOINERS = frozenset(" \t-/_.&+'\u2019\u00a0")
_SENTENCE_ENDS = frozenset(".!?:;\n\u3002\uff01\uff1f")
_FENCE = "```"


def _split(folded: str) -> list[str]:
    words = []
    for raw in _WORD.findall(folded.replace("\u2019", "'")):
        if raw.endswith("'s") and len(raw) > 2:
            raw = raw[:-2]
        words.append(raw)
    return words


def key_of(name: str) -> str:
    """The key a name is stored and looked up under: folded words joined by single spaces."""
    return " ".join(_split(fold(name)))


def is_person(type_: str | None, slug: str) -> bool:
    return (type_ or "").strip().lower() in PERSON_TYPES or slug.startswith(PERSON_PREFIX)


def page_names(title: str | None, slug: str, type_: str | None, aliases: Iterable[str]) -> list[tuple[str, str]]:
    """The (key, how) pairs a page is indexed under, one per key (its strongest kind)."""
    found: dict[str, str] = {}

    def add(key: str, how: str) -> None:
        if not key or len(key) > MAX_KEY_CHARS or key.count(" ") >= MAX_NAME_WORDS:
            return
        if key not in found or _RANK[how] < _RANK[found[key]]:
            found[key] = how

    if title:
        add(key_of(title), TITLE)
    for alias in aliases:
        add(key_of(alias), ALIAS)
    add(slug_key(slug), SLUG)
    if title and is_person(type_, slug):
        words = key_of(title).split()
        if len(words) >= 2:
            add(words[0], PART)
            add(words[-1], PART)
    return list(found.items())


def slug_key(slug: str) -> str:
    """A slug read as words: its last segment, `-` and `_` as spaces (`people/alice-example` → "alice example")."""
    return key_of(slug.rsplit("/", 1)[-1].replace("-", " ").replace("_", " "))


def named_sql(keys_condition: str) -> str:
    """The index lookup: the rows of the given keys whose pages are live and, unless allowed, world-visible;
    an entity with no page, while it has an active fact of that visibility (one indexed probe each)."""
    return (
        "SELECT n.name_key, n.slug, n.how, p.type, p.title FROM entity_names n "
        "LEFT JOIN pages p ON p.source_id = n.source_id AND p.slug = n.slug "
        f"WHERE n.source_id = ? AND {keys_condition} AND "
        "CASE WHEN p.slug IS NULL THEN EXISTS (SELECT 1 FROM facts f WHERE f.source_id = n.source_id "
        "AND f.entity_slug = n.slug AND f.expired_at IS NULL AND (? OR f.visibility = 'world')) "
        "ELSE p.deleted_at IS NULL AND (? OR p.visibility = 'world') END"
    )


# -- reading a text --------------------------------------------------------------------------------


class Word(Frozen):
    """One word of a text: its key, where it stands, and how it is written."""

    __slots__ = ("capital", "end", "initial", "joined", "key", "possessive", "start")
    key: str
    start: int
    end: int
    capital: bool  # written with a capital first letter
    initial: bool  # the first word of a sentence (its capital says nothing)
    joined: bool  # may continue the name the word before it began (only name joiners between them)
    possessive: bool  # ended in 's: a name may end here, not go on

    def __init__(self, key: str, start: int, end: int, capital: bool, initial: bool, joined: bool, possessive: bool) -> None:
        super().__init__(key=key, start=start, end=end, capital=capital, initial=initial, joined=joined, possessive=possessive)


class Scan(Frozen):
    """A text's words, and the keys a name in it could have (`keys`: what to look up)."""

    __slots__ = ("keys", "pieces", "words")
    words: tuple[Word, ...]
    keys: tuple[str, ...]
    pieces: tuple[tuple[str, int, int], ...]  # (key, start, end): names inside runs written without spaces

    def __init__(self, words: tuple[Word, ...], keys: tuple[str, ...], pieces: tuple[tuple[str, int, int], ...]) -> None:
        super().__init__(words=words, keys=keys, pieces=pieces)


def _readable(text: str) -> list[tuple[int, int]]:
    """The stretches of `text` outside fenced code blocks."""
    out, at = [], 0
    while at < len(text):
        fence = text.find(_FENCE, at)
        if fence < 0:
            out.append((at, len(text)))
            break
        out.append((at, fence))
        close = text.find(_FENCE, fence + len(_FENCE))
        at = len(text) if close < 0 else close + len(_FENCE)
    return out


def scan(text: str) -> Scan:
    """The text's words (its first MAX_TOKENS, outside fenced code) and every key a name in it could have."""
    text = text[:MAX_TEXT_CHARS]
    words: list[Word] = []
    pieces: list[tuple[str, int, int]] = []
    last_end = 0
    for lo, hi in _readable(text):
        for m in _WORD.finditer(text, lo, hi):
            if len(words) >= MAX_TOKENS:
                break
            raw = m.group()
            between = text[last_end : m.start()] if words else ""
            folded = fold(raw).replace("\u2019", "'")
            possessive = folded.endswith("'s") and len(folded) > 2
            key = folded[:-2] if possessive else folded
            initial = not words or any(c in _SENTENCE_ENDS for c in between) or (m.start() == lo and lo > 0)
            joined = bool(words) and not initial and len(between) <= 3 and all(c in _JOINERS for c in between) \
                and not words[-1].possessive and ". " not in between
            words.append(Word(key, m.start(), m.end(), raw[:1].isupper(), initial, joined, possessive))
            last_end = m.end()
            if not raw.isascii() and spaceless(raw):
                pieces.extend(_pieces(folded, m.start()))
    keys = dict.fromkeys(key for _, _, key in _runs(words))
    for key, _, _ in pieces:
        keys[key] = None
    return Scan(tuple(words), tuple(keys), tuple(pieces))


def _runs(words: tuple[Word, ...] | list[Word]) -> Iterator[tuple[int, int, str]]:
    """Every run of up to MAX_NAME_WORDS joined words: (first word, past the last, its key)."""
    for i in range(len(words)):
        parts: list[str] = []
        for j in range(i, min(len(words), i + MAX_NAME_WORDS)):
            if j > i and not words[j].joined:
                break
            parts.append(words[j].key)
            yield i, j + 1, " ".join(parts)


def _pieces(run: str, start: int) -> list[tuple[str, int, int]]:
    """Every 2–MAX_SPACELESS character piece of a word (a run holding a script written without spaces)."""
    out = []
    for i in range(len(run)):
        for j in range(i + 2, min(len(run), i + MAX_SPACELESS) + 1):
            out.append((run[i:j], start + i, start + j))
    return out


# -- deciding what the text names ----------------------------------------------------------------


class Mention(Frozen):
    """A page the text names: its slug, title and type, the kind of name found, and where (`text` as written)."""

    __slots__ = ("end", "how", "slug", "start", "text", "title", "type")
    slug: str
    title: str | None
    type: str | None
    how: str
    text: str
    start: int
    end: int

    def __init__(self, slug: str, title: str | None, type: str | None, how: str, text: str, start: int, end: int) -> None:  # noqa: A002
        super().__init__(slug=slug, title=title, type=type, how=how, text=text, start=start, end=end)


class Ambiguous(Frozen):
    """A name two or more pages share: which ones, and where it stands in the text."""

    __slots__ = ("end", "slugs", "start", "text")
    text: str
    start: int
    end: int
    slugs: tuple[str, ...]

    def __init__(self, text: str, start: int, end: int, slugs: tuple[str, ...]) -> None:
        super().__init__(text=text, start=start, end=end, slugs=slugs)


class Named(Frozen):
    __slots__ = ("ambiguous", "mentions")
    mentions: tuple[Mention, ...]
    ambiguous: tuple[Ambiguous, ...]

    def __init__(self, mentions: tuple[Mention, ...] = (), ambiguous: tuple[Ambiguous, ...] = ()) -> None:
        super().__init__(mentions=mentions, ambiguous=ambiguous)

    @property
    def slugs(self) -> list[str]:
        return [m.slug for m in self.mentions]


Row = tuple  # (name_key, slug, how, type, title), as named_sql selects them


def _everyday(key: str) -> bool:
    return key in COMMON_WORDS or len(key) <= 2 or key.isdigit()


def _written_as_name(words: tuple[Word, ...]) -> bool:
    """Whether the words, as written, are a name rather than everyday words (see the module's rules)."""
    if any(not _everyday(w.key) for w in words):
        return True
    if len(words) == 1:
        return words[0].capital and not words[0].initial
    # Every word written with a capital ("Monday Review", "Target Person 3"): function words and numbers have none.
    return all(w.capital for w in words if w.key not in STOP_WORDS and not w.key.isdigit())


def _someone_else(words: tuple[Word, ...], at: int, known: dict) -> bool:
    """A person's one-word name beside another capitalised word that names nothing: someone else's name."""
    def stranger(k: int) -> bool:
        w = words[k]
        return w.capital and not _everyday(w.key) and w.key not in known
    after = at + 1 < len(words) and words[at + 1].joined and stranger(at + 1)
    before = at > 0 and words[at].joined and not words[at - 1].initial and stranger(at - 1)
    return after or before


def resolve(scan: Scan, rows: Iterable[Row], text: str | None = None) -> Named:
    """What the scanned text names, given the index's rows for its keys (`text`: for `Mention.text`)."""
    by_key: dict[str, dict[str, tuple[str, str | None, str | None]]] = {}
    for key, slug, how, type_, title in rows:
        pages = by_key.setdefault(key, {})
        if slug not in pages or _RANK[how] < _RANK.get(pages[slug][0], 9):
            pages[slug] = (how, type_, title)
    if not by_key:
        return Named()
    words = scan.words
    # Candidates, longest first, then in text order: (start word, end word (exclusive), key).
    spans = [run for run in _runs(words) if run[2] in by_key]
    spans.sort(key=lambda s: (-(s[1] - s[0]), s[0]))
    claimed: list[tuple[int, int]] = []
    found: list[Mention] = []
    unsure: list[Ambiguous] = []

    def shown(lo: int, hi: int) -> str:
        return text[lo:hi] if text is not None else ""

    for lo, hi, key in spans:
        if any(lo < c_hi and c_lo < hi for c_lo, c_hi in claimed):
            continue
        span = words[lo:hi]
        if not _written_as_name(span):
            continue
        pages = by_key[key]
        best = min(_RANK[how] for how, _, _ in pages.values())
        chosen = [slug for slug, (how, _, _) in pages.items() if _RANK[how] == best]
        # Another page's first or last name makes even a declared name ambiguous: two people, one word.
        rivals = {*chosen, *(slug for slug, (how, _, _) in pages.items() if how == PART)}
        start, end = span[0].start, span[-1].end
        if len(rivals) > 1:
            claimed.append((lo, hi))
            unsure.append(Ambiguous(shown(start, end), start, end, tuple(sorted(pages))))
            continue
        slug = chosen[0]
        how, type_, title = pages[slug]
        if hi - lo == 1 and is_person(type_, slug) and _someone_else(words, lo, by_key):
            continue
        claimed.append((lo, hi))
        found.append(Mention(slug, title, type_, how, shown(start, end), start, end))
    for key, start, end in scan.pieces:
        pages = by_key.get(key, {})
        if len(pages) == 1 and not any(m.start <= start and end <= m.end for m in found):
            slug, (how, type_, title) = next(iter(pages.items()))
            found.append(Mention(slug, title, type_, how, shown(start, end), start, end))
    mentions: dict[str, Mention] = {}
    for m in sorted(found, key=lambda m: m.start):
        mentions.setdefault(m.slug, m)
    ambiguous = tuple(a for a in sorted(unsure, key=lambda a: a.start) if not set(a.slugs) & mentions.keys())
    return Named(tuple(mentions.values()), ambiguous)


def find(text: str, lookup: Callable[[list[str]], Iterable[Row]]) -> Named:
    """What `text` names; `lookup(keys)` answers the index's rows for those keys (named_sql)."""
    scanned = scan(text)
    if not scanned.keys:
        return Named()
    return resolve(scanned, lookup(list(scanned.keys)), text)
