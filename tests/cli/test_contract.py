"""The agent contract (issue 9) through the real `kanban` console script: one test per promise,
each refusal checked for its exit code, its one JSON line with the reason, and that nothing was
written (the board's bytes and `PRAGMA data_version`, see `tests/cli/conftest.py's unchanged`)."""

import json
import os
import re
import subprocess
import uuid
from pathlib import Path

import pytest

from boardlib import Board
from tests.backends import raw_execute
from tests.cli.conftest import (
    KANBAN,
    LEASE_MS,
    START_MS,
    Kanban,
    agent_notice,
    clean_env,
    file_digest,
    unchanged,
)
from tests.cli.warm import run_kanban
from tests.worktrees.conftest import GIT_ENV, make_repo


@pytest.fixture
def kanban(tmp_path: Path) -> Kanban:
    return Kanban(tmp_path / "board.db")


def claimed(kanban: Kanban, agent: str = "dana", title: str = "work") -> dict[str, object]:
    with kanban.board() as board:
        task = board.create_task(title)
    return kanban.ok("task", "claim", task.id, "--agent", agent)  # type: ignore[no-any-return]


def refused_unchanged(kanban: Kanban, *args: str, reason: str, **kwargs: object) -> dict:  # type: ignore[type-arg]
    with unchanged(kanban.db):
        return kanban.refused(*args, reason=reason, **kwargs)  # type: ignore[arg-type]


# -- builder is not judge ---------------------------------------------------------------------


def test_a_holder_cannot_move_its_own_work_to_done_or_out_of_review(kanban: Kanban) -> None:
    task = claimed(kanban, "dana")
    task_id = str(task["id"])
    error = refused_unchanged(
        kanban, "task", "move", task_id, "--to", "done", "--agent", "dana", reason="self_review"
    )
    assert error["requested"] == "done" and error["id"] == task_id
    kanban.ok("task", "complete", task_id, "--agent", "dana")
    for target in ("done", "in_progress", "blocked", "cancelled"):
        refused_unchanged(
            kanban, "task", "move", task_id, "--to", target, "--reason", "x", "--agent", "dana",
            reason="self_review",
        )  # fmt: skip
    # KANBAN_AGENT identifies the agent as well as --agent does.
    refused_unchanged(
        kanban, "task", "move", task_id, "--to", "done", env={"KANBAN_AGENT": "dana"},
        reason="self_review",
    )  # fmt: skip
    assert kanban.row(task_id)["status"] == "in_review"


def test_no_caller_acts_under_the_boards_own_names(kanban: Kanban) -> None:
    """`approve --agent verification-gate` recorded a person's approval under the gate's name,
    `transfer --to system` made the system the holder, and `--agent operator:` recorded a reviewer
    named nobody."""
    task_id = str(claimed(kanban, "dana")["id"])
    kanban.ok("task", "complete", task_id, "--agent", "dana")
    for name in ("verification-gate", "system", "worktree-gc", "operator:", "operator:  "):
        error = refused_unchanged(
            kanban, "task", "approve", task_id, "--agent", name, reason="invalid_input"
        )
        assert error["field"] == "agent", error
        refused_unchanged(
            kanban, "task", "approve", task_id, env={"KANBAN_AGENT": name}, reason="invalid_input"
        )
    other = str(claimed(kanban, "erin", "other")["id"])
    error = refused_unchanged(
        kanban, "task", "transfer", other, "--agent", "erin", "--to", "system",
        reason="invalid_input",
    )  # fmt: skip
    assert error["field"] == "to"
    # the field is named alike on every verb (comment said authorAgentId, approve agent)
    for verb in (("comment", task_id, "--body", "x"), ("approve", task_id)):
        error = refused_unchanged(kanban, "task", *verb, "--agent", "a\x1b", reason="invalid_input")
        assert error["field"] == "agent"
    assert kanban.ok("task", "approve", task_id, "--agent", "operator:ann")["status"] == "done"


def test_a_runs_executor_is_refused_with_a_control_character_and_nothing_changes(
    kanban: Kanban,
) -> None:
    """`--executor` was stored with an escape or a bidi override in it, where `--role` and
    `--team`, names as well, are refused."""
    task_id = str(claimed(kanban, "dana")["id"])
    for executor in ("codex\x1b[2J", "sh\x07", "claude\u202ecode"):
        error = refused_unchanged(
            kanban, "task", "exec", "start", task_id, "--executor", executor, "--agent", "dana",
            reason="invalid_input",
        )  # fmt: skip
        assert error["field"] == "executorType", error
    started = kanban.ok("task", "exec", "start", task_id, "--executor", "codex", "--agent", "dana")
    assert started["executorType"] == "codex"


