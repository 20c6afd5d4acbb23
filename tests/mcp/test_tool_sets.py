"""The tool list stays cheap in a model's context (issue 26): every tool set within 4,000
estimated tokens, a worker's and a reviewer's session listing only their tools, and the compact
schemas still accepting what the full ones did."""

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from boardlib import Board, transitions
from kanban.mcp import catalog
from kanban.mcp.footprint import approx_tokens, footprint
from kanban.mcp.hints import tools_named
from kanban.mcp.listing import served_tools
from kanban.mcp.server import BoardTools, compact_schema
from tests.mcp.conftest import fingerprint, mcp_session, ok, refused, text_of

BUDGET = 4_000


def test_the_catalog_names_every_tool_the_server_has() -> None:
    assert tuple(BoardTools.TOOLS) == catalog.TOOLS
    for name, tools in catalog.TOOL_SETS.items():
        assert set(tools) <= set(catalog.TOOLS), name
        assert len(set(tools)) == len(tools), name
    worker = set(catalog.TOOL_SETS["worker"])
    # claim, renew, complete, comment (issue 26), and the ways out of a claim
    assert {"claim_next", "heartbeat", "log_progress", "complete_task", "add_comment"} <= worker
    assert {"block_task", "release_task"} <= worker
    assert not worker & {"approve_task", "reject_task", "create_task", "create_subtask"}
    reviewer = set(catalog.TOOL_SETS["reviewer"])
    judge = {"inbox", "list_tasks", "get_task", "approve_task", "reject_task", "add_comment"}
    assert judge <= reviewer
    assert {"preview_landing", "land_task"} <= reviewer  # issue 23: the reviewer lands
    assert "sync_workspace" in worker and "land_task" not in worker


def test_mcp_help_names_every_tool_of_each_set() -> None:
    """`kanban mcp --help` said worker was "(claim, renew, finish, comment)" and reviewer "(read,
    approve, reject, comment)", leaving out the worktree tools and inbox, preview_landing and
    land_task. The words now come from `TOOL_SETS`."""
    helped = subprocess.run(
        ["kanban", "mcp", "--help"], capture_output=True, text=True, check=True, timeout=60
    )
    said = " ".join(helped.stdout.split())
    for name, tools in catalog.TOOL_SETS.items():
        if name != catalog.ALL:
            assert f"{name} ({', '.join(tools)})" in said, name


@pytest.mark.parametrize("tool_set", list(catalog.TOOL_SETS))
def test_every_tool_set_fits_the_budget(tool_set: str) -> None:
    size = footprint(tool_set)
    assert size["tools"] == list(catalog.TOOL_SETS[tool_set])
    assert size["withInstructionsApproxTokens"] <= BUDGET, size
    assert size["approxTokens"] > size["chars"] / 5  # the estimate counts something real


def test_the_estimate_rounds_up_bytes_over_four() -> None:
    assert [approx_tokens(text) for text in ("", "a", "abcd", "abcde", "é")] == [0, 1, 1, 2, 1]


