"""One task drawn as a card of fixed height: plain functions from a `Task` to lines of segments.

Kept apart from the column widget so the look can be read (and tested) without a running app.
Every string that came from the database passes through `boardlib.inert` here, and cards are built
from segments, never markup: a title is drawn as its characters, whatever they are.
Times are absolute wall-clock times (`14:35:07`), never "3 min ago": a relative time would have to
repaint every second, and an idle board must write nothing to the terminal. What does change with
time alone, a lease running out, changes the card's *state* (ok, soon, expired) at moments we can
compute in advance (`next_lease_change`), so the app repaints only then.
"""

import json
import time
from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from boardlib import transitions as t
from boardlib.attention import landing_by, verifying_since
from boardlib.budgets import amount
from boardlib.inert import inert
from boardlib.records import BUDGET_USD, MICROS_PER_USD, Task

CARD_LINES = 3  # lines of text per card
CARD_HEIGHT = CARD_LINES + 1  # and a gap between cards
LEASE_WARN_MAX_MS = 120_000  # warn at most this long before a lease runs out...
LEASE_WARN_FRACTION = 4  # ...or in its last quarter, for short leases

OK, SOON, EXPIRED, NO_LEASE = "ok", "soon", "expired", "none"

VERDICTS = {
    "pass": ("✓ pass", "success"),
    "fail": ("✗ fail", "error"),
    "completed_with_debt": ("≈ debt", "warning"),
}


@dataclass(frozen=True, slots=True)
class CardNotes:
    """What the app knows about a card beyond its row: a human override (the audit table), and
    for a short while after recovery released it, whose lease expired (the row no longer says)."""

    overridden: bool = False
    expired_lease_of: str | None = None
    marked: bool = False  # the operator marked it (`space`) to act on several at once
    # The board itself blocked it over a spent budget (its own event, as the inbox reads it): an
    # agent's reason in the same words (`budget_exceeded: ...`) is drawn as the agent's words.
    budget_block: bool = False
    verifying_since: int | None = None  # ms: in review, its verification gate judges it now
    wont_land: bool = False  # done work an operator decided won't land (the audit table says so)
    landing: tuple[str, int] | None = None  # a landing of it under way: its lander, since (ms)


NO_NOTES = CardNotes()
BUDGET_BLOCK = "⚠ board: over budget"  # the board's own budget block: 20 cells, a card's width
SPENT_MARK = "⚠"  # before the spend, in its shortest form, once a budget is spent
OVERRIDE_MARK = "⚑"
LANDED_MARK = "⤓"  # before the landed commit, on the card and in the drawer
WONT_LAND = "✗ won't land"  # a done card whose work an operator decided won't land
MARKED_MARK = "◆"  # marked to act on several cards at once
SELECTED_MARK = "▌"  # the bar down the selected card
CHANGED_MARK = "●"  # an agent just changed the card (on its first line)
REMEMBERED_MARK = "▏"  # the remembered selection of a column without focus


@dataclass(frozen=True, slots=True)
class CardTones:
    """A card's styles on one of its backgrounds, each part's colour resolved against that
    background (a translucent or `auto` colour is what it looks like there)."""

    base: Style
    ident: Style
    title: Style
    muted: Style
    accent: Style
    success: Style
    warning: Style
    error: Style
    changed: Style


@dataclass(frozen=True, slots=True)
class CardPalette:
    """The tones of a plain card, the selected card and a column's remembered selection (the
    cursor of a column that does not have focus), and the gap between cards."""

    card: CardTones
    selected: CardTones
    cursor: CardTones
    gap: Style

    def backgrounds(self) -> dict[str, CardTones]:
        return {"card": self.card, "selected": self.selected, "cursor": self.cursor}


