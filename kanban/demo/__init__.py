"""`kanban demo`: a throwaway board worked by a team of simulated agents (real processes making
real board calls), for newcomers to watch and for tests to measure. Importing this package loads
only the standard library and boardlib; the TUI is imported when the demo opens it."""

from .runner import (
    DEFAULT_AGENTS,
    DEFAULT_POLL_MS,
    DEFAULT_SPEED,
    DEFAULT_TASKS,
    EXIT_AGENT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    MAX_AGENTS,
    MAX_SPEED,
    MAX_TASKS,
    run_demo,
)

__all__ = [
    "DEFAULT_AGENTS",
    "DEFAULT_POLL_MS",
    "DEFAULT_SPEED",
    "DEFAULT_TASKS",
    "EXIT_AGENT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "MAX_AGENTS",
    "MAX_SPEED",
    "MAX_TASKS",
    "run_demo",
]
