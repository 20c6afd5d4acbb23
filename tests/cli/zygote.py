"""A warm `kanban` that forks a fresh process per CLI run, for the tests.

Most CLI tests run a verb to completion and read its exit code, stdout and stderr. A new
interpreter per run spent most of its CPU on start-up: Python itself, click and the board core,
80-300 ms a call against a few ms of work, hundreds of times per wing. This script imports the
CLI once and then serves runs: each is a real process (forked, with its own pid, folder,
environment, file descriptors and exit status) running the console script's `main`, so what a
test sees is what an agent sees. Start-up itself is tested by `tests/cli/test_hygiene.py` and
the walls, in fresh interpreters (`KANBAN_TEST_FRESH_PROCESSES=1` sends every run there).

Protocol, over a Unix socket: the client sends a length-prefixed JSON request (args, env, cwd)
with three file descriptors (stdin, stdout, stderr) attached; a waiter forked for the connection
forks the run, answers `{"pid": N}`, then `{"status": S, "cpu": seconds}` when it ends (a
`waitpid` status, and the run's CPU time: the test process's own times do not count it).
"""

import atexit
import gc
import json
import os
import random
import select
import signal
import socket
import struct
import sys
from typing import Any

HEADER = struct.Struct("!I")


def warm() -> None:
    """Import what runs would import, once: the CLI's verbs and the board core (not the HTTP,
    MCP or terminal apps: their verbs run long and tests start them as their own processes).
    `gc.freeze` keeps the collector, and so the children's copy-on-write pages, off them."""
    import importlib
    import pkgutil

    import boardlib
    import kanban.cli

    for package in (kanban.cli, boardlib):
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if module.name not in SKIPPED:
                importlib.import_module(module.name)
    gc.collect()
    gc.freeze()


SKIPPED = {"kanban.cli.apps", "kanban.cli.serve", "kanban.cli.mcp_command"}


def read_request(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    while len(data) < HEADER.size:
        data += conn.recv(1 << 16)
    (size,) = HEADER.unpack_from(data)
    while len(data) < HEADER.size + size:
        more = conn.recv(1 << 16)
        if not more:
            raise EOFError("the request was cut short")
        data += more
    return json.loads(data[HEADER.size : HEADER.size + size]), fds


def answer(conn: socket.socket, document: dict[str, Any]) -> None:
    conn.sendall(json.dumps(document).encode() + b"\n")


def accept_forked(path: str, backlog: int) -> socket.socket:
    """A fork server's loop, shared with tests/mcp/zygote.py: listen on `path`, say `ready`,
    fork a child per connection, and end with the test process that started it. Returns only
    in a child, with its connection."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(backlog)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    parent = os.getppid()
    while True:
        if not select.select([listener], [], [], 1.0)[0]:
            if os.getppid() != parent:  # the test process is gone (killed): so are we
                os._exit(0)
            continue
        conn, _ = listener.accept()
        if os.fork() == 0:
            listener.close()
            return conn
        conn.close()


def serve(path: str) -> tuple[dict[str, Any], list[int]]:
    """Accept runs forever; returns only in a forked run's process, with its request."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # waiters are reaped by the kernel
    return wait_on(accept_forked(path, 128))


def wait_on(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """The waiter: fork the run, tell the client its pid, then its exit status."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    try:
        request, fds = read_request(conn)
    except (OSError, EOFError, ValueError):
        os._exit(1)
    pid = os.fork()
    if pid == 0:
        conn.close()
        return request, fds
    for fd in fds:
        os.close(fd)
    try:
        answer(conn, {"pid": pid})
        _, status, usage = os.wait4(pid, 0)
        answer(conn, {"status": status, "cpu": usage.ru_utime + usage.ru_stime})
    except OSError:  # the client went away: the run is its business now
        pass
    os._exit(0)


def become(request: dict[str, Any], fds: list[int]) -> None:
    """Turn this forked process into `kanban <args>` as the client asked."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = [request["argv0"], *request["args"]]
    random.seed()  # never the zygote's sequence in every run


class Ending:
    """The exit status of this run once `leave` knows it; None in the zygote itself."""

    status: int | None = None


def end_here() -> None:
    """The last `atexit` handler of a run (registered first, before anything the zygote or a
    run imports registers its own; they run last-in, first-out): by now the interpreter has
    joined the threads and run every other handler, as for a fresh process. What is left is the
    module teardown, skipped: in a process forked from the warm one, freeing every module's
    objects wrote to each of their pages, ~30 ms of a run's ~45 (the MCP and serve zygotes'
    sessions end with `os._exit` too). A failed flush, or the zygote's own exit, is left to the
    interpreter."""
    if Ending.status is None:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        return
    os._exit(Ending.status)


def leave(code: object) -> None:
    """End a run as `sys.exit(code)` ends an interpreter, up to its module teardown
    (`end_here`): the same exit status, and a message code printed on stderr by the interpreter.
    `test_warm_runs.py` compares what a run leaves beside its board with a fresh process's."""
    if code is None:
        Ending.status = 0
    elif isinstance(code, int):
        Ending.status = code & 0xFF
    else:  # as the interpreter does with `sys.exit("message")`
        Ending.status = 1
    raise SystemExit(code)


if __name__ == "__main__":
    atexit.register(end_here)
    warm()
    job, descriptors = serve(sys.argv[1])
    become(job, descriptors)
    from kanban.cli import main

    try:
        ended: object = main()
    except SystemExit as done:
        ended = done.code
    leave(ended)
