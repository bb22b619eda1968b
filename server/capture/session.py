"""One pass over a session's events: everything capture keeps of it, small, bounded and resumable.

`Session.add(event)` takes the events of transcript.py's readers in order; nothing is read twice
and nothing grows with the transcript: the page's record (record.py), the facts (the user's own
statements, statements.py, and what the user says about people and organisations, reports.py),
the facts the agent already saved with `remember` (never kept twice), the last numbered list
the assistant offered (a reply may pick from it), and — with the optional LLM pass on — the
session's digest (its head, and a ring of its tail).

Facts come from the user's own words only (a harness-written entry is a `Said("harness")`:
record.py lists it, nothing reads it for facts), after `<private>` blocks are dropped and with
quoted or pasted material left out (authorship.own_words). At most `keep` facts are gathered;
past that the session stops looking (`full_at`: the turn it stopped at), so a huge session costs
no more than reading it.

`Session.as_json()` is a checkpoint of all of it (state.py writes it beside the capture state):
every text in it has passed privacy.clean. `Session.from_json` takes a capture up again from there.
"""

from __future__ import annotations

from collections import deque

from memverbs.server.capture.authorship import own_words
from memverbs.server.capture.privacy import clean, strip_private
from memverbs.server.capture.record import Record
from memverbs.server.capture.reports import Context, Names, Reporter, is_about
from memverbs.server.capture.statements import Fact, menu, pick, sentences, statement
from memverbs.server.capture.transcript import Event, Said, ToolRun

REMEMBERED_KEEP = 500
DIGEST_HEAD_CHARS = 40_000
DIGEST_TAIL_CHARS = 40_000
DIGEST_LINE_CHARS = 600  # one said turn or command, at most, in the digest
# The kinds whose fact is filed under the person or organisation it names: a decision about a company's
# round is the company's; "from now on, run pytest -q" is the project's whatever it mentions.
_FILED_BY_MENTION = ("fact", "commitment")


class Session:
    def __init__(self, names: Names | None = None, keep: int = 10, digest: bool = False) -> None:
        self.record = Record()
        self.facts: dict[str, Fact] = {}  # by gist, in the order said
        self.over = 0  # statements found past `keep`
        self.full_at: int | None = None  # the user turn from which, `keep` reached, no more were looked for
        self.turns = 0
        self.keep = keep
        self.remembered: list[str] = []
        self.menu: dict | None = None
        self.context = Context()
        self.digest: Digest | None = Digest() if digest else None
        self.cwd: str | None = None
        self._reporter = Reporter(names, self.context)

    # -- reading ------------------------------------------------------------------------------

    def add(self, event: Event) -> None:
        if isinstance(event, ToolRun):
            self.record.ran(event, self.cwd)
            if event.remembered and len(self.remembered) < REMEMBERED_KEEP:
                self.remembered.append(event.remembered)
        elif event.role == "user":
            self._user(event)
        elif event.role == "assistant":
            self.record.ended_with(event.text)
            self.menu = menu(event.text) if "1" in event.text else None
            if self.menu is not None:
                self.menu = {"question": clean(self.menu["question"]), "options": [clean(o) for o in self.menu["options"]]}
        else:
            self.record.not_user(event.label or "harness", event.text)
        if self.digest is not None:
            self.digest.add(event)

    def _user(self, said: Said) -> None:
        text = strip_private(said.text)
        self.record.asked_for(text)
        offered, self.menu = self.menu, None
        self.turns += 1
        if len(self.facts) >= self.keep:
            self.full_at = self.full_at or self.turns
            return
        if offered is not None:
            chosen = pick(text, offered, said.at)
            if chosen is not None:
                self._found(chosen)
                return
        own = own_words(text)
        parts = sentences(own)
        for n, sentence in enumerate(parts):
            following = parts[n + 1] if n + 1 < len(parts) else None
            fact = statement(sentence, following)
            if fact is not None:
                fact.at = said.at
                if fact.kind in _FILED_BY_MENTION:
                    about = self._reporter.about(sentence)
                    fact.entity = about.slug if about is not None and is_about(about) else None
            else:
                fact = self._reporter.report(sentence, said.at, " ".join(parts[:n]))
            if fact is not None:
                self._found(fact)
        self.context.remember_turn(own)

    def _found(self, fact: Fact) -> None:
        key = gist(fact.text)
        if key in self.facts:
            return
        if len(self.facts) >= self.keep:
            self.over += 1
        else:
            self.facts[key] = fact

    # -- reading out --------------------------------------------------------------------------

    def kept(self) -> list[Fact]:
        """The facts found, less those that say what the agent already saved with `remember` (its own
        call, with its entity, is the better record; the same fact twice is noise in every pack)."""
        return unseen(list(self.facts.values()), self.remembered)

    def finish(self) -> None:
        self.record.finish()

    def as_json(self) -> dict:
        return {
            "record": self.record.as_json(),
            "facts": [f.as_json() for f in self.facts.values()],
            "over": self.over,
            "full_at": self.full_at,
            "turns": self.turns,
            "remembered": [clean(r) for r in self.remembered],
            "menu": self.menu,
            "recent": [clean(t) for t in self.context.recent],
            "lookups": self.context.lookups,
            "digest": self.digest.as_json() if self.digest is not None else None,
        }

    @classmethod
    def from_json(cls, value: dict, names: Names | None = None, keep: int = 10, digest: bool = False) -> Session:
        s = cls(names, keep, digest)
        s.record = Record.from_json(value.get("record") or {})
        for item in value.get("facts") or []:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                fact = Fact.from_json(item)
                s.facts[gist(fact.text)] = fact
        s.over = int(value.get("over") or 0)
        s.full_at = value.get("full_at") if isinstance(value.get("full_at"), int) else None
        s.turns = int(value.get("turns") or 0)
        s.remembered = [r for r in value.get("remembered") or [] if isinstance(r, str)]
        s.menu = value.get("menu") if isinstance(value.get("menu"), dict) else None
        s.context.recent = [t for t in value.get("recent") or [] if isinstance(t, str)]
        s.context.lookups = int(value.get("lookups") or 0)
        if digest and isinstance(value.get("digest"), dict):
            s.digest = Digest.from_json(value["digest"])
        return s


