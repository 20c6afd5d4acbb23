"""Telling the operator outside the terminal that something new needs them: a bell, or a desktop
notification by OSC 9 (`osc`: iTerm2, kitty, WezTerm, Windows Terminal...) or OSC 777 (`osc777`:
VTE terminals, foot, urxvt). Opt-in: `kanban tui --notify bell|osc|osc777|off`, or `KANBAN_NOTIFY`.

The text inside an escape sequence is built from fixed words and a task id, and the id must be
the board's own shape (`TASK-12`): no agent byte (a title, a reason, a name) ever reaches it. That
is the hole OSC 52 from a title was: a sequence carrying data can end early and start another.

Inside tmux an OSC reaches the outer terminal only through tmux's DCS passthrough, which tmux
3.3+ forwards only with `set -g allow-passthrough on` (else it drops it silently); the bell
goes through tmux as a bell (tmux shows it on the window, `monitor-bell`). docs/tui.md
"""

import os
import re
from collections.abc import Mapping

from boardlib import attention as a

BELL = "bell"
OSC = "osc"
OSC777 = "osc777"
OFF = "off"
MODES = (BELL, OSC, OSC777, OFF)
ENV = "KANBAN_NOTIFY"  # `kanban tui --notify`'s environment variable

# The words for each kind: fixed text only.
NEEDS: dict[str, str] = {
    a.REVIEW: "needs review",
    a.UNLANDED: "is ready to land",
    a.DEBT: "has debt to accept",
    a.VERIFICATION_FAILED: "failed verification",
    a.BLOCKED: "is blocked",
    a.LEASE_EXPIRED: "lost its lease",
    a.QUIET_RUN: "has a silent run",
    a.LANDING_REFUSED: "was refused landing",
    a.BUDGET_EXCEEDED: "is over budget",
    a.WATCH_HELD: "has a held watch delivery",
}
_SAFE_ID = re.compile(r"[A-Z][A-Z0-9]{0,15}-[0-9]{1,12}")


def named(task_id: str | None) -> str | None:
    """The id a sentence names: one of the board's shape, else None (agent text is never said)."""
    return task_id if task_id is not None and _SAFE_ID.fullmatch(task_id) else None


def sentence(kind: str, task_id: str | None) -> str:
    """`TASK-12 needs review`: fixed words and an id of the board's shape, nothing else."""
    words = NEEDS.get(kind, "needs you")
    if named(task_id) is not None:
        return f"{task_id} {words}"
    return f"a task {words}" if task_id is not None else "something needs you"


def sequence(mode: str, kind: str, task_id: str | None, *, in_tmux: bool, more: int = 0) -> str:
    """What to write to the terminal for a new inbox item in `mode` ("" when off); `more`: how
    many others came with it (`kanban: TASK-12 needs review (+2 more)`), said in the same one."""
    if mode == BELL:
        return "\a"
    if mode not in (OSC, OSC777):
        return ""
    body = sentence(kind, task_id) + (f" (+{int(more)} more)" if more > 0 else "")
    assert body.isascii() and body.isprintable(), body  # built above from fixed words
    osc = f"\x1b]9;kanban: {body}\x1b\\" if mode == OSC else f"\x1b]777;notify;kanban;{body}\x1b\\"
    if in_tmux:  # DCS passthrough: every ESC inside doubled
        return "\x1bPtmux;" + osc.replace("\x1b", "\x1b\x1b") + "\x1b\\"
    return osc


def inside_tmux(environ: Mapping[str, str] | None = None) -> bool:
    return bool((os.environ if environ is None else environ).get("TMUX"))
