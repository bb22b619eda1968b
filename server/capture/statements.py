"""The user's own keep-this statements, as facts, without a model.

Read only from the user's own words (authorship.own_words: no harness text, nothing quoted or
pasted), one sentence at a time:

* **"remember (that) …"**, "note down …", "keep in mind …" — a fact;
* **decisions**: "we decided …", "decision: …", "we'll go with X (instead of Y)", "let's go with X",
  "we're switching to X" — a commitment, with its reason when the next sentence gives one
  ("… round. Pricing is too rich at this stage.");
* **standing rules and preferences**: "from now on …", "going forward …", "I prefer …", "I'd rather
  …", "I only want …", "I never want …", "always/never <do> …" at a sentence's or a clause's start
  ("complete the commit, always verify and run hooks"), "don't use X here, use Y" — a preference,
  the user's "I" turned into "The user";
* **a pick from the assistant's numbered list** ("2", "option 2", "go with the second") right after
  the assistant offered one — the user's decision, worded with the question and the option.

Never: a question, a conditional ("if we decided …"), a hedge ("maybe", "I think", "probably"), a
sentence that needed anything redacted or held a private marker, a sentence that would plant an
instruction to fetch and run code or to ignore instructions (`curl … | sh`, "ignore previous
instructions"), and anything the assistant or the harness said.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from memverbs.server.capture.privacy import is_clean

MAX_FACT_CHARS = 300
MIN_FACT_WORDS = 3
MAX_SENTENCE_WORDS = 60

_LEAD = (r"^(?:(?:ok(?:ay)?|so|also|and|but|great|good|right|alright|fine|yes|yeah|yep|no|nope|please|note|btw|oh|well|"
         r"actually|anyway|one more thing|for the record)\b[,:]?\s+)*")
_VERB = (r"(?:use|run|write|commit|push|pull|put|add|call|keep|store|name|prefer|do|make|test|format|import|check|verify|"
         r"ask|read|edit|change|create|delete|remove|install|update|deploy|merge|rebase|squash|sign|document|include|"
         r"leave|log|mention|open|close|start|stop|try|follow|respect|review|lint|type|quote|pin|tag|branch|build|restart)")
# (pattern over one sentence without its lead, kind, wording: "body" = the captured part, "user" = the
# sentence with its "I" made "The user", "decision" = "Decided: " + body, "sentence" = as said)
_RULES: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"(?:remember|note down|keep in mind)(?:\s+(?:that|this))?\s*[:,-]?\s+(?P<body>.+)$", re.I), "fact", "body"),
    (re.compile(r"(?:we(?:'ve| have)?|i(?:'ve| have)?)\s+(?:just\s+|finally\s+|now\s+)?decided\b.+$", re.I), "commitment", "sentence"),
    (re.compile(r"(?:the\s+)?decision(?:\s+is)?\s*[:-]\s*(?P<body>.+)$", re.I), "commitment", "decision"),
    (re.compile(r"(?:we(?:'ll| will| are going to|'re going to)|let's|let us|i(?:'ll| will))\s+go\s+with\s+\S.+$", re.I), "commitment", "sentence"),
    (re.compile(r"(?:we(?:'ll| will|'re| are)|let's)\s+(?:switch(?:ing)?|mov(?:e|ing)|migrat(?:e|ing))\s+(?:over\s+)?to\s+\S.+$", re.I), "commitment", "sentence"),
    (re.compile(r"(?:from now on|going forward|from here on(?: out)?|henceforth)\b[,:]?\s+(?P<body>.+)$", re.I), "preference", "sentence"),
    (re.compile(r"i(?:\s+(?:really|generally|always|strongly))?\s+prefer\b.+$", re.I), "preference", "user"),
    (re.compile(r"i(?:'d| would)\s+(?:much\s+)?rather\b.+$", re.I), "preference", "user"),
    (re.compile(r"i\s+(?:only|always|never)\s+want\b.+$", re.I), "preference", "user"),
    (re.compile(r"i\s+(?:don't|do not)\s+(?:ever\s+)?want\s+(?:you\s+to\s+)?(?:ever\s+)?\S.+$", re.I), "preference", "user"),
    (re.compile(rf"(?:please\s+)?(?:always|never)\s+(?!mind\b){_VERB}\b.+$", re.I), "preference", "sentence"),
    (re.compile(r"(?:please\s+)?(?:don't|do not|never)\s+use\s+\S.{0,60}?[,;:]\s*(?:just\s+)?(?:use|run|go with)\s+\S.+$", re.I), "preference", "sentence"),
)
# "X, always Y": a rule in a sentence's later clause.
_CLAUSE_RULE = re.compile(rf"[,;:]\s*(?:and\s+)?(?:always|never)\s+(?!mind\b){_VERB}\b", re.I)
_NOT_A_STATEMENT = re.compile(r"\?\s*$|^\s*(?:if|when|whether|should|could|would|do|does|did|can|maybe|perhaps|unless|suppose)\b", re.I)
_HEDGE = re.compile(r"\b(?:maybe|perhaps|probably|might|not sure|i think|i guess|i suppose|unless|possibly|kind of|sort of)\b", re.I)
# What a standing rule must never carry: code fetched and run, or an instruction about instructions.
UNSAFE = re.compile(
    r"\b(?:curl|wget|iwr|invoke-webrequest|fetch)\b[^|\n]*\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|\|\s*(?:python|perl|ruby|node)\d*\b"
    r"|\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+)?(?:previous|prior|above|earlier|system|your)\s+"
    r"(?:instructions|prompts?|rules|messages)\b|\bsystem prompt\b|\byou are now\b|\bbase64\s+-d\b.*\|\s*(?:ba)?sh",
    re.I,
)
_SENTENCE_END = re.compile(r"(?<=[.!;])\s+(?=[A-Z\"'(])|\n+")
# A following sentence that gives a decision's reason: a clause with its own verb, not a note about logging it.
_REASON = re.compile(r"^(?:because|since|as|given|due to)\b|^(?!(?:logging|noted|logged|done|thanks|ok)\b)[A-Za-z][\w'’ -]{0,40}?\b"
                     r"(?:is|are|was|were|isn't|aren't|wasn't|has|have|had|looks?|seems?|feels?|costs?|want|wants|need|needs|"
                     r"can't|cannot|won't|don't|doesn't|lacks?)\b", re.I)


@dataclass
class Fact:
    text: str
    kind: str  # a remember kind: fact, preference, commitment, belief, event
    proposed_by: str | None = None  # the chat model that proposed it (the optional LLM pass, llm.py); None: a rule found it
    entity: str | None = None  # the entity it is filed under; None: the session's project (or the user's entity)
    at: str | None = None  # when it was said (ISO), the fact's valid_from

    def as_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_json(cls, value: dict) -> Fact:
        return cls(**{k: value[k] for k in ("text", "kind", "proposed_by", "entity", "at") if k in value})


def sentences(text: str) -> list[str]:
    """`text` (already the user's own words) cut into sentences, each on one line."""
    out = []
    for part in _SENTENCE_END.split(text):
        part = " ".join(part.split())
        if part:
            out.append(part)
    return out


def strip_lead(sentence: str) -> str:
    return re.sub(_LEAD, "", sentence, flags=re.I)


def statement(sentence: str, following: str | None = None) -> Fact | None:
    """A fact when `sentence` is one of the user's keep-this statements, else None. `following`, the next
    sentence of the same message, may give a decision's reason."""
    body = strip_lead(sentence)
    fact = _matched(body, following)
    return fact if fact is not None and is_statement(sentence) else None


def _matched(body: str, following: str | None) -> Fact | None:
    if PICK_WORDS.search(body):
        return None
    for pattern, kind, wording in _RULES:
        m = pattern.match(body)
        if m is None:
            continue
        if wording == "body":
            text = m.group("body")
        elif wording == "decision":
            text = "Decided: " + m.group("body")
        elif wording == "user":
            text = _third_person(body)
        else:
            text = body
        if kind == "commitment" and following and _REASON.match(following) and is_statement(following):
            text = text.rstrip(" .!;") + ": " + following[:1].lower() + following[1:]
        return worded(text, kind)
    if _CLAUSE_RULE.search(body):
        return worded(body, "preference")
    return None


def is_statement(sentence: str) -> bool:
    """Not a question, a conditional or a hedge; clean; safe; of a sentence's length."""
    return (not _NOT_A_STATEMENT.search(sentence) and not _HEDGE.search(sentence) and not UNSAFE.search(sentence)
            and len(sentence.split()) <= MAX_SENTENCE_WORDS and is_clean(sentence))


def worded(text: str, kind: str, at: str | None = None, entity: str | None = None) -> Fact | None:
    text = _tidy(text)
    if len(text.split()) < MIN_FACT_WORDS or len(text) > MAX_FACT_CHARS or UNSAFE.search(text):
        return None
    return Fact(text, kind, entity=entity, at=at)


def _third_person(text: str) -> str:
    """"I prefer tabs" → "The user prefers tabs": a fact is read later, by someone else."""
    text = re.sub(r"^i(\s+(?:really|generally|always|strongly))?\s+prefer\b", r"The user\1 prefers", text, flags=re.I)
    text = re.sub(r"^i(?:'d| would)\s+(much\s+)?rather\b", r"The user would \1rather", text, flags=re.I)
    text = re.sub(r"^i\s+(only|always|never)\s+want\b", r"The user \1 wants", text, flags=re.I)
    return re.sub(r"^i\s+(?:don't|do not)\s+(ever\s+)?want\b", r"The user does not \1want", text, flags=re.I)


def _tidy(text: str) -> str:
    text = " ".join(text.split()).strip().strip("\"'").strip()
    text = text[:1].upper() + text[1:]
    if text and text[-1] not in ".!":
        text = text.rstrip(";:,") + "."
    return text


# -- a pick from the assistant's numbered list ---------------------------------------------------

_OPTION = re.compile(r"^\s*(?:[-*]\s+)?(?:\*\*)?(?:option\s+)?\(?(?P<n>[1-9]|[A-Ea-e])(?:[.):]|\*\*[.):]?)(?:\*\*)?\s+(?P<text>\S.*)$", re.I | re.M)
_QUESTION = re.compile(r"[^.!?\n*]{8,}\?")
_CHOICE = re.compile(r"\b(?:options?|choose|pick|prefer|which one|let me know which)\b", re.I)
_PICK = re.compile(
    r"^\s*(?:(?:let's|let us|i'll|we'll|i will|we will|i'd like|i want|please)\s+(?:go\s+with|take|do|pick|choose|use)\s+)?"
    r"(?:(?:go\s+with|take|do|pick|choose|use)\s+)?(?:the\s+)?(?:option\s+|number\s+|#\s*|no\.\s*)?"
    r"(?P<n>[1-9]|[a-e]|one|two|three|four|five|first|second|third|fourth|fifth)"
    r"(?:\s+(?:one|option|please|pls|then|it is))?\s*[.!]?\s*(?:please|thanks|thank you)?[.!]?\s*$",
    re.I,
)
_ORDINALS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}
# "go with option B": a pick, never a decision on its own (it means nothing without the list).
PICK_WORDS = re.compile(r"\bgo\s+with\s+(?:the\s+)?(?:option|number|#|no\.)?\s*(?:[1-9]|[a-e]|first|second|third|fourth|fifth)\b\W*$", re.I)


