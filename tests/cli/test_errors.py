"""Every way a command can fail, with its exit code and its one stderr line, and proof that a
refusal wrote nothing (every task and the event cursor are the same before and after)."""

import json
import os
import shlex
import socket
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from boardlib import Board
from boardlib.errors import BoardError, Reason
from tests.backends import hold_write_lock, is_postgres
from tests.cli.conftest import KANBAN, Kanban, agent_notice, clean_env, unchanged

FAIL_VERDICT = json.dumps({"status": "fail", "attempts": [], "updatedAt": 1})


@pytest.fixture
def kanban(board_path: Path) -> Kanban:
    return Kanban(board_path)


def in_review(board: Board, builder: str = "alice") -> str:
    task = board.create_task("reviewed work")
    board.claim(task.id, builder)
    board.complete(task.id, builder)
    return task.id


def held(board: Board, agent: str = "alice") -> str:
    task = board.create_task("held work")
    board.claim(task.id, agent)
    return task.id


def done(board: Board) -> str:
    task_id = in_review(board)
    board.approve(task_id, "judge")
    return task_id


def waiting(board: Board) -> str:
    blocker = board.create_task("blocker")
    return board.create_task("waiter", depends_on=[blocker.id]).id


def chain(board: Board) -> str:
    first = board.create_task("first")
    second = board.create_task("second", depends_on=[first.id])
    return f"{first.id} {second.id}"


def failing_verdict(board: Board) -> str:
    task_id = in_review(board)
    board.record_verification(task_id, FAIL_VERDICT)
    return task_id


Setup = Callable[[Board], str]

# (setup returning the ids the command needs, command with {0}/{1} for them, reason, message part)
REFUSALS: list[tuple[str, Setup | None, str, str, str]] = [
    ("not_found", None, "task claim TASK-404 -a bob", "not_found", "task TASK-404 not found"),
    ("not_found_view", None, "task view TASK-404", "not_found", "task TASK-404 not found"),
    (
        "illegal_transition",
        done,
        "task move {0} --to todo",
        "illegal_transition",
        "illegal transition: done -> todo",
    ),
    (
        "invalid_state",
        lambda b: b.create_task("todo").id,
        "task approve {0} -a judge",
        "invalid_state",
        "only work in review is judged; nothing is built yet: an agent claims and completes it "
        "first (current state: todo, expected: in_review)",
    ),
    (
        "invalid_state_complete",
        lambda b: b.create_task("todo").id,
        "task complete {0} -a alice",
        "invalid_state",
        "(current state: todo, expected: in_progress)",
    ),
    (
        "unmet_dependencies",
        waiting,
        "task claim {0} -a bob",
        "unmet_dependencies",
        "has unmet dependencies: TASK-1",
    ),
    ("conflict", held, "task claim {0} -a bob", "conflict", "held by alice"),
    ("not_assignee", held, "task complete {0} -a bob", "not_assignee", "held by alice, not bob"),
    ("not_assignee_block", held, "task block {0} -a bob --reason x", "not_assignee", "not bob"),
    ("stale_claim", held, "task heartbeat {0} -a alice --epoch 7", "stale_claim", "never had"),
    ("self_review", in_review, "task approve {0} -a alice", "self_review", "must review"),
    (
        "dependency_cycle",
        chain,
        "task deps add {0} --on {1}",
        "dependency_cycle",
        "would close a cycle: TASK-1 -> TASK-2 -> TASK-1",
    ),
    ("self_dependency", held, "task deps add {0} --on {0}", "dependency_cycle", "cycle"),
    (
        "verification_required",
        failing_verdict,
        "task move {0} --to done",
        "verification_required",
        "not promotable",
    ),
    (
        "verification_required_approve",
        failing_verdict,
        "task approve {0} -a judge",
        "verification_required",
        "not promotable",
    ),
    ("invalid_input_title", None, "task dispatch --title ''", "invalid_input", "title"),
    ("invalid_input_edit", held, "task edit {0}", "invalid_input", "at least one field"),
    (
        "invalid_input_override",
        held,
        "task move {0} --to blocked --human-override",
        "invalid_input",
        "humanOverride",
    ),
    ("drop_locked", held, "task drop {0}", "invalid_state", "cannot drop"),
    ("unblock_todo", lambda b: b.create_task("t").id, "task unblock {0}", "invalid_state", "todo"),
    (
        "exec_on_todo",
        lambda b: b.create_task("t").id,
        "task exec start {0} --executor x -a al",
        "invalid_state",
        "in_progress",
    ),
    ("exec_unknown", None, "task exec finish EX-9 --status failed -a bo", "not_found", "not found"),
    ("dependency_unknown", held, "task deps add {0} --on TASK-99", "not_found", "dependency"),
    (
        "parent_unknown",
        None,
        "task dispatch -t x --parent TASK-9",
        "not_found",
        "parent task TASK-9 not found",
    ),
    # Agent names are drawn on operators' terminals: a control character is refused, not stored.
    ("mcp_agent_escape", None, "mcp --agent 'ev\x1bil'", "invalid_input", "U+001B"),
    (
        "agent_escape",
        lambda b: b.create_task("t").id,
        "task claim {0} -a 'ev\x1b[2Jil'",
        "invalid_input",
        "U+001B",
    ),
    (
        "agent_bell",
        lambda b: b.create_task("t").id,
        "task comment {0} -m hi -a 'a\x07b'",
        "invalid_input",
        "U+0007",
    ),
    (
        "actor_bidi",
        lambda b: b.create_task("t").id,
        "task cancel {0} -a 'op\u202eer'",
        "invalid_input",
        "U+202E",
    ),
    (
        "dispatch_agent_newline",
        None,
        "task dispatch -t x -a 'plan\nner'",
        "invalid_input",
        "U+000A",
    ),
]


