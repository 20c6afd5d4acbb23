
        CREATE INDEX tasks_done_order ON tasks
        (COALESCE(completed_at, updated_at) DESC, seq DESC, dropped) WHERE status = 'done'
        
-- next statement --

        CREATE INDEX tasks_cancelled_order ON tasks
        (COALESCE(completed_at, updated_at) DESC, seq DESC, dropped) WHERE status = 'cancelled'
        