"""A count in words: `1 fact`, `2 facts`, `1 timeline entry`, `0 entities`.

The CLI's messages, doctor's checks and the inspector say counts alike through it.
"""

from __future__ import annotations

import re


def plural(n: int, noun: str, many: str | None = None) -> str:
    """`n` and the noun, plural unless `n` is 1 (`many`: an irregular plural)."""
    if n == 1:
        return f"{n} {noun}"
    if many is None:
        many = noun[:-1] + "ies" if re.search(r"[^aeiou]y$", noun) else noun + ("es" if noun.endswith(("s", "x", "ch", "sh")) else "s")
    return f"{n} {many}"
