"""Guarantee 7: no hostile repository path, task id or ref reaches git as an option, and nothing
planted in a worktree's place is followed. Table-driven, through the surfaces agents use (the CLI
and `kanban serve`), with every git command they run recorded by a `git` shim first on PATH.

- Every hostile `--repo`/`repoPath`, task id, `--base-ref` and `--base-sha` is refused (CLI exit 2,
  HTTP 4xx), and nothing is created: no worktrees folder, no branch, the repository untouched, no
  file a payload would have made, no workspace row.
- In the commands git does run, a value the user chose (a ref, a sha) only ever follows `--` or
  `--end-of-options`; the one command that takes neither (`check-ref-format`) only gets a value
  checked not to start with `-`; a title is only ever an option's value (`-m`); the repository
  path is only ever the working directory.
- A symlink (or FIFO) planted where kanban writes (the handoff, VERIFICATION.md, a lock file, the
  locks folder, the checkout itself) is replaced, never followed, and one planted where it reads
  (TASK.md, init.sh...) is never read through: the file it points to is untouched and unread.
"""

import json
import os
import signal
import subprocess
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from boardlib import Board
from boardlib.worktrees.layout import Layout, board_key
from tests.cli.conftest import KANBAN, clean_env
from tests.cli.warm import run_kanban
from tests.http.warm import popen_serve
from tests.worktrees.conftest import git, make_repo, repo_state
from tests.worktrees.test_handoff import FULL
from tests.worktrees.test_provision import HOSTILE_REFS

pytestmark = pytest.mark.slow  # hostile paths through real git and the CLI

OPTION_ENDS = ("--", "--end-of-options")


