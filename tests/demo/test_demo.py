"""`kanban demo --no-tui`, measured on the board it leaves behind.

The demo runs real agent processes, so these tests read the outcome from the board's own records
(the events table and the executions ledger), never from the demo's printed feed: every claim had
one live owner at a time, a crashed agent's task came back through its lease and went to someone
else, reviews were by non-builders, and the stop was clean.
"""

import io
import itertools
import json
import multiprocessing
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import types
from collections import defaultdict
from pathlib import Path

import pytest

from boardlib import Board, Event
from boardlib import transitions as t
from kanban.demo import EXIT_OK, EXIT_USAGE, run_demo
from kanban.demo.plan import covered_roles
from kanban.demo.runner import _feed_line, seed_board

# Verbs only the current holder of a task may perform; each event's actor must be that holder.
HOLDER_EVENTS = {"lease_renewed", "progress_logged", "execution_started", "execution_completed"}
HOLDER_MOVES = {"complete", "block", "release"}


def _demo(tmp_path: Path, **overrides: object) -> tuple[int, str]:
    out = io.StringIO()
    options: dict[str, object] = {
        "directory": tmp_path / "demo",
        "agents": 4,
        "tasks": 20,
        "speed": 20.0,
        "keep": True,
        "open_tui": False,
        "duration": 25.0,
        "poll_ms": 50,
        "seed": 7,
        "out": out,
    }
    options.update(overrides)
    code = run_demo(**options)  # type: ignore[arg-type]
    return code, out.getvalue()


def _all_events(board: Board) -> list[Event]:
    return board.events(limit=1_000_000)


def replay_holders(events: list[Event]) -> list[str]:
    """Replay the event log and return every moment two owners overlapped or a non-holder acted
    as one. A claim is only legal on a task nobody holds; a lease expiry, a completion, a block, a
    release or any other move out of in_progress ends the holding."""
    holder: dict[str, str | None] = {}
    problems: list[str] = []
    for event in events:
        task = event.task_id or ""
        current = holder.get(task)
        if event.kind == "task_claimed":
            if current is not None:
                problems.append(f"#{event.seq} {event.actor} claimed {task} held by {current}")
            holder[task] = event.actor
        elif event.kind == "lease_expired":
            if event.data.get("assignee") != current:
                problems.append(f"#{event.seq} lease of {task} expired for a non-holder")
            holder[task] = None
        elif event.kind == "task_transferred":
            holder[task] = event.data.get("to")
        elif event.kind in HOLDER_EVENTS:
            if event.actor != current:
                problems.append(
                    f"#{event.seq} {event.actor} did {event.kind} on {task} ({current})"
                )
        elif event.kind == "status_changed":
            verb = event.data.get("verb")
            if verb in HOLDER_MOVES and event.actor != current:
                problems.append(f"#{event.seq} {event.actor} did {verb} on {task} ({current})")
            if event.data.get("from") == t.IN_PROGRESS:
                holder[task] = None
            if event.data.get("to") == t.IN_PROGRESS:
                # the gate hands failed work back to its builder: the event names the holder
                holder[task] = event.data.get("assignee") or event.actor
    return problems


@pytest.fixture(scope="module")
def finished_demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One demo run to the end of its plan (kept), shared by the tests that read its board."""
    tmp_path = tmp_path_factory.mktemp("finished")
    code, out = _demo(tmp_path)
    assert code == EXIT_OK, out
    return tmp_path, out


@pytest.mark.slow  # the demo team works its whole plan
def test_the_demo_finishes_its_plan_with_one_live_owner_per_task(
    finished_demo: tuple[Path, str],
) -> None:
    tmp_path, out = finished_demo
    db = tmp_path / "demo" / "board.db"
    assert f"kanban tui --db {db}" in out
    assert "finished after" in out

    with Board(db, read_only=True) as board:
        counts = board.status_counts()
        events = _all_events(board)
        tasks = board.all_tasks()
        executions = {task.id: board.executions(task.id) for task in tasks}

    # The board progressed to the end: nothing left open, most of it done.
    assert sum(counts.values()) == 20
    assert counts[t.DONE] >= 12, counts
    assert all(counts[s] == 0 for s in t.STATUSES if s not in t.TERMINAL), counts

    # One live owner at a time, and only the owner acted as one.
    assert replay_holders(events) == []

    # The ledger agrees: a task's runs never overlap, none is left running, done work cost money.
    for task in tasks:
        runs = sorted(executions[task.id], key=lambda run: (run.started_at or 0, run.id))
        assert all(run.status != "running" for run in runs)
        for earlier, later in itertools.pairwise(runs):
            assert earlier.completed_at is not None and later.started_at is not None
            assert earlier.completed_at <= later.started_at, (task.id, earlier, later)
        if task.status == t.DONE:
            assert task.cost_usd > 0

    # The scripted crash: ada vanished holding a task, the lease recovered it (timing out her
    # run), and a different agent claimed it next.
    recovered = []
    for index, event in enumerate(events):
        if event.kind != "lease_expired":
            continue
        lost = event.data["assignee"]
        later = [e for e in events[index + 1 :] if e.task_id == event.task_id]
        taker = next((e.actor for e in later if e.kind == "task_claimed"), None)
        if taker is not None and taker != lost:
            recovered.append((event.task_id, lost, taker))
    assert any(lost == "ada" for _, lost, _ in recovered), recovered
    task_id = next(task for task, lost, _ in recovered if lost == "ada")
    assert any(
        run.agent_id == "ada" and run.status == "timed_out" and run.recovery_tombstone
        for run in executions[task_id]
    )
    assert "ada crashed (simulated)" in out
    assert any(e.kind == "task_claimed" and e.actor == "ada#2" for e in events) or (
        "ada#2 started" in out
    )

    # Reviews by someone who never held the attempt, with the scripted reject among them.
    attempt_holders: dict[str, set[str]] = defaultdict(set)
    first_claimer: dict[str, str] = {}
    verdicts: list[str] = []
    for event in events:
        task = event.task_id or ""
        if event.kind == "task_claimed":
            attempt_holders[task].add(event.actor or "")
            first_claimer.setdefault(task, event.actor or "")
        elif event.kind == "status_changed":
            verb = event.data.get("verb")
            if verb in ("approve", "reject"):
                assert event.actor not in attempt_holders[task], event
                assert event.actor != first_claimer.get(task), event
                verdicts.append(verb)
            if event.data.get("to") == t.TODO:
                attempt_holders[task].clear()
    assert "reject" in verdicts and "approve" in verdicts

    # The scripted block was answered by the lead, one way or the other.
    blocks = [e for e in events if e.kind == "status_changed" and e.data.get("verb") == "block"]
    assert blocks and all(e.data.get("reason") for e in blocks)
    answers = {
        e.data.get("verb")
        for e in events
        if e.kind == "status_changed"
        and e.actor in ("lead", "operator:lead")
        and e.task_id == blocks[0].task_id
    }
    assert answers & {"unblock", "move"}, answers
    assert multiprocessing.active_children() == []


@pytest.mark.slow  # the demo team works its whole plan
def test_the_demo_does_real_work_in_real_worktrees(
    finished_demo: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Code tasks were built in git worktrees of the throwaway repository and judged by the gate
    running the package's tests; one run failed the gate once and was fixed; research work was
    reviewed, with the lead rejecting now and then; the finish was announced."""
    from boardlib.worktrees import Worktrees
    from boardlib.worktrees.diffs import parse_diff
    from kanban.demo import project

    tmp_path, out = finished_demo
    folder = tmp_path / "demo"
    counts = re.search(r"demo ended: (\d+) done, (\d+) cancelled; the folder is kept", out)
    assert counts is not None, out
    monkeypatch.setenv("KANBAN_WORKTREES", str(folder / project.WORKTREES_DIR))
    with Board(folder / "board.db", read_only=True) as board:
        assert int(counts[1]) == board.status_counts()[t.DONE]
        trees = Worktrees(board)
        code = [task for task in board.all_tasks() if task.kind == "code"]
        research = [task for task in board.all_tasks() if task.kind == "research"]
        assert code and research
        built = [task for task in code if task.status == t.DONE]
        assert len(built) >= len(code) // 2
        for task in built:
            detail = trees.detail(task.id)
            paths = {file.path for file in parse_diff(detail.diff)}
            assert f"shop/{project.slug(task.title)}.py" in paths, (task.id, paths)
            assert not paths & {"TASK.md", "task-progress.md", "AGENT_HANDOFF.json"}
            assert "## Done" in detail.sor_files["task-progress.md"]
            assert '"handoffFrom"' in detail.sor_files["AGENT_HANDOFF.json"]
            assert "VERIFY_CMD='" in detail.sor_files["init.sh"]
            assert "pass" in detail.sor_files["VERIFICATION.md"]
            assert detail.checkout is not None and detail.checkout.state == "checked_out"
        # The gate ran the real tests: one task failed once, then passed.
        gate = [row for row in board.audit() if row.action == "verification"]
        by_task: dict[str, list[str]] = defaultdict(list)
        for row in gate:
            by_task[row.task_id or ""].append((row.detail or "").split(":")[1].split()[0])

        def fixed(runs: list[str]) -> bool:  # a failed gate run, then a passing one
            return "fail" in runs and "pass" in runs[runs.index("fail") :]

        assert any(fixed(runs) for runs in by_task.values()), by_task
        failed = next(task for task, runs in by_task.items() if fixed(runs))
        assert "FAIL: test_total" in trees.detail(failed).sor_files["VERIFICATION.md"]
        # Research work went to review; the lead rejected some of it.
        events = _all_events(board)
        lead_rejects = [
            e for e in events
            if e.kind == "status_changed" and e.data.get("verb") == "reject" and e.actor == "lead"
        ]  # fmt: skip
        assert lead_rejects
        assert {e.task_id for e in lead_rejects} <= {task.id for task in research}
    # The repository itself was never touched: the work lives on the task branches.
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=folder / project.REPO_DIR,
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert status.stdout == ""


