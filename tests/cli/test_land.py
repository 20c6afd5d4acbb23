"""`kanban task land` and `kanban task workspace sync` through the real console script, on real
repositories and both backends: the landing's JSON, the landed fields in every task document, and
refusals as one stderr line with exit 2 that change nothing (the board's bytes or rows, every
file's hash, `git status`, every ref)."""

from pathlib import Path
from typing import Any

import pytest

from boardlib.store.copy import board_digest
from tests.cli.conftest import unchanged
from tests.worktrees.conftest import GIT_ENV, checkout_state, git

ANSWER = "def answer():\n    return 43\n"


def test_land_prints_the_landing_and_the_task_shows_where_it_landed(land_setup) -> None:  # type: ignore[no-untyped-def]
    kanban, land, env = land_setup
    task_id, _ = land.task_with({"app.py": ANSWER})
    preview = kanban.ok("task", "land", task_id, "--preview", env=env)
    assert preview["state"] == "clean" and preview["into"] == "main"
    dry = kanban.ok("task", "land", task_id, "--dry-run", "--agent", "bob", env=env)
    assert dry["dryRun"] is True and dry["landed"] is False and dry["files"] == ["app.py"]
    done = kanban.ok("task", "land", task_id, "--agent", "bob", env=env)
    assert done["landed"] is True and done["commit"] == land.main()
    assert done["verifiedAhead"] is False
    assert done["task"]["landedCommit"] == land.main() and done["archived"] is True
    shown = kanban.ok("task", "get", task_id)
    assert (shown["landedCommit"], shown["landedInto"], shown["landedBy"]) == (
        land.main(), "main", "bob",
    )  # fmt: skip
    assert shown["landedStrategy"] == "squash" and shown["landedAt"] > 0


def digests(db: Path) -> dict[str, Any]:
    """Every table's rows and hash, through a board opened for the look (both backends)."""
    from boardlib import Board

    with Board(db, read_only=True) as board:
        return board.store.read(board_digest)


def test_refusals_are_one_stderr_line_and_change_nothing(land_setup) -> None:  # type: ignore[no-untyped-def]
    kanban, land, env = land_setup
    task_id, _ = land.task_with({"app.py": ANSWER}, finish="review")
    before = checkout_state(land.repo)
    with unchanged(kanban.db):
        error = kanban.refused("task", "land", task_id, "--agent", "alice", env=env,
                               reason="self_review")  # fmt: skip
        assert error["id"] == task_id and error["holders"] == ["alice"]
        error = kanban.refused("task", "land", task_id, "--agent", "bob", "--into", "nope",
                               env=env, reason="invalid_input")  # fmt: skip
        error = kanban.refused("task", "land", task_id, "--reason", "hotfix", env=env,
                               reason="invalid_input")  # fmt: skip
        assert error["field"] == "unverifiedReason"
    # A refusal a person must resolve is kept for the inbox, and nothing else is written.
    (land.repo / "README.md").write_text("an uncommitted edit\n")
    dirty = checkout_state(land.repo)
    tables = digests(kanban.db)
    error = kanban.refused("task", "land", task_id, "--agent", "bob", env=env,
                           reason="base_checked_out_dirty")  # fmt: skip
    assert error["files"] == ["README.md"] and error["path"] == str(land.repo)
    assert checkout_state(land.repo) == dirty
    after = digests(kanban.db)

    def others(digests):  # type: ignore[no-untyped-def]
        return {k: (v.rows, v.sha256) for k, v in digests.items() if k != "land_refusals"}

    assert others(after) == others(tables)
    assert (tables["land_refusals"].rows, after["land_refusals"].rows) == (0, 1)
    [item] = kanban.ok("inbox")["items"]
    assert (item["kind"], item["taskId"], item["action"]) == ("landing_refused", task_id, "land")
    git(land.repo, "checkout", "README.md")
    assert checkout_state(land.repo) == before
    result = kanban.run("task", "land", task_id, "--strategy", "octopus", env=env)
    assert result.code == 2 and result.error["reason"] == "usage"


