"""A deterministic board whose code tasks have real git worktrees: the task drawer's fixture for
the screenshots, the pilot tests and the drawer benchmark.

Built the way agents build one, through `boardlib.worktrees`, on a `ManualClock` with fixed git
dates, so the same build gives the same shas and the same screens. Its tasks (`review`, `gated`,
`paused`, `research`, `empty`, `big`): docs/architecture.md#the-demo-and-the-review-board
"""

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from boardlib import Board, ManualClock, PlanItem
from boardlib.config import WORKTREES_VARIABLE
from boardlib.records import EXECUTION_SUCCEEDED
from boardlib.worktrees import Worktrees

START_MS = 1_767_261_600_000
GIT_DATE = "2026-01-01T09:00:00Z"
BUILDER = "agent-ada"
REVIEWER_AGENT = "agent-grace"

_FILES = {
    "README.md": "# shop\n\nA small shop: a cart and its prices.\n",
    "shop/__init__.py": '"""The shop."""\n',
    "shop/cart.py": (
        '"""A shopping cart: items are (name, price in cents) pairs."""\n\n\n'
        "def total(items):\n"
        "    return sum(price for _name, price in items)\n\n\n"
        "def count(items):\n"
        "    return len(items)\n"
    ),
    "tests/__init__.py": "",
    "tests/test_cart.py": (
        "import unittest\n\nfrom shop import cart\n\n\n"
        "class CartTest(unittest.TestCase):\n"
        "    def test_total(self):\n"
        '        self.assertEqual(cart.total([("tea", 250), ("cake", 400)]), 650)\n'
    ),
}

DESCRIPTION = """Give the cart a **percentage discount**.

- `discount(items, percent)` in `shop/discounts.py`, rounding *down* to whole cents
- the cart total applies it when a code is given
- a unit test for 0 %, 10 % and 100 %

See [the pricing notes](https://example.com/pricing) before changing `cart.total`.
"""

VERIFY = "python3 -m unittest discover -q -s tests -t ."


@dataclass(frozen=True)
class ReviewBoard:
    db: Path
    repo: Path
    worktrees: Path
    ids: dict[str, str]


def _git_env() -> dict[str, str]:
    return {
        "GIT_AUTHOR_DATE": GIT_DATE,
        "GIT_COMMITTER_DATE": GIT_DATE,
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
    }


@contextmanager
def fixed_git_dates() -> Iterator[None]:
    """The git commits made inside, in this process and the ones it starts, get `GIT_DATE`
    and no user's git config (fixed shas: the snapshots show them); the environment is put
    back after."""
    saved = {key: os.environ.get(key) for key in _git_env()}
    os.environ.update(_git_env())
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _repository(path: Path) -> Path:
    path.mkdir(parents=True)
    for name, text in _FILES.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    env = {**os.environ, **_git_env()}
    for args in (
        ("init", "-q", "-b", "main"),
        ("config", "user.name", "Shop Maintainer"),
        ("config", "user.email", "maintainer@shop.invalid"),
        ("add", "-A"),
        ("commit", "-q", "-m", "The shop: a cart and its test"),
    ):
        subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)
    return path


def _write(worktree: Path, name: str, text: str) -> None:
    (worktree / name).parent.mkdir(parents=True, exist_ok=True)
    (worktree / name).write_text(text)


def _set_verify(worktree: Path, command: str) -> None:
    init = worktree / "init.sh"
    init.write_text(init.read_text().replace("VERIFY_CMD=''", f"VERIFY_CMD='{command}'"))


def _discount_work(worktree: Path, *, broken_test: bool = False) -> None:
    _write(
        worktree,
        "shop/discounts.py",
        '"""Discounts on a cart total."""\n\n\n'
        "def discount(total, percent):\n"
        '    """The total less `percent` per cent, rounded down to whole cents."""\n'
        "    if not 0 <= percent <= 100:\n"
        '        raise ValueError("percent must be between 0 and 100")\n'
        "    return total * (100 - percent) // 100\n",
    )
    expected = 586 if broken_test else 585
    _write(
        worktree,
        "tests/test_discounts.py",
        "import unittest\n\nfrom shop.discounts import discount\n\n\n"
        "class DiscountTest(unittest.TestCase):\n"
        "    def test_percentages(self):\n"
        "        self.assertEqual(discount(650, 0), 650)\n"
        f"        self.assertEqual(discount(650, 10), {expected})\n"
        "        self.assertEqual(discount(650, 100), 0)\n",
    )
    cart = (worktree / "shop/cart.py").read_text()
    _write(
        worktree,
        "shop/cart.py",
        cart.replace(
            "def total(items):\n    return sum(price for _name, price in items)\n",
            "def total(items, percent=0):\n"
            '    """The sum of the prices, less a discount of `percent` per cent."""\n'
            "    from .discounts import discount\n\n"
            "    return discount(sum(price for _name, price in items), percent)\n",
        ),
    )