@pytest.mark.slow
def test_a_timed_stop_hands_work_back_and_removes_the_temp_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped mid-plan by `duration`: agents release what they hold (no task left in progress
    under a dead owner, no run left open), and the throwaway folder is gone."""
    temp_root = tmp_path / "tmp"
    temp_root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp_root))
    seen: dict[str, object] = {}

    original = seed_board

    def watching_seed_board(board: Board, **kwargs: object) -> dict[str, str]:
        seen["path"] = board.path
        return original(board, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("kanban.demo.runner.seed_board", watching_seed_board)
    code, out = _demo(tmp_path, directory=None, keep=False, tasks=36, speed=10.0, duration=1.5)
    assert code == EXIT_OK, out
    path = seen["path"]
    assert isinstance(path, Path) and path.parent.parent == temp_root
    assert "duration after" in out
    assert list(temp_root.iterdir()) == []
    assert multiprocessing.active_children() == []


@pytest.mark.slow  # the demo team works for seconds
def test_a_timed_stop_with_keep_leaves_a_consistent_board(tmp_path: Path) -> None:
    code, out = _demo(tmp_path, tasks=36, speed=10.0, duration=3.0)
    assert code == EXIT_OK, out
    with Board(tmp_path / "demo" / "board.db", read_only=True) as board:
        counts = board.status_counts()
        # Live agents handed their work back; only a crashed agent's task may still wait for
        # its lease to run out (that is the point of the lease).
        crashed_holding = set()
        for task in board.list_tasks(status=t.IN_PROGRESS):
            assert f"{task.assignee_agent_id} crashed (simulated)" in out, task
            crashed_holding.add(task.id)
        assert sum(counts.values()) == 36
        events = _all_events(board)
        completions = [e for e in events if e.data.get("verb") == "complete"]
        assert completions, out  # it got somewhere before the stop
        running = [
            run for task in board.all_tasks() for run in board.executions(task.id)
            if run.status == "running" and run.task_id not in crashed_holding
        ]  # fmt: skip
        assert running == []
        assert replay_holders(events) == []
        assert board.check().ok
    log = (tmp_path / "demo" / "demo.log").read_text()
    for name in ("lead", "grace", "linus", "barbara"):
        assert f"{name}: stopped" in log


def test_a_user_folder_keeps_everything_but_the_demo_files(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    code, out = _demo(tmp_path, directory=folder, keep=False, duration=0.5, agents=2, tasks=3)
    assert code == EXIT_OK, out
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize(
    "bad",
    [
        {"agents": 0},
        {"agents": 33},
        {"tasks": 0},
        {"speed": 0.0},
        {"speed": -1.0},
        {"duration": 0.0},
        {"poll_ms": 0},
    ],
)
def test_bad_arguments_are_refused_before_anything_is_created(
    tmp_path: Path, bad: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = _demo(tmp_path, **bad)
    assert code == EXIT_USAGE
    assert not (tmp_path / "demo").exists()
    assert "kanban demo: --" in capsys.readouterr().err


def test_an_existing_board_is_never_overwritten(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    with Board(folder / "board.db") as board:
        board.create_task("real work")
    before = (folder / "board.db").read_bytes()
    code, _ = _demo(tmp_path, keep=False)
    assert code == EXIT_USAGE
    assert (folder / "board.db").read_bytes() == before
    with Board(folder / "board.db", read_only=True) as board:
        assert [task.title for task in board.all_tasks()] == ["real work"]


@pytest.mark.parametrize("tasks", [1, 5, 12, 24, 36, 100])
@pytest.mark.parametrize("agents", [1, 2, 4])
def test_the_plan_has_the_asked_size_and_only_roles_someone_takes(
    tmp_path: Path, tasks: int, agents: int
) -> None:
    from kanban.demo.fleet import agent_roles

    with Board(tmp_path / f"{tasks}-{agents}.db") as board:
        titles = seed_board(board, tasks=tasks, agents=agents, rng=random.Random(tasks))
        created = board.all_tasks()
        assert len(created) == len(titles) == tasks
        roles = covered_roles(agent_roles(agents))
        assert all(task.role in roles for task in created)
        assert any(task.is_ready for task in created)
        epics = {task.parent_task_id for task in created if task.parent_task_id}
        assert len(epics) == (0 if tasks < 12 else 1 if tasks < 24 else 2)
        for epic in epics:
            assert epic is not None
            children = {task.id for task in created if task.parent_task_id == epic}
            assert {dep.id for dep in board.dependencies(epic)} == children
        assert board.check().ok


def test_the_same_seed_files_the_same_plan(tmp_path: Path) -> None:
    shapes = []
    for run in range(2):
        with Board(tmp_path / f"{run}.db") as board:
            seed_board(board, tasks=36, agents=4, rng=random.Random(11))
            shapes.append(
                [
                    (
                        task.title,
                        task.role,
                        task.priority,
                        [d.id for d in board.dependencies(task.id)],
                    )
                    for task in board.all_tasks()
                ]
            )
    assert shapes[0] == shapes[1]


def _session_members(session: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[3]) == session and fields[0] != "Z":
            pids.append(int(entry.name))
    return pids


@pytest.mark.slow
def test_ctrl_c_stops_every_agent_and_cleans_up(tmp_path: Path) -> None:
    """The real thing: `python -m kanban.demo --no-tui` in its own session, Ctrl-C delivered to
    the whole process group as a terminal would. The demo exits 0, no agent outlives it, and its
    temp folder is gone."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    process = subprocess.Popen(
        [sys.executable, "-m", "kanban.demo", "--no-tui", "--speed", "5", "--seed", "3"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
        # A shell without job control starts background jobs with SIGINT ignored, and Python
        # then installs no KeyboardInterrupt handler: CI launched that way ran the demo to the
        # end through the Ctrl-C. A terminal's foreground job has the default action.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stdout is not None
    lines = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        lines.append(line)
        if " claimed " in line:
            break
    assert any(" claimed " in line for line in lines), lines
    folder = Path(re.search(r"board at (\S+)", "".join(lines)).group(1)).parent  # type: ignore[union-attr]
    assert folder.is_dir() and folder.parent == tmp_path
    # the hints name a folder that goes at the end: said
    assert "(while the demo runs; --keep keeps it after)" in "".join(lines)
    os.killpg(process.pid, signal.SIGINT)
    rest, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "interrupted after" in rest, rest  # the whole feed when not: CI saw it fail once
    assert not folder.exists()
    time.sleep(0.2)
    assert _session_members(process.pid) == []


def test_importing_the_demo_loads_no_ui_stack() -> None:
    script = (
        "import json, sys, kanban.demo, kanban.demo.agents, kanban.demo.fleet;"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    loaded = set(json.loads(result.stdout))
    assert loaded.isdisjoint({"textual", "rich", "click", "fastapi", "uvicorn", "git", "pydantic"})


@pytest.mark.slow
def test_the_demo_opens_the_board_while_the_team_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The TUI contract: `run_tui(db_path, poll_ms=...)` is called while the agents work on that
    board, and the team stops once it returns. The TUI itself belongs to another module, so a
    stand-in with the same signature watches the real board until work gets done."""
    calls: list[tuple[Path, int]] = []

    def run_tui(db_path: Path, *, poll_ms: int = 500, **_: object) -> None:
        calls.append((db_path, poll_ms))
        deadline = time.monotonic() + 20
        with Board(db_path, read_only=True) as board:
            while board.status_counts()[t.DONE] == 0 and time.monotonic() < deadline:
                time.sleep(0.05)

    app = types.ModuleType("tui.launch")
    app.run_tui = run_tui  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tui", types.ModuleType("tui"))
    monkeypatch.setitem(sys.modules, "tui.launch", app)

    code, out = _demo(tmp_path, open_tui=True, duration=None, poll_ms=123)
    assert code == EXIT_OK, out
    assert calls == [(tmp_path / "demo" / "board.db", 123)]
    assert "closed after" in out
    with Board(tmp_path / "demo" / "board.db", read_only=True) as board:
        assert board.status_counts()[t.DONE] >= 1
    assert multiprocessing.active_children() == []


@pytest.mark.slow  # ~1.6 CPU-s: two demo teams of spawned agents
def test_the_advice_to_watch_is_printed_only_where_it_can_be_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the TUI, "watch it: kanban tui --db ... (while the demo runs...)" was printed under it,
    so it showed only once the TUI closed, the demo over, just before "removed ...". It is printed
    without the TUI (from another terminal, while the feed runs), never with it. The TUI is a
    stand-in the operator quits at once, as in the test above."""
    app = types.ModuleType("tui.launch")
    app.run_tui = lambda db_path, **_: None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tui", types.ModuleType("tui"))
    monkeypatch.setitem(sys.modules, "tui.launch", app)
    small = {"agents": 2, "tasks": 3, "keep": False}
    code, out = _demo(tmp_path / "tui", open_tui=True, duration=None, **small)
    assert code == EXIT_OK, out
    assert "removed" in out and "watch it" not in out and "or query" not in out, out
    code, out = _demo(tmp_path / "feed", duration=0.5, **small)
    assert code == EXIT_OK, out
    advice = out.index("watch it:   kanban tui --db")
    assert advice < out.index("team up") and "(while the demo runs" in out, out


def test_a_closed_pipe_ends_the_demo_and_still_cleans_up(tmp_path: Path) -> None:
    """`kanban demo --no-tui | head`: the reader goes away; the demo stops its team, removes its
    folder and exits without a traceback."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    process = subprocess.Popen(
        [sys.executable, "-m", "kanban.demo", "--no-tui", "--speed", "10", "--seed", "4"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    assert "board at" in first
    process.stdout.close()  # like `head -1` exiting
    err = process.stderr.read()
    assert process.wait(timeout=60) == 0, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert list(tmp_path.iterdir()) == []
    time.sleep(0.2)
    assert _session_members(process.pid) == []


def test_the_owner_replay_catches_overlaps_and_impostors() -> None:
    """The checker above must be able to fail: feed it the histories it exists to catch."""

    def event(seq: int, kind: str, actor: str, **data: object) -> Event:
        return Event(seq=seq, kind=kind, created_at=seq, task_id="TASK-1", actor=actor, data=data)

    fine = [
        event(1, "task_claimed", "ada"),
        event(2, "lease_renewed", "ada"),
        event(3, "lease_expired", "system", assignee="ada"),
        event(4, "task_claimed", "grace"),
        event(5, "status_changed", "grace", verb="complete", **{"from": "in_progress"}),
        event(6, "task_claimed", "linus"),
    ]
    assert replay_holders(fine) == []
    double = [event(1, "task_claimed", "ada"), event(2, "task_claimed", "grace")]
    assert len(replay_holders(double)) == 1
    impostor = [event(1, "task_claimed", "ada"), event(2, "progress_logged", "grace")]
    assert len(replay_holders(impostor)) == 1
    lapsed = [
        event(1, "task_claimed", "ada"),
        event(2, "lease_expired", "system", assignee="ada"),
        event(3, "status_changed", "ada", verb="complete", **{"from": "in_progress"}),
    ]
    assert len(replay_holders(lapsed)) == 1


def test_the_feed_draws_agent_text_inert() -> None:
    """`kanban demo --no-tui` prints titles and reasons to the operator's terminal: an escape
    sequence in either reaches it as a visible picture, never as a control."""
    hostile = "clip\x1b]52;c;ZXZpbA==\x07 \x1b[2J\r\nOVERWRITE \u202eevil"
    claimed = Event(seq=1, kind="task_claimed", created_at=1_500, task_id="T-1", actor="ada")
    blocked = Event(
        seq=2, kind="status_changed", created_at=2_000, task_id="T-1", actor="ada",
        data={"verb": "block", "reason": hostile, "to": t.BLOCKED},
    )  # fmt: skip
    for event in (claimed, blocked):
        line = _feed_line(event, {"T-1": hostile}, started_ms=1_000)
        assert line is not None and "\N{SYMBOL FOR ESCAPE}]52" in line
        assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c == "\u202e" for c in line)
