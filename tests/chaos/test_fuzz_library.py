"""Guarantee 6 (the library): every public entry point of `Board`, called with whatever hypothesis
can think of, either answers or refuses with a typed `BoardError`, and a refusal writes nothing.
Text it accepts is stored as given (only stripped), and the stored task is drawn inert by the
live board's card renderer and `--format table` (the renderers' own fuzzing is in
tests/tui/test_inert_rendering.py; here the text has been through the board first).

The entry points are read from the class itself, so a new method is fuzzed from the day it is
added: its parameters get values by their names and annotations. Each example runs on a fresh copy
of a board holding a task in every status, a run, a comment, a workspace and a dependency.
"""

import contextlib
import inspect
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boardlib import Board, BoardConfig, BoardError, ManualClock, PlanItem
from boardlib import transitions as t
from kanban.cli.table import _tasks_table
from tests.core.test_inert import HOSTILE
from tests.tui.test_inert_rendering import PALETTE, check_segments, terminal_output
from tui.cards import card_lines

START = 1_800_000_000_000
EXAMPLES = int(os.environ.get("KANBAN_FUZZ_EXAMPLES", "400"))

# Plumbing, not verbs: they take no input worth fuzzing or start threads.
NOT_FUZZED = {"close", "start_stale_task_reconciler", "checkpoint", "now"}

WRONG_TYPES = st.sampled_from([None, 0, -1, True, 1.5, float("nan"), [], {}, b"bytes", ("t",)])
TEXT = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(max_size=60),
    st.sampled_from(["", " ", "\n", "TASK-1", "operator", "system"]),
    st.sampled_from([201, 501, 20_001]).map(lambda n: "y" * n),  # just past each length limit
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=30),
    st.just("a\udcff b"),  # a lone surrogate: how Python carries argv that is not UTF-8
)
INTS = st.one_of(
    st.integers(min_value=-5, max_value=10),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1]),
)
FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), INTS)


def fuzz_settings(examples: int) -> settings:
    """The fuzzers' settings (this one's, the worktrees' and the command line's): `examples` of
    them, no deadline, and none of the health checks a slow example on a fixture trips."""
    return settings(
        max_examples=max(1, examples),
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.function_scoped_fixture,
            HealthCheck.data_too_large,
        ],
    )


def template(folder: Path) -> tuple[Path, dict[str, list[str]]]:
    """A board with one of everything; returns the ids a call may name."""
    path = folder / "template.db"
    clock = ManualClock(START)
    with Board(path, clock=clock, config=BoardConfig(event_ttl_seconds=None)) as board:
        ids = {status: board.create_task(f"{status} task").id for status in t.STATUSES}
        board.move(ids[t.BACKLOG], t.BACKLOG)
        held = board.claim(ids[t.IN_PROGRESS], "ada")
        run = board.open_execution(held.id, "claude-code", agent="ada", epoch=held.claim_epoch)
        board.add_comment(held.id, "a comment", author_agent_id="ada", author_type="agent")
        review = board.claim(ids[t.IN_REVIEW], "bob")
        board.complete(review.id, "bob", epoch=review.claim_epoch)
        blocked = board.claim(ids[t.BLOCKED], "cy")
        board.block(blocked.id, "cy", "waiting", epoch=blocked.claim_epoch)
        done = board.claim(ids[t.DONE], "dee")
        board.complete(done.id, "dee", epoch=done.claim_epoch)
        board.approve(done.id, "rita")
        board.cancel(ids[t.CANCELLED])
        child = board.create_task("child", parent_task_id=ids[t.TODO], depends_on=[ids[t.TODO]])
        workspace = board.record_workspace(
            held.id, repo_path="/repo", branch="kanban/task-x", worktree_path="/wt", base_commit="a"
        )
    tasks = [*ids.values(), child.id]
    return path, {"task": tasks, "run": [run.id], "workspace": [workspace.id]}


def strategy_for(name: str, annotation: str, known: dict[str, list[str]]) -> Any:
    """Values for one parameter, from its name and annotation: mostly well-typed and hostile,
    sometimes of the wrong type altogether."""
    tasks = st.sampled_from(known["task"])
    if name in ("task_id", "depends_on") and "Iterable" not in annotation:
        base: Any = st.one_of(tasks, TEXT)
    elif name == "depends_on":
        base = st.lists(st.one_of(tasks, TEXT), max_size=4)
    elif name == "execution_id":
        base = st.one_of(st.sampled_from(known["run"]), TEXT)
    elif name == "workspace_id":
        base = st.one_of(st.sampled_from(known["workspace"]), TEXT)
    elif name in (
        "agent",
        "reviewer",
        "actor",
        "from_agent",
        "to_agent",
        "holder",
        "assignee",
        "author_agent_id",
    ):
        base = st.one_of(
            st.sampled_from(["ada", "bob", "cy", "rita", "operator", "operator:dana", "system"]),
            TEXT,
        )
    elif name in ("status", "to", "expected_status"):
        base = st.one_of(st.sampled_from([*t.STATUSES, "succeeded", "failed", "stale"]), TEXT)
    elif name == "items":
        item = st.builds(
            PlanItem,
            key=st.one_of(st.sampled_from(["a", "b", "c"]), TEXT),
            title=TEXT,
            description=st.one_of(st.none(), TEXT),
            priority=INTS,
            depends_on=st.lists(
                st.one_of(st.sampled_from(["a", "b"]), tasks, TEXT), max_size=3
            ).map(tuple),
            status=st.one_of(st.sampled_from([t.TODO, t.BACKLOG]), TEXT),
            parent=st.one_of(st.none(), tasks, st.sampled_from(["a", "b"])),
        )
        base = st.lists(item, max_size=5)
    elif name == "verdict_json":
        base = st.one_of(
            TEXT,
            st.sampled_from(['{"status": "pass"}', '{"status": "fail", "attempts": []}', "[]"]),
        )
    elif "bool" in annotation:
        base = st.booleans()
    elif "float" in annotation:
        base = FLOATS
    elif "int" in annotation:
        base = INTS
    else:
        base = TEXT
    if "None" in annotation:
        base = st.one_of(st.none(), base)
    return st.one_of(base, base, base, WRONG_TYPES)  # wrong types a quarter of the time


