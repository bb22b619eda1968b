"""Test helpers: a dispatcher client and a page writer (import with `from helpers import ...`)."""

from __future__ import annotations

import json
from pathlib import Path

from memverbs.server.dispatch import Dispatcher
from memverbs.server.home import Home
from memverbs.server.runtime import Runtime

# For hook tests that check what a hook does, not how fast it does it: a deadline no loaded machine
# reaches (the default 2.5 s is, at load average > 10 on 2 cores), so slowness is not mistaken for a
# failure. The lenient hook parser lets a later `--deadline-ms` win, so a test of the deadline itself
# still passes its own. How long a hook takes is measured in benchmarks/ (hook_timing.py, faults.py).
ROOMY_DEADLINE = ("--deadline-ms", "20000")


def init_home(root: Path) -> Home:
    """A new MEMVERBS_HOME at `root` with an empty brain (what `memverbs init` leaves)."""
    root.mkdir(parents=True, exist_ok=True)
    runtime = Runtime(Home(root))
    runtime.create_brain()
    runtime.close()
    return Home(root)


class Client:
    """Calls tools through the real dispatcher and returns (body, is_error)."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher

    def __call__(self, tool: str, /, **params):
        outcome = self.dispatcher.call(tool, params)
        return outcome.body, outcome.is_error

    def ok(self, tool: str, /, **params) -> dict:
        body, is_error = self(tool, **params)
        assert not is_error, body
        return body

    def err(self, tool: str, /, **params) -> dict:
        body, is_error = self(tool, **params)
        assert is_error, body
        return body



def page(client: Client, slug: str, title: str, *, body: str = "", **frontmatter) -> dict:
    lines = ["---", f"title: {title}"]
    for key, value in frontmatter.items():
        lines.append(f"{key}: {json.dumps(value)}")
    lines += ["---", f"# {title}", "", body]
    return client.ok("put_page", slug=slug, content="\n".join(lines) + "\n")


def sql_for(brain, sql: str) -> str:
    """A test's raw SQL with `?` placeholders, in the brain's own dialect (Postgres takes %s)."""
    return sql.replace("?", "%s") if brain.backend == "postgres" else sql


def installed_hook_command(opts, moment: str) -> str:
    """The shell command `memverbs install` writes for a hook, with the launcher file it runs written too."""
    from memverbs.installers.base import hook_command, launcher_step
    from memverbs.installers.steps import Context

    launcher_step(opts).apply(Context(backups=opts.home.backups / "tests"))
    return hook_command(opts, moment)
