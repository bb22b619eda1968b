"""BrainBench's corpus read into plain records: fixtures (what the adapter may see) and their sealed gold.

The corpus is the MEMORY_VERBS reference's cross-harness memory benchmark (schema_version 1):
`fixtures/<id>.fixture.json` are conversations with seed pages, `gold/<id>.gold.json` say per user
turn whether memory should surface and which slugs or facts count (schema/ holds the JSON Schemas).
Only the development half ships with this machine; a held-out half is scored the same way, so nothing
here (nor in the runner) may depend on a fixture's id or text: every rule reads the schema's fields.

The loader checks what the runner relies on and refuses a corpus that breaks it with the file and the
field, rather than scoring a half-read fixture: a gold file without its fixture, a `gold` key inside a
turn (gold is sealed), a turn id given twice, a continuity pair without both halves.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

SUITES = ("know-to-ask", "push", "write-back", "continuity")
DEFAULT_SOURCE = "default"
ENV_DATA = "MEMVERBS_BRAINBENCH"  # where the corpus lives, when not given with --data


class CorpusError(Exception):
    """The corpus does not have the shape the schema promises: which file, and what is wrong."""


@dataclass(frozen=True)
class Page:
    slug: str
    content: str
    source: str | None  # None: the default source


@dataclass(frozen=True)
class SeedFact:
    fact: str
    entity_slug: str | None
    source: str | None  # the memverbs source (`source_id`); None: the default source
    provenance: str | None  # the fixture's `source`: where the fact came from


@dataclass(frozen=True)
class Turn:
    turn_id: int
    role: str  # "user" | "assistant"
    text: str
    ts: str | None


@dataclass(frozen=True)
class GoldFact:
    gist: str
    fact: str
    entity_slug: str | None
    keywords: tuple[str, ...]
    kind: str | None


@dataclass(frozen=True)
class TurnGold:
    should_retrieve: bool
    gold_slugs: frozenset[str]
    acceptable_slugs: frozenset[str]
    facts: tuple[GoldFact, ...]


@dataclass(frozen=True)
class Decision:
    decision_id: str
    expected_slugs: tuple[str, ...]
    keywords: tuple[str, ...]


@dataclass
class Fixture:
    fixture_id: str
    suites: tuple[str, ...]
    category: str
    active_source: str
    sources: tuple[str, ...]
    pages: list[Page]
    seed_facts: list[SeedFact]
    turns: list[Turn]
    pair_id: str | None = None
    pair_role: str | None = None  # "writer" | "reader"
    gold: dict[int, TurnGold] = field(default_factory=dict)
    decisions: tuple[Decision, ...] = ()

    def user_turns(self) -> list[Turn]:
        return [t for t in self.turns if t.role == "user"]

    def gold_facts(self) -> list[GoldFact]:
        return [f for g in self.gold.values() for f in g.facts]

    def page_source(self, page: Page) -> str:
        """A seed page's source: its `source_id`, else the default source — not the active one: a fixture
        whose active source is another (the team brain) seeds the user's own pages beside it."""
        return page.source or DEFAULT_SOURCE

    def fact_source(self, fact: SeedFact) -> str:
        return fact.source or DEFAULT_SOURCE


@dataclass
class Pair:
    """A continuity pair: the writer's session decides something, the reader's (another harness) must see it."""

    pair_id: str
    writer: Fixture
    reader: Fixture


@dataclass
class Corpus:
    root: Path
    fixtures: list[Fixture]

    def by_id(self) -> dict[str, Fixture]:
        return {f.fixture_id: f for f in self.fixtures}

    def pairs(self) -> list[Pair]:
        """Continuity pairs whose two halves are both here (a filter may have kept one)."""
        halves: dict[str, dict[str, Fixture]] = {}
        for f in self.fixtures:
            if f.pair_id is not None and f.pair_role is not None:
                halves.setdefault(f.pair_id, {})[f.pair_role] = f
        return [Pair(pid, h["writer"], h["reader"]) for pid, h in sorted(halves.items()) if {"writer", "reader"} <= set(h)]


def default_root() -> Path | None:
    """$MEMVERBS_BRAINBENCH, else `shared/data/brainbench` beside the checkout or its worktree folder."""
    given = os.environ.get(ENV_DATA, "").strip()
    if given:
        return Path(given).expanduser()
    checkout = Path(__file__).resolve().parent.parent
    for up in (checkout.parent, checkout.parent.parent):
        candidate = up / "shared" / "data" / "brainbench"
        if candidate.is_dir():
            return candidate
    return None


