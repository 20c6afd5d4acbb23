"""A URL is never a file path, on any surface.

`Path("postgresql://u@h/db")` is the relative path `postgresql:/u@h/db`: once, a URL that went
through `Path()` made 152 SQLite boards in a folder named `postgresql:`. `boardlib.location` now
refuses anything shaped like a URL that is not a `postgresql://` one (`scheme://` and `scheme:/`
alike) with `unsupported_backend`, and every surface passes that refusal on: the library, the CLI
(`--db` and `KANBAN_DB`), `kanban serve`, `kanban mcp` (and its session in-process), the terminal
board (`kanban tui`, `python -m tui`) and the benchmarks' `--db`. Each test runs in an empty
folder and proves nothing appeared in it. So does a path no file system can name: refused as
input, where it once failed as an OSError from whichever call first looked at it.
"""

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from boardlib import Board, BoardError, Reason
from boardlib.location import DatabaseUrl, board_location, location_key, redact_url
from boardlib.store.copy import copy_board
from boardlib.worktrees.layout import board_key
from kanban.mcp.server import build_server
from kanban.mcp.session import AgentSession
from tests.cli.conftest import KANBAN, clean_env
from tests.cli.warm import run_kanban
from tests.http.warm import run_serve

ROOT = Path(__file__).resolve().parents[2]
URL = "postgresql://kanban:pw@127.0.0.1:1/kanban?options=-csearch_path%3Dboard_1"
# What the URLs become after `Path()`: one slash gone. None of them may ever name a file.
LOST_A_SLASH = [str(Path(URL)), "postgres:/127.0.0.1:1/k", "mysql:/u:pw@h/d", "redis:/h"]
REFUSED = [*LOST_A_SLASH, "mysql://u:pw@h/d", "sqlite://relative/board.db"]


@pytest.fixture
def empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The test's working folder, which must still be empty at the end."""
    folder = tmp_path / "cwd"
    folder.mkdir()
    monkeypatch.chdir(folder)
    yield folder
    assert sorted(p.name for p in folder.rglob("*")) == [], "a file was made from a URL"


def one_error(stderr: str) -> dict[str, str]:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return dict(json.loads(lines[0]))


def test_the_one_parser_tells_urls_from_paths() -> None:
    assert str(Path(URL)).startswith("postgresql:/kanban:pw@")  # the trap itself
    assert isinstance(board_location(URL), DatabaseUrl)
    for text in REFUSED:
        with pytest.raises(BoardError) as caught:
            board_location(text)
        assert caught.value.reason is Reason.UNSUPPORTED_BACKEND, text
        assert "pw" not in str(caught.value) and "pw" not in json.dumps(caught.value.details)
    with pytest.raises(BoardError, match="lost a slash"):
        board_location(Path(URL))
    # Still paths: a SQLite URL that lost its slashes, a drive letter, an explicit relative path.
    assert board_location(Path("sqlite:///srv/kanban/board.db")) == Path("/srv/kanban/board.db")
    assert board_location("C:/boards/board.db") == Path("C:/boards/board.db")
    assert board_location("./postgresql:/board.db") == Path("postgresql:/board.db")
    assert board_location("boards/team:a.db") == Path("boards/team:a.db")


@pytest.mark.parametrize("text", LOST_A_SLASH)
def test_the_library_refuses_a_url_that_went_through_path(empty: Path, text: str) -> None:
    for location in (text, Path(text)):
        for create in (True, False):
            with pytest.raises(BoardError) as caught:
                Board(location, create=create)
            assert caught.value.reason is Reason.UNSUPPORTED_BACKEND


@pytest.mark.parametrize("text", REFUSED)
def test_the_cli_refuses_it_from_the_flag_and_the_environment(empty: Path, text: str) -> None:
    env = clean_env()
    for where, extra in (([], {"KANBAN_DB": text}), (["--db", text], {})):
        for verb in (["task", "list"], ["task", "dispatch", "-t", "x"], ["db", "init"]):
            run = run_kanban(
                [str(KANBAN), *where, *verb], env={**env, **extra}, cwd=empty, timeout=60
            )
            assert (run.returncode, run.stdout) == (2, ""), (verb, run)
            error = one_error(run.stderr)
            assert error["reason"] == "unsupported_backend", (verb, error)
            assert "pw" not in run.stderr


