ALTER TABLE tasks ADD COLUMN landed_commit TEXT
-- next statement --
ALTER TABLE tasks ADD COLUMN landed_into TEXT
-- next statement --
ALTER TABLE tasks ADD COLUMN landed_at INTEGER
-- next statement --
ALTER TABLE tasks ADD COLUMN landed_by TEXT
-- next statement --
ALTER TABLE tasks ADD COLUMN landed_strategy TEXT CHECK (landed_strategy IN ('squash', 'rebase', 'merge'))
-- next statement --
ALTER TABLE workspaces ADD COLUMN base_ref TEXT
-- next statement --

        CREATE TABLE land_queue (
            seq         INTEGER PRIMARY KEY,
            id          TEXT    NOT NULL UNIQUE,
            repo_path   TEXT    NOT NULL,
            ref         TEXT    NOT NULL,
            task_id     TEXT    NOT NULL REFERENCES tasks(id),
            lander      TEXT    NOT NULL,
            holder      TEXT    NOT NULL,
            state       TEXT    NOT NULL CHECK (state IN ('waiting', 'active')),
            lease_until INTEGER NOT NULL,
            strategy    TEXT    NOT NULL CHECK (strategy IN ('squash', 'rebase', 'merge')),
            from_status TEXT    NOT NULL,
            fence       TEXT    NOT NULL,
            old_tip     TEXT,
            new_commit  TEXT,
            options     TEXT    NOT NULL DEFAULT '{}',
            tenant_id   TEXT,
            created_at  INTEGER NOT NULL,
            updated_at  INTEGER NOT NULL
        )
        
-- next statement --
CREATE UNIQUE INDEX land_queue_task ON land_queue (task_id)
-- next statement --
CREATE INDEX land_queue_order ON land_queue (repo_path, ref, seq)