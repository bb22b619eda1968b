"""OpenClaw in tests: the binary check and a config that points it at a fake model; and the SQLite
stores OpenClaw and opencode keep sessions in, holding a recorded session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from harnesses import require_cli, run

_VERSIONS: dict[tuple[str, str], str] = {}


def require_openclaw(env: dict) -> str:
    """The openclaw CLI, if it is a working OpenClaw: skip (fail under MEMVERBS_REQUIRE_HARNESSES=1) otherwise."""
    cli = require_cli("openclaw")
    key = (cli, env.get("PATH", ""))
    if key not in _VERSIONS:  # once per binary and worker: each call is a Node start (~2 s of CPU)
        _VERSIONS[key] = run([cli, "--version"], env, check=False, timeout=60).stdout
    version = _VERSIONS[key]
    if "OpenClaw" not in version:  # npm installs an empty placeholder on Node < 24
        message = f"openclaw on PATH is not a working OpenClaw (needs Node >= 24): {version.strip()[:80]!r}"
        if os.environ.get("MEMVERBS_REQUIRE_HARNESSES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return cli


def fake_model_config(api_url: str) -> dict:
    """openclaw.json keys that make a fake OpenAI-compatible model at `api_url` the default."""
    provider = {"baseUrl": f"{api_url}/v1", "apiKey": "local-x", "api": "openai-completions",
                "models": [{"id": "fake-model", "name": "Fake", "contextWindow": 128000, "maxTokens": 4096}]}
    return {"models": {"providers": {"fake": provider}}, "agents": {"defaults": {"model": {"primary": "fake/fake-model"}}}}


def installed_openclaw(world, fake_api, tmp_path: Path):
    """`memverbs install openclaw` into the world's HOME, with the brain outside HOME/.memverbs and
    OpenClaw's model pointed at the fake: the CLI, and the world as OpenClaw runs (no MEMVERBS_HOME:
    the plugin finds the brain only through the config the install wrote)."""
    import json
    import shutil

    from harness_e2e import World

    cli = require_openclaw(world.env)
    brain = tmp_path / "brain"
    shutil.move(world.env["MEMVERBS_HOME"], brain)
    world.env["MEMVERBS_HOME"] = str(brain)
    config = Path(world.env["HOME"]) / ".openclaw" / "openclaw.json"
    config.parent.mkdir(exist_ok=True)
    config.write_text(json.dumps(fake_model_config(fake_api.url), indent=2))
    world.memverbs("install", "openclaw")
    # Its runs still show in the world's failure report.
    bare = World({k: v for k, v in world.env.items() if k != "MEMVERBS_HOME"}, world.home, world.project, runs=world.runs)
    return cli, bare


def without_openclaw(env: dict, scratch: Path) -> dict:
    """`env` with no openclaw on PATH and every other command still there: for checks of memverbs's
    own config edits, where the CLI's install-ledger call (a Node start, seconds each) adds nothing
    the real install cycle does not check. A PATH directory holding openclaw is replaced by a copy
    of its links, made under `scratch`, without it."""
    path = []
    for n, folder in enumerate(env.get("PATH", "").split(os.pathsep)):
        if folder and (Path(folder) / "openclaw").exists():
            copy = scratch / f"path-without-openclaw-{n}"
            copy.mkdir(parents=True, exist_ok=True)
            for entry in Path(folder).iterdir():
                if entry.name != "openclaw" and not (copy / entry.name).exists():
                    (copy / entry.name).symlink_to(entry.resolve())
            folder = str(copy)
        path.append(folder)
    return {**env, "PATH": os.pathsep.join(path)}


def transcript_store(state_dir: Path, jsonl: Path, session_id: str = "rec-1", created_ms: int = 0) -> Path:
    """An OpenClaw 2026.9 agent store holding a recorded session (its sessionFile JSONL): its `transcript_events` rows, as
    OpenClaw writes them (one event's JSON a row, in `seq` order, `created_at` in epoch ms; a large event
    zstd-compressed instead), and one event of another session."""
    import sqlite3

    db = state_dir / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT, "
                 "created_at INTEGER NOT NULL, event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT, "
                 "PRIMARY KEY (session_id, seq)) STRICT")
    lines = jsonl.read_text().splitlines()
    conn.executemany("INSERT INTO transcript_events VALUES (?, ?, ?, ?, NULL, NULL, NULL)",
                     [(session_id, n, line, created_ms) for n, line in enumerate(lines)])
    conn.execute("INSERT INTO transcript_events VALUES (?, ?, NULL, ?, x'28b52ffd', 9, '{}')", (session_id, len(lines), created_ms))
    conn.execute("INSERT INTO transcript_events VALUES ('other', 0, ?, ?, NULL, NULL, NULL)", (lines[4], created_ms))
    conn.commit()
    conn.close()
    return db


def opencode_store(data_dir: Path, export: Path, newest_ms: int | None = None) -> Path:
    """opencode 1.18's store, `<data dir>/opencode/opencode.db`, holding the `session`, `message` and
    `part` rows of a recorded session (exported as JSON: benchmarks/data/capture/opencode-store.json),
    in opencode 1.18.33's tables less the columns capture never reads (`time_updated` is `time_created`
    where the export has none).

    `newest_ms` moves the recording in time, its newest row to that instant and every other time (the
    rows' and those inside their JSON) by the same amount: a test that judges the session by the wall
    clock (`--since 1d`) builds it relative to now, so it holds on whatever day it runs."""
    import json
    import sqlite3

    rows = json.loads(export.read_text())
    if newest_ms is not None:
        rows = _shifted(rows, newest_ms)
    db = data_dir / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, directory TEXT NOT NULL, "
                 "time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL)")
    conn.execute("CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, "
                 "time_updated INTEGER NOT NULL, data TEXT NOT NULL)")
    conn.execute("CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, "
                 "time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL)")
    for table in ("session", "message", "part"):
        for row in rows[table]:
            row = {"time_updated": row["time_created"], **row}
            conn.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))
    conn.commit()
    conn.close()
    return db


def _shifted(rows: dict, newest_ms: int) -> dict:
    """The export's rows with every recorded time moved so the newest is `newest_ms`: the `time_*`
    columns and the `time` objects inside the rows' JSON `data` (opencode's own copy of the times)."""
    import json

    tables = ("session", "message", "part")
    offset = newest_ms - max(row["time_created"] for table in tables for row in rows[table])

    def moved(value):
        if isinstance(value, dict):
            return {k: (v + offset if isinstance(v, int) and k in ("created", "completed", "updated") else moved(v))
                    for k, v in value.items()}
        return [moved(v) for v in value] if isinstance(value, list) else value

    out = dict(rows)
    for table in tables:
        out[table] = [{k: (v + offset if k.startswith("time_") and isinstance(v, int)
                           else json.dumps(moved(json.loads(v)), separators=(",", ":")) if k == "data" else v)
                       for k, v in row.items()} for row in rows[table]]
    return out
