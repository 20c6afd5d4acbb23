"""The demo's throwaway project: a small Python package in a real git repository, and the real
edits the simulated agents make to it in their task worktrees.

Why real files: the operator's drawer shows a task's system-of-record files and its diff, and the
verification gate runs a real command. A demo that only moved cards would leave both empty. Here
every code task gets a module and a unit test written step by step in its own worktree, progress
notes in `task-progress.md`, a decision in `DECISIONS.json`, `VERIFY_CMD` in `init.sh` and a
handoff at the end; the gate runs the package's tests (about 0.1 s).
"""

import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO_DIR = "shop"  # inside the demo folder
WORKTREES_DIR = "worktrees"  # KANBAN_WORKTREES for the demo, beside the repository
IDENTITY = ("-c", "user.name=kanban demo", "-c", "user.email=demo@kanban.invalid")

_PACKAGE = {
    "README.md": "# shop\n\nA tiny shop, built by the kanban demo's agents one task at a time.\n",
    "shop/__init__.py": '"""The demo shop."""\n',
    "shop/cart.py": (
        '"""A shopping cart: items are (name, price in cents) pairs."""\n\n\n'
        "def total(items):\n"
        '    """The sum of the prices, in cents."""\n'
        "    return sum(price for _name, price in items)\n\n\n"
        "def count(items):\n"
        "    return len(items)\n"
    ),
    "tests/__init__.py": "",
    "tests/test_cart.py": (
        "import unittest\n\n"
        "from shop import cart\n\n\n"
        "class CartTest(unittest.TestCase):\n"
        "    def test_total(self):\n"
        '        self.assertEqual(cart.total([("tea", 250), ("cake", 400)]), 650)\n\n'
        "    def test_count(self):\n"
        '        self.assertEqual(cart.count([("tea", 250)]), 1)\n'
    ),
}


def verify_command() -> str:
    """The package's test run, as the gate will run it (one line, no single quotes)."""
    python = "python3" if shutil.which("python3") else sys.executable
    return f"{python} -m unittest discover -q -s tests -t ."


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, stdin=subprocess.DEVNULL
    )


def make_repository(folder: Path) -> Path:
    """Create the package and commit it: the repository every task branches from."""
    repo = folder / REPO_DIR
    repo.mkdir()
    for name, text in _PACKAGE.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "gc.auto", "0")  # no detached `git gc` outliving the demo's clean-up
    _git(repo, "add", "-A")
    _git(
        repo, *IDENTITY, "commit", "-q", "--no-verify", "-m", "The demo shop: a cart and its tests"
    )
    return repo


def slug(title: str) -> str:
    """A module name for a task title: `Add the orders API (part 2)` -> `orders_api_part_2`."""
    words = re.findall(r"[a-z0-9]+", title.lower())
    words = [word for word in words if word not in {"the", "a", "an", "add", "build", "write"}]
    name = "_".join(words[:3]) or "task"
    return name if name[0].isalpha() else f"t_{name}"


def description(title: str, *, research: bool) -> str:
    """A Markdown description, as a lead would write it (the drawer renders it)."""
    if research:
        return (
            f"**{title}.** No code: look, decide, and write the outcome in a comment.\n\n"
            "- a reviewer who did not do the work judges it\n"
            "- the lead rejects it if the reasoning is thin\n"
        )
    name = slug(title)
    return (
        f"Implement **{title}** in `shop/{name}.py`, with a unit test in "
        f"`tests/test_{name}.py`.\n\n"
        "Acceptance:\n\n"
        "1. a small, documented function\n"
        f"2. `{verify_command()}` passes: the verification gate runs it\n"
        "3. progress notes and a handoff, so anyone can pick the task up cold\n"
    )


def _module(name: str, title: str, task_id: str, steps: int) -> str:
    lines = [f'"""{title} ({task_id})."""', "", ""]
    for step in range(1, steps + 1):
        lines += [
            f"def {name}_step_{step}(items):",
            f'    """Step {step} of {title.lower()}: the items worth {step}x their price."""',
            f"    return [(label, price * {step}) for label, price in items]",
            "",
            "",
        ]
    lines += [
        f"def {name}_total(items):",
        '    """The total of the items, in cents."""',
        "    return sum(price for _label, price in items)",
        "",
    ]
    return "\n".join(lines)


