"""What the operator can do to a task, shared by the board screen and the task drawer.

Every action asks the board and renders its answer: the moves offered are the transition table's
(`legal_targets`, `neighbour_target`), whether a move to done needs an override is the lifecycle's
`verdict_blocks_done`, and every write goes through `KanbanApp.write`, which runs it in a worker
thread and turns a refusal into a notification. Nothing here changes the screen directly: the
screen changes when the live feed reports what the database now says, so after a refusal it still
shows the truth.

`check_action` greys out (returns None for) what cannot apply to the selected task, and every write
in read-only mode, so the footer and the palette show it: the registry (`tui.registry`) says which
action writes, which needs a task and when it applies.
"""

import contextlib
import functools
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from rich.console import Group, RenderableType
from rich.text import Text

from boardlib import BoardError, budgets
from boardlib import transitions as t
from boardlib.lifecycle import override_route, verdict_blocks_done
from boardlib.records import BUDGET_TASK, BUDGET_USD, BudgetStanding, Task
from boardlib.transitions import label
from boardlib.worktrees import CheckoutState
from boardlib.worktrees.landing import LandResult

from . import registry
from .batch import listing
from .components.confirm import ConfirmDialog
from .components.dependency_picker import DependencyPicker
from .components.info_dialog import InfoDialog
from .components.land_dialog import LandDialog
from .components.landing_line import LandingLine
from .components.move_menu import MoveMenu
from .components.prompt import PromptDialog
from .components.task_form import TaskForm
from .drawer_data import checkout_of
from .gateway import BOARD_UNREADABLE
from .landing_data import (
    Choices,
    LandChoice,
    Preview,
    abandon,
    abandoned_message,
    land,
    landed_message,
    read_choices,
    read_preview,
    read_stamp,
    refusal_message,
)
from .task_view import describe_verdict, plain

if TYPE_CHECKING:
    from .app import KanbanApp


CHECKING_WORKTREE = "Looking at its worktree for uncommitted work…"


