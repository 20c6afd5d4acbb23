"""Which process holds something, in a form another process can judge: the machine (boot id and
pid namespace), the pid, when that pid started (so a reused pid is told apart) and a random part.
A process of this machine that is gone is known gone at once; one of another machine only by its
lease running out. The machine a worktree was made on (`machine_id`), kept across reboots. And
the killing of a command's process group. Imports nothing of the project.
"""

import contextlib
import functools
import os
import signal
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import subprocess

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _read(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


HOST_ID_VARIABLE = "KANBAN_HOST_ID"


def host_key() -> str:
    """This machine and pid namespace (empty off Linux), so a pid is judged only where it was
    given out; and `KANBAN_HOST_ID` when set: a process under another value is of another
    machine (never judged gone from here), as a test plays one. Every process of a machine sets
    the same value (`machine_id`), so it changes nothing there."""
    boot = _read("/proc/sys/kernel/random/boot_id")
    if not boot:
        return ""
    try:
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        namespace = 0
    given = os.environ.get(HOST_ID_VARIABLE, "").strip().replace("/", "_").replace(" ", "_")
    return f"{boot}:{namespace}" + (f":{given[:64]}" if given else "")


def machine_id() -> str:
    """The machine a worktree was made on, kept across reboots (unlike `host_key`): the host name
    and the first 12 hex of /etc/machine-id (the boot id where there is none). `KANBAN_HOST_ID`
    overrides it: machines that share one worktrees folder and the repositories set the same
    value, and a test plays another machine with it. Why: docs/worktrees.md, "Several machines"."""
    given = os.environ.get(HOST_ID_VARIABLE, "").strip()
    return given[:200] if given else _machine_file_id()


@functools.cache
def _machine_file_id() -> str:
    import socket

    found = _read("/etc/machine-id") or _read("/var/lib/dbus/machine-id")
    found = found or _read("/proc/sys/kernel/random/boot_id").replace("-", "")
    return f"{socket.gethostname()}:{found[:12] or '?'}"


def stat_fields(pid: int | str) -> list[str]:
    """The fields of `/proc/PID/stat` after the command name (state first, then the parent, the
    process group...), empty when there is no such process (or no /proc)."""
    return _read(f"/proc/{pid}/stat").rpartition(")")[2].split()


# A process in these states has exited: a zombie waits only for its parent to reap it (a lander
# killed under `timeout`, or in a container whose pid 1 never reaps, stays one for long).
EXITED_STATES = ("Z", "X")


def _started(pid: int) -> str:
    """When process `pid` started (clock ticks since boot), empty when there is no such process
    or it has exited."""
    fields = stat_fields(pid)
    if len(fields) <= 19 or fields[0] in EXITED_STATES:
        return ""
    return fields[19]


def process_token() -> str:
    """A unique token for this process: machine, pid and its start, and a random part."""
    pid = os.getpid()
    return f"{host_key()}/{pid}/{_started(pid)}/{uuid.uuid4().hex[:12]}"


def process_gone(token: str) -> bool:
    """True when `token` names a process of this machine that is no longer running. A process of
    another machine (or an unreadable token) is never judged gone here: only its lease says."""
    host, _, rest = token.partition("/")
    pid_text, _, rest = rest.partition("/")
    started, _, _ = rest.partition("/")
    if not host or host != host_key() or not pid_text.isdigit():
        return False
    return _started(int(pid_text)) != started


def token_pid(token: str) -> int | None:
    """The pid a token names (for messages), None when unreadable."""
    parts = token.split("/")
    return int(parts[1]) if len(parts) > 2 and parts[1].isdigit() else None


def kill_group(process: "subprocess.Popen[bytes]") -> None:
    """SIGKILL the process group `process` leads (started with `start_new_session`): whatever
    it started too. Nothing once it was reaped, when its pid may be another process's."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


def token_words(token: str) -> str:
    """A token as a person reads it in a table: `pid 5457 here` for a process of this machine,
    `pid 5457 @a2b2f67e` (its boot id, cut) for another's; the whole token (some 70 characters,
    which folded over three lines of `consumers list` at 80 columns) is in the JSON. An unreadable
    token is given back as it is."""
    pid = token_pid(token)
    if pid is None:
        return token
    host = token.partition("/")[0]
    return f"pid {pid} here" if host == host_key() else f"pid {pid} @{host[:8] or '?'}"


def group_token(pid: int) -> str:
    """The process group `pid` leads, as a later process can judge it: this process's token
    (the one that started it), then the leader's pid and start."""
    return f"{process_token()} {pid}/{_started(pid)}"


def orphaned_group(token: str) -> int | None:
    """The group id a `group_token` names once the process that started it is gone, while the
    pid is still that group's (its leader the same process, or exited); else None."""
    owner, _, leader = token.strip().partition(" ")
    pid_text, _, started = leader.partition("/")
    if not pid_text.isdigit() or not process_gone(owner):
        return None
    now = _started(int(pid_text))
    if now and now != started:
        return None  # the pid is another process's: the group it named is empty
    return int(pid_text)


def dying_with_parent(argv: list[str]) -> tuple[list[str], Callable[[], None] | None]:
    """`argv` and the `preexec_fn` to start it with so that it is SIGKILLed when this process
    dies (`die_with_parent`). Through util-linux's `setpriv --pdeathsig` when there is one: the
    child then execs as it would, and Python spawns it with vfork, not fork (a fork copies this
    process's page tables: 15 ms a spawn from a 400 MB process, against 1 ms; a test run starts
    thousands of verify commands). setpriv cannot see a parent that died before it ran; the
    command's recorded group covers that (`gate.stop_orphaned_verify`)."""
    setpriv = _setpriv()
    if setpriv is not None:
        return [setpriv, "--pdeathsig", "KILL", "--", *argv], None
    return list(argv), die_with_parent()


@functools.cache
def _setpriv() -> str | None:
    """util-linux's setpriv, when it has `--pdeathsig` (2.33 and later; Linux only)."""
    if not sys.platform.startswith("linux"):
        return None
    import shutil
    import subprocess

    found = shutil.which("setpriv")
    if found is None:
        return None
    try:
        shown = subprocess.run([found, "--help"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return found if "--pdeathsig" in shown.stdout else None


@functools.cache
def _prctl() -> Any:
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def die_with_parent() -> Callable[[], None] | None:
    """A `preexec_fn` after which the child is SIGKILLed when this process dies, kill -9
    included (Linux; None elsewhere): a killed lander, gate or watcher leaves no command running
    on. A `preexec_fn` makes Python fork instead of vfork: about 5 ms more a spawn (median of
    200 on the project's machine, 0.5 -> 5 ms), so it is for a verify or watch command, never
    for every git call."""
    prctl = _prctl() if sys.platform.startswith("linux") else None
    if prctl is None:
        return None
    parent = os.getpid()

    def preexec() -> None:  # pragma: no cover - runs in the child, between fork and exec
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the parent died before the request took hold
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec
