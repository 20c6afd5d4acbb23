"""`run_tui`: the entry point the CLI and the demo call. It reads the board before it imports
Textual (see `tui.prefetch`), then runs the app."""

import gc
from collections.abc import Callable

from boardlib.clock import SystemClock
from boardlib.location import BoardLocation, location_exists

from .prefetch import Prefetch

MIN_POLL_MS = 10  # the reader's shortest interval between two looks at the board


def run_tui(
    db_path: BoardLocation,
    *,
    poll_ms: int = 500,
    read_only: bool = False,
    theme: str | None = None,
    operator: str | None = None,
    on_terminal_gone: Callable[[], object] | None = None,
    open_task: str | None = None,
    announce: Callable[[dict[str, int]], str | None] | None = None,
    demo: bool = False,
    notify_mode: str = "off",
    user_keymap: dict[str, str] | None = None,
) -> None:
    """Run the board on `db_path` until the operator quits. The board file is created when it
    does not exist, unless `read_only` (then the header says it is missing until it appears).
    `on_terminal_gone` is the caller's clean-up for a dropped terminal (an SSH session that
    ends), when the process may have to end without unwinding. `open_task`: start with that
    task's drawer open. `announce`: asked after each board update with the status counts; the
    first sentence it returns stays on screen (the demo's "demo ended 03:10: ..."). `demo`: the
    header says DEMO all along, and a first note says what that means. `user_keymap`: the
    operator's keys as the caller already read and checked them (None: the app reads the file).
    `kanban tui` read the keymap file twice at start."""
    if poll_ms < MIN_POLL_MS:
        raise ValueError(f"poll_ms must be at least {MIN_POLL_MS}")
    gc.disable()  # until the first frame (`prefetch.GC_PAUSE_MAX_S`): the app turns it on
    try:
        prefetch = Prefetch(db_path, SystemClock()) if location_exists(db_path) else None
        from .app import run_app  # Textual loads only now

        run_app(
            db_path,
            poll_ms=poll_ms,
            read_only=read_only,
            theme=theme,
            operator=operator,
            prefetch=prefetch,
            on_terminal_gone=on_terminal_gone,
            open_task=open_task,
            announce=announce,
            demo=demo,
            notify_mode=notify_mode,
            user_keymap=user_keymap,
        )
    finally:
        gc.enable()


def theme_names() -> list[str]:
    """The themes `kanban tui --theme` accepts: the ones the app offers (Textual's own)."""
    from textual.theme import BUILTIN_THEMES

    return sorted(BUILTIN_THEMES)
