"""Project identity: git root, remote URL normalisation, linked worktrees, no git process."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memverbs.server.projects import find_project, normalize_remote


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _repo(path: Path, remote: str | None = None) -> Path:
    path.mkdir(parents=True)
    _git(path, "init", "-q")
    if remote:
        _git(path, "remote", "add", "origin", remote)
    return path


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("git@github.com:Org/App.git", "github.com/org/app"),
        ("https://github.com/org/app", "github.com/org/app"),
        ("https://user:pw@GitHub.com/org/app.git/", "github.com/org/app"),
        ("ssh://git@github.com:22/org/app.git", "github.com/org/app"),
        ("ssh://git@gitlab.example/group/sub/app", "gitlab.example/group/sub/app"),
        ("/srv/git/App.git", "file:/srv/git/App"),
        ("file:///srv/git/App.git", "file:/srv/git/App"),
        ("", None),
        ("not a url", None),
    ],
)
def test_remote_urls_normalise_to_one_key(url: str, key: str | None) -> None:
    assert normalize_remote(url) == key


def test_two_clones_of_one_remote_are_one_project(tmp_path: Path) -> None:
    a = _repo(tmp_path / "work" / "app", "git@github.com:Org/App.git")
    b = _repo(tmp_path / "elsewhere" / "app-copy", "https://github.com/org/app")
    (a / "src" / "deep").mkdir(parents=True)
    pa, pb = find_project(a / "src" / "deep"), find_project(b)
    assert pa is not None and pb is not None
    assert pa.key == pb.key == "github.com/org/app"
    assert pa.slug == pb.slug == "projects/app"
    assert pa.root == str(a.resolve()) and pb.root == str(b.resolve())


def test_a_repository_without_a_remote_is_keyed_by_its_path(tmp_path: Path) -> None:
    root = _repo(tmp_path / "My Notes")
    project = find_project(root)
    assert project is not None
    assert project.key == f"path:{root.resolve()}"
    assert project.slug == "projects/my-notes"


def test_a_linked_worktree_is_its_main_repositorys_project(tmp_path: Path) -> None:
    main = _repo(tmp_path / "main", "git@example.org:team/service.git")
    _git(main, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x")
    _git(main, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "feature")
    project = find_project(tmp_path / "wt")
    assert project is not None
    assert project.key == "example.org/team/service"
    assert project.root == str((tmp_path / "wt").resolve())


def test_outside_any_repository_there_is_no_project(tmp_path: Path) -> None:
    assert find_project(tmp_path) is None
    assert find_project(None) is None
    assert find_project(tmp_path / "missing") is None


def test_origin_wins_over_other_remotes(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r", "https://example.org/a/first")
    _git(root, "remote", "add", "aaa", "https://example.org/a/other")
    project = find_project(root)
    assert project is not None and project.key == "example.org/a/first"
