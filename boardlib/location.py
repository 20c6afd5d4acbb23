"""Where a board lives: a SQLite file, or a PostgreSQL URL. The one place that tells them apart.

`board_location("board.db")` is a `Path`; `board_location("postgresql://kanban@db/board")` is a
`DatabaseUrl`. Both `--db` and `KANBAN_DB` go through here, so no surface guesses.

A `DatabaseUrl` never shows its password: `str()`, `repr()` and `display` give the URL with the
password replaced by `***` (in the user part and in a `password=` query parameter), so a URL can be
put into an error, a log line or the TUI's header without a second thought. Only the store reads
`conninfo`, the URL as typed, and hands it to libpq, which then applies its own rules for
everything the URL leaves out: `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGPASSFILE` (else
`~/.pgpass`), `PGSSLMODE`, `PGSERVICE` and the rest, exactly as `psql` would.
"""

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import BoardError, Reason, database_line

# urllib.parse and hashlib are imported where used: a SQLite agent's claim path never needs them
# (together ~10 ms of its start-up).

POSTGRES_SCHEMES = ("postgresql", "postgres")
_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<rest>.*)$", re.DOTALL)
# `scheme:/rest`: a URL that lost a slash on its way through `Path()` (`Path("postgresql://u@h/db")`
# is `postgresql:/u@h/db`). Two letters at least, so a drive letter (`C:/boards`) stays a path.
_MANGLED_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]+):/(?P<rest>.*)$", re.DOTALL)
_SECRET_PARAMETERS = frozenset({"password", "sslpassword"})
# libpq's connection keywords: a location that starts with one and `=` is a keyword/value
# connection string (`host=db dbname=boards`), not a file name.
LIBPQ_KEYWORDS = frozenset(
    {
        "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "require_auth",
        "channel_binding", "connect_timeout", "client_encoding", "options", "application_name",
        "fallback_application_name", "keepalives", "keepalives_idle", "keepalives_interval",
        "keepalives_count", "tcp_user_timeout", "replication", "gssencmode", "sslmode",
        "requiressl", "sslcompression", "sslcert", "sslkey", "sslpassword", "sslcertmode",
        "sslrootcert", "sslcrl", "sslcrldir", "sslsni", "requirepeer", "ssl_min_protocol_version",
        "ssl_max_protocol_version", "krbsrvname", "gsslib", "gssdelegation", "service",
        "target_session_attrs", "load_balance_hosts",
    }
)  # fmt: skip
_CONNINFO_START = re.compile(r"^\s*([A-Za-z_]+)\s*=")
_LAST_PORT = re.compile(r":(\d*)$")  # a host list's last port (`[::1]` ends in `]`, never taken)
MASK = "***"


@dataclass(frozen=True)
class DatabaseUrl:
    """A PostgreSQL board's URL. Printing it never prints the password."""

    conninfo: str = field(repr=False)

    @property
    def display(self) -> str:
        return redact_url(self.conninfo)

    @property
    def password(self) -> str | None:
        """The password written in the URL itself, if any (libpq may still find one elsewhere)."""
        from urllib.parse import parse_qsl, urlsplit

        parts = urlsplit(self.conninfo)
        from_query = dict(parse_qsl(parts.query)).get("password")
        return parts.password or from_query or None

    @property
    def identity(self) -> str:
        """A stable name for this board without credentials (host, port, database, options): the
        key of its worktree folders and its lock-file-free identity. A host list
        (`h1:5432,h2:5433`, which `urlsplit` cannot take a port from) keeps its hosts and their
        ports in order as written, lowercased; the last port, or PGPORT, ends it as it ends a
        single host, so a list that once parsed (`h1,h2:5433`) keeps the key it had."""
        from urllib.parse import parse_qsl, urlencode, urlsplit

        parts = urlsplit(self.conninfo)
        hosts = parts.netloc.rpartition("@")[2].lower()
        if "," in hosts:
            last_port = _LAST_PORT.search(hosts)
            host = hosts[: last_port.start()] if last_port else hosts
            port = (last_port[1] if last_port else "") or os.environ.get("PGPORT", "")
        else:
            host = parts.hostname or os.environ.get("PGHOST", "")
            port = parts.port or os.environ.get("PGPORT", "")
        query = sorted(
            (k, v) for k, v in parse_qsl(parts.query) if k not in _SECRET_PARAMETERS | {"user"}
        )
        return f"postgresql://{host}:{port}{parts.path}?{urlencode(query)}"

    def scrub(self, text: str) -> str:
        """`text` (an error message, say) with this URL's password removed wherever it appears."""
        secret = self.password
        text = text.replace(self.conninfo, self.display)
        if secret:
            text = text.replace(secret, MASK)
        return text

    def __str__(self) -> str:
        return self.display

    def __repr__(self) -> str:
        return f"DatabaseUrl({self.display!r})"


