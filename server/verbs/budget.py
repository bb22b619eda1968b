"""The budget packer: a greedy contiguous prefix, and the two-arm split.

The prefix never skips an item to fit a later one: delivering a contiguous
prefix is what keeps delta's cursor exact and recall's order honest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memverbs.server.record import Record

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")
    U = TypeVar("U")


class Packed(Record):
    __slots__ = ("dropped", "kept", "used")
    kept: list
    used: int
    dropped: int

    def __init__(self, kept: list, used: int, dropped: int) -> None:
        super().__init__(kept=kept, used=used, dropped=dropped)


def pack(items: Sequence[T], cost: Callable[[T], int], budget: int) -> Packed:
    if budget <= 0 or not items:
        return Packed(list(items), sum(cost(i) for i in items), 0)
    used = 0
    kept: list = []
    for item in items:
        c = cost(item)
        if used + c > budget:
            break
        kept.append(item)
        used += c
    return Packed(kept, used, len(items) - len(kept))


def pack_two(
    a: Sequence[T], cost_a: Callable[[T], int], b: Sequence[U], cost_b: Callable[[U], int], budget: int
) -> tuple[Packed, Packed]:
    """Arm A takes the whole budget; arm B gets what is left, or nothing at all."""
    first = pack(a, cost_a, budget)
    remaining = budget - first.used
    if remaining > 0:
        second = pack(b, cost_b, remaining)
    else:
        second = Packed([], 0, len(b))
    return first, second


def budget_fields(budget: int, first: Packed, second: Packed) -> dict:
    return {
        "budget_tokens": budget,
        "budget_used": first.used + second.used,
        "dropped_count": first.dropped + second.dropped,
    }
