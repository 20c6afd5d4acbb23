"""The operator and reading verbs: what each prints, and that it is what the board stored."""

import os
import re
from pathlib import Path

import pytest
from rich.cells import cell_len

from tests.cli.conftest import Kanban, unchanged


@pytest.fixture
def kanban(board_path: Path) -> Kanban:
    return Kanban(board_path)


def test_dispatch_takes_every_field_of_the_issue(kanban: Kanban) -> None:
    with kanban.board() as board:
        a = board.create_task("a").id
        b = board.create_task("b").id
        c = board.create_task("c").id
        parent = board.create_task("parent").id
    task = kanban.ok(
        "task", "dispatch", "--title", "Write tests", "--description", "all of them",
        "--role", "worker", "--priority", "7", "--depends-on", f"{a},{b}", "--depends-on", c,
        "--parent", parent, "--team", "core", "--status", "backlog", "--kind", "research",
    )  # fmt: skip
    assert task["title"] == "Write tests"
    assert task["description"] == "all of them"
    assert (task["role"], task["priority"], task["teamId"]) == ("worker", 7, "core")
    assert (task["status"], task["kind"], task["parentTaskId"]) == ("backlog", "research", parent)
    assert task["unmetDeps"] == 3
    assert kanban.row(task["id"]) == task
    deps = kanban.ok("task", "deps", "list", task["id"])
    assert [linked["id"] for linked in deps["dependencies"]] == sorted([a, b, c])


def test_dispatch_takes_the_title_as_an_argument_or_an_option_once(kanban: Kanban) -> None:
    """`kanban task dispatch "Fix the parser"`, as people and agents first type it."""
    assert kanban.ok("task", "dispatch", "Fix the parser")["title"] == "Fix the parser"
    assert kanban.ok("task", "dispatch", "--", "-p is a flag")["title"] == "-p is a flag"
    assert kanban.ok("task", "dispatch", "-t", "by option")["title"] == "by option"
    with kanban.board() as board:
        before = [task.title for task in board.list_tasks()]
    for args, said in (
        ((), "Missing the title"),
        (("one", "-t", "two"), "given twice"),
        (("two", "words"), "unexpected extra argument"),
    ):
        error = kanban.refused("task", "dispatch", *args, reason="usage")
        assert said in error["error"], error
    with kanban.board() as board:
        assert [task.title for task in board.list_tasks()] == before


def test_list_filters_and_ready_order(kanban: Kanban) -> None:
    with kanban.board() as board:
        low = board.create_task("low", role="worker", priority=1)
        high = board.create_task("high", role="worker", priority=9)
        other = board.create_task("other role", role="reviewer", team_id="t1")
        held = board.create_task("held")
        board.claim(held.id, "alice")
        gone = board.create_task("dropped")
        board.drop(gone.id)
        waiting = board.create_task("waiting", depends_on=[held.id], priority=99)

    def ids(*args: str) -> list[str]:
        return [task["id"] for task in kanban.ok("task", "list", *args)]

    assert ids("--ready", "--role", "worker") == [high.id, low.id]
    assert set(ids("--status", "in_progress")) == {held.id}
    assert ids("--assignee", "alice") == [held.id]
    assert ids("--team", "t1") == [other.id]
    assert gone.id not in ids()
    assert gone.id in ids("--dropped")
    page = kanban.ok("task", "list", "--limit", "2")  # a page: creation order, newest first
    assert [task["id"] for task in page["tasks"]] == [waiting.id, held.id]
    rest = kanban.ok("task", "list", "--cursor", page["nextCursor"])
    assert [task["id"] for task in rest["tasks"]] == [other.id, high.id, low.id]
    assert rest["nextCursor"] is None
    assert [t["id"] for t in kanban.ok("task", "search", "other")] == [other.id]
    assert kanban.ok("task", "search", "nothing like it") == []


