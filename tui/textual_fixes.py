"""Fixes for Textual bugs the app would otherwise meet, applied once, on import of `tui.app`:
a toast made as its notification runs out froze the app, a paste with an ESC in it was parsed as
keys, and every removed widget's rendered lines were kept. Each fix's docstring says how."""

from collections.abc import Iterable
from functools import lru_cache

from textual import events
from textual._styles_cache import StylesCache
from textual._xterm_parser import XTermParser
from textual.color import Color
from textual.message import Message
from textual.style import Style
from textual.widgets._toast import Toast

SOONEST_S = 0.001  # a timer of 0 s divides by zero in the same catch-up step


def _start_the_toasts_time(self: Toast, _event: events.Mount) -> None:
    """A toast is built with its notification's time left, and its timer starts when it is
    mounted: one made as its notification runs out gets a negative time, and Textual's timer
    with a negative interval never yields (`Timer._run`'s catch-up skips "forward" forever), the
    app frozen at 100% of a core. Every pushed screen rebuilds the live toasts, so opening one
    the moment a toast ended was enough (a CI snapshot run hung so for six minutes). The timer
    is clamped to run out at once instead."""
    self.set_timer(max(self._timeout, SOONEST_S), self._expire)


PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"
ESCAPE_SHOWN = "\u241b"  # ␛: an ESC that was pasted, as text
_parse_input = XTermParser.feed


class _PasteGuard:
    """Where a parser's input stands across reads (a marker may be split between two): how much
    of the paste's start marker the last characters were, whether a paste is under way, and
    inside one the characters that may be the start of its end marker (held until they are
    known to be, or not)."""

    def __init__(self) -> None:
        self.matched = 0  # characters of PASTE_START just seen, outside a paste
        self.in_paste = False
        self.pending = ""  # inside a paste: a prefix of PASTE_END, not yet known to be it

    def guard(self, data: str) -> str:
        out: list[str] = []
        for char in data:
            if not self.in_paste:
                out.append(char)
                self.matched = self.matched + 1 if char == PASTE_START[self.matched] else 0
                if self.matched == 0 and char == "\x1b":
                    self.matched = 1
                if self.matched == len(PASTE_START):
                    self.in_paste, self.matched = True, 0
                continue
            if char == PASTE_END[len(self.pending)]:
                self.pending += char
                if self.pending == PASTE_END:
                    out.append(PASTE_END)
                    self.in_paste, self.pending = False, ""
                continue
            out.append(self.pending.replace("\x1b", ESCAPE_SHOWN))  # it was pasted text
            self.pending = "\x1b" if char == "\x1b" else ""
            if not self.pending:
                out.append(char)
        return "".join(out)


def _parse_with_pastes_kept_whole(self: XTermParser, data: str) -> Iterable[Message]:
    """Textual's parser ends a bracketed paste at the first ESC inside it and parses the rest as
    keys (a paste of `see log \\x1b]a` pressed `a`, approving the card under the cursor).
    Pasted text is data: every ESC between the paste's markers reaches the parser as `␛`
    (U+241B), so the whole paste is one paste, inert, and no key is pressed."""
    if not data:  # the end of input
        return _parse_input(self, data)
    guard = self.__dict__.setdefault("_kanban_paste_guard", _PasteGuard())
    kept = guard.guard(data)
    return _parse_input(self, kept) if kept else ()  # all held: "" would mean the end


_inner_outer_of_widget = StylesCache.get_inner_outer.__wrapped__
INNER_OUTER_KEPT = 1024


@lru_cache(INNER_OUTER_KEPT)
def _inner_outer(base_background: Color, background: Color) -> tuple[Style, Style]:
    return _inner_outer_of_widget(None, base_background, background)


def _inner_outer_by_colour(
    self: StylesCache, base_background: Color, background: Color
) -> tuple[Style, Style]:
    """Textual caches a widget's two background styles in an `lru_cache` on the method, keyed by
    the widget's `StylesCache` as well as the colours: the cache kept the last 1,024 widgets'
    caches alive, each with every line it had rendered, long after the widgets were removed
    (some 15,000 objects per task drawer opened, walked by every later garbage collection). The
    styles depend on the colours alone: they are cached by colour."""
    return _inner_outer(base_background, background)


def apply() -> None:
    Toast._on_mount = _start_the_toasts_time  # type: ignore[method-assign,assignment]
    XTermParser.feed = _parse_with_pastes_kept_whole  # type: ignore[method-assign]
    StylesCache.get_inner_outer = _inner_outer_by_colour  # type: ignore[method-assign,assignment]
