"""`python -I -S launch.py SOCKET ARGS...`: the command the MCP client spawns instead of the
console script. It hands its stdio, argv, environment and folder to the zygote (zygote.py), which
forks `kanban ARGS...` on them; it passes SIGTERM and SIGINT on to that process and exits with
its status. Standard library only, no site: it starts in ~15 ms."""

import array
import contextlib
import json
import os
import signal
import socket
import sys


def main() -> int:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(sys.argv[1])
    request = {"argv": sys.argv[2:], "env": dict(os.environ), "cwd": os.getcwd()}
    fds = array.array("i", [0, 1, 2])
    conn.sendmsg(
        [json.dumps(request).encode() + b"\n"],
        [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds.tobytes())],
    )
    for fd in (0, 1):  # the session holds the pipes now: their ends close when it exits
        os.close(fd)
    os.open(os.devnull, os.O_RDWR)
    os.open(os.devnull, os.O_RDWR)
    replies = conn.makefile("r")
    pid = int(replies.readline().split()[1])

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    line = replies.readline()
    code = int(line.split()[1]) if line.startswith("exit ") else 1
    return 128 - code if code < 0 else code  # killed by a signal: as a shell reports it


if __name__ == "__main__":
    sys.exit(main())
