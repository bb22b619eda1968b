"""Several real processes on one brain: writes are visible across processes, none is lost, none is "locked".

Writers are started together: each loads memverbs, says "ready" on stdout and blocks
on stdin until every writer is ready, then all are released at once.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from contextlib import AsyncExitStack

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

WRITES_EACH = 150

# A writer process: the trusted in-process dispatcher, N distinct remembers, one JSON report line.
WRITER = r"""
import json, sys
tag, n = sys.argv[1], int(sys.argv[2])
from memverbs.server.runtime import Runtime
rt = Runtime()
d = rt.local_dispatcher()
print("ready", flush=True)
sys.stdin.readline()
bodies = []
for i in range(n):
    out = d.call("remember", {"fact": f"writer {tag} fact {i}", "provenance": f"writer {tag}"})
    bodies.append({"error": out.is_error, "body": out.body})
rt.close()
print(json.dumps(bodies))
"""


def run(cmd: list[str], env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*cmd, *args], env=env, capture_output=True, text=True, timeout=60)


def start_writers(env: dict, tags: list[str], cwd) -> list[subprocess.Popen]:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, tag, str(WRITES_EACH)],
            env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for tag in tags
    ]
    for proc in procs:
        line = proc.stdout.readline()
        assert line.strip() == "ready", proc.stderr.read()
    return procs


def release(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()


def finish(procs: list[subprocess.Popen]) -> list[tuple[list[dict], str]]:
    """Each writer's (bodies, stderr) once it has exited cleanly."""
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append((json.loads(out.strip().splitlines()[-1]), err))
    return results


def stored_facts(home) -> list[str]:
    with sqlite3.connect(home.root / "brain.db") as db:
        return [r[0] for r in db.execute("SELECT fact FROM facts WHERE expired_at IS NULL")]


def expected_facts(tags: list[str]) -> set[str]:
    return {f"writer {tag} fact {i}" for tag in tags for i in range(WRITES_EACH)}


def assert_all_inserted(bodies: list[dict]) -> None:
    errors = [b["body"] for b in bodies if b["error"]]
    assert errors == [], errors[:3]
    assert {b["body"]["status"] for b in bodies} == {"inserted"}


# -- (a) one process writes, another reads --------------------------------------------------


def test_cli_remember_is_visible_to_recall_in_another_process(memverbs_cmd, env):
    wrote = run(memverbs_cmd, env, "remember", "Alice prefers async standups", "--provenance", "p1",
                "--entity", "people/alice", "--json")
    assert wrote.returncode == 0, wrote.stderr
    fact_id = json.loads(wrote.stdout)["id"]

    read = run(memverbs_cmd, env, "recall", "--entity", "people/alice", "--json")

    assert read.returncode == 0, read.stderr
    facts = json.loads(read.stdout)["facts"]
    assert [(f["fact_id"], f["fact"]) for f in facts] == [(fact_id, "Alice prefers async standups")]


def test_a_brain_already_open_sees_another_process_write(memverbs_cmd, env, local):
    assert local.ok("recall", entity="people/alice")["facts"] == []  # this process's connection is open

    wrote = run(memverbs_cmd, env, "remember", "Alice prefers tea", "--provenance", "p", "--entity", "people/alice")
    assert wrote.returncode == 0, wrote.stderr

    assert [f["fact"] for f in local.ok("recall", entity="people/alice")["facts"]] == ["Alice prefers tea"]


def test_an_in_process_write_is_visible_to_a_cli_process(memverbs_cmd, env, local):
    local.ok("remember", fact="Bob prefers coffee", provenance="p", entity="people/bob")

    read = run(memverbs_cmd, env, "recall", "--entity", "people/bob", "--json")

    assert read.returncode == 0, read.stderr
    assert [f["fact"] for f in json.loads(read.stdout)["facts"]] == ["Bob prefers coffee"]


# -- (b) eight writers at once ----------------------------------------------------------------


@pytest.mark.slow
def test_eight_writer_processes_lose_nothing_and_never_lock(env, home, tmp_path):
    tags = [f"p{n}" for n in range(8)]
    procs = start_writers(env, tags, tmp_path)
    release(procs)
    results = finish(procs)

    for bodies, stderr in results:
        assert len(bodies) == WRITES_EACH
        assert_all_inserted(bodies)
        assert "locked" not in stderr.lower()
    ids = [b["body"]["id"] for bodies, _ in results for b in bodies]
    assert len(set(ids)) == 8 * WRITES_EACH
    facts = stored_facts(home)
    assert len(facts) == 8 * WRITES_EACH
    assert set(facts) == expected_facts(tags)


# -- (c) four MCP stdio servers and four local writers at once ----------------------------------


async def mcp_writers(server_cmd: list[str], env: dict, tags: list[str], errlogs: list, on_ready) -> dict[str, list]:
    """Open one `memverbs serve` per tag, call on_ready() once all are initialised, then write from all."""
    results: dict[str, list] = {}
    async with AsyncExitStack() as stack:
        sessions = []
        for errlog in errlogs:
            params = StdioServerParameters(command=server_cmd[0], args=server_cmd[1:], env=env)
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            sessions.append(session)
        on_ready()

        async def write_all(tag: str, session: ClientSession) -> None:
            bodies = []
            for i in range(WRITES_EACH):
                result = await session.call_tool(
                    "remember", {"fact": f"writer {tag} fact {i}", "provenance": f"mcp writer {tag}"}
                )
                text = "\n".join(b.text for b in result.content if getattr(b, "type", None) == "text")
                bodies.append({"error": bool(result.is_error), "body": json.loads(text)})
            results[tag] = bodies

        with anyio.fail_after(120):  # a hang guard, not a timing assertion
            async with anyio.create_task_group() as tg:
                for tag, session in zip(tags, sessions, strict=True):
                    tg.start_soon(write_all, tag, session)
    return results


@pytest.mark.slow
def test_mcp_servers_and_local_writers_together_lose_nothing_and_never_lock(memverbs_cmd, env, home, tmp_path):
    mcp_tags = [f"mcp{n}" for n in range(4)]
    local_tags = [f"cli{n}" for n in range(4)]
    errlog_paths = [tmp_path / f"serve-{tag}.stderr" for tag in mcp_tags]
    local_procs = start_writers(env, local_tags, tmp_path)

    errlogs = [open(path, "w") for path in errlog_paths]  # noqa: SIM115 - closed below
    try:
        mcp_results = anyio.run(
            mcp_writers, [*memverbs_cmd, "serve", "--surface", "verbs"], env, mcp_tags, errlogs,
            lambda: release(local_procs),
        )
    finally:
        for fh in errlogs:
            fh.close()
    local_results = finish(local_procs)

    for tag in mcp_tags:
        assert len(mcp_results[tag]) == WRITES_EACH
        assert_all_inserted(mcp_results[tag])
    for bodies, stderr in local_results:
        assert len(bodies) == WRITES_EACH
        assert_all_inserted(bodies)
        assert "locked" not in stderr.lower()
    for path in errlog_paths:
        assert "locked" not in path.read_text().lower()
    facts = stored_facts(home)
    assert len(facts) == 8 * WRITES_EACH
    assert set(facts) == expected_facts(mcp_tags + local_tags)
    # every MCP call was logged as one whole line, and no CLI/local call was
    events = [json.loads(line) for line in home.usage_log.read_text().splitlines()]
    assert len(events) == 4 * WRITES_EACH
    assert {(e["verb"], e["ok"], e["remote"]) for e in events} == {("remember", True, True)}
