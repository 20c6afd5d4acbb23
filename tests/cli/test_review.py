"""Transfer rules and review through the CLI: builder is not judge, and every refusal changes
nothing."""

from pathlib import Path

import pytest

from tests.cli.conftest import LEASE_MS, Kanban, unchanged


@pytest.fixture
def kanban(board_path: Path) -> Kanban:
    return Kanban(board_path)


def claimed_by(kanban: Kanban, agent: str) -> dict[str, object]:
    with kanban.board() as board:
        task = board.create_task("build it")
        return board.claim(task.id, agent).to_json()


def test_transfer_hands_over_with_a_fresh_lease_and_a_new_epoch(kanban: Kanban) -> None:
    task = claimed_by(kanban, "bob")
    kanban.advance(minutes=7)
    moved = kanban.ok(
        "task", "claim", task["id"], "--agent", "bob", "--transfer", "--to", "charlie"
    )
    assert moved["assigneeAgentId"] == "charlie"
    assert moved["status"] == "in_progress"
    assert moved["leaseUntil"] == kanban.now + LEASE_MS
    assert moved["claimEpoch"] == task["claimEpoch"] + 1
    assert moved["holders"] == ["bob", "charlie"]

    # bob no longer holds it: his verbs are refused and change nothing.
    before = kanban.row(task["id"])
    kanban.refused(
        "task", "log-progress", task["id"], "-a", "bob", "-m", "x", reason="not_assignee"
    )
    kanban.refused(
        "task", "claim", task["id"], "-a", "bob", "--transfer", "--to", "dave",
        reason="not_assignee",
    )  # fmt: skip
    assert kanban.row(task["id"]) == before

    # The `transfer` verb is the same rule under its own name.
    again = kanban.ok("task", "transfer", task["id"], "-a", "charlie", "--to", "dave")
    assert again["assigneeAgentId"] == "dave"


@pytest.mark.parametrize(
    ("args", "reason", "says"),
    [
        (("-a", "bob", "--transfer", "--to", "bob"), "invalid_input", "yourself"),
        (("-a", "mallory", "--transfer", "--to", "eve"), "not_assignee", "held by bob"),
        (("-a", "bob", "--transfer", "--to", "eve", "--epoch", "99"), "stale_claim", "never had"),
    ],
)
def test_transfer_refusals_change_nothing(
    kanban: Kanban, args: tuple[str, ...], reason: str, says: str
) -> None:
    task = claimed_by(kanban, "bob")
    before = kanban.snapshot()
    error = kanban.refused("task", "claim", task["id"], *args, reason=reason)
    assert says in error["error"]
    assert kanban.snapshot() == before


def test_only_an_in_progress_task_can_be_transferred(kanban: Kanban) -> None:
    with kanban.board() as board:
        task = board.create_task("still todo")
    before = kanban.snapshot()
    error = kanban.refused(
        "task", "claim", task.id, "-a", "bob", "--transfer", "--to", "eve", reason="invalid_state"
    )
    assert error["error"] == (
        "cannot transfer: task is todo (current state: todo, expected: in_progress)"
    )
    assert (error["current"], error["expected"]) == ("todo", "in_progress")
    assert kanban.snapshot() == before


@pytest.mark.parametrize(
    ("status", "then"),
    [
        ("todo", "nothing is built yet: an agent claims and completes it first"),
        ("in_progress", "its holder completes it first"),
    ],
)
def test_approving_work_not_in_review_says_what_gets_it_there(
    kanban: Kanban, status: str, then: str
) -> None:
    """Approving a todo task said its status twice (`task is todo (current state: todo, ...)`)
    and no next step. It says it once, in the seed's words, and what gets it to review."""
    task = claimed_by(kanban, "alice") if status == "in_progress" else None
    if task is None:
        with kanban.board() as board:
            task = board.create_task("not built").to_json()
    with unchanged(kanban.db):
        error = kanban.refused("task", "approve", task["id"], "-a", "rita", reason="invalid_state")
    assert error["error"] == (
        f"cannot approve {task['id']}: only work in review is judged; {then} (current state: "
        f"{status}, expected: in_review)"
    )
    assert error["error"].count(status) == 1
    assert (error["current"], error["expected"]) == (status, "in_review")


@pytest.mark.parametrize(
    "args",
    [
        ("-a", "bob", "--transfer"),  # no --to
        ("-a", "bob", "--to", "eve"),  # --to without --transfer
        ("-a", "bob", "--epoch", "1"),  # an epoch on a plain claim
        ("--transfer", "--to", "eve"),  # no --agent
    ],
)
def test_claim_usage_errors_exit_2_with_one_json_line(
    kanban: Kanban, args: tuple[str, ...]
) -> None:
    task = claimed_by(kanban, "bob")
    before = kanban.snapshot()
    result = kanban.run("task", "claim", task["id"], *args)
    assert result.code == 2, str(result)
    assert result.out == ""
    assert (result.error["reason"], result.error["command"]) == ("usage", "kanban task claim")
    assert kanban.snapshot() == before


