"""The git operations of the worktree subsystem.

Every command is an explicit argument vector (no shell, no keyword magic) run in
`git_environment()`: the repository is the working directory, never an argument, and the only
other arguments are ones this package built or validated (its own paths, `kanban/task-<id>`, hex
shas, checked ref names). Commits the board makes for bookkeeping skip the repository's
pre-commit hooks and commit signing, and fall back to a `kanban` identity when the repository
has none configured.

git is started through `subprocess` only (gitpython is not used), whose environment can leave
out a caller's GIT_DIR and GIT_WORK_TREE (gitpython's could only add to the process's).
"""

import contextlib
import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Generator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from ..errors import BoardError, Reason
from ..processes import kill_group
from .results import DiffStat, FileStat, GitFailure, name_files
from .sor import SOR_FILES, SOR_READ_LIMIT

FALLBACK_IDENTITY = ("kanban", "kanban@localhost")
DIFF_LIMIT = 2 * 1024 * 1024  # bytes of unified diff returned to a reader
DIFF_TIMEOUT_S = 30.0  # a diff that takes longer is killed and reported, never waited on

# Exclude the SoR bookkeeping files at the worktree's top level (a docs/TASK.md is real work).
SOR_EXCLUDES: tuple[str, ...] = (":(top)", *(f":(top,exclude,literal){name}" for name in SOR_FILES))

# Variables that point git at another repository than the folder it runs in. A caller's (a
# `kanban task land` run from a git hook inherits the hook's GIT_DIR) are never passed on: the
# scratch checkout's `git init` re-initialised the user's repository, and later runs read it.
GIT_LOCATION_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_PREFIX",
    "GIT_NAMESPACE",
)


def git_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of every git this package runs: the process's without
    `GIT_LOCATION_VARIABLES`, git's messages in English (some are read), no credential prompt,
    then `extra` (a temporary index, an identity)."""
    env = {key: value for key, value in os.environ.items() if key not in GIT_LOCATION_VARIABLES}
    env.update(LANGUAGE="C", LC_ALL="C", GIT_TERMINAL_PROMPT="0")
    env.update(extra or {})
    return env


_HEX = re.compile(r"[0-9a-f]{4,64}")
_NO_COMMIT_CHECKED_OUT = re.compile(r"error: '(.+?)/?' does not have a commit checked out")


def run(
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    check: bool = True,
) -> tuple[int, bytes, str]:
    """Run `git <args>` in `cwd`; returns (status, stdout bytes, stderr). Raises `GitFailure` on a
    non-zero exit when `check`.

    A `cwd` removed under us (a worktree landed or cleaned up while a reader looked at it) is a
    `GitFailure` whatever `check` says. git run in the *process's* folder when `cwd` is not
    there would answer for the operator's own checkout (gitpython did); `-C` makes git itself
    refuse in that race."""
    if not cwd.is_dir():
        raise folder_gone(cwd, args)
    try:
        done = subprocess.run(
            ["git", "-C", str(cwd), *args],
            cwd=cwd,
            env=git_environment(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
    except FileNotFoundError as error:  # removed between the look and the start
        if cwd.is_dir():
            raise  # git itself is missing: the environment, said as such
        raise folder_gone(cwd, args) from error
    stderr = done.stderr.decode("utf-8", errors="replace").removesuffix("\n")
    if check and done.returncode != 0:
        raise GitFailure(list(args), done.returncode, stderr)
    return done.returncode, done.stdout, stderr


def records(cwd: Path, *args: str, separator: bytes) -> Generator[bytes, None, None]:
    """`git <args>`'s stdout record by record (each ended by `separator`) as git writes them: a
    reader that stops early (closing the iterator) has git killed, so git reads no further than
    the reader needed. `GitFailure` on a non-zero exit, once every record before it was read."""
    if not cwd.is_dir():
        raise folder_gone(cwd, args)
    with tempfile.TemporaryFile() as errors:
        try:
            process = subprocess.Popen(
                ["git", "-C", str(cwd), *args], cwd=cwd, env=git_environment(),
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors,
                start_new_session=True,
            )  # fmt: skip
        except FileNotFoundError as error:  # as in `run`
            if cwd.is_dir():
                raise
            raise folder_gone(cwd, args) from error
        try:
            assert process.stdout is not None
            pending = b""
            while chunk := os.read(process.stdout.fileno(), 1 << 16):
                *done, pending = (pending + chunk).split(separator)
                yield from done
            status = process.wait()
        finally:
            kill_group(process)
            process.stdout.close()  # type: ignore[union-attr]
            process.wait()
        if status != 0:
            errors.seek(0)
            stderr = errors.read()[-4000:].decode(errors="replace").removesuffix("\n")
            raise GitFailure(list(args), status, stderr)


def folder_gone(cwd: Path, args: Sequence[str]) -> GitFailure:
    """The refusal for git asked to run in a folder that was removed (see `run`)."""
    return GitFailure(list(args), None, f"{cwd} is not there any more")


def output(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return run(cwd, *args, env=env)[1].decode("utf-8", errors="replace").strip()


# -- the user's repository -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RepoInfo:
    root: Path  # the top level of the work tree, symlinks resolved
    git_dir: Path


def open_repo(path: Path) -> RepoInfo | None:
    """The work tree containing `path`, or None when it is not inside a non-bare git work tree.
    Asked of git through `run`, as every other git run here: gitpython obeyed a caller's
    GIT_DIR and GIT_WORK_TREE, so a provision from a git hook took the hook's repository for
    the one it was given, while every git after it worked on the given one."""
    try:
        status, out, _ = run(
            path, "rev-parse", "--show-toplevel", "--absolute-git-dir", check=False
        )
    except (GitFailure, OSError):  # not a folder (gone, a file, a name it cannot hold)
        return None
    lines = [os.fsdecode(line) for line in out.splitlines()]
    if status != 0 or len(lines) != 2 or not all(lines):  # a bare repository has no top level
        return None
    root, folder = (Path(os.path.realpath(line)) for line in lines)
    return RepoInfo(root=root, git_dir=folder)


def ref_name_is_valid(repo: Path, ref: str) -> bool:
    """git's own verdict on a ref name (`git check-ref-format --allow-onelevel`)."""
    return run(repo, "check-ref-format", "--allow-onelevel", ref, check=False)[0] == 0


def resolve_commit(repo: Path, rev: str) -> str | None:
    """The full sha of the commit `rev` names, or None."""
    status, stdout, _ = run(
        repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}",
        check=False,
    )  # fmt: skip
    sha = stdout.decode(errors="replace").strip()
    return sha if status == 0 and _HEX.fullmatch(sha) else None


