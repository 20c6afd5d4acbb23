"""Budgets through the real `kanban` script, on both backends: a start under a spent budget is
exit 2 with `budget_exceeded` on stderr and nothing written; the close that spends one is exit 0
with the run and `budgetExceeded`, the task blocked (read back); an agent setting a budget is
`operator_only`; the operator's raise is audited and unblocks; the pages' examples run."""

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Kanban, unchanged
from tests.cli.test_doc_examples import reader_env, run
from tests.doc_examples import example


@pytest.fixture
def kanban(board_path: Path) -> Kanban:
    return Kanban(board_path)


def claimed_with_a_run(kanban: Kanban, *, budget: str = "1") -> tuple[str, str]:
    task = kanban.ok("task", "dispatch", "--title", "priced", "--budget-usd", budget)
    assert task["budgetUsd"] == float(budget)
    kanban.ok("task", "claim", task["id"], "--agent", "ada")
    run_id = kanban.ok("task", "exec", "start", task["id"], "--executor", "sh", "--agent", "ada")
    return task["id"], run_id["id"]


def test_the_spending_close_is_kept_and_blocks_the_task(kanban: Kanban) -> None:
    task_id, run_id = claimed_with_a_run(kanban)
    closed = kanban.ok(
        "task", "exec", "finish", run_id, "--status", "succeeded", "--cost", "1.25",
        "--input-tokens", "900", "--agent", "ada",
    )  # fmt: skip
    assert closed["costUsd"] == 1.25 and closed["budgetExceeded"]["spent"] == 1.25
    assert closed["budgetExceeded"] == {
        "scope": "task", "unit": "usd", "limit": 1.0, "spent": 1.25, "owner": task_id,
        "day": None,
    }  # fmt: skip
    row = kanban.row(task_id)
    assert (row["status"], row["leaseUntil"], row["costUsd"]) == ("blocked", None, 1.25)
    assert (row["subtreeCostMicros"], row["tokens"]) == (1_250_000, 900)
    assert row["blockedReason"].startswith("budget_exceeded: the budget of")


def test_the_spending_close_as_a_table_says_which_budget_in_dollars(kanban: Kanban) -> None:
    """`task exec finish --format table` drew the budget a close spent as its JSON (`limit: 1.0`,
    `spent: 1.25`), neither in dollars as the cost beside it (`$1.25`) nor saying the task is now
    blocked. It says so in the board's words."""
    task_id, run_id = claimed_with_a_run(kanban)
    table = kanban.run(
        "task", "exec", "finish", run_id, "--status", "succeeded", "--cost", "1.25",
        "--agent", "ada", "--format", "table", env={"COLUMNS": "200"},
    )  # fmt: skip
    assert table.code == 0, str(table)
    [said] = [line for line in table.out.splitlines() if "recorded against" in line]
    assert said.split()[0] == "budgetExceeded", table.out
    assert " ".join(said.split()[1:]) == (
        f"the budget of {task_id} is spent ($1.25 recorded against $1.00): {task_id} is blocked "
        f"until an operator raises it (kanban budget set {task_id} --usd N --reason WHY)"
    ), table.out
    assert "limit:" not in table.out and "spent: 1.25" not in table.out, table.out


def test_a_start_under_a_spent_budget_is_exit_2_and_writes_nothing(kanban: Kanban) -> None:
    task_id, run_id = claimed_with_a_run(kanban)
    kanban.ok("task", "exec", "finish", run_id, "--status", "failed", "--cost", "1", "-a", "ada")
    with unchanged(kanban.db):
        error = kanban.refused(
            "task", "exec", "start", task_id, "--executor", "sh", "--agent", "ada",
            reason="budget_exceeded",
        )  # fmt: skip
    assert error["budget"]["owner"] == task_id and error["id"] == task_id
    assert f"kanban budget set {task_id} --usd N" in error["error"]
    with unchanged(kanban.db):
        kanban.refused("task", "unblock", task_id, reason="budget_exceeded")


