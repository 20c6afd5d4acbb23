"""A seed 003 client keeps its task while it works: the real `kanban serve`, a short lease
(`KANBAN_LEASE_MS`) and a quick release pass, and clients that use only the seed's routes and
bodies (no heartbeat route). The holder's PATCH is its sign of life; silence, an open run
alone, or another caller's PATCH hold nothing, and the task is released once its lease ends."""

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from boardlib import Board
from tests.http.conftest import Api, serving
from tests.http.test_serve import kanban_serve, write_tokens

LEASE_MS = 1500
LEASES_HELD = 3  # a working client keeps its task past this many lease lengths
BEAT_S = 0.25  # how often the working client PATCHes: six times a lease
# The release pass runs every 100 ms: a silent client's task is back in todo soon after its
# lease ends (the slack is for a loaded machine, not for the server).
RELEASE_SLACK_S = 5.0
TOKENS = {
    "alice": "alice-secret-0123456789",
    "bob": "bob-secret-0123456789ab",
    "dana": "dana-secret-0123456789a",  # operator:dana
}


@contextmanager
def seed_server(tmp_path: Path, per_agent: bool) -> Iterator[dict[str, httpx.Client]]:
    """`kanban serve` with the short lease, and a client per caller: `alice`, `bob` and an
    operator `dana` with per-agent tokens; one `alice` naming nobody on an open server."""
    args = ("--tokens", str(write_tokens(tmp_path / "tokens"))) if per_agent else ()
    with kanban_serve(
        tmp_path, *args, KANBAN_LEASE_MS=str(LEASE_MS), KANBAN_RECONCILE_INTERVAL_MS="100"
    ) as served:
        names = TOKENS if per_agent else {"alice": ""}
        clients = {
            name: httpx.Client(
                base_url=served.url,
                timeout=30,
                headers={"Authorization": f"Bearer {token}"} if token else {},
            )
            for name, token in names.items()
        }
        try:
            yield clients
        finally:
            for client in clients.values():
                client.close()


def claim_and_run(client: httpx.Client, title: str) -> tuple[str, str]:
    """Seed 003's start of work: create, claim as alice, open a run. The task and run ids."""
    task = client.post("/api/board", json={"title": title}).json()["task"]
    claimed = client.post(f"/api/board/{task['id']}/claim", json={"assigneeAgentId": "alice"})
    assert claimed.status_code == 200, claimed.text
    opened = client.post(f"/api/board/{task['id']}/executions", json={"executorType": "sh"})
    assert opened.status_code == 200, opened.text
    return task["id"], opened.json()["execution"]["id"]


def read(client: httpx.Client, task_id: str) -> dict[str, Any]:
    answer = client.get(f"/api/board/{task_id}")
    assert answer.status_code == 200, answer.text
    return answer.json()["task"]  # type: ignore[no-any-return]