def test_compact_schemas_drop_titles_null_options_and_sanity_ceilings_only() -> None:
    """A string's length and a number's billion-or-more bound are sanity ceilings (still checked:
    test_the_unlisted_ceilings_are_still_checked); a page's 200 stays listed."""
    schema = {
        "type": "object",
        "title": "claim_nextArguments",
        "properties": {
            "role": {
                "anyOf": [{"type": "string", "maxLength": 200}, {"type": "null"}],
                "default": None,
                "description": "A role.",
                "title": "Role",
            },
            "limit": {
                "type": "integer",
                "default": 50,
                "maximum": 200,
                "title": "Limit",
                "description": "At most.",
            },
            "tokens": {"type": "integer", "minimum": 0, "maximum": 10**15},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}], "description": "Two."},
        },
        "required": [],
    }
    # A model a parameter refers to kept both (reject_task's LineComment).
    schema["$defs"] = {
        "LineComment": {
            "title": "LineComment",
            "type": "object",
            "properties": {
                "line": {
                    "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
                    "default": None,
                    "title": "Line",
                },
                "body": {"type": "string", "maxLength": 20_000, "title": "Body"},
            },
            "required": ["body"],
        }
    }
    assert compact_schema(schema) == {
        "type": "object",
        "properties": {
            "role": {"type": "string", "description": "A role."},
            "limit": {"type": "integer", "default": 50, "maximum": 200, "description": "At most."},
            "tokens": {"type": "integer", "minimum": 0},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}], "description": "Two."},
        },
        "required": [],
        "$defs": {
            "LineComment": {
                "type": "object",
                "properties": {
                    "line": {"type": "integer", "minimum": 1},
                    "body": {"type": "string"},
                },
                "required": ["body"],
            }
        },
    }
    for tool in served_tools(catalog.ALL)[0]:  # as the server lists them
        schema = tool["inputSchema"]
        for model in (schema, *schema.get("$defs", {}).values()):
            specs = [model, *model.get("properties", {}).values()]
            assert not [spec for spec in specs if "title" in spec], (tool["name"], model)
        assert '{"type": "null"}' not in json.dumps(schema), tool["name"]
        assert '"maxLength"' not in json.dumps(schema), tool["name"]


async def test_the_unlisted_ceilings_are_still_checked(db: Path) -> None:
    """The listing leaves the sanity ceilings out; the tool's model still refuses past them,
    naming the bound, and nothing is written."""
    async with mcp_session(db, "w1") as worker:
        before = fingerprint(db)
        doc = await refused(worker, "log_progress", "invalid_input", task_id="TASK-1",
                            note="x" * 20_001)  # fmt: skip
        assert doc["error"] == "note must be at most 20000 characters"
        doc = await refused(worker, "heartbeat", "invalid_input", task_id="")
        assert doc["error"] == "task_id must not be empty"
        doc = await refused(worker, "finish_run", "invalid_input", execution_id="EXEC-1",
                            status="succeeded", input_tokens=10**16)  # fmt: skip
        assert doc["field"] == "input_tokens" and "at most" in doc["error"]
        assert fingerprint(db) == before


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "board.db"
    with Board(path) as board:
        board.create_task("Build it", role="worker")
    return path


async def test_a_worker_session_lists_the_worker_tools_and_no_others(db: Path) -> None:
    async with mcp_session(db, "w1", "--tools", "worker") as worker:
        listed = [tool.name for tool in (await worker.list_tools()).tools]
        assert listed == list(catalog.TOOL_SETS["worker"])
        assert worker.instructions is not None and "claim_next" in worker.instructions
        # an optional parameter sent as null is still accepted, as the full schema allowed
        claimed = await ok(worker, "claim_next", role=None)
        assert claimed["assigneeAgentId"] == "w1"
        done = await ok(worker, "complete_task", task_id=claimed["id"], summary="built")
        assert done["status"] == "in_review"
        refused = await worker.call_tool("approve_task", {"task_id": claimed["id"]})
        assert refused.is_error and "approve_task" in text_of(refused)


async def test_a_tool_the_session_does_not_list_is_not_found_naming_its_tools(db: Path) -> None:
    """Not the SDK's bare "Unknown tool: X": a refusal like the board's, naming the tools this
    session has (a worker's approve_task, a made-up name), nothing written, the session going on."""
    worker_tools = list(catalog.TOOL_SETS["worker"])
    async with mcp_session(db, "w1", "--tools", "worker") as worker:
        before = fingerprint(db)
        for tool, arguments in (("approve_task", {"task_id": "TASK-1"}), ("frobnicate", {})):
            doc = await refused(worker, tool, "not_found", **arguments)
            assert (doc["tool"], doc["tools"]) == (tool, worker_tools)
            assert doc["error"] == (
                f"this session has no tool {tool!r}; its tools: {', '.join(worker_tools)}"
            )
            assert tools_named(doc["hint"]) <= set(worker_tools), doc["hint"]
            assert "TASK-12" not in doc["hint"]  # not the hint of a missing task
        assert fingerprint(db) == before
        assert (await ok(worker, "claim_next"))["assigneeAgentId"] == "w1"