def test_agents_never_set_budgets_and_the_operators_raise_is_audited(kanban: Kanban) -> None:
    task_id, run_id = claimed_with_a_run(kanban)
    kanban.ok("task", "exec", "finish", run_id, "--status", "failed", "--cost", "2", "-a", "ada")
    with unchanged(kanban.db):
        kanban.refused(
            "budget", "set", task_id, "--usd", "9", "--reason", "mine", reason="operator_only",
            env={"KANBAN_AGENT": "ada"},
        )  # fmt: skip
        kanban.refused("budget", "set", "--daily-usd", "9", "-m", "x", "-a", "ada",
                       reason="operator_only")  # fmt: skip
    raised = kanban.ok("budget", "set", task_id, "--usd", "2.5", "--reason", "a second pass")
    assert raised["budgetUsd"] == 2.5
    assert kanban.ok("task", "unblock", task_id, "--note", "raised")["status"] == "todo"
    with kanban.board() as board:
        (entry,) = [a for a in board.audit(task_id) if a.action == "budget_changed"]
        assert entry.actor == "operator"
        assert json.loads(entry.detail or "")["reason"] == "a second pass"
    history = kanban.ok("events", "--task", task_id)
    changed = [e for e in history if e["kind"] == "budget_changed"]
    assert [(e["data"]["from"], e["data"]["to"]) for e in changed] == [(1.0, 2.5)]
    # docs/budgets.md: a daily budget's change, of no task, is found in `kanban events`
    kanban.ok("budget", "set", "--team", "web", "--daily-usd", "4", "-m", "web's share")
    (daily,) = [e for e in kanban.ok("events") if e["taskId"] is None]
    assert (daily["kind"], daily["actor"], daily["data"]) == (
        "budget_changed", "operator",
        {"scope": "team_daily", "unit": "usd", "from": None, "to": 4.0, "reason": "web's share",
         "teamId": "web"},
    )  # fmt: skip


def test_a_budget_set_below_the_spend_is_taken_and_says_it_is_still_spent(
    kanban: Kanban,
) -> None:
    """`budget set --usd N` below what the subtree spent succeeded silently and the task stayed
    blocked (its unblock refused). It is still taken (lowering is a real choice), and says on
    stderr, in the TUI's words (`budgets.short_of`), that it is still spent and what covers it;
    a budget that covers the spend says nothing."""
    task_id, run_id = claimed_with_a_run(kanban)
    kanban.ok("task", "exec", "finish", run_id, "--status", "failed", "--cost", "2", "-a", "ada")
    low = kanban.noticed(
        "budget", "set", task_id, "--usd", "1.5", "--reason", "not enough", notice=(
            f"the budget of {task_id} is still spent ($2.00 recorded against $1.50): a task it "
            "blocked stays blocked; raise it above $2.00"
        ),
    )  # fmt: skip
    assert (low["budgetUsd"], low["status"]) == (1.5, "blocked")
    kanban.noticed("budget", "set", task_id, "--usd", "2", "--tokens", "9", "-m", "equal",
                   notice=f"the budget of {task_id} is still spent ($2.00 recorded against "
                   "$2.00): a task it blocked stays blocked; raise it above $2.00")  # fmt: skip
    assert kanban.ok("budget", "set", task_id, "--usd", "2.01", "-m", "covers it")["budgetUsd"]
    assert kanban.ok("task", "unblock", task_id, "--note", "raised")["status"] == "todo"


def test_budget_set_and_show(kanban: Kanban) -> None:
    task = kanban.ok("task", "dispatch", "--title", "t", "--team", "web", "--budget-tokens", "50")
    daily = kanban.ok("budget", "set", "--team", "web", "--daily-usd", "4", "-m", "share")
    assert (daily["teamId"], daily["dailyUsd"], daily["dailyTokens"]) == ("web", 4.0, None)
    assert (
        kanban.ok("budget", "set", task["id"], "--tokens", "none", "-m", "lift")["budgetTokens"]
        is None
    )
    shown = kanban.ok("budget", "show", task["id"])
    assert [(s["scope"], s["owner"], s["limit"]) for s in shown] == [("team_daily", "web", 4.0)]
    report = kanban.ok("budget", "show")
    assert [s["scope"] for s in report["daily"]] == ["team_daily"] and report["tasks"] == []
    table = kanban.run("budget", "show", "--format", "table")
    assert table.code == 0 and "$0.00 / $4.00" in table.out
    for bad in (["budget", "set", task["id"]], ["budget", "set", "--usd", "3"],
                ["budget", "set", task["id"], "--usd", "-1"]):  # fmt: skip
        usage = kanban.run(*bad, "-m", "x")
        assert usage.code == 2 and usage.out == "", str(usage)
    for word, said in (("nan", "is not a finite number"), ("inf", "is not in the range")):
        usage = kanban.run("budget", "set", task["id"], "--usd", word, "-m", "x")
        assert usage.code == 2 and said in usage.error["error"], str(usage)  # not "is negative"


