"""The conformance runner certifies honest servers and fails lying ones, case by case."""

import json
import sys
from pathlib import Path

import pytest
from runcli import run_cli

BROKEN = str(Path(__file__).with_name("broken_server.py"))

# What each lie must break — exactly these cases, nothing else. A remember that fails its schema
# saves no id, so the two forget cases that use it fail with it.
BAD_REMEMBER = {
    "remember writes a fact",
    "remember with ttl sets valid_until",
    "remember a private fact",
    "forget expires a fact",
    "forget is idempotent",
}
EXPECTED_FAILURES = {
    "drop_status": BAD_REMEMBER,
    "absorbed": BAD_REMEMBER,
    "numeric_fact_id": {
        "recall by entity round-trips",
        "recall reports budget arithmetic",
        "recall with query returns results",
    },
    "private_in_card": {"entity card keeps private facts out (remote posture)"},
    "provenance_success": {"remember rejects missing provenance"},
}


def conformance(env, *args):
    proc = run_cli("protocol", "conformance", *args, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.mark.parametrize("brain_backend", ["sqlite", "postgres"], indirect=True)
def test_self_certifies_over_stdio(env):
    proc = conformance(env)
    assert proc.returncode == 0, proc.stdout
    lines = proc.stdout.splitlines()
    assert lines[0] == "MEMORY_VERBS v1 conformance — target: self (stdio, a throwaway brain)"
    assert lines[-2] == "27 passed, 0 failed, 1 skipped" and lines[-1] == "CONFORMANT"
    assert "  − synthesize answers or is cleanly unavailable — costs money — pass --synthesize" in lines


def test_synthesize_flag_passes_on_unavailable(env):
    report = json.loads(conformance(env, "--synthesize", "--json").stdout)
    assert (report["passed"], report["failed"], report["skipped"], report["ok"]) == (28, 0, 0, True)


def test_verbs_surface_skips_honestly(memverbs_cmd, env):
    target = " ".join([*memverbs_cmd, "serve", "--surface", "verbs"])
    report = json.loads(conformance(env, "--target", target, "--json").stdout)
    skipped = {r["name"]: r["detail"] for r in report["results"] if r["status"] == "skip"}
    assert report["failed"] == 0 and len(skipped) == 3
    assert skipped["entity hit returns a card"] == "target has no put_page to seed the entity page (verbs-only surface)"


@pytest.mark.parametrize("mode", sorted(EXPECTED_FAILURES))
def test_lying_servers_fail_exactly_their_cases(env, mode):
    target = f'"{sys.executable}" "{BROKEN}" {mode}'
    proc = conformance(env, "--target", target, "--json")
    report = json.loads(proc.stdout)
    failed = {r["name"] for r in report["results"] if r["status"] == "fail"}
    assert failed == EXPECTED_FAILURES[mode]
    assert proc.returncode == 1 and report["ok"] is False


def test_five_verb_server_still_certifies(env):
    target = f'"{sys.executable}" "{BROKEN}" five_verbs'
    proc = conformance(env, "--target", target)
    assert proc.returncode == 0, proc.stdout
    assert "  − tools/list advertises context_pack — optional additive verb (v0.45.7) not advertised by this endpoint" in proc.stdout
    assert proc.stdout.splitlines()[-1] == "CONFORMANT"


def test_unreachable_target_is_a_clear_error(env):
    proc = conformance(env, "--target", "no-such-command-xyz --flag")
    assert proc.returncode == 1 and "could not talk MCP" in proc.stderr and "fix:" in proc.stderr