def test_an_edit_refuses_a_role_or_team_that_creating_refuses(kanban: Kanban) -> None:
    """`task edit --role` and `--team` stored an escape or a bidi override that `task create`
    refuses in the same names; blank still clears them."""
    with kanban.board() as board:
        task_id = board.create_task("work", role="dev", team_id="core").id
    for option, field in (("--role", "role"), ("--team", "teamId")):
        for value in ("ev\x1b[2Jil", "dev\u202e"):
            error = refused_unchanged(
                kanban, "task", "edit", task_id, option, value, reason="invalid_input"
            )
            assert error["field"] == field, error
    cleared = kanban.ok("task", "edit", task_id, "--role", "", "--team", " ")
    assert (cleared["role"], cleared["teamId"]) == (None, None)
    assert kanban.ok("task", "edit", task_id, "--role", "qa")["role"] == "qa"


def test_an_agent_cannot_move_or_cancel_another_agents_work(kanban: Kanban) -> None:
    task_id = str(claimed(kanban, "dana")["id"])
    for args in (
        ("task", "move", task_id, "--to", "todo", "--agent", "frank"),
        ("task", "move", task_id, "--to", "blocked", "--reason", "mine now", "--agent", "frank"),
        ("task", "cancel", task_id, "--agent", "frank"),
    ):
        error = refused_unchanged(kanban, *args, reason="not_assignee")
        assert error["assignee"] == "dana"
    assert kanban.row(task_id)["assigneeAgentId"] == "dana"


def test_an_agent_moves_only_what_it_holds_and_only_an_operator_overrides(kanban: Kanban) -> None:
    with kanban.board() as board:
        loose = board.create_task("nobody holds this").id
    refused_unchanged(
        kanban, "task", "move", loose, "--to", "backlog", "--agent", "frank", reason="not_assignee"
    )
    # The holder may move its own task (here: block it with a reason, then take it back).
    task_id = str(claimed(kanban, "dana")["id"])
    blocked = kanban.ok(
        "task", "move", task_id, "--to", "blocked", "--reason", "need a key", "--agent", "dana"
    )
    assert blocked["status"] == "blocked"
    refused_unchanged(kanban, "task", "unblock", task_id, "--agent", "frank", reason="not_assignee")
    kanban.ok("task", "unblock", task_id, "--agent", "dana")
    # A stale claim (the epoch of an earlier claim) is no longer the holder's to move.
    second = claimed(kanban, "dana", "second")
    task_id, epoch = str(second["id"]), int(second["claimEpoch"])  # type: ignore[call-overload]
    refused_unchanged(
        kanban, "task", "move", task_id, "--to", "todo", "--agent", "dana",
        "--epoch", str(epoch - 1), reason="stale_claim",
    )  # fmt: skip
    # The operator (no agent identity) moves anything, done included.
    done = kanban.ok("task", "move", task_id, "--to", "done")
    assert done["status"] == "done"


def test_the_operator_override_stays_and_is_audited(kanban: Kanban) -> None:
    with kanban.board() as board:
        task = board.create_task("risky")
        board.claim(task.id, "dana")
        board.complete(task.id, "dana")
        board.record_verification(task.id, json.dumps({"status": "fail", "updatedAt": START_MS}))
    refused_unchanged(
        kanban, "task", "move", task.id, "--to", "done", "--human-override", "--agent", "rita",
        reason="not_assignee",
    )  # fmt: skip
    moved = kanban.ok(
        "task", "move", task.id, "--to", "done", "--human-override", "--agent", "operator:olga"
    )
    assert moved["status"] == "done"
    with kanban.board() as board:
        (override,) = [a for a in board.audit(task.id) if a.action == "human_override"]
    assert override.actor == "operator:olga"


