"""Who is calling: Bearer tokens, and the identity each one stands for.

Three ways to run the server:
- **open** (no token): only sensible on loopback. Anyone who can connect is the operator for seed
  003's routes, and the lease verbs take the agent from the body, as seed 003's claim does.
- **one shared token** (`--token` / `KANBAN_TOKEN`): every route but `/healthz` needs
  `Authorization: Bearer <token>`; callers are otherwise as in open mode.
- **per-caller tokens** (`--tokens FILE`): each token is an identity, `agent:NAME` (optionally with
  the roles it may claim for) or `operator:NAME`. The identity comes from the token, never from
  the body, so an agent cannot claim, heartbeat or judge as someone else, and builder-is-not-judge
  holds across machines.

Tokens are compared by their SHA-256 digests with `hmac.compare_digest`, against every known token
(no early exit), so the time taken says nothing about how much of a guess was right.
"""

import functools
import hashlib
import hmac
import ipaddress
import json
import os
import stat
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from boardlib.actors import OPERATOR, operator_named
from boardlib.errors import ServerReason

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

IdentityKind = Literal["open", "agent", "operator"]

# Routes anyone may call, token or not: a load balancer's liveness probe carries no secrets.
PUBLIC_PATHS = frozenset({"/healthz"})
NAME_MAX = 200


class TokenFileError(ValueError):
    """The tokens file cannot be used; the message names the line and what is wrong."""


@dataclass(frozen=True, slots=True)
class Identity:
    """The caller, as its token says. `open` is any caller of a server without per-caller
    tokens: it acts as the operator on seed routes and names its agent in the body."""

    kind: IdentityKind
    name: str | None = None
    roles: frozenset[str] = frozenset()

    @property
    def actor(self) -> str:
        """The actor string the board records and judges by (see `boardlib.actors`)."""
        if self.kind == "agent":
            assert self.name is not None
            return self.name
        if self.kind == "operator":
            assert self.name is not None
            return operator_named(self.name)
        return OPERATOR

    @property
    def is_agent(self) -> bool:
        return self.kind == "agent"

    @property
    def label(self) -> str:
        return "anonymous" if self.kind == "open" else f"{self.kind}:{self.name}"


OPEN = Identity("open")


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()


class TokenBook:
    """The tokens a server accepts, each with its identity."""

    def __init__(self, entries: Iterable[tuple[str, Identity]]) -> None:
        self._entries = [(_digest(token), identity) for token, identity in entries]
        if not self._entries:
            raise TokenFileError("no tokens given")

    @classmethod
    def shared(cls, token: str) -> "TokenBook":
        if not token.strip():
            raise TokenFileError("the token is empty")
        return cls([(token, OPEN)])

    @property
    def per_caller(self) -> bool:
        return any(identity.kind != "open" for _, identity in self._entries)

    def identify(self, presented: str) -> Identity | None:
        """The identity of a presented token, or None. Every entry is compared."""
        probe = _digest(presented)
        found: Identity | None = None
        for digest, identity in self._entries:
            if hmac.compare_digest(digest, probe):
                found = identity
        return found

    @classmethod
    def load(cls, path: Path) -> "TokenBook":
        """Read a tokens file: one `TOKEN IDENTITY [ROLE,ROLE...]` per line, `#` comments, blank
        lines ignored; or a JSON list of `{"token", "identity", "roles"?}`. The file must not be
        readable by other users (as ssh refuses a private key that is)."""
        try:
            mode = path.stat().st_mode
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise TokenFileError(f"cannot read the tokens file {path}: {error.strerror}") from None
        if mode & (stat.S_IRWXG | stat.S_IRWXO) and os.name == "posix":
            raise TokenFileError(
                f"the tokens file {path} is readable by other users "
                f"(mode {stat.S_IMODE(mode):o}); run: chmod 600 {path}"
            )
        rows = _json_rows(text) if text.lstrip().startswith("[") else _line_rows(text)
        seen: set[bytes] = set()
        entries = []
        for where, token, identity_text, roles in rows:
            if len(token) < 16:
                raise TokenFileError(f"{where}: a token must be at least 16 characters")
            if _digest(token) in seen:
                raise TokenFileError(f"{where}: the same token appears twice")
            seen.add(_digest(token))
            entries.append((token, parse_identity(identity_text, roles, where)))
        if not entries:
            raise TokenFileError(f"the tokens file {path} holds no tokens")
        return cls(entries)


