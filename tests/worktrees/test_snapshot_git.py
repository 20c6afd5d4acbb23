"""The git steps landing leans on, on real repositories: the worktree snapshot (blobs written
through git's bulk check-in) is the tree a plain `git add` gives, and bringing a checkout of the
base along refreshes a stale stat cache but never overwrites a local change."""

import os
import time
from pathlib import Path

import pytest

from boardlib.worktrees import gitrepo, landgit
from boardlib.worktrees.results import GitFailure
from tests.worktrees.conftest import GIT_ENV, file_hashes, git, git_runs, make_repo


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    made = make_repo(tmp_path / "repo")
    (made / ".gitattributes").write_text("*.txt text eol=lf\n")
    for index in range(30):
        (made / f"file{index}.py").write_text(f"VALUE = {index}\n")
    git(made, "add", "-A")
    git(made, "commit", "-q", "-m", "files")
    return made


def plain_add_tree(repo: Path, tmp_path: Path) -> str:
    """The tree `git add --all` writes in a fresh index, loose objects and all."""
    env = {**GIT_ENV, "GIT_INDEX_FILE": str(tmp_path / "plain-index")}
    import subprocess

    subprocess.run(["git", "read-tree", "HEAD"], cwd=repo, env=env, check=True)
    subprocess.run(["git", "add", "--all"], cwd=repo, env=env, check=True)
    done = subprocess.run(
        ["git", "write-tree"], cwd=repo, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def test_the_snapshot_is_the_tree_a_plain_add_gives(repo: Path, tmp_path: Path) -> None:
    for index in range(0, 30, 2):
        (repo / f"file{index}.py").write_text(f"VALUE = -{index}\n")
    (repo / "file1.py").unlink()
    (repo / "notes.txt").write_bytes(b"one\r\ntwo\r\n")  # converted to LF on the way in
    (repo / "new" / "deep").mkdir(parents=True)
    (repo / "new" / "deep" / "untracked.py").write_text("NEW = 1\n")
    index = (repo / ".git" / "index").read_bytes()
    status = git(repo, "status", "--porcelain")
    snapshot = gitrepo.snapshot_tree(repo)
    assert (repo / ".git" / "index").read_bytes() == index  # the real index is untouched
    assert git(repo, "status", "--porcelain") == status
    assert git(repo, "cat-file", "-p", f"{snapshot}:notes.txt") == "one\ntwo"
    assert "file1.py" not in git(repo, "ls-tree", "--name-only", snapshot).split()
    assert snapshot == plain_add_tree(repo, tmp_path)
    git(repo, "fsck", "--no-dangling")


def test_the_new_blobs_of_a_snapshot_go_into_one_pack(repo: Path) -> None:
    packs = repo / ".git" / "objects" / "pack"
    before = set(packs.glob("*.pack"))
    loose_before = int(git(repo, "count-objects").split()[0])
    for index in range(30):
        (repo / f"file{index}.py").write_text(f"CHANGED = {index}\n")
    gitrepo.snapshot_tree(repo)
    assert len(set(packs.glob("*.pack")) - before) == 1
    # the tree objects of write-tree stay loose; none of the 30 blobs is
    assert int(git(repo, "count-objects").split()[0]) - loose_before < 30
    gitrepo.snapshot_tree(repo)  # nothing new to write: no new pack
    assert len(set(packs.glob("*.pack")) - before) == 1


def commit_change(repo: Path, name: str, text: str) -> tuple[str, str]:
    """A commit on top of HEAD changing `name`, made without touching the checkout."""
    old = git(repo, "rev-parse", "HEAD")
    scratch = repo.parent / "scratch-change"
    git(repo, "worktree", "add", "-q", "--detach", str(scratch), old)
    (scratch / name).write_text(text)
    git(scratch, "commit", "-q", "-am", f"change {name}")
    new = git(scratch, "rev-parse", "HEAD")
    git(repo, "worktree", "remove", "--force", str(scratch))
    return old, new


def test_a_checkout_with_a_stale_stat_cache_is_brought_along(repo: Path) -> None:
    old, new = commit_change(repo, "file3.py", "VALUE = 'landed'\n")
    later = time.time() + 5
    os.utime(repo / "file3.py", (later, later))  # touched, content unchanged: read-tree balks
    landgit.fast_forward_checkout(repo, old, new)
    assert (repo / "file3.py").read_text() == "VALUE = 'landed'\n"
    assert git(repo, "write-tree") == git(repo, "rev-parse", f"{new}^{{tree}}")


def test_a_checkout_with_a_local_change_is_never_overwritten(repo: Path) -> None:
    old, new = commit_change(repo, "file3.py", "VALUE = 'landed'\n")
    (repo / "file3.py").write_text("VALUE = 'the user is editing'\n")
    hashes = file_hashes(repo)
    with pytest.raises(GitFailure):
        landgit.fast_forward_checkout(repo, old, new)
    assert file_hashes(repo) == hashes
    assert (repo / "file3.py").read_text() == "VALUE = 'the user is editing'\n"
    assert git(repo, "diff", "--cached", "--name-only") == ""


def test_a_linked_worktree_keeps_its_snapshot_index_and_misses_no_edit(
    repo: Path, tmp_path: Path
) -> None:
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "task", str(linked))
    real = gitrepo._index_file(linked)
    index = real.read_bytes()
    for index_no in range(0, 30, 3):
        (linked / f"file{index_no}.py").write_text(f"VALUE = -{index_no}\n")
    first = gitrepo.snapshot_tree(linked)
    assert first == plain_add_tree(linked, tmp_path)
    assert len(list(real.parent.glob(f"{gitrepo.SNAPSHOT_INDEX}-*.index"))) == 1
    # edits after the kept snapshot, at once (same second, same size) and of every kind
    (linked / "file3.py").write_text("VALUE = +3\n")
    (linked / "file4.py").unlink()
    (linked / "extra.py").write_text("NEW = 1\n")
    second = gitrepo.snapshot_tree(linked)
    assert second != first
    assert second == plain_add_tree(linked, tmp_path)
    assert git(linked, "cat-file", "-p", f"{second}:file3.py") == "VALUE = +3"
    assert real.read_bytes() == index  # the real index is untouched throughout
    # a new real index (a commit in the worktree) starts a new kept one, and drops the old
    git(linked, "add", "-A")
    git(linked, "commit", "-q", "-m", "work")
    (linked / "file5.py").write_text("VALUE = 'after the commit'\n")
    third = gitrepo.snapshot_tree(linked)
    assert third == plain_add_tree(linked, tmp_path)
    assert len(list(real.parent.glob(f"{gitrepo.SNAPSHOT_INDEX}-*.index"))) == 1
    assert git(linked, "status", "--porcelain") == "M file5.py"
    # the user's own checkout keeps nothing in its git folder
    gitrepo.snapshot_tree(repo)
    assert not list((repo / ".git").glob(f"{gitrepo.SNAPSHOT_INDEX}-*"))


