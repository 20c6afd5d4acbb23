"""Diagnosis never writes: `claim-next --explain` (and `--dry-run`) says which task claim-next
would claim, or why none would, and writes nothing, not even the release of a lapsed lease that
a real claim-next does first. Proved on the board itself: the file's bytes, its WAL and
`PRAGMA data_version` on SQLite; on Postgres every table's rows and content hash, the sequences,
Postgres's own count of rows written, and a session in which any write would fail."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.backends import is_postgres, kanban_backends, read_only_session, rows_written
from tests.cli.conftest import LEASE_MS, START_MS, Kanban, unchanged


@pytest.fixture
def kanban(board_path: Path) -> Kanban:
    return Kanban(board_path)


@contextmanager
def writes_nothing(kanban: Kanban) -> Iterator[dict[str, str]]:
    """The block writes nothing to the board; yields the environment to run the CLI with (on
    Postgres, a session whose every transaction is read-only)."""
    env: dict[str, str] = {}
    if is_postgres(kanban.db):
        env["KANBAN_DB"] = read_only_session(kanban.db)
        before = rows_written(kanban.db, besides=kanban_backends(kanban.db))
    with unchanged(kanban.db):
        yield env
    if is_postgres(kanban.db):
        assert rows_written(kanban.db) == before, "Postgres counted rows written"


def test_dry_run_names_the_task_claim_next_then_claims(kanban: Kanban) -> None:
    with kanban.board() as board:
        low = board.create_task("low", priority=1)
        high = board.create_task("high", priority=5, role="worker")
        board.create_task("reviewing", priority=9, role="reviewer")
        waiting = board.create_task("waiting", priority=7, depends_on=[low.id])
    for flag in ("--dry-run", "--explain"):
        with writes_nothing(kanban) as env:
            preview = kanban.ok("task", "claim-next", "-a", "w1", "-r", "worker", flag, env=env)
        assert (preview["task"], preview["dryRun"], preview["claimable"]) == (None, True, True)
        assert preview["wouldClaim"]["id"] == high.id and preview["wouldRelease"] == []
        assert preview["reasons"][0] == f"claim-next would claim {high.id} now (priority 5)"
        assert preview["explain"]["waitingOnDependencies"] == [waiting.id]
    # Ignoring dependencies changes the pick the same way it changes the claim.
    with writes_nothing(kanban) as env:
        ignoring = kanban.ok(
            "task", "claim-next", "-a", "w1", "--respect-deps=false", "--dry-run", env=env
        )
    assert ignoring["wouldClaim"]["id"] != high.id
    claimed = kanban.ok("task", "claim-next", "-a", "w1", "--respect-deps=false")
    assert claimed["id"] == ignoring["wouldClaim"]["id"]
    assert kanban.ok("task", "claim-next", "-a", "w2", "-r", "worker")["id"] == high.id


def test_a_lapsed_lease_is_reported_not_released(kanban: Kanban) -> None:
    """The release of an expired lease is claim-next's first write: the preview reports it (and
    the task it would then claim) and leaves the holder in place until a real claim."""
    with kanban.board() as board:
        lapsing = board.create_task("held", priority=3)
        board.create_task("other", priority=3)
    held = kanban.ok("task", "claim", lapsing.id, "-a", "alice")
    kanban.advance(ms=LEASE_MS + 1)
    with writes_nothing(kanban) as env:
        preview = kanban.ok("task", "claim-next", "-a", "bob", "--explain", env=env)
    assert preview["wouldRelease"] == [
        {
            "id": lapsing.id,
            "assigneeAgentId": "alice",
            "leaseUntil": START_MS + LEASE_MS,
            "claimEpoch": held["claimEpoch"],
        }
    ]
    # Released, it is a todo task changed now: it outranks the other task of its priority.
    assert preview["wouldClaim"]["id"] == lapsing.id
    assert preview["reasons"][:2] == [
        f"claim-next would first release 1 lapsed lease(s): {lapsing.id} (alice)",
        f"claim-next would claim {lapsing.id} now (priority 3)",
    ]
    assert kanban.row(lapsing.id)["assigneeAgentId"] == "alice"  # still hers
    claimed = kanban.ok("task", "claim-next", "-a", "bob")
    assert (claimed["id"], claimed["assigneeAgentId"]) == (lapsing.id, "bob")
    assert [e["kind"] for e in kanban.ok("events")][-2:] == ["lease_expired", "task_claimed"]


def test_why_reports_a_lapsed_lease_and_releases_nothing(kanban: Kanban) -> None:
    """`task why` on a task whose lease lapsed: the task is still in progress under that lease
    (asking never writes), claimable because the next claim releases it."""
    with kanban.board() as board:
        lapsing = board.create_task("held")
    held = kanban.ok("task", "claim", lapsing.id, "-a", "alice")
    kanban.advance(ms=LEASE_MS + 1)
    with writes_nothing(kanban) as env:
        why = kanban.ok("task", "why", lapsing.id, env=env)
    assert (why["claimable"], why["status"], why["leaseHolder"]) == (True, "in_progress", "alice")
    assert why["leaseUntil"] == START_MS + LEASE_MS
    (reason,) = why["reasons"]
    assert reason.startswith(f"{lapsing.id} is in_progress under alice's lapsed lease (it ran out")
    assert reason.endswith("the next claim releases it to todo and takes it")
    row = kanban.row(lapsing.id)
    assert (row["status"], row["claimEpoch"]) == ("in_progress", held["claimEpoch"])


def test_nothing_claimable_says_why_and_exits_3(kanban: Kanban) -> None:
    with kanban.board() as board:
        blocker = board.create_task("blocker", role="reviewer")
        board.create_task("waits", depends_on=[blocker.id])
    kanban.ok("task", "claim", blocker.id, "-a", "carol")
    with writes_nothing(kanban) as env:
        idle = kanban.run("task", "claim-next", "-a", "w1", "-r", "worker", "--dry-run", env=env)
    assert idle.code == 3, str(idle)
    assert (idle.doc["task"], idle.doc["wouldClaim"], idle.doc["claimable"]) == (None, None, False)
    assert idle.doc["reasons"][0] == "claim-next would claim nothing now"
    assert "1 todo task(s) wait on unfinished dependencies" in idle.doc["reasons"]
    assert idle.doc["explain"]["nextLeaseExpiry"] == START_MS + LEASE_MS


def test_the_write_proofs_see_a_real_claim(kanban: Kanban) -> None:
    """The proofs above can fail: a real claim-next moves each of them."""
    with kanban.board() as board:
        board.create_task("to claim")
    if is_postgres(kanban.db):
        refused = kanban.run(
            "task", "claim-next", "-a", "w1", env={"KANBAN_DB": read_only_session(kanban.db)}
        )
        assert refused.code != 0 and "read-only" in refused.err, str(refused)
        before = rows_written(kanban.db, besides=kanban_backends(kanban.db))
        kanban.ok("task", "claim-next", "-a", "w1")
        after = rows_written(kanban.db)
        assert after["updated"] > before["updated"] and after["inserted"] > before["inserted"]
        return
    with pytest.raises(AssertionError, match="a commit happened"), unchanged(kanban.db):
        kanban.ok("task", "claim-next", "-a", "w1")
