"""The system-of-record (SoR) files inside a task's worktree, and the resume state read from them.

A task's state lives in its worktree, not in a chat history: `TASK.md` (what to do),
`task-progress.md` (done / broken / next), `DECISIONS.json`, `init.sh` (set-up, and the
`VERIFY_CMD`/`START_CMD` the gate and a newcomer use), `VERIFICATION.md` (the gate's log), at
clock-out `AGENT_HANDOFF.json`, and `REVIEW.md` (reviewers' comments anchored to lines, written by
kanban). A fresh runtime or a person resumes from these alone.

These files are bookkeeping, not deliverables: diffs and the "is there any work?" test exclude them.
Reads go through `read_sor_file`, which accepts only these names and never follows a symlink, so a
builder cannot make the board (or its TUI drawer) read another path by planting a link.
"""

import json
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

TASK_MD = "TASK.md"
PROGRESS_MD = "task-progress.md"
DECISIONS_JSON = "DECISIONS.json"
INIT_SH = "init.sh"
VERIFICATION_MD = "VERIFICATION.md"
HANDOFF_JSON = "AGENT_HANDOFF.json"
REVIEW_MD = "REVIEW.md"  # the reviewers' comments anchored to lines, written by kanban

# In the order the drawer shows them. The scaffold writes all but the handoff and the review.
SOR_FILES: tuple[str, ...] = (
    TASK_MD,
    REVIEW_MD,
    PROGRESS_MD,
    DECISIONS_JSON,
    INIT_SH,
    VERIFICATION_MD,
    HANDOFF_JSON,
)
SCAFFOLD_FILES: tuple[str, ...] = (TASK_MD, PROGRESS_MD, DECISIONS_JSON, INIT_SH, VERIFICATION_MD)

SOR_READ_LIMIT = 256 * 1024  # bytes shown per file; a larger file is truncated with a note


# -- writing ---------------------------------------------------------------------------------------


def write_file(folder: Path, name: str, content: str, *, executable: bool = False) -> None:
    """Write one SoR file atomically (temp file, then rename). A symlink in its place is replaced,
    never followed, so a planted link cannot redirect the write outside the worktree."""
    assert name in SOR_FILES, name
    target = folder / name
    temp = folder / f".{name}.{os.getpid()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    temp.unlink(missing_ok=True)  # a crashed writer's leftover
    fd = os.open(temp, flags, 0o755 if executable else 0o644)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(content)
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _one_line(text: str) -> str:
    return " ".join(text.split())


def task_md(
    task_id: str,
    title: str,
    description: str | None,
    *,
    branch: str,
    base_commit: str,
    base_label: str,
    repo: str,
) -> str:
    body = (description or "").strip() or "_No description._"
    return (
        f"# {task_id}: {_one_line(title)}\n\n"
        f"{body}\n\n"
        f"- Task: {task_id}\n"
        f"- Branch: {branch}\n"
        f"- Branched from: {base_commit} ({_one_line(base_label)})\n"
        f"- Repository: {repo}\n\n"
        "This worktree is the task's system of record. Keep `task-progress.md` current, record\n"
        "decisions in `DECISIONS.json`, put set-up steps and `VERIFY_CMD` in `init.sh`, and write\n"
        "`AGENT_HANDOFF.json` when you clock out, so anyone can resume from these files alone.\n"
    )


def progress_md(task_id: str) -> str:
    return (
        f"# Progress of {task_id}\n\n"
        "A fresh runtime resumes from this file when there is no AGENT_HANDOFF.json: keep it"
        " current.\n\n"
        "## Done\n\n"
        "## Broken or unverified\n\n"
        "## Next\n\n"
    )


def shell_quoted(value: str) -> str:
    """A one-line value as `init_commands` reads it back: single quotes, or double quotes with
    `\\ " $ ``` escaped when the value holds a single quote."""
    if "'" not in value:
        return f"'{value}'"
    return '"' + re.sub(r'([\\"$`])', r"\\\1", value) + '"'