def test_deps_add_links_every_repeated_on_or_none(kanban: Kanban) -> None:
    """`--on A --on B` links both (it linked only B, exit 0), in one transaction: a refused link
    (here a cycle through the second) writes none of them."""
    with kanban.board() as board:
        a, b, c = (board.create_task(name) for name in "abc")
        waits = board.create_task("waits")
        board.link_dependency(c.id, waits.id)
    linked = kanban.ok("task", "deps", "add", waits.id, "--on", a.id, "--on", b.id)
    assert linked["unmetDeps"] == 2
    listed = kanban.ok("task", "deps", "list", waits.id)
    assert [dep["id"] for dep in listed["dependencies"]] == [a.id, b.id]
    before = kanban.snapshot()
    cycle = kanban.refused(
        "task", "deps", "add", waits.id, "--on", b.id, "--on", c.id, reason="dependency_cycle"
    )
    assert cycle["cycle"] == [waits.id, c.id, waits.id]
    assert kanban.snapshot() == before


def test_view_why_and_dependency_links(kanban: Kanban) -> None:
    with kanban.board() as board:
        blocker = board.create_task("blocker")
        board.claim(blocker.id, "bob")
        task = board.create_task("task")
    before = kanban.snapshot()
    listed = kanban.refused("task", "deps", "add", task.id, "--on", f"{blocker.id},TASK-9",
                            reason="not_found")  # fmt: skip
    assert listed["id"] == "TASK-9" and kanban.snapshot() == before  # all or nothing
    linked = kanban.ok("task", "deps", "add", task.id, "--on", blocker.id)
    assert linked["unmetDeps"] == 1
    kanban.ok("task", "comment", task.id, "--body", "waiting on bob", "--agent", "carol")
    kanban.ok("task", "comment", task.id, "--body", "from a person")

    why = kanban.ok("task", "why", task.id)
    assert why["claimable"] is False
    assert why["unmetDependencies"][0]["id"] == blocker.id
    assert any("held by bob" in reason for reason in why["reasons"])

    view = kanban.ok("task", "view", task.id)
    assert view["task"]["id"] == task.id
    assert [d["id"] for d in view["dependencies"]] == [blocker.id]
    assert [(c["authorType"], c["body"]) for c in view["comments"]] == [
        ("agent", "waiting on bob"), ("user", "from a person"),
    ]  # fmt: skip
    assert kanban.ok("task", "view", blocker.id)["dependents"][0]["id"] == task.id

    unlinked = kanban.ok("task", "deps", "remove", task.id, "--on", blocker.id)
    assert unlinked["unmetDeps"] == 0
    assert kanban.ok("task", "why", task.id)["claimable"] is True


def test_an_operators_comment_is_the_operators(kanban: Kanban) -> None:
    """A comment without --agent was logged with no actor ("unnamed actor commented"), and `--agent
    operator:alice` was written as an agent."""
    with kanban.board() as board:
        task = board.create_task("task")
    plain = kanban.ok("task", "comment", task.id, "--body", "operator note")
    named = kanban.ok("task", "comment", task.id, "--body", "x", "--agent", "operator:alice")
    assert [(c["authorType"], c["authorAgentId"]) for c in (plain, named)] == [
        ("user", None), ("user", "operator:alice"),
    ]  # fmt: skip
    events = kanban.ok("events", "--task", task.id)
    assert [e["actor"] for e in events if e["kind"] == "comment_added"] == [
        "operator", "operator:alice",
    ]  # fmt: skip
    told = kanban.run("events", "--task", task.id, "--format", "table").out
    assert "unnamed actor" not in told
    assert "operator commented" in " ".join(told.split())


