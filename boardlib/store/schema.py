"""The board's tables, versioned with `PRAGMA user_version` and migrated in code.

Each migration runs in one `BEGIN IMMEDIATE` transaction that re-reads the version first; append
new migrations, never edit a released one. Readiness is kept in `tasks.unmet_deps`, and indexes
are few on purpose: docs/architecture.md#the-sqlite-schema
"""

import functools
import sqlite3
from pathlib import Path

from ..records import (
    ANCHOR_SIDES,
    AUTHOR_TYPES,
    BOARD_SCOPE,
    DAY_MS,
    EXECUTION_STATUSES,
    LAND_QUEUE_STATES,
    LAND_STRATEGIES,
    TEAM_SCOPE_PREFIX,
    WORKSPACE_STATUSES,
)
from .literals import (
    BLOCKED,
    CANCELLED,
    DONE,
    IN_PROGRESS,
    IN_REVIEW,
    RUN_RUNNING,
    TASK_CLAIMED_EVENT,
    TASK_STATUSES,
    TODO,
    WORKSPACE_ACTIVE,
    sql_list,
)

# The full-text index of tasks (migration 10) and the columns it holds, in the index's order:
# a search's words are looked up there first (queries.text_match).
TEXT_INDEX = "tasks_text"
TEXT_INDEX_VERSION = 10  # the schema version that made it, where this SQLite can
TEXT_INDEX_COLUMNS = ("id", "title", "description")
TEXT_INDEXED = ", ".join(TEXT_INDEX_COLUMNS)


def _columns(row: str) -> str:
    return ", ".join(f"{row}.{column}" for column in TEXT_INDEX_COLUMNS)


