"""The git plumbing of landing: trees without the bookkeeping files, commits built in memory,
merges without a checkout, the compare-and-swap of a branch, and the checkouts of a branch.

Nothing here touches a user's checkout except `fast_forward_checkout`, which moves a clean
checkout of the base along with the branch through `git read-tree -m -u` (git refuses to
overwrite a local change). Every other command reads, or writes objects and refs only:
`merge-tree --write-tree` builds a merge in memory, `commit-tree` makes commits from trees,
`update-ref --stdin` moves refs in one all-or-nothing transaction.

git 2.38+ is needed (`merge-tree --write-tree`); 2.40's `--merge-base` is not used: a merge with
a chosen base is made by giving both sides synthetic commits whose only common ancestor is that
base. Messages go to git on stdin, never as arguments, so agent text (a task title) cannot be read
as an option. Commands run with hooks disabled where a hook could run (checkouts).
"""

import atexit
import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from . import gitrepo
from .results import GitFailure
from .sor import SOR_FILES

NO_HOOKS = ("-c", "core.hooksPath=/dev/null")
BASELINE_PREFIX = "refs/kanban/baselines/"  # a synced worktree's baseline, kept alive


def baseline_ref(slot: str) -> str:
    """The ref keeping a synced baseline of the task in `slot` (`layout.task_slot`) alive."""
    return f"{BASELINE_PREFIX}{slot}"


_SOR_NAMES = frozenset(name.encode() for name in SOR_FILES)

T = TypeVar("T")
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")

# -- answers that cannot change -----------------------------------------------------------------

# What a question about object ids answers (the parent of a commit, its tree, a merge of two
# commits, a tree without its bookkeeping files) never changes, so a landing or a preview asks git
# once per process. Forgotten after FIXED_TTL_S, so a long-lived process never leans on an
# unreferenced object (a merged tree) that `git gc` may prune after its two weeks.
FIXED_TTL_S = 600.0
FIXED_MAX = 4096
_FIXED: dict[tuple[str, ...], tuple[float, Any]] = {}


def fixed(
    key: tuple[str, ...], compute: Callable[[], T], *, still: Callable[[T], bool] | None = None
) -> T:
    """`compute()`, remembered under `key` (the repository and object ids it depends on).
    `still(value)` says whether a remembered answer that names an object git wrote for it (a
    merged tree) may be used again: a repository deleted and made again at the same path holds
    the same commits under fixed dates, but not the objects the old one wrote."""
    now = time.monotonic()
    known = _FIXED.get(key)
    if known is not None and now - known[0] < FIXED_TTL_S and (still is None or still(known[1])):
        return known[1]  # type: ignore[no-any-return]
    value = compute()
    if len(_FIXED) >= FIXED_MAX:
        _FIXED.clear()
    _FIXED[key] = (now, value)
    return value


def _has(repo: Path, sha: str | None) -> bool:
    """Whether the repository holds object `sha` (None: nothing to hold), from the kept lookup."""
    return sha is None or rev(repo, sha) is not None


def is_sha(name: str) -> bool:
    return _SHA.fullmatch(name) is not None


def forget_fixed() -> None:
    """Drop every remembered answer (tests that rewrite a repository's history in place)."""
    _FIXED.clear()


def run_input(
    cwd: Path,
    *args: str,
    data: bytes = b"",
    env: Mapping[str, str] | None = None,
    check: bool = True,
) -> tuple[int, bytes, str]:
    """`git <args>` with `data` on stdin; (status, stdout, stderr)."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            input=data,
            capture_output=True,
            env=gitrepo.git_environment(env),
            check=False,
        )
    except FileNotFoundError as error:  # the folder removed under us, or git itself missing
        if cwd.is_dir():
            raise
        raise gitrepo.folder_gone(cwd, args) from error
    stderr = done.stderr.decode("utf-8", errors="replace")
    if check and done.returncode != 0:
        raise GitFailure(list(args), done.returncode, stderr)
    return done.returncode, done.stdout, stderr


# -- names to object ids, without a git process each --------------------------------------------


class _Lookups:
    """One `git cat-file --batch-command` kept running in a repository: names (refs, `X^{tree}`,
    `X^1^{commit}`) in on stdin, object ids out (`ask`), or an object's type and bytes
    (`contents`), each looked up afresh by git (a ref moved by another process, an object written
    since, are seen). Thread-safe; both raise OSError when the process is gone (the caller starts
    another)."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.identity = _identity_of(repo)
        self.packs = _packs_of(repo)
        self._lock = threading.Lock()
        self._proc = subprocess.Popen(
            ["git", "cat-file", "--batch-command=%(objectname) %(objecttype) %(objectsize)"],
            cwd=repo,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=gitrepo.git_environment(),
        )

    def ask(self, names: list[str]) -> list[str | None]:
        with self._lock:
            stdin, stdout = self._proc.stdin, self._proc.stdout
            assert stdin is not None and stdout is not None
            try:
                stdin.write(b"".join(b"info " + name.encode() + b"\n" for name in names))
                stdin.flush()
                lines = [stdout.readline() for _ in names]
            except (OSError, ValueError) as error:
                raise OSError(f"git cat-file in {self.repo} is gone") from error
        return [self._found(line)[0] for line in lines]

    def contents(self, names: list[str]) -> list[tuple[str, str, bytes] | None]:
        """The id, type and bytes of the object each name names (None: it names none), asked
        in one write (a few kilobytes at most: cat-file's answers are read only after it)."""
        found: list[tuple[str, str, bytes] | None] = []
        with self._lock:
            stdin, stdout = self._proc.stdin, self._proc.stdout
            assert stdin is not None and stdout is not None
            try:
                stdin.write(b"".join(b"contents " + name.encode() + b"\n" for name in names))
                stdin.flush()
                for _ in names:
                    sha, kind, size = self._found(stdout.readline())
                    if sha is None:
                        found.append(None)
                        continue
                    data = stdout.read(size + 1)  # the object, then a newline
                    if len(data) != size + 1:
                        raise OSError(f"git cat-file in {self.repo} is gone")
                    found.append((sha, kind, data[:size]))
            except (OSError, ValueError) as error:
                raise OSError(f"git cat-file in {self.repo} is gone") from error
        return found

    def _found(self, line: bytes) -> tuple[str | None, str, int]:
        """(object id, type, size) of an answer line; no id for `<name> missing`, `ambiguous`."""
        if not line.endswith(b"\n"):
            raise OSError(f"git cat-file in {self.repo} is gone")
        parts = line.decode("utf-8", errors="replace").rstrip("\n").rsplit(" ", 2)
        if len(parts) != 3 or not is_sha(parts[0]) or not parts[2].isdigit():
            return None, "", 0
        return parts[0], parts[1], int(parts[2])

    def close(self) -> None:
        with self._lock, contextlib.suppress(OSError, ValueError, subprocess.TimeoutExpired):
            if self._proc.stdin is not None:
                self._proc.stdin.close()
            self._proc.wait(timeout=5)
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()


LOOKUPS_KEPT = 4  # repositories with a lookup process kept running, the least recent closed
_LOOKUPS: "OrderedDict[tuple[int, str], _Lookups]" = OrderedDict()
_LOOKUPS_LOCK = threading.Lock()


def _identity_of(repo: Path) -> tuple[int, ...]:
    """The repository folder and its git folder as files (device, inode): a repository deleted
    and made again at the same path is another one, and its kept lookup process is not reused."""
    try:
        top, dot = os.stat(repo), os.stat(repo / ".git")
    except OSError:
        return ()
    return (top.st_dev, top.st_ino, dot.st_dev, dot.st_ino)


