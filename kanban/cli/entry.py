"""The console script: run the click app and turn every outcome into one exit code.

Refusals from the board are data for the caller: `{"error": ..., "reason": ...}` on one stderr
line and exit 2 (4 when the database stayed busy). Usage errors too: `"reason": "usage"`, exit 2,
with a "did you mean" `suggestion` where there is one (`usage.py`); `--help` prints Click's help.
An unreachable database is `database_unavailable`, exit 2. Anything else that escapes a command
is a bug or a broken environment: exit 1 with one line, and a traceback only when
`KANBAN_DEBUG=1`, so an agent parsing stderr never has to skip over a Python stack.
"""

import os
import sqlite3
import sys
from collections.abc import Sequence

import click

from boardlib.errors import BoardError, Reason
from boardlib.inert import inert

from . import exitcodes
from .output import error_line
from .usage import usage_document

# Where a task id that is not on the board may be found: the refusal said only `task not
# found`, the id in its details. The HTTP routes keep the seed's fixed 404 text.
TASK_IDS = frozenset({"task", "parent task", "dependency"})
FIND_TASK = "find it with `kanban task search TEXT` or `kanban task list`"


def _refusal(error: BoardError) -> dict[str, object]:
    """A refusal's JSON line; a task not found names the id and where to look."""
    said = error.to_dict()
    what, ident = error.details.get("what"), error.details.get("id")
    if error.reason is Reason.NOT_FOUND and what in TASK_IDS and isinstance(ident, str):
        said["error"] = f"{what} {inert(ident)} not found: {FIND_TASK}"
    return said


def _debug() -> bool:
    return os.environ.get("KANBAN_DEBUG", "") not in ("", "0")


def _traceback(error: BaseException) -> None:
    import traceback

    traceback.print_exception(error, file=sys.stderr)


def _unexpected(error: BaseException) -> int:
    if _debug():
        _traceback(error)
    report = getattr(error, "to_dict", None)
    if callable(report):  # an environment failure that describes itself (e.g. git_failed)
        from boardlib.store.base import StoreError  # only on this path: startup cost

        error_line(report())
        # An unreachable database is a typed refusal like `no_board`: nothing was written.
        return exitcodes.REFUSED if isinstance(error, StoreError) else exitcodes.UNEXPECTED
    if isinstance(error, sqlite3.Error):
        from .context import opened_path

        where = f" on {opened_path}" if opened_path is not None else ""
        message = f"database error{where}: {error}"
    elif isinstance(error, OSError) and error.strerror:
        where = f": {error.filename}" if error.filename else ""
        message = f"{error.strerror}{where}"
    else:
        message = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    error_line({"error": message, "reason": "unexpected", "type": type(error).__name__})
    return exitcodes.UNEXPECTED


def _flush_stdout() -> int | None:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        return _broken_pipe()
    return None


def _broken_pipe() -> int:
    """The reader went away (`kanban events --follow | head`): stop quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass
    return exitcodes.UNEXPECTED


def _undecodable(args: Sequence[str]) -> int | None:
    """The position of the first argument that was not valid UTF-8 (Python passes such bytes on
    as lone surrogates, which no board field can store), or None."""
    for position, arg in enumerate(args, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return position
    return None


def main(argv: Sequence[str] | None = None) -> int:
    from .root import cli

    args = list(sys.argv[1:] if argv is None else argv)
    position = _undecodable(args)
    if position is not None:
        error_line(
            {
                "error": f"argument {position} is not valid UTF-8 text",
                "reason": Reason.INVALID_INPUT.value,
                "argument": position,
            }
        )
        return exitcodes.REFUSED
    try:
        result = cli.main(args=args, prog_name="kanban", standalone_mode=False)
        code = result if isinstance(result, int) and not isinstance(result, bool) else 0
    except BoardError as error:
        if _debug():
            _traceback(error)
        error_line(_refusal(error))
        code = exitcodes.refusal_code(error.reason)
    except click.exceptions.Abort as error:
        interrupted = isinstance(error.__cause__, KeyboardInterrupt)
        if not interrupted:
            click.echo("Aborted!", err=True)
        code = exitcodes.INTERRUPTED if interrupted else exitcodes.UNEXPECTED
    except click.exceptions.UsageError as error:
        error_line(usage_document(error, args))
        code = exitcodes.REFUSED
    except click.exceptions.ClickException as error:
        error_line({"error": error.format_message(), "reason": "unavailable"})
        code = error.exit_code
    except UnicodeError as error:  # text that is not UTF-8 reached a field: bad input, not a bug
        if _debug():
            _traceback(error)
        error_line({"error": f"text that is not valid UTF-8: {error}", "reason": "invalid_input"})
        code = exitcodes.REFUSED
    except KeyboardInterrupt:
        code = exitcodes.INTERRUPTED
    except BrokenPipeError:
        return _broken_pipe()
    except Exception as error:
        code = _unexpected(error)
    flushed = _flush_stdout()
    return flushed if flushed is not None else code