def test_runs_are_closed_only_by_their_holder(kanban: Kanban) -> None:
    task = claimed(kanban, "dana")
    task_id, epoch = str(task["id"]), str(task["claimEpoch"])
    run = kanban.ok("task", "exec", "start", task_id, "--executor", "sh", "--agent", "dana")
    for agent, reason in (("frank", "not_assignee"), ("dana", "stale_claim")):
        extra = ("--epoch", str(int(epoch) + 5)) if agent == "dana" else ()
        refused_unchanged(
            kanban, "task", "exec", "finish", run["id"], "--status", "succeeded",
            "--cost", "99", "--agent", agent, *extra, reason=reason,
        )  # fmt: skip
    kanban.ok(
        "task", "exec", "finish", run["id"], "--status", "succeeded", "--cost", "0.5",
        "--agent", "dana", "--epoch", epoch,
    )  # fmt: skip
    kanban.ok("task", "complete", task_id, "--agent", "dana")
    kanban.ok("task", "approve", task_id, "--agent", "rita")
    # A done task's cost cannot be rewritten through a closed run.
    refused_unchanged(
        kanban, "task", "exec", "finish", run["id"], "--status", "failed", "--cost", "99",
        "--agent", "dana", reason="not_found",
    )  # fmt: skip
    assert kanban.row(task_id)["costUsd"] == 0.5


@pytest.mark.parametrize("verb", ["complete", "block", "release", "transfer"])
def test_a_run_left_open_is_closed_when_the_task_leaves_in_progress(
    kanban: Kanban, verb: str
) -> None:
    task_id = str(claimed(kanban, "dana")["id"])
    run = kanban.ok("task", "exec", "start", task_id, "--executor", "sh", "--agent", "dana")
    args = {
        "complete": (),
        "block": ("--reason", "waiting"),
        "release": (),
        "transfer": ("--to", "erin"),
    }[verb]
    kanban.ok("task", verb, task_id, "--agent", "dana", *args)
    closed = kanban.ok("task", "exec", "show", run["id"])
    assert (closed["status"], closed["recoveryTombstone"]) == ("cancelled", 1)
    assert verb in closed["error"] or "transferred" in closed["error"]
    refused_unchanged(
        kanban, "task", "exec", "finish", run["id"], "--status", "succeeded", "--agent", "dana",
        reason="not_found",
    )  # fmt: skip


# -- the gate chosen by the builder -----------------------------------------------------------


HANDOFF = {
    "handoffFrom": "dana",
    "runtime": "claude-code",
    "commands": {"verify": "true"},
}


