"""Capture one transcript into the brain: plan what to keep, then write it through the dispatcher.

`plan_capture` decides, without touching the brain: the session's project (server/projects.py,
from the transcript's working directory), the entity its facts are filed under (the project's
`projects/<name>`, else the user's own entity), the session page and the facts, capped at
`capture.max_facts` — with `capture.llm` on and providers given, after the optional LLM pass
(llm.py) has proposed more. `apply_plan` writes them as the trusted local caller: the page with
`put_page` (only when its text changed, so a second capture does not even touch it), each fact
with `remember` (its dedup and supersession decide; an exact restatement is a `duplicate`), with
provenance `capture:<harness> session <id>` (and `, proposed by <model>` for a fact the LLM pass
proposed). Capturing a session twice therefore stores nothing
new; server/capture/state.py also skips a transcript unchanged since it was last captured.

Every text reaching `put_page` or `remember` has passed privacy.clean, and passes it again here,
at the last step, so no path can store a `<private>` span or a secret.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from memverbs.server.capture.extract import Fact, Record, not_remembered, outcome_facts, record, user_facts
from memverbs.server.capture.plan import CaptureOptions, Plan, Result, Spend
from memverbs.server.capture.privacy import clean
from memverbs.server.projects import Project, find_project

if TYPE_CHECKING:
    from memverbs.server.capture.transcript import Transcript
    from memverbs.server.dispatch import Dispatcher
    from memverbs.server.providers.config import Providers

SESSIONS_PREFIX = "sessions/"
TITLES = {"claude": "Claude Code", "codex": "Codex", "grok": "Grok Build", "opencode": "opencode", "openclaw": "OpenClaw"}


def plan_capture(transcript: Transcript, options: CaptureOptions, providers: Providers | None = None,
                 spent: Spend | None = None) -> Plan:
    """What capture keeps of `transcript`. With `providers` (never for a dry run: it calls a model) and
    `capture.llm` on, the LLM pass runs within what is left of the session's budget (`spent` so far)."""
    project = find_project(transcript.cwd) if transcript.cwd else None
    entity = project.slug if project else options.user_entity
    plan = Plan(harness=transcript.harness, session_id=transcript.session_id, project=project, entity=entity,
                provenance=f"capture:{transcript.harness} session {transcript.session_id}"[:500])
    if _excluded(project, transcript.cwd, options.exclude_projects):
        plan.skipped = "excluded_project"
        return plan
    rec = record(transcript)
    facts = not_remembered(user_facts(transcript), transcript) + outcome_facts(transcript)
    plan.facts, plan.dropped = facts[: options.max_facts], max(0, len(facts) - options.max_facts)
    if not rec.asked and not rec.commands and not rec.files and not plan.facts:
        plan.skipped = "empty"
        return plan
    if providers is not None and options.llm:
        from memverbs.server.capture.llm import Spend, propose  # noqa: PLC0415 - only with the pass on

        plan.llm = propose(plan, transcript, providers, options, spent or Spend())
    if options.session_page != "off":
        plan.page_slug = session_slug(transcript)
        plan.page_body = page_body(transcript, project, rec, plan.facts)
        plan.page_markdown = page_markdown(transcript, plan.page_body, options.session_page)
    return plan


def apply_plan(plan: Plan, dispatcher: Dispatcher, options: CaptureOptions) -> Result:
    result = Result(plan)
    if plan.skipped:
        return result
    if plan.page_slug:
        result.page = _write_page(plan, dispatcher, result)
    for fact in plan.facts:
        provenance = plan.provenance if fact.proposed_by is None else f"{plan.provenance}, proposed by {fact.proposed_by}"[:500]
        params = {"fact": clean(fact.text), "provenance": provenance, "kind": fact.kind}
        # In a project, when the dispatcher's caller carries it, the entity is left to `remember`: the
        # fact records its project and is filed under the slug the brain gave the project
        # (`projects/<name>`, or `-2` when another repository holds the name).
        if plan.project is None or dispatcher.caller.project != plan.project:
            params["entity"] = plan.entity
        if options.visibility == "private":
            params["visibility"] = "private"
        outcome = dispatcher.call("remember", params)
        if outcome.is_error:
            result.errors.append(str(outcome.body.get("error", "error")))
            if outcome.cause is not None:
                raise outcome.cause  # a locked or missing brain: the caller reports it, classified
            continue
        status = str(outcome.body.get("status", "inserted"))
        result.facts[status] = result.facts.get(status, 0) + 1
    return result


