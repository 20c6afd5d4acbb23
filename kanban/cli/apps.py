"""The full-screen surfaces, imported only when asked for: the live board (Textual) and the demo
team of simulated agents. Both live outside this package; importing this module costs nothing."""

import sys
from pathlib import Path

import click

from boardlib.inert import inert
from boardlib.location import BoardLocation
from kanban import demo as demo_limits

from .context import board_path, db_option, ensure_board, refuse_table_format
from .options import Number, WholeNumber
from .usage import closest

NOTIFY_MODES = ("bell", "osc", "osc777", "off")  # tui.notify.MODES, without importing the TUI


def require_terminal(what: str) -> None:
    """A full-screen app needs a terminal; in a pipe or a CI job say so instead of scribbling."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise click.UsageError(f"{what} needs an interactive terminal; see `kanban --help`")


def launch_tui(
    path: BoardLocation,
    *,
    poll_ms: int = 500,
    read_only: bool = False,
    theme: str | None = None,
    open_task: str | None = None,
    notify_mode: str = "off",
) -> None:
    refuse_table_format("it is the live board, full screen")
    if open_task is not None:
        check_task_exists(path, open_task)  # a typo is refused here, not on a full screen
    user_keymap = check_keymap()
    require_terminal("the live board")
    try:
        from tui.launch import run_tui
    except ImportError as error:
        raise click.ClickException(f"the live board is not available here: {error}") from None
    ensure_board(path, read_only=read_only)

    run_tui(
        path,
        poll_ms=poll_ms,
        read_only=read_only,
        theme=theme,
        open_task=open_task,
        notify_mode=notify_mode,
        user_keymap=user_keymap,
    )


def check_keymap() -> dict[str, str] | None:
    """The operator's keymap file (`KANBAN_KEYMAP`, else the config folder's) is usable, or a
    usage refusal naming the file and what is wrong (exit 2), before a terminal is taken over:
    the app itself would stop mid-start as an unexpected failure. Its keys, read once, for the
    app (None when the live board is not available here)."""
    try:
        from tui.keymap import KeymapError, load_user_keymap
    except ImportError:
        return None  # the live board is not available here: launching says so
    try:
        return load_user_keymap()
    except KeymapError as error:
        raise click.UsageError(str(error)) from None


def known_theme(name: str | None) -> str | None:
    """`--theme NAME` names a theme the board ships, or a usage refusal (exit 2) that lists them,
    before a terminal is taken over (Textual itself would raise mid-start, exit 1)."""
    if name is None:
        return None
    from tui.launch import theme_names  # Textual's theme table: only when a theme is named

    names = theme_names()
    if name in names:
        return name
    guess = closest(name, names)
    hint = f" Did you mean {guess!r}?" if guess else ""
    raise click.BadParameter(
        f"no theme named {inert(name)!r}.{hint} Themes: {', '.join(names)}", param_hint="--theme"
    )


def check_task_exists(path: BoardLocation, task_id: str) -> None:
    """`--open TASK-ID` names a task of this board, or the usual refusal (exit 2): `no_board`
    when there is no board there, `not_found` when it has no such task."""
    from boardlib import Board

    with Board(path, read_only=True) as board:
        board.get_task(task_id)


@click.command("tui")
@click.option(
    "--poll-ms",
    type=WholeNumber(min=20),
    default=500,
    show_default=True,
    metavar="MS",
    help="How often the board checks the file for changes.",
)
@click.option("--read-only", is_flag=True, help="Watch without the power to change anything.")
@click.option(
    "--theme",
    metavar="NAME",
    callback=lambda _ctx, _param, value: known_theme(value),
    help="A Textual theme (e.g. ansi-dark over SSH, textual-light).",
)
@click.option(
    "--open",
    "open_task",
    metavar="TASK-ID",
    help="Start with this task's drawer open (for a link in a chat or a log).",
)
@click.option(
    "--notify",
    "notify_mode",
    type=click.Choice(NOTIFY_MODES),
    envvar="KANBAN_NOTIFY",
    default="off",
    show_default=True,
    help="When something new needs you: a terminal bell, a desktop notification (OSC 9, or "
    "OSC 777 for VTE terminals), or nothing (env: KANBAN_NOTIFY).",
)
@db_option
def tui(
    poll_ms: int, read_only: bool, theme: str | None, open_task: str | None, notify_mode: str
) -> None:
    """Watch and steer the board live in the terminal."""
    launch_tui(
        board_path(),
        poll_ms=poll_ms,
        read_only=read_only,
        theme=theme,
        open_task=open_task,
        notify_mode=notify_mode,
    )


@click.command("demo")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="PATH",
    help="Where the demo board goes (default: a temporary folder, removed afterwards).",
)
@click.option(
    "--agents", type=WholeNumber(min=1, max=demo_limits.MAX_AGENTS),
    default=demo_limits.DEFAULT_AGENTS, show_default=True, metavar="N", help="Simulated agents.",
)  # fmt: skip
@click.option(
    "--tasks", type=WholeNumber(min=1, max=demo_limits.MAX_TASKS),
    default=demo_limits.DEFAULT_TASKS, show_default=True, metavar="N",
    help="Tasks in the demo plan.",
)  # fmt: skip
@click.option(
    "--speed",
    type=Number(min=0, min_open=True, max=demo_limits.MAX_SPEED),
    default=demo_limits.DEFAULT_SPEED,
    show_default=True,
    metavar="N",
    help="Time multiplier for the simulated agents (10 = ten times faster).",
)
@click.option("--keep", is_flag=True, help="Keep the demo folder afterwards.")
@click.option("--no-tui", is_flag=True, help="Run the agents headless (no terminal needed).")
@click.option(
    "--duration",
    type=Number(min=0, min_open=True),
    metavar="SECONDS",
    help="Stop the agents after this long (default: when the work is done, or on quit).",
)
@click.option(
    "--poll-ms",
    type=WholeNumber(min=20),
    default=demo_limits.DEFAULT_POLL_MS,
    show_default=True,
    metavar="MS",
    help="How often its live board checks the file for changes.",
)
@click.option(
    "--seed", type=WholeNumber(), metavar="N", help="Repeat a run's plan and agent choices."
)
def demo(
    directory: Path | None,
    agents: int,
    tasks: int,
    speed: float,
    keep: bool,
    no_tui: bool,
    duration: float | None,
    poll_ms: int,
    seed: int | None,
) -> None:
    """A team of simulated agents working a demo board, shown live."""
    refuse_table_format("it shows the board live, or with --no-tui prints its log as it runs")
    user_keymap = check_keymap() if not no_tui else None
    if not no_tui:
        require_terminal("the demo's live board (use --no-tui to run headless)")
    code = demo_limits.run_demo(
        directory=directory,
        agents=agents,
        tasks=tasks,
        speed=speed,
        keep=keep,
        open_tui=not no_tui,
        duration=duration,
        poll_ms=poll_ms,
        seed=seed,
        user_keymap=user_keymap,
    )
    raise click.exceptions.Exit(code)
