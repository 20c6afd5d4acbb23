"""The documentation cannot rot: the seed map names code and tests that exist, every page is
linked and every link lands, every example is run by a test or says it is not runnable, the
README stays short, and docs/benchmarks.md is what benchmarks/report.py writes from the stored
results."""

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doc_examples import REPO, Block, blocks, pages

ARCHITECTURE = REPO / "docs" / "architecture.md"
SEEDS = ("000", "002", "003")
# Pages the README links that another branch writes; once one exists, take it off this list.
PENDING: set[str] = set()


def seed_map() -> list[tuple[str, str, list[str], list[str]]]:
    """(seed, rule, [dotted paths], [test node ids]) for every row of the seed map's tables."""
    text = ARCHITECTURE.read_text()
    section = text.split("\n## Seed map\n", 1)[1].split("\n## ", 1)[0]
    rows: list[tuple[str, str, list[str], list[str]]] = []
    seed = ""
    for line in section.splitlines():
        heading = re.match(r"^### (\d{3}) ", line)
        if heading:
            seed = heading.group(1)
            continue
        if not line.startswith("| ") or line.startswith("| rule ") or line.startswith("| ---"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        assert len(cells) == 3, f"a seed map row has three cells: {line}"
        rule, code, tests = cells
        rows.append((seed, rule, re.findall(r"`([^`]+)`", code), re.findall(r"`([^`]+)`", tests)))
    return rows


def resolve(dotted: str) -> object:
    """Import the longest module prefix of `dotted`, then getattr the rest."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            found = getattr(found, name)
        return found
    raise ModuleNotFoundError(dotted)


def defined_tests(path: Path) -> set[str]:
    """`name` and `Class::name` of every function and method in a test file."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names |= {
                f"{node.name}::{item.name}"
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            }
    return names


def test_the_seed_map_covers_every_spec_and_every_row_names_code_and_a_test() -> None:
    rows = seed_map()
    assert {seed for seed, *_ in rows} == set(SEEDS)
    for seed, rule, code, tests in rows:
        assert code, f"seed {seed}: {rule}: no function named"
        assert tests, f"seed {seed}: {rule}: no test named"
    assert len(rows) >= 60  # every rule of the three specs, one row each


def test_every_function_the_seed_map_names_resolves() -> None:
    missing = []
    for _seed, rule, code, _tests in seed_map():
        for dotted in code:
            try:
                resolve(dotted)
            except (ImportError, AttributeError) as error:
                missing.append(f"{dotted} ({rule}): {error}")
    assert not missing, "\n".join(missing)


@pytest.mark.slow
def test_every_test_the_seed_map_names_exists() -> None:
    missing = []
    for _seed, rule, _code, tests in seed_map():
        for node in tests:
            path, _, name = node.partition("::")
            source = REPO / path
            if not source.is_file() or not path.startswith("tests/"):
                missing.append(f"{node} ({rule}): no such test file")
            elif name and name not in defined_tests(source):
                missing.append(f"{node} ({rule}): no such test in {path}")
    assert not missing, "\n".join(missing)


def test_the_resolver_and_the_test_finder_can_fail() -> None:
    with pytest.raises(AttributeError):
        resolve("boardlib.board.Board.no_such_method")
    with pytest.raises(ModuleNotFoundError):
        resolve("no_such_package.thing")
    assert "test_the_resolver_and_the_test_finder_can_fail" in defined_tests(Path(__file__))
    assert "test_no_such_thing" not in defined_tests(Path(__file__))


# -- pages and links --------------------------------------------------------------------------


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, code marks and punctuation dropped, spaces to
    hyphens."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    inside = False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            inside = not inside
        heading = re.match(r"^#{1,6} (.+)$", line)
        if heading and not inside:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[str]:
    """Every relative link target of a page, outside code blocks and code spans."""
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.DOTALL)
    text = re.sub(r"`[^`\n]*`", "", text)
    return [
        target
        for target in re.findall(r"\]\(([^)\s]+)\)", text)
        if not re.match(r"^[a-z]+:", target)
    ]


