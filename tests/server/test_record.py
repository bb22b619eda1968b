"""server/record.py: the plain records on the hook's path behave as the dataclasses they replaced."""

from __future__ import annotations

import pytest

from memverbs.server.record import Frozen, Record


class Point(Frozen):
    __slots__ = ("x", "y")
    x: int
    y: int

    def __init__(self, x: int, y: int = 0) -> None:
        super().__init__(x=x, y=y)


class Bag(Record):
    __slots__ = ("items", "name")
    name: str
    items: list

    def __init__(self, name: str, items: list | None = None) -> None:
        super().__init__(name=name, items=[] if items is None else items)


def test_equality_hash_and_repr_follow_the_fields():
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(2, 1) and hash(Point(1, 2)) == hash(Point(1, 2))
    assert Point(1) != (1, 0) and {Point(1): "a"}[Point(1, 0)] == "a"
    assert repr(Point(1, 2)) == "Point(x=1, y=2)"
    assert Bag("a") == Bag("a", []) and Bag("a") != Bag("a", [1])


def test_a_frozen_record_cannot_change_and_a_mutable_one_has_no_hash():
    p = Point(1)
    with pytest.raises(AttributeError):
        p.x = 2
    with pytest.raises(AttributeError):
        del p.y
    with pytest.raises(AttributeError):
        p.z = 3  # type: ignore[attr-defined]  # not a field
    with pytest.raises(TypeError):
        hash(Bag("a"))
    b = Bag("a")
    b.items.append(1)
    b.name = "b"
    assert b == Bag("b", [1]) and Bag("x").items is not Bag("x").items  # no shared default


def test_copies_and_pickles_are_equal_records():
    import copy
    import pickle

    for record in (Point(1, 2), Bag("a", [1, [2]])):
        assert copy.copy(record) == record and copy.deepcopy(record) == record
        assert pickle.loads(pickle.dumps(record)) == record
    deep = copy.deepcopy(Bag("a", [[1]]))
    assert deep.items == [[1]] and deep.items is not Bag("a", [[1]]).items
    with pytest.raises(AttributeError):
        copy.copy(Point(1)).x = 5


def test_an_init_that_misses_a_field_fails_at_once():
    class Broken(Record):
        __slots__ = ("a", "b")

        def __init__(self, a: int) -> None:
            super().__init__(a=a)

    with pytest.raises(TypeError, match="takes exactly its fields"):
        Broken(1)


def test_every_record_on_the_hook_path_sets_each_of_its_fields():
    """Each converted record's own `__init__` hands the base every field (the base checks it)."""
    from pathlib import Path

    from memverbs.hooks.events import Harness, HookEvent, Moment
    from memverbs.hooks.state import SessionState
    from memverbs.server.brain.base import FactFilter, NewFact, PageDraft, SearchQuery
    from memverbs.server.brain.location import BrainLocation
    from memverbs.server.brain.migrations import Step
    from memverbs.server.context import Caller, VerbContext
    from memverbs.server.dispatch import Dispatcher, Outcome
    from memverbs.server.home import Home
    from memverbs.server.pages.markdown import ParsedPage
    from memverbs.server.protocol.model import Operation, Param
    from memverbs.server.protocol.params import Checked
    from memverbs.server.quickconfig import QuickSettings
    from memverbs.server.verbs.budget import Packed
    from memverbs.server.verbs.cards import Candidate

    caller = Caller.local("default")
    made = [
        HookEvent(Harness.CLAUDE, Moment.HEARTBEAT, "s"), SessionState("x"), FactFilter("recent", 0, True, True, 5),
        NewFact("f", "f", "fact", None, "world", "t", None), PageDraft("a/b", "B", None, "", {}, None, "world"),
        SearchQuery(("a",)), BrainLocation("sqlite", Path("b.db")), Step("0001", "SELECT 1"), caller,
        VerbContext(brain=None, caller=caller), Dispatcher(caller, "verbs", lambda: None), Outcome({}), Home(Path("h")),  # type: ignore[arg-type]
        ParsedPage({}, "", None, None, None, None), Operation("x", "d", (Param("p", "string"),), "read", False),
        Checked({}), QuickSettings("default", "brain.db", "", 10, ""), Packed([], 0, 0), Candidate(0, {}),
    ]
    for record in made:
        assert all(hasattr(record, name) for name in record.__slots__), record
        assert record == record and not hasattr(record, "__dict__")
    assert SessionState("x").entities is not SessionState("x").entities
