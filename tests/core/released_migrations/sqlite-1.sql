
        CREATE TABLE tasks (
            seq                  INTEGER PRIMARY KEY,
            id                   TEXT    NOT NULL UNIQUE,
            title                TEXT    NOT NULL,
            description          TEXT,
            status               TEXT    NOT NULL CHECK (status IN ('backlog', 'todo', 'in_progress', 'in_review', 'blocked', 'done', 'cancelled')),
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
        
-- next statement --

        CREATE INDEX tasks_ready ON tasks (priority DESC, updated_at DESC)
        WHERE status = 'todo' AND dropped = 0 AND unmet_deps = 0
        
-- next statement --

        CREATE INDEX tasks_ready_by_role ON tasks (role, priority DESC, updated_at DESC)
        WHERE status = 'todo' AND dropped = 0 AND unmet_deps = 0
        
-- next statement --
CREATE INDEX tasks_lease ON tasks (lease_until) WHERE status = 'in_progress'
-- next statement --

        CREATE INDEX tasks_waiting ON tasks (priority DESC, updated_at DESC)
        WHERE status = 'todo' AND dropped = 0 AND unmet_deps > 0
        
-- next statement --
CREATE INDEX tasks_parent ON tasks (parent_task_id) WHERE parent_task_id IS NOT NULL
-- next statement --
CREATE INDEX tasks_root_created ON tasks (created_at) WHERE parent_task_id IS NULL
-- next statement --

        CREATE TABLE task_deps (
            task_id            TEXT    NOT NULL REFERENCES tasks(id),
            depends_on_task_id TEXT    NOT NULL REFERENCES tasks(id),
            tenant_id          TEXT,
            created_at         INTEGER NOT NULL,
            PRIMARY KEY (task_id, depends_on_task_id)
        ) WITHOUT ROWID
        
-- next statement --
CREATE INDEX task_deps_reverse ON task_deps (depends_on_task_id, task_id)
-- next statement --

        CREATE TABLE task_comments (
            seq             INTEGER PRIMARY KEY,
            id              TEXT    NOT NULL UNIQUE,
            task_id         TEXT    NOT NULL REFERENCES tasks(id),
            author_agent_id TEXT,
            author_type     TEXT    NOT NULL CHECK (author_type IN ('agent', 'user', 'system')),
            body            TEXT    NOT NULL,
            tenant_id       TEXT,
            created_at      INTEGER NOT NULL
        )
        
-- next statement --
CREATE INDEX task_comments_task ON task_comments (task_id, seq)
-- next statement --

        CREATE TABLE workspaces (
            seq           INTEGER PRIMARY KEY,
            id            TEXT    NOT NULL UNIQUE,
            task_id       TEXT    NOT NULL REFERENCES tasks(id),
            repo_path     TEXT    NOT NULL,
            branch        TEXT,
            worktree_path TEXT,
            base_commit   TEXT,
            status        TEXT    NOT NULL CHECK (status IN ('active', 'archived', 'stale')),
            tenant_id     TEXT,
            created_at    INTEGER NOT NULL,
            last_used_at  INTEGER
        )
        
-- next statement --
CREATE INDEX workspaces_task ON workspaces (task_id, seq)
-- next statement --

        CREATE TABLE execution_processes (
            seq                INTEGER PRIMARY KEY,
            id                 TEXT    NOT NULL UNIQUE,
            task_id            TEXT    NOT NULL REFERENCES tasks(id),
            workspace_id       TEXT,
            executor_type      TEXT    NOT NULL,
            agent_id           TEXT,
            claim_epoch        INTEGER,
            status             TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'timed_out', 'cancelled')),
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
        
-- next statement --
CREATE INDEX executions_task ON execution_processes (task_id, seq)
-- next statement --
CREATE INDEX executions_running ON execution_processes (task_id) WHERE status = 'running'
-- next statement --

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
        
-- next statement --
CREATE INDEX events_task ON events (task_id, seq)
-- next statement --

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
        
-- next statement --
CREATE INDEX audit_task ON audit (task_id, seq)