def _packs_of(repo: Path) -> frozenset[str] | None:
    """The repository's pack files. A `cat-file` started before a `git gc` still reads the packs
    it deleted (their objects, pruned ones included, through the files it holds open), so a kept
    lookup process does not outlive one of the packs it may have opened (a pack added since is
    found by git itself)."""
    try:
        folder = gitrepo.git_dir(repo)
        common = folder / "commondir"
        if common.is_file():
            folder = folder / common.read_text(encoding="utf-8").strip()
        return frozenset(n for n in os.listdir(folder / "objects" / "pack") if n.endswith(".pack"))
    except (OSError, UnicodeDecodeError, GitFailure):
        return None


def _packs_kept(before: frozenset[str] | None, now: frozenset[str] | None) -> bool:
    return before is None or (now is not None and before <= now)


def _lookups(repo: Path) -> _Lookups:
    key = (os.getpid(), str(repo))
    with _LOOKUPS_LOCK:
        found = _LOOKUPS.get(key)
        if (
            found is not None
            and found.identity
            and found.identity == _identity_of(repo)
            and _packs_kept(found.packs, _packs_of(repo))
        ):
            _LOOKUPS.move_to_end(key)
            return found
        if found is not None:
            del _LOOKUPS[key]
            stale = found
        else:
            stale = None
        made = _Lookups(repo)
        _LOOKUPS[key] = made
        doomed = [stale] if stale is not None else []
        while len(_LOOKUPS) > LOOKUPS_KEPT:
            doomed.append(_LOOKUPS.popitem(last=False)[1])
    for old in doomed:
        old.close()
    return made


def _drop_lookups(repo: Path, which: _Lookups) -> None:
    with _LOOKUPS_LOCK:
        if _LOOKUPS.get((os.getpid(), str(repo))) is which:
            del _LOOKUPS[(os.getpid(), str(repo))]
    which.close()


@atexit.register
def _close_lookups() -> None:
    with _LOOKUPS_LOCK:
        kept = [item for key, item in _LOOKUPS.items() if key[0] == os.getpid()]
        _LOOKUPS.clear()
    for item in kept:
        item.close()


def revs(repo: Path, *names: str) -> list[str | None]:
    """The object id each name names (a ref, a commit, `X^{tree}`...), None for a name that names
    nothing, from the repository's kept `cat-file --batch-command` (one git process at most)."""
    for name in names:
        assert "\n" not in name and not name.startswith("-"), name
    if not repo.is_dir():
        return [None for _ in names]
    if not _identity_of(repo):  # not a plain repository folder: ask git each time
        return [_rev_once(repo, name) for name in names]
    for _ in range(2):
        lookups = _lookups(repo)
        try:
            return lookups.ask(list(names))
        except OSError:
            _drop_lookups(repo, lookups)
    return [_rev_once(repo, name) for name in names]


def _kept_contents(repo: Path, names: list[str]) -> list[tuple[str, str, bytes] | None] | None:
    """`_contents` of each name, in one exchange with the kept lookup process; None when the
    repository has none to keep."""
    if not (repo.is_dir() and _identity_of(repo)):
        return None
    for _ in range(2):
        lookups = _lookups(repo)
        try:
            return lookups.contents(names)
        except OSError:
            _drop_lookups(repo, lookups)
    return None


def _contents(repo: Path, name: str) -> tuple[str, str, bytes] | None:
    """The id, type and bytes of the object `name` names (None: none), from the kept lookup
    process; from one `cat-file --batch` when there is none to keep."""
    assert "\n" not in name and not name.startswith("-"), name
    kept = _kept_contents(repo, [name])
    if kept is not None:
        return kept[0]
    out = run_input(repo, "cat-file", "--batch", data=f"{name}\n".encode())[1]
    header, _, data = out.partition(b"\n")
    parts = header.decode("utf-8", errors="replace").rsplit(" ", 2)
    if len(parts) != 3 or not is_sha(parts[0]) or not parts[2].isdigit():
        return None
    return parts[0], parts[1], data[: int(parts[2])]


def read_blob(repo: Path, commit: str, name: str) -> str | None:
    """`gitrepo.read_blob` (one top-level file of a commit, or None), from the kept lookup
    process."""
    assert is_sha(commit) and "/" not in name and not name.startswith("-"), (commit, name)
    found = _contents(repo, f"{commit}:{name}")
    if found is None or found[1] != "blob":
        return None
    return gitrepo.blob_text(found[2])


def read_blobs(repo: Path, commit: str, names: Sequence[str]) -> dict[str, str]:
    """`gitrepo.read_blobs` (the top-level files of a commit it holds), in one exchange with
    the kept lookup process; one `cat-file --batch` when there is none to keep."""
    assert is_sha(commit), commit
    for name in names:
        assert "/" not in name and "\n" not in name and not name.startswith("-"), name
    kept = _kept_contents(repo, [f"{commit}:{name}" for name in names])
    if kept is None:
        return gitrepo.read_blobs(repo, commit, names)
    return {
        name: gitrepo.blob_text(found[2])
        for name, found in zip(names, kept, strict=True)
        if found is not None and found[1] == "blob"
    }


def _rev_once(repo: Path, name: str) -> str | None:
    status, out, _ = gitrepo.run(
        repo, "rev-parse", "--verify", "--quiet", "--end-of-options", name, check=False
    )
    return out.decode().strip() if status == 0 else None


def rev(repo: Path, name: str) -> str | None:
    """The full sha `name` names (a commit, a tree...), or None."""
    return revs(repo, name)[0]


def head_and_branch(checkout: Path, repo: Path | None = None) -> tuple[str | None, str | None]:
    """A checkout's HEAD commit and the branch checked out there (None: detached); (None, None)
    when HEAD names no commit yet. For a linked checkout of `repo`, read from its HEAD file in
    the repository's git folder, the commit from the kept lookup process (no git run: a landing
    asks twice); otherwise, or when that layout is not the plain one, one `rev-parse`."""
    if repo is not None:
        found = _head_from_files(repo, checkout)
        if found is not None:
            return found
    status, out, _ = gitrepo.run(
        checkout, "rev-parse", "HEAD", "--symbolic-full-name", "HEAD", "--", check=False
    )
    lines = out.decode("utf-8", errors="replace").split("\n")
    if status != 0 or len(lines) < 2 or not is_sha(lines[0].strip()):
        return None, None
    name = lines[1].strip()
    branch = name.removeprefix("refs/heads/") if name.startswith("refs/heads/") else None
    return lines[0].strip(), branch


def _head_from_files(repo: Path, checkout: Path) -> tuple[str | None, str | None] | None:
    """`head_and_branch` of a linked checkout from the files git reads for it; None when git
    must be asked (not a plain layout, HEAD not a branch of refs/heads or a commit)."""
    admin = _admin_dir(repo, checkout)
    if admin is None or not _plain_git_folder(repo):
        return None
    try:
        text = (admin / "HEAD").read_text(encoding="utf-8").strip()
        branch = _head_branch(admin / "HEAD")
    except (OSError, ValueError):
        return None
    if branch is None:  # detached at `text`
        commit = rev(repo, f"{text}^{{commit}}")
        return (commit, None) if commit is not None else None
    if not _plain_branch_name(branch):
        return None
    tip = rev(repo, f"refs/heads/{branch}^{{commit}}")
    return (tip, branch) if tip is not None else (None, None)


