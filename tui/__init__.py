"""kanban's terminal board: a Textual app over the same SQLite board the agents use.

`tui.launch.run_tui(path)` runs it; `python -m tui --db PATH` too. It reads through one dedicated
reader thread (`tui.live`) and writes through `boardlib.Board` in worker threads; it never writes
SQL and never re-declares a rule of the board.
"""