def test_budget_show_table_names_each_task_and_says_which_is_spent(kanban: Kanban) -> None:
    """`kanban budget show --format table` listed task ids alone (no title, no status, though the
    report has both) and told a spent budget apart by colour only, which a table piped to a file or
    read without colour loses; with no daily budget it drew an empty table. Each task's row names it
    and its status, a spent budget says `spent`."""
    task_id, run_id = claimed_with_a_run(kanban)
    kanban.ok("task", "edit", task_id, "--title", "Port the parser")
    kanban.ok("task", "dispatch", "--title", "Lexer", "--budget-usd", "3")
    kanban.ok(
        "task", "exec", "finish", run_id, "--status", "succeeded", "--cost", "1.5", "--agent", "ada"
    )
    table = kanban.run("budget", "show", "--format", "table", env={"COLUMNS": "80"})
    assert table.code == 0, str(table)
    [spent] = [line for line in table.out.splitlines() if task_id in line]
    assert "Port the parser" in spent and "blocked" in spent, table.out
    assert spent.rstrip().endswith("$1.50 / $1.00 spent"), table.out
    [lexer] = [line for line in table.out.splitlines() if "Lexer" in line]
    assert "todo" in lexer and lexer.rstrip().endswith("$0.00 / $3.00"), table.out
    assert "no daily budget" in table.out, table.out


def test_the_inbox_table_gives_a_budgets_why_the_width_at_80_columns(kanban: Kanban) -> None:
    """`kanban inbox --format table` at 80 columns gave Why 26 cells, a spent budget's item took 7
    lines, and its why began "budget exceeded" beside the kind `budget_exceeded`. At 80 columns each
    item is a line and its why the line under it, the full width, without the kind's words, cut
    with `…`; the cut took the `kanban budget set` command, the one thing the operator runs, so
    the item's `command` is the line under that, whole; a wide terminal keeps one row per item.
    The JSON's why is unchanged; its `command` is the raise, null on other items."""
    spent = []
    for _ in range(2):
        task_id, run_id = claimed_with_a_run(kanban)
        kanban.ok("task", "exec", "finish", run_id, "--status", "succeeded", "--cost", "1.25",
                  "--agent", "ada")  # fmt: skip
        spent.append(task_id)
    items = kanban.ok("inbox")["items"]
    assert [item["kind"] for item in items] == ["budget_exceeded"] * 2, items
    assert all(item["why"].startswith("budget exceeded: the budget of") for item in items)
    commands = [f"kanban budget set {task_id} --usd N --reason WHY" for task_id in spent]
    assert [item["command"] for item in items] == commands, items
    assert all(f"`{item['command']}`" in item["why"] for item in items), items
    narrow = kanban.run("inbox", "--format", "table", env={"COLUMNS": "80"})
    assert narrow.code == 0, str(narrow)
    lines = narrow.out.splitlines()
    assert all(len(line) <= 80 for line in lines), narrow.out
    assert "budget exceeded" not in narrow.out, narrow.out
    for task_id in spent:
        start = next(n for n, line in enumerate(lines) if f" {task_id} " in line)
        assert "budget_exceeded" in lines[start] and "raise_budget" in lines[start], narrow.out
        said = lines[start + 1].strip()  # the why: was 7 lines, in a 26-cell column, then 2
        assert said.startswith(f"the budget of {task_id} is spent ($1.25 recorded against " \
                               "$1.00); raise it"), said  # fmt: skip
        assert said.endswith("…") and "--reason WHY" not in said, said
        raise_it = f"    kanban budget set {task_id} --usd N --reason WHY"
        assert lines[start + 2].rstrip() == raise_it, narrow.out  # whole, where it was cut
    assert len(lines) == 2 + 3 * 2, narrow.out  # its count, the headers, three lines an item
    wide = kanban.run("inbox", "--format", "table", env={"COLUMNS": "200"}).out
    rows = [line for line in wide.splitlines() if "budget_exceeded" in line]
    assert len(rows) == 2 and all("raise_budget" in row for row in rows), wide
    assert " Why " in wide and "budget exceeded" not in wide, wide


