"""How BrainBench scores what the model received: the pointer grammar and the suites' metrics.

**Pointers.** memverbs names a page to the model as a backticked slug: a card line
`- **Alice Example** → \\`people/alice-example\\` — …`, a changed page in a delta, the pack's
`Project: app (\\`projects/app\\`)`, and the pack's own hint `\\`entity <slug>\\``. So a slug counts as
injected when a backtick span holds exactly that slug, optionally after `entity ` — and the slug has
a `/` or is a page or entity this brain knows (so `\\`uv\\`` in a quoted rule is not a pointer). A slug
that only appears in prose or as a fact's `[people/alice]` attribution is not a pointer: the model was
told something about that entity, not pointed at its page.

**Per turn.** A user turn's injection is what memverbs added to that turn's model request that the model
did not have before (brainbench_harnesses.Delivery): the per-prompt hook's text, and the session-start
pack in the first prompt's request (Claude Code and Codex send it just before the first prompt; OpenClaw's
plugin prepends it to the first prompt). OpenClaw keeps no `prependContext` in its history, so the plugin
sends the cached pack again with every later prompt: that copy is *carried* context, reported as
`carried_tokens_per_turn` and shown by `-v`, but not counted as an injection — in Claude Code and Codex the
same pack stays in the history, uncounted, too. Tokens are ⌈characters / 4⌉.

**Suites** (each over the fixtures that list it, per harness):
* know-to-ask: `know_to_ask_failure_rate` = gold `should_retrieve` turns that got no gold or
  acceptable slug / such turns; `false_fire_rate` = quiet turns (`should_retrieve: false`) whose
  injection is not empty / quiet turns (`false_fire_pointer_rate`: … that named a pointer).
* push: precision Σ|injected ∩ (gold + acceptable)| / Σ|injected| and recall Σ|injected ∩ gold| / Σ|gold|,
  over the turns that have gold (n/a when nothing was injected at all, never a free 1.0).
* write-back: a gold fact survives when one stored fact of the session — new since the session began,
  still active, in the session's source — carries its entity slug and contains every match keyword
  (case-insensitive); each stored fact matches at most one gold fact (a maximum matching, so the order
  of facts cannot cost a match). `fidelity` = survivors / gold facts. `provenance` = stored facts whose
  provenance is exactly `capture:<harness> session <id>` / stored facts (n/a when none was stored).
  `writeback_precision` = stored facts that matched a gold fact / stored facts;
  `facts_echoing_injection` = stored facts that repeat text memverbs injected into the session and the
  user never said (capture must not learn from its own injections); `facts_other_sources` = facts the
  session's capture wrote outside its source.
* continuity: a decision reaches the reader when one line of what the reader's session received
  (its session start and every prompt) contains all the decision's keywords; `continuity_linked` also
  needs that session to have been pointed at one of the decision's expected slugs.
* cross-source: a pointer to a slug that only another source holds, a decoy page's canary, or another
  source's page summary quoted verbatim (where the active source has no page with that summary).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from benchmarks.brainbench_data import Decision, GoldFact, TurnGold

_SEGMENT = r"(?:[a-z0-9_-]|(?![\x00-\x7f])\w)+"
POINTER = re.compile(rf"`(?:entity\s+)?({_SEGMENT}(?:/{_SEGMENT})*)`")


def pointers(text: str, known: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The slugs `text` points at, first mention first."""
    out: list[str] = []
    for m in POINTER.finditer(text):
        slug = m.group(1)
        if ("/" in slug or slug in known) and slug not in out:
            out.append(slug)
    return out


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


@dataclass
class Delivery:
    """What memverbs put in front of the model for one prompt, by part, and what it cost."""

    parts: dict[str, str] = field(default_factory=dict)
    ms: float = 0.0
    problems: list[str] = field(default_factory=list)
    raw: dict[str, str] = field(default_factory=dict)  # a command hook's stdout and command, as Claude Code records them
    calls: list[dict] = field(default_factory=list)  # each hook process run: moment, the payload it was sent, what it printed
    carried: dict[str, str] = field(default_factory=dict)  # re-sent context the model already had (OpenClaw's cached pack)

    @property
    def text(self) -> str:
        return "\n\n".join(p for p in self.parts.values() if p)


@dataclass
class TurnRow:
    fixture_id: str
    turn_id: int
    harness: str
    suites: tuple[str, ...]
    text: str
    parts: dict[str, str]
    injected: list[str]
    cross_source: list[str]
    gold: TurnGold | None
    latency_ms: float
    problems: list[str] = field(default_factory=list)
    carried: str = ""
    calls: list[dict] = field(default_factory=list)  # the hook runs behind this turn (for reading, not scoring)

    @property
    def tokens(self) -> int:
        return tokens(self.text)


def ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _graded(rows: list[TurnRow]) -> list[tuple[TurnRow, TurnGold]]:
    return [(r, r.gold) for r in rows if r.gold is not None]


