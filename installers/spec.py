"""What memverbs knows about one agent harness, in one object: `HarnessSpec`.

Each harness module (claude.py, codex.py, grok.py, opencode.py, openclaw.py) exports one
`SPEC`, and registry.py lists them: `memverbs install`, `uninstall`, `doctor`, `connect
--install` and the hooks all read that table rather than naming harnesses themselves.
docs/architecture.md has the table and the checklist for adding a harness.

The hook half of a harness (its stdin payload in, its injection format out) is the
`Adapter` in hooks/adapters.py, not a field built here: `memverbs hook` runs on every
prompt of every session and must not import the installers (their steps, JSONC and TOML
editors) to find it. The spec reaches its adapter through `hook`, by name.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memverbs.hooks.events import Harness

if TYPE_CHECKING:
    from memverbs.hooks.adapters import Adapter
    from memverbs.installers.base import Options
    from memverbs.installers.steps import Step
    from memverbs.remote.record import RemoteRecord
    from memverbs.server.home import Home

Problem = tuple[str, str]  # (what is wrong, the fix)
Plan = Callable[["Options", str], tuple[list["Step"], list[str]]]
RemotePlan = Callable[["Options", "RemoteRecord", list[str]], list["Step"]]
RemoteToken = Callable[[str], str]
DoctorCheck = Callable[["Options", dict], list[Problem]]
ExtraChecks = Callable[["Home"], list[dict]]
RemoteKeep = Callable[["Options"], Callable[[dict], bool] | None]


@dataclass(frozen=True)
class HarnessSpec:
    """One harness: how to find it, how to wire memverbs into it, and how to check the wiring."""

    name: str  # the id users type (`memverbs install NAME`) and `--harness NAME`; a hooks/events.Harness value
    title: str  # how its makers name it, for messages
    command: str  # its CLI: on PATH means installed (`install all`, `connect --install all`)
    scopes: tuple[str, ...]  # where it keeps its config; the first is the default
    plan: Plan  # (opts, its CLI) -> the steps and notes of `memverbs install`
    remote_plan: RemotePlan  # (opts, the connection, notes) -> the steps of `memverbs connect --install`
    remote_token: RemoteToken  # token_store -> how this harness gets the remote token (connect's output)
    remote_hooks: bool  # does the remote registration wire the lifecycle hooks too
    docs: str  # where docs/ describe it (a file#anchor)
    doctor: DoctorCheck | None = None  # problems beyond "each recorded step still holds", per receipt
    extra_checks: ExtraChecks | None = None  # doctor rows that need no receipt (e.g. Claude Code's plugin)
    remote_keep: RemoteKeep | None = None  # disconnect: which recorded steps to leave (an entry no longer ours)

    @property
    def harness(self) -> Harness:
        return Harness(self.name)

    @property
    def hook(self) -> Adapter:
        """Its hook adapter: the payload it sends and the output format it reads (hooks/adapters.py)."""
        from memverbs.hooks.adapters import ADAPTERS  # noqa: PLC0415 - the hook half lives on the light path

        return ADAPTERS[self.harness]

    def on_path(self, env_path: str | None = None) -> str | None:
        """Its CLI's path when installed here (how a harness is detected), else None."""
        return shutil.which(self.command, path=env_path)


def names(specs: Sequence[HarnessSpec]) -> str:
    """`claude, codex, …` for messages."""
    return ", ".join(s.name for s in specs)