def test_closing_a_run_the_block_cancelled_says_how_it_closed(kanban: Kanban) -> None:
    """An agent with two runs open on a task, whose first close spent the budget, was answered
    `execution not found` closing the second, which `exec show` showed, cancelled by the block.
    Still `not_found` (no running run of that id), the refusal says the run is closed and how, and
    writes nothing."""
    task_id, first = claimed_with_a_run(kanban)
    second = kanban.ok("task", "exec", "start", task_id, "--executor", "sh", "--agent", "ada")["id"]
    kanban.ok("task", "exec", "finish", first, "--status", "succeeded", "--cost", "1", "-a", "ada")
    with unchanged(kanban.db):  # it reports no cost: nothing to count
        late = kanban.run("task", "exec", "finish", second, "--status", "succeeded",
                          "--summary", "done", "--agent", "ada")  # fmt: skip
    assert late.code == 2 and late.out == "", str(late)
    assert "what it cost is counted once when you report it" in late.error["error"], str(late)
    assert (late.error["reason"], late.error["status"]) == ("not_found", "cancelled")
    assert f"{second} is not running: it was closed (cancelled: still running when the task " \
        "moved to blocked by system (budget))" in late.error["error"], str(late)  # fmt: skip
    assert late.error["budgetSpent"] is True, str(late)
    assert late.error["error"].endswith(
        f"; no new run starts on {task_id} while the budget of {task_id} is spent ($1.00 "
        f"recorded against $1.00): an operator must raise it: kanban budget set {task_id} "
        "--usd N --reason WHY"
    ), str(late)
    unknown = kanban.run("task", "exec", "finish", "EXEC-404", "--status", "failed", "-a", "ada")
    assert unknown.error["error"] == "execution not found", str(unknown)


def test_a_late_cost_of_a_run_the_block_cancelled_is_counted_once(kanban: Kanban) -> None:
    """The second run's cost, reported after the block cancelled it, was refused `not_found`
    and lost: money spent is spent. It is counted once (the task, its subtree, the board's day),
    the run stays cancelled and the task blocked; a second report writes nothing."""
    kanban.ok("budget", "set", "--daily-usd", "50", "-m", "the day")
    task_id, first = claimed_with_a_run(kanban)
    second = kanban.ok("task", "exec", "start", task_id, "--executor", "sh", "--agent", "ada")["id"]
    kanban.ok("task", "exec", "finish", first, "--status", "succeeded", "--cost", "1", "-a", "ada")
    before = kanban.row(task_id)
    late = kanban.ok("task", "exec", "finish", second, "--status", "succeeded", "--cost", "0.5",
                     "--output-tokens", "40", "--agent", "ada")  # fmt: skip
    assert (late["status"], late["costUsd"], late["outputTokens"]) == ("cancelled", 0.5, 40)
    row = kanban.row(task_id)
    assert (row["costUsd"], row["subtreeCostMicros"], row["tokens"]) == (1.5, 1_500_000, 40)
    assert {k: v for k, v in row.items() if k not in ("costUsd", "subtreeCostMicros", "tokens",
            "subtreeTokens")} == {k: v for k, v in before.items() if k not in ("costUsd",
            "subtreeCostMicros", "tokens", "subtreeTokens")}  # fmt: skip
    [daily] = kanban.ok("budget", "show")["daily"]
    assert daily["spent"] == 1.5, daily
    with unchanged(kanban.db):
        again = kanban.run("task", "exec", "finish", second, "--status", "succeeded",
                           "--cost", "0.5", "--agent", "ada")  # fmt: skip
    assert (again.code, again.error["reason"]) == (2, "not_found"), str(again)