def gate_setup(tmp_path: Path, **extra_env: str) -> tuple[Kanban, Path, dict[str, str], str]:
    repo = make_repo(tmp_path / "repo")
    env = {
        "KANBAN_WORKTREES": str(tmp_path / "state" / "worktrees"),
        **{key: GIT_ENV[key] for key in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")},
        **extra_env,
    }
    kanban = Kanban(tmp_path / "board.db")
    task_id = str(claimed(kanban, "dana", "fix answer")["id"])
    made = kanban.ok("task", "workspace", "provision", task_id, "--repo", str(repo), env=env)
    tree = Path(made["worktree"]["worktreePath"])
    kanban.ok(
        "task", "workspace", "handoff", task_id, "--file", "-", "--agent", "dana", env=env,
        stdin=json.dumps(HANDOFF),
    )  # fmt: skip
    (tree / "app.py").write_text("def answer():\n    return 41\n")  # wrong, and `true` says fine
    return kanban, tree, env, task_id


def test_the_verdict_says_the_builder_chose_its_own_judge(tmp_path: Path) -> None:
    kanban, _tree, env, task_id = gate_setup(tmp_path)
    result = kanban.ok("task", "workspace", "complete", task_id, "--agent", "dana", env=env)
    assert result["taskStatus"] == "done"  # seed 003's default: a pass promotes
    verdict = result["verification"]
    assert (verdict["commandSource"], verdict["commandAuthor"]) == ("handoff", "dana")
    assert verdict["verifyFrom"] == "builder"
    shown = kanban.ok("task", "get", task_id)["verification"]
    assert (shown["commandSource"], shown["commandAuthor"]) == ("handoff", "dana")
    # The operator's drawer says it too, in words.
    from rich.console import Console

    from tui.task_view import describe_verdict

    console = Console(width=160, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(describe_verdict(json.dumps(verdict), verdict["updatedAt"]))
    drawn = console.export_text()
    assert "judged by the verify command from the handoff, written by dana" in drawn
    assert "the builder chose its own judge" in drawn


def test_under_the_operator_policy_the_handoff_cannot_judge(tmp_path: Path) -> None:
    kanban, _tree, env, task_id = gate_setup(tmp_path, KANBAN_VERIFY_FROM="operator")
    result = kanban.ok("task", "workspace", "complete", task_id, "--agent", "dana", env=env)
    assert result["taskStatus"] == "blocked"
    assert result["verified"] == "completed_with_debt"
    assert result["verification"]["verifyFrom"] == "operator"
    assert result["verification"]["commandSource"] is None
    assert "KANBAN_VERIFY_FROM=operator" in kanban.row(task_id)["blockedReason"]


def test_under_the_operator_policy_only_the_provisioned_command_judges(tmp_path: Path) -> None:
    check = 'python -c "import app; assert app.answer() == 43"'
    kanban, tree, env, task_id = gate_setup(
        tmp_path, KANBAN_VERIFY_FROM="operator", KANBAN_VERIFY_CMD=check
    )
    # The builder edits init.sh too; the command of the scaffold commit still judges.
    init = (tree / "init.sh").read_text()
    assert "fixed at provision time by the operator (KANBAN_VERIFY_CMD)" in init
    (tree / "init.sh").write_text(re.sub(r"VERIFY_CMD=.*", "VERIFY_CMD='true'", init))
    result = kanban.ok("task", "workspace", "complete", task_id, "--agent", "dana", env=env)
    assert (result["verified"], result["taskStatus"]) == ("fail", "in_progress")
    attempt = result["verification"]["attempts"][-1]
    assert attempt["deterministic"]["command"] == check
    assert (attempt["source"], attempt["author"]) == ("init.sh", "operator")
    # (a different length: the first run's cached bytecode must not pass for the new source)
    (tree / "app.py").write_text("def answer():\n    return 40 + 3\n")
    passed = kanban.ok("task", "workspace", "complete", task_id, "--agent", "dana", env=env)
    assert (passed["verified"], passed["taskStatus"]) == ("pass", "done")


def test_the_verify_policy_is_a_checked_setting(kanban: Kanban) -> None:
    error = refused_unchanged(
        kanban, "task", "list", env={"KANBAN_VERIFY_FROM": "whoever"}, reason="invalid_input"
    )
    assert error["variable"] == "KANBAN_VERIFY_FROM"


# -- wrong files are refused --------------------------------------------------------------------


def test_a_foreign_sqlite_file_is_refused_and_left_byte_for_byte(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    conn = __import__("sqlite3").connect(other)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("INSERT INTO notes VALUES ('mine')")
    conn.commit()
    conn.close()
    before = file_digest(other)
    kanban = Kanban(other, init=False)
    for args in (
        ("task", "list"),
        ("task", "claim-next", "-a", "x"),
        ("task", "dispatch", "-t", "t"),
    ):
        error = kanban.refused(*args, reason="not_a_board")
        assert error["path"] == str(other)
    assert file_digest(other) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]  # no -wal, -shm, -writers
    text = tmp_path / "notes.txt"
    text.write_text("not a database at all\n" * 300)
    Kanban(text, init=False).refused("task", "get", "TASK-1", reason="not_a_board")
    assert text.read_text() == "not a database at all\n" * 300


def test_a_mistyped_board_path_is_no_board_and_creates_nothing(tmp_path: Path) -> None:
    typo = tmp_path / "typo" / "bored.db"
    kanban = Kanban(typo, init=False)
    for args in (
        ("task", "claim-next", "--agent", "w1"),
        ("task", "list"),
        ("task", "heartbeat", "TASK-1", "-a", "w1"),
        ("events",),
        ("reconcile",),
        ("db", "check"),
    ):
        error = kanban.refused(*args, reason="no_board")
        assert error["path"] == str(typo)
    assert not typo.parent.exists()


def test_creating_a_board_is_explicit_and_said_on_stderr(tmp_path: Path) -> None:
    kanban = Kanban(tmp_path / "new" / "board.db", init=False)
    made = kanban.created("db", "init")
    assert made["created"] is True and made["path"] == str(kanban.db)
    assert kanban.ok("db", "init")["created"] is False  # an existing board is left as it is
    other = tmp_path / "given.db"
    assert kanban.created("db", "init", str(other), board=other)["path"] == str(other)
    filed = tmp_path / "filed.db"
    kanban.created("task", "dispatch", "-t", "first", "--db", str(filed), board=filed)
    plan = tmp_path / "plan.yaml"
    plan.write_text("- {key: a, title: A}\n")
    planned = tmp_path / "planned.db"
    assert (
        kanban.created("plan", "apply", str(plan), "--db", str(planned), board=planned)["count"]
        == 1
    )
    # A refused plan makes no board for itself.
    plan.write_text("- {key: a, title: A, depends_on: [nope]}\n")
    never = tmp_path / "never.db"
    kanban.refused("plan", "apply", str(plan), "--db", str(never), reason="invalid_input")
    assert not never.exists()


def test_the_default_board_is_created_by_the_first_write(tmp_path: Path) -> None:
    state = tmp_path / "state"
    kanban = Kanban(tmp_path / "unused.db", init=False)
    env = {"KANBAN_DB": "", "XDG_STATE_HOME": str(state)}
    default = state / "kanban" / "board.db"
    kanban.refused("task", "list", env=env, reason="no_board")  # a read creates nothing
    assert not default.exists()
    run = kanban.run("task", "claim-next", "--agent", "w1", env=env)
    assert (run.code, run.out.strip(), run.err) == (
        3, '{"task":null}', f"kanban: created a new board at {default}\n",
    )  # fmt: skip


@pytest.mark.parametrize(
    "url", ["postgresql://kanban:secret@127.0.0.1:1/kanban", "postgres://127.0.0.1:1/k"]
)
def test_a_database_url_is_a_server_never_a_folder(tmp_path: Path, url: str) -> None:
    """A URL selects the Postgres store (here a closed port): no folder named `postgresql:`, one
    JSON error line, and the password never echoed."""
    env = clean_env()
    for where in (["--db", url], []):
        run = run_kanban(
            [str(KANBAN), *where, "task", "dispatch", "-t", "x"],
            env={**env, "KANBAN_DB": url} if not where else env,
            cwd=tmp_path,
        )
        assert run.returncode == 2, run.stderr
        error = json.loads(run.stderr)
        assert error["reason"] == "database_unavailable" and "127.0.0.1" in error["error"]
        assert "secret" not in run.stderr  # the URL's password is never echoed
    for scheme in ("mysql", "redis"):
        run = run_kanban(
            [str(KANBAN), "--db", f"{scheme}://u:secret@h/d", "task", "list"],
            env=env,
            cwd=tmp_path,
        )
        assert run.returncode == 2, run.stderr
        assert json.loads(run.stderr)["reason"] == "unsupported_backend"
        assert "secret" not in run.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # a lock held for seconds by another process
def test_reads_do_not_wait_on_a_writer_holding_the_lock(kanban: Kanban) -> None:
    """Another process holds the write lock (the writers' queue and SQLite's own), and a lease
    has expired, so the open's orphan reconciliation wants to write: the read still answers at
    once."""
    task_id = str(claimed(kanban, "dana")["id"])
    kanban.advance(ms=LEASE_MS + 1)
    holder = subprocess.Popen(
        [
            str(KANBAN.parent / "python"), "-c",
            "import fcntl, os, sqlite3, sys, time\n"
            "db = sys.argv[1]\n"
            "fd = os.open(db + '-writers', os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "conn = sqlite3.connect(db, isolation_level=None)\n"
            "conn.execute('BEGIN IMMEDIATE')\n"
            "print('held', flush=True)\n"
            "time.sleep(30)\n",
            str(kanban.db),
        ],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with unchanged(kanban.db):
            listed = kanban.ok("task", "list")
            explained = kanban.ok("task", "why", task_id)
        assert [t["id"] for t in listed] == [task_id]
        assert listed[0]["status"] == "in_progress"  # reconciliation was skipped, not waited for
        assert explained["claimable"] is True  # expired: the next claim takes it
    finally:
        holder.kill()
        holder.wait()
    # The next writer does the recovery the reads skipped.
    assert kanban.ok("task", "claim-next", "--agent", "erin")["id"] == task_id


def _unshare_works() -> bool:
    probe = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "true"], capture_output=True, check=False
    )
    return probe.returncode == 0


def test_a_read_only_board_is_read_and_refuses_writes_typed(
    backend: str, board_path: Path, tmp_path: Path
) -> None:
    """A board this user may only read: its folder mounted read-only (root ignores file modes,
    so a read-only bind mount in a private namespace stands in), or a database role granted
    SELECT alone. Reads work (the open's lease recovery skipped); every write, a claim and a
    consumer's cursor included, is `read_only` and changes nothing. On Postgres the server's
    privilege error was exit 1 `unexpected`."""
    if backend == "sqlite" and (os.geteuid() != 0 or not _unshare_works()):
        pytest.skip("needs a private mount namespace (root)")
    db = tmp_path / "ro" / "board.db" if backend == "sqlite" else board_path
    if backend == "sqlite":
        db.parent.mkdir()
    with Board(db) as board:
        task = board.create_task("look, don't touch")
        board.claim(task.id, "dana", lease_ms=1)  # expired at once: the open wants to recover
    if backend == "sqlite":
        for leftover in db.parent.glob("board.db-*"):
            leftover.unlink()
        where = str(db)
        prefix = f"mount --bind {db.parent} {db.parent} && mount -o remount,bind,ro {db.parent}"
        command = ["unshare", "-m", "--propagation", "private", "sh", "-c"]
    else:
        role = f"reader_{uuid.uuid4().hex[:12]}"
        raw_execute(db, f"CREATE ROLE {role} LOGIN")
        raw_execute(db, GRANT_READ.replace("ROLE", role))
        where, prefix, command = str(db).replace("postgres@", f"{role}@", 1), "true", ["sh", "-c"]
    writes = ("task dispatch -t nope", "task claim-next --agent erin", "events --consumer audit")
    steps = "; ".join(f'"{KANBAN}" {verb}; echo "exit=$?"' for verb in ("task list", *writes))
    with unchanged(db):
        run = subprocess.run(
            [*command, f"{prefix} && {{ {steps}; }}"],
            env=clean_env(KANBAN_DB=where), capture_output=True, text=True, check=False,
        )  # fmt: skip
    lines = run.stdout.splitlines()
    assert [t["id"] for t in json.loads(lines[0])] == [task.id], run
    assert lines[1:] == ["exit=0"] + ["exit=2"] * len(writes), run
    refusals = [json.loads(line) for line in run.stderr.splitlines()]
    assert [error["reason"] for error in refusals] == ["read_only"] * len(writes), run.stderr
    assert all(error["path"] == where for error in refusals), run.stderr


# Select on the board's tables and nothing else, for a role, in the board's own schema.
GRANT_READ = (
    "DO $$ BEGIN EXECUTE format('GRANT USAGE ON SCHEMA %I TO ROLE', current_schema()); "
    "EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA %I TO ROLE', current_schema()); END $$"
)


# -- self-dependency and caps -----------------------------------------------------------------


def test_a_task_cannot_depend_on_its_own_future_id(kanban: Kanban) -> None:
    with kanban.board() as board:
        board.create_task("first")
    error = refused_unchanged(
        kanban, "task", "dispatch", "-t", "me", "--depends-on", "TASK-2", reason="dependency_cycle"
    )
    assert error["cycle"] == ["TASK-2", "TASK-2"]
    assert kanban.run("task", "get", "TASK-2").code == 2


def test_db_check_flags_a_self_loop(kanban: Kanban) -> None:
    with kanban.board() as board:
        task = board.create_task("loop")
    conn = __import__("sqlite3").connect(kanban.db)
    conn.execute(
        "INSERT INTO task_deps (task_id, depends_on_task_id, created_at) VALUES (?, ?, 0)",
        (task.id, task.id),
    )
    conn.execute("UPDATE tasks SET unmet_deps = 1 WHERE id = ?", (task.id,))
    conn.commit()
    conn.close()
    run = kanban.run("db", "check")
    assert run.code == 1
    assert (
        f"dependency cycle: {task.id} -> {task.id} (none of them can become ready)"
        in (run.doc["problems"])
    )


def chain_plan(depth: int) -> str:
    lines = ["- {key: n0, title: N0}"]
    lines += [f"- {{key: n{i}, title: N{i}, parent: n{i - 1}}}" for i in range(1, depth)]
    return "\n".join(lines) + "\n"


def test_an_agents_plan_is_capped_whole_and_names_every_violation(
    kanban: Kanban, tmp_path: Path
) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text(chain_plan(50))
    error = refused_unchanged(
        kanban, "plan", "apply", str(deep), "-a", "planner", reason="cap_exceeded"
    )
    assert [v["key"] for v in error["violations"]] == [f"n{i}" for i in range(3, 50)]
    assert {v["cap"] for v in error["violations"]} == {"depth"}
    wide = tmp_path / "wide.yaml"
    wide.write_text("".join(f"- {{key: r{i}, title: R{i}}}\n" for i in range(40)))
    error = refused_unchanged(
        kanban, "plan", "apply", str(wide), "-a", "planner", reason="cap_exceeded"
    )
    assert [v["key"] for v in error["violations"]] == [f"r{i}" for i in range(30, 40)]
    crowd = tmp_path / "crowd.yaml"
    crowd.write_text(
        "- {key: p, title: P}\n"
        + "".join(f"- {{key: c{i}, title: C{i}, parent: p}}\n" for i in range(30))
    )
    error = refused_unchanged(
        kanban, "plan", "apply", str(crowd), "-a", "planner", reason="cap_exceeded"
    )
    assert [v["key"] for v in error["violations"]] == [f"c{i}" for i in range(24, 30)]
    # The operator's plans are not capped, and only the operator's config raises the caps.
    assert kanban.ok("plan", "apply", str(deep))["count"] == 50
    raised = {"KANBAN_MAX_DEPTH": "60"}
    said = agent_notice("planner")
    applied = kanban.noticed("plan", "apply", str(deep), "-a", "planner", env=raised, notice=said)
    assert applied["count"] == 0  # the operator's plan of the same name is on the board already
    again = ("plan", "apply", str(deep), "--name", "deep-2", "-a", "planner")  # a new plan
    assert kanban.noticed(*again, env=raised, notice=said)["count"] == 50


def test_single_creates_by_an_agent_are_capped_and_the_operators_are_not(kanban: Kanban) -> None:
    limited = {"KANBAN_ROOT_CREATE_LIMIT": "1"}
    notice = agent_notice("planner", caps="24 children, 1 root per 5 minutes")
    kanban.noticed("task", "dispatch", "-t", "one", "-a", "planner", env=limited, notice=notice)
    refused_unchanged(
        kanban, "task", "dispatch", "-t", "two", "-a", "planner", env=limited,
        reason="cap_exceeded",
    )  # fmt: skip
    refused_unchanged(
        kanban, "task", "dispatch", "-t", "two", env={**limited, "KANBAN_AGENT": "planner"},
        reason="cap_exceeded",
    )  # fmt: skip
    assert kanban.ok("task", "dispatch", "-t", "two", env=limited)["title"] == "two"


# -- numbers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "env", "field"),
    [
        (("task", "dispatch", "-t", "x", "-p", str(2**63)), {}, "priority"),
        (("task", "dispatch", "-t", "x", "-p", str(-(2**63) - 1)), {}, "priority"),
        (("task", "edit", "TASK-1", "-p", str(10**30)), {}, "priority"),
        # --minutes nan is a usage refusal, as --minutes abc is (test_errors)
        (("task", "claim-next", "-a", "w"), {"KANBAN_LEASE_MS": "1e20"}, "KANBAN_LEASE_MS"),
        (("task", "claim-next", "-a", "w"), {"KANBAN_LEASE_MS": "-5"}, "KANBAN_LEASE_MS"),
        (("task", "claim-next", "-a", "w"), {"KANBAN_LEASE_MS": str(10**30)}, "KANBAN_LEASE_MS"),
        (("task", "list"), {"KANBAN_MAX_DEPTH": "two"}, "KANBAN_MAX_DEPTH"),
        (("task", "list"), {"KANBAN_EVENT_TTL_SECONDS": "-1"}, "KANBAN_EVENT_TTL_SECONDS"),
    ],
)
def test_bad_numbers_are_invalid_input(
    kanban: Kanban, args: tuple[str, ...], env: dict[str, str], field: str
) -> None:
    with kanban.board() as board:
        board.create_task("x")
    error = refused_unchanged(kanban, *args, env=env, reason="invalid_input")
    assert field in (error.get("field"), error.get("variable")), error


