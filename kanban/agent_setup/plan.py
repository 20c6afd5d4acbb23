"""What `kanban init` would write, file by file, and writing it.

`plan` reads each file the runtime uses and computes its new text; nothing is written. A file
whose kanban part was edited by hand is returned as refused (with the diff the change would
make) unless `force`. `writing` then writes every changed file, all or none: `check` refuses
first what the file system would refuse (a typed `BoardError`), every new text is staged in a
temp file beside its file and renamed over it (its mode kept, through a symlink to the file it
points at), and a failure midway puts every file back as it was.
"""

import difflib
import errno
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boardlib.errors import BoardError, Reason

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
from .instructions import Briefing, Identity, agents_block, claude_block, read_runtimes


@dataclass(frozen=True)
class Setup:
    harness: str
    repo: Path
    briefing: Briefing

    def server_args(self) -> list[str]:
        role = ["--role", self.briefing.role] if self.briefing.role else []
        session = ["--per-session"] if self.briefing.per_session else []
        return ["mcp", "--tools", self.briefing.tool_set, *role, *session]

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


_IMPORTS_AGENTS = re.compile(r"^@(\./)?AGENTS\.md[ \t]*\r?$", re.MULTILINE)  # CRLF too


def _read(repo: Path, target: Target) -> str | None:
    path = repo / target.path
    try:
        if not path.exists():
            if path.is_symlink():
                raise unreadable(target.path, "it is a symlink to nothing")
            return None
        if not path.is_file():
            raise unreadable(target.path, "it is not a regular file")
        return path.read_bytes().decode("utf-8")  # as it is: no newline translation
    except UnicodeDecodeError:
        raise unreadable(target.path, "it is not UTF-8 text") from None
    except PermissionError as error:  # the file, or a folder on its way, refuses this user
        raise _os_refusal(target.path, error) from None
    except OSError as error:
        raise unreadable(target.path, error.strerror or str(error)) from None


def _written_entries(repo: Path) -> tuple[str, ...]:
    """The digests of the MCP entries the AGENTS.md block says kanban wrote."""
    try:
        text = (repo / "AGENTS.md").read_bytes().decode("utf-8")
        block = find_block(text, "markdown")
    except (OSError, UnicodeDecodeError, Edited):
        return ()
    return block.entries if block is not None and not block.edited else ()


def _kanban_entry(repo: Path, target: Target) -> str | None:
    """The digest of the `kanban` entry in the JSON config `target`, if it has one (a config
    that cannot be read has none here: its own runtime's init refuses it)."""
    try:
        text = _read(repo, target)
        servers = json.loads(text or "{}").get("mcpServers", {})
        entry = servers.get(SERVER_NAME)
    except (BoardError, ValueError, AttributeError):
        return None
    return entry_digest(entry) if isinstance(entry, dict) else None


def _entries_recorded(setup: Setup, written: tuple[str, ...]) -> str | None:
    """What the AGENTS.md block records as kanban's MCP entries once this init is written: one
    per JSON config a runtime reads here, in the runtimes' order. This runtime's is the entry it
    writes; another's is the one in its file now, while that is kanban's (one of `written`).
    The four newest of any runtime were kept, so a few Claude Code inits pushed Cursor's untouched
    entry out, and the next Cursor init refused it."""
    digests = []
    for harness in HARNESSES.values():
        for target in harness.targets:
            if target.kind != "mcp_json":
                continue
            if harness.name == setup.harness:
                digests.append(entry_digest(setup.server_entry()))
            elif (found := _kanban_entry(setup.repo, target)) is not None and found in written:
                digests.append(found)
    return ",".join(dict.fromkeys(digests)) or None


def _recorded_runtimes(text: str | None) -> dict[str, Identity]:
    """The runtimes the AGENTS.md block in `text` speaks for (none when there is no block, or
    its markers do not pair up: that refusal is `with_block`'s to make)."""
    try:
        block = find_block(text, "markdown") if text is not None else None
    except Edited:
        return {}
    return read_runtimes(block.body) if block is not None else {}


