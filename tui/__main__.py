"""`python -m tui --db PATH|URL`: the board without the CLI (for development, manual testing and
benchmarks/tui.py)."""

import argparse
import sys

from boardlib.errors import BoardError
from boardlib.inert import inert
from boardlib.location import BoardLocation, board_location
from boardlib.paths import default_board_path
from boardlib.store.base import StoreError

from .launch import MIN_POLL_MS, run_tui, theme_names


def _location(text: str) -> BoardLocation:
    """`--db` as `kanban tui` reads it: a refused location is a usage error, not a traceback."""
    try:
        return board_location(text)
    except BoardError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _poll_ms(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of milliseconds: {text!r}") from None
    if value < MIN_POLL_MS:
        raise argparse.ArgumentTypeError(f"{value} is below {MIN_POLL_MS}")
    return value


def _theme(name: str) -> str:
    names = theme_names()
    if name not in names:
        raise argparse.ArgumentTypeError(
            f"no theme named {inert(name)!r}. Themes: {', '.join(names)}"
        )
    return name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tui", description=__doc__)
    parser.add_argument(
        "--db",
        type=_location,
        default=None,
        help="board file or postgresql:// URL (default: KANBAN_DB)",
    )
    parser.add_argument("--poll-ms", type=_poll_ms, default=500, help="live update interval")
    parser.add_argument("--read-only", action="store_true", help="query-only, every write off")
    parser.add_argument("--theme", type=_theme, default=None, help="e.g. ansi-dark over SSH")
    parser.add_argument("--open", dest="open_task", default=None, help="open this task's drawer")
    args = parser.parse_args(argv)
    try:
        location = args.db or default_board_path()
    except BoardError as error:
        parser.error(f"KANBAN_DB: {error}")
    from boardlib.board import check_board_to_watch  # not for --help or a usage error

    try:
        check_board_to_watch(location, read_only=args.read_only)
    except BoardError as error:
        parser.error(f"{error} ({error.reason})")
    except StoreError as error:  # the server refused or could not be reached: as a refusal
        parser.error(f"{error.message} ({error.reason})")
    run_tui(
        location,
        poll_ms=args.poll_ms,
        read_only=args.read_only,
        theme=args.theme,
        open_task=args.open_task,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
