"""Guarantee 6 (the command line): every `kanban` command an agent calls, run as a real process
with argv hypothesis makes from the command's own parameters, exits with one of the codes a shell
loop branches on and never 1 (unexpected), with no traceback. A refusal (2, or 4 for busy) is one
JSON line on stderr with nothing on stdout (`plan lint` prints its report too), and writes
nothing: the board file's and its log's bytes and `PRAGMA data_version` are unchanged, as
`tests.cli.conftest.unchanged` checks them.

The commands are read from the click tree, so a new one is fuzzed from the day it is added,
unless it is one of `NOT_FUZZED` below (each with its reason). Values come from the parameter's
click type and name: the library fuzz's hostile text and numbers (tests/chaos/test_fuzz_library.py),
known task and run ids, every choice and some that are not. Each example runs on a fresh copy of
a board holding a task in every status, a run and a comment, in a folder of its own: the only
place a file or board named on the command line can be (`LOCATIONS`).
"""

import hashlib
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import click
import pytest
from hypothesis import given
from hypothesis import strategies as st

from boardlib import Board
from kanban.cli.exitcodes import BUSY, IDLE, OK, REFUSED
from kanban.cli.root import cli as root
from tests.chaos.test_fuzz_library import EXAMPLES, FLOATS, INTS, TEXT, fuzz_settings, template
from tests.cli.conftest import KANBAN, Kanban, Run, board_digest
from tests.cli.warm import run_kanban

NOT_FUZZED = {
    # they start something long-lived: a terminal app, a server, a team of agents, a stdio loop
    ("tui",), ("serve",), ("demo",), ("mcp",),
    # it runs the shell command it is given, once per event
    ("watch",),
}  # fmt: skip
# A linter: its report of every problem on stdout, as well as the refusal (docs/agents.md).
REPORTS_WHEN_REFUSED = {("plan", "lint")}
# Options not fuzzed: the board is the example's (`--db`), and a follower would wait for events
# that never come (`events --follow` has its own tests).
FIXED_OPTIONS = {"db", "follow"}
ARGV_TEXT = TEXT.filter(lambda text: "\x00" not in text)  # argv cannot carry a NUL
HERE = "{example folder}"  # the example's own folder, put in at run time
# Parameters that name a file or a board by another name than a click path's: `db init`'s, `db
# copy`'s, which write where they are told (as `prune --archive` does).
LOCATION_NAMES = {"location", "source", "target"}
# What a parameter that names a file or a board may be given. Every one of them is in the example's
# folder, which is also the process's working folder and $HOME: the fuzz writes nowhere else. The
# files the example holds, a board, names that are new, a folder, a file in a missing folder, a
# file under ~, URL forms (a SQLite one, a Postgres server that is not there, a scheme no board
# has), and hostile text that cannot leave the folder (no "/", no "~" or ".." to start it).
EXAMPLE_FILES = {
    "plan.yaml": b"tasks:\n  - key: a\n    title: from a plan\n",
    "handoff.json": b'{"handoffFrom": "ada", "runtime": "claude-code"}',
    "junk.bin": b"\xff\xfe\x00\x1b[2J",
}
LOCATIONS = st.one_of(
    st.sampled_from(
        [*EXAMPLE_FILES, "absent", "board.db", "new.db", "new.jsonl", ".", "missing/new.db",
         "~/new.db", f"sqlite://{HERE}/new.db", "postgresql://127.0.0.1:1/kanban", "ftp://x/y"]
    ),
    ARGV_TEXT.filter(lambda text: "/" not in text and not text.startswith(("~", ".."))),
)  # fmt: skip


def commands(*, every: bool = False) -> list[tuple[tuple[str, ...], click.Command]]:
    """Every leaf command of `kanban` the fuzz runs (`every`: those it does not as well), by its
    path (`("task", "claim")`)."""
    found: list[tuple[tuple[str, ...], click.Command]] = []
    context = click.Context(root)

    def walk(command: click.Command, path: tuple[str, ...]) -> None:
        if isinstance(command, click.Group):
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                assert sub is not None, name
                walk(sub, (*path, name))
        elif every or path not in NOT_FUZZED:
            found.append((path, command))

    walk(root, ())
    return found


def value_for(param: click.Parameter, known: dict[str, list[str]]) -> Any:
    """One argv value for `param`, mostly of its type, sometimes text of any kind (a file's or a
    board's location: always one in the example's folder)."""
    kind = param.type
    name = param.name or ""
    if isinstance(kind, click.Path) and not kind.file_okay:
        return st.just(HERE)  # `init --repo`: nowhere but the example's folder
    if isinstance(kind, (click.File, click.Path)) or name in LOCATION_NAMES:
        return LOCATIONS
    if name in ("task_id", "on", "parent", "depends_on"):
        base: Any = st.sampled_from(known["task"])
    elif name == "execution_id":
        base = st.sampled_from(known["run"])
    elif isinstance(kind, click.Choice):
        base = st.sampled_from([str(choice) for choice in kind.choices])
    elif isinstance(kind, (click.types.IntParamType, click.IntRange)):
        base = INTS.map(str)
    elif isinstance(kind, (click.types.FloatParamType, click.FloatRange)):
        base = FLOATS.map(str)
    elif kind.name == "limit":  # budgets: a number, or off
        base = st.one_of(FLOATS.map(str), st.sampled_from(["off", "none", "0", "-1", "1e400"]))
    elif name in ("agent", "actor", "to_agent", "assignee", "consumer"):
        base = st.sampled_from(["ada", "bob", "cy", "rita", "operator", "operator:dana", "system"])
    elif name in ("since", "before"):
        base = st.sampled_from(["24h", "7d", "90d", "0", "2026-01-01"])
    else:
        base = st.one_of(ARGV_TEXT, st.just("main"))
    # text of any kind a fifth of the time: most calls get past click to the board
    return st.integers(0, 4).flatmap(lambda n: ARGV_TEXT if n == 0 else base)


