"""The operator's view preferences, kept beside the keymap: `$KANBAN_SETTINGS`, else
`$XDG_CONFIG_HOME/kanban/settings.toml` (`~/.config/kanban/settings.toml`). Today one: whether
the drawer's diff wraps long lines (`w`). A file that cannot be read is ignored, never fatal; a
toggle is saved as soon as it is made.
"""

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

KNOWN: dict[str, type] = {"diff_wrap": bool}


def settings_path(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    explicit = env.get("KANBAN_SETTINGS")
    if explicit:
        return Path(explicit)
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "kanban" / "settings.toml"


def load_settings(path: Path | None = None) -> dict[str, Any]:
    """The known settings the file holds with the right type; anything else is left out."""
    path = path or settings_path()
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    return {key: value for key, value in data.items() if isinstance(value, KNOWN.get(key, ()))}


def save_setting(key: str, value: Any, path: Path | None = None) -> str | None:
    """Write one setting (the others kept as they are); None, or why it could not be saved."""
    if not isinstance(value, KNOWN.get(key, ())):
        raise ValueError(f"unknown setting {key!r}")
    path = path or settings_path()
    current = load_settings(path)
    current[key] = value
    lines = [f"{name} = {'true' if item else 'false'}\n" for name, item in sorted(current.items())]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temp.write_text("".join(lines), encoding="utf-8")
        os.replace(temp, path)
    except OSError as error:
        return str(error)
    return None
