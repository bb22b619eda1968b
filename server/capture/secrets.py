"""Where the secrets in a text are: spans, each with its class, for privacy.clean to redact.

Found two ways, and a span either finds is redacted:

* patterns of our own, by class:
  * **token shapes** — cloud and provider keys by their prefixes (AWS, Google, Anthropic, OpenAI,
    GitHub, GitLab, npm, PyPI, Slack and its webhooks, Stripe, Vault `hvs.`/`hvb.`/`hvr.`, JWTs),
    and unprefixed random strings (20+ characters mixing upper case, lower case and digits, with
    the entropy of a generated key, not the shape of a word or identifier);
  * **credentials in URLs** — `scheme://user:password@` (the user may be empty: `redis://:pw@`) and
    secret-named query parameters (`?token=`, `&api_key=`, `sig=`);
  * **env lines and assignments** — a secret-named variable or key (`DB_PASS=`, `SMTP_PASSWORD:`,
    `"client_secret": "…"`, `export API_KEY=…`), quoted or not;
  * **headers** — `Authorization:` of any scheme (`Basic`, `Bearer`, `Token`), `X-Api-Key:`,
    `Cookie:`, and a bare `Bearer <token>`;
  * **command-line password flags** — `sshpass -p`, `mysql -p…`/`--password`, `curl -u user:pw`,
    `wget --password`, `docker login -p`, `redis-cli -a`, `ldapsearch -w`, `smbclient -U user%pw`,
    `openssl -passin pass:…`, `htpasswd -b`, `--token`/`--api-key`/`--secret` values;
  * **private keys** — PEM blocks (`-----BEGIN … PRIVATE KEY-----`, the header tolerant of line
    breaks; unclosed, to the end of the text; an END with no BEGIN, from the start: a key split
    across messages), PuTTY key files, a PEM block base64-encoded (`LS0tLS1CRUdJTi…`), and bare
    base64 blocks of key-sized lines;
  * **credentials stated in words** — "the staging password is …", "my wifi passphrase is …",
    "the safe combination is …", "the door code is …", "PIN is …", "the API token for prod is …",
    "login with password …": the value that follows, unless it reads as a description
    ("the password is stored in the keyring", "the token is expired");
* detect-secrets (Yelp's maintained detector): the denylist patterns of its plugins, its keyword
  detector and its base64 high-entropy strings; imported on first use (~0.1 s), in the detached
  worker or the CLI, never on a hook's path.

Hex strings alone are not secrets (a commit hash is not), nor are short values; a hex string named
as a token or key (`token 9f8e…`, `X-Api-Key: …`) is.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from functools import cache
from typing import Any

Span = tuple[int, int, str]  # start, end, class

# A secret-named variable or key: its last segment says so (`DB_PASS`, `smtp_password`, `GITHUB_TOKEN`,
# `client-secret`), or its camelCase tail does (`apiKey`, `dbPassword`); `max_tokens` and `pass_rate` do not.
_SECRET_WORD = (r"(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|PASSCODE|PASS|PWD|PW|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|SECRET_?KEY|"
                r"CREDENTIALS?|AUTH_?KEY|AUTH_?TOKEN|DSN|SIGNING_?KEY|ENCRYPTION_?KEY|MASTER_?KEY|SESSION_?KEY|SALT)")
_NAME = rf"(?:[A-Za-z0-9]+[_.-])*{_SECRET_WORD}(?:[_.-](?:BASE|VALUE|B64|BASE64))?"
_CAMEL = r"[a-z][A-Za-z0-9]*(?:Secret|Token|Password|Passwd|Passphrase|ApiKey|AccessKey|PrivateKey|SecretKey)"
_KEY_VAR = r"[A-Z][A-Z0-9]*_KEY"  # an upper-case env variable named *_KEY (STRIPE_KEY, MAPS_KEY)
_NOT_SECRET_NAMES = frozenset({"PWD", "OLDPWD"})  # the shell's working directories
_VALUE = r"(\"[^\"\n]{3,}\"|'[^'\n]{3,}'|[^\s\"',;]{3,})"
_PEM_HEAD = r"-----\s*BEGIN[A-Z0-9 \t\r\n]*?PRIVATE\s+KEY(?:\s+BLOCK)?\s*-----"
_PEM_TAIL = r"-----\s*END[A-Z0-9 \t\r\n]*?PRIVATE\s+KEY(?:\s+BLOCK)?\s*-----"

# (class, pattern, group to redact: 0 for the whole match)
PATTERNS: tuple[tuple[str, re.Pattern[str], int], ...] = (
    # -- private keys
    ("private-key", re.compile(rf"{_PEM_HEAD}.*?(?:{_PEM_TAIL}|\Z)", re.DOTALL), 0),
    ("private-key", re.compile(rf"\A(?:(?!{_PEM_HEAD}).)*?{_PEM_TAIL}", re.DOTALL), 0),  # the end of a key split across messages
    ("private-key", re.compile(r"PuTTY-User-Key-File-\d+:.*?(?:Private-MAC:\s*[0-9a-fA-F]+|\Z)", re.DOTALL), 0),
    ("private-key", re.compile(r"LS0tLS1CRUdJTi(?:[A-Za-z0-9+/=]|\\n|\r?\n)*"), 0),  # "-----BEGIN" base64-encoded
    # Key-sized base64 lines, three or more in a row (a key's body without its markers); hex alone is not.
    ("base64-block", re.compile(r"(?:^[ \t]*(?=[A-Za-z0-9+/]*[A-Z])[A-Za-z0-9+/]{40,}={0,2}[ \t]*(?:\r?\n|\Z)){3,}", re.MULTILINE), 0),
    # -- token shapes
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
    ("slack-webhook", re.compile(r"hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}"), 0),
    ("stripe-key", re.compile(r"\b(?:sk|rk|pk|whsec)_(?:live|test)_[A-Za-z0-9]{16,}"), 0),
    ("vault-token", re.compile(r"\bhv[sbr]\.[A-Za-z0-9_-]{20,}"), 0),
    ("azure-key", re.compile(r"(?i)AccountKey=([A-Za-z0-9+/=]{20,})"), 1),
    ("named-hex-token", re.compile(r"(?i)\b(?:token|api[_ -]?key|apikey|secret|access[_ -]?key|auth[_ -]?key)\b\W{0,3}\s*([0-9a-f]{24,})\b"), 1),
    # -- credentials in URLs
    ("url-password", re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:([^\s@/]+)@"), 1),
    ("url-credential", re.compile(r"(?i)[?&](?:access_token|refresh_token|id_token|token|api_?key|apikey|key|secret|client_secret|password|passwd|pwd|"
                                  r"sig|signature|x-amz-signature|x-amz-credential|auth|code)=([^&\s#\"']{6,})"), 1),
    # -- headers
    ("authorization", re.compile(r"(?i)\b(?:proxy-)?authorization\s*[:=]\s*(?:(?:basic|bearer|token|digest|negotiate|apikey)\s+)?([^\s\"',;]{6,})"), 1),
    ("api-key-header", re.compile(r"(?i)\bx-(?:api-key|auth-token|access-token|api-token|secret)\s*:\s*([^\s\"',;]{6,})"), 1),
    ("cookie", re.compile(r"(?i)\b(?:set-)?cookie\s*:\s*([^\n\"']{6,})"), 1),
    ("bearer-token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{16,})"), 1),
    # -- command-line password flags
    ("cli-password", re.compile(r"\bsshpass\s+-p\s*(\"[^\"\n]+\"|'[^'\n]+'|\S+)"), 1),
    ("cli-password", re.compile(r"\b(?:mysql|mysqldump|mysqladmin|mariadb|mongo|mongosh|mongodump)\b[^\n|;&]*?\s-p(\"[^\"\n]+\"|'[^'\n]+'|[^\s\"']+)"), 1),
    ("cli-password", re.compile(r"\b(?:mongo|mongosh|mongodump)\b[^\n|;&]*?\s-p\s+(\"[^\"\n]+\"|'[^'\n]+'|\S+)"), 1),
    ("cli-password", re.compile(r"\b(?:docker|podman|nerdctl|buildah|helm\s+registry|oras|skopeo)\s+login\b[^\n|;&]*?\s-p[=\s]+(\"[^\"\n]+\"|'[^'\n]+'|\S+)"), 1),
    ("cli-password", re.compile(r"(?i)--(?:password|passwd|pass|http-password|ftp-password|proxy-password|token|api-key|apikey|secret|client-secret|auth-token)"
                                r"(?:=|\s+)(\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'-][^\s\"']*)"), 1),
    ("cli-password", re.compile(r"\b(?:curl|http|https|wget)\b[^\n|;&]*?\s(?:-u|--user)[=\s]*(\"[^\"\n]*:[^\"\n]+\"|'[^'\n]*:[^'\n]+'|[^\s\"']*:\S+)"), 1),
    ("cli-password", re.compile(r"\bredis-cli\b[^\n|;&]*?\s-a\s+(\"[^\"\n]+\"|'[^'\n]+'|\S+)"), 1),
    ("cli-password", re.compile(r"\bldap\w*\b[^\n|;&]*?\s-w\s+(\"[^\"\n]+\"|'[^'\n]+'|\S+)"), 1),
    ("cli-password", re.compile(r"\bsmbclient\b[^\n|;&]*?\s-U\s+\S*?%(\S+)"), 1),
    ("cli-password", re.compile(r"(?i)-pass(?:in|out)?\s+(?:pass|env|file):(\S+)"), 1),
    ("cli-password", re.compile(r"\bhtpasswd\b[^\n|;&]*?\s-\w*b\w*\s+\S+\s+\S+\s+(\S+)"), 1),
    # -- env lines and assignments: NAME=value, NAME: value, "name": "value"
    ("assignment", re.compile(rf"(?i)(?<![A-Za-z0-9_.-])(?P<name>{_NAME})\b[\"']?\s*[:=]\s*{_VALUE}"), 2),
    ("assignment", re.compile(rf"\b(?P<name>{_CAMEL}|{_KEY_VAR})\b[\"']?\s*[:=]\s*{_VALUE}"), 2),
)

# -- credentials stated in words
_SECRET_NOUN = (
    r"(?:pass(?:word|phrase|code|wd)?|pwd|pin(?:\s+(?:code|number))?|token|secret|(?:api|access|secret|license|licence|product|deploy|ssh)\s+key|"
    r"private\s+key|credentials?|combination|combo|"
    r"(?:door|gate|alarm|safe|lock|locker|garage|entry|access|security|verification|unlock|backup|recovery|otp|2fa|mfa|"
    r"one[- ]time|wifi|wi-fi|keypad|building|lockbox|vault)\s+code)"
)
_STATED = re.compile(
    rf"(?i)\b(?P<noun>{_SECRET_NOUN})\b(?:\s+(?:for|to|of|on|at)\s+(?:the\s+|my\s+|our\s+|a\s+)?[\w.@:/-]+(?:\s+[\w.@:/-]+)?)?"
    r"\s*(?:(?:is|was|are|=|:|will\s+be|became|remains|is\s+still|is\s+now|is\s+set\s+to|has\s+been\s+(?:set|changed|reset)\s+to|"
    r"got\s+changed\s+to|changed\s+to|reads)\s*[:\-–—]?\s+)(?P<value>\S.*)"
)
_USED = re.compile(r"(?i)\b(?:with|using|use)\s+(?:the\s+)?(?:pass(?:word|phrase|code)|pin)\s+(?P<value>\S.*)")
# A value that reads as a description of the secret, not the secret.
_DESCRIPTIVE = frozenset("""
a an the in on at of to for from by via under inside into stored kept saved managed rotated expired expiring
invalid wrong incorrect correct missing required needed empty blank too not no none null unset set same
different changed reset weak strong long short secure insecure fine ok okay there here available unavailable
unknown hashed encrypted generated random only also part shared stale valid working broken right case
sensitive what that which where somewhere this these those it its my our your their his her being been going
optional mandatory handled configured provided given written printed logged hidden visible public private
secret new old default temporary revoked disabled enabled active inactive locked unlocked compromised leaked
exposed safe unsafe ready pending less more longer shorter easy hard simple complex just still now currently
actually probably usually always never sometimes literally obviously clearly really
""".split())  # noqa: SIM905 - a word list reads better as words
# A multi-word value (a passphrase, a combination) is a description only when it starts like one.
_DESCRIPTIVE_LEAD = frozenset("""
a an the in on at of to for from by via under inside into stored kept saved managed rotated expired invalid
wrong incorrect missing required needed not no set being written printed shared hashed encrypted generated
somewhere
""".split())  # noqa: SIM905 - a word list reads better as words
_SKIPPABLE = frozenset({"now", "still", "currently", "actually", "just", "literally"})
_CLAUSE_END = re.compile(r"[.!?;,](?=\s|$)|\n|\s+(?:and|but|so|which|because)\s+")
_MULTIWORD = re.compile(r"(?i)passphrase|combination|combo|credentials?")

_TOKENISH = re.compile(r"(?<![A-Za-z0-9_+/=.-])[A-Za-z0-9_+/-]{20,}={0,2}(?![A-Za-z0-9_+/=-])")


def our_spans(text: str) -> Iterator[Span]:
    for kind, pattern, group in PATTERNS:
        for m in pattern.finditer(text):
            if kind == "assignment" and m.group("name") in _NOT_SECRET_NAMES:
                continue
            start, end = m.span(group)
            if end > start:
                yield start, end, kind
    yield from _stated_spans(text)
    yield from _random_spans(text)


def _stated_spans(text: str) -> Iterator[Span]:
    for pattern in (_STATED, _USED):
        for m in pattern.finditer(text):
            span = _value_span(text, m.start("value"), bool(_MULTIWORD.search(m.group(0)[: m.start("value") - m.start()])))
            if span is not None:
                yield span[0], span[1], "stated-credential"


def _value_span(text: str, start: int, multiword: bool) -> tuple[int, int] | None:
    """Where the stated value starts and ends, or None when it reads as a description."""
    rest = text[start : start + 300]
    if rest[:1] in "\"'“‘`":
        closer = {"“": "”", "‘": "’"}.get(rest[0], rest[0])
        end = rest.find(closer, 1)
        return (start, start + (end + 1 if end > 0 else len(rest.split("\n", 1)[0])))
    words = rest.split()
    offset = 0
    while words and words[0].lower().strip(".,;:!?") in _SKIPPABLE:
        offset = rest.index(words[0], offset) + len(words[0])
        words = words[1:]
    if not words:
        return None
    first = words[0].strip(".,;:!?\"'()").lower()
    several = multiword and len(words) > 1 and words[0][-1:] not in ".,;!?"
    if first in (_DESCRIPTIVE_LEAD if several else _DESCRIPTIVE) or (len(first) < 3 and not several):
        return None
    begin = start + rest.index(words[0], offset)
    if several:
        m = _CLAUSE_END.search(text, begin)
        return begin, (m.start() if m else len(text))
    word = words[0].rstrip(".,;:!?)\"'")
    return begin, begin + len(word)


def _random_spans(text: str) -> Iterator[Span]:
    for m in _TOKENISH.finditer(text):
        if looks_generated(m.group(0)):
            yield m.start(), m.end(), "random-token"


def looks_generated(token: str) -> bool:
    """A string with the shape of a generated key: upper and lower case and digits mixed, no long run
    of letters (a word or a CamelCase identifier has them), and high entropy."""
    core = token.strip("=")
    if len(core) < 20 or "://" in core:
        return False
    upper = sum(c.isupper() for c in core)
    lower = sum(c.islower() for c in core)
    digits = sum(c.isdigit() for c in core)
    if min(upper, lower, digits) < 2 or digits > len(core) * 0.8:
        return False
    if max((len(run) for run in re.findall(r"[a-z]+|[A-Z][a-z]+", core)), default=0) > 6:
        return False
    return _entropy(core) >= 4.0


def _entropy(s: str) -> float:
    counts: dict[str, int] = {}
    for c in s:
        counts[c] = counts.get(c, 0) + 1
    return -sum(n / len(s) * math.log2(n / len(s)) for n in counts.values())


def detector_spans(text: str) -> Iterator[Span]:
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
                    if not value or len(value) < 6 or value.startswith("[redacted:"):
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