def budgets_and_flow(real: str, integer: str, without_rowid: str) -> tuple[str, ...]:
    """Migration 3 of both stores, in their column types: task budgets with the running spend of
    each subtree, the daily budgets and their spend, and the columns and indexes the flow figures
    (`kanban stats`) read. Backfilled from the ledger and the event log."""

    def micros(run: str = "") -> str:
        return f"CAST(ROUND(COALESCE({run}cost_usd, 0) * 1000000) AS {integer})"

    def tokens(run: str = "") -> str:
        counts = ("input_tokens", "output_tokens", "cache_read", "cache_write")
        return "(" + " + ".join(f"COALESCE({run}{count}, 0)" for count in counts) + ")"

    return (
        f"ALTER TABLE tasks ADD COLUMN budget_usd {real} CHECK (budget_usd >= 0)",
        f"ALTER TABLE tasks ADD COLUMN budget_tokens {integer} CHECK (budget_tokens >= 0)",
        f"ALTER TABLE tasks ADD COLUMN tokens {integer} NOT NULL DEFAULT 0",
        f"ALTER TABLE tasks ADD COLUMN subtree_cost_micros {integer} NOT NULL DEFAULT 0",
        f"ALTER TABLE tasks ADD COLUMN subtree_tokens {integer} NOT NULL DEFAULT 0",
        f"ALTER TABLE tasks ADD COLUMN first_claimed_at {integer}",
        f"ALTER TABLE tasks ADD COLUMN review_entered_at {integer}",
        f"ALTER TABLE tasks ADD COLUMN review_wait_ms {integer} NOT NULL DEFAULT 0",
        f"""
        CREATE TABLE budgets (
            scope        TEXT    PRIMARY KEY,
            daily_usd    {real} CHECK (daily_usd >= 0),
            daily_tokens {integer} CHECK (daily_tokens >= 0),
            updated_at   {integer} NOT NULL,
            updated_by   TEXT    NOT NULL
        )
        """,
        f"""
        CREATE TABLE daily_spend (
            scope       TEXT    NOT NULL,
            day         {integer} NOT NULL,
            cost_micros {integer} NOT NULL DEFAULT 0,
            tokens      {integer} NOT NULL DEFAULT 0,
            PRIMARY KEY (scope, day)
        ){without_rowid}
        """,
        # The flow figures read one window each, through an index that holds every column the
        # figure reads (a covering index: the window's entries, in order, and no table row): the
        # tasks done in it, the runs closed in it, the events of one kind in it; the review
        # queue; and a team's tasks, for `--team`.
        "CREATE INDEX tasks_done ON tasks (completed_at, first_claimed_at, review_wait_ms, "
        f"team_id, dropped, status) WHERE status = {DONE}",
        "CREATE INDEX tasks_in_review ON tasks (review_entered_at, team_id, dropped, status) "
        f"WHERE status = {IN_REVIEW}",
        "CREATE INDEX tasks_team ON tasks (team_id, id) WHERE team_id IS NOT NULL",
        "CREATE INDEX tasks_budgeted ON tasks (id) "
        "WHERE budget_usd IS NOT NULL OR budget_tokens IS NOT NULL",
        "CREATE INDEX executions_completed ON execution_processes (completed_at, agent_id, "
        "status, task_id, cost_usd, input_tokens, output_tokens, cache_read, cache_write) "
        "WHERE completed_at IS NOT NULL",
        "CREATE INDEX events_kind ON events (kind, created_at, actor, task_id)",
        f"""
        UPDATE tasks SET tokens = (
            SELECT SUM({tokens()}) FROM execution_processes e WHERE e.task_id = tasks.id
        ) WHERE id IN (SELECT task_id FROM execution_processes)
        """,
        f"""
        WITH RECURSIVE own(id, micros, tokens) AS (
            SELECT task_id, SUM({micros()}), SUM({tokens()})
            FROM execution_processes GROUP BY task_id
        ),
        up(anc, micros, tokens, depth) AS (
            SELECT id, micros, tokens, 0 FROM own
            UNION ALL
            SELECT t.parent_task_id, up.micros, up.tokens, up.depth + 1
            FROM up JOIN tasks t ON t.id = up.anc
            WHERE t.parent_task_id IS NOT NULL AND up.depth < 1000
        )
        UPDATE tasks SET subtree_cost_micros = s.micros, subtree_tokens = s.tokens
        FROM (SELECT anc, SUM(micros) AS micros, SUM(tokens) AS tokens FROM up GROUP BY anc) AS s
        WHERE tasks.id = s.anc
        """,
        f"""
        UPDATE tasks SET first_claimed_at = COALESCE(
            (SELECT MIN(created_at) FROM events ev
             WHERE ev.task_id = tasks.id AND ev.kind = {TASK_CLAIMED_EVENT}),
            (SELECT MIN(claimed_at) FROM execution_processes e WHERE e.task_id = tasks.id)
        ) WHERE attempts > 0
        """,
        f"UPDATE tasks SET review_entered_at = updated_at WHERE status = {IN_REVIEW}",
        f"""
        INSERT INTO daily_spend (scope, day, cost_micros, tokens)
        SELECT '{BOARD_SCOPE}', completed_at / {DAY_MS}, SUM({micros()}), SUM({tokens()})
        FROM execution_processes WHERE completed_at IS NOT NULL
        GROUP BY completed_at / {DAY_MS}
        """,
        f"""
        INSERT INTO daily_spend (scope, day, cost_micros, tokens)
        SELECT '{TEAM_SCOPE_PREFIX}' || t.team_id, e.completed_at / {DAY_MS},
               SUM({micros("e.")}), SUM({tokens("e.")})
        FROM execution_processes e JOIN tasks t ON t.id = e.task_id
        WHERE e.completed_at IS NOT NULL AND t.team_id IS NOT NULL
        GROUP BY t.team_id, e.completed_at / {DAY_MS}
        """,
    )


MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 1: the board of seed 000 plus the lease protocol of seed 002
    (
        f"""
        CREATE TABLE tasks (
            seq                  INTEGER PRIMARY KEY,
            id                   TEXT    NOT NULL UNIQUE,
            title                TEXT    NOT NULL,
            description          TEXT,
            status               TEXT    NOT NULL CHECK (status IN ({TASK_STATUSES})),
            priority             INTEGER NOT NULL DEFAULT 0,
            team_id              TEXT,
            role                 TEXT,
            kind                 TEXT    NOT NULL DEFAULT 'code',
            assignee_agent_id    TEXT,
            assignee_runtime     TEXT,
            claimed_by           TEXT,
            holders              TEXT    NOT NULL DEFAULT '[]',
            claim_epoch          INTEGER NOT NULL DEFAULT 0,
            lease_until          INTEGER,
            last_heartbeat_at    INTEGER,
            attempts             INTEGER NOT NULL DEFAULT 0,
            unmet_deps           INTEGER NOT NULL DEFAULT 0,
            blocked_reason       TEXT,
            parent_task_id       TEXT REFERENCES tasks(id),
            source_delegation_id TEXT,
            worktree_ref         TEXT,
            branch_ref           TEXT,
            cost_usd             REAL    NOT NULL DEFAULT 0,
            parent_session_id    TEXT,
            dropped              INTEGER NOT NULL DEFAULT 0 CHECK (dropped IN (0, 1)),
            tenant_id            TEXT,
            scheduled_by         TEXT    NOT NULL DEFAULT 'manual',
            verification         TEXT,
            created_at           INTEGER NOT NULL,
            updated_at           INTEGER NOT NULL,
            completed_at         INTEGER
        )
        """,
        # The claim-next pick: ready tasks by priority, then most recently changed.
        f"""
        CREATE INDEX tasks_ready ON tasks (priority DESC, updated_at DESC)
        WHERE status = {TODO} AND dropped = 0 AND unmet_deps = 0
        """,
        f"""
        CREATE INDEX tasks_ready_by_role ON tasks (role, priority DESC, updated_at DESC)
        WHERE status = {TODO} AND dropped = 0 AND unmet_deps = 0
        """,
        # Expired-lease release: only in-progress tasks carry a lease worth checking.
        f"CREATE INDEX tasks_lease ON tasks (lease_until) WHERE status = {IN_PROGRESS}",
        # claim-next with dependencies ignored picks the better of the ready index and this one
        # (todo tasks still waiting on a dependency); a normal claim never touches it.
        f"""
        CREATE INDEX tasks_waiting ON tasks (priority DESC, updated_at DESC)
        WHERE status = {TODO} AND dropped = 0 AND unmet_deps > 0
        """,
        "CREATE INDEX tasks_parent ON tasks (parent_task_id) WHERE parent_task_id IS NOT NULL",
        "CREATE INDEX tasks_root_created ON tasks (created_at) WHERE parent_task_id IS NULL",
        """
        CREATE TABLE task_deps (
            task_id            TEXT    NOT NULL REFERENCES tasks(id),
            depends_on_task_id TEXT    NOT NULL REFERENCES tasks(id),
            tenant_id          TEXT,
            created_at         INTEGER NOT NULL,
            PRIMARY KEY (task_id, depends_on_task_id)
        ) WITHOUT ROWID
        """,
        "CREATE INDEX task_deps_reverse ON task_deps (depends_on_task_id, task_id)",
        f"""
        CREATE TABLE task_comments (
            seq             INTEGER PRIMARY KEY,
            id              TEXT    NOT NULL UNIQUE,
            task_id         TEXT    NOT NULL REFERENCES tasks(id),
            author_agent_id TEXT,
            author_type     TEXT    NOT NULL CHECK (author_type IN ({sql_list(AUTHOR_TYPES)})),
            body            TEXT    NOT NULL,
            tenant_id       TEXT,
            created_at      INTEGER NOT NULL
        )
        """,
        "CREATE INDEX task_comments_task ON task_comments (task_id, seq)",
        f"""
        CREATE TABLE workspaces (
            seq           INTEGER PRIMARY KEY,
            id            TEXT    NOT NULL UNIQUE,
            task_id       TEXT    NOT NULL REFERENCES tasks(id),
            repo_path     TEXT    NOT NULL,
            branch        TEXT,
            worktree_path TEXT,
            base_commit   TEXT,
            status        TEXT    NOT NULL CHECK (status IN ({sql_list(WORKSPACE_STATUSES)})),
            tenant_id     TEXT,
            created_at    INTEGER NOT NULL,
            last_used_at  INTEGER
        )
        """,
        "CREATE INDEX workspaces_task ON workspaces (task_id, seq)",
        f"""
        CREATE TABLE execution_processes (
            seq                INTEGER PRIMARY KEY,
            id                 TEXT    NOT NULL UNIQUE,
            task_id            TEXT    NOT NULL REFERENCES tasks(id),
            workspace_id       TEXT,
            executor_type      TEXT    NOT NULL,
            agent_id           TEXT,
            claim_epoch        INTEGER,
            status             TEXT    NOT NULL CHECK (status IN ({sql_list(EXECUTION_STATUSES)})),
            claimed_at         INTEGER,
            started_at         INTEGER,
            completed_at       INTEGER,
            before_commit      TEXT,
            after_commit       TEXT,
            input_tokens       INTEGER,
            output_tokens      INTEGER,
            cache_read         INTEGER,
            cache_write        INTEGER,
            cost_usd           REAL,
            summary            TEXT,
            run_reason         TEXT,
            error              TEXT,
            recovery_tombstone INTEGER NOT NULL DEFAULT 0,
            tenant_id          TEXT,
            created_at         INTEGER NOT NULL
        )
        """,
        "CREATE INDEX executions_task ON execution_processes (task_id, seq)",
        "CREATE INDEX executions_running ON execution_processes (task_id) "
        f"WHERE status = {RUN_RUNNING}",
        """
        CREATE TABLE events (
            seq         INTEGER PRIMARY KEY,
            task_id     TEXT,
            kind        TEXT    NOT NULL,
            actor       TEXT,
            data        TEXT    NOT NULL DEFAULT '{}',
            created_at  INTEGER NOT NULL,
            ttl_seconds INTEGER,
            tenant_id   TEXT
        )
        """,
        "CREATE INDEX events_task ON events (task_id, seq)",
        """
        CREATE TABLE audit (
            seq                INTEGER PRIMARY KEY AUTOINCREMENT,
            task_id            TEXT,
            actor              TEXT    NOT NULL,
            action             TEXT    NOT NULL,
            from_status        TEXT,
            to_status          TEXT,
            verdict_overridden TEXT,
            detail             TEXT,
            created_at         INTEGER NOT NULL,
            tenant_id          TEXT
        )
        """,
        "CREATE INDEX audit_task ON audit (task_id, seq)",
    ),
    # 2: landing (boardlib.landings): where a task's work landed, the branch a worktree was made
    # from, and the per-branch landing queue with its lease and its intent
    (
        "ALTER TABLE tasks ADD COLUMN landed_commit TEXT",
        "ALTER TABLE tasks ADD COLUMN landed_into TEXT",
        "ALTER TABLE tasks ADD COLUMN landed_at INTEGER",
        "ALTER TABLE tasks ADD COLUMN landed_by TEXT",
        f"ALTER TABLE tasks ADD COLUMN landed_strategy TEXT "
        f"CHECK (landed_strategy IN ({sql_list(LAND_STRATEGIES)}))",
        "ALTER TABLE workspaces ADD COLUMN base_ref TEXT",
        f"""
        CREATE TABLE land_queue (
            seq         INTEGER PRIMARY KEY,
            id          TEXT    NOT NULL UNIQUE,
            repo_path   TEXT    NOT NULL,
            ref         TEXT    NOT NULL,
            task_id     TEXT    NOT NULL REFERENCES tasks(id),
            lander      TEXT    NOT NULL,
            holder      TEXT    NOT NULL,
            state       TEXT    NOT NULL CHECK (state IN ({sql_list(LAND_QUEUE_STATES)})),
            lease_until INTEGER NOT NULL,
            strategy    TEXT    NOT NULL CHECK (strategy IN ({sql_list(LAND_STRATEGIES)})),
            from_status TEXT    NOT NULL,
            fence       TEXT    NOT NULL,
            old_tip     TEXT,
            new_commit  TEXT,
            options     TEXT    NOT NULL DEFAULT '{{}}',
            tenant_id   TEXT,
            created_at  INTEGER NOT NULL,
            updated_at  INTEGER NOT NULL
        )
        """,
        "CREATE UNIQUE INDEX land_queue_task ON land_queue (task_id)",
        "CREATE INDEX land_queue_order ON land_queue (repo_path, ref, seq)",
    ),
    # 3: budgets and the flow figures (boardlib.budgets, boardlib.stats)
    budgets_and_flow("REAL", "INTEGER", " WITHOUT ROWID"),
    # 4: review comments anchored to a line of the diff (additive: a plain comment leaves them NULL)
    (
        "ALTER TABLE task_comments ADD COLUMN path TEXT",
        "ALTER TABLE task_comments ADD COLUMN line INTEGER",
        "ALTER TABLE task_comments ADD COLUMN side TEXT "
        f"CHECK (side IN ({sql_list(ANCHOR_SIDES)}))",
        "ALTER TABLE task_comments ADD COLUMN line_text TEXT",
    ),
    # 5: plan keys (boardlib/plan_match.py): the plan and key a task was applied from, unique
    # together, so re-applying a plan finds its tasks instead of creating them again
    (
        "ALTER TABLE tasks ADD COLUMN plan_name TEXT",
        "ALTER TABLE tasks ADD COLUMN plan_key TEXT",
        "CREATE UNIQUE INDEX tasks_plan_key ON tasks (plan_name, plan_key) "
        "WHERE plan_key IS NOT NULL",
    ),
    # 6: the inbox (boardlib.attention) and durable event consumers (boardlib.watch): when a
    # task entered its status, the few tasks waiting on a person by that time, and each named
    # reader's cursor and held delivery
    (
        "ALTER TABLE tasks ADD COLUMN status_since INTEGER",
        "UPDATE tasks SET status_since = updated_at",
        f"""
        CREATE INDEX tasks_attention ON tasks (status_since)
        WHERE status IN ({IN_REVIEW}, {BLOCKED}) AND dropped = 0
        """,
        """
        CREATE TABLE event_consumers (
            name        TEXT    PRIMARY KEY,
            last_seq    INTEGER NOT NULL DEFAULT 0,
            failing_seq INTEGER,
            failures    INTEGER NOT NULL DEFAULT 0,
            last_error  TEXT,
            held_since  INTEGER,
            owner       TEXT,
            owner_until INTEGER,
            created_at  INTEGER NOT NULL,
            updated_at  INTEGER NOT NULL
        )
        """,
        # work passed or approved but not landed is found from the few live worktrees
        f"CREATE INDEX workspaces_live ON workspaces (task_id) WHERE status = {WORKSPACE_ACTIVE}",
        # the last landing refusal of a task that has not landed (boardlib.landings)
        """
        CREATE TABLE land_refusals (
            task_id     TEXT    PRIMARY KEY REFERENCES tasks(id),
            reason      TEXT    NOT NULL,
            message     TEXT    NOT NULL,
            actor       TEXT    NOT NULL,
            into_branch TEXT,
            tenant_id   TEXT,
            refused_at  INTEGER NOT NULL
        )
        """,
    ),
    # 7: a year of work on one board: each finished column in its display order
    # (boardlib.columns), so a live view reads a page as an index range and counts from the index
    (
        f"""
        CREATE INDEX tasks_done_order ON tasks
        (COALESCE(completed_at, updated_at) DESC, seq DESC, dropped) WHERE status = {DONE}
        """,
        f"""
        CREATE INDEX tasks_cancelled_order ON tasks
        (COALESCE(completed_at, updated_at) DESC, seq DESC, dropped) WHERE status = {CANCELLED}
        """,
    ),
    # 8: the landing queue verifies ahead (boardlib.worktrees.landing): each landing says which
    # commit it would put on the branch, and on which tip, so the one behind builds on it early
    (
        "ALTER TABLE land_queue ADD COLUMN built_base TEXT",
        "ALTER TABLE land_queue ADD COLUMN built_commit TEXT",
    ),
    # 9: several machines on one board (boardlib.worktrees.gc): the machine each worktree was
    # made on, so one machine's upkeep judges only the checkouts it can see (NULL: made before)
    ("ALTER TABLE workspaces ADD COLUMN host TEXT",),
    # 10: text search at 100,000 tasks (queries.text_match): a trigram index of each task's id,
    # title and description, its content the tasks table itself, without positions or sizes (a
    # fifth of the size; no ranking; the LIKE re-checks what it finds). Kept by triggers on a
    # task's insert, delete and a write naming its text: a claim, a beat, a move never touch it.
    (
        f"""
        CREATE VIRTUAL TABLE {TEXT_INDEX} USING fts5({TEXT_INDEXED},
            content = 'tasks', content_rowid = 'seq', tokenize = 'trigram', detail = 'none',
            columnsize = 0)
        """,
        f"""
        CREATE TRIGGER {TEXT_INDEX}_insert AFTER INSERT ON tasks BEGIN
            INSERT INTO {TEXT_INDEX} (rowid, {TEXT_INDEXED})
            VALUES (new.seq, {_columns("new")});
        END
        """,
        f"""
        CREATE TRIGGER {TEXT_INDEX}_delete AFTER DELETE ON tasks BEGIN
            INSERT INTO {TEXT_INDEX} ({TEXT_INDEX}, rowid, {TEXT_INDEXED})
            VALUES ('delete', old.seq, {_columns("old")});
        END
        """,
        f"""
        CREATE TRIGGER {TEXT_INDEX}_update AFTER UPDATE OF {TEXT_INDEXED} ON tasks BEGIN
            INSERT INTO {TEXT_INDEX} ({TEXT_INDEX}, rowid, {TEXT_INDEXED})
            VALUES ('delete', old.seq, {_columns("old")});
            INSERT INTO {TEXT_INDEX} (rowid, {TEXT_INDEXED})
            VALUES (new.seq, {_columns("new")});
        END
        """,
        f"INSERT INTO {TEXT_INDEX} ({TEXT_INDEX}) VALUES ('rebuild')",
        # one segment: left as the rebuild's many, each create paid ~300 us merging them
        f"INSERT INTO {TEXT_INDEX} ({TEXT_INDEX}) VALUES ('optimize')",
    ),
    # 11: a board view's marks (Board.marked_task_ids) read the audit rows of two rare actions on
    # every full read: at 100,000 tasks a scan of every row (~10 ms here, ~25 ms on Postgres)
    # where the index reads the few (~0.1 ms). On the column alone: a partial index on the rare
    # actions serves only a query naming them as literals, in its order, never a bound one.
    ("CREATE INDEX audit_action ON audit (action)",),
)