def _progress(done: list[str], broken: list[str], next_step: str) -> str:
    lines = ["# Progress", "", "## Done", "", *[f"- {item}" for item in done], ""]
    lines += ["## Broken or unverified", "", *[f"- {item}" for item in broken], ""]
    lines += ["## Next", "", f"- {next_step}", ""]
    return "\n".join(lines)


LONG_LINE = "long_line = [" + ", ".join(f"'item {n:03d}'" for n in range(23)) + "]  # END_OF_LONG"


def _big_diff(worktree: Path, lines: int, *, files: int = 40) -> None:
    """`lines` changed lines over `files` files (the benchmark's 20,000-line diff), each line
    marked `BIGMARK <its number>` for search, then one file with a 300-character line."""
    per_file = max(1, lines // files)
    number = 0
    for index in range(files):
        parts = []
        for n in range(per_file):
            parts.append(
                f"value_{index}_{n} = compute({n}, 'generated line {n} of file {index}')"
                f"  # BIGMARK {number}\n"
            )
            number += 1
        _write(worktree, f"generated/module_{index:02d}.py", "".join(parts))
    _write(worktree, "generated/wide.py", f"{LONG_LINE}\n")


def _heavy_files(worktree: Path, generated_mb: int) -> None:
    """A binary file and a generated file of `generated_mb` MB: each a one-line summary."""
    (worktree / "assets").mkdir(parents=True, exist_ok=True)
    (worktree / "assets" / "logo.png").write_bytes(bytes(range(256)) * 64)
    line = "var bundle = " + "x" * 4083 + ";\n"  # 4 KB lines, as a minified bundle has
    with (worktree / "assets" / "bundle.min.js").open("w") as handle:
        for _ in range(generated_mb * 256):
            handle.write(line)


def build_review_board(
    folder: Path,
    clock: ManualClock | None = None,
    *,
    big_diff: bool = False,
    huge_lines: int = 0,
    generated_mb: int = 0,
) -> ReviewBoard:
    """Build the board in `folder` (`board.db`, `shop/`, `worktrees/`); sets `KANBAN_WORKTREES`
    in this process so the app finds the worktrees (as `kanban demo` does). `big_diff` adds the
    `big` task (a 20,000-line diff); `huge_lines` a `huge` task with that many lines (the
    200,000-line benchmark); `generated_mb` a binary file and a generated file that large in
    `big`'s worktree."""
    clock = clock or ManualClock(START_MS)
    folder.mkdir(parents=True, exist_ok=True)
    worktrees = folder / "worktrees"
    os.environ[WORKTREES_VARIABLE] = str(worktrees)
    with fixed_git_dates():  # git's commits (scaffold, pause, gate) get fixed dates
        repo = _repository(folder / "shop")
        db = folder / "board.db"
        with Board(db, clock=clock) as board:
            ids = _build(
                board, clock, repo, big_diff=big_diff, huge_lines=huge_lines,
                generated_mb=generated_mb,
            )  # fmt: skip
    return ReviewBoard(db=db, repo=repo, worktrees=worktrees, ids=ids)


def _build(
    board: Board,
    clock: ManualClock,
    repo: Path,
    *,
    big_diff: bool,
    huge_lines: int = 0,
    generated_mb: int = 0,
) -> dict[str, str]:
    items = [
        PlanItem("base", "Price the catalogue in cents", role="backend", priority=3),
        PlanItem(
            "review",
            "Add a percentage discount to the cart",
            description=DESCRIPTION,
            role="backend",
            priority=2,
            depends_on=("base",),
        ),
        PlanItem("gated", "Count items in the cart", role="backend", priority=1),
        PlanItem("paused", "Show the cart total in the header", role="frontend"),
        PlanItem(
            "research",
            "Pick a payment provider",
            kind="research",
            description="Compare **two** providers; write the outcome in a comment.",
        ),
        PlanItem("later", "Email a receipt", role="backend", depends_on=("review",)),
        PlanItem("empty", "Tidy the imports", role="backend"),
    ]
    if big_diff:
        items.append(PlanItem("big", "Regenerate the bindings", role="backend"))
    if huge_lines:
        items.append(PlanItem("huge", "Vendor the generated protocol", role="backend"))
    ids = {key: task.id for key, task in board.create_plan(items).items()}
    trees = Worktrees(board, verify_timeout_s=60)

    # base: done, so `review` is ready; approved by a peer.
    board.claim(ids["base"], "agent-linus", runtime="codex")
    board.complete(ids["base"], "agent-linus", summary="prices are integers (cents)")
    clock.advance(seconds=30)
    board.approve(ids["base"], REVIEWER_AGENT)

    # review: real work in a worktree, completed into review (the operator judges it).
    clock.advance(seconds=40)
    task = board.claim(ids["review"], BUILDER, runtime="claude-code")
    run = board.open_execution(ids["review"], "claude-code", agent=BUILDER, epoch=task.claim_epoch)
    made = trees.provision(ids["review"], repo, actor=BUILDER)
    worktree = Path(made.worktree.worktree_path)
    _set_verify(worktree, VERIFY)
    _discount_work(worktree)
    _write(
        worktree,
        "task-progress.md",
        _progress(
            ["added shop/discounts.py", "cart.total takes a percent", "tests for 0, 10, 100 %"],
            ["rounding of negative totals is untested"],
            "review the rounding rule with the product owner",
        ),
    )
    _write(
        worktree,
        "DECISIONS.json",
        json.dumps(
            [{"decision": "round down to whole cents", "why": "never charge more than shown"}],
            indent=2,
        )
        + "\n",
    )
    clock.advance(minutes=3)
    board.log_progress(ids["review"], BUILDER, "discount and tests written", epoch=task.claim_epoch)
    trees.write_handoff(
        ids["review"],
        {
            "handoffFrom": BUILDER,
            "runtime": "claude-code",
            "completedSubtasks": ["discount()", "cart.total(items, percent)", "unit tests"],
            "brokenOrUnverified": ["rounding of negative totals is untested"],
            "nextBestStep": "review the rounding rule with the product owner",
            "commands": {"verify": VERIFY},
        },
        actor=BUILDER,
    )
    board.close_execution(
        run.id, EXECUTION_SUCCEEDED, agent=BUILDER, epoch=task.claim_epoch,
        summary="discount with tests",
        input_tokens=41_200, output_tokens=6_300, cost_usd=0.21,
    )  # fmt: skip
    board.complete(ids["review"], BUILDER, summary="ready for review", epoch=task.claim_epoch)
    board.add_comment(
        ids["review"], "Rounding down matches the receipts.", author_agent_id="agent-linus"
    )

    # gated: through the gate, which fails once (a wrong expectation), then passes.
    clock.advance(minutes=1)
    task = board.claim(ids["gated"], "agent-linus", runtime="codex")
    made = trees.provision(ids["gated"], repo, actor="agent-linus")
    worktree = Path(made.worktree.worktree_path)
    _set_verify(worktree, VERIFY)
    _discount_work(worktree, broken_test=True)
    first = trees.complete(ids["gated"], "agent-linus", epoch=task.claim_epoch)
    clock.advance(minutes=2)
    _discount_work(worktree)
    trees.complete(ids["gated"], "agent-linus", epoch=first.claim_epoch)

    # paused: work committed on its branch, checkout removed.
    clock.advance(minutes=1)
    board.claim(ids["paused"], "agent-barbara", runtime="script")
    made = trees.provision(ids["paused"], repo, actor="agent-barbara")
    worktree = Path(made.worktree.worktree_path)
    _write(worktree, "shop/header.py", '"""The page header."""\n\nTOTAL_LABEL = "Total"\n')
    _write(
        worktree,
        "task-progress.md",
        _progress(["header label"], [], "render the total next to the label"),
    )
    trees.pause(ids["paused"], actor="agent-barbara")

    # empty: nothing delivered: done, worktree and branch cleaned away.
    task = board.claim(ids["empty"], "agent-linus", runtime="codex")
    trees.provision(ids["empty"], repo, actor="agent-linus")
    trees.complete(ids["empty"], "agent-linus", epoch=task.claim_epoch)

    # research: no worktree; in progress.
    board.claim(ids["research"], "agent-grace", runtime="claude-code")

    if big_diff:
        task = board.claim(ids["big"], BUILDER, runtime="claude-code")
        made = trees.provision(ids["big"], repo, actor=BUILDER)
        _big_diff(Path(made.worktree.worktree_path), 20_000)
        if generated_mb:
            _heavy_files(Path(made.worktree.worktree_path), generated_mb)
    if huge_lines:
        board.claim(ids["huge"], BUILDER, runtime="claude-code")
        made = trees.provision(ids["huge"], repo, actor=BUILDER)
        _big_diff(Path(made.worktree.worktree_path), huge_lines, files=100)
    return ids