@pytest.mark.parametrize(
    ("setup", "command", "reason", "says"),
    [case[1:] for case in REFUSALS],
    ids=[case[0] for case in REFUSALS],
)
def test_refusals_exit_2_with_one_json_line_and_change_nothing(
    kanban: Kanban, setup: Setup | None, command: str, reason: str, says: str
) -> None:
    ids: list[str] = []
    if setup is not None:
        with kanban.board() as board:
            ids = setup(board).split()
    before = kanban.snapshot()
    error = kanban.refused(*shlex.split(command.format(*ids)), reason=reason)
    assert says in error["error"]
    assert kanban.snapshot() == before


def test_a_task_not_found_names_the_id_and_where_to_look(kanban: Kanban) -> None:
    """`task not found` named neither the id (only the details did) nor where to look. The line
    names it (inert: it is the caller's text) and the commands that find a task; the details
    are as they were, and the suggested search answers."""
    with kanban.board() as board:
        board.create_task("Write the parser")
    for ident, shown in (
        ("TASK-404", "TASK-404"),
        ("TASK-\u202e9\x1b[2J", "TASK-\ufffd9\u241b[2J"),
    ):
        with unchanged(kanban.db):
            error = kanban.refused("task", "view", ident, reason="not_found")
        assert error == {
            "error": f"task {shown} not found: find it with `kanban task search TEXT` or "
            "`kanban task list`",
            "reason": "not_found",
            "id": ident,
            "what": "task",
        }
    assert [task["title"] for task in kanban.ok("task", "search", "parser")] == ["Write the parser"]
    # found by use: the id as it was typed, refused, then searched as the refusal says
    with unchanged(kanban.db):
        kanban.refused("task", "view", "task-1", reason="not_found")
    assert [task["id"] for task in kanban.ok("task", "search", "task-1")] == ["TASK-1"]


def blocked(board: Board) -> str:
    task_id = held(board)
    board.block(task_id, "alice", "needs the staging credentials")
    return task_id


def dropped(board: Board) -> str:
    task_id = board.create_task("shelved").id
    board.drop(task_id)
    return task_id


