"""Guarantee 1: kill -9, SIGSTOP and restarts lose no work and never double-assign it.

CI runs the soak for 45 s (plus the drain); `pytest tests/chaos/test_soak.py --soak-seconds 600
--soak-report soak.json` runs it longer and keeps the report that `python -m
tests.chaos.guarantees soak.json` writes into docs/guarantees.md. The assertions are about
correctness only (they hold under any load); a busier machine merely does less work in the same
time.
It runs on both backends, as every board test does; `--soak-db PATH|postgresql://...` soaks that
one board instead, and `--soak-db postgres` a fresh schema of the session's throwaway cluster.
"""

import json
from pathlib import Path

import pytest

from tests.conftest import new_postgres_board

from .soak import SoakConfig, run_soak

pytestmark = pytest.mark.slow  # 45 s of kill -9 per backend

CI_SECONDS = 45.0


def test_kill_freeze_restart_soak(
    request: pytest.FixtureRequest, tmp_path: Path, backend: str
) -> None:
    """Runs on both backends (`[sqlite]`: a file in tmp_path; `[postgres]`: a fresh schema of the
    session's throwaway cluster). `--soak-db` names one board instead, soaked once."""
    option = request.config.getoption
    surfaces = option("--soak-surfaces") or "lib,cli,http"
    db = option("--soak-db")
    if db and backend != "sqlite":
        pytest.skip("--soak-db names the one board to soak; it runs under the [sqlite] id")
    if db == "postgres" or (not db and backend == "postgres"):
        db = new_postgres_board(request.getfixturevalue("postgres_cluster"))
    config = SoakConfig(
        seconds=option("--soak-seconds") or CI_SECONDS,
        workers=option("--soak-workers"),
        surfaces=tuple(surfaces.split(",")),
        db=db,
    )
    report = run_soak(config, tmp_path / "soak")
    if option("--soak-report"):
        # soak.json for the [sqlite] run (what docs/guarantees.md is written from), and
        # soak.postgres.json beside it for the [postgres] one, so neither overwrites the other
        target = Path(option("--soak-report"))
        if backend == "postgres" and not option("--soak-db"):
            target = target.with_name(f"{target.stem}.postgres{target.suffix}")
        target.write_text(json.dumps(report, indent=2) + "\n")
    failed = {name: check for name, check in report["checks"].items() if not check["ok"]}
    assert not failed, json.dumps({"failed": failed, "figures": report["figures"]}, indent=2)
    figures = report["figures"]
    assert figures["lost"] == 0 and figures["doubleHeld"] == 0
    assert figures["lateWritesAccepted"] == 0
    assert figures["tasks"] >= config.workers * config.waiting_per_worker
    assert figures["kills"] > 0 and figures["freezes"] > 0
