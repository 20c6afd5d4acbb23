"""Every operator action of the app, declared once.

One `Action` per thing the operator can do; bindings (`Binding(id=...)`), the footer, `?` help,
`check_action` and the palette's commands are all generated from `ACTIONS`, so a new action is
one entry here plus its `action_*` method. What each field drives:
docs/architecture.md#the-action-registry
"""

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from textual.actions import parse
from textual.binding import Binding, BindingType

from boardlib import transitions as t
from boardlib.landings import may_land_reviewed
from boardlib.leases import lease_expired
from boardlib.lifecycle import override_reaches_done
from boardlib.records import Task

if TYPE_CHECKING:
    from boardlib.worktrees import CheckoutState

# The screens an action can belong to. "app" is every screen (the App's own bindings).
SIDE_BY_SIDE_MIN_COLUMNS = 160  # the terminal's width from which `s` shows a diff old | new

APP = "app"
BOARD = "board"
DRAWER = "drawer"
MENU = "menu"  # the lists inside dialogs (move menu, dependency picker)
HELP = "help"
CONFIRM = "confirm"
LAND = "land"  # the land dialog's choices, beside the confirmation's y/n
INFO = "info"
PROMPT = "prompt"
FORM = "form"
PICKER = "picker"
MOVE = "move"
FILTER = "filter"
STATS = "stats"
SEARCH = "search"  # the drawer's search line
LOG = "log"  # the message log
INBOX = "inbox"  # `i`: what needs the operator

TaskTest = Callable[[Task], bool]


@dataclass(frozen=True, slots=True)
class Action:
    """One thing the operator can do, and everything the app needs to know about it."""

    id: str  # the binding id a keymap file remaps, e.g. "task.cancel"
    call: str  # the Textual action, e.g. "cancel" or "move_step(-1)"
    title: str  # the help screen's words, and the footer's unless `short` says otherwise
    keys: str  # default keys, comma-separated Textual key names
    screens: tuple[str, ...]
    section: str  # the help screen's heading
    key_display: str | None = None
    footer: tuple[str, ...] = ()  # screens whose footer shows it
    writes: bool = False  # greyed (and refused) in read-only mode
    needs_task: bool = False  # greyed when no task is selected
    applies: TaskTest | None = None  # greyed when it cannot apply to the selected task
    palette: str | None = None  # the palette's title; "{task}" names the selected task
    palette_help: str = ""
    priority: bool = False
    # Shares its keys with this action, listed after it: where this one does not apply (its
    # check says False), the key is that one's (`n`: the next match, else the next file).
    yields_to: str | None = None
    # Said when the key is pressed but `applies` says no: "{task}" and "{status}" are filled in.
    only: str = ""
    # The columns where a shared key (`yields_to`) is this action's: what the key is said to do
    # with no task selected there (`W` in an empty or folded done column: land, not approve).
    in_columns: tuple[str, ...] = ()
    # Moves the cursor within the board's column: on a folded column it does not apply, and
    # its key says the column is folded (`j` or `G` there did nothing, in silence).
    in_column: bool = False
    # The decision the task waits on (approve, reject, land): first in the footer where it
    # applies, last where it does not (`footer_rank`).
    leads: bool = False
    # The footer's word where the title crowds it at 80 columns (`W`: "Land"; help and palette
    # keep the title: "Approve and land").
    short: str | None = None
    # The footer's word while the board is paused, for a key whose press reverses the pause
    # (`p`: "Resume"). Textual's bindings are fixed, so the footer asks (`footer_title`).
    paused_title: str | None = None

    @property
    def name(self) -> str:
        return _parsed(self.call)[0]

    @property
    def parameters(self) -> tuple[object, ...]:
        return _parsed(self.call)[1]

    def binding(self, screen: str) -> Binding:
        return Binding(
            self.keys,
            self.call,
            self.short or self.title,
            show=screen in self.footer,
            tooltip=self.title if self.short else "",
            key_display=self.key_display,
            priority=self.priority,
            id=self.id,
        )

    def palette_title(self, task: Task | None) -> str:
        assert self.palette is not None
        return self.palette.format(task=task.id if task is not None else "")


@cache
def _parsed(call: str) -> tuple[str, tuple[object, ...]]:
    _namespace, name, parameters = parse(call)
    return name, tuple(parameters)


# -- when a task action applies (the board still has the last word) -------------------------------