def branch_head(repo: Path, branch: str) -> str | None:
    return resolve_commit(repo, f"refs/heads/{branch}")


def delete_branch(repo: Path, branch: str) -> None:
    if branch_head(repo, branch) is not None:
        run(repo, "branch", "-D", "--", branch)


@dataclass(frozen=True, slots=True)
class WorktreeEntry:
    path: str
    branch: str | None
    prunable: bool


def worktrees(repo: Path) -> list[WorktreeEntry]:
    """`git worktree list --porcelain`, parsed."""
    entries: list[WorktreeEntry] = []
    text = run(repo, "worktree", "list", "--porcelain")[1].decode("utf-8", errors="replace")
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, _, value = line.partition(" ")
            fields[key] = value
        if "worktree" in fields:
            ref = fields.get("branch")
            entries.append(
                WorktreeEntry(
                    path=os.path.realpath(fields["worktree"]),
                    branch=ref.removeprefix("refs/heads/") if ref else None,
                    prunable="prunable" in fields,
                )
            )
    return entries


def registered(repo: Path, path: Path) -> WorktreeEntry | None:
    wanted = os.path.realpath(path)
    return next((entry for entry in worktrees(repo) if entry.path == wanted), None)


def add_worktree(repo: Path, path: Path, branch: str, *, start: str | None) -> None:
    """A checkout of `branch` at `path`; with `start`, the branch is created there first. A
    whole one: git copies the user's sparse-checkout patterns into a new worktree, and in a
    sparse task worktree an agent's edit outside them would be shown as a change but never
    land, and a new file there would make every snapshot fail."""
    if start is not None:
        run(repo, "worktree", "add", "-b", branch, "--", str(path), start)
    else:
        run(repo, "worktree", "add", "--", str(path), branch)
    if config_value(path, "core.sparseCheckout") == "true":
        run(path, "sparse-checkout", "disable")


def remove_worktree(repo: Path, path: Path) -> None:
    """Unregister and delete a checkout (untracked files included; commit first to keep them)."""
    if registered(repo, path) is not None:
        run(repo, "worktree", "remove", "--force", "--force", "--", str(path))
    prune(repo)


def prune(repo: Path) -> None:
    run(repo, "worktree", "prune")


# -- inside a worktree -----------------------------------------------------------------------------


def head(worktree: Path) -> str:
    return output(worktree, "rev-parse", "--verify", "HEAD")


def current_branch(worktree: Path) -> str | None:
    """The branch checked out in a worktree, or None when HEAD is detached."""
    status, stdout, _ = run(worktree, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    return stdout.decode(errors="replace").strip() if status == 0 else None


def has_uncommitted(worktree: Path, *, besides: Collection[str] = ()) -> bool:
    """git's "dirty": a change to a tracked file, or an untracked file that is not ignored, but
    for the paths `besides` (the board's own bookkeeping files, which it writes itself). Takes
    no optional lock, so it never collides with an agent's own git commands."""
    raw = run(
        worktree, "--no-optional-locks", "status", "--porcelain", "-z", "--untracked-files=all"
    )[1]
    entries = iter(raw.split(b"\0"))
    skip = {name.encode() for name in besides}
    for entry in entries:
        if not entry:
            continue
        if b"R" in entry[:2] or b"C" in entry[:2]:  # a rename or copy: its source follows
            next(entries, None)
        if entry[3:] not in skip:
            return True
    return False


def untracked_files(worktree: Path) -> set[bytes]:
    """The untracked files git does not ignore (what a snapshot of the worktree takes in), as
    git names them (bytes: a name need not be UTF-8). A repository inside ends in `/`."""
    _, listed, _ = run(
        worktree, "--no-optional-locks", "ls-files", "-z", "--others", "--exclude-standard"
    )
    return {name for name in listed.split(b"\0") if name}


def remove_created(worktree: Path, before: set[bytes]) -> list[str]:
    """Delete the untracked files that appeared since `before` was read (`untracked_files`), and
    the folders they leave empty; a repository made inside is left alone. Returns their names."""
    created = sorted(name for name in untracked_files(worktree) - before if not name.endswith(b"/"))
    top = os.fsencode(worktree)
    folders: set[bytes] = set()
    for name in created:
        path = os.path.join(top, name)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        parent = os.path.dirname(name)
        while parent:
            folders.add(parent)
            parent = os.path.dirname(parent)
    for folder in sorted(folders, key=len, reverse=True):  # the deepest first
        with contextlib.suppress(OSError):  # not empty (it holds other files): kept
            os.rmdir(os.path.join(top, folder))
    return [_name(name) for name in created]


def read_blob(repo: Path, commit: str, name: str, *, limit: int = SOR_READ_LIMIT) -> str | None:
    """One top-level file of a commit (for the SoR files of a paused worktree), or None."""
    assert _HEX.fullmatch(commit) and "/" not in name and not name.startswith("-")
    status, stdout, _ = run(repo, "cat-file", "blob", f"{commit}:{name}", check=False)
    if status != 0:
        return None
    return blob_text(stdout, limit=limit)


def read_blobs(repo: Path, commit: str, names: Sequence[str]) -> dict[str, str]:
    """`read_blob` of each of `names` that the commit holds as a file, from one `cat-file --batch`
    (the SoR files of a paused worktree: one git run, not one per file)."""
    assert _HEX.fullmatch(commit)
    for name in names:
        assert "/" not in name and "\n" not in name and not name.startswith("-"), name
    asked = "".join(f"{commit}:{name}\n" for name in names).encode()
    if not repo.is_dir():
        raise folder_gone(repo, ["cat-file", "--batch"])
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), "cat-file", "--batch"], cwd=repo, input=asked,
            capture_output=True, timeout=DIFF_TIMEOUT_S, check=False, env=git_environment(),
        )  # fmt: skip
    except FileNotFoundError as error:
        if repo.is_dir():
            raise
        raise folder_gone(repo, ["cat-file", "--batch"]) from error
    if done.returncode != 0:
        return {}  # as `read_blob` says of a file it cannot read: none
    found: dict[str, str] = {}
    out, at = done.stdout, 0
    for name in names:  # `<sha> <type> <size>` and the bytes, or `<name> missing`
        end = out.find(b"\n", at)
        if end < 0:
            break
        header, at = out[at:end].decode("utf-8", errors="replace").rsplit(" ", 2), end + 1
        if len(header) == 3 and _HEX.fullmatch(header[0]) and header[2].isdigit():
            size = int(header[2])
            if header[1] == "blob":
                found[name] = blob_text(out[at : at + size])
            at += size + 1
    return found


