"""The operator's own keys: a TOML file of `binding-id = "keys"` lines (`$KANBAN_KEYMAP`, else
`$XDG_CONFIG_HOME/kanban/keymap.toml`), e.g. `"task.cancel" = "ctrl+x"`. The ids are the action
registry's (`tui.registry`); a typo is refused when the app starts, never silently ignored.

Also how a key is written for people (`?` rather than `question_mark`), for the help screen and
the generated hints.
"""

import os
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

from .registry import ACTIONS, BY_ID, Action, actions_for, known_ids

KEY_NAMES = {
    "question_mark": "?",
    "slash": "/",
    "full_stop": ".",
    "plus": "+",
    "minus": "-",
    "equals_sign": "=",
    "escape": "esc",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
    "less_than_sign": "<",
    "greater_than_sign": ">",
    "exclamation_mark": "!",
}


def keymap_path(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    explicit = env.get("KANBAN_KEYMAP")
    if explicit:
        return Path(explicit)
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "kanban" / "keymap.toml"


class KeymapError(ValueError):
    """The keymap file cannot be used as written; `kanban tui` refuses it (usage, exit 2) before
    it takes the terminal."""


def load_user_keymap(path: Path | None = None) -> dict[str, str]:
    """The operator's remapped keys (binding id -> keys). Refused loudly, naming the file: what
    is not TOML, an unknown id (a silently ignored typo leaves a key doing something
    unexpected), a value that is no keys, and a key that would run two actions on one screen."""
    path = path or keymap_path()
    if not path.exists():
        return {}
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as error:
        raise KeymapError(f"{path}: not a keymap (TOML) file: {error}") from None
    table = data.get("keymap", data)
    if not isinstance(table, dict):
        raise KeymapError(f'{path}: [keymap] must be a table of binding-id = "keys" lines')
    unknown = sorted(set(table) - known_ids())
    if unknown:
        raise KeymapError(f"{path}: unknown binding ids {', '.join(unknown)}")
    empty = sorted(key for key, value in table.items() if not isinstance(value, str) or not value)
    if empty:
        raise KeymapError(f'{path}: {", ".join(empty)} must name keys, as "ctrl+n" or "j,down"')
    remapped = {str(key): str(value) for key, value in table.items()}
    clashes = conflicts(remapped)
    if clashes:
        raise KeymapError(f"{path}: {'; '.join(clashes)}; give one of them another key")
    return remapped


def conflicts(remapped: Mapping[str, str]) -> list[str]:
    """The keys that, remapped so, would run two actions on one screen (the first bound would
    win, the other lose its key with no word). The registry's own shared keys (`yields_to`:
    `W` approves and lands, else lands) are not conflicts."""
    taken: dict[tuple[str, str], Action] = {}
    found = []
    for action in ACTIONS:
        keys = remapped.get(action.id, action.keys)
        for key in dict.fromkeys(part.strip() for part in keys.split(",") if part.strip()):
            for screen in action.screens:
                other = taken.setdefault((screen, key), action)
                if other is action or action.id == other.yields_to or other.id == action.yields_to:
                    continue
                name = KEY_NAMES.get(key, key)
                found.append(f"{name} would run both {other.id} and {action.id} ({screen})")
    return list(dict.fromkeys(found))


def key_names(action: Action, remapped: Mapping[str, str]) -> list[str]:
    """The keys that run `action` now (remapped or default), as people write them."""
    if action.id in remapped:
        keys = remapped[action.id].split(",")
    else:
        keys = action.keys.split(",")
        if action.key_display:
            keys[0] = action.key_display
    return [KEY_NAMES.get(key.strip(), key.strip()) for key in keys]


def first_key(action_id: str, remapped: Mapping[str, str]) -> str:
    """The first key that runs the action `action_id` now: what a hint in a sentence names."""
    return key_names(BY_ID[action_id], remapped)[0]


def key_text(action: Action, remapped: Mapping[str, str]) -> str:
    return " ".join(key_names(action, remapped))


def operator_keymap(app: object) -> Mapping[str, str]:
    """The keys the operator remapped in the running app (none in an app that loads no keymap,
    as a dialog's own test app)."""
    remapped = getattr(app, "user_keymap", None)
    return remapped if isinstance(remapped, Mapping) else {}


def hint_line(
    screen: str,
    remapped: Mapping[str, str],
    *,
    widget_keys: Mapping[str, str] | None = None,
    before: Iterable[str] = (),
    also: Iterable[str] = (),
) -> str:
    """A dialog's hint line, generated from the registry and the operator's keymap, so a remapped
    key is hinted as it now is: `ctrl+s save · esc back`. Each action shows its first key.

    `widget_keys` names the key a widget handles itself for an action (enter in a one-line Input
    submits it), shown instead of the binding's. `before` and `also` add hints for keys no action
    declares (enter in a search box, tab between a form's fields): first, or after the first
    action's."""
    keys = widget_keys or {}
    parts = [
        f"{keys.get(action.id) or key_names(action, remapped)[0]} {action.title.lower()}"
        for action in actions_for(screen)
    ]
    return " · ".join([*before, *parts[:1], *also, *parts[1:]])
