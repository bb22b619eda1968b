"""Projects: which repository a session runs in, and the entity its memory hangs off.

A project is a git working tree, found by walking up from a directory to the first `.git`
(a folder, or the file a linked worktree or submodule has). Its identity is the normalised
URL of its `origin` remote when there is one, so two clones of one remote are one project;
otherwise the resolved path of its root. Its entity slug is `projects/<name>`, the name being
the remote's last path segment (or the root folder's name), slugified.

Read from the files alone, never by running `git`: the hook path pays for every millisecond,
and a user's `git` may be slow, absent or configured to run hooks of its own.

`Project.slug` is the slug a project asks for. A brain keeps the slug each project key got the
first time something was remembered in it (the `projects` table): two different repositories
both called `app` become `projects/app` and `projects/app-2`, in order of arrival, and keep
those slugs. `brain_slug` answers a project's slug in a brain; every writer and reader goes
through it, so a fact, the pack and `memverbs projects` agree.
"""

from __future__ import annotations

import os
import re

from memverbs.server.names import slugify
from memverbs.server.record import Frozen

TYPE_CHECKING = False  # typing's flag, without importing typing on a hook's start

if TYPE_CHECKING:
    from memverbs.server.brain.base import Brain

PROJECT_PREFIX = "projects/"
_MAX_WALK = 64  # directory levels; a deeper path is not a place anyone keeps a repository
_MAX_CONFIG_BYTES = 256 * 1024

_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*$')
_URL_LINE = re.compile(r"^\s*url\s*=\s*(.*?)\s*$", re.IGNORECASE)
_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$")


class Project(Frozen):
    """`key` is the identity (normalised remote URL or `path:<root>`); `slug` the project's entity."""

    __slots__ = ("key", "name", "root", "slug")
    root: str
    key: str
    name: str
    slug: str

    def __init__(self, *, root: str, key: str, name: str, slug: str) -> None:
        super().__init__(root=root, key=key, name=name, slug=slug)


def find_project(start: str | os.PathLike[str] | None) -> Project | None:
    """The project `start` lies in, or None outside any git working tree (or on any read error)."""
    if not start:
        return None
    try:
        here = os.path.realpath(os.fspath(start))
    except (OSError, ValueError):
        return None
    for _ in range(_MAX_WALK):
        dot_git = os.path.join(here, ".git")
        if os.path.isdir(dot_git) or os.path.isfile(dot_git):
            return _project_at(here, dot_git)
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    return None


def normalize_remote(url: str) -> str | None:
    """`git@github.com:Org/App.git`, `https://user@github.com/org/app/` → `github.com/org/app`.

    Host and path are lowercased: the hosts people share code on treat them case-blind, and a
    clone made with other capitals is the same project. Local paths and `file://` URLs keep
    their case (a file system may not fold it).
    """
    text = url.strip()
    if not text:
        return None
    if text.startswith(("file://", "/", ".")):
        path = text.removeprefix("file://").rstrip("/").removesuffix(".git")
        return f"file:{os.path.normpath(path)}" if path else None
    if "://" in text:
        rest = text.split("://", 1)[1]
        host, _, path = rest.partition("/")
        host = host.rsplit("@", 1)[-1]
        host = re.sub(r":\d+$", "", host)  # ssh://host:22/ and https://host:443/ are the same repository
    else:
        scp = _SCP_LIKE.match(text)
        if not scp:
            return None
        host, path = scp.group(1), scp.group(2)
    path = path.strip("/").removesuffix(".git").strip("/")
    if not host or not path:
        return None
    return f"{host}/{path}".lower()


def _project_at(root: str, dot_git: str) -> Project:
    remote = _origin_url(_common_git_dir(dot_git))
    key = normalize_remote(remote) if remote else None
    name_source = key.rsplit("/", 1)[-1] if key else os.path.basename(root)
    name = slugify(name_source) or "project"
    return Project(root=root, key=key or f"path:{root}", name=name, slug=PROJECT_PREFIX + name)


def _common_git_dir(dot_git: str) -> str:
    """The folder that holds `config`: `.git` itself, or for a linked worktree its main repository's."""
    if os.path.isdir(dot_git):
        return dot_git
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as f:
            first = f.readline(4096).strip()
    except OSError:
        return dot_git
    if not first.startswith("gitdir:"):
        return dot_git
    git_dir = first.removeprefix("gitdir:").strip()
    if not os.path.isabs(git_dir):
        git_dir = os.path.normpath(os.path.join(os.path.dirname(dot_git), git_dir))
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8", errors="replace") as f:
            common = f.readline(4096).strip()
    except OSError:
        return git_dir  # a submodule: its own git dir holds its own config
    return os.path.normpath(os.path.join(git_dir, common)) if common else git_dir


def _origin_url(git_dir: str) -> str | None:
    """The `origin` remote's URL, else the first remote's, from the repository's `config` file."""
    try:
        with open(os.path.join(git_dir, "config"), encoding="utf-8", errors="replace") as f:
            text = f.read(_MAX_CONFIG_BYTES)
    except OSError:
        return None
    urls: dict[str, str] = {}
    section: tuple[str, str | None] | None = None
    for line in text.splitlines():
        head = _SECTION.match(line)
        if head:
            section = (head.group(1).lower(), head.group(2))
            continue
        if section and section[0] == "remote" and section[1] is not None:
            m = _URL_LINE.match(line)
            if m and section[1] not in urls:
                urls[section[1]] = m.group(1).strip('"')
    if "origin" in urls:
        return urls["origin"]
    return next(iter(urls.values()), None)


def here() -> Project | None:
    """The project this process runs in (its working directory): the CLI's and the inspector's, so what
    they remember is that project's, as an agent's would be."""
    try:
        return find_project(os.getcwd())
    except OSError:  # the working directory was removed under us
        return None


def brain_slug(brain: Brain, source: str, project: Project, *, register: bool = False, now: int = 0) -> str:
    """The project's slug in this brain: the one its key was given, else the one it would get.

    `register` records the key (a write, once per project; later calls only refresh its root):
    what is remembered in a project registers it. A read never writes: an unregistered
    project's slug is its own unless another project's key holds it.
    """
    if register:
        return brain.register_project(source, project.key, project.name, project.slug, project.root, now)
    row = brain.project_row(source, project.key)
    if row is not None:
        return str(row["slug"])
    candidate, n = project.slug, 1
    while brain.slug_taken(source, candidate) and n < 100:
        n += 1
        candidate = f"{project.slug}-{n}"
    return candidate