def _warn_window(task: Task) -> int:
    if task.lease_until is None:
        return 0
    length = task.lease_until - (task.last_heartbeat_at or task.lease_until)
    return min(LEASE_WARN_MAX_MS, max(length // LEASE_WARN_FRACTION, 1000))


def lease_state(task: Task, now_ms: int) -> str:
    if task.status != t.IN_PROGRESS or task.lease_until is None:
        return NO_LEASE
    if task.lease_expired(now_ms):
        return EXPIRED
    if task.lease_until - now_ms <= _warn_window(task):
        return SOON
    return OK


def next_lease_change(task: Task, now_ms: int) -> int | None:
    """When this card's lease state will next change by the passing of time alone."""
    if task.status != t.IN_PROGRESS or task.lease_until is None:
        return None
    warn_at = task.lease_until - _warn_window(task)
    if now_ms < warn_at:
        return warn_at
    if not task.lease_expired(now_ms):
        return task.lease_until + 1  # the first millisecond the board treats it as expired
    return None


def verdict_of(task: Task) -> str | None:
    """The verdict's status word, read without pydantic (a card must not pay for validation)."""
    if not task.verification:
        return None
    try:
        status = json.loads(task.verification).get("status")
    except (ValueError, AttributeError):
        return "unreadable"
    return status if isinstance(status, str) else "unreadable"


def clock_text(ms: int, now_ms: int) -> str:
    """`14:35:07` today, `11-03 14:35` on another day this year, `2024-12-06` in another year
    (local time): a task done two years ago read `12-06 08:13`, as if done today."""
    moment = time.localtime(ms / 1000)
    today = time.localtime(now_ms / 1000)
    if today[:3] == moment[:3]:
        return time.strftime("%H:%M:%S", moment)
    if today[0] != moment[0]:
        return time.strftime("%Y-%m-%d", moment)
    return time.strftime("%m-%d %H:%M", moment)


def short_clock(ms: int, now_ms: int) -> str:
    """`14:35` today (a card's room: "verifying since 14:35" is a 21-cell card's width), else
    as `clock_text` says it."""
    moment = time.localtime(ms / 1000)
    if time.localtime(now_ms / 1000)[:3] == moment[:3]:
        return time.strftime("%H:%M", moment)
    return clock_text(ms, now_ms)


def fit(text: str, width: int) -> str:
    """Exactly `width` cells: padded, or cut with an ellipsis."""
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return set_cell_size(text, width)
    return set_cell_size(text, width - 1) + "…"


def money(cost: float) -> str:
    return amount(cost, BUDGET_USD)


BUDGET_WARN_AT = 0.8  # a budget this much spent shows in the warning colour


def _limit(usd: float) -> str:
    """A budget on a card: `$5` when whole dollars (short), else as every amount is drawn."""
    return f"${int(usd):,}" if usd == int(usd) else amount(usd, BUDGET_USD)


def _tokens(count: float) -> str:
    return f"{count / 1000:.0f}k" if count >= 10_000 else f"{count:.0f}"


def _spend_parts(task: Task) -> tuple[str, str, str, float, float] | None:
    """Spent and limit as a card says them, the unit after them, and the two numbers."""
    if task.budget_usd is not None:
        spent, limit = task.subtree_cost_micros / MICROS_PER_USD, task.budget_usd
        return money(spent), _limit(limit), "", spent, limit
    if task.budget_tokens is not None:
        spent_tokens, limit_tokens = task.subtree_tokens, task.budget_tokens
        return _tokens(spent_tokens), _tokens(limit_tokens), " tok", spent_tokens, limit_tokens
    return None


def spend(task: Task) -> tuple[str, str] | None:
    """A budgeted task's spend against its budget (its whole subtree's, as the board counts it):
    `$4.20 / $5` and its tone: muted, `warning` from 80%, `error` once spent. The dollar budget
    when it has one, else the token budget; None without a budget."""
    parts = _spend_parts(task)
    if parts is None:
        return None
    spent_text, limit_text, unit, spent, limit = parts
    text = f"{spent_text} / {limit_text}{unit}"
    if spent >= limit:
        return text, "error"
    return text, "warning" if spent >= BUDGET_WARN_AT * limit else "muted"


def spend_shorter(task: Task) -> tuple[str, ...]:
    """The spend said shorter, for a card too narrow for the whole (a 23-cell column hid every
    figure of 13 cells or more: `$0.20 / $0.05`): `$0.20/$0.05`, then once spent `⚠$0.20`, so a
    spent budget always shows."""
    parts = _spend_parts(task)
    if parts is None:
        return ()
    spent_text, limit_text, unit, spent, limit = parts
    compact = f"{spent_text}/{limit_text}{unit}"
    return (compact, f"{SPENT_MARK}{spent_text}{unit}") if spent >= limit else (compact,)


_Right = tuple[str, Style, tuple[str, ...], bool]  # text, style, shorter forms, kept


class _Line:
    """Left- and right-aligned parts of one card line. Optional parts are left out whole when they
    do not fit; the last required part is cut with an ellipsis."""

    def __init__(self) -> None:
        self.left: list[tuple[str, Style, bool]] = []
        self.right: list[_Right] = []

    def add(self, text: str, style: Style, *, optional: bool = False) -> "_Line":
        if text:
            self.left.append((text, style, optional))
        return self

    def add_right(
        self, text: str, style: Style, *, short: str | tuple[str, ...] = "", keep: bool = False
    ) -> "_Line":
        """A right-aligned part; `short` is what it says where the whole does not fit (an
        expired lease still says EXPIRED on a narrow card, without its time), shortest last.
        A part to `keep` (a spent budget) outlasts the others: they go before its last form."""
        if text:
            shorter = (short,) if isinstance(short, str) else short
            self.right.append((text, style, tuple(form for form in shorter if form), keep))
        return self

    def segments(self, width: int, base: Style) -> list[Segment]:
        right = list(self.right)
        while right and cell_len(" ".join(part[0] for part in right)) + 1 > width - 8:
            _fit_right(right)  # the left part keeps an id's worth of room
        right_width = cell_len(" ".join(part[0] for part in right))
        left_room = width - (right_width + 1 if right else 0)
        segments: list[Segment] = []
        used = 0
        for text, style, optional in self.left:
            piece = (" " if used else "") + text
            room = left_room - used
            if room <= 0:
                break
            if cell_len(piece) > room:
                if optional:
                    continue
                piece = fit(piece, room)
            segments.append(Segment(piece, base + style))
            used += cell_len(piece)
        if used < left_room:
            segments.append(Segment(" " * (left_room - used), base))
        for text, style, _, _ in right:
            segments.append(Segment(" ", base))
            segments.append(Segment(text, base + style))
        return segments


def _fit_right(right: list[_Right]) -> None:
    """One step narrower: a part said shorter (but a kept part not yet in its last form), else
    the last part that need not stay left out, else a kept part said shorter, else the last."""
    for index in reversed(range(len(right))):
        _text, style, shorter, keep = right[index]
        if shorter and (not keep or len(shorter) > 1):
            right[index] = (shorter[0], style, shorter[1:], keep)
            return
    for index in reversed(range(len(right))):
        if not right[index][3]:
            del right[index]
            return
    for index in reversed(range(len(right))):
        _text, style, shorter, keep = right[index]
        if shorter:
            right[index] = (shorter[0], style, shorter[1:], keep)
            return
    right.pop()


def _done_facts(task: Task, now_ms: int) -> list[str]:
    """A done card's who and when (`carol ✓14:35:07`), longest first, as its line says them."""
    if task.completed_at is None:
        return []
    when = f"✓{clock_text(task.completed_at, now_ms)}"
    who = inert(task.attempt_claimer or "")
    return [f"{who} {when}", when] if who else [when]


def card_lines(
    task: Task,
    width: int,
    palette: CardPalette,
    *,
    now_ms: int,
    selected: bool = False,
    cursor: bool = False,
    changed: bool = False,
    notes: CardNotes = NO_NOTES,
) -> list[Strip]:
    """The CARD_HEIGHT strips of one card at `width` cells (a bar, the text, a right margin)."""
    p = palette.selected if selected else palette.cursor if cursor else palette.card
    base = p.base
    inner = max(width - 2, 1)

    head = _Line()
    if notes.marked:
        head.add(MARKED_MARK, p.accent)
    head.add(inert(task.id), p.ident)
    if notes.overridden:
        head.add(OVERRIDE_MARK, p.warning)  # done over the verdict by a person (audited)
    if task.priority:
        head.add(f"P{task.priority}", p.warning if task.priority >= 3 else p.accent)
    if task.unmet_deps and task.status not in t.TERMINAL:
        head.add(f"deps:{task.unmet_deps}", p.warning, optional=True)
    verdict = verdict_of(task)
    if verdict is not None:
        text, tone = VERDICTS.get(verdict, ("? verdict", "warning"))
        head.add_right(text, getattr(p, tone))
    budget = spend(task)
    if budget is not None:
        spent = budget[1] == "error"  # the board's own figure: kept where anything else goes
        head.add_right(budget[0], getattr(p, budget[1]), short=spend_shorter(task), keep=spent)
    elif task.cost_usd:
        head.add_right(money(task.cost_usd), p.muted)

    title = _Line()
    if task.dropped:
        title.add("[dropped]", p.muted)
    title.add(inert(task.title), p.muted if task.dropped else p.title)

    meta = _Line()
    status = task.status
    if notes.expired_lease_of is not None and status != t.IN_PROGRESS:
        meta.add(f"lease expired: {inert(notes.expired_lease_of)}", p.error)
    elif status == t.IN_PROGRESS:
        who = inert(task.assignee_agent_id or "?")
        if task.assignee_runtime:
            who += f"·{inert(task.assignee_runtime)}"
        meta.add(who, p.accent)
        if task.last_heartbeat_at is not None:
            meta.add(f"♥{clock_text(task.last_heartbeat_at, now_ms)}", p.muted, optional=True)
        state = lease_state(task, now_ms)
        if task.lease_until is not None:
            until = clock_text(task.lease_until, now_ms)
            if state == EXPIRED:
                meta.add_right(f"EXPIRED {until}", p.error, short="EXPIRED")
            elif state == SOON:
                meta.add_right(f"→{until}!", p.warning)
            else:
                meta.add_right(f"→{until}", p.muted)
    elif status == t.BLOCKED and notes.budget_block:
        meta.add(BUDGET_BLOCK, p.error)  # the board's words, not the reason an agent could write
    elif status == t.BLOCKED:
        meta.add(f"⚠ {inert(task.blocked_reason or 'blocked')}", p.warning)
    elif status in (t.IN_REVIEW, t.DONE) and notes.landing is not None and not task.landed_commit:
        # Another landing would only queue behind it: the inbox leaves it out (`attention.landings`)
        lander, at = inert(notes.landing[0]), short_clock(notes.landing[1], now_ms)
        said = [landing_by(lander, at), landing_by(lander), landing_by(None, at)]
        # A done card says who did the work and when it was approved too, where it has room;
        # where it has not (80 columns), the landing wins: it is what happens now, and why the
        # inbox leaves the card out. The drawer says both, always.
        done = _done_facts(task, now_ms) if status == t.DONE else []
        both = [(s, d) for s in said for d in done if cell_len(f"{s} · {d}") <= inner]
        if both:
            meta.add(both[0][0], p.accent).add(f"· {both[0][1]}", p.muted)
        else:
            meta.add(next((s for s in said if cell_len(s) <= inner), said[-1]), p.accent)
    elif status == t.IN_REVIEW and notes.verifying_since is not None:
        # Its gate judges it, nobody need act: the inbox leaves it out (`attention.gate_since`).
        meta.add(verifying_since(short_clock(notes.verifying_since, now_ms)), p.accent)
    elif status == t.IN_REVIEW:
        meta.add("to review", p.accent)
        builder = task.builder
        if builder:
            meta.add(f"from {inert(builder)}", p.muted)  # the builder, who may not judge it
    elif status in (t.TODO, t.BACKLOG):
        if task.role:
            meta.add(f"[{inert(task.role)}]", p.accent)
        if task.is_ready:
            meta.add("ready", p.success)
        elif task.unmet_deps:
            meta.add("waiting", p.muted)
        if task.team_id:
            meta.add(f"team:{inert(task.team_id)}", p.muted, optional=True)
    elif status == t.DONE:
        if task.landed_commit:  # where its work is now: the commit on its base branch
            meta.add(f"{LANDED_MARK}{inert(task.landed_commit[:7])}", p.success)
        elif notes.wont_land:  # not waiting to land: an operator decided (the drawer says why)
            meta.add(WONT_LAND, p.warning)
        meta.add(inert(task.attempt_claimer or ""), p.muted)  # who did this work, as the drawer
        if task.completed_at is not None:
            meta.add(f"✓{clock_text(task.completed_at, now_ms)}", p.muted)
    else:
        meta.add(inert(status), p.muted)

    # The left edge says what the card is to the operator, in shapes as well as colours (16
    # colours can merge backgrounds): the selection, a remembered one, just changed (head line).
    if selected:
        side = Segment(SELECTED_MARK, base + p.accent)
    elif cursor:
        side = Segment(REMEMBERED_MARK, base + p.muted)
    else:
        side = Segment(" ", base)
    head_side = Segment(CHANGED_MARK, base + p.changed) if changed else side
    lines: list[Strip] = []
    for index, line in enumerate((head, title, meta)):
        edge = head_side if index == 0 else side
        segments = [edge, *line.segments(inner, base), Segment(" ", base)]
        lines.append(Strip(segments, width))
    lines.append(Strip.blank(width, palette.gap))
    return lines
