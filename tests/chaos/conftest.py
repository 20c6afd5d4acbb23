"""The chaos suite: every test here carries the `chaos` mark (`pytest -m chaos` runs the suite);
the long ones (soaks, fuzzing, torn files on every surface) are `slow` as well."""

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before -m reads the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.chaos)