# (setup, status it leaves, the assignee named, the words of the next step the refusal gives)
UNCLAIMABLE: list[tuple[str, Setup, str, str | None, tuple[str, ...]]] = [
    ("backlog", lambda b: b.create_task("t", status="backlog").id, "backlog", None,
     ("in the backlog", "Move it to todo first")),
    ("in_progress", held, "in_progress", "alice",
     ("held by alice", "Take other work with claim-next", "alice releases it")),
    ("in_review", in_review, "in_review", None,
     ("in review", "approves it (to done)", "rejects it (back to todo")),
    ("blocked", blocked, "blocked", None,
     ("needs the staging credentials", "claimable once alice or an operator unblocks it")),
    ("done", done, "done", None, ("not claimed again", "dispatch a new task")),
    ("cancelled", lambda b: b.cancel(b.create_task("t").id).id, "cancelled", None,
     ("not claimed again", "dispatch a new task")),
    ("dropped", dropped, "todo", None, ("dropped", "Restore it first")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("setup", "status", "assignee", "next_step"),
    [case[1:] for case in UNCLAIMABLE],
    ids=[case[0] for case in UNCLAIMABLE],
)
def test_a_claim_refused_for_its_status_says_what_to_do_next(
    kanban: Kanban, setup: Setup, status: str, assignee: str | None, next_step: tuple[str, ...]
) -> None:
    """`task claim` on a task in any status but todo: one JSON line of the same shape as ever
    (`conflict`, the status, the holder if any), and a message in sentences that says why and
    then what would make the task claimable, or what to do instead."""
    with kanban.board() as board:
        task_id = setup(board)
    before = kanban.snapshot()
    error = kanban.refused("task", "claim", task_id, "-a", "bob", reason="conflict")
    assert kanban.snapshot() == before
    expected = {"error", "reason", "id", "current"} | ({"assignee"} if assignee else set())
    assert set(error) - {"dropped"} == expected
    assert (error["id"], error["current"], error.get("assignee")) == (task_id, status, assignee)
    assert error["error"].startswith(f"task {task_id} is not claimable: it is ")
    for words in next_step:
        assert words in error["error"]


def test_a_claim_of_a_task_the_claimer_holds_says_it_holds_it(kanban: Kanban) -> None:
    with kanban.board() as board:
        task_id = held(board, "alice")
    before = kanban.snapshot()
    error = kanban.refused("task", "claim", task_id, "-a", "alice", reason="conflict")
    assert kanban.snapshot() == before
    assert "held by alice already" in error["error"]
    assert "heartbeat" in error["error"] and "claim-next" not in error["error"]


def test_human_override_lands_done_over_a_failing_verdict_and_is_audited(kanban: Kanban) -> None:
    with kanban.board() as board:
        task_id = failing_verdict(board)
    moved = kanban.ok(
        "task", "move", task_id, "--to", "done", "--human-override", "--reason", "shipped anyway",
        "--agent", "operator:olivia",
    )  # fmt: skip
    assert moved["status"] == "done"
    with kanban.board() as board:
        audit = board.audit(task_id)
    overrides = [entry for entry in audit if entry.action == "human_override"]
    assert len(overrides) == 1
    assert (overrides[0].actor, overrides[0].from_status, overrides[0].to_status) == (
        "operator:olivia", "in_review", "done",
    )  # fmt: skip


def test_a_task_the_gate_blocked_is_overridden_to_done_in_one_move(kanban: Kanban) -> None:
    """The gate parks unpromotable debt in blocked "until an operator overrides": one move,
    from there, audited; the operator does not become its holder on the way."""
    with kanban.board() as board:
        task_id = failing_verdict(board)
        board.move(task_id, "blocked", actor="verification-gate", reason="no verify command")
    before = kanban.snapshot()
    kanban.refused("task", "move", task_id, "--to", "done", reason="illegal_transition")
    assert kanban.snapshot() == before
    moved = kanban.ok("task", "move", task_id, "--to", "done", "--human-override")
    assert moved["status"] == "done" and moved["assigneeAgentId"] is None
    with kanban.board() as board:
        override = board.audit(task_id)[-1]
    assert (override.action, override.from_status, override.to_status) == (
        "human_override", "blocked", "done",
    )  # fmt: skip


def test_root_create_cap_applies_to_agent_dispatch(kanban: Kanban) -> None:
    limited = {"KANBAN_ROOT_CREATE_LIMIT": "1"}
    notice = agent_notice("planner", caps="24 children, 1 root per 5 minutes")
    kanban.noticed(
        "task", "dispatch", "-t", "first", "--agent", "planner", env=limited, notice=notice
    )
    before = kanban.snapshot()
    error = kanban.refused(
        "task", "dispatch", "-t", "second", "--agent", "planner", reason="cap_exceeded", env=limited
    )
    assert error["cap"] == "root_rate"
    assert kanban.snapshot() == before
    # An operator's dispatch (no --agent) is not capped.
    assert kanban.ok("task", "dispatch", "-t", "third", env=limited)["scheduledBy"] == "manual"


def test_a_busy_database_exits_4_and_writes_nothing(kanban: Kanban) -> None:
    with kanban.board() as board:
        task = board.create_task("contended")
    before = kanban.snapshot()
    # On SQLite every write waits for the file's lock, claims included; on Postgres the other
    # writes wait for the board's advisory lock while claims run beside it.
    busy = [("task", "comment", task.id, "-m", "hello", "--agent", "bob")]
    if not is_postgres(kanban.db):
        busy.append(("task", "claim-next", "--agent", "alice"))
    with hold_write_lock(kanban.db):  # another writer holds the lock past the retry budget
        results = [kanban.run(*args, env={"KANBAN_RETRY_BUDGET_MS": "300"}) for args in busy]
        if is_postgres(kanban.db):
            claimed = kanban.ok("task", "claim-next", "--agent", "alice")
            assert claimed["id"] == task.id
    for result in results:
        assert result.code == 4, str(result)
        assert result.out == ""
        assert result.error["reason"] == "busy"
        assert result.error["error"] == "database busy, try again"
    if not is_postgres(kanban.db):
        assert kanban.snapshot() == before
        assert kanban.ok("task", "claim-next", "--agent", "alice")["id"] == task.id
    with kanban.board() as board:
        assert board.comments(task.id) == []


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("task", "claim-next"), "Missing option '--agent'"),
        (("task", "dispatch"), "Missing the title: give it as TITLE or --title"),
        (("task", "dispatch", "-t", "x", "--priority", "high"), "'high' is not a whole number"),
        (("task", "dispatch", "-t", "x", "--status", "done"), "Invalid value for '--status'"),
        (("task", "list", "--status", "doing"), "Invalid value for '--status'"),
        (("task", "frobnicate"), "No such command 'frobnicate'"),
        (("task", "claim-next", "-a", "x", "--respect-deps=maybe"), "not a valid boolean"),
        (("task", "exec", "finish", "EX-1", "--status", "won"), "Invalid value for '--status'"),
        (("events", "--since", "-1"), "Invalid value for '--since'"),
        # nan and inf passed click's ranges and were the board's invalid_input; -5 was usage
        (("task", "dispatch", "x", "--budget-usd", "nan"), "'nan' is not a finite number"),
        (("task", "dispatch", "x", "--budget-usd", "1e400"), "1e400 is not in the range 0<=x<="),
        (("task", "exec", "finish", "EX-1", "--cost", "nan"), "'nan' is not a finite number"),
        (("task", "claim-next", "-a", "x", "--minutes", "nan"), "'nan' is not a finite number"),
        (("--format", "xml", "task", "list"), "Invalid value for '--format'"),
    ],
)
def test_usage_errors_exit_2_with_one_json_line_carrying_clicks_message(
    kanban: Kanban, args: tuple[str, ...], says: str
) -> None:
    result = kanban.run(*args)
    assert result.code == 2, str(result)
    assert result.out == ""
    assert result.error["reason"] == "usage"  # one JSON line, not Click's usage text
    assert says in result.error["error"]


