"""`memverbs docs [TOPIC]` prints the packaged docs, and no message or help line points at a `docs/` path
(a pip-only install has no such folder: it points at `memverbs docs TOPIC`)."""

from __future__ import annotations

import re
import tokenize
from pathlib import Path

from runcli import run_cli

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted(p.stem for p in (ROOT / "docs").glob("*.md"))


def test_docs_alone_lists_every_topic_with_its_title(home):
    proc = run_cli("docs")
    assert proc.returncode == 0, proc.stderr
    listed = [line.split()[0] for line in proc.stdout.splitlines()[1:]]
    assert listed == DOCS
    assert re.search(r"^  hooks +Lifecycle hooks$", proc.stdout, re.M)


def test_docs_topic_prints_the_doc_verbatim(home):
    for topic in ("hooks", "remote"):
        proc = run_cli("docs", topic)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == (ROOT / "docs" / f"{topic}.md").read_text(encoding="utf-8")


def test_docs_takes_the_path_a_link_shows(home):
    proc = run_cli("docs", "docs/hooks.md#projects")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# Lifecycle hooks")


def test_an_unknown_topic_is_a_usage_error_with_did_you_mean(home):
    proc = run_cli("docs", "hook")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "no topic 'hook'" in proc.stderr
    assert "did you mean `memverbs docs hooks`?" in proc.stderr
    far = run_cli("docs", "zzzz")
    assert far.returncode == 2 and "did you mean" not in far.stderr and "`memverbs docs` lists them all" in far.stderr


def _code_strings(path: Path):
    """Every string literal in a module except docstrings (what a person or a client may be shown)."""
    with path.open(encoding="utf-8") as f:
        tokens = list(tokenize.generate_tokens(f.readline))
    kinds = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    for i, tok in enumerate(tokens):
        before = tokens[i - 1].type if i else tokenize.NEWLINE
        docstring = tok.string.startswith(('"""', "'''")) and before in (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT,
                                                                         tokenize.DEDENT, tokenize.ENCODING)
        if tok.type in kinds and not docstring:
            yield tok.start[0], tok.string


def test_no_message_points_at_a_docs_path():
    found = []
    for room in ("memverbs", "server", "hooks", "installers"):
        for path in (ROOT / room).rglob("*.py"):
            for line, text in _code_strings(path):
                if not re.search(r"docs/\w", text):  # `memverbs docs` itself strips a bare "docs/" prefix
                    continue
                # The generators' own regeneration commands, and HarnessSpec.docs (a maintainer's pointer, never printed).
                if "> docs/" in text or re.fullmatch(r'"docs/[\w.]+#[\w-]+"', text):
                    continue
                found.append(f"{path.relative_to(ROOT)}:{line}: {text[:80]}")
    assert found == [], "point at `memverbs docs TOPIC` instead"
