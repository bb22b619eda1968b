"""Backups as a test (and an attacker) sees them: a full export's files read, changed and written back.

`Backup.load(folder)` reads `.memverbs-backup/` (the manifest and every table's rows, as JSON);
a test edits `manifest` and `rows` and `save()`s them, by default re-signed: each table's row
count and SHA-256 recomputed as memverbs computes them, so only the deeper checks of a restore
can catch what was changed. `brain_state` is a brain's every table at one moment (row count and
migrate's hash, the whole brain as its owner reads it): equal before and after a refused import
means nothing was written.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from memverbs.server.brain.stores import copied as declared
from memverbs.server.brain.transfer import _Side, digest_rows, table_hash

DIR = ".memverbs-backup"


def _decoded(v: object) -> object:
    if isinstance(v, dict) and set(v) == {"b64"} and isinstance(v["b64"], str):
        try:
            return base64.b64decode(v["b64"], validate=True)
        except ValueError:
            return v
    return v


@dataclass
class Backup:
    folder: Path
    manifest: dict
    rows: dict[str, list]  # table → its rows as JSON values (lists), in file order
    raw: dict[str, bytes]  # table → its file's bytes as read (a test may write bytes of its own)

    @classmethod
    def load(cls, folder: Path) -> Backup:
        manifest = json.loads((folder / DIR / "manifest.json").read_text())
        rows, raw = {}, {}
        for t in manifest["tables"]:
            data = (folder / DIR / f"{t['name']}.jsonl").read_bytes()
            raw[t["name"]] = data
            rows[t["name"]] = [json.loads(line) for line in data.splitlines() if line.strip()]
        return cls(folder, manifest, rows, raw)

    def entry(self, table: str) -> dict:
        return next(t for t in self.manifest["tables"] if t["name"] == table)

    def save(self, *, sign: bool = True, raw: dict[str, bytes] | None = None) -> None:
        """Write the manifest and the tables back (`raw`: a table's file as these bytes instead)."""
        raw = raw or {}
        for t in self.manifest["tables"] if isinstance(self.manifest.get("tables"), list) else []:
            name = t.get("name") if isinstance(t, dict) else None
            if not isinstance(name, str) or name not in self.rows:
                continue
            data = raw.get(name)
            if data is None:
                data = b"".join(json.dumps(r, ensure_ascii=False).encode("utf-8") + b"\n" for r in self.rows[name])
            (self.folder / DIR / f"{name}.jsonl").write_bytes(data)
            if sign:
                digest = hashlib.sha256()
                try:
                    digest_rows(digest, [[_decoded(v) for v in r] if isinstance(r, list) else [r] for r in self.rows[name]])
                except TypeError:
                    pass  # a value memverbs cannot hash is the row's problem, caught by the import
                t["rows"], t["sha256"] = len(self.rows[name]), digest.hexdigest()
        (self.folder / DIR / "manifest.json").write_text(json.dumps(self.manifest))

    def copy_to(self, folder: Path) -> Backup:
        shutil.copytree(self.folder, folder)
        return Backup.load(folder)


def brain_state(brain) -> dict[str, tuple[int, str]]:
    """Every declared table of `brain`: (rows, migrate's hash), the whole brain at one moment."""
    side = _Side(brain)
    with brain.snapshot(), brain.whole_brain():
        return {t.name: table_hash(side, t) for t in declared()}


def empty_brain(brain) -> None:
    """Delete every row of every table (the brain stays at its schema), as its owner."""
    with brain.write() as db, brain.whole_brain():
        for t in reversed(declared()):
            db.execute(f"DELETE FROM {t.name}")


def seed_history(local, runtime) -> None:
    """A brain with a history: versions, aliases, links, timeline, supersession by hand, moves, a
    forgotten and restored fact, a visibility change, a private page, an expiring fact."""
    from memverbs.server.timeparse import now_ms

    local.ok("put_page", slug="people/alice", content="---\ntitle: Alice\naliases: [Ali]\n---\nFirst.\n")
    local.ok("put_page", slug="people/alice", content="---\ntitle: Alice\naliases: [Ali]\n---\nSecond. See [[bob]].\n")
    local.ok("put_page", slug="bob", content="# Bob\n\n## Timeline\n- 2025-01-02: joined\n")
    local.ok("put_page", slug="secret/plan", content="---\nvisibility: private\n---\n# Plan\n")
    local.ok("add_alias", slug="bob", alias="Robert")
    local.ok("add_timeline_entry", slug="people/alice", date="2026-03-04", summary="Promoted")
    local.ok("remember", fact="Alice likes tea", provenance="chat", entity="people/alice", kind="preference")
    local.ok("remember", fact="Bob is on call", provenance="chat", entity="bob", ttl="30d")
    local.ok("remember", fact="Alice's salary", provenance="chat", entity="people/alice", visibility="private")
    local.ok("remember", fact="Old fact", provenance="chat", entity="ali-old")
    brain, source = runtime.brain(), runtime.source
    local.ok("forget", id="1", reason="changed her mind")
    brain.restore_fact(source, 1, reason="she did not", actor="test", now=now_ms())
    brain.move_facts(source, "ali-old", "people/alice", "same person", now_ms())
    brain.set_fact_visibility(source, 2, "private", widen=False, reason="on-call is private", actor="test", now=now_ms())
    local.ok("remember", fact="Alice likes green tea", provenance="chat", entity="people/alice", kind="preference")
    with brain.write() as db:  # a supersession as remember's embedding rule makes one
        db.execute("UPDATE facts SET superseded_by = 5, expired_at = 1, expiry_reason = 'superseded by fact #5' WHERE id = 1")