def _write_page(plan: Plan, dispatcher: Dispatcher, result: Result) -> str | None:
    assert plan.page_slug is not None
    existing = dispatcher.call("get_page", {"slug": plan.page_slug})
    if not existing.is_error and existing.body.get("body", "").strip() == plan.page_body.strip():
        return "unchanged"
    outcome = dispatcher.call("put_page", {"slug": plan.page_slug, "content": clean(plan.page_markdown)})
    if outcome.is_error:
        if outcome.cause is not None:
            raise outcome.cause
        result.errors.append(str(outcome.body.get("error", "error")))
        return None
    return str(outcome.body.get("status"))


def _excluded(project: Project | None, cwd: str | None, excluded: tuple[str, ...]) -> bool:
    for item in excluded:
        if project is not None and item in (project.name, project.slug, project.key, project.root):
            return True
        if item.startswith(("/", "~")) and cwd:
            import os  # noqa: PLC0415

            root = os.path.realpath(os.path.expanduser(item)).rstrip("/")
            here = os.path.realpath(cwd)
            if here == root or here.startswith(root + "/"):
                return True
    return False


# -- the session page --------------------------------------------------------------------------


def session_date(transcript: Transcript) -> str:
    stamp = transcript.started or ""
    if len(stamp) >= 10 and stamp[4] == "-" and stamp[7] == "-":
        return stamp[:10]
    import os  # noqa: PLC0415

    try:
        return datetime.fromtimestamp(os.path.getmtime(transcript.path), UTC).strftime("%Y-%m-%d")
    except OSError:
        return datetime.now(UTC).strftime("%Y-%m-%d")


def short_id(session_id: str) -> str:
    return "".join(c for c in session_id.lower() if c.isalnum())[:8] or "session"


def session_slug(transcript: Transcript) -> str:
    return f"{SESSIONS_PREFIX}{session_date(transcript)}-{transcript.harness}-{short_id(transcript.session_id)}"


def page_markdown(transcript: Transcript, body: str, visibility: str) -> str:
    title = f"{TITLES.get(transcript.harness, transcript.harness)} session {session_date(transcript)} {short_id(transcript.session_id)}"
    return f"---\ntitle: {title}\ntype: session\nvisibility: {'world' if visibility == 'world' else 'private'}\n---\n{body}"


def page_body(transcript: Transcript, project: Project | None, rec: Record, facts: list[Fact]) -> str:
    where = f" in [[{project.slug}]]" if project else ""
    title = TITLES.get(transcript.harness, transcript.harness)
    lines = [f"{'An' if title[:1] in 'AEIOUaeiou' else 'A'} {title} session{where} on {session_date(transcript)} "
             f"(session id `{clean(transcript.session_id)}`), captured from its transcript.", ""]
    if rec.asked:
        lines += ["## Asked", "", *(f"- {_inline(a)}" for a in rec.asked), ""]
    if rec.files:
        lines += ["## Files touched", "", *(f"- `{f}`" for f in rec.files), ""]
    if rec.commands:
        more = rec.commands_run - len(rec.commands)
        lines += ["## Commands", "", *(f"- `{c}` — {_outcome(ok)}" for c, ok in rec.commands)]
        lines += [f"- … and {more} more", ""] if more > 0 else [""]
    if rec.commits:
        lines += ["## Commits", "", *(f"- {sha} {_inline(subject)}" for sha, subject in rec.commits), ""]
    if rec.final:
        lines += ["## Final state", "", _inline(rec.final), ""]
    if facts:
        lines += ["## Kept as facts", "", *(f"- {_inline(f.text)}" + (" (proposed by the model)" if f.proposed_by else "")
                                            for f in facts), ""]
    return clean("\n".join(lines).rstrip() + "\n")


def _outcome(ok: bool | None) -> str:
    return {True: "ok", False: "failed", None: "no result"}[ok]


def _inline(text: str) -> str:
    """One line, and no `[[…]]` the page parser would read as a link the user never made."""
    return " ".join(text.replace("[[", "[ [").replace("]]", "] ]").split())
