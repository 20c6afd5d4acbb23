"""Agent text is data, checked where it is drawn: whatever an agent wrote, the TUI's cards, header,
drawer, dialogs, palette, activity lines and notifications, and the CLI's `--format table`, put no
control character (C0 but a newline where allowed, DEL, C1) on screen and create no markup action
(`[@click=...]`) or hyperlink. Hypothesis feeds the renderers; a pilot test then renders the whole
app on a hostile board and checks the exact bytes Textual would write to the terminal."""

import io
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.segment import Segment
from textual.command import Matcher
from textual.content import Content
from textual.geometry import Region

from boardlib import Board, ManualClock
from boardlib import transitions as t
from boardlib.inert import inert
from boardlib.narration import narrate
from boardlib.records import (
    AuditEntry,
    Comment,
    Event,
    Execution,
    LinkedTask,
    Task,
    TaskView,
    Workspace,
)
from boardlib.worktrees.landing import LandingPreview
from kanban.cli.table import _events_table, _record_table, _rows_table, _tasks_table, render_line
from tests.core.test_inert import HOSTILE
from tests.examples import examples
from tests.tui.conftest import Notes, loaded, make_app, until, utc
from tui.cards import CardPalette, CardTones, card_lines
from tui.commands import plain_highlight
from tui.components.header_bar import HeaderBar
from tui.drawer_render import history_block, overview_head, overview_rest, runs_table
from tui.landing_data import Preview, landing_words
from tui.task_view import hanging

NOW = 1_767_261_600_000
HOSTILE_TEXT = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(max_size=80),
    st.lists(st.sampled_from([*HOSTILE, "a", " ", "\n", "[", "]", "@", "=", "/"]), max_size=8).map(
        "".join
    ),
)
SGR_OR_MOVE = re.compile(r"\x1b\[[0-9;:?]*[mHlhJK]")


def unsafe(text: str, *, newline: bool) -> list[str]:
    return [
        repr(char)
        for char in text
        if (ord(char) < 0x20 and not (newline and char == "\n")) or 0x7F <= ord(char) <= 0x9F
    ]


def check_segments(segments: list[Segment], *, newline: bool) -> str:
    """No unsafe character in any segment, no action or link in any style; returns the text."""
    drawn = []
    for segment in segments:
        if segment.control:
            continue
        assert not unsafe(segment.text, newline=newline), segment
        style = segment.style
        if style is not None:
            assert not style.link, segment
            assert not any(key.startswith("@") for key in (style.meta or {})), segment
        drawn.append(segment.text)
    return "".join(drawn)


def check_content(content: Content) -> str:
    assert not unsafe(content.plain, newline=False), content.plain
    for span in content.spans:
        style = str(span.style)
        assert "@click" not in style and "link" not in style, span
    return content.plain


def rendered(renderable: RenderableType, width: int = 100) -> str:
    console = Console(
        width=width, file=io.StringIO(), color_system="truecolor", force_terminal=True
    )
    return check_segments(list(console.render(renderable)), newline=True)


def terminal_output(renderable: RenderableType, width: int = 120) -> str:
    """What a real terminal would receive: only our own SGR codes may carry an ESC."""
    out = io.StringIO()
    Console(width=width, file=out, color_system="truecolor", force_terminal=True).print(renderable)
    text = SGR_OR_MOVE.sub("", out.getvalue())
    assert not unsafe(text, newline=True), text
    return text


def hostile_task(text: str, status: str = t.IN_PROGRESS, **more: Any) -> Task:
    return Task(
        id="TASK-1",
        title=text,
        status=status,
        created_at=NOW,
        updated_at=NOW,
        description=text,
        priority=3,
        team_id=text,
        role=text,
        assignee_agent_id=text,
        assignee_runtime=text,
        claimed_by=text,
        holders=[text],
        lease_until=NOW + 60_000,
        last_heartbeat_at=NOW,
        blocked_reason=text,
        branch_ref=text,
        worktree_ref=text,
        **more,
    )


_NONE = Console().get_style("none")
_TONES = CardTones(*([_NONE] * 9))
PALETTE = CardPalette(_TONES, _TONES, _TONES, _NONE)


@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(HOSTILE_TEXT)
def test_cards_draw_no_control_character_and_no_action(text: str) -> None:
    for status in (*t.STATUSES, "unknown"):
        task = hostile_task(text, status, completed_at=NOW, dropped=int(status == t.BACKLOG))
        for width in (12, 30, 80):
            for strip in card_lines(task, width, PALETTE, now_ms=NOW, selected=True):
                check_segments(list(strip), newline=False)


