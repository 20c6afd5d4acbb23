"""Saying who creates. An agent's creates are capped (`boardlib.caps`), and an exported
`KANBAN_AGENT` quietly makes every later `task dispatch` or `plan apply` an agent's: so a create
made as an agent says so on stderr, once per call, with the caps from the board's config and how
to create as the operator instead; a `cap_exceeded` refusal carries the same words as `hint`
(then the refusal is the one stderr line). stdout stays one JSON document.
"""

from collections.abc import Collection, Iterator
from contextlib import contextmanager

import click
from click.core import ParameterSource

from boardlib import caps
from boardlib.actors import is_agent
from boardlib.config import BoardConfig
from boardlib.errors import BoardError, Reason


def agent_notice(
    actor: str | None, config: BoardConfig, *, parameter: str, broken: Collection[str] = ()
) -> str | None:
    """The words for a create as `actor`, or None when the operator creates. `parameter` is the
    command's option that named the agent: from the environment, the way out is to unset it.
    `broken`: the caps a refusal names (the depth ceiling is said when it is among them)."""
    if actor is None or not is_agent(actor):
        return None
    source = click.get_current_context().get_parameter_source(parameter)
    undo = "unset KANBAN_AGENT" if source is ParameterSource.ENVIRONMENT else "leave out --agent"
    ceilings = caps.in_words(config, broken)
    return f"creating as agent {actor}: {ceilings}; {undo} to create as the operator"


@contextmanager
def creating_as(
    actor: str | None, config: BoardConfig, *, parameter: str, notice: bool = True
) -> Iterator[None]:
    """Around a command's creates: the notice on stderr when they succeed (unless not
    `notice`: `plan lint` creates nothing), the hint in a `cap_exceeded` refusal when they do
    not."""
    said = agent_notice(actor, config, parameter=parameter)
    try:
        yield
    except BoardError as error:
        if said is not None and error.reason is Reason.CAP_EXCEEDED:
            broken = caps.broken_caps(error)
            error.details["hint"] = agent_notice(actor, config, parameter=parameter, broken=broken)
        raise
    if said is not None and notice:
        click.echo(f"kanban: {said}", err=True)
