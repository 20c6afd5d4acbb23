"""Budgets the board enforces: what applies to a task, when one is spent, and how that is said.

A task's `budget_usd`/`budget_tokens` covers the task and every descendant (its subtree spend is
kept on the row, `budget_sql`). A daily budget covers the board, or one team, for one UTC day.
A budget is spent when what was recorded against it reaches its limit: then no run starts under
it (`budget_exceeded`), and the run whose close spends it moves its task to blocked. Pure rules
over the rows the board reads in its transaction; design and surfaces: docs/budgets.md
"""

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from . import transitions as t
from .actors import SYSTEM, is_agent
from .errors import BoardError, Reason, invalid_input
from .events import EventKind
from .records import (
    BOARD_SCOPE,
    BUDGET_BOARD_DAILY,
    BUDGET_TASK,
    BUDGET_TEAM_DAILY,
    BUDGET_TOKENS,
    BUDGET_USD,
    DAY_MS,
    MICROS_PER_USD,
    RUN_COUNTED_AT,
    TEAM_SCOPE_PREFIX,
    TOKENS_MAX,
    USD_MAX,
    BudgetReport,
    BudgetStanding,
    DailyBudget,
    Task,
)
from .shell import shell_command
from .store.base import Row, Tx

# The board's own block when a run spends a budget: moved by `system` with this verb, its reason
# starting so (people read the rest). The move is what makes it a budget block; an agent's
# reason may start with the same words and stays an agent's block (`blocked_by_budget`).
BLOCK_VERB = "budget"
BLOCKED_PREFIX = f"{Reason.BUDGET_EXCEEDED.value}: "
AUDIT_ACTION = EventKind.BUDGET_CHANGED.value  # the audit row of a change: the event's word


class _Keep:
    """`set_budget(usd=KEEP)`: leave that budget as it is (None removes it)."""

    def __repr__(self) -> str:
        return "KEEP"


KEEP: Any = _Keep()


def to_micros(usd: float) -> int:
    """Dollars as whole micro-dollars, rounded half up (as SQL's ROUND does for the backfill)."""
    return int(usd * MICROS_PER_USD + 0.5)


def whole_micros(usd: float) -> float:
    """A run's cost as the ledger keeps it: rounded once to whole micro-dollars when accepted,
    so the run row, the task's cost and every budget count the same amount."""
    return to_micros(usd) / MICROS_PER_USD


def run_tokens(row: Any) -> int:
    """The tokens a run counts against a budget: input, output, cache read and cache write."""
    counts = (row["input_tokens"], row["output_tokens"], row["cache_read"], row["cache_write"])
    return sum(count or 0 for count in counts)


def day_of(now_ms: int) -> int:
    """The UTC day (epoch days) a daily budget counts in."""
    return now_ms // DAY_MS


def run_day(run: Row) -> int:
    """The UTC day a run's cost counts in: its close's (`RUN_COUNTED_AT`), a late cost's too. A
    late cost reported after midnight lands on the day its run closed, as `kanban stats` counts
    it: the tokens were spent while it ran, and each day's spend reads the same everywhere."""
    return day_of(int(run[RUN_COUNTED_AT]))


def team_scope(team_id: str) -> str:
    return f"{TEAM_SCOPE_PREFIX}{team_id}"


def daily_scopes(team_id: str | None) -> list[str]:
    """The daily budgets that may cover a task of `team_id`: the board's, and its team's."""
    return [BOARD_SCOPE, *([team_scope(team_id)] if team_id else [])]


def usd_limit(value: Any, field: str) -> float | None:
    """A dollar budget from input: None (no budget) or a non-negative number, in whole
    micro-dollars as costs are (`whole_micros`): a limit the board cannot count to is not kept
    (`1e-7` is a $0 budget, `5.0000004` is $5)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= USD_MAX:
        raise invalid_input(
            f"{field} must be a number of dollars from 0 to {USD_MAX:g}", field=field
        )
    return whole_micros(float(value))


def token_limit(value: Any, field: str) -> int | None:
    """A token budget from input: None (no budget) or a non-negative whole number."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= TOKENS_MAX:
        raise invalid_input(
            f"{field} must be a whole number of tokens from 0 to {TOKENS_MAX:g}", field=field
        )
    return value


