"""`run_kanban`: one CLI run to completion, as `subprocess.run(..., capture_output=True,
text=True)` would give it, in a process forked from a warm `kanban` (`tests/cli/zygote.py`).

The run is a real process: its own pid, folder, environment, stdin/stdout/stderr and exit status
(a signal gives a negative code, as with `subprocess`). What it skips is the interpreter's and
the CLI's start-up, which fresh interpreters still test (`test_hygiene.py`, the walls). A run
whose environment would change how Python itself starts (`PYTHON*`, the locale) goes to a fresh
interpreter, and so does every run when `KANBAN_TEST_FRESH_PROCESSES=1`.
"""

import atexit
import json
import locale
import os
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from tests.cli.zygote import HEADER

ZYGOTE = Path(__file__).with_name("zygote.py")
STARTUP_KEYS = ("PYTHON", "LANG", "LC_")  # what Python reads before any of our code runs


def start_zygote(
    argv: Sequence[str], env: Mapping[str, str], what: str, cwd: str | None = None
) -> "subprocess.Popen[str]":
    """A fork-server script (this folder's zygote.py, tests/mcp/zygote.py) started and waited
    on until it says `ready`: the CLI's, the MCP server's and `kanban serve`'s warm processes."""
    process = subprocess.Popen(
        [sys.executable, *argv],
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    ready = process.stdout.readline()
    assert ready == "ready\n", f"the {what} zygote did not start: {ready!r}"
    return process


def starts_like(env: Mapping[str, str], zygote_env: Mapping[str, str]) -> bool:
    """Would a fresh interpreter with `env` start as a zygote started with `zygote_env` did?"""

    def startup(values: Mapping[str, str]) -> dict[str, str]:
        return {k: v for k, v in values.items() if k.startswith(STARTUP_KEYS)}

    return startup(env) == startup(zygote_env)


class Zygote:
    """The warm process of this test process, started on first use (one per xdist worker)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.folder = tempfile.mkdtemp(prefix="kanban-zygote-")
        self.socket = os.path.join(self.folder, "s")
        self.env = dict(env)
        self.cpu_s = 0.0  # what the runs cost (not counted by this process's children's times)
        self.process = start_zygote([str(ZYGOTE), self.socket], self.env, "CLI", cwd=self.folder)

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        report = os.environ.get("KANBAN_TEST_RUNS_CPU")  # a file: benchmarking the suite itself
        if report:
            with open(report, "a") as out:
                out.write(f"{self.cpu_s:.3f}\n")
        self.process.kill()
        self.process.wait()
        for name in os.listdir(self.folder):
            os.unlink(os.path.join(self.folder, name))
        os.rmdir(self.folder)

    def starts_like(self, env: Mapping[str, str]) -> bool:
        """Would a fresh interpreter with `env` start as the zygote did?"""
        return starts_like(env, self.env)

    def run(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        stdin: IO[bytes],
        timeout: float,
        cwd: str,
    ) -> tuple[int, bytes, bytes]:
        request = json.dumps(
            {"argv0": argv[0], "args": list(argv[1:]), "env": dict(env), "cwd": cwd}
        ).encode()
        with (
            tempfile.TemporaryFile() as out,
            tempfile.TemporaryFile() as err,
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn,
        ):
            conn.connect(self.socket)
            descriptors = [stdin.fileno(), out.fileno(), err.fileno()]
            socket.send_fds(conn, [HEADER.pack(len(request)) + request], descriptors)
            replies = conn.makefile("rb")
            pid = json.loads(replies.readline())["pid"]
            conn.settimeout(timeout)
            try:
                line = replies.readline()
            except TimeoutError:
                os.kill(pid, 9)
                raise subprocess.TimeoutExpired(list(argv), timeout) from None
            if not line:
                raise RuntimeError(f"the CLI zygote's waiter for {argv} went away")
            ended = json.loads(line)
            status = ended["status"]
            with _lock:
                self.cpu_s += ended["cpu"]
            out.seek(0)
            err.seek(0)
            return os.waitstatus_to_exitcode(status), out.read(), err.read()


_lock = threading.Lock()
_zygote: Zygote | None = None


def _warm(env: Mapping[str, str]) -> Zygote | None:
    global _zygote
    if os.environ.get("KANBAN_TEST_FRESH_PROCESSES") == "1":
        return None
    with _lock:
        if _zygote is None or not _zygote.alive():
            base = {k: v for k, v in env.items() if not k.startswith("KANBAN_")}
            _zygote = Zygote(base)
            atexit.register(_zygote.stop)
        zygote = _zygote
    return zygote if zygote.starts_like(env) else None


def _text(data: bytes) -> str:
    """As `subprocess` decodes in text mode: the locale's encoding, universal newlines."""
    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def run_kanban(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    input: str | None = None,
    timeout: float = 120,
    cwd: Path | str | None = None,
) -> "subprocess.CompletedProcess[str]":
    """`argv` (the console script first) run to completion in `cwd` (this process's folder by
    default); see the module's docstring."""
    zygote = _warm(env)
    if zygote is None:
        return subprocess.run(
            list(argv), env=dict(env), input=input, capture_output=True, text=True,
            timeout=timeout, check=False, cwd=cwd,
        )  # fmt: skip
    with tempfile.TemporaryFile() as stdin:
        if input is not None:
            stdin.write(input.encode(locale.getpreferredencoding(False)))
            stdin.seek(0)
        code, out, err = zygote.run(argv, env, stdin, timeout, str(cwd or os.getcwd()))
    return subprocess.CompletedProcess(list(argv), code, _text(out), _text(err))
