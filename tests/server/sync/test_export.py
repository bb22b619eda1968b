"""`memverbs export DIR`: canonical files, facts as JSONL, private material only when asked."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memverbs.cli.main import main


def files_of(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def seed(local):
    local.ok("put_page", slug="people/alice", content=(
        "---\ntitle: Alice\ntype: person\naliases: [Ali]\ntags: [x]\n---\nRuns payments. See [[companies/acme]].\n\n"
        "<!-- facts -->\n- Likes tea\n- [private] Salary 100k\n<!-- /facts -->\n<!-- takes -->\nSharp.\n<!-- /takes -->\n"
        "\n## Timeline\n- 2026-01-02: Joined\n"))
    local.ok("put_page", slug="companies/acme", content="# Acme\nA company.\n")
    local.ok("put_page", slug="secret/plan", content="---\nvisibility: private\n---\n# Plan\nSecret.\n")
    local.ok("add_alias", slug="people/alice", alias="A. Example")
    local.ok("add_link", **{"from": "people/alice", "to": "companies/acme", "link_type": "works_at"})
    local.ok("add_timeline_entry", slug="people/alice", date="2026-03-04", summary="Promoted")
    local.ok("remember", fact="Alice prefers async standups", provenance="chat 2026-06-12", entity="people/alice", kind="preference")
    local.ok("remember", fact="Alice is job hunting", provenance="chat", entity="people/alice", visibility="private")


def test_export_writes_every_page_and_says_what_private_material_it_left_out(tmp_path, home, local, capsys):
    seed(local)
    assert main(["export", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "private material left out: 1 private page, private rows cut from 1 page, 1 private fact" in out
    files = files_of(tmp_path / "out")
    assert sorted(files) == ["companies/acme.md", "memverbs-facts.jsonl", "people/alice.md"]
    alice = files["people/alice.md"].decode()
    assert alice.startswith(
        "---\ntitle: Alice\ntype: person\naliases: [Ali, A. Example]\ntags: [x]\nlinks:\n  works_at: [companies/acme]\n---\n"
    )  # what was added by hand joins the note's own keys, which keep their order
    assert "Salary" not in alice and "- Likes tea" in alice and "Sharp." in alice
    assert alice.endswith("## Timeline\n- 2026-01-02: Joined\n- 2026-03-04: Promoted\n")  # one Timeline section
    facts = [json.loads(line) for line in files["memverbs-facts.jsonl"].decode().splitlines()]
    assert all(f.pop("valid_from").endswith("Z") for f in facts)  # when each became true (test_backup checks it comes back)
    assert facts == [{"entity": "people/alice", "fact": "Alice prefers async standups", "kind": "preference",
                      "provenance": "chat 2026-06-12", "valid_until": None, "visibility": "world"}]

    assert main(["export", str(tmp_path / "all"), "--include-private"]) == 0
    assert "private material included" in capsys.readouterr().out
    everything = files_of(tmp_path / "all")
    assert "secret/plan.md" in everything and b"Salary 100k" in everything["people/alice.md"]
    assert b"job hunting" in everything["memverbs-facts.jsonl"]


def test_a_link_added_to_a_private_page_is_written_only_with_private_material(tmp_path, home, local):
    seed(local)
    local.ok("add_link", **{"from": "people/alice", "to": "secret/plan", "link_type": "planned_in"})
    local.ok("add_link", **{"from": "people/alice", "to": "people/nobody-yet", "link_type": "knows"})
    assert main(["export", str(tmp_path / "out")]) == 0
    alice = (tmp_path / "out" / "people" / "alice.md").read_text()
    assert "secret/plan" not in alice and "planned_in" not in alice
    assert "works_at: [companies/acme]" in alice and "people/nobody-yet" in alice  # a page not written yet names nothing hidden
    assert main(["export", str(tmp_path / "all"), "--include-private"]) == 0
    assert "secret/plan" in (tmp_path / "all" / "people" / "alice.md").read_text()


def test_export_import_export_is_byte_identical(tmp_path, home, local, monkeypatch, capsys, other_brain_url):
    seed(local)
    assert main(["export", str(tmp_path / "one"), "--include-private"]) == 0
    second = tmp_path / "home2"
    from helpers import init_home

    monkeypatch.setenv("MEMVERBS_HOME", str(second))
    if other_brain_url:
        monkeypatch.setenv("MEMVERBS_BRAIN__URL", other_brain_url)  # the second home's own brain
    init_home(second)
    assert main(["import", str(tmp_path / "one")]) == 0
    assert main(["export", str(tmp_path / "two"), "--include-private"]) == 0
    capsys.readouterr()
    assert files_of(tmp_path / "one") == files_of(tmp_path / "two")


# -- the round trip as a property ---------------------------------------------------------------

_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")) | st.sampled_from("\n-#[]|:*`'\"é日"),
    max_size=60,
)
_slug = st.lists(_word, min_size=1, max_size=3).map("/".join)


@st.composite
def pages(draw):
    out = {}
    for slug in draw(st.lists(_slug, min_size=1, max_size=4, unique=True)):
        fm = {"title": draw(st.one_of(_text.filter(lambda t: t.strip()), st.none()))}
        if draw(st.booleans()):
            fm["type"] = draw(_word)
        if draw(st.booleans()):
            fm["aliases"] = draw(st.lists(_text.filter(lambda t: t.strip()), max_size=3))
        if draw(st.booleans()):
            fm["visibility"] = "private"
        if draw(st.booleans()):
            fm["tags"] = draw(st.lists(_word, max_size=3))
        fm = {k: v for k, v in fm.items() if v is not None}
        body = draw(_text)
        if draw(st.booleans()):
            body += "\n<!-- facts -->\n- " + draw(_text) + "\n- [private] " + draw(_text) + "\n<!-- /facts -->\n"
        if draw(st.booleans()):
            body += f"\n## Timeline\n- 2026-0{draw(st.integers(1, 9))}-1{draw(st.integers(0, 9))}: {draw(_word)}\n"
        if draw(st.booleans()) and out:
            body += f"\nSee [[{draw(st.sampled_from(sorted(out)))}]].\n"
        manual = {}
        if draw(st.booleans()):
            manual["alias"] = draw(_text.filter(lambda t: t.strip()))
        if draw(st.booleans()):
            manual["event"] = (f"2025-1{draw(st.integers(0, 2))}-0{draw(st.integers(1, 9))}", draw(_text.filter(lambda t: t.strip())))
        out[slug] = (fm, body, manual)
    return out


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(generated=pages(), include_private=st.booleans())
def test_round_trip_property(generated, include_private, tmp_path_factory):
    import yaml
    from helpers import Client, init_home

    from memverbs.server.runtime import Runtime
    from memverbs.server.sync.exporter import export_brain
    from memverbs.server.sync.importer import FolderPass
    from memverbs.server.sync.state import SyncState

    base = tmp_path_factory.mktemp("rt")
    first = Runtime(init_home(base / "a"))
    try:
        client = Client(first.local_dispatcher())
        for slug, (fm, body, manual) in generated.items():
            content = ("---\n" + yaml.safe_dump(fm, allow_unicode=True) + "---\n" if fm else "") + body
            _got, is_error = client("put_page", slug=slug, content=content)
            assume(not is_error)  # a page put_page refuses has nothing to round-trip
            if "alias" in manual:
                client("add_alias", slug=slug, alias=manual["alias"])
            if "event" in manual:
                client("add_timeline_entry", slug=slug, date=manual["event"][0], summary=manual["event"][1])
        export_brain(first.brain(), first.source, str(base / "one"), include_private=include_private)
    finally:
        first.close()
    second = Runtime(init_home(base / "b"))
    try:
        brain = second.brain()
        folder = SyncState(brain, second.source).folder(str(base / "one"), "", "import")
        fp = FolderPass(second.local_dispatcher(), brain, second.source, folder)
        report = fp.run(fp.entries(), follow_deletes=False)
        assert report.errors == [], report.errors
        export_brain(brain, second.source, str(base / "two"), include_private=include_private)
    finally:
        second.close()
    assert files_of(base / "one") == files_of(base / "two")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    layout=st.lists(
        st.tuples(st.booleans(), st.booleans(), st.booleans(), st.sampled_from(["world", "private"])), min_size=1, max_size=5
    )
)
def test_without_include_private_no_private_material_leaves(layout, tmp_path_factory):
    """Private pages, private facts-fence rows (and their continuation lines) and private facts never reach the files."""
    from helpers import Client, init_home

    from memverbs.server.runtime import Runtime
    from memverbs.server.sync.exporter import export_brain

    base = tmp_path_factory.mktemp("priv")
    rt = Runtime(init_home(base / "h"))
    try:
        client = Client(rt.local_dispatcher())
        slugs = [f"p/secret-n{i}" if private_page else f"p/n{i}" for i, (private_page, *_rest) in enumerate(layout)]
        for i, (private_page, private_row, continuation, fact_visibility) in enumerate(layout):
            fm = "---\nvisibility: private\n---\n" if private_page else ""
            secret = f"SECRET{i}" if private_page else f"open{i}"
            row = f"- [Private] SECRET-ROW{i}\n" if private_row else f"- open row {i}\n"
            more = f"  SECRET-CONT{i}\n" if private_row and continuation else ""
            client.ok("put_page", slug=slugs[i], content=f"{fm}# N{i}\n{secret}\n<!-- facts -->\n{row}{more}- open tail {i}\n<!-- /facts -->\n")
            client.ok("remember", fact=f"{'SECRET-FACT' if fact_visibility == 'private' else 'open fact'} {i}",
                      provenance="test", entity=slugs[i], visibility=fact_visibility)
        for i, j in ((i, j) for i in range(len(slugs)) for j in range(len(slugs)) if i != j):
            client.ok("add_link", **{"from": slugs[i], "to": slugs[j], "link_type": "knows"})  # the owner's own links
        export_brain(rt.brain(), rt.source, str(base / "out"), include_private=False)
    finally:
        rt.close()
    text = "".join(b.decode() for b in files_of(base / "out").values())
    assert "secret" not in text.lower()  # no private page's text, row or fact, and no link naming one
    assert all(f"open tail {i}" in text for i, (private_page, *_rest) in enumerate(layout) if not private_page)


def test_a_note_is_exported_at_its_own_path_byte_for_byte(tmp_path, home, local, cli_json):
    from vaults import write

    vault = tmp_path / "v"
    note = "---\n# mine\ncreated: 2024-03-01\ntags:\n  - a\n---\nSee [[Command palette]].\r\n"
    write(vault / "Plugins" / "Command palette.md", "\ufeffOpens commands.\n")
    write(vault / "People" / "Alice Example.md", note)
    cli_json("sync", vault)
    local.ok("put_page", slug="born-here", content="# Born in the brain\n")
    assert main(["export", str(tmp_path / "out")]) == 0
    files = files_of(tmp_path / "out")
    assert files["People/Alice Example.md"] == note.encode()
    assert files["Plugins/Command palette.md"] == "\ufeffOpens commands.\n".encode()  # the BOM too
    assert files["born-here.md"] == b"# Born in the brain\n"


def test_attachments_the_notes_embed_are_exported_beside_them(tmp_path, home, local, cli_json):
    from vaults import write

    vault = tmp_path / "v"
    write(vault / "Trips" / "Kyoto.md", "![[temple.jpg]] and ![map](maps/kyoto%20map.png) and [plan](../docs/plan.pdf)\n"
                                        "`![[in-code.png]]`\n![[gone.png]]\n")
    write(vault / "assets" / "temple.jpg", b"\xff\xd8JPEG")  # found by its name, as Obsidian does
    write(vault / "Trips" / "maps" / "kyoto map.png", b"\x89PNG map")
    write(vault / "docs" / "plan.pdf", b"%PDF-1.4")
    write(vault / "docs" / "unrelated.pdf", b"%PDF other")
    write(vault / "in-code.png", b"not embedded")
    assert cli_json("sync", vault, "--prefix", "notes")[0] == 0
    code, rep = cli_json("export", tmp_path / "out")
    assert code == 0, rep
    files = files_of(tmp_path / "out")
    assert files["notes/Trips/Kyoto.md"].startswith(b"![[temple.jpg]]")
    assert files["notes/assets/temple.jpg"] == b"\xff\xd8JPEG"
    assert files["notes/Trips/maps/kyoto map.png"] == b"\x89PNG map"
    assert files["notes/docs/plan.pdf"] == b"%PDF-1.4"
    assert "notes/docs/unrelated.pdf" not in files and "notes/in-code.png" not in files
    assert rep["attachments"] == 3 and rep["attachments_missing"] == [{"note": "notes/Trips/Kyoto.md", "target": "gone.png"}]
    # the folder is gone: the notes still export, the attachments are reported, never invented
    import shutil

    shutil.rmtree(vault)
    code, rep = cli_json("export", tmp_path / "out2")
    assert code == 0 and rep["attachments"] == 0 and len(rep["attachments_missing"]) == 4
