"""How many examples a hypothesis test tries: all of them in CI, a quarter in the fast loop.

CI (`KANBAN_CI=1`, set by .ci/run) and `KANBAN_FULL_EXAMPLES=1` run each property test with the
count it names; elsewhere (the edit-test loop, docs/development.md) it tries a quarter, at least
10, so the loop stays short and every property still runs and can still fail.
"""

import os


def full_examples() -> bool:
    return bool(os.environ.get("KANBAN_CI") or os.environ.get("KANBAN_FULL_EXAMPLES"))


def examples(count: int) -> int:
    """`count` in CI, a quarter of it (at least 10, at most `count`) elsewhere."""
    return count if full_examples() else min(count, max(10, count // 4))