def _can_reach(target: str) -> TaskTest:
    def test(task: Task) -> bool:
        return task.status != target and t.can_transition(task.status, target)

    return test


def _has_neighbour(step: int) -> TaskTest:
    return lambda task: t.neighbour_target(task.status, step) is not None


def _has_targets(task: Task) -> bool:
    return bool(t.legal_targets(task.status))


def _in_review(task: Task) -> bool:
    return task.status == t.IN_REVIEW


def has_work_to_land(task: Task) -> bool:
    """Work on a branch that the board's rule lets land (`landings.may_land_reviewed`, not a
    copy of it): what the drawer previews and `w`/`W` land (the board still decides; a branch
    with nothing on it is refused `not_landable`)."""
    return bool(task.branch_ref) and may_land_reviewed(task)


def _lands_approving(task: Task) -> bool:
    return task.status == t.IN_REVIEW and has_work_to_land(task)


def _lands_approved(task: Task) -> bool:
    return task.status == t.DONE and has_work_to_land(task)


def _is_blocked(task: Task) -> bool:
    return task.status == t.BLOCKED


def _droppable(task: Task) -> bool:
    return bool(task.dropped) or task.status not in t.LOCKED


# -- the registry ----------------------------------------------------------------------------------

NAVIGATION = "Board"
IN_INBOX = "Inbox (what needs you)"
SELECTED = "Selected task (board and drawer)"
IN_DRAWER = "Task drawer"
IN_STATS = "Stats screen"
IN_DIALOGS = "Dialogs"
EVERYWHERE = "Everywhere"

_ON_BOARD = (BOARD,)
_ON_TASK = (BOARD, DRAWER)


def _board(id: str, call: str, title: str, keys: str, **more: Any) -> Action:
    return Action(id, call, title, keys, _ON_BOARD, NAVIGATION, **more)


def _task(id: str, call: str, title: str, keys: str, **more: Any) -> Action:
    return Action(id, call, title, keys, _ON_TASK, SELECTED, needs_task=True, **more)


def _write(id: str, call: str, title: str, keys: str, **more: Any) -> Action:
    return _task(id, call, title, keys, writes=True, **more)


def _drawer(id: str, call: str, title: str, keys: str, **more: Any) -> Action:
    return Action(id, call, title, keys, (DRAWER,), IN_DRAWER, **more)


def _dialog(id: str, call: str, title: str, keys: str, screen: str, **more: Any) -> Action:
    return Action(id, call, title, keys, (screen,), IN_DIALOGS, **more)


