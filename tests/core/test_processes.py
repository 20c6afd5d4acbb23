"""Process-group helpers (`boardlib.processes`) on real processes: what a command started dies
with it, and a pid that is no longer its own is never signalled."""

import subprocess
import time
from pathlib import Path

from boardlib import processes


def alive(pid: int) -> bool:
    fields = processes.stat_fields(pid)
    return bool(fields) and fields[0] not in processes.EXITED_STATES


def test_kill_group_kills_what_the_command_started_and_is_the_one_killer(tmp_path: Path) -> None:
    """The watcher and git's capped reads each had their own copy of this kill; both use this one
    now."""
    from boardlib import watch
    from boardlib.worktrees import gitrepo

    child = tmp_path / "child"
    process = subprocess.Popen(
        ["bash", "-c", f"sleep 30 & echo $! > {child}; wait"], start_new_session=True
    )
    while not child.exists() or not child.read_text().strip():
        time.sleep(0.01)
    grandchild = int(child.read_text())
    processes.kill_group(process)
    process.wait(timeout=10)
    deadline = time.monotonic() + 10
    while alive(grandchild):
        assert time.monotonic() < deadline, "the command's own child outlived the kill"
        time.sleep(0.01)
    assert not hasattr(watch, "_kill_group")
    assert watch.kill_group is gitrepo.kill_group is processes.kill_group


def test_kill_group_leaves_a_reaped_command_alone() -> None:
    """Once reaped, its pid (and group id) may be another process's: nothing is sent."""
    process = subprocess.Popen(["true"], start_new_session=True)
    process.wait(timeout=10)
    processes.kill_group(process)  # no ProcessLookupError, no signal
    assert process.returncode == 0