def parse_identity(text: str, roles: Iterable[str], where: str) -> Identity:
    kind, _, name = text.partition(":")
    name = name.strip()
    if kind not in ("agent", "operator") or not name or len(name) > NAME_MAX:
        raise TokenFileError(
            f"{where}: identity must be agent:NAME or operator:NAME (got {text[:60]!r})"
        )
    if not name.isprintable():  # the name is drawn in operators' views and audit rows
        raise TokenFileError(f"{where}: a name holds a control or format character ({name!r})")
    role_set = frozenset(role.strip() for role in roles if role.strip())
    if kind == "operator" and role_set:
        raise TokenFileError(f"{where}: roles apply to agent tokens only")
    if any(len(role) > NAME_MAX for role in role_set):
        raise TokenFileError(f"{where}: a role is longer than {NAME_MAX} characters")
    if not all(role.isprintable() for role in role_set):
        raise TokenFileError(f"{where}: a role holds a control or format character")
    return Identity("agent" if kind == "agent" else "operator", name, role_set)


def _line_rows(text: str) -> list[tuple[str, str, str, list[str]]]:
    rows = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) not in (2, 3):
            raise TokenFileError(f"line {number}: expected TOKEN IDENTITY [ROLE,ROLE...]")
        roles = parts[2].split(",") if len(parts) == 3 else []
        rows.append((f"line {number}", parts[0], parts[1], roles))
    return rows


def _json_rows(text: str) -> list[tuple[str, str, str, list[str]]]:
    try:
        document = json.loads(text)
    except ValueError as error:
        raise TokenFileError(f"the tokens file is not valid JSON: {error}") from None
    rows = []
    for index, item in enumerate(document):
        where = f"entry {index}"
        if not isinstance(item, dict):
            raise TokenFileError(f"{where}: expected an object with token and identity")
        token, identity, roles = item.get("token"), item.get("identity"), item.get("roles", [])
        if not isinstance(token, str) or not isinstance(identity, str):
            raise TokenFileError(f"{where}: token and identity must be strings")
        if not isinstance(roles, list) or not all(isinstance(role, str) for role in roles):
            raise TokenFileError(f"{where}: roles must be a list of strings")
        rows.append((where, token, identity, roles))
    return rows


class BearerAuth:
    """ASGI middleware: every request but `PUBLIC_PATHS` must carry a known Bearer token; the
    identity goes into the request state. Without a book, every caller is `OPEN`. It runs before
    the body is read, so an unauthenticated caller cannot make the server parse anything."""

    def __init__(self, app: ASGIApp, book: TokenBook | None) -> None:
        self.app = app
        self.book = book

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        identity = self.admitted(scope)
        if identity is None:
            await _unauthorized(send)
            return
        scope.setdefault("state", {})["identity"] = identity
        await self.app(scope, receive, send)

    def admitted(self, scope: Scope) -> Identity | None:
        """The identity the request acts as, or None when it is refused (401). The fast lane
        asks this too, before it answers a request ahead of this middleware."""
        if self.book is None:
            return OPEN
        identity = self._identify(scope)
        if identity is None and scope["path"] not in PUBLIC_PATHS:
            return None
        return identity or OPEN

    def _identify(self, scope: Scope) -> Identity | None:
        """The token's identity. Two Authorization headers are nobody: which one a proxy or a
        framework would read differs, and the first silently won (an operator's token beside
        a junk one)."""
        assert self.book is not None
        given = [value for key, value in scope["headers"] if key == b"authorization"]
        if len(given) != 1:
            return None
        scheme, _, token = given[0].decode("latin-1").partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return self.book.identify(token.strip())
        return None


