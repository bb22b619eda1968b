"""The SQLite facts arm's BM25 ranking, computed in-process over postings kept between queries.

FTS5's `bm25()` scores every row an OR query matches before the sort and the LIMIT (about 2 µs
a row: a question matching a thousand facts of ten thousand spends most of recall's time there),
and Python's `sqlite3` cannot register an FTS5 auxiliary function that would do less. So the
index's content is kept here too: each fact's terms (`facts.search_terms`, which the index holds
tokenised by FTS5's `ascii` tokenizer, i.e. split on the spaces memverbs put there), as postings
(term → positions, counts), the facts' lengths, N and the total length. A query's score is then
FTS5's own formula (fts5_aux.c, `fts5Bm25Function`: k1 = 1.2, b = 0.75, idf floored at 1e-6,
phrases summed in query order) on the same integers, so the same floats: the ranking is the
one `ORDER BY bm25(facts_fts), rowid DESC` gives, scores included, and tests hold it to it.

A caller reading world facts only ranks over a second copy kept the same way from the index of
the world facts alone (`facts_world_fts` over the view `facts_world`): its N, lengths and document
frequencies count no private fact, so none moves what it gets. A fact whose visibility changes
comes and goes there under an old id; the counts then disagree and it is read again whole.

Only ids and scores live here; the rows, with the arm's filter (source, active, world-visible
for an untrusted caller, entity, session, …), are read from the table for the best candidates
as before, so what a caller may see is decided by the same SQL as ever.

Kept in step with the index: every use first reads FTS5's averages record (row count and total
length) and its structure record (its cookie changes with every write to the index) from the
index's `_data` table, and the newest fact, three point reads. When either differs from what was loaded, the facts
added since are read (ids only grow); when the counts then disagree with the averages record
(a fact deleted or its terms rewritten: migrations only) everything is read again. A write by
another connection or process is therefore seen by the next query, and so is one of this
connection's own.

A one-shot process (a CLI `recall`) ranks one query: the postings are loaded only on a brain's
second ranked query, the first uses FTS5 as before.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from array import array
from bisect import bisect_left
from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from memverbs.server.brain.base import Row
    from memverbs.server.brain.store import Store

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6
_AVERAGES = 1  # FTS5_AVERAGES_ROWID: varints nRow, then each column's total tokens
_STRUCTURE = 10  # FTS5_STRUCTURE_ROWID: begins with a cookie bumped on every change


def _varint(blob: bytes, at: int) -> tuple[int, int]:
    """SQLite's variable-length integer at `at`: (value, next offset)."""
    value = 0
    for i in range(8):
        byte = blob[at + i]
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, at + i + 1
    return (value << 8) | blob[at + 8], at + 9


