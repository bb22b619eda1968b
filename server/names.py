"""Names: slugs, aliases and the token estimate, as the protocol defines them."""

from __future__ import annotations

import re
import unicodedata

_SLUG_SHAPE = re.compile(r"^[a-z0-9/_-]+$")
_NON_SLUG = re.compile(r"[^a-z0-9]+")
_WRAPPERS = {'"': '"', "'": "'", "`": "`", "(": ")", "[": "]", "{": "}", "<": ">", "“": "”", "‘": "’"}


def slugify(text: str) -> str:
    """lowercase → NFKD → strip combining marks → runs of [^a-z0-9] become '-' → trim '-'."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _NON_SLUG.sub("-", plain).strip("-")


def slugify_path(text: str) -> str:
    """Slugify each '/' segment separately, so `people/Jane Doe` → `people/jane-doe`."""
    return "/".join(s for s in (slugify(seg) for seg in text.split("/")) if s)


# Greek and Cyrillic letters, one Latin spelling each (ISO 843 and ISO 9, simplified): a name in
# these scripts keeps a readable slug (`Москва` → `moskva`, `Ελλάδα` → `ellada`). Scripts with no
# such spelling (Chinese, Japanese, Korean, Arabic, Hebrew, Devanagari, Thai, …) keep their own letters.
_TRANSLIT = str.maketrans({
    **dict(zip("αβγδεζηικλμνξοπρστυφω", "avgdeziiklmnxoprstyfo", strict=True)),
    "θ": "th", "χ": "ch", "ψ": "ps", "ς": "s",
    **dict(zip("абвгдезиклмнопрстуфхцыэіґўј", "abvgdeziklmnoprstufhcyeiguj", strict=True)),
    "ё": "e", "й": "j", "ж": "zh", "ч": "ch", "ш": "sh", "щ": "shch", "ъ": "", "ь": "", "ю": "ju", "я": "ja",
    "ї": "ji", "є": "je", "ђ": "dj", "љ": "lj", "њ": "nj", "ћ": "c", "џ": "dz", "ѓ": "gj", "ќ": "kj", "\u0455": "dz",
})
# What is left of ASCII but a-z 0-9 _ - (written as ASCII ranges: a negated class reaching to U+10FFFF costs
# a cold process milliseconds to compile, and the hooks import this module).
_NON_ASCII_PATH_SLUG = re.compile(r"[\x00-\x2c\x2e\x2f\x3a-\x5e\x60\x7b-\x7f]+")
_ASCII_SEGMENT = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def _own_letter(ch: str) -> bool:
    """A letter, digit or mark of a script with no Latin spelling here: kept in a slug as it is.
    Latin letters (accented or not), Greek and Cyrillic are spelled in `a-z` instead, and symbols,
    punctuation, spaces and emoji are separators."""
    if ch.isascii() or unicodedata.category(ch)[0] not in "LMN":
        return False
    name = unicodedata.name(ch, "")
    return not name.startswith(("LATIN ", "GREEK ", "CYRILLIC ", "FULLWIDTH LATIN ", "MODIFIER LETTER "))


def _spelled(ch: str) -> str:
    """One character as a slug spells it: itself when it is another script's letter, else its
    accent-stripped compatibility form (`é` → `e`, `ﬁ` → `fi`, `①` → `1`)."""
    if _own_letter(ch):
        return ch
    decomposed = unicodedata.normalize("NFKD", ch)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).translate(_TRANSLIT)


def path_segment_slug(segment: str) -> str:
    """One path segment as the slug rule for files has it (docs/sync.md): lowercase, Greek and
    Cyrillic spelled in Latin letters, accents stripped, the letters of other scripts kept as they
    are (`日本` → `日本`, `서울 지도` → `서울-지도`), runs of anything else but `a-z 0-9 _ -` become
    `-`, leading `_`/`-` and trailing `-` trimmed; a segment with nothing left (only symbols or
    emoji) becomes `x-` and 8 hex digits of the SHA-1 of its case-folded form."""
    # ASCII, the common case, is spelled as `_spelled_segment` spells it, without a pass per letter.
    slug = _ascii_segment(segment) if segment.isascii() else _spelled_segment(segment)
    if not slug:
        import hashlib  # noqa: PLC0415 - only for a name with no letters at all; hooks import this module and never need it

        slug = "x-" + hashlib.sha1(unicodedata.normalize("NFC", segment).casefold().encode("utf-8")).hexdigest()[:8]
    return slug


def _spelled_segment(segment: str) -> str:
    lowered = unicodedata.normalize("NFC", segment.lower()).translate(_TRANSLIT)
    plain = "".join(c if c.isascii() or _own_letter(c) else "-" for c in "".join(_spelled(ch) for ch in lowered))
    return unicodedata.normalize("NFC", _NON_ASCII_PATH_SLUG.sub("-", plain)).lstrip("_-").rstrip("-")


def _ascii_segment(segment: str) -> str:
    return _NON_ASCII_PATH_SLUG.sub("-", segment.lower()).lstrip("_-").rstrip("-")


def valid_slug(text: str) -> bool:
    """A page slug memverbs accepts: `/`-separated segments, each `a-z 0-9` then `a-z 0-9 _ -`
    (the protocol's shape), or a segment with other scripts' letters exactly as the file slug
    rule writes it (`notes/日本`), so every slug a file can have is one put_page takes, and the
    other way round."""
    if not text or text != text.strip():
        return False
    for seg in text.split("/"):
        if _ASCII_SEGMENT.match(seg):
            continue
        if seg.isascii() or path_segment_slug(seg) != seg:
            return False
    return True


def link_key(target: str) -> str:
    """What a link names, as the slug of the file it names: `Plugins/Command Palette` → `plugins/command-palette`,
    `CLAUDE_DESKTOP` → `claude_desktop`. Links match files by this key, so case, spaces and accents never matter."""
    return "/".join(path_segment_slug(seg) for seg in target.split("/") if seg.strip())


def slug_of_name(text: str) -> str:
    """The slug a name is filed under when it names no page (§4.3's last step): slugify per path
    segment; a name slugify leaves nothing of (`日本`, `京都 寺`) gets the file rule's slug instead
    (`日本`, `京都-寺`), so it is never lost. Empty only for a name with no letters, digits or symbols."""
    return slugify_path(text) or link_key(text)


def looks_like_slug(text: str) -> bool:
    """§4.3's "looks like a slug" (`^[a-z0-9/_-]+$`), and, as memverbs' deliberate widening, a
    slug with other scripts' letters (`notes/日本`, valid_slug)."""
    return bool(_SLUG_SHAPE.match(text)) or (not text.isascii() and valid_slug(text))


def normalize_alias(text: str) -> str:
    """NFKC → lowercase → collapse whitespace → trim → strip one layer of wrapping quotes/brackets."""
    s = " ".join(unicodedata.normalize("NFKC", text).lower().split())
    if len(s) >= 2 and _WRAPPERS.get(s[0]) == s[-1]:
        s = " ".join(s[1:-1].split())
    return s


def title_key(text: str) -> str:
    """A title as both backends compare it: NFKC → casefold → collapse whitespace → trim.

    Computed here, never by the database's lower(): SQLite's folds ASCII only ("Été" stays "Été"),
    Postgres's follows the database's locale, so "Été 2024" or "ÉTÉ 2024" would find its page on one
    backend and not the other. Stored beside the title (`pages.title_key`) and looked up by index."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def estimate_tokens(text: str | None) -> int:
    """ceil(len/4) in UTF-16 code units, the length JS reports."""
    if not text:
        return 0
    units = len(text.encode("utf-16-le")) // 2
    return -(-units // 4)


def collapse(text: str) -> str:
    return " ".join(text.split())


# Sentence-final marks (and the commas, colons and closing quotes around them) in the scripts facts are written in.
_FINAL_MARKS = ".!?;:,…\u3002\uff01\uff1f\uff1b\uff1a\uff0c\u3001\u300d\u300f\"'\u201d\u2019)"


def restatement_key(text: str) -> str:
    """A fact's dedup key: the same fact restated in another case, spacing or final punctuation has the same key."""
    return collapse(text).casefold().rstrip(_FINAL_MARKS + " ")
