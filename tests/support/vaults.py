"""Writing test folders of markdown: real files in a temp dir."""

from __future__ import annotations

import time


def write(path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def yaml_bomb(levels: int = 8) -> str:
    """A page whose frontmatter is a billion-laughs: under 470 bytes, 9**levels values once its aliases are written out."""
    rows = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    names = "abcdefghij"
    for i in range(1, levels):
        rows.append(f"{names[i]}: &{names[i]} [" + ",".join([f"*{names[i - 1]}"] * 9) + "]")
    return "---\n" + "\n".join(rows) + "\n---\nbody\n"


def wait_for(check, what: str, timeout: float = 20.0):
    """Poll `check` until it gives something truthy (returned), or fail naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")
