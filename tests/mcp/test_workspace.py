"""A code task over MCP, with the SDK's client over stdio on a real repository and both backends:
a builder provisions its worktree, changes a file there, writes its handoff (whose verify
command the gate runs) and completes through the gate; a reviewer lands it with land_task. The
worktree verbs are the holder's, judged by the board as the CLI's are: another agent is
`not_assignee`, a session whose claim is gone `stale_claim`, and nothing changes."""

from pathlib import Path
from typing import Any

import pytest

from tests.mcp.conftest import fingerprint, mcp_session, ok, refused
from tests.mcp.test_land import server_env
from tests.worktrees.conftest import checkout_state, git, make_land_env

GREETING = "hello\n"


@pytest.fixture
def land(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, board_path: Path):  # type: ignore[no-untyped-def]
    made = make_land_env(tmp_path, monkeypatch, board_path)
    yield made
    made.board.close()


async def test_a_builder_works_in_its_worktree_and_a_reviewer_lands_it(  # type: ignore[no-untyped-def]
    land, board_path: Path
) -> None:
    task = land.board.create_task("Write the greeting")
    async with mcp_session(board_path, "alice", **server_env(land)) as alice:
        claimed = await ok(alice, "claim_next")
        assert claimed["id"] == task.id
        doc = await refused(alice, "complete_workspace", "not_found", task_id=task.id)
        assert doc["what"] == "workspace" and "provision_workspace" in doc["hint"]
        made = await ok(alice, "provision_workspace", task_id=task.id, repo_path=str(land.repo))
        worktree = Path(made["worktree"]["worktreePath"])
        assert worktree.is_relative_to(land.root) and (worktree / "app.py").exists()
        (worktree / "greeting.txt").write_text(GREETING)
        handoff = {"nextBestStep": "land it", "commands": {"verify": "test -f greeting.txt"}}
        written = await ok(alice, "write_handoff", task_id=task.id, handoff=handoff)
        handoff = written["handoff"]
        assert (handoff["handoffFrom"], handoff["runtime"]) == ("alice", "mcp")  # the client's
        resumed = await ok(alice, "resume_workspace", task_id=task.id)
        assert resumed["workspace"]["worktreePath"] == str(worktree)
        assert resumed["handoff"] == handoff and resumed["live"] is True
        done = await ok(alice, "complete_workspace", task_id=task.id, summary="a greeting")
        assert (done["taskStatus"], done["verified"]) == ("done", "pass"), done
        assert done["verification"]["commandSource"] == "handoff"
        assert not (land.repo / "greeting.txt").exists()  # the person's checkout is untouched
        doc = await refused(alice, "land_task", "self_review", task_id=task.id)
        assert doc["id"] == task.id
    async with mcp_session(board_path, "bob", **server_env(land)) as bob:
        landed = await ok(bob, "land_task", task_id=task.id)
        assert landed["landed"] is True and landed["commit"] == land.main()
    assert git(land.repo, "show", "main:greeting.txt") == GREETING.strip()


async def test_sessions_that_follow_their_instructions_land_a_code_task(  # type: ignore[no-untyped-def]
    land, board_path: Path
) -> None:
    """A reviewer's instructions said to list in_review tasks and approve them, but work that passes
    its gate is done, never in review, so a reviewer doing just that found nothing and the work
    never landed; and a worker's named no verify command, so its work would be blocked for an
    operator. Each session is told the steps that work."""
    from kanban.mcp.hints import tools_named

    task = land.board.create_task("Write the greeting")
    async with mcp_session(board_path, "alice", "--tools", "worker", **server_env(land)) as alice:
        assert alice.instructions is not None
        assert "write_handoff" in tools_named(alice.instructions)
        await ok(alice, "claim_next")
        made = await ok(alice, "provision_workspace", task_id=task.id, repo_path=str(land.repo))
        (Path(made["worktree"]["worktreePath"]) / "greeting.txt").write_text(GREETING)
        await ok(alice, "write_handoff", task_id=task.id, handoff={"commands": {"verify": "true"}})
        assert (await ok(alice, "complete_workspace", task_id=task.id))["verified"] == "pass"
    async with mcp_session(board_path, "bob", "--tools", "reviewer", **server_env(land)) as bob:
        assert bob.instructions is not None
        assert {"inbox", "preview_landing", "land_task"} <= tools_named(bob.instructions)
        assert (await ok(bob, "list_tasks", status="in_review"))["tasks"] == []
        items = (await ok(bob, "inbox"))["items"]
        assert [(item["taskId"], item["kind"]) for item in items] == [(task.id, "unlanded")]
        assert (await ok(bob, "preview_landing", task_id=task.id))["state"] == "clean"
        assert (await ok(bob, "land_task", task_id=task.id))["landed"] is True
    assert git(land.repo, "show", "main:greeting.txt") == GREETING.strip()


