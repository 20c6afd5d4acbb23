"""`listing.json`, the tool list `kanban init` sizes without loading the SDK, is what the server
lists: byte for byte as `python -m kanban.mcp.listing` writes it, and filled in for any board's
settings exactly as the server fills its descriptions."""

from dataclasses import replace

import pytest

from boardlib.config import BoardConfig
from kanban.mcp import catalog
from kanban.mcp.footprint import LISTING, footprint, listed_tools
from kanban.mcp.listing import listing_text, served_tools

SETTINGS = replace(
    BoardConfig(),
    lease_ms=7 * 60_000,
    max_depth=3,
    max_live_children=9,
    root_create_limit=11,
    root_create_window_ms=30_000,
)


def test_the_listing_file_is_what_the_server_lists() -> None:
    assert LISTING.read_text(encoding="utf-8") == listing_text(), (
        "a tool changed: run `python -m kanban.mcp.listing` to rewrite kanban/mcp/listing.json"
    )


@pytest.mark.parametrize("config", [BoardConfig(), SETTINGS], ids=["defaults", "settings"])
@pytest.mark.parametrize("tool_set", list(catalog.TOOL_SETS))
def test_the_listing_filled_in_is_what_the_server_lists(tool_set: str, config: BoardConfig) -> None:
    assert listed_tools(tool_set, config, "bob") == served_tools(tool_set, config, "bob")


def test_a_boards_settings_change_the_footprint() -> None:
    assert footprint("all", SETTINGS) != footprint("all")
    assert "7 minutes" in listed_tools("worker", SETTINGS)[1]
