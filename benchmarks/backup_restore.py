"""Backups that restore: `export --full` under writes, and `import` of crafted backups, with the figures recorded.

    python -m benchmarks.backup_restore                 # both backends; writes its RESULTS.md section
    python -m benchmarks.backup_restore --rounds 2 --examples 40 --no-write

Parts:

* **under writes**, on SQLite and on Postgres (a throwaway server; the team set-up: the brain
  owned by a plain CREATEROLE role, two teammates with roles of their own). A brain is grown
  through the tools (pages that link, facts, private pages and facts of each person, moves); then
  writers (the teammates on Postgres, other connections on SQLite) keep writing pages and facts
  while the owner runs `memverbs export --full --all-people` again and again, and each backup is
  restored with `memverbs import` into a new brain as the owner's login. Counted: backups, the
  writes that landed while they were read, restores whose every table matched, and the restores
  that failed. On SQLite the same is done once more with the backup read the old way, table by
  table outside a snapshot (`write_backup` called bare), to show what the snapshot prevents.
* **what the whole-brain policy costs a read**: on a team's Postgres brain (a plain owner, so the
  policies apply), the same reads (search, recall, get_page, entity) as the owner's CLI, in rounds
  that alternate with and without the `whole_brain` policies (dropped and made again by the
  superuser between rounds), p50 of each;
* **crafted backups**: tests/server/sync/backup/test_backup_fuzz.py's examples (one change to a real
  backup, most re-signed) restored into a populated and an empty brain; counted: backups tried,
  refused, restored exactly, and rows written by a refused one (must be 0).

Timings on a shared, loaded machine are noisy: the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.results_file import replace_section

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- backup-restore:begin -->", "<!-- backup-restore:end -->"


def _grow(client, n: int, who: str) -> None:
    for i in range(n):
        private = i % 5 == 0
        client.ok("put_page", slug=f"{who}/p{i}", content=(
            ("---\nvisibility: private\n---\n" if private else "") + f"# {who} {i}\n\nSee [[{who}/p{(i + 1) % n}]].\n\n"
            f"<!-- facts -->\n- [private] {who} row {i}\n- world row {i}\n<!-- /facts -->\n"))
        client.ok("remember", fact=f"{who} fact {i}", provenance="bench", entity=f"{who}/p{i}",
                  visibility="private" if private else "world")


class Writers:
    """Threads writing pages and facts through their own runtimes until stopped; `done` counts writes."""

    def __init__(self, runtimes: dict) -> None:
        self.runtimes, self.done, self.stop = runtimes, 0, threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(who, rt), daemon=True) for who, rt in runtimes.items()]
        self.errors: list[str] = []

    def _run(self, who: str, rt) -> None:
        from helpers import Client  # noqa: PLC0415

        client, n = Client(rt.local_dispatcher()), 0
        while not self.stop.is_set():
            n += 1
            try:
                client.ok("put_page", slug=f"busy/{who}-{n}", content=f"# Busy {n}\n\nSee [[busy/{who}-{n - 1}]].\n")
                client.ok("remember", fact=f"{who} busy {n}", provenance="bench", entity=f"busy/{who}-{n}",
                          visibility="private" if n % 3 == 0 else "world")
                rt.brain().move_facts(rt.source, f"busy/{who}-{n}", f"busy/{who}-moved", "bench", int(time.time() * 1000))
                self.done += 3
            except Exception as exc:  # noqa: BLE001 - a writer's failure is reported, never hidden
                self.errors.append(f"{who}: {exc}")

    def __enter__(self) -> Writers:
        for t in self.threads:
            t.start()
        while self.done < 6 and not self.errors:
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join()


def _cli(home: Path, url: str | None, *args: str) -> int:
    from memverbs.cli.main import main  # noqa: PLC0415

    os.environ["MEMVERBS_HOME"] = str(home)
    if url:
        os.environ["MEMVERBS_BRAIN__URL"] = url
    else:
        os.environ.pop("MEMVERBS_BRAIN__URL", None)
    with open(os.devnull, "w") as sink:  # the commands' own report: only their exit status counts here
        stdout, stderr = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = sink
        try:
            return main([*args, "--json"])
        finally:
            sys.stdout, sys.stderr = stdout, stderr


def under_writes(backend: str, rounds: int, pages: int, tmp: Path) -> list[str]:
    from helpers import Client, init_home  # noqa: PLC0415
    from postgres import start_distro, start_pgserver  # noqa: PLC0415
    from team import PlainOwner, home_for  # noqa: PLC0415

    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    class Env:  # what home_for needs of pytest's monkeypatch
        setenv = staticmethod(os.environ.__setitem__)

        @staticmethod
        def delenv(name: str, raising: bool = False) -> None:
            os.environ.pop(name, None)

    server = owner = None
    writers: dict[str, Runtime] = {}
    if backend == "sqlite":
        owner_home, owner_url = init_home(tmp / "owner").root, None
        rt = Runtime(Home(owner_home))
        _grow(Client(rt.local_dispatcher()), pages, "owner")
        writers = {f"w{i}": Runtime(Home(owner_home)) for i in range(2)}
        fresh = lambda k: (init_home(tmp / f"restored-{k}").root, None)  # noqa: E731
    else:
        server = start_pgserver() or start_distro()
        if server is None:
            return [f"| {backend} | no Postgres server on this machine | | | | | |"]
        owner = PlainOwner(server, "bench")
        owner_url = owner.database()
        rt = home_for(tmp / "owner", owner_url, Env)
        owner_home = tmp / "owner"
        _grow(Client(rt.local_dispatcher()), pages, "owner")
        db = owner_url.split("@/", 1)[1].split("?", 1)[0]
        for who in ("alice", "bob"):
            role = owner.role_name(who)
            assert _cli(owner_home, owner_url, "people", "add", who, "--role", role, "--create-role") == 0
            writers[who] = home_for(tmp / f"home-{who}", owner.url(db, role), Env)
            _grow(Client(writers[who].local_dispatcher()), pages // 2, who)

        def fresh(k: int) -> tuple[Path, str]:
            url = owner.database()
            home_for(tmp / f"restored-{k}", url, Env).close()
            return tmp / f"restored-{k}", url
    lines = []
    try:
        modes = ["snapshot", "table by table"] if backend == "sqlite" else ["snapshot"]
        for mode in modes:
            ok = failed = rows = 0
            landed: list[int] = []
            export_s: list[float] = []
            restore_s: list[float] = []
            with Writers(writers) as w:
                for k in range(rounds):
                    out = tmp / f"out-{mode[:5]}-{k}"
                    before = w.done
                    started = time.perf_counter()
                    if mode == "snapshot":
                        assert _cli(owner_home, owner_url, "export", str(out), "--full", "--all-people") == 0
                    else:
                        from memverbs.server.sync.backup import write_backup  # noqa: PLC0415

                        out.mkdir(parents=True)
                        written = write_backup(rt.brain(), out, everyone=True)  # each table read as it comes: no snapshot
                        assert not written.errors, written.errors
                    export_s.append(time.perf_counter() - started)
                    landed.append(w.done - before)
                    home, url = fresh(f"{mode[:5]}-{k}")
                    started = time.perf_counter()
                    code = _cli(home, url, "import", str(out))
                    restore_s.append(time.perf_counter() - started)
                    ok += code == 0
                    failed += code != 0
                    rows += sum(1 for p in (out / ".memverbs-backup").glob("*.jsonl") for line in p.open() if line.strip())
            assert not w.errors, w.errors[:3]
            lines.append(f"| {backend} | {mode} | {rounds} | {rows // max(rounds, 1)} | {sum(landed) / max(rounds, 1):.0f} "
                         f"| {ok} | {failed} | {sum(export_s) / rounds:.2f} s / {sum(restore_s) / rounds:.2f} s |")
            print(lines[-1], flush=True)
    finally:
        rt.close()
        for w_rt in writers.values():
            w_rt.close()
        if owner is not None:
            owner.close()
        if server is not None:
            server.stop()
    return lines


def policy_cost(rounds: int, pages: int, tmp: Path) -> list[str]:
    import random  # noqa: PLC0415
    import statistics  # noqa: PLC0415

    import psycopg  # noqa: PLC0415
    from helpers import Client  # noqa: PLC0415
    from postgres import start_distro, start_pgserver  # noqa: PLC0415
    from team import PlainOwner, home_for  # noqa: PLC0415

    from memverbs.server.brain.postgres_schema import WHOLE_BRAIN_POLICY  # noqa: PLC0415

    class Env:
        setenv = staticmethod(os.environ.__setitem__)

        @staticmethod
        def delenv(name: str, raising: bool = False) -> None:
            os.environ.pop(name, None)

    server = start_pgserver() or start_distro()
    if server is None:
        return ["| no Postgres server on this machine | | |"]
    owner = PlainOwner(server, "cost")
    try:
        url = owner.database()
        rt = home_for(tmp / "cost", url, Env)
        client = Client(rt.local_dispatcher())
        for i in range(pages):
            client.ok("put_page", slug=f"t/p{i}", content=("---\nvisibility: private\n---\n" if i % 10 == 0 else "")
                      + f"# Topic {i}\n\nalpha{i % 40} beta [[t/p{(i + 1) % pages}]]\n")
            if i % 2 == 0:
                client.ok("remember", fact=f"fact {i} alpha{i % 40}", provenance="bench", entity=f"t/p{i}")
        su = psycopg.connect(owner.superuser_url(url), autocommit=True)
        tables = [r[0] for r in su.execute("SELECT tablename FROM pg_policies WHERE policyname = 'whole_brain'")]
        create = WHOLE_BRAIN_POLICY.replace("%I", '"{}"')
        calls = (("search", lambda i: {"query": f"alpha{i % 40} beta"}), ("recall", lambda i: {"query": f"alpha{i % 40}"}),
                 ("get_page", lambda i: {"slug": f"t/p{i}"}), ("entity", lambda i: {"name": f"Topic {i}"}))
        took: dict[tuple[bool, str], list[float]] = {(w, name): [] for w in (True, False) for name, _ in calls}
        statements: dict[tuple[bool, str], list[list[float]]] = {(w, sql): [] for w in (True, False) for sql in STATEMENTS}
        db = url.split("@/", 1)[1].split("?", 1)[0]
        own = psycopg.connect(owner.url(db), autocommit=True)
        policies = True
        for r in range(2 * rounds):
            want = r % 2 == 0
            if want != policies:
                for t in tables:
                    su.execute(create.format(t) if want else f'DROP POLICY whole_brain ON "{t}"')
                policies = want
            for k in range(70):  # the first 10 after a switch re-plan what the DDL invalidated: not counted
                i = random.randrange(pages)
                for name, params in calls:
                    started = time.perf_counter()
                    client.ok(name, **params(i))
                    if k >= 10:
                        took[(want, name)].append((time.perf_counter() - started) * 1000)
            for sql in STATEMENTS:  # one statement's own cost, warm: the best of 15 EXPLAIN ANALYZE runs
                best = [1e9, 1e9]
                for _ in range(15):
                    text = "\n".join(r[0] for r in own.execute("EXPLAIN (ANALYZE, SUMMARY ON) " + sql).fetchall())
                    best = [min(best[0], _ms(text, "Planning")), min(best[1], _ms(text, "Execution"))]
                statements[(want, sql)].append(best)
        if not policies:
            for t in tables:
                su.execute(create.format(t))
        own.close()
        rt.close()
    finally:
        owner.close()
        server.stop()
    line = [f"| `{name}` (p50 over the CLI) | {statistics.median(took[(True, name)]):.2f} ms | "
            f"{statistics.median(took[(False, name)]):.2f} ms |" for name, _ in calls]
    for sql, label in STATEMENTS.items():
        with_, without = (min(statements[(w, sql)], key=sum) for w in (True, False))
        line.append(f"| {label} (plan + execute, best of 15) | {with_[0]:.2f} + {with_[1]:.2f} ms | "
                    f"{without[0]:.2f} + {without[1]:.2f} ms |")
    print(*line, sep="\n", flush=True)
    return line


STATEMENTS = {
    "SELECT to_slug FROM links WHERE source_id = 'default' AND from_slug = 't/p5'": "a page's links",
    "SELECT count(*) FROM links l JOIN pages p ON p.source_id = l.source_id AND p.slug = l.to_slug "
    "WHERE l.source_id = 'default'": "every link with its page",
    "SELECT id, fact FROM facts WHERE source_id = 'default' AND entity_slug = 't/p4'": "an entity's facts",
    "SELECT slug, title, body FROM pages WHERE source_id = 'default' AND slug = 't/p9'": "one page",
}


def _ms(explained: str, what: str) -> float:
    import re  # noqa: PLC0415

    found = re.search(rf"{what} Time: ([\d.]+)", explained)
    return float(found.group(1)) if found else float("nan")


def crafted(examples: int, tmp: Path) -> list[str]:
    from backups import Backup, seed_history  # noqa: PLC0415
    from helpers import Client, init_home  # noqa: PLC0415
    from test_backup_fuzz import fuzz_import  # noqa: PLC0415

    from memverbs.server.brain.factory import open_brain  # noqa: PLC0415
    from memverbs.server.brain.location import BrainLocation  # noqa: PLC0415
    from memverbs.server.runtime import Runtime  # noqa: PLC0415

    os.environ.pop("MEMVERBS_BRAIN__URL", None)  # SQLite files
    home = init_home(tmp / "fuzz-source")
    rt = Runtime(home)
    try:
        seed_history(Client(rt.local_dispatcher()), rt)
        rt.brain().add_person("bob", None, 1)
        assert _cli(home.root, None, "export", str(tmp / "fuzz-out"), "--full", "--all-people") == 0
        empty_home = init_home(tmp / "fuzz-empty")
        empty = open_brain(BrainLocation("sqlite", path=empty_home.root / "brain.db"))
        started = time.perf_counter()
        try:
            tally = fuzz_import(Backup.load(tmp / "fuzz-out"), rt.brain(), empty, examples)
        finally:
            empty.close()
    finally:
        rt.close()
    seconds = time.perf_counter() - started
    o = tally.outcomes
    line = (f"| sqlite | {tally.examples} | {o['populated: refused']} | {o['empty: refused']} | {o['empty: restored']} "
            f"| {tally.written_on_refusal} | {seconds:.0f} s |")
    print(line, flush=True)
    return [line]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.backup_restore")
    parser.add_argument("--rounds", type=int, default=5, help="backups taken under writes, per backend")
    parser.add_argument("--pages", type=int, default=300, help="pages the owner's brain is grown to first")
    parser.add_argument("--examples", type=int, default=300, help="crafted backups tried")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--policy-rounds", type=int, default=4, help="rounds with and without the whole-brain policy, each")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    sys.path[:0] = [str(ROOT / "tests" / "support"), str(ROOT / "tests" / "server" / "sync" / "backup")]
    load = os.getloadavg()[0]
    tmp = Path(tempfile.mkdtemp(prefix="memverbs-backup-bench-"))
    try:
        writes = [line for b in args.backends.split(",") for line in under_writes(b, args.rounds, args.pages, tmp / b)]
        cost = policy_cost(args.policy_rounds, args.pages, tmp / "cost") if "postgres" in args.backends else []
        fuzz = crafted(args.examples, tmp / "fuzz")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    section = "\n".join([
        BEGIN,
        "## Backups that restore: snapshots under writes, crafted backups refused whole (`python -m benchmarks.backup_restore`)",
        "",
        f"Load average {load:.1f} on a shared 2-core machine when it started: the timings are noisy, the counts are not. "
        f"A brain grown through the tools ({args.pages} pages and facts of the owner; on Postgres half as many of each "
        "teammate's), then writers keep writing pages, facts and moves (2 threads: other connections on SQLite, the two "
        "teammates' own roles on Postgres) while the owner runs `export --full --all-people`; each backup is restored "
        "with `import` into a new brain as the owner's login (on Postgres a plain CREATEROLE role, no superuser). "
        "*writes during* counts the writes that landed while a backup was read; *matched* the restores whose every "
        "table matched the backup (the restore verifies in its own transaction, then after the notes pass). The "
        "*table by table* row is the backup read the old way, each table as it comes, outside a snapshot (its rounds "
        "come after the snapshot's, on the brain the writers have grown meanwhile: hence its larger backups). The "
        "export's time includes the notes it renders; both times are the loaded machine's, not a quiet one's.",
        "",
        "| backend | read | backups | rows each | writes during | matched | failed | export / restore |",
        "|---|---|---|---|---|---|---|---|",
        *writes,
        "",
        f"What the whole-brain policy costs a read: the owner's CLI on a team's Postgres brain (its policies apply), "
        f"{args.pages} pages and half as many facts, {args.policy_rounds} rounds each of 60 × 4 calls with the "
        "`whole_brain` policies and without them, alternating (the policies dropped and made again between rounds; "
        "the first 10 calls after a switch not counted), p50; and single statements as the owner's login, warm, "
        "the best of 15 `EXPLAIN ANALYZE` runs per round (the policy adds an initplan to each secured table's "
        "rules: its cost is the planning and the one evaluation; a SQL-language gate, inlined into every plan, "
        "measured +0.03–0.14 ms of planning a statement this way and p50s 10–20 % higher, so the gate is PL/pgSQL):",
        "",
        "| call | with | without |",
        "|---|---|---|",
        *cost,
        "",
        "Crafted backups (tests/server/sync/backup/test_backup_fuzz.py's property, run long): one change to a real backup "
        "(a value, an owner, a row dropped, repeated or moved, a file of junk, a manifest field), most re-signed so "
        "only the checks below the manifest can catch it; each restored into a populated brain (must be refused) and "
        "into an empty one (refused, or restored exactly as the files say). *written on refusal* counts refused "
        "restores that changed any table: it must be 0. Here on SQLite; `pytest` runs the same property on both "
        "backends (Postgres brains owned by a plain role) with 15 examples.",
        "",
        "| backend | backups tried | populated: refused | empty: refused | empty: restored exactly | written on refusal | wall |",
        "|---|---|---|---|---|---|---|",
        *fuzz,
        END,
    ])
    if not args.no_write:
        replace_section(BEGIN, END, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
