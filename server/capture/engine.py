"""Capture one transcript into the brain: plan what to keep, then write it through the dispatcher.

`plan_capture` decides, without writing to the brain: it reads the transcript once into a
Session (session.py; from a checkpoint when a stopped capture left one), then settles the
session's project (server/projects.py, from the transcript's working directory), the entity its
facts are filed under by default (the project's `projects/<name>`, else the user's own entity),
the session page and the facts, capped at `capture.max_facts` — with `capture.llm` on and
providers given, after the optional LLM pass (llm.py) has proposed more. A fact about a person
or an organisation the brain knows is filed under that entity instead (reports.py), found with
`names`, the brain's name index.

`apply_plan` writes as the trusted local caller: the page with `put_page` (only when its text
changed, so a second capture does not even touch it), each fact with `remember` (its dedup and
supersession decide; an exact restatement is a `duplicate`), with provenance
`capture:<harness> session <id>` (and `, proposed by <model>` for a fact the LLM pass proposed)
and `valid_from` the time it was said. Capturing a session twice therefore stores nothing new;
state.py also skips a transcript unchanged since it was last captured.

Every text reaching `put_page` or `remember` has passed privacy.clean, and passes it again here,
at the last step, so no path can store a `<private>` block or a secret.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from memverbs.server.capture.plan import CaptureOptions, Plan, Result, Spend
from memverbs.server.capture.privacy import clean
from memverbs.server.capture.session import Session
from memverbs.server.projects import Project, find_project

if TYPE_CHECKING:
    from memverbs.server.capture.reports import Names
    from memverbs.server.capture.state import SessionState
    from memverbs.server.capture.statements import Fact
    from memverbs.server.capture.transcript import Transcript
    from memverbs.server.dispatch import Dispatcher
    from memverbs.server.providers.config import Providers
    from memverbs.server.runtime import Runtime

SESSIONS_PREFIX = "sessions/"
TITLES = {"claude": "Claude Code", "codex": "Codex", "grok": "Grok Build", "opencode": "opencode", "openclaw": "OpenClaw"}
CHECKPOINT_EVERY = 4 << 20  # bytes (or rows) read between two checkpoints of a long transcript
GATHER_OVER_CAP = 20  # facts gathered past capture.max_facts, so the count of those left out means something

Checkpoint = Callable[[Session, "Transcript"], None]


def plan_capture(transcript: Transcript, options: CaptureOptions, providers: Providers | None = None,
                 spent: Spend | None = None, names: Names | None = None, resume: Session | None = None,
                 checkpoint: Checkpoint | None = None, cwd: str | None = None) -> Plan:
    """What capture keeps of `transcript`. With `providers` (never for a dry run: it calls a model) and
    `capture.llm` on, the LLM pass runs within what is left of the session's budget (`spent` so far).
    `resume`: the session as a checkpoint left it (the transcript then starts where it stopped);
    `checkpoint`: called now and then, and at the end, with the session so far; `cwd`: the working
    directory when the transcript does not say (a hook's payload)."""
    llm_on = providers is not None and options.llm
    session = resume or new_session(options, names, llm_on)
    read_into(session, transcript, checkpoint)
    transcript.cwd = transcript.cwd or cwd
    project = find_project(transcript.cwd) if transcript.cwd else None
    entity = project.slug if project else options.user_entity
    plan = Plan(harness=transcript.harness, session_id=transcript.session_id, project=project, entity=entity,
                provenance=provenance(transcript), skipped_lines=transcript.skipped)
    if _excluded(project, transcript.cwd, options.exclude_projects):
        plan.skipped = "excluded_project"
        return plan
    rec = session.record
    facts = session.kept()
    plan.facts, plan.dropped = facts[: options.max_facts], max(0, len(facts) - options.max_facts) + session.over
    if not rec.asked and not rec.commands and not rec.files and not plan.facts:
        plan.skipped = "empty"
        return plan
    if llm_on:
        from memverbs.server.capture.llm import propose  # noqa: PLC0415 - only with the pass on

        assert providers is not None
        plan.llm = propose(plan, transcript, session, providers, options, spent or Spend())
    if options.session_page != "off":
        plan.page_slug = session_slug(transcript)
        plan.page_body = page_body(transcript, project, session, plan)
        plan.page_markdown = page_markdown(transcript, plan.page_body, options.session_page)
    return plan


def new_session(options: CaptureOptions, names: Names | None, digest: bool) -> Session:
    return Session(names, keep=options.max_facts + GATHER_OVER_CAP, digest=digest)


def read_into(session: Session, transcript: Transcript, checkpoint: Checkpoint | None = None) -> None:
    """Stream `transcript` into `session`. A checkpoint is taken only where the session holds exactly
    what the transcript says up to `resume_at`: before the first event read past a new resume point."""
    seen = last = transcript.resume_at
    for event in transcript.stream():
        if transcript.resume_at != seen:
            seen = transcript.resume_at
            if checkpoint is not None and seen - last >= CHECKPOINT_EVERY:
                checkpoint(session, transcript)
                last = seen
        session.cwd = session.cwd or transcript.cwd
        session.add(event)
    session.finish()
    if checkpoint is not None and transcript.settled:
        checkpoint(session, transcript)


def capture_session(runtime: Runtime, state: SessionState, path: str, harness: str | None, store_session: str | None,
                    options: CaptureOptions, cwd: str | None = None) -> tuple[Plan, Result | None]:
    """Capture one session, under its lock (the caller holds it): from its checkpoint when a capture
    stopped part-way or an earlier capture read it to a point it has since grown past, planned with the
    brain's name index, written, and its state saved."""
    from memverbs.server.capture import resume  # noqa: PLC0415
    from memverbs.server.capture.naming import brain_names  # noqa: PLC0415

    stamp = state.stamp(path)
    names = brain_names(runtime)
    llm_on = options.llm and runtime.providers is not None
    transcript, resumed = resume.open_resumed(state, path, harness, store_session, names,
                                              options.max_facts + GATHER_OVER_CAP, llm_on)
    plan = plan_capture(transcript, options, runtime.providers, Spend.from_json(state.llm_spent()), names, resumed,
                        lambda s, t: resume.save(state, t, s), cwd)
    result = apply_plan(plan, runtime.local_dispatcher(project=plan.project), options) if plan.skipped is None else None
    counts = {**result.facts, "page": result.page} if result is not None else {}
    state.save(path, stamp, counts, plan.llm.spent.as_json() if plan.llm else None)
    return plan, result


def provenance(transcript: Transcript) -> str:
    return f"capture:{transcript.harness} session {transcript.session_id}"[:500]


def apply_plan(plan: Plan, dispatcher: Dispatcher, options: CaptureOptions) -> Result:
    result = Result(plan)
    if plan.skipped:
        return result
    if plan.page_slug:
        result.page = _write_page(plan, dispatcher, result)
    for fact in plan.facts:
        said_by = plan.provenance if fact.proposed_by is None else f"{plan.provenance}, proposed by {fact.proposed_by}"[:500]
        params = {"fact": clean(fact.text), "provenance": said_by, "kind": fact.kind}
        # Filed under the person or organisation it is about; otherwise, in a project, when the
        # dispatcher's caller carries it, the entity is left to `remember`: the fact records its project
        # and is filed under the slug the brain gave the project (`projects/<name>`, or `-2` when another
        # repository holds the name).
        if fact.entity:
            params["entity"] = fact.entity
        elif plan.project is None or dispatcher.caller.project != plan.project:
            params["entity"] = plan.entity
        if options.visibility == "private":
            params["visibility"] = "private"
        said_at = _epoch_ms(fact.at)
        outcome = dispatcher.call("remember", params, extras={"valid_from": said_at} if said_at else None)
        if outcome.is_error:
            result.errors.append(str(outcome.body.get("error", "error")))
            if outcome.cause is not None:
                raise outcome.cause  # a locked or missing brain: the caller reports it, classified
            continue
        status = str(outcome.body.get("status", "inserted"))
        result.facts[status] = result.facts.get(status, 0) + 1
    return result


def _epoch_ms(stamp: str | None) -> int | None:
    if not stamp:
        return None
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return int((when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp() * 1000)


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


def page_body(transcript: Transcript, project: Project | None, session: Session, plan: Plan) -> str:
    rec = session.record
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
    if rec.commits or rec.outcomes:
        lines += ["## Events", "", *(f"- Commit {sha}{f' on {branch}' if branch else ''}: {_inline(subject)}"
                                     for sha, branch, subject in rec.commits),
                  *(f"- {_inline(o)}" for o in rec.outcomes), ""]
    if rec.final:
        lines += ["## Final state", "", _inline(rec.final), ""]
    if rec.not_users:
        more = rec.not_users_seen - len(rec.not_users)
        lines += ["## Not the user's words", "", "Written into the user's turn by the harness, not typed by the user:", "",
                  *(f"- {label}: {_inline(text)}" for label, text in rec.not_users)]
        lines += [f"- … and {more} more", ""] if more > 0 else [""]
    if plan.facts:
        lines += ["## Kept as facts", "", f"Each with provenance `{clean(plan.provenance)}`:", "",
                  *(_fact_line(f) for f in plan.facts), ""]
    return clean("\n".join(lines).rstrip() + "\n")


def _fact_line(fact: Fact) -> str:
    about = f" (about [[{fact.entity}]])" if fact.entity else ""
    by = " (proposed by the model)" if fact.proposed_by else ""
    return f"- {_inline(fact.text)}{about}{by}"


def _outcome(ok: bool | None) -> str:
    return {True: "ok", False: "failed", None: "no result"}[ok]


def _inline(text: str) -> str:
    """One line, and no `[[…]]` the page parser would read as a link the user never made."""
    return " ".join(text.replace("[[", "[ [").replace("]]", "] ]").split())
