"""`kanban stats` on a board whose every figure is known: a day of work played on a fixed clock
(tasks claimed, reviewed, rejected, moved by hand, leases lapsing, gate verdicts, priced runs),
then each figure checked exactly, for the whole board and for one team, on both backends."""

import json
from pathlib import Path

import pytest

from boardlib import Board, BoardError, ManualClock, Reason
from boardlib import transitions as t
from boardlib.actors import runtime_agent, session_agent
from boardlib.records import EXECUTION_FAILED, EXECUTION_SUCCEEDED
from boardlib.stats import Stats, parse_window, rate_text
from tests.cli.conftest import Kanban

T0 = 1_800_000_000_000  # 2027-01-15 08:00 UTC, an hour's start
MIN = 60_000
HOUR = 60 * MIN
LONG = 2 * HOUR  # leases long enough for every step below
PASS = json.dumps({"status": "pass", "attempts": [], "updatedAt": 1})
FAIL = json.dumps({"status": "fail", "attempts": [], "updatedAt": 1})
END = T0 + 26 * HOUR  # "now": the 24-hour window starts at T0 + 2 h


def at(clock: ManualClock, hours: float, minutes: float = 0) -> None:
    clock.set(T0 + int(hours * HOUR + minutes * MIN))


def priced_run(
    board: Board, clock: ManualClock, task_id: str, agent: str, span: tuple[float, float], **ledger
) -> None:
    """A run of `agent` on `task_id` from minute `span[0]` to `span[1]` of the current hour."""
    hour = (clock.now_ms() - T0) // HOUR
    at(clock, hour, span[0])
    run = board.open_execution(task_id, "script", agent=agent)
    at(clock, hour, span[1])
    board.close_execution(run.id, ledger.pop("status", EXECUTION_SUCCEEDED), agent=agent, **ledger)


def a_day_of_work(board: Board, clock: ManualClock) -> dict[str, str]:
    ids: dict[str, str] = {}
    at(clock, 0)
    for key, team in (("E", None), ("A", "web"), ("B", None), ("C", "web"), ("D", None),
                      ("F", None), ("G", None), ("H", None), ("K", None)):  # fmt: skip
        ids[key] = board.create_task(key, team_id=team).id
    board.set_daily_budget(usd=20, reason="the board's ceiling")
    # E: done at 0:20, before the window.
    board.claim(ids["E"], "ann", lease_ms=LONG)
    priced_run(board, clock, ids["E"], "ann", (1, 9), cost_usd=9.0)
    at(clock, 0, 10)
    board.complete(ids["E"], "ann")
    at(clock, 0, 20)
    board.approve(ids["E"], "rev")
    # A: claim 3:00, review 3:10-3:30 (a pass verdict at 3:15): cycle 30 min, review 20 min.
    at(clock, 3)
    board.claim(ids["A"], "ann", lease_ms=LONG)
    priced_run(board, clock, ids["A"], "ann", (1, 9), cost_usd=1.25, input_tokens=1000,
               output_tokens=200)  # fmt: skip
    at(clock, 3, 10)
    board.complete(ids["A"], "ann")
    at(clock, 3, 15)
    board.record_verification(ids["A"], PASS)
    at(clock, 3, 30)
    board.approve(ids["A"], "rev")
    # B: claim 3:40, review 3:45-3:50: cycle 10 min, review 5 min.
    at(clock, 3, 40)
    board.claim(ids["B"], "ann", lease_ms=LONG)
    priced_run(board, clock, ids["B"], "ann", (41, 44), cost_usd=0.5, cache_read=100)
    at(clock, 3, 45)
    board.complete(ids["B"], "ann")
    at(clock, 3, 47)
    board.record_verification(ids["B"], PASS)
    at(clock, 3, 50)
    board.approve(ids["B"], "rev")
    # C: claim 5:00, review 5:20-5:30, rejected; claimed again 5:35, review 5:50-6:30: cycle
    # 90 min, review 10 + 40 = 50 min.
    at(clock, 5)
    board.claim(ids["C"], "cy", lease_ms=LONG)
    priced_run(board, clock, ids["C"], "cy", (1, 19), cost_usd=2.0, status=EXECUTION_FAILED)
    at(clock, 5, 20)
    board.complete(ids["C"], "cy")
    at(clock, 5, 30)
    board.reject(ids["C"], "rev", "again")
    at(clock, 5, 35)
    board.claim(ids["C"], "dee", lease_ms=LONG)
    priced_run(board, clock, ids["C"], "dee", (36, 49), cost_usd=0.75)
    at(clock, 5, 50)
    board.complete(ids["C"], "dee")
    at(clock, 6, 30)
    board.approve(ids["C"], "rev")
    # D: claim 10:00, an operator moves it to done at 11:00: cycle 60 min, no review.
    at(clock, 10)
    board.claim(ids["D"], "dan", lease_ms=LONG)
    at(clock, 11)
    board.move(ids["D"], t.DONE, reason="shipped by hand")
    # G: gus's lease lapses (his run times out), hal reclaims it and blocks it.
    at(clock, 12)
    board.claim(ids["G"], "gus", lease_ms=MIN)
    board.open_execution(ids["G"], "script", agent="gus")
    at(clock, 12, 5)
    board.reconcile_stale_tasks()
    at(clock, 12, 10)
    board.claim(ids["G"], "hal", lease_ms=LONG)
    board.block(ids["G"], "hal", "needs a decision")
    # H: ivy's lease lapses, nobody claims it again.
    at(clock, 13)
    board.claim(ids["H"], "ivy", lease_ms=MIN)
    at(clock, 13, 5)
    board.reconcile_stale_tasks()
    # F: in review since 24:00, with a failing verdict; K: held by jo at the end.
    at(clock, 23, 50)
    board.claim(ids["F"], "fay", lease_ms=LONG)
    at(clock, 24)
    board.complete(ids["F"], "fay")
    at(clock, 24, 5)
    board.record_verification(ids["F"], FAIL)
    at(clock, 25, 30)
    board.claim(ids["K"], "jo", lease_ms=LONG)
    clock.set(END)
    return ids


