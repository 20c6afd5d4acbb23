"""`--db URL` for the benchmarks that also run on PostgreSQL: a `postgresql://` URL or a usage
error (exit 2). `boardlib.location` tells a URL from a path, so a URL that lost a slash on its way
(`postgresql:/u@h/db`) or a file path is refused here, never made into a SQLite board."""

import argparse
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from boardlib import BoardError
from boardlib.location import DatabaseUrl, board_location


def postgres_url(text: str) -> str:
    """An argparse `type`: the URL as typed (libpq reads it), once it is known to be one."""
    try:
        location = board_location(text)
    except BoardError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    if not isinstance(location, DatabaseUrl):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a postgresql:// URL (these runs are on SQLite already)"
        )
    return location.conninfo


def with_schema(url: str, schema: str) -> str:
    """`url` with `schema` first on its search_path, keeping any `options` it already has."""
    parts = urlsplit(url)
    pairs = parse_qsl(parts.query)
    options = " ".join([v for k, v in pairs if k == "options"] + [f"-csearch_path={schema}"])
    query = [(k, v) for k, v in pairs if k != "options"] + [("options", options)]
    return urlunsplit(parts._replace(query=urlencode(query, quote_via=quote)))
