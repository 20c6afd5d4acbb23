"""Guarantee 6 (the worktrees): every public entry point of `Worktrees` (provision, complete,
land, sync, the review files...), called with whatever hypothesis can think of, either answers or
refuses with a typed `BoardError`, and a refusal writes nothing: not to the board, not to the
user's repository (every file's hash, `git status`, every ref), not to any task's worktree.

As in tests/chaos/test_fuzz_library.py (whose value strategies this reuses), the entry points are
read from the class, so a new one is fuzzed from the day it is added. Each example runs on a fresh
copy of one folder holding a repository, a board and worktrees in every state a landing meets
(held, in review, done, none). Git records absolute paths (a worktree's `.git` file, the board's
workspace rows), so the copy is put back at the very path the folder was built at.
"""

import contextlib
import inspect
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boardlib import Board, BoardError, ManualClock
from boardlib.worktrees import Worktrees
from boardlib.worktrees.landing import Lander
from tests.chaos.test_fuzz_library import (
    EXAMPLES,
    TEXT,
    WRONG_TYPES,
    committed,
    fuzz_settings,
    strategy_for,
)
from tests.worktrees.conftest import checkout_state, file_hashes, git, make_repo, set_verify

START = 1_800_000_000_000

# Plumbing, not verbs: `lander` makes the object `land` runs on (its options are the landing's
# tuning, not input a surface passes on).
NOT_FUZZED = {"lander"}


def signature_of(name: str) -> inspect.Signature:
    """`land` passes its options through to `Lander.land`: those are what a caller gives."""
    return inspect.signature(Lander.land if name == "land" else getattr(Worktrees, name))


def entry_points() -> list[str]:
    return sorted(
        name
        for name, _ in inspect.getmembers(Worktrees, inspect.isfunction)
        if not name.startswith("_") and name not in NOT_FUZZED
    )


def build(live: Path) -> dict[str, list[str]]:
    """The folder every example starts from: a repository with `main` checked out, and a task
    held with its work uncommitted, one in review, one done (landable) and one never provisioned.
    Returns the ids and names a call may use."""
    live.mkdir()
    repo = make_repo(live / "repo")
    clock = ManualClock(START)
    with Board(live / "board.db", clock=clock) as board:
        trees = Worktrees(board, root=live / "worktrees", verify_timeout_s=60)

        def provisioned(title: str, agent: str) -> tuple[str, Path]:
            task = board.create_task(title, description="A fuzzed change.")
            board.claim(task.id, agent)
            path = Path(trees.provision(task.id, repo).worktree.worktree_path)
            set_verify(path, "true")
            (path / f"{agent}.py").write_text(f"who = {agent!r}\n")
            return task.id, path

        held, _ = provisioned("held", "ada")
        review, review_path = provisioned("in review", "bob")
        git(review_path, "add", "-A")
        git(review_path, "commit", "-q", "-m", "bob's work")
        board.complete(review, "bob")
        done, _ = provisioned("done", "cy")
        assert trees.complete(done, "cy").task_status == "done"
        bare = board.create_task("never provisioned").id
        board.add_comment(review, "a comment on the work", author_agent_id="rita")
    return {"task": [held, review, done, bare], "run": ["RUN-1"], "workspace": ["WS-1"]}


def strategy(name: str, annotation: str, known: dict[str, list[str]], live: Path) -> Any:
    """Values for one parameter: the worktree verbs' own names first, then the library fuzz's."""
    repo = str(live / "repo")
    branches = st.sampled_from(["main", "HEAD", "refs/heads/main", "kanban/x", "-x", "nope"])
    own: dict[str, Any] = {
        "repo_path": st.sampled_from([repo, live / "repo", live / "absent", "/", "."]),
        "repo": st.sampled_from([live / "repo", live / "absent", Path("/")]),
        "base_ref": branches,
        "base_sha": st.sampled_from(["0" * 40, "HEAD", "main~1"]),
        "into": branches,
        "strategy": st.sampled_from(["squash", "rebase", "merge", "octopus"]),
        "relative": st.sampled_from(
            ["app.py", "TASK.md", "../board.db", "/etc/passwd", "a/../../x", ".git/config"]
        ),
        "handoff": st.one_of(
            st.dictionaries(TEXT, st.one_of(TEXT, st.integers(), st.none()), max_size=3),
            st.binary(max_size=40),
            st.sampled_from(['{"summary": "done"}', "not json", "[]"]),
        ),
        "comments": st.lists(
            st.fixed_dictionaries(
                {"body": TEXT}, optional={"path": TEXT, "line": st.integers(-2, 5), "side": TEXT}
            ),
            max_size=3,
        ),
        "side": st.sampled_from(["old", "new", "left", "right"]),
        "path": st.sampled_from(["app.py", "TASK.md", "../x"]),
        "kind": st.sampled_from(["code", "docs", "research"]),
        "expect_source": st.sampled_from(["0" * 40]),
    }
    fallback = strategy_for(name, annotation, known)
    if name not in own:
        return fallback
    base = own[name]
    if "None" in annotation:
        base = st.one_of(st.none(), base)
    return st.one_of(base, base, TEXT, WRONG_TYPES)