def test_unexpected_failures_exit_1_with_one_line_and_a_traceback_only_on_request(
    tmp_path: Path,
) -> None:
    # A board whose pages are damaged is a typed refusal now (not_a_board, exit 2); a row the code
    # cannot read (a holders list that is not JSON) is still a failure nobody planned for.
    junk = tmp_path / "damaged.db"
    with Board(junk) as board:
        board.create_task("x")
    with sqlite3.connect(junk) as conn:
        conn.execute("UPDATE tasks SET holders = '{not json'")
    kanban = Kanban(junk)
    quiet = kanban.run("task", "list")
    assert quiet.code == 1, str(quiet)
    assert quiet.out == ""
    assert quiet.error["reason"] == "unexpected"
    assert quiet.error["type"] == "JSONDecodeError"
    assert "Traceback" not in quiet.err

    loud = kanban.run("task", "list", env={"KANBAN_DEBUG": "1"})
    assert loud.code == 1
    assert "Traceback (most recent call last)" in loud.err
    assert json.loads(loud.err.splitlines()[-1])["reason"] == "unexpected"


# A board path that names no regular file: (how to make it in a folder, what the refusal calls
# it). "dev_null" and "dev_zero" are the devices themselves, the others are made in tmp_path.
NOT_FILES: dict[str, str] = {
    "fifo": "a FIFO",
    "socket": "a socket",
    "link_to_dev_null": "a character device, through a symbolic link to /dev/null",
    "link_to_fifo": "a FIFO, through a symbolic link to",
    "dev_null": "a character device",
    "dev_zero": "a character device",
}


