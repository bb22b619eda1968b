"""Every command the README shows is one the CLI takes: each example line in its code blocks parses,
each option its command reference names belongs to that command, and each kind it names is a kind
`remember --kind` accepts. (tests/test_readme_tour.py runs the tour itself, output and all.)"""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from memverbs.cli.completion import subcommands
from memverbs.cli.parser import build_parser
from memverbs.server.protocol.verb_defs import KINDS

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
PARSER = build_parser()


def code_blocks() -> list[str]:
    return re.findall(r"^```(?:sh|console)\n(.*?)^```", README, flags=re.MULTILINE | re.DOTALL)


def example_commands() -> list[str]:
    """Each `memverbs …` a code block runs: `$ ` lines of a console block, every line of a sh block,
    cut at `&&`, `|` and `;`, comments dropped."""
    out: list[str] = []
    for block in code_blocks():
        console = any(line.startswith("$ ") for line in block.splitlines())
        for line in block.splitlines():
            if console and not line.startswith("$ "):
                continue
            line = line.removeprefix("$ ")
            words = shlex.split(line, comments=True)
            command: list[str] = []
            for word in [*words, "&&"]:
                if word in ("&&", "|", ";", "||"):
                    if command[:1] == ["memverbs"]:
                        out.append(shlex.join(command))
                    command = []
                else:
                    command.append(word)
    return out


def parse(argv: list[str]) -> argparse.Namespace:
    """Parse as `memverbs` does, an error as the assertion's message instead of an exit."""
    def refuse(message: str) -> None:
        raise AssertionError(message)

    for _, sub in walk_parsers(PARSER):
        sub.error = refuse  # type: ignore[method-assign]
    args, extra = PARSER.parse_known_args(argv)
    assert not extra, f"unrecognized arguments: {extra}"
    return args


def walk_parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for name, child in subcommands(parser).items():
        yield from walk_parsers(child, (*path, name))


def test_the_readme_shows_examples():
    assert len(example_commands()) >= 20


@pytest.mark.parametrize("command", example_commands())
def test_every_example_in_the_readme_parses(command):
    argv = shlex.split(command)[1:]
    args = parse(argv)
    kind = getattr(args, "p_kind", None)
    assert kind is None or kind in KINDS


def reference_rows() -> list[str]:
    """The first cell of each row of the README's command reference: one or more `memverbs …` forms."""
    section = README.split("## Command reference", 1)[1].split("\n## ", 1)[0]
    return [line.split(" | ", 1)[0] for line in section.splitlines() if line.startswith("| `memverbs")]


def forms(cell: str) -> list[list[str]]:
    """Each `memverbs …` code span of a cell, as words (`\\|` is a table's escaped bar); `get|set` of
    subcommands is one form each."""
    out: list[list[str]] = []
    for span in re.findall(r"`(memverbs [^`]+)`", cell):
        words = span.replace("\\|", "|").split()
        parser = PARSER
        for i, word in enumerate(words[1:], 1):
            choices = subcommands(parser)
            if word in choices:
                parser = choices[word]
                continue
            if "|" in word and set(word.split("|")) <= set(choices):
                out += [[*words[:i], alt, *words[i + 1 :]] for alt in word.split("|")]
                break
            out.append(words)
            break
        else:
            out.append(words)
    return out


def test_every_option_of_the_command_reference_belongs_to_its_command():
    checked = 0
    for cell in reference_rows():
        for words in forms(cell):
            path, parser, rest = (), PARSER, words[1:]
            while rest and rest[0] in subcommands(parser):
                path, parser, rest = (*path, rest[0]), subcommands(parser)[rest[0]], rest[1:]
            assert path, f"{' '.join(words)}: no such command"
            offered = {s for a in parser._actions for s in a.option_strings} | {s for a in PARSER._actions for s in a.option_strings}
            for word in rest:
                for flag in re.findall(r"--[a-z][a-z-]*", word):
                    assert flag in offered, f"`memverbs {' '.join(path)}` has no {flag} (README: {' '.join(words)})"
                    checked += 1
            # The values the reference lists for an option with choices are those choices.
            for flag, values in re.findall(r"\[?(--[a-z-]+) ([a-z|]+)\]?", " ".join(rest)):
                action = next((a for a in parser._actions if flag in a.option_strings), None)
                if action is not None and action.choices and "|" in values:
                    assert set(values.split("|")) <= set(action.choices), (flag, values, action.choices)
    assert checked >= 40


def test_every_kind_the_readme_names_is_a_kind_remember_accepts():
    said = re.search(r"a kind \(([^)]*)\)", README)
    assert said is not None
    named = re.findall(r"`([a-z_]+)`", said.group(1))
    assert named and set(named) <= set(KINDS), named
    assert set(named) == set(KINDS)  # and all of them: the README is where a new user learns the list
    for kind in re.findall(r"--kind\s+([a-z]+)", README):
        assert kind in KINDS, kind


def test_the_listings_the_readme_says_take_format_do():
    prose = README.split("listings (", 1)[1].split(")", 1)[0]
    for name in re.findall(r"`([a-z-]+)`", prose):
        action = next(a for a in subcommands(PARSER)[name]._actions if "--format" in a.option_strings)
        assert set(action.choices) == {"table", "csv", "jsonl", "json"}, name