def test_kanban_db_init_refuses_it_as_its_argument(empty: Path) -> None:
    run = run_kanban(
        [str(KANBAN), "db", "init", str(Path(URL))], env=clean_env(), cwd=empty, timeout=60
    )
    assert run.returncode == 2 and one_error(run.stderr)["reason"] == "unsupported_backend"


def test_a_path_no_file_system_can_name_is_refused_as_input(empty: Path) -> None:
    """255 bytes a name on Linux and macOS, less the room of the board's side files
    (`-writers`, `-journal`): the longest board name left works, one byte more is refused, on
    every door a location goes through."""
    longest = "b" * 244 + ".db"
    with Board(longest) as board:
        board.create_task("fits")
    assert (empty / (longest + "-writers")).exists()
    for name in (longest + "x", "y" * 501, "d/" * 2100 + "board.db", "a\0b"):
        for location in (name, f"sqlite://{empty}/{name}"):
            with pytest.raises(BoardError) as caught:
                board_location(location)
            assert caught.value.reason is Reason.INVALID_INPUT, location
    for path in list(empty.iterdir()):
        path.unlink()
    too_long = "y" * 501
    for verb in (
        ["task", "list", "--db", too_long],
        ["db", "init", too_long],
        ["db", "copy", "--from", too_long, "--to", "new.db"],
        ["db", "copy", "--from", "absent.db", "--to", too_long],
    ):
        run = run_kanban([str(KANBAN), *verb], env=clean_env(), cwd=empty, timeout=60)
        assert (run.returncode, run.stdout) == (2, ""), (verb, run)
        assert one_error(run.stderr)["reason"] == "invalid_input", (verb, run)


def test_an_empty_location_is_refused_not_taken_for_the_current_folder(empty: Path) -> None:
    """`kanban --db "$BOARD" task list` with BOARD unset opened `.`: "`.` is not a kanban board
    (it is a folder)", and `db path` said the board was the current folder. An empty (or blank)
    location is refused as input on every door; an empty KANBAN_DB still means unset."""
    for text in ("", "  "):
        with pytest.raises(BoardError) as caught:
            board_location(text)
        assert (caught.value.reason, caught.value.details["field"]) == (Reason.INVALID_INPUT, "db")
    for verb in (
        ["task", "list", "--db", ""],
        ["--db", " ", "task", "dispatch", "-t", "x"],
        ["db", "init", ""],
        ["db", "path", "--db", ""],
        ["db", "copy", "--from", "", "--to", "new.db"],
    ):
        run = run_kanban([str(KANBAN), *verb], env=clean_env(), cwd=empty, timeout=60)
        assert (run.returncode, run.stdout) == (2, ""), (verb, run)
        error = one_error(run.stderr)
        assert (error["reason"], error["field"]) == ("invalid_input", "db"), (verb, run)
        assert "empty" in error["error"], (verb, run)
    state = empty.parent / "state"
    unset = run_kanban(
        [str(KANBAN), "db", "path"],
        env=clean_env(KANBAN_DB="", XDG_STATE_HOME=str(state)),
        cwd=empty,
        timeout=60,
    )
    assert json.loads(unset.stdout)["path"] == str(state / "kanban" / "board.db"), unset