def not_a_file(kind: str, folder: Path) -> Path:
    if kind in ("dev_null", "dev_zero"):
        return Path("/dev") / kind.removeprefix("dev_")
    path = folder / "board.db"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as bound:
            bound.bind(str(path))  # the socket file stays after the socket is closed
    elif kind == "link_to_dev_null":
        path.symlink_to(os.devnull)
    else:
        os.mkfifo(folder / "pipe")
        path.symlink_to(folder / "pipe")
    return path


def beside(path: Path) -> list[str]:
    """What is named after the board path beside it and beside what it resolves to (in /dev, for
    a device), and for a path in tmp_path everything in its folder."""
    target = Path(os.path.realpath(path))
    found = {*target.parent.glob(f"{target.name}-*"), *path.parent.glob(f"{path.name}-*")}
    if path.parent != Path("/dev"):
        found |= set(path.parent.iterdir())
    return sorted(str(p) for p in found)


@pytest.mark.parametrize("kind", NOT_FILES)
def test_a_path_that_is_no_regular_file_is_not_a_board_and_nothing_is_made_beside_it(
    tmp_path: Path, kind: str
) -> None:
    """A device, FIFO or socket (or a symbolic link to one) has size 0, like an empty board to
    create: every open (a read, a creating write, `db init`, the library's read-only open) is
    `not_a_board` from its `stat` alone, and no -journal, -wal, -shm or -writers file appears
    beside it, in /dev neither (SQLite resolves the link, the writers' lock file does not)."""
    path = not_a_file(kind, tmp_path)
    before = beside(path)
    try:
        _refused_everywhere(path, kind, before)
    finally:  # a regression must not leave -journal files in /dev for every later run
        for made in set(beside(path)) - set(before):
            if made.startswith("/dev/"):
                Path(made).unlink(missing_ok=True)


