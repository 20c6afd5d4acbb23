"""The README's "HTTP API" section works as written: its curl examples run against the real
`kanban serve`, its Python agent loop works the board, and its tokens file loads."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from boardlib import Board
from kanban.http.auth import Identity, TokenBook
from tests.cli.conftest import KANBAN, clean_env

README = Path(__file__).resolve().parents[2] / "README.md"


def section_blocks(language: str) -> list[str]:
    """The fenced blocks of the HTTP API section whose info string is `language`."""
    text = README.read_text()
    section = text.split("\n## HTTP API\n", 1)[1].split("\n## ", 1)[0]
    blocks: list[str] = []
    current: list[str] | None = None
    info = ""
    for line in section.splitlines():
        if line.startswith("```"):
            if current is None:
                current, info = [], line[3:].strip()
            else:
                if info == language:
                    blocks.append("\n".join(current) + "\n")
                current = None
        elif current is not None:
            current.append(line)
    return blocks


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


def test_the_curl_examples_work_as_written(tmp_path: Path) -> None:
    start, examples = section_blocks("sh")[:2]
    assert "kanban serve" in start and "export KANBAN_URL=" in start
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
    assert lines[3:7] == [
        "in_review",
        '{"ok":false,"error":"self_review"}',
        "done",
        '{"ok":false,"error":"conflict","current":"done"}',
    ]
    kinds = json.loads(lines[7])
    assert kinds[:3] == ["task_created", "task_created", "task_claimed"]
    assert "progress_logged" in kinds and "status_changed" in kinds
    stream = lines[8:]
    assert stream[0] == "id: 1" and stream[1].startswith('data: {"seq":1,"kind":"task_created"')
    with Board(db, read_only=True) as board:
        assert board.get_task("TASK-1").status == "done"
        assert board.get_task("TASK-2").unmet_deps == 0


def test_the_python_agent_loop_works_the_board(tmp_path: Path) -> None:
    (loop,) = section_blocks("python")
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
    (example,) = [block for block in section_blocks("") if "operator:dana" in block]
    path = tmp_path / "tokens"
    path.write_text(example)
    os.chmod(path, 0o600)
    book = TokenBook.load(path)
    assert book.identify("6f1c04e2d98b3a7f5c21e0b9a4d8e6a9") == Identity(
        "agent", "worker-1", frozenset({"worker"})
    )
    assert book.identify("91ae3f5d7c2b8e0a4f6d1c9b3e7a5f0b") == Identity("operator", "dana")