def _kanban(empty: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_kanban([str(KANBAN), *args], env=clean_env(), cwd=empty, timeout=60)


@pytest.mark.parametrize(
    "url",
    [
        "postgresql:///boards",
        "postgresql://kanban:pw@/boards?host=/run/pg",
        "postgres:///b?sslmode=disable",
    ],
)
def test_a_url_without_a_host_prints_as_typed(empty: Path, url: str) -> None:
    """libpq takes the host from PGHOST when the URL names none, as the docs invite; the URL
    printed once lost its `//` (`postgresql:/boards`), which `db init` then refused as a mangled
    location although the message suggested it."""
    shown = url.replace(":pw@", ":***@")
    assert redact_url(url) == str(board_location(url)) == shown
    assert isinstance(board_location(shown), DatabaseUrl)
    where = _kanban(empty, "--db", url, "db", "path")
    assert json.loads(where.stdout)["path"] == shown


SECRET = "S3cretXY"
UNPARSEABLE = [
    f"postgresql://kanban:{SECRET}@[::1/boards",  # was ValueError, `unexpected`, exit 1
    f"postgresql://kanban:{SECRET}@db.internal:notaport/boards",  # was database_unavailable
    f"postgresql://kanban:{SECRET}@db.internal/boards?bogus=1",
    f"postgresql://kanban@[::1/boards?password={SECRET}",
    # values libpq refuses when it starts a connection, each try alike: was database_unavailable
    f"postgresql://kanban:{SECRET}@127.0.0.1:1/boards?sslmode=bogus",
    f"postgresql://kanban:{SECRET}@h1,h2/boards?target_session_attrs=bogus",
    f"postgresql://kanban:{SECRET}@h1:1,h2:2/boards?sslnegotiation=direct",  # sslmode too weak
    f"postgresql://kanban@db.internal/boards?password={SECRET}&service=no-such-service",
]


@pytest.mark.parametrize("url", UNPARSEABLE)
def test_an_unparseable_url_is_refused_as_input_without_its_password(empty: Path, url: str) -> None:
    with pytest.raises(BoardError) as caught:
        board_location(url)
    assert caught.value.reason is Reason.INVALID_INPUT
    assert SECRET not in json.dumps(caught.value.to_dict())
    for verb in (["task", "list"], ["db", "path"], ["db", "init"]):
        run = _kanban(empty, "--db", url, *verb)
        assert (run.returncode, run.stdout) == (2, ""), (verb, run)
        assert one_error(run.stderr)["reason"] == "invalid_input", (verb, run)
        assert SECRET not in run.stderr


@pytest.mark.parametrize(
    "option", ["sslmode=verify-full", "gssencmode=require", "target_session_attrs=read-write"]
)
def test_option_values_libpq_takes_are_not_refused(option: str) -> None:
    """The refusal above asks libpq itself, with no network: values it takes stay a board, even
    ones a local socket could not honour (`gssencmode=require`)."""
    assert isinstance(board_location(f"postgresql://kanban@h1:1,h2:2/boards?{option}"), DatabaseUrl)


@pytest.mark.slow
def test_the_server_refuses_a_bad_option_as_input_not_as_unavailable(empty: Path) -> None:
    url = f"postgresql://kanban:{SECRET}@127.0.0.1:1/boards?sslmode=bogus"
    run = run_serve([str(KANBAN), "--db", url, "serve", "--port", "0"], env=clean_env(), cwd=empty)
    assert (run.returncode, run.stdout) == (2, ""), run
    error = one_error(run.stderr)
    assert error["reason"] == "invalid_input" and "sslmode" in error["error"]
    assert SECRET not in run.stderr


HOST_LIST = (
    f"postgresql://kanban:{SECRET}@DB1.internal:5432,db2.internal:5433/boards?sslmode=require"
)


def test_a_host_list_names_its_board_in_order_without_credentials(
    empty: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`h1:5432,h2:5433` made `identity` raise ValueError (urlsplit's port): the worktrees' board
    key and `db copy`'s same-board check failed with it."""
    monkeypatch.delenv("PGPORT", raising=False)
    url = board_location(HOST_LIST)
    assert isinstance(url, DatabaseUrl)
    assert url.identity == "postgresql://db1.internal:5432,db2.internal:5433/boards?sslmode=require"
    other_user = HOST_LIST.replace(f"kanban:{SECRET}", "ops")
    swapped = HOST_LIST.replace(
        "DB1.internal:5432,db2.internal:5433", "db2.internal:5433,db1.internal:5432"
    )
    assert DatabaseUrl(other_user).identity == url.identity != DatabaseUrl(swapped).identity
    # a list whose one port is the last host's parsed before, and keeps the key it had
    assert (
        DatabaseUrl("postgresql://k@h1,h2:5433/boards").identity
        == "postgresql://h1,h2:5433/boards?"
    )
    assert len(location_key(url)) == 12 and board_key(url) == location_key(url)
    with pytest.raises(BoardError, match="same board") as caught:
        copy_board(url, DatabaseUrl(other_user))
    assert caught.value.reason is Reason.INVALID_INPUT
    run = _kanban(empty, "db", "copy", "--from", HOST_LIST, "--to", other_user)
    assert (run.returncode, run.stdout) == (2, ""), run
    assert one_error(run.stderr)["reason"] == "invalid_input" and SECRET not in run.stderr


CONNINFO = f"host=127.0.0.1 port=55432 user=kanban password={SECRET} dbname=boards"


@pytest.mark.parametrize("text", [CONNINFO, f" dbname = boards password={SECRET}"])
def test_a_libpq_keyword_string_is_refused_never_made_a_file(empty: Path, text: str) -> None:
    """A keyword/value connection string was taken for a SQLite path: `no_board` printed its
    password, and `db init` made a file named with it."""
    for where, extra in (([], {"KANBAN_DB": text}), (["--db", text], {})):
        for verb in (["task", "list"], ["db", "init"], ["db", "path"]):
            run = run_kanban(
                [str(KANBAN), *where, *verb], env={**clean_env(), **extra}, cwd=empty, timeout=60
            )
            assert (run.returncode, run.stdout) == (2, ""), (verb, run)
            error = one_error(run.stderr)
            assert error["reason"] == "invalid_input" and "postgresql://" in error["error"]
            assert SECRET not in run.stderr
    assert board_location("a=b.db") == Path("a=b.db")  # not a libpq keyword: still a file


def test_db_path_does_not_claim_a_url_board_exists(empty: Path) -> None:
    """`db path` opens nothing: for a URL it cannot know (an unresolvable host, an empty
    schema), so `exists` is null, not true."""
    where = _kanban(empty, "--db", "postgresql://kanban@no-such-host.invalid/x", "db", "path")
    assert json.loads(where.stdout)["exists"] is None
    assert json.loads(_kanban(empty, "--db", "absent.db", "db", "path").stdout)["exists"] is False


@pytest.mark.slow
def test_the_server_refuses_to_start_on_it(empty: Path) -> None:
    for where, extra in ((["--db", str(Path(URL))], {}), ([], {"KANBAN_DB": str(Path(URL))})):
        run = run_serve(
            [str(KANBAN), *where, "serve", "--port", "0"], env=clean_env(**extra), cwd=empty
        )
        assert (run.returncode, run.stdout) == (2, ""), run
        assert one_error(run.stderr)["reason"] == "unsupported_backend"


@pytest.mark.slow
def test_the_mcp_server_refuses_to_start_on_it(empty: Path) -> None:
    run = subprocess.run(
        [str(KANBAN), "mcp", "--agent", "ada"], env=clean_env(KANBAN_DB=str(Path(URL))),
        cwd=empty, capture_output=True, text=True, check=False, timeout=60,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert (run.returncode, run.stdout) == (2, ""), run
    assert one_error(run.stderr)["reason"] == "unsupported_backend"


async def test_an_embedded_mcp_session_answers_it_with_a_tool_error(empty: Path) -> None:
    session = AgentSession(Path(URL), "ada", create=True)
    try:
        server = build_server(session)
        for tool in ("claim_next", "list_tasks"):
            result = await server.call_tool(tool, {})
            assert result.is_error
            assert isinstance(result.structured_content, dict)
            assert result.structured_content["reason"] == "unsupported_backend"
    finally:
        session.close()


def test_the_terminal_board_refuses_it_before_taking_the_screen(empty: Path) -> None:
    """`kanban tui` answers like every verb; `python -m tui` with a usage error, no traceback."""
    run = run_kanban(
        [str(KANBAN), "tui", "--db", str(Path(URL))], env=clean_env(), cwd=empty, timeout=60
    )
    assert run.returncode == 2 and one_error(run.stderr)["reason"] == "unsupported_backend"
    for argv, extra in ((["--db", str(Path(URL))], {}), ([], {"KANBAN_DB": str(Path(URL))})):
        run = subprocess.run(
            [sys.executable, "-m", "tui", *argv], env=clean_env(**extra), cwd=empty,
            capture_output=True, text=True, check=False, timeout=60,
        )  # fmt: skip
        assert run.returncode == 2, run
        assert "Traceback" not in run.stderr and "lost a slash" in run.stderr, run.stderr


@pytest.mark.slow
@pytest.mark.parametrize("script", ["claim.py", "claim_floor.py", "tui.py"])
def test_the_benchmarks_db_takes_a_postgres_url_only(empty: Path, script: str) -> None:
    for given in (str(Path(URL)), "board.db", "mysql://h/d"):
        run = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / script), "--db", given],
            env=clean_env(), cwd=empty, capture_output=True, text=True, check=False, timeout=60,
        )  # fmt: skip
        assert run.returncode == 2, run
        assert "argument --db" in run.stderr and "Traceback" not in run.stderr, run.stderr
