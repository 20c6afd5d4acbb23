"""The table of docs/guarantees.md, written from a soak's JSON report (never by hand).

    pytest tests/chaos/test_soak.py --soak-seconds 1800 --soak-report soak.json
    python -m tests.chaos.guarantees soak.json

The second command keeps the report as `benchmarks/results/soak.json` (beside the benchmarks'
stored results) and rewrites the part of docs/guarantees.md between its two marker comments: each
promise, the tests that prove it, and the figures of that soak. tests/chaos/test_guarantees.py
fails when that part is not exactly what this script writes from the kept report, or when a test
it names does not exist.
"""

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "guarantees.md"
KEPT = REPO / "benchmarks" / "results" / "soak.json"
BEGIN = "<!-- guarantees:begin (written by python -m tests.chaos.guarantees; do not edit) -->"
END = "<!-- guarantees:end -->"

# (promise, [test node ids that prove it])
PROMISES: list[tuple[str, list[str]]] = [
    (
        "Agents killed with SIGKILL at any moment (half the time inside a board call), frozen past "
        "their lease and restarted under the same name lose no work and never double-assign it: "
        "every task is done exactly once, no task ever has two live holders, no late write of a "
        "lapsed holder is accepted (it is `stale_claim`), every run is closed (`succeeded`, or "
        "`timed_out`/`cancelled` with a recovery tombstone), `integrity_check` and `kanban db "
        "check` stay clean. Library, CLI and HTTP workers alike, on SQLite and on PostgreSQL.",
        [
            "tests/chaos/test_soak.py::test_kill_freeze_restart_soak",
            "tests/chaos/test_replay.py",
        ],
    ),
    (
        "`kanban serve` killed with SIGKILL mid-flight and restarted on the same file: its orphan "
        "pass releases exactly the runs whose leases lapsed in the outage (tombstoned), keeps "
        "every live claim, a second pass releases nothing, and the clients finish the plan.",
        [
            "tests/chaos/test_restart.py::"
            "test_a_killed_server_restarts_and_its_orphan_pass_releases_exactly_the_dead_runs"
        ],
    ),
    (
        "A writer stuck inside its transaction costs the others their 1.5 s budget, never a hang "
        "or a half write: each write succeeds after it or is refused `busy` (exit 4, HTTP 503) "
        "with nothing written; reads answer throughout; another program's exclusive lock makes "
        "reads `busy` within the budget too, and the live board says unreadable and recovers.",
        [
            "tests/chaos/test_starvation.py",
            "tests/tui/test_live.py::test_locked_board_goes_unreadable_and_recovers",
        ],
    ),
    (
        "A board file that is missing, read-only for this user (the file or its folder), "
        "unreadable for this user (the file, or a folder on its way), a folder, a FIFO, a "
        "socket or a device, not SQLite, another program's database, cut short, or written by "
        "a newer kanban gets one clear error from the "
        "CLI, `kanban tui`, `kanban mcp` and `kanban serve` (or is opened read-only, saying why), "
        "and is left byte for byte as it was.",
        ["tests/chaos/test_torn_files.py"],
    ),
    (
        "A full disk refuses writes cleanly (`disk_full`: CLI exit 2, HTTP 507) with nothing "
        "half-written, loses nothing committed, and the board works again once space is freed.",
        [
            "tests/chaos/test_disk_full.py::"
            "test_a_full_disk_refuses_writes_cleanly_keeps_what_was_committed_and_recovers"
        ],
    ),
    (
        "Whatever a caller sends (every library entry point of the board and of the worktrees, "
        "every command line, every REST body, every MCP tool argument, any keys pressed in the "
        "terminal board) gets an answer or a typed refusal, never a 500 or a crash; a refusal "
        "writes nothing (not to the board, nor to the "
        "repository or a task's worktree); text is stored as given and drawn inert on the board "
        "and in `--format table`.",
        [
            "tests/chaos/test_fuzz_library.py",
            "tests/chaos/test_fuzz_worktrees.py",
            "tests/chaos/test_fuzz_cli.py",
            "tests/chaos/test_fuzz_surfaces.py",
            "tests/chaos/test_fuzz_tui.py",
            "tests/tui/test_inert_rendering.py",
        ],
    ),
    (
        "No hostile repository path, task id or ref reaches git as an option: each is refused "
        "with nothing created; user values only ever follow `--`/`--end-of-options`; a symlink "
        "planted where kanban writes is replaced, where it reads never read through.",
        ["tests/chaos/test_worktree_paths.py"],
    ),
    (
        "Over HTTP, off loopback a token is required; a wrong or missing token gets the same 401 "
        "in the same time however close the guess; a body over 2 MB is refused without being read "
        "whole; an agent's token cannot act as another agent on any route.",
        ["tests/chaos/test_http_guards.py", "tests/http/test_serve.py"],
    ),
    (
        "A landing killed with SIGKILL at any step, or at any moment inside its git and verify "
        "commands, is never half-landed: the branch holds the old tip or a commit the board's "
        "intent names, and the next call settles it (landed once, recorded, the checkout of the "
        "branch brought along) or redoes it. A landing whose lease ran out cannot move the "
        "branch afterwards (the branch is fenced). Refused landings leave every file, `git "
        "status` and every ref as they were.",
        ["tests/chaos/test_land_kills.py", "tests/worktrees/test_land.py"],
    ),
    (
        "`kanban watch --consumer NAME` SIGKILLed and restarted 20 times while agent processes "
        "work the board hands every matching event to its command, in order, with no gap: the "
        "cursor moves only after the command exited 0, so the only repeat is a restart handing on "
        "again the one event its killed predecessor had run; a delivery that keeps failing is "
        "held in the inbox, never skipped; events a consumer has not read are never purged. On "
        "SQLite and on PostgreSQL.",
        [
            "tests/chaos/test_watch_kills.py::test_every_event_once_across_20_kills",
            "tests/cli/test_watch.py",
        ],
    ),
]


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def render(report: dict[str, Any]) -> str:
    """The generated part of the page, from a soak report (`tests.chaos.soak`)."""
    f = report["figures"]
    machine = report.get("machine", {})
    config = report.get("config", {})
    surfaces = ", ".join(f"{n} {s}" for s, n in sorted(f["surfaces"].items()))
    runs = ", ".join(f"{_count(n)} {s}" for s, n in sorted(f["runs"].items()))
    refused = ", ".join(f"{_count(n)} {r}" for r, n in sorted(f["lateCallsRefused"].items()))
    load = machine.get("loadBefore", ["?"])[0]
    lines = [
        BEGIN,
        "What holds however agents fail, each promise with the tests that prove it (in CI, "
        "`tests/chaos/`; the soak runs there until 20 kills and 2 holders frozen past their lease "
        "have happened, and as long as you like with "
        "`pytest tests/chaos/test_soak.py --soak-seconds N`).",
        "",
        "| promise | proven by |",
        "| --- | --- |",
    ]
    for promise, tests in PROMISES:
        lines.append(f"| {promise} | {'<br>'.join(f'`{test}`' for test in tests)} |")
    lines += [
        "",
        f"**The last long soak** ({report.get('startedAt', '?')}, {config.get('backend', 'sqlite')}"
        f", {machine.get('cores', '?')} cores, load average {load} at the start; "
        f"{'passed' if report.get('ok') else 'FAILED'}):",
        "",
        "| workers | kills (inside a call) | freezes | tasks | minutes | lost | double-held "
        "| late writes accepted |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        f"| {f['workers']} ({surfaces}) + {f['reviewers']} reviewers "
        f"| {_count(f['kills'])} ({_count(f['killsInsideACall'])}) | {_count(f['freezes'])} "
        f"| {_count(f['tasks'])} | {f['minutes']} | {f['lost']} | {f['doubleHeld']} "
        f"| {f['lateWritesAccepted']} |",
        "",
        f"Leases of {f['leaseMs']} ms; {_count(f['claims'])} claims, "
        f"{_count(f['leaseExpiries'])} leases expired and released; runs: {runs}; "
        f"late calls refused: {refused or 'none'}; {_count(f['calls'])} board calls, "
        f"{_count(f['busyAnswers'])} of them answered busy. Reproduce: `pytest "
        f"tests/chaos/test_soak.py --soak-seconds {round(f['soakSeconds'])} --soak-report "
        "soak.json && python -m tests.chaos.guarantees soak.json`.",
        END,
    ]
    return "\n".join(lines)


def replace_section(page: str, section: str) -> str:
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + section + tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.chaos.guarantees", description=__doc__)
    parser.add_argument("report", type=Path, help="a soak's JSON report")
    parser.add_argument("--page", type=Path, default=PAGE)
    args = parser.parse_args(argv)
    report = json.loads(args.report.read_text())
    if report.get("kind") != "kanban-soak":
        parser.error(f"{args.report} is not a soak report")
    if args.report.resolve() != KEPT.resolve():
        shutil.copyfile(args.report, KEPT)
    args.page.write_text(replace_section(args.page.read_text(), render(report)))
    print(f"wrote the guarantees of {args.page} from {args.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
