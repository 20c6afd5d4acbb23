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