def entry_points() -> list[str]:
    return sorted(
        name
        for name, _ in inspect.getmembers(Board, inspect.isfunction)
        if not name.startswith("_") and name not in NOT_FUZZED
    )


def calls(known: dict[str, list[str]]) -> Any:
    def for_method(name: str) -> Any:
        parameters = list(inspect.signature(getattr(Board, name)).parameters.values())[1:]
        required = {
            p.name: strategy_for(p.name, str(p.annotation), known)
            for p in parameters
            if p.default is inspect.Parameter.empty
        }
        optional = {
            p.name: strategy_for(p.name, str(p.annotation), known)
            for p in parameters
            if p.default is not inspect.Parameter.empty
        }
        return st.tuples(st.just(name), st.fixed_dictionaries(required, optional=optional))

    return st.sampled_from(entry_points()).flatmap(for_method)


@pytest.fixture(scope="module")
def board_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    return template(tmp_path_factory.mktemp("fuzz-template"))


@pytest.fixture
def fresh(tmp_path: Path, board_template: tuple[Path, dict[str, list[str]]]) -> Callable[[], Path]:
    counter = iter(range(10**9))

    def copy() -> Path:
        path = tmp_path / f"board-{next(counter)}.db"
        shutil.copyfile(board_template[0], path)
        return path

    return copy


def committed(path: Path) -> Iterator[int]:
    """A watcher whose `data_version` moves on every commit by another connection."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        while True:
            yield int(conn.execute("PRAGMA data_version").fetchone()[0])
    finally:
        conn.close()


STORED_AS_GIVEN: dict[str, tuple[str, Callable[[Board, Any], list[str]]]] = {
    # method: (the text argument, how to read back what was stored)
    "create_task": ("title", lambda board, task: [task.title]),
    "add_comment": ("body", lambda board, comment: [comment.body]),
    "log_progress": ("note", lambda board, task: [c.body for c in board.comments(task.id)]),
    "block": ("reason", lambda board, task: [task.blocked_reason or ""]),
}


def test_every_entry_point_is_fuzzed() -> None:
    assert set(entry_points()) >= {"claim_next", "create_plan", "move", "close_execution"}
    for name in entry_points():  # every parameter gets a strategy
        for p in list(inspect.signature(getattr(Board, name)).parameters.values())[1:]:
            known = {"task": ["T"], "run": ["R"], "workspace": ["W"]}
            assert strategy_for(p.name, str(p.annotation), known) is not None


@pytest.mark.slow  # the library fuzz
@fuzz_settings(EXAMPLES)
@given(data=st.data())
def test_every_entry_point_answers_or_refuses_typed_and_a_refusal_writes_nothing(
    data: st.DataObject,
    fresh: Callable[[], Path],
    board_template: tuple[Path, dict[str, list[str]]],
) -> None:
    name, kwargs = data.draw(calls(board_template[1]), label="call")
    path = fresh()
    with contextlib.chdir(path.parent):  # a relative path an entry point writes lands in tmp
        _answers_or_refuses_typed(name, kwargs, path)


def others(board_path: Path) -> list[str]:
    """The files beside a board that are not the board's own (its WAL, shared memory, lock)."""
    return sorted(name for name in os.listdir() if not name.startswith(board_path.name))


def _answers_or_refuses_typed(name: str, kwargs: dict[str, Any], path: Path) -> None:
    watcher = committed(path)
    before_version = next(watcher)
    with Board(path, clock=ManualClock(START + 60_000), reconcile_orphans=False) as board:
        before_seq = board.last_event_seq()
        files = others(path)
        try:
            result = getattr(board, name)(**kwargs)
        except BoardError as refused:
            assert refused.reason.value and refused.message
            refused.to_dict()  # JSON-ready for every surface
            assert next(watcher) == before_version, f"{name} refused but committed: {refused!r}"
            assert board.last_event_seq() == before_seq
            assert others(path) == files, f"{name} refused but left a file behind"
            return
        except Exception as error:  # anything else is a bug the surfaces would turn into a 500
            raise AssertionError(f"{name}({kwargs!r}) raised {error!r}") from error
        if name in STORED_AS_GIVEN:
            field, stored = STORED_AS_GIVEN[name]
            given_text = kwargs[field]
            assert given_text.strip() in stored(board, result), (name, given_text)
        if name in ("create_task", "block", "log_progress"):
            task = result if name != "log_progress" else board.get_task(result.id)
            task = board.get_task(task.id)
            for strip in card_lines(task, 40, PALETTE, now_ms=START, selected=True):
                check_segments(list(strip), newline=False)
            terminal_output(_tasks_table([task.to_json()], title="fuzz"))
    watcher.close()