def test_unchanged_work_is_the_last_snapshots_tree_without_writing_it_again(
    repo: Path, tmp_path: Path
) -> None:
    """Found by the landing benchmark: a landing snapshots the worktree twice (what lands, then
    whether it changed before archiving), each `add` and `write-tree`. An index `add` left as
    the last snapshot's is that snapshot's tree; any edit is still seen."""
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "task", str(linked))
    (linked / "file3.py").write_text("VALUE = -3\n")
    an_hour_ago = time.time() - 3600  # as an agent's finished work is: not racily clean
    for path in linked.iterdir():
        if path.is_file():
            os.utime(path, (an_hour_ago, an_hour_ago))
    first = landgit.work_snapshot(linked, repo)
    assert landgit.rev(repo, first) == first  # the kept lookup process, started
    with git_runs() as runs:
        again = landgit.work_snapshot(linked, repo)
    assert again == first and [run[run.index("add") :][:2] for run in runs] == [["add", "--all"]]
    (linked / "file3.py").write_text("VALUE = +3\n")  # same size, same second
    (linked / "new.py").write_text("NEW = 1\n")
    edited = landgit.work_snapshot(linked, repo)
    assert edited != first and edited == plain_add_tree(linked, tmp_path)
    # a remembered tree the repository no longer holds (pruned) is written again
    kept = next(gitrepo._index_file(linked).parent.glob(f"{gitrepo.SNAPSHOT_INDEX}-*.tree"))
    digest = kept.read_text().split()[0]
    kept.write_text(f"{digest} {'0' * 40}")
    assert landgit.work_snapshot(linked, repo) == edited