ACTIONS: tuple[Action, ...] = (
    # The board: moving around and the board-wide toggles.
    _board("board.down", "cursor(1)", "Down", "j,down", in_column=True),
    _board("board.up", "cursor(-1)", "Up", "k,up", in_column=True),
    _board("board.left", "column(-1)", "Column left", "h,left"),
    _board("board.right", "column(1)", "Column right", "l,right"),
    _board("board.home", "home", "First card", "g,home", in_column=True),
    _board("board.end", "end", "Last card", "G,end", in_column=True),
    _board("board.page_down", "page(1)", "Page down", "ctrl+d,pagedown", in_column=True),
    _board("board.page_up", "page(-1)", "Page up", "ctrl+u,pageup", in_column=True),
    _board(
        "board.open",
        "open_drawer",
        "Open",
        "enter",
        footer=_ON_BOARD,
        needs_task=True,
        palette="Open {task}",
        palette_help="everything about it, in the drawer",
    ),
    _board(
        "board.filter",
        "filter",
        "Filter",
        "slash",
        key_display="/",
        footer=_ON_BOARD,
        palette="Filter tasks",
        palette_help="text, team:, role:, assignee:, status:",
    ),
    _board("board.back", "back", "Clear marks, then the filter", "escape"),
    _board(
        "board.mark",
        "mark",
        "Mark (several at once)",
        "space",
        needs_task=True,
        palette="Mark or unmark {task}",
        palette_help="a, x, m and u then act on every marked card, after one confirmation",
    ),
    _board(
        "board.follow",
        "follow",
        "Follow the task that left",
        "f",
        palette="Follow the task that just left the column",
        palette_help="where an agent (or you) moved it",
    ),
    _board(
        "board.dropped",
        "toggle_dropped",
        "Show dropped",
        "full_stop",
        key_display=".",
        palette="Show or hide dropped tasks",
    ),
    _board(
        "board.fold",
        "toggle_finished",
        "Fold done/cancelled",
        "z",
        palette="Fold or unfold done and cancelled",
    ),
    _board(
        "board.activity",
        "toggle_activity",
        "Activity",
        "A",
        palette="Show or hide the activity pane",
        palette_help="what just happened, in words",
    ),
    _board(
        "board.copy_id",
        "copy_id",
        "Copy id",
        "y",
        needs_task=True,
        palette="Copy {task} to the clipboard",
        palette_help="through the terminal (OSC 52)",
    ),
    _board(
        "board.stats",
        "show_stats",
        "Stats",
        "S",
        palette="Show the flow: stats",
        palette_help="throughput, cycle and review times, cost, agents",
    ),
    _board(
        "board.inbox",
        "inbox",
        "Needs you",
        "i",
        footer=_ON_BOARD,
        palette="Open the inbox",
        palette_help="what needs you, oldest first; a does the obvious thing",
    ),
    _board(
        "board.pause",
        "toggle_pause",
        "Pause",
        "p",
        footer=_ON_BOARD,
        paused_title="Resume",
        palette="Pause or resume live updates",
    ),
    _board(
        "board.refresh",
        "refresh",
        "Refresh",
        "r",
        palette="Refresh now",
        palette_help="re-read the whole board",
    ),
    _board(
        "board.drawer",
        "focus_drawer",
        "To the drawer",
        "tab",
        palette="Go to the open drawer",
        palette_help="its keys: tabs 1-5, j/k, n/p",
    ),
    # The drawer (first, so its footer starts with the way back).
    Action("drawer.close", "close", "Back", "escape,q", (DRAWER,), IN_DRAWER, footer=(DRAWER,)),
    Action("drawer.down", "scroll(1)", "Scroll down", "j,down", (DRAWER,), IN_DRAWER),
    Action("drawer.up", "scroll(-1)", "Scroll up", "k,up", (DRAWER,), IN_DRAWER),
    _drawer("drawer.page_down", "page(1)", "Page down", "ctrl+d,pagedown,space"),
    _drawer("drawer.page_up", "page(-1)", "Page up", "ctrl+u,pageup"),
    _drawer("drawer.top", "top", "Top", "g,home"),
    _drawer("drawer.end", "end", "End", "G,end"),
    _drawer("drawer.overview", "tab('overview')", "Overview tab", "1"),
    _drawer("drawer.files", "tab('files')", "Files tab (SoR files)", "2"),
    _drawer("drawer.diff", "tab('diff')", "Diff tab", "3"),
    _drawer("drawer.runs", "tab('runs')", "Runs tab", "4"),
    _drawer("drawer.history", "tab('history')", "History tab", "5"),
    _drawer("drawer.next_tab", "cycle(1)", "Next tab", "right_square_bracket", key_display="]"),
    _drawer(
        "drawer.previous_tab", "cycle(-1)", "Previous tab", "left_square_bracket", key_display="["
    ),
    # Reviewing in depth. A key two actions share goes to the first that applies here: `n` is
    # the next match while a search is on, else the next file; `o` opens the editor on the Diff
    # and Files tabs, else the link menu; `c` on a diff line comments on that line.
    _drawer(
        "drawer.search",
        "search",
        "Search this tab",
        "slash",
        key_display="/",
        footer=(DRAWER,),
        palette="Search the drawer's tab",
        palette_help="diff, files, runs or history; n/N between matches",
    ),
    _drawer("drawer.next_match", "next_match(1)", "Next match", "n", yields_to="drawer.next_file"),
    _drawer("drawer.previous_match", "next_match(-1)", "Previous match", "N"),
    _drawer("drawer.next_file", "next_file", "Next file (diff)", "n"),
    _drawer("drawer.previous_file", "previous_file", "Previous file (diff)", "p"),
    _drawer(
        "drawer.wrap",
        "toggle_wrap",
        "Wrap long lines",
        "w",
        palette="Wrap the diff's long lines, or not",
        palette_help="kept for next time",
    ),
    _drawer(
        "drawer.pan_left",
        "pan(-1)",
        "Scroll the diff left",
        "less_than_sign,shift+left,left,h",
        key_display="<",
    ),
    _drawer(
        "drawer.pan_right",
        "pan(1)",
        "Scroll the diff right",
        "greater_than_sign,shift+right,right,l",
        key_display=">",
    ),
    _drawer(
        "drawer.side_by_side",
        "toggle_side_by_side",
        "Side by side",
        "s",
        palette="Show the diff side by side (old | new)",
        palette_help=f"from {SIDE_BY_SIDE_MIN_COLUMNS} columns",
        only=f"needs a terminal {SIDE_BY_SIDE_MIN_COLUMNS} columns wide or more",
    ),
    _drawer(
        "drawer.editor",
        "open_editor",
        "Open in $EDITOR",
        "o",
        writes=True,
        yields_to="drawer.links",
        palette="Open the selected file in your editor",
        palette_help="at the selected line; the board is back when you leave it",
    ),
    _drawer(
        "drawer.pager",
        "open_pager",
        "Diff in $PAGER",
        "O",
        palette="Read the whole diff in your pager",
        palette_help="$PAGER, else less -R, in the terminal's colours",
    ),
    _drawer(
        "drawer.shell",
        "open_shell",
        "Shell in the worktree",
        "exclamation_mark",
        key_display="!",
        writes=True,
        palette="Open a shell in the task's worktree",
        palette_help="$SHELL; the board is back when you exit",
    ),
    _drawer(
        "drawer.line_comment",
        "comment_line",
        "Comment on this line",
        "c",
        footer=(DRAWER,),
        writes=True,
        yields_to="task.comment",
        palette="Comment on the selected diff line",
        palette_help="anchored to file:line; the agent sees it",
    ),
    _drawer("drawer.links", "links", "Go to a linked task", "o"),
    _drawer("drawer.board", "focus_board", "To the board", "tab", footer=(DRAWER,)),
    # What can be done to the selected task: on the board and in the drawer alike.
    _write(
        "task.move",
        "move_menu",
        "Move",
        "m",
        footer=_ON_TASK,
        applies=_has_targets,
        only="{task} is {status}: the transition table has no move from there",
        palette_help="a legal move",
    ),
    _write(
        "task.move_left",
        "move_step(-1)",
        "Move left",
        "H",
        applies=_has_neighbour(-1),
        only="no legal column left of {status}",
    ),
    _write(
        "task.move_right",
        "move_step(1)",
        "Move right",
        "L",
        applies=_has_neighbour(1),
        only="no legal column right of {status}",
    ),
    _write(
        "task.release",
        "release",
        "To todo",
        "t",
        applies=_can_reach(t.TODO),
        only="{task} is {status}: the table has no move to todo from there",
        palette="Release {task} to todo",
        palette_help="owner, lease and verdict cleared",
    ),
    _write(
        "task.block",
        "block",
        "Block",
        "b",
        applies=_can_reach(t.BLOCKED),
        only="{task} is {status}: the table has no move to blocked from there",
        palette="Block {task}",
        palette_help="asks for a reason",
    ),
    _write(
        "task.unblock",
        "unblock",
        "Unblock",
        "u",
        applies=_is_blocked,
        only="only for blocked tasks ({task} is {status})",
        palette="Unblock {task}",
        palette_help="back to todo for a fresh claim",
    ),
    _write(
        "task.cancel",
        "cancel",
        "Cancel",
        "x",
        applies=_can_reach(t.CANCELLED),
        only="{task} is {status}: it can no longer be cancelled",
        palette="Cancel {task}",
        palette_help="asks to confirm",
    ),
    _write(
        "task.done",
        "force_done",
        "Done (override)",
        "d",
        applies=override_reaches_done,  # the board's rule: also from where the gate parks debt
        only="{task} is {status}: no override leads to done from there (blocked by hand, not by "
        "the gate's verdict, is unblocked with u)",
        palette="Mark {task} done with a human override",
        palette_help="asks to confirm; written to the audit table",
    ),
    _write(
        "task.cancel_dependents",
        "cancel_dependents",
        "Cancel dependents",
        "X",
        palette="Cancel the dependents of {task}",
        palette_help="pending tasks waiting on it; asks to confirm",
    ),
    _write(
        "task.priority_up",
        "priority(1)",
        "Priority up",
        "plus,equals_sign",
        key_display="+",
        palette="Raise the priority of {task}",
    ),
    _write(
        "task.priority_down",
        "priority(-1)",
        "Priority down",
        "minus",
        key_display="-",
        palette="Lower the priority of {task}",
    ),
    _write(
        "task.edit",
        "edit",
        "Edit",
        "e",
        footer=(DRAWER,),
        palette="Edit {task}",
        palette_help="title and description",
    ),
    _write(
        "task.approve",
        "approve",
        "Approve",
        "a",
        footer=(DRAWER,),
        leads=True,
        applies=_in_review,
        only="only for tasks in review ({task} is {status})",
        palette="Approve {task}",
        palette_help="as the operator: done, with a pass verdict",
    ),
    _write(
        "task.reject",
        "reject",
        "Reject",
        "R",
        footer=(DRAWER,),
        leads=True,
        applies=_in_review,
        only="only for tasks in review ({task} is {status})",
        palette="Reject {task}",
        palette_help="asks for a reason, kept as a comment; back to todo",
    ),
    _write(
        "task.approve_land",
        "approve_and_land",
        "Approve and land",
        "W",
        footer=(DRAWER,),
        leads=True,
        short="Land",
        applies=_lands_approving,
        in_columns=(t.IN_REVIEW,),
        only="only for a task in review, or done, with worktree work not landed yet "
        "({task} is {status})",
        yields_to="task.land",  # done: the same key lands work approved earlier
        palette="Approve and land {task}",
        palette_help="one decision: done only if its work lands, verified; asks to confirm",
    ),
    _write(
        "task.land",
        "land",
        "Land",
        "W",
        footer=(DRAWER,),
        leads=True,
        applies=_lands_approved,
        in_columns=(t.DONE,),
        only="only for a done task whose worktree work has not landed ({task} is {status})",
        palette="Land {task}",
        palette_help="its approved work onto its base branch, verified; asks to confirm",
    ),
    _write(
        "task.comment",
        "comment",
        "Comment",
        "c",
        footer=(DRAWER,),
        palette="Comment on {task}",
        palette_help="as the operator",
    ),
    _write(
        "task.link",
        "link_dependency",
        "Add dependency",
        "D",
        palette="Make {task} wait on another task",
        palette_help="pick the task it waits on",
    ),
    _write(
        "task.budget",
        "set_budget",
        "Budget",
        "dollar_sign",
        key_display="$",
        palette="Set the budget of {task}",
        palette_help="dollars over its subtree; asks why (audited)",
    ),
    _write(
        "task.drop",
        "drop",
        "Drop/restore",
        "delete",
        applies=_droppable,
        only="{task} is {status}: work in progress or in review is not dropped",
        palette="Drop or restore {task}",
    ),
    Action(
        "task.create",
        "create",
        "New task",
        "n",
        _ON_BOARD,
        NAVIGATION,
        footer=_ON_BOARD,
        writes=True,
        palette="New task",
    ),
    _board("app.quit", "app.quit", "Quit", "q", footer=_ON_BOARD),
    # The stats screen.
    Action("stats.close", "close", "Back", "escape,q,S", (STATS,), IN_STATS, footer=(STATS,)),
    Action("stats.window", "window", "Window", "w", (STATS,), IN_STATS, footer=(STATS,)),
    Action("stats.refresh", "refresh", "Refresh", "r", (STATS,), IN_STATS, footer=(STATS,)),
    # The inbox.
    Action("inbox.close", "close", "Back", "escape,q,i", (INBOX,), IN_INBOX, footer=(INBOX,)),
    Action("inbox.down", "cursor(1)", "Down", "j", (INBOX,), IN_INBOX),
    Action("inbox.up", "cursor(-1)", "Up", "k", (INBOX,), IN_INBOX),
    Action("inbox.first", "edge(-1)", "First", "g,home", (INBOX,), IN_INBOX),
    Action("inbox.last", "edge(1)", "Last", "G,end", (INBOX,), IN_INBOX),
    Action("inbox.open", "open", "Open", "enter", (INBOX,), IN_INBOX, footer=(INBOX,)),
    Action(
        "inbox.act",
        "act",
        "Do it (approve, land, unblock, override, reclaim...)",
        "a",
        (INBOX,),
        IN_INBOX,
        footer=(INBOX,),
        writes=True,
    ),
    # Inside dialogs.
    _dialog("menu.down", "cursor_down", "Down (in lists)", "j", MENU),
    _dialog("menu.up", "cursor_up", "Up (in lists)", "k", MENU),
    _dialog("menu.choose", "select", "Choose", "enter", MENU, footer=(MENU,)),  # the list's own
    # A dialog's footer says its answers and choices (its scroll keys: the line "more below").
    _dialog("confirm.yes", "answer(True)", "Yes", "y", CONFIRM, footer=(CONFIRM,)),
    _dialog(
        "confirm.no", "answer(False)", "No", "n,escape", CONFIRM, footer=(CONFIRM,), short="Back"
    ),
    # A question longer than the screen (the land question at 80x24) scrolls; the buttons
    # keep the focus, so enter, tab and y/n answer as ever.
    _dialog(
        "confirm.down", "scroll(1)", "Question: scroll down", "down,j", CONFIRM, key_display="↓"
    ),
    _dialog("confirm.up", "scroll(-1)", "Question: scroll up", "up,k", CONFIRM, key_display="↑"),
    _dialog(
        "confirm.page_down",
        "page(1)",
        "Question: page down",
        "pagedown,ctrl+d",
        CONFIRM,
        key_display="pgdn",
    ),
    _dialog(
        "confirm.page_up",
        "page(-1)",
        "Question: page up",
        "pageup,ctrl+u",
        CONFIRM,
        key_display="pgup",
    ),
    _dialog("confirm.top", "edge(-1)", "Question: to its top", "home,g", CONFIRM),
    _dialog("confirm.bottom", "edge(1)", "Question: to its end", "end,G", CONFIRM),
    _dialog(
        "land.strategy",
        "strategy",
        "Landing: next strategy (squash, rebase...)",
        "s",
        LAND,
        footer=(LAND,),
        short="Strategy",
    ),
    _dialog(
        "land.into",
        "choose_into",
        "Landing: onto another branch",
        "b",
        LAND,
        footer=(LAND,),
        short="Branch",
    ),
    _dialog(
        "land.unverified",
        "land_unverified",
        "Landing: land without a verify command (asks why, audited)",
        "u",
        LAND,
        footer=(LAND,),
        short="Land unverified",
    ),
    _dialog(
        "land.abandon",
        "abandon",
        "Landing: won't land, done work (asks why, audited)",
        "x",
        LAND,
        footer=(LAND,),
        short="Won't land",
    ),
    _dialog("prompt.submit", "submit", "Save", "ctrl+s", PROMPT, footer=(PROMPT,)),
    _dialog("prompt.cancel", "cancel", "Back", "escape", PROMPT, footer=(PROMPT,)),
    _dialog("form.submit", "submit", "Save", "ctrl+s", FORM, footer=(FORM,)),
    _dialog("form.cancel", "cancel", "Back", "escape", FORM, footer=(FORM,)),
    _dialog("move.cancel", "cancel", "Back", "escape,q", MOVE, footer=(MOVE,)),
    # no footer hint: the query line (an Input) binds ↓ first, and its binding hides this one
    _dialog("picker.list", "focus_list", "To the matches", "down", PICKER),
    _dialog("picker.cancel", "cancel", "Back", "escape", PICKER, footer=(PICKER,)),
    _dialog("info.close", "close", "Close", "escape,enter,q", INFO, footer=(INFO,)),
    _dialog("filter.clear", "clear_filter", "Clear filter", "escape", FILTER),
    _dialog("search.cancel", "cancel", "Back", "escape", SEARCH),
    _dialog("help.down", "scroll(1)", "Down", "j,down", HELP),
    _dialog("help.up", "scroll(-1)", "Up", "k,up", HELP),
    _dialog("help.page_down", "page(1)", "Page down", "ctrl+d,pagedown,space", HELP),
    _dialog("help.page_up", "page(-1)", "Page up", "ctrl+u,pageup", HELP),
    _dialog("help.top", "edge(-1)", "Top", "g,home", HELP),
    _dialog("help.bottom", "edge(1)", "Bottom", "G,end", HELP),
    _dialog("help.close", "close", "Close", "escape,q,question_mark", HELP, footer=(HELP,)),
    _dialog("log.down", "scroll(1)", "Down", "j,down", LOG),
    _dialog("log.up", "scroll(-1)", "Up", "k,up", LOG),
    _dialog("log.page_down", "page(1)", "Page down", "ctrl+d,pagedown,space", LOG),
    _dialog("log.page_up", "page(-1)", "Page up", "ctrl+u,pageup", LOG),
    _dialog("log.top", "edge(-1)", "Top", "g,home", LOG),
    _dialog("log.bottom", "edge(1)", "Bottom", "G,end", LOG),
    _dialog("log.close", "close", "Close", "escape,q,M", LOG, footer=(LOG,)),
    # Everywhere.
    Action(
        "app.help",
        "help",
        "Help",
        "question_mark",
        (APP,),
        EVERYWHERE,
        key_display="?",
        footer=(APP,),
    ),
    Action(
        "app.messages",
        "messages",
        "Messages (the log of every notification)",
        "M",
        (APP,),
        EVERYWHERE,
        palette="Show the message log",
        palette_help="every notification since the start, newest first",
    ),
    Action("app.palette", "command_palette", "Palette", "ctrl+p", (APP,), EVERYWHERE),
)

