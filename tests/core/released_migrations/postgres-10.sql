
        DO $$
        DECLARE home TEXT;
        BEGIN
            IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
                BEGIN
                    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
                        IF EXISTS (SELECT 1 FROM pg_namespace
                                   WHERE nspname = 'public' AND has_schema_privilege(oid, 'CREATE'))
                        THEN
                            CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
                        ELSE
                            CREATE EXTENSION IF NOT EXISTS pg_trgm;
                        END IF;
                    END IF;
                    SELECT n.nspname INTO home FROM pg_extension e
                    JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
                    EXECUTE format(
                        'CREATE INDEX tasks_text ON tasks USING gin (id %I.gin_trgm_ops, title %I.gin_trgm_ops, description %I.gin_trgm_ops)',
                        home, home, home);
                -- not the role's to make, or another board's migration made it at this moment
                EXCEPTION WHEN insufficient_privilege OR unique_violation OR duplicate_object THEN
                    NULL;
                END;
            END IF;
        END
        $$
        