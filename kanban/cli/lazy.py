"""A click group whose subcommands are imported only when they are run (or listed in help).

An agent's `kanban task claim-next` pays for every module it imports, so the root group must not
import the TUI, the plan parser (pydantic, PyYAML) or the demo just because they are subcommands.
Each subcommand is named by `"module:attribute"` and imported on first use; help lists them by
section, in the order declared, which reads better than alphabetical for a protocol.
"""

from collections.abc import Sequence

import click

from .startup import load_paused

Section = tuple[str, dict[str, str]]


class LazyGroup(click.Group):
    """`sections` is a list of `(title, {name: "module:attribute"})`; the command objects are
    loaded on demand and cached."""

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
            command = self._loaded[name] = loaded
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