async def test_a_reviewer_session_reviews_and_cannot_claim(db: Path) -> None:
    with Board(db, reconcile_orphans=False) as board:
        task = board.claim_next("w1")
        assert task is not None
        board.complete(task.id, "w1", epoch=task.claim_epoch)
    env = {"KANBAN_MCP_TOOLS": "reviewer"}  # the variable works as the option does
    async with mcp_session(db, "r1", **env) as reviewer:
        listed = [tool.name for tool in (await reviewer.list_tools()).tools]
        assert listed == list(catalog.TOOL_SETS["reviewer"])
        assert reviewer.instructions is not None
        assert "claim_next" not in reviewer.instructions
        waiting = await ok(reviewer, "list_tasks", status="in_review")
        assert [t["id"] for t in waiting["tasks"]] == [task.id]
        approved = await ok(reviewer, "approve_task", task_id=task.id)
        assert approved["status"] == "done"
        refused = await reviewer.call_tool("claim_next", {})
        assert refused.is_error


def test_every_hint_speaks_tools_and_commands_alike() -> None:
    from boardlib.errors import Reason
    from kanban.mcp.hints import CLI_VERBS, MCP_VERBS, hint_for

    assert set(CLI_VERBS) == {name for name in MCP_VERBS if "/" not in name}  # no status: any
    for reason in Reason:
        for verbs in (MCP_VERBS, CLI_VERBS):
            hint = hint_for(reason.value, verbs)
            assert "{" not in hint and "}" not in hint, (reason, hint)
    assert "`kanban task claim-next`" in hint_for(Reason.STALE_CLAIM, CLI_VERBS)
    assert "claim_next" not in hint_for(Reason.STALE_CLAIM, CLI_VERBS)


def test_no_hint_description_or_instruction_names_a_tool_the_session_lacks() -> None:
    """A worker has no list_tasks or reject_task, a reviewer no claim_next or sync_workspace:
    what a session shows a model (descriptions, instructions, every refusal's hint) names only
    tools it lists, and the full set keeps the richest wording."""
    from boardlib.errors import Reason
    from kanban.mcp.footprint import listed_tools
    from kanban.mcp.hints import HINTS, MCP_VERBS, hint_for, mcp_verbs, tools_named

    for name, listed in catalog.TOOL_SETS.items():
        verbs = mcp_verbs(listed)
        tools, instructions = listed_tools(name)
        shown = {f"{tool['name']} description": tool["description"] for tool in tools}
        shown["instructions"] = instructions
        said = [{"status": status} for status in transitions.STATUSES]
        said += [{"what": what} for what in ("task", "execution", "workspace")]
        for document in (None, *said):
            shown |= {
                f"{reason.value} hint ({document})": hint_for(reason.value, verbs, document)
                for reason in Reason
            }
        shown["unexpected hint"] = hint_for("something_new", verbs)
        for where, text in shown.items():
            assert tools_named(text) <= set(listed), (name, where, text)
    assert set(HINTS) == set(Reason)
    worker, reviewer = (
        mcp_verbs(catalog.TOOL_SETS["worker"]),
        mcp_verbs(catalog.TOOL_SETS["reviewer"]),
    )
    assert mcp_verbs(catalog.TOOLS) == MCP_VERBS
    conflict = Reason.MERGE_CONFLICT.value
    assert {"reject_task", "sync_workspace"} <= tools_named(hint_for(conflict))
    assert tools_named(hint_for(conflict, worker)) == {"complete_workspace"}
    assert tools_named(hint_for(conflict, reviewer)) == {"reject_task"}
    assert "list_tasks or get_task" in hint_for(Reason.NOT_FOUND)
    assert "list_tasks" not in hint_for(Reason.NOT_FOUND, worker)
    assert "claim_next" not in hint_for(Reason.CONFLICT, reviewer)


