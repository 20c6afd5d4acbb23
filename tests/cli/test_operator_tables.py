"""What an operator at an 80-column terminal reads: `--format table` output kept to one line a
task, every agent string drawn inert, the outcome of a command before the task it moved."""

import re
import time
from pathlib import Path

import pytest
from rich.cells import cell_len

from tests.cli.conftest import Kanban, unchanged

HOSTILE = "Hostile \x1b]52;c;aGk=\x07 clip \x1b[2J [bold]x[/] \u202eevil\u202c"
WIDE = "修复解析器的宽字符问题 🚀🔥 emoji タイトル " * 3


@pytest.fixture
def kanban(board_path: Path) -> Kanban:
    return Kanban(board_path)


def _fits(out: str, width: int = 80) -> None:
    assert all(cell_len(line) <= width for line in out.splitlines()), out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out, repr(out)


def test_a_task_list_at_80_columns_is_one_line_a_task(kanban: Kanban) -> None:
    """A 300-character title folded over nine lines of `task list --format table`, a wide one
    over two: a list of 500 tasks took 1,062 lines. Each task is one line, its title cut with
    `…`; `task view` shows it whole."""
    with kanban.board() as board:
        long = board.create_task("Very long title " + "x" * 284)
        wide = board.create_task(WIDE)
        hostile = board.create_task(HOSTILE)
        short = board.create_task("Write the parser")
        board.claim(short.id, "alice")
    table = kanban.run("task", "list", "--format", "table", env={"COLUMNS": "80"})
    assert table.code == 0, str(table)
    _fits(table.out)
    rows = [line for line in table.out.splitlines() if line.strip()[:5] == "TASK-"]
    assert len(rows) == 4, table.out
    assert len(table.out.splitlines()) == 4 + 4, table.out  # a blank, header, rule, rows, blank
    by_id = {row.split()[0]: row for row in rows}
    assert "Very long title xxx" in by_id[long.id] and by_id[long.id].rstrip().endswith("…")
    assert "修复解析器" in by_id[wide.id] and by_id[wide.id].rstrip().endswith("…")
    assert "Hostile ␛]52;c;aGk=␇" in by_id[hostile.id]
    assert by_id[short.id].split()[1:] == ["in_progress", "0", "alice", "Write", "the", "parser"]
    view = kanban.run("task", "view", long.id, "--format", "table", env={"COLUMNS": "80"})
    assert "x" * 50 in view.out and "…" not in view.out, view.out  # whole where it is one task


def test_the_inbox_at_80_columns_names_each_tasks_title(kanban: Kanban) -> None:
    """`kanban inbox --format table` said `TASK-3  review  approve` and not which task that is:
    the operator looked each one up. Each item's line has its title, drawn inert and cut with
    `…`; whys as short as `from bob` (`attention.short_why`) leave the title a column even at
    80 columns, each item one line (the table's width was reckoned without its rules, and
    `from bob` and `approve` folded over two). The JSON is unchanged."""
    with kanban.board() as board:
        tasks = [board.create_task(title) for title in (HOSTILE, WIDE, "Migrate to pg 16")]
        for task in tasks:
            board.claim(task.id, "bob")
            board.complete(task.id, "bob")
    narrow = kanban.run("inbox", "--format", "table", env={"COLUMNS": "80"})
    assert narrow.code == 0, str(narrow)
    _fits(narrow.out)
    lines = {line.split()[1]: line for line in narrow.out.splitlines() if " TASK-" in line[:20]}
    assert set(lines) == {task.id for task in tasks}, narrow.out
    assert "Hostile ␛]52;c;aGk=␇" in lines[tasks[0].id], narrow.out
    assert "修复解析器" in lines[tasks[1].id] and "…" in lines[tasks[1].id], narrow.out
    assert lines[tasks[2].id].split()[2:] == ["Migrate", "to", "pg", "16", "review", "from",
                                              "bob", "approve"], narrow.out  # fmt: skip
    assert len(narrow.out.splitlines()) == 4 + 3 + 1, narrow.out  # a line an item
    wide = kanban.run("inbox", "--format", "table", env={"COLUMNS": "200"})
    _fits(wide.out, 200)
    assert " Title " in wide.out and "Migrate to pg 16" in wide.out, wide.out
    assert [item["title"] for item in kanban.ok("inbox")["items"]] == [t.title for t in tasks]


ITEM = re.compile(r"  \S+(?: min| s| h| d)?\s+(TASK-\d+) ")  # an item's line: waited, task


