"""The one sanitiser: whatever an agent wrote, nothing a terminal acts on survives `inert`, and
rendered as Rich `Text` (as every surface does) it carries no markup action."""

from hypothesis import given
from hypothesis import strategies as st
from rich.markup import escape
from rich.text import Text

from boardlib.inert import inert

HOSTILE = [
    "clip\x1b]52;c;ZXZpbA==\x07END",  # OSC 52: writes the operator's clipboard
    "wipe\x1b[2Jme",  # CSI 2J: clears the screen
    "\x1b]8;;https://evil.example/\x1b\\link",  # an OSC 8 hyperlink left open
    "abc\rOVERWRITE\nmore",  # carriage return and newline drawing over other columns
    "one-byte CSI \x9b31m red",
    "bidi \u202eevil\u202c and \u2066isolate\u2069",
    "zero\u200bwidth\ufeff",
    "[@click=app.quit]quit[/]",
]


def _unsafe_code_points(text: str, *, newline_allowed: bool) -> list[int]:
    bad = []
    for char in text:
        code = ord(char)
        is_c0 = code < 0x20 and not (newline_allowed and char == "\n")
        if is_c0 or 0x7F <= code <= 0x9F:
            bad.append(code)
    return bad


@given(st.text())
def test_no_control_character_survives(text: str) -> None:
    assert _unsafe_code_points(inert(text), newline_allowed=False) == []
    assert "\n" not in inert(text)
    assert _unsafe_code_points(inert(text, multiline=True), newline_allowed=True) == []


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_rendered_as_text_no_markup_or_action_survives(text: str) -> None:
    """As `Text` the characters are drawn as they are, with no span, so no `[@click=...]` action or
    style is ever created from agent text. (Even escaped, the markup path is lossy: Rich doubles a
    trailing backslash. That is why surfaces build `Text` and never markup from agent text.)"""
    safe = inert(text, multiline=True)
    as_text = Text(safe)
    assert as_text.plain == safe and as_text.spans == []
    assert Text.from_markup(escape(safe)).spans == []


@given(st.text(alphabet=st.characters(categories=["L", "N", "P", "S"]), max_size=200))
def test_printable_text_is_unchanged(text: str) -> None:
    assert inert(text) == text
    assert inert(text, multiline=True) == text


def test_hostile_examples_become_visible_and_harmless() -> None:
    assert inert(HOSTILE[0]) == "clip␛]52;c;ZXZpbA==␇END"
    assert inert(HOSTILE[1]) == "wipe␛[2Jme"
    assert inert(HOSTILE[2]) == "␛]8;;https://evil.example/␛\\link"
    assert inert(HOSTILE[3]) == "abc␍OVERWRITE␤more"
    assert inert(HOSTILE[3], multiline=True) == "abc␍OVERWRITE\nmore"
    assert inert(HOSTILE[4]) == "one-byte CSI \ufffd31m red"
    # shown, not dropped: a reviewer must see that a diff holds them (Trojan Source; stop 47)
    assert inert(HOSTILE[5]) == "bidi \ufffdevil\ufffd and \ufffdisolate\ufffd"
    assert inert(HOSTILE[6]) == "zerowidth"
    assert inert(HOSTILE[7]) == "[@click=app.quit]quit[/]"  # drawn literally, as Text
    assert inert("a\tb") == "a b"
    assert inert("para\u2028graph") == "para␤graph"
