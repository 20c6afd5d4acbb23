"""What the app said: every notification, kept after its toast vanished (the message log, `M`)."""

from collections import deque
from contextlib import suppress
from dataclasses import dataclass

MESSAGES_KEPT = 500


@dataclass(frozen=True, slots=True)
class Said:
    """One notification as shown: already inert text."""

    at_ms: int
    severity: str  # Textual's: information, warning, error
    title: str
    message: str
    # An exception no handler expected (a bug in the app, not the board's refusal): shown to the
    # operator all the same, and marked so a test can tell one from a refusal without wording.
    defect: bool = False


class MessageLog:
    """The last `MESSAGES_KEPT` notifications, oldest first."""

    def __init__(self, kept: int = MESSAGES_KEPT) -> None:
        self._said: deque[Said] = deque(maxlen=kept)

    def add(self, said: Said, *, replacing: Said | None = None) -> None:
        """Keep `said`, newest; `replacing` (the same toast's words before) goes, if still kept."""
        if replacing is not None:
            with suppress(ValueError):
                self._said.remove(replacing)
        self._said.append(said)

    def newest_first(self) -> list[Said]:
        return list(reversed(self._said))

    def __len__(self) -> int:
        return len(self._said)
