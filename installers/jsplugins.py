"""The JS plugins' shared part: `templates/run-hook.js`, copied into each plugin between markers.

opencode loads every module in its plugin directory as a plugin (and calls each exported
function as one), so a helper module shipped beside `memverbs.js` would itself be run as a
plugin; OpenClaw loads the linked package's entry. So the shared code is not imported: it is
the template, copied verbatim into plugin/opencode/memverbs.js and plugin/openclaw/index.js
between the markers below. tests/installers/test_jsplugins.py fails when a copy drifts;
`python -m memverbs.installers.jsplugins` rewrites both from the template.
"""

from __future__ import annotations

import sys
from importlib.resources import files
from pathlib import Path

BEGIN = "// >>> shared: templates/run-hook.js (python -m memverbs.installers.jsplugins rewrites this copy) >>>"
END = "// <<< shared <<<"
PLUGINS = (("opencode", "memverbs.js"), ("openclaw", "index.js"))


def template() -> str:
    return files("memverbs.templates").joinpath("run-hook.js").read_text(encoding="utf-8")


def plugin_paths() -> list[Path]:
    root = Path(str(files("memverbs.plugin")))
    return [root / folder / name for folder, name in PLUGINS]


def render(text: str, shared: str | None = None) -> str:
    """`text` with its marked block replaced by the template; ValueError when it has no block."""
    begin, end = text.find(BEGIN), text.find(END)
    if begin < 0 or end < begin:
        raise ValueError("the plugin has no shared block (its markers are missing)")
    body = (shared if shared is not None else template()).rstrip("\n")
    return text[: begin + len(BEGIN)] + "\n" + body + "\n" + text[end:]


def main() -> int:
    for path in plugin_paths():
        text = path.read_text(encoding="utf-8")
        synced = render(text)
        if synced != text:
            path.write_text(synced, encoding="utf-8")
            sys.stdout.write(f"rewrote {path}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
