"""Options shared by many verbs, declared once so their names and help never drift."""

import math
import re
from collections.abc import Callable
from typing import Any, TypeVar

import click

from boardlib.validation import caller_name

F = TypeVar("F", bound=Callable[..., Any])

MAX_LEASE_MINUTES = 24 * 60


def plain(text: str) -> bool:
    """Whether a number option's text is plain ASCII with no `_`: Python's float() and int()
    also read `1_000` and any script's digits (full-width, Arabic-Indic...), which no JSON
    number (HTTP, MCP, a plan file) is written in."""
    return text.isascii() and "_" not in text


def refuse_unplain(
    kind: click.ParamType,  # type: ignore[type-arg]
    value: Any,
    param: click.Parameter | None,
    ctx: click.Context | None,
) -> None:
    if isinstance(value, str) and not plain(value):
        kind.fail(f"{value!r} is not a plain number (ASCII digits, no '_')", param, ctx)


class Number(click.FloatRange):
    """A number option: click's range lets nan (every comparison false) and inf (under no max)
    through to the board, which refused them as invalid_input while -5 was a usage refusal.
    Every bad number is refused here, alike, and so is one not written plainly (`plain`)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        refuse_unplain(self, value, param, ctx)
        try:
            number = float(value)
        except ValueError:
            self.fail(f"{value!r} is not a number", param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        try:
            number = super().convert(number, param, ctx)
        except click.BadParameter:
            # Click names the parsed float (`--minutes 0`: "0.0 is not in the range"); the
            # refusal quotes what was typed, as the range is said the way a person writes it.
            typed = value.strip() if isinstance(value, str) else value
            self.fail(f"{typed} is not in the range {self._describe_range()}.", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number

    def _describe_range(self) -> str:
        """The range as a person writes it (`0<=x<=1000000000`), not Python's `1000000000.0`."""
        return re.sub(r"(?<=\d)\.0\b", "", super()._describe_range())


def whole_number(text: str) -> int | None:
    """A whole number however it is written (`1000`, `1000.0`, `1e3`), as HTTP and MCP take a
    JSON number with no fraction; None when it is not one (`1000.5`, `nan`, `many`)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return None
    return int(number) if math.isfinite(number) and number.is_integer() else None


class WholeNumber(click.IntRange):
    """A whole-number option (a priority, a token count, an epoch, a line): `whole_number`,
    within the range, so `1e3` is 1000 on the command line as in an HTTP or MCP body; written
    plainly (`plain`), as a JSON number is."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        refuse_unplain(self, value, param, ctx)
        if isinstance(value, str):
            number = whole_number(value)
            if number is None:
                self.fail(f"{value!r} is not a whole number", param, ctx)
            value = number
        return super().convert(value, param, ctx)

    def _describe_range(self) -> str:
        """No range in the help of an unbounded one (click would say `x<=None`)."""
        return "" if self.min is None and self.max is None else super()._describe_range()


class AgentName(click.ParamType):  # type: ignore[type-arg]
    """Who acts, or the agent a task goes to: an agent's or an operator's name, refused
    (invalid_input, field `agent`) when it is a name of the board's own passes (`system`,
    `verification-gate`, `worktree-gc`), an empty `operator:` or not printable."""

    name = "name"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return caller_name(
            value, "to" if param is not None and param.name == "to_agent" else "agent"
        )


AGENT = AgentName()


def complete_task_id(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """The shell's task-id completion, imported only when a shell asks (`completion.py`)."""
    from .completion import complete_task_id as complete

    return complete(ctx, param, incomplete)


task_id_argument = click.argument("task_id", metavar="ID", shell_complete=complete_task_id)

task_events_option = click.option(
    "--task",
    "task_id",
    metavar="ID",
    shell_complete=complete_task_id,
    help="Only this task's events.",
)

agent_option = click.option(
    "--agent",
    "-a",
    required=True,
    envvar="KANBAN_AGENT",
    type=AGENT,
    metavar="NAME",
    help="Who is acting (env: KANBAN_AGENT).",
)


def actor_option_saying(help_text: str) -> Callable[[F], F]:
    """`--agent` as the actor, operator when not given; `help_text` names KANBAN_AGENT."""
    return click.option(
        "--agent",
        "-a",
        "actor",
        envvar="KANBAN_AGENT",
        type=AGENT,
        default="operator",
        show_default=True,
        metavar="NAME",
        help=help_text,
    )


actor_option = actor_option_saying("Who is acting, for the event log (env: KANBAN_AGENT).")

epoch_option = click.option(
    "--epoch",
    type=WholeNumber(min=0),
    metavar="N",
    help="The claimEpoch your claim printed; refused (stale_claim) once the task was reclaimed.",
)

role_option = click.option("--role", "-r", metavar="ROLE", help="Only tasks for this role.")


def minutes_option(help_text: str) -> Callable[[F], F]:
    return click.option(
        "--minutes",
        type=Number(min=0, min_open=True, max=MAX_LEASE_MINUTES),
        metavar="N",
        help=help_text,
    )


def split_ids(values: tuple[str, ...]) -> list[str]:
    """`--depends-on A,B --depends-on C` -> [A, B, C] (order kept, duplicates dropped)."""
    ids = [part.strip() for value in values for part in value.split(",")]
    return list(dict.fromkeys(part for part in ids if part))