def test_a_landing_refusal_hint_fits_where_the_task_stands() -> None:
    """A gate-passed task is done, and its conflicting landing sent the model to reject_task and its
    builder to sync_workspace, both refused on done work. In review the work goes back to its
    builder; done, only an operator may sync or change it; the hint with no status (the AGENTS.md
    table) says both."""
    from boardlib.errors import Reason
    from kanban.mcp.hints import CLI_VERBS, MCP_VERBS, hint_for, mcp_verbs, tools_named

    for reason in (Reason.MERGE_CONFLICT, Reason.VERIFICATION_FAILED):
        for verbs in (MCP_VERBS, *map(mcp_verbs, catalog.TOOL_SETS.values())):
            done = hint_for(reason, verbs, {"status": transitions.DONE})
            assert "operator" in done and tools_named(done) == set(), done
            in_review = hint_for(reason, verbs, {"status": transitions.IN_REVIEW})
            assert "operator" not in in_review and "reject" in in_review, in_review
        for verbs in (MCP_VERBS, CLI_VERBS):
            either = hint_for(reason, verbs)
            assert "in review" in either and "if it is done, only an operator" in either, either
    conflict = Reason.MERGE_CONFLICT
    assert tools_named(hint_for(conflict, MCP_VERBS, {"status": transitions.IN_REVIEW})) == {
        "reject_task", "sync_workspace",
    }  # fmt: skip
    in_progress = hint_for(conflict, MCP_VERBS, {"status": transitions.IN_PROGRESS})
    assert tools_named(in_progress) == {"complete_workspace"}, in_progress


async def test_a_worker_session_refusal_names_only_its_tools(db: Path) -> None:
    """Over stdio: the worker's not_found hint sends it to get_task, not to list_tasks."""
    Board(db).close()
    async with mcp_session(db, "w1", KANBAN_MCP_TOOLS="worker") as worker:
        refused = await worker.call_tool("get_task", {"task_id": "TASK-404"})
        assert refused.is_error
        hint = (refused.structured_content or {})["hint"]
        assert "get_task" in hint and "list_tasks" not in hint, hint
    async with mcp_session(db, "w1") as everything:
        refused = await everything.call_tool("get_task", {"task_id": "TASK-404"})
        assert "list_tasks or get_task" in (refused.structured_content or {})["hint"]


async def test_an_unknown_run_id_is_not_sent_to_look_for_a_task(db: Path) -> None:
    """finish_run with an unknown execution id answered "Check the id with list_tasks or get_task;
    task ids look like TASK-12", though runs are EXEC-n and list_tasks lists none. The refusal says
    what was not found, and the hint fits it."""
    Board(db).close()
    async with mcp_session(db, "w1", KANBAN_MCP_TOOLS="worker") as worker:
        doc = await refused(worker, "finish_run", "not_found", execution_id="EXEC-404",
                            status="succeeded")  # fmt: skip
        assert doc["what"] == "execution"
        assert "start_run" in doc["hint"] and "EXEC-" in doc["hint"], doc["hint"]
        assert "list_tasks" not in doc["hint"] and "task ids" not in doc["hint"]
        doc = await refused(worker, "get_task", "not_found", task_id="TASK-404")
        assert doc["what"] == "task" and "task ids look like TASK-12" in doc["hint"]


