"""Plain value classes for the modules a lifecycle hook imports: fields in `__slots__`, equality and repr.

`@dataclass` costs a cold process its import (`inspect`, which brings `ast`, `dis`, `tokenize`)
and, per class, the generated methods it compiles: together about a fifth of a delivering
heartbeat's CPU when every record on the hook's path was a dataclass. A class here lists its
fields in `__slots__` and writes its `__init__` (its signature is the record's constructor, as
mypy and a reader see it), which hands every field to the base by name. Modules off the hook's path keep `@dataclass`.
"""

from __future__ import annotations


class Record:
    """A mutable record: equal when the type and every field are; unhashable, as a mutable dataclass is."""

    __slots__: tuple[str, ...] = ()
    __hash__ = None  # type: ignore[assignment]  # mutable: equality by value, so no hash

    def __init__(self, **values: object) -> None:
        if values.keys() != set(self.__slots__):
            raise TypeError(f"{type(self).__name__} takes exactly its fields {sorted(self.__slots__)}")
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    # copy, deepcopy and pickle restore a record through these (setattr would refuse a frozen one).
    def __getstate__(self) -> tuple:
        return self._values()

    def __setstate__(self, state: tuple) -> None:
        for name, value in zip(self.__slots__, state, strict=True):
            object.__setattr__(self, name, value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record) or type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"


class Frozen(Record):
    """An immutable record: its fields are set once, by `__init__`; hashable by value."""

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]  # Record's None: only the immutable records hash
        return hash(self._values())

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot set {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name}")
