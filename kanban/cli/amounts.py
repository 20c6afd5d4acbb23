"""The CLI's dollar and token options, declared once: within the ceilings HTTP's and MCP's
schemas state (`USD_MAX`, `TOKENS_MAX`), so a cost, a count or a budget past one is the same
usage refusal on every verb (`-1` and `1e10` alike), and each option's help says its range."""

from boardlib.records import TOKENS_MAX, USD_MAX

from .options import Number, WholeNumber

DOLLARS = Number(min=0, max=USD_MAX)
TOKEN_COUNT = WholeNumber(min=0, max=TOKENS_MAX)