def _refused_everywhere(path: Path, kind: str, before: list[str]) -> None:
    kanban = Kanban(path, init=False)
    runs = [
        kanban.run(*args)
        for args in (
            ("task", "list"),
            ("task", "dispatch", "--title", "x"),
            ("task", "claim-next", "--agent", "ada"),
            ("db", "init", str(path)),
        )
    ]
    refusals: list[Exception | None] = []
    for kwargs in ({}, {"read_only": True}, {"create": False}):
        try:
            Board(path, **kwargs).close()  # type: ignore[arg-type]
            refusals.append(None)
        except Exception as error:  # asserted below, once the folder is checked
            refusals.append(error)
    assert beside(path) == before  # first: what a wrong refusal below would hide
    for run in runs:
        assert run.code == 2 and run.out == "", str(run)
        assert run.error["reason"] == "not_a_board" and run.error["path"] == str(path), str(run)
        assert f"{path} is not a kanban board (it is {NOT_FILES[kind]}" in run.error["error"]
    for error in refusals:
        assert isinstance(error, BoardError) and error.reason is Reason.NOT_A_BOARD, repr(error)
    # `db path` opens nothing and refuses nothing: it says what is there, from the same stat.
    where = kanban.ok("db", "path")
    assert where["exists"] is True and where["path"] == str(path)
    assert where["notABoard"].startswith(f"it is {NOT_FILES[kind]}"), where
    assert beside(path) == before


def test_a_symbolic_link_to_a_board_file_is_that_board(tmp_path: Path) -> None:
    real = tmp_path / "real.db"
    link = tmp_path / "link.db"
    link.symlink_to(real)
    kanban = Kanban(link, init=False)
    error = kanban.refused("task", "list", reason="not_a_board")  # a link to nothing yet
    assert "dangling symbolic link" in error["error"]
    assert kanban.ok("db", "path")["notABoard"] == "it is a dangling symbolic link"
    Board(real).close()
    assert "notABoard" not in kanban.ok("db", "path")
    made = kanban.ok("task", "dispatch", "--title", "through the link")
    with Board(real, read_only=True) as board:
        assert [task.id for task in board.list_tasks()] == [made["id"]]


def test_plain_kanban_without_a_terminal_says_so(kanban: Kanban) -> None:
    result = kanban.run()
    assert result.code == 2, str(result)
    assert "needs an interactive terminal" in result.err


def test_errors_are_reported_the_same_under_parallel_callers(kanban: Kanban) -> None:
    """Many refused callers at once: each gets its own exit 2 and line, none a traceback."""
    with kanban.board() as board:
        task_id = held(board)
    results = []

    def refuse(agent: str) -> None:
        results.append(kanban.run("task", "complete", task_id, "--agent", agent))

    threads = [threading.Thread(target=refuse, args=(f"agent-{n}",)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [result.code for result in results] == [2] * 6
    assert all(result.error["reason"] == "not_assignee" for result in results)
    assert kanban.row(task_id)["status"] == "in_progress"


def test_the_console_script_is_the_installed_entry_point() -> None:
    text = KANBAN.read_text()
    assert "from kanban.cli import main" in text
    assert clean_env().get("KANBAN_DB") is None


def test_an_unknown_theme_is_a_usage_refusal_before_the_terminal_is_taken(kanban: Kanban) -> None:
    """`--theme nosuch` leaked Textual's InvalidThemeError with exit 1: now one JSON line, exit 2,
    with the closest theme and the list, and the board untouched."""
    before = kanban.snapshot()
    error = kanban.refused("tui", "--theme", "textual-lite", reason="usage")
    assert "Did you mean 'textual-light'?" in error["error"]
    assert "ansi-dark" in error["error"] and "Error" not in error["error"]
    assert kanban.snapshot() == before


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('"task.approve" = "x"\n', "x would run both task.cancel and task.approve"),
        ("x = [\n", "not a keymap (TOML) file"),
        ('"nonsense.action" = "x"\n', "unknown binding ids nonsense.action"),
        ('"task.approve" = 5\n', "task.approve must name keys"),
    ],
)
def test_a_keymap_that_cannot_be_used_is_a_usage_refusal_naming_it(
    kanban: Kanban, tmp_path: Path, text: str, says: str
) -> None:
    """A TOML error or an unknown id stopped `kanban tui` as an unexpected failure (exit 1, the file
    not named), and a key given to two actions was taken, the first bound winning, the other action
    left with no key and no word."""
    keymap = tmp_path / "keymap.toml"
    keymap.write_text(text)
    before = kanban.snapshot()
    for verb in (("tui",), ("demo", "--tasks", "1")):
        error = kanban.refused(*verb, reason="usage", env={"KANBAN_KEYMAP": str(keymap)})
        assert says in error["error"] and str(keymap) in error["error"], error
    assert kanban.snapshot() == before