def blob_text(data: bytes, *, limit: int = SOR_READ_LIMIT) -> str:
    """A file's bytes as `read_blob` gives them: text, truncated at `limit` bytes (said so)."""
    text = data[:limit].decode("utf-8", errors="replace")
    if len(data) > limit:
        text += f"\n[... truncated at {limit} bytes]\n"
    return text


def config_value(repo: Path, key: str) -> str | None:
    """A git config value as the repository sees it (`git config --get`), or None when unset."""
    assert re.fullmatch(r"[A-Za-z][A-Za-z0-9-]*\.[A-Za-z][A-Za-z0-9.-]*", key)
    status, stdout, _ = run(repo, "config", "--get", key, check=False)
    value = stdout.decode("utf-8", errors="replace").strip()
    return value if status == 0 and value else None


def _identity(worktree: Path) -> list[str]:
    """`-c` options for a commit: no signing, and an identity when the repository has none."""
    options = ["-c", "commit.gpgsign=false"]
    found: dict[str, str] = {}  # both read by one git run; the last value of each counts
    listed = run(worktree, "config", "-z", "--get-regexp", r"^user\.(name|email)$", check=False)
    for record in listed[1].split(b"\0"):
        key, _, value = _name(record).partition("\n")
        found[key.lower()] = value.strip()
    if not found.get("user.name"):
        options += ["-c", f"user.name={FALLBACK_IDENTITY[0]}"]
    if not found.get("user.email"):
        options += ["-c", f"user.email={FALLBACK_IDENTITY[1]}"]
    return options


def unmerged_files(path: Path) -> list[str]:
    """The paths the checkout's index holds in conflict (a merge or rebase stopped on them)."""
    raw = run(path, "diff", "--name-only", "--diff-filter=U", "-z")[1]
    return [_name(part) for part in raw.split(b"\0") if part]


def git_dir(path: Path) -> Path:
    """A checkout's own git folder (where a merge or rebase under way is recorded): its `.git`
    folder, or the one its `.git` file names, read without running git; `rev-parse` when
    neither is plainly there (git runs here without a caller's GIT_DIR: `git_environment`)."""
    dot = path / ".git"
    if not dot.is_symlink():
        if dot.is_dir():
            return dot.absolute()
        with contextlib.suppress(OSError, UnicodeDecodeError):
            text = dot.read_text(encoding="utf-8") if dot.is_file() else ""
            if text.startswith("gitdir: ") and text.count("\n") <= 1:
                folder = path / text.removeprefix("gitdir: ").strip()
                if folder.is_dir():
                    return folder.absolute()
    return Path(output(path, "rev-parse", "--absolute-git-dir"))


def _plain_git_dirs(path: Path) -> tuple[Path, Path] | None:
    """A checkout's own git folder and its repository's common one, read without running git
    (None when they are not plainly there)."""
    dot = path / ".git"
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if dot.is_dir():
            return dot, dot
        text = dot.read_text(encoding="utf-8")
        if not text.startswith("gitdir: "):
            return None
        own = path / text.removeprefix("gitdir: ").strip()
        common = own / "commondir"
        return own, (own / common.read_text(encoding="utf-8").strip() if common.is_file() else own)
    return None


@functools.cache
def _system_config_folders() -> tuple[Path, ...]:
    """Where git may read its system-wide config and attributes: /etc, and the `etc` beside the
    installation git runs from (a git built with another prefix reads `<prefix>/etc`)."""
    found = shutil.which("git")
    folders = [Path("/etc")]
    if found is not None:
        folders.append(Path(found).resolve().parent.parent / "etc")
    return tuple(dict.fromkeys(folders))


def config_stamp(checkout: Path) -> str:
    """A token that changes whenever a setting git reads in `checkout` may have changed, read
    without running git: the identity (inode, size, mtime) of each file git reads config or
    attributes from (system, global, the repository's and the worktree's config; info/attributes,
    the checkout's top `.gitattributes`) and the `GIT_CONFIG*` variables. What a diff or a
    snapshot says depends on them (`core.autocrlf`, an `eol` attribute, `diff.algorithm`), so a
    read kept across a change of one would show what git no longer says. Not followed: files an
    `include.path` or `core.attributesFile` names, a `.gitattributes` below the top."""
    home = Path(os.environ.get("HOME", "~")).expanduser()
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "git"
    files: list[Path] = [xdg / "attributes", checkout / ".gitattributes"]
    if os.environ.get("GIT_CONFIG_GLOBAL") is not None:
        files.append(Path(os.environ["GIT_CONFIG_GLOBAL"]))
    else:
        files += [home / ".gitconfig", xdg / "config"]
    if os.environ.get("GIT_CONFIG_SYSTEM") is not None:
        files.append(Path(os.environ["GIT_CONFIG_SYSTEM"]))
    for folder in _system_config_folders():
        files.append(folder / "gitattributes")
        if not os.environ.get("GIT_CONFIG_NOSYSTEM") and "GIT_CONFIG_SYSTEM" not in os.environ:
            files.append(folder / "gitconfig")
    folders = _plain_git_dirs(checkout)
    if folders is not None:
        own, common = folders
        files += [common / "config", own / "config.worktree", common / "info" / "attributes"]
    parts = [f"{key}={value}" for key, value in sorted(os.environ.items()) if "GIT_CONFIG" in key]
    parts.append("" if folders is not None else "no git folder")
    for file in files:
        try:
            info = os.stat(file)
        except OSError:
            parts.append(f"{file}:-")
            continue
        parts.append(f"{file}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}")
    return hashlib.sha1("\n".join(parts).encode(errors="replace")).hexdigest()


def operation_in_progress(path: Path) -> str | None:
    """`merge` or `rebase` when one is under way in the checkout, else None."""
    folder = git_dir(path)
    if (folder / "MERGE_HEAD").exists():
        return "merge"
    if (folder / "rebase-merge").exists() or (folder / "rebase-apply").exists():
        return "rebase"
    return None


# git's own markers (7 wide unless an attribute says otherwise), at the start of a line; a
# conflicted file is searched up to MARKER_SCAN_BYTES (git would not merge a larger text file)
MARKER_SCAN_BYTES = 64 * 1024 * 1024
_CONFLICT_MARKER = re.compile(rb"^(?:<{7}|>{7})(?: |\r?$)", re.MULTILINE)


