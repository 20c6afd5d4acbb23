"""One agent's session on the board, as the MCP tools see it: a thin layer over `boardlib.Board`.

It holds what a model must never handle itself: who it is (fixed at start-up), the board (opened
on the first tool call, so a refused board is a tool error) and the claim epoch of every task it
claimed. No rule is decided here. Why: docs/architecture.md#the-mcp-session
"""

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from boardlib.board import Board
from boardlib.clock import Clock, clock_from_env
from boardlib.config import BoardConfig
from boardlib.errors import invalid_input
from boardlib.location import DatabaseUrl
from boardlib.models import AgentHandoff
from boardlib.records import Task

if TYPE_CHECKING:
    from boardlib.worktrees import Worktrees

Doc = dict[str, Any]

LIST_LIMIT_DEFAULT = 50
LIST_LIMIT_MAX = 200  # a page a model can read; filters narrow it further
# The handoff's fields the session fills: who hands off (always its agent) and the runtime.
HANDOFF_FROM = AgentHandoff.model_fields["handoff_from"].alias or "handoff_from"
RUNTIME = AgentHandoff.model_fields["runtime"].alias or "runtime"


class AgentSession:
    """The board as one agent sees it over MCP. Thread-safe: the SDK runs tools on worker
    threads, and `Board` serialises its own connections."""

    def __init__(
        self,
        location: str | Path | DatabaseUrl,
        agent: str,
        *,
        role: str | None = None,
        config: BoardConfig | None = None,
        clock: Clock | None = None,
        create: bool = False,
    ) -> None:
        self.location = location
        self.create = create
        self.agent = agent
        self.role = role
        self.config = config if config is not None else BoardConfig.from_env()
        self._clock = clock
        self._board: Board | None = None
        self._opening = threading.Lock()
        self._epochs: dict[str, int] = {}  # task id -> the claim epoch this session holds

    # -- plumbing -------------------------------------------------------------------------------

    @property
    def board(self) -> Board:
        """The board, opened on first use. Claims release expired leases in their own
        transaction, so opening skips orphan reconciliation (no write before the first call). A
        missing board is `no_board` unless `create` (the per-user default board, as the CLI)."""
        with self._opening:
            if self._board is None:
                self._board = Board(
                    self.location,
                    clock=self._clock if self._clock is not None else clock_from_env(),
                    config=self.config,
                    reconcile_orphans=False,
                    create=self.create,
                    pool_size=4,  # tools run on the SDK's worker threads (Postgres pools)
                )
            return self._board

    def close(self) -> None:
        with self._opening:
            if self._board is not None:
                self._board.close()
                self._board = None

    def held_epochs(self) -> dict[str, int]:
        """The claims this session remembers (task id -> epoch)."""
        return dict(self._epochs)

    def _as_holder(self, task_id: str, act: Callable[[int | None], Task]) -> Doc:
        """A lease-protected verb, quoting the epoch this session claimed the task under. The
        epoch is kept after the task leaves the session (complete, block, release, a lapse): if
        the session comes back to the task once someone else claimed it, it hears `stale_claim`,
        its claim is gone, which is the truth it needs. A task this session never claimed
        (a restarted server) is judged by holder and lease alone."""
        return act(self._epochs.get(task_id)).to_json()

    # -- claiming and the holder's verbs ---------------------------------------------------------

    def claim_next(
        self, role: str | None = None, *, team_id: str | None = None, runtime: str | None = None
    ) -> Doc:
        task = self.board.claim_next(
            self.agent,
            role=role if role is not None else self.role,
            team_id=team_id,
            runtime=runtime,
        )
        if task is None:
            yours = self.board.held_by(self.agent)
            return {"task": None, **({"heldByYou": yours} if yours else {})}
        self._epochs[task.id] = task.claim_epoch
        return task.to_json()

    def heartbeat(self, task_id: str) -> Doc:
        return self._as_holder(
            task_id, lambda epoch: self.board.heartbeat(task_id, self.agent, epoch=epoch)
        )

    def log_progress(self, task_id: str, note: str) -> Doc:
        return self._as_holder(
            task_id, lambda epoch: self.board.log_progress(task_id, self.agent, note, epoch=epoch)
        )

    def extend_lease(self, task_id: str, minutes: float | None = None) -> Doc:
        return self._as_holder(
            task_id,
            lambda epoch: self.board.extend_lease(
                task_id, self.agent, minutes=minutes, epoch=epoch
            ),
        )

    def complete_task(self, task_id: str, summary: str | None = None) -> Doc:
        return self._as_holder(
            task_id,
            lambda epoch: self._trees().complete_lease(
                task_id, self.agent, summary=summary, epoch=epoch
            ),
        )

    def block_task(self, task_id: str, reason: str) -> Doc:
        return self._as_holder(
            task_id, lambda epoch: self.board.block(task_id, self.agent, reason, epoch=epoch)
        )

    def release_task(self, task_id: str) -> Doc:
        return self._as_holder(
            task_id, lambda epoch: self.board.release(task_id, self.agent, epoch=epoch)
        )

    # -- reading --------------------------------------------------------------------------------

    def get_task(self, task_id: str, *, detail: bool = False) -> Doc:
        if detail:
            return self.board.view(task_id).to_json()
        return self.board.get_task(task_id).to_json()

    def inbox(self) -> Doc:
        """Read for the session's agent: its own work, which it may not judge, is left out."""
        return self.board.inbox(judge=self.agent).to_json()

    def list_tasks(
        self,
        *,
        status: str | None = None,
        ready: bool = False,
        role: str | None = None,
        mine: bool = False,
        limit: int = LIST_LIMIT_DEFAULT,
    ) -> Doc:
        """One bounded page: `truncated` says more tasks matched than were returned."""
        page = max(1, min(limit, LIST_LIMIT_MAX))
        tasks = self.board.list_tasks(
            status=status,
            ready=ready,
            role=role,
            assignee=self.agent if mine else None,
            limit=page + 1,
        )
        return {
            "tasks": [task.to_json() for task in tasks[:page]],
            "count": min(len(tasks), page),
            "truncated": len(tasks) > page,
        }

    def explain(self, task_id: str | None = None, role: str | None = None) -> Doc:
        role = role if role is not None else self.role
        if task_id is None:
            return self.board.explain_idle(role=role, agent=self.agent).to_json()
        return self.board.explain(task_id, role=role).to_json()

    # -- creating (the capped path) --------------------------------------------------------------

    def create_task(
        self,
        title: str,
        *,
        description: str | None = None,
        priority: int = 0,
        role: str | None = None,
        depends_on: Sequence[str] = (),
        parent_task_id: str | None = None,
        budget_usd: float | None = None,
        budget_tokens: int | None = None,
    ) -> Doc:
        """The session's agent is the actor, so the board caps the create (depth, live children
        per parent, root-create rate), checked in the insert's transaction. A budget set here
        only limits; an agent never raises one afterwards."""
        return self.board.create_task(
            title,
            description=description,
            priority=priority,
            role=role,
            depends_on=depends_on,
            parent_task_id=parent_task_id,
            scheduled_by="agent",
            actor=self.agent,
            budget_usd=budget_usd,
            budget_tokens=budget_tokens,
        ).to_json()

    # -- the run ledger (budgets are enforced here) ----------------------------------------------

    def start_run(self, task_id: str, executor: str, reason: str | None = None) -> Doc:
        """Open a run on a task this session holds; refused (`budget_exceeded`) under a spent
        budget."""
        return self.board.open_execution(
            task_id, executor, agent=self.agent, epoch=self._epochs.get(task_id), run_reason=reason
        ).to_json()

    def finish_run(
        self,
        execution_id: str,
        status: str,
        *,
        cost_usd: float | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        cache_read: int | None = None,
        cache_write: int | None = None,
        summary: str | None = None,
        error: str | None = None,
    ) -> Doc:
        """Close this session's run with what it cost; a spent budget blocks the task (the
        answer's `budgetExceeded` says which)."""
        return self.board.close_execution(
            execution_id,
            status,
            agent=self.agent,
            cost_usd=cost_usd,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read=cache_read,
            cache_write=cache_write,
            summary=summary,
            error=error,
        ).to_json()

    # -- collaboration and review ---------------------------------------------------------------

    def add_comment(
        self, task_id: str, body: str, *, path: str | None = None, line: int | None = None
    ) -> Doc:
        if path is None and line is None:
            return self.board.add_comment(task_id, body, author_agent_id=self.agent).to_json()
        from boardlib.worktrees import Worktrees  # REVIEW.md in the worktree too

        return (
            Worktrees(self.board)
            .add_comment(task_id, body, author_agent_id=self.agent, path=path, line=line)
            .to_json()
        )

    def link_dependency(self, task_id: str, depends_on: str) -> Doc:
        return self.board.link_dependency(task_id, depends_on, actor=self.agent).to_json()

    def approve_task(self, task_id: str) -> Doc:
        return self.board.approve(task_id, self.agent).to_json()

    # -- landing (git: the worktree subsystem loads on first use) ------------------------------

    def _trees(self) -> "Worktrees":
        from boardlib.worktrees import Worktrees

        return Worktrees(self.board)

    def land_task(
        self,
        task_id: str,
        *,
        strategy: str = "squash",
        into: str | None = None,
        dry_run: bool = False,
    ) -> Doc:
        """The session's agent lands (the board refuses a builder: self_review)."""
        trees = self._trees()
        result = trees.land(
            task_id, actor=self.agent, strategy=strategy, into=into, dry_run=dry_run
        )
        return result.to_json()

    def preview_landing(
        self, task_id: str, *, into: str | None = None, strategy: str = "squash"
    ) -> Doc:
        return self._trees().landing_preview(task_id, into=into, strategy=strategy).to_json()

    # -- the task's worktree: its holder's (the board judges holder and epoch) ------------------

    def provision_workspace(self, task_id: str, repo_path: str, *, base_ref: str = "HEAD") -> Doc:
        made = self._trees().provision(
            task_id, repo_path, base_ref=base_ref, actor=self.agent, epoch=self._epochs.get(task_id)
        )
        return made.to_json()

    def write_handoff(
        self, task_id: str, handoff: Mapping[str, Any], *, runtime: str | None = None
    ) -> Doc:
        """`handoffFrom` is this session's agent, as an agent token's handoff over HTTP is its
        agent's: a handoff naming another is refused. `runtime`, the client's name, fills a
        handoff that names none."""
        named = handoff.get(HANDOFF_FROM, self.agent)
        if named != self.agent:
            raise invalid_input(
                f"{HANDOFF_FROM} is this session's agent, {self.agent}; leave it out",
                field=HANDOFF_FROM,
            )
        body = {RUNTIME: runtime, **handoff} if runtime is not None else dict(handoff)
        written = self._trees().write_handoff(
            task_id,
            {**body, HANDOFF_FROM: self.agent},
            actor=self.agent,
            epoch=self._epochs.get(task_id),
        )
        return written.to_json()

    def resume_workspace(self, task_id: str) -> Doc:
        return self._trees().resume(task_id).to_json()

    def complete_workspace(self, task_id: str, summary: str | None = None) -> Doc:
        """The session's agent is the builder. A failing gate gives the task back to it under a
        new claim epoch, which the session keeps for its next calls."""
        result = self._trees().complete(
            task_id, self.agent, epoch=self._epochs.get(task_id), summary=summary
        )
        if result.claim_epoch is not None:
            self._epochs[task_id] = result.claim_epoch
        return result.to_json()

    def sync_workspace(self, task_id: str, *, strategy: str = "merge") -> Doc:
        epoch = self._epochs.get(task_id)  # a session back on a task claimed again: stale_claim
        synced = self._trees().sync(task_id, actor=self.agent, strategy=strategy, epoch=epoch)
        return synced.to_json()

    def reject_task(
        self, task_id: str, reason: str, *, comments: Sequence[dict[str, Any]] = ()
    ) -> Doc:
        if not comments:
            return self.board.reject(task_id, self.agent, reason).to_json()
        # REVIEW.md in the worktree too
        return self._trees().reject(task_id, self.agent, reason, comments=comments).to_json()
