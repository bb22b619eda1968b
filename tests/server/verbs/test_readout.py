"""One home for what the model reads (server/verbs/readout.py): every caller reads out through it, and the
in-process pack a hook gets is the wire's pack of the entities it chose."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest
from helpers import page
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memverbs.server.projects import find_project
from memverbs.server.verbs import readout

ROOT = Path(__file__).resolve().parents[3]
SLUGS = ["people/alice", "people/bob", "people/me", "companies/acme", "projects/billing", "nobody/here"]


class Session:
    """A session's state as a hook keeps it (hooks/state.SessionState's surface), in memory."""

    def __init__(self, banked: list[str] | None = None) -> None:
        self.entities = list(banked or [])
        self.pending: list[str] = []
        self.cursor_set = False
        self.shown: set[str] = set()

    def given(self, key: str) -> bool:
        return key in self.shown

    def unseen(self, items, key):
        fresh = [i for i in items if key(i) not in self.shown]
        self.shown.update(key(i) for i in items)
        return fresh

    def bank(self, slugs: list[str]) -> None:
        self.entities = list(dict.fromkeys([*slugs, *self.entities]))


def local_side(dispatcher) -> readout.LocalSide:
    """The local side a hook's runner is, refusing with an assertion (a test's failure shows the body)."""
    return readout.LocalSide(dispatcher, refused=lambda body: AssertionError(body))


def seed(local) -> None:
    page(local, "people/alice", "Alice Example", summary="Runs payments.", aliases=["Ali"])
    page(local, "people/bob", "Bob", summary="Owns the invoices.", body="Bob works on [[projects/billing]].")
    page(local, "people/me", "Me", summary="The user.")
    page(local, "companies/acme", "Acme", body="Acme makes anvils.")
    page(local, "projects/billing", "Billing", summary="The billing service.", body="Run by [[people/bob]].")
    local.ok("remember", fact="Alice will send the deck", provenance="p", entity="people/alice", kind="commitment")
    local.ok("remember", fact="use uv, never pip", provenance="p", entity="people/me", kind="preference")
    local.ok("remember", fact="invoices go out on the 1st", provenance="p", entity="projects/billing")
    local.ok("remember", fact="Acme ordered 40 anvils", provenance="p", entity="companies/acme")


@pytest.fixture
def repo(tmp_path) -> Path:
    path = tmp_path / "billing"
    path.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    subprocess.run(["git", "remote", "add", "origin", "git@github.com:org/billing.git"], cwd=path, check=True)
    return path


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(configured=st.lists(st.sampled_from(SLUGS), max_size=3), banked=st.lists(st.sampled_from(SLUGS), max_size=4),
       user=st.sampled_from(["", "people/me", "people/bob"]), in_project=st.booleans())
def test_a_hooks_pack_is_the_wire_pack_of_the_entities_it_chose(runtime, local, repo, configured, banked, user,
                                                                in_project):
    """What a hook's in-process `read_out` packs (standing entities chosen inside the verb, with the brain's
    reads) is exactly what `context_pack` answers any caller for the entities it reports: one decision."""
    if not runtime.brain().pages_by_slugs("default", ["people/alice"], allow_private=True):
        seed(local)
    project = find_project(repo) if in_project else None
    dispatcher = runtime.local_dispatcher(project=project)
    ask = readout.Ask(readout.START, "readout-session", configured=",".join(configured), user=user, banked=banked)
    out = readout.read_out(local_side(dispatcher), ask, Session(banked))
    assert out.text == out.body["text"] and out.body["entities"]
    wire = dispatcher.call("context_pack", {"entities": ",".join(out.body["entities"]), "session_id": "readout-session",
                                            "budget_tokens": readout.PACK_BUDGET_TOKENS})
    assert not wire.is_error and wire.aside == {}, "a caller that brings no `Ask` is told nothing beside the body"
    assert wire.body == out.body
    if in_project:
        assert out.aside["project"] == "projects/billing" and "projects/billing" in out.body["entities"]


def test_a_session_start_banks_what_it_showed_and_sets_the_cursor(runtime, local):
    seed(local)
    session = Session()
    out = readout.read_out(local_side(runtime.local_dispatcher()), readout.Ask(readout.START, "s-bank", user="people/me"),
                           session)
    assert session.cursor_set and runtime.brain().cursor("default", "local", "s-bank") is not None
    assert set(readout.touched(out.body)) <= set(session.entities) and session.entities
    # What the pack showed is not news to the session's first heartbeat (delta re-delivers the moments
    # before its first wake, at least once): its cards' pages and its facts are not said again.
    beat = readout.read_out(local_side(runtime.local_dispatcher()), readout.Ask(readout.BEAT, "s-bank"), session)
    cards = {c["slug"] for c in out.body["cards"]}
    facts = {f["fact"] for f in out.body["facts"]}
    again = ({p["slug"] for p in beat.body["pages"]} & cards) | ({f["fact"] for f in beat.body["facts"]} & facts)
    assert again, "the test needs a delta that re-delivers what the pack showed"
    said = [line for line in beat.text.splitlines() if line.startswith("- **") or "[" in line]
    assert not [line for line in said for item in again if f"`{item}`" in line or f" {item} [" in line], beat.text


def test_a_moment_it_does_not_know_is_refused():
    with pytest.raises(ValueError, match="no such moment"):
        readout.read_out(local_side(None), readout.Ask("lunch", "s"), Session())


# Where the lines are chosen and written: only readout (and the verbs it is the server half of) use these.
_CHOOSERS = {"memverbs.server.verbs.render", "memverbs.server.verbs.cards", "memverbs.server.verbs.budget",
             "memverbs.server.verbs.hot_facts",
             "memverbs.server.verbs.context_pack", "memverbs.server.verbs.delta"}


def test_no_hook_nor_the_inspector_chooses_a_line_itself():
    """The hooks (local and remote) and the inspector reach what the model reads through `read_out` only:
    none imports the modules that choose and write the lines, nor calls the pack or delta verbs itself."""
    offenders = []
    for room in ("hooks", "memverbs/ui"):
        for path in sorted((ROOT / room).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module:
                    names = {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
                    offenders += [f"{path.relative_to(ROOT)} imports {n}" for n in sorted(names & _CHOOSERS)]
                elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                      and node.args[0].value in ("context_pack", "delta")):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} calls {node.args[0].value}")
    assert not offenders, "\n".join(offenders)
