"""The floor under every text the app draws: 4.5:1 contrast (WCAG AA) against its own background,
as the terminal will show both colours; 3:1 for the card marks (block elements).

A theme picks its `$text-*` colours for its `$background`, but the board draws on surfaces,
selections, panels and toasts they were not picked for, and a 256- or 16-colour terminal moves
both colours again (Rich's downgrade). So the last step before the terminal, a Textual line
filter that runs after ANSI colours became RGB, lifts a foreground that falls short towards black
or white, just enough, measured in the terminal's colour system. Borders are left alone. With a
theme that uses the terminal's own colours (`ansi-dark`), the lift picks among the terminal's
colours, measured on Textual's reference palette. Why and how: docs/tui.md#legibility
"""

import re
from collections.abc import Callable, Iterable

from rich.color import Color as RichColor
from rich.color import ColorSystem, ColorType
from rich.color_triplet import ColorTriplet
from rich.segment import Segment
from rich.style import Style
from rich.terminal_theme import TerminalTheme
from textual.color import Color
from textual.filter import LineFilter

TEXT_FLOOR = 4.5
MARK_FLOOR = 3.0
MEMO_SIZE = 4096  # styles x backgrounds seen; a theme change brings new ones
STEPS = 20  # a lift moves the foreground towards black or white in 5% steps

_BORDER = re.compile(r"[\s\u2500-\u257f]*")  # box drawing: borders, rules
_MARK = re.compile(r"[\s\u2580-\u259f]*")  # block elements: bars, scrollbar thumbs
NOT_DIM = Style(dim=False)
_BLACK, _WHITE = ColorTriplet(0, 0, 0), ColorTriplet(255, 255, 255)
# The terminal's own colours a lift may pick, in order of preference: its text colour, then
# black and bright white.
_TERMINAL_CHOICES = (RichColor.default(), RichColor.from_ansi(0), RichColor.from_ansi(15))


def luminance(rgb: ColorTriplet) -> float:
    """WCAG 2 relative luminance."""

    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    red, green, blue = rgb
    return 0.2126 * channel(red) + 0.7152 * channel(green) + 0.0722 * channel(blue)


def contrast(a: ColorTriplet, b: ColorTriplet) -> float:
    """The WCAG 2 contrast ratio, from 1 (none) to 21 (black on white)."""
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def shown(
    color: RichColor, system: ColorSystem | None, palette: TerminalTheme, *, foreground: bool
) -> ColorTriplet:
    """The colour a terminal with `system` shows for `color` (ANSI ones from `palette`)."""
    if color.is_default:
        return palette.foreground_color if foreground else palette.background_color
    if system is not None and system != ColorSystem.TRUECOLOR:
        color = color.downgrade(system)
    return color.get_truecolor(palette, foreground=foreground)


def system_named(name: str | None) -> ColorSystem | None:
    """Rich's colour system for `Console.color_system` ("truecolor", "256", "standard"...)."""
    return {
        "truecolor": ColorSystem.TRUECOLOR,
        "256": ColorSystem.EIGHT_BIT,
        "standard": ColorSystem.STANDARD,
        "windows": ColorSystem.WINDOWS,
    }.get(name or "")


def lifted(
    fg: RichColor,
    back: ColorTriplet,
    floor: float,
    system: ColorSystem | None,
    palette: TerminalTheme,
    *,
    as_foreground: bool = True,
) -> tuple[RichColor, bool]:
    """`fg`, or the nearest colour towards black or white that reaches `floor` on `back` (the
    other colour, as shown), and whether it does. `as_foreground=False` when the colour is drawn
    as a background (a terminal's default colour differs between the two)."""

    def ratio(color: RichColor) -> float:
        return contrast(shown(color, system, palette, foreground=as_foreground), back)

    if ratio(fg) >= floor:
        return fg, True
    if fg.type in (ColorType.DEFAULT, ColorType.STANDARD, ColorType.WINDOWS):
        # A theme of the terminal's own colours: stay among them.
        best = max(_TERMINAL_CHOICES, key=ratio)
        return best, ratio(best) >= floor
    start = fg.get_truecolor(palette, foreground=as_foreground)
    extreme = max((_BLACK, _WHITE), key=lambda end: contrast(end, back))
    candidate = fg
    for step in range(1, STEPS + 1):
        mix = step / STEPS
        rgb = ColorTriplet(*(round(a + (b - a) * mix) for a, b in zip(start, extreme, strict=True)))
        candidate = RichColor.from_triplet(rgb)
        if ratio(candidate) >= floor:
            return candidate, True
    return candidate, False


