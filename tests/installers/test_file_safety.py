"""Installers never damage a user's files: a symlinked config is written through (the link stays a
link, uninstall gives its target back byte for byte), a dangling link, a directory, an unreadable or
non-UTF-8 file is refused with a fix and left alone, and an empty file comes back empty."""

import json
import os
from pathlib import Path

import pytest
from harnesses import memverbs, require_cli, run, throwaway_home

from memverbs.installers.files import InstallError
from memverbs.installers.json_steps import JsonArrayItem, JsonEntry
from memverbs.installers.steps import Context
from memverbs.installers.text_steps import TomlBlock

USER_CONFIG = 'model = "gpt-5"  # my model\n\n[mcp_servers.other]\ncommand = "echo"\n'
USER_HOOKS = '{\n  "hooks": {\n    "Stop": [{"hooks": [{"type": "command", "command": "echo bye"}]}]\n  }\n}\n'


@pytest.fixture
def codex(tmp_path):
    cli = require_cli("codex")
    env = throwaway_home(tmp_path)
    return cli, env, Path(env["CODEX_HOME"]), tmp_path / "dotfiles"


def refused(proc, *words: str) -> None:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr and "fix:" in proc.stderr, proc.stderr
    for word in words:
        assert word in proc.stderr, proc.stderr


def test_a_symlinked_config_is_written_through_and_given_back(codex):
    cli, env, home, dotfiles = codex
    dotfiles.mkdir()
    (dotfiles / "config.toml").write_text(USER_CONFIG)
    (dotfiles / "hooks.json").write_text(USER_HOOKS)
    for name in ("config.toml", "hooks.json"):
        (home / name).symlink_to(dotfiles / name)

    run([memverbs(), "install", "codex"], env, cwd=home)
    for name in ("config.toml", "hooks.json"):
        assert (home / name).is_symlink() and os.readlink(home / name) == str(dotfiles / name)
    assert "[mcp_servers.memverbs]" in (dotfiles / "config.toml").read_text()
    listed = json.loads(run([cli, "mcp", "list", "--json"], env, cwd=home).stdout)
    assert {s["name"] for s in listed} == {"memverbs", "other"}  # Codex reads it through the link

    run([memverbs(), "uninstall", "codex"], env, cwd=home)
    assert (home / "config.toml").is_symlink() and (home / "hooks.json").is_symlink()
    assert (dotfiles / "config.toml").read_text() == USER_CONFIG
    assert (dotfiles / "hooks.json").read_text() == USER_HOOKS


def test_a_dangling_symlink_is_refused_untouched(codex):
    _cli, env, home, dotfiles = codex
    (home / "config.toml").symlink_to(dotfiles / "config.toml")  # dotfiles not checked out yet
    proc = run([memverbs(), "install", "codex"], env, cwd=home, check=False)
    refused(proc, "symlink", str(dotfiles / "config.toml"))
    assert (home / "config.toml").is_symlink() and not (dotfiles / "config.toml").exists()
    assert not (home / "hooks.json").exists()


def test_a_directory_where_the_config_belongs_is_refused(codex):
    _cli, env, home, _ = codex
    (home / "hooks.json").mkdir()
    proc = run([memverbs(), "install", "codex"], env, cwd=home, check=False)
    refused(proc, "is a directory")
    assert (home / "hooks.json").is_dir() and not (home / "config.toml").exists()


def test_a_file_that_is_not_utf8_is_refused_untouched(codex):
    _cli, env, home, _ = codex
    (home / "config.toml").write_bytes(b'model = "caf\xe9"\n')
    proc = run([memverbs(), "install", "codex"], env, cwd=home, check=False)
    refused(proc, "not UTF-8")
    assert (home / "config.toml").read_bytes() == b'model = "caf\xe9"\n'


def test_empty_files_come_back_empty(codex):
    _cli, env, home, _ = codex
    (home / "config.toml").write_text("")
    (home / "hooks.json").write_text("")
    run([memverbs(), "install", "codex"], env, cwd=home)
    assert "memverbs" in (home / "hooks.json").read_text()
    run([memverbs(), "uninstall", "codex"], env, cwd=home)
    assert (home / "config.toml").read_bytes() == b"" and (home / "hooks.json").read_bytes() == b""


# -- each kind of step, without a harness ---------------------------------------------------


def ours(value):
    return isinstance(value, dict) and value.get("ours") is True


STEPS = {
    "json_entry": (lambda p: JsonEntry(p, ["mcpServers", "memverbs"], {"ours": True}, owned=ours), lambda r, c: JsonEntry.revert(r, c)),
    "json_item": (lambda p: JsonArrayItem(p, ["hooks", "Start"], {"ours": True}, fingerprint=ours), lambda r, c: JsonArrayItem.revert(r, c, ours)),
    "toml_block": (lambda p: TomlBlock(p, {"mcp_servers": {"memverbs": {"command": "m"}}}), lambda r, c: TomlBlock.revert(r, c)),
}


@pytest.mark.parametrize("kind", sorted(STEPS))
@pytest.mark.parametrize("blank", ["", "\n", "  \r\n"])
def test_a_blank_file_is_given_back_as_it_was(tmp_path, kind, blank):
    make, revert = STEPS[kind]
    path = tmp_path / "config"
    path.write_bytes(blank.encode())
    record = make(path).apply(Context(backups=tmp_path / "bk"))
    assert path.read_bytes() != blank.encode()
    revert(record, Context(backups=tmp_path / "bk"))
    assert path.read_bytes() == blank.encode()


@pytest.mark.parametrize("kind", sorted(STEPS))
def test_an_unreadable_file_is_refused_with_a_fix(tmp_path, kind, monkeypatch):
    # Tests run as root here, where chmod 000 does not stop a read: the refusal is driven directly.
    path = tmp_path / "config"
    path.write_text("{}" if kind != "toml_block" else "")
    real_open = Path.open

    def locked_open(self, *args, **kwargs):
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", locked_open)
    with pytest.raises(InstallError) as caught:
        STEPS[kind][0](path).apply(Context(backups=tmp_path / "bk"))
    assert "permission denied" in caught.value.message and "chmod" in caught.value.fix
    monkeypatch.undo()
    assert path.read_text() == ("{}" if kind != "toml_block" else "")


@pytest.mark.parametrize("kind", sorted(STEPS))
def test_each_step_writes_through_a_link_and_reverts_the_target(tmp_path, kind):
    make, revert = STEPS[kind]
    target = tmp_path / "dotfiles" / "config"
    target.parent.mkdir()
    original = "{}\n" if kind != "toml_block" else 'model = "x"\n'
    target.write_text(original)
    link = tmp_path / "config"
    link.symlink_to(target)
    record = make(link).apply(Context(backups=tmp_path / "bk"))
    assert link.is_symlink() and target.read_text() != original
    revert(record, Context(backups=tmp_path / "bk"))
    assert link.is_symlink() and target.read_text() == original
