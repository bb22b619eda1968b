"""What the user says about people and organisations, as facts filed under them, without a model.

Kept only when the sentence names a known entity (the brain's name index, the same one the
per-prompt reflex asks: a `Names` callable, text → mentions), and filed under it:

* **what someone said**: "Vada said Tidecraft Systems hit their growth target", "Soren told me …",
  "Noor mentioned/reported/confirmed/announced …" — a fact (a belief for "thinks", "believes",
  "feels", "expects");
* **concerns**: "Soren is worried the pricing model undercuts their margin", "Leander has concerns
  about …" — a belief;
* **preferences**: "Vada prefers async updates over standing calls", "Ingrid hates long meetings" —
  a preference;
* **commitments** the user made to someone: "I committed to sending Soren the checklist by Friday",
  "I promised Anouk …", "I'll send Dmitri the deck by Monday" (a "will" needs a deadline to count)
  — a commitment, its deadline resolved to a date from when it was said (dates.py);
* **plain statements** whose subject is a person or an organisation: "Kelpforge raised a seed
  round", "Alice moved to Lisbon" — a fact.

The subject may be a pronoun ("She is worried …") when the user's recent turns name exactly one
person; the fact then says the name. Only people and organisations are subjects and filing
targets (a tool or a concept page named in passing is not what a statement is about). The
sentence is otherwise kept as said: "I" becomes "the user", a resolved pronoun its name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from memverbs.server.capture.dates import due_date
from memverbs.server.capture.statements import Fact, is_statement, strip_lead, worded
from memverbs.server.terms import STOP_WORDS

MAX_LOOKUPS = 2_000  # name-index lookups per capture, at most: a huge session stays linear and bounded
SUBJECT_WORDS = 10  # a statement's subject is looked for in its first words only
RECENT_TURNS = 3  # user turns a pronoun may reach back over
RECENT_CHARS = 2_000


class Mention(Protocol):
    """What the name index says of one name in a text (server/name_index.py's Mention)."""

    slug: str
    type: str | None
    title: str | None
    start: int
    end: int


Names = Callable[[str], Sequence[Mention]]

_ABOUT_TYPES = frozenset({"person", "company", "organization", "organisation", "org", "team", "customer", "vendor",
                          "investor", "fund", "startup", "client", "partner"})
_ABOUT_PREFIXES = ("people/", "companies/", "orgs/", "organizations/", "organisations/", "teams/", "customers/",
                   "clients/", "vendors/", "investors/", "funds/")
_PERSON_PREFIXES = ("people/",)

_ADVERB = r"(?:(?:also|just|now|still|really|already|finally|recently|apparently|clearly|again|even|actually)\s+)*"
_REPORT = re.compile(
    rf"^{_ADVERB}(?P<verb>said|says|told\s+(?:me|us|him|her|them|the\s+team)|mentioned|reported|confirmed|announced|noted|explained|"
    r"shared|admitted|claims|claimed|warned|pointed\s+out|let\s+(?:me|us)\s+know|agreed|suggested|thinks|believes|feels|expects|"
    r"hopes|reckons|estimates)\b", re.I)
_BELIEF_VERBS = ("thinks", "believes", "feels", "expects", "hopes", "reckons", "estimates")
_FEELINGS = (r"(?:worried|concerned|nervous|anxious|skeptical|sceptical|unhappy|upset|frustrated|uneasy|unsure|excited|"
             r"optimistic|pessimistic|keen|thrilled|disappointed|annoyed|confident)")
_CONCERN = re.compile(
    rf"^(?:{_ADVERB}(?:is|was|are|were|'s|’s|seems|seemed|sounds|sounded|remains|got)\s+{_ADVERB}(?:very\s+|quite\s+|a\s+bit\s+|a\s+little\s+|so\s+|pretty\s+)?"
    rf"{_FEELINGS}|{_ADVERB}(?:worries|fears|has\s+(?:concerns|doubts|reservations)|raised\s+(?:a\s+)?concerns?|is\s+not\s+sure))\b", re.I)
_PREFERENCE = re.compile(
    rf"^{_ADVERB}(?:prefers|likes|loves|hates|dislikes|enjoys|favou?rs|would\s+rather|wants|doesn't\s+like|does\s+not\s+like|"
    r"can't\s+stand|cannot\s+stand|isn't\s+a\s+fan\s+of|is\s+not\s+a\s+fan\s+of|is\s+a\s+fan\s+of|insists\s+on|asked\s+for)\b", re.I)
_IRREGULAR_PAST = frozenset("""
became began bought brought built came chose cut did drew drove fell felt found flew forgot gave got grew had
heard held hit hurt kept knew laid led left lent lost made meant met paid put quit ran read rode rose sank saw
sent set shut sold spent spoke stood stole swore took taught told thought threw understood went woke won wrote
is was are were has
""".split())  # noqa: SIM905 - a word list reads better as words
_PLAIN = re.compile(rf"^{_ADVERB}(?P<verb>[a-z]+)\b(?P<rest>\s+\S+\s+\S+.*)$", re.I)
_COMMITMENT = re.compile(
    r"^(?:i|we)\s+(?:have\s+|just\s+|already\s+|also\s+)*(?:committed|promised|agreed|offered|owe|pledged|told\s+\S+(?:\s+\S+)?\s+(?:i|we)(?:'d|'ll| would| will))\b"
    r"|^(?:i|we)(?:'ll|’ll| will| shall|'m going to| am going to|'re going to| are going to| need to| have to| must)\s+\w+", re.I)
_FIRM = re.compile(r"^(?:i|we)\s+(?:have\s+|just\s+|already\s+|also\s+)*(?:committed|promised|agreed|offered|owe|pledged|told)\b", re.I)
_SUBJECT_PRONOUN = re.compile(r"^(?:she|he)\b", re.I)
_OBJECT_PRONOUN = re.compile(r"\b(?:her|him)\b", re.I)
_I = re.compile(r"^(?:i|we)\b", re.I)
_SUBJECTLESS = re.compile(r"^(?:committed|promised|agreed|offered|owe)\b", re.I)  # "Promised Soren the deck by Monday."
# A decision the user's side took about someone: kept only when it names a person or an organisation.
_WE_DECIDED = re.compile(
    r"^we(?:'ve| have|'ll| will|'re| are)?\s+(?:just\s+|finally\s+|now\s+)?(?:going\s+to\s+)?"
    r"(?:chose|choose|picked|pick|passed|pass|passing|declined|decline|declining|led|lead|leading|invested|invest|investing|"
    r"backed|back|backing|signed|sign|signing|hired|hire|hiring|went\s+with|go\s+with|going\s+with|dropped|drop|dropping|"
    r"rejected|reject|rejecting|approved|approve|approving|offered|offer|offering|extended|extend|renewed|renew|"
    r"cancelled|canceled|cancel|paused|pause|pausing)\b", re.I)
_ACCORDING = re.compile(r"^(?:according\s+to|per)\s+", re.I)  # "According to Vada, Tidecraft hit …"
# "Soren's worried", "Soren's moving": the subject's "is" or "has", not a possessive.
_CONTRACTED = re.compile(rf"^['’]s\s+(?:\w+ed|\w+ing|been|got|a|an|not|{_FEELINGS})\b", re.I)
_PRESENT = ("says", "tells", "thinks", "believes", "feels", "expects", "hopes", "reckons", "estimates", "claims", "worries", "fears",
            "prefers", "likes", "loves", "hates", "dislikes", "enjoys", "favors", "favours", "wants", "needs", "insists", "seems",
            "sounds", "remains", "owns", "runs", "leads", "works", "lives", "manages", "reports", "plans", "agrees")
# A sentence that could be one of these at all, checked before the name index is asked: it opens with a
# pronoun, or a verb of the right form follows its first few words.
_MAYBE = re.compile(
    r"^(?:she|he|i|we|according\s+to|per|committed|promised|agreed|offered|owe)\b|^(?:[\w'’.&-]+\s+){1,5}?" + _ADVERB + r"(?:[a-z]+ed|"
    + "|".join(sorted({*_IRREGULAR_PAST, *_PRESENT})) + r"|would|can't|doesn't|does|isn't)\b",
    re.I,
)


@dataclass
class Context:
    """The user's recent turns, for the pronouns of the next ones."""

    recent: list[str] = field(default_factory=list)  # the last RECENT_TURNS turns, newest last
    lookups: int = 0  # name-index lookups so far

    def remember_turn(self, text: str) -> None:
        self.recent = [*self.recent, text[:RECENT_CHARS]][-RECENT_TURNS:]


class Reporter:
    """Reads sentences for statements about known entities, with a budget of name-index lookups."""

    def __init__(self, names: Names | None, context: Context) -> None:
        self.names, self.context = names, context
        self._cache: dict[str, list[Mention]] = {}

    def mentions(self, text: str) -> list[Mention]:
        if self.names is None or not text:
            return []
        if text not in self._cache:
            if self.context.lookups >= MAX_LOOKUPS:
                return []
            self.context.lookups += 1
            if len(self._cache) > 512:
                self._cache.clear()
            self._cache[text] = list(self.names(text))
        return self._cache[text]

    def about(self, text: str) -> Mention | None:
        """The first person or organisation `text` names."""
        return next((m for m in self.mentions(text) if is_about(m)), None)

    def report(self, sentence: str, at: str | None, earlier: str = "") -> Fact | None:
        """A fact filed under the entity `sentence` is about, else None. `earlier`: the sentences before it in
        the same turn (a pronoun may point back to them)."""
        body = strip_lead(sentence)
        if self.names is None or self.context.lookups >= MAX_LOOKUPS or not _MAYBE.match(body):
            return None
        if _SUBJECTLESS.match(body):
            body = "I " + body[:1].lower() + body[1:]
        if _WE_DECIDED.match(body):
            fact = self._decision(body, at)
        elif _I.match(body):
            fact = self._commitment(body, at, earlier)
        elif _ACCORDING.match(body):
            fact = self._according(body, at)
        elif _SUBJECT_PRONOUN.match(body):
            fact = self._about_them(body, at, earlier)
        elif body.split(None, 1)[0].lower() in STOP_WORDS:
            return None  # "The …", "It …", "This …": no name starts so
        else:
            fact = self._statement(body, at)
        return fact if fact is not None and is_statement(sentence) else None

    def _statement(self, body: str, at: str | None) -> Fact | None:
        """The entity `body` opens with (looked for in its first words), and what it says of it."""
        head = " ".join(body.split()[:SUBJECT_WORDS])
        first = next(iter(self.mentions(head)), None)
        if first is None or first.start > 4 or not is_about(first):
            return None
        if body[first.end : first.end + 2] in ("'s", "’s") and not _CONTRACTED.match(body[first.end :]):
            return None  # "Soren's team raised …" is about the team ("Soren's worried" is Soren)
        rest = body[first.end :]
        kind = _kind(rest, is_person(first))
        return worded(body[: first.end] + rest, kind, at, first.slug) if kind is not None else None

    def _decision(self, body: str, at: str | None) -> Fact | None:
        """"We passed on the Kelpforge round": a decision, filed under whom it names (or not kept)."""
        target = self.about(body)
        return worded(body, "commitment", at, target.slug) if target is not None else None

    def _according(self, body: str, at: str | None) -> Fact | None:
        """"According to Vada, Tidecraft hit its target": what Vada said, filed under Vada."""
        head = " ".join(body.split()[:SUBJECT_WORDS])
        first = next(iter(self.mentions(head)), None)
        lead = _ACCORDING.match(body)
        if first is None or lead is None or first.start != lead.end() or not is_about(first):
            return None
        said = body[first.end :].lstrip(" ,:")
        return worded(f"{body[lead.end() : first.end]} said {said[:1].lower()}{said[1:]}", "fact", at, first.slug) if said else None

    def _about_them(self, body: str, at: str | None, earlier: str) -> Fact | None:
        """"She is worried …": the pronoun's person looked up only once the rest is a statement."""
        pronoun = _SUBJECT_PRONOUN.match(body)
        assert pronoun is not None
        rest = body[pronoun.end() :]
        kind = _kind(rest, True)
        person = self._last_person(earlier) if kind is not None else None
        return worded(_name(person) + rest, kind, at, person.slug) if person is not None and kind is not None else None

    def _commitment(self, body: str, at: str | None, earlier: str) -> Fact | None:
        if not _COMMITMENT.match(body):
            return None
        due = due_date(body, at)
        if due is None and not _FIRM.match(body):
            return None  # "I'll …" is a plan; with a deadline it is a promise
        target = self.about(body)
        text = body
        if target is None and _OBJECT_PRONOUN.search(body):
            target = self._last_person(earlier)
            if target is not None:
                text = _OBJECT_PRONOUN.sub(_name(target), body, count=1)
        if target is None:
            return None
        text = _as_the_user(text)
        if due is not None:
            text = f"{text.rstrip(' .!')} (due {due})"
        return worded(text, "commitment", at, target.slug)

    def _last_person(self, earlier: str) -> Mention | None:
        """The one person the nearest turn naming anyone names; None when it names several (never a guess)."""
        for text in (earlier, *reversed(self.context.recent)):
            people: dict[str, Mention] = {m.slug: m for m in self.mentions(text) if is_person(m)}
            if people:
                return next(iter(people.values())) if len(people) == 1 else None
        return None


_FIRST_PERSON = ((r"^i(?:'ll|’ll| will)\b", "The user will"), (r"^i(?:'m| am) going to\b", "The user is going to"),
                 (r"^i need to\b", "The user needs to"), (r"^i have to\b", "The user has to"), (r"^i owe\b", "The user owes"),
                 (r"^i\b", "The user"), (r"^we\b", "We"))


def _as_the_user(text: str) -> str:
    """"I'll send Soren the deck" → "The user will send Soren the deck": read later, by someone else."""
    for pattern, replacement in _FIRST_PERSON:
        changed = re.sub(pattern, replacement, text, count=1, flags=re.I)
        if changed != text:
            return changed
    return text


def _kind(rest: str, person: bool) -> str | None:
    """The kind of statement `rest` (what follows the subject) makes, or None when it is none of them."""
    rest = rest.lstrip(" ,")
    report = _REPORT.match(rest)
    if report is not None:
        return "belief" if report.group("verb").lower() in _BELIEF_VERBS else "fact"
    if _CONCERN.match(rest):
        return "belief"
    if _PREFERENCE.match(rest):
        return "preference" if person or not rest.lower().startswith(("asked", "wants")) else "fact"
    plain = _PLAIN.match(rest)
    if plain is not None and _is_finite(plain.group("verb")):
        return "fact"
    return None


def _is_finite(word: str) -> bool:
    """A past-tense verb, or a present one of the kinds a statement about someone uses: "raised", "moved", "hit",
    "runs" (not "will", "should", "fixes" — a plain present is as often a noun's plural)."""
    w = word.lower()
    if w in _IRREGULAR_PAST:
        return True
    return (w.endswith("ed") and len(w) > 3) or w in _PRESENT


def is_about(m: Mention) -> bool:
    """Is `m` a person or an organisation: something a statement can be about."""
    kind = (getattr(m, "type", None) or "").strip().lower()
    return kind in _ABOUT_TYPES or m.slug.startswith(_ABOUT_PREFIXES)


def is_person(m: Mention) -> bool:
    return (getattr(m, "type", None) or "").strip().lower() == "person" or m.slug.startswith(_PERSON_PREFIXES)


def _name(m: Mention) -> str:
    title = getattr(m, "title", None)
    return title if isinstance(title, str) and title.strip() else m.slug.rsplit("/", 1)[-1].replace("-", " ").title()
