ALTER TABLE tasks ADD COLUMN status_since INTEGER
-- next statement --
UPDATE tasks SET status_since = updated_at
-- next statement --

        CREATE INDEX tasks_attention ON tasks (status_since)
        WHERE status IN ('in_review', 'blocked') AND dropped = 0
        
-- next statement --

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
        
-- next statement --
CREATE INDEX workspaces_live ON workspaces (task_id) WHERE status = 'active'
-- next statement --

        CREATE TABLE land_refusals (
            task_id     TEXT    PRIMARY KEY REFERENCES tasks(id),
            reason      TEXT    NOT NULL,
            message     TEXT    NOT NULL,
            actor       TEXT    NOT NULL,
            into_branch TEXT,
            tenant_id   TEXT,
            refused_at  INTEGER NOT NULL
        )
        