def daily_answer(stored: DailyBudget | None, team_id: str | None) -> DailyBudget:
    """What a daily budget's change answers on every surface (`kanban budget set --daily-*`,
    `PUT /api/board/budgets/daily`'s `dailyBudget`): the budget as it now stands, or the
    team's with every field null once both limits were removed."""
    if stored is not None:
        return stored
    return DailyBudget(
        team_id=team_id, daily_usd=None, daily_tokens=None, updated_at=None, updated_by=None
    )


def task_standings(chain: Iterable[Row]) -> list[BudgetStanding]:
    """The task budgets over a task (its own and its ancestors', nearest first), each unit apart.
    A dollar limit is read in whole micro-dollars too: one stored before limits were rounded."""
    standings = []
    for row in chain:
        if row["budget_usd"] is not None:
            standings.append(
                BudgetStanding(
                    scope=BUDGET_TASK,
                    unit=BUDGET_USD,
                    limit=whole_micros(row["budget_usd"]),
                    spent=row["subtree_cost_micros"] / MICROS_PER_USD,
                    owner=row["id"],
                )
            )
        if row["budget_tokens"] is not None:
            standings.append(
                BudgetStanding(
                    scope=BUDGET_TASK,
                    unit=BUDGET_TOKENS,
                    limit=int(row["budget_tokens"]),
                    spent=int(row["subtree_tokens"]),
                    owner=row["id"],
                )
            )
    return standings


def daily_standings(rows: Iterable[Row], day: int) -> list[BudgetStanding]:
    """The daily budgets (the board's, the team's) and the day's spend against them."""
    standings = []
    for row in rows:
        scope = row["scope"]
        team = scope[len(TEAM_SCOPE_PREFIX) :] if scope.startswith(TEAM_SCOPE_PREFIX) else None
        kind = BUDGET_TEAM_DAILY if team is not None else BUDGET_BOARD_DAILY
        if row["daily_usd"] is not None:
            standings.append(
                BudgetStanding(
                    scope=kind,
                    unit=BUDGET_USD,
                    limit=whole_micros(row["daily_usd"]),
                    spent=row["cost_micros"] / MICROS_PER_USD,
                    owner=team,
                    day=day,
                )
            )
        if row["daily_tokens"] is not None:
            standings.append(
                BudgetStanding(
                    scope=kind,
                    unit=BUDGET_TOKENS,
                    limit=int(row["daily_tokens"]),
                    spent=int(row["tokens"]),
                    owner=team,
                    day=day,
                )
            )
    return standings


def standings(tx: Tx, task: Task, now: int) -> list[BudgetStanding]:
    """Every budget over `task` and its spend now, in the order a refusal names them: the
    task's own, its ancestors' (nearest first), its team's daily budget, the board's."""
    day = day_of(now)
    daily = daily_standings(tx.daily_standings(daily_scopes(task.team_id), day), day)
    daily.sort(key=lambda standing: standing.scope != BUDGET_TEAM_DAILY)
    return [*task_standings(tx.budget_chain(task.id)), *daily]


def check_team_move(tx: Tx, task: Task, team_id: str | None, actor: str) -> None:
    """An agent's edit of a task's team: refused (`operator_only`) when a daily budget covers
    the team it leaves, as that budget stops counting the task's runs (an agent under a spent
    team budget moved its task to another team and started its run). Agents never take work
    from under a budget; an operator may."""
    if not is_agent(actor) or not task.team_id or (team_id or None) == task.team_id:
        return
    if tx.daily_budget(team_scope(task.team_id)) is None:
        return
    raise BoardError(
        Reason.OPERATOR_ONLY,
        f"cannot move {task.id} out of team {task.team_id} as {actor}: team {task.team_id}'s "
        "daily budget covers it, and only an operator moves work from under a budget (ask a "
        "person)",
        id=task.id,
        field="teamId",
    )


def nearest(report: BudgetReport, count: int) -> list[BudgetStanding]:
    """Of the task budgets `Board.budget_report` lists, each open task's most spent one, the
    nearest its limit (or furthest past it) first, the first `count`: the report's own top, for
    a glance (the TUI's stats screen), so a parent spent by its children is there as in the
    report. A done or cancelled task spends no more: what it spent is history, not a risk."""
    most: dict[str | None, BudgetStanding] = {}
    for standing in report.tasks:
        if report.statuses.get(str(standing.owner)) in t.TERMINAL:
            continue
        kept = most.get(standing.owner)
        if kept is None or standing.fraction > kept.fraction:
            most[standing.owner] = standing
    return sorted(most.values(), key=lambda standing: standing.fraction, reverse=True)[:count]


