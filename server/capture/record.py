"""The session page's record: what was asked, done and confirmed, short and already cleaned.

Built event by event (session.py) and bounded, so a long session makes a short page:
* the user's first requests (their own words, authorship.py), each cut to ASKED_CHARS;
* the files an edit tool changed, the commands run and whether each succeeded;
* **events** the tools confirmed — a `git commit` that printed its new commit, a test command that
  failed and passed after files were changed. They belong here, on the page, not among the facts;
* what the harness wrote in the user's turn (a `!command`'s output, a task notification, a
  compaction's summary …), marked as not the user's words, each cut short;
* the final state (the assistant's last message).

Every text here has passed privacy.clean before it is kept.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from memverbs.server.capture.privacy import clean
from memverbs.server.capture.transcript import EDIT_TOOLS, ToolRun

ASKED_KEEP, ASKED_CHARS = 5, 300
COMMANDS_KEEP, COMMAND_CHARS = 15, 160
FILES_KEEP = 30
COMMITS_KEEP = 20
OUTCOMES_KEEP = 10
NOT_USERS_KEEP, NOT_USER_CHARS = 5, 200
FINAL_CHARS = 600
FAILING_KEEP = 50

COMMIT_CMD = re.compile(r"\bgit\s+(?:-C\s+\S+\s+)?commit\b")
COMMIT_OUT = re.compile(r"^\[(?P<branch>[^\]\s]+)(?: \(root-commit\))? (?P<sha>[0-9a-f]{7,40})\] (?P<subject>.+)$", re.MULTILINE)
# `git commit -q … && git log --oneline -1`: git prints no "[branch sha]" line, the log's first line is the commit.
LOG_AFTER_COMMIT = re.compile(r"\bgit\s+(?:-C\s+\S+\s+)?log\b[^|;&]*--oneline")
ONELINE = re.compile(r"^(?P<sha>[0-9a-f]{7,40}) (?P<subject>\S.*)$", re.MULTILINE)
TEST_CMD = re.compile(
    r"\b(?:pytest|py\.test|tox|nox|unittest|go\s+test|cargo\s+(?:test|nextest)|(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test|"
    r"jest|vitest|mocha|mvn\s+(?:-\S+\s+)*(?:test|verify)|gradle\w*\s+test|make\s+(?:test|check)|rspec|phpunit|ctest|"
    r"dotnet\s+test|mix\s+test|swift\s+test)\b"
)
TEST_FAILED = re.compile(r"\b\d+ (?:failed|errors?)\b|^FAIL(?:ED)?\b|\bFAILURES?\b|Tests? failed", re.MULTILINE)


@dataclass
class Record:
    asked: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    commands: list[list] = field(default_factory=list)  # [command, ok]
    commands_run: int = 0
    commits: list[list[str]] = field(default_factory=list)  # [short sha, branch, subject]
    outcomes: list[str] = field(default_factory=list)
    not_users: list[list[str]] = field(default_factory=list)  # [label, text]
    not_users_seen: int = 0
    final: str = ""
    failing: dict[str, list[str]] = field(default_factory=dict)  # test command → files changed since it failed

    def as_json(self) -> dict:
        body = asdict(self)
        # Saved to disk (a checkpoint): a command or a last message may hold a secret, the file must not.
        body["failing"] = {clean(k): [clean(p) for p in v] for k, v in self.failing.items()}
        body["final"] = clean(self.final)
        return body

    @classmethod
    def from_json(cls, value: dict) -> Record:
        rec = cls()
        for name in rec.__dataclass_fields__:
            if name in value and isinstance(value[name], type(getattr(rec, name))):
                setattr(rec, name, value[name])
        return rec

    def asked_for(self, text: str) -> None:
        if len(self.asked) < ASKED_KEEP:
            said = " ".join(clean(text[: ASKED_CHARS * 4]).split())
            if said:
                self.asked.append(_cut(said, ASKED_CHARS))

    def not_user(self, label: str, text: str) -> None:
        self.not_users_seen += 1
        if len(self.not_users) < NOT_USERS_KEEP:
            said = " ".join(clean(text[: NOT_USER_CHARS * 4]).split())
            if said:
                self.not_users.append([label, _cut(said, NOT_USER_CHARS)])

    def ran(self, run: ToolRun, cwd: str | None) -> None:
        if run.ok is not False:
            for p in run.paths:
                if len(self.files) < FILES_KEEP:
                    short = clean(_short(p, cwd))
                    if short not in self.files:
                        self.files.append(short)
        if run.name in EDIT_TOOLS and run.ok is not False:
            for changed in self.failing.values():
                changed.extend(p for p in run.paths if p not in changed)
        command = run.command
        if not command:
            return
        self.commands_run += 1
        if len(self.commands) < COMMANDS_KEEP:
            self.commands.append([_cut(" ".join(clean(command).split()), COMMAND_CHARS), run.ok])
        if COMMIT_CMD.search(command) and run.ok:
            self._committed(command, run.output)
        if TEST_CMD.search(command):
            self._tested(" ".join(command.split()), run, cwd)

    def _committed(self, command: str, output: str) -> None:
        found = [(m.group("sha"), m.group("branch"), m.group("subject")) for m in COMMIT_OUT.finditer(output)]
        logged = ONELINE.search(output) if LOG_AFTER_COMMIT.search(command) else None
        if logged is not None and not any(sha.startswith(logged.group("sha")) for sha, _, _ in found):
            found.insert(0, (logged.group("sha"), "", logged.group("subject")))
        for sha, branch, subject in found:
            if len(self.commits) < COMMITS_KEEP:
                self.commits.append([sha[:10], clean(branch), clean(subject.strip())[:200]])

    def _tested(self, key: str, run: ToolRun, cwd: str | None) -> None:
        passed = run.ok is True and not TEST_FAILED.search(run.output)
        if run.ok is False or (run.ok is True and not passed):
            if key in self.failing or len(self.failing) < FAILING_KEEP:
                self.failing.setdefault(key, [])
        elif passed and key in self.failing:
            changed = self.failing.pop(key)
            shown = clean(key)
            if changed and len(shown) <= COMMAND_CHARS and len(self.outcomes) < OUTCOMES_KEEP:
                files = ", ".join(sorted(clean(_short(p, cwd)) for p in changed)[:5])
                self.outcomes.append(f"`{shown}` passes after a fix (changed {files}).")

    def ended_with(self, text: str) -> None:
        if self.final and _courtesy(text):
            return  # a closing "You're welcome!" says nothing of where the work stands: the last answer with substance does
        self.final = text[: FINAL_CHARS * 2]  # cleaned when the record is read (finish) or saved

    def finish(self) -> None:
        self.final = _cut(clean(self.final).strip(), FINAL_CHARS)


# Manners, sentence by sentence (thanks taken, a goodbye, an offer of more help): a reply made only
# of them is never a session's final state while an earlier answer is there.
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


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path
