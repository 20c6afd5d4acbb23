"""`kanban init`: set up a repository for an agent runtime in one command.

It writes the agent instructions (a marked block in AGENTS.md, and CLAUDE.md for Claude Code),
the `kanban` MCP server in the runtime's own config file, and the board if there is none; see
`kanban.agent_setup`. Re-running it writes nothing and says "up to date". A file whose kanban
part was edited by hand is refused (exit 2, `"reason": "edited"`, with the diff) unless
`--force`; everything outside kanban's part of a file is kept byte for byte. A file the system
would not let it write (a read-only folder, a file where a folder must be) is refused before
anything is written, and a write that fails midway puts back the files already written.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import click

from boardlib.actors import SESSION_ROOM, is_agent
from boardlib.board import Board
from boardlib.config import MACHINE_SETTINGS, WORKTREES_VARIABLE, BoardConfig
from boardlib.errors import invalid_input
from boardlib.location import DatabaseUrl, display_location, location_exists
from boardlib.paths import worktrees_root
from boardlib.validation import NAME_MAX, name
from kanban.agent_setup.harnesses import DEFAULT_HARNESS, HARNESSES, SERVER_NAME, default_agent
from kanban.agent_setup.instructions import Briefing
from kanban.agent_setup.plan import Change, Refused, Setup, check, plan, writing
from kanban.mcp.catalog import DEFAULT_TOOL_SET, TOOL_SETS

from .context import announce_created, board_path, global_options
from .exitcodes import REFUSED
from .output import emit, error_line
from .usage import Choice

EDITED = "edited"  # the refusal reason of a file whose kanban part was edited by hand


def _repository(given: Path | None) -> Path:
    """`--repo`, else the git repository around the current folder. Outside one it refuses
    rather than set up the current folder: run in a home folder, a CLAUDE.md there would reach
    every Claude Code session started below it. `--repo .` says that folder is meant."""
    if given is not None:
        return given.absolute()
    try:
        found = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        top = found.stdout.strip() if found.returncode == 0 else ""
    except OSError:  # no git at all
        top = ""
    if not top:
        raise invalid_input(
            f"no git repository around {Path.cwd()}: run kanban init at a repository's root, "
            "or pass --repo PATH to set up that folder as it is",
            field="repo",
        )
    return Path(top)


def _board_text(location: Path | DatabaseUrl) -> str:
    """The board as the configs carry it: an absolute path (a runtime starts the server in a
    folder of its choosing), or a URL with no password in it (configs are shared files)."""
    if isinstance(location, DatabaseUrl):
        if location.password:
            raise invalid_input(
                f"{location.display} holds a password, which kanban init would write into the "
                "project's files: give it through PGPASSWORD or ~/.pgpass instead",
                field="db",
            )
        text = location.conninfo
    else:
        text = os.path.abspath(location)
    if any(ord(char) < 32 or ord(char) == 127 for char in text):
        raise invalid_input("the board's location holds a control character", field="db")
    return text


def _machine_settings() -> dict[str, str]:
    """This machine's settings init runs with (`MACHINE_SETTINGS`), for the configs: a runtime
    passes its MCP server only the config's env over a few variables of its own (Codex: HOME,
    PATH...), and a server working in another worktrees folder than the shell's cannot resume or
    land the shell's worktrees, nor time its gates as the shell does. The worktrees' folder goes
    absolute, and only when it is not the one a server started with neither it nor
    `XDG_STATE_HOME` finds."""
    settings: dict[str, str] = {}
    root = os.path.abspath(worktrees_root())
    if root != os.path.abspath(worktrees_root({})):
        if any(ord(char) < 32 or ord(char) == 127 for char in root):
            raise invalid_input("the worktrees folder holds a control character", field="worktrees")
        settings[WORKTREES_VARIABLE] = root
    for setting in MACHINE_SETTINGS:
        value = setting.carried()
        if value is not None:
            settings[setting.variable] = value
    return settings


def kanban_command() -> str:
    """How a runtime should start kanban: `kanban` when this very console script is what PATH
    finds, and not through an activated virtualenv; else the script's absolute path. A GUI
    runtime's PATH seldom holds a virtualenv, and an activated one is on this shell's PATH only:
    a runtime started from another terminal or the desktop would not find `kanban`."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is None or script.name != "kanban" or not script.is_file():
        return "kanban"
    on_path = shutil.which("kanban")
    if on_path is not None and os.path.samefile(on_path, script) and not _activated(script):
        return "kanban"
    return str(script.absolute())


def _activated(script: Path) -> bool:
    """Whether `script` is PATH's through an activated virtualenv (`VIRTUAL_ENV`, which
    `activate` sets for this shell alone)."""
    venv = os.environ.get("VIRTUAL_ENV")
    if not venv:
        return False
    return script.absolute().is_relative_to(Path(venv).absolute())


def _file_doc(change: Change, *, printed: bool) -> dict[str, Any]:
    doc: dict[str, Any] = {"path": change.path, "status": change.status}
    if change.forced:
        doc["forced"] = True
    if change.status != "up_to_date":
        doc["diff"] = change.diff()
    if printed:
        doc["content"] = change.after
    return doc