class TaskActions:
    """Mixin for a screen with a current task (`current_task`); `SCREEN` names it in the
    registry."""

    SCREEN: str

    @property
    def kanban(self) -> "KanbanApp":
        """The app, typed: the screens mixing this in run inside `KanbanApp`."""
        return cast("KanbanApp", self.app)  # type: ignore[attr-defined]

    def current_task(self) -> Task | None:
        raise NotImplementedError

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        entry = registry.lookup(self.SCREEN, action, parameters)
        if entry is None:
            return True
        if entry.id in registry.BATCH and self.kanban.marked:
            marked = self.kanban.marked_tasks()
            answers = [
                registry.availability(entry, read_only=self.kanban.read_only, task=task)
                for task in marked
            ]
            return True if any(answers) else None
        task = self.current_task() if entry.needs_task else None
        return registry.availability(entry, read_only=self.kanban.read_only, task=task)

    # -- several cards at once ------------------------------------------------------------------

    def _marked(self) -> list[Task] | None:
        """The marked tasks when the operator marked some (a batch), else None."""
        return self.kanban.marked_tasks() or None

    def _batch(
        self,
        action_id: str,
        tasks: list[Task],
        verb: str,
        past: str,
        work: Callable[[Any, Task], object],
        *,
        danger: bool = False,
    ) -> None:
        """One confirmation that lists the tasks the action applies to (and those it skips),
        then one write each (`KanbanApp.write_each`)."""
        entry = registry.BY_ID[action_id]
        applies = [task for task in tasks if entry.applies is None or entry.applies(task)]
        skipped = [task for task in tasks if task not in applies]
        app = self.kanban
        if not applies:
            app.notify(
                f"{verb}: none of the {len(tasks)} marked tasks applies.", severity="warning"
            )
            return
        parts: list[RenderableType] = [
            Text(f"{verb} these {len(applies)} task(s), each checked again as it is written:")
        ]
        parts.append(listing(applies))
        if skipped:
            parts.append(Text(f"Left alone ({entry.title.lower()} does not apply):", style="bold"))
            parts.append(listing(skipped))
        self._confirm(
            f"{verb} {len(applies)} marked task(s)?",
            Group(*parts),
            verb,
            lambda: app.write_each(applies, work, past=past, label=f"{verb} marked tasks"),
            danger=danger,
        )

    def _target_task(self) -> Task | None:
        task = self.current_task()
        if task is None:
            self.kanban.notify("No task selected.", severity="warning")
        return task

    # -- moves ----------------------------------------------------------------------------------

    def action_move_menu(self) -> None:
        marked = self._marked()
        if marked is not None:
            self._batch_move(marked)
            return
        task = self._target_task()
        if task is None:
            return

        def chosen(target: str | None) -> None:
            if target:
                self.request_move(task, target)

        self.kanban.push_screen(MoveMenu(task), chosen)

    def action_move_step(self, step: int) -> None:
        task = self._target_task()
        if task is None:
            return
        target = t.neighbour_target(task.status, step)
        if target is None:
            self.kanban.notify(f"No legal column on that side of {label(task.status)}.")
            return
        self.request_move(task, target)

    def action_release(self) -> None:
        if task := self._target_task():
            self.request_move(task, t.TODO)

    def action_block(self) -> None:
        if task := self._target_task():
            self.request_move(task, t.BLOCKED)

    def action_cancel(self) -> None:
        marked = self._marked()
        if marked is not None:
            app = self.kanban
            self._batch(
                "task.cancel", marked, "Cancel", f"{label(t.CANCELLED)}",
                lambda b, task: b.cancel(task.id, actor=app.operator), danger=True,
            )  # fmt: skip
            return
        if task := self._target_task():
            self.request_move(task, t.CANCELLED)

    def action_unblock(self) -> None:
        app = self.kanban
        marked = self._marked()
        if marked is not None:
            self._batch(
                "task.unblock", marked, "Unblock", "unblocked",
                lambda b, task: b.unblock(task.id, actor=app.operator),
            )  # fmt: skip
            return
        if task := self._target_task():
            app.write(
                f"unblock {task.id}",
                lambda b: b.unblock(task.id, actor=app.operator),
                expect=task,
                success=f"{task.id} unblocked: back to todo",
            )

    def _batch_move(self, marked: list[Task]) -> None:
        """`m` with marks: the targets every marked task may move to, then one confirmation."""
        app = self.kanban
        common = [
            target
            for target in t.STATUSES
            if all(
                t.can_transition(task.status, target) and task.status != target for task in marked
            )
        ]

        def chosen(target: str | None) -> None:
            if not target:
                return
            if target == t.BLOCKED:

                def reason_given(reason: str | None) -> None:
                    def block(board: Any, task: Task) -> object:
                        return board.move(task.id, t.BLOCKED, actor=app.operator, reason=reason)

                    if reason:
                        self._batch("task.move", marked, "Block", "blocked", block)

                app.push_screen(
                    PromptDialog(f"Block {len(marked)} tasks", "Why are they blocked?"),
                    reason_given,
                )
                return
            self._batch(
                "task.move", marked, f"Move to {label(target)}", f"moved to {label(target)}",
                lambda b, task: b.move(task.id, target, actor=app.operator),
                danger=target == t.CANCELLED,
            )  # fmt: skip

        app.push_screen(MoveMenu(marked[0], targets=tuple(common), count=len(marked)), chosen)

    def action_force_done(self) -> None:
        if task := self._target_task():
            self.confirm_override(task)

    def request_move(self, task: Task, target: str) -> None:
        """One move, with the question it needs first: a reason for blocked, an override for a
        verdict that blocks done, else the registry's confirmation (`registry.move_question`),
        the same whichever key, menu or palette entry asked for the move."""
        app = self.kanban
        move = f"{task.id} → {label(target)}"
        if target == t.BLOCKED:

            def blocked(reason: str | None) -> None:
                if reason:
                    app.write(
                        move,
                        lambda b: b.move(task.id, t.BLOCKED, actor=app.operator, reason=reason),
                        expect=task,
                        then=self._landed(task, t.BLOCKED),
                    )

            app.push_screen(
                PromptDialog(f"Block {task.id}", "Why is it blocked? (kept on the task)"),
                blocked,
            )
            return
        if target == t.DONE and verdict_blocks_done(task.verification):
            self.confirm_override(task)
            return

        def write() -> None:
            app.write(
                move,
                lambda b: (
                    b.cancel(task.id, actor=app.operator)
                    if target == t.CANCELLED
                    else b.move(task.id, target, actor=app.operator)
                ),
                expect=task,
                then=self._landed(task, target),
            )

        if target == t.CANCELLED:
            self._ask_cancel(task, write)
            return
        question = registry.move_question(task, target, operator=app.operator, now_ms=app.now_ms())
        if question is None:
            write()
        else:
            self._ask(question, write)

    def _ask_cancel(self, task: Task, write: Callable[[], object]) -> None:
        """The cancel question at once (keys typed meanwhile must not reach the board), then
        with what git says of the task's worktree once it answers."""
        app = self.kanban
        question = registry.move_question(
            task, t.CANCELLED, operator=app.operator, now_ms=app.now_ms()
        )
        assert question is not None
        dialog = ConfirmDialog(
            question.title,
            Group(plain(question.body), Text(CHECKING_WORKTREE, style="dim")),
            confirm=question.verb,
            danger=True,
        )

        def checked(checkout: CheckoutState | None) -> None:
            told = registry.move_question(
                task, t.CANCELLED, operator=app.operator, checkout=checkout, now_ms=app.now_ms()
            )
            assert told is not None
            dialog.update_body(plain(told.body))

        def answered(yes: bool | None) -> None:
            if yes:
                write()

        app.push_screen(dialog, answered)
        app.read_then(partial(checkout_of, task_id=task.id), checked)

    def _ask(self, question: registry.Question, then: Callable[[], object]) -> None:
        self._confirm(
            question.title, plain(question.body), question.verb, then, danger=question.danger
        )

    def _landed(self, task: Task, target: str) -> Callable[[Task], None]:
        """After a move: a write that changed nothing says so (never a silent no-op)."""

        def check(new: Task) -> None:
            if new.status != target:
                self.kanban.notify(
                    f"{task.id} is {label(new.status)}: nothing changed.",
                    title=f"{task.id} → {label(target)}",
                    severity="warning",
                )

        return check

    def confirm_override(self, task: Task) -> None:
        app = self.kanban
        blocks = verdict_blocks_done(task.verification)
        via = override_route(task) or ()
        path = "".join(f" (through {label(step)}, taking nothing)" for step in via)
        lead = (
            f"The verdict below blocks done. Overriding it moves the task from "
            f"{label(task.status)} to done anyway{path}."
            if blocks
            else "No verdict blocks done, but this is still recorded as a human override."
            if task.verification
            else "No verdict is recorded, so none is overridden; the move is still recorded as a "
            "human override."
        )
        held = registry.holder_fact(task, app.now_ms())
        if held is not None:  # the agent at work on it is not asked, so the operator is told
            lead += " " + held
        body = Group(
            Text(lead),
            Text(""),
            Text("Verdict being overridden:", style="bold"),
            describe_verdict(task.verification, app.now_ms()),
            Text(""),
            plain(f"Written to the audit table as {app.operator}.", "dim"),
        )
        self._confirm(
            f"Mark {task.id} done with a human override?",
            body,
            "Override",
            lambda: app.write(
                f"{task.id} → done (override)",
                lambda b: b.move(task.id, t.DONE, actor=app.operator, human_override=True),
                expect=task,
                then=self._landed(task, t.DONE),
            ),
            danger=True,
        )

    def _confirm(
        self, title: str, body: Any, verb: str, then: Any, *, danger: bool = False
    ) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                then()

        self.kanban.push_screen(ConfirmDialog(title, body, confirm=verb, danger=danger), answered)

    # -- the other overrides --------------------------------------------------------------------

    def action_cancel_dependents(self) -> None:
        task = self._target_task()
        if task is None:
            return
        app = self.kanban

        def done(cancelled: list[Task]) -> None:
            if not cancelled:
                app.push_screen(
                    InfoDialog(
                        f"Nothing cancelled under {task.id}",
                        Text("No pending (todo or backlog) task depends on it."),
                    )
                )
                return
            lines: list[RenderableType] = [
                Text(f"{len(cancelled)} task(s) cancelled:", style="bold")
            ]
            lines.append(listing(cancelled, limit=len(cancelled)))
            app.push_screen(InfoDialog(f"Cancelled the dependents of {task.id}", Group(*lines)))

        body = Text(
            f"Every task still waiting (todo or backlog) on {task.id}, directly or through "
            "other tasks, will be cancelled in one step. Tasks already being worked on are left "
            "alone. This cannot be undone."
        )
        self._confirm(
            f"Cancel the dependents of {task.id}?",
            body,
            "Cancel dependents",
            lambda: app.write(
                f"cancel dependents of {task.id}",
                lambda b: b.cancel_dependents(task.id, actor=app.operator),
                then=done,
            ),
            danger=True,
        )

    def action_priority(self, delta: int) -> None:
        task = self._target_task()
        if task is None:
            return
        app = self.kanban

        def bump(board: Any) -> Task:
            current = board.get_task(task.id).priority  # fresh: two quick presses add up
            return board.update_task(  # type: ignore[no-any-return]
                task.id, priority=current + delta, actor=app.operator
            )

        app.write(f"{task.id} priority", bump)

    def action_edit(self) -> None:
        task = self._target_task()
        if task is None:
            return
        app = self.kanban

        def edited(changes: dict[str, Any] | None) -> None:
            if changes:
                app.write(
                    f"edit {task.id}",
                    lambda b: b.update_task(task.id, actor=app.operator, **changes),
                    success=f"{task.id} saved",
                    expect=task,  # never over an agent's edit made while the form was open
                    fields=tuple(changes),
                )

        app.push_screen(TaskForm(task), edited)

    def action_set_budget(self) -> None:
        """Set, raise or remove the task's dollar budget: the amount, then why (audited)."""
        task = self._target_task()
        if task is not None:
            self.ask_budget(task)

    def ask_budget(self, task: Task, *, raising: bool = False) -> None:
        """The amount, then why. `raising` (the inbox's spent budget): an amount that leaves
        the budget spent is told in the budget rule's words, and nothing is written (one "raised" to
        its spend left the task blocked, unexplained)."""
        app = self.kanban
        current = "none" if task.budget_usd is None else f"{task.budget_usd:g}"
        title = f"budget of {task.id}"

        def reasoned(usd: float | None, reason: str | None) -> None:
            if reason:
                app.write(
                    title,
                    lambda b: b.set_budget(task.id, usd=usd, reason=reason, actor=app.operator),
                    success=f"{task.id}: budget "
                    + ("removed" if usd is None else budgets.amount(usd, BUDGET_USD)),
                )

        def ask_why(usd: float | None) -> None:
            app.push_screen(
                PromptDialog(f"Budget of {task.id}", "Why? (kept in the audit log)"),
                lambda reason: reasoned(usd, reason),
            )

        def judged(usd: float, standings: list[BudgetStanding] | None) -> None:
            own = next(
                (
                    standing
                    for standing in standings or ()
                    if (standing.scope, standing.unit, standing.owner)
                    == (BUDGET_TASK, BUDGET_USD, task.id)
                ),
                None,
            )
            short = budgets.short_of(own, usd) if own is not None else None
            if short is not None:
                app.notify(f"{short}. Nothing changed.", title=title, severity="warning")
                return
            ask_why(usd)

        def amount(answer: str | None) -> None:
            if not answer:
                return
            text = answer.strip().lstrip("$").strip()
            usd: float | None = None
            if text.lower() not in ("none", "off", ""):
                try:
                    usd = budgets.usd_limit(float(text), "budget")  # before asking why
                except ValueError:
                    app.notify(f"{answer!r} is not a number of dollars.", severity="warning")
                    return
                except BoardError as error:  # nan, inf, negative, past the ceiling
                    app.refused(title, error)
                    return
            if raising and usd is not None:  # judged on the spend as the board reads it now
                app.read_then(lambda b: b.budgets_of(task.id), partial(judged, usd))
                return
            ask_why(usd)

        app.push_screen(
            PromptDialog(
                f"Budget of {task.id}",
                "Dollars over the task and its subtasks (none removes it):",
                initial=current,
            ),
            amount,
        )

    # -- review: the operator judges, through the same board rules as `kanban task approve/reject`

    def action_approve(self) -> None:
        app = self.kanban
        marked = self._marked()
        if marked is not None:
            self._batch(
                "task.approve", marked, "Approve", "approved",
                lambda b, task: b.approve(task.id, app.operator),
            )  # fmt: skip
            return
        task = self._target_task()
        if task is None:
            return
        app.write(
            f"approve {task.id}",
            lambda b: b.approve(task.id, app.operator),
            success=f"{task.id} approved: done",
        )

    # -- landing: the reviewed work onto its base branch, through `Worktrees.land` ----------------

    def action_approve_and_land(self) -> None:
        if task := self._target_task():
            self.request_landing(task)

    def action_land(self) -> None:
        if task := self._target_task():
            self.request_landing(task)

    def request_landing(self, task: Task) -> None:
        """Preview first (git, in a worker), with the choices (the branches, whether it has a
        verify command), then ask with what the preview says: the decision is made on that
        preview, and the landing refuses if the work changed since."""
        app = self.kanban
        app.expect_question(LandDialog.question_for(task))
        known = next(
            (
                drawer.query_one(LandingLine).preview_for(task.id)
                for drawer in app.drawers()
                if drawer.task_id == task.id and drawer.query(LandingLine)
            ),
            None,
        )

        def preview() -> None:
            try:
                # The drawer's preview, while its stamp (one rev-parse, one status) still holds.
                stamp = known.stamp if known is not None and known.preview is not None else None
                if (
                    known is not None
                    and stamp
                    and stamp == app.gateway.read(lambda b: read_stamp(b, task.id))
                ):
                    shown = known
                else:
                    shown = app.gateway.read(lambda board: read_preview(board, task.id))
            except BOARD_UNREADABLE as error:  # still ask: the land decides
                shown = Preview.unreadable(task.id, error)
            except Exception as error:
                app.report_defect_from_thread("landing preview", error)
                shown = Preview.unreadable(task.id, error)
            try:
                choices = app.gateway.read(lambda board: read_choices(board, task.id))
            except BOARD_UNREADABLE as error:
                choices = Choices.unreadable(task.id, error)
            except Exception as error:
                app.report_defect_from_thread("landing choices", error)
                choices = Choices.unreadable(task.id, error)
            app.call_from_thread(self._confirm_landing, task, shown, choices)

        app.run_worker(preview, thread=True, group="landing-confirm", exit_on_error=False)

    def _confirm_landing(self, task: Task, shown: Preview, choices: Choices) -> None:
        app = self.kanban
        dialog = LandDialog(task, shown, choices, operator=app.operator)
        dialog.ignored = app.question_came()  # its own count of early keys goes on from there
        app.push_screen(dialog)

    def action_reject(self) -> None:
        task = self._target_task()
        if task is None:
            return
        app = self.kanban

        def rejected(reason: str | None) -> None:
            if reason and reason.strip():
                app.write(
                    f"reject {task.id}",
                    lambda b: b.reject(task.id, app.operator, reason.strip()),
                    success=f"{task.id} rejected: back to todo",
                )

        lines = len(self.review_round())
        with_lines = (
            f" The {lines} line comment{'s' if lines != 1 else ''} made since the last review "
            f"{'go' if lines != 1 else 'goes'} back with it (the agent reads "
            f"{'them' if lines != 1 else 'it'} in REVIEW.md in its worktree)."
            if lines
            else ""
        )
        app.push_screen(
            PromptDialog(
                f"Reject {task.id}",
                f"Why? Kept on the task as a comment by {app.operator}; the task goes back to "
                f"todo for a fresh attempt.{with_lines}",
                multiline=True,
            ),
            rejected,
        )

    def review_round(self) -> list[Any]:
        """The line comments a reject now sends back (the drawer knows them; the board not)."""
        return []

    def action_comment(self) -> None:
        task = self._target_task()
        if task is None:
            return
        app = self.kanban

        def written(body: str | None) -> None:
            if body:
                app.write(
                    f"comment on {task.id}",
                    lambda b: b.add_comment(
                        task.id, body, author_agent_id=app.operator, author_type="user"
                    ),
                    success=f"Comment added to {task.id}",
                )

        app.push_screen(
            PromptDialog(f"Comment on {task.id}", f"As {app.operator}:", multiline=True), written
        )

    def action_link_dependency(self) -> None:
        task = self._target_task()
        if task is None:
            return
        app = self.kanban

        def picked(blocker: str | None) -> None:
            if blocker:
                app.write(
                    f"{task.id} waits on {blocker}",
                    lambda b: b.link_dependency(task.id, blocker, actor=app.operator),
                    success=f"{task.id} now waits on {blocker}",
                )

        app.push_screen(DependencyPicker(task, app.state.tasks.values()), picked)

    def action_drop(self) -> None:
        task = self._target_task()
        if task is None:
            return
        app = self.kanban
        if task.dropped:
            app.write(
                f"restore {task.id}",
                lambda b: b.restore(task.id, actor=app.operator),
                expect=task,
                success=f"{task.id} restored",
            )
            return
        self._confirm(
            f"Drop {task.id}?",
            Text(
                "Dropped tasks are hidden and never claimed; `.` shows them and `delete` "
                "restores one."
            ),
            "Drop",
            lambda: app.write(
                f"drop {task.id}",
                lambda b: b.drop(task.id, actor=app.operator),
                expect=task,
                success=f"{task.id} dropped (. shows dropped tasks)",
            ),
        )

    def action_create(self) -> None:
        app = self.kanban

        def filled(values: dict[str, Any] | None) -> None:
            if values:
                app.write(
                    "new task",
                    lambda b: b.create_task(actor=app.operator, **values),
                    then=lambda task: app.select_when_shown(task.id),
                    success=lambda task: f"Created {task.id}",
                )

        app.push_screen(TaskForm(), filled)


