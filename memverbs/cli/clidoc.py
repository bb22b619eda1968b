"""docs/cli.md, rendered from the argparse parser so the CLI reference cannot drift.

    python -m memverbs.cli.clidoc > docs/cli.md

tests/test_docs.py fails when the committed file differs from this output.
"""

from __future__ import annotations

import argparse

from memverbs.cli.completion import subcommands, walk
from memverbs.cli.parser import EXIT_CODES, GROUPS, build_parser


def _synopsis(path: tuple[str, ...], parser: argparse.ArgumentParser) -> str:
    words = ["memverbs", *path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            words.append("ACTION")
        elif not action.option_strings:
            name = " ".join(action.metavar) if isinstance(action.metavar, tuple) else (action.metavar or action.dest.upper())
            if action.choices and not action.metavar:
                name = "|".join(str(c) for c in action.choices)
            words.append(f"[{name}]" if action.nargs == "?" else name)
    has_options = any(a.option_strings and a.dest != "help" for a in parser._actions)
    return " ".join(words) + (" [options]" if has_options else "")


def _arg_name(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest.upper()}`"
    names = ", ".join(action.option_strings)
    if action.nargs == 0:
        return f"`{names}`"
    if action.choices:
        return f"`{names} {{{','.join(str(c) for c in action.choices)}}}`"
    return f"`{names} {action.metavar or action.dest.upper()}`"


def _section(path: tuple[str, ...], parser: argparse.ArgumentParser, level: str) -> list[str]:
    out = [f"{level} `memverbs {' '.join(path)}`", "", parser.description or "", "", "```", _synopsis(path, parser), "```", ""]
    rows = [a for a in parser._actions if a.dest != "help" and not isinstance(a, argparse._SubParsersAction)]
    if rows:
        out += ["| argument | what it does |", "|---|---|"]
        for action in rows:
            text = (action.help or "").replace("|", "\\|")
            out.append(f"| {_arg_name(action)} | {text} |")
        out.append("")
    return out


def render() -> str:
    parser = build_parser()
    tree = dict(walk(parser))
    top = subcommands(parser)
    out = [
        "# The memverbs command line",
        "",
        "Generated from the parser (`python -m memverbs.cli.clidoc > docs/cli.md`). Every command takes `--help`;",
        "memory and page commands print a human rendering by default and the exact MCP wire body with `--json`;",
        "listings also take `--format table|csv|jsonl|json`. Colour is on only on a terminal, never with `NO_COLOR`.",
        "",
        f"{EXIT_CODES.replace('exit status', 'Exit status')}.",
        "",
        "Global options, before the command: `--remote` sends memory and page commands to the remote brain",
        "`memverbs connect` set up (config `cli_remote = true` makes that the default; `--local` overrides it).",
        "",
        "`--since` and `--until` take the same forms on every command: a date (`2026-08-11`), a month (`2026-08`),",
        "a datetime (`2026-08-11T09:30:00Z`; no offset means UTC), a time ago (`24h`, `7d`, `30m ago`, `2w`), or",
        "`today` / `yesterday` (midnight UTC).",
        "",
        "Shell completion: `memverbs completion bash|zsh|fish` prints a script generated from this same parser.",
        "",
    ]
    placed: list[str] = []
    for title, names in GROUPS:
        present = [n for n in names if n in top]
        if not present:
            continue
        out += [f"## {title.capitalize()}", ""]
        for name in present:
            placed.append(name)
            out += _section((name,), tree[(name,)], "###")
            for child in subcommands(tree[(name,)]):
                out += _section((name, child), tree[(name, child)], "####")
    seen = {id(tree[(n,)]) for n in placed}
    rest = [n for n in top if id(tree[(n,)]) not in seen]  # aliases (audit) share their command's parser
    if rest:
        out += ["## Other", ""]
        for name in rest:
            out += _section((name,), tree[(name,)], "###")
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