def load(root: Path) -> Corpus:
    fixtures_dir, gold_dir = root / "fixtures", root / "gold"
    if not fixtures_dir.is_dir():
        raise CorpusError(f"{root}: no fixtures/ folder (is this a BrainBench corpus?)")
    fixtures = []
    for path in sorted(fixtures_dir.glob("*.fixture.json")):
        fixture = _fixture(path, _read(path))
        gold_path = gold_dir / f"{fixture.fixture_id}.gold.json"
        if gold_path.exists():
            _attach_gold(fixture, gold_path, _read(gold_path))
        fixtures.append(fixture)
    ids = {f.fixture_id for f in fixtures}
    for path in sorted(gold_dir.glob("*.gold.json")) if gold_dir.is_dir() else []:
        gid = _read(path).get("fixture_id")
        if gid not in ids:
            raise CorpusError(f"{path}: gold for fixture {gid!r}, which has no fixture file")
    if not fixtures:
        raise CorpusError(f"{fixtures_dir}: no *.fixture.json files")
    return Corpus(root, fixtures)


def select(corpus: Corpus, suites: set[str] | None = None, fixture_ids: set[str] | None = None) -> list[Fixture]:
    """The fixtures in any of `suites` (all when None) and named in `fixture_ids` (all when None).
    A continuity half named alone brings its other half: a pair is only scored whole."""
    chosen = [f for f in corpus.fixtures
              if (suites is None or suites & set(f.suites)) and (fixture_ids is None or f.fixture_id in fixture_ids)]
    pairs = {f.pair_id for f in chosen if f.pair_id}
    return [f for f in corpus.fixtures if f in chosen or (f.pair_id in pairs and f.pair_id is not None)]


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CorpusError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise CorpusError(f"{path}: not a JSON object")
    return data


def _need(path: Path, data: dict, key: str, kind: type) -> object:
    value = data.get(key)
    if not isinstance(value, kind):
        raise CorpusError(f"{path}: `{key}` must be a {kind.__name__}")
    return value


def _fixture(path: Path, data: dict) -> Fixture:
    if data.get("schema_version") != 1:
        raise CorpusError(f"{path}: schema_version {data.get('schema_version')!r}; this runner reads version 1")
    fid = str(_need(path, data, "fixture_id", str))
    suites = tuple(str(s) for s in _need(path, data, "suites", list))  # type: ignore[attr-defined]
    unknown = set(suites) - set(SUITES)
    if unknown:
        raise CorpusError(f"{path}: unknown suites {sorted(unknown)}")
    turns = []
    for raw in _need(path, data, "turns", list):  # type: ignore[attr-defined]
        if not isinstance(raw, dict) or "gold" in raw:
            raise CorpusError(f"{path}: a turn must be an object without `gold` (gold is sealed in gold/)")
        if raw.get("role") not in ("user", "assistant") or not isinstance(raw.get("text"), str) or not isinstance(raw.get("turn_id"), int):
            raise CorpusError(f"{path}: turn {raw.get('turn_id')!r} needs an integer turn_id, a role and a text")
        turns.append(Turn(raw["turn_id"], raw["role"], raw["text"], raw.get("ts")))
    if len({t.turn_id for t in turns}) != len(turns):
        raise CorpusError(f"{path}: a turn_id is given twice")
    active = str(data.get("active_source") or DEFAULT_SOURCE)
    pages = [Page(str(p["slug"]), str(p["content"]), p.get("source_id")) for p in data.get("seed_pages") or []]
    facts = [SeedFact(str(f["fact"]), f.get("entity_slug"), f.get("source_id"), f.get("source"))
             for f in data.get("seed_facts") or []]
    cont = data.get("continuity") or {}
    return Fixture(fid, suites, str(data.get("category") or ""), active, tuple(data.get("sources") or ()), pages, facts,
                   turns, cont.get("pair_id"), cont.get("pair_role"))


def _attach_gold(fixture: Fixture, path: Path, data: dict) -> None:
    if data.get("fixture_id") != fixture.fixture_id:
        raise CorpusError(f"{path}: fixture_id {data.get('fixture_id')!r} does not match its fixture {fixture.fixture_id!r}")
    ids = {t.turn_id: t for t in fixture.turns}
    for key, raw in (data.get("turns") or {}).items():
        tid = int(key)
        if tid not in ids:
            raise CorpusError(f"{path}: gold for turn {tid}, which the fixture does not have")
        facts = tuple(
            GoldFact(str(f["gist"]), str(f["fact"]), f.get("entity_slug"), tuple(str(k) for k in f["match_keywords"]), f.get("kind"))
            for f in raw.get("gold_facts") or []
        )
        fixture.gold[tid] = TurnGold(bool(raw["should_retrieve"]), frozenset(raw.get("gold_slugs") or ()),
                                     frozenset(raw.get("acceptable_slugs") or ()), facts)
    cont = data.get("continuity")
    if cont:
        fixture.decisions = tuple(
            Decision(str(d["decision_id"]), tuple(d.get("expected_slugs") or ()), tuple(d.get("match_keywords") or ()))
            for d in cont.get("decisions") or []
        )