def start_abandon(app: "KanbanApp", task: Task, reason: str) -> None:
    """The operator's "won't land" (`landing_data.abandon`) in a worker; a refusal is a
    notification and changes nothing."""
    app.write(
        f"won't land {task.id}",
        lambda board: abandon(board, task.id, app.operator, reason),
        expect=task,
        success=abandoned_message,
        explain=refusal_message,
    )


def start_landing(app: "KanbanApp", task: Task, choice: LandChoice, into: str) -> None:
    """Land `task` as the land dialog's `choice` says, in a worker (outside the app's write
    lock: it waits in its branch's queue), naming each step in the drawer; a refusal is a
    notification (`refusal_message`) and changes nothing."""
    approving = task.status == t.IN_REVIEW
    name = f"{'approve and land' if approving else 'land'} {task.id}"
    how = "unverified, " if choice.unverified_reason is not None else ""
    app.notify(f"{task.id}: landing on {into} ({how}{choice.strategy})…", timeout=3)

    def tell(step: str | None) -> None:
        # A progress line must never break a landing midway (the app may be closing).
        with contextlib.suppress(Exception):
            app.call_from_thread(app.landing_step, task.id, step)

    def work(board: Any) -> LandResult:
        try:
            return land(board, task.id, app.operator, choice, on_step=lambda s, _: tell(s))
        finally:
            tell(None)

    app.write(
        name,
        work,
        expect=task,
        success=functools.partial(landed_message, approved=approving),
        explain=refusal_message,
        serial=False,  # a landing waits in its branch's queue, not behind other writes
    )
