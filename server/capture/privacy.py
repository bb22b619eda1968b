"""What never leaves a transcript: `<private>` spans and secrets.

`clean(text)` is the one gate every captured text passes before it can be stored (the session
page, each fact, a title): it drops `<private>…</private>` spans first — an unclosed `<private>`
drops everything after it, since the user meant it to end somewhere — then replaces each secret
with `[redacted:<kind>]`.

Secrets are found two ways, and a span either finds is redacted:
* detect-secrets (Yelp's maintained detector): the denylist patterns of its plugins (cloud keys,
  provider tokens, private keys, JWTs, basic-auth URLs, …), its keyword detector (`password =
  "…"` and friends) and its base64 high-entropy strings; imported on first use (~0.1 s), in the
  detached worker or the CLI, never on a hook's path;
* patterns of our own for what it misses or finds only in quoted form: `.env`-style assignments
  of a secret-named variable (`API_KEY=…` unquoted), passwords in any scheme's URL, bearer tokens,
  and provider keys it has no plugin for (Anthropic, Google, newer OpenAI and GitHub forms).

Hex strings are left alone (commit hashes are not secrets), and so are short values: a redaction
marker where a commit hash stood would make the session record useless.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import Any

PRIVATE_SPAN = re.compile(r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL)
MARK = "[redacted:{}]"

# Ours: (kind, pattern, group to redact — 0 for the whole match).
_NAME = r"[A-Za-z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|PWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|AUTH_?KEY|CLIENT_?SECRET|DSN)[A-Za-z0-9_]*"
_PATTERNS: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("private-key", re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)", re.DOTALL), 0),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"), 0),
    ("aws-access-key", re.compile(r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"), 0),
    ("aws-secret-key", re.compile(r"(?i)aws.{0,20}?(?:secret|key).{0,20}?['\"=:\s]\s*([A-Za-z0-9/+]{40})\b"), 1),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), 0),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{10,}"), 0),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"), 0),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"), 0),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), 0),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{30,}"), 0),
    ("pypi-token", re.compile(r"\bpypi-[A-Za-z0-9_-]{40,}"), 0),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), 0),
    ("stripe-key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"), 0),
    ("azure-key", re.compile(r"(?i)AccountKey=([A-Za-z0-9+/=]{20,})"), 1),
    ("url-password", re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@"), 1),
    ("bearer-token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{16,})"), 1),
    # `.env` style: NAME=value or NAME: value, the name saying it is a secret (quoted or not).
    ("assignment", re.compile(rf"(?i)\b{_NAME}\b\s*[:=]\s*(\"[^\"\n]{{4,}}\"|'[^'\n]{{4,}}'|[^\s\"',;]{{4,}})"), 1),
)
_MARKED = re.compile(r"\[redacted:[a-z0-9-]+\]")


def strip_private(text: str) -> str:
    return PRIVATE_SPAN.sub("", text)


def clean(text: str) -> str:
    """`text` without its `<private>` spans and with every secret redacted."""
    if not text:
        return text
    text = strip_private(text)
    spans = list(_our_spans(text)) + list(_detector_spans(text))
    return _redact(text, spans)


def is_clean(text: str) -> bool:
    """True when `clean` would change nothing and nothing was redacted before: a fact that needed
    redacting is not kept at all ("the token is [redacted]" is no use to anyone)."""
    return not _MARKED.search(text) and clean(text) == text


def _our_spans(text: str) -> Iterable[tuple[int, int, str]]:
    for kind, pattern, group in _PATTERNS:
        for m in pattern.finditer(text):
            start, end = m.span(group)
            if end > start and not _MARKED.fullmatch(text[start:end]):
                yield start, end, kind


def _detector_spans(text: str) -> Iterable[tuple[int, int, str]]:
    """Spans detect-secrets finds, line by line (its plugins read lines), as offsets into `text`."""
    plugins = _plugins()
    if not plugins:
        return
    offset = 0
    for line in text.splitlines(keepends=True):
        if len(line) > 8 and not line.isspace():
            for plugin in plugins:
                for secret in _analyze(plugin, line):
                    value = secret.secret_value
                    if not value or len(value) < 6 or _MARKED.search(value):
                        continue
                    kind = _kind(secret.type)
                    start = line.find(value)
                    while start >= 0:
                        yield offset + start, offset + start + len(value), kind
                        start = line.find(value, start + len(value))
        offset += len(line)


def _analyze(plugin: object, line: str) -> Iterable:
    try:
        return plugin.analyze_line(filename="capture.txt", line=line, line_number=0) or ()  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - a detector bug must not stop capture; our own patterns still ran
        return ()


@cache
def _plugins() -> tuple:
    """detect-secrets' plugins that can run on free text: every denylist plugin, the keyword one and
    base64 entropy (hex entropy would take every commit hash; the public-IP one is not a secret)."""
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class  # noqa: PLC0415
    except ImportError:  # not installed (a trimmed environment): our patterns alone
        return ()
    skip = {"HexHighEntropyString", "IPPublicDetector"}
    plugins = []
    cls: Any
    for cls in get_mapping_from_secret_type_to_class().values():
        if cls.__name__ in skip:
            continue
        try:
            plugins.append(cls(limit=4.5) if "HighEntropy" in cls.__name__ else cls())
        except Exception:  # noqa: BLE001 - a plugin that will not start is skipped, the rest run
            continue
    return tuple(plugins)


def _kind(secret_type: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")[:40] or "secret"


def _redact(text: str, spans: list[tuple[int, int, str]]) -> str:
    if not spans:
        return text
    spans.sort(key=lambda s: (s[0], -s[1]))
    merged: list[list] = []
    for start, end, kind in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end, kind])
    out, last = [], 0
    for start, end, kind in merged:
        out.append(text[last:start])
        out.append(MARK.format(kind))
        last = end
    out.append(text[last:])
    return "".join(out)