# What every JSON answer carries, the app's (`replies.Json`) and the middlewares' alike: never
# sniffed as anything but JSON, never kept by a cache.
HEADERS = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}
_RAW_HEADERS = tuple((name.lower().encode(), value.encode()) for name, value in HEADERS.items())


async def send_json(send: Send, status: int, body: bytes, *headers: tuple[bytes, bytes]) -> None:
    """A whole JSON response from a middleware that answers before the app (no framework below
    it to build one), with the headers every answer of the app carries."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                *_RAW_HEADERS,
                (b"content-length", str(len(body)).encode()),
                (b"content-type", b"application/json"),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


UNAUTHORIZED_BODY = json.dumps(
    {"error": "unauthorized", "reason": ServerReason.UNAUTHORIZED.value}, separators=(",", ":")
).encode()


async def _unauthorized(send: Send) -> None:
    await send_json(send, 401, UNAUTHORIZED_BODY, (b"www-authenticate", b'Bearer realm="kanban"'))


def header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _host_only(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def is_loopback(name: str) -> bool:
    """`localhost` or a loopback address (`127.0.0.0/8`, `::1`, bracketed or not): parsed, never
    matched by prefix, since `127.0.0.1.evil.example` is a name a page can rebind to 127.0.0.1."""
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


@functools.lru_cache(maxsize=64)  # a client sends the same Host on every request
def _is_loopback_host(host: str) -> bool:
    return is_loopback(_host_only(host))


def _browser_headers(scope: Scope) -> tuple[str, str | None, str]:
    """`Host`, `Origin` and `Sec-Fetch-Site` (lowercased) in one pass over the headers; the first
    of each counts, as `header` reads it."""
    host: bytes | None = None
    origin: bytes | None = None
    site: bytes | None = None
    for key, value in scope["headers"]:
        if key == b"host":
            host = value if host is None else host
        elif key == b"origin":
            origin = value if origin is None else origin
        elif key == b"sec-fetch-site":
            site = value if site is None else site
    return (
        "" if host is None else host.decode("latin-1"),
        None if origin is None else origin.decode("latin-1"),
        "" if site is None else site.decode("latin-1").lower(),
    )


class BrowserGuard:
    """ASGI middleware keeping web pages out. Agents and curl send no `Origin`; a browser does on
    every cross-origin write, even one a page fires blind (`<form method=post>`, `fetch` with
    `no-cors`), which needs no preflight and could otherwise approve or cancel tasks on an open
    loopback server. So a request whose `Origin` is not this server, or that a browser marks
    `Sec-Fetch-Site: cross-site`, is refused (403). On an open server the `Host` must also be a
    loopback name, which defeats DNS rebinding (a page on evil.example resolving to 127.0.0.1)."""

    def __init__(self, app: ASGIApp, *, open_server: bool) -> None:
        self.app = app
        self.open_server = open_server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        why = self.refusal(scope) if scope["type"] == "http" else None
        if why is None:
            await self.app(scope, receive, send)
            return
        refused = {"error": why, "reason": ServerReason.FORBIDDEN.value}
        await send_json(send, 403, json.dumps(refused).encode())

    def refusal(self, scope: Scope) -> str | None:
        """Why the request is refused (403), or None to let it through. The fast lane asks
        this too, before it answers a request ahead of this middleware."""
        if scope["path"] in PUBLIC_PATHS:
            return None
        host, origin, site = _browser_headers(scope)
        if self.open_server and host and not _is_loopback_host(host):
            return f"this open server answers only on a loopback name, not {host[:100]!r}"
        if site in ("cross-site", "same-site"):
            return "requests from other web sites are refused"
        if origin is not None and origin != "null":
            if origin.split("://", 1)[-1].rstrip("/").lower() != host.lower():
                return "cross-origin requests are refused"
        elif origin == "null":
            return "requests from sandboxed or file pages are refused"
        return None
