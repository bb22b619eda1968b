"""Editing a page by hand through the CLI loses nothing: `get-page --raw` gives the stored bytes back,
and writing back the readable `get-page` output keeps visibility, type, aliases and links."""

from __future__ import annotations

import json

from runcli import CliResult, run_cli

PRIVATE_PAGE = (
    "---\r\ntitle: Carol Secret\r\ntype: person\r\naliases: [Caz, \"@carol\"]\r\nvisibility: private\r\n"
    "links: {works_at: companies/acme}\r\n---\r\n# Carol Secret\r\n\r\nNotes — café ☕ \u2028 line.\r\n"
    "<!-- facts -->\r\n- [private] salary talk\r\n<!-- /facts -->\r\n"
)


def run(env, *args, stdin: bytes | None = None) -> CliResult:
    proc = run_cli(*args, env=env, stdin=stdin, text=False)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc


def get(env, slug: str) -> dict:
    return json.loads(run(env, "get-page", slug, "--json").stdout)


def test_raw_round_trips_byte_for_byte(env, tmp_path):
    run(env, "put-page", "people/carol", stdin=PRIVATE_PAGE.encode())
    raw = run(env, "get-page", "people/carol", "--raw").stdout
    assert raw == PRIVATE_PAGE.encode()
    edited = tmp_path / "carol.md"
    edited.write_bytes(raw.replace(b"Notes", b"Edited notes"))
    run(env, "put-page", "people/carol", str(edited))
    assert run(env, "get-page", "people/carol", "--raw").stdout == edited.read_bytes()
    page = get(env, "people/carol")
    assert (page["visibility"], page["type"]) == ("private", "person")


def test_writing_back_the_readable_output_keeps_visibility_type_aliases_and_links(env, tmp_path):
    run(env, "put-page", "people/carol", stdin=PRIVATE_PAGE.encode())
    before = get(env, "people/carol")
    shown = run(env, "get-page", "people/carol").stdout.decode()
    assert shown.startswith("# Carol Secret  (people/carol, person, private)")
    edited = tmp_path / "carol.md"
    edited.write_text(shown.replace("Notes", "Edited notes"), encoding="utf-8")
    run(env, "put-page", "people/carol", str(edited))
    after = get(env, "people/carol")
    for key in ("title", "type", "visibility", "aliases", "links"):
        assert after[key] == before[key], key
    assert "Edited notes" in after["body"] and "(people/carol" not in after["body"]


def test_a_page_without_frontmatter_put_over_a_private_one_stays_private(env):
    run(env, "put-page", "people/carol", stdin=PRIVATE_PAGE.encode())
    run(env, "put-page", "people/carol", stdin=b"# Carol\nJust text.\n")
    assert get(env, "people/carol")["visibility"] == "private"


def test_raw_of_a_missing_page_is_a_clear_error(env):
    proc = run_cli("get-page", "people/nobody", "--raw", env=env)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "people/nobody" in proc.stderr and "fix:" in proc.stderr and "Traceback" not in proc.stderr
