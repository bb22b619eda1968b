"""Which brain a CLI command talks to: the local one (in-process, the trusted caller) or, with
`--remote` or config `cli_remote = true`, the remote brain `memverbs connect` set up.

Both answer `call(tool, params) -> (is_error, body)` with the exact wire body, so rendering
never depends on where the answer came from. Over the remote, the CLI is an MCP client like any
other: the token's lane, scopes and surface apply and private memory stays out of reach.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Literal

from memverbs.cli.output import fail
from memverbs.server.errors import MemverbsError

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from memverbs.server.brain.base import Brain


class TargetError(MemverbsError):
    """The chosen brain cannot be used (not connected, no token): a message and its fix."""


class LocalTarget:
    remote: Literal[False] = False  # a literal, so `if target.remote` tells the two targets apart
    label = "local brain"

    def __init__(self) -> None:
        from memverbs.server.runtime import Runtime  # noqa: PLC0415

        # The quick reading of the config, as the hooks and the stdio server start: the full
        # settings (pydantic-settings, most of a read command's time) load only when something
        # needs them, a provider or a key the quick reader cannot vouch for.
        self.runtime = Runtime.quick()

    def call(self, tool: str, params: dict) -> tuple[bool, dict]:
        from memverbs.server.projects import here  # noqa: PLC0415

        # Run in a repository, the CLI is in its project, as an agent there would be (server/projects.py).
        outcome = self.runtime.local_dispatcher(project=here()).call(tool, params)
        return outcome.is_error, outcome.body

    def brain(self) -> Brain:
        return self.runtime.brain()

    @property
    def source(self) -> str:
        return self.runtime.source

    def close(self) -> None:
        self.runtime.close()


class RemoteTarget:
    remote: Literal[True] = True

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.token = token
        self.label = f"remote brain {url}"

    def call(self, tool: str, params: dict) -> tuple[bool, dict]:
        import anyio  # noqa: PLC0415 - the MCP client stack, only for remote calls

        from memverbs.server.conformance.connect import connect  # noqa: PLC0415

        async def once() -> tuple[str, bool]:
            async with connect(self.url, self.token) as endpoint:
                return await endpoint.call_tool(tool, params)

        try:
            text, is_error = anyio.run(once)
        except Exception as exc:  # a boundary: the MCP client's failures are not a closed set (anyio groups, httpx, the SDK's)
            raise TargetError(
                f"cannot reach the remote brain {self.url} ({type(exc).__name__}: {exc or 'no detail'})",
                "Check it with `memverbs auth test`; drop --remote to use the local brain.",
            ) from exc
        try:
            return is_error, json.loads(text)
        except ValueError:
            return True, {"error": "internal", "message": text[:500], "suggestion": None}

    def brain(self):
        raise TargetError(
            "this command reads the brain directly and works on the local brain only",
            "Run it on the machine that holds the brain, or drop --remote.",
        )

    def close(self) -> None:
        pass


def wants_remote(args: argparse.Namespace) -> bool:
    if getattr(args, "remote", False):
        return True
    if getattr(args, "local", False):
        return False
    from memverbs.server.errors import ConfigError  # noqa: PLC0415
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.quickconfig import quick_settings  # noqa: PLC0415

    home = Home.from_env()
    try:
        quick = quick_settings(home)
        if quick.sure:
            return quick.cli_remote
        from memverbs.server.settings import load_settings  # noqa: PLC0415 - a value the quick reader cannot vouch for

        return load_settings(home).cli_remote
    except ConfigError:
        return False  # a broken config is reported by the local brain's own call, with its fix


LOCAL_ONLY_FIX = "Run it on the machine that holds the brain (drop --remote, or pass --local over config cli_remote)."


def refuse_remote(args: argparse.Namespace, why: str) -> int | None:
    """A command that reads the brain directly: its exit status with the fix when it was sent to a
    remote brain (`why` completes "`COMMAND` …"), None to go on."""
    return fail(f"`{args.command}` {why}", LOCAL_ONLY_FIX) if wants_remote(args) else None


def on_local_brain(args: argparse.Namespace, why: str, run: Callable[[LocalTarget], int]) -> int:
    """`run` on this machine's brain, with every MemverbsError said as the problem and its fix."""
    refused = refuse_remote(args, why)
    if refused is not None:
        return refused
    try:
        target = LocalTarget()
    except MemverbsError as exc:
        return fail(exc.message, exc.fix)
    try:
        return run(target)
    except MemverbsError as exc:
        return fail(exc.message, exc.fix)
    finally:
        target.close()


def open_target(args: argparse.Namespace) -> LocalTarget | RemoteTarget:
    if not wants_remote(args):
        return LocalTarget()
    from memverbs.remote.credentials import token_for  # noqa: PLC0415
    from memverbs.remote.record import RemoteError, RemoteRecord  # noqa: PLC0415
    from memverbs.server.home import Home  # noqa: PLC0415

    try:
        record = RemoteRecord.load(Home.from_env())
    except RemoteError as exc:
        raise TargetError(exc.message, exc.fix) from exc
    if record is None:
        raise TargetError(
            "--remote: this machine is not connected to a remote brain",
            "Run `memverbs connect URL` first, or drop --remote.",
        )
    token = token_for(record.url)
    if not token:
        raise TargetError(
            f"--remote: no token for {record.url} (not in the keyring, MEMVERBS_REMOTE_TOKEN unset)",
            'export MEMVERBS_REMOTE_TOKEN="mvb_…" (the token from `memverbs auth create` on the server).',
        )
    return RemoteTarget(record.url, token)
Target = LocalTarget | RemoteTarget  # where a CLI call runs: this machine's brain or a remote one