def test_a_late_cost_after_midnight_counts_on_one_day_in_budgets_and_stats(
    kanban: Kanban,
) -> None:
    """A cost reported after midnight for a run the board closed the day before counted on the
    report's day in `kanban budget show` and on the close's in `kanban stats`: the two disagreed
    on both days' totals. Both count it on the day its run closed (`budgets.run_day`)."""
    day = 86_400_000
    midnight = (kanban.now // day + 1) * day
    kanban.now = midnight - 20 * 60_000  # 23:40 UTC
    kanban.ok("budget", "set", "--daily-usd", "50", "-m", "the day")
    _, run_id = claimed_with_a_run(kanban, budget="10")
    kanban.ok("task", "exec", "finish", run_id, "--status", "succeeded", "--cost", "2", "-a", "ada")
    cancelled, late = claimed_with_a_run(kanban, budget="10")
    kanban.advance(minutes=10)  # 23:50: the task is cancelled, its open run closed with it
    kanban.ok("task", "cancel", cancelled, "--reason", "not needed")
    kanban.now = midnight + 10 * 60_000  # 00:10 the next day: the run's cost arrives
    counted = kanban.ok("task", "exec", "finish", late, "--status", "succeeded", "--cost", "0.5",
                        "--agent", "ada")  # fmt: skip
    assert (counted["status"], counted["costUsd"]) == ("cancelled", 0.5), counted
    _, today = claimed_with_a_run(kanban, budget="10")
    kanban.ok("task", "exec", "finish", today, "--status", "succeeded", "--cost", "1", "-a", "ada")
    stats = kanban.ok("stats", "--since", "2d")["cost"]
    by_stats = {d["start"] // day: d["costUsd"] for d in stats["perDay"] if d["runs"]}
    [standing] = stats["dailyBudgets"]
    assert standing["spent"] == by_stats[midnight // day] == 1.0, stats  # stats agrees itself
    by_budgets = {}
    for at in (midnight - 60_000, midnight + 20 * 60_000):  # 23:59, then 00:20
        kanban.now = at
        [daily] = kanban.ok("budget", "show")["daily"]
        by_budgets[at // day] = daily["spent"]
    assert by_budgets == by_stats == {midnight // day - 1: 2.5, midnight // day: 1.0}


def test_the_holders_verbs_on_a_task_its_budget_blocked_say_the_budget(kanban: Kanban) -> None:
    """Heartbeat and complete on a task its spent budget blocked
    were refused with a bare `invalid_state` (`task is blocked`), nothing about the budget. Still
    `invalid_state`, the refusal says which budget is spent, that the holder stops, and the
    operator's command; the row reads back as it was."""
    task_id, run_id = claimed_with_a_run(kanban)
    kanban.ok("task", "exec", "finish", run_id, "--status", "succeeded", "--cost", "1", "-a", "ada")
    before = kanban.row(task_id)
    for verb in (("heartbeat",), ("complete", "--summary", "done")):
        with unchanged(kanban.db):
            error = kanban.refused("task", *verb[:1], task_id, *verb[1:], "--agent", "ada",
                                   reason="invalid_state")  # fmt: skip
        assert error["error"] == (
            f"cannot {verb[0]}: {task_id} is blocked, as the budget of {task_id} is spent ($1.00 "
            "recorded against $1.00); stop working on it: an operator must raise the budget, "
            f"then unblock the task: kanban budget set {task_id} --usd N --reason WHY"
        ), error
        assert (error["current"], error["budget"]["owner"]) == ("blocked", task_id), error
        assert kanban.row(task_id) == before


def test_a_refused_start_tells_the_holder_to_block_not_release(kanban: Kanban) -> None:
    """docs/budgets.md says an agent refused a run under a spent budget is told to block the task,
    but the CLI's refusal named only the operator's command (which an agent is refused): nothing
    told the agent not to release it."""
    kanban.ok("budget", "set", "--daily-usd", "0", "-m", "no spending today")
    task = kanban.ok("task", "dispatch", "--title", "priced")
    kanban.ok("task", "claim", task["id"], "--agent", "ada")
    with unchanged(kanban.db):
        refused = kanban.refused(
            "task", "exec", "start", task["id"], "--executor", "sh", "--agent", "ada",
            reason="budget_exceeded",
        )  # fmt: skip
    assert "; block the task saying so, not release it: an operator must raise it" in str(refused)


def test_budget_show_lists_every_budgeted_task(kanban: Kanban) -> None:
    """With 60 budgeted tasks `kanban budget show` listed 50 and said nothing of the rest, while its
    help and the docs say every budget."""
    with kanban.board() as board:
        for n in range(60):
            board.create_task(f"priced {n}", budget_usd=1 + n)
    report = kanban.ok("budget", "show")
    assert len(report["tasks"]) == 60
    assert [s["limit"] for s in report["tasks"][:2]] == [1.0, 2.0]  # none spent: creation order


def test_a_limit_out_of_range_is_one_usage_refusal_on_every_option(kanban: Kanban) -> None:
    """`kanban budget set ID --usd -1` was a usage error and `--usd 1e10` the board's invalid_input,
    two refusals of one fact. Every budget option takes the range a cost takes (USD_MAX,
    TOKENS_MAX), refused alike and writing nothing."""
    task_id = kanban.ok("task", "dispatch", "--title", "priced")["id"]
    for command in (
        ["budget", "set", task_id, "-m", "x", "--usd"],
        ["budget", "set", task_id, "-m", "x", "--tokens"],
        ["budget", "set", "-m", "x", "--daily-usd"], ["budget", "set", "-m", "x", "--daily-tokens"],
        ["task", "dispatch", "--title", "t", "--budget-usd"],
        ["task", "dispatch", "--title", "t", "--budget-tokens"],
    ):  # fmt: skip
        for value in ("-1", "1e20"):
            with unchanged(kanban.db):
                error = kanban.refused(*command, value, reason="usage")
            assert "is not in the range" in error["error"], error


@pytest.mark.sqlite_only  # refused by the option's type, before any board is opened
def test_a_number_option_takes_plain_ascii_digits_only(kanban: Kanban) -> None:
    """`--usd 1_000` set $1,000 and `--usd` with full-width digits $10, as Python's float() and
    int() read underscores and any script's digits. Every number option (`Number`, `WholeNumber`,
    the amounts) refuses them as it refuses one out of range: exit 2, one JSON line (`usage`), the
    board's bytes (sha256) unchanged."""
    task_id, run_id = claimed_with_a_run(kanban, budget="100")
    for command in (
        ["budget", "set", task_id, "-m", "x", "--usd"],
        ["budget", "set", task_id, "-m", "x", "--tokens"],
        ["budget", "set", "-m", "x", "--daily-usd"], ["budget", "set", "-m", "x", "--daily-tokens"],
        ["task", "dispatch", "--title", "t", "--budget-usd"],
        ["task", "dispatch", "--title", "t", "--budget-tokens"],
        ["task", "dispatch", "--title", "t", "--priority"],
        ["task", "edit", task_id, "--priority"],
        ["task", "comment", task_id, "-m", "here", "--path", "a.py", "--line"],
        ["task", "heartbeat", task_id, "-a", "ada", "--epoch"],
        ["task", "extend-lease", task_id, "-a", "ada", "--minutes"],
        ["task", "exec", "finish", run_id, "-a", "ada", "--status", "succeeded", "--cost"],
        *(["task", "exec", "finish", run_id, "-a", "ada", "--status", "succeeded", option]
          for option in ("--input-tokens", "--output-tokens", "--cache-read", "--cache-write")),
    ):  # fmt: skip
        for value in ("1_000", "\uff11\uff10", "\u0663", "1_0.5"):
            with unchanged(kanban.db):
                error = kanban.refused(*command, value, reason="usage")
            assert "is not a plain number" in error["error"], error
    assert kanban.ok("budget", "set", task_id, "-m", "x", "--usd", "1e3")["budgetUsd"] == 1000


def test_budget_set_help_says_each_limits_range(kanban: Kanban) -> None:
    """`kanban budget set --help` was silent on the ranges its refusals name: each limit option says
    the range its amount type takes."""
    from boardlib.records import TOKENS_MAX, USD_MAX

    shown = kanban.run("budget", "set", "--help", env={"COLUMNS": "200"}).out
    for option, ceiling in (("--usd", USD_MAX), ("--tokens", TOKENS_MAX),
                            ("--daily-usd", USD_MAX), ("--daily-tokens", TOKENS_MAX)):  # fmt: skip
        line = next(line for line in shown.splitlines() if line.strip().startswith(option + " "))
        assert f"0 to {ceiling:g}" in line, line


def test_a_limit_is_kept_in_whole_micro_dollars_as_costs_are(kanban: Kanban) -> None:
    """`--daily-usd 1e-7` was kept as 1e-07 and shown `$0.00 / $0.00`, yet runs still started under
    it (a $0 budget allows no run); `--usd 5.0000004` was shown `$5.00 / $5.00` after $5 of spend
    and not counted as spent. A limit is now rounded to whole micro-dollars as a cost is."""
    daily = kanban.ok("budget", "set", "--daily-usd", "1e-7", "-m", "a trace of a budget")
    assert daily["dailyUsd"] == 0.0
    task = kanban.ok("task", "dispatch", "--title", "priced", "--budget-usd", "5.0000004")
    assert task["budgetUsd"] == 5.0
    kanban.ok("task", "claim", task["id"], "--agent", "ada")
    with unchanged(kanban.db):
        error = kanban.refused(
            "task", "exec", "start", task["id"], "--executor", "sh", "--agent", "ada",
            reason="budget_exceeded",
        )  # fmt: skip
    assert (error["budget"]["scope"], error["budget"]["limit"]) == ("board_daily", 0.0)
    kanban.ok("budget", "set", "--daily-usd", "none", "-m", "lifted")
    raised = kanban.ok("budget", "set", task["id"], "--usd", "5.0000004", "-m", "again")
    assert raised["budgetUsd"] == 5.0
    run = kanban.ok("task", "exec", "start", task["id"], "--executor", "sh", "--agent", "ada")
    closed = kanban.ok(
        "task", "exec", "finish", run["id"], "--status", "succeeded", "--cost", "5", "-a", "ada"
    )
    assert closed["budgetExceeded"]["limit"] == closed["budgetExceeded"]["spent"] == 5.0
    assert kanban.row(task["id"])["status"] == "blocked"


def test_a_whole_number_of_tokens_may_be_written_as_http_and_mcp_take_it(kanban: Kanban) -> None:
    """HTTP and MCP took `budgetTokens: 1e3` and `1000.0` (a JSON number with no fraction is a whole
    number there) while `--tokens 1e3` was refused. Every token count on the command line now takes
    a whole number however it is written; a fraction is still a usage refusal."""
    task = kanban.ok("task", "dispatch", "--title", "counted", "--budget-tokens", "1e3")
    assert task["budgetTokens"] == 1000
    raised = kanban.ok("budget", "set", task["id"], "--tokens", "2000.0", "-m", "more")
    assert raised["budgetTokens"] == 2000
    daily = kanban.ok("budget", "set", "--daily-tokens", "5e4", "-m", "a day")
    assert daily["dailyTokens"] == 50_000
    kanban.ok("task", "claim", task["id"], "--agent", "ada")
    run = kanban.ok("task", "exec", "start", task["id"], "--executor", "sh", "--agent", "ada")
    closed = kanban.ok(
        "task", "exec", "finish", run["id"], "--status", "succeeded", "--input-tokens", "1e2",
        "--output-tokens", "20.0", "-a", "ada",
    )  # fmt: skip
    assert (closed["inputTokens"], closed["outputTokens"]) == (100, 20)
    with unchanged(kanban.db):
        for args in (
            ["budget", "set", task["id"], "--tokens", "1000.5", "-m", "x"],
            ["budget", "set", "--daily-tokens", "nan", "-m", "x"],
            ["task", "dispatch", "--title", "t", "--budget-tokens", "1.5"],
            ["budget", "set", task["id"], "--tokens", "-1e3", "-m", "x"],
        ):
            usage = kanban.run(*args)
            assert usage.code == 2 and usage.out == "", str(usage)
            assert "whole number" in usage.err or "not in the range 0<=x<=" in usage.err


def test_a_plan_files_whole_numbers_are_taken_as_json_writes_them(
    kanban: Kanban, tmp_path: Path
) -> None:
    """A JSON plan's `"budgetTokens": 1e3` (or `1000.0`) was refused "Input should be a valid
    integer" while the same number in an HTTP body was 1000. A plan's whole numbers (budgetTokens,
    priority) follow the bodies' rule; a fraction or a string is still a problem and the plan writes
    nothing."""
    plan = tmp_path / "plan.json"
    plan.write_text('{"tasks": [{"key": "a", "title": "A", "budgetTokens": 1e3, "priority": 2.0}]}')
    (made,) = kanban.ok("plan", "apply", str(plan))["tasks"]
    assert (made["budgetTokens"], made["priority"]) == (1000, 2)
    plan.write_text('{"tasks": [{"key": "b", "title": "B", "budgetTokens": 1000.5}]}')
    with unchanged(kanban.db):
        problem = kanban.refused("plan", "apply", str(plan), reason="invalid_input")
    assert [p["field"] for p in problem["problems"]] == ["budgetTokens"]


def test_a_plan_files_amount_written_as_a_string_is_a_problem(
    kanban: Kanban, tmp_path: Path
) -> None:
    """Checked when the CLI stopped reading `1_000` and full-width digits as numbers: in a plan
    file an amount is a number, so such strings (and any string) are a problem of their field,
    in JSON and in YAML (quoted), and the plan writes nothing."""
    for name, line in (
        ("plan.json", '{{"tasks": [{{"key": "a", "title": "A", "{field}": "{value}"}}]}}'),
        ("plan.yaml", 'tasks:\n  - {{key: a, title: A, {field}: "{value}"}}\n'),
    ):
        plan = tmp_path / name
        for field in ("budgetUsd", "budgetTokens", "priority"):
            for value in ("1_000", "\uff11\uff10", "10"):
                plan.write_text(line.format(field=field, value=value), encoding="utf-8")
                with unchanged(kanban.db):
                    problem = kanban.refused("plan", "apply", str(plan), reason="invalid_input")
                assert [p["field"] for p in problem["problems"]] == [field], problem
    # YAML 1.1 read these unquoted as numbers (1000, 16, 15 in octal, 90); a plan's numbers are
    # YAML 1.2's decimal ones, as JSON's and the CLI's
    plan = tmp_path / "plan.yaml"
    for field in ("budgetUsd", "budgetTokens", "priority"):
        for value in ("1_000", "0x10", "1:30", ".inf"):
            plan.write_text(f"tasks:\n  - {{key: a, title: A, {field}: {value}}}\n")
            with unchanged(kanban.db):
                problem = kanban.refused("plan", "apply", str(plan), reason="invalid_input")
            assert [p["field"] for p in problem["problems"]] == [field], problem
    # a number tagged by hand is read by the same rule: refused as the file's syntax, with its
    # line (not an unexpected error, as the first loader of YAML 1.2's numbers gave it)
    for tagged in ("!!int 0x10", "!!float abc"):
        plan.write_text(f"tasks:\n  - {{key: a, title: A, priority: {tagged}}}\n")
        with unchanged(kanban.db):
            problem = kanban.refused("plan", "apply", str(plan), reason="invalid_input")
        assert "line 2" in problem["error"] and "not a decimal number" in problem["error"]
    plan.write_text("tasks:\n  - {key: a, title: A, priority: 017, budgetTokens: 1e3}\n")
    (made,) = kanban.ok("plan", "apply", str(plan))["tasks"]
    assert (made["priority"], made["budgetTokens"]) == (17, 1000)


@pytest.mark.slow
def test_the_budget_and_stats_pages_run_as_written(tmp_path: Path) -> None:
    env = reader_env(tmp_path, KANBAN_DB=str(tmp_path / "board.db"))
    run("kanban db init", tmp_path, env)
    done = run(example("docs/budgets.md#budget-loop"), tmp_path, env)
    assert "$0.00 / $40.00" in done.stdout and "$0.00 / $5.00" in done.stdout
    lexer = json.loads(done.stdout.splitlines()[1])
    assert (lexer["parentTaskId"], lexer["budgetTokens"]) == ("TASK-1", 200_000)
    done = run(example("docs/stats.md#stats"), tmp_path, env)
    assert "the last 24h" in done.stdout
    week = json.loads(done.stdout[done.stdout.index('{"since"') :])
    assert (week["window"], week["teamId"]) == ("7d", "web")


def test_a_plan_file_carries_budgets(kanban: Kanban, tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "tasks:\n"
        "  - {key: port, title: Port the parser, budgetUsd: 5}\n"
        "  - {key: lexer, title: Lexer, parent: port, budget_tokens: 200000}\n"
    )
    applied = kanban.ok("plan", "apply", str(plan))
    by_title = {task["title"]: task for task in applied["tasks"]}
    assert by_title["Port the parser"]["budgetUsd"] == 5.0
    assert by_title["Lexer"]["budgetTokens"] == 200_000
    plan.write_text("tasks:\n  - {key: bad, title: Bad, budgetUsd: -1}\n")
    with unchanged(kanban.db):
        kanban.refused("plan", "apply", str(plan), reason="invalid_input")


def test_a_plan_does_not_move_a_task_out_of_a_budgeted_team(kanban: Kanban, tmp_path: Path) -> None:
    """Checked after `task edit --team` was closed to agents (asked whether a plan, which edits
    through `plan_match`, could do the same): a plan never changes a task's team, `--update` or not,
    for an agent or an operator; the refusal writes nothing."""
    plan = tmp_path / "plan.yaml"
    plan.write_text("name: web\ntasks:\n  - {key: work, title: Web work, team: web}\n")
    task_id = kanban.ok("plan", "apply", str(plan))["keys"]["work"]
    kanban.ok("budget", "set", "--team", "web", "--daily-usd", "1", "-m", "web's share")
    for team in ("team: other", "team: ''", "priority: 0"):  # the last names no team
        plan.write_text(f"name: web\ntasks:\n  - {{key: work, title: Web work, {team}}}\n")
        for who in ("ada", "operator"):
            with unchanged(kanban.db):
                kanban.refused("plan", "apply", str(plan), "--update", "--agent", who,
                               reason="invalid_input")  # fmt: skip
    assert kanban.row(task_id)["teamId"] == "web"


def test_a_cost_or_count_past_the_ledgers_ceiling_is_a_usage_refusal(kanban: Kanban) -> None:
    """The ceilings HTTP's and MCP's schemas state (`USD_MAX`, `TOKENS_MAX`) are the options'
    ranges too: their help says so, and a value past one writes nothing."""
    _, run_id = claimed_with_a_run(kanban, budget="5")
    for option, value in (("--cost", "1e10"), ("--cost", "inf"), ("--output-tokens", "10" * 9)):
        with unchanged(kanban.db):
            error = kanban.refused(
                "task", "exec", "finish", run_id, "--status", "succeeded", option, value,
                "--agent", "ada", reason="usage",
            )  # fmt: skip
        assert "is not in the range" in error["error"], error
    assert "0<=x<=1000000000]" in kanban.run("task", "exec", "finish", "--help").out