def menu(text: str) -> dict | None:
    """The options an assistant message lists (two or more, numbered 1, 2, … or lettered A, B, … in order)
    and the question it asks, or None."""
    options: dict[int, str] = {}
    first_at, lettered = -1, False
    for m in _OPTION.finditer(text):
        mark = m.group("n").upper()
        n = int(mark) if mark.isdigit() else ord(mark) - ord("A") + 1
        if n == len(options) + 1 and (n == 1 or lettered != mark.isdigit()):
            options[n] = _option_text(m.group("text"))
            if n == 1:
                first_at, lettered = m.start(), not mark.isdigit()
    asked = _QUESTION.findall(text[:first_at]) or _QUESTION.findall(text[first_at:])
    if len(options) < 2 or not (asked or _CHOICE.search(text)):
        return None  # a list of steps or findings, not a choice offered
    question = asked[-1].strip().strip("*").strip() if asked else ""
    return {"question": question[:300], "options": [options[n][:200] for n in sorted(options)], "lettered": lettered}


def _option_text(text: str) -> str:
    text = re.split(r"\s+[—–]\s+|\s+-\s+(?=[A-Za-z])", text, maxsplit=1)[0]
    return text.replace("**", "").replace("__", "").strip().rstrip(":").strip()


def pick(reply: str, offered: dict, at: str | None) -> Fact | None:
    """The user's choice when `reply` picks one of `offered`'s options (and nothing more), else None."""
    m = _PICK.match(" ".join(reply.split()))
    if m is None:
        return None
    mark = m.group("n").lower()
    if len(mark) == 1 and mark.isalpha() != bool(offered.get("lettered")):
        return None  # "a" answers a lettered list, "1" a numbered one
    n = _ORDINALS.get(mark) or (int(mark) if mark.isdigit() else ord(mark) - ord("a") + 1 if len(mark) == 1 else 0)
    options = offered.get("options") or []
    if not 1 <= n <= len(options):
        return None
    chosen, question = options[n - 1], offered.get("question") or ""
    if not is_clean(chosen) or not is_clean(question) or UNSAFE.search(chosen):
        return None
    asked = f"Asked “{question.rstrip('?')}?”, the user chose: " if question else "The user chose: "
    return worded(asked + chosen, "commitment", at)