def figures(board: Board, **kwargs: str) -> Stats:
    return board.stats(**kwargs)  # type: ignore[arg-type]


def test_every_figure_of_a_known_day(board: Board, clock: ManualClock) -> None:
    ids = a_day_of_work(board, clock)
    stats = figures(board).to_json()
    assert (stats["since"], stats["until"], stats["window"]) == (
        END - 24 * HOUR + 1,
        END + 1,
        "24h",
    )
    through = stats["throughput"]
    done_hours = {b["hour"]: b["done"] for b in through["perHour"] if b["done"]}
    assert done_hours == {T0 + 3 * HOUR: 2, T0 + 6 * HOUR: 1, T0 + 11 * HOUR: 1}
    assert len(through["perHour"]) == 25  # every hour the window touches, zeros included
    assert (through["done"], through["perHourAvg"]) == (4, 0.167)
    assert through["overMs"] == 24 * HOUR and rate_text(stats) == "0.2/h over 24h"
    assert stats["cycleTime"] == {
        "count": 4, "p50Ms": 30 * MIN, "p90Ms": 90 * MIN, "maxMs": 90 * MIN,
    }  # fmt: skip
    review = stats["review"]
    assert {k: review[k] for k in ("count", "p50Ms", "p90Ms", "maxMs")} == {
        "count": 3, "p50Ms": 20 * MIN, "p90Ms": 50 * MIN, "maxMs": 50 * MIN,
    }  # fmt: skip
    assert review["humanShare"] == round(75 / 190, 4)  # (20 + 5 + 50 + 0) of (30 + 10 + 90 + 60)
    assert (review["waitingNow"], review["oldestWaitingMs"]) == (1, 2 * HOUR)
    assert [(b["label"], b["count"]) for b in review["distribution"]] == [
        ("<5m", 0), ("5m-15m", 1), ("15m-1h", 2), ("1h-4h", 0), ("4h-24h", 0), (">=24h", 0),
    ]  # fmt: skip
    assert stats["leases"] == {"expired": 2, "reclaimed": 1}
    assert stats["gate"] == {
        "runs": 3, "passed": 2, "failed": 1, "withDebt": 0, "passRate": 0.6667,
        "failRate": 0.3333,
    }  # fmt: skip
    cost = stats["cost"]
    assert (cost["totalUsd"], cost["tokens"], cost["runs"]) == (4.5, 1300, 5)
    hourly = {b["start"]: (b["runs"], b["costUsd"]) for b in cost["perHour"] if b["runs"]}
    assert hourly == {T0 + 3 * HOUR: (2, 1.75), T0 + 5 * HOUR: (2, 2.75), T0 + 12 * HOUR: (1, 0)}
    day = 86_400_000
    assert [(d["start"], d["runs"], d["costUsd"], d["budgetUsd"]) for d in cost["perDay"]] == [
        (T0 // day * day, 5, 4.5, None), (T0 // day * day + day, 0, 0.0, 20.0),
    ]  # fmt: skip  # yesterday was shown against today's budget
    assert [(a["agent"], a["runs"], a["costUsd"], a["tokens"]) for a in cost["perAgent"]] == [
        ("cy", 1, 2.0, 0), ("ann", 2, 1.75, 1300), ("dee", 1, 0.75, 0), ("gus", 1, 0.0, 0),
    ]  # fmt: skip
    assert [(c["taskId"], c["costUsd"]) for c in cost["perTask"]] == [
        (ids["C"], 2.75), (ids["A"], 1.25), (ids["B"], 0.5), (ids["G"], 0.0),
    ]  # fmt: skip
    agents = stats["agents"]
    assert (agents["active"], agents["holding"]) == (9, 1)
    table = {row["agent"]: row for row in agents["table"]}
    assert set(table) == {"ann", "cy", "dee", "dan", "gus", "hal", "ivy", "fay", "jo"}
    assert {name: row["claims"] for name, row in table.items()} == {
        "ann": 2, "cy": 1, "dee": 1, "dan": 1, "gus": 1, "hal": 1, "ivy": 1, "fay": 1, "jo": 1,
    }  # fmt: skip
    assert (table["ann"]["runsDone"], table["ann"]["runsFailed"]) == (2, 0)
    assert (table["cy"]["runsFailed"], table["gus"]["runsFailed"]) == (1, 1)  # failed, timed out
    assert (table["jo"]["holding"], table["jo"]["lastSeen"]) == (1, T0 + 25 * HOUR + 30 * MIN)
    assert table["ann"]["lastSeen"] == T0 + 3 * HOUR + 44 * MIN  # her last run's close
    assert agents["table"][0]["agent"] == "jo"  # the most recently seen first


def test_one_teams_figures(board: Board, clock: ManualClock) -> None:
    a_day_of_work(board, clock)
    stats = figures(board, team_id="web").to_json()
    assert stats["teamId"] == "web" and stats["throughput"]["done"] == 2
    assert (stats["cycleTime"]["p50Ms"], stats["cycleTime"]["p90Ms"]) == (30 * MIN, 90 * MIN)
    assert (stats["review"]["p50Ms"], stats["review"]["p90Ms"]) == (20 * MIN, 50 * MIN)
    assert stats["review"]["humanShare"] == round(70 / 120, 4)
    assert stats["review"]["waitingNow"] == 0
    assert stats["leases"] == {"expired": 0, "reclaimed": 0}
    assert stats["gate"]["runs"] == 1  # A's pass
    assert (stats["cost"]["totalUsd"], stats["cost"]["runs"]) == (4.0, 3)
    assert stats["cost"]["perDay"][0]["budgetUsd"] is None  # web has no daily budget of its own
    assert {row["agent"]: row["claims"] for row in stats["agents"]["table"]} == {
        "ann": 1, "cy": 1, "dee": 1,
    }  # fmt: skip


def test_a_teams_window_figures_read_the_window_not_the_team(tmp_path: Path) -> None:
    """SQLite's plans of the figures read from the tasks' window indexes, with `--team`: the
    window's index, never `tasks_team`. With no statistics SQLite preferred the team's equality,
    so each figure read every task the team ever had (at 100,000 tasks over 20 teams, ~5 ms a
    figure where the day's window takes ~0.3 ms)."""
    import sqlite3

    from boardlib.store.sqlite import SqliteTx

    Board(tmp_path / "board.db").close()
    conn = sqlite3.connect(tmp_path / "board.db")
    plans: dict[str, list[str]] = {}
    figure = ""

    class Planned(SqliteTx):
        def _fetchall(self, query, params=()):  # type: ignore[no-untyped-def]
            rows = conn.execute(f"EXPLAIN QUERY PLAN {query}", params)
            plans.setdefault(figure, []).extend(str(row[-1]) for row in rows)
            return []

        def _fetchone(self, query, params=()):  # type: ignore[no-untyped-def]
            self._fetchall(query, params)
            return {}

    tx = Planned(conn)
    for figure in ("throughput_by_hour", "cycle_times", "review_waits"):
        getattr(tx, figure)(T0, END, "web")
    for figure in ("review_queue", "holders_now"):
        getattr(tx, figure)("web")
    conn.close()
    for name, lines in plans.items():
        on_tasks = [line for line in lines if " tasks " in f"{line} "]
        assert on_tasks and all("USING" in line for line in on_tasks), (name, lines)
        assert not any("tasks_team" in line for line in lines), (name, lines)
    assert set(plans) == {"throughput_by_hour", "cycle_times", "review_waits", "review_queue",
                          "holders_now"}  # fmt: skip


def test_a_wider_window_reaches_back_and_an_empty_one_counts_nothing(
    board: Board, clock: ManualClock
) -> None:
    a_day_of_work(board, clock)
    week = figures(board, since="7d").to_json()
    assert week["throughput"]["done"] == 5 and week["cost"]["totalUsd"] == 13.5  # E counts
    assert week["window"] == "7d" and len(week["cost"]["perDay"]) == 8
    clock.advance(ms=30 * 86_400_000)
    quiet = figures(board, since="1h").to_json()
    assert quiet["throughput"]["done"] == 0 and quiet["cycleTime"] == {
        "count": 0, "p50Ms": None, "p90Ms": None, "maxMs": None,
    }  # fmt: skip
    assert quiet["review"]["humanShare"] is None and quiet["gate"]["passRate"] is None
    assert quiet["review"]["waitingNow"] == 1  # the queue is now, whatever the window


def test_a_young_boards_rate_divides_by_its_age(board: Board, clock: ManualClock) -> None:
    """Found by an operator: a 10-minute-old board's stats read "done/h 300 (12.5/h)", its work
    divided by the whole 24-hour window. The average divides by the part of the window the board
    has existed (from its first task's creation) and says so; an older board's by the window."""
    at(clock, 0)
    ids = [board.create_task(f"t{n}").id for n in range(3)]
    for task_id in ids:
        board.claim(task_id, "ann")
        board.move(task_id, t.DONE, reason="done by hand")
    at(clock, 0, 10)
    young = figures(board).to_json()
    through = young["throughput"]
    assert through["perHourAvg"] == round(3 * HOUR / (10 * MIN + 1), 3)  # 18/h, not 0.125/h
    assert (through["done"], through["overMs"]) == (3, 10 * MIN + 1)  # `now` is in the window
    assert rate_text(young) == "18/h over its 10 min"
    assert figures(board, since="1h").to_json()["throughput"]["perHourAvg"] == 18.0
    at(clock, 0, 0.5)  # half a minute old: counted over a minute, not a burst over seconds
    assert figures(board).to_json()["throughput"]["overMs"] == MIN
    at(clock, 25)
    old = figures(board, since="7d").to_json()  # younger than the week: over its 25 hours
    assert old["throughput"]["overMs"] == 25 * HOUR + 1
    assert rate_text(old) == "0.1/h over its 25 h"
    day = figures(board).to_json()  # the board is older than a day: over the whole window
    assert day["throughput"]["overMs"] == 24 * HOUR and rate_text(day) == "0/h over 24h"


def test_a_teams_rate_divides_by_the_teams_age(board: Board, clock: ManualClock) -> None:
    """Found by review: `kanban stats --team web` divided the team's work by the board's age, so
    a team that began ten minutes ago on a day-old board read its 3 done as 0.1/h. The average
    divides by the age of what it counted: the team's first task's."""
    at(clock, 0)
    board.create_task("the board's first task")
    at(clock, 30)
    ids = [board.create_task(f"w{n}", team_id="web").id for n in range(3)]
    board.create_task("an epic's part", team_id="mobile", parent_task_id=ids[0])
    for task_id in ids:
        board.claim(task_id, "ann")
        board.move(task_id, t.DONE, reason="done by hand")
    at(clock, 30, 10)
    web = figures(board, team_id="web").to_json()
    assert (web["throughput"]["done"], web["throughput"]["overMs"]) == (3, 10 * MIN + 1)
    assert rate_text(web) == "18/h over its 10 min"
    mobile = figures(board, team_id="mobile").to_json()  # a subtask's team: from its creation
    assert mobile["throughput"]["overMs"] == 10 * MIN + 1
    whole = figures(board).to_json()  # the board is older than the day: over the whole window
    assert whole["throughput"]["overMs"] == 24 * HOUR and rate_text(whole) == "0.1/h over 24h"
    nobody = figures(board, team_id="nobody").to_json()  # no task of the team: the window
    assert nobody["throughput"]["overMs"] == 24 * HOUR


def test_windows_are_durations() -> None:
    assert [parse_window(w) for w in ("90m", "24h", "7d", "2w")] == [
        90 * MIN, 24 * HOUR, 7 * 24 * HOUR, 14 * 24 * HOUR,
    ]  # fmt: skip
    for bad in ("", "0h", "24", "1y", "-1h", "401d", " 5 h", None, 24):
        with pytest.raises(BoardError) as refused:
            parse_window(bad)
        assert refused.value.reason is Reason.INVALID_INPUT


def test_kanban_stats_prints_the_same_figures(board_path: Path, clock: ManualClock) -> None:
    with Board(board_path, clock=clock) as board:
        a_day_of_work(board, clock)
        expected = figures(board).to_json()
    kanban = Kanban(board_path, now_ms=END)
    assert kanban.ok("stats") == expected
    team = kanban.ok("stats", "--since", "7d", "--team", "web")
    assert team["throughput"]["done"] == 2 and team["window"] == "7d"
    table = kanban.run("stats", "--format", "table")
    assert table.code == 0 and "p50 30 min" in table.out and "fay" in table.out
    refused = kanban.run("stats", "--since", "forever")
    assert refused.code == 2 and refused.error["reason"] == "invalid_input"


def test_the_money_in_the_table_adds_up_as_shown(board_path: Path, clock: ManualClock) -> None:
    """The table's total read $2.27 for $2.275 while its agents' rows, $1.50, $0.40 and $0.38, add
    up to $2.28. Every amount is drawn from whole micro-dollars with one rule, half up."""
    with Board(board_path, clock=clock) as board:
        for agent, cost in (("ada", 1.5), ("bob", 0.4), ("cy", 0.375)):
            at(clock, 20)
            task = board.create_task(f"the work of {agent}")
            board.claim(task.id, agent)
            priced_run(board, clock, task.id, agent, (1, 2), cost_usd=cost)
    table = Kanban(board_path, now_ms=END).run("stats", "--format", "table")
    assert table.code == 0 and "$2.28 over 3 runs" in table.out
    assert all(shown in table.out for shown in ("$1.50", "$0.40", "$0.38"))


def test_the_table_counts_one_in_the_singular(board_path: Path, clock: ManualClock) -> None:
    """One task through claim to done read "(1 tasks)"."""
    with Board(board_path, clock=clock) as board:
        at(clock, 20)
        task = board.create_task("the one")
        board.claim(task.id, "ada")
        priced_run(board, clock, task.id, "ada", (1, 2), cost_usd=0.5)
        board.complete(task.id, "ada")
        board.approve(task.id, "bob")
    table = Kanban(board_path, now_ms=END).run("stats", "--format", "table", env={"COLUMNS": "200"})
    assert table.code == 0, str(table)
    shown = " ".join(table.out.split())
    assert "(1 task)" in shown and "over 1 run," in shown, shown


def test_the_tables_daily_budget_is_the_whole_days_whatever_the_window(
    board_path: Path, clock: ManualClock
) -> None:
    """With `--since 1h` the table set the window's spend (the last hour's) against the whole day's
    limit, undercounting the day. The daily budget's line is today's whole spend (`dailyBudgets`),
    said to be so; the days show the window's part."""
    with Board(board_path, clock=clock) as board:
        at(clock, 5)  # 05:00 UTC, three hours before "now"
        board.set_daily_budget(usd=20, reason="the board's ceiling")
        task = board.create_task("priced twice")
        board.claim(task.id, "ada", lease_ms=4 * HOUR)
        priced_run(board, clock, task.id, "ada", (0, 1), cost_usd=2.0)  # closes at 05:01
        at(clock, 7, 49)
        priced_run(board, clock, task.id, "ada", (49, 50), cost_usd=1.5)  # closes at 07:50
    kanban = Kanban(board_path, now_ms=T0 + 8 * HOUR)
    doc = kanban.ok("stats", "--since", "1h")
    assert doc["cost"]["totalUsd"] == 1.5  # the window holds the later run alone
    table = kanban.run("stats", "--since", "1h", "--format", "table", env={"COLUMNS": "200"})
    assert table.code == 0, str(table)
    shown = " ".join(table.out.split())
    assert "daily budget, all of today" in shown, shown
    assert "spent 2027-01-15 UTC, whole day / limit" in shown, shown
    assert "board $3.50 / $20.00" in shown, shown
    assert "/ $20.00" not in shown.replace("board $3.50 / $20.00", ""), shown  # no window's


def test_the_jsons_day_budget_is_named_a_days_and_each_bucket_says_what_it_counts(
    board_path: Path, clock: ManualClock
) -> None:
    """`perDay`'s `budgetUsd` beside `costUsd` read as the window's budget: with `--since 1h` an
    hour's spend stood beside a whole day's limit under one pair of names. The limit is also
    `dayBudgetUsd` (`budgetUsd` kept: released), and each bucket's `countedSince`/
    `countedUntil` say the part of its hour or day inside the window, which its cost counts."""
    with Board(board_path, clock=clock) as board:
        at(clock, 5)
        board.set_daily_budget(usd=20, tokens=9000, reason="the board's ceiling")
        task = board.create_task("priced twice")
        board.claim(task.id, "ada", lease_ms=4 * HOUR)
        priced_run(board, clock, task.id, "ada", (0, 1), cost_usd=2.0)  # closes at 05:01
        at(clock, 7, 49)
        priced_run(board, clock, task.id, "ada", (49, 50), cost_usd=1.5)  # closes at 07:50
    now = T0 + 8 * HOUR + 30 * MIN
    doc = Kanban(board_path, now_ms=now).ok("stats", "--since", "1h")
    since, until = doc["since"], doc["until"]
    (today,) = doc["cost"]["perDay"]
    assert (today["costUsd"], today["dayBudgetUsd"], today["dayBudgetTokens"]) == (1.5, 20, 9000)
    assert (today["budgetUsd"], today["budgetTokens"]) == (20, 9000)
    assert (today["countedSince"], today["countedUntil"]) == (since, until)
    assert until - since == HOUR
    hours = [(b["start"], b["countedSince"], b["countedUntil"]) for b in doc["cost"]["perHour"]]
    assert hours == [
        (T0 + 7 * HOUR, since, T0 + 8 * HOUR), (T0 + 8 * HOUR, T0 + 8 * HOUR, until),
    ]  # fmt: skip
    assert all(b["dayBudgetUsd"] is None for b in doc["cost"]["perHour"])
    assert [(d["unit"], d["spent"]) for d in doc["cost"]["dailyBudgets"]] == [
        ("usd", 3.5), ("tokens", 0),
    ]  # fmt: skip


def test_a_slow_rate_is_not_rounded_to_nothing(board: Board, clock: ManualClock) -> None:
    """Found in the TUI's stats screen (`S`) and `kanban stats`: a day-old board with one task
    done in the day read `1 done`, `0/h over 24h`. A rate under 0.05/h keeps one figure."""
    at(clock, 0)
    board.create_task("the board's first task")
    at(clock, 30)
    task_id = board.create_task("one").id
    board.claim(task_id, "ann")
    board.move(task_id, t.DONE, reason="done by hand")
    day = figures(board).to_json()
    assert day["throughput"]["done"] == 1 and day["throughput"]["overMs"] == 24 * HOUR
    assert rate_text(day) == "0.04/h over 24h"
    week = figures(board, since="7d").to_json()  # over its 30 h: 0.033/h
    assert rate_text(week) == "0.03/h over its 30 h"


def test_a_runtimes_sessions_are_one_agents_row_when_asked(
    board_path: Path, clock: ManualClock
) -> None:
    """With `kanban init --per-session` each session acts as NAME-PID, and `kanban stats` listed a
    row per session: a week of restarts, a row each. With --fold-sessions the rows of NAME-PID
    fold under NAME (the naming rule of `actors.session_agent`, read back by
    `actors.runtime_agent`), summed and saying how many; by default each name is its own row (the
    fold reads names alone, and the docs' own agents are worker-1, worker-2)."""
    first, second = session_agent("ada", 4242), session_agent("ada", 77)
    with Board(board_path, clock=clock) as board:
        at(clock, 20)
        for agent, cost in ((first, 1.5), (second, 0.25), ("bob", 1.0), ("worker-x", 0.5)):
            task = board.create_task(f"priced at {cost}")
            board.claim(task.id, agent, lease_ms=LONG)
            priced_run(board, clock, task.id, agent, (1, 2), cost_usd=cost)
        held = board.create_task("held")
        board.claim(held.id, second, lease_ms=10 * HOUR)
    kanban = Kanban(board_path, now_ms=END)
    doc = kanban.ok("stats", "--fold-sessions")
    table = {row["agent"]: row for row in doc["agents"]["table"]}
    assert set(table) == {"ada", "bob", "worker-x"}, table
    ada = table["ada"]
    assert (ada["sessions"], ada["claims"], ada["runsDone"], ada["costUsd"]) == (2, 3, 2, 1.75)
    assert (ada["holding"], table["bob"]["sessions"]) == (1, 1)
    assert (doc["agents"]["active"], doc["agents"]["holding"]) == (3, 1)
    assert [(a["agent"], a["runs"], a["costUsd"]) for a in doc["cost"]["perAgent"]] == [
        ("ada", 2, 1.75), ("bob", 1, 1.0), ("worker-x", 1, 0.5),
    ]  # fmt: skip
    each = kanban.ok("stats")
    assert {row["agent"] for row in each["agents"]["table"]} == {first, second, "bob", "worker-x"}
    assert each["agents"]["active"] == 4
    with Board(board_path, clock=ManualClock(END), read_only=True) as board:
        assert each == board.stats().to_json()
    shown = kanban.run("stats", "--fold-sessions", "--format", "table", env={"COLUMNS": "200"})
    assert shown.code == 0 and "ada (2 sessions)" in shown.out, str(shown)
    assert first not in shown.out and second not in shown.out, shown.out


def test_a_session_name_reads_back_as_its_runtimes_and_no_other_does() -> None:
    for agent in ("ada", "worker-1", "a-b"):
        for pid in (2, 4242, 4_194_304):  # Linux's pid_max at most
            assert runtime_agent(session_agent(agent, pid)) == agent
    for own in ("ada", "ada-0", "ada-12345678", "-12", "ada-x1"):
        assert runtime_agent(own) == own