def distinct(
    candidates: Iterable[RichColor],
    taken: Iterable[RichColor],
    system: ColorSystem | None,
    palette: TerminalTheme,
) -> RichColor:
    """The first candidate a terminal with `system` shows as none of the `taken` colours (the
    last one when none is): 16 colours merge backgrounds that truecolor keeps apart."""
    seen = {shown(color, system, palette, foreground=False) for color in taken}
    options = list(candidates)
    for color in options:
        if shown(color, system, palette, foreground=False) not in seen:
            return color
    return options[-1]


def floor_of(text: str) -> float | None:
    """The contrast `text` needs: none for blanks and borders, 3:1 for marks, else 4.5:1."""
    if text.isascii():  # the common case, decided without a regular expression
        return None if text.isspace() else TEXT_FLOOR
    if _BORDER.fullmatch(text):
        return None
    if _MARK.fullmatch(text):
        return MARK_FLOOR
    return TEXT_FLOOR


class LegibleText(LineFilter):
    """Lift every segment's foreground to its floor against its background (see module)."""

    def __init__(self, system: ColorSystem | None, palette: Callable[[], TerminalTheme]) -> None:
        super().__init__()
        self.system = system
        self.palette = palette  # the app's reference for ANSI colours (dark or light theme)
        self.lifts = 0  # how many distinct styles needed a lift (measured, for the docs)
        self._memo: dict[tuple[Style, RichColor, float, TerminalTheme], Style] = {}

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        palette = self.palette()
        behind = background.rich_color
        memo = self._memo
        out: list[Segment] = []
        for segment in segments:
            text, style, control = segment
            if style is not None and not control:
                floor = floor_of(text)
                if floor is not None:
                    key = (style, behind, floor, palette)
                    new = memo.get(key)
                    if new is None:
                        new = memo[key] = self._legible(style, behind, floor, palette)
                        if len(memo) > MEMO_SIZE:
                            memo.clear()
                    if new is not style:
                        segment = Segment(text, new)
            out.append(segment)
        return out

    def _legible(
        self, style: Style, behind: RichColor, floor: float, palette: TerminalTheme
    ) -> Style:
        system = self.system
        color, bgcolor = style.color or RichColor.default(), style.bgcolor or behind
        if style.reverse:  # the text is drawn in the background colour, on the foreground one
            text, back = bgcolor, shown(color, system, palette, foreground=True)
        else:
            text, back = color, shown(bgcolor, system, palette, foreground=False)
        as_foreground = not style.reverse
        result = style
        if style.dim:  # the terminal would draw it at about half: whole if that falls short
            front = shown(text, system, palette, foreground=as_foreground)
            half = ColorTriplet(*((a + b) // 2 for a, b in zip(front, back, strict=True)))
            if contrast(half, back) < floor:
                result += NOT_DIM
        new, enough = lifted(text, back, floor, system, palette, as_foreground=as_foreground)
        if new is text and result is style:
            return style
        self.lifts += 1
        if style.reverse:
            result += Style(bgcolor=new)
        else:
            result += Style(color=new)
        if not enough:
            # No text colour reaches the floor on this background as the terminal shows it
            # (a mid-bright colour in 16 colours): the background gives way instead.
            front = shown(new, system, palette, foreground=as_foreground)
            ground = color if style.reverse else bgcolor
            moved, _ = lifted(
                ground, front, floor, system, palette, as_foreground=bool(style.reverse)
            )
            result += Style(color=moved) if style.reverse else Style(bgcolor=moved)
        return result