def test_builder_is_not_judge(kanban: Kanban) -> None:
    task = claimed_by(kanban, "alice")
    kanban.ok("task", "complete", task["id"], "--agent", "alice", "--summary", "parser written")

    before = kanban.snapshot()
    error = kanban.refused("task", "approve", task["id"], "--agent", "alice", reason="self_review")
    assert "another agent must review" in error["error"]
    kanban.refused(
        "task", "reject", task["id"], "-a", "alice", "--reason", "x", reason="self_review"
    )
    assert kanban.snapshot() == before
    assert kanban.row(task["id"])["status"] == "in_review"

    approved = kanban.ok("task", "approve", task["id"], "--agent", "reviewer")
    assert approved["status"] == "done"
    assert approved["verification"]["status"] == "pass"  # a JSON object, not JSON in a string
    assert approved["verification"]["reviews"][-1]["reviewer"] == "reviewer"


def test_every_holder_since_todo_is_excluded_from_review(kanban: Kanban) -> None:
    """After bob hands to charlie, neither may judge: not only the first claimer."""
    task = claimed_by(kanban, "bob")
    kanban.ok("task", "transfer", task["id"], "-a", "bob", "--to", "charlie")
    kanban.ok("task", "complete", task["id"], "-a", "charlie")
    for builder in ("bob", "charlie"):
        kanban.refused("task", "approve", task["id"], "-a", builder, reason="self_review")
    assert kanban.ok("task", "approve", task["id"], "-a", "dave")["status"] == "done"


def test_reject_sends_work_back_with_the_reason_as_a_comment(kanban: Kanban) -> None:
    task = claimed_by(kanban, "alice")
    kanban.ok("task", "complete", task["id"], "-a", "alice")
    rejected = kanban.ok("task", "reject", task["id"], "-a", "rita", "--reason", "no tests")
    assert rejected["status"] == "todo"
    assert rejected["assigneeAgentId"] is None
    comments = kanban.ok("task", "view", task["id"])["comments"]
    assert comments[-1]["body"] == "rejected: no tests"
    assert comments[-1]["authorAgentId"] == "rita"

    error = kanban.refused("task", "approve", task["id"], "-a", "rita", reason="invalid_state")
    assert error["error"] == (
        f"cannot approve {task['id']}: only work in review is judged; nothing is built yet: an "
        "agent claims and completes it first (current state: todo, expected: in_review)"
    )


@pytest.mark.parametrize(
    "args",
    [
        ("--comment", "no tests"),  # the reason typed as --comment: one value, not two
        ("--comment", "no tests", "--reason", "x"),  # it took --reason as its text
        ("--comment", "no tests", "-a", "rita", "-m", "x"),  # it took -a as its text
    ],
)
def test_a_comment_meant_as_the_reason_is_told_where_the_reason_goes(
    kanban: Kanban, args: tuple[str, ...]
) -> None:
    """`--comment` is a line's review comment (FILE[:LINE] TEXT, as HTTP's and MCP's `comments`);
    the reason is `--reason`/`-m`. A `--comment TEXT` meant as the reason said "requires 2
    arguments", or swallowed the next option and said --reason (or --agent) was missing: now one
    usage line says where the reason goes, and the board is what it was."""
    task = claimed_by(kanban, "alice")
    kanban.ok("task", "complete", task["id"], "-a", "alice")
    before = kanban.snapshot()
    result = kanban.run("task", "reject", task["id"], *args, env={"KANBAN_AGENT": "rita"})
    assert (result.code, result.out) == (2, ""), str(result)
    assert result.error["reason"] == "usage", result.error
    assert "what must change goes in --reason/-m TEXT" in result.error["error"], result.error
    assert kanban.snapshot() == before
    shown = " ".join(kanban.run("task", "reject", "-h").out.split())
    assert "kept as the task's comment (`rejected: TEXT`) and as the reason in its history" in shown
    assert "Kept with the reason, not as it" in shown


def test_a_reviewer_taking_the_oldest_of_its_inbox_never_takes_its_own(kanban: Kanban) -> None:
    """Following the AGENTS.md reviewer's step, an agent took the oldest inbox item, its own work,
    was refused self_review, and took it again, forever. Read `--as` the reviewer, the inbox leaves
    out what it built (and says how many: `leftOut`); its items name their builders. The loop judges
    the other agent's work, then finds nothing."""
    built = {}
    for agent in ("alice", "bob"):  # alice's work is the oldest
        task = kanban.ok("task", "dispatch", "--title", f"{agent}'s work")
        held = kanban.ok("task", "claim", task["id"], "--agent", agent)
        kanban.advance(minutes=1)
        kanban.ok("task", "complete", task["id"], "--agent", agent,
                  "--epoch", str(held["claimEpoch"]))  # fmt: skip
        built[agent] = task["id"]
    everything = kanban.ok("inbox")
    assert [(i["taskId"], i["builders"]) for i in everything["items"]] == [
        (built["alice"], ["alice"]), (built["bob"], ["bob"])
    ]  # fmt: skip
    assert everything["leftOut"] == 0

    judged = []
    for _ in range(3):  # the reviewer's loop: the oldest item, its action
        items = kanban.ok("inbox", "--as", "alice")["items"]
        if not items:
            break
        item = items[0]
        kanban.ok("task", item["action"], item["taskId"], "--agent", "alice")
        judged.append(item["taskId"])
    assert judged == [built["bob"]]
    mine = kanban.ok("inbox", "--as", "alice")
    assert (mine["items"], mine["count"], mine["leftOut"]) == ([], 0, 1)
    assert kanban.row(built["alice"])["status"] == "in_review"
    assert kanban.row(built["bob"])["status"] == "done"
    before = kanban.snapshot()
    kanban.refused("inbox", "--as", "", reason="invalid_input")
    assert kanban.snapshot() == before
