"""Usage errors as data: one JSON line on stderr, like every other refusal.

An agent parses stderr; Click's multi-line usage text ("Usage: ... Try ... Error: ...") is for
people and breaks that. So a usage error (a mistyped command or option, a missing `--agent`, a
bad `--status`) is printed as `{"error": ..., "reason": "usage", ...}` with exit 2, carrying
Click's own "did you mean" (and ours, for commands and choices) as `suggestion`, and the help
command to run as `help`. `--help` itself still prints Click's help.
"""

import re
from collections.abc import Iterable, Sequence
from typing import Any

import click

USAGE = "usage"


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate a typo most likely meant, if any is close enough."""
    import difflib  # only on the error path: an agent's claim does not pay for it

    matches = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return matches[0] if matches else None


class Choice(click.Choice):  # type: ignore[type-arg]
    """`click.Choice` whose refusal also says which choice was probably meant."""

    def get_invalid_choice_message(self, value: Any, ctx: click.Context | None) -> str:
        message: str = super().get_invalid_choice_message(value, ctx)
        guess = closest(str(value), [str(choice) for choice in self.choices])
        return f"{message} Did you mean {guess!r}?" if guess else message


_NO_SUCH_COMMAND = re.compile(r"No such command '(?P<name>.+)'\.")

# Words other tools use for our verbs, which no spelling distance finds (`task create` was
# "did you mean 'restore'?"). A word may mean a different verb in each group (`task rm` is drop,
# `task deps rm` remove, `consumers rm` forget): the first of its verbs the group has is offered.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "create": ("dispatch",),
    "new": ("dispatch",),
    "add": ("dispatch",),
    "show": ("view",),
    "ls": ("list",),
    "done": ("complete",),
    "finish": ("complete",),
    "submit": ("complete",),
    "accept": ("approve",),
    "merge": ("land",),
    "delete": ("drop", "remove", "forget"),
    "remove": ("drop", "forget"),
    "rm": ("drop", "remove", "forget"),
    "del": ("drop", "remove", "forget"),
    "unlink": ("remove",),
    "find": ("search",),
    "grep": ("search",),
    "renew": ("heartbeat",),
    "ping": ("heartbeat",),
}


def _subcommands(ctx: click.Context | None) -> list[str]:
    command = ctx.command if ctx is not None else None
    return command.list_commands(ctx) if isinstance(command, click.Group) and ctx else []


def _envvar(error: click.UsageError) -> str | None:
    """The variable a missing option may also come from (`--agent`: KANBAN_AGENT), which
    Click's "Missing option '--agent'" leaves out: a new user's first claim-next says only that."""
    if not isinstance(error, click.MissingParameter) or not isinstance(error.param, click.Option):
        return None
    envvar = error.param.envvar
    return envvar if isinstance(envvar, str) else None


def _takes_text(ctx: click.Context | None) -> bool:
    """Whether the command takes free text (a TITLE, a TEXT), which typed unquoted (`kanban task
    dispatch Write the parser`) leaves its other words over as "extra arguments"."""
    if ctx is None:
        return False
    for param in ctx.command.params:
        shown = param.metavar or (param.name or "").upper()
        if "TEXT" in shown or "TITLE" in shown:
            return True
    return False


def _message(error: click.UsageError) -> tuple[str, str | None]:
    """Click's message and a suggestion. A group called without a command gets one line naming
    its commands (Click's "message" is then the whole help page); a mistyped command gets the
    closest one."""
    ctx = error.ctx
    if isinstance(error, click.exceptions.NoArgsIsHelpError) and ctx is not None:
        names = ", ".join(_subcommands(ctx))
        return f"Missing command: {ctx.command_path} needs one of {names}.", None
    message = error.format_message()
    envvar = _envvar(error)
    if envvar is not None:
        return f"{message} Give it, or set {envvar} in the environment.", None
    if message.startswith("Got unexpected extra argument") and _takes_text(ctx):
        said = message if message.endswith(".") else f"{message}."
        return f"{said} Text with spaces is one argument: put it in quotes.", None
    typo = _NO_SUCH_COMMAND.fullmatch(message)
    if typo is not None and typo["name"].lower() == "help" and ctx is not None:
        path = ctx.command_path
        return f"{message} Help is an option: {path} -h, or {path} COMMAND -h.", None
    if typo is not None:
        commands = _subcommands(ctx)
        verbs = SYNONYMS.get(typo["name"].lower(), ())
        guess = next((verb for verb in verbs if verb in commands), None)
        if guess is None:
            guess = closest(typo["name"], commands)
        if guess is not None:
            return f"{message} Did you mean {guess!r}?", guess
    return message, None


def _command_named(ctx: click.Context, args: Sequence[str]) -> tuple[str, click.Command] | None:
    """The command the words of `args` name from the root (`task claim-next`), options and
    their values skipped, or None when they name none."""
    root = ctx.find_root()
    command: click.Command = root.command
    path = [root.info_name or "kanban"]
    for arg in args:
        if not isinstance(command, click.Group):
            break
        subcommand = None if arg.startswith("-") else command.get_command(root, arg)
        if subcommand is not None:
            command = subcommand
            path.append(arg)
    return (" ".join(path), command) if len(path) > 1 else None


def _misplaced(error: click.UsageError, args: Sequence[str]) -> str | None:
    """Where an option a group does not know belongs: `kanban --agent bob task claim-next` is
    refused at the root, though `--agent` is claim-next's; the refusal says to put it after."""
    ctx = error.ctx
    if not isinstance(error, click.NoSuchOption) or ctx is None:
        return None
    if not isinstance(ctx.command, click.Group):
        return None
    named = _command_named(ctx, args)
    if named is None or named[1] is ctx.command:
        return None
    path, command = named
    option = error.option_name.split("=", 1)[0]
    if not any(option in [*param.opts, *param.secondary_opts] for param in command.get_params(ctx)):
        return None
    return f"{option} is an option of {path}: put it after the command ({path} {option} ...)."


def usage_document(error: click.UsageError, args: Sequence[str] = ()) -> dict[str, Any]:
    """The JSON line for a usage error; `args` are the command line's, to say where a
    misplaced option belongs."""
    message, suggestion = _message(error)
    placement = _misplaced(error, args)
    if placement is not None:
        message, suggestion = f"{message} {placement}", None
    doc: dict[str, Any] = {"error": message, "reason": USAGE}
    possibilities = getattr(error, "possibilities", None)
    if suggestion is None and possibilities and placement is None:
        suggestion = sorted(possibilities)[0]
    if suggestion is None and isinstance(error, click.BadParameter) and error.param is not None:
        choices = getattr(error.param.type, "choices", None)
        message = error.format_message()
        if choices and "Did you mean " in message:
            suggestion = message.rsplit("Did you mean ", 1)[1].strip("?'\" ")
    if suggestion:
        doc["suggestion"] = suggestion
    ctx = error.ctx
    if ctx is not None:
        doc["command"] = ctx.command_path
        help_option = next(iter(ctx.help_option_names), "--help")
        doc["help"] = f"{ctx.command_path} {help_option}"
    return doc