def test_execution_ledger(kanban: Kanban) -> None:
    with kanban.board() as board:
        task = board.create_task("run me")
    claimed = kanban.ok("task", "claim", task.id, "--agent", "alice")
    run = kanban.ok(
        "task", "exec", "start", task.id, "--executor", "claude-code", "--agent", "alice",
        "--epoch", str(claimed["claimEpoch"]), "--reason", "first try",
    )  # fmt: skip
    assert (run["status"], run["agentId"], run["runReason"]) == ("running", "alice", "first try")
    finished = kanban.ok(
        "task", "exec", "finish", run["id"], "--status", "succeeded", "--cost", "0.25",
        "--agent", "alice", "--input-tokens", "1200", "--output-tokens", "300",
        "--summary", "green",
    )  # fmt: skip
    assert (finished["status"], finished["costUsd"], finished["inputTokens"]) == (
        "succeeded", 0.25, 1200,
    )  # fmt: skip
    assert kanban.row(task.id)["costUsd"] == 0.25
    assert [e["id"] for e in kanban.ok("task", "exec", "list", task.id)] == [run["id"]]
    assert kanban.ok("task", "exec", "show", run["id"]) == finished
    kanban.refused(
        "task", "exec", "finish", run["id"], "--status", "failed", "--agent", "alice",
        reason="not_found",
    )  # fmt: skip


def test_edit_move_cancel_drop_restore(kanban: Kanban) -> None:
    with kanban.board() as board:
        task = board.create_task("draft", status="backlog")
    edited = kanban.ok("task", "edit", task.id, "--title", "final", "--priority", "3")
    assert (edited["title"], edited["priority"]) == ("final", 3)
    assert kanban.ok("task", "move", task.id, "--to", "todo")["status"] == "todo"
    dropped = kanban.ok("task", "drop", task.id)
    assert dropped["dropped"] == 1
    assert kanban.run("task", "claim-next", "--agent", "a").code == 3
    assert kanban.ok("task", "restore", task.id)["dropped"] == 0
    cancelled = kanban.ok("task", "cancel", task.id, "--reason", "not needed")
    assert cancelled["status"] == "cancelled"


def test_a_whole_number_is_taken_however_it_is_written(kanban: Kanban) -> None:
    """`--priority 1e3` was refused (click's int) while `--tokens 1e3` and HTTP's `"priority": 1e3`
    took it. Every whole-number option parses alike; a fraction is still a usage refusal and writes
    nothing."""
    task = kanban.ok("task", "dispatch", "--title", "urgent", "--priority", "1e3")
    assert task["priority"] == 1000
    assert kanban.ok("task", "edit", task["id"], "--priority", "-2.0")["priority"] == -2
    claimed = kanban.ok("task", "claim", task["id"], "--agent", "ada")
    epoch = f"{claimed['claimEpoch']:.0e}"  # 1 written 1e+00
    kanban.ok("task", "heartbeat", task["id"], "--agent", "ada", "--epoch", epoch)
    with unchanged(kanban.db):
        usage = kanban.run("task", "edit", task["id"], "--priority", "1.5")
    assert usage.code == 2 and "'1.5' is not a whole number" in usage.err, str(usage)


def test_cancel_dependents_cancels_only_pending_work(kanban: Kanban) -> None:
    with kanban.board() as board:
        root = board.create_task("root")
        left = board.create_task("left", depends_on=[root.id])
        right = board.create_task("right", depends_on=[root.id])
        bottom = board.create_task("bottom", depends_on=[left.id, right.id])
        board.link_dependency(right.id, root.id)
    with kanban.board() as board:
        board.update_task(right.id, status="blocked", reason="manual")
    cancelled = kanban.ok("task", "cancel-dependents", root.id)
    assert {task["id"] for task in cancelled} == {left.id, bottom.id}
    assert kanban.row(right.id)["status"] == "blocked"


def test_table_format_is_for_people(kanban: Kanban) -> None:
    with kanban.board() as board:
        task = board.create_task("[bold]not markup[/bold]", role="worker")
    listing = kanban.run("task", "list", "--format", "table", env={"COLUMNS": "200"})
    assert listing.code == 0, str(listing)
    assert task.id in listing.out and "[bold]not markup[/bold]" in listing.out
    assert not listing.out.lstrip().startswith("[")
    idle = kanban.run("--format", "table", "task", "claim-next", "-a", "x", "--role", "other")
    assert idle.code == 3
    assert "nothing claimable" in idle.out
    view = kanban.run("task", "view", task.id, "--format", "table")
    assert view.code == 0 and "status" in view.out and "todo" in view.out


