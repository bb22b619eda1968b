"""The protocol registry: the single source of every operation's wire definition.

tools/list, `memverbs protocol --json`, dispatch validation and the conformance
runner's schemas all read these objects, so they cannot drift apart. This
module is data only (no verb code is imported), which keeps it cheap for the
hook path and the CLI.
"""

from __future__ import annotations

from memverbs.server.protocol.model import Operation, Param
from memverbs.server.protocol.page_defs import PAGE_OPERATIONS
from memverbs.server.protocol.verb_defs import VERB_OPERATIONS

__all__ = ["BY_NAME", "CORE_VERBS", "OPERATIONS", "VERB_NAMES", "Operation", "Param"]

# tools/list order: the verbs in the reference's global operations order, then page ops.
OPERATIONS: tuple[Operation, ...] = VERB_OPERATIONS + PAGE_OPERATIONS
BY_NAME: dict[str, Operation] = {op.name: op for op in OPERATIONS}

# VERB_NAMES is the `protocol --json` order.
VERB_NAMES = ("recall", "remember", "entity", "synthesize", "forget", "context_pack", "delta")
CORE_VERBS = ("recall", "remember", "entity", "synthesize", "forget")
