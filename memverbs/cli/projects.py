"""The CLI's projects: which one it runs in (its working directory), and `--project NAME` as a slug.

`memverbs projects` lists them (cli/browse.py); `recall --project` and `entities --project` filter
by one. NAME is the project's slug (`projects/app`), its name (`app`) or a directory inside it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from memverbs.server.errors import MemverbsError
from memverbs.server.projects import PROJECT_PREFIX, brain_slug, find_project

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain


class ProjectArgError(MemverbsError):
    """`--project NAME` names no project this brain knows."""


def project_slug(brain: Brain, source: str, name: str) -> str:
    """The registered project NAME means (slug, name or a directory in it); ProjectArgError otherwise."""
    text = name.strip()
    known = {str(r["slug"]): r for r in brain.projects(source, 0)}
    if text and os.path.isdir(text):
        found = find_project(text)
        if found is not None and (slug := brain_slug(brain, source, found)) in known:
            return slug
    else:
        for slug in (text, PROJECT_PREFIX + text.removeprefix(PROJECT_PREFIX)):
            if slug in known:
                return slug
        by_name = [slug for slug, r in known.items() if r["name"] == text]
        if len(by_name) == 1:
            return by_name[0]
    listed = ", ".join(sorted(known)) or "none yet"
    raise ProjectArgError(
        f"no project {text!r} in this brain (known: {listed})",
        "Pass a slug or name `memverbs projects` lists, or a directory inside the repository; a project is "
        "recorded when something is first remembered in it.",
    )