def argv_for(path: tuple[str, ...], command: click.Command, known: dict[str, list[str]]) -> Any:
    """argv for one command: its arguments (each present, as an agent passes them, or left out
    a tenth of the time), its required options likewise, and any subset of the others, in a
    drawn order."""

    @st.composite
    def draw(pick: Any) -> list[str]:
        argv = list(path)
        options: list[list[str]] = []
        for param in command.params:
            if param.name in FIXED_OPTIONS:
                continue
            if isinstance(param, click.Argument):
                if pick(st.integers(0, 9)) == 0 and param.required:
                    continue  # a missing argument: a usage refusal
                count = 1 if param.nargs == 1 else pick(st.integers(0, 2))
                argv += [pick(value_for(param, known)) for _ in range(count)]
                continue
            assert isinstance(param, click.Option)
            # a required option as an argument; a third of the others, each
            if pick(st.integers(0, 9)) == 0 if param.required else pick(st.integers(0, 2)):
                continue
            names = list(param.opts) + list(param.secondary_opts)
            flag = pick(st.sampled_from(names))
            if param.is_flag or param.count:
                options.append([flag])
            else:
                nargs = max(param.nargs, 1)
                options.append([flag, *(pick(value_for(param, known)) for _ in range(nargs))])
        for option in pick(st.permutations(options)):
            argv += option
        return argv

    return draw()


@pytest.fixture(scope="module")
def board_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    folder = tmp_path_factory.mktemp("fuzz-cli-template")
    path, known = template(folder)
    with Board(path) as board:  # the template's own log, folded in: each copy starts settled
        board.checkpoint()
    return path, known


def folder_files(folder: Path) -> dict[str, str]:
    """Every file and folder of an example's folder but the board's own files and the worktrees'
    locks (empty files made for `flock` on first use and kept, and the folders that hold them),
    by path: a file's sha256."""
    locks = list(folder.rglob(".locks"))
    return {
        str(path.relative_to(folder)): (
            hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "folder"
        )
        for path in sorted(folder.rglob("*"))
        if not path.name.startswith("board.db")
        and not any(lock.is_relative_to(path) or path.is_relative_to(lock) for lock in locks)
    }


def test_every_command_is_fuzzed_or_named_as_not() -> None:
    paths = {path for path, _ in commands()}
    assert {
        ("task", "claim-next"),
        ("task", "land"),
        ("task", "workspace", "sync"),
        ("init",),
        ("db", "init"),
        ("db", "copy"),
        ("prune",),
    } <= paths
    assert not paths & NOT_FUZZED
    every = {path for path, _ in commands(every=True)}
    assert every >= NOT_FUZZED, "an exclusion names a command that no longer exists"
    assert len(paths) >= 50


@pytest.mark.slow  # the command-line fuzz: a process a call
@fuzz_settings(EXAMPLES // 4)
@given(data=st.data())
def test_every_command_exits_with_a_known_code_and_a_refusal_writes_nothing(
    data: st.DataObject,
    tmp_path_factory: pytest.TempPathFactory,
    board_template: tuple[Path, dict[str, list[str]]],
) -> None:
    path, command = data.draw(st.sampled_from(commands()), label="command")
    argv = data.draw(argv_for(path, command, board_template[1]), label="argv")
    folder = tmp_path_factory.mktemp("cli-example")
    db = folder / "board.db"
    shutil.copyfile(board_template[0], db)
    for name, content in EXAMPLE_FILES.items():
        (folder / name).write_bytes(content)
    kanban = Kanban(db, init=False)
    env = kanban.env(KANBAN_WORKTREES=str(folder / "worktrees"), HOME=str(folder / "home"))
    argv = [value.replace(HERE, str(folder)) for value in argv]
    files_before = folder_files(folder)
    watcher = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        (version,) = watcher.execute("PRAGMA data_version").fetchone()
        before = board_digest(db)
        done = run_kanban([str(KANBAN), *argv], env=env, cwd=folder, timeout=60)
        result = Run(tuple(argv), done.returncode, done.stdout, done.stderr)
        assert result.code in (OK, REFUSED, IDLE, BUSY), str(result)  # never 1, nor a signal
        assert "Traceback" not in result.err, str(result)
        if result.code in (REFUSED, BUSY):
            if path not in REPORTS_WHEN_REFUSED:
                assert result.out == "", str(result)
            error = result.error  # exactly one JSON line
            assert error["error"] and error["reason"], str(result)
            assert watcher.execute("PRAGMA data_version").fetchone()[0] == version, str(result)
            assert board_digest(db) == before, f"refused but wrote: {result}"
            assert folder_files(folder) == files_before, f"refused but wrote a file: {result}"
    finally:
        watcher.close()
    shutil.rmtree(folder, ignore_errors=True)
