"""One declaration per fact, checked on the source: event kinds, their payload keys, execution
statuses and the status words in store SQL are spelled where they are declared and imported
everywhere else.

The scan reads every string literal (docstrings aside) of `boardlib`, `kanban` and `tui` with `ast`
(and of the chaos tests for event kinds). A few literals are the same word for another fact;
`ALLOWED` names each one, with how many times it may appear and why, so a new literal fails
however it is spelled and a stale entry fails too. No package (nor the benchmarks) imports
another's private `_name`: what another package uses is public.
"""

import ast
from collections import Counter
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from pydantic.alias_generators import to_camel

from boardlib import transitions as t
from boardlib.config import MACHINE_SETTINGS, WORKTREES_VARIABLE
from boardlib.events import EventKind, read, wire, wire_key
from boardlib.naming import camel, snake
from boardlib.payloads import PAYLOADS
from boardlib.records import EXECUTION_STATUSES

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("boardlib", "kanban", "tui")
EVENT_READERS = (*PACKAGES, "tests/chaos")
EVENTS_MODULE = "boardlib/events.py"
STATUS_DECLARATIONS = {"boardlib/records.py", "boardlib/transitions.py"}
CONFIG_MODULE = "boardlib/config.py"

# (file, literal) -> (how many, why): the same word, another fact.
ALLOWED: dict[tuple[str, str], tuple[int, str]] = {
    ("kanban/demo/runner.py", "failed"): (4, "the demo's own end reason, not a run's outcome"),
    ("kanban/http/routes/tasks.py", "cancelled"): (1, "seed 003's reply key for cancelled tasks"),
    ("tui/components/header_bar.py", "running"): (1, "the header's word for in-progress work"),
}
KINDS = frozenset(EventKind)
EXECUTION_WORDS = frozenset(EXECUTION_STATUSES)
SQL_WORDS = frozenset({*t.STATUSES, *EXECUTION_STATUSES})
MACHINE_VARIABLES = frozenset({WORKTREES_VARIABLE, *(s.variable for s in MACHINE_SETTINGS)})
PAYLOAD_NAMES = {payload.__name__: payload for payload in PAYLOADS.values()}


def sources(*roots: str) -> Iterator[tuple[str, ast.Module]]:
    for root in roots:
        for path in sorted((ROOT / root).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), parsed(path)


@cache
def parsed(path: Path) -> ast.Module:
    """Each file parsed once for the whole module: the checks only read the trees."""
    return ast.parse(path.read_text(), str(path))


