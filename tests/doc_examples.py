"""The fenced examples of README.md and docs/, found by the marker comment on the line before each:

    <!-- example: worker-loop -->   a runnable example, which a test runs:
                                    example("docs/agents.md#worker-loop")
    <!-- not run: output -->        a block a reader is not meant to run (output, a layout)

tests/walls/test_docs.py fails on a block with neither marker, and on an example no test names.
"""

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"<!-- (example: (?P<name>[a-z0-9-]+)|not run: (?P<why>[^>]+)) -->")


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository: "README.md", "docs/agents.md"
    line: int  # of the opening fence, 1-based
    language: str  # the fence's info string
    text: str
    name: str | None  # the example's name, or None for a block marked "not run"
    why_not_run: str | None

    @property
    def ref(self) -> str:
        return f"{self.page}#{self.name}"


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def blocks(path: Path) -> list[Block]:
    """Every fenced block of one page, with the marker found on the line before it (if any)."""
    page = path.relative_to(REPO).as_posix()
    lines = path.read_text().splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        fence = re.match(r"^(`{3,})(.*)$", lines[index])
        if fence is None:
            index += 1
            continue
        close = next(
            (i for i in range(index + 1, len(lines)) if lines[i].strip() == fence.group(1)),
            len(lines),
        )
        marker = MARKER.fullmatch(lines[index - 1].strip()) if index else None
        found.append(
            Block(
                page=page,
                line=index + 1,
                language=fence.group(2).strip(),
                text="\n".join(lines[index + 1 : close]) + "\n",
                name=marker.group("name") if marker else None,
                why_not_run=marker.group("why") if marker else None,
            )
        )
        index = close + 1
    return found


def example(ref: str) -> str:
    """The text of one runnable example, as a reader copies it: `example("docs/http.md#curl")`."""
    page, _, name = ref.partition("#")
    matches = [block for block in blocks(REPO / page) if block.name == name]
    assert len(matches) == 1, f"{ref}: {len(matches)} examples of that name"
    return matches[0].text
