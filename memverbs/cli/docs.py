"""`memverbs docs [TOPIC]`: the project's docs/*.md, as packaged in the wheel, printed at the terminal.

Help text and error messages point here (`memverbs docs remote`) rather than at a `docs/` path that
a pip-only install does not have.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from importlib.resources import files
from importlib.resources.abc import Traversable


def topics() -> dict[str, Traversable]:
    """Every topic by name (a doc's file name without `.md`), sorted."""
    # The wheel carries docs/*.md as `memverbs.docs` (pyproject's package-dir); in a checkout,
    # memverbs/__init__.py lets the repository's docs/ answer for it.
    found = {p.name[: -len(".md")]: p for p in files("memverbs.docs").iterdir() if p.name.endswith(".md")}
    return dict(sorted(found.items()))


def _title(doc: Traversable) -> str:
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip().replace("`", "")
    return ""


def run_docs(args: argparse.Namespace) -> int:
    known = topics()
    if args.topic is None:
        width = max(map(len, known)) + 2
        print("Topics (memverbs docs TOPIC prints one):")
        for name, doc in known.items():
            print(f"  {name.ljust(width)}{_title(doc)}")
        return 0
    # `hooks.md` and `docs/hooks.md#projects` are the forms people copy from a link.
    name = args.topic.split("#", 1)[0].removeprefix("docs/").removesuffix(".md").lower()
    found = known.get(name)
    if found is None:
        near = difflib.get_close_matches(name, list(known), n=1)
        fix = (f"did you mean `memverbs docs {near[0]}`? " if near else "") + "`memverbs docs` lists them all"
        print(f"memverbs docs: no topic {args.topic!r}\n  fix: {fix}", file=sys.stderr)
        return 2
    sys.stdout.write(found.read_text(encoding="utf-8"))
    return 0
