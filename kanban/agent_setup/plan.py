"""What `kanban init` would write, file by file, and writing it.

`plan` reads each file the runtime uses and computes its new text; nothing is written. A file
whose kanban part was edited by hand is returned as refused (with the diff the change would
make) unless `force`. `write` then replaces each changed file atomically (a temp file renamed
over it, its mode kept), through a symlink to the file it points at.
"""

import difflib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .files import (
    Edited,
    entry_digest,
    find_block,
    unreadable,
    with_block,
    with_server,
    with_toml_server,
)
from .harnesses import HARNESSES, SERVER_NAME, Target
from .instructions import Briefing, agents_block, claude_block


@dataclass(frozen=True)
class Setup:
    harness: str
    repo: Path
    briefing: Briefing

    def server_args(self) -> list[str]:
        role = ["--role", self.briefing.role] if self.briefing.role else []
        return ["mcp", "--tools", self.briefing.tool_set, *role]

    def server_entry(self, *, stdio_type: bool = False) -> dict[str, Any]:
        """The MCP server as the runtime's config declares it: the command, its arguments and
        the environment that names the board and the agent."""
        entry: dict[str, Any] = {"type": "stdio"} if stdio_type else {}
        return {
            **entry,
            "command": self.briefing.command,
            "args": self.server_args(),
            "env": self.briefing.environment(),
        }


@dataclass(frozen=True)
class Change:
    path: str  # relative to the repository
    before: str | None  # None: the file does not exist
    after: str
    forced: bool = False  # kanban's part had been edited; replaced because of --force

    @property
    def status(self) -> str:
        if self.before is None:
            return "created"
        return "up_to_date" if self.before == self.after else "updated"

    def diff(self) -> str:
        if self.before == self.after:
            return ""
        return "".join(
            difflib.unified_diff(
                (self.before or "").splitlines(keepends=True),
                self.after.splitlines(keepends=True),
                fromfile="/dev/null" if self.before is None else f"a/{self.path}",
                tofile=f"b/{self.path}",
            )
        )


@dataclass(frozen=True)
class Refused:
    path: str
    why: str
    change: Change | None  # what --force would write (None: not even --force may)


_IMPORTS_AGENTS = re.compile(r"^@(\./)?AGENTS\.md[ \t]*$", re.MULTILINE)


def _read(repo: Path, target: Target) -> str | None:
    path = repo / target.path
    if not path.exists():
        if path.is_symlink():
            raise unreadable(target.path, "it is a symlink to nothing")
        return None
    if not path.is_file():
        raise unreadable(target.path, "it is not a regular file")
    try:
        return path.read_bytes().decode("utf-8")  # as it is: no newline translation
    except UnicodeDecodeError:
        raise unreadable(target.path, "it is not UTF-8 text") from None
    except OSError as error:
        raise unreadable(target.path, error.strerror or str(error)) from None


def _written_entry(repo: Path) -> str | None:
    """The digest of the MCP entry the AGENTS.md block says kanban wrote last, if any."""
    try:
        text = (repo / "AGENTS.md").read_bytes().decode("utf-8")
        block = find_block(text, "markdown")
    except (OSError, UnicodeDecodeError, Edited):
        return None
    return block.entry if block is not None and not block.edited else None


def _new_text(setup: Setup, target: Target, before: str | None, *, force: bool) -> str:
    harness = HARNESSES[setup.harness]
    if target.kind == "agents":
        body = agents_block(setup.briefing)
        digest = entry_digest(setup.server_entry())
        return with_block(before, body, "markdown", force=force, entry=digest)
    if target.kind == "claude":
        if before is not None and _IMPORTS_AGENTS.search(before):
            return before  # it imports AGENTS.md already: a second import would read it twice
        return with_block(before, claude_block(), "markdown", force=force)
    entry = setup.server_entry(stdio_type=harness.stdio_type)
    if target.kind == "mcp_json":
        written = _written_entry(setup.repo)
        return with_server(
            target.path, before, "mcpServers", SERVER_NAME, entry, force=force, written=written
        )
    return with_toml_server(target.path, before, SERVER_NAME, entry, force=force)


def _same_file(repo: Path, one: str, other: str) -> bool:
    try:  # not strict: a link to an AGENTS.md this run is about to create counts
        return (repo / one).resolve() == (repo / other).resolve()
    except (OSError, RuntimeError):  # a symlink loop
        return False


def plan(setup: Setup, *, force: bool = False) -> tuple[list[Change], list[Refused]]:
    """Each file's change (possibly none), and the files kanban may not change without force."""
    changes: list[Change] = []
    refused: list[Refused] = []
    for target in HARNESSES[setup.harness].targets:
        if target.kind == "claude" and _same_file(setup.repo, target.path, "AGENTS.md"):
            continue  # CLAUDE.md is a symlink to AGENTS.md: one file, written once
        before = _read(setup.repo, target)
        try:
            changes.append(
                Change(target.path, before, _new_text(setup, target, before, force=False))
            )
        except Edited as edited:
            try:
                after = _new_text(setup, target, before, force=True)
            except Edited as unforceable:  # not even --force may write it
                refused.append(Refused(target.path, unforceable.why, None))
                continue
            change = Change(target.path, before, after, forced=True)
            if force:
                changes.append(change)
            else:
                refused.append(Refused(target.path, edited.why, change))
    return changes, refused


def write(repo: Path, changes: list[Change]) -> None:
    """Write every changed file: to a temp file beside it, renamed over it (its mode kept)."""
    for change in changes:
        if change.status == "up_to_date":
            continue
        path = repo / change.path
        if path.is_symlink():  # write the file it points at; the link stays
            path = path.resolve()
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = path.stat().st_mode & 0o7777 if path.exists() else None
        handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
                out.write(change.after)
            if mode is not None:
                os.chmod(temp, mode)
            else:
                os.chmod(temp, 0o666 & ~_umask())
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