BoardLocation = Path | DatabaseUrl


def is_database_url(raw: str | os.PathLike[str]) -> bool:
    match = _URL.match(os.fspath(raw))
    return match is not None and match["scheme"].lower() in POSTGRES_SCHEMES


def board_location(raw: "str | os.PathLike[str] | DatabaseUrl") -> BoardLocation:
    """A board location from what a user typed: `postgresql://...` (or `postgres://...`) is a
    PostgreSQL board, `sqlite:///abs/path` and anything without a scheme a SQLite file. Anything
    else shaped like a URL (`scheme://`, or `scheme:/` as `Path()` leaves a URL) is refused
    (`unsupported_backend`), never taken for a folder name: a board file is never made from it."""
    if isinstance(raw, DatabaseUrl):
        return raw
    text = os.fspath(raw)
    if not text.strip():  # `--db "$BOARD"` with BOARD unset: never "." (the current folder)
        raise BoardError(
            Reason.INVALID_INPUT,
            'the board location is empty (an unset variable in --db "$VAR"?): give a board '
            "file path or a postgresql:// URL, or leave --db out to use KANBAN_DB or the default",
            field="db",
        )
    match = _URL.match(text)
    if match is None:
        return _path_or_refusal(text)
    scheme = match["scheme"].lower()
    if scheme in POSTGRES_SCHEMES:
        _refuse_unparseable(text)
        return DatabaseUrl(text)
    if scheme == "sqlite" and match["rest"].startswith("/"):
        return _nameable(Path(match["rest"]).expanduser())
    raise BoardError(
        Reason.UNSUPPORTED_BACKEND,
        f"{scheme!r} boards are not supported: --db/KANBAN_DB takes a SQLite file path "
        "(or sqlite:///path) or a postgresql:// URL",
        scheme=scheme,
    )


def _path_or_refusal(text: str) -> Path:
    """A SQLite file path, unless `text` is a URL that lost a slash (`scheme:/...`) or a libpq
    keyword/value string (`host=... dbname=...`): that is never a file name, and a password in it
    would be printed by `no_board` and made a file name by `db init`."""
    keyword = _CONNINFO_START.match(text)
    if keyword is not None and keyword[1].lower() in LIBPQ_KEYWORDS:
        raise BoardError(
            Reason.INVALID_INPUT,
            "a libpq keyword/value string (host=... dbname=...) is not a board location: give "
            "the PostgreSQL board as a URL, postgresql://user@host:port/dbname (a password in "
            "PGPASSWORD or ~/.pgpass, or in the URL)",
            field="db",
        )
    mangled = _MANGLED_URL.match(text)
    if mangled is None:
        return _nameable(Path(text).expanduser())
    scheme = mangled["scheme"].lower()
    if scheme == "sqlite":  # `Path("sqlite:///abs/board.db")`: still the file /abs/board.db
        return _nameable(Path("/" + mangled["rest"]).expanduser())
    hint = (
        f" (a {scheme}:// URL that went through a file path lost a slash: pass the URL as text)"
        if scheme in POSTGRES_SCHEMES
        else ""
    )
    raise BoardError(
        Reason.UNSUPPORTED_BACKEND,
        f"{scheme + ':/'!r} is not a board location{hint}: --db/KANBAN_DB takes a SQLite file "
        "path (or sqlite:///path) or a postgresql:// URL",
        scheme=scheme,
    )