@pytest.mark.slow
@settings(max_examples=examples(100), suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(HOSTILE_TEXT)
def test_the_drawer_draws_no_control_character_and_no_action(text: str) -> None:
    verdict = {
        "status": "completed_with_debt",
        "attempts": [
            {
                "attempt": 1,
                "at": NOW,
                "status": "fail",
                "deterministic": {
                    "command": text or "x",
                    "exitCode": 1,
                    "passed": False,
                    "stderrTail": text,
                    "durationMs": 5,
                },
            }
        ],
        "debtNotes": [{"criterion": text or "x", "severity": "high", "justification": text or "x"}],
        "updatedAt": NOW,
    }
    task = hostile_task(text, verification=json.dumps(verdict))
    view = TaskView(
        task=task,
        comments=[Comment("C-1", "TASK-1", "agent", text, NOW, author_agent_id=text)],
        ancestors=[],
        dependencies=[LinkedTask("TASK-2", text, t.TODO, assignee_agent_id=text)],
        dependents=[LinkedTask("TASK-3", text, t.DONE)],
        executions=[
            Execution(
                "EXEC-1", "TASK-1", text, "running", NOW, agent_id=text, error=text, summary=text
            )
        ],
        workspaces=[
            Workspace("W-1", "TASK-1", text, "active", NOW, branch=text, worktree_path=text)
        ],
    )
    events = [
        Event(1, "comment_added", NOW, "TASK-1", text, {"comment_id": "C-1"}),
        Event(2, "status_changed", NOW, "TASK-1", text, {"verb": "reject", "reason": text}),
        Event(3, "lease_renewed", NOW, "TASK-1", text, {}),
    ]
    audit = [AuditEntry(1, text, "human_override", NOW, "TASK-1", t.IN_REVIEW, t.DONE, text)]
    preview = Preview("TASK-1", LandingPreview("TASK-1", "conflicts", text, conflicts=[text]), "s")
    # What the drawer draws, tab by tab: the Overview (but its Markdown), Runs, History, Landing.
    drawer = Group(
        overview_head(view, NOW, audit),
        overview_rest(view, None, NOW),
        runs_table(view.executions, NOW),
        history_block(events, audit, NOW, comments=view.comments),
        hanging(landing_words(preview)),
    )
    drawn = rendered(drawer)
    if "[@click=app.quit]" in text:
        assert "[@click=app.quit]" in drawn  # drawn as its characters, not run


@settings(max_examples=examples(100), deadline=None)
@given(HOSTILE_TEXT)
def test_header_palette_and_narration_are_inert(text: str) -> None:
    header = HeaderBar(Path(text or "board.db"), read_only=True, now_ms=lambda: NOW)
    header.facts = header.facts.__class__(
        path=text,
        loaded=True,
        total=3,
        shown=2,
        unreadable_since=NOW,
        unreadable_reason=text,
        filter=text,
        read_only=True,
    )
    check_content(header.render())
    check_content(plain_highlight(Matcher(text[:3] or "a"), inert(f"TASK-1  {text}")))
    event = Event(1, "status_changed", NOW, "TASK-1", text, {"verb": "reject", "reason": text})
    assert not unsafe(inert(narrate(event)), newline=False)


@pytest.mark.slow
@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(HOSTILE_TEXT)
def test_cli_tables_write_no_control_sequence(text: str) -> None:
    task = hostile_task(text).to_json()
    out = terminal_output(_tasks_table([task], title=text))
    if "[@click" in text:
        assert "@click" in out.replace("\n", "").replace(" ", "") or len(text) > 40
    terminal_output(_record_table(task, title=text))
    terminal_output(_rows_table([{"body": text, text or "k": 1}], title=text))
    event = {"seq": 1, "kind": "status_changed", "createdAt": NOW, "taskId": "TASK-1"}
    event |= {"actor": text, "data": {"verb": "block", "reason": text}}
    terminal_output(_events_table([event]))
    line = render_line(event, "event")
    assert not unsafe(line, newline=False)


# -- the real app, on a hostile board ---------------------------------------------------------


EVIL = (
    "clip\x1b]52;c;ZXZpbA==\x07END wipe\x1b[2J "
    "\x1b]8;;https://evil.example/\x1b\\link abc\rOVERWRITE [@click=app.quit]Q[/]"
)


def screen_bytes(app: Any) -> str:
    """The exact terminal sequence Textual would write for a full repaint of the screen."""
    update = app.screen._compositor.render_update(full=True)
    return str(update.render_segments(app.console))


def cells_showing(app: Any, text: str, region: Region) -> list[tuple[int, int]]:
    """Every cell in `region` where `text` starts on screen: where a link made of it, had its
    markup been run, would take the click (one click a place, not one a row of the drawer)."""
    strips = app.screen._compositor.render_strips()
    cells = []
    for y in range(region.y, region.bottom):
        line = "".join(segment.text for segment in strips[y])
        start = line.find(text)
        while start != -1:
            x = cell_len(line[:start])
            if region.x <= x < region.right:
                cells.append((x, y))
            start = line.find(text, start + 1)
    return cells


def assert_terminal_safe(sequence: str) -> None:
    assert "\x1b]" not in sequence  # no OSC: no clipboard write, no hyperlink
    assert "\x07" not in sequence and "\r" not in sequence
    rest = SGR_OR_MOVE.sub("", sequence)
    assert "\x1b" not in rest, rest[max(rest.find("\x1b") - 40, 0) : rest.find("\x1b") + 40]
    assert not unsafe(rest, newline=True)


HOSTILE_AGENT = "agent[@click=app.quit][b]"


@pytest.fixture
def hostile_board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, ManualClock]:
    monkeypatch.chdir(tmp_path)
    utc()
    clock = ManualClock(NOW)
    path = tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        first = board.create_task(EVIL, description=EVIL, role="builder", priority=5)
        other = board.create_task("blocker " + EVIL, priority=4)
        board.link_dependency(first.id, other.id)
        # Names with control characters are refused at every door now (validation.name); markup
        # in a name is still printable, so it is stored and must be drawn inert.
        board.claim(other.id, HOSTILE_AGENT, runtime="rt[/][@click=app.quit]")
        run = board.open_execution(other.id, "[@click=screen.priority(1000)]BUMP[/]")
        board.close_execution(run.id, "failed", agent=HOSTILE_AGENT, error=EVIL)
        board.add_comment(first.id, EVIL, author_agent_id="[@click=app.quit]", author_type="agent")
        board.block(other.id, HOSTILE_AGENT, EVIL)
    # A board written before that refusal may still hold such a name: put one in, as it would be.
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE tasks SET claimed_by = ?, assignee_agent_id = ? WHERE id = ?",
            ("agent\x1b[2J", "agent\x1b]52;c;eA==\x07", other.id),
        )
    return path, clock