async def test_an_invalid_handoff_names_each_wrong_field(land, board_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A handoff of the wrong shape was refused as "invalid handoff" and nothing more in the text,
    which is all many runtimes show the model, while its next step said to fix the argument the
    message names. The text names each field."""
    handoff = {"nextBestStep": 5, "nextStep": "misspelt", "commands": {"verify": ["pytest"]}}
    task = land.board.create_task("Write the greeting")
    async with mcp_session(board_path, "alice", **server_env(land)) as alice:
        doc = await refused(alice, "write_handoff", "invalid_input", task_id=task.id,
                            handoff=handoff)  # fmt: skip
    assert set(doc["details"]["fieldErrors"]) == {"nextBestStep", "nextStep", "commands.verify"}
    said = doc["error"]  # the text's first line, as `refused` checks
    assert said.startswith("invalid handoff: "), said
    assert all(f"{field}: " in said for field in doc["details"]["fieldErrors"]), said


async def test_a_failed_gate_gives_the_task_back_under_the_epoch_the_session_keeps(  # type: ignore[no-untyped-def]
    land, board_path: Path
) -> None:
    """The gate's fail is a result (the task is back with its builder under a new claim epoch),
    and the session quotes that epoch from then on: its next calls are not stale_claim. The task
    keeps the runtime its claim recorded (it read null)."""
    task = land.board.create_task("Write the greeting")
    async with mcp_session(board_path, "alice", runtime="claude-code", **server_env(land)) as alice:
        claimed = await ok(alice, "claim_next")
        assert claimed["assigneeRuntime"] == "claude-code"
        made = await ok(alice, "provision_workspace", task_id=task.id, repo_path=str(land.repo))
        worktree = Path(made["worktree"]["worktreePath"])
        (worktree / "draft.txt").write_text("not yet\n")
        await ok(alice, "write_handoff", task_id=task.id,
                 handoff={"commands": {"verify": "test -f greeting.txt"}})  # fmt: skip
        failed = await ok(alice, "complete_workspace", task_id=task.id)
        assert (failed["taskStatus"], failed["verified"]) == ("in_progress", "fail"), failed
        assert failed["claimEpoch"] > claimed["claimEpoch"]
        back = await ok(alice, "heartbeat", task_id=task.id)
        assert (back["claimEpoch"], back["assigneeRuntime"]) == (
            failed["claimEpoch"],
            "claude-code",
        )
        (worktree / "greeting.txt").write_text(GREETING)
        passed = await ok(alice, "complete_workspace", task_id=task.id)
        assert (passed["taskStatus"], passed["verified"]) == ("done", "pass"), passed


async def greeting_written(session: Any, land: Any, task_id: str) -> Path:
    """The session claims the task, provisions its worktree and writes the greeting there."""
    await ok(session, "claim_next")
    made = await ok(session, "provision_workspace", task_id=task_id, repo_path=str(land.repo))
    worktree = Path(made["worktree"]["worktreePath"])
    (worktree / "greeting.txt").write_text(GREETING)
    return worktree


@pytest.mark.slow
async def test_the_worktree_verbs_refuse_anyone_but_the_holder_and_change_nothing(  # type: ignore[no-untyped-def]
    land, board_path: Path
) -> None:
    task = land.board.create_task("Write the greeting")
    async with mcp_session(board_path, "alice", **server_env(land)) as alice:
        worktree = await greeting_written(alice, land, task.id)
        doc = await refused(alice, "write_handoff", "invalid_input", task_id=task.id,
                            handoff={"handoffFrom": "bob"})  # fmt: skip
        assert doc["field"] == "handoffFrom"
        doc = await refused(alice, "write_handoff", "invalid_input", task_id=task.id,
                            handoff={"nextStep": "a misspelt field"})  # fmt: skip
        assert "nextStep" in str(doc["details"])
        land.board.checkpoint()
        before = fingerprint(board_path), checkout_state(land.repo), checkout_state(worktree)
        async with mcp_session(board_path, "bob", **server_env(land)) as bob:
            for tool, arguments in (
                ("provision_workspace", {"repo_path": str(land.repo)}),
                ("write_handoff", {"handoff": {"nextBestStep": "take it over"}}),
                ("complete_workspace", {"summary": "not mine"}),
                ("sync_workspace", {}),
            ):
                doc = await refused(bob, tool, "not_assignee", task_id=task.id, **arguments)
                assert (doc["id"], doc["assignee"]) == (task.id, "alice"), tool
                assert "claim_next" in doc["hint"]
        assert (fingerprint(board_path), checkout_state(land.repo), checkout_state(worktree)) == (
            before
        )
        # alice's claim ends and the task is claimed again under her name (another process of
        # hers, say): this session's epoch is stale, so it touches the new claim's worktree not
        land.board.release(task.id, "alice")
        land.board.claim(task.id, "alice")
        land.board.checkpoint()
        before = fingerprint(board_path), checkout_state(land.repo), checkout_state(worktree)
        for tool, arguments in (
            ("provision_workspace", {"repo_path": str(land.repo)}),
            ("write_handoff", {"handoff": {"nextBestStep": "go on"}}),
            ("complete_workspace", {}),
        ):
            await refused(alice, tool, "stale_claim", task_id=task.id, **arguments)
        assert (fingerprint(board_path), checkout_state(land.repo), checkout_state(worktree)) == (
            before
        )


async def test_a_worktree_of_another_worktrees_folder_is_refused_with_what_to_do(  # type: ignore[no-untyped-def]
    land, board_path: Path, tmp_path: Path
) -> None:
    """A server run with another `KANBAN_WORKTREES` than the process that made a task's worktree
    refused it as `conflict` with the hint "someone else has it ... call claim_next": its holder
    gave up its own task for other work. It says whose folder it is and what to do, and changes
    nothing."""
    task = land.board.create_task("Write the greeting")
    async with mcp_session(board_path, "alice", **server_env(land)) as alice:
        worktree = await greeting_written(alice, land, task.id)
    land.board.checkpoint()
    before = fingerprint(board_path), checkout_state(land.repo), checkout_state(worktree)
    elsewhere = {**server_env(land), "KANBAN_WORKTREES": str(tmp_path / "other-worktrees")}
    async with mcp_session(board_path, "alice", **elsewhere) as alice:
        for tool, arguments in (
            ("provision_workspace", {"repo_path": str(land.repo)}),
            ("write_handoff", {"handoff": {"nextBestStep": "go on"}}),
            ("complete_workspace", {}),
        ):
            doc = await refused(alice, tool, "conflict", task_id=task.id, **arguments)
            assert (doc["id"], doc["why"]) == (task.id, "outside_worktrees"), tool
            assert "KANBAN_WORKTREES" in doc["hint"] and "claim_next" not in doc["hint"], tool
            assert str(land.root) in doc["error"], tool
    assert (fingerprint(board_path), checkout_state(land.repo), checkout_state(worktree)) == before