def test_an_inbox_item_at_80_columns_takes_two_lines(kanban: Kanban) -> None:
    """At 80 columns each inbox item took three lines (its line, its why, a blank), its why
    folded over more when long. An item is its line (the title cut with `…`) and its why on one
    line under it, cut with `…`, without the words its kind says already
    (`attention.short_why`: `blocked: `, `waiting for review`); the JSON keeps the why whole."""
    reason = "waiting on \x1b[2J the DBA " + "to give access to the replica " * 4
    with kanban.board() as board:
        judged = board.create_task(HOSTILE + " and a title too long for the line")
        board.claim(judged.id, "bob")
        board.complete(judged.id, "bob")
        stuck = board.create_task("Migrate to pg 16")
        board.claim(stuck.id, "bob")
        board.block(stuck.id, "bob", reason)
    narrow = kanban.run("inbox", "--format", "table", env={"COLUMNS": "80"})
    assert narrow.code == 0, str(narrow)
    _fits(narrow.out)
    lines = narrow.out.splitlines()
    assert len(lines) == 2 + 2 * 2 and all(line.strip() for line in lines), narrow.out
    at = {found[1]: n for n, line in enumerate(lines) if (found := ITEM.match(line))}
    assert lines[at[judged.id]].rstrip().endswith("…"), narrow.out
    assert lines[at[judged.id] + 1].strip() == "from bob", narrow.out
    why = lines[at[stuck.id] + 1].strip()
    assert why.startswith("waiting on ␛[2J the DBA") and why.endswith("…"), narrow.out
    items = {item["taskId"]: item["why"] for item in kanban.ok("inbox")["items"]}
    assert items[stuck.id].startswith("blocked: waiting on") and items[stuck.id].endswith("replica")
    assert items[judged.id] == "waiting for review from bob"


def test_a_nested_record_leaves_out_unset_flags_as_its_rows_do(kanban: Kanban) -> None:
    """`task why --format table` listed each unmet dependency with `dropped: 0`, a flag the
    table leaves out of any row where it is unset (`_says_something`), and a nested amount kept
    in micro-dollars said `subtreeCostMicros: $0.00`. Nested values follow the rows' rules."""
    with kanban.board() as board:
        first = board.create_task("Write changelog")
        waiting = board.create_task("Needs changelog", depends_on=[first.id])
    table = kanban.run("task", "why", waiting.id, "--format", "table", env={"COLUMNS": "80"})
    assert table.code == 0, str(table)
    _fits(table.out)
    assert "title: Write changelog" in table.out and "status: todo" in table.out, table.out
    assert "dropped" not in table.out, table.out
    unmet = kanban.ok("task", "why", waiting.id)["unmetDependencies"]
    assert unmet[0]["dropped"] == 0  # the JSON keeps it


def test_an_illegal_move_says_where_the_task_may_go(kanban: Kanban) -> None:
    """`task move T --to done` on a todo task was refused `illegal transition: todo -> done`, and
    the operator had to find the table in the docs. The refusal names the statuses the task may
    move to (`allowed`, from the one transition table), or that its status is final; it writes
    nothing."""
    from boardlib.transitions import legal_targets

    with kanban.board() as board:
        todo = board.create_task("Write changelog")
        done = board.create_task("Cut the branch")
        board.claim(done.id, "ada")
        board.complete(done.id, "ada")
        board.approve(done.id, "bob")
    with unchanged(kanban.db):
        error = kanban.refused("task", "move", todo.id, "--to", "done",
                               reason="illegal_transition")  # fmt: skip
        assert error["allowed"] == list(legal_targets("todo")) and "in_progress" in error["allowed"]
        assert error["error"] == (
            "illegal transition: todo -> done; from todo it may move to "
            + ", ".join(legal_targets("todo"))
        )
        error = kanban.refused("task", "move", done.id, "--to", "todo",
                               reason="illegal_transition")  # fmt: skip
        assert error["allowed"] == [] and error["error"].endswith(
            "done is final, no move leaves it"
        )


