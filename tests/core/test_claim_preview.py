"""`Board.preview_claim_next` predicts `claim_next`: on a board driven at random (priorities,
roles, teams, dependencies, claims whose leases lapse), the task the preview names is the task the
claim then takes, or one that ranks exactly as high (a tie of priority and change time, which
each store breaks by its own index order), and asking changes nothing."""

import random

from boardlib import Board, ManualClock
from boardlib import transitions as t

ROUNDS = 40


def test_the_preview_names_what_claim_next_takes(
    board: Board, clock: ManualClock, backend: str
) -> None:
    rng = random.Random(26)
    roles = [None, "worker", "reviewer"]
    teams = [None, "core"]
    lease = board.config.lease_ms
    seen = {"none": 0, "claimed": 0, "lapsed": 0}
    for round_ in range(ROUNDS):
        for _ in range(rng.randint(0, 3)):
            open_ids = [task.id for task in board.all_tasks() if task.status != t.DONE]
            deps = rng.sample(open_ids, k=min(len(open_ids), rng.randint(0, 1)))
            board.create_task(
                f"task {round_}",
                priority=rng.randint(0, 4),
                role=rng.choice(roles),
                team_id=rng.choice(teams),
                depends_on=deps,
            )
        clock.advance(ms=rng.choice([1, 1_000, lease // 2, lease + 1]))
        role, team = rng.choice(roles), rng.choice(teams)
        respect = rng.random() < 0.8
        before = {task.id: task for task in board.all_tasks()}
        seq = board.last_event_seq()
        preview = board.preview_claim_next(role=role, team_id=team, respect_deps=respect)
        asked_at = clock.now_ms()
        assert board.last_event_seq() == seq  # asking wrote nothing
        assert {task.id: task for task in board.all_tasks()} == before
        lapsed = {lapse.id for lapse in preview.would_release}
        claimed = board.claim_next(f"agent-{round_}", role=role, team_id=team, respect_deps=respect)
        if preview.would_claim is None:
            assert claimed is None, f"round {round_}: claimed {claimed.id}, preview said none"
            seen["none"] += 1
            continue
        assert claimed is not None, f"round {round_}: preview said {preview.would_claim.id}"

        ranks = [  # how claim-next ranks a task: a released one as changed when released
            (
                before[task_id].priority,
                asked_at if task_id in lapsed else before[task_id].updated_at,
            )
            for task_id in (preview.would_claim.id, claimed.id)
        ]
        assert ranks[0] == ranks[1], f"round {round_}"
        seen["lapsed"] += bool(lapsed)
        seen["claimed"] += 1
        if backend == "sqlite":  # and a tie goes to the older task, as the ready index orders it
            assert preview.would_claim.id == claimed.id, f"round {round_}"
        if rng.random() < 0.5:  # finish some work, so dependencies come free
            board.complete(claimed.id, f"agent-{round_}")
            board.approve(claimed.id, "judge")
    assert min(seen.values()) >= 3, seen  # the walk met each case, several times
