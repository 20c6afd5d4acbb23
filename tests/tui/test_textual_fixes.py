"""The Textual bugs `tui/textual_fixes.py` works around, each met for real in a process of its
own (without the fix the app spins forever, so the test bounds it by a timeout)."""

import subprocess
import sys
import textwrap

from tests.cli.conftest import clean_env

A_TOAST_MADE_TOO_LATE = textwrap.dedent(
    """
    import sys, time
    from textual.app import App
    from textual.notifications import Notification
    from textual.widgets._toast import Toast, ToastHolder

    if sys.argv[1] == "fixed":
        import tui.app  # noqa: F401  (applies the fixes)

    class Late(App):
        def on_mount(self) -> None:
            # Built with its notification already over, as under load a toast can be.
            ended = Notification("ended", timeout=1.0, raised_at=time.time() - 2)
            self._notifications.add(ended)
            self.mount(ToastHolder(Toast(ended), id="holder"))
            self.given_up_at = time.monotonic() + 20  # gone at once; a loaded CI host is slow
            self.set_interval(0.1, self.check)

        def check(self) -> None:
            if not self.query("#holder"):
                self.exit(return_code=0)
            elif time.monotonic() > self.given_up_at:
                self.exit(return_code=3)

    app = Late()
    app.run(headless=True)
    sys.exit(app.return_code or 0)
    """
)


def test_a_toast_built_after_its_time_ends_at_once_instead_of_spinning() -> None:
    done = subprocess.run(
        [sys.executable, "-c", A_TOAST_MADE_TOO_LATE, "fixed"],
        capture_output=True, text=True, timeout=60, env=clean_env(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def parsed(*reads: str) -> list[object]:
    """What Textual's input parser makes of these reads from the terminal, with the fixes."""
    from textual._xterm_parser import XTermParser

    import tui.app  # noqa: F401  (applies the fixes)

    parser = XTermParser()
    return [event for data in reads for event in parser.feed(data)]


def test_a_paste_with_an_escape_in_it_is_one_paste_and_presses_no_key() -> None:
    """Found in tmux: Textual ended a bracketed paste at its first ESC and parsed the rest as
    keys, so pasting `see log \\x1b]a` over a card in review pressed `a` and approved it."""
    from textual import events

    paste = "\x1b[200~see log \x1b]a; then x\x1b[31m red\x1b[201~"
    whole = "see log \u241b]a; then x\u241b[31m red"
    for reads in ([paste], list(paste), [paste[:9], paste[9:20], paste[20:-3], paste[-3:]]):
        got = parsed(*reads)
        assert [type(event) for event in got] == [events.Paste], reads
        assert got[0].text == whole  # type: ignore[attr-defined]
    # Keys around a paste are still keys, and a lone escape is still the escape key.
    around = parsed("j\x1b[200~x\x1b[201~k")
    assert [getattr(e, "key", None) or getattr(e, "text", None) for e in around] == ["j", "x", "k"]
    assert [getattr(e, "key", None) for e in parsed("\x1b")] in (["escape"], [])
