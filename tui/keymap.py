"""Every key of the app, declared once, with an id (so it can be remapped) and a description (so
the footer and the help screen are generated from it, never written by hand).

Keys follow k9s and lazygit: `h/j/k/l` and arrows to move, `H/L` to move the card itself, `enter`
to open, `esc` to go back, `/` to filter, `ctrl+p` for the palette, `?` for help, `q` to quit.

Remap keys in a TOML file (`$KANBAN_KEYMAP`, else `$XDG_CONFIG_HOME/kanban/keymap.toml`) of
`binding-id = "keys"` lines, e.g. `"task.cancel" = "ctrl+x"`; `load_user_keymap` reads it.
"""

import os
import tomllib
from pathlib import Path

from textual.binding import Binding

# Application-wide: available on every screen.
APP_BINDINGS = [
    Binding("q", "quit", "Quit", id="app.quit"),
    Binding("question_mark", "help", "Help", key_display="?", id="app.help"),
    Binding("ctrl+p", "command_palette", "Palette", show=False, id="app.palette"),
]

# The board screen: moving around and the board-wide toggles.
BOARD_BINDINGS = [
    Binding("j,down", "cursor(1)", "Down", show=False, id="board.down"),
    Binding("k,up", "cursor(-1)", "Up", show=False, id="board.up"),
    Binding("h,left", "column(-1)", "Column left", show=False, id="board.left"),
    Binding("l,right", "column(1)", "Column right", show=False, id="board.right"),
    Binding("g,home", "home", "First card", show=False, id="board.home"),
    Binding("G,end", "end", "Last card", show=False, id="board.end"),
    Binding("ctrl+d,pagedown", "page(1)", "Page down", show=False, id="board.page_down"),
    Binding("ctrl+u,pageup", "page(-1)", "Page up", show=False, id="board.page_up"),
    Binding("enter", "open_drawer", "Open", id="board.open"),
    Binding("slash", "filter", "Filter", key_display="/", id="board.filter"),
    Binding("escape", "back", "Clear filter", show=False, id="board.back"),
    Binding(
        "full_stop",
        "toggle_dropped",
        "Show dropped",
        key_display=".",
        show=False,
        id="board.dropped",
    ),
    Binding("z", "toggle_finished", "Fold done/cancelled", show=False, id="board.fold"),
    Binding("p", "toggle_pause", "Pause", id="board.pause"),
    Binding("r", "refresh", "Refresh", show=False, id="board.refresh"),
]

# What can be done to the selected task: on the board and in the drawer alike.
TASK_BINDINGS = [
    Binding("m", "move_menu", "Move", id="task.move"),
    Binding("H", "move_step(-1)", "Move left", show=False, id="task.move_left"),
    Binding("L", "move_step(1)", "Move right", show=False, id="task.move_right"),
    Binding("t", "release", "To todo", show=False, id="task.release"),
    Binding("b", "block", "Block", show=False, id="task.block"),
    Binding("x", "cancel", "Cancel", show=False, id="task.cancel"),
    Binding("d", "force_done", "Done (override)", show=False, id="task.done"),
    Binding("X", "cancel_dependents", "Cancel dependents", show=False, id="task.cancel_dependents"),
    Binding(
        "plus,equals_sign",
        "priority(1)",
        "Priority up",
        key_display="+",
        show=False,
        id="task.priority_up",
    ),
    Binding(
        "minus",
        "priority(-1)",
        "Priority down",
        key_display="-",
        show=False,
        id="task.priority_down",
    ),
    Binding("e", "edit", "Edit", show=False, id="task.edit"),
    Binding("c", "comment", "Comment", show=False, id="task.comment"),
    Binding("D", "link_dependency", "Add dependency", show=False, id="task.link"),
    Binding("delete", "drop", "Drop/restore", show=False, id="task.drop"),
    Binding("n", "create", "New task", id="task.create"),
]

DRAWER_BINDINGS = [
    Binding("escape", "close", "Back", id="drawer.close"),
    Binding("j,down", "scroll(1)", "Scroll down", show=False, id="drawer.down"),
    Binding("k,up", "scroll(-1)", "Scroll up", show=False, id="drawer.up"),
]

# Lists in dialogs (the move menu, the dependency picker): the board's j/k work there too.
MENU_BINDINGS = [
    Binding("j", "cursor_down", "Down", show=False, id="menu.down"),
    Binding("k", "cursor_up", "Up", show=False, id="menu.up"),
]

SECTIONS = (
    ("Board", BOARD_BINDINGS),
    ("Selected task", TASK_BINDINGS),
    ("Task drawer", DRAWER_BINDINGS),
    ("Menus", MENU_BINDINGS),
    ("Everywhere", APP_BINDINGS),
)

# Actions that write to the board: all disabled (greyed) in read-only mode.
WRITE_ACTIONS = frozenset(
    {
        "move_menu",
        "move_step",
        "release",
        "block",
        "cancel",
        "force_done",
        "cancel_dependents",
        "priority",
        "edit",
        "comment",
        "link_dependency",
        "drop",
        "create",
    }
)

# Actions that need a selected task.
TASK_ACTIONS = WRITE_ACTIONS - {"create"} | {"open_drawer"}


def keymap_path(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    explicit = env.get("KANBAN_KEYMAP")
    if explicit:
        return Path(explicit)
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "kanban" / "keymap.toml"


def known_ids() -> set[str]:
    return {binding.id for _, bindings in SECTIONS for binding in bindings if binding.id}


def load_user_keymap(path: Path | None = None) -> dict[str, str]:
    """The operator's remapped keys (binding id -> keys); unknown ids are refused loudly, since a
    silently ignored typo leaves a key doing something unexpected."""
    path = path or keymap_path()
    if not path.exists():
        return {}
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    table = data.get("keymap", data)
    unknown = sorted(set(table) - known_ids())
    if unknown:
        raise ValueError(f"{path}: unknown binding ids {', '.join(unknown)}")
    return {str(key): str(value) for key, value in table.items()}