def _refuse_unparseable(url: str) -> None:
    """A postgresql:// URL neither Python's parser (every later look at it) nor libpq's (when the
    driver is installed) can read, or whose port is not a number, is refused as input
    (`invalid_input`), without its password, rather than failing later as an exception."""
    from urllib.parse import urlsplit

    try:
        urlsplit(url)
        problem = _libpq_problem(url)
    except ValueError as error:
        problem = str(error) or type(error).__name__
    if problem is None:
        return
    for secret in _written_passwords(url):
        problem = problem.replace(secret, MASK)
    raise BoardError(
        Reason.INVALID_INPUT,
        f"{redact_url(url)} is not a valid postgresql:// URL ({problem}): --db/KANBAN_DB takes "
        "postgresql://user@host:port/dbname?param=value",
        field="db",
    )


def _libpq_problem(url: str) -> str | None:
    """What libpq's own parser finds wrong with the URL (a bracket not closed, an unknown query
    parameter), a port that is not a number (libpq reads it only when connecting, and then says
    the host cannot be resolved), or an option value libpq refuses; None without the driver, or
    when it parses."""
    try:
        from psycopg import ProgrammingError
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:  # opening the board says what to install
        return None
    try:
        parsed = conninfo_to_dict(url)
    except ProgrammingError as error:
        return database_line(str(error)) or "unparseable"
    ports = str(parsed.get("port") or "").split(",")  # a host list has a port list
    for port in ports:
        port = port.strip()
        if port and not (port.isascii() and port.isdigit()):
            return f"the port must be a number, not {port!r}"
    return _libpq_option_problem(parsed, len(ports))


# A `hostaddr` no address parses as: libpq gives up on it before any socket or name look-up, with a
# message that quotes it.
_NO_ADDRESS = "kanban-option-check"


def _libpq_option_problem(parsed: dict[str, Any], ports: int) -> str | None:
    """What libpq refuses in the URL's option values (`sslmode=bogus`, an unknown `service`, a
    host list and a port list that do not pair up) before it would connect. Its parser takes any
    value; only starting a connection checks them, and then every try fails alike, which once read
    as `database_unavailable`. So a connection is started with every host's address replaced by
    one that cannot parse: libpq checks the options, then stops at the first address, quoting it,
    having touched no network. Any other verdict is about the options."""
    from psycopg import pq
    from psycopg.conninfo import make_conninfo

    listed = parsed.get("hostaddr") or parsed.get("host")
    hosts = len(str(listed).split(",")) if listed else ports
    # `host` as written, or empty so that PGHOST's list does not pair up with this one
    no_address = ",".join([_NO_ADDRESS] * hosts)
    trial = make_conninfo("", **{**parsed, "host": parsed.get("host", ""), "hostaddr": no_address})
    conn = pq.PGconn.connect_start(trial.encode())
    try:
        message = conn.get_error_message().strip()
    finally:
        conn.finish()
    if not message or f'"{_NO_ADDRESS}"' in message:
        return None
    return database_line(message)


def _written_passwords(url: str) -> list[str]:
    """The passwords as written in a URL that may not parse: the user part's and a query
    parameter's, raw and decoded (an error message may quote either)."""
    from urllib.parse import unquote

    rest = url.split("://", 1)[-1]
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    found = [authority.rpartition("@")[0].partition(":")[2]]
    for pair in rest.partition("?")[2].split("&"):
        key, _, value = pair.partition("=")
        if unquote(key) in _SECRET_PARAMETERS:
            found.append(value)
    return [secret for raw in found if raw for secret in {raw, unquote(raw)}]