def released_within(client: httpx.Client, task_id: str, seconds: float) -> float | None:
    """Seconds until the task is back in todo, or None if it is not within `seconds`."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if read(client, task_id)["status"] == "todo":
            return time.monotonic() - start
        time.sleep(0.05)
    return None


@pytest.mark.slow
@pytest.mark.parametrize("per_agent", [False, True], ids=["open", "agent-token"])
def test_a_seed_client_that_patches_keeps_its_task_past_many_leases(
    tmp_path: Path, per_agent: bool
) -> None:
    """Found by a client written from the seed text alone: it kept PATCHing its task (and its
    run open) and lost the task to the release pass after one lease, as nothing it could call
    renewed the lease. Its PATCHes (an edit, or a bare same-status move) now renew it."""
    with seed_server(tmp_path, per_agent) as clients:
        alice = clients["alice"]
        task_id, run_id = claim_and_run(alice, "long work")
        first = read(alice, task_id)
        start = time.monotonic()
        step = 0
        while time.monotonic() - start < LEASES_HELD * LEASE_MS / 1000:
            body = {"description": f"step {step}"} if step % 2 else {"status": "in_progress"}
            answer = alice.patch(f"/api/board/{task_id}", json=body)
            assert answer.status_code == 200, (step, answer.text)
            step += 1
            time.sleep(BEAT_S)
        held = read(alice, task_id)
        assert (held["status"], held["assigneeAgentId"]) == ("in_progress", "alice")
        assert held["claimEpoch"] == first["claimEpoch"]  # never released and claimed again
        assert held["leaseUntil"] > first["leaseUntil"]
        closed = alice.patch(f"/api/board/executions/{run_id}", json={"status": "succeeded"})
        assert closed.status_code == 200, closed.text  # the run it kept open is still its own
        done = alice.patch(f"/api/board/{task_id}", json={"status": "in_review"})
        assert done.status_code == 200 and done.json()["task"]["status"] == "in_review"


@pytest.mark.slow
@pytest.mark.parametrize("per_agent", [False, True], ids=["open", "agent-token"])
def test_a_silent_seed_client_with_its_run_open_is_released_on_time(
    tmp_path: Path, per_agent: bool
) -> None:
    """An open run alone holds nothing: the client that stops calling loses the task once its
    lease ends, and its run is timed out (closing it later is the seed's 404)."""
    with seed_server(tmp_path, per_agent) as clients:
        alice = clients["alice"]
        task_id, run_id = claim_and_run(alice, "abandoned")
        lease_until = read(alice, task_id)["leaseUntil"]
        time.sleep(LEASE_MS / 2000)
        assert read(alice, task_id)["status"] == "in_progress"  # not before its lease ends
        waited = released_within(alice, task_id, LEASE_MS / 1000 + RELEASE_SLACK_S)
        assert waited is not None, "the silent client's task was never released"
        assert time.time() * 1000 > lease_until
        runs = alice.get(f"/api/board/{task_id}/executions").json()["executions"]
        assert [(run["id"], run["status"]) for run in runs] == [(run_id, "timed_out")]
        late = alice.patch(f"/api/board/executions/{run_id}", json={"status": "succeeded"})
        assert late.status_code == 404


@pytest.mark.slow
def test_another_callers_patch_keeps_nobody_s_task(tmp_path: Path) -> None:
    """With per-agent tokens the board knows who calls: alice's own PATCHes keep her task, but
    once she falls silent, an operator editing it every beat does not keep it (a person's edit
    is no sign of alice's life), and bob's PATCH is refused and writes nothing."""
    with seed_server(tmp_path, per_agent=True) as clients:
        alice, bob, dana = clients["alice"], clients["bob"], clients["dana"]
        task_id, _ = claim_and_run(alice, "watched")
        start = time.monotonic()
        while time.monotonic() - start < 2 * LEASE_MS / 1000:  # alice works: two leases
            assert alice.patch(f"/api/board/{task_id}", json={"priority": 1}).status_code == 200
            time.sleep(BEAT_S)
        assert read(alice, task_id)["status"] == "in_progress"
        mine = read(alice, task_id)
        refused = bob.patch(f"/api/board/{task_id}", json={"priority": 9})
        assert refused.status_code == 403 and refused.json()["reason"] == "not_assignee"
        assert read(alice, task_id) == mine  # bob's PATCH wrote nothing
        start = time.monotonic()
        released = None
        while time.monotonic() - start < LEASE_MS / 1000 + RELEASE_SLACK_S:
            edited = dana.patch(f"/api/board/{task_id}", json={"priority": 5})
            assert edited.status_code == 200, edited.text
            if edited.json()["task"]["status"] == "todo":
                released = time.monotonic() - start
                break
            assert edited.json()["task"]["leaseUntil"] == mine["leaseUntil"]  # not renewed
            time.sleep(BEAT_S)
        assert released is not None, "the operator's edits kept alice's task"
    with Board(tmp_path / "board.db", read_only=True, reconcile_orphans=False) as board:
        kinds = [event.kind for event in board.events(task_id=task_id)]
    assert kinds.count("lease_expired") == 1


# -- which calls are a sign of life: the app in-process on a clock the test moves ---------------


def renewed_by(api: Api, task_id: str, call: Any) -> bool:
    """Whether `call()` (answered 200) renewed the task's lease, most of a lease after the last
    renewal: the lease then runs a whole lease from now."""
    api.clock.advance(ms=api.board.config.lease_ms * 9 // 10)
    before = api.stored(task_id).lease_until
    answer = call()
    assert answer.status_code == 200, answer.text
    after = api.stored(task_id).lease_until
    assert after is not None and before is not None
    if after == before:
        return False
    assert after == api.clock.now_ms() + api.board.config.lease_ms
    return True


def test_the_holders_seed_calls_renew_its_lease_and_no_one_elses_do(tmp_path: Path) -> None:
    """Each of the holder's seed calls renews the lease, so together they keep the task past
    many leases, and its event says so (`leaseUntil`: the log stays the whole account of the
    lease); another author's comment does not, and the release pass then takes it on time."""
    with serving(tmp_path) as api:
        task = api.claimed("alice")
        path = f"/api/board/{task['id']}"
        client = api.client

        def comment(author: str) -> Any:
            return client.post(f"{path}/comments", json={"body": "note", "authorAgentId": author})

        def open_run() -> Any:
            return client.post(f"{path}/executions", json={"executorType": "sh"})

        def edit() -> Any:
            return client.patch(path, json={"title": "t2"})

        def bare() -> Any:
            return client.patch(path, json={"status": "in_progress"})

        for call, kind in [
            (lambda: comment("alice"), "comment_added"),
            (open_run, "execution_started"),
            (edit, "task_updated"),
            (bare, "lease_renewed"),  # a bare PATCH writes the lease alone, as a heartbeat
        ]:
            seq = api.last_seq()
            assert renewed_by(api, task["id"], call), kind
            [event] = api.events(seq)
            assert (event.kind, event.data["leaseUntil"]) == (
                kind,
                api.stored(task["id"]).lease_until,
            )
        assert (event.actor, event.data["verb"]) == ("alice", "move")
        api.board.reconcile_stale_tasks()
        assert api.stored(task["id"]).status == "in_progress"  # four leases on, still alice's
        seq = api.last_seq()
        assert not renewed_by(api, task["id"], lambda: comment("bob"))
        assert "leaseUntil" not in api.events(seq)[0].data
        api.clock.advance(ms=api.board.config.lease_ms // 10 + 1)  # the lease just ran out
        api.board.reconcile_stale_tasks()
        stored = api.stored(task["id"])
        assert (stored.status, stored.assignee_agent_id) == ("todo", None)


def test_a_sign_of_life_never_revives_nor_cuts_short_a_lease(tmp_path: Path) -> None:
    """A call after the lease ran out is answered as before but renews nothing (the release
    pass takes the task); a lease the holder extended is not cut back to the board's; and a
    PATCH quoting another claim's epoch renews nothing."""
    with serving(tmp_path) as api:
        task = api.claimed("alice")
        path = f"/api/board/{task['id']}"
        extended = api.client.post(
            f"{path}/extend-lease", json={"agent": "alice", "minutes": 60}
        ).json()["task"]["leaseUntil"]
        assert api.client.patch(path, json={"title": "t2"}).status_code == 200
        assert api.stored(task["id"]).lease_until == extended
        api.clock.advance(ms=extended - api.clock.now_ms() + 1)  # the hour ran out
        assert api.client.patch(path, json={"title": "late"}).status_code == 200
        assert api.stored(task["id"]).lease_until == extended
        api.board.reconcile_stale_tasks()
        assert api.stored(task["id"]).status == "todo"
        again = api.claimed("alice")
        before = api.stored(again["id"]).lease_until
        api.clock.advance(ms=1000)
        wrong = api.client.patch(
            f"/api/board/{again['id']}", json={"status": "in_progress", "epoch": 9}
        )
        assert wrong.status_code == 200  # a same-status move is not judged, and writes nothing
        assert api.stored(again["id"]).lease_until == before
