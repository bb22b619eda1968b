"""How the CLI talks to a person: JSON when asked, otherwise short text, errors on stderr with the fix."""

from __future__ import annotations

import json
import sys


def print_json(body: object) -> None:
    print(json.dumps(body, indent=2, ensure_ascii=False))


def fail(message: str, fix: str | None = None, code: int = 1) -> int:
    print(f"memverbs: {message}", file=sys.stderr)
    if fix:
        print(f"  fix: {fix}", file=sys.stderr)
    return code
