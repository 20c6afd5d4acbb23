"""kanban's board library: a durable, transactional coordination board on one SQLite file.

    from boardlib import Board
    with Board("board.db") as board:
        task = board.create_task("Write the parser", role="worker")
        mine = board.claim_next("alice", role="worker")

Importing this package loads only the standard library: no pydantic, textual, fastapi or git on an
agent's claim path (pydantic is imported lazily where input is validated).
"""

from . import transitions
from .board import Board
from .clock import Clock, ManualClock, SystemClock
from .config import BoardConfig
from .errors import BoardError, Reason
from .plan_match import PlanItem
from .records import Comment, Event, Execution, Task, TaskView, Workspace

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