def calls(known: dict[str, list[str]], live: Path) -> Any:
    def for_method(name: str) -> Any:
        parameters = list(signature_of(name).parameters.values())[1:]
        required = {
            p.name: strategy(p.name, str(p.annotation), known, live)
            for p in parameters
            if p.default is inspect.Parameter.empty and p.kind is not p.VAR_KEYWORD
        }
        optional = {
            p.name: strategy(p.name, str(p.annotation), known, live)
            for p in parameters
            if p.default is not inspect.Parameter.empty and p.kind is not p.VAR_KEYWORD
        }
        return st.tuples(st.just(name), st.fixed_dictionaries(required, optional=optional))

    return st.sampled_from(entry_points()).flatmap(for_method)


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, dict]]:
    """(live, kept, known): the folder examples run in, its pristine copy, the ids."""
    base = tmp_path_factory.mktemp("fuzz-worktrees")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
        patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
        live = base / "live"
        known = build(live)
        kept = base / "kept"
        shutil.copytree(live, kept, symlinks=True)
        yield live, kept, known


def worktrees_state(live: Path) -> dict[str, Any]:
    """Every task worktree's files and `git status`, by folder."""
    state: dict[str, Any] = {}
    for dot_git in sorted((live / "worktrees").rglob(".git")):
        folder = dot_git.parent
        state[str(folder)] = (
            file_hashes(folder),
            git(folder, "status", "--porcelain=v1", "--untracked-files=all"),
        )
    return state


def test_every_worktree_entry_point_is_fuzzed(tmp_path: Path) -> None:
    names = entry_points()
    assert {"provision", "complete", "land", "sync", "landing_preview", "reject"} <= set(names)
    known = {"task": ["T"], "run": ["R"], "workspace": ["W"]}
    for name in names:  # every parameter gets a strategy
        for p in list(signature_of(name).parameters.values())[1:]:
            assert strategy(p.name, str(p.annotation), known, tmp_path) is not None


@pytest.mark.slow  # the worktrees fuzz: real git in every example
@fuzz_settings(EXAMPLES // 4)
@given(data=st.data())
def test_every_worktree_entry_point_answers_or_refuses_typed_and_a_refusal_writes_nothing(
    data: st.DataObject, folders: tuple[Path, Path, dict]
) -> None:
    live, kept, known = folders
    name, kwargs = data.draw(calls(known, live), label="call")
    shutil.rmtree(live)
    shutil.copytree(kept, live, symlinks=True)
    with pytest.MonkeyPatch.context() as patch, contextlib.chdir(live):
        patch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
        patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
        _answers_or_refuses_typed(name, kwargs, live)


def _answers_or_refuses_typed(name: str, kwargs: dict[str, Any], live: Path) -> None:
    watcher = committed(live / "board.db")
    before_version = next(watcher)
    repo_before = checkout_state(live / "repo")
    trees_before = worktrees_state(live)
    with Board(live / "board.db", clock=ManualClock(START + 60_000)) as board:
        before_seq = board.last_event_seq()
        trees = Worktrees(board, root=live / "worktrees", verify_timeout_s=60)
        try:
            getattr(trees, name)(**kwargs)
        except BoardError as refused:
            assert refused.reason.value and refused.message
            refused.to_dict()  # JSON-ready for every surface
            assert next(watcher) == before_version, f"{name} refused but committed: {refused!r}"
            assert board.last_event_seq() == before_seq
            assert checkout_state(live / "repo") == repo_before, f"{name} refused but wrote"
            assert worktrees_state(live) == trees_before, f"{name} refused but changed a tree"
        except Exception as error:  # anything else is a bug the surfaces would turn into a 500
            raise AssertionError(f"{name}({kwargs!r}) raised {error!r}") from error
        finally:
            watcher.close()
    assert os.path.isdir(live / "repo" / ".git")
