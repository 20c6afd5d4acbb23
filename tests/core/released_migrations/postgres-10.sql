
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
                            WHERE c.relnamespace = n.oid AND c.relname = 'board_meta');
            IF home IS NOT NULL THEN
                BEGIN
                    EXECUTE format(
                        'CREATE INDEX tasks_text ON tasks USING gin (id %I.gin_trgm_ops, title %I.gin_trgm_ops, description %I.gin_trgm_ops)',
                        home, home, home);
                -- the extension's schema is not one the role may use
                EXCEPTION WHEN insufficient_privilege THEN
                    NULL;
                END;
            END IF;
        END
        $$
        