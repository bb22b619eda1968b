"""Rows from Postgres that read like sqlite3.Row: by column name and by position.

The verbs read rows as `row["slug"]` (and a few brain methods as `row[0]`);
this row type gives both, so one caller works on either backend.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from psycopg.cursor import BaseCursor


class Row:
    __slots__ = ("_index", "_values")

    def __init__(self, values: Sequence[Any], index: dict[str, int]) -> None:
        self._values = values
        self._index = index

    def __getitem__(self, key: int | str) -> Any:
        if isinstance(key, str):
            return self._values[self._index[key]]
        return self._values[key]

    def keys(self) -> list[str]:
        return list(self._index)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Row) and self._index == other._index and tuple(self._values) == tuple(other._values)

    def __hash__(self) -> int:
        return hash(tuple(self._values))

    def __repr__(self) -> str:
        return "Row(" + ", ".join(f"{k}={self[k]!r}" for k in self._index) + ")"


def row_factory(cursor: BaseCursor[Any, Any]) -> Callable[[Sequence[Any]], Row]:
    """psycopg's row-factory hook: one column index per result, shared by its rows.

    The names come straight from the result (as psycopg's own row factories read them), not
    from `cursor.description`, which builds a Column object, type lookups included, per column
    of every result: on a short query that was a good part of the client's time."""
    result = cursor.pgresult
    if result is None:
        return _no_columns
    encoding = cursor.connection.info.encoding
    index = {(result.fname(i) or b"").decode(encoding): i for i in range(result.nfields)}

    def make(values: Sequence[Any]) -> Row:
        return Row(values, index)

    return make


def _no_columns(values: Sequence[Any]) -> Row:
    return Row(values, {})