SECTIONS = (NAVIGATION, SELECTED, IN_DRAWER, IN_INBOX, IN_STATS, IN_DIALOGS, EVERYWHERE)

# With cards marked (`space`), these act on every marked card after one confirmation.
BATCH = frozenset({"task.approve", "task.cancel", "task.move", "task.unblock"})


# -- which moves ask first: one rule for every way to a move (keys, move menu, palette) --------


@dataclass(frozen=True, slots=True)
class Question:
    """A confirmation to ask before a write: what it says and the word on its yes button."""

    title: str
    body: str
    verb: str
    danger: bool = False


def move_question(
    task: Task,
    target: str,
    *,
    operator: str,
    checkout: "CheckoutState | None" = None,
    now_ms: int | None = None,
) -> Question | None:
    """What to ask before moving `task` to `target`, or None to move at once. Taking work (in
    progress), ending someone's claim (back to todo or backlog) and cancelling ask; a move to
    blocked asks for a reason and one to done over a verdict for an override instead. A cancel
    names the holder and a worktree with uncommitted work (`checkout`, read from git)."""
    if target == t.IN_PROGRESS and task.status != t.IN_PROGRESS:
        if task.assignee_agent_id:
            return Question(
                f"Back to in progress for {task.assignee_agent_id}?",
                f"{task.id} goes back to in progress, still held by {task.assignee_agent_id}, "
                "with a fresh lease.",
                "Move it",
            )
        return Question(
            f"Take {task.id} yourself?",
            f"Moving {task.id} to in progress claims it for {operator} with a fresh lease: no "
            "agent will claim it while you hold it.",
            "Take it",
        )
    if target in t.PENDING and task.assignee_agent_id:
        after = "any agent may claim it again" if target == t.TODO else "it waits in triage"
        return Question(
            f"Release {task.id} to {t.label(target)}?",
            f"{task.assignee_agent_id} holds {task.id} ({t.label(task.status)}). Releasing it "
            "ends that claim: owner, lease and verdict are cleared, running executions are "
            f"cancelled, and {after}.",
            "Release",
        )
    if target == t.CANCELLED:
        return Question(
            f"Cancel {task.id}?",
            " ".join(_cancel_facts(task, checkout, now_ms)),
            "Cancel task",
            danger=True,
        )
    return None


