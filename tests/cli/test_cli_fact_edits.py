"""`memverbs restore-fact` and `memverbs fact-visibility`, in process: what a person types and reads,
the refusals with their code and fix, and the history that keeps every change."""

from __future__ import annotations

import json

import pytest

from memverbs.cli.main import main


def cli(capsys, *argv: str, code: int = 0) -> str:
    try:
        status = main(list(argv))
    except SystemExit as exc:  # argparse: usage errors
        status = exc.code
    out, err = capsys.readouterr()
    assert status == code, f"exit {status}\nstdout: {out}\nstderr: {err}"
    assert "Traceback" not in err
    cli.err = err
    return out


@pytest.fixture(autouse=True)
def _plain_output(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")


def recalled(capsys) -> str:
    return cli(capsys, "recall", "--entity", "people/alice")


def test_restore_brings_a_forgotten_fact_back_and_history_keeps_both(home, capsys):
    cli(capsys, "remember", "Alice likes tea", "--provenance", "chat", "--entity", "people/alice")
    cli(capsys, "forget", "1", "--reason", "misheard")
    assert "Alice likes tea" not in recalled(capsys)
    out = cli(capsys, "restore-fact", "#1", "--reason", "she confirmed it")
    assert "restored fact #1: Alice likes tea" in out
    assert "Alice likes tea" in recalled(capsys)
    events = json.loads(cli(capsys, "history", "1", "--json"))["events"]
    assert [e["event"] for e in events] == ["remembered", "expired", "restored"]
    assert events[1]["detail"] == "misheard"
    assert events[2]["detail"].startswith("she confirmed it — memverbs restore-fact (user ")


def test_restore_refusals_say_the_problem_and_fix_and_json_names_the_code(home, capsys):
    cli(capsys, "remember", "Alice likes tea", "--provenance", "chat", "--entity", "people/alice")
    cli(capsys, "restore-fact", "1", "--reason", "x", code=1)
    assert "is active: there is nothing to restore" in cli.err and "fix:" in cli.err
    assert "[not_forgotten]" not in cli.err  # the code is for scripts (--json), not for a person
    body = json.loads(cli(capsys, "restore-fact", "42", "--reason", "x", "--json", code=1))
    assert body["refused"] == "not_found" and body["fix"]
    for bad in ("abc", "0", "-1", "99999999999999999999999", "4\u0662"):  # never a traceback, never a lookup
        cli(capsys, "restore-fact", bad, "--reason", "x", code=2)
        assert "is not a fact id" in cli.err
    cli(capsys, "history", "99999999999999999999999", code=2)
    cli(capsys, "restore-fact", "1", code=2)  # the reason is required
    assert "--reason" in cli.err


def test_fact_visibility_narrows_freely_and_widens_only_with_intent(home, capsys):
    cli(capsys, "remember", "Alice earns a lot", "--provenance", "chat", "--entity", "people/alice")
    assert "private now" in cli(capsys, "fact-visibility", "1", "private", "--reason", "salary")
    assert "(private)" in recalled(capsys)
    assert "already private" in cli(capsys, "fact-visibility", "1", "private")
    cli(capsys, "fact-visibility", "1", "world", code=1)
    assert "every MCP caller" in cli.err and "fact-visibility 1 world --widen" in cli.err
    assert "(private)" in recalled(capsys)  # the refusal wrote nothing
    cli(capsys, "fact-visibility", "1", "public", code=2)  # a typo never reaches the brain
    body = json.loads(cli(capsys, "fact-visibility", "1", "world", "--widen", "--json"))
    assert body == {"fact_id": "1", "visibility": "world", "changed": True}
    assert "(private)" not in recalled(capsys)
    events = json.loads(cli(capsys, "history", "1", "--json"))["events"]
    assert [e["detail"].split(":")[0] for e in events if e["event"] == "visibility"] == ["world → private", "private → world"]