def test_a_snapshot_after_git_gc_pruned_its_objects_is_written_again(
    repo: Path, tmp_path: Path
) -> None:
    """Found by an adversarial review: the kept snapshot index names blobs only it refers to,
    and the kept lookup process still read a pruned pack it had open. After `git gc
    --prune=now` (or a gc two weeks on), the snapshot answered a tree the repository no longer
    held, or failed for good with `write-tree`'s "invalid object". Both are seen now."""
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "task", str(linked))
    (linked / "untracked.py").write_text("ONLY = 'in the snapshot'\n")
    an_hour_ago = time.time() - 3600
    for path in linked.iterdir():
        if path.is_file():
            os.utime(path, (an_hour_ago, an_hour_ago))
    first = landgit.work_snapshot(linked, repo)
    git(repo, "-c", "gc.cruftPacks=true", "gc", "-q")  # the unreachable snapshot: a cruft pack
    assert landgit.rev(repo, first) == first  # the kept lookup process opens that pack
    git(repo, "-c", "gc.cruftPacks=true", "gc", "-q", "--prune=now")
    assert landgit.rev(repo, first) is None
    again = landgit.work_snapshot(linked, repo)
    assert again == first == plain_add_tree(linked, tmp_path)
    git(repo, "cat-file", "-e", f"{again}:untracked.py")
    assert gitrepo.snapshot_tree(linked) == first  # the kept index no longer names lost blobs


def test_refs_are_read_afresh_and_from_a_repository_made_again(tmp_path: Path) -> None:
    """The kept lookup process sees a ref another process moved, and a repository deleted and
    made again at the same path is read as the new one, not through the old one's process."""
    import shutil

    made = make_repo(tmp_path / "again")
    first = git(made, "rev-parse", "HEAD")
    assert landgit.branch_tip(made, "main") == first
    (made / "more.py").write_text("MORE = 1\n")
    git(made, "add", "-A")
    git(made, "commit", "-q", "-m", "more")
    second = git(made, "rev-parse", "HEAD")
    assert landgit.branch_tip(made, "main") == second
    assert landgit.tip_and_tree(made, "refs/heads/main") == (
        second,
        git(made, "rev-parse", "HEAD^{tree}"),
    )
    assert landgit.rev(made, "refs/heads/nothing-here") is None
    shutil.rmtree(made)
    remade = make_repo(tmp_path / "again")
    git(remade, "checkout", "-q", "-b", "other")
    assert landgit.branch_tip(remade, "other") == git(remade, "rev-parse", "HEAD")
    assert landgit.branch_tip(remade, "main") == git(remade, "rev-parse", "main")