def _new_text(setup: Setup, target: Target, before: str | None, *, force: bool) -> str:
    harness = HARNESSES[setup.harness]
    if target.kind == "agents":
        runtimes = _recorded_runtimes(before)
        runtimes[setup.harness] = Identity.of(setup.briefing)
        ordered = {name: runtimes[name] for name in HARNESSES if name in runtimes}
        body = agents_block(setup.briefing, ordered)
        recorded = _entries_recorded(setup, _written_entries(setup.repo))
        return with_block(before, body, "markdown", force=force, entry=recorded)
    if target.kind == "claude":
        if before is not None and _IMPORTS_AGENTS.search(before):
            return before  # it imports AGENTS.md already: a second import would read it twice
        return with_block(before, claude_block(), "markdown", force=force)
    entry = setup.server_entry(stdio_type=harness.stdio_type)
    if target.kind == "mcp_json":
        written = _written_entries(setup.repo)
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


def _pending(changes: list[Change]) -> list[Change]:
    return [change for change in changes if change.status != "up_to_date"]


def _destination(repo: Path, relative: str) -> Path:
    """The file a change writes: the path itself, or the file a symlink there points at (the
    link stays)."""
    path = repo / relative
    return path.resolve() if path.is_symlink() else path


def _shown(repo: Path, path: Path) -> str:
    """`path` as the messages name it: relative to the repository when inside it."""
    try:
        return path.relative_to(repo).as_posix()
    except ValueError:
        return str(path)


def _refused(
    reason: Reason, file: str, why: str, not_restored: list[str] | None = None
) -> BoardError:
    if not_restored:  # a rename back that failed too: say which files are not as they were
        outcome = f"kanban init could not put back {', '.join(not_restored)}"
    else:
        outcome = "kanban init changed nothing"
    return BoardError(reason, f"{file}: {why}; {outcome}", file=file, not_restored=not_restored)


def check(repo: Path, changes: list[Change]) -> None:
    """Refuse, before a byte is written, a plan the file system would refuse: for every file to
    write, its folder must be a folder (or creatable: the nearest existing one a folder) this
    user may write in, and the file itself, if there is one, a regular file it may write. A
    refusal is a `BoardError` naming the file: `invalid_input` for a folder where a file must be
    or a file where a folder must be, `read_only` for what this user may not write,
    `permission_denied` for a folder it may not enter."""
    for change in _pending(changes):
        try:
            _check_one(repo, change.path)
        except OSError as error:
            raise _os_refusal(change.path, error) from None


def _check_one(repo: Path, relative: str) -> None:
    path = _destination(repo, relative)
    if path.exists():
        if not path.is_file():
            raise _refused(Reason.INVALID_INPUT, relative, "it is not a regular file")
        if not os.access(path, os.W_OK):
            raise _refused(Reason.READ_ONLY, relative, "it is read-only for this user")
    elif path.is_symlink():
        raise _refused(Reason.INVALID_INPUT, relative, "it is a symlink to nothing")
    folder = path.parent
    while not folder.exists():  # to be created, with the missing folders above it
        if folder.is_symlink():
            shown = _shown(repo, folder)
            raise _refused(Reason.INVALID_INPUT, relative, f"{shown} is a symlink to nothing")
        folder = folder.parent
    shown = _shown(repo, folder) if folder != repo else "the repository folder"
    if not folder.is_dir():
        why = f"{shown} is a file, not a folder"
        raise _refused(Reason.INVALID_INPUT, relative, why)
    if not os.access(folder, os.W_OK | os.X_OK):
        why = f"{shown} is read-only for this user"
        raise _refused(Reason.READ_ONLY, relative, why)


_READ_ONLY = {errno.EACCES, errno.EPERM, errno.EROFS}
_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_SHAPE = {errno.ENOTDIR, errno.EISDIR, errno.EEXIST, errno.ELOOP, errno.ENAMETOOLONG}


def _os_refusal(
    file: str, error: OSError, *, writing: bool = False, not_restored: list[str] | None = None
) -> BoardError:
    """The typed refusal of an operating-system error met checking or writing `file`."""
    why = error.strerror or type(error).__name__
    where = f"{why}: {error.filename}" if error.filename and not writing else why
    if error.errno in _READ_ONLY:
        if error.errno != errno.EROFS and not writing:  # checking: a folder it may not enter
            why = f"this user may not read it or a folder on its way ({where})"
            reason = Reason.PERMISSION_DENIED
        else:
            reason, why = Reason.READ_ONLY, f"this user may not write it ({where})"
    elif error.errno in _FULL:
        reason, why = Reason.DISK_FULL, f"there is no room to write it ({where})"
    elif error.errno in _SHAPE:
        reason, why = Reason.INVALID_INPUT, f"it cannot be written there ({where})"
    else:
        reason, why = Reason.INVALID_INPUT, f"the system refused to write it ({where})"
    return _refused(reason, file, why, not_restored or None)