def test_a_table_draws_a_title_on_its_own_row_whatever_it_holds(kanban: Kanban) -> None:
    """A title holding U+2028 or a newline drew a second line under its row that read as another
    task ("TASK-98 done 9 y"); statusSince was raw milliseconds; an empty deps section printed
    nothing at all."""
    with kanban.board() as board:
        forged = board.create_task("x\u2028  TASK-98  done  9  y")
        other = board.create_task("a\nb", description="line one\nline two")
    listing = kanban.run("task", "list", "--format", "table", env={"COLUMNS": "200"})
    rows = [line for line in listing.out.splitlines() if "TASK-" in line]
    assert len(rows) == 2, listing.out
    assert "x␤  TASK-98  done  9  y" in listing.out and "a␤b" in listing.out
    view = kanban.run("task", "view", other.id, "--format", "table", env={"COLUMNS": "200"})
    described = [line for line in view.out.splitlines() if "line one" in line]
    assert described and "line two" not in described[0]  # a description keeps its lines
    since = [line for line in view.out.splitlines() if "statusSince" in line]
    assert since and ":" in since[0], view.out  # a time, not epoch milliseconds
    deps = kanban.run("task", "deps", "list", forged.id, "--format", "table")
    assert "no dependencies" in deps.out and "no dependents" in deps.out, deps.out


def test_a_task_table_marks_the_dropped_tasks_it_lists_with_the_rest(kanban: Kanban) -> None:
    """`task list --dropped --format table` listed dropped tasks
    among the others and nothing told them apart (the JSON says `dropped`). A dropped task says
    `(dropped)` after its status, where no agent's words are: a title saying `[dropped]` is not
    taken for the mark. `search --dropped` draws the same table, and fits 80 columns."""
    with kanban.board() as board:
        gone = board.create_task("port the lexer")
        board.drop(gone.id)
        kept = board.create_task("(dropped) port the parser")
    for command in (("task", "list", "--dropped"), ("task", "search", "port", "--dropped")):
        table = kanban.run(*command, "--format", "table", env={"COLUMNS": "80"})
        assert table.code == 0, str(table)
        assert all(len(line) <= 80 for line in table.out.splitlines()), table.out
        rows = {line.split()[0]: line.split()[1:] for line in table.out.splitlines()
                if line.strip().startswith("TASK-")}  # fmt: skip
        assert rows[gone.id][:2] == ["todo", "(dropped)"], table.out
        assert rows[kept.id][:2] == ["todo", "0"], table.out
    listing = kanban.run("task", "list", "--format", "table", env={"COLUMNS": "80"})
    assert "(dropped)" not in listing.out.replace("(dropped) port", ""), listing.out


def test_a_record_table_draws_nested_values_as_lines_not_json(kanban: Kanban) -> None:
    """`task view --format table` drew the holders as `["ada"]` and the verdict as one long JSON
    blob folded over three lines, its times raw milliseconds. Nested values are `key: value` lines,
    lists joined, times readable; the JSON is unchanged."""
    with kanban.board() as board:
        task = board.create_task("judged")
        board.claim(task.id, "ada")
        board.complete(task.id, "ada")
        board.approve(task.id, "bob")
    table = kanban.run("task", "view", task.id, "--format", "table", env={"COLUMNS": "100"})
    assert table.code == 0, str(table)
    assert '{"' not in table.out and '["' not in table.out, table.out
    lines = [line.strip() for line in table.out.splitlines()]
    cells = {line.split(maxsplit=1)[0]: line.split(maxsplit=1)[-1] for line in lines if line}
    assert cells["holders"] == "ada" and cells["verification"] == "status: pass", table.out
    for line in ("reviews:", "- reviewer: bob", "decision: approve"):
        assert line in lines, table.out
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", cells["at:"]), table.out
    verdict = kanban.ok("task", "view", task.id)["task"]["verification"]
    assert verdict["status"] == "pass" and verdict["reviews"][0]["reviewer"] == "bob"
    assert isinstance(verdict["reviews"][0]["at"], int)  # --format json keeps the values


