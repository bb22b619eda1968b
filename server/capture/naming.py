"""Which entities a text names, for capture: the brain's one name index (server/name_index.py), the
same rules the per-prompt reflex uses, asked with the brain open as the trusted local caller.

Capture files a statement about a person or an organisation under that entity (reports.py); it
never keeps a name list of its own. A plan made without it (`plan_capture(names=None)`) keeps
the user's own statements, filed under the project, and nothing about others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memverbs.server.capture.reports import Names
    from memverbs.server.runtime import Runtime


def brain_names(runtime: Runtime) -> Names:
    """`text → mentions` over `runtime`'s brain, private pages included (capture is the trusted local
    caller; a fact keeps its own visibility)."""
    brain, source = runtime.brain(), runtime.source

    def names(text: str) -> list:
        return list(brain.named_in(source, text, allow_private=True).mentions)

    return names
