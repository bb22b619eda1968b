"""How a bearer token reaches the CLI without the command line: stdin, or a prompt that does not echo.

A command line is public: every user of the machine reads it in `ps` while the command
runs, and the shell keeps it in its history file. So a command that takes a token
(`connect`, `auth test`, `protocol conformance`) reads it, when `--token` is not given,
from stdin when stdin is not a terminal (`memverbs remote-header --bare | memverbs connect
URL`, a secret manager's pipe) or from a hidden prompt (getpass) when it is; `--token -`
reads stdin explicitly. `--token T` still works, for scripts that have no other way, and
says on stderr what it exposes.
"""

from __future__ import annotations

import sys

from memverbs.server.errors import MemverbsError

STDIN = "-"
MAX_STDIN = 64 * 1024  # a token is ~50 characters; a file piped by mistake is not read whole
WARNING = (
    "memverbs: warning: --token puts the token on the command line, where other users of this machine see it in `ps` "
    "and your shell keeps it in its history. Leave --token out: memverbs reads the token from stdin, or asks for it "
    "without echoing it."
)


class TokenInputError(MemverbsError):
    """Stdin held something other than one token (the caller reports it as a usage error, exit 2)."""


def given(flag: str | None) -> str | None:
    """The token `--token` gave: None without the flag, stdin's for `--token -`, else the literal (with the warning)."""
    if flag is None:
        return None
    if flag.strip() == STDIN:
        return from_stdin()
    print(WARNING, file=sys.stderr)
    return flag.strip()


def asked(prompt: str) -> str:
    """The token from stdin when it is not a terminal, else from a prompt that does not echo."""
    stream = sys.stdin
    if stream is None or stream.closed or not stream.isatty():
        return from_stdin()
    import getpass  # noqa: PLC0415 - only a person at a terminal is asked

    try:
        return getpass.getpass(prompt).strip()
    except EOFError:
        return ""


def from_stdin() -> str:
    """The token piped in: stdin's first line, trimmed. Nothing piped is an empty token."""
    stream = sys.stdin
    if stream is None or stream.closed:
        return ""
    text = stream.read(MAX_STDIN)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) > 1 or (lines and len(lines[0].split()) > 1):
        raise TokenInputError("stdin holds more than a token", "Pipe the token alone, on one line.")
    return lines[0] if lines else ""