def holder_fact(task: Task, now_ms: int | None) -> str | None:
    """What a move out from under a holder does to it, for the questions that end a claim
    (cancel, done by override); None when nobody holds the task."""
    holder = task.assignee_agent_id
    if not holder or task.status not in t.LOCKED:
        return None
    live = now_ms is None or not lease_expired(task.lease_until, now_ms)
    lease = "with a live lease" if live else "whose lease has run out"
    return (
        f"{holder} holds it now ({t.label(task.status)}, {lease}): its claim ends and its "
        "next heartbeat or report is refused."
    )


def _cancel_facts(task: Task, checkout: "CheckoutState | None", now_ms: int | None) -> list[str]:
    facts = [f"{task.id} “{task.title}” will be cancelled. This cannot be undone."]
    held = holder_fact(task, now_ms)
    if held is not None:
        facts.append(held)
    if checkout is not None and checkout.uncommitted:
        where = f" at {checkout.path}" if checkout.path else ""
        branch = f" {checkout.branch}" if checkout.branch else ""
        facts.append(
            f"Its worktree{where} has uncommitted changes: after the retention period they are "
            f"committed to its branch{branch} and the checkout is removed; nothing lands them."
        )
    return facts


BY_ID: dict[str, Action] = {action.id: action for action in ACTIONS}
assert len(BY_ID) == len(ACTIONS), "two actions share an id"