def test_a_number_past_64_bits_is_refused_with_the_options_own_bound(kanban: Kanban) -> None:
    """`--limit 99999999999999999999` said "must be between -9223372036854775808 and ...", a
    negative bound for an option that starts at 1."""
    huge = str(10**20)
    error = refused_unchanged(kanban, "task", "list", "--limit", huge, reason="invalid_input")
    assert error["field"] == "limit" and "between 1 and 9223372036854775807" in error["error"]
    error = refused_unchanged(kanban, "events", "--since", huge, reason="invalid_input")
    assert "between 0 and 9223372036854775807" in error["error"]


def test_invalid_utf8_in_argv_is_invalid_input(kanban: Kanban) -> None:
    with unchanged(kanban.db):
        run = subprocess.run(
            [os.fsencode(KANBAN), b"task", b"dispatch", b"-t", b"caf\xe9"],
            env=kanban.env(), capture_output=True, check=False,
        )  # fmt: skip
    assert run.returncode == 2 and run.stdout == b""
    error = json.loads(run.stderr)
    assert (error["reason"], error["argument"]) == ("invalid_input", 4)


# -- what the README promises -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "suggestion"),
    [
        (("task", "lst"), "list"),
        (("tsk", "list"), "task"),
        (("task", "exec", "finsh", "EXEC-1"), "finish"),
        (("task", "list", "--stauts", "todo"), "--status"),
        (("task", "list", "--status", "in-progress"), "in_progress"),
        (("task", "create", "-t", "x"), "dispatch"),  # another tool's word for the verb
        (("task", "Show", "TASK-1"), "view"),
        (("task", "rm", "TASK-1"), "drop"),
        (("task", "deps", "rm", "TASK-1"), "remove"),  # it once suggested nothing
        (("consumers", "rm", "w"), "forget"),
        (("task", "exec", "done", "EXEC-1"), None),  # a synonym only where its command is
        (("task", "claim-next"), None),  # a missing --agent
        (("task",), None),  # a group without its command
    ],
)
def test_usage_errors_are_one_json_line_with_a_suggestion(
    kanban: Kanban, args: tuple[str, ...], suggestion: str | None
) -> None:
    error = refused_unchanged(kanban, *args, reason="usage")
    assert error.get("suggestion") == suggestion
    if suggestion is not None:
        assert f"Did you mean {suggestion!r}?" in error["error"]
    assert error["help"] == f"{error['command']} -h"


def test_help_is_still_clicks_help(kanban: Kanban) -> None:
    helped = kanban.run("task", "list", "--help")
    assert helped.code == 0 and helped.out.startswith("Usage: kanban task list")


def test_verification_is_a_json_object_everywhere(kanban: Kanban) -> None:
    with kanban.board() as board:
        task = board.create_task("judged")
        board.claim(task.id, "dana")
        board.complete(task.id, "dana")
        board.approve(task.id, "rita")
    assert kanban.ok("task", "get", task.id)["verification"]["status"] == "pass"
    assert kanban.ok("task", "list")[0]["verification"]["status"] == "pass"
    assert kanban.ok("task", "view", task.id)["task"]["verification"]["status"] == "pass"


def test_plan_lint_and_apply_report_the_same_problems(kanban: Kanban, tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "- {key: a, title: A, depends_on: [TASK-404]}\n"
        "- {key: b, title: B, parent: ghost, priority: high}\n"
    )
    lint = kanban.run("plan", "lint", str(plan))
    assert lint.code == 2
    applied = refused_unchanged(kanban, "plan", "apply", str(plan), reason="invalid_input")
    assert lint.error["reason"] == applied["reason"] == "invalid_input"
    assert lint.error["problems"] == applied["problems"] == lint.doc["problems"]
    kinds = sorted(problem["kind"] for problem in applied["problems"])
    assert kinds == ["bad_field", "unknown_key", "unknown_key"]
    # what the board refuses, lint finds too (a 64-bit priority and names holding an escape or a
    # bidi override passed lint, then apply refused them)
    plan.write_text(
        "- {key: d, title: d, priority: 99999999999999999999}\n"
        '- {key: e, title: e, role: "r\\e"}\n'
        '- {key: f, title: f, team: "t\\u202e"}\n'
    )
    lint = kanban.run("plan", "lint", str(plan))
    assert lint.code == 2
    fields = sorted(problem["field"] for problem in lint.doc["problems"])
    assert fields == ["priority", "role", "teamId"], lint.doc
    applied = refused_unchanged(kanban, "plan", "apply", str(plan), reason="invalid_input")
    assert applied["problems"] == lint.doc["problems"]