def test_the_live_board_on_a_dead_postgres_url_is_one_json_line_and_exit_2(tmp_path: Path) -> None:
    """In a real terminal (a pty), `kanban tui` on a server nobody answers: typed, exit 2."""
    import os
    import socket
    import subprocess

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed once the block ends: nothing listens there
    primary, secondary = os.openpty()
    try:
        done = subprocess.run(
            [str(KANBAN), "tui", "--db", f"postgresql://nobody:pw-9@127.0.0.1:{port}/x"],
            stdin=secondary, stdout=secondary, stderr=subprocess.PIPE,
            env=clean_env(PGCONNECT_TIMEOUT="2"), cwd=tmp_path, timeout=60, check=False,
        )  # fmt: skip
    finally:
        os.close(secondary)
        os.close(primary)
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 2, lines
    [line] = lines
    error = json.loads(line)
    assert error["reason"] == "database_unavailable" and "pw-9" not in line


# a line break to str.splitlines, a CSI, two separators, and two bidi controls (a title drawn
# reversed from U+202E on: raw in the CLI's JSON)
LINE_BREAKERS = "\x85\x9b\u2028\u2029\u202e\u2066"


def test_text_a_line_reader_would_split_is_escaped_in_every_json_line(kanban: Kanban) -> None:
    """JSON leaves U+0085, U+2028 and the other C1 controls raw in a string; `str.splitlines`
    breaks a line on them and some terminals act on them. A result and a refusal stay one line,
    with nothing of that kind raw in it, and decode to what the agent wrote."""
    title = f"a{LINE_BREAKERS}b"
    with kanban.board() as board:
        task_id = board.create_task(title).id
    shown = kanban.run("task", "view", task_id)
    [line] = shown.out.splitlines()
    assert not set(line) & set(LINE_BREAKERS)
    assert json.loads(line)["task"]["title"] == title
    refused = kanban.run("task", "view", f"T-{LINE_BREAKERS}")
    assert refused.code == 2 and not set(refused.err) & set(LINE_BREAKERS)
    assert refused.error["id"] == f"T-{LINE_BREAKERS}"


@pytest.mark.parametrize("under", ["afile/board.db", "afile/sub/board.db"])
def test_a_board_path_under_a_regular_file_is_not_a_board(tmp_path: Path, under: str) -> None:
    """Found by hand: creating a board at afile/board.db, afile a regular file, was exit 1
    "unexpected" (FileExistsError from the folder's mkdir). The file is left as it was."""
    import hashlib

    blocker = tmp_path / "afile"
    blocker.write_text("not a folder\n")
    digest = hashlib.sha256(blocker.read_bytes()).hexdigest()
    path = tmp_path / under
    for args in (("task", "dispatch", "--title", "x"), ("db", "init", str(path))):
        error = Kanban(path, init=False).refused(*args, reason="not_a_board")
        assert f"{blocker} on its way is a file, not a folder" in error["error"]
    assert hashlib.sha256(blocker.read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_a_postgres_url_without_the_driver_is_a_typed_refusal(tmp_path: Path) -> None:
    """On the README's install (no postgres extra) a postgresql:// board was `unexpected`, exit 1,
    ModuleNotFoundError. It says what to install, exit 2. (The driver is hidden from a child
    process, as an install without it would be.)"""
    code = (
        "import sys\n"
        "class NoDriver:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('psycopg', 'psycopg_pool'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, NoDriver())\n"
        "from kanban.cli import main\n"
        "raise SystemExit(main(['task', 'list', '--db', 'postgresql://nobody@127.0.0.1:1/x']))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
        env=clean_env(), check=False,
    )  # fmt: skip
    assert run.returncode == 2 and run.stdout == "", run
    [line] = run.stderr.splitlines()
    error = json.loads(line)
    assert error["reason"] == "unsupported_backend" and "kanban[postgres]" in error["error"]