def still_conflicted(path: Path) -> list[str]:
    """The conflicted paths whose file still holds git's conflict markers: not yet resolved. A
    conflicted file edited clean (or deleted) counts as resolved, as `git add` would take it."""
    left = []
    for name in unmerged_files(path):
        try:
            with open(path / name, "rb") as file:
                text = file.read(MARKER_SCAN_BYTES)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            continue
        if _CONFLICT_MARKER.search(text):
            left.append(name)
    return left


def add_all(
    worktree: Path,
    *config: str,
    env: dict[str, str] | None = None,
    leave_out: Sequence[str] = (),
) -> None:
    """`git add --all`, but for the top-level paths `leave_out` (left as the index has them). A
    git repository made inside the worktree with no commit yet is the agent's to fix, not git
    failing: git cannot stage it, so it is refused naming it."""
    paths = [f":(top,exclude,literal){name}" for name in leave_out]
    if paths:
        paths = ["--", ":/", *paths]
    try:
        run(worktree, *config, "add", "--all", *paths, env=env)
    except GitFailure as failure:
        names = _NO_COMMIT_CHECKED_OUT.findall(failure.stderr)
        if not names:
            raise
        what = "is a git repository" if len(names) == 1 else "are git repositories"
        raise BoardError(
            Reason.INVALID_STATE,
            f"{name_files(names)} in the worktree {what} of its own with no commit, which git "
            "cannot stage; remove its `.git` to deliver its files, or commit in it and add it "
            "with `git submodule add`",
            why="embedded_repository",
            files=names,
            path=str(worktree),
        ) from None


def commit_all(worktree: Path, message: str) -> str | None:
    """Stage everything (ignored files stay ignored) and commit it; the new sha, or None when there
    was nothing to commit."""
    add_all(worktree)
    if run(worktree, "diff", "--cached", "--quiet", check=False)[0] == 0:
        return None
    run(worktree, *_identity(worktree), "commit", "--no-verify", "--quiet", "-m", message)
    return head(worktree)


def commit_files(worktree: Path, names: tuple[str, ...], message: str) -> str:
    """Commit exactly these files (forced past .gitignore), even when nothing else changed."""
    run(worktree, "add", "--force", "--", *names)
    run(
        worktree, *_identity(worktree), "commit", "--no-verify", "--quiet", "--allow-empty",
        "-m", message,
    )  # fmt: skip
    return head(worktree)


def _index_file(worktree: Path) -> Path:
    """A checkout's index, found without running git: `.git/index`, or for a linked worktree
    `index` in the folder its `.git` file names."""
    dot = worktree / ".git"
    if dot.is_dir():
        return dot / "index"
    text = dot.read_text(encoding="utf-8", errors="replace")
    if not text.startswith("gitdir: "):
        raise OSError(f"{dot} does not name a git folder")
    return (worktree / text[len("gitdir: ") :].strip()) / "index"


SNAPSHOT_INDEX = "kanban-snapshot"  # beside a linked worktree's index: the snapshot's own


def snapshot_tree(
    worktree: Path,
    *,
    exists: Callable[[str], bool] | None = None,
    leave_out: Sequence[str] = (),
) -> str:
    """The tree of the worktree as it is on disk, untracked files included, built in a temporary
    index so the real index and the branch are left exactly as they were.

    The temporary index starts from the last snapshot's index of this checkout (kept beside its
    real index, in its git folder, while the real index is unchanged), else from a copy of the
    real one: `git add` trusts its stat cache and hashes only what changed since (500 edited
    files are hashed once, not on every call). New contents go into one pack per call
    (`core.bigFileThreshold=1` sends every blob through git's bulk check-in), not one loose object
    file each. Files that need a filter or an end-of-line conversion are still hashed as `git
    add` would.

    With `exists` (whether the repository holds an object, asked of a kept lookup process), an
    index that `git add` left byte for byte as the last snapshot's is that snapshot's tree,
    remembered beside it: unchanged work costs one git run, not two (a landing reads it twice).
    So does work unchanged since its last commit or checkout: the index records that tree
    (`index_cached_tree`). `leave_out`: top-level paths taken as the index has them, not as
    they are on disk (a landing replaces the bookkeeping files, which the gate edits after its
    commit)."""
    return _from_kept_index(
        worktree, lambda start, kept: _snapshot_from(worktree, start, kept, exists, leave_out)
    )


T = TypeVar("T")


def _from_kept_index(worktree: Path, build: Callable[[Path | None, Path | None], T]) -> T:
    """`build(start, kept)` from the checkout's kept snapshot index when there is one, else from
    its real index; `kept` is where the result's index is kept. A kept index naming blobs a `git
    gc` pruned since (only it referred to them) is dropped and the real one used; git killed at
    its timeout, or its folder gone, would fail the same way again and is raised."""
    try:
        real = _index_file(worktree)
    except OSError:
        real = None
    kept = _kept_snapshot_index(worktree, real)
    if kept is not None and kept.is_file():
        try:
            return build(kept, kept)
        except GitFailure as failure:
            if failure.status is None:
                raise
            kept.unlink(missing_ok=True)
    return build(real, kept)


def _snapshot_from(
    worktree: Path,
    start: Path | None,
    kept: Path | None,
    exists: Callable[[str], bool] | None,
    leave_out: Sequence[str] = (),
) -> str:
    """`snapshot_tree` in a temporary index copied from `start` (HEAD's tree when None or not
    there); the result is kept as `kept`."""
    with tempfile.TemporaryDirectory(prefix="kanban-index-") as folder:
        index, env = _snapshot_index(worktree, start, Path(folder), leave_out)
        if kept is not None and exists is not None:
            known = _remembered_tree(kept, index)
            if known is not None and exists(known):
                return known
        recorded = index_cached_tree(index) if exists is not None else None
        if recorded is not None and exists is not None and exists(recorded):
            tree = recorded  # nothing changed since the last commit or checkout: no write-tree
        else:
            tree = output(worktree, "write-tree", env=env)
        if kept is not None:
            _keep_snapshot_index(index, kept, tree)
        return tree


def _snapshot_index(
    worktree: Path, start: Path | None, folder: Path, leave_out: Sequence[str] = ()
) -> tuple[Path, dict[str, str]]:
    """A temporary index in `folder` holding the worktree as it is on disk, and the environment
    naming it: a copy of `start` (HEAD's tree when None or not there) after `git add --all`."""
    index = folder / "index"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        # copy2 keeps the index's mtime: git re-hashes an entry as "racily clean" when the
        # file is not older than the index, and a fresh mtime would hide such an edit
        if start is None:
            raise OSError("no index")
        shutil.copy2(start, index)
    except OSError:  # no index yet, or not where a checkout keeps it
        run(worktree, "read-tree", "HEAD", env=env)
    add_all(worktree, "-c", "core.bigFileThreshold=1", env=env, leave_out=leave_out)
    return index, env


