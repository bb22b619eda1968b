"""The argument parser every memverbs command is built with (cli/parser.py builds the tree).

Apart from the tree so the modules that add its branches can name the class without importing
the tree that imports them.
"""

from __future__ import annotations

import argparse
import difflib
import re
from typing import Any, NoReturn

from memverbs.cli.completion import subcommands


class Parser(argparse.ArgumentParser):
    """Usage errors the way every other memverbs error reads: the problem, then the fix; exit 2."""

    def error(self, message: str) -> NoReturn:
        fix = f"see `{self.prog} --help` for what it takes"
        bad = re.match(r"argument (?:COMMAND|ACTION): invalid choice: '?([^' ]*)'?", message)
        if bad:
            near = difflib.get_close_matches(bad.group(1), list(subcommands(self)), n=1)
            message = f"no command {bad.group(1)!r}"
            fix = (f"did you mean `{self.prog} {near[0]}`? " if near else "") + f"`{self.prog} --help` lists them all"
        self.exit(2, f"{self.prog}: {message}\n  fix: {fix}\n")

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        return super().parse_known_args(None if args is None else _dash_values(self, list(args)), namespace)


def _dash_values(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """`--since -5d` and `--ttl -1h`: a value that starts with a dash joins its flag (`--since=-5d`),
    where argparse would take it for an option and say "expected one argument"."""
    takes_value = {s for a in parser._actions if a.nargs != 0 and a.option_strings for s in a.option_strings}
    out: list[str] = []
    for word in argv:
        if out and out[-1] in takes_value and re.match(r"-\d", word):
            out[-1] = f"{out[-1]}={word}"
        else:
            out.append(word)
    return out