class FactPostings:
    """One FTS5 facts index (`table`, over the column `terms` of `content`) held in memory."""

    def __init__(self, table: str = "facts_fts", content: str = "facts", terms: str = "search_terms") -> None:
        self.table, self.content, self.terms = table, content, terms
        self.lock = threading.Lock()  # one copy per brain file, shared by the process's connections to it
        self._clear()

    def _clear(self) -> None:
        self.signature: tuple[bytes, ...] | None = None
        # Machine integers in arrays, not Python lists: a tenth of the memory (a posting costs 8 bytes).
        self.ids = array("q")  # position → fact id, ascending
        self.lengths = array("l")  # position → number of terms
        self.postings: dict[str, tuple[array, array]] = {}  # term → (positions, counts)
        self.total = 0
        self.usable = False  # the counts agree with the index's own
        self._shares: dict[str, array] = {}  # term → its BM25 share in each fact of its positions, for this state

    # -- keeping in step ---------------------------------------------------------------

    def _index_state(self, db: sqlite3.Connection) -> tuple[tuple[bytes, ...], int, int]:
        blocks = dict(db.execute(f"SELECT id, block FROM {self.table}_data WHERE id IN (?, ?)", (_AVERAGES, _STRUCTURE)).fetchall())
        averages = bytes(blocks.get(_AVERAGES) or b"")
        rows, at = _varint(averages, 0) if averages else (0, 0)
        total = _varint(averages, at)[0] if averages else 0
        # The newest fact too: two brain files at one path (one replaced by another) agree on all of it only by chance.
        last = db.execute(f"SELECT id, {self.terms} FROM {self.content} ORDER BY id DESC LIMIT 1").fetchone()
        return (averages, bytes(blocks.get(_STRUCTURE) or b""), repr(tuple(last or ())).encode()), rows, total

    def refresh(self, db: sqlite3.Connection) -> bool:
        """Bring the postings up to the index; False when they cannot be made to agree with it (then rank with FTS5)."""
        signature, rows, total = self._index_state(db)
        if signature == self.signature:
            return self.usable
        self._shares = {}
        last = self.ids[-1] if self.ids else 0
        self._add(db.execute(f"SELECT id, {self.terms} FROM {self.content} WHERE id > ? ORDER BY id", (last,)))
        if (len(self.ids), self.total) != (rows, total):
            self._clear()  # a fact left or its terms changed: start over
            self._add(db.execute(f"SELECT id, {self.terms} FROM {self.content} ORDER BY id"))
        self.signature = signature
        self.usable = (len(self.ids), self.total) == (rows, total)
        return self.usable

    def _add(self, rows: Sequence[tuple[int, str]] | sqlite3.Cursor) -> None:
        postings, ids, lengths = self.postings, self.ids, self.lengths
        for fact_id, text in rows:
            position = len(ids)
            ids.append(fact_id)
            terms = (text or "").split()
            lengths.append(len(terms))
            self.total += len(terms)
            counts: dict[str, int] = {}
            for term in terms:
                counts[term] = counts.get(term, 0) + 1
            for term, count in counts.items():
                held = postings.get(term)
                if held is None:
                    postings[term] = (array("l", (position,)), array("l", (count,)))
                else:
                    held[0].append(position)
                    held[1].append(count)

    # -- scoring -----------------------------------------------------------------------

    def _share(self, term: str) -> tuple[array, array]:
        """The facts holding `term` (positions) and the term's part of each one's BM25, as FTS5 computes it."""
        positions, counts = self.postings.get(term, (array("l"), array("l")))
        held = self._shares.get(term)
        if held is not None:
            return positions, held
        rows = len(self.ids)
        hits = len(positions)
        idf = math.log((rows - hits + 0.5) / (hits + 0.5))
        if idf <= 0.0:
            idf = IDF_FLOOR
        average = self.total / rows if rows else 1.0
        lengths = self.lengths
        # The same operations in the same order as fts5Bm25Function, so the same doubles.
        held = array("d", [
            idf * ((c * (K1 + 1.0)) / (c + K1 * (1 - B + B * lengths[p] / average)))
            for p, c in zip(positions, counts, strict=True)
        ])
        self._shares[term] = held
        return positions, held

    def scores(self, terms: Sequence[str]) -> dict[int, float]:
        """position → BM25 (higher is better) of every fact holding one of `terms` (an OR query of them)."""
        scores: dict[int, float] = {}
        get = scores.get
        for term in terms:  # summed in the query's order, as FTS5 sums its phrases
            for position, share in zip(*self._share(term), strict=True):
                scores[position] = get(position, 0.0) + share
        return scores

    def ranked(self, terms: Sequence[str], top: int | None = None) -> list[tuple[float, int]]:
        """(score, fact id) best first, ties by the newer fact (FTS5's `ORDER BY bm25, rowid DESC`); the first `top` only."""
        scores = self.scores(terms)
        if top is not None and top < len(scores):
            # The top-th best score is found among the bare floats (a sort in C); only the facts scoring
            # at least that are paired and ordered.
            floor = sorted(scores.values(), reverse=True)[top - 1]
            best = sorted([(s, p) for p, s in scores.items() if s >= floor], reverse=True)[:top]
        else:
            best = sorted([(s, p) for p, s in scores.items()], reverse=True)
        ids = self.ids  # positions follow ids, so (score, position) orders as (score, id)
        return [(s, ids[p]) for s, p in best]

    def ranked_among(self, terms: Sequence[str], fact_ids: Sequence[int]) -> list[tuple[float, int]]:
        """`ranked(terms)` restricted to `fact_ids` (found by bisection: ids are ascending), without sorting every match."""
        scores, ids = self.scores(terms), self.ids
        hits = []
        for fact_id in dict.fromkeys(fact_ids):
            p = bisect_left(ids, fact_id)
            if p < len(ids) and ids[p] == fact_id and p in scores:
                hits.append((scores[p], p))
        return [(s, ids[p]) for s, p in sorted(hits, reverse=True)]