def checkout_diff(
    worktree: Path, base: str, *, limit: int = DIFF_LIMIT, file_limit: int | None = None
) -> "DiffRead":
    """`read_diff` of the worktree as it is on disk (untracked files included) against `base`:
    the index `snapshot_tree` builds (from the kept one, kept again the same way) is diffed with
    `--cached`, so no tree is written; two git runs, plus the sizes'."""
    return _from_kept_index(
        worktree,
        lambda start, kept: _checkout_diff_from(worktree, start, kept, base, limit, file_limit),
    )


def _checkout_diff_from(
    worktree: Path,
    start: Path | None,
    kept: Path | None,
    base: str,
    limit: int,
    file_limit: int | None,
) -> "DiffRead":
    with tempfile.TemporaryDirectory(prefix="kanban-index-") as folder:
        index, env = _snapshot_index(worktree, start, Path(folder))
        read = read_diff(worktree, "--cached", base, limit=limit, file_limit=file_limit, env=env)
        if kept is not None:
            _keep_snapshot_index(index, kept, None)
        return read


def index_digest(index: Path) -> str:
    """The sha256 of an index file's bytes: equal digests, the same entries and flags."""
    return hashlib.sha256(index.read_bytes()).hexdigest()


def index_cached_tree(index: Path) -> str | None:
    """The tree `git write-tree` would write from `index`, when the index itself records it: the
    root of its cache-tree extension (TREE), kept valid by git until an entry under it changes
    (a checkout, a commit and a `git add` that changed nothing leave it so). None when not
    recorded (invalidated, no extension) or the file is not one read here with confidence: a
    checksum that does not match (a skipped or partial write), version 4, a split or sparse
    index, a conflicted or extended entry. `write-tree` itself starts from the same record."""
    try:
        data = index.read_bytes()
    except OSError:
        return None
    if len(data) < 12 + 20 or data[:4] != b"DIRC":
        return None
    width = next(
        (size for size, algorithm in ((20, "sha1"), (32, "sha256"))
         if len(data) > 12 + size
         and hashlib.new(algorithm, data[:-size]).digest() == data[-size:]),
        None,
    )  # fmt: skip
    version, count = int.from_bytes(data[4:8], "big"), int.from_bytes(data[8:12], "big")
    if width is None or version not in (2, 3):
        return None
    end, at = len(data) - width, 12
    for _ in range(count):
        name_at = at + 40 + width + 2
        if name_at > end:
            return None
        flags = int.from_bytes(data[name_at - 2 : name_at], "big")
        if flags & 0x7000:  # an extended entry (skip-worktree, intent to add) or a conflict
            return None
        length = flags & 0x0FFF
        if length == 0x0FFF:
            length = data.find(b"\0", name_at) - name_at
            if length < 0:
                return None
        at += (40 + width + 2 + length + 8) & ~7
    recorded = None
    while at + 8 <= end:
        signature, size = data[at : at + 4], int.from_bytes(data[at + 4 : at + 8], "big")
        body = data[at + 8 : at + 8 + size]
        if signature in (b"link", b"sdir"):
            return None
        if signature == b"TREE":
            path, _, rest = body.partition(b"\0")
            counts, newline, rest = rest.partition(b"\n")
            entries = counts.split(b" ")[0]
            if path or not newline or not entries.isdigit() or len(rest) < width:
                return None  # the root is first; `-1` entries: invalidated
            recorded = rest[:width].hex()
        at += 8 + size
    return recorded if at == end else None


def _remembered_tree(kept: Path, index: Path) -> str | None:
    """The tree written from an index with exactly `index`'s bytes, when the kept snapshot's
    record says so (it names the digest of the index it describes: two snapshots writing at once
    can leave a record of the other's index, never a wrong tree); None otherwise."""
    try:
        digest, _, tree = kept.with_suffix(".tree").read_text(encoding="ascii").partition(" ")
        full = len(tree) in (40, 64) and _HEX.fullmatch(tree) is not None
        return tree if full and digest == index_digest(index) else None
    except (OSError, ValueError):
        return None


def _kept_snapshot_index(worktree: Path, real: Path | None) -> Path | None:
    """Where a linked worktree keeps its last snapshot's index, named after the real index's
    identity (inode, size, mtime) and `config_stamp`: a new real index (a commit, a checkout) or
    a changed setting starts a new one."""
    if real is None or not (worktree / ".git").is_file():
        return None  # only task worktrees keep one; a user's own checkout is left alone
    try:
        info = real.stat()
    except OSError:
        return None
    # and after the settings git stages with (a kept index's entries are not hashed again when
    # `core.autocrlf` or an `eol` attribute changes: the real index's changed files would be)
    identity = f"{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{config_stamp(worktree)}"
    key = hashlib.sha1(identity.encode()).hexdigest()
    return real.with_name(f"{SNAPSHOT_INDEX}-{key[:16]}.index")


