"""What the board shows about a card beyond its row, and for how long.

- A card an agent just changed carries a bar for `HIGHLIGHT_S`.
- A card a person moved to done over the verdict carries `⚑` for good, and done work an operator
  decided won't land says so (the audit table says both; the row does not).
- A card whose lease ran out and that recovery put back in todo says "lease expired: ada" for
  `EXPIRED_LEASE_S`: recovery acts within one poll, so without it the red EXPIRED is never seen.

Plain bookkeeping with deadlines on the monotonic clock (no Textual here): the app asks
`next_deadline` for its one timer and repaints what `expire` returns, so an idle board with no
mark running out writes nothing.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from boardlib.events import EventKind, read
from boardlib.records import Event
from boardlib.wontland import ABANDON_PREFIX

from .cards import NO_NOTES, CardNotes

if TYPE_CHECKING:  # types only: see boardlib/payloads.py
    from boardlib.payloads import LeaseExpired, StatusChanged, WorkspaceUpdated


HIGHLIGHT_S = 4.0
EXPIRED_LEASE_S = 60.0


@dataclass(slots=True)
class Marks:
    changed_until: dict[str, float] = field(default_factory=dict)
    overridden: set[str] = field(default_factory=set)
    wont_land: set[str] = field(default_factory=set)  # done work decided won't land (audited)
    expired_leases: dict[str, tuple[str, float]] = field(default_factory=dict)  # id -> holder

    def is_changed(self, task_id: str) -> bool:
        return task_id in self.changed_until

    def notes_of(self, task_id: str) -> CardNotes:
        expired = self.expired_leases.get(task_id)
        overridden = task_id in self.overridden
        wont_land = task_id in self.wont_land
        if expired is None and not overridden and not wont_land:
            return NO_NOTES
        return CardNotes(
            overridden=overridden,
            expired_lease_of=expired[0] if expired else None,
            wont_land=wont_land,
        )

    def highlight(self, task_ids: Iterable[str], now: float) -> None:
        until = now + HIGHLIGHT_S
        for task_id in task_ids:
            self.changed_until[task_id] = until

    def set_overridden(self, task_ids: Iterable[str]) -> set[str]:
        """A full read's set; returns the ids whose mark changed."""
        new = set(task_ids)
        changed = new ^ self.overridden
        self.overridden = new
        return changed

    def set_wont_land(self, task_ids: Iterable[str]) -> set[str]:
        """A full read's set of done work decided won't land; returns the ids whose mark changed
        (a card draws it only while done and not landed: a landing later needs no removal)."""
        new = set(task_ids)
        changed = new ^ self.wont_land
        self.wont_land = new
        return changed

    def note_events(self, events: Iterable[Event], *, now_ms: int, now: float) -> set[str]:
        """Marks that events set (an override, an expired lease); returns the ids touched.
        An event older than its mark's life (a full read's history) sets nothing."""
        touched: set[str] = set()
        for event in events:
            task_id = event.task_id
            if task_id is None:
                continue
            if event.kind == EventKind.STATUS_CHANGED:
                changed: StatusChanged = read(event.data)
                if changed.get("human_override"):
                    self.overridden.add(task_id)
                    touched.add(task_id)
            elif event.kind == EventKind.WORKSPACE_UPDATED and event.actor:
                updated: WorkspaceUpdated = read(event.data)
                if str(updated.get("reason") or "").startswith(
                    ABANDON_PREFIX.format(actor=event.actor)
                ):
                    self.wont_land.add(task_id)
                    touched.add(task_id)
            elif event.kind == EventKind.LEASE_EXPIRED:
                left = EXPIRED_LEASE_S - max(now_ms - event.created_at, 0) / 1000
                if left > 0:
                    expired: LeaseExpired = read(event.data)
                    holder = str(expired.get("assignee") or "?")
                    self.expired_leases[task_id] = (holder, now + left)
                    touched.add(task_id)
            elif event.kind == EventKind.TASK_CLAIMED:
                touched |= {task_id} if self.expired_leases.pop(task_id, None) else set()
        return touched

    def next_deadline(self) -> float | None:
        deadlines = [*self.changed_until.values()]
        deadlines += [until for _holder, until in self.expired_leases.values()]
        return min(deadlines) if deadlines else None

    def expire(self, now: float) -> set[str]:
        """Drop the marks that ran out by `now`; returns the ids to repaint."""
        gone = {task_id for task_id, until in self.changed_until.items() if until <= now}
        for task_id in gone:
            del self.changed_until[task_id]
        leases = {task_id for task_id, (_h, until) in self.expired_leases.items() if until <= now}
        for task_id in leases:
            del self.expired_leases[task_id]
        return gone | leases
