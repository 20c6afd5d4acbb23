"""The landing queue's statements (table `land_queue`, migration 2), shared by both stores.

One row per landing in flight: it waits its turn in its repository+branch queue (by `seq`), then
holds the turn under a lease, and carries the landing's intent (the base tip it builds on and the
commit it will move the branch to) from just before the branch moves until the landing is
recorded on the task; and, from when it is built, the commit it would land and the tip that is
built on (the landing behind it builds and verifies on that commit while it waits; nothing else
reads them). `holder` is the lander's unique token: every change to a row is guarded by it, and a
renewal also by the lease still running, so a lander whose lease ran out (and whose row a
successor may be recovering) can never write to the row again. The rules live in
`boardlib.landings`; these are single statements.
"""

import json
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # base.py builds `Tx` on `LandingTx`, so the import goes one way only
    from .base import Row

LAND_QUEUE_COLUMNS = frozenset(
    {"state", "lease_until", "old_tip", "new_commit", "built_base", "built_commit", "options",
     "updated_at"}
)  # fmt: skip


class LandingTx(Protocol):
    """The landing queue's part of `base.Tx`."""

    def land_queue(self, repo_path: str, ref: str) -> "list[Row]":
        """The queue of one repository's branch, in serving order."""
        ...

    def land_queue_entry(self, entry_id: str) -> "Row | None": ...

    def land_queue_entry_of_task(self, task_id: str) -> "Row | None": ...

    def land_queue_all(self) -> "list[Row]":
        """Every queued landing, oldest first (recovery passes read them)."""
        ...

    def insert_land_queue_entry(self, values: dict[str, Any]) -> "Row":
        """A new row at the end of its queue, numbered `LAND-<seq>`."""
        ...

    def update_land_queue_entry(
        self, entry_id: str, holder: str, changes: dict[str, Any], *, live_at: int | None = None
    ) -> "Row | None":
        """Change a row its holder still holds (with `live_at`: only while its lease runs at that
        time); None when it does not."""
        ...

    def delete_land_queue_entry(self, entry_id: str, holder: str) -> bool: ...


class LandingStatements(ABC):
    """`LandingTx` over the seam of `queries.SharedTx` (`_fetchall`, `_fetchone`, `_execute`)."""

    @abstractmethod
    def _fetchall(self, query: str, params: Any = ()) -> "list[Row]": ...

    @abstractmethod
    def _fetchone(self, query: str, params: Any = ()) -> "Row | None": ...

    @abstractmethod
    def _execute(self, query: str, params: Any = ()) -> int: ...

    def land_queue(self, repo_path: str, ref: str) -> "list[Row]":
        return self._fetchall(
            "SELECT * FROM land_queue WHERE repo_path = ? AND ref = ? ORDER BY seq",
            (repo_path, ref),
        )

    def land_queue_entry(self, entry_id: str) -> "Row | None":
        return self._fetchone("SELECT * FROM land_queue WHERE id = ?", (entry_id,))

    def land_queue_entry_of_task(self, task_id: str) -> "Row | None":
        return self._fetchone("SELECT * FROM land_queue WHERE task_id = ?", (task_id,))

    def land_queue_all(self) -> "list[Row]":
        return self._fetchall("SELECT * FROM land_queue ORDER BY seq")

    def insert_land_queue_entry(self, values: dict[str, Any]) -> "Row":
        row = self._fetchone("SELECT COALESCE(MAX(seq), 0) + 1 FROM land_queue")
        assert row is not None
        seq = int(row[0])
        columns = ("seq", "id", *values)
        params = [seq, f"LAND-{seq}"]
        params += [json.dumps(v) if k == "options" else v for k, v in values.items()]
        inserted = self._fetchone(
            f"INSERT INTO land_queue ({', '.join(columns)}) "
            f"VALUES ({', '.join('?' * len(columns))}) RETURNING *",
            params,
        )
        assert inserted is not None
        return inserted

    def update_land_queue_entry(
        self, entry_id: str, holder: str, changes: dict[str, Any], *, live_at: int | None = None
    ) -> "Row | None":
        assert changes and set(changes) <= LAND_QUEUE_COLUMNS, changes
        assignments = ", ".join(f"{column} = :{column}" for column in sorted(changes))
        params = {k: json.dumps(v) if k == "options" else v for k, v in changes.items()}
        params |= {"entry_id": entry_id, "holder": holder}
        guard = ""
        if live_at is not None:
            guard = " AND lease_until >= :live_at"
            params["live_at"] = live_at
        return self._fetchone(
            f"UPDATE land_queue SET {assignments} WHERE id = :entry_id AND holder = :holder"
            f"{guard} RETURNING *",
            params,
        )

    def delete_land_queue_entry(self, entry_id: str, holder: str) -> bool:
        return (
            self._execute("DELETE FROM land_queue WHERE id = ? AND holder = ?", (entry_id, holder))
            > 0
        )