def test_task_view_reads_its_comments_as_a_thread(kanban: Kanban) -> None:
    """`task view --format table` drew each comment as a block of six rows (its task's id again,
    `authorType`), a review as a form. Each comment is one line saying who, when and where (a
    review comment's file and line), its words under it, drawn inert, line breaks kept."""
    with kanban.board() as board:
        task = board.create_task("Write the parser")
        board.claim(task.id, "bob")
        board.complete(task.id, "bob", summary="done: " + HOSTILE)
        board.reject(task.id, "carol", "needs tests",
                     comments=[{"path": "app.py", "line": 3, "body": "first\nsecond"}])  # fmt: skip
        board.add_comment(task.id, WIDE, author_type="user")
    table = kanban.run("task", "view", task.id, "--format", "table", env={"COLUMNS": "80"})
    assert table.code == 0, str(table)
    _fits(table.out)
    thread = table.out[table.out.index("\ncomments\n") :].splitlines()
    heads = [line.split()[:2] for line in thread if line.startswith("  C-")]
    assert [who for _, who in heads] == ["bob", "carol", "carol", "operator"], table.out
    assert "authorType" not in table.out and "taskId" not in table.out, table.out
    anchored = next(n for n, line in enumerate(thread) if "app.py:3" in line)
    assert [line.strip() for line in thread[anchored + 1 : anchored + 3]] == ["first", "second"]
    assert any("done: Hostile ␛]52;c;aGk=␇" in line for line in thread), table.out


def test_reconcile_as_a_table_says_when_nothing_was_released(kanban: Kanban) -> None:
    """`kanban reconcile --format table` with no lease run out printed a blank line above its
    counts: the operator could not tell "nothing to do" from output lost. It says so."""
    with kanban.board() as board:
        board.create_task("Write the parser")
    table = kanban.run("reconcile", "--format", "table", env={"COLUMNS": "80"})
    assert table.code == 0, str(table)
    assert table.out.splitlines() == [
        "no lease to release",
        "timed-out executions: 0, purged events: 0",
    ], table.out


def test_a_records_flags_read_yes_or_no(kanban: Kanban) -> None:
    """`db check --format table` drew its flags as Python does (`ok True`, `full False`). One
    rule draws every flag of a record, nested or not, as yes or no; the JSON keeps true/false."""
    with kanban.board() as board:
        board.create_task("t")
    table = kanban.run("db", "check", "--format", "table", env={"COLUMNS": "80"})
    assert table.code == 0, str(table)
    lines = [line.split() for line in table.out.splitlines()]
    assert ["ok", "yes"] in lines and ["full", "no"] in lines, table.out
    assert "True" not in table.out and "False" not in table.out, table.out
    assert kanban.ok("db", "check")["ok"] is True


def test_budget_show_and_stats_keep_a_task_to_one_line(kanban: Kanban) -> None:
    """`budget show` and `stats` at 80 columns folded a 300-character title over eight lines of
    their task tables. Each task is one line there too, its title cut with `…`, inert."""
    long = "Very long title " + "x" * 284
    ids = []
    for title in (long, HOSTILE):
        task = kanban.ok("task", "dispatch", "--title", title, "--budget-usd", "1")
        kanban.ok("task", "claim", task["id"], "--agent", "ada")
        run = kanban.ok("task", "exec", "start", task["id"], "--executor", "sh", "--agent", "ada")
        kanban.ok("task", "exec", "finish", run["id"], "--status", "succeeded", "--cost", "0.5",
                  "--agent", "ada")  # fmt: skip
        ids.append(task["id"])
    for command in (("budget", "show"), ("stats",)):
        table = kanban.run(*command, "--format", "table", env={"COLUMNS": "80"})
        assert table.code == 0, str(table)
        _fits(table.out)
        rows = {line.split()[0]: line for line in table.out.splitlines() if line.strip()}
        assert sum(line.strip()[:5] == "TASK-" for line in table.out.splitlines()) == 2, table.out
        assert "Very long title xxx" in rows[ids[0]] and "…" in rows[ids[0]], table.out
        assert "Hostile ␛]52;c;aGk=␇" in rows[ids[1]] and "$0.50" in rows[ids[1]], table.out


@pytest.mark.slow
@pytest.mark.sqlite_only  # on PostgreSQL the floor holds a connection's set-up: no bite
def test_a_table_of_500_tasks_costs_less_over_the_json_than_the_json(kanban: Kanban) -> None:
    """`task list --format table` on 500 tasks took 0.33-0.52 s, some 0.25 s of CPU over the
    JSON's, most of it rich's table measuring and wrapping every cell of lines that never wrap.
    `_Lines` cuts and pads them itself: what the table costs over the JSON (the floor: the same
    read and start-up) is now less than the JSON itself. CPU time, in fresh processes, the
    median of three: other work on the machine hardly moves it, as it moves wall time."""
    import resource
    import statistics
    import subprocess

    from tests.cli.conftest import KANBAN

    with kanban.board() as board:
        for n in range(500):
            task = board.create_task(f"task {n} {HOSTILE} " + "word " * (n % 25))
            if n % 7 == 0:
                board.claim(task.id, f"agent-{n % 5}")

    def cpu(form: str) -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run([str(KANBAN), "task", "list", "--format", form], capture_output=True,
                              env=kanban.env(COLUMNS="80"), check=True, text=True)  # fmt: skip
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if form == "table":
            assert len(done.stdout.splitlines()) == 500 + 4, done.stdout[:2000]
            _fits(done.stdout)
        return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime

    cpu("json"), cpu("table")  # bytecode written, files in the page cache
    spent: dict[str, list[float]] = {"json": [], "table": []}
    for _ in range(3):
        for form, times in spent.items():
            times.append(cpu(form))
    json_s, table_s = (statistics.median(times) for times in spent.values())
    assert table_s - json_s < json_s, spent


