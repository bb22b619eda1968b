"""The CLI as a person meets it, in process through `main(argv)`: init's next steps,
every command's help, browsing, entity hygiene, output formats, colour and exit codes."""

from __future__ import annotations

import argparse
import csv
import io
import json
import re

import pytest

from memverbs.cli import completion
from memverbs.cli.main import main
from memverbs.cli.parser import build_parser
from memverbs.server.protocol.registry import BY_NAME
from memverbs.server.runtime import Runtime


def cli(capsys, *argv: str, code: int = 0) -> str:
    """Run `memverbs ARGV` in process; assert the exit status; return stdout."""
    try:
        status = main(list(argv))
    except SystemExit as exc:  # argparse: --help, usage errors
        status = exc.code
    out, err = capsys.readouterr()
    assert status == code, f"exit {status}\nstdout: {out}\nstderr: {err}"
    assert "Traceback" not in err
    cli.err = err
    return out


@pytest.fixture(autouse=True)
def _plain_output(monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)


# -- init (the README's tour runs verbatim in tests/test_readme_tour.py) -----------------------


def test_init_names_memverbs_install_as_the_next_step(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MEMVERBS_HOME", str(tmp_path / "fresh"))
    out = cli(capsys, "init")
    assert "memverbs install claude" in out
    assert "claude mcp add" not in out


# -- help -------------------------------------------------------------------------------


def every_parser() -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    return list(completion.walk(build_parser()))


@pytest.mark.parametrize("path", [p for p, _ in every_parser()], ids=lambda p: " ".join(p) or "memverbs")
def test_every_help_has_real_metavars_and_a_description_per_argument(path, capsys):
    text = cli(capsys, *path, "--help")
    assert not re.search(r"\bP_[A-Z_]+", text), text
    assert "[EXPENSIVE" not in text and "MEMORY VERB" not in text
    parser = dict(every_parser())[path]
    assert parser.description, f"{path} has no description"
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                assert choice.help, f"{path} {choice.dest} has no help line"
            continue
        assert action.help and action.help.strip(), f"{path}: {action.option_strings or action.dest} has no help"


def test_top_level_help_is_grouped_and_states_the_exit_codes(capsys):
    text = cli(capsys, "--help")
    for group in ("memory:", "pages:", "harnesses:", "remote:", "maintenance:"):
        assert f"\n{group}\n" in text
    assert "other:" not in text  # every command has a group
    assert "2 usage error" in text


def test_usage_errors_exit_2_with_the_fix_and_mcp_names_are_accepted(home, capsys):
    cli(capsys, "recall", "--limit", "many", code=2)
    assert "fix: see `memverbs recall --help`" in cli.err
    cli(capsys, "recal", code=2)
    assert "no command 'recal'" in cli.err and "did you mean `memverbs recall`?" in cli.err
    cli(capsys, "recall", "--bogus", code=2)
    assert "unrecognized arguments: --bogus" in cli.err and "`memverbs recall --help`" in cli.err
    assert cli(capsys, "list_pages") == "(no pages)\n"


# -- --since, errors in CLI terms -----------------------------------------------------------


@pytest.mark.parametrize("command", [["recall"], ["delta"], ["context-pack", "people/me"], ["entities"], ["list-pages"], ["timeline", "people/me"]])
def test_since_takes_the_same_forms_everywhere(home, capsys, command):
    for when in ("2026-08-11", "2026-08", "2026-08-11T09:30:00Z", "24h", "7d", "30m ago", "2w", "today", "yesterday"):
        cli(capsys, *command, "--since", when)
    cli(capsys, *command, "--since", "whenever", code=2)
    assert 'argument --since: "whenever" is not a time: use a date' in cli.err


def test_wire_errors_are_told_in_cli_terms():
    from memverbs.cli.words import cli_terms

    assert cli_terms('Check the slug with list_pages; pass since: "2026-01-01"') == (
        'Check the slug with list-pages; pass --since "2026-01-01"'
    )
    assert cli_terms("or a `session_id` with budget_tokens") == "or a `--session-id` with --budget-tokens"
    remember = BY_NAME["remember"]
    assert cli_terms('ttl "P30D" looks odd; ttl takes "30d"', remember) == '--ttl "P30D" looks odd; --ttl takes "30d"'
    assert cli_terms("provenance is required", remember) == "--provenance is required"
    assert cli_terms('No fact with id "9"', BY_NAME["forget"]) == 'No fact with id "9"'  # ID is positional
    # A plain word is a flag only for the tool's own params: English stays English.
    assert cli_terms("changed since the date it was", remember) == "changed since the date it was"


def test_a_wire_error_reads_in_cli_terms_end_to_end(home, capsys):
    cli(capsys, "remember", "x", "--provenance", "p", "--ttl", "P30D", code=1)
    assert 'memverbs: --ttl "P30D" looks like an ISO-8601 duration' in cli.err and "fix: --ttl takes" in cli.err


# -- entity hygiene -------------------------------------------------------------------------

ALICE = "---\ntitle: Alice Example\ntype: person\n---\n# Alice\n\nWorks with [[companies/acme]].\n\n## Timeline\n- 2026-01-02: joined acme\n"


def test_a_new_page_offers_to_move_facts_filed_under_its_tail_and_move_facts_is_audited(home, capsys, tmp_path):
    cli(capsys, "remember", "Alice likes tea", "--provenance", "chat", "--entity", "Alice Example")
    cli(capsys, "remember", "Alice likes tea", "--provenance", "chat", "--entity", "Alice Example", "--visibility", "private")
    page = tmp_path / "alice.md"
    page.write_text(ALICE, encoding="utf-8")

    cli(capsys, "put-page", "people/alice-example", str(page))
    assert "2 facts are filed under alice-example" in cli.err
    assert "memverbs move-facts alice-example people/alice-example" in cli.err
    # Told, not done: nothing moved by itself.
    runtime = Runtime(home)  # the home's brain, whichever backend
    try:
        assert {r[0] for r in runtime.brain().query("SELECT entity_slug FROM facts")} == {"alice-example"}
    finally:
        runtime.close()

    assert "would move 2 facts" in cli(capsys, "move-facts", "alice-example", "people/alice-example", "--dry-run")
    out = cli(capsys, "move-facts", "alice-example", "people/alice-example", "--reason", "page created")
    assert "moved 2 facts from alice-example to people/alice-example" in out
    card = cli(capsys, "entity", "Alice Example")
    assert "2 active facts" in card and "(private)" in card

    history = json.loads(cli(capsys, "history", "1", "--json"))
    moved = [e for e in history["events"] if e["event"] == "moved"]
    assert moved and moved[0]["detail"] == "alice-example → people/alice-example (page created)"
    assert history["entity_slug"] == "people/alice-example"
    assert "moved" in cli(capsys, "audit", "#2")

    cli(capsys, "move-facts", "alice-example", "people/alice-example", code=1)
    assert "no facts are filed under alice-example" in cli.err


def test_move_facts_expires_a_restatement_as_a_duplicate(home, capsys):
    cli(capsys, "remember", "Bob runs", "--provenance", "t", "--entity", "people/bob")
    cli(capsys, "remember", "Bob runs", "--provenance", "t", "--entity", "bob")
    body = json.loads(cli(capsys, "move-facts", "bob", "people/bob", "--json"))
    assert body["moved"] == [{"fact_id": "2", "status": "duplicate"}]
    assert "duplicate of fact #1" in cli(capsys, "history", "2")


def test_put_page_json_keeps_stdout_the_wire_body_and_tells_on_stderr(home, capsys, tmp_path):
    cli(capsys, "remember", "Alice likes tea", "--provenance", "chat", "--entity", "Alice Example")
    page = tmp_path / "alice.md"
    page.write_text(ALICE, encoding="utf-8")
    body = json.loads(cli(capsys, "put-page", "people/alice-example", str(page), "--json"))
    assert body["status"] == "created" and "memverbs move-facts alice-example people/alice-example" in cli.err
    body = json.loads(cli(capsys, "put-page", "people/alice-example", str(page), "--json", "--move-facts"))
    assert body["status"] == "updated" and "moved 1 fact" in cli.err


def test_put_page_move_facts_flag_moves_in_one_go(home, capsys, tmp_path):
    cli(capsys, "remember", "Alice likes tea", "--provenance", "chat", "--entity", "Alice Example")
    page = tmp_path / "alice.md"
    page.write_text(ALICE, encoding="utf-8")
    out = cli(capsys, "put-page", "people/alice-example", str(page), "--move-facts")
    assert "moved 1 fact from alice-example to people/alice-example" in out
    assert "1 active fact," in cli(capsys, "entity", "people/alice-example")


# -- see everything -------------------------------------------------------------------------


def grow(capsys, tmp_path) -> None:
    page = tmp_path / "alice.md"
    page.write_text(ALICE, encoding="utf-8")
    cli(capsys, "put-page", "people/alice-example", str(page))
    for i in range(7):
        cli(capsys, "remember", f"note {i} about carol", "--provenance", "t", "--entity", "people/carol")
    cli(capsys, "remember", "a secret", "--provenance", "t", "--entity", "people/carol", "--visibility", "private")
    cli(capsys, "forget", "1")


def test_entities_lists_pages_and_fact_only_entities(home, capsys, tmp_path):
    grow(capsys, tmp_path)
    rows = json.loads(cli(capsys, "entities", "--json"))
    by_slug = {r["slug"]: r for r in rows}
    assert by_slug["people/alice-example"]["page"] is True and by_slug["people/alice-example"]["type"] == "person"
    carol = by_slug["people/carol"]
    assert (carol["page"], carol["facts"], carol["active"], carol["private"]) == (False, 8, 7, 1)
    assert carol["last_touched"].startswith("20")
    assert [r["slug"] for r in json.loads(cli(capsys, "entities", "--facts-only", "--json"))] == ["people/carol"]
    table = cli(capsys, "entities")
    assert table.splitlines()[0].split()[:3] == ["SLUG", "TYPE", "PAGE"]
    parsed = list(csv.DictReader(io.StringIO(cli(capsys, "entities", "--format", "csv"))))
    assert {r["slug"] for r in parsed} == {"people/alice-example", "people/carol"}
    lines = cli(capsys, "entities", "--format", "jsonl").splitlines()
    assert len(lines) == 2 and all(json.loads(line)["slug"] for line in lines)
    assert "1 of 2 (next: --offset 1)" in cli(capsys, "entities", "--limit", "1")


def test_stats_counts_what_the_brain_holds(home, capsys, tmp_path):
    grow(capsys, tmp_path)
    s = json.loads(cli(capsys, "stats", "--json"))
    assert (s["pages"], s["facts"], s["active_facts"], s["expired_facts"], s["private_facts"]) == (1, 8, 7, 1, 1)
    assert s["entities"] == 2 and s["links"] == 1 and s["brain_bytes"] > 0
    assert s["last_fact_write"].startswith("20")
    assert "facts     8: 7 active" in cli(capsys, "stats")


def test_recall_pages_with_offset_and_tells_the_true_total(home, capsys, tmp_path):
    grow(capsys, tmp_path)
    first = cli(capsys, "recall", "--entity", "people/carol", "--limit", "3")
    assert "3 of 7 facts (next: --offset 3)" in first
    # The wire's total keeps its contract: what came back, not what is stored.
    assert json.loads(cli(capsys, "recall", "--entity", "people/carol", "--limit", "3", "--json"))["total"] == 3
    page = json.loads(cli(capsys, "recall", "--entity", "people/carol", "--limit", "3", "--offset", "3", "--json"))
    assert (page["matched"], page["offset"], page["next_offset"], len(page["facts"])) == (7, 3, 6, 3)
    last = json.loads(cli(capsys, "recall", "--entity", "people/carol", "--limit", "3", "--offset", "6", "--json"))
    assert last["next_offset"] is None and len(last["facts"]) == 1
    seen = {f["fact_id"] for p in (page, last) for f in p["facts"]}
    assert len(seen) == 4
    assert cli(capsys, "recall", "people/carol", "--limit", "3") == first  # NAME: the --entity shortcut
    cli(capsys, "recall", "people/carol", "--entity", "people/alice-example", code=2)
    human = cli(capsys, "recall", "--entity", "people/carol", "--offset", "6", "--limit", "3")
    assert "7–7 of 7 facts" in human
    assert "(private)" in cli(capsys, "recall", "--entity", "people/carol")
    rows = list(csv.DictReader(io.StringIO(cli(capsys, "recall", "--entity", "people/carol", "--format", "csv"))))
    assert len(rows) == 7 and rows[0]["valid_from"].startswith("20")


def test_backlinks_timeline_and_list_pages(home, capsys, tmp_path):
    grow(capsys, tmp_path)
    links = json.loads(cli(capsys, "backlinks", "companies/acme", "--json"))
    assert [(link["slug"], link["link_type"]) for link in links] == [("people/alice-example", "references")]
    cli(capsys, "remember", "Alice joined the board", "--provenance", "t", "--entity", "people/alice-example")
    events = json.loads(cli(capsys, "timeline", "people/alice-example", "--json"))
    assert [e["what"] for e in events] == ["fact", "timeline"]
    assert events[1] == {"date": "2026-01-02", "what": "timeline", "text": "joined acme", "fact_id": None, "visibility": None}
    pages = json.loads(cli(capsys, "list-pages", "--format", "json"))
    assert pages[0]["visibility"] == "world" and pages[0]["type"] == "person"
    assert cli(capsys, "list-pages", "--visibility", "private") == "(no pages)\n"
    assert "nothing links to people/nobody" in cli(capsys, "backlinks", "people/nobody")


def test_list_pages_says_how_many_of_how_many_and_prints_slugs_whole(home, capsys, tmp_path):
    """count_pages on every backend: the listing's "N of M", with the same filters."""
    slug = "projects/a-project-with-a-long-name/notes-from-the-planning-meeting-{}"
    for i, (kind, vis) in enumerate([("note", "world"), ("note", "private"), ("memo", "world")]):
        page = tmp_path / f"p{i}.md"
        page.write_text(f"---\ntitle: Planning meeting {i}\ntype: {kind}\nvisibility: {vis}\n---\nnotes\n", encoding="utf-8")
        cli(capsys, "put-page", slug.format(i), str(page))
    out = cli(capsys, "list-pages", "--limit", "2")
    assert "2 of 3 pages" in out and slug.format(2) in out and "…" not in out.split("\n")[1]
    assert "3 pages" in cli(capsys, "list-pages")
    assert "1 of 2 pages" in cli(capsys, "list-pages", "--type", "note", "--limit", "1")
    assert "1 page" in cli(capsys, "list-pages", "--visibility", "private", "--prefix", "projects/")
    assert cli(capsys, "list-pages", "--limit", "2", "--format", "csv").count("\n") == 3  # scripts get rows only


def test_whoami_and_call(home, capsys):
    assert "lane      local" in cli(capsys, "whoami")
    body = json.loads(cli(capsys, "call", "remember", '{"fact": "raw", "provenance": "t"}'))
    assert body["status"] == "inserted"
    body = json.loads(cli(capsys, "call", "forget", '{"id": "999"}', code=1))
    assert body["error"] == "not_found"
    cli(capsys, "call", "recall", "not json", code=2)
    cli(capsys, "call", "nope", "{}", code=2)


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested deeper than"),
        ('{"a": ' + "[" * 40 + "]" * 40 + "}", "nested deeper than"),
        ('{"limit": NaN}', "NaN is not a JSON number"),
        ('{"limit": Infinity}', "Infinity is not a JSON number"),
        ('{"limit": 1e999}', "number out of range"),
        ('{"limit": ' + "9" * 5000 + "}", "an integer of 5000 digits"),
        ("[1, 2]", "must be a JSON object"),
        ('"text"', "must be a JSON object"),
    ],
)
def test_call_with_pathological_json_is_a_usage_error(home, capsys, arguments, said):
    assert cli(capsys, "call", "recall", arguments, code=2) == ""
    assert said in cli.err and "fix:" in cli.err


