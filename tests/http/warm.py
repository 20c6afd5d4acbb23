"""`popen_serve`: `kanban serve ...` started as `subprocess.Popen` would, in a process forked from
a warm interpreter (tests/mcp/zygote.py, warmed with the HTTP app).

A fresh `kanban serve` spends ~1 CPU-s importing FastAPI, uvicorn, pydantic and our routes before
it answers; the tests start dozens. The forked server is still a real process: its own pid (it
leads its own session, so a test may signal it or its group), its own stdout and stderr pipes,
environment and folder, and an exit status the zygote's keeper reports (a signal gives a negative
code, as with `subprocess`). What it skips is the interpreter's start-up and the imports, which
fresh processes still test (tests/cli/test_hygiene.py, tests/http/test_serve.py's `--help`
imports). A start whose environment would change how Python itself starts goes to a fresh
interpreter, and so does every start when `KANBAN_TEST_FRESH_PROCESSES=1`.
"""

import atexit
import json
import os
import socket
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from tests.cli.conftest import clean_env
from tests.cli.warm import start_zygote, starts_like

ZYGOTE = Path(__file__).parents[1] / "mcp" / "zygote.py"
WARMED = ("kanban.cli.serve", "kanban.http.server", "kanban.http.service", "kanban.http.auth")


class Warm:
    """This test process's serve zygote (one per xdist worker), started on first use and ended
    (killed and waited: the servers' CPU time counts in the run's) when the process exits."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="kanban-serve-zygote-"))
        self.socket = self.folder / "zygote.sock"
        self.env = clean_env()
        self.process = start_zygote([str(ZYGOTE), str(self.socket), *WARMED], self.env, "serve")

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(timeout=30)
        self.socket.unlink(missing_ok=True)
        if self.folder.exists():
            self.folder.rmdir()

    def starts_like(self, env: Mapping[str, str]) -> bool:
        return starts_like(env, self.env)


_lock = threading.Lock()
_warm: list[Warm] = []


def _zygote(env: Mapping[str, str]) -> Warm | None:
    if os.environ.get("KANBAN_TEST_FRESH_PROCESSES") == "1":
        return None
    with _lock:
        if not _warm or not _warm[0].alive():
            _warm[:] = [Warm()]
            atexit.register(_warm[0].stop)
        zygote = _warm[0]
    return zygote if zygote.starts_like(env) else None


class WarmProcess:
    """What the tests use of `subprocess.Popen` (pid, stdout, stderr, returncode, poll, wait,
    send_signal, terminate, kill, communicate), for a process the zygote forked. Its status
    comes from the keeper over the socket: the test process is not its parent."""

    stdin = None

    def __init__(
        self, args: list[str], conn: socket.socket, out: IO[Any] | None, err: IO[Any] | None
    ) -> None:
        self.args = args
        self.stdout = out
        self.stderr = err
        self.returncode: int | None = None
        self._conn = conn
        self._replies = b""
        self.pid = int(self._line(None).split()[1])

    def _line(self, timeout: float | None) -> str:
        """The keeper's next line; TimeoutError when none came in `timeout` seconds."""
        self._conn.settimeout(timeout)
        while b"\n" not in self._replies:
            try:
                more = self._conn.recv(256)
            except BlockingIOError:  # timeout 0: nothing there yet
                raise TimeoutError from None
            if not more:
                raise RuntimeError(f"the serve zygote's keeper of {self.args} went away")
            self._replies += more
        line, self._replies = self._replies.split(b"\n", 1)
        return line.decode()

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            try:
                line = self._line(timeout)
            except TimeoutError:
                raise subprocess.TimeoutExpired(self.args, timeout or 0) from None
            self.returncode = int(line.split()[1])
            self._conn.close()
        return self.returncode

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                self.wait(timeout=0)
            except subprocess.TimeoutExpired:
                return None
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(15)

    def kill(self) -> None:
        self.send_signal(9)

    def communicate(self, input: Any = None, timeout: float | None = None) -> tuple[Any, Any]:
        """Both pipes read to their end (each in a thread, as `subprocess` does), then the
        status."""
        assert input is None, "a served process reads no stdin"
        read: dict[str, Any] = {}
        readers = [
            threading.Thread(target=lambda n=name, s=stream: read.update({n: s.read()}))
            for name, stream in (("out", self.stdout), ("err", self.stderr))
            if stream is not None
        ]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join(timeout)
            if reader.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        self.wait(timeout)
        for stream in (self.stdout, self.stderr):
            if stream is not None:
                stream.close()
        return read.get("out"), read.get("err")

    def __enter__(self) -> "WarmProcess":
        return self

    def __exit__(self, *_: object) -> None:
        for stream in (self.stdout, self.stderr):
            if stream is not None:
                stream.close()
        self.wait()


def _pipe(wanted: Any, text: bool) -> tuple[int, IO[Any] | None, bool]:
    """The descriptor the server writes to, the test's end of it (for PIPE), and whether the
    descriptor is ours to close once handed over."""
    if wanted == subprocess.PIPE:
        read, write = os.pipe()
        return write, os.fdopen(read, "r" if text else "rb"), True
    if wanted == subprocess.DEVNULL or wanted is None:
        return os.open(os.devnull, os.O_WRONLY), None, True
    return wanted.fileno(), None, False


def popen_serve(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    stdout: Any = subprocess.PIPE,
    stderr: Any = subprocess.PIPE,
    text: bool = True,
    cwd: Path | str | None = None,
) -> "subprocess.Popen[Any] | WarmProcess":
    """`argv` (the `kanban` console script, then `... serve ...`) as `subprocess.Popen(argv,
    env=env, stdout=..., stderr=..., text=..., cwd=..., start_new_session=True)` would start it;
    see the module's docstring. (A `None` stream is /dev/null here, not the test's own.)"""
    zygote = _zygote(env)
    if zygote is None:
        return subprocess.Popen(
            list(argv), env=dict(env), stdout=stdout, stderr=stderr, text=text, cwd=cwd,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
    stdin = os.open(os.devnull, os.O_RDONLY)
    out_fd, out, close_out = _pipe(stdout, text)
    err_fd, err, close_err = (
        (out_fd, None, False) if stderr == subprocess.STDOUT else _pipe(stderr, text)
    )
    request = {"argv": list(argv[1:]), "env": dict(env), "cwd": str(cwd or os.getcwd())}
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(zygote.socket))
        socket.send_fds(conn, [json.dumps(request).encode() + b"\n"], [stdin, out_fd, err_fd])
    finally:
        os.close(stdin)
        if close_out:
            os.close(out_fd)
        if close_err:
            os.close(err_fd)
    return WarmProcess(list(argv), conn, out, err)


def run_serve(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | str | None = None,
    timeout: float = 60,
) -> "subprocess.CompletedProcess[str]":
    """`popen_serve` run to its end, as `subprocess.run(argv, capture_output=True, text=True)`
    gives it: a start that is refused, or a server some test stops itself."""
    process = popen_serve(argv, env=env, cwd=cwd)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
        raise
    return subprocess.CompletedProcess(list(argv), process.wait(), out, err)