@dataclass(slots=True)
class _Index:
    """Screen -> its actions by (name, parameters), for `availability` on every repaint."""

    by_call: dict[tuple[str, str, tuple[object, ...]], Action] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for action in ACTIONS:
            for screen in action.screens:
                self.by_call[(screen, action.name, action.parameters)] = action


_INDEX = _Index()


def bindings_for(screen: str) -> list[BindingType]:
    """The `BINDINGS` of one screen, in registry order."""
    return [action.binding(screen) for action in ACTIONS if screen in action.screens]


def actions_for(screen: str) -> Iterator[Action]:
    return (action for action in ACTIONS if screen in action.screens)


def lookup(screen: str, name: str, parameters: Iterable[object] = ()) -> Action | None:
    """The registry entry a screen's `check_action(name, parameters)` is asked about."""
    return _INDEX.by_call.get((screen, name, tuple(parameters)))


def known_ids() -> set[str]:
    return set(BY_ID)


def availability(action: Action | None, *, read_only: bool, task: Task | None) -> bool | None:
    """What `check_action` answers: True to run, None to grey out (shown, disabled), False to
    hide it: an action that does not apply to the task yields its key (and its footer place) to
    the one it `yields_to` when that one does (`W` on a done task is Land, not a greyed Approve
    and land)."""
    shared = _availability(action, read_only=read_only, task=task)
    # (read-only greys every write, keys and all: nothing yields then)
    yields = action.yields_to if action is not None and shared is not True else None
    if (
        yields is not None
        and not read_only
        and _availability(BY_ID[yields], read_only=False, task=task)
    ):
        return False
    return shared