class Digest:
    """What the optional LLM pass is shown: each said turn, command and edit as one line, cleaned. Its
    head is kept whole, its tail as a ring; the middle of a long session is left out (and counted)."""

    def __init__(self) -> None:
        self.head: list[str] = []
        self.head_chars = 0
        self.tail: deque[str] = deque()
        self.tail_chars = 0
        self.left_out = 0

    def add(self, event: Event) -> None:
        line = _line(event)
        if line is None:
            return
        if self.head_chars + len(line) <= DIGEST_HEAD_CHARS and not self.tail:
            line = clean(line)  # the head is kept as it is: cleaned now
            self.head.append(line)
            self.head_chars += len(line) + 1
            return
        self.tail.append(line)  # raw until read out: most of a long session's lines are pushed out unread
        self.tail_chars += len(line) + 1
        while self.tail_chars > DIGEST_TAIL_CHARS and len(self.tail) > 1:
            self.tail_chars -= len(self.tail.popleft()) + 1
            self.left_out += 1

    def lines(self) -> list[str]:
        middle = [f"[… {self.left_out} lines left out …]"] if self.left_out else []
        return [*self.head, *middle, *(" ".join(clean(line).split()) for line in self.tail)]

    def as_json(self) -> dict:
        return {"head": self.head, "tail": [clean(line) for line in self.tail], "left_out": self.left_out}

    @classmethod
    def from_json(cls, value: dict) -> Digest:
        d = cls()
        d.head = [line for line in value.get("head") or [] if isinstance(line, str)]
        d.head_chars = sum(len(line) + 1 for line in d.head)
        for line in value.get("tail") or []:
            if isinstance(line, str):
                d.tail.append(line)
                d.tail_chars += len(line) + 1
        d.left_out = int(value.get("left_out") or 0)
        return d


def _line(event: Event) -> str | None:
    if isinstance(event, Said):
        if event.role == "harness":
            return None  # not the user's, and often long: the model is shown what the two parties said
        text = " ".join(strip_private(event.text[: DIGEST_LINE_CHARS * 4]).split())
        return f"{'User' if event.role == 'user' else 'Assistant'}: {_cut(text)}" if text else None
    if event.command:
        outcome = {True: "ok", False: "failed", None: "no result"}[event.ok]
        return f"Ran: {_cut(' '.join(event.command.split()))} ({outcome})"
    if event.paths and event.ok is not False:
        return "Edited: " + _cut(", ".join(event.paths))
    return None


def _cut(text: str) -> str:
    return text if len(text) <= DIGEST_LINE_CHARS else text[: DIGEST_LINE_CHARS - 1] + "…"


def gist(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(" .!?;:\u3002\uff01\uff1f")  # final punctuation, Latin or CJK


def unseen(facts: list[Fact], seen: list[str]) -> list[Fact]:
    """`facts` less those that say what one of `seen` says."""
    gists = [gist(text) for text in seen]
    if not gists:
        return facts
    return [f for f in facts if not any(_same_gist(gist(f.text), s) for s in gists)]


def _same_gist(a: str, b: str) -> bool:
    # One inside the other counts too ("Alice moved to Lisbon" / "Alice moved to Lisbon in May"),
    # unless the shorter is too short to say anything on its own.
    short, long_ = sorted((a, b), key=len)
    return short == long_ or (len(short) >= 12 and short in long_)
