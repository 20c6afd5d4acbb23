"""kanban's board library: a durable, transactional coordination board on one SQLite file.

    from boardlib import Board
    with Board("board.db") as board:
        task = board.create_task("Write the parser", role="worker")
        mine = board.claim_next("alice", role="worker")

Importing this package loads only the standard library: no pydantic, textual, fastapi or git on an
agent's claim path (pydantic is imported lazily where input is validated). It loads nothing of its
own either: each name below is imported on first use, so `import boardlib.errors` (a CLI that
prints its help, a refusal's reason) does not pay for the board, the store and their records.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import transitions
    from .board import Board
    from .clock import Clock, ManualClock, SystemClock
    from .config import BoardConfig
    from .errors import BoardError, Reason
    from .plan_match import PlanItem
    from .records import Comment, Event, Execution, Task, TaskView, Workspace

# Where each public name is declared.
_HOMES = {
    "Board": "board",
    "BoardConfig": "config",
    "BoardError": "errors",
    "Clock": "clock",
    "Comment": "records",
    "Event": "records",
    "Execution": "records",
    "ManualClock": "clock",
    "PlanItem": "plan_match",
    "Reason": "errors",
    "SystemClock": "clock",
    "Task": "records",
    "TaskView": "records",
    "Workspace": "records",
}

__all__ = [
    "Board",
    "BoardConfig",
    "BoardError",
    "Clock",
    "Comment",
    "Event",
    "Execution",
    "ManualClock",
    "PlanItem",
    "Reason",
    "SystemClock",
    "Task",
    "TaskView",
    "Workspace",
    "transitions",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        if name == "transitions":
            return import_module(".transitions", __name__)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{home}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value
