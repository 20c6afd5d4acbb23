ALTER TABLE task_comments ADD COLUMN path TEXT
-- next statement --
ALTER TABLE task_comments ADD COLUMN line BIGINT
-- next statement --
ALTER TABLE task_comments ADD COLUMN side TEXT CHECK (side IN ('new', 'old'))
-- next statement --
ALTER TABLE task_comments ADD COLUMN line_text TEXT