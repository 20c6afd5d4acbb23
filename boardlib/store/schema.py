"""The board's tables, versioned with `PRAGMA user_version` and migrated in code.

Each migration runs in one `BEGIN IMMEDIATE` transaction that re-reads the version first; append
new migrations, never edit a released one. Readiness is kept in `tasks.unmet_deps`, and indexes
are few on purpose: docs/architecture.md#the-sqlite-schema
"""

import sqlite3
from pathlib import Path

from ..records import (
    AUTHOR_TYPES,
    EXECUTION_STATUSES,
    LAND_QUEUE_STATES,
    LAND_STRATEGIES,
    WORKSPACE_STATUSES,
)
from .literals import IN_PROGRESS, RUN_RUNNING, TASK_STATUSES, TODO, sql_list

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
        # The lease sweep: only in-progress tasks carry a lease worth checking.
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
)

SCHEMA_VERSION = len(MIGRATIONS)


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
        for statement in MIGRATIONS[version]:
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version={version + 1}")
    return SCHEMA_VERSION - current