def _drawer_on(app: Any, task_id: str) -> bool:
    drawers = app.drawers()
    return bool(drawers) and drawers[0].data is not None and drawers[0].data.task_id == task_id


@pytest.mark.slow  # a long scripted session of the app (over 10 s under load)
async def test_the_app_writes_no_agent_control_sequence(hostile_board) -> None:  # type: ignore[no-untyped-def]
    path, clock = hostile_board
    notes = Notes()
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        await loaded(pilot)
        board_bytes = screen_bytes(app)
        assert_terminal_safe(board_bytes)
        assert "␛]52;c;ZXZpbA==␇" in board_bytes.replace("\x1b", "")  # shown, harmless
        first = next(task for task in app.state.tasks.values() if task.title == EVIL)
        app.jump_to(first.id)
        await pilot.press("enter")
        await until(pilot, lambda: _drawer_on(app, first.id))
        await pilot.pause(0.1)
        assert_terminal_safe(screen_bytes(app))
        await pilot.press("escape")
        blocked = app.state.columns[t.BLOCKED][0]
        app.jump_to(blocked)
        await pilot.press("enter")
        await until(pilot, lambda: _drawer_on(app, blocked))
        await pilot.press("4")  # the Runs tab names the executor
        await pilot.pause(0.3)
        drawer = screen_bytes(app)
        assert_terminal_safe(drawer)
        assert "[@click=screen.priorit" in SGR_OR_MOVE.sub("", drawer)  # drawn, not parsed
        # Clicking the executor's name runs nothing: the priority stays.
        before = app.state.tasks[blocked].priority
        region = app.drawers()[0].region  # the name as drawn (cut short), or as a link's text
        names = cells_showing(app, "[@click=screen.priorit", region)
        names += cells_showing(app, "BUMP", region)
        assert names, "the executor's name is not in the drawer"
        for offset in names:
            await pilot.click(offset=offset)
        await pilot.pause(0.3)
        with Board(path, read_only=True) as board:
            assert board.get_task(blocked).priority == before
        assert app.is_running
        await pilot.press("escape")
        # Dialogs, the palette and notifications.
        app.jump_to(first.id)
        await pilot.press("x")
        await pilot.pause(0.1)
        assert_terminal_safe(screen_bytes(app))
        await pilot.press("escape")
        await pilot.press("ctrl+p")
        await pilot.pause(0.1)
        await pilot.press(*"clip")
        await pilot.pause(0.4)
        assert_terminal_safe(screen_bytes(app))
        await pilot.press("escape")
        app.notify(EVIL, title=EVIL)
        await pilot.pause(0.2)
        assert_terminal_safe(screen_bytes(app))
