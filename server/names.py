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


def looks_like_slug(text: str) -> bool:
    return bool(_SLUG_SHAPE.match(text))


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