def _keep_snapshot_index(index: Path, kept: Path, tree: str | None) -> None:
    """Keep `index` as `kept` (atomically: concurrent snapshots each leave a valid one), with the
    record of the `tree` it was written as (when one was: a record names the digest of the index
    it describes, so one left from an earlier index is never taken for this one's), and drop the
    kept indexes (and records) of earlier real indexes. A failure only costs the next call some
    hashing."""
    spare = kept.with_name(f"{kept.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    record = kept.with_suffix(".tree")
    spare_record = record.with_name(f"{record.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        shutil.copy2(index, spare)
        if tree is not None:
            spare_record.write_text(f"{index_digest(index)} {tree}", encoding="ascii")
        os.replace(spare, kept)
        if tree is not None:
            os.replace(spare_record, record)
        for old in kept.parent.glob(f"{SNAPSHOT_INDEX}-*.*"):
            if old not in (kept, record) and old.suffix in (".index", ".tree"):
                old.unlink(missing_ok=True)
    except OSError:
        with contextlib.suppress(OSError):
            spare.unlink()
        with contextlib.suppress(OSError):
            spare_record.unlink()


# Fixed whatever the user's config says: no external or textconv program runs, and the text is
# what `diffs.parse_diff` reads (`a/` and `b/` names, not `diff.noprefix` or `diff.mnemonicPrefix`
# ones). Other settings (`diff.algorithm`, `core.autocrlf`) are followed: see `config_stamp`.
_DIFF_OPTIONS = (
    "--no-ext-diff", "--no-textconv", "--no-color", "--find-renames",
    "--src-prefix=a/", "--dst-prefix=b/",
)  # fmt: skip


def _name(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


def diff_numstat(cwd: Path, base: str, target: str) -> list[FileStat]:
    """Each file changed between two tree-ishes, SoR files excluded, with its line counts (None
    for a binary file), in git's order (the order of the unified diff)."""
    raw = run(cwd, "diff", *_DIFF_OPTIONS, "--numstat", "-z", base, target, "--", *SOR_EXCLUDES)[1]
    return _numstat_files(raw)


def _numstat_files(raw: bytes) -> list[FileStat]:
    """The records of `diff --numstat -z`."""
    files: list[FileStat] = []
    parts = raw.split(b"\0")
    index = 0
    while index < len(parts):
        record = parts[index]
        index += 1
        if not record:
            continue
        added, removed, path = [*record.split(b"\t", 2), b"", b""][:3]
        old_path: str | None = None
        if not path:  # a rename or copy: the old and new names follow as their own fields
            old_path = _name(parts[index])
            path = parts[index + 1] if index + 1 < len(parts) else b""
            index += 2
        files.append(
            FileStat(
                path=_name(path),
                old_path=old_path,
                insertions=int(added) if added.isdigit() else None,
                deletions=int(removed) if removed.isdigit() else None,
            )
        )
    return files


def stat_of(files: list[FileStat]) -> DiffStat:
    insertions = sum(file.insertions or 0 for file in files)
    deletions = sum(file.deletions or 0 for file in files)
    return DiffStat(len(files), insertions, deletions, bool(files))


def diff_stat(cwd: Path, base: str, target: str) -> DiffStat:
    """Files changed, insertions and deletions between two tree-ishes, SoR files excluded."""
    return stat_of(diff_numstat(cwd, base, target))


def run_capped(
    cwd: Path,
    *args: str,
    limit: int,
    timeout_s: float = DIFF_TIMEOUT_S,
    env: dict[str, str] | None = None,
    head: Callable[[bytes], int | None] | None = None,
) -> tuple[bytes, bool]:
    """`git <args>`'s stdout, at most `limit` bytes, and whether there was more. git is killed as
    soon as the cap is reached (a 500 MB diff is never read whole) or when `timeout_s` passes
    (raised as `GitFailure` with status None). `head`, fed each chunk, returns where the capped
    part starts once it knows (a diff's file list before its text): what precedes is not
    counted."""
    env = git_environment(env)
    with tempfile.TemporaryFile() as errors:
        try:
            process = subprocess.Popen(
                ["git", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=errors, start_new_session=True,
            )  # fmt: skip
        except FileNotFoundError as error:  # the folder (as in `run`), or git itself
            if cwd.is_dir():
                raise
            raise folder_gone(cwd, args) from error
        timed_out = threading.Event()

        def kill() -> None:
            """The whole group: a helper git started (a hook, a filter) must not keep the pipe
            open after git is gone."""
            timed_out.set()
            kill_group(process)

        timer = threading.Timer(timeout_s, kill)
        timer.start()
        chunks: list[bytes] = []
        size = 0
        start = None if head is not None else 0
        more = False
        try:
            assert process.stdout is not None
            fd = process.stdout.fileno()
            while True:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
                if start is None and head is not None:
                    start = head(chunk)
                if start is not None and size - start > limit:
                    more = True
                    kill_group(process)
                    break
            process.stdout.close()
            status = process.wait()
        finally:
            timer.cancel()
            if process.poll() is None:
                process.kill()
                process.wait()
        if timed_out.is_set():
            raise GitFailure(list(args), None, f"timed out after {timeout_s:g} s and was killed")
        if status != 0 and not more:
            errors.seek(0)
            raise GitFailure(list(args), status, errors.read()[-4000:].decode(errors="replace"))
    data = b"".join(chunks)
    return (data if start is None else data[: start + limit]), more


def _raw_blobs(raw: bytes) -> dict[str, list[str]]:
    """Each path of a `diff --raw -z --no-abbrev` listing (both names of a rename) with the
    blobs of its sides that exist."""
    parts = raw.split(b"\0")
    blobs: dict[str, list[str]] = {}
    index = 0
    while index < len(parts):
        header = parts[index]
        index += 1
        if not header.startswith(b":"):
            continue
        fields = header[1:].split(b" ")
        names = 2 if fields[-1][:1] in (b"R", b"C") else 1
        paths = [_name(name) for name in parts[index : index + names]]
        index += names
        shas = [sha.decode() for sha in fields[2:4] if sha.strip(b"0")]
        blobs[paths[-1]] = shas
        if names == 2:
            blobs[paths[0]] = shas
    return blobs


def _blob_sizes(cwd: Path, blobs: dict[str, list[str]]) -> dict[str, int]:
    """Each path's larger side in bytes, from one `cat-file --batch-check` (no file is read)."""
    wanted = sorted({sha for shas in blobs.values() for sha in shas})
    if not wanted:
        return {}
    try:
        done = subprocess.run(
            ["git", "cat-file", "--batch-check=%(objectname) %(objectsize)"],
            cwd=cwd, input="".join(f"{sha}\n" for sha in wanted).encode(), capture_output=True,
            timeout=DIFF_TIMEOUT_S, check=False, env=git_environment(),
        )  # fmt: skip
    except FileNotFoundError as error:
        if cwd.is_dir():
            raise
        raise folder_gone(cwd, ["cat-file", "--batch-check"]) from error
    if done.returncode != 0:
        raise GitFailure(["cat-file", "--batch-check"], done.returncode, done.stderr.decode())
    size: dict[str, int] = {}
    for line in done.stdout.decode().splitlines():
        sha, _, count = line.partition(" ")
        if count.isdigit():
            size[sha] = int(count)
    return {
        path: max((size.get(sha, 0) for sha in shas), default=0) for path, shas in blobs.items()
    }


def _sized(
    files: list[FileStat], sizes: dict[str, int], limit: int
) -> tuple[list[FileStat], tuple[str, ...]]:
    """The files with their sizes, those over `limit` marked omitted; and the paths to leave out
    of the diff text (both names of a renamed file)."""
    marked: list[FileStat] = []
    left_out: list[str] = []
    for file in files:
        size = sizes.get(file.path)
        omitted = size is not None and size > limit
        marked.append(replace(file, size=size, omitted=omitted))
        if omitted:
            left_out += [file.path, *([file.old_path] if file.old_path else [])]
    return marked, tuple(left_out)


def diff_text(
    cwd: Path,
    *revisions: str,
    limit: int = DIFF_LIMIT,
    timeout_s: float = DIFF_TIMEOUT_S,
    leave_out: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> tuple[str, bool]:
    """The unified diff between two tree-ishes (or `--cached` and one: the index `env` names),
    SoR files (and the files `leave_out` names) excluded; (text, truncated). A cut diff ends at
    a line boundary, so every line it holds is whole."""
    excluded = tuple(f":(top,exclude,literal){path}" for path in leave_out)
    raw, truncated = run_capped(
        cwd, "diff", *_DIFF_OPTIONS, *revisions, "--", *SOR_EXCLUDES, *excluded,
        limit=limit, timeout_s=timeout_s, env=env,
    )  # fmt: skip
    if truncated:
        raw = raw[: raw.rfind(b"\n") + 1]
    return raw.decode("utf-8", errors="replace"), truncated


class _ListingEnd:
    """Where the text of a `diff --raw --numstat --patch -z` starts, found as its output comes:
    the raw records (a `:` header and one or two names each), as many numstat records (one
    field, or an empty name and two more), then one empty field."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.at = 0  # the next field to read
        self.names = 0  # names still to read after a raw header
        self.files = 0  # raw records, so numstat records to read
        self.numstat: int | None = None  # where the numstat records start
        self.counted = 0
        self.pending = 0  # the two names of a numstat rename
        self.text: int | None = None  # where the text starts

    def feed(self, chunk: bytes) -> int | None:
        self.data += chunk
        while self.text is None:
            end = self.data.find(b"\0", self.at)
            if end < 0:
                return None
            field, start, self.at = bytes(self.data[self.at : end]), self.at, end + 1
            if self.numstat is None:
                if self.names:
                    self.names -= 1
                    continue
                if field[:1] == b":":
                    self.files += 1
                    self.names = 2 if field.split(b" ")[-1][:1] in (b"R", b"C") else 1
                    continue
                self.numstat = start
            if self.pending:
                self.pending -= 1
            elif self.counted < self.files:
                self.counted += 1
                self.pending = 2 if field.split(b"\t", 2)[2:] == [b""] else 0
            else:  # the empty field between the listing and the text
                self.text = self.at
        return self.text


@dataclass(frozen=True, slots=True)
class DiffRead:
    """What a reader shows of a diff: every changed file with its counts (and sizes, when asked
    for a per-file cap), and the unified text, cut at its cap (`truncated`)."""

    files: list[FileStat]
    text: str
    truncated: bool


def read_diff(
    cwd: Path,
    *revisions: str,
    limit: int = DIFF_LIMIT,
    file_limit: int | None = None,
    env: dict[str, str] | None = None,
) -> DiffRead:
    """The diff between two tree-ishes (or `--cached` and one), SoR files excluded, from one
    `git diff` giving the raw listing, the counts and the text at once (the text capped at
    `limit`), plus one `cat-file --batch-check` for the sizes when `file_limit` is given. A file
    over `file_limit` is marked omitted and its text read again without it (a second diff, only
    then)."""
    listing = _ListingEnd()
    raw, truncated = run_capped(
        cwd, "diff", *_DIFF_OPTIONS, "--raw", "--numstat", "--patch", "-z", "--no-abbrev",
        *revisions, "--", *SOR_EXCLUDES, limit=limit, env=env, head=listing.feed,
    )  # fmt: skip
    start = listing.text if listing.text is not None else len(raw)
    numstat = listing.numstat if listing.numstat is not None else start
    files = _numstat_files(raw[numstat:start])
    text = raw[start:]
    if truncated:
        text = text[: text.rfind(b"\n") + 1]
    if file_limit is not None:
        files, left_out = _sized(files, _blob_sizes(cwd, _raw_blobs(raw[:numstat])), file_limit)
        if left_out:
            again, truncated = diff_text(cwd, *revisions, limit=limit, leave_out=left_out, env=env)
            return DiffRead(files, again, truncated)
    return DiffRead(files, text.decode("utf-8", errors="replace"), truncated)


DIFFS_KEPT = 8  # diffs read lately, kept by what they describe, the oldest forgotten first
DIFFS_KEPT_CHARS = 64 * 1024 * 1024  # and at most this much of their text in all
_DIFFS: dict[tuple[object, ...], DiffRead] = {}
_DIFFS_LOCK = threading.Lock()


def kept_diff(key: tuple[object, ...] | None, read: Callable[[], DiffRead]) -> DiffRead:
    """`read()`, or what it returned before for the same `key`: a key names what the diff
    depends on (its base and limits, and a commit, or a settled checkout's status digest). None:
    read, and keep nothing."""
    if key is not None:
        with _DIFFS_LOCK:
            known = _DIFFS.pop(key, None)
            if known is not None:
                _DIFFS[key] = known  # the newest again
                return known
    fresh = read()
    if key is not None and len(fresh.text) <= DIFFS_KEPT_CHARS:
        with _DIFFS_LOCK:
            _DIFFS[key] = fresh
            total = sum(len(kept.text) for kept in _DIFFS.values())
            while len(_DIFFS) > DIFFS_KEPT or total > DIFFS_KEPT_CHARS:
                total -= len(_DIFFS.pop(next(iter(_DIFFS))).text)
    return fresh


SETTLED_NS = 2_000_000_000  # a file older than this is past any filesystem's mtime tick


@dataclass(frozen=True, slots=True)
class CheckoutStatus:
    """What one `git status` says of a checkout: `fingerprint`'s digest, HEAD's commit (None
    when git could not say), every path it lists (changed, in conflict or untracked, as git
    names them) and whether each of those files was last written well before git looked
    (`settled`: an edit after it is sure to change the digest, so a read may be kept by it)."""

    digest: str
    head: str | None
    listed: tuple[bytes, ...]
    settled: bool

    def uncommitted(self, besides: Collection[str] = ()) -> bool:
        """`has_uncommitted`'s answer, read from this status."""
        skip = {name.encode() for name in besides}
        return any(name not in skip for name in self.listed)


def checkout_status(worktree: Path, extra_names: tuple[str, ...] = SOR_FILES) -> CheckoutStatus:
    """One `git status` (it uses the index's stat cache, so unchanged files are not hashed) with
    HEAD in its header, plus the size and mtime of every file it lists and of `extra_names` (an
    already-modified file edited again keeps its status line) and `config_stamp`, digested: any
    edit an agent makes, or a setting that changes what a diff says, changes the digest; reading
    it changes nothing."""
    digest = hashlib.sha1()
    looked_at = time.time_ns()
    status, stdout, _ = run(
        worktree, "--no-optional-locks", "status", "--porcelain=v2", "--branch", "-z",
        "--untracked-files=all", "--no-renames", check=False,
    )  # fmt: skip
    digest.update(stdout)
    digest.update(config_stamp(worktree).encode())  # a setting that changes what a diff says
    head: str | None = None
    listed: list[bytes] = []
    entries = iter(stdout.split(b"\0"))
    for entry in entries:
        if entry.startswith(b"1 "):
            listed.append(entry.split(b" ", 8)[-1])
        elif entry.startswith(b"2 "):  # a rename (never asked for): its source follows
            listed += [entry.split(b" ", 9)[-1], next(entries, b"")]
        elif entry.startswith(b"u "):
            listed.append(entry.split(b" ", 10)[-1])
        elif entry.startswith(b"? "):
            listed.append(entry[2:])
        elif entry.startswith(b"# branch.oid ") and _HEX.fullmatch(entry[13:].decode()):
            head = entry[13:].decode()
    newest = 0  # of the listed files (the board's own `extra_names` are never in a diff)
    names = [_name(raw) for raw in listed]
    for number, name in enumerate([*names, *extra_names]):
        try:
            info = os.lstat(worktree / name)
        except OSError:
            digest.update(b"-")
            continue
        digest.update(f"{name}:{info.st_size}:{info.st_mtime_ns};".encode())
        if number < len(names):
            newest = max(newest, info.st_mtime_ns, info.st_ctime_ns)
    return CheckoutStatus(
        digest=digest.hexdigest(),
        head=head if status == 0 else None,
        listed=tuple(listed),
        settled=status == 0 and newest < looked_at - SETTLED_NS,
    )


SCAFFOLD_SUBJECT = "kanban: system-of-record scaffold for "  # + the task id: a scaffold commit
REMADE = "is now another board's"  # a workspace's branch deleted, then made by another board


SCAFFOLD_DEPTH = 10_000  # commits a branch's first parents are read down for its scaffold


def scaffold_needles(task_id: str) -> tuple[str, str]:
    """What a scaffold commit of `task_id` holds in its message: its exact subject and its
    `Kanban-Task` trailer line (`branch_maker` matches both; a workspace read looks for them)."""
    return f"{SCAFFOLD_SUBJECT}{task_id}", f"Kanban-Task: {task_id}"


def branch_maker(
    repo: Path, branch: str, task_id: str, *, check: bool = False
) -> tuple[str, str] | None:
    """The board key and commit of the newest scaffold of `task_id` on `branch` (its subject and
    trailers naming exactly that task), None when it has none (or, unless `check`, the branch is
    gone): a branch left behind by a crash is re-attached by its own board, one of another board
    sharing the repository is left to it, and one no board made is someone's own. A scaffold is
    the branch's first commit, which a sync rebases or merges under its first parents: read from
    the tip down those, stopping at the first (a few commits), and never past `SCAFFOLD_DEPTH`,
    so a branch no board made is refused without reading its whole history. A landed commit of
    the task (on a base the branch grew from) names a board too, but made no branch: it does not
    count, nor does a scaffold of another task whose id starts alike (TASK-12 for TASK-1)."""
    fmt = (
        "%H%x00%s%x00%(trailers:key=Kanban-Task,valueonly)%x00"
        "%(trailers:key=Kanban-Board,valueonly)%x1e"
    )
    subject, _ = scaffold_needles(task_id)
    commits = records(
        repo, "log", "--first-parent", f"--max-count={SCAFFOLD_DEPTH}", f"--format={fmt}",
        f"refs/heads/{branch}", "--", separator=b"\x1e",
    )  # fmt: skip
    try:
        with contextlib.closing(commits):
            for record in commits:
                fields = [field.strip() for field in record.decode(errors="replace").split("\x00")]
                if len(fields) == 4 and fields[1:3] == [subject, task_id] and fields[3]:
                    return fields[3].split("\n")[0], fields[0]
    except GitFailure:
        if check:
            raise
    return None


REMADE_KEPT = 1024  # answers kept by the branch's tip, the oldest forgotten first
_REMADE_BY_TIP: dict[tuple[str, ...], str | None] = {}
_REMADE_LOCK = threading.Lock()


def remade_by_another(
    repo: Path,
    branch: str,
    task_id: str,
    board: str,
    base_commit: str | None,
    *,
    tip: str | None = None,
) -> str | None:
    """The key of another board whose scaffold now heads `branch`, a workspace's recorded plain
    branch (`layout.task_slot`): this board's was deleted by hand and the other board, finding the
    name free, made its own there. Its checkout and work are then the other board's, never to be
    reused, committed to, landed or removed for this workspace. None when the branch is this
    board's (its scaffold is the row's baseline, or the scaffold or the row's synced baseline
    names this board: a board file that moved has a new key, and a sync's baseline names the
    board that made the branch), gone, or made by no board.

    `tip`, the branch's commit when the caller read it (`landgit.branch_tip_from_files`): every
    workspace read asks this, so it costs no git run when the answer is known. A branch at the
    row's own baseline is this board's (another board's branch starts at a scaffold naming that
    board, another commit); otherwise the answer depends only on the history below `tip`, so it
    is asked once per tip."""
    if tip is not None and tip == base_commit:
        return None
    key = (str(repo), branch, task_id, board, base_commit or "", tip or "")
    if tip is not None:
        with _REMADE_LOCK:
            if key in _REMADE_BY_TIP:
                return _REMADE_BY_TIP[key]
    other = _remade_by_another(repo, branch, task_id, board, base_commit)
    if tip is not None:
        with _REMADE_LOCK:
            if len(_REMADE_BY_TIP) >= REMADE_KEPT:
                del _REMADE_BY_TIP[next(iter(_REMADE_BY_TIP))]
            _REMADE_BY_TIP[key] = other
    return other


def _remade_by_another(
    repo: Path, branch: str, task_id: str, board: str, base_commit: str | None
) -> str | None:
    made = branch_maker(repo, branch, task_id) if repo.is_dir() else None
    if made is None or made[0] == board or made[1] == base_commit:
        return None
    if base_commit is not None and commit_board(repo, base_commit) == made[0]:
        return None  # a synced row's baseline names the board that made its branch
    return made[0]


def commit_board(repo: Path, commit: str) -> str | None:
    """The board key a kanban commit's `Kanban-Board` trailer names (a scaffold's, a synced
    baseline's), None when it names none."""
    _, stdout, _ = run(
        repo, "log", "-1", "--format=%(trailers:key=Kanban-Board,valueonly)", commit, "--",
        check=False,
    )  # fmt: skip
    return stdout.decode("utf-8", errors="replace").strip().split("\n")[0] or None
