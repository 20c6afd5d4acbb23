"""Turning the caller's identity into the actor the board judges, and HTTP's own refusals.

The board decides every rule from the actor string (`boardlib.actors`): an identified agent may
move only what it holds and never judge its own work, its creates are capped, an operator may
override. This module only makes sure the actor is the right one: with per-caller tokens it is
the token's identity, and a body naming someone else is refused here (`forbidden`), before the
board is asked.
"""

import os
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boardlib import Board
from boardlib.actors import AUTHOR_AGENT, author_type_of
from boardlib.errors import BoardError, invalid_input
from boardlib.validation import caller_name
from boardlib.worktrees import Worktrees

from .auth import OPEN, Identity


class Forbidden(Exception):
    """The identity may not do this; rendered as 403 in the route's envelope."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


@dataclass(frozen=True, slots=True)
class Caller:
    """One request's view of the server: who calls, and the board it acts on."""

    identity: Identity
    board: Board
    trees: Worktrees
    repo_roots: Sequence[Path]

    @property
    def actor(self) -> str:
        return self.identity.actor

    @property
    def token_agent(self) -> str | None:
        """The agent an agent token names; None for an operator token or an open server."""
        return self.identity.name if self.identity.is_agent else None

    @property
    def unnamed(self) -> bool:
        """No per-caller token (an open server, or one shared token): the seed's bodies name
        nobody, so its PATCH of a task, like its run routes (`run_closer`), is the holder's
        sign of life. With per-caller tokens the token says who calls."""
        return self.identity == OPEN

    def agent(self, named: str | None, *, field: str = "agent") -> str:
        """The agent a lease verb acts for: the token's agent (a body naming another is
        forbidden), else the body's, which is then required."""
        identity = self.identity
        if identity.is_agent:
            assert identity.name is not None
            if named is not None and named != identity.name:
                raise Forbidden(
                    f"this token is agent {identity.name}; it cannot act as {named}",
                    agent=identity.name,
                    named=named,
                )
            return identity.name
        if named is None:
            raise invalid_input(f"{field} is required: name the agent that acts", field=field)
        return caller_name(named, field)

    def run_closer(self, execution_id: str) -> str:
        """Who closes a run: the token's identity; else (no per-caller tokens, where the seed's
        bodies name nobody) the run's holder, whom its start recorded, so one agent's run starts
        and ends as that agent. The board then judges the close as that agent's (its lease,
        its epoch). A run it cannot read is the close's to refuse."""
        if self.identity != OPEN:
            return self.actor
        try:
            holder = self.board.get_execution(execution_id).agent_id
        except BoardError:
            return self.actor
        return holder or self.actor

    def acting(self, named: str | None) -> str:
        """Who acts where the caller may act itself (a judge, a lander, an unblock, a drop): the
        token's agent, else the body's agent, else the caller (on an open server, the operator),
        as the CLI's `--agent` defaults to operator."""
        if self.identity.is_agent or named is not None:
            return self.agent(named)
        return self.actor

    def comment_author(self, author: str | None, author_type: str | None) -> tuple[str | None, str]:
        """Who a comment is from. An agent token writes as itself, as an agent; an operator
        token as the operator, as a user, unless the body names another author; otherwise the
        body's word is taken, its type defaulting to the author's kind (`operator:NAME` is a
        person, not an agent) or, for a comment naming nobody, to seed 003's `agent`."""
        identity = self.identity
        if identity.is_agent:
            if author_type not in (None, "agent"):
                raise Forbidden(
                    f"agent {identity.name} writes comments as an agent, not as {author_type}"
                )
            return self.agent(author, field="authorAgentId"), "agent"
        if author is not None:
            author = caller_name(author, "authorAgentId")
        if identity.kind == "operator":
            author = author or self.actor
            return author, author_type or author_type_of(author)
        return author, author_type or (author_type_of(author) if author else AUTHOR_AGENT)

    def role(self, role: str | None) -> str | None:
        """The role a claim-next acts in. An agent token with roles claims only for them: one
        role is implied, several must be chosen from."""
        roles = self.identity.roles
        if not self.identity.is_agent or not roles:
            return role
        if role is None:
            if len(roles) == 1:
                return next(iter(roles))
            raise invalid_input(
                f"role is required: this agent claims as one of {', '.join(sorted(roles))}",
                field="role",
            )
        if role not in roles:
            raise Forbidden(
                f"agent {self.identity.name} does not claim as {role}",
                roles=sorted(roles),
            )
        return role

    def may_claim_role(self, task_role: str | None) -> None:
        """A role-limited agent token claims a task by id only if the task suits its roles."""
        roles = self.identity.roles
        if self.identity.is_agent and roles and task_role is not None and task_role not in roles:
            raise Forbidden(
                f"agent {self.identity.name} does not claim tasks for role {task_role}",
                roles=sorted(roles),
            )

    def check_repo(self, repo_path: str) -> None:
        """With `--repo-root`, provisioning is limited to repositories under those folders: the
        path given, and the repository git finds there, its work tree and its git directory
        (a `.git` file under a root can name a repository anywhere, and a folder under a root
        can sit inside a repository that does not)."""
        if not self.repo_roots:
            return
        from boardlib.worktrees.gitrepo import open_repo  # git only where a repo is provisioned

        places = [Path(os.path.realpath(repo_path))]
        found = open_repo(places[0])
        if found is not None:
            places += [found.root, found.git_dir]
        for place in places:
            if not any(place == root or root in place.parents for root in self.repo_roots):
                raise Forbidden(
                    "repoPath is outside the repositories this server serves",
                    repoRoots=[str(root) for root in self.repo_roots],
                )


def identity_in(scope: MutableMapping[str, Any]) -> Identity:
    """The identity `BearerAuth` put in the request's state (`OPEN` if none)."""
    identity = scope.get("state", {}).get("identity")
    return identity if isinstance(identity, Identity) else OPEN