def test_a_task_being_landed_says_landing_by_whom_in_the_inbox_and_its_view(
    kanban: Kanban,
) -> None:
    """While a landing verified the merged tree, `kanban inbox` still listed the task as
    "unlanded, land" and nothing said a landing ran, so another operator started a second. The
    inbox counts it in a line ("1 task landing"), `task view` says by whom and since when, and
    both JSON documents carry it. A landing's place is taken through the queue's own `join`."""
    from boardlib.landings import LandQueue

    with kanban.board() as board:
        landing, plain = (board.create_task(title) for title in ("Migrate to pg 16", HOSTILE))
        for task in (landing, plain):
            board.claim(task.id, "bob")
            board.complete(task.id, "bob")
        LandQueue(board, lease_ms=60_000).join(
            landing.id, repo_path="/repo", ref="refs/heads/main", lander="operator:ops",
            holder="another-machine/4242/1/abc", strategy="squash", fence="0" * 40,
        )  # fmt: skip
    table = kanban.run("inbox", "--format", "table", env={"COLUMNS": "80"})
    assert table.code == 0, str(table)
    _fits(table.out)
    assert f"1 task landing: {landing.id}" in table.out, table.out
    assert [line for line in table.out.splitlines() if f" {landing.id} " in line] == [], table.out
    doc = kanban.ok("inbox")
    assert [item["taskId"] for item in doc["items"]] == [plain.id]
    [run] = doc["landing"]
    assert (run["taskId"], run["lander"], run["since"]) == (landing.id, "operator:ops", kanban.now)
    assert kanban.ok("task", "view", landing.id)["landing"]["lander"] == "operator:ops"
    assert kanban.ok("task", "view", plain.id)["landing"] is None
    view = kanban.run("task", "view", landing.id, "--format", "table", env={"COLUMNS": "80"})
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(kanban.now / 1000))
    assert f"landing by operator:ops since {when}" in view.out, view.out
    other = kanban.run("task", "view", plain.id, "--format", "table", env={"COLUMNS": "80"})
    assert "landing by" not in other.out, other.out


def test_a_task_under_its_running_gate_says_verifying_in_the_inbox_and_its_view(
    kanban: Kanban,
) -> None:
    """Under its running gate a task is no inbox item, and only its history said why: an empty
    inbox read as nothing in flight. `kanban inbox` counts it in a line ("1 task verifying"),
    `task view` says since when, and both JSON documents carry it."""
    with kanban.board() as board:
        gated, plain = (board.create_task(title) for title in ("Migrate to pg 16", HOSTILE))
        for task, gate_ms in ((gated, 600_000), (plain, None)):
            board.claim(task.id, "bob")
            board.complete(task.id, "bob", gate_ms=gate_ms, beat_ms=20_000 if gate_ms else None)
    table = kanban.run("inbox", "--format", "table", env={"COLUMNS": "80"})
    assert table.code == 0, str(table)
    _fits(table.out)
    assert f"1 task verifying: {gated.id}" in table.out, table.out
    assert [line for line in table.out.splitlines() if f" {gated.id} " in line] == [], table.out
    doc = kanban.ok("inbox")
    assert [item["taskId"] for item in doc["items"]] == [plain.id]
    assert doc["verifying"] == [{"taskId": gated.id, "since": kanban.now, "title": gated.title}]
    assert kanban.ok("task", "view", gated.id)["verifyingSince"] == kanban.now
    assert kanban.ok("task", "view", plain.id)["verifyingSince"] is None
    view = kanban.run("task", "view", gated.id, "--format", "table", env={"COLUMNS": "80"})
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(kanban.now / 1000))
    assert f"verifying since {when}" in view.out, view.out
    other = kanban.run("task", "view", plain.id, "--format", "table", env={"COLUMNS": "80"})
    assert "verifying" not in other.out, other.out
