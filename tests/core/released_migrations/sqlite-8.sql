ALTER TABLE land_queue ADD COLUMN built_base TEXT
-- next statement --
ALTER TABLE land_queue ADD COLUMN built_commit TEXT