"""The board's tables on PostgreSQL: the twin of `schema.py`, one migration for each of SQLite's.

Versions are shared with the SQLite file, so `kanban db copy` moves a board either way; a SQLite
migration without its Postgres twin fails at import (below). The column types keep a copy
lossless both ways: docs/architecture.md#postgresql
"""

import re

from ..records import (
    ANCHOR_SIDES,
    AUTHOR_TYPES,
    EXECUTION_STATUSES,
    LAND_QUEUE_STATES,
    LAND_STRATEGIES,
    WORKSPACE_STATUSES,
)
from .literals import (
    BLOCKED,
    CANCELLED,
    DONE,
    IN_PROGRESS,
    IN_REVIEW,
    RUN_RUNNING,
    TASK_STATUSES,
    TODO,
    WORKSPACE_ACTIVE,
    sql_list,
)
from .schema import MIGRATIONS as SQLITE_MIGRATIONS
from .schema import TEXT_INDEX, TEXT_INDEX_COLUMNS, budgets_and_flow

# The name of the table that tells a schema holding a board (`META_DDL` below).
META_TABLE = "board_meta"
TRIGRAM_COLUMNS = ", ".join(f"{column} %I.gin_trgm_ops" for column in TEXT_INDEX_COLUMNS)

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 1: the board of seed 000 plus the lease protocol of seed 002 (schema.py's migration 1)
    (
        f"""
        CREATE TABLE tasks (
            seq                  BIGINT  PRIMARY KEY,
            id                   TEXT    NOT NULL UNIQUE,
            title                TEXT    NOT NULL,
            description          TEXT,
            status               TEXT    NOT NULL CHECK (status IN ({TASK_STATUSES})),
            priority             BIGINT  NOT NULL DEFAULT 0,
            team_id              TEXT,
            role                 TEXT,
            kind                 TEXT    NOT NULL DEFAULT 'code',
            assignee_agent_id    TEXT,
            assignee_runtime     TEXT,
            claimed_by           TEXT,
            holders              TEXT    NOT NULL DEFAULT '[]',
            claim_epoch          BIGINT  NOT NULL DEFAULT 0,
            lease_until          BIGINT,
            last_heartbeat_at    BIGINT,
            attempts             BIGINT  NOT NULL DEFAULT 0,
            unmet_deps           BIGINT  NOT NULL DEFAULT 0,
            blocked_reason       TEXT,
            parent_task_id       TEXT REFERENCES tasks(id),
            source_delegation_id TEXT,
            worktree_ref         TEXT,
            branch_ref           TEXT,
            cost_usd             DOUBLE PRECISION NOT NULL DEFAULT 0,
            parent_session_id    TEXT,
            dropped              BIGINT  NOT NULL DEFAULT 0 CHECK (dropped IN (0, 1)),
            tenant_id            TEXT,
            scheduled_by         TEXT    NOT NULL DEFAULT 'manual',
            verification         TEXT,
            created_at           BIGINT  NOT NULL,
            updated_at           BIGINT  NOT NULL,
            completed_at         BIGINT
        )
        """,
        # The claim-next pick (`FOR UPDATE SKIP LOCKED` walks this index in claim order).
        f"""
        CREATE INDEX tasks_ready ON tasks (priority DESC, updated_at DESC)
        WHERE status = {TODO} AND dropped = 0 AND unmet_deps = 0
        """,
        f"""
        CREATE INDEX tasks_ready_by_role ON tasks (role, priority DESC, updated_at DESC)
        WHERE status = {TODO} AND dropped = 0 AND unmet_deps = 0
        """,
        f"CREATE INDEX tasks_lease ON tasks (lease_until) WHERE status = {IN_PROGRESS}",
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
            created_at         BIGINT  NOT NULL,
            PRIMARY KEY (task_id, depends_on_task_id)
        )
        """,
        "CREATE INDEX task_deps_reverse ON task_deps (depends_on_task_id, task_id)",
        f"""
        CREATE TABLE task_comments (
            seq             BIGINT  PRIMARY KEY,
            id              TEXT    NOT NULL UNIQUE,
            task_id         TEXT    NOT NULL REFERENCES tasks(id),
            author_agent_id TEXT,
            author_type     TEXT    NOT NULL CHECK (author_type IN ({sql_list(AUTHOR_TYPES)})),
            body            TEXT    NOT NULL,
            tenant_id       TEXT,
            created_at      BIGINT  NOT NULL
        )
        """,
        "CREATE INDEX task_comments_task ON task_comments (task_id, seq)",
        f"""
        CREATE TABLE workspaces (
            seq           BIGINT  PRIMARY KEY,
            id            TEXT    NOT NULL UNIQUE,
            task_id       TEXT    NOT NULL REFERENCES tasks(id),
            repo_path     TEXT    NOT NULL,
            branch        TEXT,
            worktree_path TEXT,
            base_commit   TEXT,
            status        TEXT    NOT NULL CHECK (status IN ({sql_list(WORKSPACE_STATUSES)})),
            tenant_id     TEXT,
            created_at    BIGINT  NOT NULL,
            last_used_at  BIGINT
        )
        """,
        "CREATE INDEX workspaces_task ON workspaces (task_id, seq)",
        f"""
        CREATE TABLE execution_processes (
            seq                BIGINT  PRIMARY KEY,
            id                 TEXT    NOT NULL UNIQUE,
            task_id            TEXT    NOT NULL REFERENCES tasks(id),
            workspace_id       TEXT,
            executor_type      TEXT    NOT NULL,
            agent_id           TEXT,
            claim_epoch        BIGINT,
            status             TEXT    NOT NULL CHECK (status IN ({sql_list(EXECUTION_STATUSES)})),
            claimed_at         BIGINT,
            started_at         BIGINT,
            completed_at       BIGINT,
            before_commit      TEXT,
            after_commit       TEXT,
            input_tokens       BIGINT,
            output_tokens      BIGINT,
            cache_read         BIGINT,
            cache_write        BIGINT,
            cost_usd           DOUBLE PRECISION,
            summary            TEXT,
            run_reason         TEXT,
            error              TEXT,
            recovery_tombstone BIGINT  NOT NULL DEFAULT 0,
            tenant_id          TEXT,
            created_at         BIGINT  NOT NULL
        )
        """,
        "CREATE INDEX executions_task ON execution_processes (task_id, seq)",
        "CREATE INDEX executions_running ON execution_processes (task_id) "
        f"WHERE status = {RUN_RUNNING}",
        "CREATE SEQUENCE event_seq",
        """
        CREATE TABLE events (
            seq         BIGINT  PRIMARY KEY DEFAULT nextval('event_seq'),
            task_id     TEXT,
            kind        TEXT    NOT NULL,
            actor       TEXT,
            data        TEXT    NOT NULL DEFAULT '{}',
            created_at  BIGINT  NOT NULL,
            ttl_seconds BIGINT,
            tenant_id   TEXT
        )
        """,
        "ALTER SEQUENCE event_seq OWNED BY events.seq",
        "CREATE INDEX events_task ON events (task_id, seq)",
        """
        CREATE TABLE audit (
            seq                BIGINT  GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            task_id            TEXT,
            actor              TEXT    NOT NULL,
            action             TEXT    NOT NULL,
            from_status        TEXT,
            to_status          TEXT,
            verdict_overridden TEXT,
            detail             TEXT,
            created_at         BIGINT  NOT NULL,
            tenant_id          TEXT
        )
        """,
        "CREATE INDEX audit_task ON audit (task_id, seq)",
        # Postgres only: how far the event log is known gap-free (every seq at or below it is
        # committed or never will be), so a new reader need not re-prove the whole log.
        """
        CREATE TABLE event_horizon (
            id       INTEGER PRIMARY KEY CHECK (id = 1),
            safe_seq BIGINT  NOT NULL
        )
        """,
        "INSERT INTO event_horizon (id, safe_seq) VALUES (1, 0)",
    ),
    # 2: landing (schema.py's migration 2)
    (
        "ALTER TABLE tasks ADD COLUMN landed_commit TEXT",
        "ALTER TABLE tasks ADD COLUMN landed_into TEXT",
        "ALTER TABLE tasks ADD COLUMN landed_at BIGINT",
        "ALTER TABLE tasks ADD COLUMN landed_by TEXT",
        f"ALTER TABLE tasks ADD COLUMN landed_strategy TEXT "
        f"CHECK (landed_strategy IN ({sql_list(LAND_STRATEGIES)}))",
        "ALTER TABLE workspaces ADD COLUMN base_ref TEXT",
        f"""
        CREATE TABLE land_queue (
            seq         BIGINT  PRIMARY KEY,
            id          TEXT    NOT NULL UNIQUE,
            repo_path   TEXT    NOT NULL,
            ref         TEXT    NOT NULL,
            task_id     TEXT    NOT NULL REFERENCES tasks(id),
            lander      TEXT    NOT NULL,
            holder      TEXT    NOT NULL,
            state       TEXT    NOT NULL CHECK (state IN ({sql_list(LAND_QUEUE_STATES)})),
            lease_until BIGINT  NOT NULL,
            strategy    TEXT    NOT NULL CHECK (strategy IN ({sql_list(LAND_STRATEGIES)})),
            from_status TEXT    NOT NULL,
            fence       TEXT    NOT NULL,
            old_tip     TEXT,
            new_commit  TEXT,
            options     TEXT    NOT NULL DEFAULT '{{}}',
            tenant_id   TEXT,
            created_at  BIGINT  NOT NULL,
            updated_at  BIGINT  NOT NULL
        )
        """,
        "CREATE UNIQUE INDEX land_queue_task ON land_queue (task_id)",
        "CREATE INDEX land_queue_order ON land_queue (repo_path, ref, seq)",
    ),
    # 3: budgets and the flow figures (schema.py's migration 3)
    budgets_and_flow("DOUBLE PRECISION", "BIGINT", ""),
    # 4: review comments anchored to a line of the diff (schema.py's migration 4)
    (
        "ALTER TABLE task_comments ADD COLUMN path TEXT",
        "ALTER TABLE task_comments ADD COLUMN line BIGINT",
        "ALTER TABLE task_comments ADD COLUMN side TEXT "
        f"CHECK (side IN ({sql_list(ANCHOR_SIDES)}))",
        "ALTER TABLE task_comments ADD COLUMN line_text TEXT",
    ),
    # 5: plan keys (schema.py's migration 5)
    (
        "ALTER TABLE tasks ADD COLUMN plan_name TEXT",
        "ALTER TABLE tasks ADD COLUMN plan_key TEXT",
        "CREATE UNIQUE INDEX tasks_plan_key ON tasks (plan_name, plan_key) "
        "WHERE plan_key IS NOT NULL",
    ),
    # 6: the inbox and durable event consumers (schema.py's migration 6)
    (
        "ALTER TABLE tasks ADD COLUMN status_since BIGINT",
        "UPDATE tasks SET status_since = updated_at",
        f"""
        CREATE INDEX tasks_attention ON tasks (status_since)
        WHERE status IN ({IN_REVIEW}, {BLOCKED}) AND dropped = 0
        """,
        """
        CREATE TABLE event_consumers (
            name        TEXT    PRIMARY KEY,
            last_seq    BIGINT  NOT NULL DEFAULT 0,
            failing_seq BIGINT,
            failures    BIGINT  NOT NULL DEFAULT 0,
            last_error  TEXT,
            held_since  BIGINT,
            owner       TEXT,
            owner_until BIGINT,
            created_at  BIGINT  NOT NULL,
            updated_at  BIGINT  NOT NULL
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
            refused_at  BIGINT  NOT NULL
        )
        """,
    ),
    # 7: a year of work on one board (schema.py's migration 7): each finished column in its
    # display order (boardlib.columns), so a live view reads a page as an index range
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
    # 8: the landing queue verifies ahead (schema.py's migration 8)
    (
        "ALTER TABLE land_queue ADD COLUMN built_base TEXT",
        "ALTER TABLE land_queue ADD COLUMN built_commit TEXT",
    ),
    # 9: the machine each worktree was made on (schema.py's migration 9)
    ("ALTER TABLE workspaces ADD COLUMN host TEXT",),
    # 10: text search at 100,000 tasks (schema.py's migration 10): a pg_trgm GIN index on the
    # searched columns, which `ILIKE '%word%'` uses as it is written. Only where the extension is
    # installed or the role may install it in `public` (trusted since PostgreSQL 13: a role that
    # may create in the database may); elsewhere the search reads as before. Never in (nor an
    # index hung on one in) a board's schema: dropping that schema with CASCADE would take the
    # extension and every other board's index along. Its operator class is named in the schema
    # it lives in, which need not be on this board's search_path. Two boards creating it at once:
    # the second waits for the first's COMMIT, fails, and finds it made (docs/postgresql.md).
    (
        f"""
        DO $$
        DECLARE home TEXT;
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm')
               AND EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm')
               AND EXISTS (SELECT 1 FROM pg_namespace
                           WHERE nspname = 'public' AND has_schema_privilege(oid, 'CREATE'))
            THEN
                BEGIN
                    CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
                -- not the role's to make, or another board's migration made it at this moment
                -- (this one waited for its COMMIT): then it is found below
                EXCEPTION WHEN insufficient_privilege OR unique_violation OR duplicate_object THEN
                    NULL;
                END;
            END IF;
            SELECT n.nspname INTO home FROM pg_extension e
            JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'
            AND NOT EXISTS (SELECT 1 FROM pg_class c
                            WHERE c.relnamespace = n.oid AND c.relname = '{META_TABLE}');
            IF home IS NOT NULL THEN
                BEGIN
                    EXECUTE format(
                        'CREATE INDEX {TEXT_INDEX} ON tasks USING gin ({TRIGRAM_COLUMNS})',
                        {", ".join(["home"] * len(TEXT_INDEX_COLUMNS))});
                -- the extension's schema is not one the role may use
                EXCEPTION WHEN insufficient_privilege THEN
                    NULL;
                END;
            END IF;
        END
        $$
        """,
    ),
    # 11: the audit read by action (schema.py's migration 11)
    ("CREATE INDEX audit_action ON audit (action)",),
)

SCHEMA_VERSION = len(MIGRATIONS)

# A board made or migrated where pg_trgm could not be had gets its text index later, from
# `kanban db migrate` only (`PostgresStore.build_text_index`), built CONCURRENTLY so writers go on
# (docs/postgresql.md). This looks, in one row: the schema pg_trgm lives in, when the role may use
# it and it holds no board (never a board's: see migration 10); whether the role owns the board's
# tasks table (only an owner may index it); the index's state: NULL none, TRUE valid, FALSE left
# invalid by a concurrent build that did not finish (killed, cancelled, failed).
TEXT_INDEX_LOOK = (
    "SELECT (SELECT n.nspname::text FROM pg_extension e JOIN pg_namespace n "
    "ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm' "
    "AND has_schema_privilege(n.oid, 'USAGE') AND NOT EXISTS "
    f"(SELECT 1 FROM pg_class m WHERE m.relnamespace = n.oid AND m.relname = '{META_TABLE}')), "
    "EXISTS (SELECT 1 FROM pg_class t WHERE t.relnamespace = current_schema()::regnamespace "
    "AND t.relname = 'tasks' AND t.relkind = 'r' AND pg_has_role(t.relowner, 'USAGE')), "
    "(SELECT x.indisvalid AND x.indisready FROM pg_class i JOIN pg_index x "
    "ON x.indexrelid = i.oid WHERE i.relnamespace = current_schema()::regnamespace "
    f"AND i.relname = '{TEXT_INDEX}')"
)
# Migration 10's index, built without taking writes' lock ({home}: pg_trgm's schema, quoted).
TEXT_INDEX_BUILD = (
    f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {TEXT_INDEX} ON tasks USING gin ("
    + ", ".join(f"{column} {{home}}.gin_trgm_ops" for column in TEXT_INDEX_COLUMNS)
    + ")"
)

if len(MIGRATIONS) != len(SQLITE_MIGRATIONS):  # pragma: no cover - a developer's mistake
    raise ImportError(
        f"postgres_schema has {len(MIGRATIONS)} migrations, schema.py {len(SQLITE_MIGRATIONS)}: "
        "every SQLite migration needs its Postgres twin"
    )

# The one table that says "this schema holds a kanban board", and its version.
META_DDL = (
    f"CREATE TABLE {META_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), schema_version INTEGER)"
)

# Every table a board's migrations make, read from their DDL: what a board that was made and must
# be unmade again (a failed `db copy` into an empty schema) drops. Sequences go with their columns.
BOARD_TABLES = tuple(
    name
    for statement in (META_DDL, *(ddl for migration in MIGRATIONS for ddl in migration))
    for name in re.findall(r"CREATE TABLE (\w+)", statement)
)