def know_to_ask(rows: list[TurnRow]) -> dict:
    asked = [(r, g) for r, g in _graded(rows) if g.should_retrieve]
    quiet = [r for r, g in _graded(rows) if not g.should_retrieve]
    failed = [r for r, g in asked if not set(r.injected) & (g.gold_slugs | g.acceptable_slugs)]
    fired = [r for r in quiet if r.text.strip()]
    pointed = [r for r in quiet if r.injected]
    return {
        "know_to_ask_failure_rate": ratio(len(failed), len(asked)),
        "false_fire_rate": ratio(len(fired), len(quiet)),
        "false_fire_pointer_rate": ratio(len(pointed), len(quiet)),
        "retrieve_turns": len(asked), "quiet_turns": len(quiet),
        "gold_total": len(asked), "gold_failed": len(failed),
    }


def push(rows: list[TurnRow]) -> dict:
    graded = _graded(rows)
    injected = sum(len(r.injected) for r, _ in graded)
    right = sum(len(set(r.injected) & (g.gold_slugs | g.acceptable_slugs)) for r, g in graded)
    gold = sum(len(g.gold_slugs) for _, g in graded)
    found = sum(len(set(r.injected) & g.gold_slugs) for r, g in graded)
    return {"push_precision": ratio(right, injected), "push_recall": ratio(found, gold),
            "injected_pointers": injected, "gold_total": gold, "gold_failed": gold - found}


def per_turn(rows: list[TurnRow]) -> dict:
    return {
        "turns": len(rows),
        "injected_tokens_per_turn": ratio(sum(r.tokens for r in rows), len(rows)),
        "carried_tokens_per_turn": ratio(sum(tokens(r.carried) for r in rows), len(rows)),
        "cross_source_injections": sum(len(r.cross_source) for r in rows),
        "latency_ms_p50": _quantile([r.latency_ms for r in rows], 0.5),
        "latency_ms_p95": _quantile([r.latency_ms for r in rows], 0.95),
        "hook_problems": sum(len(r.problems) for r in rows),
    }


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[max(0, math.ceil(q * len(ordered)) - 1)], 1)


# -- write-back ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredFact:
    fact_id: int
    source: str
    fact: str
    kind: str
    entity_slug: str | None
    provenance: str
    active: bool


def fact_matches(gold: GoldFact, stored: StoredFact) -> bool:
    if gold.entity_slug is not None and stored.entity_slug != gold.entity_slug:
        return False
    text = stored.fact.casefold()
    return all(k.casefold() in text for k in gold.keywords)


def max_matching(gold: list[GoldFact], stored: list[StoredFact]) -> dict[int, int]:
    """gold index → stored index, as many pairs as possible, each stored fact used at most once."""
    edges = [[j for j, s in enumerate(stored) if fact_matches(g, s)] for g in gold]
    owner: dict[int, int] = {}

    def place(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or place(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(gold)):
        place(i, set())
    return {i: j for j, i in owner.items()}


def _norm(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".")


def echoes(stored: list[StoredFact], injected: list[str], said: list[str]) -> list[str]:
    """Stored facts that repeat what memverbs injected into the session and the user never said: memory
    feeding on itself."""
    given, spoken = _norm("\n".join(injected)), _norm("\n".join(said))
    return [s.fact for s in stored if len(_norm(s.fact)) >= 12 and _norm(s.fact) in given and _norm(s.fact) not in spoken]


def write_back(gold: list[GoldFact], stored: list[StoredFact], provenance: str, injected: Sequence[str] = (),
               said: Sequence[str] = ()) -> dict:
    kept = [s for s in stored if s.active]
    matched = max_matching(gold, kept)
    exact = sum(1 for s in stored if s.provenance == provenance)
    return {
        "gold_facts": len(gold), "survived": len(matched), "stored": len(stored), "stored_active": len(kept),
        "exact_provenance": exact, "matched_stored": len(matched), "echoes": echoes(stored, list(injected), list(said)),
        "survivors": sorted(matched), "matches": {gold[i].gist: kept[j].fact for i, j in matched.items()},
    }


def write_back_cell(results: list[dict]) -> dict:
    gold = sum(r["gold_facts"] for r in results)
    survived = sum(r["survived"] for r in results)
    stored = sum(r["stored"] for r in results)
    return {"fidelity": ratio(survived, gold), "provenance": ratio(sum(r["exact_provenance"] for r in results), stored),
            "writeback_precision": ratio(sum(r["matched_stored"] for r in results), sum(r["stored_active"] for r in results)),
            "facts_stored": stored, "facts_other_sources": sum(r.get("other_sources", 0) for r in results),
            "facts_echoing_injection": sum(len(r.get("echoes", ())) for r in results),
            "gold_total": gold, "gold_failed": gold - survived}


# -- continuity ------------------------------------------------------------------------------------


def decision_reached(decision: Decision, texts: Iterable[str]) -> bool:
    words = [k.casefold() for k in decision.keywords]
    return any(all(w in line.casefold() for w in words) for text in texts for line in text.splitlines())


def continuity(decisions: tuple[Decision, ...], texts: list[str], pointed: set[str]) -> dict:
    reached = [d for d in decisions if decision_reached(d, texts)]
    linked = [d for d in reached if pointed & set(d.expected_slugs)]
    return {"decisions": len(decisions), "reached": len(reached), "linked": len(linked),
            "reached_ids": [d.decision_id for d in reached]}


def continuity_cell(results: list[dict]) -> dict:
    total = sum(r["decisions"] for r in results)
    reached = sum(r["reached"] for r in results)
    return {"continuity": ratio(reached, total), "continuity_linked": ratio(sum(r["linked"] for r in results), total),
            "gold_total": total, "gold_failed": total - reached}
