"""docs/http.md works as written: `kanban serve` prints the ready line it shows, the curl session
runs against the real server, the Python agent loop works the board, the tokens file loads, and
the routes table lists every route the server declares and every query parameter each takes."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from boardlib import Board
from kanban.http.auth import Identity, TokenBook
from tests.cli.conftest import KANBAN, clean_env
from tests.doc_examples import REPO, example


def serve(tmp_path: Path) -> tuple[subprocess.Popen[str], str, Path]:
    db = tmp_path / "board.db"
    Board(db).close()
    process = subprocess.Popen(
        [str(KANBAN), "--db", str(db), "serve", "--port", "0"],
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    ready = json.loads(process.stdout.readline())
    assert set(ready) == {"listening", "db", "auth"} and ready["auth"] == "none"
    return process, ready["listening"], db


@pytest.mark.slow
def test_serve_prints_the_ready_line_the_page_shows(tmp_path: Path) -> None:
    command, shown, export = example("docs/http.md#serve").splitlines()
    assert command.split("#")[0].split() == ["kanban", "serve"] and "--port 0" in command
    documented = json.loads(shown.removeprefix("# "))
    assert export == f"export KANBAN_URL={documented['listening']}"
    process, url, _db = serve(tmp_path)  # `kanban serve` on --port 0, as the comment says
    process.terminate()
    assert process.wait(timeout=30) == 0
    assert url.startswith("http://127.0.0.1:")
    assert set(documented) == {"listening", "db", "auth"} and documented["auth"] == "none"


@pytest.mark.slow
def test_the_curl_session_works_as_written(tmp_path: Path) -> None:
    examples = example("docs/http.md#curl-session")
    process, url, db = serve(tmp_path)
    try:
        done = subprocess.run(
            ["bash", "-eu", "-c", examples],
            env={**clean_env(), "KANBAN_URL": url},
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        process.terminate()
        assert process.wait(timeout=30) == 0
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ['{"id":"TASK-2","status":"todo","unmetDeps":1}', '["TASK-1"]']
    assert re.fullmatch(r"\d{13}", lines[2])  # the renewed leaseUntil
    assert lines[3:8] == [
        "in_review",
        '{"ok":false,"error":"self_review"}',
        "done",
        '{"ok":false,"error":"conflict","assignee":"worker-1"}',  # the holder, named
        '{"ok":false,"error":"conflict","current":"done","assignee":null}',  # finished: nobody
    ]
    kinds = json.loads(lines[8])
    assert kinds[:3] == ["task_created", "task_created", "task_claimed"]
    assert "progress_logged" in kinds and "status_changed" in kinds
    stream = lines[9:]
    assert stream[0] == "id: 1" and stream[1].startswith('data: {"seq":1,"kind":"task_created"')
    with Board(db, read_only=True) as board:
        assert board.get_task("TASK-1").status == "done"
        assert board.get_task("TASK-2").unmet_deps == 0
        assert board.get_task("TASK-2").assignee_agent_id == "worker-1"


@pytest.mark.slow
def test_the_python_agent_loop_works_the_board(tmp_path: Path) -> None:
    loop = example("docs/http.md#python-agent")
    script = tmp_path / "agent.py"
    script.write_text(loop)
    process, url, db = serve(tmp_path)
    try:
        with Board(db) as board:
            ids = [board.create_task(f"job {n}").id for n in range(3)]
        done = subprocess.run(
            [sys.executable, str(script)],
            env={**clean_env(), "KANBAN_URL": url, "KANBAN_STOP_WHEN_IDLE": "1"},
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        process.terminate()
        assert process.wait(timeout=30) == 0
    assert done.returncode == 0, done.stderr
    with Board(db, read_only=True) as board:
        for task_id in ids:
            task = board.get_task(task_id)
            assert (task.status, task.claimed_by) == ("in_review", "worker-1")
            assert [c.body for c in board.comments(task_id)] == [
                f"started job {ids.index(task_id)}",
                "done",
            ]


def test_the_tokens_file_example_loads(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text(example("docs/http.md#tokens-file"))
    os.chmod(path, 0o600)
    book = TokenBook.load(path)
    assert book.identify("6f1c04e2d98b3a7f5c21e0b9a4d8e6a9") == Identity(
        "agent", "worker-1", frozenset({"worker"})
    )
    assert book.identify("91ae3f5d7c2b8e0a4f6d1c9b3e7a5f0b") == Identity("operator", "dana")


def test_the_routes_table_lists_every_route_the_server_declares(tmp_path: Path) -> None:
    from kanban.http.app import ServerSettings, create_app

    db = tmp_path / "board.db"
    Board(db).close()
    declared = create_app(ServerSettings(db=db, upkeep=False)).openapi()["paths"]
    page = (REPO / "docs" / "http.md").read_text()
    table = page.split("\n## Routes\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "`/" in line]
    listed: dict[tuple[str, str], str] = {}  # each route the table lists: its row's text
    for row in rows:
        methods, paths, said = row.strip("| ").split(" | ")[0:3]
        names = re.findall(r"`([^`]+)`", paths)
        # a full path, or a verb that follows the row's first path (".../heartbeat", `progress`)
        full = [name if name.startswith("/") else f"{names[0]}".rsplit("/", 1)[0] + "/" + name
                for name in names]  # fmt: skip
        listed |= {(method, path): said for method in methods.split(", ") for path in full}
    camel = {"{task_id}": "{taskId}", "{exec_id}": "{execId}"}
    served: dict[tuple[str, str], list[str]] = {}  # each route: its query parameters
    for path, operations in declared.items():
        for word, shown in camel.items():
            path = path.replace(word, shown)
        for method, operation in operations.items():
            parameters = operation.get("parameters", [])
            query = [item["name"] for item in parameters if item["in"] == "query"]
            served[(method.upper(), path)] = query
    assert sorted(served.keys() - listed.keys()) == [], "routes the table leaves out"
    assert sorted(listed.keys() - served.keys()) == [], "routes the table names that it lacks"
    # every query parameter a route takes is named in its row, as `name` or `name=value`
    unsaid = sorted(
        (method, path, name)
        for (method, path), query in served.items()
        for name in query
        if not re.search(rf"`{name}(=[^`]*)?`", listed[(method, path)])
    )
    assert unsaid == [], "query parameters the table does not name"


def test_the_lease_bodies_table_matches_the_schema(tmp_path: Path) -> None:
    """The page once said every lease verb takes `{"agent", "epoch"}` while unblock refused an
    `agent` (and drop and restore took only an epoch): the table of lease bodies now lists, for
    every lease route the server declares, exactly the fields its schema has, the required ones
    marked."""
    from kanban.http.app import ServerSettings, create_app

    db = tmp_path / "board.db"
    Board(db).close()
    document = create_app(ServerSettings(db=db, upkeep=False)).openapi()
    schemas = document["components"]["schemas"]

    def fields(operation: dict) -> dict[str, bool]:
        """The body's fields, each with whether it is required."""
        schema = operation["requestBody"]["content"]["application/json"]["schema"]
        ref = next(part["$ref"] for part in schema.get("anyOf", [schema]) if "$ref" in part)
        body = schemas[ref.rsplit("/", 1)[1]]
        return {name: name in body.get("required", []) for name in body["properties"]}

    served = {
        (method.upper(), path.removeprefix("/api/board/").replace("{task_id}", "{taskId}")): fields(
            operation
        )
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        if "lease" in operation.get("tags", [])
    }
    page = (REPO / "docs" / "http.md").read_text()
    table = page.split("<!-- lease bodies -->\n", 1)[1].split("\n\n", 1)[0]
    documented: dict[tuple[str, str], dict[str, bool]] = {}
    for row in table.splitlines()[2:]:
        method, paths, body = row.strip("| ").split(" | ")
        said = {
            name: required == " (required)"
            for name, required in re.findall(r"`(\w+)`( \(required\))?", body)
        }
        documented |= {(method, path): said for path in re.findall(r"`([^`]+)`", paths)}
    # `team` is also taken as `teamId` (an alias the schema does not list)
    documented[("POST", "claim-next")].pop("teamId")
    assert sorted(served.keys() - documented.keys()) == [], "lease routes the table leaves out"
    assert sorted(documented.keys() - served.keys()) == [], "rows naming no lease route"
    assert {key: documented[key] for key in served} == served


def test_the_servers_own_reasons_are_declared_once_and_documented() -> None:
    """`shutting_down`, `unsupported_encoding` (and the other refusals only the server makes)
    were string literals in kanban/http, declared nowhere beside the board's reasons: each is
    now a `ServerReason`, no `"reason": "<literal>"` in kanban/http repeats one, none is also a
    board reason, and the Refusals section names each."""
    import ast

    from boardlib.errors import Reason, ServerReason

    declared = {reason.value for reason in ServerReason}
    assert declared >= {"shutting_down", "unsupported_encoding"}
    assert not declared & {reason.value for reason in Reason}
    repeated = []
    for source in sorted((REPO / "kanban" / "http").rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    said = isinstance(value, ast.Constant) and value.value in declared
                    if isinstance(key, ast.Constant) and key.value == "reason" and said:
                        repeated.append(f"{source.name}:{node.lineno}")
    assert repeated == [], "reasons written as literals, not imported from ServerReason"
    page = (REPO / "docs" / "http.md").read_text()
    refusals = page.split("\n## Refusals\n", 1)[1].split("\n## ", 1)[0]
    assert sorted(reason for reason in declared if f"`{reason}`" not in refusals) == []
