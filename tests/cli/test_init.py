"""`kanban init` in a scratch repository (issue 26): for each runtime its files are written and a
second run leaves the same bytes ("up to date"); text outside kanban's block survives; a block
edited by hand is refused with the diff (and replaced only with --force); --print writes nothing;
the instructions are generated from the CLI's own declarations; and the commands they show run
as written against a live board."""

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from boardlib import Board
from boardlib.errors import Reason
from kanban.agent_setup.files import outside_block
from kanban.cli import exitcodes
from kanban.mcp.catalog import TOOL_SETS
from tests.cli.conftest import BIN, KANBAN, Run, clean_env, user_namespaces
from tests.cli.warm import run_kanban

FILES = {
    "generic": ["AGENTS.md"],
    "claude-code": ["AGENTS.md", "CLAUDE.md", ".mcp.json"],
    "codex": ["AGENTS.md", ".codex/config.toml"],
    "cursor": ["AGENTS.md", ".cursor/mcp.json"],
}
BEGIN = re.compile(r"^<!-- kanban:begin .*-->$", re.MULTILINE)


def kanban_init(repo: Path, db: Path | str, *args: str, **env: str) -> Run:
    argv = ["init", "--repo", str(repo), "--db", str(db), *args]
    done = run_kanban([str(KANBAN), *argv], env=clean_env(**env), cwd=repo)
    return Run(tuple(argv), done.returncode, done.stdout, done.stderr)


def ok(run: Run) -> dict[str, Any]:
    assert run.code == 0, str(run)
    doc: dict[str, Any] = run.doc
    return doc