def nearest_teams(report: BudgetReport, count: int) -> list[BudgetStanding]:
    """Of the teams' daily budgets `Board.budget_report` lists, each team's most spent one, the
    most spent first, the first `count`: for a glance beside the board's own (the TUI's stats
    screen), so a team's spent budget shows where the operator looks."""
    most: dict[str | None, BudgetStanding] = {}
    for standing in report.daily:
        if standing.scope != BUDGET_TEAM_DAILY:
            continue
        kept = most.get(standing.owner)
        if kept is None or standing.fraction > kept.fraction:
            most[standing.owner] = standing
    return sorted(most.values(), key=lambda standing: standing.fraction, reverse=True)[:count]


def first_spent(standings: Sequence[BudgetStanding]) -> BudgetStanding | None:
    """The budget to name when several are spent: the task's own first, then the nearest
    ancestor's, then the team's and the board's (the order `standings` come in)."""
    return next((standing for standing in standings if standing.exhausted), None)


CENT_MICROS = MICROS_PER_USD // 100


def amount(value: float, unit: str) -> str:
    """`$5.30`, `$0.004`, `$0.00004`, `12,000 tokens`: every money figure, drawn from whole
    micro-dollars with one rule, half up, so a total rounds as its rows do ($2.275 is `$2.28`,
    as $0.375 is `$0.38`). Below a cent, to the micro-dollar the board counts in."""
    if unit == BUDGET_TOKENS:
        return f"{int(value):,} tokens"
    micros = to_micros(value)
    if micros >= CENT_MICROS or micros == 0:
        cents = (micros + CENT_MICROS // 2) // CENT_MICROS
        return f"${cents // 100:,}.{cents % 100:02d}"
    return "$" + f"0.{micros:06d}".rstrip("0").ljust(5, "0")


def describe(standing: BudgetStanding, task_id: str | None = None) -> str:
    """Which budget, in words: `the budget of TASK-3`, `its parent TASK-1's budget`, `team
    web's daily budget`, `the board's daily budget`."""
    return budget_name(standing.scope, standing.unit, standing.owner, task_id)


def budget_name(scope: str, unit: str, owner: str | None, task_id: str | None = None) -> str:
    """`describe` from the parts a `budget_changed` event keeps (its scope, unit, task or team)."""
    noun = "token budget" if unit == BUDGET_TOKENS else "budget"
    if scope == BUDGET_TASK:
        if owner == task_id or task_id is None:
            return f"the {noun} of {owner}"
        return f"the {noun} of its ancestor {owner}"
    if scope == BUDGET_TEAM_DAILY:
        return f"team {owner}'s daily {noun}"
    return f"the board's daily {noun}"


def spent_words(standing: BudgetStanding) -> str:
    return (
        f"{amount(standing.spent, standing.unit)} recorded against "
        f"{amount(standing.limit, standing.unit)}"
    )


def spent_sentence(standing: BudgetStanding, task_id: str | None = None) -> str:
    """`the budget of TASK-3 is spent ($2.50 recorded against $2.00)`: a refusal's, a budget
    block's and a spending close's words for the budget."""
    return f"{describe(standing, task_id)} is spent ({spent_words(standing)})"


def closed_over(document: Mapping[str, Any], task_id: str) -> str:
    """A close's `budgetExceeded` (its JSON) for people: which budget it spent, in dollars or
    tokens as every amount is drawn, and that the task waits for an operator now."""
    standing = BudgetStanding(
        scope=str(document["scope"]),
        unit=str(document["unit"]),
        limit=float(document["limit"]),
        spent=float(document["spent"]),
        owner=document.get("owner"),
        day=document.get("day"),
    )
    return (
        f"{spent_sentence(standing, task_id)}: {task_id} is blocked until an operator raises it "
        f"({raise_hint(standing)})"
    )


def raise_hint(standing: BudgetStanding) -> str:
    """The operator's command that raises this budget (a team id is an agent's word: quoted)."""
    if standing.scope == BUDGET_TASK:
        flag = "--tokens" if standing.unit == BUDGET_TOKENS else "--usd"
        which = [str(standing.owner), flag]
    else:
        daily = "--daily-tokens" if standing.unit == BUDGET_TOKENS else "--daily-usd"
        team = ["--team", str(standing.owner)] if standing.scope == BUDGET_TEAM_DAILY else []
        which = [*team, daily]
    return shell_command("kanban", "budget", "set", *which, "N", "--reason", "WHY")


def short_of(standing: BudgetStanding, limit: float, *, kept: bool = False) -> str | None:
    """Why `limit` would not lift `standing`: a budget at or below what is recorded against it
    is still spent, and the task it blocked stays blocked. None when `limit` covers the spend.
    `kept`: said once the limit is set (`kanban budget set` takes it), not before (the TUI)."""
    after = dataclasses.replace(standing, limit=limit)
    if not after.exhausted:
        return None
    still = "is still spent" if kept else "would still be spent"
    blocked = ": a task it blocked stays blocked" if kept else ""
    return (
        f"{describe(after)} {still} ({spent_words(after)}){blocked}; "
        f"raise it above {amount(after.spent, after.unit)}"
    )


# What the holder refused a run does meanwhile (the CLI's refusal named only the operator's command,
# which an agent is refused, so an agent released the task)
HOLDER_NEXT = "block the task saying so, not release it: "


def refusal(task_id: str, action: str, standing: BudgetStanding, then: str = "") -> BoardError:
    """`budget_exceeded`: no run starts under a spent budget. Retrying does not help; an
    operator raising the budget does (or the next UTC day, for a daily one). `action` names what
    was refused, `{task}` standing for the task: `start a run on {task}`; `then`, what the one
    refused does meanwhile (`HOLDER_NEXT`)."""
    later = " (or wait for the next UTC day)" if standing.day is not None else ""
    return BoardError(
        Reason.BUDGET_EXCEEDED,
        f"cannot {action.format(task=task_id)}: {spent_sentence(standing, task_id)}; "
        f"{then}an operator must raise it{later}: "
        f"{raise_hint(standing)}",  # the command last: copied as it stands
        id=task_id,
        budget=standing.to_json(),
    )


def held_refusal(task_id: str, verb: str, current: str, standing: BudgetStanding) -> BoardError:
    """A holder's verb (heartbeat, complete...) on a task its spent budget blocked: `invalid_state`
    as on any blocked task, but saying why and what now: the holder stops, an operator raises
    the budget and unblocks the task (it said only `blocked`)."""
    return BoardError(
        Reason.INVALID_STATE,
        f"cannot {verb}: {task_id} is blocked, as {spent_sentence(standing, task_id)}; stop "
        f"working on it: an operator must raise the budget, then unblock the task: "
        f"{raise_hint(standing)}",
        current=current,
        expected=t.IN_PROGRESS,
        id=task_id,
        budget=standing.to_json(),
    )


def no_new_run(task_id: str, standing: BudgetStanding) -> str:
    """What a refusal adds when no run can start on `task_id` either (a closed run closed again)."""
    return (
        f"no new run starts on {task_id} while {spent_sentence(standing, task_id)}: an operator "
        f"must raise it: {raise_hint(standing)}"
    )


def blocked_reason(task_id: str, standing: BudgetStanding) -> str:
    """The blocked reason of a task whose run spent a budget."""
    return (
        f"{BLOCKED_PREFIX}{spent_sentence(standing, task_id)}; "
        f"raise it with `{raise_hint(standing)}`, then unblock"
    )


def blocked_by_budget(tx: Tx, task: Task) -> bool:
    """Whether `task` is blocked because a budget over it is spent: the board moved it there
    itself (the move's event: actor `system`, verb `budget`, the reason it holds). The reason's
    words alone prove nothing, as an agent writes any reason it likes."""
    reason = task.blocked_reason
    if task.status != t.BLOCKED or not reason or not reason.startswith(BLOCKED_PREFIX):
        return False  # no event read for every other block
    entry = tx.status_entry(task.id)
    if entry is None or entry["actor"] != SYSTEM:
        return False
    try:
        data = json.loads(entry["data"])
    except ValueError:
        return False
    return (
        isinstance(data, dict)
        and data.get("verb") == BLOCK_VERB
        and data.get("to") == t.BLOCKED
        and str(data.get("reason", "")).strip() == reason
    )


def audit_detail(changed: Mapping[str, Any]) -> str:
    """The audit row's detail of a budget change: which budget, from, to and why, as JSON."""
    return json.dumps(dict(changed), separators=(",", ":"), sort_keys=True)
