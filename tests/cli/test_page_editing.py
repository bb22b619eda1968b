"""Editing a page by hand through the CLI loses nothing: `get-page --raw` gives the stored bytes back,
and writing back the readable `get-page` output keeps visibility, type, aliases and links."""

from __future__ import annotations

import json
import subprocess

PRIVATE_PAGE = (
    "---\r\ntitle: Carol Secret\r\ntype: person\r\naliases: [Caz, \"@carol\"]\r\nvisibility: private\r\n"
    "links: {works_at: companies/acme}\r\n---\r\n# Carol Secret\r\n\r\nNotes — café ☕ \u2028 line.\r\n"
    "<!-- facts -->\r\n- [private] salary talk\r\n<!-- /facts -->\r\n"
)


def run(cmd, env, *args, input: bytes | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([*cmd, *args], env=env, input=input, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc


def get(cmd, env, slug: str) -> dict:
    return json.loads(run(cmd, env, "get-page", slug, "--json").stdout)


def test_raw_round_trips_byte_for_byte(memverbs_cmd, env, tmp_path):
    run(memverbs_cmd, env, "put-page", "people/carol", input=PRIVATE_PAGE.encode())
    raw = run(memverbs_cmd, env, "get-page", "people/carol", "--raw").stdout
    assert raw == PRIVATE_PAGE.encode()
    edited = tmp_path / "carol.md"
    edited.write_bytes(raw.replace(b"Notes", b"Edited notes"))
    run(memverbs_cmd, env, "put-page", "people/carol", str(edited))
    assert run(memverbs_cmd, env, "get-page", "people/carol", "--raw").stdout == edited.read_bytes()
    page = get(memverbs_cmd, env, "people/carol")
    assert (page["visibility"], page["type"]) == ("private", "person")


def test_writing_back_the_readable_output_keeps_visibility_type_aliases_and_links(memverbs_cmd, env, tmp_path):
    run(memverbs_cmd, env, "put-page", "people/carol", input=PRIVATE_PAGE.encode())
    before = get(memverbs_cmd, env, "people/carol")
    shown = run(memverbs_cmd, env, "get-page", "people/carol").stdout.decode()
    assert shown.startswith("# Carol Secret  (people/carol, person, private)")
    edited = tmp_path / "carol.md"
    edited.write_text(shown.replace("Notes", "Edited notes"), encoding="utf-8")
    run(memverbs_cmd, env, "put-page", "people/carol", str(edited))
    after = get(memverbs_cmd, env, "people/carol")
    for key in ("title", "type", "visibility", "aliases", "links"):
        assert after[key] == before[key], key
    assert "Edited notes" in after["body"] and "(people/carol" not in after["body"]


def test_a_page_without_frontmatter_put_over_a_private_one_stays_private(memverbs_cmd, env):
    run(memverbs_cmd, env, "put-page", "people/carol", input=PRIVATE_PAGE.encode())
    run(memverbs_cmd, env, "put-page", "people/carol", input=b"# Carol\nJust text.\n")
    assert get(memverbs_cmd, env, "people/carol")["visibility"] == "private"


def test_raw_of_a_missing_page_is_a_clear_error(memverbs_cmd, env):
    proc = subprocess.run([*memverbs_cmd, "get-page", "people/nobody", "--raw"], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "people/nobody" in proc.stderr and "fix:" in proc.stderr and "Traceback" not in proc.stderr
