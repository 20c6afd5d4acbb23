"""A click group whose subcommands are imported only when they are run (or listed in help).

An agent's `kanban task claim-next` pays for every module it imports, so the root group must not
import the TUI, the plan parser (pydantic, PyYAML) or the demo just because they are subcommands.
Each subcommand is named by `"module:attribute"` and imported on first use; help lists them by
section, in the order declared, which reads better than alphabetical for a protocol. Every
command it loads renders its help through `HelpFormatter`, which wraps at spaces only.
"""

import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import click

from .startup import load_paused

Section = tuple[str, dict[str, str]]

# A hyphen inside a word (`--daily-tokens`, `claim-next`, `read-only`) stands in as a
# non-breaking hyphen while help is wrapped, so no line ends in `--daily-` with `tokens` below.
_WORD_HYPHEN = re.compile(r"(?<=\w)-(?=\w)")
_KEPT_HYPHEN = "\u2011"


class HelpFormatter(click.HelpFormatter):
    """Click's help, wrapped at spaces only: an option or a verb named in the text is never
    split at its hyphen, so it can be read (and copied) whole."""

    def write_text(self, text: str) -> None:
        super().write_text(_WORD_HYPHEN.sub(_KEPT_HYPHEN, text))

    def write_dl(
        self, rows: Iterable[tuple[str, str]], col_max: int = 30, col_spacing: int = 2
    ) -> None:
        kept = [(term, _WORD_HYPHEN.sub(_KEPT_HYPHEN, text)) for term, text in rows]
        super().write_dl(kept, col_max, col_spacing)

    def getvalue(self) -> str:
        return super().getvalue().replace(_KEPT_HYPHEN, "-")


class HelpContext(click.Context):
    """A command's context, rendering its help through `HelpFormatter`."""

    formatter_class = HelpFormatter

    @contextmanager
    def scope(self, cleanup: bool = True) -> Iterator[click.Context]:
        """Click's parser raises some usage errors with no context (`--role` given no value);
        they get the context they were raised in, so the refusal names the command and its
        help as every other usage error does."""
        try:
            with super().scope(cleanup) as ctx:
                yield ctx
        except click.UsageError as error:
            if error.ctx is None:
                error.ctx = self
            raise


def _with_help_context(command: click.Command) -> click.Command:
    """The command and every eager subcommand write their help with `HelpFormatter`."""
    command.context_class = HelpContext
    if isinstance(command, click.Group) and not isinstance(command, LazyGroup):
        for subcommand in command.commands.values():
            _with_help_context(subcommand)
    return command


class LazyGroup(click.Group):
    """`sections` is a list of `(title, {name: "module:attribute"})`; the command objects are
    loaded on demand and cached."""

    context_class = HelpContext

    def __init__(self, *args: object, sections: Sequence[Section] = (), **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.sections = list(sections)
        self._targets = {
            name: target for _, names in self.sections for name, target in names.items()
        }
        self._loaded: dict[str, click.Command] = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        eager = [name for name in super().list_commands(ctx) if name not in self._targets]
        return [*self._targets, *eager]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self._targets:
            return self._load(cmd_name)
        return super().get_command(ctx, cmd_name)

    def _load(self, name: str) -> click.Command:
        command = self._loaded.get(name)
        if command is None:
            module_name, _, attribute = self._targets[name].partition(":")
            loaded = getattr(load_paused(module_name), attribute)
            if not isinstance(loaded, click.Command):
                raise TypeError(f"{self._targets[name]} is not a click command")
            command = self._loaded[name] = _with_help_context(loaded)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Help lists the lazy commands section by section, then any eagerly added ones."""
        limit = (
            formatter.width - 6 - max((len(name) for name in self.list_commands(ctx)), default=0)
        )
        for title, names in self.sections:
            rows = [
                (name, self._load(name).get_short_help_str(limit))
                for name in names
                if not self._load(name).hidden
            ]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
        eager = [name for name in super().list_commands(ctx) if name not in self._targets]
        rows = []
        for name in eager:
            command = super().get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        if rows:
            with formatter.section("Other commands"):
                formatter.write_dl(rows)
