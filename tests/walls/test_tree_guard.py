"""The session-end check's listing (tests/tree_guard.py): every new file and folder shows, ignored
ones too, but not the environment, the tools' caches or git's own data."""

from pathlib import Path

from tests.tree_guard import tree


def test_the_listing_sees_new_files_and_folders_but_not_caches(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("kept\n")
    before = tree(tmp_path)
    for skipped in (".git", ".venv", "tests/__pycache__", ".mypy_cache", "kanban.egg-info"):
        (tmp_path / skipped).mkdir(parents=True, exist_ok=True)
        (tmp_path / skipped / "noise").write_text("")
    (tmp_path / "postgresql:" / "postgres@h").mkdir(parents=True)
    (tmp_path / "postgresql:" / "postgres@h" / "db").write_bytes(b"SQLite format 3\0")
    (tmp_path / "board.db-writers").write_bytes(b"")  # ignored by .gitignore, still a leak
    assert sorted(tree(tmp_path) - before) == [
        "board.db-writers",
        "postgresql:",
        "postgresql:/postgres@h",
        "postgresql:/postgres@h/db",
        "tests",
    ]
