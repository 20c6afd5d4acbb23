"""Success bodies, for `/openapi.json`: seed 003's envelopes around the board's own records.

The records (`boardlib.records`, `boardlib.worktrees.results`) are the one declaration of each
row; pydantic reads them through their `__pydantic_config__` (camelCase aliases), so the schema a
client sees is the JSON the board prints. Endpoints build their JSON with the records' `to_json()`
and return it directly: these models describe the answer, they do not re-validate it on every
request (a 10,000-task list would pay for that twice).
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from boardlib.records import Ancestor, Comment, Event, Execution, LinkedTask, Task, Workspace
from boardlib.worktrees.results import CompleteInfo, DiffStat, PauseInfo, WorktreeInfo


class Reply(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


class TaskList(Reply):
    tasks: list[Task]


class CreatedTask(Reply):
    task: Task


class TaskReply(Reply):
    ok: Literal[True]
    task: Task


class TaskDetail(Reply):
    """One task with its comments (oldest first), its parent chain (nearest first), and, beyond
    the seed, the tasks it waits on and the tasks waiting on it."""

    task: Task
    comments: list[Comment]
    ancestors: list[Ancestor]
    dependencies: list[LinkedTask]
    dependents: list[LinkedTask]


class CommentReply(Reply):
    ok: Literal[True]
    comment: Comment


class ExecutionReply(Reply):
    ok: Literal[True]
    execution: Execution


class ExecutionList(Reply):
    ok: Literal[True]
    executions: list[Execution]


class Ok(Reply):
    ok: Literal[True]


class CancelledTask(Reply):
    id: str
    title: str


class CancelledList(Reply):
    cancelled: list[CancelledTask]


class Provisioned(Reply):
    ok: Literal[True]
    worktree: WorktreeInfo
    workspace_id: str = Field(alias="workspaceId")
    isolation: Literal["worktree"]


class Resumed(Reply):
    ok: Literal[True]
    workspace: Workspace
    resume: dict[str, Any] | None
    handoff: dict[str, Any] | None


class Paused(Reply):
    ok: Literal[True]
    action: Literal["pause"]
    pause: PauseInfo


class Completed(Reply):
    ok: Literal[True]
    action: Literal["complete"]
    complete: CompleteInfo
    task_status: str = Field(alias="taskStatus")
    verified: Literal["pass", "fail", "completed_with_debt"] | None = None


class WorkspaceDetail(Reply):
    """The drawer's Workspace tab: SoR files by name (only those names), the diff and its stat."""

    ok: Literal[True]
    workspace: Workspace
    sor_files: dict[str, str] = Field(alias="sorFiles")
    diff_stat: DiffStat | None = Field(alias="diffStat")
    diff: str
    diff_truncated: bool = Field(default=False, alias="diffTruncated")


class EventPage(Reply):
    """Events after `since`, oldest first; pass `next` as the next `since`."""

    events: list[Event]
    next: int


class Health(Reply):
    ok: Literal[True]


class Readiness(Reply):
    ok: bool
    database: str
    schema_current: bool = Field(alias="schemaCurrent")