@dataclass
class _Step:
    file: str  # as the plan names it
    path: Path  # the file written (a symlink's target)
    temp: Path | None = None  # its new text, until renamed over it
    backup: Path | None = None  # its previous bytes and mode (None: there was no file)
    replaced: bool = False


class _Writing:
    """Files written all or none: every new text and every previous one staged beside its file
    first, then the renames; `restore` puts back what was renamed and removes the rest."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.steps: list[_Step] = []
        self.folders: list[Path] = []  # made by this run, outermost first
        self.at = ""  # the file being written, for the refusal

    def stage(self, change: Change) -> None:
        self.at = change.path
        path = _destination(self.repo, change.path)
        step = _Step(change.path, path)
        self.steps.append(step)
        self._make_folders(path.parent)
        if path.exists():
            mode = stat.S_IMODE(path.stat().st_mode)
            step.backup = _staged(path, "bak", path.read_bytes(), mode)
        else:
            mode = 0o666 & ~_umask()
        step.temp = _staged(path, "tmp", change.after.encode("utf-8"), mode)

    def _make_folders(self, folder: Path) -> None:
        missing: list[Path] = []
        while not folder.exists():
            missing.append(folder)
            folder = folder.parent
        for made in reversed(missing):
            made.mkdir()
            self.folders.append(made)

    def write(self, changes: list[Change]) -> None:
        """Stage every change, then rename each over its file; a failure is restored and
        refused."""
        try:
            for change in changes:
                self.stage(change)
            self.commit()
        except OSError as error:
            failed = self.restore()
            raise _os_refusal(self.at, error, writing=True, not_restored=failed) from error

    def commit(self) -> None:
        for step in self.steps:
            self.at = step.file
            assert step.temp is not None
            os.replace(step.temp, step.path)
            step.temp, step.replaced = None, True

    def restore(self) -> list[str]:
        """Every file as it was before this run; the files that could not be put back."""
        failed: list[str] = []
        for step in reversed(self.steps):
            if not step.replaced:
                continue
            try:
                if step.backup is not None:
                    os.replace(step.backup, step.path)
                    step.backup = None
                else:
                    step.path.unlink()
                step.replaced = False  # a second restore leaves it alone
            except OSError:  # its previous bytes stay in the backup, named in the refusal
                kept = f" (its previous bytes are in {step.backup})" if step.backup else ""
                failed.append(f"{step.file}{kept}")
                step.backup = None
        self.finish()
        for folder in reversed(self.folders):
            with suppress(OSError):  # not empty (something else wrote there), or gone: leave it
                folder.rmdir()
        self.folders = []
        return failed

    def finish(self) -> None:
        """Remove the staged files left (the backups, once every rename is done)."""
        for step in self.steps:
            for staged in (step.temp, step.backup):
                if staged is not None:
                    with suppress(OSError):
                        staged.unlink(missing_ok=True)
            step.temp = step.backup = None


def _staged(path: Path, kind: str, data: bytes, mode: int) -> Path:
    """`data` in a new temp file beside `path`, with `mode`."""
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f".{kind}", dir=path.parent)
    temp = Path(name)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temp, mode)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp


@contextmanager
def writing(repo: Path, changes: list[Change]) -> Iterator[None]:
    """Write every changed file, all or none, then run the body (creating the board).

    `check` refuses first what the file system would refuse. Then each new text goes to a temp
    file beside its file (each existing file's bytes and mode to another), and only then is each
    temp file renamed over its file (through a symlink, to the file it points at). Should a
    write fail, or the body raise, every file written is put back (its previous bytes and mode,
    or removed if it is new) and the folders made are removed: the repository is as it was. A
    write the operating system refuses is a typed refusal (`read_only`, `disk_full`...)."""
    check(repo, changes)
    run = _Writing(repo)
    try:
        run.write(_pending(changes))
        yield
    except BaseException:
        run.restore()  # a failed write was restored already: then this does nothing
        raise
    run.finish()


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
