"""The CLI speaks a person's words: every command's help and every error a person can trigger is
scanned for the wire's jargon (field paths, snake_case field names, bracketed codes) and for bad
plurals; and the fixes for what a new user ran into (wire errors in command terms, `-5d` values, a
lapsed ttl, the install summary, `memverbs hook` at a terminal) each have a test that fails without them."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from memverbs.cli.main import main
from memverbs.cli.parser import build_parser
from memverbs.cli.words import for_people
from memverbs.server.plural import plural
from memverbs.server.protocol.registry import BY_NAME, OPERATIONS

ROOT = Path(__file__).resolve().parents[2]

# -- the scanner -----------------------------------------------------------------------------

FIELD_PATH = re.compile(r"\b\w+\[\]\.\w+")
BRACKETED_CODE = re.compile(r"\[[a-z]+(?:_[a-z]+)+\]")
SNAKE = re.compile(r"(?<![\w./$-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
WIRE_WORDS = re.compile(r"per-arm|wire body|envelope|\bparams?\b|pending_consolidation", re.IGNORECASE)
BAD_PLURAL = re.compile(r"(?<![\d.,])\b1 (?!of\b)(?:[a-z]+ )?([a-z]+(?<!ss)s)\b|\b(?!http\()[a-z]+\(s\)")
SINGULAR_S = {"is", "was", "has", "this", "its", "yes", "ms", "plus", "always", "perhaps"}


def _allowed_snake() -> set[str]:
    """snake_case a person does type: setting names (`config set cli_remote true`), the keyring's
    key names, link types a person chooses (works_at), and MCP tool names, which `call` takes."""
    from memverbs.server.settings import known_keys

    words = {part for key in known_keys() for part in key.split(".")}
    words |= {"embeddings_api_key", "llm_api_key", "works_at", "invested_in"}
    return words


def jargon(text: str, *, tools_ok: bool = False) -> list[str]:
    allowed = _allowed_snake() | ({op.name for op in OPERATIONS} if tools_ok else set())
    found = FIELD_PATH.findall(text) + BRACKETED_CODE.findall(text) + WIRE_WORDS.findall(text)
    found += [w for w in SNAKE.findall(text) if w not in allowed]
    found += [m.group(0) for m in BAD_PLURAL.finditer(text) if (m.group(1) or "") not in SINGULAR_S]
    return found


def test_the_scanner_catches_what_a_new_user_saw():
    for seen in ("Ids come from remember/recall (facts[].fact_id).", "would show it [needs_intent]",
                 "limit: per-arm cap", "also report pending_consolidation_count", "1 errors", "1 active facts",
                 "3 change(s) undone", "print the exact wire body (JSON)"):
        assert jargon(seen), seen
    for fine in ("1 fact, 2 facts", "1 of 3 pages", "set config cli_remote", "1 active fact, 0 backlinks"):
        assert not jargon(fine), fine


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) not in seen:  # aliases (audit) share their command's parser
                    seen.add(id(sub))
                    yield from _parsers(sub, (*path, name))


def test_every_commands_help_is_in_a_persons_words():
    bad = {}
    for path, p in _parsers(build_parser()):
        text = p.format_help()
        found = jargon(text, tools_ok=path[:1] == ("call",))
        if found:
            bad[" ".join(path) or "memverbs"] = found
    assert not bad, bad


# What a person can get wrong, each a command and the exit status it must give.
MISTAKES = [
    (["forget", "999"], 1),
    (["forget", "nope"], 1),
    (["remember", "", "--provenance", "me"], 1),
    (["remember", "x", "--provenance", " "], 1),
    (["remember", "x", "--provenance", "me", "--ttl", "P30D"], 1),
    (["remember", "x", "--provenance", "me", "--ttl", "soon"], 1),
    (["remember", "x", "--provenance", "me", "--ttl", "0d"], 2),
    (["remember", "x"], 2),
    (["recall", "--since", "whenever"], 2),
    (["recall", "--limit", "lots"], 2),
    (["entity", "Nobody At All"], 1),
    (["entity", " "], 1),
    (["get-page", "people/nobody"], 1),
    (["get-page", "people/nobody", "--raw"], 1),
    (["delete-page", "people/nobody"], 1),
    (["add-alias", "people/nobody", "--alias", "nob"], 1),
    (["add-link", "people/nobody", "--to", "companies/none", "--link-type", "works_at"], 1),
    (["add-timeline-entry", "people/nobody", "--date", "last tuesday", "--summary", "x"], 1),
    (["search", " "], 1),
    (["synthesize", "what did we decide?"], 1),
    (["synthesize", " "], 1),
    (["history", "999"], 1),
    (["history", "x"], 2),
    (["restore-fact", "999", "--reason", "oops"], 1),
    (["fact-visibility", "1", "world"], 1),
    (["fact-visibility", "999", "private"], 1),
    (["move-facts", "nobody", "people/nobody"], 1),
    (["call", "nope"], 2),
    (["call", "recall", "[1]"], 2),
    (["config", "get", "nope.key"], 1),
    (["config", "set", "mcp_surface", "everything"], 1),
    (["install", "notepad"], 2),
    (["uninstall", "notepad"], 2),
    (["remmber", "x"], 2),
    (["recall", "--offset", "-1"], 2),
]


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    try:
        status = main(argv)
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def test_every_error_a_person_can_trigger_is_in_their_words(home, capsys):
    assert _run(capsys, ["remember", "Dana prefers tea", "--provenance", "chat", "--entity", "dana",
                         "--visibility", "private"])[0] == 0
    bad = {}
    for argv, code in MISTAKES:
        status, _out, err = _run(capsys, argv)
        assert status == code, (argv, status, err)
        assert err.strip() and "Traceback" not in err, (argv, err)
        found = jargon(err, tools_ok=argv[0] == "call")
        if found:
            bad[" ".join(argv)] = (found, err)
    assert not bad, bad


# -- wire errors, told in command terms (one place) ------------------------------------------


def test_wire_errors_lose_field_paths_and_speak_of_the_positional_argument():
    forget, remember = BY_NAME["forget"], BY_NAME["remember"]
    hint = ("Ids come from remember/recall (facts[].fact_id). recall the entity first to find the right fact; "
            "page slugs are not fact ids.")
    assert "facts[]" not in for_people(hint, forget) and "`memverbs recall`" in for_people(hint, forget)
    assert for_people('e.g. fact: "Alice prefers async standups".', remember) == 'e.g. "Alice prefers async standups".'
    assert for_people("fact must be a non-empty string.", remember) == "FACT must not be empty."
    assert for_people('pass ttl: "30d"', remember) == 'pass --ttl "30d"'  # a flag stays a flag
    assert for_people("see results[].evidence") == "see evidence"


def test_forget_and_remember_errors_name_what_a_person_types(home, capsys):
    status, _, err = _run(capsys, ["forget", "999"])
    assert status == 1 and "facts[]" not in err and "memverbs recall" in err
    status, _, err = _run(capsys, ["remember", "", "--provenance", "me"])
    assert status == 1 and "--fact" not in err and "FACT must not be empty" in err


def test_forget_takes_the_id_as_recall_shows_it(home, capsys):
    assert _run(capsys, ["remember", "x", "--provenance", "me"])[0] == 0
    status, out, err = _run(capsys, ["forget", "#1"])
    assert status == 0 and "fact #1 expired" in out, err


# -- the naming trap -------------------------------------------------------------------------


def test_hints_never_split_an_entity_and_a_near_name_is_joined_in_one_command(home, capsys, tmp_path):
    assert _run(capsys, ["remember", "Dana prefers tea", "--provenance", "chat", "--entity", "dana"])[0] == 0
    status, out, _ = _run(capsys, ["entity", "Dana"])
    assert status == 0 and "no page yet" in out
    # The page the hint creates takes the facts with it.
    assert "memverbs put-page people/dana FILE --move-facts" in out
    page = tmp_path / "dana.md"
    page.write_text("---\ntitle: Dana\ntype: person\n---\nDana is on the team.\n", encoding="utf-8")
    assert _run(capsys, ["put-page", "people/dana", str(page)])[0] == 0  # without --move-facts: the trap
    status, out, _ = _run(capsys, ["entity", "Dana"])
    assert "0 active facts" in out
    assert "1 fact is filed under dana" in out and "memverbs move-facts dana people/dana" in out
    join = re.search(r"memverbs (move-facts \S+ \S+)", out).group(1).split()
    assert _run(capsys, join)[0] == 0
    status, out, _ = _run(capsys, ["entity", "Dana"])
    assert "1 active fact," in out and "Dana prefers tea" in out and "filed under" not in out


def test_a_refused_fact_edit_shows_no_code_but_json_keeps_it(home, capsys):
    assert _run(capsys, ["remember", "x", "--provenance", "me", "--visibility", "private"])[0] == 0
    status, _, err = _run(capsys, ["fact-visibility", "1", "world"])
    assert status == 1 and "[needs_intent]" not in err and "--widen" in err
    status, out, _ = _run(capsys, ["fact-visibility", "1", "world", "--json"])
    assert status == 1 and '"refused": "needs_intent"' in out


def test_plurals():
    assert [plural(n, "fact") for n in (0, 1, 2)] == ["0 facts", "1 fact", "2 facts"]
    assert plural(1, "timeline entry") == "1 timeline entry" and plural(3, "timeline entry") == "3 timeline entries"
    assert plural(2, "entity") == "2 entities" and plural(2, "day") == "2 days" and plural(2, "alias") == "2 aliases"


def test_a_card_and_a_page_write_count_in_good_english(home, capsys, tmp_path):
    page = tmp_path / "p.md"
    page.write_text("---\ntitle: Acme\n---\nSee [[people/dana]].\n\n## Timeline\n- 2026-01-02: founded\n", encoding="utf-8")
    status, out, _ = _run(capsys, ["put-page", "companies/acme", str(page)])
    assert status == 0 and "1 link, 1 timeline entry" in out
    assert _run(capsys, ["remember", "Acme ships weekly", "--provenance", "me", "--entity", "companies/acme"])[0] == 0
    status, out, _ = _run(capsys, ["entity", "companies/acme"])
    assert "1 active fact, 0 backlinks" in out


# -- flag values and ttl ---------------------------------------------------------------------


def test_dash_values_reach_their_flag(home, capsys):
    assert _run(capsys, ["remember", "Dana prefers tea", "--provenance", "me"])[0] == 0
    status, out, err = _run(capsys, ["recall", "--since", "-5d"])
    assert status == 0 and "Dana prefers tea" in out, err
    status, _, err = _run(capsys, ["recall", "--since", "-1000d", "--limit", "5"])
    assert status == 0, err


@pytest.mark.parametrize("ttl", ["0d", "0s", "-5d", "2020-01-01"])
def test_a_ttl_that_has_already_lapsed_is_refused_and_nothing_is_stored(home, capsys, ttl):
    status, out, err = _run(capsys, ["remember", "x", "--provenance", "me", "--ttl", ttl])
    assert status == 2 and out == "" and "--ttl" in err and "fix:" in err
    status, out, _ = _run(capsys, ["recall", "--include-expired", "--json"])
    assert '"facts": []' in out


def test_a_ttl_ahead_is_kept(home, capsys):
    status, out, _ = _run(capsys, ["remember", "x", "--provenance", "me", "--ttl", "30d"])
    assert status == 0 and "expires" in out


# -- listings --------------------------------------------------------------------------------


def test_search_takes_format_and_prints_readable_evidence(home, capsys, tmp_path):
    page = tmp_path / "p.md"
    page.write_text("---\ntitle: Payments provider\n---\nWe chose the payments provider in May.\n", encoding="utf-8")
    assert _run(capsys, ["put-page", "decisions/payments-provider-choice", str(page)])[0] == 0
    status, out, err = _run(capsys, ["search", "payments", "--format", "csv"])
    assert status == 0, err
    assert out.splitlines()[0] == "kind,slug,fact_id,title,evidence,snippet"
    assert "decisions/payments-provider-choice" in out
    status, out, _ = _run(capsys, ["search", "payments"])
    assert "_" not in out.split("decisions/payments-provider-choice", 1)[1]  # no exact_title_match / keyword_exact


# -- `memverbs hook` -------------------------------------------------------------------------


def test_hook_help_prints_help(capsys):
    status, out, _ = _run(capsys, ["hook", "--help"])
    assert status == 0 and "usage: memverbs hook" in out and "session-start" in out and "claude" in out


def _hook(home, stdin: bytes, *argv: str, tty: bool) -> tuple[int, bytes, bytes]:
    """`memverbs hook` as a harness starts it (pipes), or with stderr on a terminal (a pty)."""
    import pty

    env = {**os.environ, "MEMVERBS_HOME": str(home.root)}
    cmd = [sys.executable, "-m", "memverbs", "hook", *argv]
    if not tty:
        proc = subprocess.run(cmd, input=stdin, capture_output=True, env=env, timeout=60, cwd=ROOT)
        return proc.returncode, proc.stdout, proc.stderr
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(cmd, input=stdin, stdout=subprocess.PIPE, stderr=follower, env=env, timeout=60, cwd=ROOT)
        os.close(follower)
        err = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            err += chunk
    finally:
        os.close(leader)
    return proc.returncode, proc.stdout, err


def test_a_hook_at_a_terminal_says_why_it_printed_nothing_and_a_harness_gets_silence(home):
    code, out, err = _hook(home, b"not json", "session-start", "--harness", "claude", tty=True)
    assert code == 0 and out == b""
    assert b"printed nothing" in err and b"not JSON" in err and b"fix:" in err
    code, out, err = _hook(home, b"not json", "session-start", "--harness", "claude", tty=False)
    assert (code, out, err) == (0, b"", b"")
    code, out, err = _hook(home, b'{"session_id": "s1"}', "session-start", "--harness", "nobody", tty=True)
    assert code == 0 and out == b"" and b"not one memverbs knows" in err


# -- install ---------------------------------------------------------------------------------


def test_the_install_summary_names_files_and_a_reinstall_says_nothing_changed(home, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    (tmp_path / "user").mkdir()
    status, out, err = _run(capsys, ["install", "codex"])
    assert status == 0, err
    assert "~/.codex/config.toml" in out and "created" in out
    assert not re.search(r"\b(json_item|toml_block|json_entry|marked_block|owned_file|cli):", out)
    status, out, err = _run(capsys, ["install", "codex"])
    assert status == 0, err
    assert "already installed into codex" in out and "nothing changed" in out
    assert "~/.codex/config.toml" not in out
    status, out, _ = _run(capsys, ["uninstall", "codex"])
    assert status == 0 and "change(s)" not in out and re.search(r"\d+ changes? undone", out)


# -- the embeddings extra --------------------------------------------------------------------


def _without_embeddings(tmp_path: Path) -> str:
    """Python code putting on sys.path everything memverbs needs but numpy and usearch: the default
    install's view, made of links to this venv's site-packages minus the extra (run with -S: no
    `site`, so no .pth file brings them back)."""
    site = Path(sysconfig.get_paths()["purelib"])
    shadow = tmp_path / "site-packages"
    shadow.mkdir()
    for entry in site.iterdir():
        if not entry.name.lower().startswith(("numpy", "usearch", "numkong", "__editable__")):
            (shadow / entry.name).symlink_to(entry)
    return f"import sys; sys.path[:0] = [{str(ROOT)!r}, {str(shadow)!r}]; "


def test_without_the_extra_doctor_and_the_settings_say_what_to_install(home, tmp_path):
    path = _without_embeddings(tmp_path)
    probe = subprocess.run([sys.executable, "-S", "-c", path + "import memverbs.cli.main; import numpy"],
                           capture_output=True, text=True)
    assert "No module named 'numpy'" in probe.stderr, probe.stderr  # memverbs imports; numpy does not
    python = [sys.executable, "-S", "-c", path + "from memverbs.cli.main import main; sys.exit(main())"]
    env = {**os.environ, "MEMVERBS_HOME": str(home.root), "MEMVERBS_EMBEDDINGS_API_KEY": "sk-test"}
    run = lambda *argv: subprocess.run([*python, *argv], capture_output=True, text=True, env=env, timeout=120)  # noqa: E731
    doctor = run("doctor")
    assert "memverbs[embeddings]" in doctor.stdout  # not configured: what enabling it takes
    setting = run("config", "set", "embeddings.model", "text-embedding-3-small")
    assert setting.returncode == 0 and "pip install 'memverbs[embeddings]'" in setting.stderr
    doctor = run("doctor")
    assert doctor.returncode == 1 and "embeddings extra is not installed" in doctor.stdout
    assert "pip install 'memverbs[embeddings]'" in doctor.stdout
    # The verbs degrade as for a missing provider: keyword search, no traceback.
    assert run("remember", "Dana prefers tea", "--provenance", "me", "--entity", "dana").returncode == 0
    found = run("search", "Dana")
    assert found.returncode == 0 and "Traceback" not in found.stderr
    reindex = run("reindex")
    assert reindex.returncode == 1 and "pip install 'memverbs[embeddings]'" in reindex.stderr


def test_the_default_install_leaves_the_embeddings_extra_out():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {re.split(r"[<>=\[ ]", d)[0].lower() for d in project["dependencies"]}
    assert not names & {"numpy", "usearch"}
    extras = project["optional-dependencies"]
    assert {re.split(r"[<>=\[ ]", d)[0].lower() for d in extras["embeddings"]} == {"numpy", "usearch"}
    assert "memverbs[embeddings]" in extras["test"]