def test_a_list_table_fits_80_columns_with_whole_words_and_times(kanban: Kanban) -> None:
    """`consumers list --format table` at 80 columns broke its headers mid-word (`lastS/eq`,
    `faili/ngSeq`), each time over three lines and a long name over three more, in columns that were
    empty in every row."""
    from boardlib.watch import Consumers

    with kanban.board() as board:
        board.create_task("an event to read")
        consumers = Consumers(board)
        for name in ("webhook-forwarder", "w2"):
            consumers.open(name, since=0)
            consumers.delivered(name, 1)
            consumers.release(name)
    table = kanban.run("consumers", "list", "--format", "table", env={"COLUMNS": "80"})
    assert table.code == 0, str(table)
    lines = table.out.splitlines()
    assert all(len(line) <= 80 for line in lines), table.out
    header = next(line for line in lines if "name" in line)
    assert header.split() == ["name", "last", "seq", "created", "at", "updated", "at", "failures"]
    rows = [line for line in lines if line.split()[:1] in (["w2"], ["webhook-forwarder"])]
    assert len(rows) == 2 and all(re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", r) for r in rows), lines


def test_a_consumer_table_keeps_its_hold_and_owner_where_they_fit(kanban: Kanban) -> None:
    """A held consumer with an owner made `consumers list --format table` one block per row at 120
    columns, though its hold and owner fit beside its name; the least needed columns (the error, the
    times) go first, and a narrow terminal gets blocks."""
    from boardlib.watch import Consumers

    with kanban.board() as board:
        board.create_task("an event to deliver")
        consumers = Consumers(board)
        consumers.open("webhook-forwarder", since=0)
        for _ in range(board.config.watch_hold_after):
            consumers.failed("webhook-forwarder", 1, "curl: (7) Failed to connect: refused")
        held = consumers.get("webhook-forwarder")
    assert held is not None and held.held_since is not None and held.owner is not None
    table = kanban.run("consumers", "list", "--format", "table", env={"COLUMNS": "120"}).out
    lines = table.splitlines()
    assert all(len(line) <= 120 for line in lines), table
    header = next(line for line in lines if line.split()[:1] == ["name"])
    assert "held since" in header and "owner" in header and "last error" not in header, table
    row = next(line for line in lines if line.split()[:1] == ["webhook-forwarder"])
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", row), table
    # At 80 columns the owner's token (some 70 characters) folded over three lines and pushed out
    # the failing seq; it is `pid N here`, and the hold fits beside it.
    with kanban.board() as board:  # a short name: a long one is given the room of a column
        consumers = Consumers(board)
        consumers.forget("webhook-forwarder")
        consumers.open("hook", since=0)
        for _ in range(board.config.watch_hold_after):
            consumers.failed("hook", 1, "curl: (7) Failed to connect: refused")
    narrow = kanban.run("consumers", "list", "--format", "table", env={"COLUMNS": "80"}).out
    lines = narrow.splitlines()
    assert all(len(line) <= 80 for line in lines), narrow
    header = next(line for line in lines if line.split()[:1] == ["name"])
    assert "failing seq" in header and "held since" in header and "owner" in header, narrow
    [row] = [line for line in lines if line.split()[:1] == ["hook"]]
    assert row.split()[1:4] == ["0", "1", str(held.failures)], narrow
    assert row.rstrip().endswith(f"pid {os.getpid()} here"), narrow


def test_a_run_table_at_80_columns_is_a_line_a_run_and_its_words(kanban: Kanban) -> None:
    """`task exec list --format table` at 80 columns drew each run as a block of 13 to 20 lines
    (a field a line), a task's few runs a screen. A run is one line (id, status, agent, executor,
    start, tokens, cost) and its words under it (its error, else its summary, else why it ran),
    cut with `…` and inert; `exec show` and the JSON have every field."""
    from boardlib.records import EXECUTION_FAILED, EXECUTION_SUCCEEDED

    hostile = "did \x1b]0;pwned\x07 it \x1b[31mred\u202eevil\nsecond line " + "word " * 30
    with kanban.board() as board:
        task = board.create_task("priced \x1b[2J")
        board.claim(task.id, "ada")
        done = board.open_execution(task.id, "claude-code", agent="ada").id
        board.close_execution(done, EXECUTION_SUCCEEDED, agent="ada", cost_usd=1.2345,
                              input_tokens=48_000, output_tokens=2_000,
                              summary=hostile)  # fmt: skip
        failed = board.open_execution(task.id, "codex", agent="ada").id
        board.close_execution(failed, EXECUTION_FAILED, agent="ada", error="boom \x1b[31m")
        running = board.open_execution(task.id, "script", agent="ada").id
    for args in (("task", "exec", "list", task.id), ("task", "view", task.id)):
        narrow = kanban.run(*args, "--format", "table", env={"COLUMNS": "80"})
        assert narrow.code == 0, str(narrow)
        lines = narrow.out.splitlines()
        assert all(cell_len(line) <= 80 for line in lines), narrow.out
        assert not any(c in narrow.out for c in "\x1b\x07\u202e"), repr(narrow.out)
        rows = {line.split()[0]: n for n, line in enumerate(lines) if line.startswith(" EXEC-")}
        assert set(rows) == {done, failed, running}, narrow.out
        first = lines[rows[done]].split()
        assert first[1:4] == ["succeeded", "ada", "claude-code"], narrow.out
        assert first[-2:] == ["50000", "$1.23"], narrow.out
        assert lines[rows[done] + 1].startswith("    summary: did ␛]0;pwned␇ it"), narrow.out
        assert lines[rows[done] + 1].rstrip().endswith("…"), narrow.out
        assert lines[rows[failed] + 1].strip() == "error: boom ␛[31m", narrow.out
        assert rows[failed] == rows[done] + 2 and rows[running] == rows[failed] + 2, narrow.out
        assert not lines[rows[running] + 1].strip(), narrow.out  # no words: the next run or end
    listing = kanban.run("task", "list", "--format", "table", env={"COLUMNS": "80"}).out
    assert "in_progress" in listing and "priced" in listing, listing  # a status kept whole


def test_a_run_table_leaves_the_boards_bookkeeping_to_the_json(kanban: Kanban) -> None:
    """`task exec list --format table` showed `recoveryTombstone 0`, a recovery pass's marker that
    says nothing to a person. Tables leave it out, as narrow blocks and as wide columns, in `exec
    show` and `task view`; the JSON keeps it."""
    with kanban.board() as board:
        task = board.create_task("run")
        board.claim(task.id, "ada")
        run = board.open_execution(task.id, "sh", agent="ada").id
    assert kanban.ok("task", "exec", "list", task.id)[0]["recoveryTombstone"] == 0
    for columns in ("80", "250"):
        table = kanban.run("task", "exec", "list", task.id, "--format", "table",
                           env={"COLUMNS": columns}).out  # fmt: skip
        assert run in table and "running" in table, table
        assert "recovery" not in table.lower(), table
    shown = kanban.run("task", "exec", "show", run, "--format", "table").out
    assert run in shown and "recovery" not in shown.lower(), shown
    view = kanban.run("task", "view", task.id, "--format", "table", env={"COLUMNS": "250"}).out
    assert run in view and "recovery" not in view.lower(), view


def test_a_task_table_says_dropped_only_of_a_dropped_task(kanban: Kanban) -> None:
    """`task view` and `task get --format table` showed `dropped 0` on every task, a flag that is
    news only when set. A dropped task still says `dropped 1`, as a block and in a wide row table;
    the JSON keeps both."""
    with kanban.board() as board:
        kept = board.create_task("kept").id
        gone = board.create_task("gone").id
        board.drop(gone)
    assert kanban.ok("task", "get", kept)["dropped"] == 0
    for verb in ("get", "view"):
        for columns in ("80", "250"):
            env = {"COLUMNS": columns}
            shown = kanban.run("task", verb, kept, "--format", "table", env=env).out
            assert kept in shown and "dropped" not in shown, shown
            shown = kanban.run("task", verb, gone, "--format", "table", env=env).out
            assert re.search(r"dropped\s+1", shown), shown


def test_a_table_wraps_a_path_at_its_separators_and_says_dollars(kanban: Kanban) -> None:
    """`--format table` broke a path mid-name when it wrapped, and drew subtreeCostMicros in dollars
    under a label that said micros."""
    from boardlib.records import EXECUTION_SUCCEEDED

    shown = kanban.run("db", "path", "--format", "table", env={"COLUMNS": "60"})
    assert shown.code == 0, str(shown)
    where = kanban.ok("db", "path")["path"]
    lines = [line.strip() for line in shown.out.splitlines() if line.strip()]
    start = next(n for n, line in enumerate(lines) if line.startswith("path "))
    end = next(n for n, line in enumerate(lines) if line.startswith("backend "))
    pieces = [lines[start].removeprefix("path").strip(), *lines[start + 1 : end]]
    assert len(pieces) > 1 and "".join(pieces) == where, shown.out
    if "://" not in where:  # a file's path; a Postgres URL's last segment (?options=...) is
        # wider than the column whatever its schema, and folds inside itself as any long word
        assert all(piece.endswith("/") for piece in pieces[:-1]), shown.out
    with kanban.board() as board:
        task = board.create_task("priced")
        board.claim(task.id, "ada")
        run = board.open_execution(task.id, "claude-code", agent="ada").id
        board.close_execution(run, EXECUTION_SUCCEEDED, agent="ada", cost_usd=1.2345)
    view = kanban.run("task", "view", task.id, "--format", "table", env={"COLUMNS": "100"}).out
    cells = {line.split()[0]: line.split()[1:] for line in view.splitlines() if line.split()}
    assert cells["subtreeCost"] == ["$1.23"] and "subtreeCostMicros" not in view, view


def test_the_event_log_gives_what_happened_the_width_at_80_columns(kanban: Kanban) -> None:
    """`kanban events --format table` at 80 columns gave "What happened" 26 cells, each event folded
    over three lines, while the kind and the task said again what the words say. At 80 columns the
    words keep the seq and the time beside them, each event on one line; a wide terminal shows every
    column."""
    with kanban.board() as board:
        first = board.create_task("first")
        second = board.create_task("second", depends_on=[first.id])
        board.claim(first.id, "agent-barbara")
    words = f"operator created {second.id} in todo, waiting on {first.id}"
    narrow = kanban.run("events", "--format", "table", env={"COLUMNS": "80"})
    assert narrow.code == 0, str(narrow)
    lines = narrow.out.splitlines()
    assert all(len(line) <= 80 for line in lines), narrow.out
    assert next(line for line in lines if "What happened" in line).split() == [
        "Seq", "Time", "What", "happened"
    ]  # fmt: skip
    assert any(line.rstrip().endswith(words) for line in lines), narrow.out
    assert any(f"agent-barbara claimed {first.id}" in line for line in lines), narrow.out
    wide = kanban.run("events", "--format", "table", env={"COLUMNS": "200"}).out
    header = next(line for line in wide.splitlines() if "What happened" in line)
    assert header.split() == ["Seq", "Time", "Kind", "Task", "What", "happened"], wide
    assert any(
        line.rstrip().endswith(words) and "task_created" in line for line in wide.splitlines()
    )
