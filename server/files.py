"""Replacing a file atomically, and what a symlink on the way means: two named choices, no default.

Every file memverbs writes goes through a temp file in the same directory, fsynced, then renamed
over the old one, so a crash or a reader sees the old bytes or the new ones, never half of each.
What a symlink means depends on who asked, so each caller names its choice:

* `write_through(path, …)` — the installers' choice. A harness config kept in a dotfiles
  repository and linked into place stays a link; its target gets the new bytes. The user made
  that link, for that file, and the installer writes exactly the file the harness reads.
* `replace_inside(root, rel, …)` — folder sync's and export's choice. `rel` is reached from
  `root` one directory at a time, each opened with O_NOFOLLOW, and a symlink at `rel` is refused,
  never replaced and never written through. A notes folder is shared material (a vault cloned
  from elsewhere, a folder an agent writes into): one link in it must not let a page's
  write-back replace a project's AGENTS.md, wherever that is.

Reading a folder's file (`read_inside`) is confined the same way, so import and sync never read
through a link either (`/proc/self/environ`, `~/creds.txt`). Holding directory descriptors while
walking closes the race where a folder is swapped for a link between a check and the open.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from memverbs.server.errors import MemverbsError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO named like a note must not hang the pass; a regular file ignores the flag.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_FOLLOW_FIX = "memverbs never follows a symlink inside a synced or exported folder (`memverbs docs sync`): move the file itself into the folder, or remove the link."


class OutsideFolder(MemverbsError):
    """A path inside a folder leads through a symlink (or out of the folder): refused, nothing read or written."""


def write_through(path: Path, data: bytes, *, mode: int) -> None:
    """Replace `path`'s bytes atomically; if `path` is a symlink (or a chain of them), its target is replaced
    and the link stays. For the installers only: a user's linked config is theirs to have linked."""
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _replace_at(fd, target.name, data, mode)
    finally:
        os.close(fd)


def replace_inside(root: str | os.PathLike[str], rel: str, data: bytes, *, mode: int = 0o644, make_dirs: bool = False) -> None:
    """Replace the file at `rel` below `root` atomically without following any symlink below `root`:
    a link on the way or at `rel` itself raises OutsideFolder. A new file gets `mode`, an existing one
    keeps its own; `make_dirs` creates missing folders on the way (export)."""
    parent, name = open_parent(root, rel, make_dirs=make_dirs)
    try:
        try:
            st = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:
            if stat.S_ISLNK(st.st_mode):
                raise OutsideFolder(f"{rel} is a symlink; memverbs did not replace it or write through it", _FOLLOW_FIX)
            if not stat.S_ISREG(st.st_mode):
                raise OutsideFolder(f"{rel} is not a regular file; memverbs left it untouched", f"Move {rel} aside.")
            mode = st.st_mode & 0o7777
        _replace_at(parent, name, data, mode)  # a link made after the check is replaced, never written through
    finally:
        os.close(parent)


def read_inside(root: str | os.PathLike[str], rel: str, limit: int) -> tuple[bytes, os.stat_result]:
    """Up to `limit` + 1 bytes of the regular file at `rel` below `root`, and its stat, without following
    any symlink below `root` (OutsideFolder). Other OSErrors (missing, permission) are raised as they are."""
    parent, name = open_parent(root, rel)
    try:
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=parent)
        except OSError as exc:
            _refuse_if_link(parent, name, rel, exc)
            raise
    finally:
        os.close(parent)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "is a folder")
            raise OutsideFolder(f"{rel} is not a regular file (a FIFO, socket or device); not read", f"Move {rel} out of the folder.")
        if st.st_size > limit:
            return b"", st
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def stat_inside(root: str | os.PathLike[str], rel: str) -> os.stat_result:
    """The stat of `rel` below `root`, reached without following a link (a link at `rel` is refused too)."""
    parent, name = open_parent(root, rel)
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    finally:
        os.close(parent)
    if stat.S_ISLNK(st.st_mode):
        raise OutsideFolder(f"{rel} is a symlink; not followed", _FOLLOW_FIX)
    return st


def open_dir_inside(root: str | os.PathLike[str], rel: str) -> int:
    """A descriptor of the folder `rel` below `root` ("" for the root itself), reached without following a link."""
    if not rel:
        return os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the root is the user's own choice
    parent, name = open_parent(root, rel)
    try:
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent)
        except OSError as exc:
            _refuse_if_link(parent, name, rel, exc)
            raise
    finally:
        os.close(parent)


def open_parent(root: str | os.PathLike[str], rel: str, *, make_dirs: bool = False) -> tuple[int, str]:
    """A descriptor of `rel`'s folder (the caller closes it) and `rel`'s last name. Each folder on the way
    is opened with O_NOFOLLOW from the one before, so no link below `root` is followed, even one made
    while we walk. The root itself is opened as named: the user chose it (sync keeps its real path)."""
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise OutsideFolder(f"{rel!r} is not a plain path inside the folder", "Name a file below the folder, without '..'.")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    done: list[str] = []
    try:
        for part in parts[:-1]:
            done.append(part)
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not make_dirs:
                    raise
                os.mkdir(part, 0o777, dir_fd=fd)
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                _refuse_if_link(fd, part, "/".join(done), exc)
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]


def _refuse_if_link(dir_fd: int, name: str, rel: str, exc: OSError) -> None:
    """O_NOFOLLOW failed with ELOOP (or ENOTDIR): say it was a link, which is the usual reason."""
    if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return
    try:
        is_link = stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return
    if is_link:
        raise OutsideFolder(f"{rel} is a symlink; not followed", _FOLLOW_FIX) from None


def create_inside(root: str | os.PathLike[str], rel: str, data: bytes, *, mode: int = 0o644) -> None:
    """Create the file `rel` below `root` atomically, making missing folders on the way, without following
    any symlink below `root` (OutsideFolder), and never over anything already there: FileExistsError when
    `rel` exists, even when it appeared a moment ago. The bytes are written to a temp file first and
    linked in under the name (linkat fails rather than replace), so a reader never sees half a file."""
    parent, name = open_parent(root, rel, make_dirs=True)
    try:
        tmp = _write_temp(parent, name, data, mode)
        try:
            os.link(tmp, name, src_dir_fd=parent, dst_dir_fd=parent, follow_symlinks=False)
        finally:
            try:
                os.unlink(tmp, dir_fd=parent)
            except OSError:
                pass
    finally:
        os.close(parent)


def _replace_at(dir_fd: int, name: str, data: bytes, mode: int) -> None:
    """Write `data` to a fresh temp file in `dir_fd`, fsync it, rename it over `name` (which is replaced, never
    written through: rename swaps the directory entry, whatever was there)."""
    tmp = _write_temp(dir_fd, name, data, mode)
    try:
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise


def _write_temp(dir_fd: int, name: str, data: bytes, mode: int) -> str:
    """A fresh, fsynced temp file beside `name` in `dir_fd` holding `data` with `mode`; its name."""
    for n in range(100):
        tmp = f".{name}.{os.getpid()}.{n}.memverbs-tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, f"no free temp name beside {name}")
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise
    os.close(fd)
    return tmp