_HELD: OrderedDict[str, FactPostings] = OrderedDict()  # by brain file, the few most recently used
_QUERIED: OrderedDict[str, int] = OrderedDict()
_KEPT = 4
_HELD_LOCK = threading.Lock()


def postings_for(path: object, db: sqlite3.Connection, world: bool = False) -> FactPostings | None:
    """The postings of the facts index of the brain file at `path` (`world`: its index of the world facts
    alone, sqlite_schema.WORLD_INDEX), made current and locked for the caller (who releases `.lock`);
    None on the file's first ranked query in this process (a one-shot process pays FTS5's cost once
    rather than reading every fact) or when they cannot be made current."""
    key = f"{path}\0world" if world else str(path)
    with _HELD_LOCK:
        held = _HELD.get(key)
        if held is None:
            _QUERIED[key] = _QUERIED.pop(key, 0) + 1
            while len(_QUERIED) > _KEPT * 4:
                _QUERIED.popitem(last=False)
            if _QUERIED[key] < 2:
                return None
            held = _HELD[key] = FactPostings("facts_world_fts", "facts_world") if world else FactPostings()
            while len(_HELD) > _KEPT:
                _HELD.popitem(last=False)
        _HELD.move_to_end(key)
    held.lock.acquire()
    try:
        current = held.refresh(db)
    except BaseException:
        held.lock.release()
        raise
    if not current:
        held.lock.release()
        return None
    return held


def rank_in_process(store: Store, path: object, db: sqlite3.Connection, terms: Sequence[str], where: str, args: list,
                    columns: str, *, limit: int, among: list[int] | None, world: bool = False) -> list[Row] | None:
    """`ranked_rows` over the brain file's postings; None when FTS5 is to rank (see `postings_for`)."""
    postings = postings_for(path, db, world)
    if postings is None:
        return None
    try:
        return ranked_rows(store, postings, terms, where, args, columns, limit=limit, among=among)
    finally:
        postings.lock.release()


def ranked_rows(store: Store, postings: FactPostings, terms: Sequence[str], where: str, args: list, columns: str,
                *, limit: int, among: list[int] | None) -> list[Row]:
    """The facts passing the arm's filter (`where`, `args`) that hold a term, best first, each with its `score`:
    the best `limit` candidates are read first (most pass: one source, active, world), then `4 × limit` at a
    time, until `limit` pass or none is left."""
    if among is None:
        ranked = postings.ranked(terms, top=limit * 4)
        whole = len(ranked) < limit * 4
    else:
        ranked, whole = postings.ranked_among(terms, among), True
    rows: list[Row] = []
    start = 0
    while True:
        chunk = ranked[start : start + (limit if start == 0 else limit * 4)]
        if chunk:
            rows += store.query(
                f"WITH hits(hit_id, hit_score) AS (VALUES {','.join(['(?, ?)'] * len(chunk))}) "
                f"SELECT {columns}, hit_score AS score FROM hits JOIN facts ON facts.id = hit_id "
                f"WHERE {where} ORDER BY hit_score DESC, facts.id DESC LIMIT ?",
                (*(v for s, i in chunk for v in (i, s)), *args, limit - len(rows)),
            )
        start += len(chunk)
        if len(rows) >= limit or (whole and start >= len(ranked)):
            return rows
        if not whole:  # too few of the best passed: rank every match
            ranked, whole = postings.ranked(terms), True
