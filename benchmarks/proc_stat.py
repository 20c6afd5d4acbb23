"""What /proc says about a process's CPU, for the benchmarks that time other processes (a server, a
terminal app, a Postgres cluster) rather than themselves. Linux only, as those benchmarks are."""

import os
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")  # /proc counts CPU time in clock ticks


def stat_fields(pid: int) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name, which may hold spaces and
    parentheses (so it is cut at the last ')'): [0] is the state, [1] the parent's pid, [11] and
    [12] utime and stime, [13] and [14] the waited-for children's."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def command_name(pid: int) -> str:
    """The command name of /proc/<pid>/stat (between the parentheses)."""
    return Path(f"/proc/{pid}/stat").read_text().split("(", 1)[1].rsplit(")", 1)[0]


def cpu_seconds(pid: int, *, with_children: bool = False) -> float:
    """User + system CPU seconds so far; with the children it has waited for, when asked."""
    fields = stat_fields(pid)
    ticks = sum(int(value) for value in fields[11 : 15 if with_children else 13])
    return ticks / TICKS
