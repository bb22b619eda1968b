"""Surfaces: which operations a connection may see and call.

verbs ⊆ starter ⊆ full, strictly. The same set filters tools/list and
dispatch, so a hidden tool called by name is indistinguishable from an unknown
one (fail-closed in both layers).
"""

from __future__ import annotations

from memverbs.server.protocol.page_defs import STARTER_PAGE_OPS
from memverbs.server.protocol.registry import OPERATIONS
from memverbs.server.quickconfig import SURFACES  # their names live with the light settings reader, which checks them

__all__ = ["SURFACES"]

DEFAULT_SURFACE = "full"

_VERBS = frozenset(op.name for op in OPERATIONS if op.verb)
_ALLOWED: dict[str, frozenset[str]] = {
    "verbs": _VERBS,
    "starter": _VERBS | frozenset(STARTER_PAGE_OPS),
    "full": frozenset(op.name for op in OPERATIONS),
}


def allowed(surface: str) -> frozenset[str]:
    return _ALLOWED[surface]


def narrower(a: str, b: str) -> str:
    """The smaller of two surfaces: a ceiling can only narrow what is served."""
    return a if SURFACES.index(a) <= SURFACES.index(b) else b


def tool_defs(surface: str) -> list[dict]:
    names = _ALLOWED[surface]
    return [op.tool_def() for op in OPERATIONS if op.name in names]