async def closed_twice(
    db: Path, worker: Any, first: str, again: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A run the session started on a task it claimed, closed `first` then `again`: the run and
    the second close's refusal (`not_found`), the board's bytes unchanged by it."""
    with Board(db) as board:
        board.create_task("port the parser")
    task = await ok(worker, "claim_next")
    run = await ok(worker, "start_run", task_id=task["id"], executor="sh")
    await ok(worker, "finish_run", execution_id=run["id"], status=first)
    before = fingerprint(db)
    doc = await refused(worker, "finish_run", "not_found", execution_id=run["id"], status=again)
    assert fingerprint(db) == before
    return run, doc


async def test_a_closed_run_closed_again_is_not_sent_to_look_for_its_id(db: Path) -> None:
    """finish_run on a run closed already said the run was closed and how, and the hint below it
    said "Use the id start_run returned", as if the id were wrong. The hint says the run is closed,
    and that start_run opens a new one; nothing is written."""
    async with mcp_session(db, "w1", KANBAN_MCP_TOOLS="worker") as worker:
        run, doc = await closed_twice(db, worker, "failed", "succeeded")
        assert (doc["what"], doc["status"]) == ("execution", "failed"), doc
        assert f"{run['id']} is not running: it was closed (failed)" in doc["error"], doc
        assert doc["hint"].startswith("That run is already closed"), doc["hint"]
        assert "start_run opens a new one" in doc["hint"], doc["hint"]
        assert "Use the id" not in doc["hint"] and "Check" not in doc["hint"], doc["hint"]
        doc = await refused(worker, "finish_run", "not_found", execution_id="EXEC-404",
                            status="succeeded")  # fmt: skip
        assert doc["hint"].startswith("Use the id start_run returned"), doc["hint"]


@pytest.mark.parametrize(
    ("reason", "details", "starts"),
    [
        ("not_found", {"what": "execution", "status": "failed"}, "That run is already closed"),
        ("not_found", {"what": "execution"}, "Use the id start_run returned"),
        ("merge_conflict", {"status": "done", "why": "replayed"}, "call land_task again"),
        ("merge_conflict", {"status": "done"}, "The work conflicts"),
    ],
)
def test_a_hint_is_chosen_by_the_refusals_reason_whatever_order_its_details_are_in(
    reason: str, details: dict[str, str], starts: str
) -> None:
    """The wording a refusal's details call for was the first detail's that had one, so a closed
    run's hint hung on the board putting `status` before `what` (and a replay's on `why` before
    `status`). `CHOSEN_BY` orders them by reason; every order of the details gets one hint."""
    from itertools import permutations

    from kanban.mcp.hints import HINTS, MCP_WORDINGS, hint_for

    document = {"error": "refused", "reason": reason, "id": "EXEC-1", **details}
    hints = {
        hint_for(reason, document={key: document[key] for key in order})
        for order in permutations(document)
    }
    assert len(hints) == 1, hints
    [hint] = hints
    assert starts in hint, hint
    # Each wording a detail calls for is reachable: its field is one CHOSEN_BY reads for a
    # reason whose hint has its placeholder.
    from kanban.mcp.hints import CHOSEN_BY

    for key in (key for key in MCP_WORDINGS if "/" in key):
        placeholder, _, said = key.partition("/")
        field = said.partition("=")[0]
        assert any(
            f"{{{placeholder}}}" in HINTS[reason] and field in fields
            for reason, fields in CHOSEN_BY.items()
        ), key


async def test_a_closed_run_is_hinted_as_closed_with_what_before_its_status(db: Path) -> None:
    """Over stdio: the closed run's refusal names `what` before `status`, as any refusal may
    order its details, and its hint is still the closed run's, not the lost id's."""
    async with mcp_session(db, "w1") as worker:
        _run, doc = await closed_twice(db, worker, "succeeded", "failed")
        keys = list(doc)
        assert keys.index("what") < keys.index("status"), keys
        assert doc["hint"].startswith("That run is already closed"), doc["hint"]


def test_the_mcp_page_names_each_reduced_set_as_the_catalog_declares_it() -> None:
    import re

    page = (Path(__file__).parents[2] / "docs" / "mcp.md").read_text()
    paragraph = " ".join(page.split("`kanban mcp --tools worker|reviewer|all`", 1)[1].split())
    worker, reviewer = paragraph.split("a worker gets", 1)[1].split("; a reviewer", 1)
    for name, text in (("worker", worker), ("reviewer", reviewer.split(".", 1)[0])):
        named = re.findall(r"`(\w+)`", text)
        assert named == list(catalog.TOOL_SETS[name]), (name, named)


def test_every_tool_answers_through_the_sessions_hints() -> None:
    """A tool that called `call_board` directly would hint with the full set's tools."""
    import inspect

    source = inspect.getsource(BoardTools)
    assert source.count("call_board(") == 1, "every tool goes through BoardTools.call"
