"""Who acts on the board, declared once.

Three kinds of actor, told apart by the actor string alone, so every surface (CLI, HTTP, MCP, TUI)
gets the same rules from the same decision:

- An *identified agent* acts under its own name (`alice`, `worker-1`): the CLI with `--agent` or
  `KANBAN_AGENT`, an HTTP agent token, an MCP session. The board holds it to the agent contract:
  it moves only a task it holds and never into done (builder is not judge), and its creates are
  capped (depth, live children, root rate).
- The *operator* is a person steering the board by hand (the TUI, `kanban task move` without
  `--agent`, an operator token over HTTP): it acts as `operator`, or `operator:<name>` when the
  surface knows who is at the keyboard. It may override, and its creates are uncapped.
- The board's own passes act as `system`: reconciliation, the verification gate (`GATE`) and
  the worktree garbage collector (`GC`). They follow the transition table, not the agent contract.
"""

import re

SYSTEM = "system"
OPERATOR = "operator"
OPERATOR_PREFIX = OPERATOR + ":"
GATE = "verification-gate"  # the verification gate's moves and verdicts
GC = "worktree-gc"  # worktree garbage collection

SYSTEM_ACTORS: frozenset[str] = frozenset({SYSTEM, GATE, GC})

# One runtime session's own name: the name its config gives, then `-` and the runtime's process id
# (the MCP server's parent, the agent's shell's `$PPID`). Every session of a runtime reads one
# config; under that one name no session could judge another's work (self_review), nor tell its
# claims from theirs. The suffix keeps the name a session's for as long as its runtime runs.
SESSION_ROOM = 8  # `-` and a pid: Linux's pid_max is at most 4194304, 7 digits


def session_agent(agent: str, runtime_pid: int) -> str:
    """`agent`'s name for the session its runtime process `runtime_pid` runs."""
    return f"{agent}-{runtime_pid}"


_SESSION_NAME = re.compile(rf"(.+)-([1-9][0-9]{{0,{SESSION_ROOM - 2}}})")


def runtime_agent(agent: str) -> str:
    """The name `session_agent` made `agent` from (`ada` for `ada-4242`); a name without a
    session's suffix is its own. Read off the name alone, so an agent named `worker-2` reads as a
    session of `worker`: a grouped view says how many names each of its rows folds."""
    match = _SESSION_NAME.fullmatch(agent)
    return match.group(1) if match else agent


def operator_named(name: str) -> str:
    """The operator identity for a person: `operator:<name>`."""
    return f"{OPERATOR_PREFIX}{name}"


def is_operator(actor: str | None) -> bool:
    """True for `operator` and `operator:<name>`."""
    return actor is not None and (actor == OPERATOR or actor.startswith(OPERATOR_PREFIX))


def is_system(actor: str | None) -> bool:
    """True for the board's own passes (`system`, the verification gate, garbage collection)."""
    return actor in SYSTEM_ACTORS


def is_agent(actor: str | None) -> bool:
    """True for an identified agent: any named actor that is neither an operator nor the system.
    The agent contract (moves, caps, runs) applies to exactly these."""
    return actor is not None and not is_operator(actor) and not is_system(actor)


UNNAMED = "unnamed actor"  # an event or comment that names nobody (older rows)

# A comment's author type (the declared set is `boardlib.records.AUTHOR_TYPES`): a person steering
# the board writes as a user, the board's passes as the system, everyone else as an agent.
AUTHOR_AGENT = "agent"
AUTHOR_USER = "user"
AUTHOR_SYSTEM = "system"


def author_type_of(actor: str) -> str:
    """The author type a comment by this actor carries: `operator:alice` is a person, never an
    agent, whichever surface wrote it."""
    if is_operator(actor):
        return AUTHOR_USER
    return AUTHOR_SYSTEM if is_system(actor) else AUTHOR_AGENT


def comment_actor(author: str | None, author_type: str | None) -> str | None:
    """Who a comment's event names: its author, else the operator for a user's comment and the
    system for the board's own; None only for an agent comment that names nobody."""
    if author:
        return author
    if author_type == AUTHOR_USER:
        return OPERATOR
    return SYSTEM if author_type == AUTHOR_SYSTEM else None


def actor_label(actor: str | None, author_type: str | None = None) -> str:
    """How a person reads who acted: the actor string itself (`agent-ada`, `operator:olivia`,
    `verification-gate`). A comment without an author is the operator's or the system's, by its
    `author_type`; never "someone" or "user (user)"."""
    return comment_actor(actor, author_type) or UNNAMED
