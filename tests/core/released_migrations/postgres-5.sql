ALTER TABLE tasks ADD COLUMN plan_name TEXT
-- next statement --
ALTER TABLE tasks ADD COLUMN plan_key TEXT
-- next statement --
CREATE UNIQUE INDEX tasks_plan_key ON tasks (plan_name, plan_key) WHERE plan_key IS NOT NULL