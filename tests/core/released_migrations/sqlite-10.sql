
        CREATE VIRTUAL TABLE tasks_text USING fts5(id, title, description,
            content = 'tasks', content_rowid = 'seq', tokenize = 'trigram', detail = 'none',
            columnsize = 0)
        
-- next statement --

        CREATE TRIGGER tasks_text_insert AFTER INSERT ON tasks BEGIN
            INSERT INTO tasks_text (rowid, id, title, description)
            VALUES (new.seq, new.id, new.title, new.description);
        END
        
-- next statement --

        CREATE TRIGGER tasks_text_delete AFTER DELETE ON tasks BEGIN
            INSERT INTO tasks_text (tasks_text, rowid, id, title, description)
            VALUES ('delete', old.seq, old.id, old.title, old.description);
        END
        
-- next statement --

        CREATE TRIGGER tasks_text_update AFTER UPDATE OF id, title, description ON tasks BEGIN
            INSERT INTO tasks_text (tasks_text, rowid, id, title, description)
            VALUES ('delete', old.seq, old.id, old.title, old.description);
            INSERT INTO tasks_text (rowid, id, title, description)
            VALUES (new.seq, new.id, new.title, new.description);
        END
        
-- next statement --
INSERT INTO tasks_text (tasks_text) VALUES ('rebuild')
-- next statement --
INSERT INTO tasks_text (tasks_text) VALUES ('optimize')