def test_a_merge_remembered_in_a_repository_is_not_reused_in_one_made_again(
    tmp_path: Path,
) -> None:
    """Fixed dates make the same commits in a repository made again at the same path, but the
    merged tree one of them wrote is not in the other: the remembered merge is not reused."""
    import shutil

    def two_sides(repo: Path) -> tuple[str, str]:
        git(repo, "checkout", "-q", "-b", "side")
        (repo / "side.py").write_text("SIDE = 1\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "side")
        git(repo, "checkout", "-q", "main")
        (repo / "main.py").write_text("MAIN = 1\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "main")
        return git(repo, "rev-parse", "main"), git(repo, "rev-parse", "side")

    made = make_repo(tmp_path / "again")
    ours, theirs = two_sides(made)
    tree = landgit.merge(made, ours, theirs).tree
    assert tree is not None
    shutil.rmtree(made)
    remade = make_repo(tmp_path / "again")
    assert two_sides(remade) == (ours, theirs)  # the same commits, by their ids
    assert landgit.merge(remade, ours, theirs).tree == tree
    assert git(remade, "cat-file", "-t", tree) == "tree"  # written here, not remembered


def test_a_scratch_checkout_left_used_is_cleaned_before_its_next_verify(
    repo: Path, tmp_path: Path
) -> None:
    """What a verify command left in a scratch checkout (a lander killed before it tidied up)
    is gone before the next one runs there; the tracked files are the next commit's."""
    old, new = commit_change(repo, "file3.py", "VALUE = 'next'\n")
    scratch = tmp_path / "scratch"
    landgit.prepare_scratch(repo, scratch, old)
    landgit.mark_scratch(scratch)
    (scratch / "build").mkdir()
    (scratch / "build" / "artifact.o").write_text("left by a verify command\n")
    (scratch / "file5.py").write_text("edited by a verify command\n")
    landgit.prepare_scratch(repo, scratch, new)  # the lander died before clean_scratch
    assert not (scratch / "build").exists()
    assert not landgit.scratch_marker(scratch).exists()
    assert (scratch / "file3.py").read_text() == "VALUE = 'next'\n"
    assert (scratch / "file5.py").read_text() == "VALUE = 5\n"
    assert git(scratch, "status", "--porcelain", "--ignored") == ""


def rev_parse_head(checkout: Path) -> tuple[str | None, str | None]:
    """What `git rev-parse HEAD --symbolic-full-name HEAD` says (head_and_branch without repo)."""
    return landgit.head_and_branch(checkout)


def test_a_linked_checkouts_head_read_from_files_is_what_git_says(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "kanban/task-1", str(linked))
    runs: list[tuple[str, ...]] = []
    real_run = gitrepo.run

    def counted(where: Path, *args: str, **options: object) -> object:
        runs.append(args)
        return real_run(where, *args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(gitrepo, "run", counted)
    on_branch = landgit.head_and_branch(linked, repo)
    assert runs == []  # from the files and the kept lookup process: no git run
    assert on_branch == rev_parse_head(linked)
    assert on_branch[1] == "kanban/task-1"
    (linked / "file0.py").write_text("VALUE = 'moved'\n")
    git(linked, "commit", "-qam", "moved on")  # the branch moves: read afresh
    assert landgit.head_and_branch(linked, repo) == rev_parse_head(linked)
    git(linked, "checkout", "-q", "--detach", "HEAD~1")
    runs.clear()
    detached = landgit.head_and_branch(linked, repo)
    assert runs == []
    assert detached == rev_parse_head(linked) and detached[1] is None
    git(linked, "checkout", "-q", "--orphan", "unborn")  # HEAD names no commit yet
    assert landgit.head_and_branch(linked, repo) == rev_parse_head(linked) == (None, None)
    # Not a checkout of this repository (the main work tree has no admin folder): git is asked.
    assert landgit.head_and_branch(repo, repo) == rev_parse_head(repo)
    other = make_repo(tmp_path / "other")
    assert landgit.head_and_branch(linked, other) == rev_parse_head(linked)


def test_a_checkout_removed_to_the_trash_is_forgotten_by_git(repo: Path, tmp_path: Path) -> None:
    linked, kept = tmp_path / "linked", tmp_path / "kept"
    git(repo, "worktree", "add", "-q", "-b", "kanban/task-1", str(linked))
    git(repo, "worktree", "add", "-q", "-b", "kanban/task-2", str(kept))
    trash = tmp_path / "trash" / "task-1"
    assert landgit.remove_checkout(repo, linked, trash=trash) == trash
    assert not linked.exists() and (trash / "file0.py").is_file()
    listed = git(repo, "worktree", "list", "--porcelain")
    assert str(linked) not in listed and str(kept) in listed  # only its own registration went
    assert "prunable" not in listed
    git(repo, "branch", "-D", "kanban/task-1")  # no checkout holds the branch any more
    git(repo, "fsck", "--no-dangling")


def test_what_two_trees_differ_in_is_read_without_a_git_run_as_diff_tree_says_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by counting a landing's git runs: it ran `diff-tree` for the change (a submodule
    made by hand in the worktree?), for the fast-forward of the checkout (an untracked file in
    the way?) and for the files it reports, a process each. Read from the kept lookup process,
    the answer must be diff-tree's own, order, modes and all, whatever the trees hold."""
    for name in ("a", "a-b", "a.b", "dir/x", "dir/sub/y", "exec.sh", "gone/z", "kind/t", "f"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(f"{name}\n")
    (repo / "ünï cödé.txt").write_text("unicode\n")
    os.symlink("a", repo / "link")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    first = git(repo, "rev-parse", "HEAD")
    (repo / "a").write_text("changed\n")
    (repo / "a.b").unlink()
    (repo / "dir/sub/y").write_text("changed\n")
    (repo / "dir/sub/new").write_text("new\n")
    (repo / "link").unlink()
    (repo / "link").write_text("a file now\n")  # symlink to file: T
    os.chmod(repo / "exec.sh", 0o755)  # mode only: M
    for gone in ("gone/z", "kind/t", "f"):
        (repo / gone).unlink()
    for folder in ("gone", "kind"):
        (repo / folder).rmdir()
    (repo / "kind").write_text("a file where a folder was\n")
    (repo / "f").mkdir()
    (repo / "f/g").write_text("a folder where a file was\n")
    (repo / "b").write_text("b\n")
    git(repo, "add", "-A")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{first},mod")  # a submodule
    git(repo, "commit", "-q", "-m", "two")
    second = git(repo, "rev-parse", "HEAD")
    git(repo, "update-index", "--cacheinfo", f"160000,{second},mod")  # the submodule moved
    git(repo, "update-index", "--chmod=-x", "exec.sh")
    git(repo, "commit", "-q", "-m", "three")
    third = git(repo, "rev-parse", "HEAD")
    pairs = [(first, second), (second, first), (second, third), (first, third), (third, third)]
    pairs.append((f"{first}^{{tree}}", f"{third}^{{tree}}"))
    assert landgit.rev(repo, "HEAD") == third  # the kept lookup process, started
    for old, new in pairs:
        with git_runs() as runs:
            walked = landgit._walked_changes(repo, old, new)
        assert walked is not None and runs == []
        assert walked == landgit._diff_tree(repo, old, new), (old, new)
    kinds = {change.path: change.status for change in landgit._diff_tree(repo, first, second)}
    assert kinds["link"] == "T" and kinds["exec.sh"] == "M" and kinds["mod"] == "A"
    assert kinds["kind"] == kinds["f/g"] == "A" and kinds["kind/t"] == kinds["f"] == "D"
    # one exchange with cat-file per level of folders opened (the root, dir, dir/sub), not one
    # per tree: each is a round trip to another process
    exchanges: list[list[str]] = []
    kept = landgit._kept_contents

    def counted(at: Path, names: list[str]):
        exchanges.append(names)
        return kept(at, names)

    monkeypatch.setattr(landgit, "_kept_contents", counted)
    (repo / "dir/sub/y").write_text("once more\n")
    git(repo, "add", "dir/sub/y")
    git(repo, "commit", "-q", "-m", "four")
    assert [c.path for c in landgit._walked_changes(repo, third, "HEAD") or []] == ["dir/sub/y"]
    assert [len(names) for names in exchanges] == [2, 2, 2]
    monkeypatch.setattr(landgit, "WALKED_TREES_MAX", 1)  # a wide change: git is asked
    assert landgit._walked_changes(repo, first, second) is None
    assert landgit._changes(repo, first, second) == landgit._diff_tree(repo, first, second)


def test_work_unchanged_since_its_commit_is_that_commits_tree_without_writing_it(
    repo: Path, tmp_path: Path
) -> None:
    """Found profiling the landing benchmark: the gate commits the work, then appends to
    VERIFICATION.md, so the landing's snapshot hashed that file and wrote a tree nobody had,
    only to replace the file with the base's (`without_bookkeeping`). The bookkeeping files are
    left as the index has them, and the index records its commit's tree: `add` and no
    `write-tree`. What lands is what the whole snapshot gives."""
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "task", str(linked))
    (linked / "file3.py").write_text("VALUE = -3\n")
    (linked / "VERIFICATION.md").write_text("# Verification\n")
    an_hour_ago = time.time() - 3600  # as an agent's finished work is: not racily clean
    for path in linked.iterdir():
        if path.is_file():
            os.utime(path, (an_hour_ago, an_hour_ago))
    git(linked, "add", "--all")
    git(linked, "commit", "-q", "-m", "the work")
    committed = git(linked, "rev-parse", "HEAD^{tree}")
    (linked / "VERIFICATION.md").write_text("# Verification\n\npassed\n")  # the gate's entry
    base = git(repo, "rev-parse", "HEAD")
    assert landgit.rev(repo, committed) == committed  # the kept lookup process, started
    with git_runs() as runs:
        work = landgit.work_snapshot(linked, repo)
    assert work == committed
    assert [run[run.index("add") :][:2] for run in runs] == [["add", "--all"]]
    whole = gitrepo.snapshot_tree(linked)
    assert whole != work
    lands = landgit.without_bookkeeping(repo, work, base)
    assert lands == landgit.without_bookkeeping(repo, whole, base)
    assert "VERIFICATION.md" not in git(repo, "ls-tree", "--name-only", lands).split()
    # an edit of the work itself is seen, and written
    (linked / "file4.py").write_text("VALUE = -4\n")
    edited = landgit.work_snapshot(linked, repo)
    assert edited != committed
    assert git(repo, "cat-file", "-p", f"{edited}:file4.py") == "VALUE = -4"


def test_the_tree_an_index_records_is_read_only_when_it_can_be_trusted(
    repo: Path, tmp_path: Path
) -> None:
    """`index_cached_tree` answers what `write-tree` would write, or nothing: not for an index
    with a change staged since its tree was recorded, nor one of a format it does not read
    (version 4, a split index), nor a file whose checksum does not match."""
    index = repo / ".git" / "index"
    git(repo, "read-tree", "HEAD")  # a fresh index records HEAD's tree
    assert gitrepo.index_cached_tree(index) == git(repo, "rev-parse", "HEAD^{tree}")
    (repo / "file7.py").write_text("VALUE = -7\n")
    git(repo, "add", "file7.py")
    assert gitrepo.index_cached_tree(index) is None
    written = git(repo, "write-tree")
    assert gitrepo.index_cached_tree(index) == written
    broken = tmp_path / "broken-index"
    data = bytearray(index.read_bytes())
    data[-25] ^= 0xFF  # inside the cache-tree record: the checksum no longer matches
    broken.write_bytes(bytes(data))
    assert gitrepo.index_cached_tree(broken) is None
    git(repo, "update-index", "--index-version", "4")
    assert gitrepo.index_cached_tree(index) is None
    git(repo, "update-index", "--index-version", "2")
    git(repo, "update-index", "--split-index")
    assert gitrepo.index_cached_tree(index) is None
    assert gitrepo.index_cached_tree(tmp_path / "no-such-index") is None
    sha256 = tmp_path / "sha256"
    sha256.mkdir()
    git(sha256, "init", "-q", "--object-format=sha256")
    (sha256 / "a.txt").write_text("a\n")
    git(sha256, "add", "a.txt")
    tree = git(sha256, "write-tree")
    assert len(tree) == 64 and gitrepo.index_cached_tree(sha256 / ".git" / "index") == tree


def test_the_checkouts_of_a_branch_are_read_once_with_their_real_paths(tmp_path: Path) -> None:
    """A landing reads the base's checkouts and the operations under way on it in one pass,
    resolving the folders the checkouts share once: the paths are still `realpath`'s (a
    checkout made through a symlinked folder is named by its real one), and a rebase of the
    branch under way in a checkout is still found."""
    repo = make_repo(tmp_path / "repo")
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    git(repo, "worktree", "add", "-q", "-b", "one", str(tmp_path / "link" / "one"))
    git(repo, "worktree", "add", "-q", "-b", "two", str(tmp_path / "link" / "two"))
    assert landgit.checkouts_of(repo, "one") == [real / "one"]
    assert landgit.checkouts_of(repo, "main") == [Path(os.path.realpath(repo))]
    admin = repo / ".git" / "worktrees" / "two"
    (admin / "rebase-merge").mkdir()
    (admin / "rebase-merge" / "head-name").write_text("refs/heads/main\n")
    operations, checkouts = landgit.operations_and_checkouts(repo, "main")
    assert operations == [(real / "two", "rebase")] == landgit.branch_operations(repo, "main")
    assert checkouts == [Path(os.path.realpath(repo))]
