"""The table of docs/guarantees.md is the script's, from the kept soak report, and every test it
cites exists: a hand edit, a renamed test or a failed soak shows here."""

import ast
import json

from .guarantees import BEGIN, END, KEPT, PAGE, PROMISES, REPO, render


def test_the_page_is_written_from_the_kept_soak_report() -> None:
    report = json.loads(KEPT.read_text())
    page = PAGE.read_text()
    assert BEGIN in page and END in page
    section = BEGIN + page.split(BEGIN, 1)[1].split(END, 1)[0] + END
    assert section == render(report), "edit the promises in tests/chaos/guarantees.py and re-run it"


def test_the_kept_soak_lost_nothing_and_double_assigned_nothing() -> None:
    report = json.loads(KEPT.read_text())
    figures = report["figures"]
    assert report["ok"] and figures["lost"] == 0 and figures["doubleHeld"] == 0
    assert figures["lateWritesAccepted"] == 0 and figures["kills"] > 0 and figures["freezes"] > 0


def test_every_test_the_section_cites_exists() -> None:
    for _promise, tests in PROMISES:
        for node in tests:
            path, _, name = node.partition("::")
            source = REPO / path
            assert source.is_file(), node
            if name:
                functions = {
                    item.name
                    for item in ast.walk(ast.parse(source.read_text()))
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                }
                assert name in functions, node
