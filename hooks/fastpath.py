"""What a hook answers before the runner is imported: the unchanged heartbeat.

A heartbeat runs on every prompt and almost always finds nothing new. Its answer —
print nothing — needs the payload's session id, where the brain file is, and one
indexed read (server/brain/plain.py); the runner's imports (dataclasses, pathlib, enum,
hashlib, the adapters) cost several times that. So the launcher asks this module
first, and it imports only `json`, `os`, `select`, `time`, `sqlite3` and, when the
home's config file changed since the last hook, `tomllib` (see `config_tables`).

It answers only when it is sure: a `heartbeat` of a known harness, a JSON payload
with a session id, no remote brain for the harness, a SQLite brain, and a cursor
that says nothing changed. Anything else — a change, a remote brain, a Postgres or
unreadable config, bad input, any error — returns the stdin it read to the runner,
which does the full work and classifies failures. It never prints. Its waits are
bounded without a timer (stdin by `select` within the deadline's first 40 %, SQLite
by a busy timeout of at most 200 ms and a fifth of the deadline); the runner it hands over to gets
what is left of the same budget.

It also owns the runner's cheap primitives, so they have one home: when the process
began (`process_started`: a hook's deadline counts from there), reading stdin within a
deadline, and the hooks-log line.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time

from memverbs.hooks.basics import OFF, prompt_of, reflex_on

DEFAULT_DEADLINE_MS = 2_500  # well inside the 5–10 s timeouts the installers set
MAX_DEADLINE_MS = 60_000
MAX_STDIN = 1 << 20
# Copies of names whose homes import more than this path may (pathlib, enums); tests/test_layers.py
# holds each equal to its home.
HARNESSES = {"claude", "codex", "grok", "opencode", "openclaw", "plain"}  # hooks/events.py Harness
LOCAL_LANE = "local"  # server/context.py LOCAL_LANE: the local hooks' cursor lane
REMOTE_RECEIPT = "remote-receipt.json"  # server/home.py REMOTE_RECEIPT: a harness wired to a remote brain
DEFAULT_SOURCE = "default"  # server/home.py DEFAULT_SOURCE
DEFAULT_BRAIN_NAME = "brain.db"  # server/home.py DEFAULT_BRAIN_NAME
CONFIG_COPY = "config.json"  # under $MEMVERBS_HOME/hooks/: config.toml parsed, for the next hook


def hooks_off() -> bool:
    """`MEMVERBS_HOOKS=off` turns every hook into a no-op."""
    return os.environ.get("MEMVERBS_HOOKS", "").strip().lower() in OFF


# The runner's arguments (flag, metavar, help): parse_args reads them, and so does the CLI's
# parser, which only lists and documents `memverbs hook` (docs/cli.md).
HOOK_OPTIONS = (
    ("--harness", "HARNESS", "the harness running the hook (its payload and output format)"),
    ("--session-id", "ID", "the session id, when the harness does not send one"),
    ("--deadline-ms", "MS", "give up and print nothing after this long"),
)


def parse_args(argv: list[str]) -> dict:
    """The moment and HOOK_OPTIONS, leniently: an unknown flag is ignored, never an error (a hook
    must not fail on a newer installer's command line)."""
    known = {flag.lstrip("-").replace("-", "_") for flag, _, _ in HOOK_OPTIONS}
    args = {"moment": None, "harness": "plain", "session_id": None, "deadline_ms": DEFAULT_DEADLINE_MS}
    rest = list(argv)
    if rest and not rest[0].startswith("--"):
        args["moment"] = rest.pop(0)
    while rest:
        flag = rest.pop(0)
        value = rest.pop(0) if rest and "=" not in flag else None
        if "=" in flag:
            flag, value = flag.split("=", 1)
        key = flag.lstrip("-").replace("-", "_")
        if key in known and value is not None:
            args[key] = value
    return args


def deadline_s(args: dict) -> float:
    try:
        return min(MAX_DEADLINE_MS, max(50, int(args["deadline_ms"]))) / 1000
    except (TypeError, ValueError, OverflowError):
        return DEFAULT_DEADLINE_MS / 1000


def process_started() -> float:
    """When this process began, on the time.monotonic() clock: a harness waits from the moment it
    started the hook, so the interpreter's own start (a few hundred ms on a loaded machine, before
    any line of memverbs runs) is on the deadline's clock too. Linux says when (/proc/self/stat's
    start time, 10 ms ticks after boot); elsewhere it is now."""
    now = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()  # after the command name, which may hold anything
        ticks = int(fields[19])  # field 22, starttime
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - min(max(0.0, age), MAX_DEADLINE_MS / 1000)


def read_raw_stdin(deadline: float) -> bytes:
    """At most MAX_STDIN bytes, waiting no later than `deadline` (a monotonic time); what is already
    there is read even past it (a slow interpreter start can spend the window before the first look)."""
    if sys.stdin is None or sys.stdin.closed or sys.stdin.isatty():
        return b""
    chunks: list[bytes] = []
    size = 0
    fd = sys.stdin.fileno()
    while size < MAX_STDIN:
        wait = max(0.0, deadline - time.monotonic())
        if not select.select([fd], [], [], wait)[0]:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks).strip()


