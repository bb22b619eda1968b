"""The options many commands share, and the argument types that check a value while parsing
(so every command says the same thing about a bad port, count or time)."""

from __future__ import annotations

import argparse

WHEN_HELP = "2026-08-11, 2026-08, 2026-08-11T09:30:00Z, 24h, 7d (or -7d), 30m ago, 2w, today or yesterday"


def formats(p: argparse.ArgumentParser, what: str = "rows") -> None:
    p.add_argument("--format", choices=("table", "csv", "jsonl", "json"), default="table",
                   help=f"how to print the {what} (default table; csv and jsonl for scripts)")


def json_flag(p: argparse.ArgumentParser, what: str = "the result as JSON") -> None:
    p.add_argument("--json", action="store_true", help=f"print {what}")


def remote_flag(p: argparse.ArgumentParser) -> None:
    # SUPPRESS: a subcommand's default must not overwrite a top-level `memverbs --remote …`.
    p.add_argument("--remote", action="store_true", default=argparse.SUPPRESS,
                   help="talk to the remote brain `memverbs connect` set up")


def port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port {value} is not between 0 and 65535")
    return value


def number(text: str) -> float | int:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    return int(value) if value.is_integer() else value


def when(text: str) -> str:
    """--since / --until: checked (and made an ISO instant) while parsing, the same on every command."""
    from memverbs.cli.when import WhenError, to_iso  # noqa: PLC0415

    try:
        return to_iso("", text)
    except WhenError as exc:
        raise argparse.ArgumentTypeError(str(exc).strip()) from None


def count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value
