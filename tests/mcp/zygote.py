"""A fork server for `kanban mcp` sessions: one process imports the CLI, the MCP SDK and pydantic
once, then forks a fresh process per session that runs the console script's own `main` with the
session's argv, environment and stdio. Importing the SDK costs ~1.3 CPU-s; a fork costs ~10 ms.
`kanban serve` runs from one too, warmed with the HTTP app instead (tests/http/warm.py).

Run as `python zygote.py SOCKET [MODULE...]`: it imports the modules (default: the MCP server's),
prints `ready` and serves until killed. Each connection (from tests/mcp/launch.py) sends one
JSON line {argv, env, cwd} and its fds 0-2; the zygote forks a keeper that forks the session (its
own session id, the given fds, the given env), answers `pid N`, waits for it and answers `exit N`.
The zygote reaps each keeper as it ends, so the sessions' CPU time adds up into the test run's,
as a spawned script's would.
"""

import array
import contextlib
import importlib
import json
import os
import random
import signal
import socket
import sys
from pathlib import Path

from kanban.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run by path: the repository's
from tests.cli.zygote import accept_forked


def receive(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    fds = array.array("i")
    data, ancillary, _flags, _addr = conn.recvmsg(1 << 20, socket.CMSG_LEN(3 * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
    while not data.endswith(b"\n"):
        more = conn.recv(1 << 20)
        if not more:
            break
        data += more
    return json.loads(data), list(fds)


def run_session(request: dict[str, object], fds: list[int]) -> None:
    """In the forked session: become the `kanban` process the request describes; never return."""
    code = 1
    try:
        os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        for signum in (signal.SIGCHLD, signal.SIGTERM):  # as a fresh interpreter has them
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        random.seed()
        os.environ.clear()
        os.environ.update(request["env"])  # type: ignore[arg-type]
        os.chdir(str(request["cwd"]))
        sys.argv = ["kanban", *request["argv"]]  # type: ignore[misc]
        try:
            code = main() or 0  # the console script's `sys.exit(main())`
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except BaseException:  # say why on the session's stderr, as a crash would
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def keep(conn: socket.socket) -> None:
    """In the keeper: fork the session, report its pid and its exit status; never return."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    request, fds = receive(conn)
    pid = os.fork()
    if pid == 0:
        conn.close()
        run_session(request, fds)
    for fd in fds:
        os.close(fd)
    conn.sendall(f"pid {pid}\n".encode())
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    try:
        conn.sendall(f"exit {code}\n".encode())
    finally:
        os._exit(0)


def reap(_signum: int, _frame: object) -> None:
    """Wait for every keeper that ended (waited, not ignored: their CPU time is counted)."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def serve(path: str) -> None:
    signal.signal(signal.SIGCHLD, reap)
    keep(accept_forked(path, 64))


WARMED = ("kanban.cli.mcp_command", "kanban.mcp.server")  # the SDK and pydantic, imported once

if __name__ == "__main__":
    for module in sys.argv[2:] or WARMED:
        importlib.import_module(module)
    serve(sys.argv[1])
