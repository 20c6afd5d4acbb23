"""The git operations of the worktree subsystem, through gitpython.

Every command is an explicit argument vector handed to `git.Git.execute` (no shell, no keyword
magic): the repository is the working directory, never an argument, and the only other arguments
are ones this package built or validated (its own paths, `kanban/task-<id>`, hex shas, checked ref
names). Commits the board makes for bookkeeping skip the repository's pre-commit hooks and commit
signing, and fall back to a `kanban` identity when the repository has none configured.

This module is the only importer of `git`, and nothing on the claim path imports it.
"""

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import git

from .results import DiffStat, GitFailure
from .sor import SOR_FILES, SOR_READ_LIMIT

FALLBACK_IDENTITY = ("kanban", "kanban@localhost")
DIFF_LIMIT = 2 * 1024 * 1024  # bytes of unified diff returned to a reader

# Exclude the SoR bookkeeping files at the worktree's top level (a docs/TASK.md is real work).
SOR_EXCLUDES: tuple[str, ...] = (":(top)", *(f":(top,exclude,literal){name}" for name in SOR_FILES))

_HEX = re.compile(r"[0-9a-f]{4,64}")


def run(
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    check: bool = True,
) -> tuple[int, bytes, str]:
    """Run `git <args>` in `cwd`; returns (status, stdout bytes, stderr). Raises `GitFailure` on a
    non-zero exit when `check`."""
    status, stdout, stderr = git.Git(str(cwd)).execute(
        ["git", *args],
        with_extended_output=True,
        with_exceptions=False,
        stdout_as_string=False,
        strip_newline_in_stdout=False,
        env={"GIT_TERMINAL_PROMPT": "0", **(env or {})},
    )
    if check and status != 0:
        raise GitFailure(list(args), status, str(stderr))
    return int(status), bytes(stdout), str(stderr)


def output(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return run(cwd, *args, env=env)[1].decode("utf-8", errors="replace").strip()


# -- the user's repository -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RepoInfo:
    root: Path  # the top level of the work tree, symlinks resolved
    git_dir: Path


def open_repo(path: Path) -> RepoInfo | None:
    """The work tree containing `path`, or None when it is not inside a non-bare git work tree."""
    try:
        repo = git.Repo(str(path), search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, git.GitError, OSError):
        return None
    try:
        if repo.bare or repo.working_tree_dir is None:
            return None
        return RepoInfo(
            root=Path(os.path.realpath(repo.working_tree_dir)),
            git_dir=Path(os.path.realpath(repo.git_dir)),
        )
    finally:
        repo.close()


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
    """A checkout of `branch` at `path`; with `start`, the branch is created there first."""
    if start is not None:
        run(repo, "worktree", "add", "-b", branch, "--", str(path), start)
    else:
        run(repo, "worktree", "add", "--", str(path), branch)


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


def read_blob(repo: Path, commit: str, name: str, *, limit: int = SOR_READ_LIMIT) -> str | None:
    """One top-level file of a commit (for the SoR files of a paused worktree), or None."""
    assert _HEX.fullmatch(commit) and "/" not in name and not name.startswith("-")
    status, stdout, _ = run(repo, "cat-file", "blob", f"{commit}:{name}", check=False)
    if status != 0:
        return None
    text = stdout[:limit].decode("utf-8", errors="replace")
    if len(stdout) > limit:
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
    name = run(worktree, "config", "--get", "user.name", check=False)
    email = run(worktree, "config", "--get", "user.email", check=False)
    if name[0] != 0 or not name[1].strip():
        options += ["-c", f"user.name={FALLBACK_IDENTITY[0]}"]
    if email[0] != 0 or not email[1].strip():
        options += ["-c", f"user.email={FALLBACK_IDENTITY[1]}"]
    return options


def commit_all(worktree: Path, message: str) -> str | None:
    """Stage everything (ignored files stay ignored) and commit it; the new sha, or None when there
    was nothing to commit."""
    run(worktree, "add", "--all")
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


def snapshot_tree(worktree: Path) -> str:
    """The tree of the worktree as it is on disk, untracked files included, built in a temporary
    index so the real index and the branch are left exactly as they were."""
    with tempfile.TemporaryDirectory(prefix="kanban-index-") as folder:
        env = {"GIT_INDEX_FILE": str(Path(folder) / "index")}
        run(worktree, "read-tree", "HEAD", env=env)
        run(worktree, "add", "--all", env=env)
        return output(worktree, "write-tree", env=env)


_DIFF_OPTIONS = ("--no-ext-diff", "--no-textconv", "--no-color", "--find-renames")


def diff_stat(cwd: Path, base: str, target: str) -> DiffStat:
    """Files changed, insertions and deletions between two tree-ishes, SoR files excluded."""
    raw = run(cwd, "diff", *_DIFF_OPTIONS, "--numstat", "-z", base, target, "--", *SOR_EXCLUDES)[1]
    files = insertions = deletions = 0
    parts = raw.split(b"\0")
    index = 0
    while index < len(parts):
        record = parts[index]
        index += 1
        if not record:
            continue
        added, removed, path = [*record.split(b"\t", 2), b"", b""][:3]
        if not path:  # a rename or copy: the old and new names follow as their own fields
            index += 2
        files += 1
        insertions += int(added) if added.isdigit() else 0
        deletions += int(removed) if removed.isdigit() else 0
    return DiffStat(files, insertions, deletions, files > 0)


def diff_text(cwd: Path, base: str, target: str, *, limit: int = DIFF_LIMIT) -> tuple[str, bool]:
    """The unified diff between two tree-ishes, SoR files excluded; (text, truncated)."""
    raw = run(cwd, "diff", *_DIFF_OPTIONS, base, target, "--", *SOR_EXCLUDES)[1]
    truncated = len(raw) > limit
    return raw[:limit].decode("utf-8", errors="replace"), truncated


def find_baseline(repo: Path, branch: str, task_id: str, board: str) -> str | None:
    """The scaffold commit of `task_id` by board `board` on `branch` (found by its trailers), so a
    branch left behind by a crash is re-attached rather than refused."""
    fmt = (
        "%H%x00%(trailers:key=Kanban-Task,valueonly)%x00%(trailers:key=Kanban-Board,valueonly)%x1e"
    )
    raw = run(
        repo, "log", "--fixed-strings", f"--grep=Kanban-Task: {task_id}", f"--format={fmt}",
        f"refs/heads/{branch}", "--",
    )[1].decode("utf-8", errors="replace")  # fmt: skip
    for record in raw.split("\x1e"):
        fields = [field.strip() for field in record.strip().split("\x00")]
        if len(fields) == 3 and fields[1] == task_id and fields[2] == board:
            return fields[0]
    return None