def _refuse(refused: list[Refused]) -> None:
    names = ", ".join(item.path for item in refused)
    first = refused[0]
    forceable = " (--force writes it as the diff shows)" if first.change is not None else ""
    also = f"; also refused: {names}" if len(refused) > 1 else ""
    error_line(
        {
            "error": f"{first.path}: {first.why}; kanban init changed nothing{forceable}{also}",
            "reason": EDITED,
            "files": [
                {
                    "path": item.path,
                    "why": item.why,
                    "diff": item.change.diff() if item.change is not None else None,
                }
                for item in refused
            ],
        }
    )
    raise click.exceptions.Exit(REFUSED)


def _message(changes: list[Change], board_created: bool, *, printed: bool) -> str:
    done = {
        status: [change.path for change in changes if change.status == status]
        for status in ("created", "updated")
    }
    parts = [f"{verb} {', '.join(paths)}" for verb, paths in done.items() if paths]
    if board_created:
        parts.append("created the board")
    if not parts:
        return "up to date"
    # each part its own "would have": "would have created AGENTS.md; created the board" read as
    # if --print had made the board
    return "; ".join(f"would have {part}" if printed else part for part in parts)


@click.command("init")
@click.option(
    "--harness",
    type=Choice(tuple(HARNESSES)),
    default=DEFAULT_HARNESS,
    show_default=True,
    help="The agent runtime to set up: its instructions file and its MCP config.",
)
@click.option(
    "--repo",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    metavar="PATH",
    help="The repository (default: the git repository around the current folder).",
)
@click.option(
    "--agent",
    "-a",
    metavar="NAME",
    help="The name the runtime's sessions act under (default: the harness's name).",
)
@click.option("--role", "-r", metavar="ROLE", help="Claim only tasks for this role.")
@click.option(
    "--tools",
    "tool_set",
    type=Choice(tuple(TOOL_SETS)),
    default=DEFAULT_TOOL_SET,
    show_default=True,
    help="The MCP tools its sessions get: worker, reviewer or all.",
)
@click.option(
    "--print", "printed", is_flag=True, help="Write nothing; print what would be written."
)
@click.option("--force", is_flag=True, help="Also replace a kanban block edited by hand.")
@click.option(
    "--per-session",
    is_flag=True,
    help="Each session acts as AGENT-PID, PID the runtime's process, so two sessions of one "
    "runtime may judge each other's work (its shell must be the runtime's child).",
)
@global_options
def init(
    harness: str,
    repo: Path | None,
    agent: str | None,
    role: str | None,
    tool_set: str,
    printed: bool,
    force: bool,
    per_session: bool,
) -> None:
    """Set up this repository for an agent runtime, in one command.

    Writes the agent instructions (a marked block in AGENTS.md, and CLAUDE.md for claude-code),
    the kanban MCP server in the runtime's config (.mcp.json, .codex/config.toml,
    .cursor/mcp.json) pointing at this board (--db), and the board if there is none. Running it
    again changes nothing ("up to date"); text outside kanban's block is never touched.
    """
    agent = name(agent if agent is not None else default_agent(harness), "agent")
    if not is_agent(agent):
        raise click.BadParameter(f"{agent!r} is not an agent name", param_hint="--agent")
    if per_session and len(agent) > NAME_MAX - SESSION_ROOM:  # a session adds `-` and a pid
        raise click.BadParameter(
            f"at most {NAME_MAX - SESSION_ROOM} characters: each session acts as the name, `-` "
            "and its runtime's process id",
            param_hint="--agent",
        )
    if role is not None:
        role = name(role, "role")
    location = board_path()
    config = BoardConfig.from_env()
    briefing = Briefing(
        board=_board_text(location),
        agent=agent,
        role=role,
        tool_set=tool_set,
        lease_ms=config.lease_ms,
        settings={**config.to_env(), **_machine_settings()},
        command=kanban_command(),
        per_session=per_session,
    )
    setup = Setup(harness, _repository(repo), briefing)
    changes, refused = plan(setup, force=force)
    if refused:
        _refuse(refused)

    exists = location_exists(location)
    if exists:  # refuse a file that is not a board before writing anything
        Board(location, config=config, reconcile_orphans=False, read_only=True).close()
    board_created = False
    if printed:  # what the run would refuse, --print refuses alike: a dry run that tells
        check(setup.repo, changes)
    else:
        # All or none: the files are checked, then written, then the board is created; a
        # refusal or failure on the way leaves every file as it was (and no new board).
        with writing(setup.repo, changes):
            if not exists:
                with Board(location, config=config, reconcile_orphans=False, create=True) as board:
                    board_created = board.created
        if board_created:
            announce_created(location)

    from kanban.mcp.footprint import footprint

    size = footprint(tool_set, config)
    doc: dict[str, Any] = {
        "harness": harness,
        "repo": str(setup.repo),
        "board": {
            "path": display_location(location),
            "backend": "postgres" if isinstance(location, DatabaseUrl) else "sqlite",
            "created": board_created,
        },
        "agent": agent,
        "role": role,
        "mcpServer": {
            "name": SERVER_NAME,
            **setup.server_entry(stdio_type=HARNESSES[harness].stdio_type),
        },
        "mcpTools": {
            "toolSet": tool_set,
            "tools": size["tools"],
            "approxTokens": size["withInstructionsApproxTokens"],
            "tokenizer": size["tokenizer"],
        },
        "files": [_file_doc(change, printed=printed) for change in changes],
        "upToDate": exists and all(change.status == "up_to_date" for change in changes),
        "message": _message(changes, not exists, printed=printed),
        "note": HARNESSES[harness].note,
    }
    if printed:
        doc["printed"] = True
        doc["board"]["wouldCreate"] = not exists
    emit(doc, kind="record")