# What one board is on disk: the SQLite file, its write-ahead log and shared memory, and the lock
# file writers queue on (store/writer_queue.py).
WRITERS_SUFFIX = "-writers"
BOARD_FILE_SUFFIXES = ("", "-wal", "-shm", WRITERS_SUFFIX)
# What the file systems kanban runs on can name (Linux's and macOS's NAME_MAX and PATH_MAX, in
# bytes), less the room the board's side files need (and SQLite's "-journal"). A longer path is
# refused as input here, before a call stats or creates it and fails with ENAMETOOLONG (an OSError
# no caller expects), and so is a NUL, which no path can hold.
_SIDE_FILE_ROOM = max(len(suffix) for suffix in (*BOARD_FILE_SUFFIXES, "-journal"))
_NAME_MAX_BYTES = 255 - _SIDE_FILE_ROOM
_PATH_MAX_BYTES = 4095 - _SIDE_FILE_ROOM


def _nameable(path: Path) -> Path:
    raw = os.fsencode(path)
    longest = max(len(part) for part in raw.split(b"/"))
    if b"\0" in raw or len(raw) > _PATH_MAX_BYTES or longest > _NAME_MAX_BYTES:
        raise BoardError(
            Reason.INVALID_INPUT,
            "a board location no file system can name: "
            + ("it holds a NUL" if b"\0" in raw else
               f"{len(raw)} bytes, a name of {longest} (at most {_PATH_MAX_BYTES} and "
               f"{_NAME_MAX_BYTES})"),
            field="db",
        )  # fmt: skip
    return path


def display_location(location: BoardLocation) -> str:
    """A location as it may be printed anywhere."""
    return location.display if isinstance(location, DatabaseUrl) else str(location)


def location_key(location: BoardLocation) -> str:
    """12 hex characters naming one board (its worktrees live under this key)."""
    import hashlib

    name = location.identity if isinstance(location, DatabaseUrl) else os.path.realpath(location)
    return hashlib.sha1(name.encode()).hexdigest()[:12]


def redact_url(url: str) -> str:
    """The URL as typed with any password (user part or query parameter) replaced by `***`. Put
    back together by hand: `urlunsplit` drops the `//` of a URL without a host
    (`postgresql:///boards`, host from PGHOST), which then reads as a mangled location."""
    from urllib.parse import parse_qsl, quote, urlencode, urlsplit

    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, hostinfo = netloc.rsplit("@", 1)
            if ":" in userinfo:
                user = userinfo.split(":", 1)[0]
                netloc = f"{user}:{MASK}@{hostinfo}"
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            if any(key in _SECRET_PARAMETERS for key, _ in pairs):
                query = urlencode(
                    [(k, MASK if k in _SECRET_PARAMETERS else v) for k, v in pairs],
                    safe="*",
                    quote_via=quote,
                )
        scheme = url.split("://", 1)[0]  # as typed (urlsplit lowers it)
        return (
            f"{scheme}://{netloc}{parts.path}"
            + (f"?{query}" if query else "")
            + (f"#{parts.fragment}" if parts.fragment else "")
        )
    except ValueError:
        return f"{url.split('://', 1)[0]}://{MASK}"  # unparseable: show nothing of it


def absolute_location(location: BoardLocation) -> BoardLocation:
    """A file path made absolute (`~` expanded); a URL as it is."""
    return location if isinstance(location, DatabaseUrl) else location.expanduser().absolute()


def location_exists(location: BoardLocation) -> bool:
    """Whether there may be a board to open: a file that exists, or any URL (a server is not
    probed here: opening it tells). Not an answer to print: `known_to_exist` is."""
    return True if isinstance(location, DatabaseUrl) else location.exists()


def known_to_exist(location: BoardLocation) -> bool | None:
    """Whether something is at the location, as far as can be told without opening it: a file's
    existence, None for a URL (only connecting could tell, and nothing is opened to look)."""
    return None if isinstance(location, DatabaseUrl) else location.exists()