SCHEMA_VERSION = len(MIGRATIONS)


@functools.cache
def has_trigram_index() -> bool:
    """Whether this SQLite can hold the text index: FTS5 compiled in, with its trigram tokenizer
    (SQLite 3.34+). Without them the board has no index and searches as before it (a LIKE).
    Asked once per process, of a connection of its own: the library cannot change meanwhile."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE kanban_probe USING fts5(x, tokenize = 'trigram')")
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()
    return True


def build_text_index(conn: sqlite3.Connection) -> bool:
    """Make the text index of a board made where this SQLite could not (migration 10 skipped it),
    inside the caller's write transaction, looking again first: whether it was made now."""
    if has_text_index(conn) or schema_version(conn) < TEXT_INDEX_VERSION or not has_trigram_index():
        return False
    for statement in MIGRATIONS[TEXT_INDEX_VERSION - 1]:
        conn.execute(statement)
    return True


def has_text_index(conn: sqlite3.Connection) -> bool:
    """Whether the board's file holds the text index (made by migration 10 where it could be)."""
    found = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TEXT_INDEX,)
    ).fetchone()
    return found is not None


# SQLite's words for a virtual table whose module this build lacks (FTS5 compiled out): the text
# index of a file made where it was, on a Python whose SQLite has it not.
NO_MODULE = "no such module: "


