"""`kanban mcp` as an agent runtime meets it: the SDK's own client over stdio against the real
process (issue 13). Each refusal is checked as a tool error carrying the board's reason and a
hint, with the board's bytes unchanged, and the session still answering afterwards."""

import asyncio
import json
import subprocess
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from mcp import Client

from boardlib import Board
from boardlib.validation import TITLE_MAX
from kanban.mcp.hints import hint_for
from kanban.mcp.session import LIST_LIMIT_MAX
from tests.backends import hold_write_lock, is_postgres
from tests.cli.conftest import KANBAN, clean_env
from tests.mcp.conftest import fingerprint, mcp_session, ok, refused


@pytest.fixture
def db(board_path: Path) -> Path:
    """An empty board (a file, or a Postgres schema), as `kanban db init` leaves it."""
    with Board(board_path):
        pass
    return board_path


def add_task(db: Path, title: str, **fields: object) -> str:
    with Board(db, reconcile_orphans=False) as board:
        return board.create_task(title, **fields).id  # type: ignore[arg-type]


def cli_json(db: Path, *args: str) -> object:
    done = subprocess.run(
        [str(KANBAN), *args],
        env=clean_env(KANBAN_DB=str(db)),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


async def test_the_agent_loop_claim_heartbeat_progress_complete(db: Path) -> None:
    task_id = add_task(db, "Write the parser", role="worker", description="parse it all")
    async with mcp_session(db, "alice", "--role", "worker", runtime="claude-code") as alice:
        claimed = await ok(alice, "claim_next")
        assert (claimed["id"], claimed["status"]) == (task_id, "in_progress")
        assert claimed["assigneeRuntime"] == "claude-code"  # from the client's handshake
        assert claimed["assigneeAgentId"] == "alice" and claimed["claimEpoch"] == 1
        await asyncio.sleep(0.01)
        beat = await ok(alice, "heartbeat", task_id=task_id)
        assert beat["leaseUntil"] > claimed["leaseUntil"]
        assert beat["lastHeartbeatAt"] > claimed["lastHeartbeatAt"]
        noted = await ok(alice, "log_progress", task_id=task_id, note="lexer done")
        assert noted["leaseUntil"] >= beat["leaseUntil"]
        longer = await ok(alice, "extend_lease", task_id=task_id, minutes=60)
        assert longer["leaseUntil"] >= noted["lastHeartbeatAt"] + 60 * 60_000
        done = await ok(alice, "complete_task", task_id=task_id, summary="parser and tests")
        assert (done["status"], done["assigneeAgentId"], done["leaseUntil"]) == (
            "in_review",
            None,
            None,
        )
        view = await ok(alice, "get_task", task_id=task_id, detail=True)
        assert [c["body"] for c in view["comments"]] == ["lexer done", "parser and tests"]
        assert {c["authorAgentId"] for c in view["comments"]} == {"alice"}
        # The same camelCase JSON as the CLI prints.
        assert await ok(alice, "get_task", task_id=task_id) == cli_json(db, "task", "get", task_id)
        events = cli_json(db, "events", "--task", task_id)
        assert isinstance(events, list)
        assert [event["kind"] for event in events] == [
            "task_created", "task_claimed", "lease_renewed", "progress_logged",
            "lease_renewed", "status_changed",
        ]  # fmt: skip
        assert {event["actor"] for event in events[1:]} == {"alice"}


async def test_claim_next_on_an_empty_board_is_task_null_not_an_error(db: Path) -> None:
    async with mcp_session(db, "alice") as alice:
        assert await ok(alice, "claim_next") == {"task": None}
        idle = await ok(alice, "explain")
        assert idle["claimable"] is False and idle["reasons"] == ["no todo tasks"]
        assert await ok(alice, "list_tasks") == {"tasks": [], "count": 0, "truncated": False}


async def test_a_restarted_session_hears_the_task_it_still_holds(db: Path) -> None:
    """A runtime restarted (its session, and the epoch it kept, gone) calls claim_next: the
    answer names the task still its own, and the new session goes on with it."""
    task_id = add_task(db, "Fix the bug")
    async with mcp_session(db, "alice") as alice:
        assert (await ok(alice, "claim_next"))["id"] == task_id
    async with mcp_session(db, "alice") as again:
        assert await ok(again, "claim_next") == {"task": None, "heldByYou": [task_id]}
        assert (await ok(again, "explain"))["heldByYou"] == [task_id]
        assert (await ok(again, "complete_task", task_id=task_id))["status"] == "in_review"
        assert await ok(again, "claim_next") == {"task": None}


async def test_builder_is_not_judge_and_another_agent_approves(db: Path) -> None:
    task_id = add_task(db, "Fix the bug")
    async with mcp_session(db, "alice") as alice, mcp_session(db, "bob") as bob:
        await ok(alice, "claim_next")
        await ok(alice, "complete_task", task_id=task_id)
        before = fingerprint(db)
        for tool, extra in (("approve_task", {}), ("reject_task", {"reason": "meh"})):
            doc = await refused(alice, tool, "self_review", task_id=task_id, **extra)
            assert doc["id"] == task_id and doc["holders"] == ["alice"]
            assert "may not judge it" in doc["hint"]
        assert fingerprint(db) == before
        approved = await ok(bob, "approve_task", task_id=task_id)
        assert approved["status"] == "done"
        assert approved["verification"]["reviews"][-1]["reviewer"] == "bob"  # an object, as the CLI
        assert await ok(bob, "get_task", task_id=task_id) == cli_json(db, "task", "get", task_id)
        await refused(bob, "approve_task", "invalid_state", task_id=task_id)


async def test_claim_next_takes_only_the_named_teams_work(db: Path) -> None:
    ours = add_task(db, "Ours", team_id="payments", priority=1)
    add_task(db, "Theirs, ranked higher", team_id="search", priority=9)
    async with mcp_session(db, "alice") as alice:
        claimed = await ok(alice, "claim_next", team_id="payments")
        assert (claimed["id"], claimed["teamId"]) == (ours, "payments")
        assert await ok(alice, "claim_next", team_id="payments") == {
            "task": None,
            "heldByYou": [ours],
        }
        assert (await ok(alice, "claim_next"))["teamId"] == "search"  # no team: any team


async def test_a_lapsed_session_is_stale_once_another_agent_reclaimed(db: Path) -> None:
    task_id = add_task(db, "Slow work")
    async with mcp_session(db, "alice") as alice, mcp_session(db, "bob") as bob:
        mine = await ok(alice, "claim_next")
        short = await ok(alice, "extend_lease", task_id=task_id, minutes=0.01)  # 600 ms
        assert short["leaseUntil"] - short["lastHeartbeatAt"] == 600
        await asyncio.sleep(0.8)
        lapsed = await refused(alice, "heartbeat", "stale_claim", task_id=task_id)
        assert lapsed["leaseUntil"] == short["leaseUntil"]  # lapsed, not yet reclaimed
        theirs = await ok(bob, "claim_next")
        assert theirs["id"] == task_id and theirs["claimEpoch"] > mine["claimEpoch"]
        before = fingerprint(db)
        for tool, extra in (
            ("heartbeat", {}),
            ("log_progress", {"note": "still here"}),
            ("complete_task", {"summary": "mine"}),
            ("release_task", {}),
        ):
            doc = await refused(alice, tool, "stale_claim", task_id=task_id, **extra)
            assert (doc["epoch"], doc["currentEpoch"]) == (mine["claimEpoch"], theirs["claimEpoch"])
            assert "claim_next" in doc["hint"]
        assert fingerprint(db) == before
        # bob, whose claim is current, goes on; alice's session still answers.
        assert (await ok(bob, "complete_task", task_id=task_id))["status"] == "in_review"
        assert await ok(alice, "claim_next") == {"task": None}


@pytest.mark.parametrize("cap", ["depth", "children"])
async def test_create_subtask_is_refused_past_each_cap_and_writes_nothing(
    db: Path, cap: str
) -> None:
    """The seed's ceilings at their defaults: a parent chain of 2, 24 live children."""
    async with mcp_session(db, "planner") as planner:
        root = await ok(planner, "create_task", title="Ship v1")
        assert (root["scheduledBy"], root["parentTaskId"]) == ("agent", None)
        if cap == "depth":
            child = await ok(planner, "create_subtask", parent_task_id=root["id"], title="API")
            grandchild = await ok(
                planner, "create_subtask", parent_task_id=child["id"], title="Routes"
            )
            assert grandchild["parentTaskId"] == child["id"]
            parent = grandchild["id"]
        else:
            for n in range(24):
                await ok(planner, "create_subtask", parent_task_id=root["id"], title=f"part {n}")
            parent = root["id"]
        before = fingerprint(db)
        doc = await refused(
            planner, "create_subtask", "cap_exceeded", parent_task_id=parent, title="one more"
        )
        assert doc["cap"] == cap and doc["limit"] == (2 if cap == "depth" else 24)
        assert fingerprint(db) == before
        # Refused, not ended: the session creates where the cap allows.
        assert (await ok(planner, "create_task", title="Elsewhere"))["title"] == "Elsewhere"


async def test_create_task_is_refused_past_the_root_rate_and_writes_nothing(db: Path) -> None:
    async with mcp_session(db, "planner") as planner:
        for n in range(30):
            await ok(planner, "create_task", title=f"root {n}")
        before = fingerprint(db)
        doc = await refused(planner, "create_task", "cap_exceeded", title="the 31st")
        assert (doc["cap"], doc["limit"]) == ("root_rate", 30)
        assert fingerprint(db) == before


async def test_board_settings_move_the_caps_and_the_descriptions_say_so(db: Path) -> None:
    settings = {
        "KANBAN_MAX_DEPTH": "1",
        "KANBAN_MAX_LIVE_CHILDREN": "2",
        "KANBAN_ROOT_CREATE_LIMIT": "2",
    }
    async with mcp_session(db, "planner", **settings) as planner:
        tools = {tool.name: tool for tool in (await planner.list_tools()).tools}
        assert "at most 2 new top-level tasks per 5 minutes" in (
            tools["create_task"].description or ""
        )
        assert "at most 1 deep, 2 unfinished children" in (
            tools["create_subtask"].description or ""
        )
        root = await ok(planner, "create_task", title="one")
        await ok(planner, "create_task", title="two")
        assert (await refused(planner, "create_task", "cap_exceeded", title="three"))["cap"] == (
            "root_rate"
        )
        child = await ok(planner, "create_subtask", parent_task_id=root["id"], title="a")
        await ok(planner, "create_subtask", parent_task_id=root["id"], title="b")
        before = fingerprint(db)
        for parent, cap in ((root["id"], "children"), (child["id"], "depth")):
            doc = await refused(
                planner, "create_subtask", "cap_exceeded", parent_task_id=parent, title="c"
            )
            assert doc["cap"] == cap
        assert fingerprint(db) == before


async def test_refusals_and_bad_arguments_leave_the_session_usable(db: Path) -> None:
    task_id = add_task(db, "Real work")
    other = add_task(db, "Someone else's")
    later = add_task(db, "After someone else's")
    with Board(db, reconcile_orphans=False) as board:
        board.claim(other, "carol")
        board.link_dependency(later, other)
        board.link_dependency(later, task_id)
    async with mcp_session(db, "alice") as alice:
        before = fingerprint(db)
        await refused(alice, "get_task", "not_found", task_id="TASK-999")
        await refused(alice, "heartbeat", "not_assignee", task_id=other)
        await refused(alice, "complete_task", "invalid_state", task_id=task_id)
        await refused(alice, "log_progress", "invalid_input", task_id=other, note="   ")
        await refused(alice, "create_subtask", "not_found", parent_task_id="TASK-404", title="x")
        await refused(
            alice, "link_dependency", "dependency_cycle", task_id=task_id, depends_on=later
        )
        await refused(alice, "link_dependency", "not_assignee", task_id=other, depends_on=task_id)
        schema = await refused(alice, "list_tasks", "invalid_input", status="finished", limit=0)
        assert schema["fields"] == ["status", "limit"] and schema["error"].endswith(
            "; limit must be at least 1"
        )
        assert fingerprint(db) == before
        claimed = await ok(alice, "claim_next")
        assert claimed["id"] == task_id


# Arguments that fail a tool's input schema, as a model sends them, and the first line it reads.
SCHEMA_REFUSALS: list[tuple[str, dict[str, object], str]] = [
    ("create_task", {"title": ""}, "title must not be empty"),
    ("create_task", {"title": "x" * (TITLE_MAX + 1)},
     f"title must be at most {TITLE_MAX} characters"),
    ("create_task", {"title": "x", "depends_on": ["TASK-1", 3]}, "depends_on[1] must be a string"),
    ("heartbeat", {"task_id": 5}, "task_id must be a string"),
    ("heartbeat", {}, "task_id is required"),
    ("extend_lease", {"task_id": "HELD", "minutes": -1}, "minutes must be greater than 0"),
    ("extend_lease", {"minutes": -1}, "task_id is required; minutes must be greater than 0"),
    ("list_tasks", {"limit": 100000}, f"limit must be at most {LIST_LIMIT_MAX}"),
    ("get_task", {"task_id": "HELD", "detail": "maybe"}, "detail must be true or false"),
    ("add_comment", {"task_id": "HELD", "body": "b", "line": 0}, "line must be at least 1"),
    ("land_task", {"task_id": "HELD", "strategy": "yolo"},
     "strategy must be one of 'squash', 'rebase' or 'merge'"),
    ("reject_task", {"task_id": "HELD", "reason": "r", "comments": [{"path": "a.py"}, "x"]},
     "comments[0].body is required; comments[1] must be an object"),
    # pydantic's lax mode took these: true as 1 minute or 1 token, "12" as 12, "yes" and 1 as true,
    # "3" as line 3
    ("extend_lease", {"task_id": "HELD", "minutes": True}, "minutes must be a number"),
    ("extend_lease", {"task_id": "HELD", "minutes": "5"}, "minutes must be a number"),
    ("get_task", {"task_id": "HELD", "detail": 1}, "detail must be true or false"),
    ("get_task", {"task_id": "HELD", "detail": "yes"}, "detail must be true or false"),
    ("add_comment", {"task_id": "HELD", "body": "b", "line": "3"}, "line must be a whole number"),
    ("list_tasks", {"limit": True}, "limit must be a whole number"),
    # an amount is a JSON number, never a string Python would read (`1_000`, full-width digits)
    ("create_task", {"title": "x", "budget_usd": "1_000"}, "budget_usd must be a number"),
    ("create_task", {"title": "x", "budget_tokens": "\uff11\uff10"},
     "budget_tokens must be a whole number"),
    ("finish_run", {"execution_id": "r", "status": "succeeded", "cost_usd": "1_000"},
     "cost_usd must be a number"),
    # and inside reject_task's comments too
    ("reject_task", {"task_id": "HELD", "reason": "r",
                     "comments": [{"path": "a.py", "line": "3", "body": "b"}]},
     "comments[0].line must be a whole number"),
    ("reject_task", {"task_id": "HELD", "reason": "r",
                     "comments": [{"path": "a.py", "body": "b"}, {"path": "b.py", "line": True,
                                                                  "body": "c"}]},
     "comments[1].line must be a whole number"),
]  # fmt: skip


async def test_arguments_failing_the_schema_are_refused_in_plain_words_and_write_nothing(
    db: Path,
) -> None:
    """Not pydantic's dump ("validation error ... errors.pydantic.dev"): invalid_input with the
    argument and what is wrong, the error document, a Next line; the board untouched and the
    session answering after each."""
    task_id = add_task(db, "Real work")
    async with mcp_session(db, "alice") as alice:
        assert (await ok(alice, "claim_next"))["id"] == task_id
        before = fingerprint(db)
        for tool, arguments, problem in SCHEMA_REFUSALS:
            arguments = {k: task_id if v == "HELD" else v for k, v in arguments.items()}
            doc = await refused(alice, tool, "invalid_input", **arguments)
            assert doc["error"] == problem, (tool, arguments)
            assert doc["field"] == doc["fields"][0] and doc["field"] in problem
            assert doc["hint"] == hint_for("invalid_input")
            assert "pydantic" not in doc["error"] and "validation error" not in doc["error"]
            assert (await ok(alice, "get_task", task_id=task_id))["status"] == "in_progress"
        assert fingerprint(db) == before
        assert (await ok(alice, "heartbeat", task_id=task_id))["assigneeAgentId"] == "alice"


async def test_the_identity_is_the_sessions_not_the_models(db: Path) -> None:
    task_id = add_task(db, "Mine")
    async with mcp_session(db, "alice") as alice:
        for tool in (await alice.list_tools()).tools:
            names = set(tool.input_schema.get("properties", {}))
            assert not names & {"agent", "actor", "reviewer", "agent_id", "epoch"}, tool.name
        before = fingerprint(db)
        doc = await refused(alice, "claim_next", "invalid_input", agent="mallory")
        assert doc["unknown"] == ["agent"] and "its arguments: role" in doc["error"]
        doc = await refused(alice, "list_tasks", "invalid_input", assignee="bob", ready=True)
        assert doc["unknown"] == ["assignee"]
        assert fingerprint(db) == before
        assert (await ok(alice, "claim_next"))["assigneeAgentId"] == "alice"
        with Board(db, reconcile_orphans=False) as board:
            assert board.get_task(task_id).holders == ["alice"]


async def test_a_busy_board_is_a_transient_tool_error(db: Path) -> None:
    task_id = add_task(db, "Contended")
    async with mcp_session(db, "alice", KANBAN_RETRY_BUDGET_MS="300") as alice:
        await ok(alice, "list_tasks")  # the board is open before the lock is taken
        before = fingerprint(db)
        with hold_write_lock(db):  # another writer holds the lock past the budget
            # SQLite: every write waits for the file's lock. Postgres: claims run beside the
            # board lock (SKIP LOCKED), the other writes wait for it.
            if is_postgres(db):
                doc = await refused(alice, "add_comment", "busy", task_id=task_id, body="hi")
            else:
                doc = await refused(alice, "claim_next", "busy")
        assert "safe to retry" in doc["hint"] and "Transient" in doc["hint"]
        assert fingerprint(db) == before
        assert (await ok(alice, "claim_next"))["id"] == task_id


async def test_a_missing_board_is_a_tool_error_and_nothing_is_created(tmp_path: Path) -> None:
    """A typo in KANBAN_DB does not start an agent idling on a fresh empty board: every call says
    no_board (with the path), the session stays up, and no file appears."""
    typo = tmp_path / "bored.db"
    async with mcp_session(typo, "alice") as alice:
        for tool, arguments in (
            ("claim_next", {}),
            ("list_tasks", {}),
            ("create_task", {"title": "x"}),
        ):
            doc = await refused(alice, tool, "no_board", **arguments)
            assert str(typo) in doc["error"] and "KANBAN_DB" in doc["hint"]
    assert list(tmp_path.iterdir()) == []


def test_kanban_mcp_needs_an_agent_and_refuses_operator_names(db: Path) -> None:
    for args in (
        ["mcp"],
        ["mcp", "--agent", "operator"],
        ["mcp", "--agent", "operator:ann"],
        ["mcp", "--agent", "system"],
        ["mcp", "--agent", "verification-gate"],
    ):
        done = subprocess.run(
            [str(KANBAN), *args],
            env=clean_env(KANBAN_DB=str(db)),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 2, done
        assert "agent" in done.stderr and done.stdout == ""


@pytest.mark.slow  # MCP sessions racing
async def test_sessions_racing_for_one_task_get_it_exactly_once(db: Path) -> None:
    """Four `kanban mcp` processes call claim_next at the same moment on a board with one task:
    one gets it, the others hear {"task": null}, and the board records one claim."""
    task_id = add_task(db, "Only one")
    agents = ["w1", "w2", "w3", "w4"]
    results: dict[str, object] = {}
    async with AsyncExitStack() as stack:
        sessions = [await stack.enter_async_context(mcp_session(db, name)) for name in agents]
        await asyncio.gather(*(ok(session, "list_tasks") for session in sessions))  # all open

        async def claim(name: str, session: Client) -> None:
            results[name] = await ok(session, "claim_next")

        await asyncio.gather(*(claim(name, s) for name, s in zip(agents, sessions, strict=True)))
    winners = [name for name, doc in results.items() if doc != {"task": None}]
    assert len(winners) == 1
    with Board(db, reconcile_orphans=False) as board:
        task = board.get_task(task_id)
        assert (task.assignee_agent_id, task.claim_epoch) == (winners[0], 1)
        assert [event.kind for event in board.events(task_id=task_id)] == [
            "task_created",
            "task_claimed",
        ]


async def test_the_inbox_names_the_tool_of_each_action_or_the_operator(db: Path) -> None:
    """The inbox answered `approve` and `unblock` over MCP, the board's names for its actions, which
    are no tools (approve_task is; unblock is an operator's). The MCP answer names the tool where
    there is one, else says it is an operator's; the items and their order are the board's."""
    with Board(db) as board:
        review = board.create_task("to judge")
        board.claim(review.id, "alice")
        board.complete(review.id, "alice")
        stuck = board.create_task("stuck")
        board.claim(stuck.id, "alice")
        board.block(stuck.id, "alice", "needs a key")
        expected = board.inbox().items
    async with mcp_session(db, "bob", "--tools", "reviewer") as bob:
        tools = {tool.name for tool in (await bob.list_tools()).tools}
        items = (await ok(bob, "inbox"))["items"]
    assert [(item["taskId"], item["kind"]) for item in items] == [
        (item.task_id, item.kind) for item in expected
    ]
    actions = {item["taskId"]: item["action"] for item in items}
    assert actions == {review.id: "approve_task", stuck.id: "ask an operator (unblock)"}
    assert actions[review.id] in tools


async def test_a_reviewer_session_never_takes_its_own_work_from_the_inbox(db: Path) -> None:
    """A reviewer taking the oldest inbox item took its own work, was refused self_review, and took
    the same item again, forever. The session's inbox is read for its agent: the work it built is
    left out (`leftOut` counts it), so the loop judges the other agent's work, then finds nothing;
    the other reviewer sees the rest."""
    with Board(db) as board:
        built = {}
        for agent in ("alice", "bob"):  # alice's work is the oldest
            task = board.create_task(f"{agent}'s work")
            board.claim(task.id, agent)
            board.complete(task.id, agent)
            built[agent] = task.id
    async with mcp_session(db, "alice", "--tools", "reviewer") as alice:
        judged = []
        for _ in range(3):  # the reviewer's loop: the oldest item, its action
            items = (await ok(alice, "inbox"))["items"]
            if not items:
                break
            assert items[0]["action"] == "approve_task"
            await ok(alice, "approve_task", task_id=items[0]["taskId"])
            judged.append(items[0]["taskId"])
        left = await ok(alice, "inbox")
    assert judged == [built["bob"]]
    assert (left["items"], left["leftOut"]) == ([], 1)
    async with mcp_session(db, "bob", "--tools", "reviewer") as bob:
        items = (await ok(bob, "inbox"))["items"]
    assert [(i["taskId"], i["builders"]) for i in items] == [(built["alice"], ["alice"])]
    with Board(db, reconcile_orphans=False) as board:
        assert board.get_task(built["alice"]).status == "in_review"


async def test_a_stale_epoch_under_the_sessions_own_name_is_told_so(db: Path) -> None:
    """A stale epoch's hint said the claim was gone, the task maybe someone else's, while the
    caller's name held it under a newer epoch. The refusal stands and changes nothing; it says
    `heldByYou` and the epoch, and a hint that is true for a session (another claim under its name
    holds the task now); to anyone else, not."""
    task_id = add_task(db, "long job")
    async with mcp_session(db, "alice") as alice:
        await ok(alice, "claim_next")
        with Board(db, reconcile_orphans=False) as board:  # another process of alice's
            board.release(task_id, "alice")
            again = board.claim(task_id, "alice")
        before = fingerprint(db)
        doc = await refused(alice, "heartbeat", "stale_claim", task_id=task_id)
        assert (doc["heldByYou"], doc["currentEpoch"]) == (True, again.claim_epoch)
        assert "claim is gone" not in doc["hint"] and "under your name" in doc["hint"]
        assert fingerprint(db) == before
        with Board(db, reconcile_orphans=False) as board:
            board.transfer(task_id, "alice", "bob", epoch=again.claim_epoch)
        before = fingerprint(db)
        doc = await refused(alice, "heartbeat", "stale_claim", task_id=task_id)
        assert doc["heldByYou"] is False and "claim is gone" in doc["hint"]
        assert fingerprint(db) == before


async def test_a_refusal_names_the_argument_as_the_tool_takes_it(db: Path, tmp_path: Path) -> None:
    """The board names fields in camelCase, as its JSON does, and over MCP a refusal said `repoPath`
    to a model that had passed `repo_path`. An argument of the tool is named as the tool takes it;
    the board is untouched."""
    task_id = add_task(db, "Code work")
    missing = tmp_path / "no such repo"
    async with mcp_session(db, "alice") as alice:
        assert (await ok(alice, "claim_next"))["id"] == task_id
        before = fingerprint(db)
        doc = await refused(
            alice, "provision_workspace", "invalid_input", task_id=task_id, repo_path=str(missing)
        )
    assert doc["field"] == "repo_path" and doc["error"].startswith("repo_path "), doc
    assert "repoPath" not in doc["error"] and str(missing) in doc["error"]
    assert fingerprint(db) == before