def test_no_verify_command_is_refused_with_the_override_a_cli_user_can_run(land_setup) -> None:  # type: ignore[no-untyped-def]
    """The refusal names the CLI's flags, not only the HTTP body's field (found running
    docs/landing.md: it said `allowUnverified`, which no CLI option is), and the command it
    names, run as written by an operator, lands the work."""
    kanban, land, env = land_setup
    task_id, _ = land.task_with({"app.py": ANSWER}, verify=None, finish="review")
    error = kanban.refused("task", "land", task_id, "--agent", "bob", env=env,
                           reason="verification_required")  # fmt: skip
    told = error["error"].split("`")[1]
    assert told == f"kanban task land {task_id} --allow-unverified --reason WHY"
    error = kanban.refused("task", "land", task_id, "--reason", "hotfix", env=env,
                           reason="invalid_input")  # fmt: skip
    assert "--allow-unverified" in error["error"] and "--reason" in error["error"]
    error = kanban.refused("task", "land", task_id, "--agent", "bob", "--allow-unverified",
                           env=env, reason="operator_only")  # fmt: skip
    assert "--allow-unverified" in error["error"]
    done = kanban.ok(*told.split()[1:-1], "hotfix", env=env)
    assert done["landed"] is True and done["unverified"] is True


def test_workspace_sync_reports_the_conflict_and_leaves_it_to_resolve(land_setup) -> None:  # type: ignore[no-untyped-def]
    kanban, land, env = land_setup
    task_id, path = land.task_with({"app.py": ANSWER}, finish="none")
    other, _ = land.task_with({"new.txt": "n\n"}, finish="none")
    land.commit_on_main("app.py", "def answer():\n    return 44\n")
    error = kanban.refused("task", "workspace", "sync", task_id, "--agent", "alice", env=env,
                           reason="merge_conflict")  # fmt: skip
    assert error["files"] == ["app.py"] and error["path"] == str(path)
    assert "<<<<<<<" in (path / "app.py").read_text()
    assert git(land.repo, "rev-parse", "main") == land.main()  # the base itself untouched
    refused = kanban.refused("task", "workspace", "sync", task_id, "--agent", "alice", env=env,
                             reason="merge_conflict")  # fmt: skip
    assert refused["files"] == ["app.py"] and refused["why"] == "unresolved"  # still unresolved
    (path / "app.py").write_text(ANSWER)  # resolved, not yet completed: that comes first
    refused = kanban.refused("task", "workspace", "sync", task_id, "--agent", "alice", env=env,
                             reason="invalid_state")  # fmt: skip
    assert refused["files"] == ["app.py"]
    synced = kanban.ok("task", "workspace", "sync", other, "--agent", "alice", env=env)
    assert synced["action"] == "sync" and synced["upToDate"] is False and synced["commits"] == 1


def test_the_plain_complete_of_work_in_a_worktree_is_refused_for_the_gate(land_setup) -> None:  # type: ignore[no-untyped-def]
    """`kanban task complete` put a worktree's work in review with no gate run (one holding git's
    conflict markers too), where a reviewer took it for verified work: it is refused
    `gate_required`, changing nothing, and `workspace complete` runs the gate."""
    kanban, land, env = land_setup
    task_id, path = land.task_with({"app.py": ANSWER}, finish="none")
    kanban.now = land.board.get_task(task_id).updated_at  # the CLI's clock within the lease
    land.commit_on_main("app.py", "def answer():\n    return 44\n")
    kanban.refused("task", "workspace", "sync", task_id, "--agent", "alice", env=env,
                   reason="merge_conflict")  # fmt: skip
    for fix in (None, ANSWER):  # with git's markers, then resolved
        if fix is not None:
            (path / "app.py").write_text(fix)
        before = checkout_state(path)
        with unchanged(kanban.db):
            error = kanban.refused("task", "complete", task_id, "--agent", "alice", env=env,
                                   reason="gate_required")  # fmt: skip
        assert error["use"] == "workspace complete" and error["worktreePath"] == str(path)
        assert checkout_state(path) == before
    assert kanban.ok("task", "get", task_id)["status"] == "in_progress"
    done = kanban.ok("task", "workspace", "complete", task_id, "--agent", "alice", env=env)
    assert done["verified"] == "pass" and done["taskStatus"] == "done"


