"""Guarantee 5: a full disk refuses writes cleanly, loses nothing committed, and the board works
again once space is freed.

The board lives on a 4 MB tmpfs mounted in a private mount namespace (root, `unshare -m`); where
the machine does not allow that the test is skipped and says why. The scenario itself runs in
that namespace (tests/chaos/diskfull.py) and reports what happened; this test judges it:

- every write on the full disk is the typed refusal `disk_full` (library `BoardError`, CLI exit 2
  with one JSON line, HTTP 507), and a plan is refused whole;
- reads answer throughout, and everything committed before is still there, byte for byte equal
  as the board serialises it; `PRAGMA integrity_check` stays ok;
- after the filler is removed, the library, the CLI and the server write again, and `kanban db
  check` is clean.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _can_mount_tmpfs() -> str | None:
    if os.geteuid() != 0:
        return "needs root to mount a size-limited tmpfs in a private mount namespace"
    probe = subprocess.run(
        [
            "unshare",
            "-m",
            "--propagation",
            "private",
            "sh",
            "-c",
            "mount -t tmpfs -o size=1m tmpfs /mnt && umount /mnt",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        return f"cannot mount a tmpfs in a private namespace here: {probe.stderr.strip()}"
    return None


WHY_NOT = _can_mount_tmpfs()


@pytest.mark.slow
@pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")
def test_a_full_disk_refuses_writes_cleanly_keeps_what_was_committed_and_recovers(
    tmp_path: Path,
) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANBAN_")}
    run = subprocess.run(
        [
            "unshare",
            "-m",
            "--propagation",
            "private",
            "sh",
            "-c",
            f"mount -t tmpfs -o size=4m tmpfs '{mount}' && "
            f"exec '{sys.executable}' -m tests.chaos.diskfull '{mount}'",
        ],
        cwd=REPO,
        env=env | {"PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    report = json.loads(run.stdout)

    # Writes refused, typed, with nothing half-written.
    assert report["libraryRefusal"]["reason"] == "disk_full", report["libraryRefusal"]
    assert report["planRefusal"]["reason"] == "disk_full", report["planRefusal"]
    cli_write = report["cliWrite"]
    assert cli_write["code"] == 2, cli_write
    assert json.loads(cli_write["err"])["reason"] == "disk_full"
    assert report["httpWrite"]["status"] == 507, report["httpWrite"]
    assert report["httpWrite"]["doc"]["reason"] == "disk_full"
    titles = [task["title"] for task in report["whileFull"]]
    assert not any(t.startswith("plan ") for t in titles)  # the plan: all or nothing
    assert "from the cli" not in titles and "over http" not in titles
    assert report["afterRefusal"] == report["whileFull"]  # refusals wrote nothing

    # Nothing committed was lost; reads answered on the full disk.
    committed = {task["id"]: task for task in report["committed"]}
    assert {t["id"]: t for t in report["whileFull"] if t["id"] in committed} == committed
    assert len(report["whileFull"]) == len(committed) + report["libraryMadeBeforeFull"]
    assert report["cliRead"]["code"] == 0 and report["httpRead"] == 200
    assert report["integrityWhileFull"] == "ok"

    # Space freed: everyone writes again, and the board is whole.
    assert report["libraryAfterFreeing"]
    assert report["cliAfterFreeing"]["code"] == 0, report["cliAfterFreeing"]
    assert report["httpAfterFreeing"] == 200
    assert report["check"]["code"] == 0, report["check"]
    final = {task["title"] for task in report["final"]}
    assert {"after freeing", "cli after freeing", "http after freeing"} <= final
    assert report["serverExit"] == 0 and report["integrityAtEnd"] == "ok"