def home_root() -> str:
    """Home.from_env's directory, as a string (server/home.py)."""
    raw = os.environ.get("MEMVERBS_HOME", "").strip()
    return os.path.expanduser(raw) if raw else os.path.join(os.path.expanduser("~"), ".memverbs")


def log_line(root: str, harness: str, moment: str, code: str, started: float, chars: int) -> None:
    """One line per run, codes and sizes only: `memverbs doctor` reads it, nothing else does."""
    line = json.dumps(
        {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "harness": harness[:20],
            "moment": moment[:20],
            "code": code,
            "ms": round((time.monotonic() - started) * 1000),
            "chars": chars,
        }
    )
    if not os.path.isdir(root):
        return  # never create a home as a side effect of a hook
    try:
        logs = os.path.join(root, "logs")
        os.makedirs(logs, exist_ok=True)
        fd = os.open(os.path.join(logs, "hooks.jsonl"), os.O_WRONLY  # Home.hook_log, spelled without pathlib
 | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)
    except OSError:
        pass


def answer_unchanged(argv: list[str], started: float) -> tuple[bool, bytes | None, bool]:
    """(True, None, False) when this heartbeat was answered here — nothing changed, and the prompt named
    nothing new (silence) or only what the reflex could point to on this connection (its pointers) —
    and logged; else (False, the stdin read so far or None when none was read, whether the brain said
    something changed) for the runner to finish: it need not ask the brain the same question again."""
    args = parse_args(argv)
    if args["moment"] != "heartbeat" or args["harness"] not in HARNESSES:
        return False, None, False
    raw = read_raw_stdin(started + deadline_s(args) * 0.4)
    try:
        answer = _answer(args, raw, deadline_s(args))
    except Exception:  # noqa: BLE001 - any doubt is the runner's to settle, with its classified codes
        answer = None
    if not isinstance(answer, str):
        return False, raw, answer is True
    code = "unchanged"
    if answer:
        code = "reflex" if emit(answer) else "stdout_closed"
    log_line(home_root(), args["harness"], "heartbeat", code, started, len(answer))
    return True, None, False


def emit(output: str) -> bool:
    """UTF-8 bytes straight to fd 1 (no text layer to fail, fine when sys.stdout is None); False when
    stdout is closed or broken, which must not break the session."""
    data = memoryview((output + "\n").encode("utf-8"))
    try:
        while data:
            data = data[os.write(1, data) :]
    except OSError:
        return False
    return True