def test_the_readme_is_short_and_links_every_page() -> None:
    readme = REPO / "README.md"
    assert len(readme.read_text().splitlines()) <= 250
    linked = {target.split("#")[0] for target in links(readme)}
    pages_on_disk = {p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md")}
    assert pages_on_disk | PENDING <= linked, sorted(pages_on_disk | PENDING - linked)


def test_every_relative_link_and_anchor_lands() -> None:
    broken = []
    for page in pages():
        for target in links(page):
            file_part, _, anchor = target.partition("#")
            landing = (page.parent / file_part).resolve() if file_part else page
            name = landing.relative_to(REPO).as_posix() if landing.is_relative_to(REPO) else ""
            if name in PENDING:
                continue
            if not landing.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and landing.suffix == ".md" and anchor not in anchors(landing):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_pending_pages_are_still_pending() -> None:
    """Once another branch's page has landed, it is checked like any other."""
    for name in PENDING:
        assert not (REPO / name).exists(), f"{name} exists now: remove it from PENDING"


def test_user_pages_name_no_issue_and_no_spec_number() -> None:
    """Specs are described once, on the architecture page; issue numbers belong in commits."""
    for page in pages():
        text = page.read_text()
        assert not re.search(r"\bissues? \d+", text, re.IGNORECASE), page.name
        if page != ARCHITECTURE:
            assert not re.search(r"\bseeds? \d{3}\b", text, re.IGNORECASE), page.name


# -- examples -------------------------------------------------------------------------------


def all_blocks() -> list[Block]:
    return [block for page in pages() for block in blocks(page)]


def test_every_block_is_a_named_example_or_says_it_is_not_run() -> None:
    unmarked = [f"{b.page}:{b.line}" for b in all_blocks() if b.name is None and not b.why_not_run]
    assert not unmarked, "mark each with <!-- example: NAME --> or <!-- not run: WHY -->"


def test_every_named_example_is_run_by_a_test() -> None:
    sources = "\n".join(
        path.read_text() for path in (REPO / "tests").rglob("*.py") if path.name != "test_docs.py"
    )
    examples = [block for block in all_blocks() if block.name]
    assert len({block.ref for block in examples}) == len(examples), "example names repeat"
    unrun = [block.ref for block in examples if f'"{block.ref}"' not in sources]
    assert not unrun, f"no test runs these: {unrun}"


# -- the generated benchmarks page ------------------------------------------------------------


def test_the_benchmarks_page_is_what_the_report_writes_from_the_stored_results(
    tmp_path: Path,
) -> None:
    written = tmp_path / "benchmarks.md"
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "report.py"), "--out", str(written)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    page = REPO / "docs" / "benchmarks.md"
    assert page.read_text() == written.read_text(), "run python benchmarks/report.py"
    results = sorted((REPO / "benchmarks" / "results").glob("*.jsonl"))
    assert results, "no stored results"
    for result in results:  # every stored benchmark has its table, with its date and machine
        assert f"`{result.name}`" in page.read_text(), result.name


# -- module docstrings ------------------------------------------------------------------------

PACKAGES = ("boardlib", "kanban", "tui")


def modules() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (REPO / package).rglob("*.py"))


@pytest.mark.slow
def test_module_docstrings_are_short_and_their_design_text_is_in_docs() -> None:
    """A docstring says what a module is for in a few lines; the design goes in docs/."""
    long = []
    for path in modules():
        docstring = ast.get_docstring(ast.parse(path.read_text()), clean=False) or ""
        if docstring.count("\n") + 1 > 15:
            long.append(f"{path.relative_to(REPO)}: {docstring.count(chr(10)) + 1} lines")
    assert not long, "\n".join(long)


def test_every_link_from_the_code_into_docs_lands() -> None:
    broken = []
    for path in modules():
        for page, anchor in re.findall(r"docs/([a-z_-]+\.md)#([a-z0-9-]+)", path.read_text()):
            target = REPO / "docs" / page
            if not target.exists() or anchor not in anchors(target):
                broken.append(f"{path.relative_to(REPO)}: docs/{page}#{anchor}")
    assert not broken, "\n".join(broken)