def init_sh(task_id: str, verify_command: str | None = None, *, fixed_by: str = "") -> str:
    """The scaffold's `init.sh`. `verify_command` is the operator's (the repository's or the
    board's setting): written here at provision time, it is the only command the gate runs under
    `KANBAN_VERIFY_FROM=operator`, read back from the scaffold commit, not from the worktree."""
    origin = (
        f"# VERIFY_CMD was fixed at provision time by the operator ({fixed_by}).\n"
        if verify_command
        else ""
    )
    return (
        "#!/usr/bin/env bash\n"
        f"# {task_id}: set up this worktree so the work can be built and verified.\n"
        "# The verification gate runs VERIFY_CMD in this worktree (unless AGENT_HANDOFF.json\n"
        "# names commands.verify); START_CMD is how to start the work. Keep each on one line,\n"
        "# in single quotes, e.g. VERIFY_CMD='pytest -q'.\n"
        f"{origin}"
        "set -euo pipefail\n"
        'cd "$(dirname "$0")"\n\n'
        f"VERIFY_CMD={shell_quoted(verify_command or '')}\n"
        "START_CMD=''\n\n"
        "# Set-up steps (install dependencies, build...) go below.\n"
    )


def verification_md(task_id: str) -> str:
    return (
        f"# Verification of {task_id}\n\n"
        "The verification gate appends one entry per run: the command, how it ended, the tail of\n"
        "its output and how to reproduce it.\n"
    )


def append_verification_entry(folder: Path, entry: str) -> None:
    """Append a run's summary to VERIFICATION.md (recreated if the builder deleted it)."""
    current = read_sor_file(folder, VERIFICATION_MD, limit=8 * 1024 * 1024)
    if current is None:
        current = ""
    if current and not current.endswith("\n"):
        current += "\n"
    write_file(folder, VERIFICATION_MD, f"{current}\n{entry.rstrip()}\n")


# -- reading ---------------------------------------------------------------------------------------


def read_sor_file(folder: Path, name: str, *, limit: int = SOR_READ_LIMIT) -> str | None:
    """The text of one SoR file, or None when it is absent or not a regular file. Only the fixed
    names are accepted and a symlink is never followed (`O_NOFOLLOW`); a FIFO cannot block the read
    (`O_NONBLOCK`, then the regular-file check)."""
    if name not in SOR_FILES:
        raise ValueError(f"not a system-of-record file: {name!r}")
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(folder / name, flags)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = b""
        while len(data) <= limit:
            chunk = os.read(fd, limit + 1 - len(data))
            if not chunk:
                break
            data += chunk
    except OSError:
        return None
    finally:
        os.close(fd)
    text = data[:limit].decode("utf-8", errors="replace")
    if len(data) > limit:
        text += f"\n[... truncated at {limit} bytes]\n"
    return text


def read_sor_files(folder: Path) -> dict[str, str]:
    """Every SoR file present in a worktree folder, by name, in drawer order."""
    files = {}
    for name in SOR_FILES:
        text = read_sor_file(folder, name)
        if text is not None:
            files[name] = text
    return files


# `NAME='value'`, `NAME="value"` (simple escapes) or `NAME=word`, optionally exported, one line.
_ASSIGNMENT = re.compile(
    r"""[ \t]*(?:export[ \t]+)?(?P<name>[A-Z_]+)=
    (?:'(?P<single>[^']*)'|"(?P<double>(?:[^"\\$`]|\\.)*)"|(?P<bare>[^\s'"`$;&|<>()\\]*))
    [ \t]*(?:\#.*)?""",
    re.VERBOSE,
)
_ANY_ASSIGNMENT = re.compile(r"[ \t]*(?:export[ \t]+)?(?P<name>[A-Z_]+)=")


def init_commands(text: str | None) -> tuple[dict[str, str], list[str]]:
    """`VERIFY_CMD`, `START_CMD` and `INIT_CMD` as `init.sh` assigns them (the last assignment
    wins, as in the shell), plus warnings for assignments too clever to read back safely. The file
    is never executed to find out."""
    values: dict[str, str] = {}
    warnings: list[str] = []
    wanted = {"VERIFY_CMD": "verify", "START_CMD": "start", "INIT_CMD": "init"}
    for line in (text or "").splitlines():
        loose = _ANY_ASSIGNMENT.match(line)
        if loose is None or loose["name"] not in wanted:
            continue
        match = _ASSIGNMENT.fullmatch(line)
        key = wanted[loose["name"]]
        if match is None:
            warnings.append(
                f"init.sh: could not read {loose['name']} (use one line in single quotes)"
            )
            values.pop(key, None)
            continue
        if match["single"] is not None:
            value = match["single"]
        elif match["double"] is not None:
            value = re.sub(r"\\(.)", r"\1", match["double"])
        else:
            value = match["bare"] or ""
        values[key] = value.strip()
    return values, warnings


