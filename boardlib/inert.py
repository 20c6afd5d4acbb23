"""Agent text is data: `inert` makes any string safe to draw on an operator's terminal.

Everything an agent wrote passes through `inert` before any surface draws it for a person, and
nothing else sanitises. Controls become visible pictures, format characters are removed, and a
string is never parsed as escape sequences. What happens to each kind of character:
docs/architecture.md#agent-text-is-inert
"""

import unicodedata

__all__ = ["as_written", "inert"]

_REPLACEMENT = "\ufffd"
_NEWLINE_SYMBOL = "\u2424"  # ␤
# The bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): they reorder what
# follows, as "Trojan Source" hides code from its reviewer. Removed silently, a reviewer would
# never learn they are in a diff about to land: they are drawn as the replacement character.
BIDI_CONTROLS = frozenset((*range(0x202A, 0x202F), *range(0x2066, 0x206A)))


class _Table(dict[int, str | None]):
    """A `str.translate` table that decides each code point once, on first sight."""

    def __init__(self, multiline: bool) -> None:
        super().__init__()
        self.multiline = multiline

    def __missing__(self, code: int) -> str | None:
        decided = _decide(code, self.multiline)
        self[code] = decided
        return decided


def _decide(code: int, multiline: bool) -> str | None:
    char = chr(code)
    if code == 0x0A:
        return "\n" if multiline else _NEWLINE_SYMBOL
    if code == 0x09:
        return " "
    if code < 0x20:
        return chr(0x2400 + code)  # the control pictures: ␀ .. ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    if 0x80 <= code <= 0x9F:
        return _REPLACEMENT
    category = unicodedata.category(char)
    if category in ("Zl", "Zp"):
        return "\n" if multiline else _NEWLINE_SYMBOL
    if code in BIDI_CONTROLS:
        return _REPLACEMENT
    if category == "Cf":
        return None
    if category == "Cs":
        return _REPLACEMENT
    return char  # printable, a space separator, private use or unassigned: drawn as is


_ONE_LINE = _Table(multiline=False)
_MULTILINE = _Table(multiline=True)


def inert(text: str, *, multiline: bool = False) -> str:
    """`text` with nothing a terminal would act on: see docs/architecture.md#agent-text-is-inert.
    `multiline=True` keeps newlines (a description, a comment, a file); otherwise the result is
    always one line."""
    if text.isprintable():
        return text
    return text.translate(_MULTILINE if multiline else _ONE_LINE)


# What `inert` draws a control as, back to the control: ␁..␟, ␡ and ␤ (a newline, one line).
# Not ␀: no board keeps a NUL (PostgreSQL's text cannot hold one), so none was written.
_WRITTEN = {
    **{0x2400 + code: chr(code) for code in range(1, 0x20)},
    0x2421: "\x7f",
    0x2424: "\n",
}


def as_written(shown: str) -> str:
    """The text an agent wrote that `inert` draws as `shown`, as far as pictures tell: each
    control picture back to its control (`␛[31m` -> ESC `[31m`). A search typed or pasted from
    what the screen shows finds what was written; the store matches both forms."""
    return shown.translate(_WRITTEN)
