ALTER TABLE tasks ADD COLUMN budget_usd DOUBLE PRECISION CHECK (budget_usd >= 0)
-- next statement --
ALTER TABLE tasks ADD COLUMN budget_tokens BIGINT CHECK (budget_tokens >= 0)
-- next statement --
ALTER TABLE tasks ADD COLUMN tokens BIGINT NOT NULL DEFAULT 0
-- next statement --
ALTER TABLE tasks ADD COLUMN subtree_cost_micros BIGINT NOT NULL DEFAULT 0
-- next statement --
ALTER TABLE tasks ADD COLUMN subtree_tokens BIGINT NOT NULL DEFAULT 0
-- next statement --
ALTER TABLE tasks ADD COLUMN first_claimed_at BIGINT
-- next statement --
ALTER TABLE tasks ADD COLUMN review_entered_at BIGINT
-- next statement --
ALTER TABLE tasks ADD COLUMN review_wait_ms BIGINT NOT NULL DEFAULT 0
-- next statement --

        CREATE TABLE budgets (
            scope        TEXT    PRIMARY KEY,
            daily_usd    DOUBLE PRECISION CHECK (daily_usd >= 0),
            daily_tokens BIGINT CHECK (daily_tokens >= 0),
            updated_at   BIGINT NOT NULL,
            updated_by   TEXT    NOT NULL
        )
        
-- next statement --

        CREATE TABLE daily_spend (
            scope       TEXT    NOT NULL,
            day         BIGINT NOT NULL,
            cost_micros BIGINT NOT NULL DEFAULT 0,
            tokens      BIGINT NOT NULL DEFAULT 0,
            PRIMARY KEY (scope, day)
        )
        
-- next statement --
CREATE INDEX tasks_done ON tasks (completed_at, first_claimed_at, review_wait_ms, team_id, dropped, status) WHERE status = 'done'
-- next statement --
CREATE INDEX tasks_in_review ON tasks (review_entered_at, team_id, dropped, status) WHERE status = 'in_review'
-- next statement --
CREATE INDEX tasks_team ON tasks (team_id, id) WHERE team_id IS NOT NULL
-- next statement --
CREATE INDEX tasks_budgeted ON tasks (id) WHERE budget_usd IS NOT NULL OR budget_tokens IS NOT NULL
-- next statement --
CREATE INDEX executions_completed ON execution_processes (completed_at, agent_id, status, task_id, cost_usd, input_tokens, output_tokens, cache_read, cache_write) WHERE completed_at IS NOT NULL
-- next statement --
CREATE INDEX events_kind ON events (kind, created_at, actor, task_id)
-- next statement --

        UPDATE tasks SET tokens = (
            SELECT SUM((COALESCE(input_tokens, 0) + COALESCE(output_tokens, 0) + COALESCE(cache_read, 0) + COALESCE(cache_write, 0))) FROM execution_processes e WHERE e.task_id = tasks.id
        ) WHERE id IN (SELECT task_id FROM execution_processes)
        
-- next statement --

        WITH RECURSIVE own(id, micros, tokens) AS (
            SELECT task_id, SUM(CAST(ROUND(COALESCE(cost_usd, 0) * 1000000) AS BIGINT)), SUM((COALESCE(input_tokens, 0) + COALESCE(output_tokens, 0) + COALESCE(cache_read, 0) + COALESCE(cache_write, 0)))
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
        
-- next statement --

        UPDATE tasks SET first_claimed_at = COALESCE(
            (SELECT MIN(created_at) FROM events ev
             WHERE ev.task_id = tasks.id AND ev.kind = 'task_claimed'),
            (SELECT MIN(claimed_at) FROM execution_processes e WHERE e.task_id = tasks.id)
        ) WHERE attempts > 0
        
-- next statement --
UPDATE tasks SET review_entered_at = updated_at WHERE status = 'in_review'
-- next statement --

        INSERT INTO daily_spend (scope, day, cost_micros, tokens)
        SELECT 'board', completed_at / 86400000, SUM(CAST(ROUND(COALESCE(cost_usd, 0) * 1000000) AS BIGINT)), SUM((COALESCE(input_tokens, 0) + COALESCE(output_tokens, 0) + COALESCE(cache_read, 0) + COALESCE(cache_write, 0)))
        FROM execution_processes WHERE completed_at IS NOT NULL
        GROUP BY completed_at / 86400000
        
-- next statement --

        INSERT INTO daily_spend (scope, day, cost_micros, tokens)
        SELECT 'team:' || t.team_id, e.completed_at / 86400000,
               SUM(CAST(ROUND(COALESCE(e.cost_usd, 0) * 1000000) AS BIGINT)), SUM((COALESCE(e.input_tokens, 0) + COALESCE(e.output_tokens, 0) + COALESCE(e.cache_read, 0) + COALESCE(e.cache_write, 0)))
        FROM execution_processes e JOIN tasks t ON t.id = e.task_id
        WHERE e.completed_at IS NOT NULL AND t.team_id IS NOT NULL
        GROUP BY t.team_id, e.completed_at / 86400000
        