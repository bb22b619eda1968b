"""Where a server's own words go: stderr, always — on stdio, stdout is the protocol."""

from __future__ import annotations

import sys


def say(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()