def footer_title(action_id: str | None, *, paused: bool) -> str | None:
    """The footer's word for a key other than its binding's, in the app's state: `p` says
    Resume while the board is paused. None: the binding's own."""
    action = BY_ID.get(action_id) if action_id is not None else None
    return action.paused_title if action is not None and paused else None


def footer_rank(action_id: str | None, *, enabled: bool, screen: str | None) -> int:
    """Where a footer puts a hint (a stable sort, so equal ranks keep registry order). In the
    drawer, whose task is fixed: the decision the task waits on first where it applies (`leads`:
    review keys on a task in review, Land on done work not landed), greyed keys that cannot apply
    to the task (`applies` said no, or a `leads` key greyed) last, so a short footer leaves them
    out first. Elsewhere registry order: the board's cursor moves between tasks, and hints that
    jumped as it moved would be noise."""
    action = BY_ID.get(action_id) if action_id is not None else None
    if action is None or screen != DRAWER:
        return 1
    if action.leads and enabled:
        return 0
    if not enabled and (action.leads or action.applies is not None):
        return 2
    return 1


def _availability(action: Action | None, *, read_only: bool, task: Task | None) -> bool | None:
    if action is None:
        return True
    if action.writes and read_only:
        return None
    if action.needs_task:
        if task is None:
            return None
        if action.applies is not None and not action.applies(task):
            return None
    return True


