"""Agent text is data: `inert` makes any string safe to draw on an operator's terminal.

Everything an agent wrote (titles, descriptions, comments, executor names, SoR files, diffs) is
stored verbatim and passes through `inert` before any surface draws it for a person: the TUI's
cards, drawer, dialogs and notifications, and the CLI's `--format table`. Nothing else sanitises,
so every surface shows the same thing for the same text. JSON output needs none of it: JSON
escapes control characters itself.

What it does, character by character (a string is never parsed as escape sequences, so no
sequence can be cut in a way that leaves half of it live):
- C0 controls and DEL become their visible Unicode control pictures (`ESC` -> `␛`, `BEL` -> `␇`,
  `CR` -> `␍`), so `\\e]52;c;...\\a` (a clipboard write), `\\e[2J` (clear screen), an OSC 8
  hyperlink or a carriage return draw as harmless text that shows what was attempted;
- a newline stays a newline where the caller allows several lines (`multiline=True`), else it is
  drawn as `␤`; a tab becomes one space, so columns of cells stay aligned;
- C1 controls (U+0080-U+009F, where 0x9B is a one-byte CSI for some terminals), lone surrogates and
  the line/paragraph separators become `\\ufffd` (or a newline/`␤` for the separators);
- format characters (bidi embeddings, overrides and isolates, zero-width spaces and joiners, the
  byte-order mark, soft hyphens) are removed: they reorder or hide what an operator reads.

Rich or Textual markup is not this module's concern: surfaces render agent text as `Text`, never
as markup, so `[@click=app.quit]` is drawn as those characters.

Measured (2-core machine, Python 3.11): a printable 60-character title costs 0.2 µs (one
`str.isprintable` in C); a title holding controls about 2 µs, through a cached `str.translate`.
"""

import unicodedata

__all__ = ["inert"]

_REPLACEMENT = "\ufffd"
_NEWLINE_SYMBOL = "\u2424"  # ␤


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
    if category == "Cf":
        return None
    if category == "Cs":
        return _REPLACEMENT
    return char  # printable, a space separator, private use or unassigned: drawn as is


_ONE_LINE = _Table(multiline=False)
_MULTILINE = _Table(multiline=True)


def inert(text: str, *, multiline: bool = False) -> str:
    """`text` with nothing a terminal would act on: see the module docstring for what changes.
    `multiline=True` keeps newlines (a description, a comment, a file); otherwise the result is
    always one line."""
    if text.isprintable():
        return text
    return text.translate(_MULTILINE if multiline else _ONE_LINE)