def docstrings(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


@cache
def literals(tree: ast.Module) -> tuple[tuple[int, str], ...]:
    """Every string literal and every constant part of an f-string, docstrings left out."""
    skip = docstrings(tree)
    return tuple(
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
    )


def offences(roots: tuple[str, ...], words: frozenset[str], *, exempt: set[str]) -> list[str]:
    """`file:line 'word'` for each literal in `words`, beyond what `ALLOWED` grants."""
    found: list[str] = []
    for path, tree in sources(*roots):
        if path in exempt:
            continue
        hits = [(line, value) for line, value in literals(tree) if value in words]
        counts = Counter(value for _, value in hits)
        for value, count in counts.items():
            allowed, _why = ALLOWED.get((path, value), (0, ""))
            if count != allowed:
                found += [f"{path}:{line} {value!r}" for line, v in hits if v == value]
    return found


@pytest.mark.slow
def test_event_kinds_are_spelled_only_in_boardlib_events() -> None:
    found = offences(EVENT_READERS, KINDS, exempt={EVENTS_MODULE})
    assert found == [], "use boardlib.events.EventKind:\n" + "\n".join(found)


@pytest.mark.slow
def test_execution_statuses_are_spelled_only_where_declared() -> None:
    found = offences(PACKAGES, EXECUTION_WORDS, exempt=STATUS_DECLARATIONS)
    assert found == [], "use records.EXECUTION_* (or transitions for a task):\n" + "\n".join(found)


@pytest.mark.slow
def test_machine_settings_are_spelled_only_in_boardlib_config() -> None:
    """`kanban init` carries the machine settings `MACHINE_SETTINGS` declares into the MCP config
    it writes: one read by a name spelled elsewhere would be left out of it (as all but the
    worktrees' folder were)."""
    found = offences(PACKAGES, MACHINE_VARIABLES, exempt={CONFIG_MODULE})
    assert found == [], "use boardlib.config's MachineSetting:\n" + "\n".join(found)


def test_every_allowance_is_still_used() -> None:
    """An allowance that no longer matches its file is removed, not left to hide a new literal."""
    for (path, value), (count, why) in ALLOWED.items():
        seen = sum(1 for _, v in literals(parsed(ROOT / path)) if v == value)
        assert seen == count, f"{path}: {seen} {value!r}, ALLOWED says {count} ({why})"


def test_store_sql_names_no_status_word() -> None:
    """Status conditions, CHECKs and partial indexes are built from `store/literals.py`."""
    found = [
        f"{path}:{line} {word!r}"
        for path, tree in sources("boardlib/store")
        for line, value in literals(tree)
        for word in SQL_WORDS
        if f"'{word}'" in value
    ]
    assert found == [], "build it from boardlib.store.literals:\n" + "\n".join(found)


@pytest.mark.slow
def test_event_data_is_read_through_its_payload() -> None:
    """`event.data["leaseUntil"]` spells a stored key by hand: read it with `events.read` as the
    kind's payload instead, whose keys are checked below."""
    found = []
    for path, tree in sources(*EVENT_READERS):
        for node in ast.walk(tree):
            key = _key_read(node)
            if key and isinstance(key[0], ast.Attribute) and key[0].attr == "data":
                found.append(f"{path}:{node.lineno} {key[1]!r}")
    assert found == [], "\n".join(found)


@pytest.mark.slow
def test_payload_reads_name_declared_fields() -> None:
    """mypy checks `payload["key"]` against the TypedDict, but not `payload.get("key")` or
    `"key" in payload`: every key a reader names on a variable annotated with a payload type must
    be one of that payload's fields."""
    found = []
    for path, tree in sources(*EVENT_READERS):
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            typed = {
                node.target.id: PAYLOAD_NAMES[node.annotation.id]
                for node in ast.walk(function)
                if isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(node.annotation, ast.Name)
                and node.annotation.id in PAYLOAD_NAMES
            }
            for node in ast.walk(function):
                key = _key_read(node)
                if key and isinstance(key[0], ast.Name) and key[0].id in typed:
                    payload = typed[key[0].id]
                    if key[1] not in payload.__annotations__:
                        found.append(f"{path}:{node.lineno} {payload.__name__} has no {key[1]!r}")
    assert found == [], "\n".join(found)


def _key_read(node: ast.AST) -> tuple[ast.expr, str] | None:
    """`x.get("k")`, `x["k"]` or `"k" in x` as (x, "k")."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.func.value, node.args[0].value
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    ):
        return node.value, node.slice.value
    if (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.In | ast.NotIn)
        and isinstance(node.left, ast.Constant)
        and isinstance(node.left.value, str)
    ):
        return node.comparators[0], node.left.value
    return None


def test_every_kind_declares_its_payload() -> None:
    assert set(PAYLOADS) == set(EventKind)
    assert all(kind.value == kind.name.lower() for kind in EventKind)


def test_one_camel_rule_gives_the_names_pydantic_gave() -> None:
    """models.py and the HTTP bodies used pydantic's `to_camel` before `naming.camel`: for every
    field of every model, and every payload field, the two rules agree, so no JSON name moved."""
    import inspect

    from pydantic import BaseModel

    import boardlib.models
    import boardlib.plans
    import kanban.http.bodies

    names: set[str] = set()
    for module in (boardlib.models, boardlib.plans, kanban.http.bodies):
        for model in vars(module).values():
            if inspect.isclass(model) and issubclass(model, BaseModel):
                names |= set(model.model_fields)
    assert len(names) > 50
    fields = {name for payload in PAYLOADS.values() for name in payload.__annotations__}
    names |= fields
    assert {name: camel(name) for name in names} == {name: to_camel(name) for name in names}
    # `read` undoes `wire` for every declared field, which is what lets it need no declarations.
    assert {snake(wire_key(name)) for name in fields} == fields
    every = {name: index for index, name in enumerate(sorted(fields))}
    assert read(wire(every)) == every


CLAIM_LOOP = """
import sys
from boardlib import Board
with Board(sys.argv[1]) as board:
    task = board.create_task("job")
    claimed = board.claim_next("alice")
    board.heartbeat(claimed.id, "alice", epoch=claimed.claim_epoch)
    board.complete(claimed.id, "alice")
import kanban.cli.protocol, boardlib.narration, tui.marks
print(sorted(name for name in sys.modules if name.endswith("payloads")))
"""


def test_the_payload_types_cost_no_command_its_start_up(tmp_path: Path) -> None:
    """`boardlib.payloads` is for the type checker and the tests: the board, the CLI and the
    readers import it under TYPE_CHECKING only (its classes are ~3.5 M instructions)."""
    import subprocess
    import sys

    loaded = subprocess.run(
        [sys.executable, "-c", CLAIM_LOOP, str(tmp_path / "board.db")],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert loaded.strip() == "[]"


def private_imports(package: str, tree: ast.Module) -> list[str]:
    """The `_names` a module of `package` imports from another top-level package."""
    return [
        f"{node.module}.{alias.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
        if node.module.split(".")[0] in (*PACKAGES, "benchmarks")
        and node.module.split(".")[0] != package
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]


def test_no_package_imports_anothers_private_name() -> None:
    """A name another package uses is public, declared once under that name: the benchmarks
    ran the store's claim-next statement as `_claim_best_ready_sql`, a private name a rename
    in the store would have broken without a wall noticing."""
    found = {
        path: names
        for path, tree in sources(*PACKAGES, "benchmarks")
        if (names := private_imports(path.split("/")[0], tree))
    }
    assert found == {}
    probe = ast.parse("from boardlib.x import _y, __version__\nfrom benchmarks.z import _w")
    assert private_imports("benchmarks", probe) == ["boardlib.x._y"]  # the check can fail
