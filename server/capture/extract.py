"""What a session says is worth keeping, without a model: the user's explicit statements, confirmed
outcomes, and a short record of the session.

Facts come only from two places, because both are statements rather than guesses:
* **the user's own words**, a sentence that says it is to be kept: "remember (that) …",
  "we decided / we've decided / decision: …", "from now on …", "going forward …",
  "I prefer / I'd rather …", "always … / never …" as a rule. A question, a conditional ("if we
  decided …"), a sentence inside a code block or quotation, and anything the assistant said are
  never facts: the assistant's text is where guesses and dead ends live;
* **outcomes the tools confirmed**: a `git commit` that printed its new commit, and a test
  command that failed earlier in the session and passed after files were changed. A command that
  failed, or whose result never came back, is not an outcome.

Every text here has already passed privacy.clean: a `<private>` span is gone before a sentence is
cut, and a sentence that needed a secret redacted is not kept as a fact (the session page keeps it,
redacted). The record's parts are capped, so a long session makes a short page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memverbs.server.capture.privacy import clean, is_clean
from memverbs.server.capture.transcript import EDIT_TOOLS, Transcript

MAX_FACT_CHARS = 300
MIN_FACT_WORDS = 3
ASKED_KEEP, ASKED_CHARS = 5, 300
COMMANDS_KEEP, COMMAND_CHARS = 15, 160
FILES_KEEP = 30
FINAL_CHARS = 600

_LEAD = r"^(?:(?:ok(?:ay)?|so|also|and|but|great|good|right|alright|fine|yes|please|note)\b[,:]?\s+)*"
# (pattern over one sentence, kind, how the fact is worded: "body" = the captured clause, else the sentence)
_RULES: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(_LEAD + r"(?:please\s+)?(?:remember|note down|keep in mind)(?:\s+(?:that|this))?\s*[:,-]?\s+(?P<body>.+)$", re.I), "fact", "body"),
    (re.compile(_LEAD + r"(?:we(?:'ve| have)?|i(?:'ve| have)?)\s+(?:just\s+|finally\s+)?decided\b.+$", re.I), "commitment", "sentence"),
    (re.compile(_LEAD + r"(?:the\s+)?decision(?:\s+is)?\s*[:-]\s*(?P<body>.+)$", re.I), "commitment", "decision"),
    (re.compile(_LEAD + r"(?:from now on|going forward|from here on(?: out)?|henceforth)\b[,:]?\s+(?P<body>.+)$", re.I), "preference", "sentence"),
    (re.compile(_LEAD + r"i(?:\s+(?:really|generally|always|strongly))?\s+prefer\b.+$", re.I), "preference", "user"),
    (re.compile(_LEAD + r"i(?:'d| would)\s+rather\b.+$", re.I), "preference", "user"),
    (re.compile(_LEAD + r"(?:always|never)\s+(?!mind\b)(?:use|run|write|commit|push|put|add|call|keep|store|name|prefer|do|make|test|format|import)\b.+$", re.I), "preference", "sentence"),
)
_NOT_A_STATEMENT = re.compile(r"\?\s*$|^\s*(?:if|when|whether|should|could|would|do|does|did|can|maybe|perhaps)\b", re.I)
_HEDGE = re.compile(r"\b(?:maybe|perhaps|probably|might|not sure|i think|i guess|unless)\b", re.I)
_FENCE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.DOTALL)
_QUOTED_LINE = re.compile(r"^\s*>.*$", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!;])\s+(?=[A-Z\"'(])|\n+")

_COMMIT_CMD = re.compile(r"\bgit\s+(?:-C\s+\S+\s+)?commit\b")
_COMMIT_OUT = re.compile(r"^\[(?P<branch>[^\]\s]+)(?: \(root-commit\))? (?P<sha>[0-9a-f]{7,40})\] (?P<subject>.+)$", re.MULTILINE)
_TEST_CMD = re.compile(
    r"\b(?:pytest|py\.test|tox|nox|unittest|go\s+test|cargo\s+(?:test|nextest)|(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test|"
    r"jest|vitest|mocha|mvn\s+(?:-\S+\s+)*(?:test|verify)|gradle\w*\s+test|make\s+(?:test|check)|rspec|phpunit|ctest|"
    r"dotnet\s+test|mix\s+test|swift\s+test)\b"
)
_TEST_FAILED = re.compile(r"\b\d+ (?:failed|errors?)\b|^FAIL(?:ED)?\b|\bFAILURES?\b|Tests? failed", re.MULTILINE)


@dataclass
class Fact:
    text: str
    kind: str  # a remember kind: fact, preference, commitment, event
    proposed_by: str | None = None  # the chat model that proposed it (the optional LLM pass, llm.py); None: a rule found it


@dataclass
class Record:
    """The session page's parts, each already cleaned and capped."""

    asked: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    commands: list[tuple[str, bool | None]] = field(default_factory=list)
    commits: list[tuple[str, str]] = field(default_factory=list)  # (short sha, subject)
    final: str = ""
    commands_run: int = 0