def _answer(args: dict, raw: bytes, budget_s: float) -> bool | str | None:
    """True: something changed (the runner delivers it); the output when nothing did ("" for silence);
    None when this path cannot tell."""
    payload = json.loads(raw) if raw else {}
    if not isinstance(payload, dict):
        return None
    session = args["session_id"] or next(
        (v for k in ("session_id", "sessionId", "sessionID") if isinstance(v := payload.get(k), str) and v), None
    )
    if not session:
        return None
    root = home_root()
    if os.path.exists(os.path.join(root, "integrations", args["harness"], REMOTE_RECEIPT)):
        return None  # hooks/remote.py decides whether that receipt names a usable brain
    brain, source, reflex_setting = _sqlite_brain(root)
    if brain is None:
        return None
    from memverbs.server.brain.plain import BUSY_MS, PlainBrain, connect  # noqa: PLC0415

    busy_ms = max(10, min(BUSY_MS, int(budget_s * 1000 * 0.2)))  # a lock leaves the runner most of the budget
    db = connect(brain, busy_ms)
    if db is None:
        return None
    plain = PlainBrain(db)
    try:
        changed = plain.changed(source, LOCAL_LANE, session[:200])
        if changed is not False:
            return changed
        prompt = payload.get("prompt")
        if not prompt or not reflex_on(reflex_setting):
            return ""
        from memverbs.hooks.reflex import answer  # noqa: PLC0415 - a prompt may name something: the name index

        return answer(plain, root, args["harness"], session[:200], source, prompt_of(payload))
    finally:
        plain.close()


def config_tables(root: str) -> dict:
    """config.toml's tables, parsed once per edit of the file.

    `tomllib` and what it imports (typing, re, string) cost ~25 ms cold, most of an unchanged
    heartbeat, and `memverbs init` writes a config file into every home. So the parsed tables
    are kept as JSON (already imported here) in `hooks/config.json`, stamped with the file's
    inode, size and mtime: any edit — `memverbs config set` replaces the file, an editor
    rewrites it — changes the stamp and the next hook parses again. The stamp is taken before
    the file is read, so a copy can only be older than its stamp says, never newer.
    """
    config = os.path.join(root, "config.toml")
    try:
        st = os.stat(config)
    except FileNotFoundError:
        return {}
    stamp = [st.st_ino, st.st_size, st.st_mtime_ns]
    cache = os.path.join(root, "hooks", CONFIG_COPY)
    try:
        with open(cache, encoding="utf-8") as fh:
            copy = json.load(fh)
        if copy["stamp"] == stamp and isinstance(copy["data"], dict):
            return copy["data"]
    except (OSError, ValueError, KeyError, TypeError):
        pass  # no copy yet, or a damaged one: parse
    import tomllib  # noqa: PLC0415 - only when the file changed since the last hook

    from memverbs.server.private_files import write_private  # noqa: PLC0415 - only with a copy to write

    with open(config, "rb") as fh:
        data = tomllib.load(fh)
    try:
        # TOML dates become strings: value() reads str() of every value anyway.
        write_private(cache, json.dumps({"stamp": stamp, "data": data}, default=str))
    except OSError:  # a read-only home still answers, parsing each time
        pass
    return data


def _sqlite_brain(root: str) -> tuple[str | None, str, str]:
    """quick_settings + locate for the keys a heartbeat needs (server/quickconfig.py,
    server/brain/factory.py): the brain file when the brain is a plain `brain.path` file, the
    source, and the `hooks.reflex` setting."""
    data = config_tables(root)

    def value(dotted: str, default: str) -> str:
        env = os.environ.get("MEMVERBS_" + dotted.upper().replace(".", "__"))
        if env is not None:
            return env
        node: object = data
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return str(node)

    int(value("brain.busy_timeout_ms", "0")), int(value("brain.pool_size", "0"))  # a bad number is the runner's config_error
    source = value("source", DEFAULT_SOURCE).strip() or DEFAULT_SOURCE
    reflex = value("hooks.reflex", "true")
    if value("brain.url", "").strip():
        return None, source, reflex  # a URL (Postgres, sqlite://) goes the full way
    path = os.path.expanduser(value("brain.path", DEFAULT_BRAIN_NAME))
    return (path if os.path.isabs(path) else os.path.join(root, path)), source, reflex