def _test(name: str, *, broken: bool) -> str:
    expected = 651 if broken else 650  # the scripted mistake the gate catches
    camel = "".join(part.capitalize() for part in name.split("_"))
    return (
        "import unittest\n\n"
        f"from shop import {name}\n\n\n"
        f"class {camel}Test(unittest.TestCase):\n"
        "    def test_total(self):\n"
        f'        items = [("tea", 250), ("cake", 400)]\n'
        f"        self.assertEqual({name}.{name}_total(items), {expected})\n\n"
        "    def test_first_step_keeps_the_labels(self):\n"
        f'        self.assertEqual({name}.{name}_step_1([("tea", 2)]), [("tea", 2)])\n'
    )


def _progress(task_id: str, done: list[str], next_step: str, broken: list[str]) -> str:
    lines = [f"# Progress of {task_id}", "", "## Done", ""]
    lines += [f"- {item}" for item in done] or ["- nothing yet"]
    lines += ["", "## Broken or unverified", ""]
    lines += [f"- {item}" for item in broken]
    lines += ["", "## Next", "", f"- {next_step}", ""]
    return "\n".join(lines)


def work_step(
    worktree: Path,
    *,
    task_id: str,
    title: str,
    step: int,
    steps: int,
    done: list[str],
    rng: random.Random,
    broken: bool,
) -> str:
    """One step of real work in a task's worktree; returns the note for the board. Step 1 sets
    `VERIFY_CMD` and writes the module, step 2 the test (broken when scripted), later steps
    extend the module; every step rewrites `task-progress.md`, step 2 records a decision."""
    name = slug(title)
    module = worktree / "shop" / f"{name}.py"
    test = worktree / "tests" / f"test_{name}.py"
    if step == 1:
        init = worktree / "init.sh"
        text = init.read_text() if init.exists() else "#!/usr/bin/env bash\n"
        text = text.replace("VERIFY_CMD=''", f"VERIFY_CMD='{verify_command()}'")
        if "VERIFY_CMD='" + verify_command() not in text:
            text += f"\nVERIFY_CMD='{verify_command()}'\n"
        init.write_text(text)
        note = f"wrote shop/{name}.py"
    elif step == 2:
        note = f"added tests/test_{name}.py"
        decisions = worktree / "DECISIONS.json"
        try:
            recorded = json.loads(decisions.read_text())
        except (OSError, ValueError):
            recorded = []
        if not isinstance(recorded, list):
            recorded = []
        recorded.append(
            {
                "decision": rng.choice(
                    ("prices stay integers (cents)", "items are (label, price) pairs")
                ),
                "why": "the cart already works that way; no rounding surprises",
                "by": task_id,
            }
        )
        decisions.write_text(json.dumps(recorded, indent=2) + "\n")
    else:
        note = rng.choice(("handled the empty cart", "documented the steps", "tidied the names"))
    if step == steps:  # the last step touches shared code too: a real modification to review
        cart = worktree / "shop" / "cart.py"
        text = cart.read_text()
        if "def count(items):\n    return len(items)" in text:
            cart.write_text(
                text.replace(
                    "def count(items):\n    return len(items)",
                    'def count(items):\n    """How many items are in the cart."""\n'
                    "    return len(list(items))",
                )
            )
            note += "; cart.count accepts any iterable"
    module.parent.mkdir(exist_ok=True)
    module.write_text(_module(name, title, task_id, max(1, step - 1) if step > 2 else 1))
    if step >= 2:
        test.write_text(_test(name, broken=broken))
    init_py = worktree / "shop" / "__init__.py"
    registered = f"from . import {name}  # noqa: F401\n"
    if step >= 2 and registered not in init_py.read_text():
        init_py.write_text(init_py.read_text() + registered)
    done = [*done, note]
    next_step = "complete: the gate runs the tests" if step >= steps else "keep going"
    (worktree / "task-progress.md").write_text(
        _progress(task_id, done, next_step, ["the new test is untried"] if step < steps else [])
    )
    return note


def fix_the_test(worktree: Path, title: str) -> str:
    """The builder reads the gate's failure and corrects the expected value."""
    name = slug(title)
    (worktree / "tests" / f"test_{name}.py").write_text(_test(name, broken=False))
    return f"fixed tests/test_{name}.py after the gate failed (651 -> 650)"