def user_facts(transcript: Transcript) -> list[Fact]:
    """The user's explicit statements, in order, without repeats."""
    found: dict[str, Fact] = {}
    for said in transcript.said("user"):
        for sentence in sentences(clean(said)):
            fact = statement(sentence)
            if fact is not None:
                found.setdefault(fact.text.lower(), fact)
    return list(found.values())


def not_remembered(facts: list[Fact], transcript: Transcript) -> list[Fact]:
    """`facts` less those the agent already saved with `remember` in the session: the agent's own
    call, with its entity, is the better record, and the same fact twice is noise in every pack."""
    return unseen(facts, [r.remembered for r in transcript.runs() if r.remembered])


def unseen(facts: list[Fact], seen: list[str]) -> list[Fact]:
    """`facts` less those that say what one of `seen` says."""
    gists = [_gist(text) for text in seen]
    if not gists:
        return facts
    return [f for f in facts if not any(_same_gist(_gist(f.text), s) for s in gists)]


def _gist(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(" .!?;:\u3002\uff01\uff1f")  # final punctuation, Latin or CJK


def _same_gist(a: str, b: str) -> bool:
    # One inside the other counts too ("Alice moved to Lisbon" / "Alice moved to Lisbon in May"),
    # unless the shorter is too short to say anything on its own.
    short, long_ = sorted((a, b), key=len)
    return short == long_ or (len(short) >= 12 and short in long_)


def sentences(text: str) -> list[str]:
    """`text` cut into sentences, without code, inline code and quoted lines (the user citing, not saying)."""
    text = _QUOTED_LINE.sub("\n", _FENCE.sub("\n", text))
    out = []
    for part in _SENTENCE_END.split(text):
        part = " ".join(part.split())
        if part:
            out.append(part)
    return out


def statement(sentence: str) -> Fact | None:
    """A fact when `sentence` is one of the user's keep-this statements, else None."""
    if _NOT_A_STATEMENT.search(sentence) or _HEDGE.search(sentence) or not is_clean(sentence):
        return None
    for pattern, kind, wording in _RULES:
        m = pattern.match(sentence)
        if m is None:
            continue
        if wording == "body":
            text = m.group("body")
        elif wording == "decision":
            text = "Decided: " + m.group("body")
        elif wording == "user":
            text = _third_person(sentence[m.start() :].lstrip())
        else:
            text = re.sub(_LEAD, "", sentence, flags=re.I)
        text = _tidy(text)
        if len(text.split()) < MIN_FACT_WORDS or len(text) > MAX_FACT_CHARS:
            return None
        return Fact(text, kind)
    return None


def _third_person(text: str) -> str:
    """"I prefer tabs" → "The user prefers tabs": a fact is read later, by someone else."""
    text = re.sub(_LEAD, "", text, flags=re.I)
    text = re.sub(r"^i(\s+(?:really|generally|always|strongly))?\s+prefer\b", r"The user\1 prefers", text, flags=re.I)
    return re.sub(r"^i(?:'d| would)\s+rather\b", "The user would rather", text, flags=re.I)


def _tidy(text: str) -> str:
    text = text.strip().strip("\"'").strip()
    text = text[:1].upper() + text[1:]
    if text and text[-1] not in ".!":
        text += "."
    return text


def outcome_facts(transcript: Transcript) -> list[Fact]:
    """Commits that were made and test commands that passed after failing, as the tools reported them."""
    facts: list[Fact] = []
    failing: dict[str, set[str]] = {}  # test command → files changed since it failed
    for run in transcript.runs():
        if run.name in EDIT_TOOLS and run.ok is not False:
            for changed in failing.values():
                changed.update(run.paths)
            continue
        command = run.command
        if not command:
            continue
        if _COMMIT_CMD.search(command) and run.ok:
            for m in _COMMIT_OUT.finditer(run.output):
                subject = clean(m.group("subject").strip())
                if is_clean(subject) and subject:
                    facts.append(Fact(f"Commit {m.group('sha')[:10]} on {m.group('branch')}: {subject[:200]}", "event"))
        if _TEST_CMD.search(command):
            key = " ".join(command.split())
            passed = run.ok is True and not _TEST_FAILED.search(run.output)
            if run.ok is False or (run.ok is True and not passed):
                failing.setdefault(key, set())
            elif passed and key in failing:
                changed = failing.pop(key)
                shown = clean(key)
                if changed and is_clean(shown) and len(shown) <= COMMAND_CHARS:
                    files = ", ".join(sorted(_short(p, transcript.cwd) for p in changed)[:5])
                    facts.append(Fact(f"`{shown}` passes after a fix (changed {files}).", "event"))
    return facts


def record(transcript: Transcript) -> Record:
    rec = Record()
    for said in transcript.said("user"):
        text = " ".join(clean(said).split())
        if text and len(rec.asked) < ASKED_KEEP:
            rec.asked.append(text if len(text) <= ASKED_CHARS else text[: ASKED_CHARS - 1] + "…")
    seen_files: dict[str, None] = {}
    for run in transcript.runs():
        for p in run.paths:
            if run.ok is not False:
                seen_files.setdefault(clean(_short(p, transcript.cwd)), None)
        if run.command:
            rec.commands_run += 1
            if len(rec.commands) < COMMANDS_KEEP:
                command = " ".join(clean(run.command).split())
                rec.commands.append((command if len(command) <= COMMAND_CHARS else command[: COMMAND_CHARS - 1] + "…", run.ok))
            if _COMMIT_CMD.search(run.command) and run.ok:
                rec.commits += [(m.group("sha")[:10], clean(m.group("subject").strip())[:200]) for m in _COMMIT_OUT.finditer(run.output)]
    rec.files = list(seen_files)[:FILES_KEEP]
    finals = transcript.said("assistant")
    if finals:
        # The last answer with substance: a closing "You're welcome!" says nothing of where the work stands.
        final = next((t for t in (clean(f).strip() for f in reversed(finals)) if not _courtesy(t)), clean(finals[-1]).strip())
        rec.final = final if len(final) <= FINAL_CHARS else final[: FINAL_CHARS - 1] + "…"
    return rec


# Manners, sentence by sentence (thanks taken, a goodbye, an offer of more help): a reply made only
# of them is never a session's final state.
_COURTESY = re.compile(
    r"you(?:'|’)?re (?:very |most |so )?welcome|no problem|no worries|happy to help|glad (?:i could|i was able to|to) help"
    r"|any ?time|my pleasure|sure thing|thanks?(?: you)?(?: so much| a lot)?|cheers|good ?bye|bye|take care|good luck"
    r"|happy coding|have a (?:great|good|nice) (?:day|one|evening|weekend)|(?:let me know|feel free|(?:ping|tell) me)\b.*",
    re.IGNORECASE,
)


def _courtesy(text: str) -> bool:
    parts = [p.strip(" \t!.,:;()🙂😊👍") for p in re.split(r"(?<=[.!?])\s+|\n+|\s[—–-]\s", text)]
    parts = [p for p in parts if p]
    return bool(parts) and all(_COURTESY.fullmatch(p) for p in parts)


def _short(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path
