"""What a capture decides and what it costs, apart from the code that decides it: the settings it
runs under, its plan and result (engine.py), and the LLM pass's spend and outcome (llm.py). Both
modules use these shapes; neither imports the other for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memverbs.server.capture.statements import Fact
from memverbs.server.projects import Project

DEFAULT_USER_ENTITY = "people/me"


@dataclass
class CaptureOptions:
    """The `capture.*` settings."""

    max_facts: int = 10
    visibility: str = "default"  # default: the brain's (remember's) default; private: every captured fact private
    session_page: str = "private"  # private | world | off
    exclude_projects: tuple[str, ...] = ()
    user_entity: str = DEFAULT_USER_ENTITY
    llm: bool = False  # the optional LLM pass (llm.py)
    llm_max_usd: float = 0.05
    llm_max_tokens: int = 20_000

    @classmethod
    def from_settings(cls, settings: object) -> CaptureOptions:
        cap = settings.capture  # type: ignore[attr-defined]
        return cls(
            max_facts=cap.max_facts,
            visibility=cap.visibility,
            session_page=cap.session_page,
            exclude_projects=tuple(p.strip() for p in cap.exclude_projects.split(",") if p.strip()),
            user_entity=cap.user_entity.strip() or DEFAULT_USER_ENTITY,
            llm=cap.llm,
            llm_max_usd=cap.llm_max_usd,
            llm_max_tokens=cap.llm_max_tokens,
        )


@dataclass
class Plan:
    harness: str
    session_id: str
    project: Project | None
    entity: str
    provenance: str
    page_slug: str | None = None
    page_body: str = ""
    page_markdown: str = ""
    facts: list[Fact] = field(default_factory=list)
    dropped: int = 0  # facts past the cap (or not looked for once it was reached)
    skipped: str | None = None  # why nothing is kept: excluded_project, empty
    skipped_lines: int = 0  # transcript lines that could not be read
    llm: Outcome | None = None  # the LLM pass, when it was asked (providers given)


@dataclass
class Result:
    plan: Plan
    page: str | None = None  # created | updated | unchanged | None (no page)
    facts: dict[str, int] = field(default_factory=dict)  # remember's status → count
    errors: list[str] = field(default_factory=list)


@dataclass
class Spend:
    tokens: int = 0
    usd: float = 0.0

    def as_json(self) -> dict:
        return {"tokens": self.tokens, "usd": round(self.usd, 6)}

    @classmethod
    def from_json(cls, value: object) -> Spend:
        if not isinstance(value, dict):
            return cls()
        tokens, usd = value.get("tokens"), value.get("usd")
        return cls(tokens if isinstance(tokens, int) else 0, float(usd) if isinstance(usd, int | float) else 0.0)


@dataclass
class Outcome:
    code: str  # off | no_model | budget_spent | ok | llm_error | not_json
    spent: Spend  # the session's total after this pass
    proposed: int = 0  # facts the model proposed
    kept: int = 0  # of those, added to the plan
