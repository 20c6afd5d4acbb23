"""A per-worktree lock that works across processes: `flock` on a small file beside the worktree.

Two agents, or an agent and an operator, acting on one task's worktree must not interleave git
operations (a pause removing the checkout under a running verification, two provisions adding it
twice). `flock` locks belong to an open file description, so they also exclude threads of one
process that open the file separately, and the kernel drops them when a holder dies: a crashed
agent never leaves the worktree locked.

Mutations take the lock exclusively and write who holds it into the file, so a caller that gives
up waiting can say what it waited for. Reads take it shared.
"""

import errno
import fcntl
import json
import os
import random
import stat
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from ..errors import BoardError, Reason


class WorktreeLock:
    """`with WorktreeLock(path, purpose="pause TASK-1"):` holds the lock for the block, or raises
    `BoardError(BUSY)` after `timeout_s` with the holder's pid, purpose and start time."""

    def __init__(
        self,
        path: Path,
        *,
        purpose: str,
        shared: bool = False,
        timeout_s: float = 60.0,
        subject: str | None = None,
    ) -> None:
        self.path = path
        self.purpose = purpose
        self.shared = shared
        self.timeout_s = timeout_s
        self.subject = subject or path.stem
        self._fd: int | None = None

    def acquire(self) -> "WorktreeLock":
        fd = _open_lock_file(self.path)
        mode = fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _read_holder(fd)
                    os.close(fd)
                    doing = f" ({holder.get('purpose')}, pid {holder.get('pid')})" if holder else ""
                    raise BoardError(
                        Reason.BUSY,
                        f"the worktree of {self.subject} is busy{doing}; try again shortly",
                        holder=holder or None,
                        waitedS=self.timeout_s,
                    ) from None
                time.sleep(random.uniform(0.01, 0.05))
        if not self.shared:
            note = json.dumps(
                {"pid": os.getpid(), "purpose": self.purpose, "since": time.time_ns() // 10**6}
            ).encode()
            os.ftruncate(fd, 0)
            os.pwrite(fd, note, 0)
        self._fd = fd
        return self

    @property
    def fd(self) -> int | None:
        """The locked descriptor while held: a child handed it keeps the lock until it exits."""
        return self._fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if not self.shared:
                os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def __enter__(self) -> "WorktreeLock":
        return self.acquire()

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _traceback: TracebackType | None,
    ) -> None:
        self.release()


_FLAGS = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK


def _open_lock_file(path: Path) -> int:
    """The lock file, opened without following anything planted in its place. A builder works
    in a checkout beside `.locks/`, so it could put a symlink there (or make `.locks` one) to a
    file of the operator's: the exclusive holder truncates and rewrites its lock file, which would
    then truncate that file. A symlink, FIFO or socket in the way is replaced, never followed;
    a folder in the way is refused."""
    for folder in (path.parent.parent, path.parent):
        if folder.is_symlink():
            folder.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(2):
        try:
            fd = os.open(path, _FLAGS, 0o644)
        except OSError as error:
            if error.errno != errno.ELOOP or attempt:
                if error.errno == errno.EISDIR:
                    raise _not_a_lock(path) from None
                raise
            path.unlink()  # a symlink: replaced, never followed
            continue
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
        os.close(fd)
        if attempt:
            break
        path.unlink()  # a FIFO or a socket
    raise _not_a_lock(path)


def _not_a_lock(path: Path) -> BoardError:
    return BoardError(
        Reason.INVALID_STATE,
        f"{path} is not a lock file (something else was put in its place); remove it",
        path=str(path),
    )


def _read_holder(fd: int) -> dict[str, Any]:
    """Best effort: what the exclusive holder wrote about itself (empty for shared holders)."""
    try:
        raw = os.pread(fd, 4096, 0)
        value = json.loads(raw) if raw else {}
        return value if isinstance(value, dict) else {}
    except (OSError, ValueError):
        return {}