def test_times_in_sentences_are_readable(kanban: Kanban) -> None:
    task_id = str(claimed(kanban, "dana")["id"])
    env = {"TZ": "UTC"}
    explained = kanban.ok("task", "why", task_id, env=env)
    (sentence,) = explained["reasons"]
    assert sentence == "held by dana under a lease until 08:15:00, in 15 min", sentence
    assert explained["leaseUntil"] == START_MS + LEASE_MS  # JSON keeps milliseconds
    idle = kanban.run("task", "claim-next", "-a", "erin", "--explain", env=env)
    assert idle.code == 3
    assert "the next lease runs out at 08:15:00, in 15 min" in idle.doc["explain"]["reasons"]
    assert not re.search(r"\d{13}", " ".join(idle.doc["explain"]["reasons"]))


def test_the_docs_show_how_to_create_a_board_and_a_task() -> None:
    from tests.doc_examples import REPO

    agents = (REPO / "docs" / "agents.md").read_text()
    assert "kanban task dispatch" in agents and "kanban db init" in agents
    for promise in ("self_review", "not_assignee", "no_board", "not_a_board", '"usage"'):
        assert promise in agents, promise
    readme = (REPO / "README.md").read_text()
    assert "kanban task dispatch" in readme and "kanban db init" in readme
    assert "KANBAN_VERIFY_FROM=operator" in (REPO / "docs" / "worktrees.md").read_text()