def _plain_branch_name(branch: str) -> bool:
    """A branch name as git makes them, safe to read as a path inside the git folder; anything
    else (an option-like, spaced, control-character or dotted name) is left for git to say what
    it names."""
    if branch.startswith("-") or any(c.isspace() or ord(c) < 32 or c == "\\" for c in branch):
        return False
    return all(
        part not in ("", ".", "..") and not part.endswith(".lock") for part in branch.split("/")
    )


def branch_tip_from_files(repo: Path, branch: str) -> str | None:
    """The commit `refs/heads/<branch>` names, read from the repository's git folder as git
    reads it (the loose ref file, else `packed-refs`) when it is a plain one: no git run, and no
    lookup process to start for a one-off read. None when git must be asked (another layout, a
    symbolic or odd ref, a branch in neither file)."""
    if not _plain_branch_name(branch) or not _plain_git_folder(repo):
        return None
    dot, ref = repo / ".git", f"refs/heads/{branch}"
    try:
        text = (dot / ref).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        text = None
    except (OSError, ValueError):
        return None
    if text is not None:
        return text if is_sha(text) else None
    try:
        packed = (dot / "packed-refs").read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    for line in packed.splitlines():
        sha, _, name = line.partition(" ")
        if name == ref and is_sha(sha):
            return sha
    return None


GROWN_FROM_LIMIT = 64  # commits read above a baseline before git is asked instead


def grown_from(repo: Path, tip: str, base: str, needles: tuple[str, ...]) -> bool:
    """Whether `gitrepo.branch_maker`'s walk down `tip`'s first parents would find `base` first:
    `tip` reaches `base` through single-parent commits none of whose messages holds any needle
    (not even as a part: a stricter test than the walk's exact match), and `base`'s message holds
    every one. Read from the kept lookup process (no git run); False,
    for the caller to ask git, when it cannot tell (a merge on the way, more than
    `GROWN_FROM_LIMIT` commits, an object it cannot read)."""
    if not (is_sha(tip) and is_sha(base) and repo.is_dir() and _identity_of(repo)):
        return False
    wanted = [needle.encode() for needle in needles]
    commit = tip
    for _ in range(GROWN_FROM_LIMIT):
        found = _contents(repo, commit)
        if found is None or found[1] != "commit":
            return False
        header, _, message = found[2].partition(b"\n\n")
        if commit == base:
            return all(needle in message for needle in wanted)
        if any(needle in message for needle in wanted):
            return False
        parents = [line[7:].decode() for line in header.split(b"\n") if line.startswith(b"parent ")]
        if len(parents) != 1:
            return False
        commit = parents[0]
    return False


def work_snapshot(checkout: Path, repo: Path) -> str:
    """`gitrepo.snapshot_tree` of a task's checkout of `repo`, its system-of-record files as its
    index has them: the work, for `without_bookkeeping`, which replaces those files anyway. Work
    unchanged since the last snapshot, or since its commit, needs no `write-tree` (the tree's
    object looked up in the kept lookup process): the gate edits VERIFICATION.md after committing
    the work, and a landing read the whole checkout again for that one file."""
    return gitrepo.snapshot_tree(
        checkout, exists=lambda sha: rev(repo, sha) is not None, leave_out=SOR_FILES
    )


def branch_tip(repo: Path, branch: str) -> str | None:
    """The commit a branch is at (`gitrepo.branch_head`, from the kept lookup process)."""
    return rev(repo, f"refs/heads/{branch}^{{commit}}")


def tip_and_tree(repo: Path, ref: str) -> tuple[str, str] | None:
    """A branch's commit and that commit's tree; None when there is none."""
    assert ref.startswith("refs/"), ref  # a checked name: never read as an option
    tip, tree = revs(repo, ref, f"{ref}^{{tree}}")
    return (tip, tree) if tip is not None and tree is not None else None


def tree_of(repo: Path, commit: str) -> str:
    if is_sha(commit):
        return fixed((str(repo), "tree", commit), lambda: _tree_of(repo, commit))
    return _tree_of(repo, commit)


def _tree_of(repo: Path, commit: str) -> str:
    found = rev(repo, f"{commit}^{{tree}}")
    if found is None:
        raise GitFailure(["rev-parse", f"{commit}^{{tree}}"], 128, f"no tree for {commit}")
    return found


def parent_of(repo: Path, commit: str) -> str | None:
    if is_sha(commit):
        return fixed((str(repo), "parent", commit), lambda: rev(repo, f"{commit}^1^{{commit}}"))
    return rev(repo, f"{commit}^1^{{commit}}")


def is_ancestor(repo: Path, ancestor: str, descendant: str) -> bool:
    def ask() -> bool:
        status, _, _ = gitrepo.run(
            repo, "merge-base", "--is-ancestor", ancestor, descendant, check=False
        )
        return status == 0

    if is_sha(ancestor) and is_sha(descendant):
        return fixed((str(repo), "ancestor", ancestor, descendant), ask)
    return ask()


def count_commits(repo: Path, since: str, tip: str) -> int:
    """How many commits `tip` has that `since` has not (`rev-list --count since..tip`)."""

    def ask() -> int:
        return int(gitrepo.output(repo, "rev-list", "--count", f"{since}..{tip}") or 0)

    if is_sha(since) and is_sha(tip):
        return fixed((str(repo), "count", since, tip), ask)
    return ask()


def changed_paths(repo: Path, old: str, new: str, *, added_only: bool = False) -> list[str]:
    """Paths that differ between two tree-ishes (no rename detection), in git's order."""
    changes = _changes_kept(repo, old, new)
    return [change.path for change in changes if not added_only or change.status == "A"]


class TreeChange(NamedTuple):
    """One path that differs between two trees, as `git diff-tree --raw` says it."""

    status: str  # A, D, M, T
    path: str
    old_mode: str
    new_mode: str
    old: str  # the object on each side (zeros where there is none)
    new: str


def _changes_kept(repo: Path, old: str, new: str) -> list[TreeChange]:
    """`_changes`, kept per pair of object names (what two commits differ in never changes)."""
    if is_sha(old) and is_sha(new):
        return fixed((str(repo), "changes", old, new), lambda: _changes(repo, old, new))
    return _changes(repo, old, new)


def _changes(repo: Path, old: str, new: str) -> list[TreeChange]:
    """Each path that differs, with its modes and objects, as `git diff-tree -r --raw
    --no-renames` says them: read from the kept lookup process (`_walked_changes`), else one
    `diff-tree`."""
    walked = _walked_changes(repo, old, new)
    return walked if walked is not None else _diff_tree(repo, old, new)


def _diff_tree(repo: Path, old: str, new: str) -> list[TreeChange]:
    raw = gitrepo.run(repo, "diff-tree", "-r", "-z", "--raw", "--no-renames", old, new)[1]
    parts = raw.split(b"\0")
    changes = []
    for index in range(0, len(parts) - 1, 2):
        if not parts[index]:
            continue
        old_mode, new_mode, old_object, new_object, status = parts[index].decode()[1:].split()
        path = gitrepo._name(parts[index + 1])
        changes.append(TreeChange(status[:1], path, old_mode, new_mode, old_object, new_object))
    return changes


WALKED_TREES_MAX = 256  # trees read for one diff before `diff-tree` is asked instead
_TREE_MODE = 0o040000
_FILE_MODE = 0o100000
_TYPE_BITS = 0o170000