@dataclass
class Site:
    tmp: Path
    db: Path
    repo: Path
    root: Path
    pwned: Path
    log: Path
    env: dict[str, str]

    def kanban(
        self, *args: str, stdin: str | None = None, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        return run_kanban(  # a process forked warm (tests/cli/warm.py): ~150 runs in this file
            [str(KANBAN), *args],
            cwd=cwd or self.tmp,  # never a repository of ours unless the test says so
            env=self.env,
            input=stdin,
        )

    def task(self, title: str = "work", *, holder: str = "ada") -> str:
        with Board(self.db) as board:
            task = board.create_task(title)
            board.claim(task.id, holder)
        return task.id

    def git_calls(self) -> list[list[str]]:
        """Every git command run, after the `-C <folder>` the board puts first (its folder as
        git's own option, absolute: never a value git could read as another option)."""
        raw = self.log.read_bytes() if self.log.exists() else b""
        calls = []
        for record in raw.split(b"\x1e"):
            if not record:
                continue
            call = [arg.decode() for arg in record.split(b"\x1f")[:-1]]
            if call[:1] == ["-C"]:
                assert Path(call[1]).is_absolute(), call
                call = call[2:]
            calls.append(call)
        return calls

    def untouched(self) -> tuple[Any, ...]:
        """What a refusal must leave as it was."""
        with Board(self.db, read_only=True) as board:
            rows = [board.workspaces(task.id) for task in board.all_tasks()]
        return repo_state(self.repo), git(self.repo, "branch", "--list"), self.root.exists(), rows


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    shim = tmp_path / "shim"
    shim.mkdir()
    log = tmp_path / "git.log"
    real_git = next(
        Path(folder) / "git"
        for folder in os.environ["PATH"].split(os.pathsep)
        if (Path(folder) / "git").is_file()
    )
    record = """{ for a in "$@"; do printf '%s\\037' "$a"; done; printf '\\036'; }"""
    (shim / "git").write_text(f'#!/bin/sh\n{record} >> "$KANBAN_GIT_LOG"\nexec "{real_git}" "$@"\n')
    (shim / "git").chmod(0o755)
    repo = make_repo(tmp_path / "my repo -v")  # a space and a dash: only ever a cwd
    git(repo, "branch", "release-1.0")
    db = tmp_path / "board.db"
    Board(db).close()
    env = clean_env(
        KANBAN_DB=str(db),
        KANBAN_WORKTREES=str(tmp_path / "state" / "worktrees"),
        KANBAN_GIT_LOG=str(log),
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_CONFIG_NOSYSTEM="1",
        PATH=f"{shim}{os.pathsep}{os.environ['PATH']}",
    )
    pwned = tmp_path / "pwned"
    yield Site(tmp_path, db, repo, tmp_path / "state" / "worktrees", pwned, log, env)
    assert not pwned.exists(), "a payload ran"


def hostile_repos(site: Site) -> list[tuple[str, str]]:
    plain = site.tmp / "plain"
    plain.mkdir(exist_ok=True)
    bare = site.tmp / "bare.git"
    if not bare.exists():
        git(site.tmp, "init", "-q", "--bare", str(bare))
    return [
        ("an option", f"--upload-pack=touch {site.pwned}"),
        ("a -C option", "-C/"),
        ("empty", ""),
        ("blank", "   "),
        ("a newline and an option", f"{site.repo}\n--help"),
        ("a tab", f"{site.repo}\t"),
        ("missing", str(site.tmp / "missing")),
        ("a plain folder", str(plain)),
        ("a bare repository", str(bare)),
        ("a file", str(site.repo / "README.md")),
        ("too long", "/" + "a" * 4001),
        ("a shell payload", f"$(touch {site.pwned})"),
    ]


HOSTILE_SHAS = ["--all", "-1234abcd", "xyz123", "12", "0" * 65, "HEAD", "abcd efgh", "a1b2;c3"]
MORE_REFS = ["--end-of-options", "-", "--", "HEAD@{0}", "refs/heads/../../x", "$(touch pwned)"]
HOSTILE_IDS = [
    "../TASK-1",
    "TASK-1/../..",
    ".hidden",
    "TASK-1.lock",
    "TASK 1",
    "TASK-1;touch pwned",
    "x" * 200,
    "TASK-999",
    "-rf",
    "--repo=/",
    "TASK-1\n",
    "",
]


def refused_cli(
    site: Site,
    args: list[str],
    reasons: tuple[str, ...],
    *,
    before: tuple[Any, ...],
    cwd: Path | None = None,
) -> None:
    """Refused, and everything is still as it was `before` the first refusal (the state a
    refusal leaves is the next one's "before": taken once, not twice a command)."""
    run = site.kanban(*args, cwd=cwd)
    assert run.returncode == 2 and run.stdout == "", (args, run.stdout, run.stderr)
    error = json.loads(run.stderr.strip().splitlines()[-1])
    assert error["reason"] in reasons, (args, error)
    assert site.untouched() == before, args


def test_hostile_repos_refs_shas_and_ids_are_refused_by_the_cli(site: Site) -> None:
    task_id = site.task()
    before = site.untouched()
    provision = ["task", "workspace", "provision"]
    for label, repo in hostile_repos(site):
        args = [*provision, "--repo", repo, "--", task_id]
        refused_cli(site, args, ("invalid_input",), before=before)
        assert label
        # From inside a repository too: an empty or relative path must not mean "here".
        refused_cli(site, args, ("invalid_input",), before=before, cwd=site.repo)
    for ref in [*HOSTILE_REFS, *MORE_REFS]:
        args = [*provision, "--repo", str(site.repo), f"--base-ref={ref}", "--", task_id]
        refused_cli(site, args, ("invalid_input",), before=before)
    for sha in HOSTILE_SHAS:
        args = [*provision, "--repo", str(site.repo), f"--base-sha={sha}", "--", task_id]
        refused_cli(site, args, ("invalid_input",), before=before)
    for ident in HOSTILE_IDS:
        for verb in ("provision", "detail", "pause", "complete", "resume"):
            args = ["task", "workspace", verb]
            if verb == "provision":
                args += ["--repo", str(site.repo)]
            reasons = ("invalid_input", "not_found", "usage")
            refused_cli(site, [*args, "--", ident], reasons, before=before)
    # None of it reached git as an option: refusals come before git runs at all, or git was
    # only asked about a value it cannot read as one.
    for call in site.git_calls():
        assert call[0] in ("version", "check-ref-format", "rev-parse"), call


def start_server(site: Site) -> tuple["subprocess.Popen[str]", str]:
    server = popen_serve([str(KANBAN), "serve", "--port", "0"], cwd=site.tmp, env=site.env)
    assert server.stdout is not None
    line = server.stdout.readline()
    assert line, server.stderr.read() if server.stderr else ""
    return server, str(json.loads(line)["listening"])


def test_hostile_repos_refs_shas_and_ids_are_refused_over_http(site: Site) -> None:
    task_id = site.task()
    server, url = start_server(site)
    try:
        with httpx.Client(base_url=url, timeout=60) as http:

            def refused(path: str, body: dict[str, Any]) -> None:
                before = site.untouched()
                answer = http.post(path, json=body)
                assert answer.status_code in (400, 404, 422), (path, body, answer.text)
                assert site.untouched() == before, (path, body)

            where = f"/api/board/{task_id}/workspace"
            for _label, repo in hostile_repos(site):
                refused(where, {"repoPath": repo})
            refused(where, {"repoPath": "x\x00y"})
            for ref in [*HOSTILE_REFS, *MORE_REFS]:
                if ref == "":
                    continue  # in a seed body, "" is the optional field left out: the default
                refused(where, {"repoPath": str(site.repo), "baseRef": ref})
            for sha in HOSTILE_SHAS:
                refused(where, {"repoPath": str(site.repo), "baseSha": sha})
            for ident in HOSTILE_IDS:
                if not ident or "/" in ident or "\n" in ident:
                    continue  # not one path segment: the router answers 404 before any route
                quoted = urllib.parse.quote(ident, safe="")
                refused(f"/api/board/{quoted}/workspace", {"repoPath": str(site.repo)})
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
    for call in site.git_calls():
        assert call[0] in ("version", "check-ref-format", "rev-parse"), call


def user_values_follow_the_end_of_options(
    calls: list[list[str]], *, values: list[str], title: str, repo: Path
) -> None:
    """The argument discipline, checked on every recorded git command."""
    for call in calls:
        assert str(repo) not in call, f"the repository path became an argument: {call}"
        for index, arg in enumerate(call):
            if title in arg:
                assert call[index - 1] == "-m", f"the title outside -m: {call}"
            for value in values:
                if value not in arg:
                    continue
                if call[0] == "check-ref-format":  # takes neither `--` nor `--end-of-options`
                    assert index == len(call) - 1 and not arg.startswith("-"), call
                    continue
                ends = [i for i, a in enumerate(call) if a in OPTION_ENDS]
                assert ends and ends[0] < index, f"{value!r} before the end of options: {call}"


def test_user_values_only_ever_follow_the_end_of_options(site: Site) -> None:
    """A whole workspace life through the CLI, with values that look like options where a value
    may: a ref and a sha the user chose, a title that is an option, a repository path with a dash
    and a space. Every git command run is then checked."""
    title = "--exec=touch pwned"
    first = site.task(title)
    second = site.task("pinned")
    sha = git(site.repo, "rev-parse", "release-1.0")[:10]
    assert (
        site.kanban(
            "task",
            "workspace",
            "provision",
            "--repo",
            str(site.repo),
            "--base-ref",
            "release-1.0",
            first,
        ).returncode
        == 0
    )
    handoff = json.dumps({**FULL, "commands": {**FULL["commands"], "verify": "true"}})
    for args, stdin in (
        (["task", "workspace", "handoff", first, "--file", "-", "--agent", "ada"], handoff),
        (["task", "workspace", "detail", first], None),
        (["task", "workspace", "resume", first], None),
        (["task", "workspace", "pause", first], None),
        (["task", "workspace", "provision", "--repo", str(site.repo), first], None),
        (
            ["task", "workspace", "provision", "--repo", str(site.repo), "--base-sha", sha, second],
            None,
        ),
        (["task", "workspace", "complete", second, "--agent", "ada"], None),
        (["task", "workspace", "gc"], None),
    ):
        run = site.kanban(*args, stdin=stdin)
        assert run.returncode == 0, (args, run.stderr)
    calls = site.git_calls()
    assert any(call[0] == "worktree" for call in calls)  # the shim saw the real work
    user_values_follow_the_end_of_options(
        calls, values=["release-1.0", sha], title=title, repo=site.repo
    )


# -- planted links ------------------------------------------------------------------------------


def provisioned(site: Site, **env: str) -> tuple[str, Path]:
    task_id = site.task()
    run = site.kanban("task", "workspace", "provision", "--repo", str(site.repo), task_id)
    assert run.returncode == 0, run.stderr
    return task_id, Path(json.loads(run.stdout)["worktree"]["worktreePath"])


def victim(site: Site, name: str = "victim.txt") -> Path:
    path = site.tmp / name
    path.write_text("the operator's file: keep me\n")
    return path


PLANTED_WRITES = ["AGENT_HANDOFF.json", "task-lock", "locks-folder", "VERIFICATION.md"]


@pytest.mark.parametrize("where", PLANTED_WRITES)
def test_a_link_planted_where_kanban_writes_is_replaced_not_followed(
    site: Site, where: str
) -> None:
    task_id, checkout = provisioned(site)
    target = victim(site)
    locks = checkout.parent / ".locks"
    lock_name = (
        Layout(checkout.parent.parent).lock_path(site.repo, task_id, board_key(site.db)).name
    )
    if where == "AGENT_HANDOFF.json":
        (checkout / where).symlink_to(target)
        run = site.kanban(
            "task",
            "workspace",
            "handoff",
            task_id,
            "--file",
            "-",
            "--agent",
            "ada",
            stdin=json.dumps(FULL),
        )
        assert not (checkout / where).is_symlink() and json.loads((checkout / where).read_text())
    elif where == "task-lock":
        lock = locks / lock_name
        lock.unlink(missing_ok=True)
        lock.symlink_to(target)
        run = site.kanban("task", "workspace", "pause", task_id)
        assert not lock.is_symlink()
    elif where == "locks-folder":
        outside = site.tmp / "outside-locks"
        outside.mkdir()
        (outside / lock_name).symlink_to(target)
        for leftover in locks.iterdir():
            leftover.unlink()
        locks.rmdir()
        locks.symlink_to(outside)
        run = site.kanban("task", "workspace", "pause", task_id)
        assert not locks.is_symlink() and locks.is_dir()
        assert sorted(p.name for p in outside.iterdir()) == [lock_name]
    else:  # the gate appends its verdict to VERIFICATION.md
        (checkout / "app.py").write_text("def answer():\n    return 43\n")
        (checkout / where).unlink()
        (checkout / where).symlink_to(target)
        handoff = json.dumps(
            {**FULL, "brokenOrUnverified": [], "commands": {**FULL["commands"], "verify": "true"}}
        )
        assert (
            site.kanban(
                "task",
                "workspace",
                "handoff",
                task_id,
                "--file",
                "-",
                "--agent",
                "ada",
                stdin=handoff,
            ).returncode
            == 0
        )
        run = site.kanban("task", "workspace", "complete", task_id, "--agent", "ada")
        assert json.loads(run.stdout)["verification"]["status"] == "pass", run.stdout
    assert run.returncode == 0, run.stderr
    assert target.read_text() == "the operator's file: keep me\n"


@pytest.mark.parametrize("name", ["TASK.md", "task-progress.md", "DECISIONS.json", "init.sh"])
def test_a_link_planted_where_kanban_reads_is_never_read_through(site: Site, name: str) -> None:
    """detail, resume and the gate read the SoR files: a planted link to a secret (or to an
    init.sh naming a payload as the verify command) is neither shown nor run."""
    task_id, checkout = provisioned(site)
    secret = site.tmp / "secret.txt"
    secret.write_text(f"VERIFY_CMD='touch {site.pwned}'\nthe private key\n")
    (checkout / name).unlink()
    (checkout / name).symlink_to(secret)
    for verb in ("detail", "resume"):
        run = site.kanban("task", "workspace", verb, task_id)
        assert run.returncode == 0, run.stderr
        assert "private key" not in run.stdout
    (checkout / "app.py").write_text("def answer():\n    return 43\n")
    run = site.kanban("task", "workspace", "complete", task_id, "--agent", "ada")
    assert run.returncode == 0, run.stderr
    assert "private key" not in run.stdout
    assert secret.read_text().endswith("the private key\n")


def test_a_checkout_replaced_by_a_link_is_unlinked_not_followed(site: Site) -> None:
    task_id, checkout = provisioned(site)
    assert site.kanban("task", "workspace", "pause", task_id).returncode == 0
    outside = site.tmp / "elsewhere"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep\n")
    checkout.symlink_to(outside, target_is_directory=True)
    run = site.kanban("task", "workspace", "provision", "--repo", str(site.repo), task_id)
    assert run.returncode == 0, run.stderr
    assert not checkout.is_symlink() and (checkout / "TASK.md").is_file()
    assert sorted(p.name for p in outside.iterdir()) == ["precious.txt"]
    assert (outside / "precious.txt").read_text() == "keep\n"
