"""Every command's --help, read as a person reads it: each option says what it is for, in the
command line's own words (`true`, `N`, `1000000000`), and no option or verb named in the text is
split across lines at its hyphen.

The walk renders each command's help in-process, through the contexts the console script uses,
at several terminal widths; one run of the real script checks the same rendering end to end.
"""

import re
import subprocess
from collections.abc import Iterator
from itertools import pairwise

import click
import pytest

from kanban.cli.root import cli
from tests.cli.conftest import KANBAN, clean_env

WIDTHS = (50, 60, 70, 80, 90, 100, 120)

# Options still without help whose commands another change owns (kanban/cli/reading.py and
# deps.py); remove an entry once its option says what it is for.


def commands() -> Iterator[tuple[str, click.Command, click.Context]]:
    """Every command and group, with the context its --help is rendered in."""

    def walk(
        command: click.Command, path: str, parent: click.Context | None
    ) -> Iterator[tuple[str, click.Command, click.Context]]:
        ctx = command.context_class(command, info_name=path.rsplit(" ", 1)[-1], parent=parent)
        yield path, command, ctx
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                subcommand = command.get_command(ctx, name)
                assert subcommand is not None
                yield from walk(subcommand, f"{path} {name}", ctx)

    root = cli.context_class(cli, info_name="kanban", **cli.context_settings)
    yield "kanban", cli, root
    for name in cli.list_commands(root):
        subcommand = cli.get_command(root, name)
        assert subcommand is not None
        yield from walk(subcommand, f"kanban {name}", root)


def help_records() -> Iterator[tuple[str, click.Option, tuple[str, str]]]:
    for path, command, ctx in commands():
        for param in command.get_params(ctx):
            if isinstance(param, click.Option) and not param.hidden:
                record = param.get_help_record(ctx)
                if record is not None:
                    yield path, param, record


def test_every_option_says_what_it_is_for() -> None:
    silent = {
        (path, max(option.opts, key=len)) for path, option, _ in help_records() if not option.help
    }
    assert sorted(silent) == []


def test_an_option_the_environment_may_give_names_its_variable() -> None:
    """`task exec start -a` said "default: the task's assignee" while KANBAN_AGENT, which every
    agent loop sets, took precedence unsaid (so did `workspace complete` and `handoff`)."""
    unsaid = sorted(
        (path, max(param.opts, key=len))
        for path, command, ctx in commands()
        for param in command.get_params(ctx)
        if isinstance(param, click.Option)
        and isinstance(param.envvar, str)
        and param.envvar not in (param.help or "")
    )
    assert unsaid == []


def test_plan_lint_options_promise_no_writes() -> None:
    """`plan lint` writes nothing, yet its --update said "Change what is still safe to change"
    and its --agent "Who is acting, for the event log" (apply's words, shared)."""
    lint = {
        max(option.opts, key=len): text
        for path, option, (_names, text) in help_records()
        if path == "kanban plan lint"
    }
    for option in ("--update", "--agent"):
        assert lint[option].startswith("Judge it as `plan apply"), (option, lint[option])
        assert "Change" not in lint[option] and "event log" not in lint[option]


def test_an_option_has_the_same_short_name_on_every_command() -> None:
    """`task complete -m` worked and `task workspace complete -m` was "No such option"; `task
    reject --reason` had no `-m` where `budget set` did, nor `task block`, whose reason is the
    one thing it needs. One long option, one short name (or none) on every command."""
    shorts: dict[str, set[tuple[str, ...]]] = {}
    for _path, command, ctx in commands():
        for param in command.get_params(ctx):
            if isinstance(param, click.Option):
                short = tuple(sorted(opt for opt in param.opts if not opt.startswith("--")))
                for opt in param.opts:
                    if opt.startswith("--"):
                        shorts.setdefault(opt, set()).add(short)
    assert {opt: found for opt, found in shorts.items() if len(found) > 1} == {}


def test_options_are_spelled_as_typed_not_as_python() -> None:
    """`claim-next --respect-deps` said `[default: True]` while its text said `=false`; demo
    and serve said INTEGER RANGE where every other number is N; a range said 1000000000.0."""
    python = re.compile(r"\b(True|False|None)\b|\d\.0(?![\d.])")
    wrong = []
    for path, _option, (names, text) in help_records():
        extra = text.rsplit("  [", 1)[1] if "  [" in text else ""
        if python.search(extra) or re.search(r"\b(INTEGER|FLOAT|BOOLEAN|RANGE)\b", names):
            wrong.append((path, names, extra))
    assert wrong == []


def test_every_number_option_reads_numbers_one_way() -> None:
    """Found when `--usd 1_000` set $1,000: click's own int, float and range types read `1_000`
    and any script's digits. Every number an option or argument takes goes through `Number` or
    `WholeNumber` (plain ASCII digits, the board's ranges said alike); `--limit 1_0` and
    `--port` in full-width digits were still read by click's types."""
    from kanban.cli.options import Number, WholeNumber

    numeric = (click.types.IntParamType, click.types.FloatParamType)
    loose = sorted(
        (path, param.name)
        for path, command, ctx in commands()
        for param in command.get_params(ctx)
        if isinstance(param.type, numeric) and not isinstance(param.type, Number | WholeNumber)
    )
    assert loose == []


@pytest.mark.parametrize("width", WIDTHS)
def test_no_word_is_split_at_its_hyphen(width: int) -> None:
    """`budget set -h` broke `--daily-tokens` into `--daily-` and `tokens`."""
    split = []
    for path, command, ctx in commands():
        ctx.terminal_width = width
        lines = command.get_help(ctx).splitlines()
        for line, following in pairwise(lines):
            if re.search(r"\w-$", line) and re.match(r"\s*\w", following):
                split.append((path, line.strip()[-20:], following.strip()[:20]))
    assert split == []


def test_the_console_script_keeps_option_names_whole() -> None:
    done = subprocess.run(
        [str(KANBAN), "budget", "set", "-h"],
        env=clean_env(COLUMNS="80"),
        capture_output=True,
        text=True,
        check=True,
    )
    assert "(--daily-usd, --daily-tokens)" in " ".join(done.stdout.split())


def test_summaries_name_what_the_command_covers() -> None:
    """The inbox's help names every kind of item (from `boardlib.attention`, the one list), the
    workspace group every verb, and neither `task` nor `watch` promises JSON alone."""
    from boardlib.attention import KINDS

    helps = {path: command.get_help(ctx) for path, command, ctx in commands()}
    inbox = " ".join(helps["kanban inbox"].split())
    assert all(kind in inbox for kind in KINDS), inbox
    workspace = " ".join(helps["kanban task workspace"].split()).split("Commands:")[0]
    group = cli.get_command(click.Context(cli), "task")
    assert isinstance(group, click.Group)
    verbs = group.get_command(click.Context(group), "workspace")
    assert isinstance(verbs, click.Group)
    assert all(verb in workspace for verb in verbs.commands), workspace
    for path in ("kanban task", "kanban watch"):
        assert "--format table" in " ".join(helps[path].split()), path