def digests(repo: Path) -> dict[str, str]:
    """Every file under the scratch repository, by content."""
    return {
        str(path.relative_to(repo)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(repo.rglob("*"))
        if path.is_file()
    }


def tree(repo: Path) -> dict[str, str]:
    """Everything under the scratch repository: each file's sha256 and mode, each folder's and
    symlink's, so a folder left behind (empty) or a temp file counts as a change too."""
    found: dict[str, str] = {}
    for top, folders, files in os.walk(repo):
        for entry in [*folders, *files]:
            path = Path(top) / entry
            info = path.lstat()
            mode = oct(stat.S_IMODE(info.st_mode))
            if path.is_symlink():
                what = f"-> {os.readlink(path)}"
            elif path.is_dir():
                what = "folder"
            else:
                what = hashlib.sha256(path.read_bytes()).hexdigest()
            found[str(path.relative_to(repo))] = f"{what} {mode}"
    return found


def kanban_init_as_user(repo: Path, db: Path, *args: str) -> Run:
    """`kanban init` as a user file modes apply to (root ignores them): in a user namespace of
    its own (`unshare --user`) it keeps its uid, so it owns what root owns, but not root's
    override, so the owner's bits decide (see tests/chaos/test_torn_files.py)."""
    if not user_namespaces():
        pytest.skip("needs user namespaces (unshare --user) to run without root's privileges")
    argv = ["init", "--repo", str(repo), "--db", str(db), *args]
    done = subprocess.run(
        ["unshare", "--user", str(KANBAN), *argv],
        env=clean_env(),
        cwd=repo.parent,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return Run(tuple(argv), done.returncode, done.stdout, done.stderr)


def block_of(text: str) -> str:
    start = BEGIN.search(text)
    assert start is not None, text
    return text[start.end() : text.index("<!-- kanban:end -->")]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    return folder


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "state" / "board.db"


@pytest.mark.slow  # kanban init run again and again
@pytest.mark.parametrize("harness", list(FILES))
def test_init_writes_the_runtimes_files_and_a_second_run_changes_no_byte(
    harness: str, repo: Path, db: Path
) -> None:
    db.parent.mkdir()
    first = kanban_init(repo, db, "--harness", harness)
    doc = ok(first)
    assert first.err == f"kanban: created a new board at {db}\n"
    assert [(f["path"], f["status"]) for f in doc["files"]] == [
        (path, "created") for path in FILES[harness]
    ]
    assert sorted(digests(repo)) == sorted(FILES[harness])
    assert doc["board"] == {"path": str(db), "backend": "sqlite", "created": True}
    assert doc["upToDate"] is False and "created the board" in doc["message"]
    with Board(db, reconcile_orphans=False) as board:
        assert board.all_tasks() == []
    entry = doc["mcpServer"]
    assert entry["env"] == {"KANBAN_DB": str(db), "KANBAN_AGENT": doc["agent"]}
    assert entry["args"] == ["mcp", "--tools", "all"]
    agents = (repo / "AGENTS.md").read_text()
    assert f"export KANBAN_DB={db} KANBAN_AGENT={doc['agent']}" in block_of(agents)

    before = digests(repo)
    again = kanban_init(repo, db, "--harness", harness)
    doc = ok(again)
    assert again.err == ""
    assert doc["upToDate"] is True and doc["message"] == "up to date"
    assert {f["status"] for f in doc["files"]} == {"up_to_date"}
    assert digests(repo) == before


@pytest.mark.slow  # kanban init run again and again
def test_the_mcp_configs_are_in_each_runtimes_format(repo: Path, db: Path) -> None:
    for harness in ("claude-code", "cursor", "codex"):
        ok(kanban_init(repo, db, "--harness", harness, "--agent", "w1", "--tools", "worker"))
    claude = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["kanban"]
    cursor = json.loads((repo / ".cursor/mcp.json").read_text())["mcpServers"]["kanban"]
    codex = tomllib.loads((repo / ".codex/config.toml").read_text())["mcp_servers"]["kanban"]
    assert claude["type"] == "stdio" and "type" not in cursor and "type" not in codex
    for entry in (claude, cursor, codex):
        assert entry["args"] == ["mcp", "--tools", "worker"]
        assert entry["env"] == {"KANBAN_DB": str(db), "KANBAN_AGENT": "w1"}
        assert Path(entry["command"]).name == "kanban"
    claude_md = (repo / "CLAUDE.md").read_text()
    assert "\n@AGENTS.md\n" in claude_md  # Claude Code reads CLAUDE.md, which imports AGENTS.md


def test_a_kanban_found_through_an_activated_virtualenv_is_written_by_its_path(
    repo: Path, db: Path
) -> None:
    """An activated virtualenv is on the PATH of the shell that ran init, not of a runtime
    started from another terminal or the desktop: the config names the script by its path, and
    starts from a PATH without the venv. Without activation, PATH's `kanban` is written as such."""
    plain_path = "/usr/local/bin:/usr/bin:/bin"
    activated = clean_env(VIRTUAL_ENV=str(BIN.parent), PATH=f"{BIN}:{plain_path}")
    argv = [str(KANBAN), "init", "--harness", "cursor", "--repo", str(repo), "--db", str(db)]
    done = subprocess.run(argv, env=activated, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    entry = json.loads((repo / ".cursor/mcp.json").read_text())["mcpServers"]["kanban"]
    assert entry["command"] == str(KANBAN)
    runtime_env = {"PATH": plain_path, "HOME": str(repo.parent), **entry["env"]}
    started = subprocess.run(
        [entry["command"], "db", "path"], env=runtime_env, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert started.returncode == 0 and json.loads(started.stdout)["exists"], started.stderr

    shutil.rmtree(repo / ".cursor")
    bare = {key: value for key, value in activated.items() if key != "VIRTUAL_ENV"}
    done = subprocess.run(argv, env=bare, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    entry = json.loads((repo / ".cursor/mcp.json").read_text())["mcpServers"]["kanban"]
    assert entry["command"] == "kanban"


@pytest.mark.slow  # kanban init run again and again
def test_lines_outside_the_block_survive_every_rewrite(repo: Path, db: Path) -> None:
    mine = "# Our project\n\nUse tabs.\r\n"  # the user's own text, a CRLF line included
    (repo / "AGENTS.md").write_text(mine, newline="")
    ok(kanban_init(repo, db, "--harness", "claude-code"))
    text = (repo / "AGENTS.md").read_bytes().decode()
    assert text.startswith(mine)
    with (repo / "AGENTS.md").open("a", newline="") as out:
        out.write("\r\nA line the user added after the block.\r\n")
    with (repo / "CLAUDE.md").open("a") as out:
        out.write("Claude-only notes.\n")
    outside = {
        name: outside_block((repo / name).read_bytes().decode(), "markdown")
        for name in ("AGENTS.md", "CLAUDE.md")
    }
    changed = ok(kanban_init(repo, db, "--harness", "claude-code", "--tools", "worker"))
    statuses = {f["path"]: f["status"] for f in changed["files"]}
    assert statuses == {"AGENTS.md": "updated", "CLAUDE.md": "up_to_date", ".mcp.json": "updated"}
    for name, text in outside.items():
        assert outside_block((repo / name).read_bytes().decode(), "markdown") == text, name
    assert "tool set `worker`" in (repo / "AGENTS.md").read_text()


def test_a_block_edited_by_hand_is_refused_with_the_diff_and_replaced_only_with_force(
    repo: Path, db: Path
) -> None:
    ok(kanban_init(repo, db, "--harness", "claude-code"))
    agents = repo / "AGENTS.md"
    agents.write_text(agents.read_text().replace("Never approve", "Please never approve"))
    server = repo / ".mcp.json"
    config = json.loads(server.read_text())
    config["mcpServers"]["kanban"]["env"]["KANBAN_AGENT"] = "renamed"
    server.write_text(json.dumps(config, indent=2) + "\n")
    before = digests(repo)

    refused = kanban_init(repo, db, "--harness", "claude-code")
    assert refused.code == 2 and refused.out == "", str(refused)
    error = refused.error
    assert error["reason"] == "edited"
    assert [f["path"] for f in error["files"]] == ["AGENTS.md", ".mcp.json"]
    diff = error["files"][0]["diff"]
    assert "-Work in" in diff and "Please never approve" in diff and "+Work in" in diff
    assert '-        "KANBAN_AGENT": "renamed"' in error["files"][1]["diff"]
    assert digests(repo) == before  # nothing written, not even the unedited files

    printed = kanban_init(repo, db, "--harness", "claude-code", "--print")
    assert printed.code == 2 and digests(repo) == before

    forced = ok(kanban_init(repo, db, "--harness", "claude-code", "--force"))
    statuses = {f["path"]: (f["status"], f.get("forced")) for f in forced["files"]}
    assert statuses == {
        "AGENTS.md": ("updated", True),
        "CLAUDE.md": ("up_to_date", None),
        ".mcp.json": ("updated", True),
    }
    assert "Please never" not in agents.read_text()
    assert ok(kanban_init(repo, db, "--harness", "claude-code"))["message"] == "up to date"


def test_print_writes_nothing_and_shows_what_a_run_writes(repo: Path, db: Path) -> None:
    (repo / "AGENTS.md").write_text("# Mine\n")
    before = digests(repo)
    printed = kanban_init(repo, db, "--harness", "codex", "--print")
    doc = ok(printed)
    assert printed.err == ""
    assert digests(repo) == before and not db.exists() and not db.parent.exists()
    assert doc["printed"] is True and doc["board"]["wouldCreate"] is True
    assert doc["upToDate"] is False
    assert doc["message"] == (
        "would have created .codex/config.toml; would have updated AGENTS.md; "
        "would have created the board"
    )  # each clause: it once read "...; created the board", which --print never does
    contents = {f["path"]: f["content"] for f in doc["files"]}
    assert set(contents) == {"AGENTS.md", ".codex/config.toml"}
    assert doc["files"][1]["diff"].startswith("--- /dev/null\n+++ b/.codex/config.toml\n")
    ok(kanban_init(repo, db, "--harness", "codex"))
    for path, content in contents.items():
        assert (repo / path).read_text() == content, path


@pytest.mark.slow  # kanban init run again and again
def test_a_json_config_keeps_the_users_servers_and_formatting(repo: Path, db: Path) -> None:
    folder = repo / ".cursor"
    folder.mkdir()
    theirs = (
        '{\n    "mcpServers": {\n        "github": {"command": "gh-mcp", "args": []}\n    },\n'
        '    "other": [1, 2]\n}\n'
    )
    (folder / "mcp.json").write_text(theirs)
    ok(kanban_init(repo, db, "--harness", "cursor"))
    text = (folder / "mcp.json").read_text()
    head = '{\n    "mcpServers": {\n        "github": {"command": "gh-mcp", "args": []}'
    assert text.startswith(head + ',\n        "kanban": {\n            "command"')
    assert text.endswith('\n    },\n    "other": [1, 2]\n}\n')
    parsed = json.loads(text)
    assert parsed["other"] == [1, 2] and parsed["mcpServers"]["github"]["command"] == "gh-mcp"

    # the same entry written another way is still kanban's: up to date, not rewritten
    compact = json.dumps(parsed, separators=(",", ":"))
    (folder / "mcp.json").write_text(compact)
    assert ok(kanban_init(repo, db, "--harness", "cursor"))["upToDate"] is True
    assert (folder / "mcp.json").read_text() == compact

    # an empty servers object, and a file with no servers at all
    (folder / "mcp.json").write_text('{"mcpServers": {}}')
    ok(kanban_init(repo, db, "--harness", "cursor"))
    assert set(json.loads((folder / "mcp.json").read_text())["mcpServers"]) == {"kanban"}
    (folder / "mcp.json").write_text('{\n  "theme": "dark"\n}\n')
    ok(kanban_init(repo, db, "--harness", "cursor"))
    assert json.loads((folder / "mcp.json").read_text())["theme"] == "dark"


def test_a_config_that_does_not_parse_is_refused_and_left_alone(repo: Path, db: Path) -> None:
    (repo / ".mcp.json").write_text('{"mcpServers": {,}')
    (repo / ".codex").mkdir()
    (repo / ".codex/config.toml").write_text("model = \n")
    before = digests(repo)
    for harness, name in (("claude-code", ".mcp.json"), ("codex", ".codex/config.toml")):
        run = kanban_init(repo, db, "--harness", harness)
        assert run.code == 2 and run.out == "", str(run)
        assert run.error["reason"] == "invalid_input" and run.error["file"] == name
    assert digests(repo) == before and not db.exists()


def test_a_codex_config_whose_mcp_servers_is_not_a_table_is_refused_and_left_alone(
    repo: Path, db: Path
) -> None:
    (repo / ".codex").mkdir()
    (repo / ".codex/config.toml").write_text('[[mcp_servers]]\nname = "docs"\ncommand = "d"\n')
    before = tree(repo)
    for options in ((), ("--force",)):
        run = kanban_init(repo, db, "--harness", "codex", *options)
        assert run.code == 2 and run.out == "", str(run)
        assert run.error["reason"] == "invalid_input", str(run)
        assert run.error["file"] == ".codex/config.toml"
        assert "its mcp_servers is an array" in run.error["error"]
    assert tree(repo) == before and not db.exists()


# What the file system will not let kanban init write: the harness, what is made of the
# repository, the refusal and the file it names. The unprivileged ones run under unshare.
UNWRITABLE: dict[str, tuple[str, str, str]] = {
    "read_only_repository": ("generic", "read_only", "AGENTS.md"),
    "read_only_cursor_folder": ("cursor", "read_only", ".cursor/mcp.json"),
    "read_only_agents_md": ("codex", "read_only", "AGENTS.md"),
    "closed_cursor_folder": ("cursor", "permission_denied", ".cursor/mcp.json"),
    "codex_folder_is_a_file": ("codex", "invalid_input", ".codex/config.toml"),
    "cursor_folder_is_a_dangling_symlink": ("cursor", "invalid_input", ".cursor/mcp.json"),
}
UNPRIVILEGED = {
    "read_only_repository",
    "read_only_cursor_folder",
    "read_only_agents_md",
    "closed_cursor_folder",
}


def make_unwritable(kind: str, repo: Path) -> None:
    if kind != "read_only_repository":
        (repo / "AGENTS.md").write_text("# Ours\n\nOur own notes.\n")
    if kind == "read_only_repository":
        repo.chmod(0o555)
    elif kind == "read_only_cursor_folder":
        (repo / ".cursor").mkdir(mode=0o555)
    elif kind == "read_only_agents_md":
        (repo / "AGENTS.md").chmod(0o444)
    elif kind == "closed_cursor_folder":
        (repo / ".cursor").mkdir(mode=0o000)
    elif kind == "codex_folder_is_a_file":
        (repo / ".codex").write_text("not a folder\n")
    elif kind == "cursor_folder_is_a_dangling_symlink":
        (repo / ".cursor").symlink_to("nowhere")


@pytest.mark.parametrize("kind", list(UNWRITABLE))
def test_a_repository_it_may_not_write_is_refused_before_a_byte_is_written(
    kind: str, repo: Path, db: Path
) -> None:
    harness, reason, file = UNWRITABLE[kind]
    make_unwritable(kind, repo)
    before = tree(repo)
    runs = []
    for extra in (["--print"], []):  # the dry run refuses what the run would
        if kind in UNPRIVILEGED:
            runs.append(kanban_init_as_user(repo, db, "--harness", harness, *extra))
        else:
            runs.append(kanban_init(repo, db, "--harness", harness, *extra))
    for run in runs:
        assert run.code == 2 and run.out == "", str(run)
        error = run.error
        assert (error["reason"], error["file"]) == (reason, file), str(run)
        assert error["error"].startswith(f"{file}: ")
        assert "kanban init changed nothing" in error["error"]
    assert runs[0].error == runs[1].error
    assert tree(repo) == before  # not even the files it could have written (AGENTS.md)
    assert not db.exists() and not db.parent.exists()  # nor the board


def test_a_write_that_fails_midway_puts_back_every_file_written_before_it(
    repo: Path, db: Path, tmp_path: Path
) -> None:
    agents = repo / "AGENTS.md"
    agents.write_text("# Ours\n\nOur own notes.\n")
    # Another user's file in a sticky folder anyone may write: kanban init may write both (the
    # check passes) and stage its text beside it, but only their owner may rename over it, so
    # the second rename fails after AGENTS.md was replaced.
    folder = repo / ".cursor"
    folder.mkdir()
    (folder / "mcp.json").write_text('{"mcpServers": {}}\n')
    for path in (folder, folder / "mcp.json"):
        os.chown(path, 4321, 4321)
    folder.chmod(0o1777)
    (folder / "mcp.json").chmod(0o666)
    before, inode = tree(repo), agents.stat().st_ino
    run = kanban_init_as_user(repo, db, "--harness", "cursor")
    assert run.code == 2 and run.out == "", str(run)
    error = run.error
    assert (error["reason"], error["file"]) == ("read_only", ".cursor/mcp.json"), str(run)
    assert "kanban init changed nothing" in error["error"] and "notRestored" not in error
    assert tree(repo) == before and not db.exists()  # no temp file left, no board made
    assert agents.stat().st_ino != inode  # it was written, and its bytes and mode put back

    # The files written, then the board refused (its folder is read-only): put back too.
    other = tmp_path / "other"
    other.mkdir()
    (other / "AGENTS.md").write_text("# Ours\n")
    boards = tmp_path / "boards"
    boards.mkdir(mode=0o555)
    before = tree(other)
    run = kanban_init_as_user(other, boards / "board.db", "--harness", "cursor")
    assert run.code == 2 and run.error["reason"] == "read_only", str(run)
    assert tree(other) == before and list(boards.iterdir()) == []


def test_codex_toml_keeps_the_users_config_and_refuses_a_second_kanban_table(
    repo: Path, db: Path
) -> None:
    (repo / ".codex").mkdir()
    config = repo / ".codex/config.toml"
    theirs = 'model = "gpt-5"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
    config.write_text(theirs)
    ok(kanban_init(repo, db, "--harness", "codex"))
    text = config.read_text()
    assert text.startswith(theirs + "\n# kanban:begin ")
    parsed = tomllib.loads(text)
    assert parsed["model"] == "gpt-5" and set(parsed["mcp_servers"]) == {"docs", "kanban"}

    config.write_text(theirs + '\n[mcp_servers.kanban]\ncommand = "mine"\n')
    before = digests(repo)
    for force in ((), ("--force",)):  # not kanban's part edited: the user's own, even forced
        run = kanban_init(repo, db, "--harness", "codex", *force)
        assert run.code == 2 and run.error["reason"] == "invalid_input", str(run)
        assert "outside kanban's block" in run.error["error"]
        assert digests(repo) == before


@pytest.mark.slow  # kanban init run again and again
def test_claude_md_that_already_imports_agents_md_or_is_it_is_left_alone(
    repo: Path, db: Path
) -> None:
    (repo / "CLAUDE.md").write_text("@AGENTS.md\n\nClaude notes.\n")
    doc = ok(kanban_init(repo, db, "--harness", "claude-code"))
    assert {f["path"]: f["status"] for f in doc["files"]}["CLAUDE.md"] == "up_to_date"
    assert (repo / "CLAUDE.md").read_text() == "@AGENTS.md\n\nClaude notes.\n"

    other = repo / "linked"
    other.mkdir()
    (other / "CLAUDE.md").symlink_to("AGENTS.md")
    doc = ok(kanban_init(other, db, "--harness", "claude-code"))
    assert [f["path"] for f in doc["files"]] == ["AGENTS.md", ".mcp.json"]
    assert (other / "CLAUDE.md").is_symlink()
    assert "<!-- kanban:begin" in (other / "CLAUDE.md").read_text()


@pytest.mark.slow
def test_the_instructions_come_from_the_clis_declarations(repo: Path, db: Path) -> None:
    env = {"KANBAN_LEASE_MS": "60000"}
    doc = ok(kanban_init(repo, db, "--harness", "generic", "--agent", "bot-7", **env))
    block = block_of((repo / "AGENTS.md").read_text())
    for reason in Reason:
        code = exitcodes.refusal_code(reason.value)
        assert f"- `{reason.value}`" + ("" if code == 2 else f" (exit {code})") in block
    for code, meaning in exitcodes.MEANINGS.items():
        assert f"{code} {meaning}" in block
    assert "holds the task for 1 minute. Renew it at least every 20 seconds" in block
    # the board's settings travel with the server, so it quotes and applies the same lease
    assert doc["mcpServer"]["env"]["KANBAN_LEASE_MS"] == "60000"
    assert "KANBAN_LEASE_MS=60000" in block
    assert f"tool set `all` ({len(TOOL_SETS['all'])} tools)" in block
    # every command a hint names is a real one
    for verb in sorted(set(re.findall(r"`kanban task ([a-z-]+)", block))):
        run = run_kanban([str(KANBAN), "task", verb, "--help"], env=clean_env())
        assert run.returncode == 0, verb


def test_the_mcp_paragraph_names_the_worktree_tools_its_sessions_list() -> None:
    """Over MCP an agent had no way to provision a worktree or complete through the gate, so it
    could not follow the block's code-task steps. The MCP paragraph names those tools, and only
    tools each set lists."""
    from kanban.agent_setup.instructions import Briefing, agents_block
    from kanban.mcp.hints import tools_named

    for tool_set, tools in TOOL_SETS.items():
        briefing = Briefing("/tmp/board.db", "bot-7", None, tool_set, 900_000, {})
        block = agents_block(briefing)
        paragraph = next(part for part in block.split("\n\n") if part.startswith("Over MCP"))
        named = tools_named(paragraph)
        assert named <= set(tools), (tool_set, named - set(tools))
        if "claim_next" in tools:
            assert {"provision_workspace", "write_handoff", "complete_workspace"} <= named
        if "land_task" in tools:  # gated work is done, not in review: it waits in the inbox
            assert {"inbox", "preview_landing", "land_task"} <= named, tool_set


def test_each_runtime_reads_only_the_mcp_steps_of_its_own_tool_set() -> None:
    """With Claude Code set up as a worker and Codex as a reviewer, the MCP paragraph named both
    runtimes, then the worker's and the reviewer's steps in one run of sentences, so each runtime
    read the other's steps as its own. Each runtime's steps are its own line now, naming only the
    tools its set lists."""
    from kanban.agent_setup.instructions import Briefing, Identity, agents_block
    from kanban.mcp.hints import tools_named

    runtimes = {
        "claude-code": Identity("cc", None, "worker"),
        "codex": Identity("cx", "qa", "reviewer"),
    }
    briefing = Briefing("/tmp/board.db", "cc", None, "worker", 900_000, {})
    block = agents_block(briefing, runtimes)
    paragraph = next(part for part in block.split("\n\n") if part.startswith("Over MCP"))
    lines = paragraph.splitlines()
    worker = next(line for line in lines if "in Claude Code as `cc`" in line)
    reviewer = next(line for line in lines if "in Codex as `cx` (role `qa`)" in line)
    for line, tool_set in ((worker, "worker"), (reviewer, "reviewer")):
        assert f"tool set `{tool_set}`" in line
        assert tools_named(line) <= set(TOOL_SETS[tool_set]), (tool_set, line)
    assert {"claim_next", "complete_workspace"} <= tools_named(worker)
    assert {"inbox", "land_task"} <= tools_named(reviewer)
    assert "A refusal is a tool error" in paragraph


def test_bad_settings_are_refused_before_anything_is_written(repo: Path, db: Path) -> None:
    secret = kanban_init(repo, "postgresql://kanban:hunter2@localhost/board")
    assert secret.code == 2 and secret.error["reason"] == "invalid_input", str(secret)
    assert "hunter2" not in secret.err and "PGPASSWORD" in secret.error["error"]
    operator = kanban_init(repo, db, "--agent", "operator")
    assert operator.code == 2 and operator.error["reason"] == "usage", str(operator)
    harness = kanban_init(repo, db, "--harness", "claude")
    assert harness.code == 2 and "claude-code" in harness.error["error"], str(harness)
    assert digests(repo) == {} and not db.exists()
    # A machine setting is carried into the configs as it is set: checked first, as paths are.
    for value in ("30\x1b[2J", "-5", "a while"):
        bad = kanban_init(repo, db, KANBAN_VERIFY_TIMEOUT_S=value)
        assert bad.code == 2 and bad.error["reason"] == "invalid_input", str(bad)
        assert bad.error["variable"] == "KANBAN_VERIFY_TIMEOUT_S", str(bad)
    assert digests(repo) == {} and not db.exists()
    foreign = repo.parent / "notes.txt"
    foreign.write_text("not a board\n")
    refused = kanban_init(repo, foreign)
    assert refused.code == 2 and refused.error["reason"] == "not_a_board", str(refused)
    assert digests(repo) == {} and foreign.read_text() == "not a board\n"


def test_without_repo_it_finds_the_git_repository_around_the_current_folder(
    tmp_path: Path, db: Path
) -> None:
    top = tmp_path / "project"
    (top / "src" / "deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    done = run_kanban(
        [str(KANBAN), "init", "--db", str(db)], cwd=top / "src" / "deep", env=clean_env()
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["repo"] == str(top)
    assert (top / "AGENTS.md").exists() and not (top / "src" / "deep" / "AGENTS.md").exists()
    # Outside any repository (a home folder, say) it refuses and writes nothing, board included;
    # --repo names the folder to set up as it is.
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    fresh = tmp_path / "fresh.db"
    run = [str(KANBAN), "init", "--db", str(fresh)]
    refused = run_kanban(run, cwd=outside, env=clean_env())
    assert refused.returncode == 2, refused.stderr
    error = json.loads(refused.stderr)
    assert error["reason"] == "invalid_input" and "no git repository" in error["error"]
    assert list(outside.iterdir()) == [] and not fresh.exists()
    chosen = run_kanban([*run, "--repo", "."], cwd=outside, env=clean_env())
    assert chosen.returncode == 0, chosen.stderr
    assert (outside / "AGENTS.md").exists()


# -- the commands of the instructions, run as written ----------------------------------------------


def fences(block: str) -> list[list[str]]:
    return [body.splitlines() for body in re.findall(r"```sh\n(.*?)```", block, re.DOTALL)]


def before_claim_of(work: list[str]) -> list[str]:
    """The work block's lines before its claim: the kanban function, if any, and the export."""
    return work[: next(i for i, line in enumerate(work) if "claim-next" in line)]


def inline_commands(block: str) -> list[str]:
    """The commands the prose names in backticks, before the exit codes and reasons (whose
    commands take an ID to fill in, checked by --help above)."""
    prose = block[: block.index("Exit codes:")]
    return re.findall(r"`(kanban [^`]+)`", prose)


def bash(
    lines: list[str], env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    script = "set -eu\n" + "\n".join(lines) + "\n"
    return subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=120,
        check=False, cwd=cwd,
    )  # fmt: skip


@pytest.mark.slow  # every command of the blocks, run
def test_the_instruction_blocks_commands_run_as_written(repo: Path, db: Path) -> None:
    assert shutil.which("jq"), "the instructions use jq; install it (apt-get install jq)"
    ok(kanban_init(repo, db, "--harness", "claude-code", "--role", "worker"))
    block = block_of((repo / "AGENTS.md").read_text())
    work, worktree, review = fences(block)
    inline = inline_commands(block)
    env = {key: value for key, value in clean_env().items() if key != "KANBAN_DB"}
    env["KANBAN_WORKTREES"] = str(repo.parent / "worktrees")
    claim_prefix = [line for line in work if not line.startswith("kanban task")]
    assert len(claim_prefix) in (4, 5)  # [kanban function,] export, claim, id, epoch

    with Board(db, reconcile_orphans=False) as board:
        built = board.create_task("Build the parser", role="worker")
    done = bash(work, env)
    assert done.returncode == 0, done.stderr
    with Board(db, reconcile_orphans=False) as board:
        view = board.view(built.id)
        events = [event.kind for event in board.events(task_id=built.id)]
    assert view.task.status == "in_review"
    assert [c.body for c in view.comments] == ["what you did", "what changed, how to check it"]
    assert {"progress_logged", "lease_renewed"} <= set(events)  # log-progress, heartbeat

    ran = set(work)
    by_command = {command.split('"$id"')[0].strip(): command for command in inline}
    for verb, status in (("extend-lease", "in_progress"), ("block", "blocked")):
        with Board(db, reconcile_orphans=False) as board:
            task = board.create_task(f"for {verb}", role="worker")
        command = by_command[f"kanban task {verb}"]
        result = bash([*claim_prefix, command], env)
        assert result.returncode == 0, result.stderr
        with Board(db, reconcile_orphans=False) as board:
            after = board.get_task(task.id)
        assert after.status == status, verb
        if verb == "extend-lease":
            assert after.lease_until is not None and after.last_heartbeat_at is not None
            assert after.lease_until - after.last_heartbeat_at >= 59 * 60_000
        ran.add(command)
    with Board(db, reconcile_orphans=False) as board:
        task = board.create_task("for release", role="worker")
    command = by_command["kanban task release"]
    result = bash([*claim_prefix, command], env)
    assert result.returncode == 0, result.stderr
    with Board(db, reconcile_orphans=False) as board:
        assert board.get_task(task.id).status == "todo"
    ran.add(command)

    # A shell that restarted holding a task has lost `$epoch`: the block says how to get it back
    # ("go on with them" named no way to the epoch).
    assert bash(claim_prefix, env).returncode == 0  # claims "for release" again
    resume = sorted(set(re.findall(r"`(epoch=\$\(kanban [^`]+)`", block)))
    assert len(resume) == 1, "the heldByYou bullet says how to get the epoch back"
    heartbeat = next(line for line in work if line.startswith("kanban task heartbeat"))
    held_again = "id=$(kanban task claim-next --role worker | jq -r '.heldByYou[0]')"
    result = bash([*before_claim_of(work), held_again, *resume, heartbeat], env)
    assert result.returncode == 0, result.stderr  # a wrong epoch is refused: stale_claim
    with Board(db, reconcile_orphans=False) as board:
        board.cancel(task.id)  # nothing claimable is left

    # A code task in its own worktree (the block never said so, and an agent following it changed
    # the person's checkout): provision, change a file there, complete through the gate; the
    # repository's own checkout is untouched. No operator set a verify command: the block's handoff
    # step names the project's (without it the gate found none and blocked the task for an
    # operator).
    (repo / "Makefile").write_text("test:\n\ttest -f lexer.txt\n")  # the project's tests
    for args in (
        ("init", "-q", "-b", "main"),
        ("add", "-A"),
        ("-c", "user.name=a", "-c", "user.email=a@x", "commit", "-q", "-m", "set up"),
    ):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
    with Board(db, reconcile_orphans=False) as board:
        coded = board.create_task("Write the lexer", role="worker")
    # No lexer.txt yet: the project's tests fail and the task comes back under a new epoch, which
    # the block says to quote (the old one is refused stale_claim, whose hint says to stop work on
    # the task).
    drafted = [*claim_prefix, *worktree[:2], "echo draft > notes.txt", *worktree[2:]]
    result = bash(drafted, env, repo)
    assert result.returncode == 0, result.stderr
    failed = json.loads(result.stdout.splitlines()[-1])
    with Board(db, reconcile_orphans=False) as board:
        again = board.get_task(coded.id)
    assert (failed["verified"], again.status) == ("fail", "in_progress"), result.stdout
    assert failed["claimEpoch"] == again.claim_epoch
    assert (
        "a fail comes back to you with its output and a new epoch, the answer's `claimEpoch`"
        in (" ".join(block.split()))
    )
    retry = [f"id={coded.id}", f"epoch={failed['claimEpoch']}"]
    lexed = [*before_claim_of(work), *retry, *worktree[:2], "echo lexed > lexer.txt", *worktree[2:]]
    result = bash(lexed, env, repo)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1])["verified"] == "pass", result.stdout
    with Board(db, reconcile_orphans=False) as board:
        assert board.get_task(coded.id).status == "done"  # the gate passed
    assert not (repo / "lexer.txt").exists()
    ran.update(worktree)

    explain = next(c for c in inline if "--explain" in c)
    result = bash([*before_claim_of(work), explain], env)
    assert result.returncode == exitcodes.IDLE, result.stderr
    idle = json.loads(result.stdout)
    assert idle["task"] is None and "explain" in idle
    ran.add(explain)

    # The reviewer's steps take the oldest work to judge from the inbox, with its verb. The
    # oldest (the parser in review, the coded task unlanded) is the block agent's own, which it
    # may not judge: the step passes over it to another agent's work, every time (it took its own,
    # was refused self_review, and took it again, forever).
    with Board(db, reconcile_orphans=False) as board:
        theirs = board.create_task("someone else's work")
        held = board.claim(theirs.id, "worker-w")
        board.complete(theirs.id, "worker-w", epoch=held.claim_epoch)
        mine = {built.id, coded.id}
        assert [i.task_id for i in board.inbox().items if i.task_id in mine] == [
            built.id,
            coded.id,
        ]
        assert board.inbox().items[-1].task_id == theirs.id  # the newest
    result = bash(review, env, repo)
    assert result.returncode == 0, result.stderr
    with Board(db, reconcile_orphans=False) as board:
        assert board.get_task(theirs.id).status == "done"  # judged by the block's agent
        assert board.get_task(built.id).status == "in_review"  # its own, untouched
        assert board.get_task(coded.id).landed_commit is None
    land = by_command["kanban task land"]
    judge = f"export KANBAN_DB={db} KANBAN_AGENT=judge-z"
    with Board(db, reconcile_orphans=False) as board:
        assert board.get_task(built.id).status == "in_review"  # its builder may not judge it
        board.approve(built.id, "judge-z")
    result = bash([judge, f"id={coded.id}", land], env, repo)  # its gate passed: done, unlanded
    assert result.returncode == 0, result.stderr
    ran.add(land)

    finished = []
    for title in ("judge me", "send me back"):  # work another agent finished, oldest first
        with Board(db, reconcile_orphans=False) as board:
            task = board.create_task(title)
            held = board.claim(task.id, "worker-x")
            board.complete(task.id, "worker-x", epoch=held.claim_epoch)
            finished.append(task.id)
    judged, sent_back = finished
    result = bash(review, env, repo)  # the oldest in review comes first: "judge me"
    assert result.returncode == 0, result.stderr
    ran.update(review)
    reject = by_command["kanban task reject"]
    before_id = [line for line in review if not line.startswith("kanban task")]
    result = bash([*before_id, reject], env)  # now "send me back" is the oldest in review
    assert result.returncode == 0, result.stderr
    ran.add(reject)
    with Board(db, reconcile_orphans=False) as board:
        assert board.get_task(judged).status == "done"
        assert board.get_task(sent_back).status == "todo"
        board.cancel(sent_back)

    with Board(db, reconcile_orphans=False) as board:
        other = board.create_task("Write the parser")
    subprocess.run(["git", "-C", str(repo), "config", "kanban.verify", "true"], check=True)
    built_by_x = [  # under the operator's verify command, set for new worktrees
        f"export KANBAN_DB={db} KANBAN_AGENT=worker-x",
        f"kanban task claim {other.id} >/dev/null",
        f"ws=$(kanban task workspace provision {other.id} --repo .)",
        'cd "$(printf \'%s\' "$ws" | jq -r .worktree.worktreePath)"',
        "echo parsed > parser.txt",
        f"kanban task workspace complete {other.id} >/dev/null",
    ]
    assert bash(built_by_x, env, repo).returncode == 0
    # Its gate passed: done, not in review. The reviewer's steps find it in the inbox and land it
    # (the steps looked only at in_review, then took the id from there).
    result = bash(review, env, repo)
    assert result.returncode == 0, result.stderr
    with Board(db, reconcile_orphans=False) as board:
        assert board.get_task(other.id).landed_commit is not None
    assert (repo / "parser.txt").read_text() == "parsed\n"  # on main, the checkout brought along

    assert ran == set(work) | set(worktree) | set(review) | set(inline)  # every one was run


def test_two_sessions_of_one_runtime_review_each_others_work_from_the_shell(
    repo: Path, db: Path
) -> None:
    """The shell lines exported the runtime's one name, so two Claude Code sessions acted as one
    agent: the second one's review step passed over the first one's work as its own (self_review)
    and judged nothing. Each session's name ends in its runtime's pid (`$PPID`) now: one session
    builds, another (its shell started by another runtime process) approves, under
    `kanban init --per-session`; without it the shell lines keep the runtime's one name."""
    assert shutil.which("jq"), "the instructions use jq; install it (apt-get install jq)"
    ok(kanban_init(repo, db, "--harness", "claude-code", "--per-session"))
    work, _worktree, review = fences(block_of((repo / "AGENTS.md").read_text()))
    env = {key: value for key, value in clean_env().items() if key != "KANBAN_DB"}
    with Board(db, reconcile_orphans=False) as board:
        task = board.create_task("Build the parser")
    built = bash(work, env)  # this session's shell: its runtime is this process
    assert built.returncode == 0, built.stderr
    script = "set -eu\n" + "\n".join(review) + "\n"
    runtime = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"
    judged = subprocess.run(  # another session: its shell started by another runtime process
        [sys.executable, "-c", runtime, "bash", "-c", script],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert judged.returncode == 0, judged.stderr
    with Board(db, reconcile_orphans=False) as board:
        assert board.get_task(task.id).status == "done"
        builder = board.get_task(task.id).holders
        moves = [e for e in board.events(task_id=task.id) if e.kind == "status_changed"]
    assert builder == [f"claude-code-{os.getpid()}"]
    judge = moves[-1].actor
    assert judge is not None and judge.startswith("claude-code-") and judge not in builder


def test_a_json_entry_edited_by_hand_is_refused_though_agents_md_was_not(
    repo: Path, db: Path
) -> None:
    ok(kanban_init(repo, db, "--harness", "claude-code"))
    server = repo / ".mcp.json"
    config = json.loads(server.read_text())
    config["mcpServers"]["kanban"]["env"]["EXTRA"] = "mine"
    server.write_text(json.dumps(config, indent=2) + "\n")
    before = digests(repo)
    for options in ((), ("--tools", "worker")):  # same options, or new ones: still refused
        run = kanban_init(repo, db, "--harness", "claude-code", *options)
        assert run.code == 2 and run.error["reason"] == "edited", str(run)
        assert [f["path"] for f in run.error["files"]] == [".mcp.json"]
        assert '-        "EXTRA": "mine"' in run.error["files"][0]["diff"]
        assert digests(repo) == before


def test_a_repository_set_up_for_two_runtimes_keeps_both_entries_its_own(
    repo: Path, db: Path
) -> None:
    """Found by hand: AGENTS.md recorded only the last MCP entry kanban wrote, so after init
    for Claude Code (agent cc), then Codex (agent cx), a Claude Code init as cc2 refused the
    untouched .mcp.json as edited by hand. It records the entry of each config now."""
    ok(kanban_init(repo, db, "--harness", "claude-code", "--agent", "cc"))
    ok(kanban_init(repo, db, "--harness", "codex", "--agent", "cx"))
    ok(kanban_init(repo, db, "--harness", "cursor", "--agent", "cu"))
    again = ok(kanban_init(repo, db, "--harness", "claude-code", "--agent", "cc2"))
    assert {f["path"]: f["status"] for f in again["files"]}[".mcp.json"] == "updated"
    entry = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["kanban"]
    assert entry["env"]["KANBAN_AGENT"] == "cc2"
    before = digests(repo)
    assert ok(kanban_init(repo, db, "--harness", "claude-code", "--agent", "cc2"))["upToDate"]
    assert digests(repo) == before  # recorded once: a second run changes no byte
    ok(kanban_init(repo, db, "--harness", "cursor", "--agent", "cu2"))  # cu's is still known


def test_many_inits_for_one_runtime_never_forget_anothers_entry(repo: Path, db: Path) -> None:
    """The block kept the four newest entries of any runtime, so after a Cursor init and four Claude
    Code inits with other options the next Cursor init refused the untouched .cursor/mcp.json as
    edited by hand. It keeps one per config now."""
    ok(kanban_init(repo, db, "--harness", "cursor", "--agent", "cu"))
    cursor = (repo / ".cursor/mcp.json").read_bytes()
    for options in ((), ("--tools", "worker"), ("--tools", "reviewer"), ("--role", "qa")):
        ok(kanban_init(repo, db, "--harness", "claude-code", "--agent", "cc", *options))
        ok(kanban_init(repo, db, "--harness", "codex", "--agent", "cx", *options))
    assert (repo / ".cursor/mcp.json").read_bytes() == cursor
    again = ok(kanban_init(repo, db, "--harness", "cursor", "--agent", "cu", "--role", "backend"))
    assert {f["path"]: f["status"] for f in again["files"]}[".cursor/mcp.json"] == "updated"
    before = digests(repo)
    for harness, agent, role in (("claude-code", "cc", "qa"), ("cursor", "cu", "backend")):
        run = kanban_init(repo, db, "--harness", harness, "--agent", agent, "--role", role)
        assert ok(run)["upToDate"], harness
    assert digests(repo) == before  # one entry per config, in one order: no rewrite either way


def test_each_runtime_is_told_its_own_name_in_the_shared_agents_md(repo: Path, db: Path) -> None:
    """Found by hand: AGENTS.md is read by every runtime, and an init for Codex as cx rewrote
    its block to say `KANBAN_AGENT=cx` under Claude Code (whose .mcp.json said cc), so two
    runtimes following the shell lines acted under one name; each init flipped it back. The
    block now records the runtimes set up here and names each one's agent (and role)."""
    ok(kanban_init(repo, db, "--harness", "claude-code", "--agent", "cc"))
    single = block_of((repo / "AGENTS.md").read_text())
    assert "acts as agent `cc`" in single and "in Codex" not in single
    ok(kanban_init(repo, db, "--harness", "codex", "--agent", "c-->x", "--role", "reviewer"))
    block = block_of((repo / "AGENTS.md").read_text())
    assert "in Claude Code as `cc` with tool set `all`" in block
    assert "in Codex as `c-->x` (role `reviewer`) with tool set `all`" in block
    work, _worktree, review = fences(block)
    for lines in (work, review):
        assert f"export KANBAN_DB={db} KANBAN_AGENT=cc" in lines  # the first runtime's
        assert "# in Codex instead: KANBAN_AGENT='c-->x', claim-next --role reviewer" in lines
    assert block.count("-->") == 1 + 1 + 2  # the end of the runtimes line, the prose, the fences
    before = digests(repo)
    for harness, agent, role in (
        ("claude-code", "cc", ()),
        ("codex", "c-->x", ("--role", "reviewer")),
    ):
        assert ok(kanban_init(repo, db, "--harness", harness, "--agent", agent, *role))["upToDate"]
    assert digests(repo) == before  # whichever runs last, the block says both, byte for byte
    env = {key: value for key, value in clean_env().items() if key != "KANBAN_DB"}
    with Board(db, reconcile_orphans=False) as board:
        task = board.create_task("for the first runtime")
    done = bash(work, env)  # the commands run as written, as cc
    assert done.returncode == 0, done.stderr
    with Board(db, reconcile_orphans=False) as board:
        assert board.get_task(task.id).status == "in_review"
        assert board.view(task.id).comments[-1].author_agent_id == "cc"


@pytest.mark.slow  # kanban init run again and again
def test_a_crlf_repository_keeps_every_runtime_and_its_line_endings(repo: Path, db: Path) -> None:
    """With a CRLF AGENTS.md the runtimes line of the block was not found (`$` stops before the
    `\\r`), so each init spoke for its own runtime only and none was ever up to date; a CRLF
    CLAUDE.md importing AGENTS.md got a second import, and a CRLF JSON config got LF lines spliced
    in. Every file keeps CRLF, and a second round of inits changes no byte."""
    crlf = {
        "AGENTS.md": "# Mine\r\n",
        "CLAUDE.md": "# Claude\r\n@AGENTS.md\r\n",
        ".cursor/mcp.json": '{\r\n  "mcpServers": {\r\n    "other": {"command": "x"}\r\n'
        "  }\r\n}\r\n",
    }
    for name, text in crlf.items():
        (repo / name).parent.mkdir(exist_ok=True)
        (repo / name).write_bytes(text.encode())
    runtimes = (("claude-code", "cc"), ("codex", "cx"), ("cursor", "cu"))
    for harness, agent in runtimes:
        ok(kanban_init(repo, db, "--harness", harness, "--agent", agent))
    before = digests(repo)
    for harness, agent in runtimes:
        assert ok(kanban_init(repo, db, "--harness", harness, "--agent", agent))["upToDate"]
    assert digests(repo) == before
    block = block_of((repo / "AGENTS.md").read_bytes().decode().replace("\r\n", "\n"))
    for said in ("in Claude Code as `cc`", "in Codex as `cx`", "in Cursor as `cu`"):
        assert said in block
    assert (repo / "CLAUDE.md").read_bytes() == crlf["CLAUDE.md"].encode()  # imports it already
    for name in ("AGENTS.md", ".cursor/mcp.json"):
        lines = (repo / name).read_bytes().split(b"\n")
        assert lines[-1] == b"" and all(line.endswith(b"\r") for line in lines[:-1]), name
    servers = json.loads((repo / ".cursor/mcp.json").read_text())["mcpServers"]
    assert set(servers) == {"other", "kanban"}


def test_every_command_of_the_loop_about_a_held_task_passes_its_epoch() -> None:
    """The block said to pass the epoch on every call about a held task, and its own `workspace
    provision` line did not (a lapsed claim's leftover process could provision a successor's task
    unfenced)."""
    from kanban.agent_setup.instructions import BLOCK, EXTEND, RELEASE, WORKTREE_COMMANDS

    held = [line for line in WORKTREE_COMMANDS if "kanban task workspace" in line]
    for line in [*held, BLOCK, EXTEND, RELEASE]:
        assert '--epoch "$epoch"' in line, line


def test_codex_is_told_which_folders_its_sandbox_must_allow(repo: Path, db: Path) -> None:
    """Nothing said that Codex's workspace-write sandbox lets the agent write only in the project
    and /tmp, while the board and the worktrees live under ~/.local/state/kanban: init's note says
    so, and the doc it points at names the setting."""
    note = ok(kanban_init(repo, db, "--harness", "codex"))["note"]
    assert "sandbox" in note and "docs/agent-setup.md" in note
    guide = (Path(__file__).parents[2] / "docs" / "agent-setup.md").read_text()
    section = guide[guide.index("## Sandboxed runtimes") :]
    section = section[: section.index("\n## ", 1)]
    for said in ("writable_roots", "[sandbox_workspace_write]", "KANBAN_WORKTREES", "KANBAN_DB"):
        assert said in section, said


def test_claude_code_is_told_to_add_the_worktrees_folder(repo: Path, db: Path) -> None:
    """Claude Code's file tools work in the folder it started in (and the folders added to it), and
    a task's worktree is outside the project, so every edit there asks or is refused. init's note
    says to add the folder; the doc names the settings."""
    note = ok(kanban_init(repo, db, "--harness", "claude-code"))["note"]
    assert "--add-dir" in note and "docs/agent-setup.md" in note
    guide = (Path(__file__).parents[2] / "docs" / "agent-setup.md").read_text()
    section = guide[guide.index("## Sandboxed runtimes") :]
    section = section[: section.index("\n## ", 1)]
    for said in ("claude --add-dir", "additionalDirectories", ".claude/settings.json"):
        assert said in section, said