def text_index_missing_module(conn: sqlite3.Connection) -> str | None:
    """SQLite's message when the file holds the text index and this SQLite cannot read it (its
    module is not compiled in): then a search reads without it and a write it keeps is refused
    (docs/architecture.md#the-sqlite-schema). None when there is no index, or it can be read."""
    if not has_text_index(conn):
        return None
    try:
        conn.execute(f"SELECT 1 FROM {TEXT_INDEX} LIMIT 0")
    except sqlite3.OperationalError as error:
        if str(error).startswith(NO_MODULE):
            return str(error)
        raise
    return None


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def apply_pending_migrations(conn: sqlite3.Connection) -> int:
    """Bring the file to `SCHEMA_VERSION`. Runs inside the caller's write transaction; returns how
    many migrations it applied. A file newer than this code is refused rather than guessed at."""
    current = schema_version(conn)
    if current > SCHEMA_VERSION:  # a newer kanban migrated it since this process looked
        from .board_file import newer_schema

        path = conn.execute("PRAGMA database_list").fetchone()[2]
        raise newer_schema(Path(path), current, SCHEMA_VERSION)
    for version in range(current, SCHEMA_VERSION):
        if version + 1 != TEXT_INDEX_VERSION or has_trigram_index():
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version={version + 1}")
    return SCHEMA_VERSION - current
