"""`memverbs import DIR`: real folders, real brain, every bad file accounted for."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vaults import write, yaml_bomb

from memverbs.server.sync.slugs import path_for_slug, slug_for_path


def vault(root):
    write(root / "people" / "Alice Example.md",
          "---\ntitle: Alice Example\naliases: [Ali]\ntags: [team, payments]\ncreated: 2024-01-02\n---\n"
          "Works at [[Acme Corp]] with [[Bob|our Bob]] and [[Nobody Yet]].\n\n## Timeline\n- 2026-11-01: Joined payments\n")
    write(root / "people" / "bob.md", "# Bob\nFriend of [[Ali]].\n")
    write(root / "companies" / "acme.md",
          "---\ntitle: Acme Corp\ntype: company\n---\nA company.\n\n<!-- timeline -->\n- **2024-01-15** | press — Founded\n")
    write(root / "companies" / "globex.md", "---\ntitle: Globex\n---\nAnother.\n\n--- timeline ---\n- **2023-05-06** | memo — Spun out\n")
    write(root / ".obsidian" / "app.json", "{}")
    write(root / "attachments" / "logo.png", b"\x89PNG\r\n")
    return root


def test_slug_rule_is_stable_and_inverts_on_slugs():
    assert slug_for_path("people/alice.md") == "people/alice"
    assert slug_for_path("People/Alice Example.MD") == "people/alice-example"
    assert slug_for_path("Réunions/été 2024.md", "notes") == "notes/reunions/ete-2024"
    assert slug_for_path("_index.md") == "index"
    assert slug_for_path("日本.md") == "日本"  # another script's letters stay (test_names.py)
    emoji = slug_for_path("🎉.md")
    assert emoji.startswith("x-") and emoji == slug_for_path("🎉.md")
    for slug in ("a", "people/alice_b-2", "x/y/z"):
        assert slug_for_path(path_for_slug(slug)) == slug


def test_import_an_obsidian_vault(tmp_path, cli, cli_json, local):
    vault(tmp_path / "v")
    code, rep = cli_json("import", tmp_path / "v")
    assert code == 0, rep
    assert (rep["created"], rep["updated"], rep["unchanged"], rep["errors"]) == (4, 0, 0, 0)
    assert rep["skipped_files"] == [
        {"file": ".obsidian/", "reason": "hidden folder, not content"},
        {"file": "attachments/logo.png", "reason": "not markdown (attachment)"},
    ]
    alice = local.ok("get_page", slug="people/alice-example")
    assert alice["frontmatter"]["tags"] == ["team", "payments"] and alice["frontmatter"]["created"] == "2024-01-02"
    links = {link["to"] for link in alice["links"]}
    # by title, by file name (Obsidian), and a dangling one kept as its link key (the slug its file would have)
    assert links == {"companies/acme", "people/bob", "nobody-yet"}
    assert alice["aliases"] == ["ali"] and alice["timeline"][0]["summary"] == "Joined payments"
    bob = local.ok("get_page", slug="people/bob")
    assert [link["to"] for link in bob["links"]] == ["people/alice-example"]  # by alias
    acme = local.ok("get_page", slug="companies/acme")
    assert acme["timeline"] == [{"date": "2024-01-15", "summary": "press — Founded", "detail": None}]  # reference layout
    assert local.ok("get_page", slug="companies/globex")["timeline"][0]["summary"] == "memo — Spun out"
    card = local.ok("entity", name="Acme Corp")["card"]
    assert {"type": "references", "direction": "in", "slug": "people/alice-example", "context": None} in card["edges"]


def test_dangling_link_resolves_when_its_page_appears(tmp_path, cli, local):
    write(tmp_path / "v" / "a.md", "# A\nSee [[Carol Danvers]].\n")
    assert cli("import", tmp_path / "v")[0] == 0
    assert [link["to"] for link in local.ok("get_page", slug="a")["links"]] == ["carol-danvers"]
    write(tmp_path / "v" / "people" / "carol.md", "---\ntitle: Carol Danvers\n---\nPilot.\n")
    assert cli("import", tmp_path / "v")[0] == 0
    assert [link["to"] for link in local.ok("get_page", slug="a")["links"]] == ["people/carol"]
    assert local.ok("entity", name="Carol Danvers")["card"]["backlink_count"] == 1


def test_reimport_is_idempotent_and_picks_up_changes(tmp_path, cli_json, local):
    root = vault(tmp_path / "v")
    cli_json("import", root)
    _code, rep = cli_json("import", root)
    assert (rep["created"], rep["updated"], rep["unchanged"]) == (0, 0, 4)
    # same bytes, new mtime: hashed, still unchanged
    os.utime(root / "people" / "bob.md", ns=(1, 1))
    assert cli_json("import", root)[1]["unchanged"] == 4
    write(root / "people" / "bob.md", "# Bob\nNow in sales.\n")
    _code, rep = cli_json("import", root)
    assert (rep["updated"], rep["unchanged"]) == (1, 3)
    assert "Now in sales" in local.ok("get_page", slug="people/bob")["body"]


def test_dry_run_writes_nothing(tmp_path, cli_json, local):
    root = vault(tmp_path / "v")
    code, rep = cli_json("import", root, "--dry-run")
    assert code == 0 and rep["dry_run"] and rep["created"] == 4
    assert local.ok("list_pages")["pages"] == []
    code, rep = cli_json("import", root)
    assert rep["created"] == 4  # the dry run recorded no state either


def test_every_bad_file_is_counted_and_the_rest_goes_on(tmp_path, cli_json, local):
    root = tmp_path / "v"
    write(root / "good.md", "# Good\nfine\n")
    write(root / "bad-yaml.md", "---\ntitle: [unclosed\n---\nbody\n")
    write(root / "latin1.md", "caf\xe9\n".encode("latin-1"))
    write(root / "binary.md", b"abc\x00def")
    write(root / "huge.md", "x" * 5000)
    write(root / "locked.md", "# Locked\n")
    os.chmod(root / "locked.md", 0)
    write(root / "people" / "Bob.md", "# Bob one\n")
    write(root / "people" / "bob.md", "# Bob two\n")
    os.symlink(root, root / "people" / "loop")
    os.symlink(root / "missing.md", root / "dangling.md")
    try:
        code, rep = cli_json("import", root, "--max-bytes", "1000")
    finally:
        os.chmod(root / "locked.md", 0o644)
    assert code == 1
    errors = {e["file"]: e["reason"] for e in rep["error_files"]}
    skipped = {e["file"]: e["reason"] for e in rep["skipped_files"]}
    assert "frontmatter is not valid YAML at line" in errors["bad-yaml.md"]
    assert "same slug" in errors["people/bob.md"] and "people/Bob.md" in errors["people/bob.md"]
    assert "not UTF-8" in skipped["latin1.md"] and "NUL" in skipped["binary.md"]
    assert "too large" in skipped["huge.md"]
    assert "symlink, not followed" in skipped["people/loop"] and "symlink, not followed" in skipped["dangling.md"]
    if os.geteuid() != 0:  # root reads anything
        assert "permission denied" in errors["locked.md"]
    assert rep["created"] == (3 if os.geteuid() == 0 else 2)
    assert local.ok("get_page", slug="people/bob")["title"] == "Bob one"  # the first keeps it; no overwrite


def test_a_file_that_vanishes_mid_pass_is_skipped(tmp_path, home):
    from memverbs.server.runtime import Runtime
    from memverbs.server.sync.importer import FolderPass
    from memverbs.server.sync.state import SyncState

    root = tmp_path / "v"
    write(root / "a.md", "# A\n")
    write(root / "b.md", "# B\n")
    rt = Runtime(home)
    try:
        brain = rt.brain()
        folder = SyncState(brain, rt.source).folder(str(root), "", "import")
        fp = FolderPass(rt.local_dispatcher(), brain, rt.source, folder)
        entries = fp.entries()
        os.unlink(root / "b.md")  # gone between the walk and the read
        report = fp.run(entries, follow_deletes=False)
    finally:
        rt.close()
    assert report.counts["created"] == 1 and report.skipped == [("b.md", "vanished while being read")]


def test_prefix_and_bad_arguments(tmp_path, cli, cli_json, local):
    write(tmp_path / "v" / "x.md", "# X\n")
    assert cli_json("import", tmp_path / "v", "--prefix", "notes")[1]["created"] == 1
    assert local.ok("get_page", slug="notes/x")["title"] == "X"
    code, _, err = cli("import", tmp_path / "nope")
    assert code == 1 and "is not a folder" in err and "fix:" in err
    code, _, err = cli("import", tmp_path / "v", "--prefix", "Bad Prefix")
    assert code == 1 and "not a slug prefix" in err


@pytest.mark.parametrize("tty", [False])
def test_plain_progress_when_not_a_tty(tmp_path, cli, tty):
    write(tmp_path / "v" / "x.md", "# X\n")
    code, out, err = cli("import", tmp_path / "v")
    assert code == 0 and "1 created" in out and "\x1b[" not in err


def test_a_progress_bar_on_a_terminal(tmp_path, env, memverbs_cmd):
    import pty
    import subprocess

    for i in range(30):
        write(tmp_path / "v" / f"n{i}.md", f"# N{i}\n")
    import threading

    leader, follower = pty.openpty()
    chunks: list[bytes] = []

    def drain():
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                return  # the terminal closed
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    proc = subprocess.Popen([*memverbs_cmd, "import", str(tmp_path / "v")], env=env, stdout=subprocess.PIPE, stderr=follower)
    os.close(follower)
    out, _ = proc.communicate(timeout=120)
    reader.join(10)
    os.close(leader)
    seen = b"".join(chunks)
    assert proc.returncode == 0 and b"30 created" in out
    assert b"importing" in seen and b"\x1b[" in seen  # rich drew (and cleared) a bar on the terminal


def test_a_world_page_never_links_by_name_to_a_private_page(tmp_path, cli_json, local, remote):
    root = tmp_path / "v"
    write(root / "a-world.md", "# World\nSee [[Secret Plan]] and [[Open Plan]].\n")
    write(root / "b-open.md", "---\ntitle: Open Plan\n---\nopen\n")
    write(root / "secret.md", "---\ntitle: Secret Plan\nvisibility: private\n---\nhush\n")
    write(root / "z-private-note.md", "---\nvisibility: private\n---\n# Note\nSee [[Secret Plan]].\n")
    assert cli_json("import", root)[1]["created"] == 4
    world_links = [link["to"] for link in remote.ok("get_page", slug="a-world")["links"]]
    assert world_links == ["secret-plan", "b-open"]  # adopted the world page, not the private one
    assert [link["to"] for link in local.ok("get_page", slug="z-private-note")["links"]] == ["secret"]
    # and the other way round: re-putting the world page does not resolve to the private page either
    write(root / "a-world.md", "# World\nStill [[Secret Plan]].\n")
    cli_json("import", root)
    assert [link["to"] for link in remote.ok("get_page", slug="a-world")["links"]] == ["secret-plan"]


_names = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"), exclude_characters="/\\\x00"), min_size=1, max_size=12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(files=st.dictionaries(_names.map(lambda n: n.strip(". ") or "x"), st.one_of(st.binary(max_size=200), st.text(max_size=200)), min_size=1, max_size=6))
def test_any_folder_imports_without_a_crash_and_every_file_is_accounted_for(files, tmp_path_factory):
    from helpers import init_home

    from memverbs.server.runtime import Runtime
    from memverbs.server.sync.importer import FolderPass
    from memverbs.server.sync.state import SyncState

    base = tmp_path_factory.mktemp("fuzz")
    root = base / "v"
    root.mkdir()
    for name, content in files.items():
        try:
            write(root / (name + ".md"), content if isinstance(content, bytes) else content.encode("utf-8"))
        except OSError:
            return  # a name this file system refuses (too long in bytes): nothing to import
    rt = Runtime(init_home(base / "h"))
    try:
        brain = rt.brain()
        folder = SyncState(brain, rt.source).folder(str(root), "", "import")
        fp = FolderPass(rt.local_dispatcher(), brain, rt.source, folder)
        report = fp.run(fp.entries(), follow_deletes=False)
        again = fp.run(fp.entries(), follow_deletes=False)
    finally:
        rt.close()
    c = report.counts
    assert c["created"] + c["updated"] + c["unchanged"] + c["skipped"] + c["errors"] == len(files)
    assert not any("unexpected" in why for _, why in report.errors), report.errors
    assert again.counts["created"] == again.counts["updated"] == 0  # idempotent whatever the input
    assert again.counts["unchanged"] == c["created"] + c["updated"] + c["unchanged"]


def test_hostile_frontmatter_is_a_file_error_and_the_rest_imports(tmp_path, cli_json, local):
    root = tmp_path / "v"
    write(root / "bomb.md", yaml_bomb())
    write(root / "deep.md", "---\na: " + "[" * 40 + "]" * 40 + "\n---\nbody\n")
    write(root / "good.md", "# Good\n")
    for command in ("import", "sync"):
        code, rep = cli_json(command, root)
        assert code == 1 and rep["created"] + rep["unchanged"] == 1, rep
        errors = {e["file"]: e["reason"] for e in rep["error_files"]}
        assert "expands to over" in errors["bomb.md"] and "deeper than" in errors["deep.md"]
    assert [p["slug"] for p in local.ok("list_pages")["pages"]] == ["good"]


def test_one_bad_line_in_the_facts_file_is_reported_and_the_rest_imports(tmp_path, cli_json, local):
    good = [{"fact": f"fact number {i}", "provenance": "test", "entity": "people/alice"} for i in range(3)]
    bad = [
        "not json at all",
        '{"fact": "nan", "provenance": "t", "n": NaN}',
        '{"fact": "inf", "provenance": "t", "n": 1e999}',
        '{"fact": "big", "provenance": "t", "n": ' + "9" * 5000 + "}",
        '{"fact": "deep", "provenance": "t", "n": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "[1, 2, 3]",
        '{"fact": 5, "provenance": "t"}',
    ]
    lines = [json.dumps(good[0]), *bad[:4], json.dumps(good[1]), *bad[4:], json.dumps(good[2])]
    write(tmp_path / "v" / "memverbs-facts.jsonl", "\n".join(lines) + "\n")
    code, rep = cli_json("import", tmp_path / "v")
    assert code == 1
    assert rep["facts"]["inserted"] == 3 and rep["facts"]["errors"] == len(bad), rep["facts"]
    bad_lines = sorted(int(e["file"].rsplit(":", 1)[1]) for e in rep["error_files"])
    assert bad_lines == [2, 3, 4, 5, 7, 8, 9]
    assert sorted(f["fact"] for f in local.ok("recall", entity="people/alice")["facts"]) == [g["fact"] for g in good]


def test_a_dry_run_finds_the_errors_the_real_run_finds(tmp_path, cli_json, local):
    root = tmp_path / "v"
    write(root / "good.md", "# Good\nfine\n")
    write(root / "bad-yaml.md", "---\ntitle: [unclosed\n---\nbody\n")
    write(root / "bad-visibility.md", "---\nvisibility: public\n---\nbody\n")
    _code, dry = cli_json("import", root, "--dry-run")
    _code, real = cli_json("import", root)
    assert (dry["created"], dry["errors"]) == (real["created"], real["errors"]) == (1, 2)
    assert dry["error_files"] == real["error_files"]