def commands_from_init(text: str | None) -> tuple[dict[str, str], list[str]]:
    values, warnings = init_commands(text)
    commands = {
        "init": values.get("init") or "./init.sh",
        "verify": values.get("verify", ""),
        "start": values.get("start", ""),
    }
    return commands, warnings


_HEADING = re.compile(r"#{1,6}\s+(?P<title>.+?)\s*#*\s*")
_ITEM = re.compile(r"\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(?P<text>.+?)\s*")


def parse_progress(text: str | None) -> dict[str, Any]:
    """`task-progress.md` read back: the bullets under Done, Broken (or unverified), Next and
    Blocked headings."""
    sections: dict[str, list[str]] = {"done": [], "broken": [], "next": [], "blocked": []}
    current: str | None = None
    for line in (text or "").splitlines():
        heading = _HEADING.fullmatch(line)
        if heading:
            title = heading["title"].lower()
            current = next(
                (key for key in ("done", "broken", "next", "blocked") if title.startswith(key)),
                "broken" if "unverified" in title else None,
            )
            continue
        if current is None or not line.strip():
            continue
        item = _ITEM.fullmatch(line)
        if item:
            sections[current].append(item["text"])
        elif current in ("next", "blocked") and not sections[current]:
            sections[current].append(line.strip())
    return {
        "done": sections["done"],
        "broken": sections["broken"],
        "next": sections["next"][0] if sections["next"] else None,
        "whyBlocked": " ".join(sections["blocked"]) or None,
    }


def parse_handoff(raw: str | None) -> tuple[dict[str, Any] | None, list[str]]:
    """`AGENT_HANDOFF.json`'s text parsed and validated, as camelCase JSON, or None with a warning
    saying why it could not be used."""
    if raw is None:
        return None, []
    from ..models import AgentHandoff  # pydantic only when there is a handoff to check

    try:
        handoff = AgentHandoff.model_validate(json.loads(raw))
    except ValueError as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        return None, [f"AGENT_HANDOFF.json is invalid and was ignored: {first}"]
    return handoff.to_json(), []


def read_handoff(folder: Path) -> tuple[dict[str, Any] | None, list[str]]:
    """The worktree's `AGENT_HANDOFF.json`, parsed and validated (see `parse_handoff`)."""
    return parse_handoff(read_sor_file(folder, HANDOFF_JSON))


def resume_state(folder: Path) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The resume state rebuilt from the worktree alone: the handoff when present and valid, else
    `task-progress.md` + `init.sh`. Returns (resume, handoff)."""
    return resume_state_from(lambda name: read_sor_file(folder, name))


def resume_state_from(
    read: Callable[[str], str | None],
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """`resume_state` over any source of SoR texts: a live folder, or a paused branch's files."""
    init_text = read(INIT_SH)
    init_cmds, warnings = commands_from_init(init_text)
    handoff, handoff_warnings = parse_handoff(read(HANDOFF_JSON))
    warnings = handoff_warnings + warnings
    if handoff is not None:
        commands = dict(handoff["commands"])
        if not commands.get("verify"):
            commands["verify"] = init_cmds["verify"]
        if not commands.get("start"):
            commands["start"] = init_cmds["start"]
        resume = {
            "hasHandoff": True,
            "done": list(handoff["completedSubtasks"]),
            "broken": list(handoff["brokenOrUnverified"]),
            "next": handoff["nextBestStep"] or None,
            "whyBlocked": handoff["whyBlocked"],
            "commands": commands,
            "warnings": [*handoff["warnings"], *warnings],
            "lastRuntime": handoff["runtime"],
            "nativeSessionId": handoff["nativeSessionId"],
        }
        return resume, handoff
    progress = parse_progress(read(PROGRESS_MD))
    if init_text is None:
        warnings.append("init.sh is missing")
    resume = {
        "hasHandoff": False,
        "done": progress["done"],
        "broken": progress["broken"],
        "next": progress["next"],
        "whyBlocked": progress["whyBlocked"],
        "commands": init_cmds,
        "warnings": warnings,
        "lastRuntime": None,
        "nativeSessionId": None,
    }
    return resume, None