def _walked_changes(repo: Path, old: str, new: str) -> list[TreeChange] | None:
    """`_changes` without a git process: both trees read from the kept lookup process, only the
    subtrees that differ opened (each level's in one exchange), entries compared in git's tree
    order (a folder's name sorts as if it ended in `/`) with modes made canonical as git makes
    them, so the list is diff-tree's, in its order. A landing diffs up to three pairs (the
    change, the checkout's fast-forward, the files it reports); each was a process. None (ask
    git) when the repository has no kept lookup process, an object cannot be read, or the change
    spans more than `WALKED_TREES_MAX` trees (git is faster there)."""
    if not (repo.is_dir() and _identity_of(repo)):
        return None
    old_tree, new_tree = revs(repo, f"{old}^{{tree}}", f"{new}^{{tree}}")
    if old_tree is None or new_tree is None:
        return None
    read: dict[str, dict[bytes, _Entry]] = {}  # by tree id; "" is a side with no folder
    level = [(old_tree, new_tree)]
    while level:  # every tree the walk opens, a level of folders at a time
        wanted = list(
            dict.fromkeys(sha for pair in level for sha in pair if sha and sha not in read)
        )
        if len(read) + len(wanted) > WALKED_TREES_MAX:
            return None
        found = _kept_contents(repo, wanted) if wanted else []
        if found is None:
            return None
        for sha, got in zip(wanted, found, strict=True):
            if got is None or got[1] != "tree":
                return None
            try:
                read[sha] = _tree_entries(got[2], len(sha) // 2)
            except ValueError:  # not a tree git writes: git says what it holds
                return None
        level = [
            (was.sha if was else "", now.sha if now else "")
            for pair in level
            for was, now in _differing(read, *pair)
            if (now or was).mode & _TYPE_BITS == _TREE_MODE  # type: ignore[union-attr]
        ]
    changes: list[TreeChange] = []
    zero = "0" * len(old_tree)

    def walk(prefix: bytes, old_sha: str, new_sha: str) -> None:
        for was, now in _differing(read, old_sha, new_sha):
            mode, _, name = now or was  # type: ignore[misc]
            if mode & _TYPE_BITS == _TREE_MODE:  # a folder on one side or both: its files
                walk(prefix + name + b"/", was.sha if was else "", now.sha if now else "")
            else:
                changes.append(_tree_change(gitrepo._name(prefix + name), was, now, zero))

    walk(b"", old_tree, new_tree)
    return changes


def _differing(
    read: dict[str, dict[bytes, "_Entry"]], old: str, new: str
) -> list[tuple["_Entry | None", "_Entry | None"]]:
    """The entries of two read trees ("" for none) that differ, in git's order."""
    before, after = read.get(old, {}), read.get(new, {})
    pairs = ((before.get(key), after.get(key)) for key in sorted(before.keys() | after.keys()))
    return [(was, now) for was, now in pairs if was != now]


class _Entry(NamedTuple):
    mode: int  # canonical, as git compares and prints it
    sha: str
    name: bytes


def _tree_entries(data: bytes, size: int) -> dict[bytes, _Entry]:
    """A tree object's entries (`size`: the bytes of an object id), keyed as git sorts them."""
    listed, at = {}, 0
    while at < len(data):
        space, nul = data.index(b" ", at), data.index(b"\0", at)
        mode, name = int(data[at:space], 8), data[space + 1 : nul]
        if mode & _TYPE_BITS == _FILE_MODE:
            mode = 0o100755 if mode & 0o100 else 0o100644
        entry = _Entry(mode, data[nul + 1 : nul + 1 + size].hex(), name)
        at = nul + 1 + size
        listed[name + b"/" if mode & _TYPE_BITS == _TREE_MODE else name] = entry
    return listed


def _tree_change(path: str, was: _Entry | None, now: _Entry | None, zero: str) -> TreeChange:
    """The line diff-tree prints for a path whose entry differs (a side that has none: zeros)."""
    if was is None or now is None:
        status = "A" if was is None else "D"
    else:
        status = "M" if was.mode & _TYPE_BITS == now.mode & _TYPE_BITS else "T"
    return TreeChange(
        status,
        path,
        f"{was.mode:06o}" if was else "000000",
        f"{now.mode:06o}" if now else "000000",
        was.sha if was else zero,
        now.sha if now else zero,
    )


GITLINK_MODE = b"160000"  # a tree entry that is a submodule's commit, not a file


def undeclared_gitlinks(repo: Path, old: str, new: str) -> list[str]:
    """Paths `new` makes a gitlink that its `.gitmodules` does not declare: a repository an
    agent cloned or made inside its worktree, which `git add` records as a bare pointer to a
    commit only that repository holds."""
    gitlink = GITLINK_MODE.decode()
    linked = [change.path for change in _changes_kept(repo, old, new) if change.new_mode == gitlink]
    if not linked:
        return []
    status, listed, _ = gitrepo.run(
        repo, "config", "--blob", f"{new}:.gitmodules", "-z", "--get-regexp",
        r"^submodule\..*\.path$", check=False,
    )  # fmt: skip
    declared = set()
    if status == 0:
        for record in listed.split(b"\0"):
            _, _, path = record.partition(b"\n")
            if path:
                declared.add(gitrepo._name(path))
    return [path for path in linked if path not in declared]


def submodules_held_only_in(worktree: Path | None, repo: Path, old: str, new: str) -> list[str]:
    """Paths where `new` points a submodule at a commit only the task's worktree holds: not in
    the user's checkout of that submodule, nor under a remote-tracking branch of the worktree's
    copy. Landed, the base would name a commit lost with the worktree, that no `git submodule
    update` could fetch."""
    gitlink = GITLINK_MODE.decode()
    held = []
    for change in _changes_kept(repo, old, new):
        if change.new_mode != gitlink or _has_commit(repo / change.path, change.new):
            continue
        if worktree is None or not _published(worktree / change.path, change.new):
            held.append(change.path)
    return held


def _has_commit(folder: Path, commit: str) -> bool:
    if not (folder / ".git").exists():
        return False
    return gitrepo.run(folder, "cat-file", "-e", f"{commit}^{{commit}}", check=False)[0] == 0


def _published(folder: Path, commit: str) -> bool:
    """Whether a remote-tracking branch of the repository at `folder` contains `commit`."""
    if not (folder / ".git").exists():
        return False
    status, refs, _ = gitrepo.run(
        folder, "for-each-ref", "--count=1", "--format=%(refname)", "--contains", commit,
        "refs/remotes", check=False,
    )  # fmt: skip
    return status == 0 and bool(refs.strip())


# -- trees without the bookkeeping files ---------------------------------------------------------


_ENTRY_TYPES = {b"40000": b"tree", GITLINK_MODE: b"commit"}  # else a blob


def _top_entries(repo: Path, tree: str, *names: str) -> list[bytes]:
    """`ls-tree -z` records of a tree's top level (only `names`, when given), read from the tree
    object the kept lookup process hands over (no git run)."""
    found = _contents(repo, f"{tree}^{{tree}}")
    if found is None or found[1] != "tree":
        raise GitFailure(["ls-tree", tree], 128, f"not a tree: {tree}")
    width, raw, wanted = len(found[0]) // 2, found[2], {name.encode() for name in names}
    records, at = [], 0
    while at < len(raw):
        space, end = raw.index(b" ", at), raw.index(b"\0", at)
        mode, name, sha = raw[at:space], raw[space + 1 : end], raw[end + 1 : end + 1 + width]
        at = end + 1 + width
        if names and name not in wanted:
            continue
        kind = _ENTRY_TYPES.get(mode, b"blob")
        records.append(b"%06o %s %s\t%s" % (int(mode, 8), kind, sha.hex().encode(), name))
    return records


def without_bookkeeping(repo: Path, tree: str, base: str) -> str:
    """`tree` with every top-level system-of-record file (TASK.md, init.sh, ...) as `base` has
    it: dropped when `base` has none, `base`'s own file when the repository has one by that name.
    So whatever an agent did to them, they are never part of a change that lands."""
    if is_sha(tree) and is_sha(base):
        return fixed(
            (str(repo), "clean", tree, base),
            lambda: _without(repo, tree, base),
            still=lambda clean: _has(repo, clean),
        )
    return _without(repo, tree, base)


def _without(repo: Path, tree: str, base: str) -> str:
    entries = _top_entries(repo, tree)
    mine = [record for record in entries if record.split(b"\t", 1)[1] in _SOR_NAMES]
    if is_sha(base):
        theirs = fixed((str(repo), "sor", base), lambda: _top_entries(repo, base, *SOR_FILES))
    else:
        theirs = _top_entries(repo, base, *SOR_FILES)
    if sorted(mine) == sorted(theirs):
        return tree
    kept = [record for record in entries if record.split(b"\t", 1)[1] not in _SOR_NAMES]
    data = b"".join(record + b"\0" for record in [*kept, *theirs])
    return run_input(repo, "mktree", "-z", data=data)[1].decode().strip()


# -- commits and merges in memory ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Author:
    name: str
    email: str
    date: str  # git's raw form, "<seconds> <zone>"


_IDENTITIES: dict[Path, tuple[float, list[str]]] = {}
IDENTITY_TTL_S = 5.0


def identity(repo: Path) -> list[str]:
    """`-c` options for a commit the board makes: the repository's identity (else kanban's), no
    signing. Remembered for a few seconds: a landing makes several commits, and each lookup is
    two `git config` processes."""
    now = time.monotonic()
    known = _IDENTITIES.get(repo)
    if known is not None and now - known[0] < IDENTITY_TTL_S:
        return known[1]
    options = gitrepo._identity(repo)
    _IDENTITIES[repo] = (now, options)
    return options


def commit_tree(
    repo: Path,
    tree: str,
    parents: Iterable[str],
    message: str,
    *,
    author: Author | None = None,
) -> str:
    """A commit of `tree` on `parents` with `message` (from stdin), made in memory: no ref, no
    index, no checkout changes."""
    args = [*identity(repo), "commit-tree", tree]
    for parent in parents:
        args += ["-p", parent]
    env = {}
    if author is not None:
        env = {
            "GIT_AUTHOR_NAME": author.name,
            "GIT_AUTHOR_EMAIL": author.email,
            "GIT_AUTHOR_DATE": author.date,
        }
    out = run_input(repo, *args, data=message.encode("utf-8", errors="replace"), env=env)[1]
    return out.decode().strip()


@dataclass(frozen=True, slots=True)
class Merged:
    tree: str | None  # None when it conflicts
    conflicts: list[str]


class UnrelatedHistories(Exception):
    """The two sides share no commit: there is no base to merge from."""


def merge(repo: Path, ours: str, theirs: str) -> Merged:
    """The three-way merge of two commits at their merge base, in memory (`merge-tree
    --write-tree`): the merged tree, or the conflicting paths."""
    if is_sha(ours) and is_sha(theirs):
        found = fixed(
            (str(repo), "merge", ours, theirs),
            lambda: _merge(repo, ours, theirs),
            still=lambda merged: _has(repo, merged.tree),
        )
        return Merged(found.tree, list(found.conflicts))
    return _merge(repo, ours, theirs)


def _merge(repo: Path, ours: str, theirs: str) -> Merged:
    status, out, err = gitrepo.run(
        repo, "merge-tree", "--write-tree", "-z", "--name-only", "--no-messages", ours, theirs,
        check=False,
    )  # fmt: skip
    if status not in (0, 1):
        if "unrelated histories" in err:
            raise UnrelatedHistories(err.strip())
        raise GitFailure(["merge-tree", "--write-tree", ours, theirs], status, err)
    parts = out.split(b"\0")
    tree = parts[0].decode().strip()
    if status == 0:
        return Merged(tree, [])
    files = list(dict.fromkeys(gitrepo._name(part) for part in parts[1:] if part))
    return Merged(None, files)


def merge_at(repo: Path, base_tree: str, ours_tree: str, theirs_tree: str, *, label: str) -> Merged:
    """The three-way merge of three trees (a cherry-pick's, a squash onto a moved base's): both
    sides become synthetic commits on a synthetic base, so their merge base is that base."""
    if ours_tree == base_tree:
        return Merged(theirs_tree, [])
    if theirs_tree in (base_tree, ours_tree):
        return Merged(ours_tree, [])
    base = commit_tree(repo, base_tree, (), f"kanban: merge base ({label})\n")
    ours = commit_tree(repo, ours_tree, (base,), f"kanban: ours ({label})\n")
    theirs = commit_tree(repo, theirs_tree, (base,), f"kanban: theirs ({label})\n")
    return merge(repo, ours, theirs)


def commit_info(repo: Path, commit: str) -> tuple[Author, str]:
    """A commit's author and raw message."""
    raw = gitrepo.run(repo, "show", "-s", "--format=%an%x00%ae%x00%ad%x00%B", "--date=raw", commit)
    name, email, date, message = raw[1].decode("utf-8", errors="replace").split("\0", 3)
    return Author(name, email, date), message


def commits_between(repo: Path, tip: str, *excluded: str) -> list[str]:
    """The non-merge commits of `tip` that none of `excluded` has, oldest first."""
    text = gitrepo.output(repo, "rev-list", "--reverse", "--no-merges", tip, "--not", *excluded)
    return text.split()


# -- refs ---------------------------------------------------------------------------------------


def update_refs(repo: Path, commands: Iterable[str], message: str) -> tuple[bool, str]:
    """Apply `update-ref --stdin` commands (`update <ref> <new> <old>`, `delete <ref> <old>`,
    `create <ref> <new>`) as one transaction: all or nothing. (applied, git's complaint)."""
    data = "".join(f"{line}\n" for line in commands).encode()
    status, _, err = run_input(repo, "update-ref", "-m", message, "--stdin", data=data, check=False)
    return status == 0, err.strip()


# -- the checkouts of a branch ------------------------------------------------------------------


def checkouts_of(repo: Path, branch: str) -> list[Path]:
    """Every checkout (the main work tree or a linked one) that has `branch` checked out. Read
    from the repository's git folder (`HEAD`, `worktrees/*/HEAD` and `gitdir`, as `git worktree
    list` reads them) when it is a plain one; from `git worktree list` otherwise."""
    return _checkouts_of(repo, branch, _git_folders(repo))


def operations_and_checkouts(repo: Path, branch: str) -> tuple[list[tuple[Path, str]], list[Path]]:
    """`branch_operations` and `checkouts_of`, from one read of the repository's checkouts (a
    landing asks both twice, and each read resolves every checkout's path)."""
    folders = _git_folders(repo)
    return _branch_operations(repo, branch, folders), _checkouts_of(repo, branch, folders)


def _checkouts_of(repo: Path, branch: str, folders: list[tuple[str, str]] | None) -> list[Path]:
    found = _checkouts_from_files(repo, folders)
    if found is None:
        return [
            Path(entry.path)
            for entry in gitrepo.worktrees(repo)
            if entry.branch == branch
            and not entry.prunable
            and (Path(entry.path) / ".git").exists()
        ]
    return [
        Path(path) for path, name in found
        if name == branch and os.path.exists(os.path.join(path, ".git"))
    ]  # fmt: skip


_UNUSUAL_CONFIG = re.compile(r"^\s*(worktree|refstorage|bare\s*=\s*true)\b", re.I | re.M)


def _plain_git_folder(repo: Path) -> bool:
    """Whether `repo/.git` is the plain layout whose files this module reads as git would: a
    folder (no `.git` file, not itself a linked checkout), no per-worktree config, no
    core.worktree, core.bare or ref backend other than files."""
    dot = repo / ".git"
    try:
        if dot.is_symlink() or not dot.is_dir() or (dot / "commondir").exists():
            return False
        if (dot / "config.worktree").exists():
            return False
        config = (dot / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return not _UNUSUAL_CONFIG.search(config)


def _resolver() -> Callable[[str], str]:
    """`os.path.realpath`, remembering each folder it resolved: the checkouts of a repository
    share their parent folders, resolved once per read of them instead of once per checkout
    (a symlink found on the way is resolved by `realpath` itself)."""
    known: dict[str, str] = {}

    def resolve(path: str) -> str:
        found = known.get(path)
        if found is None:
            head, tail = os.path.split(path)
            if not head or head == path or tail in ("", ".", ".."):
                found = os.path.realpath(path)
            else:
                joined = os.path.join(resolve(head), tail)
                found = os.path.realpath(joined) if os.path.islink(joined) else joined
            known[path] = found
        return found

    return resolve


def _git_folders(repo: Path) -> list[tuple[str, str]] | None:
    """(checkout, its git folder) for the main work tree of `repo` and each linked one whose
    `gitdir` file can be read, or None when the layout is not the plain one (a `.git` file, a
    work tree set in the config, a ref backend other than files): the callers ask git then."""
    if not _plain_git_folder(repo):
        return None
    resolve = _resolver()
    dot = os.path.join(repo, ".git")
    folders = [(resolve(os.fspath(repo)), dot)]
    admin = os.path.join(dot, "worktrees")
    try:
        names = sorted(os.listdir(admin))
    except OSError:
        names = []
    for name in names:
        entry = os.path.join(admin, name)
        try:
            pointer = _read(os.path.join(entry, "gitdir")).strip()
        except (OSError, UnicodeDecodeError):
            continue
        folders.append((os.path.dirname(resolve(os.path.join(entry, pointer))), entry))
    return folders


def _read(path: str | Path) -> str:
    with open(path, "rb") as file:
        return file.read().decode("utf-8")


def _head_branch(head_file: str | Path) -> str | None:
    text = _read(head_file).strip()
    if text.startswith("ref: refs/heads/"):
        return text.removeprefix("ref: refs/heads/")
    if is_sha(text):
        return None  # detached
    raise ValueError(f"{head_file}: not a HEAD git 2.39 writes")


def branch_operations(repo: Path, branch: str) -> list[tuple[Path, str]]:
    """(checkout, `rebase` or `bisect`) for each checkout where one of `branch` is under way:
    its HEAD is detached then, so `checkouts_of` does not list it, but git counts the branch as
    checked out there (`git branch -f` refuses), and moving it would break the operation."""
    return _branch_operations(repo, branch, _git_folders(repo))


def _branch_operations(
    repo: Path, branch: str, folders: list[tuple[str, str]] | None
) -> list[tuple[Path, str]]:
    if folders is None:
        folders = []
        for listed in gitrepo.worktrees(repo):
            if listed.branch is None and not listed.prunable and Path(listed.path).is_dir():
                found = gitrepo.output(Path(listed.path), "rev-parse", "--absolute-git-dir")
                folders.append((listed.path, found))
    busy = []
    for checkout, git_dir in folders:
        operation = _operation_on(git_dir)
        if operation is not None and operation[1] == branch:
            busy.append((Path(checkout), operation[0]))
    return busy


def _operation_on(git_dir: str) -> tuple[str, str] | None:
    """(`rebase` or `bisect`, the branch it works on) when one is under way in the checkout
    whose git folder is `git_dir`, as git records it there."""
    try:
        for folder in ("rebase-merge", "rebase-apply"):
            named = os.path.join(git_dir, folder, "head-name")
            if os.path.isfile(named):
                name = _read(named).strip()
                if name.startswith("refs/heads/"):
                    return "rebase", name.removeprefix("refs/heads/")
        started = os.path.join(git_dir, "BISECT_START")
        if os.path.isfile(started):
            return "bisect", _read(started).strip()
    except (OSError, UnicodeDecodeError):
        return None
    return None


def _checkouts_from_files(
    repo: Path, folders: list[tuple[str, str]] | None
) -> list[tuple[str, str | None]] | None:
    """(checkout, its branch) for each of `folders` (`_git_folders`), or None when there are
    none to read (not the plain layout) or a HEAD is not one git 2.39 writes: the caller asks
    git then."""
    if folders is None:
        return None
    try:
        return [
            (checkout, _head_branch(os.path.join(git_dir, "HEAD"))) for checkout, git_dir in folders
        ]
    except (OSError, ValueError):
        return None


def _admin_dir(repo: Path, path: Path) -> Path | None:
    """The folder in `repo`'s git folder that registers the linked checkout `path`, when its
    `.git` file names one there; None otherwise."""
    dot = path / ".git"
    try:
        pointer = dot.read_text(encoding="utf-8").strip() if dot.is_file() else ""
    except OSError:
        return None
    if not pointer.startswith("gitdir: "):
        return None
    target = Path(os.path.realpath(pointer.removeprefix("gitdir: ")))
    return target if target.parent == Path(os.path.realpath(repo / ".git" / "worktrees")) else None


def remove_checkout(repo: Path, path: Path, *, trash: Path | None = None) -> Path | None:
    """`gitrepo.remove_worktree`, faster. With `trash` (a free path on the same filesystem), a
    linked checkout of `repo` is renamed there and its registration in the git folder removed
    as `git worktree prune` would (no git run); no file of the checkout is deleted yet: the
    caller deletes `trash` (returned) when it no longer holds locks. Otherwise (or when that
    cannot be done: a locked worktree, a rename refused) `git worktree remove`, one git run
    when `path` is registered where expected."""
    admin = _admin_dir(repo, path)
    if admin is not None and trash is not None and not (admin / "locked").exists():
        try:
            trash.parent.mkdir(parents=True, exist_ok=True)
            os.rename(path, trash)
        except OSError:
            pass
        else:
            # what `git worktree prune` does for it (a git run saved): its path is gone
            try:
                shutil.rmtree(admin)
            except OSError:
                gitrepo.prune(repo)
            return trash
    if admin is not None:
        status, _, _ = gitrepo.run(
            repo, "worktree", "remove", "--force", "--force", "--", str(path), check=False
        )
        if status == 0:
            return None
    gitrepo.remove_worktree(repo, path)
    return None


def local_changes(checkout: Path) -> list[str]:
    """Tracked files changed in a checkout, staged or not (`git status`, read without taking
    git's optional locks, so it changes nothing there). A submodule is not among them: the
    fast-forward moves only its pointer in the index and never touches its files, so whatever
    the person has there is kept (and a pointer staged on a path the landing also moves is
    refused by the dry run). Counting them, a landing that bumped a submodule left its checkout
    "dirty" and refused every later landing until `git submodule update`."""
    raw = gitrepo.run(
        checkout, "--no-optional-locks", "status", "--porcelain=v1", "-z",
        "--untracked-files=no", "--no-renames", "--ignore-submodules=all",
    )[1]  # fmt: skip
    return [gitrepo._name(record[3:]) for record in raw.split(b"\0") if len(record) > 3]


def unstaged_changes(checkout: Path) -> list[str]:
    """Tracked files whose content on disk differs from the index (read without git's optional
    locks)."""
    raw = gitrepo.run(checkout, "--no-optional-locks", "diff", "--name-only", "-z", "--no-renames")
    return [gitrepo._name(part) for part in raw[1].split(b"\0") if part]


# how `read-tree` names the files it will not overwrite: quoted on one line, or tab-indented
_REFUSED_ONE = re.compile(r"^error: (?:Entry|Untracked working tree file) '(.+?)' ", re.M)
_REFUSED_LISTED = re.compile(r"^\t(.+)$", re.M)


def fast_forward_refusal(checkout: Path, old: str, new: str) -> tuple[list[str], str | None] | None:
    """Why `fast_forward_checkout(checkout, old, new)` must not run right now (the files, and
    git's words when git refuses; None for words when git would go through but overwrite files
    it does not track), or None when it may: the same `read-tree -m -u`, as a dry run on a copy
    of the checkout's index, so nothing there is written or locked. It sees what `git status`
    does not: an untracked file where a new folder goes, a skip-worktree or assume-unchanged
    edit (an index another git command holds: `index_locked`, first)."""
    index = gitrepo._index_file(checkout)
    with tempfile.TemporaryDirectory(prefix="kanban-ff-") as folder:
        copy = Path(folder) / "index"
        with contextlib.suppress(FileNotFoundError):  # none yet: git starts from an empty one
            shutil.copy2(index, copy)  # the same mtime: git's racy-clean check stays honest
        env = {"GIT_INDEX_FILE": str(copy)}
        dry_run = ("read-tree", "-m", "-u", "-n", old, new)
        status, _, stderr = gitrepo.run(checkout, *dry_run, env=env, check=False)
        if status != 0:  # as the real one does: a file touched but unchanged looks changed
            gitrepo.run(checkout, "update-index", "-q", "--refresh", env=env, check=False)
            status, _, stderr = gitrepo.run(checkout, *dry_run, env=env, check=False)
    if status == 0:
        in_the_way = _untracked_in_the_way(checkout, old, new)
        return (in_the_way, None) if in_the_way else None
    files = _REFUSED_ONE.findall(stderr) + _REFUSED_LISTED.findall(stderr)
    if not files:  # git's words name none (a folder where a file goes): the paths in the way
        files = _untracked_in_the_way(checkout, old, new)
    words = "; ".join(
        line.removeprefix("error: ").strip().rstrip(".") for line in stderr.splitlines()
        if line.startswith("error: ")
    )  # fmt: skip
    return list(dict.fromkeys(files)), words or stderr.strip()


def index_locked(checkout: Path) -> bool:
    """Whether another git command holds the checkout's index (`index.lock`): it is running, or
    it crashed and left the lock, and git refuses to touch the index until it is gone."""
    index = gitrepo._index_file(checkout)
    return index.with_name(index.name + ".lock").exists()


def _untracked_in_the_way(checkout: Path, old: str, new: str) -> list[str]:
    """What the checkout holds, untracked, where the fast-forward from `old` to `new` adds a file
    (anything at that path) or needs a folder (a file or symlink on its way). git's dry run
    passes over these when `.gitignore` names them: `read-tree -m -u` takes an ignored file
    for a disposable one, so a person's `.env` or `build/` would be replaced or deleted. A path
    `old` tracks and `new` removes is git's to replace, not in the way."""
    changes = _changes_kept(checkout, old, new)
    removed = {change.path for change in changes if change.status == "D"}
    found: list[str] = []
    for change in changes:
        if change.status != "A":
            continue
        path = change.path
        if os.path.lexists(checkout / path):
            found.append(path)
            continue
        folder = os.path.dirname(path)
        while folder and folder not in removed:
            place = checkout / folder
            if os.path.lexists(place) and (place.is_symlink() or not place.is_dir()):
                found.append(folder)
                break
            folder = os.path.dirname(folder)
    return list(dict.fromkeys(found))


def moved_submodules(repo: Path, old: str, new: str) -> list[tuple[str, str, str]]:
    """(path, old commit, new commit) of each submodule whose pointer differs between two
    commits (or trees) and is in both: the ones a fast-forward leaves behind in a checkout.
    Read from the changes the landing listed already (no git run of its own)."""
    gitlink = GITLINK_MODE.decode()
    return [
        (change.path, change.old, change.new)
        for change in _changes_kept(repo, old, new)
        if change.old_mode == change.new_mode == gitlink
    ]


def bring_submodule_along(checkout: Path, path: str, old: str, new: str) -> str | None:
    """Check out `new` in the checkout's submodule at `path` when it sits clean on `old` (where
    the checkout had it); never fetches. None when done or nothing was to do (not initialised);
    else why it was left as it is."""
    folder = checkout / path
    if not (folder / ".git").exists():
        return None  # not initialised here: nothing checked out to bring along
    status, head, _ = gitrepo.run(folder, "rev-parse", "HEAD", check=False)
    if status != 0 or head.decode().strip() != old:
        return f"{path} is not at the commit it had before the landing; left as it is"
    if gitrepo.run(folder, "--no-optional-locks", "status", "--porcelain")[1].strip():
        return f"{path} has local changes; left at {old[:12]}"
    status, _, stderr = gitrepo.run(
        folder, "-c", "advice.detachedHead=false", "checkout", "-q", "--detach", new, check=False
    )
    if status != 0:
        return f"{path} does not have {new[:12]} here ({stderr.strip()[-120:]})"
    return None


def fast_forward_checkout(checkout: Path, old: str, new: str) -> None:
    """Bring a clean checkout of the branch from `old` to `new` (its index and files), as a
    fast-forward would: `read-tree -m -u` refuses to overwrite any local change, and checks
    everything before it writes anything. The index's stat cache is refreshed only when git
    refused (a file touched but unchanged looks changed to it): one git run, not two, per
    landing in the common case."""
    if gitrepo.run(checkout, "read-tree", "-m", "-u", old, new, check=False)[0] == 0:
        return
    gitrepo.run(checkout, "update-index", "-q", "--refresh", check=False)
    gitrepo.run(checkout, "read-tree", "-m", "-u", old, new)


def index_tree(checkout: Path) -> str:
    """The tree a checkout's index holds (a tree object is written; nothing else changes)."""
    return gitrepo.output(checkout, "write-tree")


# -- scratch checkouts for verification ---------------------------------------------------------


def scratch_marker(path: Path) -> Path:
    """Beside a scratch checkout: present while something may have been left in it (a verify
    command ran there and it was not cleaned since)."""
    return path.with_name(f"{path.name}.used")


def prepare_scratch(repo: Path, path: Path, commit: str) -> None:
    """A detached checkout of `commit` at `path`, made once and then moved from commit to commit
    (only changed files are written), with everything else in it removed: when its marker says
    a verify command ran there since the last `clean_scratch` (a lander killed before it tidied
    up, say). The caller holds the scratch's lock, so nothing else runs git there; a lock file
    left by a killed git goes. Its git is put back as made before any git runs there, marker or
    not: a verify command may remove the marker too.

    The checkout is a repository of its own that borrows the user's objects (git's alternates),
    not a linked worktree of theirs: a verify command that runs git (`git config`, `git tag`,
    `git stash`, `git branch -f`) changes the scratch's refs and config, never the user's, and
    the user's `git worktree list` does not show it. `GitFailure` when something else is in the
    way (an older, linked scratch checkout included): the caller removes it and asks again."""
    dot = path / ".git"
    used = os.path.lexists(scratch_marker(path))
    if path.is_symlink() or not dot.is_dir() or dot.is_symlink():
        _make_scratch(repo, path)
    else:
        (dot / "index.lock").unlink(missing_ok=True)
    with _CONFIG_LOCK:
        _SCRATCH_CONFIG[path] = _config_as_made(path.parent, object_format_of(commit))
    _reset_scratch_git(path, check_index=used)
    gitrepo.run(path, *NO_HOOKS, "checkout", "--force", "--quiet", "--detach", commit)
    if used:  # its git was put back above: what is left to remove is files
        _clean_files(path)


def object_format_of(commit: str) -> str:
    """The object format (`sha1`, `sha256`) of the repository a commit id comes from."""
    return "sha256" if len(commit) == 64 else "sha1"


def _init_scratch_repository(path: Path, object_format: str) -> None:
    """`git init` of a scratch repository: the one run whose config `_config_as_made` knows."""
    gitrepo.run(path, "init", "--quiet", f"--object-format={object_format}")


def _make_scratch(repo: Path, path: Path) -> None:
    """An empty repository at `path` whose objects are the user's (its alternates name their
    object folder): nothing is copied, and a commit the landing built there is readable at once.
    An older scratch checkout (a linked worktree) that was removed is unregistered first."""
    gitrepo.run(repo, "worktree", "prune")
    if path.exists() or path.is_symlink():
        raise GitFailure(["init", str(path)], None, f"{path} is in the way")
    common, object_format = gitrepo.output(
        repo, "rev-parse", "--path-format=absolute", "--git-common-dir", "--show-object-format"
    ).splitlines()
    path.mkdir(parents=True)
    _init_scratch_repository(path, object_format)
    alternates = path / ".git" / "objects" / "info" / "alternates"
    alternates.parent.mkdir(parents=True, exist_ok=True)
    alternates.write_text(str(Path(common) / "objects") + "\n", encoding="utf-8")
    # an older kanban kept the config as made beside the checkout, where a verify could write it
    path.with_name(f"{path.name}.config").unlink(missing_ok=True)


# The config `git init` writes for a scratch repository, per folder (its file system decides
# core.filemode, core.symlinks...) and object format; and the one each scratch checkout is put
# back to. Kept in memory, never in a file: every file a lander reads is writable by the verify
# command, and a config rewritten there (core.fsmonitor, a filter) would run its code in the
# lander's next git run there.
_CONFIG_AS_MADE: dict[tuple[Path, str], bytes] = {}
_SCRATCH_CONFIG: dict[Path, bytes] = {}
_CONFIG_LOCK = threading.Lock()


def _config_as_made(folder: Path, object_format: str) -> bytes:
    """The config a scratch repository in `folder` had when `git init` made it: that of a
    repository made for the purpose in a fresh private folder there, once per process."""
    key = (folder, object_format)
    known = _CONFIG_AS_MADE.get(key)
    if known is None:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="kanban-init-", dir=folder) as made:
            _init_scratch_repository(Path(made), object_format)
            known = (Path(made) / ".git" / "config").read_bytes()
        _CONFIG_AS_MADE[key] = known
    return known


# What git run by a verify command may leave in a scratch repository that changes which files,
# or which bytes, the next checkout writes there (beside its config and the index's flags), or
# which config the next git run there reads (`commondir` names another repository's).
SCRATCH_GIT_LEFTOVERS = ("info/sparse-checkout", "info/attributes", "commondir")


def _reset_scratch_git(path: Path, *, check_index: bool = True) -> None:
    """Put a scratch repository back as it was made, where git run by a verify command changed
    what the next git run there does: its config (`core.fsmonitor` runs a command, so do a
    filter and `core.autocrlf`, `core.sparseCheckout` change the files written), a
    sparse-checkout or attributes file, a `commondir` (another repository's config), and with
    `check_index` index entries marked skip-worktree or assume-unchanged (git keeps them, and
    their edited files, across `checkout --force`: the next verification would judge those
    files, not its commit's). An index with such marks goes, the next checkout writes every
    file. `GitFailure` when its config as made is unknown here (not prepared by this process)."""
    dot = path / ".git"
    with _CONFIG_LOCK:
        pristine = _SCRATCH_CONFIG.get(path)
    if pristine is None:
        raise GitFailure(["config"], None, f"cannot reset {path}: not prepared here")
    try:
        config = dot / "config"
        if not config.is_file() or config.is_symlink() or config.read_bytes() != pristine:
            config.unlink(missing_ok=True)
            config.write_bytes(pristine)
        for name in SCRATCH_GIT_LEFTOVERS:
            (dot / name).unlink(missing_ok=True)
    except OSError as error:
        raise GitFailure(["config"], None, f"cannot reset {path}: {error}") from None
    if not check_index or not (dot / "index").exists() or _index_as_checked_out(path):
        return
    listed = gitrepo.run(path, "ls-files", "-v", "-z")[1]
    if any(entry[:2] != b"H " for entry in listed.split(b"\0") if entry):
        (dot / "index").unlink()


# The digest of the index each scratch checkout's checkout wrote, as this process saw it right
# after: kept in memory, since the marker beside the scratch is writable by the verify command
# (one naming its meddled index there would pass that index off as the checkout's).
_CHECKED_OUT_INDEX: dict[Path, str] = {}
_CHECKED_OUT_LOCK = threading.Lock()


def mark_scratch(path: Path) -> None:
    """Say, before a verify command runs in a scratch checkout, that it needs a clean; remember
    the digest of the index the checkout wrote (`_index_as_checked_out`)."""
    with contextlib.suppress(OSError), _CHECKED_OUT_LOCK:
        _CHECKED_OUT_INDEX[path] = gitrepo.index_digest(path / ".git" / "index")
    scratch_marker(path).touch()


def _index_as_checked_out(path: Path) -> bool:
    """Whether a scratch checkout's index is byte for byte the one its checkout wrote (as this
    process remembers it): then no git run there marked an entry skip-worktree or
    assume-unchanged, and `ls-files` need not look (a verify command that does not touch git,
    the usual one). A scratch marked by another process (killed since) is listed."""
    with _CHECKED_OUT_LOCK:
        known = _CHECKED_OUT_INDEX.get(path)
    try:
        return known is not None and known == gitrepo.index_digest(path / ".git" / "index")
    except OSError:
        return False


def clean_scratch(path: Path) -> None:
    """Remove whatever a verify command left in a scratch checkout (untracked and ignored files,
    what its git changed in the repository; tracked files are put back by the next
    `prepare_scratch`), then its marker."""
    _reset_scratch_git(path)
    _clean_files(path)


def _clean_files(path: Path) -> None:
    """Remove the untracked and ignored files of a scratch checkout whose git is as it was made,
    then its marker."""
    gitrepo.run(path, "clean", "-ffdxq")
    scratch_marker(path).unlink(missing_ok=True)