@pytest.mark.slow
def test_the_docs_landing_example_runs_in_the_order_shown(tmp_path: Path) -> None:
    """docs/landing.md's session as it is, on a task done through the gate in ~/src/shop."""
    import json
    import os
    import subprocess

    from boardlib import Board
    from boardlib.worktrees import Worktrees
    from tests.cli.conftest import BIN, clean_env
    from tests.doc_examples import example
    from tests.worktrees.conftest import make_repo, set_verify

    home = tmp_path / "home"
    repo = make_repo(home / "src" / "shop")
    root = tmp_path / "state" / "worktrees"
    env = {
        **clean_env(),
        "HOME": str(home),
        "KANBAN_DB": str(tmp_path / "board.db"),
        "KANBAN_WORKTREES": str(root),
        "PATH": f"{BIN}:{os.environ['PATH']}",
        **{key: GIT_ENV[key] for key in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")},
    }
    with Board(tmp_path / "board.db") as board:
        for index in range(6):
            board.create_task(f"task {index + 1}")
        task = board.create_task("Count the cart")  # TASK-7
        board.claim(task.id, "worker-1")
        trees = Worktrees(board, root=root)
        path = Path(trees.provision(task.id, repo).worktree.worktree_path)
        set_verify(path, "python -m compileall -q .")
        (path / "cart.py").write_text("def count(items):\n    return len(items)\n")
        assert trees.complete(task.id, "worker-1").task_status == "done"
    script = "set -euo pipefail\n" + example("docs/landing.md#land-session")
    done = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert json.loads(lines[0])["state"] == "clean"
    assert json.loads(lines[1])["dryRun"] is True
    assert json.loads(lines[2])["landed"] is True
    assert lines[3] == "Count the cart (TASK-7)"
    assert (repo / "cart.py").is_file()


def test_a_landing_table_says_what_landed_not_the_tasks_every_field(land_setup) -> None:  # type: ignore[no-untyped-def]
    """`task land --format table` drew the task's 45 fields first, its verdict nested in them
    (`dropped: 0`, `subtreeCostMicros: $0.00`), and at 80 columns the outcome scrolled off under
    them. The task is one line, its title inert; the landing's fields follow; the JSON keeps the
    whole task."""
    kanban, land, env = land_setup
    title = "Land \x1b]52;c;aGk=\x07 it [bold]x[/] \u202eevil"
    task_id, _ = land.task_with({"app.py": ANSWER}, title=title)
    table = kanban.run("--format", "table", "task", "land", task_id, "--agent", "bob",
                       env={**env, "COLUMNS": "80"})  # fmt: skip
    assert table.code == 0, str(table)
    lines = [line.split() for line in table.out.splitlines() if line.strip()]
    assert " ".join(lines[1][3:]) == "Land ␛]52;c;aGk=␇ it [bold]x[/] �evil", table.out
    assert lines[0] == ["landed", "on", "main", "as", land.main()[:7]], table.out
    assert lines[1][:3] == ["task", task_id, "done"], table.out
    assert ["commit", land.main()] in lines and ["landed", "True"] not in lines, table.out
    for field in ("claimEpoch", "dropped", "subtreeCostMicros", "\x1b", "\u202e"):
        assert field not in table.out, table.out
    assert len(lines) < 30, table.out  # about a screen: it was 72 lines
    whole = kanban.ok("task", "get", task_id)
    assert whole["landedCommit"] == land.main() and whole["title"] == title


def test_a_dry_runs_table_says_first_what_it_found(land_setup) -> None:  # type: ignore[no-untyped-def]
    """`task land --dry-run --format table` began `landed False`, `dryRun True`: read as a
    failure. It says first where it would land (or that the base holds the change already),
    then the landing's fields without those flags; the JSON keeps them."""
    kanban, land, env = land_setup
    task_id, _ = land.task_with({"app.py": ANSWER})
    twin, _ = land.task_with({"same.txt": "same\n"})
    tip = land.main()
    with unchanged(kanban.db):
        table = kanban.run("--format", "table", "task", "land", task_id, "--dry-run", "--agent",
                           "bob", env={**env, "COLUMNS": "80"})  # fmt: skip
    assert table.code == 0 and table.err == "", str(table)
    lines = [line.split() for line in table.out.splitlines() if line.strip()]
    assert " ".join(lines[0]) == (
        f"would land on main@{tip[:7]} (squash, 1 file, verified); nothing was changed"
    ), table.out
    assert not any(line[0] in ("landed", "dryRun", "alreadyOn") for line in lines), table.out
    assert ["baseBefore", tip] in lines and "True" not in table.out, table.out
    assert ["archived", "no"] not in lines, table.out  # a flag unset is left out
    on_main = land.commit_on_main("same.txt", "same\n")
    with unchanged(kanban.db):
        table = kanban.run("--format", "table", "task", "land", twin, "--dry-run", "--agent",
                           "bob", env={**env, "COLUMNS": "80"})  # fmt: skip
    assert table.code == 0, str(table)
    assert table.out.strip().splitlines()[0] == (
        f"would be recorded landed: main@{on_main[:7]} has its change already; nothing moves"
    ), table.out


def test_work_already_on_main_and_work_that_wont_land_leave_the_inbox(land_setup) -> None:  # type: ignore[no-untyped-def]
    """Found as the operator: both stayed in `kanban inbox` for ever, every landing refused."""
    kanban, land, env = land_setup
    twin, _ = land.task_with({"same.txt": "same\n"})
    failing, _ = land.task_with({"app.py": ANSWER}, verify="test ! -e BROKEN")
    tip = land.commit_on_main("same.txt", "same\n")
    with unchanged(kanban.db):
        dry = kanban.ok("task", "land", twin, "--dry-run", "--agent", "bob", env=env)
    assert (dry["alreadyOn"], dry["landed"], dry["commit"]) == (True, False, tip)
    done = kanban.ok("task", "land", twin, "--agent", "bob", env=env)
    assert (done["alreadyOn"], done["task"]["landedCommit"], land.main()) == (True, tip, tip)
    land.commit_on_main("BROKEN", "broken\n")
    kanban.refused("task", "land", failing, "--agent", "bob", env=env,
                   reason="verification_failed")  # fmt: skip
    assert [item["taskId"] for item in kanban.ok("inbox")["items"]] == [failing]
    before = checkout_state(land.repo)
    with unchanged(kanban.db):
        kanban.refused("task", "land", failing, "--abandon", "--reason", "no", "--agent", "bob",
                       env=env, reason="operator_only")  # fmt: skip
        kanban.refused("task", "land", failing, "--abandon", "--agent", "operator", env=env,
                       reason="invalid_input")  # fmt: skip
        kanban.refused("task", "land", failing, "--abandon", "--dry-run", "--reason", "no",
                       "--agent", "operator", env=env, reason="invalid_input")  # fmt: skip
    assert checkout_state(land.repo) == before
    decided = kanban.ok("task", "land", failing, "--abandon", "--reason", "superseded",
                        "--agent", "operator", env=env)  # fmt: skip
    assert decided["archived"] is True and decided["task"]["status"] == "done"
    assert git(land.repo, "rev-parse", f"refs/heads/{decided['branch']}") == decided["commit"]
    assert kanban.ok("inbox")["items"] == []
    assert checkout_state(land.repo)[:2] == before[:2]  # the user's files and status as they were
    # `task view` says it won't land, by whom and why: the task row alone did not
    shown = kanban.ok("task", "view", failing)["wontLand"]
    assert (shown["by"], shown["reason"]) == ("operator", "superseded")
    assert decided["branch"] in shown["kept"]
    table = kanban.run("--format", "table", "task", "view", failing, env=env)
    assert "won't land" in table.out and "superseded" in table.out, table.out
    assert kanban.ok("task", "view", twin)["wontLand"] is None


HOSTILE_TITLE = "Change \x1b]0;pwned\x07 the \x1b[31manswer\x1b[0m \u202eevil"


def test_a_refused_dry_run_at_a_terminal_says_why_in_words(land_setup) -> None:  # type: ignore[no-untyped-def]
    """A refused `task land --dry-run` printed only its JSON line on stderr: at a terminal a
    person got no line to read. It says why in words on stdout, inert; stderr is still the one
    JSON line (and the exit code 2), and a pipe gets no words."""
    kanban, land, env = land_setup
    conflicting, _ = land.task_with({"app.py": ANSWER}, title=HOSTILE_TITLE)
    land.commit_on_main("app.py", "def answer():\n    return 44\n")
    unfinished, _ = land.task_with({"new.txt": "n\n"}, title=HOSTILE_TITLE, finish="none")
    for task_id, reason in ((conflicting, "merge_conflict"), (unfinished, "not_landable")):
        args = ("task", "land", task_id, "--dry-run", "--agent", "bob")
        shown = kanban.on_terminal(*args, env=env)
        assert shown.code == 2, str(shown)
        assert shown.error["reason"] == reason, str(shown)  # one JSON line on stderr
        [said] = shown.out.splitlines()
        assert said.startswith(f"{task_id} would not land: "), said
        assert said.count(task_id) == 1, said  # not "would not land: cannot land TASK-2: ..."
        assert said.endswith(f"({reason}); nothing was changed"), said
        assert not any(c in shown.out for c in "\x1b\x07\u202e"), repr(shown.out)
        piped = kanban.refused(*args, env=env, reason=reason)  # no words on a pipe
        assert piped == shown.error
