"""A throwaway PostgreSQL cluster for the test session: the distribution's own binaries, a temp
folder, a free loopback port, stopped and deleted at the end.

Postgres refuses to run as root, and CI runs as root: then the cluster runs as the `postgres`
system user (`runuser -u postgres --`), in a folder that user owns (pytest's own temp root is mode
700 and out of its reach). Durability is switched off (fsync, synchronous_commit,
full_page_writes): nothing here must survive a crash, and the suite runs several times faster.
The folder is in /dev/shm when it has room: every board is some eighty new files, and on a disk
that the suite keeps filling and emptying (ext4) creating a file cost more server CPU than the
rest of a board's schema (benchmarks/new_board.py).

Without server binaries (or, as root, without `runuser` or the `postgres` user) the Postgres half
of the suite cannot run. `missing_prerequisite` says why in one sentence, before anything is
started; tests/conftest.py turns it into one failure in CI (`KANBAN_CI=1`, set by `.ci/run`, or
the conventional `CI`) and one skip reason locally. It never passes silently.
"""

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SERVER_SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "300",
    "shared_buffers": "64MB",
    "max_wal_size": "256MB",  # the WAL it keeps between checkpoints: memory, in /dev/shm
    "min_wal_size": "32MB",
}

IN_MEMORY = Path("/dev/shm")
IN_MEMORY_ROOM = 4 << 30  # free space it needs: ~0.6 MB a board, WAL to 256 MB, headroom


def cluster_parent() -> Path:
    """Where the cluster's folder goes: memory (tmpfs) when it has the room, else /tmp."""
    try:
        stat = os.statvfs(IN_MEMORY)
    except OSError:
        return Path("/tmp")
    room = stat.f_bavail * stat.f_frsize
    writable = IN_MEMORY.is_dir() and os.access(IN_MEMORY, os.W_OK | os.X_OK)
    return IN_MEMORY if writable and room >= IN_MEMORY_ROOM else Path("/tmp")


def in_ci() -> bool:
    return os.environ.get("KANBAN_CI") == "1" or os.environ.get("CI", "").lower() in ("1", "true")


def find_binaries() -> Path | None:
    """`KANBAN_PG_BIN` (that folder only), else the newest /usr/lib/postgresql/*/bin, else
    `pg_ctl` on PATH."""
    explicit = os.environ.get("KANBAN_PG_BIN")
    if explicit:
        folder = Path(explicit)
        return folder if (folder / "initdb").exists() and (folder / "pg_ctl").exists() else None
    candidates = sorted(
        (Path(p) for p in glob.glob("/usr/lib/postgresql/*/bin")),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(on_path).parent)
    for folder in candidates:
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            return folder
    return None


MISSING = (
    "PostgreSQL server binaries not found (initdb, pg_ctl): install the distribution's package "
    "(apt-get install -y postgresql) or point KANBAN_PG_BIN at their folder"
)


NO_RUNUSER = (
    "runuser not found (on PATH, /usr/sbin or /sbin): as root the test cluster runs as the "
    "postgres user through it; install util-linux, point KANBAN_RUNUSER at it, or run the tests "
    "as a non-root user"
)
NO_POSTGRES_USER = (
    "the postgres system user does not exist: as root the test cluster runs as that user "
    "(the distribution's postgresql package creates it), or run the tests as a non-root user"
)


def find_runuser() -> str | None:
    """`KANBAN_RUNUSER`, else `runuser` on PATH, else in /usr/sbin or /sbin (a PATH without the
    sbin folders is common outside a login shell)."""
    explicit = os.environ.get("KANBAN_RUNUSER")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    return shutil.which("runuser") or shutil.which("runuser", path="/usr/sbin:/sbin")


def missing_prerequisite() -> str | None:
    """Why no cluster can be started here, in one sentence; None when it can."""
    if find_binaries() is None:
        return MISSING
    if os.geteuid() == 0:
        if find_runuser() is None:
            return NO_RUNUSER
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return NO_POSTGRES_USER
    return None


PASSWORD_ROLE = "kanban_secret"


def _write_as(cluster: "Cluster", path: Path, text: str) -> None:
    path.write_text(text)
    if cluster.as_postgres:
        shutil.chown(path, "postgres", "postgres")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Cluster:
    folder: Path
    port: int
    binaries: Path
    as_postgres: bool
    runuser: str = "runuser"

    @property
    def url(self) -> str:
        return self.url_of("postgres")

    def url_of(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = list(args)
        if self.as_postgres:
            command = [self.runuser, "-u", "postgres", "--", *command]
        return subprocess.run(command, capture_output=True, text=True, check=check, timeout=120)

    def stop(self) -> None:
        self._run(
            str(self.binaries / "pg_ctl"), "-D", str(self.folder / "data"), "-m", "immediate",
            "-w", "stop", check=False,
        )  # fmt: skip
        shutil.rmtree(self.folder, ignore_errors=True)


def start_cluster(
    binaries: Path, settings: dict[str, str] | None = None, parent: Path | None = None
) -> Cluster:
    """initdb + pg_ctl start on a free port, in a new folder under `parent` (default:
    `cluster_parent()`); retried on a port taken in between."""
    as_postgres = os.geteuid() == 0
    folder = Path(tempfile.mkdtemp(prefix="kanban-pg-", dir=parent or cluster_parent()))
    if as_postgres:
        shutil.chown(folder, "postgres", "postgres")
    cluster = Cluster(folder, 0, binaries, as_postgres, find_runuser() or "runuser")
    data = folder / "data"
    done = cluster._run(
        str(binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
        "--no-sync", "-E", "UTF8", "--locale", "C", check=False,
    )  # fmt: skip
    if done.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {done.stderr.strip()}")
    # One role must prove a password (tests of .pgpass, PGPASSWORD and redaction); all else: trust.
    hba = data / "pg_hba.conf"
    hba_text = f"host all {PASSWORD_ROLE} 127.0.0.1/32 scram-sha-256\n" + hba.read_text()
    _write_as(cluster, hba, hba_text)
    options = {**SERVER_SETTINGS, **(settings or {}), "unix_socket_directories": str(folder)}
    last_error = ""
    for _ in range(5):
        cluster.port = _free_port()
        flags = " ".join(f"-c {key}={value}" for key, value in options.items())
        started = cluster._run(
            str(binaries / "pg_ctl"), "-D", str(data), "-l", str(folder / "server.log"),
            "-o", f"-p {cluster.port} {flags}", "-w", "-t", "60", "start", check=False,
        )  # fmt: skip
        if started.returncode == 0:
            return cluster
        last_error = started.stderr.strip() or (folder / "server.log").read_text()[-2000:]
        time.sleep(0.2)
    cluster.stop()
    raise RuntimeError(f"pg_ctl start failed: {last_error}")