def unavailable_because(
    action: Action,
    *,
    read_only: bool,
    task: Task | None,
    marked: int = 0,
    column: str | None = None,
    unfold: str | None = None,
) -> str:
    """Why `availability` greyed `action` out, in one line for the key's press ("approve: only
    for tasks in review (TASK-3 is todo)"). `marked`: a batch found no marked task it applies to.
    `column`: the board's column, where no task is selected (a shared key is said as its action
    there: "land: no task selected in the done column"). `unfold`: that column is folded, and
    this key unfolds it (Enter on a folded cancelled column of 15,000 said only "no task
    selected")."""
    if task is None and column is not None and action.yields_to is not None:
        shared = BY_ID[action.yields_to]
        action = shared if column in shared.in_columns else action
    verb = action.title.lower()
    if action.writes and read_only:
        return f"{verb}: the board is open read-only"
    if marked:
        return f"{verb}: it applies to none of the {marked} marked tasks"
    if (action.needs_task or action.in_column) and column is not None and unfold is not None:
        return f"{verb}: the {t.label(column)} column is folded ({unfold} unfolds it)"
    if action.needs_task and task is None:
        where = f" in the {t.label(column)} column" if column is not None else ""
        return f"{verb}: no task selected{where}"
    if task is not None and action.only:
        return f"{verb}: " + action.only.format(task=task.id, status=t.label(task.status))
    return f"{verb}: does not apply here"


def help_sections() -> list[tuple[str, list[Action]]]:
    """The help screen's sections, in order, each with its actions."""
    return [(section, [a for a in ACTIONS if a.section == section]) for section in SECTIONS]


def palette_entries(screen: str) -> list[Action]:
    """The actions the command palette offers on `screen` (before `availability`)."""
    return [a for a in ACTIONS if a.palette and (screen in a.screens or APP in a.screens)]