# -- colour -------------------------------------------------------------------------------


def test_colour_only_on_a_terminal_and_never_with_no_color(home, capsys, monkeypatch):
    cli(capsys, "remember", "a secret", "--provenance", "t", "--entity", "people/me", "--visibility", "private")
    assert "\033[" not in cli(capsys, "recall")  # captured stdout is not a TTY
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\033[" in cli(capsys, "recall")
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\033[" not in cli(capsys, "recall")


# -- completion ---------------------------------------------------------------------------


def test_completion_scripts_cover_every_command(capsys):
    names = list(completion.subcommands(build_parser()))
    for shell in ("bash", "zsh", "fish"):
        script = cli(capsys, "completion", shell)
        for name in names:
            assert name in script, (shell, name)


def test_bash_completion_completes_commands_options_and_choices(capsys, tmp_path):
    import shutil
    import subprocess

    if shutil.which("bash") is None:
        pytest.skip("no bash")
    script = tmp_path / "memverbs.bash"
    script.write_text(cli(capsys, "completion", "bash"), encoding="utf-8")

    def complete(*words: str) -> list[str]:
        line = " ".join(f"'{w}'" for w in ("memverbs", *words))
        prog = f"source {script}; COMP_WORDS=({line}); COMP_CWORD={len(words)}; _memverbs; printf '%s\\n' \"${{COMPREPLY[@]}}\""
        return subprocess.run(["bash", "-c", prog], capture_output=True, text=True, check=True).stdout.split()

    assert complete("rec") == ["recall"]
    assert "--offset" in complete("recall", "--")
    assert complete("recall", "--format", "") == ["table", "csv", "jsonl", "json"]
    assert complete("config", "")[:3] == ["get", "set", "unset"]
