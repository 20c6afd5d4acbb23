"""Who acts on the board, declared once.

An *agent* acts under its own name (`alice`, `worker-1`). The *operator* is a person steering the
board by hand (the TUI, `kanban task move` without `--agent`, an operator token over HTTP): it acts
as `operator`, or `operator:<name>` when the surface knows who is at the keyboard. The board's own
passes act as `system`; the worktree subsystem names its gate and garbage collector in
`worktrees.gate.GATE_ACTOR` and `worktrees.gc.GC_ACTOR`.
"""

SYSTEM = "system"
OPERATOR = "operator"
OPERATOR_PREFIX = OPERATOR + ":"


def operator_named(name: str) -> str:
    """The operator identity for a person: `operator:<name>`."""
    return f"{OPERATOR_PREFIX}{name}"


def is_operator(actor: str | None) -> bool:
    """True for `operator` and `operator:<name>`."""
    return actor is not None and (actor == OPERATOR or actor.startswith(OPERATOR_PREFIX))
